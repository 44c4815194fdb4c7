/* test_mip_stop.c -- a MIP solve that the caller asks to stop (mip_child.c): stopped before
 * it starts or while it runs, each backend returns at once and claims nothing (no point,
 * no bound, no optimality, no infeasibility); not stopped, the solve in its child process
 * gives exactly what the solve in this process gives; a solve that dies in its child
 * process is an error that names the signal. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixtures.h"
#include "harness.h"
#include "../../solvers/search.h"

typedef struct backend { const char *name; hp_mip_backend fn; } backend;

/* The backends of this build; skips the test when there is none. */
static int backends(backend *be)
{
  int n = 0;
  (void)be;                          /* unused in a build without either backend */
#ifdef HP_HAVE_GLPK
  be[n++] = (backend){ "glpk", hp__glpk_solve_mip };
#endif
#ifdef HP_HAVE_CBC
  be[n++] = (backend){ "cbc", hp__cbc_solve_mip };
#endif
  SKIP_UNLESS(n > 0, "this build has no MIP backend (GLPK=0 CBC=0)");
  return n;
}

/* A market-split instance (Cornuejols and Dawande): m equality rows over n binaries with
 * weights in 0..99 and right-hand sides half their sums, each with a slack pair whose sum
 * is minimised. The LP bound is 0 and the integer optimum almost always above it, which
 * branch and bound proves only after minutes: a solve that runs until it is stopped. */
static hp_mip *market_split(int m, int n, unsigned seed)
{
  hp_mip *mip = NULL;
  hp_diag d = {0};
  int *idx = calloc((size_t)n + 2, sizeof *idx);
  double *val = calloc((size_t)n + 2, sizeof *val);
  char name[32];
  if (!idx || !val || hp_mip_create(&mip, &d) != HP_OK) { free(idx); free(val); return NULL; }
  for (int j = 0; j < n; j++) {
    snprintf(name, sizeof name, "x%d", j);
    hp_mip_add_col(mip, name, 0, 1, 1, 0);
  }
  for (int i = 0; i < m; i++) {
    snprintf(name, sizeof name, "sp%d", i);
    hp_mip_add_col(mip, name, 0, INFINITY, 0, 1);
    snprintf(name, sizeof name, "sm%d", i);
    hp_mip_add_col(mip, name, 0, INFINITY, 0, 1);
  }
  for (int i = 0; i < m; i++) {
    double sum = 0;
    for (int j = 0; j < n; j++) {
      seed = seed * 1103515245u + 12345u;
      idx[j] = j;
      val[j] = (double)((seed >> 16) % 100);
      sum += val[j];
    }
    idx[n] = n + 2 * i;
    val[n] = 1;
    idx[n + 1] = n + 2 * i + 1;
    val[n + 1] = -1;
    snprintf(name, sizeof name, "split%d", i);
    hp_mip_add_row(mip, name, n + 2, idx, val, 'E', floor(sum / 2));
  }
  free(idx);
  free(val);
  return mip;
}

/* A small knapsack the backends solve at once: max value within the weight. */
static hp_mip *knapsack(void)
{
  static const double w[8] = { 12, 7, 11, 8, 9, 6, 14, 5 }, v[8] = { 24, 13, 23, 15, 16, 11, 30, 9 };
  hp_mip *mip = NULL;
  hp_diag d = {0};
  int idx[8];
  char name[16];
  if (hp_mip_create(&mip, &d) != HP_OK) return NULL;
  for (int j = 0; j < 8; j++) {
    snprintf(name, sizeof name, "k%d", j);
    hp_mip_add_col(mip, name, 0, 1, 1, -v[j]);
    idx[j] = j;
  }
  hp_mip_add_row(mip, "weight", 8, idx, w, 'L', 30);
  return mip;
}

typedef struct stopper { volatile sig_atomic_t *flag; double after; } stopper;

static void *stop_later(void *arg)
{
  stopper *s = arg;
  struct timespec ts = { (time_t)s->after, (long)((s->after - floor(s->after)) * 1e9) };
  nanosleep(&ts, NULL);
  *s->flag = 1;
  return NULL;
}

static int claims_nothing(const hp_mip_solution *s)
{
  return s->status == HP_SOL_NONE && !s->x && s->bound == -INFINITY;
}

