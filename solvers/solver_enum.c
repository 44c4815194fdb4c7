/* solver_enum.c -- exhaustive enumeration of the whole search space of cost-model.md
 * section 5 (version 1.2): every (pp, tp, dp) -- with pp * tp * dp < D too when the job
 * allows idle devices --, micro-batch size, placement (an injection of the slots into
 * the devices, TP groups inside one node, tp dividing the GPU count of every node used),
 * stage partition, per-stage recompute, per-layer sharding mode from the job's list (one
 * mode for all under uniform_sharding) and, per zdp layer, slices 1, 2, .., max_slices;
 * each plan scored by the evaluator. Exact, and only for tiny instances: the tests use
 * it as their brute force. Refuses instances of more than `max_work` plans (default
 * 2,000,000).
 *
 * Two exact reductions keep it affordable, both from the cost model's symmetries:
 * - with dp = 1 every mode costs what dp costs and slices cost nothing (7.1, 7.22): one
 *   mode (the job's first) stands for all;
 * - numbering the replicas r, or the TP ranks j, the other way round (the same
 *   permutation in every stage) changes no figure: T is a max over replicas, the replica
 *   groups G(s, j) and the hand-off lanes (dev(s,r,j), dev(s+1,r,j)) are mapped onto
 *   each other, a TP group is a set. So only placements with dev(0,0,j) increasing in j
 *   and dev(0,r,0) increasing in r are tried: every plan has such a twin (number TP
 *   ranks so that the group holding stage 0's smallest device lists it first and
 *   increasing, then sort the replicas by their first device). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

#define ENUM_DEFAULT_MAX 2000000.0
#define ENUM_MAX_DEGREES 256

typedef struct enum_state {
  const hp_problem *prob;
  hp_plan *best;
  double best_time;
  long work;
  double deadline;      /* hp__now() time to stop, or INFINITY */
  int timed_out;        /* stopped by the deadline or lim->stop (out->stopped says which) */
  const hp_limits *lim;
  hp_result *out;
  unsigned char *taken; /* [D] devices that serve a slot of the plan being placed */
  int first_mode;       /* the job's first mode: what dp = 1 plans are written with */
  int n_opt;            /* a layer's (mode, log2 slices) choices when dp > 1 */
  unsigned char opt_mode[HP_N_SHARD + 32], opt_slices[HP_N_SHARD + 32];
  int log_slices;       /* log2 max_slices */
} enum_state;

static double binom(int n, int k)
{
  double r = 1;
  for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
  return r;
}

static double factorial(int n)
{
  double r = 1;
  for (int i = 2; i <= n; i++) r *= i;
  return r;
}

/* The (pp, tp, dp) triples of the space: pp <= L, pp * tp * dp = D (<= D under
 * idle_devices), dp dividing gbs, tp dividing the GPU count of some node (of every node
 * when all devices are used); the placement checks the nodes it uses. Writes up to
 * `cap` triples and returns how many there are. */
static int enum_degrees(const hp_problem *p, int *deg, int cap)
{
  const hp_cluster *c = p->cluster;
  int D = c->n_devices, L = p->model->n_layers, n = 0;
  for (int tp = 1; tp <= D; tp++) {
    int some = 0, every = 1;
    for (int k = 0; k < c->n_nodes; k++) {
      if (c->nodes[k].gpus % tp == 0) some = 1;
      else every = 0;
    }
    if (!some) continue;
    for (int pp = 1; pp <= L && pp * tp <= D; pp++)
      for (int dp = 1; pp * tp * dp <= D; dp++) {
        int used = pp * tp * dp;
        if (used < D ? !p->job.idle_devices : !every) continue;
        if (p->job.gbs % dp) continue;
        if (n < cap) {
          deg[3 * n] = pp;
          deg[3 * n + 1] = tp;
          deg[3 * n + 2] = dp;
        }
        n++;
      }
  }
  return n;
}

