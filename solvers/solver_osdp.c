/* solver_osdp.c -- `osdp`: OSDP (Jiang et al., IJCAI 2023): data parallelism only
 * (pp = tp = 1, dp = all devices), each layer replicated (DP) or ZeRO-3 sharded (ZDP),
 * chosen by depth-first search with pruning: a branch stops when even sharding every
 * remaining layer cannot fit, or when its time with the cheaper choice for every
 * remaining layer cannot beat the best. With pp = 1 the iteration time is a sum over
 * layers (compute, gathers, sync shares), so the bound is exact per branch. The
 * micro-batch size is swept upwards as in the paper, until nothing fits; the best plan
 * of the sweep wins. --max-work caps the search nodes per batch size (default 1e6). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

#define OSDP_DEFAULT_NODES 1000000L
#define OSDP_MAX_LAYERS 50000     /* recursion depth: well inside an 8 MiB stack */

typedef struct osdp {
  const hp_problem *p;
  hp_plan *pl;
  int L, *order;                   /* layers, largest first */
  double cap, fixed_mem;           /* capacity less reserve; activations and work */
  double *dp_cost, *z_cost;        /* time of each layer's choice (compute excluded) */
  double *states, *gbytes;         /* state_bytes P, param_bytes P */
  double *rest_states, *rest_min;  /* suffix sums over `order` */
  double best;
  unsigned char *choice, *best_choice;
  long nodes, max_nodes;
  const volatile sig_atomic_t *stop;   /* lim->stop, looked at every 4096 nodes */
  int stopped;                     /* the search gave up on it: `best` is what it had */
} osdp;

static void dfs(osdp *o, int k, double states_dp, double states_z, double gather, double time)
{
  int dp = o->pl->dp;
  if (o->stopped || ++o->nodes > o->max_nodes) return;
  if ((o->nodes & 4095) == 0 && o->stop && *o->stop) {
    o->stopped = 1;
    return;
  }
  /* lower bounds: every remaining layer sharded (memory), cheapest choice (time) */
  if (states_dp + (states_z + o->rest_states[k]) / dp + gather + o->fixed_mem > o->cap) return;
  if (time + o->rest_min[k] >= o->best) return;
  if (k == o->L) {
    o->best = time;
    for (int i = 0; i < o->L; i++) o->best_choice[i] = o->choice[i];
    return;
  }
  int l = o->order[k];
  /* replicated first: it is never slower (a gather costs more than the sync it saves
   * when gas >= 1 and param_bytes >= grad_bytes / 2) */
  o->choice[l] = 0;
  dfs(o, k + 1, states_dp + o->states[l], states_z, gather, time + o->dp_cost[l]);
  o->choice[l] = 1;
  dfs(o, k + 1, states_dp, states_z + o->states[l], o->gbytes[l] > gather ? o->gbytes[l] : gather,
      time + o->z_cost[l]);
}

/* Layers by model states, largest first (ties by index). */
typedef struct keyed { double key; int l; } keyed;

static int by_key_desc(const void *a, const void *b)
{
  const keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? 1 : -1;
  return x->l < y->l ? -1 : 1;
}

