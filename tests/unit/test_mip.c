/* test_mip.c -- the MIP of one configuration and placement against brute force: every
 * partition, per-stage recompute and per-layer ZeRO-3 choice scored by the evaluator;
 * GLPK and CBC must reach the same minimum, the objective at their solution must be the
 * evaluator's figure, and a start must not change the answer. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"
#include "random_instance.h"
#include "../../solvers/search.h"

static const char model6z[] =
  "{ \"input_bytes\": 1e5, \"layers\": ["
  "{ \"name\": \"l0\", \"params\": 4e6, \"act_bytes\": 3e6, \"out_bytes\": 1e6, \"flops\": 1e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l1\", \"params\": 9e6, \"act_bytes\": 6e6, \"out_bytes\": 2e6, \"flops\": 2e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l2\", \"params\": 3e6, \"act_bytes\": 9e6, \"out_bytes\": 1e6, \"flops\": 3e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l3\", \"params\": 7e6, \"act_bytes\": 12e6, \"out_bytes\": 3e6, \"flops\": 4e12, \"work_bytes\": 2e6 },"
  "{ \"name\": \"l4\", \"params\": 5e6, \"act_bytes\": 3e6, \"act_bytes_replicated\": 1e6, \"out_bytes\": 1e6, \"flops\": 5e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l5\", \"params\": 12e6, \"act_bytes\": 6e6, \"out_bytes\": 4, \"flops\": 2e12, \"splittable\": false } ] }";

static char cbuf[1024];
static const char *cluster(double mem_gib)
{
  snprintf(cbuf, sizeof cbuf,
           "{ \"device_types\": {"
           "  \"fast\": { \"mem_gib\": %g, \"reserved_gib\": 0.01, \"tflops\": 100, \"efficiency\": 0.5 },"
           "  \"slow\": { \"mem_gib\": %g, \"tflops\": 40, \"efficiency\": 0.5 } },"
           "  \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
           "    { \"name\": \"b\", \"type\": \"slow\", \"gpus\": 2, \"intra_gbps\": 400, \"intra_lat_us\": 4 } ],"
           "  \"inter_gbps\": 20, \"inter_lat_us\": 10 }", mem_gib, mem_gib);
  return cbuf;
}

/* The MIP backends of this build, GLPK first, CBC second (NULL where left out); a test
 * that needs one skips when the build has none. */
typedef hp_mip_backend backend_fn;
static const char *const backend_names[2] = { "glpk", "cbc" };

static int backends(backend_fn be[2])
{
  be[0] = be[1] = NULL;
#ifdef HP_HAVE_GLPK
  be[0] = hp__glpk_solve_mip;
#endif
#ifdef HP_HAVE_CBC
  be[1] = hp__cbc_solve_mip;
#endif
  for (int b = 0; b < 2; b++)
    if (!be[b]) fprintf(stderr, "  this build lacks %s: tested without it\n", backend_names[b]);
  SKIP_UNLESS(be[0] || be[1], "this build has no MIP backend (GLPK=0 CBC=0)");
  return 2;
}

/* Minimum evaluator time over partitions x per-stage recompute x per-layer sharding. */
static double brute(const hp_problem *p, hp_plan *pl, long *fit)
{
  int L = pl->n_layers, nz = pl->dp > 1 ? L : 0;
  double best = INFINITY;
  for (int s = 0; s < pl->pp; s++) pl->first[s] = s;
  pl->first[pl->pp] = L;
  *fit = 0;
  do {
    for (long rm = 0; rm < (1L << pl->pp); rm++)
      for (long zm = 0; zm < (1L << nz); zm++) {
        hp_eval e = {0};
        hp_diag d = {0};
        for (int s = 0; s < pl->pp; s++) pl->recompute[s] = (rm >> s) & 1;
        for (int l = 0; l < L; l++) pl->mode[l] = nz && (zm >> l) & 1 ? HP_SHARD_ZDP : HP_SHARD_DP;
        if (hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible) {
          (*fit)++;
          if (e.iteration_time < best) best = e.iteration_time;
        }
        hp_eval_release(&e);
      }
  } while (hp__next_cuts(pl->first, pl->pp, L));
  return best;
}


/* Solves the MIP of (pp, tp, dp, mbs, placement) with a backend; returns the status and,
 * through the pointers, the objective and the evaluator's time of the decoded plan. */
