/* test_frontier.c -- the DPs' Pareto frontiers (solvers/frontier.h): dominance both
 * ways, the order the points keep, the cap's drop of the worst point, the merge into the
 * nearest one (figures and payload), and the pool's limit. */
#include <stdlib.h>

#include "harness.h"
#include "../../solvers/frontier.h"

typedef struct tpoint { double fig[3]; int tag; } tpoint;

static double sum(const void *ctx, const double *f)
{
  (void)ctx;
  return f[0] + f[1] + f[2];
}

/* Inserts (a, b, c) tagged `tag`; what hp__front_insert returned. */
static int put(hp_front *f, hp_fpool *p, const hp_front_rule *r, double a, double b, double c,
               int tag)
{
  tpoint t = { { a, b, c }, tag };
  return hp__front_insert(f, p, &t, r, 0);
}

/* The frontier's tags in order, as "1 2 3", of points whose tag follows nfig figures. */
static const char *tags_n(const hp_front *f, const hp_fpool *p, int nfig)
{
  static char s[256];
  size_t n = 0;
  s[0] = '\0';
  for (int i = 0; i < f->n && n < sizeof s - 12; i++)
    n += (size_t)snprintf(s + n, sizeof s - n, "%s%d", i ? " " : "",
                          *(const int *)((const double *)hp__fpool_at(p, f->ix[i]) + nfig));
  return s;
}

static const char *tags(const hp_front *f, const hp_fpool *p) { return tags_n(f, p, 3); }

static const tpoint *nth(const hp_front *f, const hp_fpool *p, int i)
{
  return hp__fpool_at(p, f->ix[i]);
}

TEST(frontier_keeps_the_points_no_other_dominates_in_their_order)
{
  hp_fpool p;
  hp_front f = { 0, 0, NULL };
  hp_front_rule r = { 0, HP_FRONT_DROP_WORST, sum, NULL, 3 };
  hp__fpool_init(&p, sizeof(tpoint), 2, 0);
  CHECK_INT(put(&f, &p, &r, 3, 3, 3, 1), HP_FRONT_ADDED);
  CHECK_INT(put(&f, &p, &r, 4, 4, 4, 2), HP_FRONT_REFUSED);   /* dominated */
  CHECK_INT(put(&f, &p, &r, 3, 3, 3, 3), HP_FRONT_REFUSED);   /* equal: the first stays */
  CHECK_INT(put(&f, &p, &r, 1, 5, 5, 4), HP_FRONT_ADDED);     /* better in one figure */
  CHECK_INT(put(&f, &p, &r, 9, 0, 9, 5), HP_FRONT_ADDED);
  CHECK(!strcmp(tags(&f, &p), "1 4 5"));
  CHECK_INT(p.n, 3);                                           /* refused: never pooled */
  /* (2, 2, 2) dominates 1 only; 4 and 5 keep their order, the newcomer comes last */
  CHECK_INT(put(&f, &p, &r, 2, 2, 2, 6), HP_FRONT_ADDED);
  CHECK(!strcmp(tags(&f, &p), "4 5 6"));
  /* one that dominates all leaves itself alone */
  CHECK_INT(put(&f, &p, &r, 0, 0, 0, 7), HP_FRONT_ADDED);
  CHECK(!strcmp(tags(&f, &p), "7"));
  CHECK_INT(p.n, 5);
  CHECK(p.cap >= 5);
  free(f.ix);
  hp__fpool_release(&p);
  CHECK(p.at == NULL && p.n == 0 && p.size == sizeof(tpoint));
}

TEST(frontier_at_its_cap_drops_the_worst_unless_the_newcomer_is_no_better)
{
  hp_fpool p;
  hp_front f = { 0, 0, NULL };
  hp_front_rule r = { 3, HP_FRONT_DROP_WORST, sum, NULL, 3 };
  hp__fpool_init(&p, sizeof(tpoint), 4, 0);
  CHECK_INT(put(&f, &p, &r, 1, 5, 5, 1), HP_FRONT_ADDED);   /* score 11 */
  CHECK_INT(put(&f, &p, &r, 5, 1, 1, 2), HP_FRONT_ADDED);   /* 7 */
  CHECK_INT(put(&f, &p, &r, 2, 6, 1, 3), HP_FRONT_ADDED);   /* 9 */
  /* full: 8 beats the worst (tag 1, 11), which goes; the last point takes its place */
  CHECK_INT(put(&f, &p, &r, 3, 2, 3, 4), HP_FRONT_ADDED);
  CHECK(!strcmp(tags(&f, &p), "3 2 4"));
  /* 9.5 is no better than the worst now (tag 3, 9): refused */
  CHECK_INT(put(&f, &p, &r, 0, 9, 0.5, 5), HP_FRONT_REFUSED);
  /* a tie with the worst is refused too */
  CHECK_INT(put(&f, &p, &r, 0, 8, 1, 6), HP_FRONT_REFUSED);
  CHECK(!strcmp(tags(&f, &p), "3 2 4"));
  CHECK_INT(p.n, 4);
  /* dominance comes first: a point that dominates one needs no room */
  CHECK_INT(put(&f, &p, &r, 2, 5, 1, 7), HP_FRONT_ADDED);
  CHECK(!strcmp(tags(&f, &p), "2 4 7"));
  free(f.ix);
  hp__fpool_release(&p);
}

