/* launch.c -- a plan as a launch script (hp_launch.h): what every export format shares.
 * The rank map under the format's orders (rank_map.c), the header with the evaluator's
 * figures, what the framework cannot express with the figures of the plan as it would
 * run it, the stages, the rank order, the per-rank table when no order realises the
 * placement, and the torchrun lines. Each format is an entry (launch.h, launch_<name>.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

#define GIB 1073741824.0

void hp__launch_quote(hp_sb *b, const char *s)
{
  hp__sb_printf(b, "'");
  for (; *s; s++) {
    if (*s == '\'') hp__sb_printf(b, "'\\''");
    else hp__sb_printf(b, "%c", *s);
  }
  hp__sb_printf(b, "'");
}

void hp__launch_note(hp_launch_ctx *c, const char *fmt, ...)
{
  hp_launch_notes *ns = &c->notes;
  va_list ap;
  if (ns->n >= HP_LAUNCH_MAX_NOTES) return;
  va_start(ap, fmt);
  vsnprintf(ns->text[ns->n++], sizeof ns->text[0], fmt, ap);
  va_end(ap);
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

void hp__launch_only_1f1b(hp_launch_ctx *c, const char *who)
{
  if (c->plan->schedule != HP_GPIPE || c->plan->pp <= 1) return;
  hp__launch_note(c, "GPipe: %s runs its pipeline 1F1B (at most pp - s micro-batches in flight "
                  "on stage s, less memory); the figures below are for 1F1B", who);
  c->var->schedule = HP_1F1B;
}

/* The plan as the framework runs it, with a note on each difference: the format's own,
 * then the placement's. */
static void framework_variant(const hp_launch_fmt *f, hp_launch_ctx *c)
{
  const hp_rank_map *map = c->map;
  if (f->limits) f->limits(c);
  if (!map->contiguous)
    hp__launch_note(c, "the placement cannot be made with a node order and CUDA_VISIBLE_DEVICES: "
                    "%s%s; the per-rank table below is for a launcher that places each rank "
                    "itself (an MPI rankfile, srun with a task map)", map->why, f->unrealised);
}

static int plan_differs(const hp_plan *a, const hp_plan *b)
{
  return a->schedule != b->schedule || memcmp(a->zdp, b->zdp, (size_t)a->n_layers) ||
         memcmp(a->recompute, b->recompute, (size_t)a->pp);
}

