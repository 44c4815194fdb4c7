/* hp_bottleneck.h -- what a plan's iteration time is made of, and its largest part: the
 * bottleneck that `evaluate` and `report` name. */
#ifndef HP_BOTTLENECK_H
#define HP_BOTTLENECK_H

#include "hp_eval.h"

/* The evaluator's T = max_r T[r] + max_s sync[s] split, on the slowest replica r*, into
 * four terms that add up to T exactly (cost-model.md section 3):
 *   - the slowest stage s*: gas x t[s*, r*] (every micro-batch passes through it);
 *   - pipeline fill and drain: sum over the other stages of t[s, r*] (one micro-batch each);
 *   - the hand-offs between stages: sum_s e[s, r*];
 *   - the gradient sync: max_s sync[s].
 * The bottleneck is the largest (the first of equals, in this order). */
typedef enum {
  HP_BN_STAGE = 0,
  HP_BN_FILL,
  HP_BN_HANDOFF,
  HP_BN_SYNC,
  HP_BN_COUNT
} hp_bn_kind;

typedef struct hp_bottleneck {
  hp_bn_kind kind;             /* the largest term */
  double term[HP_BN_COUNT];    /* each term, seconds; they sum to the iteration time */
  double share;                /* term[kind] / iteration time */
  int stage, replica;          /* s* and r* (for HP_BN_SYNC: stage is the sync's stage) */
  long gas;
  /* the slowest stage's time per micro-batch and its parts, seconds */
  double stage_time, stage_recompute, stage_gather;
} hp_bottleneck;

/* A short name of a term: "slowest stage", "pipeline fill and drain", "hand-offs",
 * "gradient sync". */
const char *hp_bn_name(hp_bn_kind k);

/* Splits the evaluation `e` of `plan` (the same plan) into the terms above. */
void hp_bottleneck_find(const hp_plan *plan, const hp_eval *e, hp_bottleneck *b);

/* One line naming the bottleneck with its figures, e.g. "stage 1 of replica 1: 400.000 ms
 * per micro-batch x gas 4 = 1.600000 s, 86.3 % of the iteration". Writes at most n bytes
 * and returns buf. */
char *hp_bottleneck_describe(const hp_bottleneck *b, const hp_eval *e, char *buf, unsigned long n);

#endif
