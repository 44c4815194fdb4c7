/* cmd_replan.c -- `hetplan replan`: a plan file and a changed cluster (another cluster
 * file, nodes taken away, nodes added) in; the candidates for the new cluster, the one
 * chosen by iteration time + W * migration time, and what it moves, out (docs/replan.md). */
#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan replan [--plan] OLD-PLAN (--cluster NEW | [--without NODE[,NODE...]] [--with FILE])\n"
  "                      [--solver NAME] [--top K] [--move-weight W] [--max-move-bytes B]\n"
  "                      [--storage-gbs G] [--time-limit S] [--seed N] [--max-work N]\n"
  "                      [--json] [-o new-plan.json]\n"
  "                      [--model M] [--old-cluster C] [--profile F [--accept-profile-mismatch]]\n"
  "                      [--job J] [--gbs N] [--schedule 1f1b|gpipe] [--mem-margin F]\n"
  "                      [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST]\n"
  "                      [--uniform-sharding] [--idle-devices] [--max-slices N] [--compute-model shape|flops]\n"
  "                      [--memory-weight W]\n"
  "\n"
  "Plans again after the cluster changed and says what the change costs. The old problem is\n"
  "the plan file's \"inputs\" (--model, --old-cluster, --profile and the job's flags override\n"
  "them). The new cluster is --cluster NEW, or the old one with the nodes of --without\n"
  "removed and/or the nodes of the cluster file --with added (linked to the others by that\n"
  "file's inter_gbps and inter_lat_us). A device is the same device in both when its node\n"
  "name and GPU index are.\n"
  "\n"
  "Candidates: the old plan on the same devices (no-move, when the new cluster still has\n"
  "them all and allows it), the old plan with its lost devices replaced (repair), and the\n"
  "solver's --top K best plans on the new cluster (default dp, 16), each also with its\n"
  "stages' devices, replicas and TP ranks renumbered to keep state in place. Each is\n"
  "scored by the evaluator and by its migration: the weights and optimizer state (never\n"
  "gradients) each device must receive, from the surviving device that holds them (its\n"
  "own node first, then the fastest link) or, lost with their node, from a checkpoint read\n"
  "at --storage-gbs (default: the new cluster's slowest link between nodes); a device\n"
  "sends one transfer at a time and receives one at a time, so the migration takes the\n"
  "largest sum of either. --time-limit S bounds the whole command: the solver gets what is\n"
  "left of it, and once it has passed the solver's plans after its best are neither\n"
  "relabelled nor scored (the output says how many).\n"
  "The choice: the least iteration time + W x migration time (--move-weight W, default 0;\n"
  "ties: fewer bytes moved) among the plans that fit and move at most --max-move-bytes B\n"
  "(bytes, or with a suffix: 500MB, 12GiB). Where the solver proves a lower bound on the new\n"
  "iteration time (glpk, cbc; not under --idle-devices), it is shown; it bounds time + W x\n"
  "migration as well, only because a migration takes no negative time.\n"
  "--memory-weight W sets --solver dhondt's SageMaker memory_weight (default 0.8).\n"
  "\n"
  "Prints the cluster change, the candidates, the choice and its moves per receiving device\n"
  "(--json: the same for programs, every move with its layer, part, sender, receiver, bytes\n"
  "and seconds); -o writes the chosen plan file. A cluster edited here is not a file: give\n"
  "'hetplan evaluate' the new cluster as --cluster.\n"
  "\n"
  "exit codes: 0 a plan was chosen, 6 no candidate fits within --max-move-bytes,\n"
  "7 interrupted (the candidates so far are scored and shown), 8 the output cannot be\n"
  "written, 4 the old plan is invalid, 3 an input file is bad or names no such node, 2 usage.\n";

#define GIB 1073741824.0
#define GBPS (1e9 / 8.0)

typedef struct replan_opts {
  const char *cluster;     /* the new cluster file */
  const char *without;     /* node names, comma-separated */
  const char *with;        /* a cluster file whose nodes join */
  const char *solver;
  long top;
  double move_weight;
  const char *max_move;    /* as given, parsed by parse_bytes */
  double storage_gbs;      /* 0: the default */
  int json;
  const hp_solver *s;      /* found by check */
  double max_move_bytes;   /* INFINITY: no cap */
} replan_opts;

