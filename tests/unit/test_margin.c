/* test_margin.c -- the memory margin: applied once when the problem binds (usable
 * capacity = memory x (1 - margin)), so that the evaluator and the solvers see it alike. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

#define GIB 1073741824.0

/* The tiny cluster with a margin in the file. */
static char *cluster_with_margin(double margin)
{
  static char text[1024];
  snprintf(text, sizeof text, "%.*s, \"mem_margin\": %.17g }",
           (int)(strrchr(fx_tiny_cluster, '}') - fx_tiny_cluster), fx_tiny_cluster, margin);
  return text;
}

static const char plan_json[] =
  "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 1], \"devices\": [[0], [2]] },"
  "  { \"layers\": [2, 3], \"recompute\": true, \"devices\": [[1], [3]] } ],"
  "  \"sharding\": [\"dp\", \"zdp\", \"dp\", \"dp\"] }";

TEST(margin_scales_capacity_not_memory)
{
  hp_problem *p0 = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_problem *p1 = fx_problem(fx_tiny_model, cluster_with_margin(0.66), NULL, 8, HP_1F1B);
  hp_plan *a = fx_plan(p0, plan_json), *b = fx_plan(p1, plan_json);
  hp_eval e0 = {0}, e1 = {0};
  hp_diag d = {0};
  double worst = 0;
  CHECK(hp_evaluate(p0, a, &e0, &d) == HP_OK);
  CHECK(hp_evaluate(p1, b, &e1, &d) == HP_OK);
  CHECK_NEAR(p1->cluster->types[0].mem_total, GIB, 0);
  CHECK_NEAR(p1->cluster->types[0].mem, 0.34 * GIB, 1e-12);
  CHECK_NEAR(e0.iteration_time, e1.iteration_time, 0);
  for (int dv = 0; dv < 4; dv++) {
    CHECK_NEAR(e1.mem[dv], e0.mem[dv], 0);              /* what a device holds is unchanged */
    CHECK_NEAR(e1.cap[dv], 0.34 * GIB, 1e-12);          /* what it may hold is not */
    if (e0.mem[dv] > worst) worst = e0.mem[dv];
  }
  CHECK(e0.feasible);
  /* device 1 (stage 1, 0.349 GiB) is over 0.34 GiB; device 0 (stage 0, 0.321 GiB) fits */
  CHECK(worst > 0.34 * GIB);
  CHECK(!e1.feasible);
  CHECK_INT(e1.oom_device, 1);
  CHECK_NEAR(e1.oom_bytes, e0.mem[1] - 0.34 * GIB, 1e-9);
  hp_eval_release(&e0);
  hp_eval_release(&e1);
  hp_plan_destroy(&a);
  hp_plan_destroy(&b);
  hp_problem_destroy(&p0);
  hp_problem_destroy(&p1);
}

/* The exhaustive solver under a margin: its optimum keeps every device below
 * (1 - margin) of its memory, and is no faster than without the margin. */
TEST(margin_binds_the_solvers)
{
  hp_problem *p0 = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 64, HP_1F1B);
  /* 0.68: 0.32 GiB usable, 0.07 GiB of it beside the fast devices' 0.25 GiB reserve */
  hp_problem *p1 = fx_problem(fx_tiny_model, cluster_with_margin(0.68), NULL, 64, HP_1F1B);
  const hp_solver *names[2] = { hp_solver_find("enum"), hp_solver_find("dp") };
  for (int i = 0; i < 2; i++) {
    hp_result r0, r1;
    hp_limits lim;
    hp_diag d = {0};
    hp_eval e = {0};
    hp_limits_init(&lim);
    CHECK(hp_solver_run(names[i], p0, NULL, &lim, &r0, &d) == HP_OK);
    CHECK(hp_solver_run(names[i], p1, NULL, &lim, &r1, &d) == HP_OK);
    CHECK(r0.plan && r1.plan);
    CHECK(r1.objective >= r0.objective);
    /* scored without the margin, the margin's plan uses at most 32 % of every device */
    CHECK(hp_evaluate(p0, r1.plan, &e, &d) == HP_OK);
    for (int dv = 0; dv < 4; dv++) CHECK(e.mem[dv] <= 0.32 * GIB);
    hp_eval_release(&e);
    /* and the unconstrained optimum (enum's) needs more than 32 % somewhere: the margin
     * binds here and costs time */
    CHECK(hp_evaluate(p0, r0.plan, &e, &d) == HP_OK);
    {
      double worst = 0;
      for (int dv = 0; dv < 4; dv++) if (e.mem[dv] > worst) worst = e.mem[dv];
      if (i == 0) CHECK(worst > 0.32 * GIB && r1.objective > r0.objective);
    }
    hp_eval_release(&e);
    hp_result_release(&r0);
    hp_result_release(&r1);
  }
  hp_problem_destroy(&p0);
  hp_problem_destroy(&p1);
}

TEST(margin_errors_name_the_key)
{
  CHECK_CONTAINS(fx_cluster_error(cluster_with_margin(1)),
                 "c.json: mem_margin: 1: expected the fraction of each device's memory to "
                 "keep free, in [0, 1)");
  CHECK_CONTAINS(fx_cluster_error(cluster_with_margin(-0.1)), "mem_margin");
  {   /* a margin that leaves less than the 0.25 GiB reserve of "fast" */
    hp_diag d = {0};
    hp_model *m = NULL;
    hp_cluster *c = NULL;
    hp_problem *p = NULL;
    hp_job job = { .gbs = 8, .schedule = HP_1F1B };
    CHECK(hp_model_parse(fx_tiny_model, "m.json", &m, &d) == HP_OK);
    CHECK(hp_cluster_parse(cluster_with_margin(0.8), "c.json", &c, &d) == HP_OK);
    CHECK(hp_problem_create(&p, m, c, NULL, job, &d) == HP_INVAL);
    CHECK_CONTAINS(d.msg, "device type 'fast': its reserve of 0.250 GiB leaves nothing of "
                   "1.000 GiB less the 80 % memory margin");
  }
}
