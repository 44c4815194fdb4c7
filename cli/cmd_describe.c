/* cmd_describe.c -- `hetplan describe`: checks and summarises model, cluster and
 * profile files. */
#include <math.h>
#include <string.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan describe [--model M] [--cluster C] [--profile P] [--gbs N]\n"
  "\n"
  "Loads each file given (reporting any error as 'evaluate' would) and prints a summary:\n"
  "a model's layer count, parameters and FLOPs; a cluster's devices, types, nodes and\n"
  "bandwidths; a profile's measurements. Given a model and a cluster it also prints the\n"
  "profile coverage: which (layer kind, device type, tp) of the search space the profile\n"
  "measures and which the planner would estimate from FLOPs; with --gbs, cell by cell\n"
  "over the micro-batch sizes of that batch as well. A device type whose peak x\n"
  "efficiency is below a third of the fastest type's gets a hint: plan with\n"
  "--idle-devices, so that a plan may leave its GPUs out. Exit code 3 if a file is bad\n"
  "or the profile matches none of the model's kinds or the cluster's types.\n";

#define GIB 1073741824.0
/* A device type whose effective throughput (peak x efficiency) is below this fraction of
 * the fastest type's gets the --idle-devices hint: at a third, a pipeline or data-parallel
 * group that waits on one such GPU runs at most a third as fast as on the fastest, which
 * leaving it idle often beats (Sailor and Metis leave such GPUs out). */
#define SLOW_TYPE_RATIO (1.0 / 3.0)

static void describe_model(const hp_model *m)
{
  double act = 0;
  for (int l = 0; l < m->n_layers; l++) act += m->layers[l].act_bytes;
  printf("model    %s: %d layers, %.6g B parameters, %.6g TFLOP per sample (fwd+bwd),\n"
         "         %.4g GiB of saved activations per sample at tp 1, model states %.4g GiB\n",
         m->name, m->n_layers, hp_model_unique_params(m) / 1e9, hp_model_total_flops(m) / 1e12,
         act / GIB, hp_model_total_params(m) * m->state_bytes / GIB);
  if (m->tied_params > 0)
    printf("         tied copies %.6g B parameters (a head tied to the embedding: held in memory,\n"
           "         counted once in the size)\n", m->tied_params / 1e9);
}

/* One hint line per device type (of some node) far slower than the fastest: planning
 * with --idle-devices may leave its GPUs out. */
static void describe_slow_types(const hp_cluster *c)
{
  int fast = -1;
  for (int t = 0; t < c->n_types; t++) {
    int has = 0;
    for (int k = 0; k < c->n_nodes && !has; k++) has = c->nodes[k].type == t;
    if (has && (fast < 0 || c->types[t].peak * c->types[t].eff > c->types[fast].peak * c->types[fast].eff))
      fast = t;
  }
  if (fast < 0) return;
  for (int t = 0; t < c->n_types; t++) {
    double v = c->types[t].peak * c->types[t].eff, top = c->types[fast].peak * c->types[fast].eff;
    int n = 0;
    for (int dv = 0; dv < c->n_devices; dv++) n += c->nodes[c->dev_node[dv]].type == t;
    if (!n || !(v < SLOW_TYPE_RATIO * top)) continue;
    printf("  hint   %s: %.1f TFLOPS effective (peak x efficiency), %.2f of %s's %.1f: "
           "plan with --idle-devices to let a plan leave its %d GPU%s idle\n", c->types[t].name,
           v / 1e12, v / top, c->types[fast].name, top / 1e12, n, n > 1 ? "s" : "");
  }
}

