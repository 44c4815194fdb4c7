/* solver_sa.c -- `sa`: simulated annealing over the whole plan. A state is a
 * configuration (pp, tp, dp, mbs; with pp * tp * dp < D too when the job allows idle
 * devices), an order of the TP groups (the first pp * dp serve the slots, the rest are
 * idle), the stage boundaries, the recompute flags, the sharding modes and slices. Moves:
 * Pipette's placement moves (swap, migrate, reverse) and AMP's configuration moves
 * (another (pp, tp, dp), another micro-batch size), each followed by the layer DP
 * (boundaries, per-stage flags), and under idle_devices the swap of a used TP group with
 * an idle one; with the boundaries kept: another mode for one layer among the job's
 * (for every layer under uniform_sharding), another slice count for a zdp layer, one
 * stage's recompute toggled. Modes the layer DP writes that the job does not allow are
 * replaced by the nearest allowed one (the more sharded on a tie); under uniform_sharding
 * every layer takes the most sharded of them. The evaluator scores every state (a state
 * that does not fit is penalised, never returned).
 * A worse state is accepted with probability exp(-delta / (T * current)): the size of
 * the worsening counts (unlike Pipette's acceptance). T falls geometrically from 0.05 to
 * 1e-4 over the run. Starts from the `dp` solver's plan (its modes made valid for the
 * job), or from a random configuration where dp finds none. Seeded and deterministic;
 * --max-work sets the moves (default 3000), --time-limit the wall clock. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

#define SA_DEFAULT_MOVES 3000
#define SA_DEFAULT_SECONDS 60.0
#define SA_T0 0.05
#define SA_T1 1e-4
#define SA_REACH 25.0

extern const hp_solver hp_solver_dp;

typedef struct sa_state {
  int ci;          /* configuration index */
  int *groups;     /* first device of each TP group of the configuration's tp */
  int *order;      /* TP group order, ng entries */
  int ng;
  hp_plan *pl;
  double cost;     /* evaluator time, penalised when it does not fit */
  int fits;
} sa_state;

/* The modes and slices of a plan made valid for the job (see the opening comment). */
static void legalize(const hp_problem *p, hp_plan *pl)
{
  unsigned modes = hp_job_modes(&p->job);
  int lg = 0, top = 0;
  while ((2 << lg) <= hp_job_max_slices(&p->job) && lg < 30) lg++;
  for (int l = 0; l < pl->n_layers; l++) {
    int m = pl->mode[l] < HP_N_SHARD ? pl->mode[l] : HP_SHARD_ZDP;
    for (int k = 1; k < HP_N_SHARD && !(modes >> m & 1u); k++) {
      if (m + k < HP_N_SHARD && modes >> (m + k) & 1u) m += k;
      else if (m - k >= 0 && modes >> (m - k) & 1u) m -= k;
    }
    pl->mode[l] = (unsigned char)m;
    if (m > top) top = m;
  }
  for (int l = 0; l < pl->n_layers; l++) {
    if (p->job.uniform_sharding) pl->mode[l] = (unsigned char)top;
    if (pl->mode[l] != HP_SHARD_ZDP) pl->slices[l] = 0;
    else if (pl->slices[l] > lg) pl->slices[l] = (unsigned char)lg;
  }
}

/* The configurations: hp__configs's, and under idle_devices those with fewer devices
 * whose TP groups exist (pp <= L, dp dividing gbs). *out is malloc'd; -1 out of memory. */
static int sa_configs(const hp_problem *p, hp_config **out)
{
  int n = hp__configs(p, out), D = p->cluster->n_devices, L = p->model->n_layers, extra = 0;
  int *groups = NULL, mbs[64];
  hp_config *all;
  if (n < 0 || !p->job.idle_devices) return n;
  if (!(groups = hp__calloc((size_t)D, sizeof *groups))) return -1;
  for (int pass = 0; pass < 2; pass++) {
    int at = n;
    for (int tp = 1; tp <= D; tp++) {
      int ng = hp__tp_groups_usable(p, tp, groups);
      for (int pp = 1; pp <= L && pp <= ng; pp++)
        for (int dp = 1; pp * dp <= ng && pp * dp * tp < D; dp++) {
          int nm;
          if (p->job.gbs % dp) continue;
          nm = hp_mbs_divisors(p->job.gbs / dp, mbs, 64);
          for (int k = 0; k < nm && k < 64; k++, at++)
            if (pass == 1) (*out)[at] = (hp_config){ pp, tp, dp, mbs[k] };
        }
    }
    if (pass == 0) {
      extra = at - n;
      if (!(all = realloc(*out, (size_t)(n + extra > 0 ? n + extra : 1) * sizeof *all))) {
        free(groups);
        return -1;
      }
      *out = all;
    }
  }
  free(groups);
  return n + extra;
}

