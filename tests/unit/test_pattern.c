/* test_pattern.c -- the pattern DP's bound against brute force: on random tiny
 * heterogeneous instances, for every configuration, the bound (exact and Lagrangian)
 * never exceeds the least time of any plan of that configuration found by enumerating
 * every placement, partition, recompute and sharding choice; and on AMP's set-up it
 * proves the optimum. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "random_instance.h"

/* The pattern bound of configuration c; exact: 1 exact count, 0 prices only. */
static double pattern_bound(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                            int exact, double *plan_time)
{
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_pat_opts o;
  hp_pat_result r;
  hp_diag d = {0};
  double b = NAN;
  int found = 0;
  *plan_time = INFINITY;
  if (hp__plan_for(p, c, &pl, &d) || hp_patterns_build(p, cl, pl, &pt, &d)) return NAN;
  hp__pat_opts_init(&o);
  o.exact = exact;
  if (hp__pattern_bound(p, &pt, &o, &r, &d) == HP_OK && r.done) {
    b = r.bound;
    if (r.found && hp__pattern_plan(p, &pt, &r, INFINITY, NULL, pl, &found, &d) == HP_OK && found) {
      hp_eval e = {0};
      if (hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible) *plan_time = e.iteration_time;
      hp_eval_release(&e);
    }
  }
  hp__pat_result_release(&r);
  hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  return b;
}

TEST(pattern_bound_never_exceeds_brute_force_on_70_random_instances)
{
  int configs = 0, tight = 0, instances = 0;
  for (unsigned long seed = 1; seed <= (unsigned long)harness_count(70); seed++) {
    char what[256];
    hp_problem *p = ri_problem(seed, what, sizeof what);
    ri_cert_scope(p);                 /* the bound's space; the brute force's too */
    hp_classes cl;
    hp_config *cfg = NULL;
    hp_diag d = {0};
    int n = hp__configs(p, &cfg);
    CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
    for (int i = 0; i < n; i++) {
      double bf = ri_brute_config(p, &cfg[i]);
      for (int exact = 1; exact >= 0; exact--) {
        double pt_time, b = pattern_bound(p, &cl, &cfg[i], exact, &pt_time);
        if (!(b <= bf * (1 + 1e-9) + 1e-12) || (isinf(b) && !isinf(bf)) || isnan(b) ||
            !(pt_time >= b * (1 - 1e-9)))
          fprintf(stderr, "  %s\n  pp %d tp %d dp %d mbs %d (%s): bound %.9g brute %.9g decoded %.9g\n",
                  what, cfg[i].pp, cfg[i].tp, cfg[i].dp, cfg[i].mbs, exact ? "exact" : "prices",
                  b, bf, pt_time);
        CHECK(!isnan(b));
        CHECK(b <= bf * (1 + 1e-9) + 1e-12);          /* a bound */
        CHECK(!(isinf(b) && isfinite(bf)));            /* "nothing fits" only when true */
        CHECK(pt_time >= b * (1 - 1e-9));              /* its plan is a plan */
        if (exact) { configs++; tight += isfinite(bf) && b >= bf * (1 - 1e-9); }
      }
    }
    instances++;
    free(cfg);
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d instances, %d configurations, exact bound tight on %d\n", instances, configs, tight);
  CHECK(instances == harness_count(70));
}
