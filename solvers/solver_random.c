/* solver_random.c -- `random`: the best of N uniformly random valid plans (N = --max-work,
 * default 1000; seeded). A floor every search must beat. Modes are drawn from the job's
 * sharding list (one for all layers under uniform_sharding), slices of zdp layers among
 * 1, 2, .., max_slices; every device is used (no idle devices, even where the job allows
 * them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

#define RANDOM_DEFAULT_N 1000

/* Modes from the job's list, uniformly (one draw for all layers under uniform_sharding),
 * and each zdp layer's slice count uniformly among 1, 2, .., max_slices. */
static void random_sharding(const hp_problem *p, hp_plan *pl, hp_rng *rng)
{
  unsigned modes = hp_job_modes(&p->job);
  int list[HP_N_SHARD], n = 0, lg = 0, pick = 0;
  for (int m = 0; m < HP_N_SHARD; m++)
    if (modes >> m & 1u) list[n++] = m;
  while ((2 << lg) <= hp_job_max_slices(&p->job) && lg < 30) lg++;
  for (int l = 0; l < pl->n_layers; l++) {
    if (l == 0 || !p->job.uniform_sharding) pick = list[hp__rng_int(rng, n)];
    pl->mode[l] = (unsigned char)pick;
    pl->slices[l] = pick == HP_SHARD_ZDP ? (unsigned char)hp__rng_int(rng, lg + 1) : 0;
  }
}

hp_err hp__random_plan(const hp_problem *p, const hp_config *c, hp_rng *rng, hp_plan **out,
                       hp_diag *d)
{
  int L = p->model->n_layers, ng = p->cluster->n_devices / c->tp;
  int *groups = hp__calloc((size_t)ng, sizeof *groups), *order = hp__calloc((size_t)ng, sizeof *order);
  int *cuts = hp__calloc((size_t)L, sizeof *cuts);
  hp_err err = HP_OK;
  if (!groups || !order || !cuts) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  if ((err = hp__plan_for(p, c, out, d))) goto done;
  hp__tp_groups(p, c->tp, groups);
  for (int i = 0; i < ng; i++) order[i] = i;
  hp__shuffle(order, ng, rng);
  hp__place_groups(*out, groups, order);
  /* pp - 1 distinct cut positions among 1..L-1, in order */
  for (int i = 0; i < L - 1; i++) cuts[i] = i + 1;
  for (int i = 0; i < c->pp - 1; i++) {
    int j = i + hp__rng_int(rng, L - 1 - i), t = cuts[i];
    cuts[i] = cuts[j];
    cuts[j] = t;
  }
  (*out)->first[0] = 0;
  for (int s = 1; s < c->pp; s++) (*out)->first[s] = cuts[s - 1];
  for (int a = 1; a < c->pp; a++)          /* insertion sort of the pp - 1 cuts */
    for (int b = a; b > 1 && (*out)->first[b - 1] > (*out)->first[b]; b--) {
      int t = (*out)->first[b];
      (*out)->first[b] = (*out)->first[b - 1];
      (*out)->first[b - 1] = t;
    }
  for (int s = 0; s < c->pp; s++) (*out)->recompute[s] = (unsigned char)hp__rng_int(rng, 2);
  random_sharding(p, *out, rng);
done:
  free(groups);
  free(order);
  free(cuts);
  return err;
}

static hp_err random_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                           hp_result *out, hp_diag *d)
{
  hp_config *cfg = NULL;
  int n = hp__configs(prob, &cfg);
  long N = lim->max_work > 0 ? lim->max_work : RANDOM_DEFAULT_N;
  double deadline = lim->time_limit > 0 ? hp__now() + lim->time_limit : INFINITY;
  hp_rng rng;
  hp_err err = HP_OK;
  (void)start;
  if (n < 0) return hp_fail(d, HP_NOMEM, "out of memory");
  hp__rng_seed(&rng, lim->seed);
  for (long i = 0; i < N && n > 0 && !err && !hp__should_stop(lim, deadline, out); i++) {
    hp_plan *pl = NULL;
    if ((err = hp__random_plan(prob, &cfg[hp__rng_int(&rng, n)], &rng, &pl, d))) break;
    err = hp__score_offer(prob, lim, pl, out, d);
    out->work++;
    hp_plan_destroy(&pl);
  }
  free(cfg);
  out->space = HP_SPACE_RESTRICTED;
  snprintf(out->space_note, sizeof out->space_note, "best of %ld random plans (seed %lu)%s", out->work,
           lim->seed, prob->job.idle_devices ? "; every device used" : "");
  if (!err && !out->plan) out->status = n == 0 ? HP_SOL_INFEASIBLE : HP_SOL_NONE;
  return err;
}

const hp_solver hp_solver_random = {
  .name = "random",
  .desc = "best of N uniformly random valid plans (--max-work N, default 1000; --seed)",
  .flags = 0,
  .solve = random_solve,
};
