/* pattern_pass.c -- the pattern DP over many configurations: each gets its bound, with
 * the best plan found so far as the cutoff (a configuration that cannot beat it is
 * bounded at the cutoff and costs little), and each sequence found below the cutoff is
 * decoded into a real plan and offered, which lowers the cutoff for the next. */
#include <math.h>
#include <stdlib.h>

#include "search.h"

/* The incumbent a configuration's DP must beat: this process's best, or the team's. */
static double cutoff_now(const hp_team *team, const hp_result *out)
{
  double mine = out->plan ? out->objective : INFINITY;
  if (team) {
    double all = team->best(team->ctx, mine);
    if (all < mine) return all;
  }
  return mine;
}

hp_err hp__pattern_pass(const hp_problem *p, const hp_classes *cl, const hp_config *cfg,
                        const int *order, int n, const hp_limits *lim, double deadline,
                        hp_result *out, hp_cfg_bound *b, hp_step_fn step, void *step_ctx,
                        hp_sync_fn sync, hp_diag *d)
{
  const hp_team *team = sync && lim->team && lim->team->size > 1 ? lim->team : NULL;
  hp_err err = HP_OK;
  /* two rounds: first each configuration gets a few times its share of the time left,
   * so that none starves the rest; then those cut short share what is left. A team
   * claims the configurations one at a time, in the same order, and merges its figures
   * (sync) after each round. */
  for (int round = 0; round < 2 && (!err || team); round++) {
  for (int q0 = 0; q0 < n && !err; q0++) {
    int q = team ? (int)team->claim(team->ctx, HP_CTR_PATTERN + round) : q0;
    if (q >= n) break;
    int i = order ? order[q] : q, found = 0;
    hp_plan *pl = NULL;
    hp_patterns pt;
    hp_pat_opts o;
    hp_pat_result r;
    if (b[i].done) continue;
    if (hp__should_stop(lim, deadline, out)) break;
    int todo = 0;
    for (int k = q; k < n; k++) todo += !b[order ? order[k] : k].done;
    /* a team keeps the single process's share per configuration, though it has more
     * time in all: what round 0 cuts short, round 1 finishes under a better cutoff, so a
     * larger share would only do more work under a worse one (measured: 20 % more) */
    if ((err = hp__plan_for(p, &cfg[i], &pl, d))) break;
    if ((err = hp_patterns_build(p, cl, pl, &pt, d))) { hp_plan_destroy(&pl); break; }
    hp__pat_opts_init(&o);
    o.cutoff = cutoff_now(team, out);
    o.deadline = deadline;
    if (round == 0 && isfinite(deadline))
      o.deadline = fmin(deadline, hp__now() + fmax(1.0, 4 * (deadline - hp__now()) / todo));
    o.stop = lim->stop;
    if (!(err = hp__pattern_bound(p, &pt, &o, &r, d))) {
      b[i].work += r.work;
      if (r.done) {
        b[i].done = 1;
        b[i].bound = r.bound;
        b[i].exact = r.exact;
      }
      if (r.found && !(err = hp__pattern_plan(p, &pt, &r, o.deadline, pl, &found, d)) && found)
        err = hp__score_offer(p, lim, pl, out, d);
      hp__pat_result_release(&r);
    }
    hp_patterns_release(&pt);
    hp_plan_destroy(&pl);
    if (team && !err && out->plan) team->best(team->ctx, out->objective);
    if (step) step(step_ctx, q + 1);
  }
  /* every member reaches this after each round, stopped or not, errors included */
  if (sync) {
    hp_err e2 = sync(step_ctx, d);
    if (!err) err = e2;
  }
  }
  return err;
}
