/* solver_megatron.c -- `megatron` and `megatron-params`: the rules people apply with
 * Megatron-LM (Narayanan et al., SC 2021; AMP's "Megatron heuristic" baseline): tensor
 * parallelism inside a node (tp at most a node's GPUs), the smallest model-parallel size
 * tp * pp that fits, preferring the larger tp at equal size, the rest data parallel; rank
 * order TP, then DP, then PP; micro-batch 1; layers balanced by count (`megatron`) or by
 * parameters (`megatron-params`, an exact min-max split); if nothing fits without it,
 * activation recomputation on every stage. Returns the first plan that fits, as Megatron
 * users would, not the fastest.
 * Sharding: Megatron-LM launches one mode for every layer. Its distributed optimizer
 * (--use-distributed-optimizer, ZeRO-1) is taken to be on when the job's sharding list
 * allows zero1: every layer zero1; otherwise every layer dp; no plan when the list has
 * neither (Megatron has no ZeRO-2 or ZeRO-3). No slices; every device used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

static hp_err megatron_run(const hp_problem *prob, const hp_limits *lim, int by_params,
                           hp_result *out, hp_diag *d)
{
  const hp_cluster *c = prob->cluster;
  int D = c->n_devices, L = prob->model->n_layers, max_tp = c->nodes[0].gpus;
  double *w = hp__calloc((size_t)L, sizeof *w);
  double deadline = lim->time_limit > 0 ? hp__now() + lim->time_limit : INFINITY;
  unsigned modes = hp_job_modes(&prob->job);
  int mode = modes >> HP_SHARD_ZERO1 & 1u ? HP_SHARD_ZERO1 : modes >> HP_SHARD_DP & 1u ? HP_SHARD_DP : -1;
  hp_err err = HP_OK;
  if (mode < 0) {
    free(w);
    hp__baseline_no_mode(prob, by_params ? "megatron-params" : "megatron",
                         "zero1 (distributed optimizer) or dp on every layer", out);
    return HP_OK;
  }
  if (!w) return hp_fail(d, HP_NOMEM, "out of memory");
  for (int k = 1; k < c->n_nodes; k++) if (c->nodes[k].gpus < max_tp) max_tp = c->nodes[k].gpus;
  for (int l = 0; l < L; l++) w[l] = prob->model->layers[l].params;
  for (int rec = 0; rec <= 1 && !out->plan && !err; rec++)
    for (int m = 1; m <= D && !out->plan && !err && !hp__should_stop(lim, deadline, out); m++) {
      if (D % m) continue;
      for (int tp = m < max_tp ? m : max_tp; tp >= 1 && !out->plan && !err; tp--) {
        int ok = m % tp == 0 && m / tp <= L && prob->job.gbs % (D / m) == 0;
        for (int k = 0; ok && k < c->n_nodes; k++) ok = c->nodes[k].gpus % tp == 0;
        if (!ok) continue;
        hp_config cfg = { m / tp, tp, D / m, 1 };
        hp_plan *pl = NULL;
        if ((err = hp__plan_for(prob, &cfg, &pl, d))) break;
        hp_plan_place_in_order(pl);
        if (by_params) hp__split_minmax(pl, w);
        else hp_plan_split_even(pl);
        for (int s = 0; s < pl->pp; s++) pl->recompute[s] = (unsigned char)rec;
        hp_plan_set_modes(pl, mode);
        hp_eval e = {0};
        if (!(err = hp_evaluate(prob, pl, &e, d))) {
          if (e.feasible || lim->keep_rejected) err = hp_result_offer(out, lim, pl, &e, d);
        }
        hp_eval_release(&e);
        hp_plan_destroy(&pl);
      }
    }
  free(w);
  out->space = HP_SPACE_RESTRICTED;
  snprintf(out->space_note, sizeof out->space_note, "Megatron rules: smallest tp*pp that fits, mbs 1, "
           "layers by %s; every layer %s, no slices, every device used",
           by_params ? "parameters" : "count", hp_shard_name(mode));
  if (!err && !out->plan) out->status = HP_SOL_NONE;
  return err;
}

static hp_err megatron_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                             hp_result *out, hp_diag *d)
{
  (void)start;
  return megatron_run(prob, lim, 0, out, d);
}

static hp_err megatron_params_solve(const hp_problem *prob, const hp_plan *start,
                                    const hp_limits *lim, hp_result *out, hp_diag *d)
{
  (void)start;
  return megatron_run(prob, lim, 1, out, d);
}

const hp_solver hp_solver_megatron = {
  .name = "megatron",
  .desc = "Megatron-LM rules: TP in a node, smallest tp*pp that fits, layers balanced by count; "
          "zero1 on every layer when the job allows it (distributed optimizer), else dp",
  .flags = 0,
  .solve = megatron_solve,
};

const hp_solver hp_solver_megatron_params = {
  .name = "megatron-params",
  .desc = "Megatron-LM rules with layers balanced by parameters (min-max split); zero1 when "
          "the job allows it, else dp",
  .flags = 0,
  .solve = megatron_params_solve,
};
