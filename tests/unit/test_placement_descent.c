/* test_placement_descent.c -- the placement descent (solvers/placement_descent.c) on tiny
 * random instances of three or four GPU kinds (ri_problem_kinds: mixed node sizes, links
 * or a device bandwidth matrix, every 1.2 field), each configuration of each:
 *   - every plan it offers is a plan of that configuration that fits, and its figure is
 *     the evaluator's;
 *   - never below the configuration's brute-force optimum (ri_brute_config) over the
 *     same space;
 *   - never worse than its start: given the plan of the fixed placement (Megatron order)
 *     split by the layer DP, as the result's own plan (which an offer frees: the descent
 *     must read it first, and under ASan a read after fails), it returns that plan or a
 *     better one;
 *   - it finds a plan wherever the start is one.
 * How often it reaches the brute-force optimum is printed, not asserted: it is a local
 * search. Tolerance: relative 1e-9 (sums of the same terms in another order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"
#include "random_instance.h"
#include "../../solvers/search.h"

#define PD_TOL 1e-9
#define PD_SEEDS 200
#define PD_FIRST_SEED 3001UL

/* The fixed placement (Megatron order) of c split by the layer DP: its time (INFINITY
 * where no split fits) and the plan into *out (NULL then). */
static double fixed_start(const hp_problem *p, const hp_config *c, hp_plan **out)
{
  hp_diag d = {0};
  hp_dp_opts o;
  hp_eval e = {0};
  int found = 0;
  double obj, t = INFINITY;
  *out = NULL;
  if (hp__plan_fixed(p, c, 0, out, &d) != HP_OK) return NAN;
  hp__dp_opts_init(&o);
  o.modes = hp_job_modes(&p->job);
  if (hp__dp_split(p, *out, &o, &found, &obj, NULL, &d) == HP_OK && found &&
      hp__plan_follows_job(p, *out) && hp_evaluate(p, *out, &e, &d) == HP_OK && e.feasible)
    t = e.iteration_time;
  hp_eval_release(&e);
  if (isinf(t)) hp_plan_destroy(out);
  return t;
}

TEST(placement_descent_offers_plans_never_below_brute_force_nor_above_its_start_on_200_instances)
{
  int bad = 0, configs = 0, found = 0, optimal = 0, better = 0;
  long evals = 0;
  for (unsigned long seed = PD_FIRST_SEED; seed < PD_FIRST_SEED + (unsigned long)harness_count(PD_SEEDS);
       seed++) {
    char what[768];
    hp_config *cfg = NULL;
    hp_problem *p = ri_problem_kinds(seed, what, sizeof what);
    int n;
    CHECK(p != NULL);
    ri_cert_scope(p);
    n = hp__configs(p, &cfg);
    for (int i = 0; i < n; i++) {
      const hp_config *c = &cfg[i];
      hp_plan *start = NULL;
      hp_limits lim;
      hp_result r;
      hp_diag d = {0};
      double bf = ri_brute_config(p, c), st = fixed_start(p, c, &start);
      hp_err err;
      hp_limits_init(&lim);
      hp_result_init(&r);
      configs++;
      /* the start offered first, then given as the result's own plan: an offer of a better
       * one frees it, so the descent must read it before (under ASan a read after fails) */
      if (start) err = hp__score_offer(p, &lim, start, &r, &d);
      else err = HP_OK;
      if (!err) err = hp__descend_config(p, c, r.plan, &lim, INFINITY, &r, &evals, &d);
      if (err != HP_OK) {
        fprintf(stderr, "  FAILED %s\n    pp %d tp %d dp %d mbs %d: %s\n", what, c->pp, c->tp,
                c->dp, c->mbs, d.msg);
        bad++;
      }
      if (r.plan) {
        hp_eval e = {0};
        const hp_plan *pl = r.plan;
        int same = pl->pp == c->pp && pl->tp == c->tp && pl->dp == c->dp && pl->mbs == c->mbs;
        int ok = same && hp_plan_validate(p, pl, NULL) == HP_OK &&
                 hp_evaluate(p, pl, &e, NULL) == HP_OK && e.feasible &&
                 fabs(e.iteration_time - r.objective) <= PD_TOL * r.objective;
        found++;
        optimal += fabs(r.objective - bf) <= PD_TOL * bf;
        better += isfinite(st) && r.objective < st * (1 - PD_TOL);
        if (!ok || r.objective < bf * (1 - PD_TOL) || r.objective > st * (1 + PD_TOL)) {
          fprintf(stderr, "  VIOLATION %s\n    pp %d tp %d dp %d mbs %d: descent %.12g (a plan "
                  "of it that fits, as scored: %d), brute force %.12g, start %.12g\n", what,
                  c->pp, c->tp, c->dp, c->mbs, r.objective, ok, bf, st);
          bad++;
        }
        hp_eval_release(&e);
      } else if (isfinite(st)) {
        fprintf(stderr, "  VIOLATION %s\n    pp %d tp %d dp %d mbs %d: no plan from a start of "
                "%.12g\n", what, c->pp, c->tp, c->dp, c->mbs, st);
        bad++;
      }
      hp_result_release(&r);
      hp_plan_destroy(&start);
    }
    free(cfg);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d configurations, a plan on %d (%ld layer DPs): at the brute-force optimum "
          "on %d, below the fixed placement's on %d\n", configs, found, evals, optimal, better);
  CHECK(found > 0);
  CHECK(better > 0);                   /* it did move: the start alone passes the rest */
  CHECK_INT(bad, 0);
}