/* Bytes with an optional suffix: B, kB/KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB,
 * TiB (powers of 1024); -1 if it is not such a number. */
static double parse_bytes(const char *s)
{
  static const struct { const char *sfx; double mul; } units[] = {
    { "", 1 }, { "B", 1 }, { "kB", 1e3 }, { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 },
    { "TB", 1e12 }, { "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", GIB },
    { "TiB", GIB * 1024 } };
  char *end;
  double v;
  if (!s || !(isdigit((unsigned char)*s) || *s == '.')) return -1;
  v = strtod(s, &end);
  if (!(v >= 0) || !isfinite(v)) return -1;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (!strcmp(end, units[i].sfx)) return v * units[i].mul;
  return -1;
}

static int bytes_choice(const char *s) { return parse_bytes(s) >= 0 ? 0 : -1; }

static const cli_flag flags[] = {
  CLI_FLAG_PLAN,
  { .name = "cluster", .arg = "FILE", CLI_OWN_TEXT(replan_opts, cluster), .file = CLI_FILE_IN,
    .help = "the new cluster file (instead of --without and --with)" },
  { .name = "without", .arg = "NODES", CLI_OWN_TEXT(replan_opts, without),
    .help = "the old cluster without these nodes (names, comma-separated)" },
  { .name = "with", .arg = "FILE", CLI_OWN_TEXT(replan_opts, with), .file = CLI_FILE_IN,
    .help = "the old cluster with the nodes of this cluster file added" },
  { .name = "solver", .arg = "NAME", CLI_OWN_TEXT(replan_opts, solver), .def = "dp",
    .help = "the solver that plans on the new cluster" },
  { .name = "top", .arg = "K", CLI_OWN_INT(replan_opts, top, 1, 1000), .def = "16",
    .help = "the solver's K best plans are candidates" },
  { .name = "move-weight", .arg = "W", .kind = CLI_NUM, .own = 1,
    .at = CLI_AT_(replan_opts, move_weight, double), .lo = 0, .hi = 1e12,
    .expect = "a number >= 0 (seconds of iteration one second of migration is worth)",
    .def = "0", .help = "the objective is iteration time + W x migration time" },
  { .name = "max-move-bytes", .arg = "B", CLI_OWN_CHOICE(replan_opts, max_move, bytes_choice),
    .expect = "a number of bytes, optionally with B, kB, MB, GB, TB, KiB, MiB, GiB or TiB",
    .help = "the most bytes the chosen plan may move (default: no cap)" },
  { .name = "storage-gbs", .arg = "G", .kind = CLI_NUM, .own = 1,
    .at = CLI_AT_(replan_opts, storage_gbs, double), .lo = 0, .hi = 1e9, .open = CLI_OPEN_LO,
    .expect = "a bandwidth in Gbit/s, > 0",
    .help = "the checkpoint's read bandwidth for lost state (default: the slowest link between nodes)" },
  { .name = "json", CLI_OWN_SWITCH(replan_opts, json),
    .help = "print the candidates, the choice and every move as JSON" },
  CLI_FLAG_OUT,
  CLI_FLAG_MODEL,
  { .name = "old-cluster", .arg = "FILE", .kind = CLI_TEXT, .file = CLI_FILE_IN,
    .at = CLI_AT_(cli_core, cluster, const char *),
    .help = "the cluster the old plan is for (default: the plan file's)" },
  CLI_FLAG_PROFILE, CLI_FLAG_ACCEPT_PROFILE, CLI_FLAG_JOB, CLI_FLAG_GBS, CLI_FLAG_SCHEDULE,
  CLI_FLAGS_JOB_12, CLI_FLAG_MEM_MARGIN,
  CLI_FLAG_TIME_LIMIT, CLI_FLAG_SEED, CLI_FLAG_MAX_WORK, CLI_FLAG_MEMORY_WEIGHT,
};

