/* hp_cost.h -- the cost tables: the one place where cost-model.md's formulas are written.
 * A table is built once per configuration (per-layer memory, gradient and hand-off
 * figures; in-flight counts) and per placement (layer times per class of TP group,
 * hand-off links, replica-group links, capacities), or per list of TP-group classes for
 * searches that leave the placement open. The evaluator applies a plan to them; the
 * simulator, the layer DP, the MIP builder and the baselines read the same tables and
 * the primitives below, and write no formula of their own. */
#ifndef HP_COST_H
#define HP_COST_H

#include "hp_plan.h"

/* --- The ring collectives on n ranks (cost-model.md section 3), the one place their
 * factors are written: the TP all-reduce of a layer's time, the ZeRO-3 gather and the
 * gradient sync below, and the profiler (its --tp-gbps estimate and nccl-tests' bus
 * bandwidth) are all written with them. A reduce-scatter or an all-gather sends
 * (n-1)/n of the buffer over each rank's link; an all-reduce, one of each, 2 (n-1)/n,
 * in 2 (n-1) steps that each pay the latency. A time is factor x bytes / bandwidth. */

/* (n-1)/n: a reduce-scatter's or an all-gather's bytes per byte of the buffer. Inline:
 * layer times call them in the planner's innermost loops. */
static inline double hp_cost_ring_share(int n)
{
  return (double)(n - 1) / n;
}

/* 2 (n-1)/n: a ring all-reduce's bytes per byte of the buffer, written as twice the
 * share, which rounds the same (scaling by 2 is exact). */
static inline double hp_cost_ring_allreduce(int n)
{
  return 2.0 * hp_cost_ring_share(n);
}

/* 2 (n-1) lat: a ring all-reduce's latency (any unit: the result has lat's). */
static inline double hp_cost_ring_latency(int n, double lat)
{
  return 2.0 * (n - 1) * lat;
}

/* --- Primitives (cost-model.md section 3). Each is linear in its first argument, so a
 * MIP takes its coefficients by evaluating them at 1 (and at 0 for the constant). */

/* Forward activation and backward gradient between two stages for one micro-batch:
 * 2 O mbs / tp / bw + 2 lat. */
double hp_cost_handoff(double out_bytes, int mbs, int tp, double bw, double lat);
/* ZeRO-3 parameter gathering per micro-batch, forward and backward, for `zbytes` =
 * sum param_bytes P / t_l: 2 (dp-1)/dp zbytes / bdp (0 when dp = 1 or nothing is sharded). */
double hp_cost_gather(double zbytes, int dp, double bdp);
/* Gradient sync of a stage: ring all-reduce of G, reduce-scatter of Gz (bytes), plus
 * 2 (dp-1) latdp; 0 when dp = 1. */
double hp_cost_sync(double G, double Gz, int dp, double bdp, double latdp);
/* A replica's pipeline time T[r] = (gas - 1) max_s t[s,r] + sum_s t[s,r] + sum_s e[s,r]. */
double hp_cost_replica(long gas, double tmax, double tsum, double esum);
/* A stage's compute with recompute: compute (1 + R/3) -- the forward runs twice. */
double hp_cost_recompute(double compute, int recompute);
/* The simulator's split of one micro-batch on a slot: the forward is a third of the
 * compute, the backward two thirds plus the repeated forward when recomputing; half of
 * the ZeRO-3 gather precedes each. fwd + bwd = hp_cost_recompute(compute) + gather. */
void hp_cost_fwd_bwd(double compute, int recompute, double gather, double *fwd, double *bwd);

/* --- Memory (cost-model.md section 4): per-stage aggregates, then the total. */
typedef struct hp_mem_terms {
  double states_dp;    /* sum of state_bytes P / t_l over replicated layers */
  double states_z;     /* the same over ZeRO-3 layers (divided by dp in the total) */
  double gather;       /* max param_bytes P / t_l over ZeRO-3 layers */
  double act_sum;      /* sum of a_l(tp) */
  double act_max;      /* max of a_l(tp) */
  double inputs;       /* sum of I_l / t_l */
  double work;         /* max of (mbs W + W0) / t_l */
} hp_mem_terms;

/* M without the reserve, for a stage with these terms:
 * states_dp + states_z / dp + gather + act + work (act per the recompute flag). */
