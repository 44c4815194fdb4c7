/* solver_amp.c -- `amp`: AMP's search as published (Li et al., NeurIPS 2022): every
 * configuration (pp, tp, dp, mbs), Megatron's placement, and AMP's layer DP on one
 * averaged device: each layer's time is the mean over all devices of its time on that
 * device's type (AMP's DP takes one speed per layer); no memory model, no recompute, no
 * ZeRO-3. The plan AMP's own model predicts fastest is returned, as AMP would, even if
 * it does not fit (the evaluator's verdict is in the result's `fits`). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

/* Mean over devices of the layer's time at (tp, mbs), each device's TP link taken as its
 * node's own figures. */
static void averaged_times(const hp_problem *p, int tp, int mbs, double *t)
{
  const hp_cluster *c = p->cluster;
  for (int l = 0; l < p->model->n_layers; l++) {
    double sum = 0;
    for (int k = 0; k < c->n_nodes; k++) {
      const hp_node *nd = &c->nodes[k];
      double bw = nd->gpus > 1 ? hp_problem_bw(p, nd->first, nd->first + 1) : INFINITY;
      double lat = nd->gpus > 1 ? hp_problem_lat(p, nd->first, nd->first + 1) : 0;
      sum += nd->gpus * hp_layer_time(p, l, nd->type, tp, mbs, bw, lat);
    }
    t[l] = sum / c->n_devices;
  }
}

static hp_err amp_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                        hp_result *out, hp_diag *d)
{
  hp_config *cfg = NULL;
  int n = hp__configs(prob, &cfg);
  double *t = hp__calloc((size_t)prob->model->n_layers, sizeof *t), best = INFINITY;
  double deadline = lim->time_limit > 0 ? hp__now() + lim->time_limit : INFINITY;
  int mode = hp__replicated_mode(prob);   /* AMP models replication only (solver_common.c) */
  hp_err err = HP_OK;
  (void)start;
  if (mode < 0) {
    free(cfg);
    free(t);
    hp__baseline_no_mode(prob, "amp", "dp on every layer", out);
    return HP_OK;
  }
  if (n < 0 || !t) { free(cfg); free(t); return hp_fail(d, HP_NOMEM, "out of memory"); }
  for (int i = 0; i < n && !err && !hp__should_stop(lim, deadline, out); i++) {
    hp_plan *pl = NULL;
    hp_dp_opts o;
    int found = 0;
    double obj;
    if ((err = hp__plan_for(prob, &cfg[i], &pl, d))) break;
    hp_plan_place_in_order(pl);
    averaged_times(prob, cfg[i].tp, cfg[i].mbs, t);
    hp__dp_opts_init(&o);
    o.ignore_memory = 1;
    o.allow_recompute = 0;
    o.modes = 1u << HP_SHARD_DP;   /* no ZeRO (the job's modes if it lacks dp) */
    o.layer_time = t;
    o.cutoff = best;
    o.stop = lim->stop;
    err = hp__dp_split(prob, pl, &o, &found, &obj, &out->work, d);
    hp_plan_set_modes(pl, mode);
    if (!err && found && obj < best) {   /* AMP ranks by its own prediction */
      best = obj;
      hp_plan_destroy(&out->plan);
      out->plan = pl;
      pl = NULL;
      out->status = HP_SOL_FEASIBLE;
    }
    hp_plan_destroy(&pl);
  }
  free(cfg);
  free(t);
  hp__baseline_space(out, "AMP: Megatron placement, one averaged device speed, no memory model",
                     mode);
  if (!err && !out->plan) out->status = HP_SOL_NONE;
  return err;
}

const hp_solver hp_solver_amp = {
  .name = "amp",
  .desc = "AMP as published: layer DP on one averaged device speed, Megatron placement, no "
          "memory model (its plan may not fit)",
  .flags = 0,
  .solve = amp_solve,
};