static int check(cli_ctx *c)
{
  replan_opts *o = c->opts;
  if (!c->core.plan) return cli_usage_error("replan", "missing the old plan file (OLD-PLAN)");
  if (!o->cluster && !o->without && !o->with)
    return cli_usage_error("replan", "say how the cluster changed: --cluster NEW, --without NODES "
                           "or --with FILE");
  if (o->cluster && (o->without || o->with))
    return cli_usage_error("replan", "--cluster names the whole new cluster: use it alone, or "
                           "--without and --with on the old one");
  o->s = hp_solver_find(o->solver);
  if (!o->s) {
    char why[256];
    if (hp_solver_not_built(o->solver, why, sizeof why))
      fprintf(stderr, "hetplan replan: %s\n", why);
    else
      fprintf(stderr, "hetplan replan: unknown solver '%s' (see 'hetplan solvers')\n", o->solver);
    return EXIT_USAGE;
  }
  o->max_move_bytes = o->max_move ? parse_bytes(o->max_move) : INFINITY;
  return EXIT_OK_;
}

static int find_node(const hp_cluster *c, const char *name, size_t len)
{
  for (int n = 0; n < c->n_nodes; n++)
    if (strlen(c->nodes[n].name) == len && !strncmp(c->nodes[n].name, name, len)) return n;
  return -1;
}

/* "a, b, c" of the cluster's node names, for messages. */
static void node_names(const hp_cluster *c, char *buf, size_t n)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < c->n_nodes && len + 8 < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s'%s'", i ? ", " : "", c->nodes[i].name);
  if (len + 8 >= n) snprintf(buf + n - 5, 5, "...");
}

/* What the new cluster is: its parts, and how it came to be (for the report). */
typedef struct change {
  double link_bw, link_lat;   /* --with: what its nodes link to the old ones by */
} change;

/* The new problem: the old one's model, profile and job on the new cluster. Prints the
 * reason and returns an exit code on failure. */
static int new_problem(const cli_ctx *ctx, change *chg, hp_problem **out)
{
  const replan_opts *o = ctx->opts;
  const hp_problem *old = ctx->prob;
  hp_cluster *cl = NULL, *add = NULL;
  hp_model *m = NULL;
  hp_profile *pr = NULL;
  int *map = NULL, n_old = old->cluster->n_devices;
  hp_diag d;
  hp_err err = HP_OK;
  int rc = EXIT_OK_;
  cli_diag_init(&d);
  *out = NULL;
  if ((err = hp_model_copy(old->model, &m, &d)) ||
      (old->profile && (err = hp_profile_copy(old->profile, &pr, &d))))
    goto fail;
  if (!(map = calloc((size_t)n_old, sizeof *map))) { err = hp_fail(&d, HP_NOMEM, "out of memory"); goto fail; }
  if (o->cluster) {
    if ((err = hp_cluster_load(o->cluster, &cl, &d))) goto fail;
    if (ctx->core.mem_margin >= 0) cl->mem_margin = ctx->core.mem_margin;
    if (pr && pr->n_devices > 0) {   /* the matrix's rows follow the devices that stay */
      int kept = hp_device_map(old->cluster, cl, map);
      if (kept != cl->n_devices) {
        err = hp_fail(&d, HP_NOTSUP, "profile '%s' has a bandwidth matrix of the old cluster's "
                      "devices; %d of the %d devices of '%s' are not among them: replan with "
                      "--without/--with on the old cluster, or a profile without a matrix",
                      pr->name, cl->n_devices - kept, cl->n_devices, o->cluster);
        goto fail;
      }
      if ((err = hp_profile_keep_devices(pr, map, n_old, cl->n_devices, &d))) goto fail;
    }
  } else {
    if ((err = hp_cluster_copy(old->cluster, &cl, &d))) goto fail;
    free(cl->path);        /* an edited cluster is no longer the file's */
    cl->path = NULL;
    if (o->without) {
      unsigned char *gone = calloc((size_t)cl->n_nodes, 1);
      const char *p = o->without;
      if (!gone) { err = hp_fail(&d, HP_NOMEM, "out of memory"); goto fail; }
      for (;;) {
        size_t len = strcspn(p, ",");
        int n = find_node(cl, p, len);
        if (n < 0) {
          char names[400];
          node_names(cl, names, sizeof names);
          fprintf(stderr, "hetplan replan: --without: no node '%.*s' in cluster '%s' (its nodes: "
                  "%s)\n", (int)len, p, cl->name, names);
          free(gone);
          rc = EXIT_INPUT;
          goto fail;
        }
        gone[n] = 1;
        if (!p[len]) break;
        p += len + 1;
      }
      err = hp_cluster_remove_nodes(cl, gone, map, &d);
      free(gone);
      if (err || (pr && (err = hp_profile_keep_devices(pr, map, n_old, cl->n_devices, &d))))
        goto fail;
    }
    if (o->with) {
      if ((err = hp_cluster_load(o->with, &add, &d)) ||
          (err = hp_cluster_inter_default(o->with, &chg->link_bw, &chg->link_lat, &d)))
        goto fail;
      if (!(chg->link_bw > 0)) {
        fprintf(stderr, "hetplan replan: %s: inter_gbps: missing: it sets the link between the "
                "nodes it adds and those of cluster '%s' (give inter_gbps and inter_lat_us)\n",
                o->with, cl->name);
        rc = EXIT_INPUT;
        goto fail;
      }
      if (pr && pr->n_devices > 0) {
        err = hp_fail(&d, HP_NOTSUP, "profile '%s' has a bandwidth matrix of the old cluster's "
                      "devices, which does not say how the devices of '%s' connect: use a profile "
                      "without a matrix", pr->name, o->with);
        goto fail;
      }
      if ((err = hp_cluster_merge(cl, add, chg->link_bw, chg->link_lat, &d))) goto fail;
      hp_cluster_destroy(&add);
    }
  }
  free(map);
  if ((err = hp_problem_create(out, m, cl, pr, old->job, &d))) return cli_fail(&d, err);
  return EXIT_OK_;
fail:
  free(map);
  hp_model_destroy(&m);
  hp_profile_destroy(&pr);
  hp_cluster_destroy(&cl);
  hp_cluster_destroy(&add);
  return rc ? rc : cli_fail(&d, err);
}

