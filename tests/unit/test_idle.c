/* test_idle.c -- idle devices in the search (cost model 1.2, job idle_devices): the idle
 * levels of configs.c (nested prefixes of the nodes from the slowest), the dp solver
 * against enum's brute force on a hand-made cluster where idling two slow GPUs wins, on
 * random tiny instances and on instances built so that idling the slow GPUs wins, and the
 * all-used figure (hp_result.all_used_time) against brute force over the plans that use
 * every device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixtures.h"
#include "harness.h"
#include "random_instance.h"
#include "../../src/launch.h"

/* 2 fast GPUs on node a, 2 T4-like ones 12.5 times slower on node t4-0. */
static const char two_slow_cluster[] =
  "{ \"name\": \"two-slow\", \"device_types\": {"
  "    \"fast\": { \"mem_gib\": 1, \"reserved_gib\": 0.25, \"tflops\": 100, \"efficiency\": 0.5 },"
  "    \"T4\": { \"mem_gib\": 1, \"tflops\": 8, \"efficiency\": 0.5 } },"
  "  \"nodes\": ["
  "    { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
  "    { \"name\": \"t4-0\", \"type\": \"T4\", \"gpus\": 2, \"intra_gbps\": 400, \"intra_lat_us\": 4 } ],"
  "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";

static hp_err solve(const hp_problem *p, const char *solver, hp_result *r)
{
  hp_limits lim;
  hp_diag d = {0};
  hp_err err;
  hp_limits_init(&lim);
  lim.time_limit = 60;
  err = hp_solver_run(hp_solver_find(solver), p, NULL, &lim, r, &d);
  if (err) fprintf(stderr, "  %s: %s\n", solver, d.msg);
  return err;
}

/* Types fast (a node of 2), mid (a node of 2) and slow (3 nodes of 1): from the slowest,
 * s0 s1 s2 m f. Levels: 1 and 2 of the 3 slow nodes, all three, then mid too; the fastest
 * type always works. */
TEST(idle_levels_are_nested_node_prefixes_from_the_slowest)
{
  static const char cl[] =
    "{ \"device_types\": {"
    "  \"fast\": { \"mem_gib\": 16, \"tflops\": 100, \"efficiency\": 0.5 },"
    "  \"slow\": { \"mem_gib\": 16, \"tflops\": 10, \"efficiency\": 0.5 },"
    "  \"mid\": { \"mem_gib\": 16, \"tflops\": 40, \"efficiency\": 0.5 } },"
    "  \"nodes\": [ { \"name\": \"f\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800 },"
    "    { \"name\": \"s0\", \"type\": \"slow\", \"gpus\": 1, \"intra_gbps\": 800 },"
    "    { \"name\": \"m\", \"type\": \"mid\", \"gpus\": 2, \"intra_gbps\": 800 },"
    "    { \"name\": \"s1\", \"type\": \"slow\", \"gpus\": 1, \"intra_gbps\": 800 },"
    "    { \"name\": \"s2\", \"type\": \"slow\", \"gpus\": 1, \"intra_gbps\": 800 } ],"
    "  \"inter_gbps\": 80 }";
  /* keep[f, s0, m, s1, s2] at levels 0..4, and the kept device count */
  static const unsigned char want[5][5] = { { 1, 1, 1, 1, 1 }, { 1, 0, 1, 1, 1 }, { 1, 0, 1, 0, 1 },
                                            { 1, 0, 1, 0, 0 }, { 1, 0, 0, 0, 0 } };
  static const int devices[5] = { 7, 6, 5, 4, 2 };
  hp_problem *p = fx_problem(fx_tiny_model, cl, NULL, 8, HP_1F1B);
  hp_idle_config *ic = NULL;
  unsigned char keep[5];
  int n, seen[6] = {0};
  p->job.idle_devices = 1;
  for (int lv = 0; lv < 5; lv++) {
    CHECK_INT(hp__idle_kept(p, lv, keep), devices[lv]);
    for (int k = 0; k < 5; k++) CHECK_INT(keep[k], want[lv][k]);
  }
  n = hp__configs_idle(p, &ic);
  CHECK(n > 0);
  for (int i = 0; i < n; i++) {
    CHECK(ic[i].drop >= 1 && ic[i].drop <= 4);
    seen[ic[i].drop]++;
    CHECK_INT(ic[i].c.pp * ic[i].c.tp * ic[i].c.dp, devices[ic[i].drop]);
  }
  /* 5 devices at level 2 have no configuration (pp 5 > 4 layers, dp 5 does not divide
   * gbs 8); the other levels have */
  CHECK(seen[1] > 0 && seen[3] > 0 && seen[4] > 0);
  CHECK_INT(seen[2], 0);
  free(ic);
  /* without idle_devices, none */
  p->job.idle_devices = 0;
  CHECK_INT(hp__configs_idle(p, &ic), 0);
  free(ic);
  hp_problem_destroy(&p);
}

