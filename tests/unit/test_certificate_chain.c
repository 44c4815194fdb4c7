/* test_certificate_chain.c -- the chained figure of a stage of one class (hp_pattern.h,
 * bdp_chain: where every replica keeps both hand-offs of a middle stage that spans nodes
 * inside a node, a node holds three stages' crossing replica groups; the pattern DP's two
 * variants, pattern_dp.c; the pattern MIP's zc rows, mip_pattern.c) against brute force,
 * on random instances of 6 GPUs: nodes of 3 + 3, 4 + 2 or 2 + 2 + 2 GPUs of one kind, or
 * 2 + 2 of one and 2 of another; some with a slower link between two nodes; the modes dp,
 * or dp and zdp. For every configuration with a middle stage that may span nodes (pp >= 3,
 * dp >= 2):
 *   - the DP's bound is never above the least time of the configuration's plans (brute
 *     force) and never below its bound without the chained figures;
 *   - the pattern MIP's optimum (CBC; on the configurations the chained figure raised, and
 *     on every third of the others) lies between the DP's bound and that least time, and
 *     the plan its solution decodes to is never below it;
 * and the chained figures raise the bound on some of them, so that the test holds them to
 * something. Tolerance: relative 1e-9, as test_certificate_v3.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"
#include "bound_probe.h"
#include "random_instance.h"

#define CH_TOL 1e-9
/* Under AddressSanitizer the brute force runs about 25 times slower: the first 8 seeds,
 * whose third has two raised bounds (and so do the 6 that HARNESS_LIGHT leaves) */
#if defined(__SANITIZE_ADDRESS__)
#define CH_SEEDS 8
#else
#define CH_SEEDS 60
#endif

/* Instance `seed`: its model and cluster JSON into the buffers, its modes into *zdp, a
 * description into `what`. */
static void ch_instance(unsigned long seed, char *model, size_t n_model, char *cluster,
                        size_t n_cluster, int *zdp, char *what, size_t n_what)
{
  static const struct { int n; int gpus[3]; char type[3]; } layouts[4] = {
    { 2, { 3, 3, 0 }, "aa" }, { 2, { 4, 2, 0 }, "aa" }, { 3, { 2, 2, 2 }, "aaa" },
    { 3, { 2, 2, 2 }, "aab" } };
  unsigned long long s = seed;
  int lay = (int)fx_draw(&s, 0, 4);
  /* hand-offs and syncs both dear, the regime where keeping every replica's hand-offs
   * inside nodes (and paying for it in the sync) competes with crossing */
  double params = fx_log(&s, 1e7, 3e8), out = fx_log(&s, 1e7, 3e8), flops = fx_draw(&s, 1e12, 8e12);
  double inter = fx_log(&s, 1, 30), slow = fx_log(&s, 0.5, 10), tfb = fx_draw(&s, 30, 200);
  double intra = fx_draw(&s, 200, 2400);   /* one figure: nodes of a type stay one class */
  int link = fx_draw(&s, 0, 1) < 0.5;
  size_t at;
  *zdp = fx_draw(&s, 0, 1) < 0.5;
  /* a light embedding and head around one heavy block: with pp 3 the middle stage holds
   * the block, whose gradient sync the chained figure slows */
  snprintf(model, n_model, "{ \"name\": \"chain\", \"input_bytes\": 1000, \"layers\": [ "
           "{ \"name\": \"embed\", \"params\": %.6g, \"act_bytes\": 1e6, \"out_bytes\": %.6g, \"flops\": %.6g }, "
           "{ \"name\": \"block\", \"params\": %.6g, \"act_bytes\": 1e6, \"out_bytes\": %.6g, "
           "\"flops\": %.6g, \"tp_comm_bytes\": 1e6 }, "
           "{ \"name\": \"head\", \"params\": %.6g, \"act_bytes\": 1e6, \"out_bytes\": 4, \"flops\": %.6g } ] }",
           params / 10, out, flops / 4, params, out, flops, params / 10, flops / 4);
  at = (size_t)snprintf(cluster, n_cluster, "{ \"name\": \"chain-%lu\", \"device_types\": { \"a\": "
                        "{ \"mem_gib\": 80, \"tflops\": 100, \"efficiency\": 0.5, \"hbm_gbs\": 2000 }, "
                        "\"b\": { \"mem_gib\": 80, \"tflops\": %.4g, \"efficiency\": 0.5 } }, \"nodes\": [",
                        seed, tfb);
  for (int q = 0; q < layouts[lay].n && at < n_cluster; q++)
    at += (size_t)snprintf(cluster + at, n_cluster - at, "%s { \"name\": \"n%d\", \"type\": \"%c\", "
                           "\"gpus\": %d, \"intra_gbps\": %.4g, \"intra_lat_us\": 2 }", q ? "," : "", q,
                           layouts[lay].type[q], layouts[lay].gpus[q], intra);
  if (at < n_cluster)
    at += (size_t)snprintf(cluster + at, n_cluster - at, " ], \"inter_gbps\": %.4g, \"inter_lat_us\": 5", inter);
  if (link && at < n_cluster)
    at += (size_t)snprintf(cluster + at, n_cluster - at, ", \"links\": [ { \"a\": \"n0\", \"b\": \"n1\", "
                           "\"gbps\": %.4g, \"lat_us\": 20 } ]", slow);
  if (at < n_cluster) snprintf(cluster + at, n_cluster - at, " }");
  snprintf(what, n_what, "seed %lu: nodes %s of %d+%d+%d GPUs, a block of %.3g params, out %.3g "
           "bytes, inter %.3g Gbit/s%s, modes %s", seed, layouts[lay].type, layouts[lay].gpus[0],
           layouts[lay].gpus[1], layouts[lay].gpus[2], params, out, inter,
           link ? " (n0-n1 slower)" : "", *zdp ? "dp,zdp" : "dp");
}