static int has_node(const hp_cluster *c, const char *name)
{
  return find_node(c, name, strlen(name)) >= 0;
}

static void json_str(FILE *f, const char *t)
{
  fputc('"', f);
  for (const char *c = t; *c; c++) {
    if (*c == '"' || *c == '\\') fputc('\\', f);
    if ((unsigned char)*c >= 0x20) fputc(*c, f);
  }
  fputc('"', f);
}

static void json_num(FILE *f, double v)
{
  if (isfinite(v)) fprintf(f, "%.17g", v);
  else fputs("null", f);
}

/* A candidate's name in the table: "no-move", "repair", "solver 3", "solver 3 (relabelled)". */
static char *cand_name(const hp_replan_cand *c, char *buf, size_t n)
{
  if (c->kind == HP_CAND_SOLVER && c->rank)
    snprintf(buf, n, "solver %d%s", c->rank, c->relabelled ? " (relabelled)" : "");
  else
    snprintf(buf, n, "%s", hp_cand_kind_name(c->kind));
  return buf;
}

/* "node 'p3-1' GPU 2" of a device of the problem. */
static char *dev_name(const hp_problem *p, int dv, char *buf, size_t n)
{
  const hp_cluster *c = p->cluster;
  const hp_node *nd = &c->nodes[c->dev_node[dv]];
  snprintf(buf, n, "%s:%d", nd->name, dv - nd->first);
  return buf;
}

