/* solver_pipette.c -- `pipette`: Pipette (Yim et al., DATE 2024): one pipeline stage per
 * server (pp = the node count, tp * dp = a node's GPUs), layers split uniformly, and the
 * worker-to-GPU mapping found by simulated annealing on the bandwidth matrix with
 * Pipette's moves: swap two TP groups, migrate one to another position, reverse a
 * segment. Pipette's acceptance takes a worse mapping with a probability that does not
 * depend on how much worse (here the temperature itself, cooled by 0.999 a move from
 * 1); the evaluator scores each mapping. --max-work sets the moves per configuration
 * (default 2000). Needs every node to have the same GPU count. Pipette models
 * replication only: every layer dp (or the job's one mode when its sharding list lacks
 * dp; no plan when the list has several modes and no dp), no slices, every device used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

#define PIPETTE_DEFAULT_MOVES 2000

/* Evaluator time of a placement, or +inf-like penalty when it does not fit. */
static hp_err score(const hp_problem *p, hp_plan *pl, const int *groups, const int *order,
                    double *t, int *fits, hp_diag *d)
{
  hp_eval e = {0};
  hp_err err;
  hp__place_groups(pl, groups, order);
  err = hp_evaluate(p, pl, &e, d);
  if (!err) {
    *fits = e.feasible;
    *t = e.feasible ? e.iteration_time : e.iteration_time * (1 + e.oom_bytes / e.cap[e.oom_device]) + 1e6;
  }
  hp_eval_release(&e);
  return err;
}

static hp_err pipette_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                            hp_result *out, hp_diag *d)
{
  const hp_cluster *c = prob->cluster;
  int G = c->nodes[0].gpus, N = c->n_nodes, D = c->n_devices;
  long moves = lim->max_work > 0 ? lim->max_work : PIPETTE_DEFAULT_MOVES;
  int *groups = NULL, *cur = NULL, *cand = NULL, *best = NULL, *mbs = NULL;
  double deadline = lim->time_limit > 0 ? hp__now() + lim->time_limit : INFINITY;
  int mode = hp__replicated_mode(prob);
  hp_rng rng;
  hp_err err = HP_OK;
  (void)start;
  if (mode < 0) {
    hp__baseline_no_mode(prob, "pipette", "dp on every layer", out);
    return HP_OK;
  }
  hp__baseline_space(out, "Pipette: one stage per server, uniform split, annealed placement", mode);
  for (int k = 1; k < N; k++)
    if (c->nodes[k].gpus != G)
      return hp_fail(d, HP_LIMIT, "pipette: one stage per server needs nodes of equal GPU "
                     "count ('%s' has %d, '%s' %d)", c->nodes[0].name, G, c->nodes[k].name,
                     c->nodes[k].gpus);
  if (N > prob->model->n_layers)
    return hp_fail(d, HP_LIMIT, "pipette: one stage per server needs at least %d layers, the "
                   "model has %d", N, prob->model->n_layers);
  groups = hp__calloc((size_t)D, sizeof *groups);
  cur = hp__calloc((size_t)D, sizeof *cur);
  cand = hp__calloc((size_t)D, sizeof *cand);
  best = hp__calloc((size_t)D, sizeof *best);
  mbs = hp__calloc(8192, sizeof *mbs);
  if (!groups || !cur || !cand || !best || !mbs) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  hp__rng_seed(&rng, lim->seed);
  for (int tp = 1; tp <= G && !err; tp++) {
    int dp = G / tp;
    if (G % tp || prob->job.gbs % dp) continue;
    int nm = hp_mbs_divisors(prob->job.gbs / dp, mbs, 8192);
    for (int im = 0; im < nm && im < 8192 && !err && !hp__should_stop(lim, deadline, out); im++) {
      hp_config cfg = { N, tp, dp, mbs[im] };
      hp_plan *pl = NULL;
      int ng, fits, cfits;
      double t_cur, t_c, temp = 1.0;
      if ((err = hp__plan_for(prob, &cfg, &pl, d))) break;
      hp_plan_split_even(pl);
      hp_plan_set_modes(pl, mode);
      ng = hp__tp_groups(prob, tp, groups);
      for (int i = 0; i < ng; i++) cur[i] = i;
      err = score(prob, pl, groups, cur, &t_cur, &fits, d);
      memcpy(best, cur, (size_t)ng * sizeof *cur);
      double t_best = t_cur;
      for (long k = 0; k < moves && !err && ng > 1 && !hp__should_stop(lim, deadline, out); k++) {
        memcpy(cand, cur, (size_t)ng * sizeof *cur);
        hp__placement_move(cand, ng, &rng);
        if ((err = score(prob, pl, groups, cand, &t_c, &cfits, d))) break;
        out->work++;
        if (t_c <= t_cur || hp__rng_unit(&rng) < temp) {
          memcpy(cur, cand, (size_t)ng * sizeof *cur);
          t_cur = t_c;
          if (t_c < t_best) { t_best = t_c; memcpy(best, cand, (size_t)ng * sizeof *cur); }
        }
        temp *= 0.999;
      }
      if (!err) {
        hp__place_groups(pl, groups, best);
        err = hp__score_offer(prob, lim, pl, out, d);
      }
      hp_plan_destroy(&pl);
    }
  }
done:
  free(groups);
  free(cur);
  free(cand);
  free(best);
  free(mbs);
  if (!err && !out->plan) out->status = HP_SOL_NONE;
  return err;
}

const hp_solver hp_solver_pipette = {
  .name = "pipette",
  .desc = "Pipette: one stage per server, uniform split, annealed placement on the bandwidth "
          "matrix (swap, migrate, reverse)",
  .flags = 0,
  .solve = pipette_solve,
};
