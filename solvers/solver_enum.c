/* solver_enum.c -- exhaustive enumeration of the whole search space of cost-model.md
 * section 5: every (pp, tp, dp), micro-batch size, stage partition, placement
 * (bijection with TP groups inside nodes), per-stage recompute and, when dp > 1,
 * per-layer sharding; each plan scored by the evaluator. Exact, and only for tiny
 * instances: the tests use it as their brute force. Refuses instances of more than
 * `max_work` plans (default 2,000,000). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

#define ENUM_DEFAULT_MAX 2000000.0

typedef struct enum_state {
  const hp_problem *prob;
  hp_plan *best;
  double best_time;
  long work;
  double deadline;      /* hp__now() time to stop, or INFINITY */
  int timed_out;        /* stopped by the deadline or lim->stop (out->stopped says which) */
  const hp_limits *lim;
  hp_result *out;
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

/* Plans in the space: for the size check before any work. */
static double space_size(const hp_problem *p, const int *deg, int n_deg)
{
  int L = p->model->n_layers, D = p->cluster->n_devices;
  double total = 0;
  for (int i = 0; i < n_deg; i++) {
    int pp = deg[3 * i], dp = deg[3 * i + 2];
    if (p->job.gbs % dp) continue;
    total += hp_mbs_divisors(p->job.gbs / dp, NULL, 0) * binom(L - 1, pp - 1) * factorial(D) * pow(2, pp)
             * (dp > 1 ? pow(2, L) : 1);
  }
  return total;
}

static int tp_groups_in_nodes(const hp_problem *p, const hp_plan *pl)
{
  const int *node = p->cluster->dev_node;
  for (int g = 0; g < pl->pp * pl->dp; g++)
    for (int j = 1; j < pl->tp; j++)
      if (node[pl->dev[g * pl->tp + j]] != node[pl->dev[g * pl->tp]]) return 0;
  return 1;
}

/* Tries every recompute and sharding mask for the plan's current shape and placement. */
static hp_err try_flags(enum_state *st, hp_plan *pl, hp_diag *d)
{
  unsigned long n_rec = 1ul << pl->pp, n_z = pl->dp > 1 ? 1ul << pl->n_layers : 1;
  for (unsigned long rm = 0; rm < n_rec; rm++) {
    for (int s = 0; s < pl->pp; s++) pl->recompute[s] = (rm >> s) & 1;
    for (unsigned long zm = 0; zm < n_z; zm++) {
      hp_eval e = {0};
      hp_err err;
      for (int l = 0; l < pl->n_layers; l++) pl->mode[l] = (zm >> l) & 1 ? HP_SHARD_ZDP : HP_SHARD_DP;
      err = hp_evaluate(st->prob, pl, &e, d);
      st->work++;
      if (err) { hp_eval_release(&e); return err; }
      if (e.feasible && e.iteration_time < st->best_time) {
        st->best_time = e.iteration_time;
        hp_plan_destroy(&st->best);
        err = hp_plan_copy(&st->best, pl, d);
      }
      hp_eval_release(&e);
      if (err) return err;
      if ((st->work & 1023) == 0 && hp__should_stop(st->lim, st->deadline, st->out)) {
        st->timed_out = 1;
        return HP_OK;
      }
    }
  }
  return HP_OK;
}

static hp_err enum_config(enum_state *st, int pp, int tp, int dp, int mbs, hp_diag *d)
{
  const hp_problem *p = st->prob;
  int L = p->model->n_layers, D = p->cluster->n_devices;
  hp_plan *pl = NULL;
  hp_err err;
  HP_TRY(hp_plan_create(&pl, pp, tp, dp, L, d));
  pl->mbs = mbs;
  pl->schedule = p->job.schedule;
  HP_TRY(hp_plan_set_gas(p, pl, d));
  for (int s = 0; s < pp; s++) pl->first[s] = s;
  do {
    for (int i = 0; i < D; i++) pl->dev[i] = i;
    do {
      if (!tp_groups_in_nodes(p, pl)) continue;
      HP_TRY(try_flags(st, pl, d));
      if (st->timed_out) goto done;
    } while (hp__next_perm(pl->dev, D));
  } while (hp__next_cuts(pl->first, pp, L));
done:
  hp_plan_destroy(&pl);
  return err;
}

static hp_err enum_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                         hp_result *out, hp_diag *d)
{
  enum_state st = { prob, NULL, INFINITY, 0, INFINITY, 0, lim, out };
  int deg[3 * 256], n_deg = hp__degrees(prob, deg, 256);
  double size, cap = lim->max_work > 0 ? (double)lim->max_work : ENUM_DEFAULT_MAX;
  hp_err err = HP_OK;
  (void)start;

  if (n_deg > 256)
    return hp_fail(d, HP_LIMIT, "enum: %d degree triples: the instance is far too large for "
                   "exhaustive enumeration", n_deg);
  size = space_size(prob, deg, n_deg);
  if (size > cap)
    return hp_fail(d, HP_LIMIT, "enum: the space holds %.3g plans, more than the limit %.3g: "
                   "exhaustive enumeration is for tiny instances (raise --max-work or use "
                   "another solver)", size, cap);
  if (lim->time_limit > 0) st.deadline = hp__now() + lim->time_limit;

  for (int i = 0; i < n_deg && !st.timed_out; i++) {
    int pp = deg[3 * i], tp = deg[3 * i + 1], dp = deg[3 * i + 2], mbs[8192], nm;
    if (prob->job.gbs % dp) continue;
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
  hp_plan_destroy(&st.best);
  return err;
}

const hp_solver hp_solver_enum = {
  .name = "enum",
  .desc = "exhaustive enumeration of the whole space (tiny instances; the tests' brute force)",
  .flags = HP_SOLVER_EXACT | HP_SOLVER_BOUND,
  .solve = enum_solve,
};