/* Idling the two slow GPUs wins (0.880224 s against 1.101038 s using all four, by hand
 * through the CLI): enum and dp both return a plan on the two fast GPUs alone, with the
 * same time; the all-used figure is the brute force over the plans that use every device,
 * for enum (which scores them all) and, on this instance, for dp too. */
TEST(dp_and_enum_leave_the_two_slow_gpus_idle_and_know_what_using_them_costs)
{
  hp_problem *p = fx_problem(fx_tiny_model, two_slow_cluster, NULL, 8, HP_1F1B);
  hp_result e, dp;
  double all_used;
  p->job.idle_devices = 0;
  all_used = ri_brute_all(p, NULL);        /* every device used: the job without idle */
  p->job.idle_devices = 1;
  CHECK(isfinite(all_used));
  CHECK(solve(p, "enum", &e) == HP_OK);
  CHECK(solve(p, "dp", &dp) == HP_OK);
  CHECK(e.plan && dp.plan && e.fits && dp.fits);
  CHECK_INT(e.status, HP_SOL_OPTIMAL);
  CHECK_NEAR(e.objective, ri_brute_all(p, NULL), 1e-12);
  CHECK_NEAR(dp.objective, e.objective, 1e-12);
  CHECK(e.objective < all_used * 0.9);     /* a real gain, not a tie */
  for (int dv = 0; dv < 4; dv++) {
    CHECK_INT(e.eval.idle[dv], dv >= 2);
    CHECK_INT(dp.eval.idle[dv], dv >= 2);
  }
  CHECK_NEAR(e.all_used_time, all_used, 1e-12);
  CHECK_NEAR(dp.all_used_time, all_used, 1e-12);
  hp_result_release(&e);
  hp_result_release(&dp);
  /* without idle_devices the figure is the plan's own */
  p->job.idle_devices = 0;
  CHECK(solve(p, "dp", &dp) == HP_OK);
  CHECK_NEAR(dp.all_used_time, dp.objective, 0);
  CHECK_NEAR(dp.objective, all_used, 1e-12);
  hp_result_release(&dp);
  hp_problem_destroy(&p);
}

/* Two fast GPUs on one node and three slow ones (0.6 of the speed) on a node each, gbs 8,
 * 4 layers: no plan uses all five (pp 5 > 4 layers, dp 5 does not divide 8), and the best
 * (enum) leaves one slow node idle, dp 4 on the other four. Whole-type levels alone would
 * give dp only the two fast GPUs: the node prefixes give it enum's optimum. */
TEST(dp_leaves_one_of_three_slow_nodes_idle_as_enum_does)
{
  static const char cl[] =
    "{ \"device_types\": {"
    "  \"fast\": { \"mem_gib\": 16, \"tflops\": 100, \"efficiency\": 0.5 },"
    "  \"slow\": { \"mem_gib\": 16, \"tflops\": 60, \"efficiency\": 0.5 } },"
    "  \"nodes\": [ { \"name\": \"f\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800 },"
    "    { \"name\": \"s0\", \"type\": \"slow\", \"gpus\": 1, \"intra_gbps\": 400 },"
    "    { \"name\": \"s1\", \"type\": \"slow\", \"gpus\": 1, \"intra_gbps\": 400 },"
    "    { \"name\": \"s2\", \"type\": \"slow\", \"gpus\": 1, \"intra_gbps\": 400 } ],"
    "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";
  hp_problem *p = fx_problem(fx_tiny_model, cl, NULL, 8, HP_1F1B);
  hp_result e, dp;
  p->job.idle_devices = 1;
  CHECK(solve(p, "enum", &e) == HP_OK);
  CHECK(solve(p, "dp", &dp) == HP_OK);
  CHECK(e.plan && dp.plan && e.fits && dp.fits);
  CHECK_INT(e.eval.n_used, 4);
  CHECK(!e.eval.idle[0] && !e.eval.idle[1]);
  CHECK_INT(dp.eval.n_used, 4);
  CHECK(!dp.eval.idle[0] && !dp.eval.idle[1]);
  CHECK_NEAR(dp.objective, e.objective, 1e-12);
  CHECK(isnan(e.all_used_time) && isnan(dp.all_used_time));   /* no plan uses all five */
  hp_result_release(&e);
  hp_result_release(&dp);
  hp_problem_destroy(&p);
}

