/* mip_search.c -- the outer loop of the MIP solvers: for every configuration and for the
 * Megatron-order placement and its stage mirror, build the exact MIP (formulation/),
 * start it from the layer DP's split (checked by the evaluator first), solve it with the
 * backend, decode and re-score the plan. The DP's plans are offered too and the MIPs are
 * solved in order of the DP's figure, so that a short time limit still gives dp's
 * quality. The bound reported is the least bound of all (configuration, placement) MIPs
 * when every one was solved: a proven lower bound over that space, which fixes the
 * placement to those two (the `space` string says so); none otherwise. Default time
 * limit 60 s. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

#define MIP_DEFAULT_SECONDS 60.0

static void place_mirror(hp_plan *pl)
{
  int per = pl->dp * pl->tp;
  for (int s = 0; s < pl->pp; s++)
    for (int i = 0; i < per; i++) pl->dev[(size_t)s * per + i] = (pl->pp - 1 - s) * per + i;
}

/* One (configuration, placement) to solve, ranked by the DP's figure. */
typedef struct job { int ci, variant; double dp_obj; } job;

static int by_dp(const void *a, const void *b)
{
  const job *x = a, *y = b;
  if (x->dp_obj != y->dp_obj) return x->dp_obj < y->dp_obj ? -1 : 1;
  if (x->ci != y->ci) return x->ci - y->ci;
  return x->variant - y->variant;
}

static hp_err template_plan(const hp_problem *prob, const hp_config *c, int variant,
                            hp_plan **pl, hp_diag *d)
{
  hp_err err = hp__plan_for(prob, c, pl, d);
  if (err) return err;
  if (variant == 0) hp_plan_place_in_order(*pl); else place_mirror(*pl);
  return HP_OK;
}

hp_err hp__mip_search(const hp_problem *prob, const hp_limits *lim, hp_mip_backend backend,
                      const char *name, hp_result *out, hp_diag *d)
{
  hp_config *cfg = NULL;
  int n = hp__configs(prob, &cfg), all_proved = 1, nj = 0;
  double budget = lim->time_limit > 0 ? lim->time_limit : MIP_DEFAULT_SECONDS;
  double deadline = hp__now() + budget, bound = INFINITY;
  job *jobs = n > 0 ? hp__calloc((size_t)n * 2, sizeof *jobs) : NULL;
  hp_err err = HP_OK;
  if (n < 0 || (n > 0 && !jobs)) { free(cfg); return hp_fail(d, HP_NOMEM, "out of memory"); }

  /* 1. the DP's split of every (configuration, placement): a start for its MIP, a plan
   *    for the result (so the MIP solver is never worse than dp), and the order */
  for (int i = 0; i < n && !err; i++)
    for (int variant = 0; variant < 2 && !err; variant++) {
      hp_plan *pl = NULL;
      hp_dp_opts o;
      int found = 0;
      double obj = INFINITY;
      if (variant == 1 && cfg[i].pp == 1) break;
      if ((err = template_plan(prob, &cfg[i], variant, &pl, d))) break;
      hp__dp_opts_init(&o);
      if (!(err = hp__dp_split(prob, pl, &o, &found, &obj, NULL, d)) && found)
        err = hp__score_offer(prob, lim, pl, out, d);
      jobs[nj++] = (job){ i, variant, found ? obj : INFINITY };
      hp_plan_destroy(&pl);
    }
  qsort(jobs, (size_t)nj, sizeof *jobs, by_dp);

  /* 2. the MIPs, most promising first, while time lasts */
  for (int k = 0; k < nj && !err; k++) {
    hp_plan *pl = NULL, *start = NULL;
    hp_mip *m = NULL;
    hp_mip_map map;
    hp_mip_solution sol = { HP_SOL_NONE, INFINITY, -INFINITY, NULL };
    double *x0 = NULL, left = deadline - hp__now();
    if (left <= 0) { all_proved = 0; bound = -INFINITY; break; }
    if ((err = template_plan(prob, &cfg[jobs[k].ci], jobs[k].variant, &pl, d))) break;
    if ((err = hp_mip_build(prob, pl, 1, &m, &map, d))) { hp_plan_destroy(&pl); break; }
    if (isfinite(jobs[k].dp_obj)) {          /* start from the DP's split if it fits */
      hp_dp_opts o;
      int found = 0;
      double obj;
      hp_eval e = {0};
      hp__dp_opts_init(&o);
      if (!(err = hp_plan_copy(&start, pl, d)) &&
          !(err = hp__dp_split(prob, start, &o, &found, &obj, NULL, d)) && found &&
          !(err = hp_evaluate(prob, start, &e, d)) && e.feasible &&
          (x0 = hp__calloc((size_t)m->n_cols, sizeof *x0)))
        hp_mip_encode(m, &map, start, x0);
      hp_eval_release(&e);
    }
    if (!err) err = backend(m, x0, lim, left, &sol, d);
    if (!err) {
      out->work++;
      if (sol.status == HP_SOL_OPTIMAL || sol.status == HP_SOL_FEASIBLE) {
        hp_mip_decode(&map, sol.x, pl);
        err = hp__score_offer(prob, lim, pl, out, d);
      }
      if (sol.status == HP_SOL_INFEASIBLE) sol.bound = INFINITY;
      if (sol.status != HP_SOL_OPTIMAL && sol.status != HP_SOL_INFEASIBLE) all_proved = 0;
      if (sol.bound < bound) bound = sol.bound;
    }
    free(sol.x);
    free(x0);
    hp_plan_destroy(&start);
    hp_mip_destroy(&m);
    hp_mip_map_release(&map);
    hp_plan_destroy(&pl);
  }
  free(cfg);
  free(jobs);
  snprintf(out->space, sizeof out->space, "%s MIP per configuration; placement: Megatron order "
           "and its stage mirror", name);
  if (err) return err;
  if (!all_proved) bound = -INFINITY;     /* a configuration left unsolved bounds nothing */
  if (out->plan) {
    out->bound = bound < out->objective ? bound : out->objective;
    out->status = all_proved ? HP_SOL_OPTIMAL : HP_SOL_FEASIBLE;
  } else {
    out->bound = bound;
    out->status = all_proved ? HP_SOL_INFEASIBLE : HP_SOL_NONE;
  }
  return HP_OK;
}
