/* internal.h -- helpers shared by the library's modules; never installed. */
#ifndef HP_INTERNAL_H
#define HP_INTERNAL_H

#include <stddef.h>

#include "hetplan/hetplan.h"

/* calloc of n elements of size sz; NULL on overflow or failure. */
void *hp__calloc(size_t n, size_t sz);
/* strdup that accepts NULL (returns NULL). */
char *hp__strdup(const char *s);

/* Monotonic wall clock, seconds. */
double hp__now(void);

/* The (pp, tp, dp) triples of the search space (cost-model.md section 5): pp*tp*dp = D,
 * tp divides every node's GPU count, pp <= n_layers. Writes up to `cap` triples into
 * `out` (3 ints each) and returns how many there are. */
int hp__degrees(const hp_problem *p, int *out, int cap);

/* The measured points of one (kind, type, tp), sorted by mbs, duplicates resolved. */
struct hp_series {
  int n;
  int *mbs;
  double *seconds;
};

static inline size_t hp__series_index(const hp_problem *p, int l, int k, int tp)
{
  return ((size_t)l * (size_t)p->cluster->n_types + (size_t)k) * (size_t)(p->max_tp + 1)
         + (size_t)tp;
}

#endif
