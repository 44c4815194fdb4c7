/* crosscheck.c -- the analytic-versus-simulated cross-check (hetplan validate): many
 * plans of a set-up, random ones and the dp solver's best, scored both ways; mean
 * absolute percentage error and Spearman's rank correlation. Both sides are the whole
 * iteration of cost model 1.2 (cost-model.md 6): pipeline, the reduction's exposed part,
 * the optimizer step and the weights' all-gather. Lives beside the solvers because it
 * draws its plans from them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

extern const hp_solver hp_solver_dp;

void hp_crosscheck_release(hp_crosscheck *c)
{
  if (!c) return;
  for (int i = 0; i < c->n; i++) hp_plan_destroy(&c->plans[i]);
  free(c->plans);
  free(c->analytic);
  free(c->simulated);
  *c = (hp_crosscheck){0};
}

typedef struct ranked { double v; int i; } ranked;

static int by_value(const void *a, const void *b)
{
  const ranked *x = a, *y = b;
  if (x->v != y->v) return x->v < y->v ? -1 : 1;
  return x->i - y->i;
}

static int ranks(const double *x, int n, double *r)
{
  ranked *k = hp__calloc((size_t)n, sizeof *k);
  if (!k) return -1;
  for (int i = 0; i < n; i++) k[i] = (ranked){ x[i], i };
  qsort(k, (size_t)n, sizeof *k, by_value);
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && k[j + 1].v == k[i].v) j++;
    for (int t = i; t <= j; t++) r[k[t].i] = (i + j) / 2.0 + 1;   /* mean rank of a tie */
    i = j + 1;
  }
  free(k);
  return 0;
}

double hp_spearman(const double *x, const double *y, int n)
{
  double *rx = hp__calloc((size_t)n, sizeof *rx), *ry = hp__calloc((size_t)n, sizeof *ry);
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0, rho = 0;
  if (n >= 2 && rx && ry && !ranks(x, n, rx) && !ranks(y, n, ry)) {
    for (int i = 0; i < n; i++) { mx += rx[i]; my += ry[i]; }
    mx /= n;
    my /= n;
    for (int i = 0; i < n; i++) {
      sxy += (rx[i] - mx) * (ry[i] - my);
      sxx += (rx[i] - mx) * (rx[i] - mx);
      syy += (ry[i] - my) * (ry[i] - my);
    }
    rho = sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0;
  }
  free(rx);
  free(ry);
  return rho;
}

static hp_err add(const hp_problem *p, hp_crosscheck *c, hp_plan *pl, hp_diag *d)
{
  hp_eval e = {0};
  hp_sim s = {0};
  hp_err err = hp_evaluate(p, pl, &e, d);
  if (!err) err = hp_simulate(p, pl, &s, d);
  if (!err) {
    /* hp_eval.h: pipeline_time + sync_time + step_time + gat_time; the simulation's last
     * event, after its own pipeline, reductions, steps and all-gathers (hp_sim.h) */
    c->analytic[c->n] = e.iteration_time;
    c->simulated[c->n] = s.iteration_time;
    c->plans[c->n++] = pl;
  } else {
    hp_plan_destroy(&pl);
  }
  hp_eval_release(&e);
  hp_sim_release(&s);
  return err;
}

hp_err hp_crosscheck_run(const hp_problem *prob, long samples, unsigned long seed,
                         hp_crosscheck *out, hp_diag *d)
{
  hp_config *cfg = NULL;
  int n = hp__configs(prob, &cfg), cap = (int)samples + 10;
  hp_limits lim;
  hp_result best;
  hp_rng rng;
  hp_err err = HP_OK;
  memset(out, 0, sizeof *out);
  hp_result_init(&best);
  out->analytic = hp__calloc((size_t)cap, sizeof(double));
  out->simulated = hp__calloc((size_t)cap, sizeof(double));
  out->plans = hp__calloc((size_t)cap, sizeof *out->plans);
  if (n < 0 || !out->analytic || !out->simulated || !out->plans) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    goto done;
  }
  if (n == 0) {
    err = hp_fail(d, HP_LIMIT, "validate: the search space is empty (no (pp, tp, dp, mbs) "
                  "divides the batch and the cluster)");
    goto done;
  }
  hp__rng_seed(&rng, seed);
  for (long i = 0; i < samples && !err; i++) {
    hp_plan *pl = NULL;
    if (!(err = hp__random_plan(prob, &cfg[hp__rng_int(&rng, n)], &rng, &pl, d)))
      err = add(prob, out, pl, d);
  }
  hp_limits_init(&lim);
  lim.top = 10;
  if (!err && !(err = hp_solver_dp.solve(prob, NULL, &lim, &best, d)))
    for (int i = 0; i < best.n_top && !err; i++) {
      hp_plan *pl = NULL;
      if (!(err = hp_plan_copy(&pl, best.top[i].plan, d))) err = add(prob, out, pl, d);
    }
  if (!err) {
    double worst = -1;
    for (int i = 0; i < out->n; i++) {
      double rel = fabs(out->analytic[i] - out->simulated[i]) / out->simulated[i];
      out->mape += rel;
      if (rel > worst) { worst = rel; out->worst = i; }
    }
    out->mape /= out->n > 0 ? out->n : 1;
    out->spearman = hp_spearman(out->analytic, out->simulated, out->n);
  }
done:
  free(cfg);
  hp_result_release(&best);
  if (err) hp_crosscheck_release(out);
  return err;
}
