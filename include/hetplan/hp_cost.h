/* hp_cost.h -- the cost tables: the one place where cost-model.md's formulas are written.
 * A table is built once per configuration (per-layer memory, gradient and hand-off
 * figures; in-flight counts; measured memory) and per placement (layer times per class of TP group,
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

/* --- Primitives (cost-model.md section 3, version 1.2). Each is linear in its byte
 * arguments, so a MIP takes its coefficients by evaluating them at 1 (and at 0 for the
 * constant). */

/* Forward activation and backward gradient between two stages for one micro-batch:
 * 2 O mbs / tp / bw + 2 lat (bw: the lane's share of its link, H_s(n)). */
double hp_cost_handoff(double out_bytes, int mbs, int tp, double bw, double lat);
/* Z[s], ZeRO-3 parameter gathering per micro-batch, forward and backward, for `zbytes` =
 * sum param_bytes P / t_l over zdp layers and `extra` = sum (g_l - 1) over them:
 * 2 (dp-1)/dp zbytes / bdp + 2 extra (dp-1) latdp (0 when dp = 1 or nothing is sharded). */
double hp_cost_gather(double zbytes, double extra, int any, int dp, double bdp, double latdp);
/* Zr[s], the reduce-scatter of each micro-batch's gradients of zero2 and zdp layers,
 * `rbytes` = sum grad_bytes P / t_l over them: (dp-1)/dp rbytes / bdp + (dp-1) latdp when
 * the stage has such a layer (`any`), else 0; 0 when dp = 1. */
double hp_cost_grad_scatter(double rbytes, int any, int dp, double bdp, double latdp);
/* red[s], the reduction before the optimizer step: all-reduce of G (dp layers),
 * reduce-scatter of Gr (zero1 layers), plus 2 (dp-1) latdp; 0 when dp = 1. */
double hp_cost_reduce(double G, double Gr, int dp, double bdp, double latdp);
/* gat[s], the all-gather of the updated weights of zero1 and zero2 layers after the step:
 * (dp-1)/dp Gp / bdp; 0 when dp = 1. */
double hp_cost_allgather(double Gp, int dp, double bdp);
/* c[s,r] = t[s,r] + (e[s-1,r] + e[s,r]) / 2: a stage's steady-state period. */
double hp_cost_period(double t, double e_in, double e_out);
/* A replica's pipeline time T[r] = (gas - 1) max_s c[s,r] + sum_s t[s,r] + sum_s e[s,r]. */
double hp_cost_replica(long gas, double cmax, double tsum, double esum);
/* A stage's compute with recompute: compute + R ck / 3, `ck` the part of `compute` of its
 * checkpointable layers (their forward runs twice). */
double hp_cost_recompute(double compute, double ck, int recompute);
/* b[s,r], the backward part of one micro-batch: (2 compute + R ck) / 3 + Zr. */
double hp_cost_backward(double compute, double ck, int recompute, double zr);
/* The simulator's split of one micro-batch on a slot: the forward is a third of the
 * compute and half of the gather; the backward the rest, with the repeated forward of the
 * checkpointable layers when recomputing, and the gradients' reduce-scatter Zr.
 * fwd + bwd = hp_cost_recompute(compute, ck, R) + gather + zr = t[s,r]. */
void hp_cost_fwd_bwd(double compute, double ck, int recompute, double gather, double zr,
                     double *fwd, double *bwd);

/* --- Memory (cost-model.md section 4): per-stage aggregates, then the total. The
 * activation terms are per micro-batch (mbs applied, or measured). */
typedef struct hp_mem_terms {
  double states;       /* sum of each layer's states under its mode, bytes */
  double gather;       /* max param_bytes P / t_l / g_l over zdp layers */
  double act_sum;      /* sum of every layer's saved activations (mbs a_l, or measured) */
  double act_keep;     /* under recompute: mbs i_l of checkpointable layers plus the
                        * activations of the others */
  double act_max;      /* max of checkpointable layers' activations */
  double work;         /* max of (mbs W + W0) / t_l, or measured */
  int any_ck;          /* the stage has a checkpointable layer */
} hp_mem_terms;

/* M without the reserve, for a stage with these terms: states + gather + act + work, act
 * per the recompute flag (a recomputed stage with no checkpointable layer is charged as
 * one without recompute). */
