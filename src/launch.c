/* launch.c -- a plan as a launch script (hp_launch.h): what every export format shares.
 * The rank map under the format's orders (rank_map.c), the header with the evaluator's
 * figures, what the framework cannot express with the figures of the plan as it would
 * run it, the stages, the rank order, the arguments the user must add, the per-rank
 * table when no order realises the placement, and the node-rank launch: torchrun lines,
 * or one process per GPU with its global rank given. Each format is an entry (launch.h,
 * launch_<name>.c); every input string goes through hp__sh_quote. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

#define GIB 1073741824.0

void hp__launch_note(hp_launch_ctx *c, const char *fmt, ...)
{
  hp_launch_notes *ns = &c->notes;
  va_list ap;
  if (ns->n >= HP_LAUNCH_MAX_NOTES) return;
  va_start(ap, fmt);
  vsnprintf(ns->text[ns->n++], sizeof ns->text[0], fmt, ap);
  va_end(ap);
}

void hp__launch_warn(hp_launch_ctx *c, const char *fmt, ...)
{
  hp_launch_notes *ns = &c->notes;
  va_list ap;
  if (ns->n >= HP_LAUNCH_MAX_NOTES) return;
  va_start(ap, fmt);
  vsnprintf(ns->text[ns->n], sizeof ns->text[0], fmt, ap);
  va_end(ap);
  if (c->o->warn) c->o->warn(c->o->warn_ctx, ns->text[ns->n]);
  ns->n++;
}

void hp__launch_ranges(char *buf, size_t n, const unsigned char *flag, int count)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < count && len < n; i++) {
    int j = i;
    if (!flag[i]) continue;
    while (j + 1 < count && flag[j + 1]) j++;
    len += (size_t)snprintf(buf + len, n - len, len ? ", %d" : "%d", i);
    if (j > i && len < n) len += (size_t)snprintf(buf + len, n - len, "-%d", j);
    i = j;
  }
}

void hp__launch_uniform_recompute(hp_launch_ctx *c, const char *how)
{
  const hp_plan *pl = c->plan;
  char buf[256];
  int nr = 0;
  for (int s = 0; s < pl->pp; s++) nr += pl->recompute[s] != 0;
  if (nr == 0 || nr == pl->pp) return;
  hp__launch_ranges(buf, sizeof buf, pl->recompute, pl->pp);
  hp__launch_note(c, "recompute on stage%s %s only: %s one recompute setting for every stage; "
                  "exported: recompute on every stage (less memory, more time)",
                  nr > 1 ? "s" : "", buf, how);
  memset(c->var->recompute, 1, (size_t)pl->pp);
}

int hp__launch_uniform_mode(const hp_plan *pl)
{
  int m = hp_plan_mode(pl, 0);
  for (int l = 1; l < pl->n_layers; l++)
    if (hp_plan_mode(pl, l) != m) return -1;
  return m;
}

/* The plan with one mode for every layer and no slices, evaluated under a job that allows
 * every mode (the form is the framework's, not the job's); 0 if it cannot be scored. */
static int score_uniform(const hp_problem *any, const hp_plan *pl, int mode, double *t, int *fits)
{
  hp_plan *v = NULL;
  hp_eval e = {0};
  int ok = 0;
  if (hp_plan_copy(&v, pl, NULL) != HP_OK) return 0;
  hp_plan_set_modes(v, mode);
  memset(v->slices, 0, (size_t)v->n_layers);
  if (hp_evaluate(any, v, &e, NULL) == HP_OK) {
    *t = e.iteration_time;
    *fits = e.feasible;
    ok = 1;
  }
  hp_eval_release(&e);
  hp_plan_destroy(&v);
  return ok;
}

/* The layers of `pl` whose mode (as applied) is m, as ranges. */
static void layers_of_mode(const hp_plan *pl, int m, char *buf, size_t n)
{
  unsigned char is[4096];
  if (pl->n_layers > (int)sizeof is) {
    snprintf(buf, n, "(%d layers)", pl->n_layers);
    return;
  }
  for (int l = 0; l < pl->n_layers; l++) is[l] = hp_plan_mode(pl, l) == m;
  hp__launch_ranges(buf, n, is, pl->n_layers);
}

