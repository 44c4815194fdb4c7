/* test_solvers.c -- every solver behind the one interface: on tiny instances its plan is
 * valid, its reported time is the evaluator's, it never beats the brute-force optimum
 * (enum), and a plan reported as fitting fits; sa is reproducible per seed. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

static const char model6[] =
  "{ \"input_bytes\": 1e5, \"layers\": ["
  "{ \"name\": \"a\", \"params\": 3e6, \"act_bytes\": 4e6, \"out_bytes\": 1e6, \"flops\": 2e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"b\", \"repeat\": 3, \"params\": 5e6, \"act_bytes\": 8e6, \"out_bytes\": 1e6, \"flops\": 4e12, \"tp_comm_bytes\": 2e6 },"
  "{ \"name\": \"c\", \"params\": 1e6, \"act_bytes\": 2e6, \"out_bytes\": 1e6, \"flops\": 1e12 },"
  "{ \"name\": \"d\", \"params\": 8e6, \"act_bytes\": 6e6, \"out_bytes\": 4, \"flops\": 3e12, \"tp_comm_bytes\": 1e6 } ] }";

static void check_all_solvers(const char *model, long gbs, double max_work_enum)
{
  hp_problem *p = fx_problem(model, fx_tiny_cluster, NULL, gbs, HP_1F1B);
  hp_limits lim;
  hp_result opt;
  hp_diag d = {0};
  hp_limits_init(&lim);
  lim.max_work = (long)max_work_enum;
  CHECK(hp_solver_run(hp_solver_find("enum"), p, NULL, &lim, &opt, &d) == HP_OK);
  CHECK_INT(opt.status, HP_SOL_OPTIMAL);
  hp_limits_init(&lim);
  for (const hp_solver *const *s = hp_solver_all(); *s; s++) {
    hp_result r;
    hp_eval e = {0};
    if (!strcmp((*s)->name, "enum")) continue;
    if (hp_solver_run(*s, p, NULL, &lim, &r, &d) != HP_OK) {
      fprintf(stderr, "  solver %s: %s\n", (*s)->name, d.msg);
      CHECK(0);
    }
    if (!r.plan) { fprintf(stderr, "  solver %s found no plan\n", (*s)->name); CHECK(0); }
    CHECK(hp_plan_validate(p, r.plan, &d) == HP_OK);
    CHECK(hp_evaluate(p, r.plan, &e, &d) == HP_OK);
    CHECK_NEAR(r.objective, e.iteration_time, 0);            /* the evaluator's figure */
    CHECK_INT(r.fits, e.feasible);
    if (r.fits && r.objective < opt.objective - 1e-12) {
      fprintf(stderr, "  solver %s beats the optimum: %.17g < %.17g\n", (*s)->name,
              r.objective, opt.objective);
      CHECK(0);
    }
    if (strcmp((*s)->name, "amp") != 0) CHECK(r.fits);      /* only AMP ignores memory */
    CHECK(r.bound <= opt.objective + 1e-12);
    hp_eval_release(&e);
    hp_result_release(&r);
  }
  hp_result_release(&opt);
  hp_problem_destroy(&p);
}

TEST(solvers_return_valid_evaluator_scored_plans_never_better_than_brute_force)
{
  check_all_solvers(fx_tiny_model, 8, 2e6);
}

TEST(solvers_on_a_six_layer_chain_never_beat_brute_force)
{
  check_all_solvers(model6, 4, 2e7);
}

TEST(solvers_sa_is_reproducible_and_no_worse_than_its_dp_start)
{
  hp_problem *p = fx_problem(model6, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_limits lim;
  hp_result a, b, c;
  hp_diag d = {0};
  hp_limits_init(&lim);
  lim.seed = 42;
  lim.max_work = 500;
  CHECK(hp_solver_run(hp_solver_find("sa"), p, NULL, &lim, &a, &d) == HP_OK);
  CHECK(hp_solver_run(hp_solver_find("sa"), p, NULL, &lim, &b, &d) == HP_OK);
  CHECK(a.plan && b.plan);
  CHECK_NEAR(a.objective, b.objective, 0);
  CHECK_INT(a.plan->pp, b.plan->pp);
  for (int i = 0; i < a.plan->pp * a.plan->dp * a.plan->tp; i++) CHECK_INT(a.plan->dev[i], b.plan->dev[i]);
  CHECK(hp_solver_run(hp_solver_find("dp"), p, NULL, &lim, &c, &d) == HP_OK);
  CHECK(a.objective <= c.objective + 1e-15);
  hp_result_release(&a);
  hp_result_release(&b);
  hp_result_release(&c);
  hp_problem_destroy(&p);
}

TEST(solvers_keep_a_ranking_best_first)
{
  hp_problem *p = fx_problem(model6, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_limits lim;
  hp_result r;
  hp_diag d = {0};
  hp_limits_init(&lim);
  lim.top = 5;
  CHECK(hp_solver_run(hp_solver_find("dp"), p, NULL, &lim, &r, &d) == HP_OK);
  CHECK_INT(r.n_top, 5);
  CHECK_NEAR(r.top[0].time, r.objective, 0);
  for (int i = 1; i < r.n_top; i++) CHECK(r.top[i].time >= r.top[i - 1].time);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}