/* Shardings of a plan with dp replicas: 1 with dp = 1, else the per-layer choices. */
static double shardings(const enum_state *st, int dp, int L)
{
  double n = 0;
  unsigned modes = hp_job_modes(&st->prob->job);
  if (dp == 1) return 1;
  if (!st->prob->job.uniform_sharding) return pow(st->n_opt, L);
  for (int m = 0; m < HP_N_SHARD; m++)
    if (modes >> m & 1u) n += m == HP_SHARD_ZDP ? pow(st->log_slices + 1, L) : 1;
  return n;
}

/* Plans in the space, placements counted up to the symmetry: for the size check before
 * any work. */
static double space_size(const enum_state *st, const int *deg, int n_deg)
{
  const hp_problem *p = st->prob;
  int L = p->model->n_layers, D = p->cluster->n_devices;
  double total = 0;
  for (int i = 0; i < n_deg; i++) {
    int pp = deg[3 * i], tp = deg[3 * i + 1], dp = deg[3 * i + 2], used = pp * tp * dp;
    double place = factorial(D) / factorial(D - used) / factorial(dp) / factorial(tp);
    total += hp_mbs_divisors(p->job.gbs / dp, NULL, 0) * binom(L - 1, pp - 1) * place *
             pow(2, pp) * shardings(st, dp, L);
  }
  return total;
}

static hp_err score(enum_state *st, hp_plan *pl, hp_diag *d)
{
  hp_eval e = {0};
  hp_err err = hp_evaluate(st->prob, pl, &e, d);
  st->work++;
  if (!err && e.feasible && e.n_used == e.n_devices && !(st->out->all_used_time <= e.iteration_time))
    st->out->all_used_time = e.iteration_time;     /* hp_result.h; enum offers nothing */
  if (!err && e.feasible && e.iteration_time < st->best_time) {
    st->best_time = e.iteration_time;
    hp_plan_destroy(&st->best);
    err = hp_plan_copy(&st->best, pl, d);
  }
  hp_eval_release(&e);
  if (!err && (st->work & 1023) == 0 && hp__should_stop(st->lim, st->deadline, st->out))
    st->timed_out = 1;
  return err;
}

/* Every choice of (mode, slices) per layer among the n_opt of enum_state (an odometer). */
static hp_err try_mixed(enum_state *st, hp_plan *pl, hp_diag *d)
{
  int L = pl->n_layers, *at = hp__calloc((size_t)L, sizeof *at), l;
  hp_err err = HP_OK;
  if (!at) return hp_fail(d, HP_NOMEM, "out of memory");
  do {
    for (l = 0; l < L; l++) {
      pl->mode[l] = st->opt_mode[at[l]];
      pl->slices[l] = st->opt_slices[at[l]];
    }
    if ((err = score(st, pl, d)) || st->timed_out) break;
    for (l = 0; l < L && ++at[l] == st->n_opt; l++) at[l] = 0;
  } while (l < L);
  free(at);
  return err;
}

/* One mode for every layer; zdp with every slice count per layer. */
static hp_err try_uniform(enum_state *st, hp_plan *pl, hp_diag *d)
{
  unsigned modes = hp_job_modes(&st->prob->job);
  int L = pl->n_layers, l;
  hp_err err = HP_OK;
  for (int m = 0; m < HP_N_SHARD && !err && !st->timed_out; m++) {
    if (!(modes >> m & 1u)) continue;
    hp_plan_set_modes(pl, m);
    for (l = 0; l < L; l++) pl->slices[l] = 0;
    do {
      if ((err = score(st, pl, d)) || st->timed_out) break;
      if (m != HP_SHARD_ZDP) break;
      for (l = 0; l < L && ++pl->slices[l] > st->log_slices; l++) pl->slices[l] = 0;
    } while (l < L);
  }
  for (l = 0; l < L; l++) pl->slices[l] = 0;
  return err;
}