static hp_err score(const hp_problem *p, sa_state *st, hp_diag *d)
{
  hp_eval e = {0};
  hp_err err = hp_evaluate(p, st->pl, &e, d);
  if (!err) {
    st->fits = e.feasible;
    st->cost = e.feasible ? e.iteration_time
                          : e.iteration_time * (2 + e.oom_bytes / e.cap[e.oom_device]);
  }
  hp_eval_release(&e);
  return err;
}

/* Rebuilds the plan of a state from its configuration and group order, then splits;
 * only splits whose DP figure is below `cutoff` are sought (INFINITY: any), which keeps
 * the DP's frontier small on deep models. */
static hp_err rebuild(const hp_problem *p, const hp_config *cfg, sa_state *st, double cutoff,
                      double deadline, const volatile sig_atomic_t *stop, long *work, hp_diag *d)
{
  hp_dp_opts o;
  int found = 0;
  double obj;
  hp_err err;
  hp_plan_destroy(&st->pl);
  if ((err = hp__plan_for(p, &cfg[st->ci], &st->pl, d))) return err;
  hp__place_groups(st->pl, st->groups, st->order);
  hp__dp_opts_init(&o);
  o.cutoff = cutoff;
  o.deadline = deadline;
  o.stop = stop;
  o.max_frontier = HP_DP_HEURISTIC_FRONTIER;
  if ((err = hp__dp_split(p, st->pl, &o, &found, &obj, work, d))) return err;
  if (!found) {                       /* nothing fits: an even split, recomputing */
    hp_plan_split_even(st->pl);
    for (int s = 0; s < st->pl->pp; s++) st->pl->recompute[s] = 1;
  }
  legalize(p, st->pl);
  return score(p, st, d);
}

/* Tells the progress observer, if any, where the annealing stands. */
static void report(const hp_limits *lim, const char *phase, long k, long moves, double t0,
                   const hp_result *out)
{
  hp_progress p;
  if (!lim->progress) return;
  p.solver = "SA";
  p.phase = phase;
  p.done = k < INT_MAX ? (int)k : INT_MAX;
  p.total = moves < INT_MAX ? (int)moves : INT_MAX;
  p.elapsed = hp__now() - t0;
  p.incumbent = out->plan ? out->objective : INFINITY;
  p.bound = NAN;                     /* annealing claims no bound */
  lim->progress(lim->progress_ctx, &p);
}

/* Another mode for one layer among the job's (for every layer under uniform_sharding),
 * or, with `slices` and a zdp layer to change, another slice count for one zdp layer. */
static void modes_move(const hp_problem *p, hp_plan *pl, int slices, hp_rng *rng)
{
  unsigned modes = hp_job_modes(&p->job);
  int L = pl->n_layers, list[HP_N_SHARD], n = 0, lg = 0, zl[64], nz = 0;
  while ((2 << lg) <= hp_job_max_slices(&p->job) && lg < 30) lg++;
  for (int l = 0; l < L && nz < 64; l++)
    if (pl->mode[l] == HP_SHARD_ZDP) zl[nz++] = l;
  if (slices && lg > 0 && nz > 0) {
    int l = zl[hp__rng_int(rng, nz)];
    pl->slices[l] = (unsigned char)((pl->slices[l] + 1 + hp__rng_int(rng, lg)) % (lg + 1));
    return;
  }
  int l = hp__rng_int(rng, L), m;
  for (int k = 0; k < HP_N_SHARD; k++)       /* the job's modes other than the layer's */
    if (modes >> k & 1u && k != pl->mode[l]) list[n++] = k;
  if (n == 0) return;
  m = list[hp__rng_int(rng, n)];
  for (int k = 0; k < L; k++)
    if (k == l || p->job.uniform_sharding) {
      pl->mode[k] = (unsigned char)m;
      pl->slices[k] = 0;
    }
}

