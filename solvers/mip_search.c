/* mip_search.c -- one item of the certificate's phase 4 (search_driver.c): the pattern
 * program (formulation/mip_pattern.c) of one configuration, solved by the glpk or cbc
 * backend. Its solution decodes into a plan of its own (hp_mip_decode_pattern_plan), and
 * its figures check the pattern DP's bound: the program's optimum cannot be below the
 * DP's bound (the DP relaxes the program's sharding and counting); if it is, or a plan
 * evaluates below the bound, or the program has no point where the DP found a sequence
 * that fits, the two disagree: the configuration keeps the lesser figure and is not
 * pruned (the driver says so in the result's note); so does a backend that fails inside
 * (a warning names the configuration). Which configurations, in which order,
 * with what time and cutoff are the driver's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

/* The backends' own tolerance: an optimum this far below the DP's bound is a disagreement. */
#define AGREE_TOL 1e-6

hp_err hp__pattern_mip(const hp_problem *p, const hp_config *c, hp_mip_backend backend,
                       const hp_limits *lim, double seconds, double cutoff, double deadline,
                       hp_result *out, hp_cfg_bound *b, int *disagree, hp_diag *d)
{
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_classes cl;
  hp_mip *m = NULL;
  hp_mip_pmap map;
  hp_mip_solution sol = { HP_SOL_NONE, INFINITY, -INFINITY, NULL };
  hp_err err;
  double dpb = b->bound;
  /* the program shards with dp and zdp, one slice: where the job allows more (zero1,
   * zero2, slices that shrink the gather buffer), its optimum relaxes a part of the job's
   * space only, and says nothing against the DP's bound over all of it */
  int narrow = (hp_job_modes(&p->job) & ~(1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP)) != 0 ||
               hp_job_max_slices(&p->job) > 1;
  memset(&map, 0, sizeof map);
  memset(&pt, 0, sizeof pt);
  if ((err = hp_classes_build(p, HP_PATTERN_SEARCH_CLASSES, &cl, d))) return err;
  if ((err = hp__plan_for(p, c, &pl, d)) || (err = hp_patterns_build(p, &cl, pl, &pt, d)) ||
      (err = hp_mip_build_pattern(p, &pt, &m, &map, d)))
    goto done;
  if ((err = backend(m, NULL, lim, seconds, isfinite(cutoff) ? cutoff / m->obj_scale : INFINITY,
                     &sol, d))) {
    if (err != HP_BACKEND) goto done;
    /* The backend failed inside (GLPK's primal simplex asserts "teta_lim >= 0.0" on some
     * 128-GPU programs): nothing of its run is taken. The DP's bound stands unchecked, so
     * the configuration stays open as on a disagreement, and the search goes on. */
    hp_warn(d, "%s; the pattern DP's bound of pp %d tp %d dp %d mbs %d stays unchecked and "
            "that configuration open", d ? d->msg : "the MIP backend failed", c->pp, c->tp,
            c->dp, c->mbs);
    *disagree = 1;
    err = HP_OK;
    goto done;
  }
  out->work++;
  if (sol.x) {
    double obj = sol.obj * m->obj_scale;
    int found = 0;
    if (sol.status == HP_SOL_OPTIMAL && !narrow && obj < dpb * (1 - AGREE_TOL) - 1e-12)
      *disagree = 1;
    if (!(err = hp__mip_decode_pattern_plan(p, &pt, &map, sol.x, deadline - hp__now(), lim->stop,
                                            pl, &found, d)) &&
        found) {
      hp_eval e = {0};
      if (!(err = hp_evaluate(p, pl, &e, d)) && e.feasible) {
        if (e.iteration_time < dpb * (1 - HP_CERT_TOL)) *disagree = 1;   /* a plan below a bound */
        err = hp_result_offer(out, lim, pl, &e, d);
      }
      hp_eval_release(&e);
    }
    /* a plan below the DP's bound refutes it; the program's optimum is a bound in its
     * place only where the program relaxes the job's whole space */
    if (*disagree && narrow) b->bound = -INFINITY;
    else if (*disagree && obj < b->bound) b->bound = obj;
  } else if (sol.status == HP_SOL_INFEASIBLE && isfinite(dpb) && !narrow) {
    *disagree = 1;               /* the DP has a sequence that fits; the MIP says none */
  }
done:
  free(sol.x);
  hp_mip_destroy(&m);
  hp_mip_pmap_release(&map);
  hp_patterns_release(&pt);
  hp_classes_release(&cl);
  hp_plan_destroy(&pl);
  return err;
}
