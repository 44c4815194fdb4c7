/* mip_internal.h -- helpers the MIP builders share (formulation/ only): a row under
 * construction, and column and row adders with printf-style names. */
#ifndef HP_MIP_INTERNAL_H
#define HP_MIP_INTERNAL_H

#include "../src/internal.h"
#include "hetplan/hp_mip.h"

typedef struct rowb { int n, cap; int *idx; double *val; int failed; } rowb;

/* Adds v * x[col] to the row (nothing for col < 0 or v == 0). */
void hp__rb_add(rowb *r, int col, double v);
/* Adds the row to m with that sense and right-hand side, then empties r. */
void hp__rb_emit(hp_mip *m, rowb *r, char sense, double rhs, const char *fmt, ...)
  __attribute__((format(printf, 5, 6)));
/* Adds a column; returns its index, -1 out of memory (m->failed set). */
int hp__mip_col(hp_mip *m, double lb, double ub, int integer, double obj, const char *fmt, ...)
  __attribute__((format(printf, 6, 7)));

/* Row scaling: times in milliseconds, memory in GiB, so that coefficients stay O(1-1e3)
 * (bytes ~1e9 beside seconds ~1e-3 misled CBC's preprocessing). */
#define HP_MIP_MS 1e3
#define HP_MIP_GIB (1.0 / 1073741824.0)

/* The stage assignment u/x, per-stage recompute R and per-layer ZeRO-3 z with their
 * products v = x R and w = x z (exact at integer points): fills map (u, rec, zdp) and
 * x, v, w ([L * pp] columns, -1 where absent). z exists only when dp > 1 and allow_zdp
 * (the job's sharding list has zdp). */
hp_err hp__mip_stages(hp_mip *m, rowb *r, int L, int pp, int dp, int allow_recompute,
                      int allow_zdp, hp_mip_map *map, int *x, int *v, int *w);
/* y_s >= w_l_s for every l: whether stage s shards a layer (its gradients' reduce-scatter
 * then pays (dp-1) latdp per micro-batch, cost-model.md 3, 7.22). Continuous in [0, 1]:
 * at integer w the objective holds it at max_l w_l_s. -1 where no layer can shard. */
int hp__mip_any_sharded(hp_mip *m, rowb *r, int L, int pp, int s, const int *w);
/* The maxima of stage s's memory (gather buffer, recomputed activation, working memory)
 * as columns maxima[0..2] (-1 where absent) with their rows; *worst is the largest value
 * the stage's memory can take, GiB: a big-M for conditional rows. */
void hp__mip_memory_maxima(hp_mip *m, rowb *r, const hp_costs *tab, int s,
                           const hp_mip_map *map, const int *x, const int *v, const int *w,
                           int *maxima, double *worst);
/* Adds stage s's memory (GiB) to row r, for the caller to emit against a capacity. */
void hp__mip_memory_row(rowb *r, const hp_costs *tab, int s, const int *x, const int *v,
                        const int *w, const int *maxima);

#define rb_add hp__rb_add
#define rb_emit hp__rb_emit
#define col hp__mip_col

#endif