TEST(mip_solve_stopped_before_it_starts_claims_nothing)
{
  backend be[2];
  int n = backends(be);
  hp_mip *m = market_split(4, 30, 7);
  CHECK(m != NULL);
  for (int b = 0; b < n; b++) {
    static volatile sig_atomic_t flag;
    hp_mip_solution sol = { HP_SOL_OPTIMAL, 0, 0, NULL };
    hp_limits lim;
    hp_diag d = {0};
    double t0 = hp__now();
    hp_limits_init(&lim);
    flag = 1;
    lim.stop = &flag;
    CHECK_INT(be[b].fn(m, NULL, &lim, 60, INFINITY, &sol, &d), HP_OK);
    CHECK(hp__now() - t0 < 0.1);
    CHECK(claims_nothing(&sol));
  }
  hp_mip_destroy(&m);
}

/* Stopped 0.3 s into a solve that would run its 60 s: back within a second, claiming
 * nothing (CBC was in its root heuristics or its tree, GLPK in its simplex or its tree). */
TEST(mip_solve_stopped_while_it_runs_returns_at_once_and_claims_nothing)
{
  backend be[2];
  int n = backends(be);
  hp_mip *m = market_split(5, 40, 11);
  CHECK(m != NULL);
  for (int b = 0; b < n; b++) {
    static volatile sig_atomic_t flag;
    hp_mip_solution sol = { HP_SOL_OPTIMAL, 0, 0, NULL };
    hp_limits lim;
    hp_diag d = {0};
    stopper st = { &flag, 0.3 };
    pthread_t th;
    double t0, took;
    hp_limits_init(&lim);
    flag = 0;
    lim.stop = &flag;
    t0 = hp__now();
    CHECK(pthread_create(&th, NULL, stop_later, &st) == 0);
    hp_err err = be[b].fn(m, NULL, &lim, 60, INFINITY, &sol, &d);
    took = hp__now() - t0;
    pthread_join(th, NULL);
    CHECK_INT(err, HP_OK);
    if (took < 0.3) harness_fail(__FILE__, __LINE__, "%s solved the instance in %.3f s: it "
                                 "was not stopped", be[b].name, took);
    CHECK(took >= 0.3);
    if (took > 1.3) harness_fail(__FILE__, __LINE__, "%s took %.3f s to stop", be[b].name, took - 0.3);
    CHECK(took <= 1.3);
    CHECK(claims_nothing(&sol));
    free(sol.x);
  }
  hp_mip_destroy(&m);
}

/* Not stopped: the child's solve is the solve of this process, to the last bit. */
TEST(mip_solve_in_a_child_process_equals_the_solve_here)
{
  backend be[2];
  int n = backends(be);
  hp_mip *m = knapsack();
  CHECK(m != NULL);
  for (int b = 0; b < n; b++) {
    static volatile sig_atomic_t flag;
    hp_mip_solution here = { HP_SOL_NONE, INFINITY, -INFINITY, NULL }, child = here;
    hp_limits lim;
    hp_diag d = {0};
    hp_limits_init(&lim);
    CHECK_INT(be[b].fn(m, NULL, &lim, 10, INFINITY, &here, &d), HP_OK);   /* no stop flag */
    flag = 0;
    lim.stop = &flag;
    CHECK_INT(be[b].fn(m, NULL, &lim, 10, INFINITY, &child, &d), HP_OK);
    CHECK_INT(here.status, HP_SOL_OPTIMAL);
    CHECK_INT(child.status, here.status);
    CHECK(child.obj == here.obj);
    CHECK(child.bound == here.bound);
    CHECK(here.x && child.x);
    for (int j = 0; j < m->n_cols; j++) CHECK(child.x[j] == here.x[j]);
    CHECK_NEAR(here.obj, -62, 1e-9);    /* items 2, 6 and 7, as every subset says */
    free(here.x);
    free(child.x);
  }
  hp_mip_destroy(&m);
}

/* A backend that fails inside (as GLPK's simplex does when it asserts on a program):
 * hp__pattern_mip takes nothing of it, keeps the DP's bound, marks the configuration
 * open (as on a disagreement) and lets the search go on (HP_OK), with a warning. */
static hp_err failing_backend(const hp_mip *m, const double *start, const hp_limits *lim,
                              double seconds, double cutoff, hp_mip_solution *out, hp_diag *d)
{
  (void)m; (void)start; (void)lim; (void)seconds; (void)cutoff; (void)out;
  return hp_fail(d, HP_BACKEND, "stand-in: internal error");
}

