/* solver_dhondt.c -- `dhondt`: SageMaker model parallelism's partitioner (Amazon,
 * "Amazon SageMaker Model Parallelism", 2021): each layer costs
 * alpha * memory + (1 - alpha) * compute, both normalised by the model's totals
 * (alpha = 0.5 here; memory = model states plus one sample's activations); the chain is
 * cut into pp contiguous segments minimising the largest segment cost; devices go to
 * segments by the D'Hondt method (largest quotient cost / (allotted + 1)). hetplan's
 * plans give every stage the same number of TP groups (dp), so D'Hondt here decides
 * which groups, fastest first, serve which segment: the costliest segments get the
 * fastest groups. Over every configuration, recomputation only if nothing fits.
 * SageMaker's partitioner models replication only: every layer dp (or the job's one mode
 * when its sharding list lacks dp; no plan when the list has several modes and no dp), no
 * slices, every device used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

#define DHONDT_ALPHA 0.5

static hp_err dhondt_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                           hp_result *out, hp_diag *d)
{
  const hp_model *m = prob->model;
  const hp_cluster *c = prob->cluster;
  int L = m->n_layers, D = c->n_devices;
  hp_config *cfg = NULL;
  int n = hp__configs(prob, &cfg);
  double *w = hp__calloc((size_t)L, sizeof *w), *q = hp__calloc((size_t)D, sizeof *q);
  int *groups = hp__calloc((size_t)D, sizeof *groups), *byspeed = hp__calloc((size_t)D, sizeof *byspeed);
  int *order = hp__calloc((size_t)D, sizeof *order), *got = hp__calloc((size_t)D, sizeof *got);
  double mem_all = 0, fl_all = hp_model_total_flops(m);
  double deadline = lim->time_limit > 0 ? hp__now() + lim->time_limit : INFINITY;
  int mode = hp__replicated_mode(prob);
  hp_err err = HP_OK;
  (void)start;
  if (mode < 0) {
    hp__baseline_no_mode(prob, "dhondt", "dp on every layer", out);
    goto done;
  }
  if (n < 0 || !w || !q || !groups || !byspeed || !order || !got) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    goto done;
  }
  for (int l = 0; l < L; l++) mem_all += m->state_bytes * m->layers[l].params + m->layers[l].act_bytes;
  for (int l = 0; l < L; l++) {
    double mem = m->state_bytes * m->layers[l].params + m->layers[l].act_bytes;
    w[l] = DHONDT_ALPHA * (mem_all > 0 ? mem / mem_all : 0) +
           (1 - DHONDT_ALPHA) * (fl_all > 0 ? m->layers[l].flops / fl_all : 0);
  }
  for (int rec = 0; rec <= 1 && !out->plan && !err; rec++)
    for (int i = 0; i < n && !err && !hp__should_stop(lim, deadline, out); i++) {
      hp_plan *pl = NULL;
      int ng = hp__tp_groups(prob, cfg[i].tp, groups);
      if ((err = hp__plan_for(prob, &cfg[i], &pl, d))) break;
      hp__split_minmax(pl, w);
      /* TP groups fastest first (stable in device order) */
      for (int g = 0; g < ng; g++) byspeed[g] = g;
      for (int a = 1; a < ng; a++)
        for (int b = a; b > 0; b--) {
          const hp_devtype *x = &c->types[hp_device_type(prob, groups[byspeed[b]])];
          const hp_devtype *y = &c->types[hp_device_type(prob, groups[byspeed[b - 1]])];
          if (x->peak * x->eff <= y->peak * y->eff) break;
          int t = byspeed[b]; byspeed[b] = byspeed[b - 1]; byspeed[b - 1] = t;
        }
      /* D'Hondt: the next fastest group to the segment of largest cost / (allotted + 1) */
      for (int s = 0; s < pl->pp; s++) {
        got[s] = 0;
        q[s] = 0;
        for (int l = pl->first[s]; l < pl->first[s + 1]; l++) q[s] += w[l];
      }
      for (int g = 0; g < ng; g++) {
        int best = -1;
        for (int s = 0; s < pl->pp; s++)
          if (got[s] < pl->dp && (best < 0 || q[s] / (got[s] + 1) > q[best] / (got[best] + 1)))
            best = s;
        order[best * pl->dp + got[best]++] = byspeed[g];
      }
      hp__place_groups(pl, groups, order);
      hp_plan_set_modes(pl, mode);
      for (int s = 0; s < pl->pp; s++) pl->recompute[s] = (unsigned char)rec;
      err = hp__score_offer(prob, lim, pl, out, d);
      out->work++;
      hp_plan_destroy(&pl);
    }
done:
  free(cfg);
  free(w);
  free(q);
  free(groups);
  free(byspeed);
  free(order);
  free(got);
  if (mode >= 0)
    hp__baseline_space(out, "SageMaker: min-max segments of 0.5 memory + 0.5 compute, D'Hondt "
                       "allotment of TP groups", mode);
  if (!err && !out->plan) out->status = HP_SOL_NONE;
  return err;
}

const hp_solver hp_solver_dhondt = {
  .name = "dhondt",
  .desc = "SageMaker: min-max contiguous segments, D'Hondt allotment of devices to segments",
  .flags = 0,
  .solve = dhondt_solve,
};
