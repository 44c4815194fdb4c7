/* test_certificate.c -- the certificate's regressions and promises: the over-claim of the
 * old type relaxation (a single-point TP profile used below its micro-batch is faster on
 * a weaker link, so the best link's time is no bound), a single-node cluster with a
 * bandwidth matrix (which crashed the old node relaxation), and the certificate of both
 * MIP solvers against the exhaustive optimum on tiny instances. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "random_instance.h"

/* Two nodes of one type, 1000 and 25 Gbit/s inside; a profile measured at mbs 4 only
 * (the type's peak of 400 TFLOPS allows its times; 50 achieved where it has none). */
static const char overclaim_model[] =
  "{ \"layers\": [ { \"name\": \"blk\", \"repeat\": 4, \"params\": 5e6, \"act_bytes\": 4e6,"
  "  \"out_bytes\": 1e6, \"flops\": 2e12, \"tp_comm_bytes\": 4e6 } ] }";
static const char overclaim_cluster[] =
  "{ \"device_types\": { \"g\": { \"mem_gib\": 16, \"tflops\": 400, \"efficiency\": 0.125 } },"
  "  \"nodes\": [ { \"name\": \"fast\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 1000 },"
  "    { \"name\": \"slow\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 25 } ],"
  "  \"inter_gbps\": 100, \"inter_lat_us\": 5 }";
static const char overclaim_profile[] =
  "{ \"layer_times\": [ { \"kind\": \"blk\", \"type\": \"g\", \"tp\": 1, \"mbs\": 4, \"seconds\": 0.040 },"
  "  { \"kind\": \"blk\", \"type\": \"g\", \"tp\": 2, \"mbs\": 4, \"seconds\": 0.030 } ] }";

/* The least time of a configuration's plans, the pattern DP's bound, and the pattern
 * MIP's optimum by each backend built in. */
static void bound_config(const hp_problem *p, const hp_config *c, double *bf, double *dp,
                         double *mip, int *n_mip)
{
  hp_classes cl;
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_pat_opts o;
  hp_pat_result r;
  hp_diag d = {0};
  hp_limits lim;
  hp_mip_backend be[2] = { NULL, NULL };
#ifdef HP_HAVE_GLPK
  be[0] = hp__glpk_solve_mip;
#endif
#ifdef HP_HAVE_CBC
  be[1] = hp__cbc_solve_mip;
#endif
  *bf = ri_brute_config(p, c);
  hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d);
  hp__plan_for(p, c, &pl, &d);
  hp_patterns_build(p, &cl, pl, &pt, &d);
  hp__pat_opts_init(&o);
  *dp = hp__pattern_bound(p, &pt, &o, &r, &d) == HP_OK && r.done ? r.bound : NAN;
  hp__pat_result_release(&r);
  hp_limits_init(&lim);
  lim.gap = 1e-9;
  *n_mip = 0;
  for (int b = 0; b < 2; b++) {
    hp_mip *m = NULL;
    hp_mip_pmap map;
    hp_mip_solution sol = { HP_SOL_NONE, INFINITY, -INFINITY, NULL };
    if (!be[b]) continue;
    if (hp_mip_build_pattern(p, &pt, &m, &map, &d) == HP_OK && be[b](m, NULL, &lim, 60, INFINITY, &sol, &d) == HP_OK)
      mip[(*n_mip)++] = sol.x ? (sol.status == HP_SOL_OPTIMAL ? sol.obj : sol.bound) * m->obj_scale : NAN;
    free(sol.x);
    hp_mip_destroy(&m);
    hp_mip_pmap_release(&map);
  }
  hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  hp_classes_release(&cl);
}

TEST(certificate_does_not_overclaim_a_single_point_profile_below_its_micro_batch)
{
  hp_problem *p = fx_problem(overclaim_model, overclaim_cluster, overclaim_profile, 8, HP_1F1B);
  hp_config c = { 2, 2, 1, 1 };
  double bf, dp, mip[2];
  int n;
  /* at mbs 1 the weak link's TP group is faster: 25 Gbit/s gives e + w with e = t(4) -
   * 4 w and w = t1 / (4 * 2) + (tp-1)/tp * 2 C / B larger, so t(1) = t(4) - 3 w smaller */
  double w_fast = 0.040 / 8 + 4e6 / (1000e9 / 8), w_slow = 0.040 / 8 + 4e6 / (25e9 / 8);
  CHECK(0.030 - 3 * w_slow < 0.030 - 3 * w_fast);
  CHECK_NEAR(hp_layer_time(p, 0, 0, 2, 1, 25e9 / 8, 0), 0.030 - 3 * w_slow, 1e-12);
  bound_config(p, &c, &bf, &dp, mip, &n);
  CHECK(isfinite(bf));
  CHECK(dp <= bf * (1 + 1e-12));
  CHECK_NEAR(dp, bf, 1e-9);                 /* both stages on the weak node's links: exact */
  for (int b = 0; b < n; b++) {
    CHECK(mip[b] <= bf * (1 + 1e-7));
    CHECK(mip[b] >= dp * (1 - 1e-6));
  }
  hp_problem_destroy(&p);
}

