/* search.h -- pieces the search solvers share (internal): the layer-to-stage dynamic
 * program for a fixed configuration and placement, and the outer loop over the
 * configurations of cost-model.md section 5. */
#ifndef HP_SEARCH_H
#define HP_SEARCH_H

#include "../src/internal.h"

typedef struct hp_dp_opts {
  int allow_recompute;   /* a stage may recompute when it does not fit otherwise */
  int allow_zdp;         /* a stage may shard all its layers (ZeRO-3) when dp > 1 */
  int ignore_memory;     /* AMP as published: no memory model */
  /* Optional per-layer time override (seconds per micro-batch, before recompute), the
   * same for every device: AMP's averaged device speed. NULL: the evaluator's times. */
  const double *layer_time;
  /* Only splits whose DP objective is at most this are of interest (INFINITY: all);
   * the outer search passes its K-th best time so that hopeless configurations stop
   * early. */
  double cutoff;
} hp_dp_opts;

void hp__dp_opts_init(hp_dp_opts *o);

/* Chooses the stage boundaries of `plan` (its shape, mbs, gas, schedule and placement
 * set), and per stage the recompute flag and the sharding mode (all layers of a stage
 * share it), minimising (gas-1) max_s t_s + sum_s (t_s + e_s) + max_s sync_s, where
 * t_s, e_s are the slowest replica's stage and hand-off times. Exact over that space;
 * equal to the evaluator's T when the replicas of every stage are alike. Sets *found
 * to 0 (plan untouched) when no split fits in memory. *objective gets the DP's figure.
 * `work` (may be NULL) accumulates the frontier points created. */
hp_err hp__dp_split(const hp_problem *prob, hp_plan *plan, const hp_dp_opts *o,
                    int *found, double *objective, long *work, hp_diag *d);

/* The configurations (pp, tp, dp, mbs) of the search space, in a fixed order. */
typedef struct hp_config { int pp, tp, dp, mbs; } hp_config;
/* Allocates *out (free with free()); returns the count, or -1 out of memory. */
int hp__configs(const hp_problem *prob, hp_config **out);

#endif
