/* result.c -- the outcome of a search as every layer sees it: status names, limits and
 * results, and the ranking a result keeps (the best fitting plans, and the fastest that
 * do not fit). Core data: the plan-file writer reads it, the solvers fill it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *hp_sol_status_name(hp_sol_status s)
{
  switch (s) {
  case HP_SOL_OPTIMAL: return "optimal";
  case HP_SOL_FEASIBLE: return "feasible";
  case HP_SOL_INFEASIBLE: return "infeasible";
  case HP_SOL_NOFIT: return "does-not-fit";
  case HP_SOL_NONE: break;
  }
  return "no-plan";
}

const char *hp_space_name(hp_space s)
{
  switch (s) {
  case HP_SPACE_RESTRICTED: return "restricted";
  case HP_SPACE_INCOMPLETE: return "incomplete";
  case HP_SPACE_FULL: break;
  }
  return "full";
}

const char *hp_stop_name(hp_stop s)
{
  switch (s) {
  case HP_STOP_TIME: return "time-limit";
  case HP_STOP_WORK: return "work-limit";
  case HP_STOP_INTERRUPT: return "interrupted";
  case HP_STOP_NONE: break;
  }
  return NULL;
}

void hp_limits_init(hp_limits *lim)
{
  memset(lim, 0, sizeof *lim);
  lim->seed = 1;
  lim->threads = 1;
  lim->gap = 1e-6;
  lim->top = 1;
  lim->memory_weight = HP_MEMORY_WEIGHT_DEFAULT;
}

void hp_result_init(hp_result *r)
{
  memset(r, 0, sizeof *r);
  r->bound = -INFINITY;
  r->objective = INFINITY;
  r->all_used_time = NAN;
}

int hp_result_proves_none_fits(const hp_result *r)
{
  return r->status == HP_SOL_INFEASIBLE && r->space == HP_SPACE_FULL && !r->plan;
}

char *hp_result_no_plan_text(const hp_result *r, char *buf, unsigned long n)
{
  const char *stop = hp_stop_name(r->stopped);
  if (hp_result_proves_none_fits(r))
    snprintf(buf, n, "no plan of the search space fits in memory (proved)");
  else if (r->status == HP_SOL_INFEASIBLE)
    snprintf(buf, n, "none of the plans this solver considers fits in memory (%s); not proved "
             "for the whole space: other plans may fit", r->space_note[0] ? r->space_note
             : "a restricted space");
  else if (stop)
    snprintf(buf, n, "none found before the search stopped (%s); not proved that none fits",
             stop);
  else if (r->space != HP_SPACE_FULL)
    snprintf(buf, n, "none found in the part of the space this solver searches (%s); not "
             "proved that none fits", r->space_note[0] ? r->space_note : hp_space_name(r->space));
  else
    snprintf(buf, n, "none found; not proved that none fits");
  return buf;
}

void hp_result_release(hp_result *r)
{
  if (!r) return;
  hp_plan_destroy(&r->plan);
  for (int i = 0; i < r->n_top; i++) hp_plan_destroy(&r->top[i].plan);
  for (int i = 0; i < r->n_rejected; i++) hp_plan_destroy(&r->rejected[i].plan);
  free(r->top);
  free(r->rejected);
  hp_eval_release(&r->eval);
  hp_result_init(r);
}

/* Inserts into a list sorted by time, then by hp_plan_compare, keeping at most k entries. */
static hp_err rank_insert(hp_ranked **list, int *n, int k, const hp_plan *pl,
                          const hp_eval *e, hp_diag *d)
{
  int at = *n;
  hp_plan *copy = NULL;
  hp_err err;
  if (k < 1) return HP_OK;
  while (at > 0 && ((*list)[at - 1].time > e->iteration_time ||
                    ((*list)[at - 1].time == e->iteration_time &&
                     hp_plan_compare((*list)[at - 1].plan, pl) > 0)))
    at--;
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
  /* !(a <= t): also when a is NAN, none yet */
  if (e->n_used == e->n_devices && !(r->all_used_time <= e->iteration_time))
    r->all_used_time = e->iteration_time;
  /* equal times: the lesser plan in hp_plan_compare's order, whatever the order met */
  if (e->iteration_time < r->objective ||
      (e->iteration_time == r->objective && r->plan && hp_plan_compare(plan, r->plan) < 0)) {
    hp_plan_destroy(&r->plan);
    if ((err = hp_plan_copy(&r->plan, plan, d))) return err;
    r->objective = e->iteration_time;
    r->status = HP_SOL_FEASIBLE;
  }
  return HP_OK;
}
