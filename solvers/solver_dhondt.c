/* solver_dhondt.c -- `dhondt`: SageMaker model parallelism's partitioner (Karakus et al.,
 * "Amazon SageMaker Model Parallelism: A General and Flexible Framework for Large Model
 * Training", 2021; /work/shared/docs/seeds-digest.md). The model is a tree of modules
 * (hp_model.modules; a model without one is the flat chain, its layers the root's
 * children). Each layer costs alpha * memory + (1 - alpha) * compute, both normalised by
 * the root's totals (memory = model states plus one sample's activations), a module the
 * sum of its layers'. At a node given k devices the children are cut into
 * l = min(k, children) contiguous segments minimising the largest segment cost, the k
 * devices go to the segments by the D'Hondt method (the next to the largest quotient
 * cost / (allotted + 1)), and a segment given several devices is partitioned in turn.
 *
 * hetplan's reading: the devices of the tree walk are the plan's pp pipeline stages.
 * hetplan's stages are never empty, and the paper does not say what becomes of a segment
 * allotted no device, so every segment first gets one stage and the other k - l go one at
 * a time by D'Hondt (ties to the earlier segment), never more to a segment than it has
 * layers. With l = min(k, children), a segment gets several stages only when it is one
 * child with several layers, a module: its own children are cut next (a module with one
 * child passes the stages down). Without a tree, or with one whose root has at least pp
 * children, this is the plain min-max split of the layers: the plans this solver gave
 * before it read trees.
 *
 * alpha is SageMaker's `memory_weight` (hp_limits.memory_weight, `--memory-weight`):
 * a float in [0, 1], default 0.2 if `optimize` is "speed", else 0.8, and `optimize`
 * defaults to "memory", so 0.8 (aws/sagemaker-python-sdk,
 * doc/api/training/smd_model_parallel_general.rst at commit 1896135a, table
 * "PyTorch-specific Parameters").
 *
 * hetplan's plans give every stage the same number of TP groups (dp), so D'Hondt then
 * decides which groups, fastest first, serve which stage: the costliest stages get the
 * fastest groups. Over every configuration, recomputation only if nothing fits.
 * SageMaker's partitioner models replication only: every layer dp (or the job's one mode
 * when its sharding list lacks dp; no plan when the list has several modes and no dp), no
 * slices, every device used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

/* SageMaker's default memory_weight (the opening comment gives the source). */
#define DHONDT_MEMORY_WEIGHT 0.8

double hp__dhondt_alpha(const hp_limits *lim)
{
  double a = lim ? lim->memory_weight : HP_MEMORY_WEIGHT_DEFAULT;
  return a >= 0 && a <= 1 ? a : DHONDT_MEMORY_WEIGHT;
}

void hp__dhondt_weights(const hp_model *m, double alpha, double *w)
{
  int L = m->n_layers;
  double mem_all = 0, fl_all = hp_model_total_flops(m);
  for (int l = 0; l < L; l++) mem_all += m->state_bytes * m->layers[l].params + m->layers[l].act_bytes;
  for (int l = 0; l < L; l++) {
    double mem = m->state_bytes * m->layers[l].params + m->layers[l].act_bytes;
    w[l] = alpha * (mem_all > 0 ? mem / mem_all : 0) +
           (1 - alpha) * (fl_all > 0 ? m->layers[l].flops / fl_all : 0);
  }
}

/* The walk down the tree: stage starts written in order into first[]. */
typedef struct tree_cut {
  const hp_model *m;
  const double *w;
  int *first;
  int n_stages;
} tree_cut;

static double item_cost(const tree_cut *t, const hp_module_item *it)
{
  double q = 0;   /* summed from 0 as the flat split's weights are: one layer's is w exactly */
  for (int l = it->first; l < it->last; l++) q += t->w[l];
  return q;
}

/* Partitions the n items (consecutive, together at least k layers) into k stages. */
static hp_err cut_items(tree_cut *t, const hp_module_item *it, int n, int k)
{
  double *q;
  int *got;
  hp_err err = HP_OK;
  if (k == 1) {
    t->first[t->n_stages++] = it[0].first;
    return HP_OK;
  }
  q = hp__calloc((size_t)n, sizeof *q);
  got = hp__calloc((size_t)(n > k ? n : k) + 1, sizeof *got);
  if (!q || !got) {
    free(q);
    free(got);
    return HP_NOMEM;
  }
  for (int i = 0; i < n; i++) q[i] = item_cost(t, &it[i]);
  if (n >= k) {   /* l = k segments by the least largest cost, one stage each */
    hp__minmax_runs(q, n, k, got);
    for (int j = 0; j < k; j++) t->first[t->n_stages++] = it[got[j]].first;
  } else {        /* l = n: each item a segment; D'Hondt hands out the k - n others */
    for (int i = 0; i < n; i++) got[i] = 1;
    for (int r = n; r < k; r++) {
      int best = -1;
      for (int i = 0; i < n; i++)
        if (got[i] < it[i].last - it[i].first &&
            (best < 0 || q[i] / (got[i] + 1) > q[best] / (got[best] + 1)))
          best = i;
      if (best < 0) break;   /* fewer layers than stages: not a caller's case */
      got[best]++;
    }
    for (int i = 0; i < n && !err; i++) {
      if (got[i] == 1) {
        t->first[t->n_stages++] = it[i].first;
        continue;
      }
      /* several stages: a module (a layer has one layer), cut along its children */
      hp_module_item *kids = hp__calloc((size_t)(it[i].last - it[i].first), sizeof *kids);
      if (!kids) { err = HP_NOMEM; break; }
      err = cut_items(t, kids, hp_model_items(t->m, it[i].module, kids), got[i]);
      free(kids);
    }
  }
  free(q);
  free(got);
  return err;
}

hp_err hp__dhondt_stages(const hp_model *m, const double *w, int pp, int *first)
{
  tree_cut t = { m, w, first, 0 };
  hp_module_item *root = hp__calloc((size_t)m->n_layers, sizeof *root);
  hp_err err;
  if (!root) return HP_NOMEM;
  err = cut_items(&t, root, hp_model_items(m, -1, root), pp);
  free(root);
  first[pp] = m->n_layers;
  return err;
}

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
  double alpha = hp__dhondt_alpha(lim);
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
  hp__dhondt_weights(m, alpha, w);
  for (int rec = 0; rec <= 1 && !out->plan && !err; rec++)
    for (int i = 0; i < n && !err && !hp__should_stop(lim, deadline, out); i++) {
      hp_plan *pl = NULL;
      int ng = hp__tp_groups(prob, cfg[i].tp, groups);
      if ((err = hp__plan_for(prob, &cfg[i], &pl, d))) break;
      if (hp__dhondt_stages(m, w, pl->pp, pl->first)) {
        hp_plan_destroy(&pl);
        err = hp_fail(d, HP_NOMEM, "out of memory");
        break;
      }
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
  if (mode >= 0) {
    char rule[120];
    snprintf(rule, sizeof rule, "SageMaker on the %s, memory weight %g: min-max segments, "
             "D'Hondt stages, TP groups", m->n_modules ? "module tree" : "flat chain", alpha);
    hp__baseline_space(out, rule, mode);
  }
  if (!err && !out->plan) out->status = HP_SOL_NONE;
  return err;
}

const hp_solver hp_solver_dhondt = {
  .name = "dhondt",
  .desc = "SageMaker: the module tree cut into min-max segments, D'Hondt allotment of devices to segments",
  .flags = 0,
  .solve = dhondt_solve,
};
