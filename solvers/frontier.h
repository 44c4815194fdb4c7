/* frontier.h -- the Pareto frontiers of the DPs (internal; layer_dp.c and pattern_dp.c):
 * points with three to six figures to minimise, kept in one growing pool, and per state
 * the list of the points no other dominates. Past a cap a frontier either drops its least
 * promising point (the layer DP's heuristic cap) or merges the newcomer into its nearest
 * point, their componentwise least (the pattern DP's relaxation, still a bound).
 * Insertion is inline, here: the DPs insert in their innermost loops, where a call per
 * point cost the pattern DP 10 % of its time; frontier.c holds the rest. */
#ifndef HP_FRONTIER_H
#define HP_FRONTIER_H

#include <math.h>
#include <stddef.h>
#include <string.h>

/* The pool: points of `size` bytes, each beginning with its figures, a double[3] to [6]
 * (its first member, as the rule says); what follows (how the point was reached) is the
 * caller's. */
typedef struct hp_fpool {
  char *at;            /* [cap * size] */
  size_t size;
  long n, cap;
  long first_cap;      /* points of the first allocation; the capacity doubles after */
  long max;            /* the capacity may not grow past it (0: no limit) */
} hp_fpool;

#define HP_FRONT_MAX_POINT 64

/* An empty pool (nothing allocated). size is at most HP_FRONT_MAX_POINT bytes. */
void hp__fpool_init(hp_fpool *p, size_t size, long first_cap, long max);
/* Frees the points; the pool stays initialised and empty. */
void hp__fpool_release(hp_fpool *p);
/* Room for one more point: 0, or -1 if the capacity would pass max, -2 out of memory. */
int hp__fpool_grow(hp_fpool *p);

static inline void *hp__fpool_at(const hp_fpool *p, long i)
{
  return p->at + (size_t)i * p->size;
}

/* Copies pt into the pool; its index, or -1 if the capacity would pass max, -2 out of
 * memory. */
static inline long hp__fpool_push(hp_fpool *p, const void *pt)
{
  int e;
  if (p->n == p->cap && (e = hp__fpool_grow(p)) < 0) return e;
  memcpy(hp__fpool_at(p, p->n), pt, p->size);
  return p->n++;
}

/* A frontier: pool indices in the order their points came, none dominating another
 * (a point dominates another when no figure is larger). n = 0 empties it; free ix. */
typedef struct hp_front { int n, cap, *ix; } hp_front;

/* Room for one more index: 0, or -2 out of memory. */
int hp__front_grow(hp_front *f);

/* What a frontier does once it holds `cap` points and one more comes. */
typedef enum {
  HP_FRONT_DROP_WORST,  /* the point of the largest score goes, unless the newcomer's
                           score is no smaller: then the newcomer goes */
  HP_FRONT_MERGE        /* the newcomer merges into the point whose merge lowers the
                           score least: their componentwise least figures with that
                           point's payload, which then comes in as the newcomer */
} hp_front_full;

typedef struct hp_front_rule {
  int cap;             /* most points (0: no cap, and full is never used) */
  hp_front_full full;
  /* the DP's objective of a point's figures, nondecreasing in each; NULL: the sum of the
   * first four (a fifth figure is one the objective does not hold, only dominance) */
  double (*score)(const void *ctx, const double *fig);
  const void *ctx;
  int nfig;            /* figures a point has: 3 (also 0), 4, 5 or HP_FRONT_MAX_FIGS */
} hp_front_rule;
#define HP_FRONT_MAX_FIGS 6

static inline int hp__front_nfig(const hp_front_rule *rule)
{
  return rule->nfig >= 4 && rule->nfig <= HP_FRONT_MAX_FIGS ? rule->nfig : 3;
}

/* Whether x is no worse than v in every completion (x dominates v, or equals it): no
 * figure larger, except that a fifth and a sixth figure (the pattern DP's P and W, which a
 * completion only ever adds at most `slack` to and takes the maximum with the first) may
 * be larger where x[4] + slack <= v[0] (x[5] + slack <= v[0]). */
static inline int hp__front_le(const double *x, const double *v, int nf, double slack)
{
  if (!(x[0] <= v[0] && x[1] <= v[1] && x[2] <= v[2])) return 0;
  if (nf == 3) return 1;
  if (!(x[3] <= v[3] && (nf == 4 || x[4] <= v[4] || x[4] + slack <= v[0]))) return 0;
  return nf <= 5 || x[5] <= v[5] || x[5] + slack <= v[0];
}