static void print_change(FILE *f, const cli_ctx *ctx, const hp_problem *now, const change *chg)
{
  const replan_opts *o = ctx->opts;
  const hp_cluster *oc = ctx->prob->cluster, *nc = now->cluster;
  int k = 0;
  fprintf(f, "old: cluster '%s', %d devices on %d nodes\n", oc->name, oc->n_devices, oc->n_nodes);
  fprintf(f, "new: %d devices on %d nodes", nc->n_devices, nc->n_nodes);
  if (o->cluster) fprintf(f, " (cluster '%s', %s)\n", nc->name, o->cluster);
  else fputc('\n', f);
  for (int n = 0; n < oc->n_nodes; n++)
    if (!has_node(nc, oc->nodes[n].name))
      fprintf(f, "%s'%s' (%d x %s)", k++ ? ", " : "  nodes gone: ", oc->nodes[n].name,
              oc->nodes[n].gpus, oc->types[oc->nodes[n].type].name);
  if (k) fputc('\n', f);
  k = 0;
  for (int n = 0; n < nc->n_nodes; n++)
    if (!has_node(oc, nc->nodes[n].name))
      fprintf(f, "%s'%s' (%d x %s)", k++ ? ", " : "  nodes added: ", nc->nodes[n].name,
              nc->nodes[n].gpus, nc->types[nc->nodes[n].type].name);
  if (k) fputc('\n', f);
  if (o->with)
    fprintf(f, "  the added nodes link to the others at %.4g Gbit/s, %.4g us (inter_gbps and "
            "inter_lat_us of %s)\n", chg->link_bw / GBPS, chg->link_lat * 1e6, o->with);
}

/* The receivers of the chosen plan's moves, one a line: bytes by part, senders, layers. */
static void print_moves(FILE *f, const hp_problem *now, const hp_migration *m)
{
  char a[96], b[96];
  int any = 0;
  for (int to = 0; to < m->n_devices; to++) {
    double part[2] = { 0, 0 };
    int lo = -1, hi = -1, n = 0, shown = 0, ckpt = 0;
    int senders[8];
    for (int i = 0; i < m->n_moves; i++) {
      const hp_move *mv = &m->moves[i];
      int seen = 0;
      if (mv->to != to) continue;
      part[mv->kind] += mv->bytes;
      if (lo < 0 || mv->layer < lo) lo = mv->layer;
      if (mv->layer > hi) hi = mv->layer;
      if (mv->from < 0) { ckpt = 1; continue; }
      for (int q = 0; q < shown; q++) seen |= senders[q] == mv->from;
      if (!seen) {
        if (shown < 8) senders[shown++] = mv->from;
        else n++;
      }
    }
    if (lo < 0) continue;
    if (!any) fprintf(f, "\nmoves, by receiving device (node:GPU):\n");
    any = 1;
    fprintf(f, "  device %d (%s): weights %.3f GiB, optimizer %.3f GiB of layers %d-%d; from ",
            to, dev_name(now, to, a, sizeof a), part[0] / GIB, part[1] / GIB, lo, hi);
    for (int q = 0; q < shown; q++)
      fprintf(f, "%s%d (%s)", q ? ", " : "", senders[q], dev_name(now, senders[q], b, sizeof b));
    if (n) fprintf(f, " and %d more", n);
    if (ckpt) fprintf(f, "%sthe checkpoint", shown ? ", " : "");
    fprintf(f, "; in %.3f s\n", m->recv_seconds[to]);
  }
  if (!any) fprintf(f, "\nmoves: none: every device already holds what the plan needs\n");
}