double hp_cost_mem_total(const hp_mem_terms *m, long inflight, int recompute);
/* The coefficient of each term in hp_cost_mem_total (linear in them, any_ck given in
 * `coef` on entry: it selects the recompute branch), for a MIP. */
void hp_cost_mem_coeffs(long inflight, int recompute, hp_mem_terms *coef);

/* Micro-batches in flight on stage s: min(pp - s, gas) for 1F1B, gas for GPipe. */
long hp_cost_inflight(int pp, long gas, hp_schedule schedule, int s);

/* --- Tables. */

/* One layer's figures under a configuration (tp, mbs) and the job: t_l = tp if splittable,
 * else 1; q = P / t_l. */
typedef struct hp_layer_cost {
  double q;            /* P / t_l, parameters per TP rank */
  double state;        /* state_bytes q, bytes */
  double param;        /* param_bytes q: what ZeRO-3 gathers, what zero1/2 all-gather */
  double grad;         /* grad_bytes q: what the reductions move */
  double opt;          /* opt_bytes q */
  double upd;          /* update_bytes q: the optimizer step's traffic, replicated */
  double act;          /* a_l(tp), per sample: (A - Ar) / t_l + Ar, or A / t_l with
                        * sequence parallelism and tp > 1 */
  double input;        /* i_l per sample: I_l, or I_l / t_l with sequence parallelism */
  double work;         /* (mbs W + W0) / t_l, bytes */
  double out;          /* O_l, per sample: the hand-off after l */
  int ck;              /* checkpointable: recompute re-runs it */
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
  int pp, tp, dp, mbs, n_layers, n_types;
  long gas;
  hp_schedule schedule;
  hp_layer_cost *layer;  /* [n_layers] */
  long *inflight;        /* [pp] */
  /* measured memory (cost-model.md 1, 7.20) per micro-batch on one TP rank of a device
   * type: [type * n_layers + l], NAN where not measured; NULL when nothing is */
  double *mact, *mwork;
  /* layer times by class */
  int n_class;
  hp_tp_class *cls;      /* [n_class] */
  double *time;          /* [n_class * n_layers]: layer l on class c, before recompute, s */
  /* the placement; NULL in tables built from classes alone */
  int *slot_class;       /* [pp * dp] class of slot (s, r) at s * dp + r */
  double *hbw, *hlat;    /* [pp * dp] slowest lane from (s, r) to (s + 1, r), its link shared
                          * by the boundary's lanes (H_s(n)); 0 at s = pp-1 */
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

/* Compute of layers first..last on class `cls`, summed in layer order, before recompute;
 * *ck (may be NULL) gets the part of its checkpointable layers. */
double hp_costs_compute(const hp_costs *c, int cls, int first, int last, double *ck);
/* The hand-off after layer `last` from slot (s, r) to (s + 1, r). */
double hp_costs_handoff(const hp_costs *c, int s, int r, int last);
/* Saved activations and working memory of layer l per micro-batch on a device of `type`
 * (-1: the formula): measured where the profile has them, else mbs a_l and the formula. */
double hp_costs_layer_act(const hp_costs *c, int l, int type);
double hp_costs_layer_work(const hp_costs *c, int l, int type);
/* States of layer l under `mode` (an hp_shard; dp when the configuration has dp = 1). */
double hp_costs_layer_states(const hp_costs *c, int l, int mode);
/* Adds layer l to a stage's memory terms under `mode` with `slices` (g_l) on `type`. */
void hp_costs_mem_add(const hp_costs *c, int l, int mode, int slices, int type, hp_mem_terms *m);

/* What a stage of layers first..last costs, given its modes (mode[l], may be NULL: all dp),
 * slices (log2 g_l, may be NULL: all 1) and recompute flag, under the placement's replica
 * links, on a device of `type` (-1: formula memory only). */
typedef struct hp_stage_cost {
  double gather;       /* Z[s] per micro-batch */
  double zr;           /* Zr[s] per micro-batch */
  double red;          /* red[s] */
  double gat;          /* gat[s] */
  double upd;          /* update_bytes times the parameters one device of the stage
                        * updates: U[s] = upd / hbm_k */
  double mem;          /* M without the reserve, bytes */
  double m_states, m_gather, m_act, m_work;   /* its parts */
} hp_stage_cost;

void hp_costs_stage(const hp_costs *c, int s, int first, int last, const unsigned char *mode,
                    const unsigned char *slices, int recompute, int type, hp_stage_cost *out);

#endif