int hp__launch_one_mode(hp_launch_ctx *c, unsigned launchable, const char *who, const char *how)
{
  const hp_plan *pl = c->plan;
  int uni = hp__launch_uniform_mode(pl), sliced = 0, best = -1, best_fits = 0;
  double best_t = 0;
  char scores[256] = "", buf[256];
  size_t len = 0;
  for (int l = 0; l < pl->n_layers; l++) sliced += hp_plan_mode(pl, l) == HP_SHARD_ZDP && pl->slices[l];
  if (uni >= 0 && (launchable >> uni & 1u)) {
    if (sliced) {
      unsigned char is[4096];
      int L = pl->n_layers < (int)sizeof is ? pl->n_layers : (int)sizeof is;
      for (int l = 0; l < L; l++) is[l] = pl->slices[l] != 0;
      hp__launch_ranges(buf, sizeof buf, is, L);
      hp__launch_note(c, "ZeRO-3 gathered in slices (OSDP's operator splitting) on layer%s %s: "
                      "%s has no equivalent (Megatron-LM and DeepSpeed gather a layer whole); "
                      "exported: each layer gathered at once (more gather memory)",
                      sliced > 1 ? "s" : "", buf, who);
      memset(c->var->slices, 0, (size_t)pl->n_layers);
    }
    return uni;
  }
  {
    hp_job job = c->prob->job;
    hp_problem *any = NULL;
    job.sharding = 0;             /* every mode: the framework's form, whatever the job allows */
    job.uniform_sharding = 0;
    if (hp_problem_copy_with(c->prob, NULL, job, &any, NULL) == HP_OK) {
      for (int m = 0; m < HP_N_SHARD; m++) {
        double t;
        int fits;
        if (!(launchable >> m & 1u) || !score_uniform(any, pl, m, &t, &fits)) continue;
        if (len < sizeof scores)
          len += (size_t)snprintf(scores + len, sizeof scores - len, "%s%s %.6f s%s",
                                  len ? ", " : "", hp_shard_name(m), t, fits ? "" : " (does not fit)");
        if (best < 0 || (fits && !best_fits) || (fits == best_fits && t < best_t)) {
          best = m;
          best_t = t;
          best_fits = fits;
        }
      }
      hp_problem_destroy(&any);
    }
  }
  if (best < 0) best = HP_SHARD_DP;
  if (uni < 0) {
    size_t bl = 0;
    buf[0] = '\0';
    for (int m = 0; m < HP_N_SHARD && bl < sizeof buf; m++) {
      char lay[160];
      int any_m = 0;
      for (int l = 0; l < pl->n_layers; l++) any_m |= hp_plan_mode(pl, l) == m;
      if (!any_m) continue;
      layers_of_mode(pl, m, lay, sizeof lay);
      bl += (size_t)snprintf(buf + bl, sizeof buf - bl, "%s%s on %s", bl ? "; " : "",
                             hp_shard_name(m), lay);
    }
    hp__launch_note(c, "sharding modes mixed per layer (%s): no framework launches this (Megatron-LM "
                    "and DeepSpeed take one mode for every layer; %s launches %s). Its nearest "
                    "launchable form, one mode for every layer, is %s (evaluator: %s); exported: %s",
                    buf, who, how, hp_shard_name(best), scores, hp_shard_name(best));
  } else {
    hp__launch_note(c, "%s on every layer: %s has no such mode (it launches %s); the nearest "
                    "launchable form is %s (evaluator: %s); exported: %s", hp_shard_name(uni), who,
                    how, hp_shard_name(best), scores, hp_shard_name(best));
  }
  hp_plan_set_modes(c->var, best);
  memset(c->var->slices, 0, (size_t)pl->n_layers);
  return best;
}

void hp__launch_only_1f1b(hp_launch_ctx *c, const char *who)
{
  if (c->plan->schedule != HP_GPIPE || c->plan->pp <= 1) return;
  hp__launch_note(c, "GPipe: %s runs its pipeline 1F1B (at most pp - s micro-batches in flight "
                  "on stage s, less memory); the figures below are for 1F1B", who);
  c->var->schedule = HP_1F1B;
}

/* The plan as the framework runs it, with a note on each difference (the format's own). */
static void framework_variant(const hp_launch_fmt *f, hp_launch_ctx *c)
{
  if (f->limits) f->limits(c);
}

