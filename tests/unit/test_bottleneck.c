/* test_bottleneck.c -- the iteration time split into slowest stage, fill and drain,
 * hand-offs and sync, and the bottleneck named, against hand computation. */
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
  CHECK_CONTAINS(text, "stage 0 of replica 0: 547.000 ms per micro-batch x gas 1 = 0.547000 s, "
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
  CHECK_NEAR(b.term[0] + b.term[1] + b.term[2] + b.term[3], e.iteration_time, REL);
  hp_bottleneck_describe(&b, &e, text, sizeof text);
  CHECK_CONTAINS(text, "the gradient sync of stage 0: 3.000000 s, 84.6 % of the iteration");
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* The tiny heterogeneous plan of test_evaluate.c: replica 1's stage 1 (0.4 s with
 * recompute) x gas 4 = 1.6 s; fill and drain = stage 0 of replica 1, 0.2516 s; hand-off
 * 4.8e-5 s; sync 2.42e-3 s. */
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
  CHECK_INT(b.kind, HP_BN_STAGE);
  CHECK_INT(b.stage, 1);
  CHECK_INT(b.replica, 1);
  CHECK_NEAR(b.term[HP_BN_STAGE], 1.6, REL);
  CHECK_NEAR(b.term[HP_BN_FILL], 0.2516, REL);
  CHECK_NEAR(b.term[HP_BN_HANDOFF], 4.8e-5, REL);
  CHECK_NEAR(b.term[HP_BN_SYNC], 2.42e-3, REL);
  CHECK_NEAR(b.stage_recompute, 0.1, REL);              /* 0.3 s of compute, + 1/3 */
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}
