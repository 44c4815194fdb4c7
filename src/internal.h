/* internal.h -- helpers shared by the library's modules; never installed. */
#ifndef HP_INTERNAL_H
#define HP_INTERNAL_H

#include <stddef.h>

#include "hetplan/hetplan_solver.h"

/* calloc of n elements of size sz; NULL on overflow or failure. */
void *hp__calloc(size_t n, size_t sz);
/* strdup that accepts NULL (returns NULL). */
char *hp__strdup(const char *s);
/* The absolute path of an existing file (malloc'd); the path as given if it cannot be
 * resolved or names no regular file (a pipe); NULL only out of memory. */
char *hp__abs_path(const char *path);

/* A growing string for writers (SVG): printf-style appends; `failed` records running
 * out of memory once, after which appends do nothing. */
typedef struct hp_sb { char *s; size_t len, cap; int failed; } hp_sb;
void hp__sb_printf(hp_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends text with XML's special characters escaped. */
void hp__sb_xml(hp_sb *b, const char *text);

/* The measured points of one (kind, type, tp), sorted by mbs, duplicates resolved. */
struct hp_series {
  int shape;        /* 1: the shape model's estimates (hp_shape.h), not measurements */
  int n;
  int *mbs;
  double *seconds;
  /* measured memory (1.2), each over its own points; na, nw = 0 where none */
  int na, nw;
  int *amb, *wmb;
  double *aval, *wval;
};

/* Measured memory of layer l on type k at tp, one micro-batch of mbs (layer_time.c,
 * cost-model.md 1 and 7.20): sets *act and/or *work where the profile has them (and the
 * job's sequence_parallel is the profile's); returns 1 | 2 for which it set. */
int hp__measured_mem(const hp_problem *p, int l, int k, int tp, int mbs, double *act,
                     double *work);

static inline size_t hp__series_index(const hp_problem *p, int l, int k, int tp)
{
  return ((size_t)l * (size_t)p->cluster->n_types + (size_t)k) * (size_t)(p->max_tp + 1)
         + (size_t)tp;
}

#endif