static void print_text(FILE *f, const cli_ctx *ctx, const hp_problem *now, const change *chg,
                       const hp_replan *r, double old_time)
{
  const replan_opts *o = ctx->opts;
  char name[64], text[400];
  print_change(f, ctx, now, chg);
  fprintf(f, "old plan: %s: iteration %.6f s on the old cluster\n",
          hp_plan_describe(ctx->plan, text, sizeof text), old_time);
  if (r->n_lost)
    fprintf(f, "  %d of the devices it uses are gone\n", r->n_lost);
  fprintf(f, "objective: iteration time + %g x migration time; checkpoint reads at %.4g Gbit/s%s\n",
          o->move_weight, r->storage_bw / GBPS,
          r->storage_default ? " (the new cluster's slowest link: --storage-gbs sets it)" : "");
  fprintf(f, "solver %s: %s in %.3f s", r->solver, hp_sol_status_name(r->status), r->solver_seconds);
  if (isfinite(r->bound))
    fprintf(f, "; lower bound on the new iteration time %.6f s over the whole search space; "
            "it bounds the objective too, since a migration takes no negative time\n", r->bound);
  else
    fprintf(f, "; no lower bound (%s%s%s)\n", hp_space_name(r->space), r->space_note[0] ? ": " : "",
            r->space_note[0] ? r->space_note : "a solver that proves none");
  if (r->stopped != HP_STOP_NONE)
    fprintf(f, "  the search stopped early (%s)\n", hp_stop_name(r->stopped));
  if (r->n_unscored)
    fprintf(f, "  --time-limit reached: %d more of the solver's plans not scored\n", r->n_unscored);
  fprintf(f, "\ncandidates:\n  %-22s %12s %11s %10s %10s %12s  %-5s  %s\n", "", "iteration s",
          "moved GiB", "lost GiB", "move s", "objective", "fits", "note");
  for (int i = 0; i < r->n_cands; i++) {
    const hp_replan_cand *c = &r->cands[i];
    cand_name(c, name, sizeof name);
    if (!c->plan) {
      fprintf(f, "  %-22s %12s %11s %10s %10s %12s  %-5s  %s\n", name, "-", "-", "-", "-", "-", "-",
              c->note);
      continue;
    }
    fprintf(f, "%c %-22s %12.6f %11.3f %10.3f %10.3f %12.6f  %-5s  %s\n", i == r->chosen ? '*' : ' ',
            name, c->time, c->mig.moved_bytes / GIB, c->mig.lost_bytes / GIB, c->mig.seconds,
            c->objective, c->fits ? "yes" : "no",
            !c->fits ? "does not fit in memory"
            : c->mig.moved_bytes > o->max_move_bytes ? "moves more than --max-move-bytes" : c->note);
  }
  if (r->chosen < 0) {
    fprintf(f, "\nno candidate fits%s\n", o->max_move ? " and moves at most --max-move-bytes" : "");
    return;
  }
  {
    const hp_replan_cand *c = &r->cands[r->chosen];
    const hp_migration *m = &c->mig;
    fprintf(f, "\nchosen: %s: %s\n", cand_name(c, name, sizeof name),
            hp_plan_describe(c->plan, text, sizeof text));
    fprintf(f, "  iteration %.6f s (%+.2f %% against the old plan's %.6f s)", c->time,
            100 * (c->time / old_time - 1), old_time);
    if (isfinite(r->bound)) fprintf(f, ", lower bound %.6f s", r->bound);
    fprintf(f, "\n  migration %.3f s: moves %.3f GiB (%.3f GiB of it from the checkpoint), keeps "
            "%.3f GiB in place, of the %.3f GiB of weights and optimizer state the plan holds\n",
            m->seconds, m->moved_bytes / GIB, m->lost_bytes / GIB, m->kept_bytes / GIB,
            m->need_bytes / GIB);
    if (m->slowest_device >= 0)
      fprintf(f, "  the slowest device of the migration: %d (%s)\n", m->slowest_device,
              dev_name(now, m->slowest_device, name, sizeof name));
    print_moves(f, now, m);
  }
}

static void json_cand(FILE *f, const hp_replan_cand *c, const replan_opts *o)
{
  char name[64];
  fprintf(f, "{ \"name\": ");
  json_str(f, cand_name(c, name, sizeof name));
  fprintf(f, ", \"kind\": \"%s\", \"rank\": %d, \"relabelled\": %s, \"available\": %s, \"note\": ",
          hp_cand_kind_name(c->kind), c->rank, c->relabelled ? "true" : "false",
          c->plan ? "true" : "false");
  json_str(f, c->note);
  if (c->plan) {
    fprintf(f, ", \"iteration_time\": ");
    json_num(f, c->time);
    fprintf(f, ", \"fits\": %s, \"moved_bytes\": ", c->fits ? "true" : "false");
    json_num(f, c->mig.moved_bytes);
    fprintf(f, ", \"lost_bytes\": ");
    json_num(f, c->mig.lost_bytes);
    fprintf(f, ", \"kept_bytes\": ");
    json_num(f, c->mig.kept_bytes);
    fprintf(f, ", \"need_bytes\": ");
    json_num(f, c->mig.need_bytes);
    fprintf(f, ", \"move_seconds\": ");
    json_num(f, c->mig.seconds);
    fprintf(f, ", \"objective\": ");
    json_num(f, c->objective);
    fprintf(f, ", \"allowed\": %s", c->allowed ? "true" : "false");
  }
  (void)o;
  fprintf(f, " }");
}

