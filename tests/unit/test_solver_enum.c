/* test_solver_enum.c -- the exhaustive solver: its optimum is checked against plans
 * worked out by hand, infeasibility is proved, and its figure is the evaluator's. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

static hp_err run(const hp_problem *p, hp_result *r)
{
  hp_limits lim;
  hp_diag d = {0};
  hp_limits_init(&lim);
  return hp_solver_run(hp_solver_find("enum"), p, NULL, &lim, r, &d);
}

TEST(enum_optimum_on_two_identical_gpus_is_found_by_hand)
{
  /* Two layers of 1e12 FLOP on two 1 TFLOPS GPUs of one node (1e9 B/s, 8 Gbps), gbs 4.
   * No memory pressure, no parameters: DP needs no sync, so dp = 2 halves the work:
   * pp 1, dp 2, any mbs: each replica runs 2 samples of 2e12 FLOP = 4 s. Pipelining
   * (pp 2, mbs 1, gas 4) gives 3 * 1 + 2 + hand-offs > 4 s; tp 2 divides F but adds no
   * cost with C = 0: 4 samples * 2e12 / 2e12 = 4 s too. The optimum is 4 s. */
  static const char m[] =
    "{ \"layers\": [ { \"name\": \"x\", \"repeat\": 2, \"params\": 0, \"act_bytes\": 0,"
    "  \"out_bytes\": 1e6, \"flops\": 1e12 } ] }";
  static const char c[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1 } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8 } ] }";
  hp_problem *p = fx_problem(m, c, NULL, 4, HP_1F1B);
  hp_result r;
  CHECK(run(p, &r) == HP_OK);
  CHECK_INT(r.status, HP_SOL_OPTIMAL);
  CHECK_NEAR(r.objective, 4.0, 1e-12);
  CHECK_NEAR(r.bound, 4.0, 1e-12);
  CHECK(r.fits);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

TEST(enum_reports_an_empty_space_as_infeasible)
{
  /* One layer, gbs 1 on 4 devices: pp <= L = 1, so tp * dp = 4 with tp | 2 (the node
   * size), hence dp >= 2, and dp must divide gbs = 1: no plan exists. */
  static const char m[] =
    "{ \"layers\": [ { \"name\": \"x\", \"params\": 0, \"act_bytes\": 0, \"out_bytes\": 0,"
    "  \"flops\": 1e12 } ] }";
  hp_problem *p = fx_problem(m, fx_tiny_cluster, NULL, 1, HP_1F1B);
  hp_result r;
  CHECK(run(p, &r) == HP_OK);
  CHECK_INT(r.status, HP_SOL_INFEASIBLE);
  CHECK(r.plan == NULL);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

TEST(enum_proves_infeasible_when_nothing_fits)
{
  /* 1e9 parameters need 16 GB of states even sharded over 4: 4 GB > 1 GiB per device */
  static const char m[] =
    "{ \"layers\": [ { \"name\": \"x\", \"repeat\": 4, \"params\": 2.5e8, \"act_bytes\": 0,"
    "  \"out_bytes\": 1, \"flops\": 1e9 } ] }";
  hp_problem *p = fx_problem(m, fx_tiny_cluster, NULL, 4, HP_1F1B);
  hp_result r;
  CHECK(run(p, &r) == HP_OK);
  CHECK_INT(r.status, HP_SOL_INFEASIBLE);
  CHECK(r.plan == NULL);
  CHECK(r.work > 0);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

TEST(enum_optimum_is_no_worse_than_hand_made_plans_and_is_the_evaluators_figure)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *hand = fx_plan(p, "{ \"pp\": 2, \"tp\": 2, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                             "{ \"layers\": [0, 2], \"devices\": [[0, 1]] },"
                             "{ \"layers\": [3, 3], \"devices\": [[2, 3]] } ] }");
  hp_eval e = {0}, h = {0};
  hp_diag d = {0};
  hp_result r;
  CHECK(run(p, &r) == HP_OK);
  CHECK_INT(r.status, HP_SOL_OPTIMAL);
  CHECK(hp_evaluate(p, r.plan, &e, &d) == HP_OK);
  CHECK_NEAR(r.objective, e.iteration_time, 0);
  CHECK(hp_evaluate(p, hand, &h, &d) == HP_OK);
  CHECK(r.objective <= h.iteration_time + 1e-15);
  /* that hand plan is in fact the optimum: computed in test_evaluate (0.770504 s) */
  CHECK_NEAR(r.objective, 0.770504, 1e-12);
  hp_eval_release(&e);
  hp_eval_release(&h);
  hp_result_release(&r);
  hp_plan_destroy(&hand);
  hp_problem_destroy(&p);
}

TEST(enum_refuses_large_instances_with_a_clear_message)
{
  static const char m[] =
    "{ \"layers\": [ { \"name\": \"x\", \"repeat\": 24, \"params\": 1, \"act_bytes\": 0,"
    "  \"out_bytes\": 1, \"flops\": 1e9 } ] }";
  hp_problem *p = fx_problem(m, fx_tiny_cluster, NULL, 64, HP_1F1B);
  hp_limits lim;
  hp_result r;
  hp_diag d = {0};
  hp_limits_init(&lim);
  CHECK(hp_solver_run(hp_solver_find("enum"), p, NULL, &lim, &r, &d) == HP_LIMIT);
  CHECK_CONTAINS(d.msg, "exhaustive enumeration is for tiny instances");
  hp_problem_destroy(&p);
}