static hp_sol_status solve(backend_fn be, const hp_problem *p, const hp_plan *tmpl, int with_start,
                           double *obj, double *eval_time)
{
  hp_plan *pl = NULL, *st = NULL;
  hp_mip *m = NULL;
  hp_mip_map map;
  hp_mip_solution sol = { HP_SOL_NONE, INFINITY, -INFINITY, NULL };
  hp_limits lim;
  hp_diag d = {0};
  double *x0 = NULL;
  hp_limits_init(&lim);
  hp_plan_copy(&pl, tmpl, &d);
  if (hp_mip_build(p, pl, 1, &m, &map, &d)) { fprintf(stderr, "  build: %s\n", d.msg); return HP_SOL_NONE; }
  if (with_start) {                 /* the DP's split, if one fits */
    hp_dp_opts o;
    int found = 0;
    double ob;
    hp__dp_opts_init(&o);
    hp_plan_copy(&st, tmpl, &d);
    if (hp__dp_split(p, st, &o, &found, &ob, NULL, &d) == HP_OK && found) {
      x0 = calloc((size_t)m->n_cols, sizeof *x0);
      hp_mip_encode(m, &map, st, x0);
    }
  }
  if (be(m, x0, &lim, 60, INFINITY, &sol, &d)) fprintf(stderr, "  backend: %s\n", d.msg);
  *obj = sol.obj * m->obj_scale;
  *eval_time = INFINITY;
  if (sol.x) {
    hp_eval e = {0};
    hp_mip_decode(&map, sol.x, pl);
    if (hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible) *eval_time = e.iteration_time;
    hp_eval_release(&e);
  }
  hp_sol_status status = sol.status;
  free(sol.x);
  free(x0);
  hp_plan_destroy(&st);
  hp_plan_destroy(&pl);
  hp_mip_destroy(&m);
  hp_mip_map_release(&map);
  return status;
}

enum { INFEASIBLE, FITS, BINDS };   /* what a case expects: nothing fits, plans fit, memory binds */