/* Every recompute mask and sharding of the plan's placement and partition. */
static hp_err try_flags(enum_state *st, hp_plan *pl, hp_diag *d)
{
  hp_err err = HP_OK;
  for (unsigned long rm = 0; rm < 1ul << pl->pp && !err && !st->timed_out; rm++) {
    for (int s = 0; s < pl->pp; s++) pl->recompute[s] = (rm >> s) & 1;
    if (pl->dp == 1) {
      hp_plan_set_modes(pl, st->first_mode);
      err = score(st, pl, d);
    } else if (st->prob->job.uniform_sharding) {
      err = try_uniform(st, pl, d);
    } else {
      err = try_mixed(st, pl, d);
    }
  }
  return err;
}

static hp_err try_splits(enum_state *st, hp_plan *pl, hp_diag *d)
{
  hp_err err = HP_OK;
  for (int s = 0; s < pl->pp; s++) pl->first[s] = s;
  pl->first[pl->pp] = pl->n_layers;
  do err = try_flags(st, pl, d);
  while (!err && !st->timed_out && hp__next_cuts(pl->first, pl->pp, pl->n_layers));
  return err;
}

/* Slot i (in HP_SLOT order) and the ones after it: each device not yet used on a node
 * whose GPU count tp divides, inside the node of its TP group's rank 0, in the
 * symmetry's order on stage 0 (dev(0,0,j) and dev(0,r,0) increasing). */
static hp_err place(enum_state *st, hp_plan *pl, int i, hp_diag *d)
{
  const hp_cluster *c = st->prob->cluster;
  int tp = pl->tp, n_slots = pl->pp * pl->dp * tp, j = i % tp, r = (i / tp) % pl->dp;
  int s = i / (tp * pl->dp), lo = 0;
  hp_err err = HP_OK;
  if (i == n_slots) return try_splits(st, pl, d);
  if (s == 0 && r == 0 && j > 0) lo = pl->dev[i - 1] + 1;
  if (s == 0 && r > 0 && j == 0) lo = pl->dev[i - tp] + 1;
  for (int dv = lo; dv < c->n_devices && !err && !st->timed_out; dv++) {
    int n = c->dev_node[dv];
    if (st->taken[dv] || c->nodes[n].gpus % tp) continue;
    if (j > 0 && n != c->dev_node[pl->dev[i - j]]) continue;
    st->taken[dv] = 1;
    pl->dev[i] = dv;
    err = place(st, pl, i + 1, d);
    st->taken[dv] = 0;
  }
  return err;
}

static hp_err enum_config(enum_state *st, int pp, int tp, int dp, int mbs, hp_diag *d)
{
  hp_config c = { pp, tp, dp, mbs };
  hp_plan *pl = NULL;
  hp_err err = hp__plan_for(st->prob, &c, &pl, d);
  if (!err) err = place(st, pl, 0, d);
  hp_plan_destroy(&pl);
  return err;
}

static void layer_options(enum_state *st)
{
  unsigned modes = hp_job_modes(&st->prob->job);
  int maxg = hp_job_max_slices(&st->prob->job);
  st->first_mode = -1;
  st->n_opt = 0;
  st->log_slices = 0;
  while ((2 << st->log_slices) <= maxg && st->log_slices < 30) st->log_slices++;
  for (int m = 0; m < HP_N_SHARD; m++) {
    if (!(modes >> m & 1u)) continue;
    if (st->first_mode < 0) st->first_mode = m;
    for (int g = 0; g <= (m == HP_SHARD_ZDP ? st->log_slices : 0) && st->n_opt < HP_N_SHARD + 32; g++) {
      st->opt_mode[st->n_opt] = (unsigned char)m;
      st->opt_slices[st->n_opt++] = (unsigned char)g;
    }
  }
}

/* --- One configuration, for the certificate's closing phase (search.h). */

double hp__enum_config_size(const hp_problem *p, const hp_config *c)
{
  enum_state st = { .prob = p };
  int deg[3] = { c->pp, c->tp, c->dp };
  layer_options(&st);
  /* space_size counts every micro-batch size of the triple: one here */
  return space_size(&st, deg, 1) / hp_mbs_divisors(p->job.gbs / c->dp, NULL, 0);
}