/* Random tiny instances with idle devices allowed: dp searches a part of the space, so
 * enum's optimum is no worse than dp's, and enum's all-used figure is the brute force
 * over the plans that use every device; dp's is no better than it, and no better than
 * dp's own plan when that uses every device. */
TEST(dp_with_idle_devices_is_never_better_than_enum_on_random_instances)
{
  int n = harness_count(40), compared = 0, idle_dp = 0, all_known = 0;
  for (unsigned long seed = 1; seed <= (unsigned long)n; seed++) {
    char what[512];
    hp_problem *p = ri_problem(seed, what, sizeof what);
    hp_result e, dp;
    double all_used;
    p->job.idle_devices = 0;
    all_used = ri_brute_all(p, NULL);
    p->job.idle_devices = 1;
    if (solve(p, "enum", &e) != HP_OK) {
      fprintf(stderr, "  %s: enum refused\n", what);
      CHECK(0);
    }
    CHECK(solve(p, "dp", &dp) == HP_OK);
    if (dp.plan && dp.fits && !(e.objective <= dp.objective * (1 + 1e-9)))
      fprintf(stderr, "  %s: enum %.17g, dp %.17g\n", what, e.objective, dp.objective);
    if (dp.plan && dp.fits) {
      CHECK(e.plan != NULL);
      CHECK(e.objective <= dp.objective * (1 + 1e-9));
      compared++;
      idle_dp += dp.eval.n_used < dp.eval.n_devices;
    }
    if (isfinite(all_used)) {
      CHECK_NEAR(e.all_used_time, all_used, 1e-9);
      all_known++;
    } else {
      CHECK(isnan(e.all_used_time));
    }
    if (!isnan(dp.all_used_time)) CHECK(dp.all_used_time >= all_used * (1 - 1e-9));
    if (dp.plan && dp.fits && dp.eval.n_used == dp.eval.n_devices)
      CHECK_NEAR(dp.all_used_time, dp.objective, 0);
    hp_result_release(&e);
    hp_result_release(&dp);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d instances: %d dp plans compared (%d leave devices idle), %d with an "
          "all-used optimum\n", n, compared, idle_dp, all_known);
  if (n >= 20) CHECK(compared >= n / 2 && idle_dp > 0 && all_known >= n / 2);
}

/* Instance k built so that idling two slow GPUs should win: two fast GPUs (one node of 2,
 * or two of 1) and two 8 to 30 times slower (one node of 2, or two of 1), a random
 * 4-layer model whose memory does not bind, grad_sync end (where dp's layer DP is exact). */
