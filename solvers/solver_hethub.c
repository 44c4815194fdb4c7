/* solver_hethub.c -- `hethub`: HetHub's strategy (pipeline parallelism across accelerator
 * kinds, data and tensor parallelism on homogeneous nodes): TP groups are ordered by
 * device type, type by type, so that each stage sits on one kind where the counts
 * allow; layers are split non-uniformly, each stage's share of the FLOPs proportional to
 * its devices' speed (peak x efficiency x tp); the stage order is adjusted by trying
 * every order of the kinds (up to 4 kinds; more are ordered fastest first) and keeping
 * the one the evaluator, which charges stage times and hand-offs, scores best. Over
 * every configuration, with recomputation only if nothing fits without it. HetHub models
 * replication only: every layer dp (or the job's one mode when its sharding list lacks
 * dp; no plan when the list has several modes and no dp), no slices, every device used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

/* Splits layers so that stage s gets a share of the FLOPs proportional to speed[s]. */
static void split_by_speed(hp_plan *pl, const hp_model *m, const double *speed)
{
  double total = hp_model_total_flops(m), all = 0, acc = 0, target = 0;
  int L = pl->n_layers, s = 0;
  for (int k = 0; k < pl->pp; k++) all += speed[k];
  pl->first[0] = 0;
  target = total * speed[0] / all;
  for (int l = 0; l < L && s < pl->pp - 1; l++) {
    acc += m->layers[l].flops;
    int must = L - (l + 1) == pl->pp - 1 - s;        /* leave one layer per later stage */
    if ((acc >= target || must) && l + 1 <= L - (pl->pp - 1 - s)) {
      pl->first[++s] = l + 1;
      target += total * speed[s] / all;
    }
  }
  while (s < pl->pp - 1) { pl->first[s + 1] = pl->first[s] + 1; s++; }
  pl->first[pl->pp] = L;
}

static hp_err hethub_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                           hp_result *out, hp_diag *d)
{
  const hp_cluster *c = prob->cluster;
  hp_config *cfg = NULL;
  int n = hp__configs(prob, &cfg), nt = c->n_types < 4 ? c->n_types : 4;
  int D = c->n_devices, *groups = hp__calloc((size_t)D, sizeof *groups);
  int *order = hp__calloc((size_t)D, sizeof *order), *kinds = hp__calloc((size_t)c->n_types, sizeof *kinds);
  double *speed = hp__calloc((size_t)D, sizeof *speed);
  double deadline = lim->time_limit > 0 ? hp__now() + lim->time_limit : INFINITY;
  int mode = hp__replicated_mode(prob);
  hp_err err = HP_OK;
  (void)start;
  if (mode < 0) {
    hp__baseline_no_mode(prob, "hethub", "dp on every layer", out);
    goto done;
  }
  if (n < 0 || !groups || !order || !kinds || !speed) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  for (int rec = 0; rec <= 1 && !out->plan && !err; rec++)
    for (int i = 0; i < n && !err && !hp__should_stop(lim, deadline, out); i++) {
      int ng = hp__tp_groups(prob, cfg[i].tp, groups);
      /* kinds fastest first; permutations of the first nt */
      for (int k = 0; k < c->n_types; k++) kinds[k] = k;
      for (int a = 1; a < c->n_types; a++)
        for (int b = a; b > 0 && c->types[kinds[b]].peak * c->types[kinds[b]].eff >
                                  c->types[kinds[b - 1]].peak * c->types[kinds[b - 1]].eff; b--) {
          int t = kinds[b]; kinds[b] = kinds[b - 1]; kinds[b - 1] = t;
        }
      int perm[4];
      for (int k = 0; k < nt; k++) perm[k] = k;
      do {
        hp_plan *pl = NULL;
        int at = 0;
        for (int k = 0; k < c->n_types; k++) {       /* groups of each kind, in that order */
          int kind = k < nt ? kinds[perm[k]] : kinds[k];
          for (int g = 0; g < ng; g++)
            if (hp_device_type(prob, groups[g]) == kind) order[at++] = g;
        }
        if ((err = hp__plan_for(prob, &cfg[i], &pl, d))) break;
        hp__place_groups(pl, groups, order);
        for (int s = 0; s < pl->pp; s++) {
          double slow = INFINITY;
          for (int r = 0; r < pl->dp; r++) {
            const hp_devtype *t = &c->types[hp_device_type(prob, pl->dev[HP_SLOT(pl, s, r, 0)])];
            if (t->peak * t->eff < slow) slow = t->peak * t->eff;
          }
          speed[s] = slow * pl->tp;
        }
        split_by_speed(pl, prob->model, speed);
        hp_plan_set_modes(pl, mode);
        for (int s = 0; s < pl->pp; s++) pl->recompute[s] = (unsigned char)rec;
        err = hp__score_offer(prob, lim, pl, out, d);
        out->work++;
        hp_plan_destroy(&pl);
      } while (!err && hp__next_perm(perm, nt));
    }
done:
  free(cfg);
  free(groups);
  free(order);
  free(kinds);
  free(speed);
  if (mode >= 0)
    hp__baseline_space(out, "HetHub: stages on one kind each, layers by speed, kind order by "
                       "evaluation", mode);
  if (!err && !out->plan) out->status = HP_SOL_NONE;
  return err;
}

const hp_solver hp_solver_hethub = {
  .name = "hethub",
  .desc = "HetHub: PP across kinds, DP/TP on homogeneous nodes, layers proportional to speed, "
          "stage order by evaluation",
  .flags = 0,
  .solve = hethub_solve,
};