double hp_cost_mem_total(const hp_mem_terms *m, long inflight, int mbs, int dp, int recompute);
/* The coefficient of each term in hp_cost_mem_total (it is linear in them), for a MIP. */
void hp_cost_mem_coeffs(long inflight, int mbs, int dp, int recompute, hp_mem_terms *coef);

/* Micro-batches in flight on stage s: min(pp - s, gas) for 1F1B, gas for GPipe. */
long hp_cost_inflight(int pp, long gas, hp_schedule schedule, int s);

/* --- Tables. */

/* One layer's figures under a configuration (tp, mbs): t_l = tp if splittable, else 1. */
typedef struct hp_layer_cost {
  double state;        /* state_bytes P / t_l, bytes */
  double param;        /* param_bytes P / t_l: what ZeRO-3 gathers, and its buffer */
  double grad;         /* grad_bytes P / t_l: what the sync moves */
  double act;          /* a_l(tp) = (A - Ar) / t_l + Ar, per sample */
  double input;        /* I_l / t_l, per sample (what recompute keeps) */
  double work;         /* (mbs W + W0) / t_l, bytes */
  double out;          /* O_l, per sample: the hand-off after l */
} hp_layer_cost;

/* A class of TP groups whose layer times are equal: a device type (a TP group lies in one
 * node, and a node has one type) and the group's slowest inside link (INFINITY and 0
 * when tp = 1). */
typedef struct hp_tp_class {
  int type;
  double bw, lat;      /* bytes/s, seconds */
} hp_tp_class;

typedef struct hp_costs {
  /* the configuration */
  int pp, tp, dp, mbs, n_layers;
  long gas;
  hp_schedule schedule;
  hp_layer_cost *layer;  /* [n_layers] */
  long *inflight;        /* [pp] */
  /* layer times by class */
  int n_class;
  hp_tp_class *cls;      /* [n_class] */
  double *time;          /* [n_class * n_layers]: layer l on class c, before recompute, s */
  /* the placement; NULL in tables built from classes alone */
  int *slot_class;       /* [pp * dp] class of slot (s, r) at s * dp + r */
  double *hbw, *hlat;    /* [pp * dp] slowest lane from (s, r) to (s + 1, r); 0 at s = pp-1 */
  double *bdp, *latdp;   /* [pp] Bdp[s], latdp[s] (R(n)-shared); 0 when dp = 1 */
  double *cap;           /* [pp] smallest capacity less reserve among the stage's devices */
} hp_costs;

/* The tables of `plan`'s configuration and placement (its stages and flags are not
 * read; its placement must be valid). `c` is overwritten; release with hp_costs_release. */
hp_err hp_costs_build(const hp_problem *p, const hp_plan *plan, hp_costs *c, hp_diag *d);
/* The configuration tables of `shape` (pp, tp, dp, mbs, gas, schedule) and layer times
 * for the given classes, without a placement. */
hp_err hp_costs_build_classes(const hp_problem *p, const hp_plan *shape,
                              const hp_tp_class *cls, int n_class, hp_costs *c, hp_diag *d);
void hp_costs_release(hp_costs *c);

static inline double hp_costs_time(const hp_costs *c, int cls, int l)
{
  return c->time[(size_t)cls * (size_t)c->n_layers + (size_t)l];
}

/* Compute of layers first..last on class `cls`, summed in layer order, before recompute. */
double hp_costs_compute(const hp_costs *c, int cls, int first, int last);
/* The hand-off after layer `last` from slot (s, r) to (s + 1, r). */
double hp_costs_handoff(const hp_costs *c, int s, int r, int last);
/* Adds layer l to a stage's memory terms (zdp: sharded; pass 0 when dp = 1). */
void hp_costs_mem_add(const hp_costs *c, int l, int zdp, hp_mem_terms *m);

/* What a stage of layers first..last costs, given its sharding (zdp[l], may be NULL: none)
 * and recompute flag, under the placement's replica links. */
typedef struct hp_stage_cost {
  double gather;       /* Z[s] per micro-batch */
  double sync;         /* sync[s] */
  double mem;          /* M without the reserve, bytes */
} hp_stage_cost;

void hp_costs_stage(const hp_costs *c, int s, int first, int last, const unsigned char *zdp,
                    int recompute, hp_stage_cost *out);

#endif