TEST(certificate_handles_a_single_node_cluster_with_a_bandwidth_matrix)
{
  static const char cluster[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 16, \"tflops\": 100 } },"
    "  \"nodes\": [ { \"name\": \"only\", \"type\": \"g\", \"gpus\": 4, \"intra_gbps\": 100 } ],"
    "  \"bandwidth_matrix\": { \"gbps\": [ [0, 300, 100, 50], [300, 0, 80, 60], [100, 80, 0, 400],"
    "    [50, 60, 400, 0] ] } }";
  hp_problem *p = fx_problem(overclaim_model, cluster, NULL, 8, HP_1F1B);
  hp_config *cfg = NULL;
  int n = hp__configs(p, &cfg), checked = 0;
  CHECK(n > 0);
  for (int i = 0; i < n; i++) {
    double bf, dp, mip[2];
    int nm;
    bound_config(p, &cfg[i], &bf, &dp, mip, &nm);
    CHECK(dp <= bf * (1 + 1e-12));
    for (int b = 0; b < nm; b++) CHECK(mip[b] <= bf * (1 + 1e-7));
    checked++;
  }
  CHECK_INT(checked, n);
  free(cfg);
  hp_problem_destroy(&p);
}

/* glpk and cbc over the whole space of a job sharding with dp and zdp: their bound never
 * exceeds the exhaustive optimum, their plan is that optimum and proved so, and
 * "infeasible" exactly where nothing fits (where the relaxation fits but no plan does, the
 * closing phase's enumeration proves it). */
TEST(certificate_of_glpk_and_cbc_against_enum_on_20_random_instances)
{
  const char *names[2] = { "glpk", "cbc" };
  int runs = 0, optimal = 0;
  for (unsigned long seed = 201; seed < 201 + (unsigned long)harness_count(20); seed++) {
    char what[256];
    hp_problem *p = ri_problem(seed, what, sizeof what);
    hp_limits lim;
    hp_result en;
    /* the certificate's own space (hp__cert_scope): with the default list of four modes it
     * claims no bound (test_certificate12.c) */
    ri_cert_scope(p);
    p->job.sharding = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP;
    hp_diag d = {0};
    hp_limits_init(&lim);
    if (hp_solver_run(hp_solver_find("enum"), p, NULL, &lim, &en, &d) != HP_OK) {
      fprintf(stderr, "  %s: enum: %s\n", what, d.msg);
      CHECK(0);
    }
    for (int b = 0; b < 2; b++) {
      const hp_solver *s = hp_solver_find(names[b]);
      hp_result r;
      if (!s) continue;
      lim.time_limit = 30;
      CHECK(hp_solver_run(s, p, NULL, &lim, &r, &d) == HP_OK);
      runs++;
      if (r.status == HP_SOL_INFEASIBLE) CHECK_INT(en.status, HP_SOL_INFEASIBLE);   /* sound */
      if (en.status == HP_SOL_INFEASIBLE) {
        CHECK(r.plan == NULL);
        /* the closing phase enumerates what the relaxation could not rule out */
        CHECK_INT(r.status, HP_SOL_INFEASIBLE);
      } else {
        if (!(r.bound <= en.objective * (1 + 1e-9)))
          fprintf(stderr, "  %s: %s bound %.9g, enum %.9g\n", what, names[b], r.bound, en.objective);
        CHECK(r.bound <= en.objective * (1 + 1e-9));
        CHECK(r.objective >= en.objective * (1 - 1e-12));
        if (r.status == HP_SOL_OPTIMAL) { optimal++; CHECK_NEAR(r.objective, en.objective, 1e-9); }
        else fprintf(stderr, "  %s: %s %s %.9g bound %.9g, enum %.9g (%s)\n", what, names[b],
                     hp_sol_status_name(r.status), r.objective, r.bound, en.objective, r.space_note);
        /* every configuration the bounds leave open is enumerated (the closing phase):
         * tiny instances always end proved */
        CHECK_INT(r.status, HP_SOL_OPTIMAL);
      }
      hp_result_release(&r);
    }
    hp_result_release(&en);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d runs, %d proved optimal\n", runs, optimal);
  SKIP_UNLESS(runs > 0, "this build has no MIP backend");
}
