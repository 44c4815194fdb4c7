/* solver_dp.c -- `dp`, the default: for every configuration (pp, tp, dp, mbs) of the
 * space, the exact layer DP of layer_dp.c (stage boundaries, per-stage recompute and
 * sharding under the memory limit) under the two fixed placements (Megatron order and
 * its stage mirror); the baselines' plans; then the pattern DP of every configuration
 * (pattern_dp.c), whose best pattern sequences decode into placements that mix device
 * kinds stage by stage, each split by the layer DP again. Every plan is scored by the
 * evaluator; the best fitting one wins. Its pattern bounds are not claimed: a search
 * stopped by its time limit, or a cutoff, leaves them partial (glpk and cbc claim them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

/* The default limit: the pattern pass is the part that grows with the cluster. */
#define DP_DEFAULT_SECONDS 60.0

typedef struct order_key { double v; int i; } order_key;

static int by_value(const void *a, const void *b)
{
  const order_key *x = a, *y = b;
  if (x->v != y->v) return x->v < y->v ? -1 : 1;
  return x->i - y->i;
}

/* Configurations in order of their fixed-placement DP figure, the most promising first. */
int *hp__promise_order(const double *fixed_obj, int n)
{
  order_key *k = hp__calloc((size_t)(n > 0 ? n : 1), sizeof *k);
  int *order = hp__calloc((size_t)(n > 0 ? n : 1), sizeof *order);
  if (!k || !order) { free(k); free(order); return NULL; }
  for (int i = 0; i < n; i++) k[i] = (order_key){ fixed_obj[i], i };
  qsort(k, (size_t)n, sizeof *k, by_value);
  for (int i = 0; i < n; i++) order[i] = k[i].i;
  free(k);
  return order;
}

/* Progress for the observer: the phase, items done of total, the incumbent. */
typedef struct dp_progress {
  const hp_limits *lim;
  const hp_result *out;
  const char *phase;
  int total;
  double t0;
} dp_progress;

static void report(void *ctx, int done)
{
  const dp_progress *g = ctx;
  hp_progress p;
  if (!g->lim->progress) return;
  p.solver = "DP";
  p.phase = g->phase;
  p.done = done;
  p.total = g->total;
  p.elapsed = hp__now() - g->t0;
  p.incumbent = g->out->plan ? g->out->objective : INFINITY;
  p.bound = NAN;                       /* dp claims no bound */
  g->lim->progress(g->lim->progress_ctx, &p);
}

static hp_err dp_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                       hp_result *out, hp_diag *d)
{
  hp_config *cfg = NULL;
  int n = hp__configs(prob, &cfg), *order = NULL;
  double deadline = hp__now() + (lim->time_limit > 0 ? lim->time_limit : DP_DEFAULT_SECONDS);
  double *fixed = n > 0 ? hp__calloc((size_t)n, sizeof *fixed) : NULL;
  hp_cfg_bound *b = n > 0 ? hp__calloc((size_t)n, sizeof *b) : NULL;
  hp_classes cl;
  dp_progress g = { lim, out, "", 0, hp__now() };
  hp_err err;
  (void)start;
  memset(&cl, 0, sizeof cl);
  out->space = HP_SPACE_RESTRICTED;
  snprintf(out->space_note, sizeof out->space_note, "placement: Megatron order, its stage "
           "mirror, the baselines' and the pattern DP's; sharding per stage");
  if (n < 0 || (n > 0 && (!fixed || !b))) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  g.phase = "fixed placements and baselines";
  g.total = hp__seed_items(n);
  if ((err = hp__seed_heuristics(prob, cfg, n, lim, deadline, NULL, out, fixed, report, &g, d)))
    goto done;
  if (!(order = hp__promise_order(fixed, n))) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  if ((err = hp_classes_build(prob, HP_PATTERN_MAX_CLASSES, &cl, d))) goto done;
  g.phase = "pattern placements";
  g.total = n;
  err = hp__pattern_pass(prob, &cl, cfg, order, n, lim, deadline, out, b, report, &g, NULL, d);
  g.phase = "done";
  if (!err) report(&g, n);
done:
  hp_classes_release(&cl);
  free(cfg);
  free(fixed);
  free(order);
  free(b);
  if (!err && !out->plan) out->status = HP_SOL_NONE;
  return err;
}

const hp_solver hp_solver_dp = {
  .name = "dp",
  .desc = "exact layer DP per configuration under fixed placements, the baselines' plans, and "
          "pattern-DP placements that mix device kinds per stage",
  .flags = 0,
  .solve = dp_solve,
};
