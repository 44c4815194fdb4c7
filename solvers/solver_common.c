/* solver_common.c -- what every solver shares: the clock, the degree triples of the
 * search space, the sharding rule of the baselines that model replication only, and
 * hp_solver_run, which times a solver and re-scores its plan with the evaluator (a
 * solver's own figure is never kept). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include "search.h"

double hp__now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int hp__stop_now(const volatile sig_atomic_t *stop, double deadline)
{
  return (stop && *stop) || hp__now() > deadline;
}

int hp__should_stop(const hp_limits *lim, double deadline, hp_result *out)
{
  hp_stop why = HP_STOP_NONE;
  if (lim->stop && *lim->stop) why = HP_STOP_INTERRUPT;
  else if (hp__now() > deadline) why = HP_STOP_TIME;
  if (why != HP_STOP_NONE && out->stopped == HP_STOP_NONE) out->stopped = why;
  return why != HP_STOP_NONE;
}

int hp__degrees(const hp_problem *p, int *out, int cap)
{
  return hp__degrees_kept(p, NULL, p->cluster->n_devices, out, cap);
}

int hp__degrees_kept(const hp_problem *p, const unsigned char *keep, int D, int *out, int cap)
{
  const hp_cluster *c = p->cluster;
  int n = 0;
  for (int tp = 1; tp <= D; tp++) {
    int ok = D % tp == 0;
    for (int k = 0; ok && k < c->n_nodes; k++) ok = (keep && !keep[k]) || c->nodes[k].gpus % tp == 0;
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

int hp__replicated_mode(const hp_problem *p)
{
  unsigned modes = hp_job_modes(&p->job);
  if (modes >> HP_SHARD_DP & 1u) return HP_SHARD_DP;
  if (modes & (modes - 1)) return -1;          /* several modes, none of them dp */
  for (int m = 0; m < HP_N_SHARD; m++)
    if (modes >> m & 1u) return m;
  return -1;
}

char *hp__modes_text(unsigned modes, char *buf, size_t n)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int m = 0; m < HP_N_SHARD; m++)
    if (modes >> m & 1u && len < n)
      len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "", hp_shard_name(m));
  return buf;
}

void hp__baseline_space(hp_result *out, const char *rule, int mode)
{
  out->space = HP_SPACE_RESTRICTED;
  snprintf(out->space_note, sizeof out->space_note, "%s; every layer %s, no slices, every device "
           "used", rule, hp_shard_name(mode));
}

void hp__baseline_no_mode(const hp_problem *p, const char *who, const char *writes,
                          hp_result *out)
{
  char list[64];
  out->status = HP_SOL_NONE;
  out->space = HP_SPACE_RESTRICTED;
  snprintf(out->space_note, sizeof out->space_note, "%s writes %s and the job's sharding list "
           "(%s) allows none of it", who, writes,
           hp__modes_text(hp_job_modes(&p->job), list, sizeof list));
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
    if (!e.feasible) out->status = HP_SOL_NOFIT;   /* whatever the solver believed */
    hp_eval_release(&out->eval);
    out->eval = e;                                 /* the result owns it now */
  }
  return HP_OK;
}
