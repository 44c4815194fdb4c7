/* bound_probe.c -- the certificate's bounds of one configuration for the tests
 * (bound_probe.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound_probe.h"

double bp_dp_bound(const hp_problem *p, const hp_classes *cl, const hp_config *c, int exact,
                   int frontier, double seconds, int *partial)
{
  return bp_dp_bound_counted(p, cl, c, exact, frontier, seconds, partial, NULL);
}

/* What dp_bound's `off` leaves out: the couples, the slow replica (pattern_dp.c). */
enum { BP_NO_COUPLES = 1, BP_NO_SLOW = 2 };

static double dp_bound(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                       int exact, int count, int frontier, double seconds, int *partial,
                       int *counted, int *sides, int unchained, int off);

double bp_dp_bound_counted(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                           int exact, int frontier, double seconds, int *partial, int *counted)
{
  return dp_bound(p, cl, c, exact, HP_PAT_COUNT_AUTO, frontier, seconds, partial, counted, NULL, 0, 0);
}

double bp_dp_bound_count(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                         int count, int *sides)
{
  return dp_bound(p, cl, c, -1, count, 0, INFINITY, NULL, NULL, sides, 0, 0);
}

double bp_dp_bound_unchained(const hp_problem *p, const hp_classes *cl, const hp_config *c)
{
  return dp_bound(p, cl, c, -1, HP_PAT_COUNT_AUTO, 0, INFINITY, NULL, NULL, NULL, 1, 0);
}

double bp_dp_bound_no_couples(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                              int *counted)
{
  return dp_bound(p, cl, c, -1, HP_PAT_COUNT_AUTO, 0, INFINITY, NULL, counted, NULL, 0, BP_NO_COUPLES);
}

double bp_dp_bound_count_no_slow(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                                 int count, int *sides)
{
  return dp_bound(p, cl, c, -1, count, 0, INFINITY, NULL, NULL, sides, 0, BP_NO_SLOW);
}

static double dp_bound(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                       int exact, int count, int frontier, double seconds, int *partial,
                       int *counted, int *sides, int unchained, int off)
{
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_pat_opts o;
  hp_pat_result r;
  hp_diag d = {0};
  double v = NAN;
  if (partial) *partial = 0;
  if (counted) *counted = 0;
  if (sides) *sides = 0;
  memset(&pt, 0, sizeof pt);
  if (hp__plan_for(p, c, &pl, &d) || hp_patterns_build(p, cl, pl, &pt, &d)) {
    fprintf(stderr, "  pattern DP: %s\n", d.msg);
    hp_plan_destroy(&pl);
    return NAN;
  }
  for (int k = 0; k < pt.n_kind && unchained; k++) pt.kind[k].bdp_chain = 0;
  hp__pat_opts_init(&o);
  o.exact = exact;
  o.count = count;
  o.frontier = frontier;
  o.no_couples = (off & BP_NO_COUPLES) != 0;
  o.no_slow = (off & BP_NO_SLOW) != 0;
  if (isfinite(seconds)) o.deadline = hp__now() + seconds;
  if (hp__pattern_bound(p, &pt, &o, &r, &d) == HP_OK && r.done) {
    v = r.bound;
    if (partial) *partial = r.partial;
    if (counted) *counted = r.exact;
    if (sides) *sides = r.exact ? -1 : r.sides;
  }
  hp__pat_result_release(&r);
  hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  return v;
}

int bp_certify(const char *name, const hp_problem *p, double seconds, const char *what,
               hp_result *r, double *plan_time)
{
  const hp_solver *s = hp_solver_find(name);
  hp_limits lim;
  hp_diag d = {0};
  *plan_time = INFINITY;
  if (!s) return 0;
  hp_limits_init(&lim);
  lim.time_limit = seconds;
  if (hp_solver_run(s, p, NULL, &lim, r, &d) != HP_OK) {
    fprintf(stderr, "  %s: %s failed: %s\n", what, name, d.msg);
    return -1;
  }
  if (r->plan) {
    hp_eval e = {0};
    if (hp_evaluate(p, r->plan, &e, &d) == HP_OK && e.feasible) *plan_time = e.iteration_time;
    hp_eval_release(&e);
  }
  return 1;
}

static double mip_optimum(hp_mip_backend be, const hp_problem *p, const hp_classes *cl,
                          const hp_config *c, int in_child, double *decoded)
{
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_mip *m = NULL;
  hp_mip_pmap map;
  hp_mip_solution sol = { HP_SOL_NONE, INFINITY, -INFINITY, NULL };
  hp_limits lim;
  hp_diag d = {0};
  double v = NAN;
  *decoded = INFINITY;
  /* a stop flag, never set, as the command line gives: the solve runs in a child process
   * (mip_child.c), where an abort inside the backend (solver_cbc.c) is the solve's error */
  static volatile sig_atomic_t never;
  hp_limits_init(&lim);
  lim.gap = 1e-9;
  if (in_child) lim.stop = &never;
  memset(&pt, 0, sizeof pt);
  memset(&map, 0, sizeof map);
  if (hp__plan_for(p, c, &pl, &d) || hp_patterns_build(p, cl, pl, &pt, &d) ||
      hp_mip_build_pattern(p, &pt, &m, &map, &d) || be(m, NULL, &lim, 30, INFINITY, &sol, &d)) {
    fprintf(stderr, "  pattern MIP: %s\n", d.msg);
  } else if (sol.status == HP_SOL_OPTIMAL) {
    v = sol.obj * m->obj_scale;
  } else if (sol.status == HP_SOL_INFEASIBLE) {
    v = INFINITY;
  }
  if (sol.x) {
    int found = 0;
    if (hp__mip_decode_pattern_plan(p, &pt, &map, sol.x, INFINITY, NULL, pl, &found, &d) == HP_OK &&
        found) {
      hp_eval e = {0};
      if (hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible) *decoded = e.iteration_time;
      hp_eval_release(&e);
    }
  }
  free(sol.x);
  hp_mip_destroy(&m);
  hp_mip_pmap_release(&map);
  hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  return v;
}

double bp_mip_optimum(hp_mip_backend be, const hp_problem *p, const hp_classes *cl,
                      const hp_config *c, double *decoded)
{
  return mip_optimum(be, p, cl, c, 0, decoded);
}

double bp_mip_optimum_in_child(hp_mip_backend be, const hp_problem *p, const hp_classes *cl,
                               const hp_config *c, double *decoded)
{
  return mip_optimum(be, p, cl, c, 1, decoded);
}
