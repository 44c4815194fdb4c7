/* test_bottleneck.c -- the iteration time split into slowest stage, fill and drain,
 * hand-offs, sync, steady-state hand-offs, ZeRO traffic, optimizer step and all-gather
 * (cost model 1.2), and the bottleneck named, against hand computation. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

#define REL 1e-12

/* The case: gas 1, an iteration of 0.55 s whose gradient sync takes 0.003 s.
 * One layer of 0.547e12 FLOPs on two devices of 1 TFLOP/s (efficiency 1) on one node:
 * 0.547 s. dp = 2, mbs = 1, gbs = 2: gas = 1. P = 1.5e6 parameters, 2-byte gradients:
 * the ring all-reduce moves 2 (1/2) 3e6 bytes over 8 Gbit/s = 1e9 B/s: 0.003 s. */
static const char one_layer[] =
  "{ \"layers\": [ { \"name\": \"x\", \"params\": 1.5e6, \"act_bytes\": 0, \"out_bytes\": 1,"
  "  \"flops\": 0.547e12 } ] }";
static const char two_gpus[] =
  "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1 } },"
  "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8 } ] }";

static double sum_terms(const hp_bottleneck *b)
{
  double t = 0;
  for (int k = 0; k < HP_BN_COUNT; k++) t += b->term[k];
  return t;
}