hp_err hp__enum_config(const hp_problem *p, const hp_config *c, const hp_limits *lim,
                       double deadline, hp_result *out, double *best, int *complete,
                       hp_diag *d)
{
  enum_state st = { .prob = p, .best_time = INFINITY, .deadline = deadline, .lim = lim,
                    .out = out };
  hp_err err;
  *best = INFINITY;
  *complete = 0;
  layer_options(&st);
  if (!(st.taken = hp__calloc((size_t)p->cluster->n_devices, 1)))
    return hp_fail(d, HP_NOMEM, "out of memory");
  err = enum_config(&st, c->pp, c->tp, c->dp, c->mbs, d);
  out->work += st.work;
  if (!err && !st.timed_out) {
    *complete = 1;
    *best = st.best_time;
  }
  if (!err && st.best) err = hp__score_offer(p, lim, st.best, out, d);
  free(st.taken);
  hp_plan_destroy(&st.best);
  return err;
}

static hp_err enum_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                         hp_result *out, hp_diag *d)
{
  enum_state st = { .prob = prob, .best_time = INFINITY, .deadline = INFINITY, .lim = lim,
                    .out = out };
  int deg[3 * ENUM_MAX_DEGREES], n_deg = enum_degrees(prob, deg, ENUM_MAX_DEGREES);
  double size, cap = lim->max_work > 0 ? (double)lim->max_work : ENUM_DEFAULT_MAX;
  hp_err err = HP_OK;
  (void)start;

  if (n_deg > ENUM_MAX_DEGREES)
    return hp_fail(d, HP_LIMIT, "enum: %d degree triples: the instance is far too large for "
                   "exhaustive enumeration", n_deg);
  layer_options(&st);
  size = space_size(&st, deg, n_deg);
  if (size > cap)
    return hp_fail(d, HP_LIMIT, "enum: the space holds %.3g plans, more than the limit %.3g: "
                   "exhaustive enumeration is for tiny instances (raise --max-work or use "
                   "another solver)", size, cap);
  if (!(st.taken = hp__calloc((size_t)prob->cluster->n_devices, 1)))
    return hp_fail(d, HP_NOMEM, "out of memory");
  if (lim->time_limit > 0) st.deadline = hp__now() + lim->time_limit;

  for (int i = 0; i < n_deg && !st.timed_out; i++) {
    int pp = deg[3 * i], tp = deg[3 * i + 1], dp = deg[3 * i + 2], mbs[8192], nm;
    nm = hp_mbs_divisors(prob->job.gbs / dp, mbs, 8192);
    for (int k = 0; k < nm && k < 8192 && !st.timed_out; k++)
      HP_TRY(enum_config(&st, pp, tp, dp, mbs[k], d));
  }
  out->work = st.work;
  if (st.timed_out) {
    out->space = HP_SPACE_INCOMPLETE;
    snprintf(out->space_note, sizeof out->space_note, "stopped (%s) after %ld plans",
             hp_stop_name(out->stopped), st.work);
  }
  if (st.best) {
    out->plan = st.best;
    st.best = NULL;
    out->status = st.timed_out ? HP_SOL_FEASIBLE : HP_SOL_OPTIMAL;
    out->bound = st.timed_out ? -INFINITY : st.best_time;
  } else {
    out->status = st.timed_out ? HP_SOL_NONE : HP_SOL_INFEASIBLE;
    out->bound = st.timed_out ? -INFINITY : INFINITY;
  }
done:
  free(st.taken);
  hp_plan_destroy(&st.best);
  return err;
}

const hp_solver hp_solver_enum = {
  .name = "enum",
  .desc = "exhaustive enumeration of the whole space, sharding modes, slices and idle devices "
          "included (tiny instances; the tests' brute force)",
  .flags = HP_SOLVER_EXACT | HP_SOLVER_BOUND,
  .solve = enum_solve,
};