static void check_case(double mem, int pp, int tp, int dp, int mbs, long gbs, const int *dev,
                       int expect)
{
  hp_problem *p = fx_problem(model6z, cluster(mem), NULL, gbs, HP_1F1B);
  hp_plan *pl = NULL;
  hp_diag d = {0};
  long fit, fit_free;
  hp_plan_create(&pl, pp, tp, dp, 6, &d);
  pl->mbs = mbs;
  hp_plan_set_gas(p, pl, &d);
  for (int i = 0; i < pp * tp * dp; i++) pl->dev[i] = dev[i];
  double bf = brute(p, pl, &fit);
  CHECK(expect == INFEASIBLE ? fit == 0 : fit > 0);
  if (expect == BINDS) {
    hp_problem *q = fx_problem(model6z, cluster(64), NULL, gbs, HP_1F1B);
    brute(q, pl, &fit_free);
    hp_problem_destroy(&q);
    CHECK(fit > 0 && fit < fit_free);        /* memory binds */
  }
  backend_fn be[2];
  for (int b = 0; b < backends(be); b++) {
    if (!be[b]) continue;
    for (int start = 0; start < 2; start++) {
      double obj, et;
      hp_sol_status st = solve(be[b], p, pl, start, &obj, &et);
      if (!isfinite(bf)) {
        CHECK_INT(st, HP_SOL_INFEASIBLE);
        continue;
      }
      if (st != HP_SOL_OPTIMAL) fprintf(stderr, "  %s (start %d): status %d\n", backend_names[b], start, st);
      CHECK_INT(st, HP_SOL_OPTIMAL);
      CHECK_NEAR(et, bf, 1e-9);               /* the MIP's plan is the brute-force optimum */
      CHECK_NEAR(obj, et, 1e-7);              /* and its objective is the evaluator's time */
    }
  }
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(mip_equals_brute_force_with_replicas_zero3_and_binding_memory)
{
  static const int dev[] = { 0, 1, 2, 3 };       /* pp 2, dp 2: stage 0 fast, stage 1 slow */
  check_case(0.3, 2, 1, 2, 1, 8, dev, BINDS);     /* 268 of 1280 choices fit */
}

TEST(mip_equals_brute_force_on_a_four_stage_heterogeneous_pipeline)
{
  static const int dev[] = { 0, 1, 2, 3 };
  check_case(0.3, 4, 1, 1, 2, 8, dev, BINDS);     /* 112 of 160 choices fit */
}

TEST(mip_is_exact_where_replicas_differ_and_with_tensor_parallelism)
{
  static const int mixed[] = { 0, 2, 1, 3 };     /* each stage: one fast, one slow replica */
  static const int tp2[] = { 2, 3, 0, 1 };
  check_case(0.3, 2, 1, 2, 1, 8, mixed, FITS);
  check_case(0.3, 2, 2, 1, 2, 8, tp2, FITS);
}

TEST(mip_proves_infeasibility_when_nothing_fits)
{
  static const int dev[] = { 0, 1, 2, 3 };
  check_case(0.02, 2, 1, 2, 1, 8, dev, INFEASIBLE);
}

/* The pattern MIP of configuration c solved by a backend: its optimum (seconds),
 * INFINITY if infeasible, NAN if the backend did not finish. */
static double pattern_mip(backend_fn be, const hp_problem *p, const hp_classes *cl, const hp_config *c)
{
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_mip *m = NULL;
  hp_mip_pmap map;
  hp_mip_solution sol = { HP_SOL_NONE, INFINITY, -INFINITY, NULL };
  hp_limits lim;
  hp_diag d = {0};
  double v = NAN;
  hp_limits_init(&lim);
  lim.gap = 1e-9;
  memset(&pt, 0, sizeof pt);
  if (hp__plan_for(p, c, &pl, &d) || hp_patterns_build(p, cl, pl, &pt, &d) ||
      hp_mip_build_pattern(p, &pt, &m, &map, &d) || be(m, NULL, &lim, 60, INFINITY, &sol, &d))
    fprintf(stderr, "  pattern MIP: %s\n", d.msg);
  else if (sol.status == HP_SOL_OPTIMAL || (sol.status == HP_SOL_FEASIBLE && sol.bound >= sol.obj * (1 - 1e-8)))
    v = sol.obj * m->obj_scale;
  else if (sol.status == HP_SOL_INFEASIBLE)
    v = INFINITY;
  free(sol.x);
  hp_mip_destroy(&m);
  hp_mip_pmap_release(&map);
  hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  return v;
}

/* The pattern DP's bound of configuration c (exact count of groups); `worst` 0 leaves out
 * the worst replica's pairs (hp_patterns.crowd, wbw cleared). */
static double pattern_dp_worst(const hp_problem *p, const hp_classes *cl, const hp_config *c, int worst)
{
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_pat_opts o;
  hp_pat_result r;
  hp_diag d = {0};
  double v = NAN;
  if (hp__plan_for(p, c, &pl, &d) || hp_patterns_build(p, cl, pl, &pt, &d)) {
    hp_plan_destroy(&pl);
    return NAN;
  }
  if (!worst) {
    memset(pt.crowd, 0, (size_t)pt.n_kind * pt.n_kind);
    memset(pt.wbw, 0, (size_t)pt.n_kind * pt.n_kind * sizeof *pt.wbw);
  }
  hp__pat_opts_init(&o);
  o.exact = 1;
  if (hp__pattern_bound(p, &pt, &o, &r, &d) == HP_OK && r.done) v = r.bound;
  hp__pat_result_release(&r);
  hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  return v;
}

static double pattern_dp(const hp_problem *p, const hp_classes *cl, const hp_config *c)
{
  return pattern_dp_worst(p, cl, c, 1);
}

/* On 60 random tiny heterogeneous instances, every configuration: the pattern MIP's
 * optimum (GLPK and CBC) is a bound (never above the least time of any plan, found by
 * enumerating every placement, partition, recompute and sharding choice), is never below
 * the pattern DP's bound (the DP relaxes the MIP), and the two backends agree. */
/* Under AddressSanitizer the brute force runs about 25 times slower: these two tests ran
 * past their doubled limit on the 2-core machine (2026-11-27, also on the tree of the
 * sixteenth session), so a third of their instances there */
#if defined(__SANITIZE_ADDRESS__)
#define MIP_RANDOM_SEEDS 20
#define MIP_CROWDED_SEEDS 4
#else
#define MIP_RANDOM_SEEDS 60
#define MIP_CROWDED_SEEDS 12
#endif
TEST(pattern_mip_bounds_brute_force_and_the_dp_on_60_random_instances)
{
  backend_fn bes[2];
  int nb = backends(bes), checked = 0, equal = 0;
  for (unsigned long seed = 101; seed < 101 + (unsigned long)harness_count(MIP_RANDOM_SEEDS); seed++) {
    char what[256];
    hp_problem *p = ri_problem(seed, what, sizeof what);
    ri_cert_scope(p);                 /* the bounds' space; the brute force's too */
    hp_classes cl;
    hp_config *cfg = NULL;
    hp_diag d = {0};
    int n = hp__configs(p, &cfg);
    CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
    for (int i = 0; i < n; i++) {
      double bf = ri_brute_config(p, &cfg[i]), dpb = pattern_dp(p, &cl, &cfg[i]), v[2] = { NAN, NAN };
      for (int b = 0; b < nb; b++) {
        if (!bes[b]) continue;
        v[b] = pattern_mip(bes[b], p, &cl, &cfg[i]);
        /* infeasible exactly when nothing fits; with measured memory the bounds take each
         * layer's least figure over the device types (a relaxation), so only one way */
        int exact_inf = p->mem_measured ? (!isinf(v[b]) || isinf(bf)) : isinf(v[b]) == isinf(bf);
        if (!(v[b] <= bf * (1 + 1e-7) + 1e-9) || !(v[b] >= dpb * (1 - 1e-6) - 1e-9) || !exact_inf)
          fprintf(stderr, "  %s\n  pp %d tp %d dp %d mbs %d: %s %.9g, DP %.9g, brute %.9g\n", what,
                  cfg[i].pp, cfg[i].tp, cfg[i].dp, cfg[i].mbs, backend_names[b], v[b], dpb, bf);
        CHECK(!isnan(v[b]));                        /* solved to the end */
        CHECK(v[b] <= bf * (1 + 1e-7) + 1e-9);      /* a bound */
        CHECK(v[b] >= dpb * (1 - 1e-6) - 1e-9);     /* at least the DP's */
        CHECK(exact_inf);
        checked++;
        equal += isfinite(bf) && v[b] >= bf * (1 - 1e-7);
      }
      if (bes[0] && bes[1] && isfinite(v[0])) CHECK_NEAR(v[0], v[1], 1e-6);
    }
    free(cfg);
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d solves, %d equal to the brute-force optimum\n", checked, equal);
  CHECK(checked > 0);
}

/* Found past the 60 seeds above (seed 300048): unscaled, GLPK's primal simplex called the
 * LP relaxation of this feasible pattern program "no feasible solution" and the program
 * was reported infeasible (solver_glpk.c now confirms an infeasible relaxation on the
 * scaled problem with the dual simplex). Both backends must reach the brute force's
 * optimum. */
TEST(pattern_mip_glpk_does_not_call_a_feasible_relaxation_infeasible)
{
  backend_fn bes[2];
  char what[256];
  const hp_config c = { .pp = 4, .tp = 1, .dp = 1, .mbs = 1 };
  hp_classes cl;
  hp_diag d = {0};
  int checked = 0;
  SKIP_UNLESS(backends(bes) > 0, "this build has no MIP backend (GLPK=0 CBC=0)");
  hp_problem *p = ri_problem(300048UL, what, sizeof what);
  CHECK(p != NULL);
  ri_cert_scope(p);
  CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
  double bf = ri_brute_config(p, &c);
  CHECK_NEAR(bf, 0.894593196642, 1e-9);     /* the instance is the one that failed */
  for (int b = 0; b < 2; b++) {
    if (!bes[b]) continue;
    double v = pattern_mip(bes[b], p, &cl, &c);
    if (!(fabs(v - bf) <= 1e-7 * bf))
      fprintf(stderr, "  %s: pattern MIP %.12g, brute force %.12g\n", backend_names[b], v, bf);
    CHECK(fabs(v - bf) <= 1e-7 * bf);
    checked++;
  }
  CHECK(checked > 0);
  hp_classes_release(&cl);
  hp_problem_destroy(&p);
}

/* The worst replica's pairs (hp_patterns.crowd, wbw; pattern_dp.c, mip_pattern.c) on
 * crowded nodes: 8 GPUs of a fast and a slow type in nodes of 2 or 4 (so that one node
 * holds fewer triples of a replica's consecutive groups than there are replicas, or a
 * stage spread over a class's nodes still puts two crossing groups on one node), pp 2 and
 * 4, tp 1, links of their own between some node pairs. The DP's bound, with the pairs and
 * without, and the pattern MIP's optimum (GLPK and CBC): the bound never above the
 * brute-force optimum, the MIP between the two, and the pairs must raise some bound. */
TEST(pattern_dp_and_mip_with_crowded_nodes_never_exceed_brute_force)
{
  static const char *const shapes[3][4] = {   /* node types and sizes: a, b, c, d */
    { "fast:2", "fast:2", "slow:2", "slow:2" },
    { "fast:4", "slow:2", "slow:2", NULL },
    { "fast:4", "slow:4", NULL, NULL } };
  backend_fn bes[2];
  int nb = backends(bes), n = harness_count(MIP_CROWDED_SEEDS), tried = 0, raised = 0;
  unsigned long st = 77;
  for (int seed = 0; seed < n; seed++) {
    char model[2048], cluster[2048];
    int len = snprintf(model, sizeof model, "{ \"name\": \"m\", \"input_bytes\": 1000, \"layers\": [");
    const char *const *shape = shapes[seed % 3];
    for (int l = 0; l < 4; l++) {
      st = st * 6364136223846793005UL + 1442695040888963407UL;
      double u1 = (double)(st >> 11) / 9007199254740992.0;
      st = st * 6364136223846793005UL + 1442695040888963407UL;
      double u2 = (double)(st >> 11) / 9007199254740992.0;
      len += snprintf(model + len, sizeof model - (size_t)len, "%s{ \"name\": \"l%d\", \"params\": 2e6, "
                      "\"act_bytes\": 1e6, \"out_bytes\": %.3g, \"flops\": %.3g }", l ? "," : "", l,
                      1e6 * (2 + 40 * u1), 1e12 * (1 + 3 * u2));
    }
    snprintf(model + len, sizeof model - (size_t)len, "] }");
    st = st * 6364136223846793005UL + 1442695040888963407UL;
    double inter = 1 + 20 * ((double)(st >> 11) / 9007199254740992.0);
    len = snprintf(cluster, sizeof cluster, "{ \"name\": \"c\", \"device_types\": { \"fast\": { \"mem_gib\": 8, "
                   "\"tflops\": 100, \"efficiency\": 0.5 }, \"slow\": { \"mem_gib\": 8, \"tflops\": %d, "
                   "\"efficiency\": 0.5 } }, \"nodes\": [", 25 + 10 * (seed % 4));
    for (int k = 0; k < 4 && shape[k]; k++)
      len += snprintf(cluster + len, sizeof cluster - (size_t)len, "%s{ \"name\": \"%c\", \"type\": \"%.4s\", "
                      "\"gpus\": %c, \"intra_gbps\": 2000, \"intra_lat_us\": 1 }", k ? "," : "", 'a' + k, shape[k],
                      shape[k][5]);
    /* a faster link of its own between the first two nodes on every other instance */
    len += snprintf(cluster + len, sizeof cluster - (size_t)len, "]%s, \"inter_gbps\": %.3g, \"inter_lat_us\": 5 }",
                    seed % 2 ? ", \"links\": [ { \"a\": \"a\", \"b\": \"b\", \"gbps\": 150, \"lat_us\": 2 } ]" : "",
                    inter);
    hp_problem *p = fx_problem(model, cluster, NULL, 8 * (1 + seed % 3), HP_1F1B);
    hp_classes cl;
    hp_diag d = {0};
    p->job.sharding = 1u << HP_SHARD_DP;
    ri_cert_scope(p);
    CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
    for (int pp = 2; pp <= 4; pp += 2) {
      hp_config c = { pp, 1, 8 / pp, 1 };
      double bf = ri_brute_config(p, &c), with = pattern_dp_worst(p, &cl, &c, 1),
             without = pattern_dp_worst(p, &cl, &c, 0);
      if (!(with <= bf * (1 + 1e-9) + 1e-12))
        fprintf(stderr, "  seed %d pp %d: bound %.9g above the brute force %.9g\n", seed, pp, with, bf);
      CHECK(with <= bf * (1 + 1e-9) + 1e-12);
      CHECK(with >= without * (1 - 1e-12));
      raised += with > without * (1 + 1e-9);
      for (int b = 0; b < nb; b++) {
        if (!bes[b]) continue;
        double v = pattern_mip(bes[b], p, &cl, &c);
        if (!(v <= bf * (1 + 1e-7) + 1e-9) || !(v >= with * (1 - 1e-6) - 1e-9))
          fprintf(stderr, "  seed %d pp %d: %s %.9g, DP %.9g, brute %.9g\n", seed, pp, backend_names[b], v, with, bf);
        CHECK(v <= bf * (1 + 1e-7) + 1e-9);
        CHECK(v >= with * (1 - 1e-6) - 1e-9);
      }
      tried++;
    }
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d configurations, the worst replica's pairs raised %d bounds\n", tried, raised);
  CHECK(raised > 0);
}

TEST(mip_lp_and_mps_writers_name_every_column_and_row)
{
  hp_problem *p = fx_problem(model6z, cluster(0.3), NULL, 8, HP_1F1B);
  hp_plan *pl = NULL;
  hp_mip *m = NULL;
  hp_mip_map map;
  hp_diag d = {0};
  char *lp = NULL, *mps = NULL;
  hp_plan_create(&pl, 2, 1, 2, 6, &d);
  pl->mbs = 1;
  hp_plan_set_gas(p, pl, &d);
  hp_plan_place_in_order(pl);
  CHECK(hp_mip_build(p, pl, 1, &m, &map, &d) == HP_OK);
  CHECK(hp_mip_write_lp(m, &lp, &d) == HP_OK);
  CHECK(hp_mip_write_mps(m, &mps, &d) == HP_OK);
  CHECK_CONTAINS(lp, "Minimize\n obj: +1 P +1 Q");
  CHECK_CONTAINS(lp, " mem_s1:");
  CHECK_CONTAINS(lp, "General\n");
  CHECK_CONTAINS(mps, "'MARKER' 'INTORG'");
  for (int j = 0; j < m->n_cols; j++) CHECK(strstr(lp, m->cols[j].name) && strstr(mps, m->cols[j].name));
  for (int i = 0; i < m->n_rows; i++) CHECK(strstr(lp, m->rows[i].name) && strstr(mps, m->rows[i].name));
  free(lp);
  free(mps);
  hp_mip_destroy(&m);
  hp_mip_map_release(&map);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

#ifdef HP_HAVE_GLPK
#include <pthread.h>

/* A GLPK solve of the relaxation of one configuration, for a thread. */
typedef struct glpk_job { const hp_problem *p; const hp_classes *cl; hp_config c; double v; } glpk_job;

static void *glpk_thread(void *arg)
{
  glpk_job *j = arg;
  for (int rep = 0; rep < 3; rep++) j->v = pattern_mip(hp__glpk_solve_mip, j->p, j->cl, &j->c);
  return NULL;
}
#endif

/* The GLPK adapter keeps no process-wide state: relaxations solved in two threads at once
 * give what each gives alone. */
TEST(glpk_solves_in_two_threads_at_once)
{
#ifndef HP_HAVE_GLPK
  harness_skip("this build lacks GLPK");
#else
  hp_problem *p = fx_problem(model6z, cluster(0.3), NULL, 8, HP_1F1B);
  hp_config *cfg = NULL;
  hp_classes cl;
  hp_diag d = {0};
  int n = hp__configs(p, &cfg);
  CHECK(n >= 2);
  CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
  glpk_job a = { p, &cl, cfg[0], NAN }, b = { p, &cl, cfg[n - 1], NAN };
  double va = pattern_mip(hp__glpk_solve_mip, p, &cl, &a.c), vb = pattern_mip(hp__glpk_solve_mip, p, &cl, &b.c);
  pthread_t ta, tb;
  CHECK(pthread_create(&ta, NULL, glpk_thread, &a) == 0);
  CHECK(pthread_create(&tb, NULL, glpk_thread, &b) == 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  CHECK(!isnan(va) && !isnan(vb));
  CHECK(a.v == va);
  CHECK(b.v == vb);
  hp_classes_release(&cl);
  free(cfg);
  hp_problem_destroy(&p);
#endif
}