TEST(bottleneck_gas1_is_the_stage_not_a_tiny_sync)
{
  hp_problem *p = fx_problem(one_layer, two_gpus, NULL, 2, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "  { \"layers\": [0, 0], \"devices\": [[0], [1]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  hp_bottleneck b;
  char text[320];
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_INT(pl->gas, 1);
  CHECK_NEAR(e.sync_time, 0.003, REL);
  CHECK_NEAR(e.iteration_time, 0.55, REL);
  hp_bottleneck_find(pl, &e, &b);
  CHECK_INT(b.kind, HP_BN_STAGE);
  CHECK_INT(b.stage, 0);
  CHECK_NEAR(b.term[HP_BN_STAGE], 0.547, REL);
  CHECK_NEAR(b.term[HP_BN_SYNC], 0.003, REL);
  CHECK_NEAR(b.term[HP_BN_FILL], 0, REL);
  CHECK_NEAR(b.share, 0.547 / 0.55, REL);
  hp_bottleneck_describe(&b, &e, text, sizeof text);
  CHECK_CONTAINS(text, "stage 0 of replica 0: 547.000 ms of compute per micro-batch x gas 1 = 0.547000 s, "
                 "99.5 % of the iteration");
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* The terms add up to T, and the sync is named when it is the largest: the same layer
 * with 1000x the parameters syncs for 3 s. */
TEST(bottleneck_names_the_sync_when_it_dominates_and_terms_sum_to_t)
{
  hp_problem *p = fx_problem("{ \"layers\": [ { \"name\": \"x\", \"params\": 1.5e9, "
                             "\"act_bytes\": 0, \"out_bytes\": 1, \"flops\": 0.547e12 } ] }",
                             "{ \"device_types\": { \"g\": { \"mem_gib\": 100, \"tflops\": 1 } },"
                             "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2,"
                             "  \"intra_gbps\": 8 } ] }", NULL, 2, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "  { \"layers\": [0, 0], \"devices\": [[0], [1]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  hp_bottleneck b;
  char text[320];
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  hp_bottleneck_find(pl, &e, &b);
  CHECK_INT(b.kind, HP_BN_SYNC);
  CHECK_NEAR(b.term[HP_BN_SYNC], 3.0, REL);
  CHECK_NEAR(sum_terms(&b), e.iteration_time, REL);
  hp_bottleneck_describe(&b, &e, text, sizeof text);
  CHECK_CONTAINS(text, "the gradient sync of stage 0: 3.000000 s, 84.6 % of the iteration");
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* The tiny heterogeneous plan of test_evaluate.c, by hand under 1.2. Devices: 0, 1 fast
 * (50 TFLOP/s effective) on node a (800 Gbit/s = 1e11 B/s, 2 us), 2, 3 slow (20 TFLOP/s)
 * on node b (5e10 B/s, 4 us); between nodes 1e10 B/s, 10 us. gbs 8, dp 2, mbs 1: gas 4.
 * Replica groups {0, 2} and {1, 3} both cross a and b: R(a) = R(b) = 2, Bdp = 5e9 B/s,
 * latdp = 10 us on both stages.
 *   stage 0 (embed 1e12 FLOPs, block.0 4e12, zdp): compute 0.02 + 0.08 = 0.1 s (fast),
 *     0.05 + 0.2 = 0.25 s (slow); Z = 2 (1/2) 2 B 4e6 / 5e9 = 1.6e-3 s;
 *     Zr = (1/2) 2 B 4e6 / 5e9 + 10 us = 8.1e-4 s; t[0,1] = 0.25241 s.
 *   stage 1 (block.1 4e12, head 2e12, recompute, both checkpointable): (0.2 + 0.1) 4/3 =
 *     0.4 s on the slow replica; no Z, Zr.
 *   hand-off 0 of replica 1: lane 2 -> 3 inside node b: 2 1e6 / 5e10 + 2 4 us = 4.8e-5 s.
 *   periods of replica 1: c[0] = 0.25241 + 2.4e-5, c[1] = 0.4 + 2.4e-5 = 0.400024 (s* = 1).
 *   T[1] = 3 x 0.400024 + (0.25241 + 0.4) + 4.8e-5 = 1.85253 s (replica 0: 0.74247 s).
 *   red[1] = 2 (1/2) 2 B (4e6 + 2e6) / 5e9 + 2 x 10 us = 2.42e-3 s (red[0] = 4.2e-4 s);
 *   no zero1/zero2 layer: no all-gather; no hbm: no step. T = 1.85495 s.
 * Terms: stage 4 x 0.4 = 1.6; fill (compute of stage 0) 0.25; ZeRO 1.6e-3 + 8.1e-4 =
 * 2.41e-3 (stage 0, once); hand-offs 4.8e-5; steady-state 3 x 2.4e-5 = 7.2e-5;
 * sync 2.42e-3: 1.6 + 0.25 + 2.41e-3 + 4.8e-5 + 7.2e-5 + 2.42e-3 = 1.85495. */
TEST(bottleneck_terms_of_the_tiny_plan)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "  { \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                           "  { \"layers\": [2, 3], \"recompute\": true, \"devices\": [[1], [3]] } ],"
                           "  \"sharding\": [\"dp\", \"zdp\", \"dp\", \"dp\"] }");
  hp_eval e = {0};
  hp_diag d = {0};
  hp_bottleneck b;
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  hp_bottleneck_find(pl, &e, &b);
  CHECK_NEAR(e.iteration_time, 1.85495, REL);
  CHECK_INT(b.kind, HP_BN_STAGE);
  CHECK_INT(b.stage, 1);
  CHECK_INT(b.replica, 1);
  CHECK_NEAR(b.term[HP_BN_STAGE], 1.6, REL);
  CHECK_NEAR(b.term[HP_BN_FILL], 0.25, REL);
  CHECK_NEAR(b.term[HP_BN_ZERO], 2.41e-3, REL);
  CHECK_NEAR(b.term[HP_BN_HANDOFF], 4.8e-5, REL);
  CHECK_NEAR(b.term[HP_BN_PERIOD], 7.2e-5, REL);
  CHECK_NEAR(b.term[HP_BN_SYNC], 2.42e-3, REL);
  CHECK_NEAR(b.term[HP_BN_STEP], 0, REL);
  CHECK_NEAR(b.term[HP_BN_ALLGATHER], 0, REL);
  CHECK_NEAR(sum_terms(&b), e.iteration_time, REL);
  CHECK_NEAR(b.stage_recompute, 0.1, REL);              /* 0.3 s of compute, + 1/3 */
  CHECK_NEAR(b.stage_handoff, 2.4e-5, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* ZeRO-1 with a memory bandwidth: the one layer of the first test (0.547 s, 1.5e6
 * parameters, Bdp 1e9 B/s, no latency) reduce-scattered, stepped and all-gathered.
 * red = (1/2) 2 B 1.5e6 / 1e9 = 1.5e-3 s; gat = (1/2) 2 B 1.5e6 / 1e9 = 1.5e-3 s;
 * step: update_bytes 2 x 12 + 2 + 2 = 28 per parameter, half of them per device:
 * 28 x 0.75e6 / 1e9 B/s = 0.021 s. T = 0.547 + 1.5e-3 + 0.021 + 1.5e-3 = 0.571 s.
 * With hbm_gbs 0.01 the step is 2.1 s and is named. */
TEST(bottleneck_zero1_step_and_all_gather_add_up)
{
  static const char one_zero1[] = "{ \"pp\": 1, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                  "  { \"layers\": [0, 0], \"devices\": [[0], [1]] } ],"
                                  "  \"sharding\": [\"zero1\"] }";
  const char *hbm[2] = { "1", "0.01" };
  for (int i = 0; i < 2; i++) {
    char cluster[400];
    snprintf(cluster, sizeof cluster,
             "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1, \"hbm_gbs\": %s } },"
             "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8 } ] }",
             hbm[i]);
    hp_problem *p = fx_problem(one_layer, cluster, NULL, 2, HP_1F1B);
    hp_plan *pl = fx_plan(p, one_zero1);
    hp_eval e = {0};
    hp_diag d = {0};
    hp_bottleneck b;
    char text[320];
    CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
    hp_bottleneck_find(pl, &e, &b);
    CHECK_NEAR(b.term[HP_BN_SYNC], 1.5e-3, REL);
    CHECK_NEAR(b.term[HP_BN_ALLGATHER], 1.5e-3, REL);
    CHECK_NEAR(b.term[HP_BN_STEP], i ? 2.1 : 0.021, REL);
    CHECK_NEAR(e.iteration_time, i ? 2.65 : 0.571, REL);
    CHECK_NEAR(sum_terms(&b), e.iteration_time, REL);
    CHECK_INT(b.kind, i ? HP_BN_STEP : HP_BN_STAGE);
    hp_bottleneck_describe(&b, &e, text, sizeof text);
    if (i) CHECK_CONTAINS(text, "the optimizer step: 2.100000 s (device 0), 79.2 % of the iteration");
    hp_eval_release(&e);
    hp_plan_destroy(&pl);
    hp_problem_destroy(&p);
  }
}

/* Overlap: the 3 s sync of the second test overlapped with the backward pass,
 * b = 2/3 x 0.547 s = 0.364667 s (pp 1: cost-model.md 7.13): exposed 3 - b = 2.635333 s,
 * T = 0.547 + 2.635333 = 3.182333 s, named as the exposed part. */
TEST(bottleneck_overlap_names_the_exposed_reduction)
{
  hp_problem *p = fx_problem("{ \"layers\": [ { \"name\": \"x\", \"params\": 1.5e9, "
                             "\"act_bytes\": 0, \"out_bytes\": 1, \"flops\": 0.547e12 } ] }",
                             "{ \"device_types\": { \"g\": { \"mem_gib\": 100, \"tflops\": 1 } },"
                             "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2,"
                             "  \"intra_gbps\": 8 } ] }", NULL, 2, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "  { \"layers\": [0, 0], \"devices\": [[0], [1]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  hp_bottleneck b;
  char text[400];
  p->job.grad_sync = HP_SYNC_OVERLAP;
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  hp_bottleneck_find(pl, &e, &b);
  CHECK_NEAR(e.iteration_time, 0.547 + 3 - 0.547 * 2 / 3, REL);
  CHECK_INT(b.kind, HP_BN_SYNC);
  CHECK_INT(b.sync_exposed, 1);
  CHECK_NEAR(b.term[HP_BN_SYNC], 3 - 0.547 * 2 / 3, REL);
  CHECK_NEAR(sum_terms(&b), e.iteration_time, REL);
  hp_bottleneck_describe(&b, &e, text, sizeof text);
  CHECK_CONTAINS(text, "what overlap with the backward leaves exposed: 2.635333 s of its "
                 "3.000000 s, 82.8 % of the iteration");
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* Steady-state hand-offs: two 1 ms layers on two one-GPU nodes joined by 8 Gbit/s
 * (1e9 B/s, one lane: H = 1), 1e8 bytes out: e = 2 1e8 / 1e9 = 0.2 s. gbs 4, pp 2: gas 4.
 * c[0] = c[1] = 1e-3 + 0.1 (s* = 0, the first); T = 3 x 0.101 + 2e-3 + 0.2 = 0.505 s.
 * Terms: stage 4e-3, fill 1e-3, hand-offs 0.2, steady-state 3 x 0.1 = 0.3 (named). */
TEST(bottleneck_steady_state_hand_offs_are_named)
{
  hp_problem *p = fx_problem("{ \"layers\": [ { \"name\": \"x\", \"repeat\": 2, \"params\": 1e3, "
                             "\"act_bytes\": 0, \"out_bytes\": 1e8, \"flops\": 1e9 } ] }",
                             "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1 } },"
                             "  \"nodes\": [ { \"name\": \"a\", \"type\": \"g\", \"gpus\": 1, \"intra_gbps\": 8 },"
                             "               { \"name\": \"b\", \"type\": \"g\", \"gpus\": 1, \"intra_gbps\": 8 } ],"
                             "  \"inter_gbps\": 8 }", NULL, 4, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                           "  { \"layers\": [0, 0], \"devices\": [[0]] },"
                           "  { \"layers\": [1, 1], \"devices\": [[1]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  hp_bottleneck b;
  char text[400];
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  hp_bottleneck_find(pl, &e, &b);
  CHECK_NEAR(e.iteration_time, 0.505, REL);
  CHECK_INT(b.kind, HP_BN_PERIOD);
  CHECK_INT(b.stage, 0);
  CHECK_NEAR(b.term[HP_BN_STAGE], 4e-3, REL);
  CHECK_NEAR(b.term[HP_BN_FILL], 1e-3, REL);
  CHECK_NEAR(b.term[HP_BN_HANDOFF], 0.2, REL);
  CHECK_NEAR(b.term[HP_BN_PERIOD], 0.3, REL);
  CHECK_NEAR(sum_terms(&b), e.iteration_time, REL);
  hp_bottleneck_describe(&b, &e, text, sizeof text);
  CHECK_CONTAINS(text, "steady-state hand-offs of stage 0 of replica 0: 100.000 ms per micro-batch");
  CHECK_CONTAINS(text, "x (gas - 1) 3 = 0.300000 s, 59.4 % of the iteration");
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}
