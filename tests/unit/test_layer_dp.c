/* test_layer_dp.c -- the layer DP against brute force: for a fixed configuration and
 * placement, every partition of the layers into stages and every per-stage choice of
 * recompute and sharding (none, all, the shortest suffix that fits) is scored by the
 * evaluator; the DP's plan must reach the minimum exactly, with memory binding. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "../../solvers/search.h"

/* Eight unequal layers: sizes cycle so that no even split is right. */
static const char model8[] =
  "{ \"input_bytes\": 1e5, \"layers\": ["
  "{ \"name\": \"l0\", \"params\": 2e6, \"act_bytes\": 3e6, \"out_bytes\": 1e6, \"flops\": 1e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l1\", \"params\": 4e6, \"act_bytes\": 6e6, \"out_bytes\": 2e6, \"flops\": 2e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l2\", \"params\": 6e6, \"act_bytes\": 9e6, \"out_bytes\": 1e6, \"flops\": 3e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l3\", \"params\": 2e6, \"act_bytes\": 12e6, \"out_bytes\": 3e6, \"flops\": 4e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l4\", \"params\": 4e6, \"act_bytes\": 3e6, \"out_bytes\": 1e6, \"flops\": 5e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l5\", \"params\": 6e6, \"act_bytes\": 6e6, \"out_bytes\": 2e6, \"flops\": 1e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l6\", \"params\": 2e6, \"act_bytes\": 9e6, \"out_bytes\": 1e6, \"flops\": 2e12, \"splittable\": false },"
  "{ \"name\": \"l7\", \"params\": 8e6, \"act_bytes\": 12e6, \"out_bytes\": 4, \"flops\": 3e12, \"tp_comm_bytes\": 1e6 } ] }";

static char cluster_buf[1024];

/* The tiny two-kind cluster with a given capacity per GPU (GiB). */
static const char *cluster(double mem_gib)
{
  snprintf(cluster_buf, sizeof cluster_buf,
           "{ \"device_types\": {"
           "  \"fast\": { \"mem_gib\": %g, \"tflops\": 100, \"efficiency\": 0.5 },"
           "  \"slow\": { \"mem_gib\": %g, \"tflops\": 40, \"efficiency\": 0.5 } },"
           "  \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
           "    { \"name\": \"b\", \"type\": \"slow\", \"gpus\": 2, \"intra_gbps\": 400, \"intra_lat_us\": 4 } ],"
           "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }", mem_gib, mem_gib);
  return cluster_buf;
}

/* Whether stage s of the plan fits in memory as it stands (every device of a stage
 * holds the same bytes; the first device stands for it). */
static int stage_fits(const hp_problem *p, const hp_plan *pl, int s)
{
  hp_eval e = {0};
  int dv = pl->dev[(size_t)s * pl->dp * pl->tp], fits;
  fits = hp_evaluate(p, pl, &e, NULL) == HP_OK && e.mem[dv] <= e.cap[dv];
  hp_eval_release(&e);
  return fits;
}

/* Stage s's sharding: 0 none, 1 every layer, k >= 2 its layers from first + k - 1 on. */
static void shard(hp_plan *pl, int s, int choice)
{
  for (int l = pl->first[s]; l < pl->first[s + 1]; l++)
    pl->mode[l] = choice == 1 || (choice >= 2 && l >= pl->first[s] + choice - 1) ? HP_SHARD_ZDP : HP_SHARD_DP;
}

/* Whether a suffix choice is the DP's: replicated overflows, and it is the shortest
 * suffix that fits (other choices of the stage are always the DP's). */
static int dp_choice(const hp_problem *p, hp_plan *pl, int s, int choice)
{
  int n = pl->first[s + 1] - pl->first[s], ok = 1;
  if (choice < 2) return 1;
  shard(pl, s, 0);
  if (stage_fits(p, pl, s)) ok = 0;
  for (int k = n; ok && k > choice; k--) {      /* a shorter suffix fits: not the shortest */
    shard(pl, s, k);
    if (stage_fits(p, pl, s)) ok = 0;
  }
  shard(pl, s, choice);
  return ok && stage_fits(p, pl, s);
}

/* Minimum evaluator time over the DP's space: all partitions, per-stage recompute, and
 * per-stage sharding of no layer, every layer, or the shortest suffix that makes a stage
 * fit when replicated does not. */
static double brute(const hp_problem *p, hp_plan *pl, long *fitting)
{
  int L = pl->n_layers, pp = pl->pp;
  double best = INFINITY;
  for (int s = 0; s < pp; s++) pl->first[s] = s;
  pl->first[pp] = L;
  *fitting = 0;
  do {
    for (int rm = 0; rm < (1 << pp); rm++) {
      int choice[8] = {0}, n_choice[8];
      for (int s = 0; s < pp; s++) {
        pl->recompute[s] = (rm >> s) & 1;
        n_choice[s] = pl->dp > 1 ? 1 + (pl->first[s + 1] - pl->first[s]) : 1;
      }
      for (;;) {
        int allowed = 1;
        for (int s = 0; s < pp; s++) shard(pl, s, choice[s]);
        for (int s = 0; s < pp && allowed; s++) allowed = dp_choice(p, pl, s, choice[s]);
        for (int s = 0; s < pp; s++) shard(pl, s, choice[s]);
        if (allowed) {
          hp_eval e = {0};
          if (hp_evaluate(p, pl, &e, NULL) == HP_OK && e.feasible) {
            (*fitting)++;
            if (e.iteration_time < best) best = e.iteration_time;
          }
          hp_eval_release(&e);
        }
        int s = 0;
        while (s < pp && ++choice[s] >= n_choice[s]) choice[s++] = 0;
        if (s == pp) break;
      }
    }
  } while (hp__next_cuts(pl->first, pl->pp, L));
  return best;
}

