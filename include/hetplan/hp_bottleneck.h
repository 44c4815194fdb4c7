/* hp_bottleneck.h -- what a plan's iteration time is made of, and its largest part: the
 * bottleneck that `evaluate` and `report` name. */
#ifndef HP_BOTTLENECK_H
#define HP_BOTTLENECK_H

#include "hp_eval.h"

/* The evaluator's T = T[r*] + exposed reduction + step + all-gather (cost-model.md 3,
 * version 1.2) split, on the slowest replica r* and its steady-state stage s* (the
 * largest period c[s*, r*]), into terms that add up to T exactly:
 *   - the slowest stage: gas x its compute (layer times with recompute) on s*;
 *   - pipeline fill and drain: the other stages' compute, once each;
 *   - the hand-offs between stages in fill and drain: sum_s e[s, r*];
 *   - the gradient sync: max_s red[s] (end), or the part overlap leaves exposed;
 *   - the steady-state hand-offs: (gas - 1) x (c[s*, r*] - t[s*, r*]), half of each
 *     boundary s* sends over, paid with every micro-batch;
 *   - the ZeRO traffic per micro-batch: gas x (Z + Zr)[s*] and the other stages' once
 *     (ZeRO-3 gathering, zero2/zdp gradient scatter);
 *   - the optimizer step;
 *   - the weights' all-gather after the step (zero1, zero2).
 * (gas - 1) c* + sum_s t + sum_s e = T[r*], so the first, second, third, fifth and sixth
 * add up to the pipeline time. The bottleneck is the largest (the first of equals, in
 * this order). */
typedef enum {
  HP_BN_STAGE = 0,
  HP_BN_FILL,
  HP_BN_HANDOFF,
  HP_BN_SYNC,
  HP_BN_PERIOD,     /* steady-state hand-offs (1.2) */
  HP_BN_ZERO,       /* ZeRO gathering and scatter per micro-batch (1.2: scatter) */
  HP_BN_STEP,       /* the optimizer step (1.2) */
  HP_BN_ALLGATHER,  /* the weights' all-gather after the step (1.2) */
  HP_BN_COUNT
} hp_bn_kind;

typedef struct hp_bottleneck {
  hp_bn_kind kind;             /* the largest term */
  double term[HP_BN_COUNT];    /* each term, seconds; they sum to the iteration time */
  double share;                /* term[kind] / iteration time */
  int stage, replica;          /* s* and r* (HP_BN_SYNC: the sync's stage; HP_BN_ALLGATHER:
                                * the stage whose all-gather is longest) */
  long gas;
  /* the slowest stage's time per micro-batch t[s*, r*] and its parts, seconds: its
   * compute (recompute included, and that part alone), Z and Zr; and half of its
   * boundaries' hand-offs (c - t) */
  double stage_time, stage_compute, stage_recompute, stage_gather, stage_scatter;
  double stage_handoff;
  int sync_exposed;            /* 1: the sync term is what overlap leaves exposed, less
                                * than the stage's whole reduction */
} hp_bottleneck;

/* A short name of a term: "slowest stage", "pipeline fill and drain", "hand-offs between
 * stages", "gradient sync", "steady-state hand-offs", "ZeRO traffic per micro-batch",
 * "optimizer step", "all-gather after the step". */
const char *hp_bn_name(hp_bn_kind k);

/* Splits the evaluation `e` of `plan` (the same plan) into the terms above. */
void hp_bottleneck_find(const hp_plan *plan, const hp_eval *e, hp_bottleneck *b);

/* One line naming the bottleneck with its figures, e.g. "stage 1 of replica 1: 400.000 ms
 * per micro-batch x gas 4 = 1.600000 s, 86.3 % of the iteration". Writes at most n bytes
 * and returns buf. */
char *hp_bottleneck_describe(const hp_bottleneck *b, const hp_eval *e, char *buf, unsigned long n);

/* The sharding modes of stage s's layers as the cost model applies them (dp whenever
 * dp = 1, cost-model.md 7.1), in the order dp, zero1, zero2, zdp, joined by commas, a
 * zdp gathered in slices with its slice counts: "zero1", "dp,zdp(2 slices)",
 * "zdp(1-4 slices)". What evaluate, report and the pictures show of a stage. Writes at
 * most n bytes and returns buf. */
char *hp_stage_modes(const hp_plan *plan, int s, char *buf, unsigned long n);

#endif
