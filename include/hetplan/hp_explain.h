/* hp_explain.h -- when nothing fits: the nearest miss (the plan that comes closest to
 * fitting, its device, stage and shortfall) and the changes that would make a plan fit,
 * each checked by re-planning and re-scoring with the evaluator (solvers/explain.c,
 * docs/explain.md). */
#ifndef HP_EXPLAIN_H
#define HP_EXPLAIN_H

#include "hp_solver.h"

typedef enum {
  HP_FIX_SOLVER = 0,    /* a plan fits already: the solver that failed missed it */
  HP_FIX_LARGER_GPUS,   /* the short device types with more memory */
  HP_FIX_MORE_GPUS,     /* more nodes like the one holding the shortest device */
  HP_FIX_MARGIN,        /* no memory margin */
  HP_FIX_SCHEDULE       /* 1F1B instead of GPipe */
} hp_fix_kind;

/* A change, and what it gives. */
typedef struct hp_remedy {
  hp_fix_kind kind;
  char what[256];         /* the change in words */
  int fits;               /* 1: `plan` fits after the change (checked by the evaluator) */
  hp_problem *prob;       /* the changed problem `plan` is for (owned) */
  hp_plan *plan;          /* the best plan found after the change (owned), or NULL */
  double time;            /* its iteration time, seconds */
} hp_remedy;

#define HP_EXPLAIN_MAX 8

typedef struct hp_explain {
  int have_miss;          /* 0 only if the space has no configuration at all */
  hp_plan *miss;          /* the nearest miss (owned) */
  double miss_time;       /* its iteration time */
  int device, stage;      /* its device furthest over capacity, and that device's stage */
  double need, cap;       /* that device's memory and capacity, bytes */
  double short_bytes;     /* need - cap (<= 0: the nearest miss fits) */
  int n_short;            /* devices over capacity */
  char levers[320];       /* what the nearest miss already does to save memory */
  int n_remedies;
  hp_remedy remedies[HP_EXPLAIN_MAX];   /* changes that make a plan fit, checked */
  int n_tried;
  char tried[HP_EXPLAIN_MAX][256];      /* changes tried that were not enough */
} hp_explain;

/* Finds the nearest miss over every configuration (pp, tp, dp) of the space with
 * micro-batches of 1 (the least memory), the two fixed placements of the dp solver, and
 * per stage the recompute flag and ZeRO-3 sharding that take least memory, stage
 * boundaries chosen by an exact DP to minimise the largest shortfall. Then tries changes
 * (larger memory for the short types, more nodes, no margin, 1F1B), re-planning each with
 * the dp solver. Runs within lim->time_limit (<= 0: 60 s) and stops on lim->stop. `x` is
 * overwritten; release with hp_explain_release. */
hp_err hp_explain_infeasible(const hp_problem *prob, const hp_limits *lim, hp_explain *x,
                             hp_diag *d);
void hp_explain_release(hp_explain *x);

#endif
