/* test_pattern_team.c -- the pattern DP shared by a team (solvers/pattern_dp.c, issue
 * "Certificate v3", item 5): members that run one configuration's DP together, each making
 * the points of its share of every stage's targets and exchanging them at the stage's end,
 * end with the single process's result, field by field: bound, status flags, work, and
 * the sequence found. The team here is real: two or three threads of this process that
 * meet at barriers (the MPI team of cli/team.c does the same between processes). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"
#include "random_instance.h"

#define THR_MAX 3

/* A team of threads: reductions and gathers meet at a barrier, post, meet again, read,
 * and meet a third time before anyone may reuse what it posted. */
typedef struct thr_team {
  int size;
  pthread_barrier_t bar;
  pthread_mutex_t mu;
  long next[HP_TEAM_COUNTERS];
  double best;
  const double *v[THR_MAX];
  const void *bytes[THR_MAX];
  long n[THR_MAX];
  struct thr_member { struct thr_team *t; int rank; } m[THR_MAX];
  hp_team team[THR_MAX];
} thr_team;

static long thr_claim(void *ctx, int k)
{
  struct thr_member *m = ctx;
  pthread_mutex_lock(&m->t->mu);
  long v = m->t->next[k]++;
  pthread_mutex_unlock(&m->t->mu);
  return v;
}

static double thr_best(void *ctx, double mine)
{
  struct thr_member *m = ctx;
  pthread_mutex_lock(&m->t->mu);
  if (mine < m->t->best) m->t->best = mine;
  double v = m->t->best;
  pthread_mutex_unlock(&m->t->mu);
  return v;
}

static int thr_reduce(void *ctx, double *v, long n, hp_team_op op)
{
  struct thr_member *m = ctx;
  thr_team *t = m->t;
  double *out = malloc((size_t)n * sizeof *out + 1);
  t->v[m->rank] = v;
  t->n[m->rank] = n;
  pthread_barrier_wait(&t->bar);
  for (long i = 0; i < n && out; i++) {
    out[i] = op == HP_TEAM_SUM ? 0 : t->v[0][i];
    for (int r = 0; r < t->size; r++) {
      double x = t->v[r][i];
      if (t->n[r] != n) abort();       /* members disagree on the collective: a bug */
      out[i] = op == HP_TEAM_SUM ? out[i] + x : op == HP_TEAM_MIN ? (x < out[i] ? x : out[i])
                                                                   : (x > out[i] ? x : out[i]);
    }
  }
  pthread_barrier_wait(&t->bar);
  if (out) memcpy(v, out, (size_t)n * sizeof *v);
  free(out);
  pthread_barrier_wait(&t->bar);
  return out ? 0 : -1;
}

static int thr_gather(void *ctx, const void *mine, long n, void **all, long *len)
{
  struct thr_member *m = ctx;
  thr_team *t = m->t;
  long total = 0;
  t->bytes[m->rank] = mine;
  t->n[m->rank] = n;
  pthread_barrier_wait(&t->bar);
  for (int r = 0; r < t->size; r++) total += t->n[r];
  *all = malloc((size_t)total + 1);
  for (int r = 0, at = 0; r < t->size && *all; at += (int)t->n[r], r++) {
    len[r] = t->n[r];
    if (t->n[r] > 0) memcpy((char *)*all + at, t->bytes[r], (size_t)t->n[r]);
  }
  pthread_barrier_wait(&t->bar);
  return *all ? 0 : -1;
}

static void thr_init(thr_team *t, int size)
{
  memset(t, 0, sizeof *t);
  t->size = size;
  t->best = INFINITY;
  pthread_barrier_init(&t->bar, NULL, (unsigned)size);
  pthread_mutex_init(&t->mu, NULL);
  for (int r = 0; r < size; r++) {
    t->m[r] = (struct thr_member){ t, r };
    t->team[r] = (hp_team){ r, size, &t->m[r], thr_claim, thr_best, thr_reduce, thr_gather };
  }
}

static void thr_destroy(thr_team *t)
{
  pthread_barrier_destroy(&t->bar);
  pthread_mutex_destroy(&t->mu);
}

/* One member's run of the DP. */
typedef struct dp_job {
  const hp_problem *p;
  const hp_patterns *pt;
  hp_pat_opts o;
  hp_pat_result r;
  hp_err err;
} dp_job;

static void *dp_member(void *arg)
{
  dp_job *j = arg;
  hp_diag d = {0};
  j->err = hp__pattern_bound(j->p, j->pt, &j->o, &j->r, &d);
  return NULL;
}

