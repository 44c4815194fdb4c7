/* hp_eval.h -- the evaluator: the one implementation of cost-model.md (version 1.1).
 * Every solver's plan is re-scored by it; no solver reports its own figure. */
#ifndef HP_EVAL_H
#define HP_EVAL_H

#include "hp_plan.h"

#define HP_COST_MODEL_VERSION "1.1"

/* The evaluator's figures for one plan. Arrays are owned by the struct; release with
 * hp_eval_release. Index conventions: [s * dp + r] for per-slot figures, [s] per stage,
 * [r] per replica, [d] per device. */
typedef struct hp_eval {
  int pp, dp, n_devices;
  double iteration_time;   /* T, seconds */
  double pipeline_time;    /* max_r T[r] */
  double sync_time;        /* max_s sync[s] */
  double throughput;       /* samples/s */
  double mfu;              /* model FLOP utilisation against the summed peaks */
  int slowest_replica;     /* argmax_r T[r] (lowest on ties) */
  int slowest_stage;       /* argmax_s t[s, slowest_replica] */
  int sync_stage;          /* argmax_s sync[s] */
  double *compute;         /* [pp*dp] sum of layer times with recompute, no Z */
  double *gather;          /* [pp] Z[s], ZeRO-3 parameter gathering per micro-batch */
  double *stage_time;      /* [pp*dp] t[s, r] = compute + Z */
  double *handoff;         /* [pp*dp] e[s, r] (0 for the last stage) */
  double *replica_time;    /* [dp] T[r] */
  double *sync;            /* [pp] sync[s] */
  double *bdp;             /* [pp] Bdp[s], bytes/s (0 when dp = 1) */
  double *latdp;           /* [pp] */
  double *stage_mem;       /* [pp] M without res_k: states + gather + act + work, bytes */
  double *mem;             /* [n_devices] M of each device, bytes */
  double *cap;             /* [n_devices] capacity of each device, bytes */
  int feasible;            /* 1 if every device fits (M <= capacity) */
  int oom_device;          /* lowest device id that overflows, -1 if none */
  int oom_stage;           /* its stage */
  double oom_bytes;        /* its overflow, bytes */
} hp_eval;

void hp_eval_release(hp_eval *e);

/* Micro-batches in flight on stage s, as the memory model counts them: min(pp - s, gas)
 * for 1F1B, gas for GPipe (cost-model.md 4). */
long hp_inflight(const hp_plan *plan, int s);

/* Scores a plan. Validates it first (hp_plan_validate): an invalid plan returns
 * HP_PLAN. A plan that does not fit in memory is scored all the same and returns HP_OK
 * with e->feasible = 0. `e` must be zeroed or released before the call. */
hp_err hp_evaluate(const hp_problem *prob, const hp_plan *plan, hp_eval *e, hp_diag *d);

#endif