static int plan_differs(const hp_plan *a, const hp_plan *b)
{
  return a->schedule != b->schedule || memcmp(a->mode, b->mode, (size_t)a->n_layers) ||
         memcmp(a->slices, b->slices, (size_t)a->n_layers) ||
         memcmp(a->recompute, b->recompute, (size_t)a->pp);
}

static void header(hp_sb *b, const hp_problem *prob, const hp_plan *pl, const hp_eval *e,
                   const char *what, const hp_launch_opts *o)
{
  const hp_model *m = prob->model;
  char desc[512];
  hp__sb_printf(b, "# %s launch for %s", what, o->plan_name ? "plan " : "a plan");
  if (o->plan_name) hp__sh_quote(b, o->plan_name);
  hp__sb_printf(b, ", written by hetplan %s (cost model %s)\n# model ", HETPLAN_VERSION,
                HP_COST_MODEL_VERSION);
  hp__sh_quote(b, m->name);
  hp__sb_printf(b, " on cluster ");
  hp__sh_quote(b, prob->cluster->name);
  hp__sb_printf(b, " (%d GPUs on %d nodes), gbs %ld\n", prob->cluster->n_devices,
                prob->cluster->n_nodes, prob->job.gbs);
  hp__sb_printf(b, "# plan: %s, %s\n", hp_plan_describe(pl, desc, sizeof desc),
                hp_schedule_name(pl->schedule));
  hp__sb_printf(b, "# predicted (evaluator): iteration %.6f s, %.4f samples/s", e->iteration_time,
                e->throughput);
  if (m->transformer) hp__sb_printf(b, ", %.0f tokens/s", e->throughput * m->transformer->seq);
  hp__sb_printf(b, ", MFU %.1f %%, %s\n", 100 * e->mfu, e->feasible ? "fits in memory"
                : "DOES NOT FIT in memory");
}

/* The devices the plan leaves idle (cost-model.md 7.19), node by node: no process is
 * started on them, and a node with none in use is not in the launch. */
static void idle_block(hp_sb *b, const hp_problem *prob, const hp_plan *pl, const hp_rank_map *map)
{
  const hp_cluster *c = prob->cluster;
  unsigned char *used = hp__calloc((size_t)c->n_devices, 1), *idle = NULL;
  int n_idle = c->n_devices - map->n_ranks;
  if (n_idle <= 0 || !used || !(idle = hp__calloc((size_t)c->n_devices, 1))) {
    if (n_idle > 0) b->failed = 1;
    free(used);
    return;
  }
  for (int q = 0; q < pl->pp * pl->dp * pl->tp; q++) used[pl->dev[q]] = 1;
  hp__sb_printf(b, "# idle: %d of the %d GPUs (the plan leaves them unused; no process is "
                "started on them):", n_idle, c->n_devices);
  for (int n = 0, first = 1; n < c->n_nodes; n++) {
    const hp_node *nd = &c->nodes[n];
    char ranges[256];
    int k = 0;
    for (int g = 0; g < nd->gpus; g++) k += idle[g] = !used[nd->first + g];
    if (!k) continue;
    hp__launch_ranges(ranges, sizeof ranges, idle, nd->gpus);
    hp__sb_printf(b, "%s node ", first ? "" : ";");
    hp__sh_quote(b, nd->name);
    hp__sb_printf(b, " GPU%s %s (%d x ", k > 1 ? "s" : "", ranges, k);
    hp__sh_quote(b, c->types[nd->type].name);
    hp__sb_printf(b, "%s)", k == nd->gpus ? ", the whole node: not launched" : "");
    first = 0;
  }
  hp__sb_printf(b, "\n# launched: %d GPUs on %d of the %d nodes (world size %d)\n", map->n_ranks,
                map->n_nodes, c->n_nodes, map->n_ranks);
  free(used);
  free(idle);
}

static void notes_block(hp_sb *b, const hp_problem *prob, const char *fw, const hp_launch_notes *ns,
                        const hp_plan *var, const hp_problem *vprob, int differs)
{
  if (ns->n == 0) {
    hp__sb_printf(b, "#\n# %s expresses every part of this plan.\n", fw);
    return;
  }
  hp__sb_printf(b, "#\n# What the plan needs that %s cannot express as planned:\n", fw);
  for (int i = 0; i < ns->n; i++) hp__sb_printf(b, "#  - %s\n", ns->text[i]);
  if (differs) {
    hp_eval ev = {0};
    const hp_problem *p = vprob ? vprob : prob;
    if (hp_evaluate(p, var, &ev, NULL) == HP_OK) {
      hp__sb_printf(b, "# As %s runs it (evaluator): iteration %.6f s, %.4f samples/s, ", fw,
                    ev.iteration_time, ev.throughput);
      if (ev.feasible) hp__sb_printf(b, "fits in memory\n");
      else
        hp__sb_printf(b, "does NOT fit: device %d needs %.3f GiB of %.3f GiB\n", ev.oom_device,
                      ev.mem[ev.oom_device] / GIB, ev.cap[ev.oom_device] / GIB);
    }
    hp_eval_release(&ev);
  }
}