static void header(hp_sb *b, const hp_problem *prob, const hp_plan *pl, const hp_eval *e,
                   const char *what, const hp_launch_opts *o)
{
  const hp_model *m = prob->model;
  char desc[512];
  hp__sb_printf(b, "#!/usr/bin/env bash\n# %s launch for %s%s, written by hetplan %s (cost "
                "model %s)\n", what, o->plan_name ? "plan " : "a plan",
                o->plan_name ? o->plan_name : "", HETPLAN_VERSION, HP_COST_MODEL_VERSION);
  hp__sb_printf(b, "# model %s on cluster %s (%d GPUs on %d nodes), gbs %ld\n", m->name,
                prob->cluster->name, prob->cluster->n_devices, prob->cluster->n_nodes, prob->job.gbs);
  hp__sb_printf(b, "# plan: %s, %s\n", hp_plan_describe(pl, desc, sizeof desc),
                hp_schedule_name(pl->schedule));
  hp__sb_printf(b, "# predicted (evaluator): iteration %.6f s, %.4f samples/s", e->iteration_time,
                e->throughput);
  if (m->transformer) hp__sb_printf(b, ", %.0f tokens/s", e->throughput * m->transformer->seq);
  hp__sb_printf(b, ", MFU %.1f %%, %s\n", 100 * e->mfu, e->feasible ? "fits in memory"
                : "DOES NOT FIT in memory");
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

void hp__launch_torchrun(const hp_launch_ctx *c, hp_sb *b, const char *args)
{
  const hp_cluster *cl = c->prob->cluster;
  const hp_rank_map *map = c->map;
  const char *master = c->o->master ? c->o->master : cl->nodes[map->node[0]].name;
  int port = c->o->port > 0 ? c->o->port : 29500;
  hp__sb_printf(b, "\n# Run on every node with its node rank: bash %s NODE_RANK\n",
                "this-script.sh");
  hp__sb_printf(b, "# node rank, host (the cluster file's node name), its GPUs in local-rank "
                "order, processes:\n");
  hp__sb_printf(b, "node_rank=${1:?usage: $0 NODE_RANK (0..%d)}\n", map->n_nodes - 1);
  hp__sb_printf(b, "case \"$node_rank\" in\n");
  for (int i = 0; i < map->n_nodes; i++) {
    hp__sb_printf(b, "  %d) host=", i);
    hp__launch_quote(b, cl->nodes[map->node[i]].name);
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
  hp__sb_printf(b, "CUDA_VISIBLE_DEVICES=$gpus exec torchrun --nnodes %d --node-rank \"$node_rank\" "
                "--nproc-per-node \"$nproc\" --master-addr ", map->n_nodes);
  hp__launch_quote(b, master);
  hp__sb_printf(b, " --master-port %d %s%s%s\n", port, c->script, args ? " " : "",
                args ? args : "");
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
    hp__sb_printf(b, "# rank %d: host '%s' GPU %d: stage %d, replica %d, TP rank %d\n", k,
                  c->nodes[c->dev_node[dev]].name, map->gpu[k], s, r, j);
  }
}

static void stage_list(hp_sb *b, const hp_problem *prob, const hp_plan *pl)
{
  const hp_model *m = prob->model;
  hp__sb_printf(b, "# Stages (layers of the hetplan model, inclusive):");
  for (int s = 0; s < pl->pp; s++)
    hp__sb_printf(b, "%s %d: %d-%d (%s..%s)", s ? "," : "", s, pl->first[s], hp_stage_last(pl, s),
                  m->layers[pl->first[s]].name, m->layers[hp_stage_last(pl, s)].name);
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
  hp_eval e = {0};
  hp_sb b = {0};
  hp_err err;
  unsigned orders = 0;
  *out = NULL;
  if (!f) return hp_fail(d, HP_INVAL, "unknown launch format %d", (int)format);
  c.prob = prob;
  c.plan = pl;
  c.map = &map;
  c.o = opts ? opts : &o0;
  c.script = c.o->script ? c.o->script : f->script;
  for (int k = 0; k < HP_LAUNCH_ORDERS; k++)
    if (f->order[k]) orders |= 1u << k;
  if ((err = hp_evaluate(prob, pl, &e, d))) return err;
  if ((err = hp_rank_map_choose(prob, pl, orders, &map, d))) goto done;
  if ((err = hp_plan_copy(&c.var, pl, d))) goto done;
  framework_variant(f, &c);
  if (c.var->schedule != pl->schedule) {   /* the evaluator takes the schedule from the job */
    hp_job job = prob->job;
    job.schedule = c.var->schedule;
    if ((err = hp_problem_copy_with(prob, NULL, job, &vprob, d))) goto done;
  }

  if (f->config && c.o->config_only) {
    f->config(&c, &b);
    goto finish;
  }
  header(&b, prob, pl, &e, f->framework, c.o);
  notes_block(&b, prob, f->framework, &c.notes, c.var, vprob, plan_differs(pl, c.var));
  if (pl->pp > 1) stage_list(&b, prob, pl);
  hp__sb_printf(&b, "# Rank order: %s (rank = tp_rank + tp * (%s)); node ranks "
                "below follow it.\n", f->order[map.order],
                map.order == HP_ORDER_TP_PP_DP ? "stage + pp * replica" : "replica + dp * stage");
  hp__sb_printf(&b, "set -eu\n");
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
  hp_eval_release(&e);
  hp_rank_map_release(&map);
  hp_plan_destroy(&c.var);
  hp_problem_destroy(&vprob);
  return err;
}