static int eq(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* Field by field; 1 if the same. */
static int same_pat(const hp_pat_result *a, const hp_pat_result *b, int pp)
{
  if (a->done != b->done || a->exact != b->exact || a->sides != b->sides || a->partial != b->partial ||
      a->merged != b->merged || a->found != b->found || a->work != b->work)
    return 0;
  if (a->done && !eq(a->bound, b->bound)) return 0;
  if (!a->found) return 1;
  if (!eq(a->value, b->value) || !eq(a->kept, b->kept)) return 0;
  for (int q = 0; q < 4; q++)
    if (!eq(a->fig[q], b->fig[q])) return 0;
  for (int s = 0; s < pp; s++)
    if (a->first[s] != b->first[s] || a->kind[s] != b->kind[s] || a->rec[s] != b->rec[s]) return 0;
  return a->first[pp] == b->first[pp];
}

/* The DP of configuration c alone, then shared by 2 and 3 threads, under options o (its
 * team set here): every member's result is the single one. Counts the runs compared and
 * those whose sequence was found or whose frontiers merged; 1 if all were the same. */
static int same_shared(const hp_problem *p, const hp_classes *cl, const hp_config *c, hp_pat_opts o,
                       const char *what, int *runs, int *found, int *merged)
{
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_diag d = {0};
  dp_job solo;
  int ok = 1;
  if (hp__plan_for(p, c, &pl, &d) || hp_patterns_build(p, cl, pl, &pt, &d)) {
    hp_plan_destroy(&pl);
    return 1;                          /* no patterns (nothing to share) */
  }
  memset(&solo, 0, sizeof solo);
  solo.p = p;
  solo.pt = &pt;
  solo.o = o;
  solo.o.team = NULL;
  dp_member(&solo);
  for (int size = 2; size <= THR_MAX && solo.err == HP_OK; size++) {
    thr_team t;
    dp_job job[THR_MAX];
    pthread_t th[THR_MAX];
    thr_init(&t, size);
    for (int r = 0; r < size; r++) {
      memset(&job[r], 0, sizeof job[r]);
      job[r].p = p;
      job[r].pt = &pt;
      job[r].o = o;
      job[r].o.team = &t.team[r];
      pthread_create(&th[r], NULL, dp_member, &job[r]);
    }
    for (int r = 0; r < size; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < size; r++) {
      int same = job[r].err == HP_OK && same_pat(&solo.r, &job[r].r, c->pp);
      if (!same)
        fprintf(stderr, "  %s pp %d tp %d dp %d mbs %d (exact %d, frontier %d), member %d of %d: "
                "bound %.12g work %ld found %d, alone %.12g work %ld found %d\n", what, c->pp, c->tp,
                c->dp, c->mbs, o.exact, o.frontier, r, size, job[r].r.bound, job[r].r.work,
                job[r].r.found, solo.r.bound, solo.r.work, solo.r.found);
      ok &= same;
      hp__pat_result_release(&job[r].r);
    }
    thr_destroy(&t);
    (*runs)++;
  }
  *found += solo.r.found;
  *merged += solo.r.merged;
  if (solo.err != HP_OK) {
    fprintf(stderr, "  %s pp %d tp %d dp %d mbs %d: the DP alone failed: %s\n", what, c->pp, c->tp,
            c->dp, c->mbs, d.msg);
    ok = 0;
  }
  hp__pat_result_release(&solo.r);
  hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  return ok;
}

/* Every configuration of p under the DP's modes of `modes` (bit m): exact where it
 * chooses (0: -1), prices only (1: 0), frontiers of 2 points, which merge (2: the
 * order of insertion matters), and the count of ranks forced (3: three classes or more). */
static void every_config(const hp_problem *p, unsigned modes, const char *what, int *runs, int *found,
                         int *merged)
{
  hp_classes cl;
  hp_config *cfg = NULL;
  hp_diag d = {0};
  int n = hp__configs(p, &cfg);
  CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
  for (int i = 0; i < n; i++)
    for (int mode = 0; mode < 4; mode++) {
      hp_pat_opts o;
      if (!(modes >> mode & 1u)) continue;
      hp__pat_opts_init(&o);
      o.exact = mode == 1 ? 0 : -1;
      o.frontier = mode == 2 ? 2 : 0;
      o.count = mode == 3 ? HP_PAT_COUNT_RANKS : HP_PAT_COUNT_AUTO;
      CHECK(same_shared(p, &cl, &cfg[i], o, what, runs, found, merged));
    }
  free(cfg);
  hp_classes_release(&cl);
}

TEST(pattern_dp_shared_by_two_or_three_members_gives_the_single_result_on_random_instances)
{
  int runs = 0, found = 0, merged = 0, n = harness_count(40);
  for (unsigned long seed = 1; seed <= (unsigned long)n; seed++) {
    char what[256];
    /* three or four kinds, node sizes, matrices (the count per class, ranks, sides,
     * prices) and the two-class family (the exact count) in turn */
    hp_problem *p = seed % 2 ? ri_problem_kinds(seed, what, sizeof what) : ri_problem(seed, what, sizeof what);
    every_config(p, seed % 2 ? 15u : 7u, what, &runs, &found, &merged);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d shared runs compared, %d with a sequence found, %d merged\n", runs, found, merged);
  CHECK(runs > 4 * n);
  CHECK(found > 0);
  CHECK(merged > 0);                   /* the order of insertion was put to the test */
}

/* AMP's 16 GPUs, GPT-2 (two classes, the exact count over up to 16 stages; the prices,
 * a bisection of many runs there, are left to the random instances). */
TEST(pattern_dp_shared_by_two_or_three_members_gives_the_single_result_on_amp)
{
  hp_problem *p = fx_load("models/gpt2-amp.json", "models/amp-hetero.json", "models/gpt2-amp.profile.json", 32);
  int runs = 0, found = 0, merged = 0;
  every_config(p, 5u, "AMP", &runs, &found, &merged);
  fprintf(stderr, "  %d shared runs compared, %d with a sequence found, %d merged\n", runs, found, merged);
  CHECK(runs > 20);
  CHECK(found > 0);
  CHECK(merged > 0);
  hp_problem_destroy(&p);
}
