/* pattern_pass.c -- one item of the search driver's phase 2 (search_driver.c): a
 * configuration's pattern DP (pattern_dp.c) with the best plan found so far as its cutoff
 * (a configuration that cannot beat it is bounded at the cutoff and costs little), and the
 * sequence found below the cutoff decoded into a real plan (pattern_decode.c) and offered,
 * which lowers the cutoff for the next. The order, the rounds, the time shares and the
 * cutoff are the driver's. */
#include <math.h>
#include <stdlib.h>

#include "search.h"

hp_err hp__pattern_config(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                          const hp_limits *lim, double cutoff, double deadline, double share,
                          int frontier, hp_result *out, hp_cfg_bound *b, hp_diag *d)
{
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_pat_opts o;
  hp_pat_result r;
  int found = 0;
  hp_err err;
  if ((err = hp__plan_for(p, c, &pl, d))) return err;
  if ((err = hp_patterns_build(p, cl, pl, &pt, d))) { hp_plan_destroy(&pl); return err; }
  hp__pat_opts_init(&o);
  o.cutoff = cutoff;
  o.deadline = fmin(deadline, hp__now() + share);   /* the share counts from here */
  o.stop = lim->stop;
  o.frontier = frontier;
  if (!(err = hp__pattern_bound(p, &pt, &o, &r, d))) {
    b->work += r.work;
    if (r.done && (!b->done || r.bound >= b->bound)) {   /* a rerun keeps the better bound */
      b->bound = r.bound;
      b->exact = r.exact;
      b->merged = r.merged;
      b->partial = r.partial;
      b->sides = r.sides;
    }
    if (r.done) b->done = 1;
    if (r.found && !(err = hp__pattern_plan(p, &pt, &r, o.deadline, lim->stop, pl, &found, d)) && found)
      err = hp__score_offer(p, lim, pl, out, d);
    hp__pat_result_release(&r);
  }
  hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  return err;
}
