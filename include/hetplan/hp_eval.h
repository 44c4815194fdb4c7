/* hp_eval.h -- the evaluator: the one implementation of cost-model.md (version 1.2).
 * Every solver's plan is re-scored by it; no solver reports its own figure. */
#ifndef HP_EVAL_H
#define HP_EVAL_H

#include "hp_plan.h"

#define HP_COST_MODEL_VERSION "1.2"

/* The evaluator's figures for one plan. Arrays are owned by the struct; release with
 * hp_eval_release. Index conventions: [s * dp + r] for per-slot figures, [s] per stage,
 * [r] per replica, [d] per device. The iteration time is
 *   iteration_time = pipeline_time + sync_time + step_time + gat_time
 * with sync_time the reduction's exposed part (all of max_s red[s] under grad_sync end). */
typedef struct hp_eval {
  int pp, dp, n_devices;
  double iteration_time;   /* T, seconds */
  double pipeline_time;    /* max_r T[r] */
  double sync_time;        /* the gradient reduction's part of T beyond the pipeline: max_s
                            * red[s] (end), or what overlap leaves exposed */
  double step_time;        /* the optimizer step: max over devices of U */
  double gat_time;         /* max_s gat[s], the weights' all-gather after the step */
  double throughput;       /* samples/s */
  double mfu;              /* model FLOP utilisation against the summed peaks of the
                            * devices the plan uses */
  int slowest_replica;     /* argmax_r T[r] (lowest on ties) */
  int slowest_stage;       /* argmax_s c[s, slowest_replica], the steady-state period */
  int sync_stage;          /* argmax_s red[s] (end), the stage whose exposed reduction is
                            * largest (overlap) */
  int step_device;         /* the device whose step is slowest, -1 if no step is charged */
  int n_used;              /* devices the plan uses; the others are idle */
  double *compute;         /* [pp*dp] sum of layer times with recompute, no Z, Zr */
  double *gather;          /* [pp] Z[s], ZeRO-3 parameter gathering per micro-batch */
  double *scatter;         /* [pp] Zr[s], zero2/zdp gradients reduce-scattered per micro-batch */
  double *stage_time;      /* [pp*dp] t[s, r] = compute + Z + Zr */
  double *backward;        /* [pp*dp] b[s, r], the backward part of one micro-batch */
  double *handoff;         /* [pp*dp] e[s, r] (0 for the last stage) */
  double *period;          /* [pp*dp] c[s, r] = t + (e[s-1] + e[s]) / 2 */
  double *handoff_bw;      /* [pp*dp] Bpp[s, r] after sharing, bytes/s (0 for the last stage) */
  double *replica_time;    /* [dp] T[r] */
  double *sync;            /* [pp] red[s], the reduction before the step */
  double *gat;             /* [pp] gat[s] */
  double *step;            /* [pp] the slowest step among the stage's devices, s */
  double *bdp;             /* [pp] Bdp[s], bytes/s (0 when dp = 1) */
  double *latdp;           /* [pp] */
  double *stage_mem;       /* [pp] M without res_k: states + gather + act + work, bytes, on
                            * the stage's first device (measured memory may differ by type) */
  double *mem_states, *mem_gather, *mem_act, *mem_work;   /* [pp] its parts */
  double *mem;             /* [n_devices] M of each device, bytes (0 for an idle device) */
  double *cap;             /* [n_devices] capacity of each device, bytes */
  unsigned char *idle;     /* [n_devices] 1 if no slot names the device */
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