static int config_index(const hp_config *cfg, int n, const hp_plan *pl)
{
  for (int i = 0; i < n; i++)
    if (cfg[i].pp == pl->pp && cfg[i].tp == pl->tp && cfg[i].dp == pl->dp && cfg[i].mbs == pl->mbs)
      return i;
  return 0;
}

static hp_err sa_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                       hp_result *out, hp_diag *d)
{
  int D = prob->cluster->n_devices;
  hp_config *cfg = NULL;
  int n = sa_configs(prob, &cfg);
  long moves = lim->max_work > 0 ? lim->max_work : SA_DEFAULT_MOVES;
  /* a default limit: each move runs a layer DP, which on deep pipelines of many layers
   * takes seconds */
  double t0 = hp__now(), deadline = t0 + (lim->time_limit > 0 ? lim->time_limit : SA_DEFAULT_SECONDS);
  long k = 0;
  sa_state cur = {0}, cand = {0};
  hp_result seed_res;
  hp_limits seed_lim = *lim;
  hp_rng rng;
  hp_err err = HP_OK;

  hp_result_init(&seed_res);
  cur.order = hp__calloc((size_t)D, sizeof *cur.order);
  cand.order = hp__calloc((size_t)D, sizeof *cand.order);
  cur.groups = hp__calloc((size_t)D, sizeof *cur.groups);
  cand.groups = hp__calloc((size_t)D, sizeof *cand.groups);
  if (n < 0 || !cur.groups || !cand.groups || !cur.order || !cand.order) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  out->space = HP_SPACE_RESTRICTED;
  snprintf(out->space_note, sizeof out->space_note, "simulated annealing over configuration, placement%s, "
           "sharding modes, slices and recompute", prob->job.idle_devices ? ", idle devices" : "");
  if (n == 0) { out->status = HP_SOL_INFEASIBLE; goto done; }
  hp__rng_seed(&rng, lim->seed);

  /* the start: the given plan, else the dp solver's */
  seed_lim.top = 1;
  seed_lim.keep_rejected = 0;
  seed_lim.progress = NULL;
  seed_lim.time_limit = (deadline - hp__now()) / 3;     /* the rest is the annealing's */
  if (start && hp_plan_validate(prob, start, NULL) == HP_OK) {
    hp_plan_copy(&seed_res.plan, start, d);
  } else if ((err = hp_solver_dp.solve(prob, NULL, &seed_lim, &seed_res, d))) {
    /* a start is only a start: without one (dp failed on this instance), a random
     * configuration; running out of memory stays an error */
    if (err == HP_NOMEM) goto done;
    hp_result_release(&seed_res);
    hp_result_init(&seed_res);
    err = HP_OK;
  }
  out->all_used_time = seed_res.all_used_time;   /* what dp met, where it started sa */
  /* a start cut short by its share of the time limit is part of this result's story */
  if (seed_res.stopped != HP_STOP_NONE && out->stopped == HP_STOP_NONE) out->stopped = seed_res.stopped;
  if (seed_res.plan) legalize(prob, seed_res.plan);
  if (seed_res.plan && hp_plan_validate(prob, seed_res.plan, NULL) == HP_OK) {
    int used = 0, placed = 1;
    cur.pl = seed_res.plan;
    seed_res.plan = NULL;
    cur.ci = config_index(cfg, n, cur.pl);
    /* recover the group order from the placement, the unused groups after the used;
     * a placement of other groups than hp__tp_groups_usable's starts from their own order */
    cur.ng = hp__tp_groups_usable(prob, cur.pl->tp, cur.groups);
    for (int g = 0; g < cur.ng; g++) cand.order[g] = 0;          /* used flags */
    for (int i = 0; i < cur.pl->pp * cur.pl->dp && placed; i++) {
      int at = -1;
      for (int g = 0; g < cur.ng; g++)
        if (cur.groups[g] == cur.pl->dev[i * cur.pl->tp] && !cand.order[g]) at = g;
      placed = at >= 0;
      if (placed) { cur.order[used++] = at; cand.order[at] = 1; }
    }
    for (int g = 0; g < cur.ng && placed; g++)
      if (!cand.order[g]) cur.order[used++] = g;
    if (!placed)
      for (int g = 0; g < cur.ng; g++) cur.order[g] = g;
    if ((err = score(prob, &cur, d))) goto done;
  } else {
    cur.ci = hp__rng_int(&rng, n);
    cur.ng = hp__tp_groups_usable(prob, cfg[cur.ci].tp, cur.groups);
    for (int i = 0; i < cur.ng; i++) cur.order[i] = i;
    if ((err = rebuild(prob, cfg, &cur, INFINITY, deadline, lim->stop, &out->work, d))) goto done;
  }
  if (cur.fits && (err = hp__score_offer(prob, lim, cur.pl, out, d))) goto done;

  for (k = 0; k < moves && !hp__should_stop(lim, deadline, out); k++) {
    double temp = SA_T0 * pow(SA_T1 / SA_T0, (double)k / (double)moves);
    /* a candidate this much worse is accepted with probability below e^-25: its split
     * need not be sought */
    double cutoff = isfinite(cur.cost) ? cur.cost * (1 + SA_REACH * temp) : INFINITY;
    int kind = hp__rng_int(&rng, 10), slots = cur.pl->pp * cur.pl->dp;
    cand.ci = cur.ci;
    cand.ng = cur.ng;
    memcpy(cand.order, cur.order, (size_t)cur.ng * sizeof *cur.order);
    memcpy(cand.groups, cur.groups, (size_t)cur.ng * sizeof *cur.groups);
    hp_plan_destroy(&cand.pl);
    if (kind < 4 && cur.ng > 1) {                         /* placement */
      hp__placement_move(cand.order, cand.ng, &rng);
      err = rebuild(prob, cfg, &cand, cutoff, deadline, lim->stop, &out->work, d);
    } else if (kind < 6) {                                /* configuration */
      cand.ci = hp__rng_int(&rng, n);
      if (cfg[cand.ci].tp != cfg[cur.ci].tp) {            /* new groups, Megatron order */
        cand.ng = hp__tp_groups_usable(prob, cfg[cand.ci].tp, cand.groups);
        for (int i = 0; i < cand.ng; i++) cand.order[i] = i;
      }
      err = rebuild(prob, cfg, &cand, cutoff, deadline, lim->stop, &out->work, d);
    } else if (kind == 8 && cur.ng > slots) {             /* a used group for an idle one */
      int i = hp__rng_int(&rng, slots), j = slots + hp__rng_int(&rng, cur.ng - slots), t;
      t = cand.order[i]; cand.order[i] = cand.order[j]; cand.order[j] = t;
      err = rebuild(prob, cfg, &cand, cutoff, deadline, lim->stop, &out->work, d);
    } else {                                              /* flags, boundaries kept */
      if ((err = hp_plan_copy(&cand.pl, cur.pl, d))) break;
      if (kind < 8 && cand.pl->dp > 1) {
        modes_move(prob, cand.pl, kind == 7, &rng);
      } else {
        int s = hp__rng_int(&rng, cand.pl->pp);
        cand.pl->recompute[s] = !cand.pl->recompute[s];
      }
      err = score(prob, &cand, d);
    }
    if (err) break;
    out->work++;
    double delta = cand.cost - cur.cost;
    if (delta <= 0 || hp__rng_unit(&rng) < exp(-delta / (temp * cur.cost))) {
      sa_state t = cur;
      cur = cand;
      cand = t;
      if (cur.fits && cur.cost < out->objective && (err = hp__score_offer(prob, lim, cur.pl, out, d)))
        break;
    }
    /* every move: one can take 0.1 s on a large cluster, and the observer throttles its
     * own lines (a fixed stride of moves left a slow machine with none in 5 s) */
    report(lim, "moves", k + 1, moves, t0, out);
  }
  if (!err) report(lim, "done", k, moves, t0, out);
done:
  free(cfg);
  free(cur.groups);
  free(cand.groups);
  free(cur.order);
  free(cand.order);
  hp_plan_destroy(&cur.pl);
  hp_plan_destroy(&cand.pl);
  hp_result_release(&seed_res);
  if (!err && !out->plan && out->status != HP_SOL_INFEASIBLE) out->status = HP_SOL_NONE;
  return err;
}

const hp_solver hp_solver_sa = {
  .name = "sa",
  .desc = "simulated annealing over configuration, placement (Pipette's moves), idle devices, "
          "sharding modes, slices and recompute, with the layer DP inside; starts from dp",
  .flags = 0,
  .solve = sa_solve,
};