static hp_err osdp_batch(const hp_problem *prob, hp_plan *pl, long max_nodes,
                         const volatile sig_atomic_t *stop, int *fits, int *stopped,
                         long *work, hp_diag *d)
{
  const hp_model *m = prob->model;
  int L = m->n_layers, dp = pl->dp;
  osdp o = { 0 };
  hp_mem_terms mt = {0};
  hp_costs tab;
  double bdp;
  keyed *ks = hp__calloc((size_t)L, sizeof *ks);
  hp_err err = HP_OK;
  o.p = prob;
  o.pl = pl;
  o.L = L;
  o.max_nodes = max_nodes;
  o.stop = stop;
  o.best = INFINITY;
  o.order = hp__calloc((size_t)L, sizeof *o.order);
  o.dp_cost = hp__calloc((size_t)L, sizeof(double));
  o.z_cost = hp__calloc((size_t)L, sizeof(double));
  o.states = hp__calloc((size_t)L, sizeof(double));
  o.gbytes = hp__calloc((size_t)L, sizeof(double));
  o.rest_states = hp__calloc((size_t)L + 1, sizeof(double));
  o.rest_min = hp__calloc((size_t)L + 1, sizeof(double));
  o.choice = hp__calloc((size_t)L, 1);
  o.best_choice = hp__calloc((size_t)L, 1);
  if (!ks || !o.order || !o.dp_cost || !o.z_cost || !o.states || !o.gbytes || !o.rest_states ||
      !o.rest_min || !o.choice || !o.best_choice) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    goto done;
  }
  if (hp_costs_build(prob, pl, &tab, d)) { err = HP_NOMEM; goto done; }
  /* the slowest replica's compute is common to every choice; memory of activations too;
   * with pp = 1 the one stage holds every device, and T = gas * t + sync */
  bdp = tab.bdp[0];
  o.cap = tab.cap[0];
  for (int l = 0; l < L; l++) hp_costs_mem_add(&tab, l, HP_SHARD_DP, 1, -1, &mt);
  o.fixed_mem = hp_cost_mem_total(&mt, tab.inflight[0], 0) - mt.states;
  for (int l = 0; l < L; l++) {
    o.states[l] = tab.layer[l].state;
    o.gbytes[l] = tab.layer[l].param;
    o.dp_cost[l] = hp_cost_reduce(tab.layer[l].grad, 0, dp, bdp, 0);
    o.z_cost[l] = (double)pl->gas * (hp_cost_gather(o.gbytes[l], 0, 1, dp, bdp, 0) +
                                     hp_cost_grad_scatter(tab.layer[l].grad, 1, dp, bdp, 0));
  }
  hp_costs_release(&tab);
  for (int l = 0; l < L; l++) ks[l] = (keyed){ o.states[l], l };
  qsort(ks, (size_t)L, sizeof *ks, by_key_desc);
  for (int k = 0; k < L; k++) o.order[k] = ks[k].l;
  for (int k = L - 1; k >= 0; k--) {
    int l = o.order[k];
    o.rest_states[k] = o.rest_states[k + 1] + o.states[l];
    o.rest_min[k] = o.rest_min[k + 1] + (o.dp_cost[l] < o.z_cost[l] ? o.dp_cost[l] : o.z_cost[l]);
  }
  dfs(&o, 0, 0, 0, 0, 0);
  *work += o.nodes;
  *fits = isfinite(o.best);
  *stopped = o.stopped;
  for (int l = 0; l < L && *fits; l++) pl->mode[l] = o.best_choice[l] ? HP_SHARD_ZDP : HP_SHARD_DP;
done:
  free(ks);
  free(o.order); free(o.dp_cost); free(o.z_cost); free(o.states); free(o.gbytes);
  free(o.rest_states); free(o.rest_min); free(o.choice); free(o.best_choice);
  return err;
}

static hp_err osdp_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                         hp_result *out, hp_diag *d)
{
  int D = prob->cluster->n_devices;
  long per, max_nodes = lim->max_work > 0 ? lim->max_work : OSDP_DEFAULT_NODES;
  hp_err err = HP_OK;
  (void)start;
  out->space = HP_SPACE_RESTRICTED;
  snprintf(out->space_note, sizeof out->space_note, "OSDP: data parallel only (pp = tp = 1), per-layer "
           "DP or ZeRO-3, micro-batch sweep");
  if (prob->model->n_layers > OSDP_MAX_LAYERS)   /* dfs() recurses once per layer */
    return hp_fail(d, HP_LIMIT, "osdp: its depth-first search takes one level per layer: at "
                   "most %d layers, the model has %d", OSDP_MAX_LAYERS, prob->model->n_layers);
  if (prob->job.gbs % D)
    return hp_fail(d, HP_LIMIT, "osdp: data parallelism only needs gbs (%ld) to be a multiple "
                   "of the %d devices", prob->job.gbs, D);
  per = prob->job.gbs / D;
  int mbs[8192], nm = hp_mbs_divisors(per, mbs, 8192);   /* not a loop over 1..per */
  double deadline = lim->time_limit > 0 ? hp__now() + lim->time_limit : INFINITY;
  for (int im = 0; im < nm && im < 8192 && !err && !hp__should_stop(lim, deadline, out); im++) {
    hp_config c = { 1, 1, D, mbs[im] };
    hp_plan *pl = NULL;
    int fits = 0, stopped = 0;
    if ((err = hp__plan_for(prob, &c, &pl, d))) break;
    hp_plan_split_even(pl);
    hp_plan_place_in_order(pl);
    err = osdp_batch(prob, pl, max_nodes, lim->stop, &fits, &stopped, &out->work, d);
    if (!err && fits) err = hp__score_offer(prob, lim, pl, out, d);   /* the best it had */
    hp_plan_destroy(&pl);
    if (stopped) {
      hp__should_stop(lim, INFINITY, out);   /* records the interrupt */
      break;
    }
    if (!fits) break;          /* the sweep stops at the first batch size that does not fit */
  }
  if (!err && !out->plan) out->status = HP_SOL_NONE;
  return err;
}

const hp_solver hp_solver_osdp = {
  .name = "osdp",
  .desc = "OSDP: data parallel only, per-layer DP or ZeRO-3 by pruned DFS, batch-size sweep",
  .flags = 0,
  .solve = osdp_solve,
};
