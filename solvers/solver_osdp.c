/* solver_osdp.c -- `osdp`: OSDP (Jiang et al., IJCAI 2023): data parallelism only
 * (pp = tp = 1, dp = all devices), each layer replicated (dp) or ZeRO-3 sharded (zdp)
 * and, with operator splitting, a zdp layer's weights gathered in g_l slices (1, 2, ..,
 * the job's max_slices: a gather buffer of 1/g_l for a latency per extra slice),
 * chosen by depth-first search with pruning: a branch stops when even sharding every
 * remaining layer cannot fit, or when its time with the cheapest choice for every
 * remaining layer cannot beat the best. More slices are tried for a layer only while they
 * lower the stage's gather buffer (past that they cost latency and save nothing). With
 * pp = 1 the iteration time is a sum over layers (compute, gathers, sync shares), so
 * the bound is exact per branch. The micro-batch size is swept upwards as in the paper,
 * until nothing fits; the best plan of the sweep wins. --max-work caps the search nodes
 * per batch size (default 1e6).
 * Modes: OSDP knows dp and zdp only; it uses those of them the job's sharding list
 * allows (no plan if neither), one of them for every layer under uniform_sharding; never
 * zero1 or zero2; every device used. */
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
  int allow_dp, allow_z, uniform;  /* the modes the job allows; one for all layers */
  int max_log;                     /* log2 of the job's max_slices */
  double slice_lat;                /* time of one extra slice of one layer: gas 2 (dp-1) latdp */
  unsigned char *choice, *best_choice;   /* 0: dp; 1 + log2 g: zdp in g slices */
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
  /* lower bounds: every remaining layer sharded where the job allows it (memory),
   * cheapest choice (time) */
  if (states_dp + (o->allow_z ? (states_z + o->rest_states[k]) / dp
                              : states_z / dp + o->rest_states[k]) + gather + o->fixed_mem > o->cap)
    return;
  if (time + o->rest_min[k] >= o->best) return;
  if (k == o->L) {
    o->best = time;
    for (int i = 0; i < o->L; i++) o->best_choice[i] = o->choice[i];
    return;
  }
  int l = o->order[k], first = o->order[0];
  int may_dp = o->allow_dp && (!o->uniform || k == 0 || o->choice[first] == 0);
  int may_z = o->allow_z && (!o->uniform || k == 0 || o->choice[first] > 0);
  /* replicated first: it is never slower (a gather costs more than the sync it saves
   * when gas >= 1 and param_bytes >= grad_bytes / 2) */
  if (may_dp) {
    o->choice[l] = 0;
    dfs(o, k + 1, states_dp + o->states[l], states_z, gather, time + o->dp_cost[l]);
  }
  for (int lg = 0; may_z && lg <= o->max_log; lg++) {
    double buf = o->gbytes[l] / (double)(1 << lg);
    /* the buffer with one slice fewer was no larger than the stage's already: more
     * slices would only add latency */
    if (lg > 0 && o->gbytes[l] / (double)(1 << (lg - 1)) <= gather) break;
    o->choice[l] = (unsigned char)(1 + lg);
    dfs(o, k + 1, states_dp, states_z + o->states[l], buf > gather ? buf : gather,
        time + o->z_cost[l] + o->slice_lat * ((1 << lg) - 1));
  }
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
  unsigned modes = hp_job_modes(&prob->job);
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
  o.allow_dp = modes >> HP_SHARD_DP & 1u;
  o.allow_z = modes >> HP_SHARD_ZDP & 1u;
  o.uniform = prob->job.uniform_sharding;
  while ((2 << o.max_log) <= hp_job_max_slices(&prob->job) && o.max_log < 30) o.max_log++;
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
  o.slice_lat = (double)pl->gas * hp_cost_gather(0, 1, 1, dp, bdp, tab.latdp[0]);
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
    o.rest_min[k] = o.rest_min[k + 1] + (!o.allow_z || (o.allow_dp && o.dp_cost[l] < o.z_cost[l])
                                         ? o.dp_cost[l] : o.z_cost[l]);
  }
  dfs(&o, 0, 0, 0, 0, 0);
  *work += o.nodes;
  *fits = isfinite(o.best);
  *stopped = o.stopped;
  for (int l = 0; l < L && *fits; l++) {
    pl->mode[l] = o.best_choice[l] ? HP_SHARD_ZDP : HP_SHARD_DP;
    pl->slices[l] = o.best_choice[l] ? (unsigned char)(o.best_choice[l] - 1) : 0;
  }
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
  unsigned modes = hp_job_modes(&prob->job);
  hp_err err = HP_OK;
  (void)start;
  if (!(modes & (1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP))) {
    hp__baseline_no_mode(prob, "osdp", "dp or zdp per layer", out);
    return HP_OK;
  }
  out->space = HP_SPACE_RESTRICTED;
  snprintf(out->space_note, sizeof out->space_note, "OSDP: data parallel only (pp = tp = 1), %s%s, "
           "zdp in up to %d slices, micro-batch sweep; no zero1/zero2, every device used",
           modes >> HP_SHARD_DP & 1u && modes >> HP_SHARD_ZDP & 1u ? "dp or zdp" :
           modes >> HP_SHARD_DP & 1u ? "dp" : "zdp",
           prob->job.uniform_sharding ? " for all layers" : " per layer",
           hp_job_max_slices(&prob->job));
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
  .desc = "OSDP: data parallel only, per-layer dp or ZeRO-3 (gathered in up to max_slices "
          "slices) by pruned DFS, batch-size sweep",
  .flags = 0,
  .solve = osdp_solve,
};