/* How the placement is realised: by a node order, or by ranks given to each process. */
static void placement_block(hp_sb *b, const hp_launch_ctx *c)
{
  const hp_rank_map *map = c->map;
  char why[400];
  if (map->contiguous) return;
  /* map->why quotes the node's name already */
  snprintf(why, sizeof why, "%s", map->why);
  hp__sb_printf(b, "#\n# Placement: it cannot be made with a node order and CUDA_VISIBLE_DEVICES: "
                "%s%s. So each process is started with its global rank given (RANK, LOCAL_RANK, "
                "WORLD_SIZE, MASTER_ADDR, MASTER_PORT, CUDA_VISIBLE_DEVICES), and the framework's "
                "rank order lands it on the plan's GPU; the per-rank table is at the end.\n", why,
                c->fmt->unrealised);
}

/* What the user adds: the needs of the format's command, or the training script's part. */
static void needs_block(hp_sb *b, const hp_launch_ctx *c)
{
  const hp_launch_fmt *f = c->fmt;
  const char *where = "after -- when exporting (hetplan export ... -- ARGS), in an arguments "
                      "file (hetplan export --args-file FILE), or after the node rank when "
                      "running this script";
  if (!strcmp(f->name, "slurm"))
    where = "after -- when exporting (hetplan export ... -- ARGS), in an arguments file "
            "(hetplan export --args-file FILE), or after the script's name (sbatch launch.sh ARGS)";
  else if (c->map->contiguous && c->map->ascending && !strcmp(f->name, "deepspeed"))
    where = "after -- when exporting (hetplan export ... -- ARGS), in an arguments file "
            "(hetplan export --args-file FILE), or after the script's name (bash launch.sh ARGS)";
  hp__sb_printf(b, "#\n");
  if (!f->needs) {
    hp__sb_printf(b, "# To add: the training script (");
    hp__sh_quote(b, c->script);
    hp__sb_printf(b, ") is yours. It reads RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and "
                  "MASTER_PORT from its environment (init_process_group's env://), runs on "
                  "cuda:LOCAL_RANK and numbers its groups in the rank order above. Its arguments "
                  "go %s.\n", where);
    return;
  }
  hp__sb_printf(b, "# To add: arguments %s needs that hetplan cannot choose; the script stops, "
                "naming those missing, unless it is given one of each:\n", f->framework);
  for (const hp_launch_need *n = f->needs; n->what; n++)
    hp__sb_printf(b, "#   %-14s %s\n", n->what, n->hint);
  hp__sb_printf(b, "# Give them (and any other of its arguments) %s.\n", where);
}

/* USER_ARGS: the arguments given at export, one quoted word each. */
static void user_args(hp_sb *b, const hp_launch_opts *o)
{
  hp__sb_printf(b, "# the training command's arguments given to hetplan export (after --, "
                "--args-file)\nUSER_ARGS=(");
  for (int i = 0; i < o->n_args; i++) {
    hp__sb_printf(b, i ? " " : "");
    hp__sh_quote(b, o->args[i]);
  }
  hp__sb_printf(b, ")\n");
}