static void describe_cluster(const hp_cluster *c)
{
  double lo = INFINITY, hi = 0;
  printf("cluster  %s: %d devices on %d nodes\n", c->name, c->n_devices, c->n_nodes);
  for (int k = 0; k < c->n_types; k++) {
    int n = 0;
    for (int d = 0; d < c->n_devices; d++) n += c->nodes[c->dev_node[d]].type == k;
    const hp_devtype *t = &c->types[k];
    printf("  type   %-10s x %-4d %6.1f GiB (%.2f reserved), %7.1f TFLOPS x %.2f\n",
           t->name, n, t->mem / GIB, t->reserved / GIB, t->peak / 1e12, t->eff);
    /* what the shape model reads (docs/cost-model.md "Shape model"): the fp8 peak and the
     * type's constants, in the table's order */
    if (t->peak_fp8 > 0 || t->shape.given) {
      int nq;
      const hp_shape_param *q = hp_shape_params(&nq);
      printf("         ");
      if (t->peak_fp8 > 0) printf(" fp8 %.1f TFLOPS;", t->peak_fp8 / 1e12);
      if (t->hbm > 0) printf(" HBM %.0f GB/s;", t->hbm / 1e9);
      if (t->shape.given) {
        printf(" shape model:");
        for (int i = 0; i < nq; i++) printf(" %s %g", q[i].name, hp_shape_get(&t->shape, &q[i]));
      }
      printf("\n");
    }
  }
  if (c->mem_margin > 0)
    printf("  memory margin %g %%: plans keep that much of each device's memory free\n",
           100 * c->mem_margin);
  for (int n = 0; n < c->n_nodes && n < 32; n++)
    printf("  node   %-14s %-10s %3d GPUs (devices %d-%d), intra %.1f Gbps\n", c->nodes[n].name,
           c->types[c->nodes[n].type].name, c->nodes[n].gpus, c->nodes[n].first,
           c->nodes[n].first + c->nodes[n].gpus - 1, c->nodes[n].intra_bw * 8 / 1e9);
  if (c->n_nodes > 32) printf("  ... %d more nodes\n", c->n_nodes - 32);
  for (int a = 0; a < c->n_nodes; a++)
    for (int b = 0; b < c->n_nodes; b++) {
      double bw = c->node_bw[(size_t)a * c->n_nodes + b];
      if (a == b) continue;
      if (bw < lo) lo = bw;
      if (bw > hi) hi = bw;
    }
  if (c->n_nodes > 1)
    printf("  inter-node %.2f to %.2f Gbps%s\n", lo * 8 / 1e9, hi * 8 / 1e9,
           c->dev_bw ? " (overridden by the bandwidth matrix)" : "");
  if (c->dev_bw) printf("  device bandwidth matrix %d x %d\n", c->n_devices, c->n_devices);
  describe_slow_types(c);
}

static void describe_profile(const hp_profile *p)
{
  int tps = 0;
  for (int i = 0; i < p->n_measures; i++) tps |= 1 << (p->measures[i].tp < 30 ? p->measures[i].tp : 30);
  printf("profile  %d layer times", p->n_measures);
  if (p->n_measures) {
    printf(" at tp");
    for (int t = 1; t < 31; t++) if (tps & (1 << t)) printf(" %d", t);
  }
  printf(", bandwidth matrix %s, %d collectives\n", p->n_devices ? "yes" : "no",
         p->n_collectives);
}

static const cli_flag flags[] = {
  CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_PROFILE, CLI_FLAG_GBS,
};

static int check(cli_ctx *c)
{
  const cli_core *o = &c->core;
  if (!o->model && !o->cluster && !o->profile) {
    fprintf(stderr, "hetplan describe: give --model, --cluster or --profile\n");
    return EXIT_USAGE;
  }
  if (o->gbs > 0 && !(o->model && o->cluster)) {
    fprintf(stderr, "hetplan describe: --gbs counts the coverage of a search space: give "
            "--model and --cluster too\n");
    return EXIT_USAGE;
  }
  return EXIT_OK_;
}

/* Each file loaded alone (a profile without a model, say), then the coverage of both. */
static int run(cli_ctx *ctx)
{
  const cli_core o = ctx->core;
  hp_diag d;
  hp_err err;
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *p = NULL;
  hp_problem *prob = NULL;
  hp_coverage *cov = NULL;
  int rc = EXIT_OK_;
  cli_diag_init(&d);
  if (o.model) {
    if ((err = hp_model_load(o.model, &m, &d))) { rc = cli_fail(&d, err); goto done; }
    describe_model(m);
  }
  if (o.cluster) {
    if ((err = hp_cluster_load(o.cluster, &c, &d))) { rc = cli_fail(&d, err); goto done; }
    describe_cluster(c);
  }
  if (o.profile) {
    if ((err = hp_profile_load(o.profile, &p, &d))) { rc = cli_fail(&d, err); goto done; }
    describe_profile(p);
  }
  if (m && c) {
    hp_job job = { .gbs = o.gbs > 0 ? o.gbs : 1, .schedule = HP_1F1B };
    err = hp_problem_create(&prob, m, c, p, job, &d);   /* takes all three */
    m = NULL;
    c = NULL;
    p = NULL;
    if (err) { rc = cli_fail(&d, err); goto done; }
    if ((rc = cli_coverage(prob, o.gbs > 0 ? HP_COV_SPACE : HP_COV_GROUPS, NULL, &cov)))
      goto done;
    cli_print_coverage(stdout, prob, cov);
  }
done:
  hp_coverage_destroy(&cov);
  hp_problem_destroy(&prob);
  hp_model_destroy(&m);
  hp_cluster_destroy(&c);
  hp_profile_destroy(&p);
  return rc;
}

const cli_cmd cli_cmd_describe = {
  .name = "describe",
  .summary = "check and summarise model, cluster and profile files",
  .help = help,
  CLI_FLAGS(flags),
  .check = check,
  .run = run,
};
