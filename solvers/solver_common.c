/* solver_common.c -- what every solver shares: limits and results, status names, the
 * degree triples of the search space, and hp_solver_run, which times a solver and
 * re-scores its plan with the evaluator (a solver's own figure is never kept). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include "../src/internal.h"

double hp__now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *hp_sol_status_name(hp_sol_status s)
{
  switch (s) {
  case HP_SOL_OPTIMAL: return "optimal";
  case HP_SOL_FEASIBLE: return "feasible";
  case HP_SOL_INFEASIBLE: return "infeasible";
  case HP_SOL_NONE: break;
  }
  return "no-plan";
}

void hp_limits_init(hp_limits *lim)
{
  memset(lim, 0, sizeof *lim);
  lim->seed = 1;
  lim->threads = 1;
  lim->gap = 1e-6;
  lim->top = 1;
}

void hp_result_init(hp_result *r)
{
  memset(r, 0, sizeof *r);
  r->bound = -INFINITY;
  r->objective = INFINITY;
  strcpy(r->space, "full");
}

void hp_result_release(hp_result *r)
{
  if (!r) return;
  hp_plan_destroy(&r->plan);
  for (int i = 0; i < r->n_top; i++) hp_plan_destroy(&r->top[i].plan);
  for (int i = 0; i < r->n_rejected; i++) hp_plan_destroy(&r->rejected[i].plan);
  free(r->top);
  free(r->rejected);
  hp_result_init(r);
}

/* Inserts into a list sorted by time, keeping at most k entries. */
static hp_err rank_insert(hp_ranked **list, int *n, int k, const hp_plan *pl,
                          const hp_eval *e, hp_diag *d)
{
  int at = *n;
  hp_plan *copy = NULL;
  hp_err err;
  if (k < 1) return HP_OK;
  while (at > 0 && (*list)[at - 1].time > e->iteration_time) at--;
  if (at >= k) return HP_OK;
  if (!*list && !(*list = hp__calloc((size_t)k, sizeof **list)))
    return hp_fail(d, HP_NOMEM, "out of memory");
  if ((err = hp_plan_copy(&copy, pl, d))) return err;
  if (*n == k) hp_plan_destroy(&(*list)[--(*n)].plan);
  memmove(&(*list)[at + 1], &(*list)[at], (size_t)(*n - at) * sizeof **list);
  (*list)[at] = (hp_ranked){ copy, e->iteration_time, e->oom_device, e->oom_bytes };
  (*n)++;
  return HP_OK;
}

hp_err hp_result_offer(hp_result *r, const hp_limits *lim, const hp_plan *plan,
                       const hp_eval *e, hp_diag *d)
{
  int k = lim->top > 0 ? lim->top : 1;
  hp_err err;
  if (!e->feasible)
    return lim->keep_rejected ? rank_insert(&r->rejected, &r->n_rejected, k, plan, e, d) : HP_OK;
  if ((err = rank_insert(&r->top, &r->n_top, k, plan, e, d))) return err;
  if (e->iteration_time < r->objective) {
    hp_plan_destroy(&r->plan);
    if ((err = hp_plan_copy(&r->plan, plan, d))) return err;
    r->objective = e->iteration_time;
    r->status = HP_SOL_FEASIBLE;
  }
  return HP_OK;
}

int hp__degrees(const hp_problem *p, int *out, int cap)
{
  const hp_cluster *c = p->cluster;
  int D = c->n_devices, n = 0;
  for (int tp = 1; tp <= D; tp++) {
    int ok = D % tp == 0;
    for (int k = 0; ok && k < c->n_nodes; k++) ok = c->nodes[k].gpus % tp == 0;
    if (!ok) continue;
    for (int pp = 1; pp <= D / tp && pp <= p->model->n_layers; pp++) {
      if ((D / tp) % pp) continue;
      if (n < cap) {
        out[3 * n] = pp;
        out[3 * n + 1] = tp;
        out[3 * n + 2] = D / tp / pp;
      }
      n++;
    }
  }
  return n;
}

hp_err hp_solver_run(const hp_solver *s, const hp_problem *prob, const hp_plan *start,
                     const hp_limits *lim, hp_result *out, hp_diag *d)
{
  double t0 = hp__now();
  hp_err err;
  hp_result_init(out);
  err = s->solve(prob, start, lim, out, d);
  out->seconds = hp__now() - t0;
  if (err) {
    hp_result_release(out);
    return err;
  }
  if (out->plan) {
    hp_eval e = {0};
    err = hp_evaluate(prob, out->plan, &e, d);
    if (err) {
      char msg[sizeof d->msg];
      snprintf(msg, sizeof msg, "%s", d ? d->msg : "");
      hp_result_release(out);
      return hp_fail(d, HP_INTERNAL, "solver '%s' returned an invalid plan: %s", s->name, msg);
    }
    out->objective = e.iteration_time;
    out->fits = e.feasible;
    hp_eval_release(&e);
  }
  return HP_OK;
}
