/* seed.c -- the items of the search driver's phase 1 (search_driver.c): plans from the fast
 * heuristics, the starting points of `dp` and the incumbents of the certificate. An item
 * is the exact layer DP of one configuration under the two fixed placements (Megatron
 * order and its stage mirror), or one baseline of the literature (HetHub, SageMaker's
 * D'Hondt, Megatron's rules, Pipette, AMP, OSDP), whose plans are often better than those
 * two placements on mixed clusters; a baseline's plan that does not fit is not kept; or,
 * under a job with idle_devices, the layer DP of a configuration of the devices left when
 * nodes of the slow types are idle (hp__configs_idle), under the same two placements of the
 * kept devices (the pattern phase does not see them). The order, the claims and the time
 * share are the driver's. */
#include <math.h>
#include <stdlib.h>

#include "search.h"

typedef struct sweep {
  const hp_problem *prob;
  const hp_limits *lim;
  hp_result *out;
  double *fixed_obj;
  double deadline;
} sweep;

/* Splits `pl` with the DP and offers the plan. With ignore_memory, the fastest split
 * regardless of memory is offered only if it does not fit: a rejected candidate for
 * --show-rejected. Only splits that could enter the ranking are sought. */
static hp_err split_and_offer(const hp_problem *prob, hp_plan *pl, const hp_limits *lim,
                              double deadline, int ignore_memory, hp_result *out, double *obj,
                              hp_diag *d)
{
  int k = lim->top > 0 ? lim->top : 1, n_kept = ignore_memory ? out->n_rejected : out->n_top;
  const hp_ranked *kept = ignore_memory ? out->rejected : out->top;
  hp_dp_opts o;
  hp_eval e = {0};
  int found = 0;
  hp_err err;
  hp__dp_opts_init(&o);
  o.ignore_memory = ignore_memory;
  o.deadline = deadline;
  o.stop = lim->stop;
  o.max_frontier = HP_DP_HEURISTIC_FRONTIER;
  o.cutoff = n_kept >= k ? kept[n_kept - 1].time : INFINITY;
  *obj = INFINITY;
  err = hp__dp_split(prob, pl, &o, &found, obj, &out->work, d);
  if (!err && !found) *obj = INFINITY;
  if (!err && found && hp__plan_follows_job(prob, pl) && !(err = hp_evaluate(prob, pl, &e, d)) &&
      (!ignore_memory || !e.feasible))
    err = hp_result_offer(out, lim, pl, &e, d);
  hp_eval_release(&e);
  return err;
}

static hp_err split_fixed(void *ctx, int i, int variant, hp_plan *pl, hp_diag *d)
{
  sweep *sw = ctx;
  double obj, rej;
  hp_err err = split_and_offer(sw->prob, pl, sw->lim, sw->deadline, 0, sw->out, &obj, d);
  if (sw->fixed_obj && (variant == 0 || obj < sw->fixed_obj[i])) sw->fixed_obj[i] = obj;
  if (!err && sw->lim->keep_rejected) err = split_and_offer(sw->prob, pl, sw->lim, sw->deadline, 1, sw->out, &rej, d);
  return err;
}

static const char *const baselines[] = { "hethub", "dhondt", "megatron", "megatron-params",
                                         "pipette", "amp", "osdp" };
#define N_BASELINES ((int)(sizeof baselines / sizeof *baselines))

int hp__seed_items(const hp_problem *p, int n)
{
  hp_idle_config *ic = NULL;
  int ni = p->job.idle_devices ? hp__configs_idle(p, &ic) : 0;
  free(ic);
  return n + N_BASELINES + (ni > 0 ? ni : 0);
}

/* Idle configuration `k` (hp__configs_idle) under both fixed placements of its kept
 * devices. */
static hp_err idle_item(const hp_problem *p, const hp_limits *lim, double deadline, hp_result *out,
                        int k, hp_diag *d)
{
  hp_idle_config *ic = NULL;
  int ni = hp__configs_idle(p, &ic);
  hp_err err = HP_OK;
  if (ni < 0) return hp_fail(d, HP_NOMEM, "out of memory");
  for (int variant = 0; k < ni && variant < (ic[k].c.pp > 1 ? 2 : 1) && !err; variant++) {
    hp_plan *pl = NULL;
    double obj;
    if (!(err = hp__plan_fixed_idle(p, &ic[k], variant, &pl, d)))
      err = split_and_offer(p, pl, lim, deadline, 0, out, &obj, d);
    hp_plan_destroy(&pl);
  }
  free(ic);
  return err;
}

hp_err hp__seed_item(const hp_problem *p, const hp_config *cfg, int n, const hp_limits *lim,
                     double deadline, hp_result *out, double *fixed_obj, int item, hp_diag *d)
{
  hp_err err = HP_OK;
  if (item < n) {                       /* configuration `item` under both fixed placements */
    sweep sw = { p, lim, out, fixed_obj ? fixed_obj + item : NULL, deadline };
    return hp__each_fixed_placement(p, cfg + item, 1, lim, deadline, out, split_fixed, &sw, d);
  }
  if (item >= n + N_BASELINES) return idle_item(p, lim, deadline, out, item - n - N_BASELINES, d);
  const hp_solver *s = hp_solver_find(baselines[item - n]);
  hp_limits l = *lim;
  hp_result r;
  double left = deadline - hp__now();
  if (!s) return HP_OK;
  l.top = 1;
  l.keep_rejected = 0;
  l.progress = NULL;
  l.max_work = 0;
  l.team = NULL;
  l.time_limit = isfinite(left) ? left : 0;
  hp_result_init(&r);
  if (s->solve(p, NULL, &l, &r, d) == HP_OK && r.plan) err = hp__score_offer(p, lim, r.plan, out, d);
  hp_result_release(&r);
  return err;
}