static hp_problem *slow_pair_instance(unsigned long k, char *what, size_t n_what)
{
  char model[2048], cluster[2048];
  hp_rng r;
  int len = 0, fast_split, slow_split;
  double ratio, tf;
  long gbs;
  hp_problem *p;
  hp__rng_seed(&r, k * 31337 + 5);
  fast_split = hp__rng_int(&r, 2);
  slow_split = hp__rng_int(&r, 2);
  ratio = 8 + 22 * hp__rng_unit(&r);
  tf = 50 + 150 * hp__rng_unit(&r);
  gbs = (long[]){ 4, 8, 16 }[hp__rng_int(&r, 3)];
  len += snprintf(model + len, sizeof model - (size_t)len, "{ \"input_bytes\": 1000, \"layers\": [");
  for (int l = 0; l < 4; l++)
    len += snprintf(model + len, sizeof model - (size_t)len,
                    "%s{ \"name\": \"l%d\", \"params\": %g, \"act_bytes\": %g, \"out_bytes\": %g, "
                    "\"flops\": %g, \"tp_comm_bytes\": %g }", l ? "," : "", l,
                    1e6 + 8e6 * hp__rng_unit(&r), 1e6 + 8e6 * hp__rng_unit(&r),
                    1e5 + 2e6 * hp__rng_unit(&r), 5e11 + 5e12 * hp__rng_unit(&r),
                    2e6 * hp__rng_unit(&r));
  snprintf(model + len, sizeof model - (size_t)len, "] }");
  len = snprintf(cluster, sizeof cluster,
                 "{ \"device_types\": { \"fast\": { \"mem_gib\": 16, \"tflops\": %g, \"efficiency\": 0.5 },"
                 " \"slow\": { \"mem_gib\": 16, \"tflops\": %g, \"efficiency\": 0.5 } }, \"nodes\": [",
                 tf, tf / ratio);
  if (fast_split)
    len += snprintf(cluster + len, sizeof cluster - (size_t)len,
                    "{ \"name\": \"f0\", \"type\": \"fast\", \"gpus\": 1, \"intra_gbps\": 800 },"
                    "{ \"name\": \"f1\", \"type\": \"fast\", \"gpus\": 1, \"intra_gbps\": 800 },");
  else
    len += snprintf(cluster + len, sizeof cluster - (size_t)len,
                    "{ \"name\": \"f\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800 },");
  if (slow_split)
    len += snprintf(cluster + len, sizeof cluster - (size_t)len,
                    "{ \"name\": \"s0\", \"type\": \"slow\", \"gpus\": 1, \"intra_gbps\": 400 },"
                    "{ \"name\": \"s1\", \"type\": \"slow\", \"gpus\": 1, \"intra_gbps\": 400 }");
  else
    len += snprintf(cluster + len, sizeof cluster - (size_t)len,
                    "{ \"name\": \"s\", \"type\": \"slow\", \"gpus\": 2, \"intra_gbps\": 400 }");
  snprintf(cluster + len, sizeof cluster - (size_t)len, "], \"inter_gbps\": %g }",
           20 + 80 * hp__rng_unit(&r));
  snprintf(what, n_what, "built instance %lu: fast %s, slow %s, %.1f times slower, gbs %ld", k,
           fast_split ? "1+1" : "2", slow_split ? "1+1" : "2", ratio, gbs);
  p = fx_problem(model, cluster, NULL, gbs, HP_1F1B);
  p->job.idle_devices = 1;
  return p;
}

TEST(dp_finds_the_enum_optimum_where_idling_two_slow_gpus_wins)
{
  int n = harness_count(24), won = 0;
  for (unsigned long k = 1; k <= (unsigned long)n; k++) {
    char what[256];
    hp_problem *p = slow_pair_instance(k, what, sizeof what);
    hp_result e, dp;
    int slow_idle = 1;
    CHECK(solve(p, "enum", &e) == HP_OK);
    CHECK(solve(p, "dp", &dp) == HP_OK);
    CHECK(e.plan && e.fits);
    for (int dv = 0; dv < 4; dv++) slow_idle &= e.eval.idle[dv] == (dv >= 2);
    if (slow_idle) {
      won++;
      if (!(dp.plan && fabs(dp.objective - e.objective) <= 1e-9 * e.objective))
        fprintf(stderr, "  %s: enum %.17g, dp %.17g\n", what, e.objective, dp.objective);
      CHECK(dp.plan && dp.fits);
      CHECK_NEAR(dp.objective, e.objective, 1e-9);
      CHECK(dp.eval.idle[2] && dp.eval.idle[3]);
      CHECK(isfinite(e.all_used_time) && e.all_used_time > e.objective);
      CHECK(dp.all_used_time >= e.all_used_time * (1 - 1e-9));
    } else {
      fprintf(stderr, "  %s: enum's optimum uses %d devices, not the two fast alone\n", what,
              e.eval.n_used);
    }
    hp_result_release(&e);
    hp_result_release(&dp);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d built instances, idling the slow pair wins in %d\n", n, won);
  CHECK(won >= (3 * n) / 4);   /* the instances are what they are built to be */
}

/* The rank map of a plan with idle devices (rank_map.c): one rank per slot, and only the
 * nodes that run one. Stage 0 on GPU 1 of node a, stage 1 on GPU 0 of node b: world 2,
 * node a first with its GPU 1, then node b with its GPU 0; a plan on node a alone lists
 * node a only. */
TEST(rank_map_of_a_plan_with_idle_devices_has_one_rank_per_slot)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *part, *one_node;
  hp_rank_map m;
  hp_diag d = {0};
  p->job.idle_devices = 1;
  part = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                    " { \"layers\": [0, 1], \"devices\": [[1]] }, { \"layers\": [2, 3], \"devices\": [[2]] } ] }");
  one_node = fx_plan(p, "{ \"pp\": 1, \"tp\": 2, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                        " { \"layers\": [0, 3], \"devices\": [[0, 1]] } ] }");
  CHECK(hp_rank_map_build(p, part, HP_ORDER_TP_DP_PP, &m, &d) == HP_OK);
  CHECK_INT(m.n_ranks, 2);
  CHECK_INT(m.n_nodes, 2);
  CHECK(m.contiguous && m.ascending);
  CHECK_INT(m.node[0], 0);
  CHECK_INT(m.gpu[0], 1);
  CHECK_INT(m.node[1], 1);
  CHECK_INT(m.gpu[1], 0);
  CHECK_INT(m.count[0], 1);
  CHECK_INT(m.count[1], 1);
  hp_rank_map_release(&m);
  CHECK(hp_rank_map_build(p, one_node, HP_ORDER_TP_DP_PP, &m, &d) == HP_OK);
  CHECK_INT(m.n_ranks, 2);
  CHECK_INT(m.n_nodes, 1);
  CHECK_INT(m.count[0], 2);
  CHECK_INT(m.gpu[0], 0);
  CHECK_INT(m.gpu[1], 1);
  hp_rank_map_release(&m);
  hp_plan_destroy(&part);
  hp_plan_destroy(&one_node);
  hp_problem_destroy(&p);
}