void hp__launch_args_checked(const hp_launch_ctx *c, hp_sb *b)
{
  const hp_launch_fmt *f = c->fmt;
  hp__sb_printf(b, "ARGS=(${USER_ARGS[@]+\"${USER_ARGS[@]}\"} \"$@\")\n");
  if (!f->needs) return;
  hp__sb_printf(b, "# the arguments %s needs from you (see the header): one of each group\n"
                "missing=\n"
                "need() {   # need WHAT FLAG...: one FLAG (or FLAG=value) is among ARGS\n"
                "  local what=$1 a g\n  shift\n"
                "  for a in \"$@\"; do\n"
                "    for g in ${ARGS[@]+\"${ARGS[@]}\"}; do\n"
                "      case $g in \"$a\" | \"$a\"=*) return 0 ;; esac\n"
                "    done\n  done\n"
                "  missing=\"$missing\n  $what: one of $*\"\n}\n", f->framework);
  for (const hp_launch_need *n = f->needs; n->what; n++) {
    hp__sb_printf(b, "need ");
    hp__sh_quote(b, n->what);
    for (int k = 0; k < 6 && n->flags[k]; k++) hp__sb_printf(b, " %s", n->flags[k]);
    hp__sb_printf(b, "\n");
  }
  hp__sb_printf(b, "if [ -n \"$missing\" ]; then\n"
                "  echo \"$0: %s needs arguments that were not given:$missing\n"
                "Give them after -- when exporting (hetplan export ... -- ARGS), in an arguments "
                "file (hetplan export --args-file FILE), or after the %s when running this script "
                "(see its header).\" >&2\n  exit 2\nfi\n", f->framework,
                !strcmp(f->name, "slurm") ? "script's name" : "node rank");
}

void hp__launch_master(const hp_launch_ctx *c, hp_sb *b)
{
  const hp_cluster *cl = c->prob->cluster;
  hp__sh_quote(b, c->o->master ? c->o->master : cl->nodes[c->map->node[0]].name);
}

void hp__launch_node_map(const hp_launch_ctx *c, hp_sb *b)
{
  const hp_cluster *cl = c->prob->cluster;
  const hp_rank_map *map = c->map;
  hp__sb_printf(b, "# node_map N: node rank N's host (the cluster file's node name), its GPUs "
                "and the global\n# rank each runs (in rank order; process q runs ranks[q] on "
                "GPU gpus[q]), and their number\nnode_map() {\n  case \"$1\" in\n");
  for (int i = 0; i < map->n_nodes; i++) {
    int n = map->node[i], q = 0;
    hp__sb_printf(b, "    %d) host=", i);
    hp__sh_quote(b, cl->nodes[n].name);
    hp__sb_printf(b, "; gpus=");
    for (int k = 0; k < map->n_ranks; k++)
      if (cl->dev_node[map->device[k]] == n) hp__sb_printf(b, "%s%d", q++ ? "," : "", map->gpu[k]);
    hp__sb_printf(b, "; ranks=");
    q = 0;
    for (int k = 0; k < map->n_ranks; k++)
      if (cl->dev_node[map->device[k]] == n) hp__sb_printf(b, "%s%d", q++ ? "," : "", k);
    hp__sb_printf(b, "; nproc=%d ;;\n", q);
  }
  hp__sb_printf(b, "    *) echo \"node rank $1: expected 0..%d\" >&2; exit 2 ;;\n  esac\n}\n",
                map->n_nodes - 1);
}

/* One torchrun line per node: node order and CUDA_VISIBLE_DEVICES realise the map. */
static void torchrun_nodes(const hp_launch_ctx *c, hp_sb *b, const char *prog_args)
{
  const hp_cluster *cl = c->prob->cluster;
  const hp_rank_map *map = c->map;
  int port = c->o->port > 0 ? c->o->port : 29500;
  hp__sb_printf(b, "# node rank, host (the cluster file's node name), its GPUs in local-rank "
                "order, processes:\n");
  hp__sb_printf(b, "case \"$node_rank\" in\n");
  for (int i = 0; i < map->n_nodes; i++) {
    hp__sb_printf(b, "  %d) host=", i);
    hp__sh_quote(b, cl->nodes[map->node[i]].name);
    hp__sb_printf(b, "; gpus=");
    for (int q = 0; q < map->count[i]; q++)
      hp__sb_printf(b, "%s%d", q ? "," : "", map->gpu[map->first_rank[i] + q]);
    hp__sb_printf(b, "; nproc=%d ;;   # ranks %d-%d\n", map->count[i], map->first_rank[i],
                  map->first_rank[i] + map->count[i] - 1);
  }
  hp__sb_printf(b, "  *) echo \"node rank $node_rank: expected 0..%d\" >&2; exit 2 ;;\nesac\n",
                map->n_nodes - 1);
  hp__sb_printf(b, "[ \"$(hostname)\" = \"$host\" ] || echo \"note: node rank $node_rank is "
                "planned for host $host\" >&2\n");
  hp__launch_args_checked(c, b);
  hp__sb_printf(b, "CUDA_VISIBLE_DEVICES=$gpus exec torchrun --nnodes %d --node-rank \"$node_rank\" "
                "--nproc-per-node \"$nproc\" --master-addr ", map->n_nodes);
  hp__launch_master(c, b);
  hp__sb_printf(b, " --master-port %d ", port);
  hp__sh_quote(b, c->script);
  hp__sb_printf(b, "%s%s ${ARGS[@]+\"${ARGS[@]}\"}\n", prog_args ? " " : "", prog_args ? prog_args : "");
}

