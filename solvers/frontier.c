/* frontier.c -- the Pareto frontiers of the DPs (frontier.h): the pool's and the lists'
 * allocation, out of the inline insertion's way. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "frontier.h"

void hp__fpool_init(hp_fpool *p, size_t size, long first_cap, long max)
{
  assert(size >= 3 * sizeof(double) && size <= HP_FRONT_MAX_POINT);
  memset(p, 0, sizeof *p);
  p->size = size;
  p->first_cap = first_cap;
  p->max = max;
}

void hp__fpool_release(hp_fpool *p)
{
  free(p->at);
  p->at = NULL;
  p->n = p->cap = 0;
}

int hp__fpool_grow(hp_fpool *p)
{
  long ncap = p->cap ? p->cap * 2 : p->first_cap;
  char *na;
  if (p->max > 0 && ncap > p->max) return -1;
  if (!(na = realloc(p->at, (size_t)ncap * p->size))) return -2;
  p->at = na;
  p->cap = ncap;
  return 0;
}

int hp__front_grow(hp_front *f)
{
  int ncap = f->cap ? f->cap * 2 : 4;
  int *nx = realloc(f->ix, (size_t)ncap * sizeof *nx);
  if (!nx) return -2;
  f->ix = nx;
  f->cap = ncap;
  return 0;
}