/* Runs the DP and brute force on one configuration and placement (devices in slot
 * order); returns through the pointers the evaluator's time of the DP plan, the DP's
 * own objective and the brute-force minimum. */
static void compare(double mem_gib, int pp, int tp, int dp, int mbs, long gbs, const int *dev,
                    double *dp_time, double *dp_obj, double *brute_min, long *fitting)
{
  hp_problem *p = fx_problem(model8, cluster(mem_gib), NULL, gbs, HP_1F1B);
  hp_plan *pl = NULL, *bf = NULL;
  hp_diag d = {0};
  hp_dp_opts o;
  int found = 0;
  hp_plan_create(&pl, pp, tp, dp, 8, &d);
  pl->mbs = mbs;
  hp_plan_set_gas(p, pl, &d);
  for (int i = 0; i < pp * tp * dp; i++) pl->dev[i] = dev[i];
  hp_plan_copy(&bf, pl, &d);
  hp__dp_opts_init(&o);
  *dp_time = *dp_obj = INFINITY;
  if (hp__dp_split(p, pl, &o, &found, dp_obj, NULL, &d) == HP_OK && found) {
    hp_eval e = {0};
    if (hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible) *dp_time = e.iteration_time;
    hp_eval_release(&e);
  }
  *brute_min = brute(p, bf, fitting);
  hp_plan_destroy(&pl);
  hp_plan_destroy(&bf);
  hp_problem_destroy(&p);
}

TEST(layer_dp_equals_brute_force_on_a_heterogeneous_pipeline)
{
  static const int dev[] = { 0, 1, 2, 3 };   /* stages 0, 1 fast; 2, 3 slow */
  double t, obj, bf;
  long fit;
  compare(16, 4, 1, 1, 1, 8, dev, &t, &obj, &bf, &fit);
  CHECK(isfinite(bf));
  CHECK_NEAR(t, bf, 1e-12);
  CHECK_NEAR(obj, t, 1e-12);      /* dp = 1: the DP's figure is the evaluator's */
}

TEST(layer_dp_equals_brute_force_when_memory_binds)
{
  static const int dev[] = { 0, 1, 2, 3 };
  double t, obj, bf, t_free, obj_free, bf_free;
  long fit, fit_free;
  /* 0.2 GiB per GPU: 8 of the 544 (split, recompute) choices fit (measured with 16 GiB:
   * all 544), and the best of them recomputes */
  compare(0.2, 4, 1, 1, 2, 8, dev, &t, &obj, &bf, &fit);
  compare(16, 4, 1, 1, 2, 8, dev, &t_free, &obj_free, &bf_free, &fit_free);
  CHECK(isfinite(bf));
  CHECK(fit < fit_free);          /* memory really binds */
  CHECK(bf > bf_free);
  CHECK_NEAR(t, bf, 1e-12);
  CHECK_NEAR(obj, t, 1e-12);
}

TEST(layer_dp_equals_brute_force_with_replicas_sharding_and_tp)
{
  /* pp 2, dp 2: stage 0 on the fast node, stage 1 on the slow one; the replicas of a
   * stage are alike, so the DP is exact. Memory binds. */
  static const int dev2[] = { 0, 1, 2, 3 };
  static const int devtp[] = { 2, 3, 0, 1 };   /* pp 2, tp 2: slow node first */
  double t, obj, bf;
  long fit;
  compare(0.25, 2, 1, 2, 1, 8, dev2, &t, &obj, &bf, &fit);
  CHECK(fit > 0 && fit < 108);   /* 108 choices in all: memory binds */
  CHECK(isfinite(bf));
  CHECK_NEAR(t, bf, 1e-12);
  CHECK_NEAR(obj, t, 1e-12);
  compare(0.2, 2, 2, 1, 2, 8, devtp, &t, &obj, &bf, &fit);
  CHECK(isfinite(bf));
  CHECK(fit > 0 && fit < 28);
  CHECK_NEAR(t, bf, 1e-12);
}

TEST(layer_dp_is_an_upper_bound_when_replicas_differ)
{
  /* pp 2, dp 2 with each stage's replicas on different kinds: the DP charges every
   * stage its slowest replica, an upper bound on the evaluator's max over replicas. */
  static const int dev[] = { 0, 2, 1, 3 };
  double t, obj, bf;
  long fit;
  compare(16, 2, 1, 2, 1, 8, dev, &t, &obj, &bf, &fit);
  CHECK(isfinite(t));
  CHECK(obj >= t - 1e-12);
  CHECK(t >= bf - 1e-12);
}

TEST(layer_dp_reports_nothing_when_no_split_fits)
{
  static const int dev[] = { 0, 1, 2, 3 };
  double t, obj, bf;
  long fit;
  compare(0.01, 4, 1, 1, 1, 8, dev, &t, &obj, &bf, &fit);
  CHECK_INT(fit, 0);
  CHECK(!isfinite(t));
}
