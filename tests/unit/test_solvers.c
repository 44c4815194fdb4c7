/* test_solvers.c -- every solver behind the one interface: on tiny instances its plan is
 * valid, its reported time is the evaluator's, it never beats the brute-force optimum
 * (enum, and ri_brute_all on random 1.2 instances), and a plan reported as fitting fits;
 * sa is reproducible per seed. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "random_instance.h"

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

/* sa, random and the baselines on random tiny instances with every 1.2 field (a job's
 * sharding list, uniform sharding, slices, idle devices, ...): each returns a valid plan
 * of the job or no plan (or refuses the instance's shape with HP_LIMIT), never better
 * than the brute force of the whole space, and says in its result that it searched a
 * part of it. */
TEST(solvers_heuristics_and_baselines_respect_the_jobs_1_2_rules_on_40_random_instances)
{
  static const char *names[] = { "sa", "random", "megatron", "megatron-params", "amp", "hethub",
                                 "dhondt", "osdp", "pipette" };
  int n = harness_count(40), plans = 0, none = 0, refused = 0;
  for (unsigned long seed = 1001; seed < 1001 + (unsigned long)n; seed++) {
    char what[512];
    hp_problem *p = ri_problem(seed, what, sizeof what);
    double bf = ri_brute_all(p, NULL);
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
      hp_limits lim;
      hp_result r;
      hp_diag d = {0};
      hp_err err;
      hp_limits_init(&lim);
      lim.max_work = 200;
      lim.seed = seed;
      err = hp_solver_run(hp_solver_find(names[k]), p, NULL, &lim, &r, &d);
      if (err == HP_LIMIT) { refused++; continue; }     /* pipette, osdp: shapes they need */
      if (err) fprintf(stderr, "  %s\n  %s: %s\n", what, names[k], d.msg);
      CHECK_INT(err, HP_OK);
      CHECK_INT(r.space, HP_SPACE_RESTRICTED);
      CHECK(r.space_note[0] != '\0');
      if (r.plan) {
        CHECK(hp_plan_validate(p, r.plan, &d) == HP_OK);
        if (r.fits && r.objective < bf * (1 - 1e-9))
          fprintf(stderr, "  %s\n  %s %.17g beats the brute force %.17g\n", what, names[k],
                  r.objective, bf);
        CHECK(!r.fits || r.objective >= bf * (1 - 1e-9));
        CHECK(!r.fits || isfinite(bf));
        plans++;
      } else {
        none++;
      }
      hp_result_release(&r);
    }
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d plans, %d without a plan, %d refused\n", plans, none, refused);
  CHECK(plans > 0);
}
