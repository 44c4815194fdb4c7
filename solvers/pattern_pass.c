/* pattern_pass.c -- one item of the search driver's phase 2 (search_driver.c): a
 * configuration's pattern DP (pattern_dp.c) with the best plan found so far as its cutoff
 * (a configuration that cannot beat it is bounded at the cutoff and costs little), and the
 * sequence found below the cutoff decoded into a real plan (pattern_decode.c) and offered,
 * which lowers the cutoff for the next. The order, the rounds, the time shares and the
 * cutoff are the driver's.
 *
 * Two runs where spanning kinds split into own and shared nodes (hp_pattern.h) and there
 * are two classes at most: the first time a configuration is bounded, its DP runs first
 * over the unsplit kinds, fewer and so far faster, with its share: a looser bound that
 * often already reaches the cutoff (Llama-2 140B on 768 GPUs: every configuration but one
 * pruned so, 1.1 s against 30 s for pp 32 tp 4 dp 6); only where it does not, the split
 * kinds run with what is left. Both bounds hold: the larger is kept, and both sequences
 * are decoded (they place differently). An unsplit bound left without its split run
 * is marked partial, so that the driver's second round and tightening, which run the
 * split kinds alone, resume it. */
#include <math.h>
#include <stdlib.h>

#include "search.h"

/* One DP run over `pt` with cutoff and options o: its bound into *b (the larger kept), its
 * sequence decoded into pl and offered; *done: the run ended (its bound holds). */
static hp_err one_run(const hp_problem *p, const hp_patterns *pt, const hp_pat_opts *o,
                      const hp_limits *lim, double t_in, hp_plan *pl, hp_result *out,
                      hp_cfg_bound *b, int *done, double *bound, hp_diag *d)
{
  hp_pat_result r;
  int found = 0;
  double t0 = hp__now();
  hp_err err;
  *done = 0;
  *bound = -INFINITY;
  if ((err = hp__pattern_bound(p, pt, o, &r, d))) return err;
  b->work += r.work;
  /* its quick bound's time, and what came before it in this item (the patterns built) */
  if (r.quick_s > 0) b->quick_s = fmax(b->quick_s, r.quick_s + (t0 - t_in));
  if (r.done && (!b->done || r.bound >= b->bound)) {   /* a rerun keeps the better bound */
    b->bound = r.bound;
    b->exact = r.exact;
    b->merged = r.merged;
    b->partial = r.partial;
    b->sides = r.sides;
  }
  if (r.done) {
    b->done = 1;
    *done = 1;
    *bound = r.bound;
  }
  if (r.found && !(err = hp__pattern_plan(p, pt, &r, o->deadline, lim->stop, pl, &found, d)) && found)
    err = hp__score_offer(p, lim, pl, out, d);
  hp__pat_result_release(&r);
  return err;
}

hp_err hp__pattern_config(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                          const hp_limits *lim, double cutoff, double deadline, double share,
                          int frontier, int quick, const hp_team *team, hp_result *out,
                          hp_cfg_bound *b, hp_diag *d)
{
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_pat_opts o;
  int done = 0, built = 0;
  double bound, t_in = hp__now();
  hp_err err;
  /* a team's members agree on everything that steers them into the next shared DP
   * (team_agree.c): an error of one, a stop on one's own clock, the cutoff */
  if (!(err = hp__plan_for(p, c, &pl, d)) && !(err = hp_patterns_build(p, cl, pl, &pt, d))) built = 1;
  if ((err = hp__team_agree_err(team, err))) goto end;
  hp__pat_opts_init(&o);
  o.cutoff = cutoff;
  o.deadline = fmin(deadline, hp__now() + share);   /* the share counts from here */
  o.stop = lim->stop;
  o.frontier = frontier;
  o.quick = quick;
  o.team = team;
  /* with two classes at most, where the DP counts exactly in one run; with more, its price
   * search uses all the time it gets, and a share split between two searches leaves each
   * less (on the 4-kind 112-GPU bench row, where every run uses its share, single runs read
   * 1.319 and 1.253 with the unsplit search first, 1.491 without; but that row's bound
   * also moves between runs of one tree, 1.25 to 1.49, so this is a reading, not a proof) */
  if (pt.n_split > 0 && !b->done && pt.n_cls <= 2) {
    hp_patterns coarse;
    /* the whole share (with half of it the 140B row's bound came at 129-132 s, against
     * 117.6 s, one run each; that row's time also varies by about 10 s between runs):
     * an exact run cut short bounds nothing; one that ends below the cutoff with no time
     * left is marked partial (below), and the driver's second round resumes it with the
     * split kinds; one cut short leaves the configuration unbounded, and that round runs
     * it again (unsplit first, with more time) */
    int have = !(err = hp_patterns_build_split(p, cl, pl, 0, &coarse, d));
    if (!(err = hp__team_agree_err(team, err))) err = one_run(p, &coarse, &o, lim, t_in, pl, out, b, &done, &bound, d);
    if (have) hp_patterns_release(&coarse);
    err = hp__team_agree_err(team, err);   /* each decoded the same sequence, on its own clock */
    if (out->plan && out->objective < o.cutoff) o.cutoff = out->objective;
    o.cutoff = hp__team_min(team, o.cutoff);
    /* reaches the cutoff (the driver prunes it), or no time left for the split kinds */
    if (err || (done && bound >= o.cutoff * (1 - HP_CERT_TOL))) goto end;
    if (hp__team_any(team, hp__stop_now(o.stop, o.deadline))) {
      if (done) b->partial = 1;        /* the split kinds may tighten it: resume */
      goto end;
    }
  }
  {
    int unsplit_done = done;
    if (!(err = one_run(p, &pt, &o, lim, t_in, pl, out, b, &done, &bound, d)) && !done && unsplit_done)
      b->partial = 1;                  /* the split run was cut short: resume it */
  }
end:
  if (built) hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  return err;
}