TEST(frontier_at_its_cap_merges_into_the_nearest_point)
{
  hp_fpool p;
  hp_front f = { 0, 0, NULL };
  hp_front_rule r = { 2, HP_FRONT_MERGE, NULL, NULL, 3 };   /* no score: the sum, as sum() */
  const tpoint *m;
  hp__fpool_init(&p, sizeof(tpoint), 4, 0);
  CHECK_INT(put(&f, &p, &r, 1, 5, 5, 1), HP_FRONT_ADDED);
  CHECK_INT(put(&f, &p, &r, 5, 1, 1, 2), HP_FRONT_ADDED);
  /* (4, 2, 1): with tag 1 the least is (1, 2, 1), 11 - 4 = 7 lost; with tag 2 (4, 1, 1),
   * 7 - 6 = 1 lost: it merges with tag 2, whose payload it keeps */
  CHECK_INT(put(&f, &p, &r, 4, 2, 1, 3), HP_FRONT_MERGED);
  CHECK_INT(f.n, 2);
  CHECK_INT(nth(&f, &p, 0)->tag, 1);
  m = nth(&f, &p, 1);
  CHECK_INT(m->tag, 2);
  CHECK(m->fig[0] == 4 && m->fig[1] == 1 && m->fig[2] == 1);
  CHECK_INT(p.n, 3);                  /* a new point: the old one stays in the pool */
  /* a merged point then drops what it dominates: (0.5, 6, 6) merges with tag 1 into
   * (0.5, 5, 5); then (0, 1, 0) merges with one of them and dominates the other */
  CHECK_INT(put(&f, &p, &r, 0.5, 6, 6, 4), HP_FRONT_MERGED);
  CHECK(!strcmp(tags(&f, &p), "2 1"));
  CHECK_INT(put(&f, &p, &r, 0, 1, 0, 5), HP_FRONT_MERGED);
  CHECK_INT(f.n, 1);
  m = nth(&f, &p, 0);
  CHECK(m->fig[0] == 0 && m->fig[1] == 1 && m->fig[2] == 0);
  /* below the cap nothing merges */
  CHECK_INT(put(&f, &p, &r, 9, 0, 9, 6), HP_FRONT_ADDED);
  CHECK_INT(f.n, 2);
  free(f.ix);
  hp__fpool_release(&p);
}

TEST(frontier_pool_stops_at_its_limit)
{
  hp_fpool p;
  hp_front f = { 0, 0, NULL };
  hp_front_rule r = { 0, HP_FRONT_DROP_WORST, sum, NULL, 3 };
  hp__fpool_init(&p, sizeof(tpoint), 2, 4);
  for (int i = 0; i < 4; i++) CHECK_INT(put(&f, &p, &r, i, 9 - i, 0, i), HP_FRONT_ADDED);
  CHECK_INT(p.cap, 4);
  /* the next would double the capacity past 4 */
  CHECK_INT(put(&f, &p, &r, 4, 0.5, 0, 4), -1);
  CHECK_INT(p.n, 4);
  free(f.ix);
  hp__fpool_release(&p);
}

TEST(frontier_ties_go_to_the_earlier_point)
{
  hp_fpool p;
  hp_front f = { 0, 0, NULL };
  hp_front_rule drop = { 2, HP_FRONT_DROP_WORST, sum, NULL, 3 };
  hp_front_rule merge = { 2, HP_FRONT_MERGE, sum, NULL, 3 };
  const tpoint *m;
  hp__fpool_init(&p, sizeof(tpoint), 4, 0);
  /* two worst of score 4: the earlier goes */
  CHECK_INT(put(&f, &p, &drop, 1, 3, 0, 1), HP_FRONT_ADDED);
  CHECK_INT(put(&f, &p, &drop, 3, 1, 0, 2), HP_FRONT_ADDED);
  CHECK_INT(put(&f, &p, &drop, 0, 0, 3.5, 3), HP_FRONT_ADDED);
  CHECK(!strcmp(tags(&f, &p), "2 3"));
  free(f.ix);
  f = (hp_front){ 0, 0, NULL };
  /* (2, 2, 0) loses 1 merged with either: it merges with the earlier, (1, 2, 0) */
  CHECK_INT(put(&f, &p, &merge, 1, 3, 0, 1), HP_FRONT_ADDED);
  CHECK_INT(put(&f, &p, &merge, 3, 1, 0, 2), HP_FRONT_ADDED);
  CHECK_INT(put(&f, &p, &merge, 2, 2, 0, 3), HP_FRONT_MERGED);
  CHECK(!strcmp(tags(&f, &p), "2 1"));
  m = nth(&f, &p, 1);
  CHECK(m->fig[0] == 1 && m->fig[1] == 2 && m->fig[2] == 0);
  free(f.ix);
  hp__fpool_release(&p);
}