/* What hp__front_insert did; negative: hp__fpool_push's -1 or -2. */
enum { HP_FRONT_ADDED = 0, HP_FRONT_REFUSED = 1, HP_FRONT_MERGED = 2 };

static inline const double *hp__front_fig(const hp_fpool *p, int i)
{
  return hp__fpool_at(p, i);
}

static inline double hp__front_score(const hp_front_rule *rule, const double *f)
{
  if (rule->score) return rule->score(rule->ctx, f);
  return f[0] + f[1] + f[2] + (hp__front_nfig(rule) > 3 ? f[3] : 0);
}

/* The merge that lowers the score least: the index in f of the point to merge with. */
static inline int hp__front_nearest(const hp_front *f, const hp_fpool *pool, const double *v,
                                    const hp_front_rule *rule)
{
  int best = 0, nf = hp__front_nfig(rule);
  double lost = INFINITY, sv = hp__front_score(rule, v);
  for (int i = 0; i < f->n; i++) {
    const double *x = hp__front_fig(pool, f->ix[i]);
    double least[HP_FRONT_MAX_FIGS] = {0};
    for (int q = 0; q < nf; q++) least[q] = fmin(x[q], v[q]);
    double l = fmax(hp__front_score(rule, x), sv) - hp__front_score(rule, least);
    if (l < lost) { lost = l; best = i; }
  }
  return best;
}

/* The index in f of the point of the largest score (the first of equals), and the score. */
static inline int hp__front_worst(const hp_front *f, const hp_fpool *pool,
                                  const hp_front_rule *rule, double *sw)
{
  int w = 0;
  *sw = hp__front_score(rule, hp__front_fig(pool, f->ix[0]));
  for (int i = 1; i < f->n; i++) {
    double si = hp__front_score(rule, hp__front_fig(pool, f->ix[i]));
    if (si > *sw) { w = i; *sw = si; }
  }
  return w;
}

/* Inserts pt (a point of the pool's size) into f unless a point of f dominates it;
 * drops the points it dominates (the others keep their order) and appends it, copied
 * into the pool. At the cap, first the merge (which the dominated test then sees), or
 * after that test the drop. Each step in the order the DPs had, so their frontiers keep
 * the same points in the same order. `slack`: hp__front_le's (0 with fewer than five
 * figures). */
static inline int hp__front_insert(hp_front *f, hp_fpool *pool, const void *pt,
                                   const hp_front_rule *rule, double slack)
{
  union { double align; unsigned char b[HP_FRONT_MAX_POINT]; } merged;
  const double *p = pt;
  int nf = hp__front_nfig(rule);
  double v[HP_FRONT_MAX_FIGS] = { p[0], p[1], p[2], nf > 3 ? p[3] : 0, nf > 4 ? p[4] : 0, nf > 5 ? p[5] : 0 };
  int w = 0, how = HP_FRONT_ADDED;
  long id;
  for (int i = 0; i < f->n; i++)
    if (hp__front_le(hp__front_fig(pool, f->ix[i]), v, nf, slack)) return HP_FRONT_REFUSED;
  if (rule->cap > 0 && f->n >= rule->cap && rule->full == HP_FRONT_MERGE) {
    int b = hp__front_nearest(f, pool, v, rule);
    const double *x = hp__front_fig(pool, f->ix[b]);
    memcpy(merged.b, x, pool->size);
    for (int q = 0; q < nf; q++) v[q] = fmin(x[q], v[q]);
    memcpy(merged.b, v, (size_t)nf * sizeof *v);
    pt = merged.b;
    f->ix[b] = f->ix[--f->n];                 /* the merged point replaces it */
    how = HP_FRONT_MERGED;
  }
  for (int i = 0; i < f->n; i++)
    if (!hp__front_le(v, hp__front_fig(pool, f->ix[i]), nf, slack)) f->ix[w++] = f->ix[i];
  f->n = w;
  if (rule->cap > 0 && f->n >= rule->cap && rule->full == HP_FRONT_DROP_WORST) {
    double sw;
    int b = hp__front_worst(f, pool, rule, &sw);
    if (hp__front_score(rule, v) >= sw) return HP_FRONT_REFUSED;
    f->ix[b] = f->ix[--f->n];
  }
  if ((id = hp__fpool_push(pool, pt)) < 0) return (int)id;
  if (f->n == f->cap && hp__front_grow(f) < 0) return -2;
  f->ix[f->n++] = (int)id;
  return how;
}

#endif
