/* test_certificate12.c -- the certificate (glpk, cbc) under cost model 1.2 against brute
 * force on tiny random instances that use the 1.2 inputs: sequence parallelism, gradient
 * reduction overlapped with the backward pass, an optimizer step (hbm on some types),
 * layers full recompute leaves alone (checkpointable false), up to three device types
 * and bandwidth matrices (ri_problem), and the job's sharding list and slices. Whatever
 * the list (with dp in it) and max_slices, it claims a bound: never above the least
 * evaluator time of any plan of the job's space, and where it says optimal its plan is
 * that optimum; on these tiny instances every run ends proved (the closing phase).
 * Tolerance: relative 1e-9 on every comparison (the evaluator's sums in another order;
 * the certificate's own HP_CERT_TOL decides "optimal" and is smaller). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"
#include "random_instance.h"

#define CERT12_TOL 1e-9

/* The 1.2 settings of instance `seed`, written into the problem (the evaluator and the
 * tables read them at use). `scope`: 0 sharding {dp, zdp}, 1 {dp}, 2 the default list,
 * 3 the default list with max_slices 2, 4 dp with zero1 or zero2 (or both). */
static void set_12(hp_problem *p, unsigned long seed, int scope, char *what, size_t n_what)
{
  hp_rng r;
  hp_model *m = (hp_model *)p->model;
  hp_cluster *c = (hp_cluster *)p->cluster;
  size_t len = strlen(what);
  hp__rng_seed(&r, seed * 104729 + 3);
  ri_cert_scope(p);                /* no slices, no idle devices (ri_problem may draw them) */
  p->job.sequence_parallel = hp__rng_int(&r, 2);
  p->job.grad_sync = hp__rng_int(&r, 2) ? HP_SYNC_OVERLAP : HP_SYNC_END;
  p->job.sharding = scope == 0 ? (1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP)
                  : scope == 1 ? 1u << HP_SHARD_DP
                  : scope == 4 ? 1u << HP_SHARD_DP | (unsigned)(1 + hp__rng_int(&r, 3)) << HP_SHARD_ZERO1
                  : 0;
  p->job.max_slices = scope == 3 ? 2 : 1;
  p->job.uniform_sharding = (scope == 0 || scope == 2) && hp__rng_int(&r, 4) == 0;
  for (int k = 0; k < c->n_types; k++)       /* 100-2000 GB/s, or none */
    c->types[k].hbm = hp__rng_int(&r, 3) ? (100 + 1900 * hp__rng_unit(&r)) * 1e9 : 0;
  for (int l = 0; l < m->n_layers; l++)      /* the first and last layers often not */
    m->layers[l].no_recompute = (l == 0 || l == m->n_layers - 1) ? hp__rng_int(&r, 2)
                                                                 : hp__rng_int(&r, 5) == 0;
  snprintf(what + len, n_what - len, "; sp %d, %s, sharding %s%s", p->job.sequence_parallel,
           p->job.grad_sync == HP_SYNC_OVERLAP ? "overlap" : "end",
           scope == 0 ? "dp,zdp" : scope == 1 ? "dp" : scope == 4 ? "dp+zero1/2" : "all",
           p->job.uniform_sharding ? " uniform" : "");
  if (scope == 3) snprintf(what + strlen(what), n_what - strlen(what), ", max_slices 2");
}

/* The least evaluator time over every plan of every configuration (ri_brute_config: every
 * placement, partition, recompute flag, mode of the job's list per layer and slices). */
static double brute_all(const hp_problem *p)
{
  hp_config *cfg = NULL;
  int n = hp__configs(p, &cfg);
  double best = INFINITY;
  for (int i = 0; i < n; i++) {
    double b = ri_brute_config(p, &cfg[i]);
    if (b < best) best = b;
  }
  free(cfg);
  return best;
}

/* Whether a plan under uniform_sharding takes one mode. */
static int uniform(const hp_plan *pl)
{
  for (int l = 1; l < pl->n_layers; l++)
    if (pl->mode[l] != pl->mode[0]) return 0;
  return 1;
}