/* Four figures (the pattern DP's M, S, Q and U): a point better in the fourth alone stays,
 * one worse in it alone goes; a merge takes the least of all four; the score is their sum. */
typedef struct tpoint4 { double fig[4]; int tag; } tpoint4;

static int put4(hp_front *f, hp_fpool *p, const hp_front_rule *r, double a, double b, double c,
                double e, int tag)
{
  tpoint4 t = { { a, b, c, e }, tag };
  return hp__front_insert(f, p, &t, r, 0);
}

TEST(frontier_with_four_figures_compares_and_merges_all_four)
{
  hp_fpool p;
  hp_front f = { 0, 0, NULL };
  hp_front_rule r = { 2, HP_FRONT_MERGE, NULL, NULL, 4 };
  const tpoint4 *m;
  double fig[4] = { 1, 2, 3, 4 };
  CHECK_NEAR(hp__front_score(&r, fig), 10, 0);
  hp__fpool_init(&p, sizeof(tpoint4), 4, 0);
  CHECK_INT(put4(&f, &p, &r, 1, 1, 1, 5, 1), HP_FRONT_ADDED);
  CHECK_INT(put4(&f, &p, &r, 1, 1, 1, 6, 2), HP_FRONT_REFUSED);   /* worse in U alone */
  CHECK_INT(put4(&f, &p, &r, 1, 1, 1, 2, 3), HP_FRONT_ADDED);     /* better in U: 1 goes */
  CHECK(!strcmp(tags_n(&f, &p, 4), "3"));
  CHECK_INT(put4(&f, &p, &r, 0, 2, 1, 3, 4), HP_FRONT_ADDED);     /* trades M for S and U */
  /* at the cap: (2, 0, 1, 1), score 4, merges into the point whose merge loses least: with
   * 3 (score 5) the least is (1, 0, 1, 1), 2 lost; with 4 (score 6) (0, 0, 1, 1), 4 lost.
   * The merged point keeps 3's payload and comes in last */
  CHECK_INT(put4(&f, &p, &r, 2, 0, 1, 1, 5), HP_FRONT_MERGED);
  CHECK(!strcmp(tags_n(&f, &p, 4), "4 3"));
  m = hp__fpool_at(&p, f.ix[1]);
  CHECK(m->fig[0] == 1 && m->fig[1] == 0 && m->fig[2] == 1 && m->fig[3] == 1);
  free(f.ix);
  hp__fpool_release(&p);
}

/* Five figures (the pattern DP's P, frontier.h): the score holds the first four only, and
 * a point larger in P alone still dominates where its P plus the slack (the most a
 * completion adds to P before taking the maximum with M) stays at or below the other's M:
 * no completion can then tell them apart. */
typedef struct tpoint5 { double fig[5]; int tag; } tpoint5;

static int put5(hp_front *f, hp_fpool *p, const hp_front_rule *r, double m, double pf, double slack,
                int tag)
{
  tpoint5 t = { { m, 1, 1, 1, pf }, tag };
  return hp__front_insert(f, p, &t, r, slack);
}

TEST(frontier_with_five_figures_lets_the_fifth_pass_within_its_slack)
{
  hp_fpool p;
  hp_front f = { 0, 0, NULL };
  hp_front_rule r = { 8, HP_FRONT_MERGE, NULL, NULL, 5 };
  double fig[5] = { 1, 2, 3, 4, 100 };
  CHECK_NEAR(hp__front_score(&r, fig), 10, 0);
  hp__fpool_init(&p, sizeof(tpoint5), 4, 0);
  CHECK_INT(put5(&f, &p, &r, 10, 7, 2, 1), HP_FRONT_ADDED);
  CHECK_INT(put5(&f, &p, &r, 10, 4, 2, 2), HP_FRONT_REFUSED);   /* 7 + 2 <= 10 */
  CHECK_INT(put5(&f, &p, &r, 10, 4, 4, 3), HP_FRONT_ADDED);     /* 7 + 4 > 10: and less P */
  CHECK(!strcmp(tags_n(&f, &p, 5), "3"));
  CHECK_INT(put5(&f, &p, &r, 9, 8, 1, 4), HP_FRONT_ADDED);      /* 8 + 1 <= 10: drives out 3 */
  CHECK(!strcmp(tags_n(&f, &p, 5), "4"));
  CHECK_INT(put5(&f, &p, &r, 9, 9.5, 1, 5), HP_FRONT_REFUSED);  /* 4 has less P */
  CHECK_INT(put5(&f, &p, &r, 8, 9.5, 1, 6), HP_FRONT_ADDED);    /* 9.5 + 1 > 9: both stay */
  CHECK(!strcmp(tags_n(&f, &p, 5), "4 6"));
  free(f.ix);
  hp__fpool_release(&p);
}