static void print_json(FILE *f, const cli_ctx *ctx, const hp_problem *now, const change *chg,
                       const hp_replan *r, double old_time)
{
  const replan_opts *o = ctx->opts;
  const hp_cluster *oc = ctx->prob->cluster, *nc = now->cluster;
  char text[400];
  int k = 0;
  fprintf(f, "{ \"old_cluster\": ");
  json_str(f, oc->name);
  fprintf(f, ", \"devices\": { \"old\": %d, \"new\": %d }, \"nodes_removed\": [", oc->n_devices,
          nc->n_devices);
  for (int n = 0; n < oc->n_nodes; n++)
    if (!has_node(nc, oc->nodes[n].name)) {
      fprintf(f, "%s", k++ ? ", " : "");
      json_str(f, oc->nodes[n].name);
    }
  fprintf(f, "], \"nodes_added\": [");
  k = 0;
  for (int n = 0; n < nc->n_nodes; n++)
    if (!has_node(oc, nc->nodes[n].name)) {
      fprintf(f, "%s", k++ ? ", " : "");
      json_str(f, nc->nodes[n].name);
    }
  fprintf(f, "]");
  if (o->with) {
    fprintf(f, ", \"added_link\": { \"bandwidth\": ");
    json_num(f, chg->link_bw);
    fprintf(f, ", \"latency\": ");
    json_num(f, chg->link_lat);
    fprintf(f, " }");
  }
  fprintf(f, ",\n  \"old_iteration_time\": ");
  json_num(f, old_time);
  fprintf(f, ", \"lost_devices\": %d, \"move_weight\": ", r->n_lost);
  json_num(f, o->move_weight);
  fprintf(f, ", \"max_move_bytes\": ");
  json_num(f, o->max_move_bytes);
  fprintf(f, ", \"storage_bandwidth\": ");
  json_num(f, r->storage_bw);
  fprintf(f, ",\n  \"solver\": { \"name\": \"%s\", \"status\": \"%s\", \"space\": \"%s\", "
          "\"seconds\": %.6f, \"stopped\": ", r->solver, hp_sol_status_name(r->status),
          hp_space_name(r->space), r->solver_seconds);
  if (hp_stop_name(r->stopped)) fprintf(f, "\"%s\"", hp_stop_name(r->stopped));
  else fputs("null", f);
  fprintf(f, ", \"lower_bound\": ");
  json_num(f, r->bound);
  fprintf(f, ", \"unscored\": %d },\n  \"candidates\": [\n", r->n_unscored);
  for (int i = 0; i < r->n_cands; i++) {
    fprintf(f, "    ");
    json_cand(f, &r->cands[i], o);
    fprintf(f, "%s\n", i + 1 < r->n_cands ? "," : "");
  }
  fprintf(f, "  ],\n  \"chosen\": ");
  if (r->chosen < 0) {
    fprintf(f, "null }\n");
    return;
  }
  {
    const hp_replan_cand *c = &r->cands[r->chosen];
    const hp_migration *m = &c->mig;
    char a[96];
    fprintf(f, "%d, \"plan\": { \"pp\": %d, \"tp\": %d, \"dp\": %d, \"mbs\": %d, \"text\": ",
            r->chosen, c->plan->pp, c->plan->tp, c->plan->dp, c->plan->mbs);
    json_str(f, hp_plan_describe(c->plan, text, sizeof text));
    fprintf(f, " },\n  \"migration\": { \"moved_bytes\": %.17g, \"lost_bytes\": %.17g, "
            "\"kept_bytes\": %.17g, \"need_bytes\": %.17g, \"seconds\": %.17g, "
            "\"slowest_device\": %d },\n  \"moves\": [", m->moved_bytes, m->lost_bytes,
            m->kept_bytes, m->need_bytes, m->seconds, m->slowest_device);
    for (int i = 0; i < m->n_moves; i++) {
      const hp_move *mv = &m->moves[i];
      fprintf(f, "%s\n    { \"layer\": %d, \"kind\": \"%s\", \"from\": ", i ? "," : "", mv->layer,
              hp_move_kind_name(mv->kind));
      if (mv->from < 0) fprintf(f, "\"checkpoint\"");
      else {
        fprintf(f, "%d, \"from_device\": ", mv->from);
        json_str(f, dev_name(now, mv->from, a, sizeof a));
      }
      fprintf(f, ", \"to\": %d, \"to_device\": ", mv->to);
      json_str(f, dev_name(now, mv->to, a, sizeof a));
      fprintf(f, ", \"bytes\": %.17g, \"seconds\": %.17g }", mv->bytes, mv->seconds);
    }
    fprintf(f, "%s] }\n", m->n_moves ? "\n  " : "");
  }
}