/* One process per GPU of this node, each with its global rank given. */
static void explicit_ranks(const hp_launch_ctx *c, hp_sb *b, const char *prog_args)
{
  int port = c->o->port > 0 ? c->o->port : 29500;
  hp__launch_node_map(c, b);
  hp__sb_printf(b, "node_map \"$node_rank\"\n");
  hp__sb_printf(b, "[ \"$(hostname)\" = \"$host\" ] || echo \"note: node rank $node_rank is "
                "planned for host $host\" >&2\n");
  hp__launch_args_checked(c, b);
  hp__sb_printf(b, "# One process per GPU, its global rank given: PyTorch's env:// initialisation "
                "reads RANK,\n# WORLD_SIZE, MASTER_ADDR and MASTER_PORT; process q is LOCAL_RANK q "
                "and sees the node's GPUs\n# in rank order, so cuda:LOCAL_RANK (Megatron-LM's and "
                "torchrun's convention) is GPU gpus[q].\n");
  hp__sb_printf(b, "pids=()\nq=0\nfor rank in ${ranks//,/ }; do\n"
                "  RANK=$rank LOCAL_RANK=$q WORLD_SIZE=%d LOCAL_WORLD_SIZE=$nproc "
                "GROUP_RANK=$node_rank \\\n  MASTER_ADDR=", c->map->n_ranks);
  hp__launch_master(c, b);
  hp__sb_printf(b, " MASTER_PORT=%d CUDA_VISIBLE_DEVICES=$gpus \\\n    \"${PYTHON:-python}\" ",
                port);
  hp__sh_quote(b, c->script);
  hp__sb_printf(b, "%s%s ${ARGS[@]+\"${ARGS[@]}\"} &\n  pids+=($!)\n  q=$((q + 1))\ndone\n",
                prog_args ? " " : "", prog_args ? prog_args : "");
  hp__sb_printf(b, "trap 'kill \"${pids[@]}\" 2>/dev/null' INT TERM\n"
                "# wait for every process; one that fails stops the others\nstatus=0\n"
                "for p in \"${pids[@]}\"; do\n  wait \"$p\" && continue\n  rc=$?\n"
                "  [ \"$status\" -ne 0 ] || status=$rc\n  kill \"${pids[@]}\" 2>/dev/null || true\n"
                "done\nexit \"$status\"\n");
}

void hp__launch_per_node(const hp_launch_ctx *c, hp_sb *b, const char *prog_args)
{
  hp__sb_printf(b, "\n# Run on every node with its node rank: bash %s NODE_RANK [ARGS...]\n",
                "this-script.sh");
  hp__sb_printf(b, "node_rank=${1:?usage: $0 NODE_RANK (0..%d) [ARGS...]}\nshift\n",
                c->map->n_nodes - 1);
  if (c->map->contiguous) torchrun_nodes(c, b, prog_args);
  else explicit_ranks(c, b, prog_args);
}

static void rank_table(hp_sb *b, const hp_problem *prob, const hp_plan *pl, const hp_rank_map *map)
{
  const hp_cluster *c = prob->cluster;
  hp__sb_printf(b, "\n# Per-rank placement (%s order): rank, host, GPU, stage, replica, TP rank\n",
                hp_rank_order_name(map->order));
  for (int k = 0; k < map->n_ranks; k++) {
    int dev = map->device[k], s = 0, r = 0, j = 0;
    for (int q = 0; q < pl->pp * pl->dp * pl->tp; q++)
      if (pl->dev[q] == dev) { s = q / (pl->dp * pl->tp); r = q / pl->tp % pl->dp; j = q % pl->tp; }
    hp__sb_printf(b, "# rank %d: host ", k);
    hp__sh_quote(b, c->nodes[c->dev_node[dev]].name);
    hp__sb_printf(b, " GPU %d: stage %d, replica %d, TP rank %d\n", map->gpu[k], s, r, j);
  }
}

