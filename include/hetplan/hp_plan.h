/* hp_plan.h -- a plan (cost-model.md section 2): degrees, micro-batch size, stages as
 * contiguous layer runs, the slot-to-device placement, per-layer sharding and per-stage
 * recompute. */
#ifndef HP_PLAN_H
#define HP_PLAN_H

#include "hp_problem.h"

typedef struct hp_plan {
  int pp, tp, dp;
  int mbs;
  long gas;              /* gbs / (dp * mbs) */
  hp_schedule schedule;
  int n_layers;
  int *first;            /* [pp + 1] first layer of each stage; first[pp] = n_layers */
  unsigned char *recompute;  /* [pp] */
  int *dev;              /* [pp * dp * tp] device of slot (s, r, j) at HP_SLOT(plan, s, r, j);
                          * devices no slot names are idle (job.idle_devices) */
  unsigned char *mode;   /* [n_layers] sharding mode of each layer, an hp_shard */
  unsigned char *slices; /* [n_layers] log2 of the layer's slice count g_l (zdp only; 0: 1) */
} hp_plan;

/* Whether layer l's state is sharded across the replicas: a mode other than dp, and
 * dp > 1 (with one replica there is nothing to shard, cost-model.md 7.1). */
static inline int hp_plan_sharded(const struct hp_plan *p, int l)
{
  return p->mode[l] != HP_SHARD_DP && p->dp > 1;
}
/* The mode as the cost model applies it: dp whenever dp = 1. */
static inline int hp_plan_mode(const struct hp_plan *p, int l)
{
  return p->dp > 1 ? p->mode[l] : HP_SHARD_DP;
}
/* g_l, the layer's slice count. */
static inline int hp_plan_slices(const struct hp_plan *p, int l) { return 1 << p->slices[l]; }
/* Sets every layer's mode. */
void hp_plan_set_modes(struct hp_plan *p, int mode);

#define HP_SLOT(plan, s, r, j) ((((s) * (plan)->dp) + (r)) * (plan)->tp + (j))

/* Allocates a plan with the given shape; stages, devices and flags are zeroed and gas
 * is left 0. Destroy with hp_plan_destroy. */
hp_err hp_plan_create(hp_plan **out, int pp, int tp, int dp, int n_layers, hp_diag *d);
void hp_plan_destroy(hp_plan **p);
hp_err hp_plan_copy(hp_plan **out, const hp_plan *src, hp_diag *d);
/* Copies src's stages, devices, flags, gas and schedule into dst, a plan of the same
 * pp, tp, dp and layers. */
void hp_plan_assign(hp_plan *dst, const hp_plan *src);

/* Checks a plan against the problem (cost-model.md sections 2, 7.8, 7.12, 7.17, 7.19):
 * degrees that multiply to the device count (at most it, under a job with idle_devices),
 * modes from the job's list (one mode under uniform_sharding), slices only on zdp layers,
 * powers of two up to max_slices, integer gas, stages contiguous, in order and
 * non-empty, the placement an injection (a bijection without idle devices), every TP group inside one node, the job's
 * schedule. Returns HP_PLAN with a message naming what is wrong. */
hp_err hp_plan_validate(const hp_problem *prob, const hp_plan *plan, hp_diag *d);

/* Sets plan->gas from the job; returns HP_PLAN if gbs is not a multiple of dp * mbs. */
hp_err hp_plan_set_gas(const hp_problem *prob, hp_plan *plan, hp_diag *d);

/* The micro-batch sizes of a replica's share of the batch, per = gbs / dp: the divisors
 * of `per` up to HP_MAX_MBS, ascending, found by factoring (time in sqrt(per), not per).
 * Writes up to `cap` of them into `out` (may be NULL) and returns how many there are
 * (at most 6720 for per <= HP_MAX_GBS); 0 if per < 1. */
int hp_mbs_divisors(long per, int *out, int cap);

/* Fills a plan with the Megatron-style default placement: TP ranks on consecutive
 * devices, then replicas, then stages (device = ((s * dp) + r) * tp + j). */
void hp_plan_place_in_order(hp_plan *plan);

/* Splits the layers into pp stages of as equal a count as possible (earlier stages
 * get the remainder). Requires pp <= n_layers. */
void hp_plan_split_even(hp_plan *plan);

/* The plan's configuration in one line (plan_text.c): "pp 2, tp 1, dp 2, mbs 1 (gas 4);
 * layers per stage 2+2; recompute on stage 1; ZeRO-3 on layer 1". Writes at most n bytes
 * and returns buf. */
char *hp_plan_describe(const hp_plan *plan, char *buf, unsigned long n);

/* A total order on plans (plan_pack.c): degrees, micro-batch, schedule, stage starts,
 * devices, recompute, sharding, compared in that order; < 0, 0 or > 0. Plans of equal
 * time are kept by this order (hp_result_offer), so the plan a search returns does not
 * depend on the order in which it met them. */
int hp_plan_compare(const hp_plan *a, const hp_plan *b);

/* A plan as 64-bit integers, for sending to another process (plan_pack.c): the count of
 * hp_plan_pack's words for `p`; hp_plan_pack writes them; hp_plan_unpack reads words
 * 0 .. n-1 back into a new plan, checking every count against n and the problem's shape
 * (HP_PLAN when they do not hold: a truncated or foreign message). */
long hp_plan_packed_words(const hp_plan *p);
void hp_plan_pack(const hp_plan *p, long long *w);
hp_err hp_plan_unpack(const long long *w, long n, int n_layers, hp_plan **out, hp_diag *d);

static inline int hp_stage_last(const hp_plan *p, int s) { return p->first[s + 1] - 1; }

#endif