TEST(certificate_chained_stage_bound_never_above_brute_force_and_above_the_unchained)
{
  hp_mip_backend be = NULL;
  int bad = 0, configs = 0, raised = 0, tight = 0, tight0 = 0, solves = 0;
  /* CBC: on a draft of this generator (with a fourth layer) GLPK 5.0 (unscaled,
   * solver_glpk.c) called a program "optimal" at 9.762 s where CBC finds the feasible
   * 2.076 s (a 0.62 Gbit/s link, figures to 3.6e4 ms), as it does with the program before
   * this figure and one unused binary column added. (On this generator's first 460 seeds
   * it answers every program right.) A figure too high is never taken as a bound
   * (mip_search.c only lowers one) */
#ifdef HP_HAVE_CBC
  be = hp__cbc_solve_mip;
#endif
  if (!be) fprintf(stderr, "  this build has no CBC: the pattern MIP is left out\n");
  for (unsigned long seed = 1; seed <= (unsigned long)harness_count(CH_SEEDS); seed++) {
    char model[1024], cluster[2048], what[512];
    int zdp;
    hp_classes cl;
    hp_diag d = {0};
    hp_config *cfg = NULL;
    ch_instance(seed, model, sizeof model, cluster, sizeof cluster, &zdp, what, sizeof what);
    hp_problem *p = fx_problem(model, cluster, NULL, seed % 2 ? 8 : 4, HP_1F1B);
    if (zdp) p->job.sharding = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP;
    ri_cert_scope(p);
    CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
    int n = hp__configs(p, &cfg);
    for (int i = 0; i < n; i++) {
      const hp_config *c = &cfg[i];
      if (c->pp < 3 || c->dp < 2) continue;
      double bf = ri_brute_config(p, c);
      double b1 = bp_dp_bound(p, &cl, c, -1, 0, INFINITY, NULL);
      double b0 = bp_dp_bound_unchained(p, &cl, c);
      double mv = 0, decoded = INFINITY;
      int solved = 0;
      configs++;
      raised += isfinite(b0) && b1 > b0 * (1 + CH_TOL);
      tight += isfinite(bf) && b1 >= bf * (1 - CH_TOL);
      tight0 += isfinite(bf) && b0 >= bf * (1 - CH_TOL);
      /* the program where the chained figure raised the DP (where its rows bind), and on
       * every third configuration else (CBC takes about as long as the brute force: this
       * keeps the test inside its limit under AddressSanitizer) */
      if (be && (b1 > b0 * (1 + CH_TOL) || configs % 3 == 0)) {
        mv = bp_mip_optimum(be, p, &cl, c, &decoded);
        solves++;
        solved = 1;
      }
      if (isnan(b1) || isnan(b0) || !fx_at_most(b1, bf, CH_TOL) || (isinf(b1) && isfinite(bf)) ||
          !fx_at_most(b0, b1, CH_TOL) ||
          (solved && (isnan(mv) || !fx_at_most(mv, bf, CH_TOL) || !fx_at_most(b1, mv, CH_TOL) ||
                      !fx_at_most(bf, decoded, CH_TOL)))) {
        fprintf(stderr, "  VIOLATION %s\n    pp %d tp %d dp %d mbs %d: DP bound %.12g (unchained "
                "%.12g), pattern MIP %.12g (decoded plan %.12g), brute force %.12g\n", what, c->pp,
                c->tp, c->dp, c->mbs, b1, b0, mv, decoded, bf);
        bad++;
      }
    }
    free(cfg);
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d configurations with a middle stage, %d MIP solves; the chained figures "
          "raised the bound on %d; at the brute-force optimum on %d (unchained: %d)\n", configs,
          solves, raised, tight, tight0);
  CHECK(configs > 0);
  CHECK(raised > 0);
  CHECK_INT(bad, 0);
}