static void count_warning(void *ctx, const char *msg)
{
  (void)msg;
  ++*(int *)ctx;
}

TEST(a_backend_failing_inside_leaves_the_dp_bound_unchecked_and_the_search_going)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_config c = { 2, 1, 2, 1 };
  hp_cfg_bound b = { .done = 1, .bound = 0.5, .exact = 1 };
  hp_result out;
  hp_limits lim;
  int disagree = 0, warned = 0;
  hp_diag d = { 0 };
  d.warn = count_warning;
  d.warn_ctx = &warned;
  hp_limits_init(&lim);
  hp_result_init(&out);
  CHECK_INT(hp__pattern_mip(p, &c, failing_backend, &lim, 1, INFINITY, hp__now() + 5, &out, &b,
                            &disagree, &d), HP_OK);
  CHECK_INT(disagree, 1);
  CHECK_NEAR(b.bound, 0.5, 0);
  CHECK(!out.plan);
  CHECK_INT(warned, 1);
  hp_result_release(&out);
  hp_problem_destroy(&p);
}

/* A backend phase that never looks at its clock (as GLPK's simplex): the child running it
 * is killed a little past the seconds it was given (0.25 s of grace below 5 s), the solve
 * claims nothing, and the caller is back in well under the stand-in's 30 s. */
static hp_err clockless_backend(const hp_mip *m, const double *start, const hp_limits *lim,
                                double seconds, double cutoff, hp_mip_solution *out, hp_diag *d)
{
  (void)m; (void)start; (void)lim; (void)seconds; (void)cutoff; (void)d;
  sleep(30);
  out->status = HP_SOL_OPTIMAL;
  out->obj = out->bound = 0;
  return HP_OK;
}

TEST(mip_solve_past_its_seconds_is_killed_and_claims_nothing)
{
  static volatile sig_atomic_t flag;
  hp_mip *m = market_split(2, 4, 3);
  hp_mip_solution sol = { HP_SOL_OPTIMAL, 0, 0, NULL };
  hp_limits lim;
  hp_diag d = {0};
  double t0, took;
  CHECK(m != NULL);
  hp_limits_init(&lim);
  flag = 0;
  lim.stop = &flag;
  t0 = hp__now();
  CHECK_INT(hp__mip_solve_stoppable(clockless_backend, "stand-in", m, NULL, &lim, 0.5, INFINITY,
                                    &sol, &d), HP_OK);
  took = hp__now() - t0;
  CHECK(took >= 0.5);
  if (took > 2.0) harness_fail(__FILE__, __LINE__, "the stand-in ran %.3f s past 0.5 s", took);
  CHECK(took <= 2.0);
  CHECK(claims_nothing(&sol));
  hp_mip_destroy(&m);
}

/* A backend that dies inside its solve, as CBC 2.10.8 aborts on an assertion of Clp on
 * some programs (solver_cbc.c). */
static hp_err dying_backend(const hp_mip *m, const double *start, const hp_limits *lim,
                            double seconds, double cutoff, hp_mip_solution *out, hp_diag *d)
{
  (void)m; (void)start; (void)lim; (void)seconds; (void)cutoff; (void)out; (void)d;
  signal(SIGABRT, SIG_DFL);
  abort();
}

/* Under a stop flag the solve runs in a child process: one that dies there is the solve's
 * error, naming the signal, claiming nothing, and the caller goes on. */
TEST(mip_solve_whose_process_dies_is_a_backend_error_naming_the_signal)
{
  static volatile sig_atomic_t flag;
  hp_mip *m = knapsack();
  hp_mip_solution sol = { HP_SOL_OPTIMAL, 0, 0, NULL };
  hp_limits lim;
  hp_diag d = {0};
  CHECK(m != NULL);
  hp_limits_init(&lim);
  flag = 0;
  lim.stop = &flag;
  CHECK_INT(hp__mip_solve_stoppable(dying_backend, "dying", m, NULL, &lim, 10, INFINITY, &sol, &d),
            HP_BACKEND);
  CHECK(strstr(d.msg, "dying: its solve ended on signal 6") != NULL);
  CHECK(claims_nothing(&sol));
  hp_mip_destroy(&m);
}