TEST(certificate12_bound_never_above_brute_force_on_120_random_instances)
{
  const char *names[2] = { "glpk", "cbc" };
  int runs = 0, claimed = 0, optimal = 0, by_scope[5] = {0};
  for (unsigned long seed = 1201; seed < 1201 + (unsigned long)harness_count(120); seed++) {
    char what[512];
    int scope = (int)(seed % 5);
    hp_problem *p = ri_problem(seed, what, sizeof what);
    set_12(p, seed, scope, what, sizeof what);
    /* with uniform_sharding the brute force's mixed plans are refused: it stays exact */
    double bf = brute_all(p);
    for (int b = 0; b < 2; b++) {
      const hp_solver *s = hp_solver_find(names[b]);
      hp_limits lim;
      hp_result r;
      hp_diag d = {0};
      if (!s) continue;
      hp_limits_init(&lim);
      lim.time_limit = 20;
      if (hp_solver_run(s, p, NULL, &lim, &r, &d) != HP_OK) {
        fprintf(stderr, "  %s: %s: %s\n", what, names[b], d.msg);
        CHECK(0);
        continue;
      }
      runs++;
      if (r.plan) {                      /* its plan is a plan of the job's space */
        hp_eval e = {0};
        CHECK(hp_evaluate(p, r.plan, &e, &d) == HP_OK);
        CHECK_NEAR(e.iteration_time, r.objective, 1e-12 * r.objective);
        if (p->job.uniform_sharding) CHECK(uniform(r.plan));
        CHECK(r.objective >= bf * (1 - CERT12_TOL));
        hp_eval_release(&e);
      }
      {
        CHECK_INT(r.space, HP_SPACE_FULL);
        if (r.space == HP_SPACE_FULL) claimed++;
        if (!(r.bound <= bf * (1 + CERT12_TOL)))
          fprintf(stderr, "  %s: %s bound %.12g above the brute-force optimum %.12g\n", what,
                  names[b], r.bound, bf);
        CHECK(r.bound <= bf * (1 + CERT12_TOL));          /* sound */
        if (r.status == HP_SOL_INFEASIBLE) CHECK(isinf(bf));
        /* tiny: what the bounds leave open the closing phase enumerates, so every run
         * over the full space ends proved */
        if (r.space == HP_SPACE_FULL) {
          int proved = r.status == (isinf(bf) ? HP_SOL_INFEASIBLE : HP_SOL_OPTIMAL);
          if (!proved)
            fprintf(stderr, "  %s: %s ends %s (%s), brute force %.12g\n", what, names[b],
                    hp_sol_status_name(r.status), r.space_note, bf);
          CHECK(proved);
          by_scope[scope] += proved;
        }
        if (r.status == HP_SOL_OPTIMAL) {
          optimal++;
          if (fabs(r.objective - bf) > CERT12_TOL * bf)
            fprintf(stderr, "  %s: %s optimal %.12g, brute force %.12g\n", what, names[b], r.objective, bf);
          CHECK_NEAR(r.objective, bf, CERT12_TOL * bf);
        }
      }
      hp_result_release(&r);
    }
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d runs: %d claimed the full space, %d proved optimal; proved by scope "
          "(dp,zdp / dp / all / all + slices / dp + zero1,2): %d %d %d %d %d\n", runs, claimed,
          optimal, by_scope[0], by_scope[1], by_scope[2], by_scope[3], by_scope[4]);
  SKIP_UNLESS(runs > 0, "this build has no MIP backend");
  CHECK(claimed == runs && optimal > 0);
  for (int k = 0; k < 5; k++) CHECK(by_scope[k] > 0);
}

/* The one place that says what the certificate covers (hp__cert_scope). */
TEST(certificate12_scope_names_what_it_does_not_search)
{
  char what[512], note[160];
  hp_problem *p = ri_problem(7, what, sizeof what);
  ri_cert_scope(p);
  p->job.sharding = 0;                                  /* all four */
  CHECK_INT(hp__cert_scope(p, note, sizeof note), HP_CERT_FULL);
  p->job.sharding = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP;
  CHECK_INT(hp__cert_scope(p, note, sizeof note), HP_CERT_FULL);
  p->job.uniform_sharding = 1;                          /* mixed plans relax uniform ones */
  CHECK_INT(hp__cert_scope(p, note, sizeof note), HP_CERT_FULL);
  p->job.max_slices = 4;                                /* they only shrink the gather buffer */
  CHECK_INT(hp__cert_scope(p, note, sizeof note), HP_CERT_FULL);
  p->job.sharding = 1u << HP_SHARD_DP;                  /* slices need zdp */
  CHECK_INT(hp__cert_scope(p, note, sizeof note), HP_CERT_FULL);
  p->job.idle_devices = 1;                              /* every pp tp dp <= D is bounded */
  CHECK_INT(hp__cert_scope(p, note, sizeof note), HP_CERT_FULL);
  CHECK(note[0] == 0);
  p->job.idle_devices = 0;
  p->job.sharding = 1u << HP_SHARD_ZERO1;
  CHECK_INT(hp__cert_scope(p, note, sizeof note), HP_CERT_NONE);
  hp_problem_destroy(&p);
}