static int run(cli_ctx *ctx)
{
  const replan_opts *o = ctx->opts;
  hp_problem *now = NULL;
  hp_replan r;
  hp_replan_opts ro;
  hp_eval e = {0};
  change chg = { 0, 0 };
  hp_diag d;
  hp_err err;
  double old_time;
  int rc, interrupted;
  cli_diag_init(&d);
  memset(&r, 0, sizeof r);
  if ((err = hp_evaluate(ctx->prob, ctx->plan, &e, &d))) return cli_fail(&d, err);
  old_time = e.iteration_time;
  hp_eval_release(&e);
  if ((rc = new_problem(ctx, &chg, &now))) return rc;
  hp_replan_opts_init(&ro);
  ro.solver = o->s;
  ro.top = (int)o->top;
  ro.move_weight = o->move_weight;
  ro.max_move_bytes = o->max_move_bytes;
  ro.storage_bw = o->storage_gbs * GBPS;
  if ((err = hp_replan_run(ctx->prob, ctx->plan, now, &ro, &ctx->lim, &r, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  interrupted = r.stopped == HP_STOP_INTERRUPT;
  if (o->json) print_json(stdout, ctx, now, &chg, &r, old_time);
  else print_text(stdout, ctx, now, &chg, &r, old_time);
  if (interrupted)
    fprintf(stderr, "hetplan: interrupted (%s): the solver's plans so far are the candidates\n",
            cli_interrupted() == SIGTERM ? "SIGTERM" : "SIGINT");
  if (r.chosen < 0) {
    fprintf(stderr, "hetplan: no candidate fits%s: nothing chosen%s\n",
            o->max_move ? " and moves at most --max-move-bytes" : "",
            now->job.idle_devices ? "" : " (--idle-devices lets a plan leave devices idle: a "
            "cluster that lost a node often has no plan that uses every device left)");
    rc = interrupted ? EXIT_INTERRUPTED : EXIT_NO_PLAN;
    goto done;
  }
  if (ctx->core.out) {
    const hp_plan *pl = r.cands[r.chosen].plan;
    char *text = NULL;
    if ((err = hp_evaluate(now, pl, &e, &d)) ||
        (err = hp_plan_to_json(now, pl, &e, NULL, "replan", NULL, &text, &d))) {
      rc = cli_fail(&d, err);
      goto done;
    }
    rc = cli_write(ctx->core.out, text);
    free(text);
    if (rc) goto done;
    if (!now->cluster->path)
      fprintf(stderr, "hetplan: wrote %s; its cluster was edited here, not read from a file: "
              "give it to 'hetplan evaluate' with --cluster\n", ctx->core.out);
  }
  rc = interrupted ? EXIT_INTERRUPTED : EXIT_OK_;
done:
  hp_eval_release(&e);
  hp_replan_release(&r);
  hp_problem_destroy(&now);
  return rc;
}

const cli_cmd cli_cmd_replan = {
  .name = "replan",
  .summary = "plan again after nodes left or joined: candidates, what moves, the choice",
  .help = help,
  CLI_FLAGS(flags),
  .opts_size = sizeof(replan_opts),
  .steps = CLI_CHECK_OUT | CLI_PLAN | CLI_PROGRESS | CLI_INTERRUPT,
  .check = check,
  .run = run,
};
