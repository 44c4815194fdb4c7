/* solver_dp.c -- `dp`: for every configuration (pp, tp, dp, mbs) of the space, the
 * Megatron-order placement (TP ranks on consecutive GPUs, then replicas, then stages)
 * and its stage-reversed mirror (which puts the last nodes' devices first), and for each
 * the exact layer DP of layer_dp.c (stage boundaries, per-stage recompute and sharding
 * under the memory limit). Every plan is scored by the evaluator; the best fitting one
 * wins. Searches the layer split exactly, the placement not at all: no global bound. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

/* Splits `pl` with the DP and offers the plan to the result. With ignore_memory, the
 * fastest split regardless of memory is offered only if it does not fit: a rejected
 * candidate for --show-rejected. Only splits that could enter the ranking are sought. */
static hp_err split_and_offer(const hp_problem *prob, hp_plan *pl, const hp_limits *lim,
                              int ignore_memory, hp_result *out, hp_diag *d)
{
  int k = lim->top > 0 ? lim->top : 1, n_kept = ignore_memory ? out->n_rejected : out->n_top;
  const hp_ranked *kept = ignore_memory ? out->rejected : out->top;
  hp_dp_opts o;
  hp_eval e = {0};
  int found = 0;
  double obj;
  hp_err err;
  hp__dp_opts_init(&o);
  o.ignore_memory = ignore_memory;
  o.cutoff = n_kept >= k ? kept[n_kept - 1].time : INFINITY;
  err = hp__dp_split(prob, pl, &o, &found, &obj, &out->work, d);
  if (!err && found && !(err = hp_evaluate(prob, pl, &e, d)) && (!ignore_memory || !e.feasible))
    err = hp_result_offer(out, lim, pl, &e, d);
  hp_eval_release(&e);
  return err;
}

typedef struct dp_run {
  const hp_problem *prob;
  const hp_limits *lim;
  hp_result *out;
} dp_run;

static hp_err split_fixed(void *ctx, int i, int variant, hp_plan *pl, hp_diag *d)
{
  dp_run *run = ctx;
  hp_err err = split_and_offer(run->prob, pl, run->lim, 0, run->out, d);
  (void)i;
  (void)variant;
  if (!err && run->lim->keep_rejected) err = split_and_offer(run->prob, pl, run->lim, 1, run->out, d);
  return err;
}

static hp_err dp_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                       hp_result *out, hp_diag *d)
{
  hp_config *cfg = NULL;
  int n = hp__configs(prob, &cfg);
  dp_run run = { prob, lim, out };
  hp_err err;
  (void)start;
  if (n < 0) return hp_fail(d, HP_NOMEM, "out of memory");
  err = hp__each_fixed_placement(prob, cfg, n, lim,
                                 lim->time_limit > 0 ? hp__now() + lim->time_limit : INFINITY,
                                 out, split_fixed, &run, d);
  free(cfg);
  out->space = HP_SPACE_RESTRICTED;
  snprintf(out->space_note, sizeof out->space_note, "placement: Megatron order and its stage "
           "mirror; sharding per stage");
  if (!err && !out->plan) out->status = HP_SOL_NONE;
  return err;
}

const hp_solver hp_solver_dp = {
  .name = "dp",
  .desc = "exact layer DP per configuration (AMP's problem with types, memory, recompute, "
          "ZeRO-3), Megatron-order placement",
  .flags = 0,
  .solve = dp_solve,
};