/* One type, five nodes of one GPU, gbs 8, 4 layers: no plan uses all five (pp 5 > 4
 * layers, dp 5 does not divide 8), as after a lost node of a one-type cluster. The
 * divisibility level leaves one node idle (4 devices: 5 is odd, the shortest prefix
 * leaving an even count is one node; leaving a multiple of 4 is the same prefix), so dp
 * finds enum's optimum; without idle devices, no plan. */
TEST(a_one_type_cluster_that_lost_a_node_has_plans_with_idle_devices)
{
  static const char cl[] =
    "{ \"device_types\": { \"gpu\": { \"mem_gib\": 16, \"tflops\": 100, \"efficiency\": 0.5 } },"
    "  \"nodes\": [ { \"name\": \"n0\", \"type\": \"gpu\", \"gpus\": 1, \"intra_gbps\": 800 },"
    "    { \"name\": \"n1\", \"type\": \"gpu\", \"gpus\": 1, \"intra_gbps\": 800 },"
    "    { \"name\": \"n2\", \"type\": \"gpu\", \"gpus\": 1, \"intra_gbps\": 800 },"
    "    { \"name\": \"n3\", \"type\": \"gpu\", \"gpus\": 1, \"intra_gbps\": 800 },"
    "    { \"name\": \"n4\", \"type\": \"gpu\", \"gpus\": 1, \"intra_gbps\": 800 } ],"
    "  \"inter_gbps\": 80 }";
  hp_problem *p = fx_problem(fx_tiny_model, cl, NULL, 8, HP_1F1B);
  hp_idle_config *ic = NULL;
  unsigned char keep[5];
  hp_result e, dp;
  int n;
  CHECK(solve(p, "dp", &dp) == HP_OK);
  CHECK(!dp.plan);
  hp_result_release(&dp);
  p->job.idle_devices = 1;
  CHECK_INT(hp__idle_kept(p, 1, keep), 4);
  CHECK_INT(keep[0], 0);                    /* ties: the first node in the file goes idle */
  n = hp__configs_idle(p, &ic);
  CHECK(n > 0);
  for (int i = 0; i < n; i++) CHECK_INT(ic[i].drop, 1);
  free(ic);
  CHECK(solve(p, "enum", &e) == HP_OK);
  CHECK(solve(p, "dp", &dp) == HP_OK);
  CHECK(e.plan && dp.plan);
  CHECK_NEAR(dp.objective, e.objective, 1e-12);
  CHECK_INT(dp.eval.n_used, 4);
  hp_result_release(&e);
  hp_result_release(&dp);
  hp_problem_destroy(&p);
}