static void stage_list(hp_sb *b, const hp_problem *prob, const hp_plan *pl)
{
  const hp_model *m = prob->model;
  hp__sb_printf(b, "# Stages (layers of the hetplan model, inclusive):");
  for (int s = 0; s < pl->pp; s++) {
    hp__sb_printf(b, "%s %d: %d-%d (", s ? "," : "", s, pl->first[s], hp_stage_last(pl, s));
    hp__sh_quote(b, m->layers[pl->first[s]].name);
    hp__sb_printf(b, "..");
    hp__sh_quote(b, m->layers[hp_stage_last(pl, s)].name);
    hp__sb_printf(b, ")");
  }
  hp__sb_printf(b, "\n");
}

hp_err hp_launch_write(const hp_problem *prob, const hp_plan *pl, hp_launch_format format,
                       const hp_launch_opts *opts, char **out, hp_diag *d)
{
  static const hp_launch_opts o0 = {0};
  const hp_launch_fmt *f = hp__launch_fmt((int)format);
  hp_launch_ctx c = {0};
  hp_rank_map map = {0};
  hp_problem *vprob = NULL;
  hp_eval own = {0};
  const hp_eval *e = opts ? opts->eval : NULL;
  hp_sb b = {0};
  hp_err err;
  unsigned orders = 0;
  *out = NULL;
  if (!f) return hp_fail(d, HP_INVAL, "unknown launch format %d", (int)format);
  c.fmt = f;
  c.prob = prob;
  c.plan = pl;
  c.map = &map;
  c.o = opts ? opts : &o0;
  c.script = c.o->script ? c.o->script : f->script;
  for (int k = 0; k < HP_LAUNCH_ORDERS; k++)
    if (f->order[k]) orders |= 1u << k;
  if (!e) {
    if ((err = hp_evaluate(prob, pl, &own, d))) return err;
    e = &own;
  }
  if ((err = hp_rank_map_choose(prob, pl, orders, &map, d))) goto done;
  if ((err = hp_plan_copy(&c.var, pl, d))) goto done;
  framework_variant(f, &c);
  if (c.var->schedule != pl->schedule || memcmp(c.var->mode, pl->mode, (size_t)pl->n_layers)) {
    /* the evaluator takes the schedule from the job, and checks modes against its list:
     * the framework's form is scored under its own schedule, whatever modes the job allows */
    hp_job job = prob->job;
    job.schedule = c.var->schedule;
    job.sharding = 0;
    job.uniform_sharding = 0;
    if ((err = hp_problem_copy_with(prob, NULL, job, &vprob, d))) goto done;
  }

  if (f->config && c.o->config_only) {
    f->config(&c, &b);
    goto finish;
  }
  if (f->preamble) f->preamble(&c, &b);
  else hp__sb_printf(&b, "#!/usr/bin/env bash\n");
  header(&b, prob, pl, e, f->framework, c.o);
  idle_block(&b, prob, pl, &map);
  notes_block(&b, prob, f->framework, &c.notes, c.var, vprob, plan_differs(pl, c.var));
  placement_block(&b, &c);
  if (pl->pp > 1) stage_list(&b, prob, pl);
  hp__sb_printf(&b, "# Rank order: %s (rank = tp_rank + tp * (%s)); node ranks "
                "below follow it.\n", f->order[map.order],
                map.order == HP_ORDER_TP_PP_DP ? "stage + pp * replica" : "replica + dp * stage");
  needs_block(&b, &c);
  hp__sb_printf(&b, "set -eu\n");
  user_args(&b, c.o);
  f->emit(&c, &b);
  if (!map.contiguous) rank_table(&b, prob, pl, &map);
finish:
  if (b.failed) {
    err = hp_fail(d, HP_NOMEM, "out of memory writing the launch");
    goto done;
  }
  *out = b.s;
  b.s = NULL;
done:
  free(b.s);
  hp_eval_release(&own);
  hp_rank_map_release(&map);
  hp_plan_destroy(&c.var);
  hp_problem_destroy(&vprob);
  return err;
}

int hp__launch_plain_name(const char *s)
{
  if (!*s) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '.' || *s == '_' || *s == '-'))
      return 0;
  return 1;
}
