/* layer_dp.c -- exact layer-to-stage assignment for a fixed configuration and placement
 * (AMP's problem, generalised to cost model 1.2): per stage position s the serving
 * devices are known, so the time, hand-offs, reduction, all-gather, optimizer step and
 * memory of "layers i..j on stage s" follow from prefix sums and the cost tables
 * (hp_cost.h: every figure comes from hp_costs_stage and the primitives, none is written
 * here). A dynamic program over (stage, next layer) keeps, for each state, the Pareto
 * frontier of five figures: the largest steady-state period max c[s], the sum of stage
 * times and hand-offs, and the largest reduction, all-gather and step. The hand-off
 * between stage s-1 and s depends only on the state (the last layer of stage s-1), so a
 * stage's period c[s] = t[s] + (e[s-1] + e[s]) / 2 is complete when the stage is added,
 * and the objective
 *   (gas-1) max_s c[s] + sum_s (t[s] + e[s]) + max_s red[s] + max_s U[s] + max_s gat[s]
 * (cost-model.md 3, grad_sync end) is monotone in all five, so the frontier holds an
 * optimal partial solution (docs/search.md). Under grad_sync overlap the DP minimises the
 * same `end` objective: an upper bound on the overlapped time and a heuristic for it
 * (the evaluator re-scores every plan).
 * Per stage: recompute or not (only when it does not fit without), each of the job's
 * allowed sharding modes for the whole stage, and -- when the least-sharded allowed mode
 * does not fit -- the shortest suffix of the stage's layers in each other allowed mode
 * that makes it fit. Under uniform_sharding the DP runs once per allowed mode, without
 * suffixes, and keeps the best. States whose lower bound exceeds the incumbent are
 * pruned. Slice counts (max_slices) are left at 1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontier.h"
#include "search.h"

void hp__dp_opts_init(hp_dp_opts *o)
{
  memset(o, 0, sizeof *o);
  o->allow_recompute = 1;
  o->cutoff = INFINITY;
  o->deadline = INFINITY;
}

/* A frontier point: its figures, then how it was reached. */
enum { MC, SUM, RED, GAT, STEP, NFIG };
typedef struct point {
  double fig[NFIG];    /* max c, sum of t and e, max red, max gat, max step */
  int prev;            /* pool index of the point this one extends, -1 at the start */
  int start;           /* first layer of the stage this point added */
  int zfrom;           /* the stage's layers from zfrom on take smode, the others mode */
  unsigned char rec, mode, smode;
} point;

/* The most distinct device types of one stage whose memory is checked apart (measured
 * memory differs by type, cost-model.md 7.20); more types than this share the check of
 * the least capacity with formula memory. */
#define MAX_STAGE_TYPES 8

typedef struct dp_ctx {
  const hp_problem *p;
  hp_plan *pl;
  const hp_dp_opts *o;
  int L, pp, dp;
  unsigned modes;       /* the modes a stage may take in this run */
  int suffix;           /* 1: the shortest-suffix options are offered */
  int base;             /* the least-sharded mode of `modes`: the suffix options' rest */
  hp_costs k;           /* the configuration's and placement's cost tables */
  /* per stage position s */
  int *nclass;          /* [pp] distinct classes of TP group among the stage's replicas */
  int *sclass;          /* [pp * dp] those classes (the first nclass[s] of row s) */
  int *ntype;           /* [pp] memory checks of the stage: */
  int *stype;           /* [pp * MAX_STAGE_TYPES] device type (-1: formula memory) */
  double *scap;         /* [pp * MAX_STAGE_TYPES] its capacity less reserve */
  double *inv_hbm;      /* [pp] 1 / the least hbm among the stage's devices (0: none given) */
  double *pre;          /* [n_class][L+1] prefix sums of each class's layer times */
  double *ckpre;        /* [n_class][L+1] the same over checkpointable layers */
  double *emax;         /* [pp][L] hand-off after layer j, slowest replica (0 for the last stage) */
  double *rest;         /* [L+1] sum over l >= i of the fastest time of layer l anywhere */
  double *spre;         /* [HP_N_SHARD][L+1] prefix sums of each layer's states per mode */
  unsigned char *mode;  /* [L] scratch: the modes of a stage under consideration */
  /* the frontiers */
  hp_fpool pool;        /* of points */
  hp_front *f;          /* [(pp+1) * (L+1)] */
  double best;          /* incumbent objective, for pruning */
} dp_ctx;

static double objective(const dp_ctx *c, const double *fig)
{
  return hp_cost_replica(c->pl->gas, fig[MC], fig[SUM], 0) + fig[RED] + fig[STEP] + fig[GAT];
}

static const point *at(const dp_ctx *c, int i) { return hp__fpool_at(&c->pool, i); }

/* A lower bound on the objective of any completion of a point at state (s, i): the
 * remaining layers cost at least their fastest times, and the largest period of the
 * remaining pp - s stages is at least their average. Hand-offs, reductions, gathers and
 * steps add nothing below. */
static double lower_bound(const dp_ctx *c, const double *fig, int s, int i)
{
  double rest = c->rest[i], g[NFIG];
  memcpy(g, fig, sizeof g);
  if (s < c->pp && rest / (c->pp - s) > g[MC]) g[MC] = rest / (c->pp - s);
  g[SUM] += rest;
  return objective(c, g);
}

/* Whether a point of figures x is no worse than one of figures v in every completion:
 * a completion adds the same stages to both, after which the objective differs by at
 * most (gas-1) (x[MC] - v[MC])+ + x[SUM] - v[SUM] + the (x - v)+ of each max figure
 * (max(a, z) - max(b, z) <= (a - b)+). When that is <= 0, v can go. This is the usual
 * componentwise dominance and more: a point may trade a larger reduction, all-gather or
 * step for at least as much less of the sum. Exact. */
static int dominates(const dp_ctx *c, const double *x, const double *v)
{
  double d = x[SUM] - v[SUM];
  if (x[MC] > v[MC]) d += (double)(c->pl->gas - 1) * (x[MC] - v[MC]);
  if (x[RED] > v[RED]) d += x[RED] - v[RED];
  if (x[GAT] > v[GAT]) d += x[GAT] - v[GAT];
  if (x[STEP] > v[STEP]) d += x[STEP] - v[STEP];
  return d <= 0;
}

/* Inserts into a frontier unless a point dominates it (above); drops the points it
 * dominates, and past max_frontier the point of the largest objective (or the
 * newcomer, if its objective is no smaller). */
static hp_err insert(dp_ctx *c, hp_front *f, const point *pt)
{
  const double *v = pt->fig;
  int w = 0;
  long id;
  for (int i = 0; i < f->n; i++)
    if (dominates(c, at(c, f->ix[i])->fig, v)) return HP_OK;
  for (int i = 0; i < f->n; i++)
    if (!dominates(c, v, at(c, f->ix[i])->fig)) f->ix[w++] = f->ix[i];
  f->n = w;
  if (c->o->max_frontier > 0 && f->n >= c->o->max_frontier) {
    int b = 0;
    double sb = objective(c, at(c, f->ix[0])->fig);
    for (int i = 1; i < f->n; i++) {
      double si = objective(c, at(c, f->ix[i])->fig);
      if (si > sb) { b = i; sb = si; }
    }
    if (objective(c, v) >= sb) return HP_OK;
    f->ix[b] = f->ix[--f->n];
  }
  if ((id = hp__fpool_push(&c->pool, pt)) < 0) return HP_NOMEM;
  if (f->n == f->cap && hp__front_grow(f) < 0) return HP_NOMEM;
  f->ix[f->n++] = (int)id;
  return HP_OK;
}

static const double *PRE(const dp_ctx *c, int k) { return &c->pre[(size_t)k * (c->L + 1)]; }
static const double *CKPRE(const dp_ctx *c, int k) { return &c->ckpre[(size_t)k * (c->L + 1)]; }

/* The memory checks of stage s: one per device type with measured memory, else one of
 * formula memory against the stage's least capacity. */
static void stage_types(dp_ctx *c, int s)
{
  const hp_cluster *cl = c->p->cluster;
  int per = c->dp * c->pl->tp, *n = &c->ntype[s];
  int *ty = &c->stype[s * MAX_STAGE_TYPES];
  double *cap = &c->scap[s * MAX_STAGE_TYPES], hbm = INFINITY;
  *n = 0;
  for (int i = 0; i < per; i++) {
    int t = hp_device_type(c->p, c->pl->dev[(size_t)s * per + i]), seen = 0;
    if (cl->types[t].hbm > 0 && cl->types[t].hbm < hbm) hbm = cl->types[t].hbm;
    for (int q = 0; q < *n; q++) seen |= ty[q] == t;
    if (seen) continue;
    if (*n == MAX_STAGE_TYPES || !c->k.mact) { *n = -1; continue; }
    ty[*n] = t;
    cap[(*n)++] = cl->types[t].mem - cl->types[t].reserved;
  }
  if (*n < 0 || !c->k.mact) {
    *n = 1;
    ty[0] = -1;
    cap[0] = c->k.cap[s];
  }
  c->inv_hbm[s] = isfinite(hbm) ? 1.0 / hbm : 0;
}

static hp_err prepare(dp_ctx *c)
{
  const hp_plan *pl = c->pl;
  int L = c->L, pp = c->pp, dp = c->dp;
  int nk;
  hp_err err;
  if ((err = hp_costs_build(c->p, pl, &c->k, NULL))) return err;
  nk = c->o->layer_time ? 1 : c->k.n_class;
  c->nclass = hp__calloc((size_t)pp, sizeof *c->nclass);
  c->sclass = hp__calloc((size_t)pp * dp, sizeof *c->sclass);
  c->ntype = hp__calloc((size_t)pp, sizeof *c->ntype);
  c->stype = hp__calloc((size_t)pp * MAX_STAGE_TYPES, sizeof *c->stype);
  c->scap = hp__calloc((size_t)pp * MAX_STAGE_TYPES, sizeof *c->scap);
  c->inv_hbm = hp__calloc((size_t)pp, sizeof *c->inv_hbm);
  c->pre = hp__calloc((size_t)nk * (L + 1), sizeof *c->pre);
  c->ckpre = hp__calloc((size_t)nk * (L + 1), sizeof *c->ckpre);
  c->emax = hp__calloc((size_t)pp * L, sizeof *c->emax);
  c->f = hp__calloc((size_t)(pp + 1) * (L + 1), sizeof *c->f);
  c->rest = hp__calloc((size_t)L + 1, sizeof *c->rest);
  c->mode = hp__calloc((size_t)L, 1);
  c->spre = hp__calloc((size_t)HP_N_SHARD * (L + 1), sizeof *c->spre);
  if (!c->nclass || !c->sclass || !c->ntype || !c->stype || !c->scap || !c->inv_hbm || !c->pre ||
      !c->ckpre || !c->emax || !c->f || !c->rest || !c->mode || !c->spre)
    return HP_NOMEM;
  for (int m = 0; m < HP_N_SHARD; m++) {
    double *sp = &c->spre[(size_t)m * (L + 1)];
    for (int l = 0; l < L; l++) sp[l + 1] = sp[l] + hp_costs_layer_states(&c->k, l, m);
  }
  for (int k = 0; k < nk; k++) {
    double *pk = &c->pre[(size_t)k * (L + 1)], *ck = &c->ckpre[(size_t)k * (L + 1)];
    for (int l = 0; l < L; l++) {
      double t = c->o->layer_time ? c->o->layer_time[l] : hp_costs_time(&c->k, k, l);
      pk[l + 1] = pk[l] + t;
      ck[l + 1] = ck[l] + (c->k.layer[l].ck ? t : 0);
    }
  }
  /* the classes of each stage's replicas: replicas of one class have equal times */
  for (int s = 0; s < pp; s++) {
    for (int r = 0; r < dp; r++) {
      int k = c->o->layer_time ? 0 : c->k.slot_class[s * dp + r], seen = 0;
      for (int q = 0; q < c->nclass[s]; q++) seen |= c->sclass[s * dp + q] == k;
      if (!seen) c->sclass[s * dp + c->nclass[s]++] = k;
    }
    stage_types(c, s);
  }
  for (int l = L - 1; l >= 0; l--) {
    double fastest = INFINITY;
    for (int k = 0; k < nk; k++) {
      const double *pk = PRE(c, k);
      if (pk[l + 1] - pk[l] < fastest) fastest = pk[l + 1] - pk[l];
    }
    c->rest[l] = c->rest[l + 1] + fastest;
  }
  for (int s = 0; s + 1 < pp; s++)
    for (int l = 0; l < L; l++) {
      double worst = 0;
      for (int r = 0; r < dp; r++) {
        double e = hp_costs_handoff(&c->k, s, r, l);
        if (e > worst) worst = e;
      }
      c->emax[(size_t)s * L + l] = worst;
    }
  return HP_OK;
}

/* One way to run layers i..j on stage s: its time, what it adds to the max figures, and
 * how (layers before zfrom in `mode`, from zfrom on in `smode`). */
typedef struct option {
  double t, red, gat, step;
  int zfrom;
  unsigned char rec, mode, smode;
} option;

/* The stage's memory terms per mode and per memory check, kept as its last layer grows
 * (hp_costs_mem_add in layer order, as hp_costs_stage adds them). */
typedef struct stage_mem { hp_mem_terms m[HP_N_SHARD][MAX_STAGE_TYPES]; } stage_mem;

static void mem_grow(const dp_ctx *c, int s, int l, stage_mem *sm)
{
  for (int m = 0; m < HP_N_SHARD; m++)
    if (c->modes >> m & 1u)
      for (int q = 0; q < c->ntype[s]; q++)
        hp_costs_mem_add(&c->k, l, m, 1, c->stype[s * MAX_STAGE_TYPES + q], &sm->m[m][q]);
}

static int fits(const dp_ctx *c, int s, const hp_mem_terms *t, int q, int rec)
{
  return c->o->ignore_memory ||
         hp_cost_mem_total(t, c->k.inflight[s], rec) <= c->scap[s * MAX_STAGE_TYPES + q];
}

static int fits_all(const dp_ctx *c, int s, const hp_mem_terms *t /* [ntype] */, int rec)
{
  for (int q = 0; q < c->ntype[s]; q++)
    if (!fits(c, s, &t[q], q, rec)) return 0;
  return 1;
}

/* The shortest suffix k..j (k > i) of the stage in mode `m`, the rest in the base mode,
 * that fits, or -1. Sharding a layer changes its states and, for zdp, the gather buffer
 * (the largest zdp layer's); the activation and working terms do not depend on the mode,
 * so the base terms are adjusted by the suffix's states in each mode (prefix sums of
 * hp_costs_layer_states). */
static int shard_suffix(const dp_ctx *c, int s, int i, int j, const stage_mem *sm, int m, int rec)
{
  const double *sm_ = &c->spre[(size_t)m * (c->L + 1)], *sb = &c->spre[(size_t)c->base * (c->L + 1)];
  double buf = 0;
  for (int k = j; k > i; k--) {       /* k = i is the whole stage: that option exists apart */
    int ok = 1;
    double dstates = (sm_[j + 1] - sm_[k]) - (sb[j + 1] - sb[k]);
    if (m == HP_SHARD_ZDP && c->k.layer[k].param > buf) buf = c->k.layer[k].param;
    for (int q = 0; q < c->ntype[s] && ok; q++) {
      hp_mem_terms t = sm->m[c->base][q];
      t.states += dstates;
      if (buf > t.gather) t.gather = buf;
      ok = fits(c, s, &t, q, rec);
    }
    if (ok) return k;
  }
  return -1;
}

/* The time figures of stage s = layers i..j with c->mode[i..j] set: t (its slowest
 * class), red, gat and the step, from hp_costs_stage. */
static void stage_time(const dp_ctx *c, int s, int i, int j, int rec, option *op)
{
  hp_stage_cost sc;
  double worst = 0;
  hp_costs_stage(&c->k, s, i, j, c->mode, NULL, rec, -1, &sc);
  for (int q = 0; q < c->nclass[s]; q++) {
    int k = c->sclass[s * c->dp + q];
    const double *pk = PRE(c, k), *ck = CKPRE(c, k);
    double v = hp_cost_recompute(pk[j + 1] - pk[i], ck[j + 1] - ck[i], rec);
    if (v > worst) worst = v;
  }
  op->t = worst + sc.gather + sc.zr;
  op->red = sc.red;
  op->gat = sc.gat;
  op->step = sc.upd * c->inv_hbm[s];
}

static void set_modes(dp_ctx *c, int i, int j, int zfrom, int mode, int smode)
{
  for (int l = i; l <= j; l++) c->mode[l] = (unsigned char)(l < zfrom ? mode : smode);
}

/* Whether option b is no worse than option a in every plan (a may go): taking b for a
 * changes the period and the sum by t_b - t_a (the hand-offs are the stage's either
 * way), and each max figure by at most its (b - a)+ (as in dominates()). */
static int option_dominated(const dp_ctx *c, const option *a, const option *b)
{
  double d = b->t - a->t;
  if (b->t > a->t) d += (double)(c->pl->gas - 1) * (b->t - a->t);
  if (b->red > a->red) d += b->red - a->red;
  if (b->gat > a->gat) d += b->gat - a->gat;
  if (b->step > a->step) d += b->step - a->step;
  return d <= 0;
}

/* The options of stage s = layers i..j (memory terms sm): at most one whole-stage
 * option per mode and, for each recompute flag, a suffix per other mode. */
#define MAX_OPTIONS (HP_N_SHARD + 2 * (HP_N_SHARD - 1))
static int stage_options(dp_ctx *c, int s, int i, int j, const stage_mem *sm, option *out)
{
  int n = 0;
  for (int m = 0; m < HP_N_SHARD; m++) {
    if (!(c->modes >> m & 1u)) continue;
    for (int rec = 0; rec <= c->o->allow_recompute; rec++) {
      if (fits_all(c, s, sm->m[m], rec)) {
        option *op = &out[n++];
        set_modes(c, i, j, i, m, m);
        stage_time(c, s, i, j, rec, op);
        op->rec = (unsigned char)rec;
        op->mode = op->smode = (unsigned char)m;
        op->zfrom = i;
        break;   /* fits without recompute: recomputing would only be slower */
      }
      if (m != c->base || !c->suffix || i == j) continue;
      /* the least-sharded mode does not fit: shard the shortest suffix that makes it fit,
       * in each other mode */
      for (int m2 = 0; m2 < HP_N_SHARD; m2++) {
        int k;
        if (m2 == m || !(c->modes >> m2 & 1u) || (k = shard_suffix(c, s, i, j, sm, m2, rec)) < 0)
          continue;
        option *op = &out[n++];
        set_modes(c, i, j, k, m, m2);
        stage_time(c, s, i, j, rec, op);
        op->rec = (unsigned char)rec;
        op->mode = (unsigned char)m;
        op->smode = (unsigned char)m2;
        op->zfrom = k;
      }
    }
  }
  /* drop the options another is no worse than in every plan (the first of equals stays):
   * e.g. zero2 and zdp wherever zero1 fits, their per-micro-batch reduce-scatter costing
   * at least what zero1's one reduction does */
  int w = 0;
  for (int a = 0; a < n; a++) {
    int drop = 0;
    for (int b = 0; b < n && !drop; b++)
      if (b != a && option_dominated(c, &out[a], &out[b]) &&
          (!option_dominated(c, &out[b], &out[a]) || b < a))
        drop = 1;
    if (!drop) out[w++] = out[a];
  }
  return w;
}

static hp_err run_dp(dp_ctx *c, long *work)
{
  int L = c->L, pp = c->pp;
  point start;
  hp_err err;
  memset(&start, 0, sizeof start);
  start.prev = -1;
  if ((err = insert(c, &c->f[0], &start))) return err;
  for (int s = 0; s < pp; s++)
    for (int i = s; i <= L - (pp - s); i++) {
      hp_front *from = &c->f[(size_t)s * (L + 1) + i];
      double e_in = s > 0 ? c->emax[(size_t)(s - 1) * L + i - 1] : 0;
      stage_mem sm;
      if (from->n == 0) continue;
      if (hp__stop_now(c->o->stop, c->o->deadline)) return HP_LIMIT;
      memset(&sm, 0, sizeof sm);
      for (int j = i; j <= L - (pp - s); j++) {
        option ops[MAX_OPTIONS];
        int nop;
        mem_grow(c, s, j, &sm);
        if (s == pp - 1 && j < L - 1) continue;   /* the last stage takes every remaining layer */
        nop = stage_options(c, s, i, j, &sm, ops);
        /* memory only grows with the layers, and (gas - 1) x the stage time bounds the
         * objective: past either limit no longer stage can help */
        if (nop == 0) break;
        double tleast = ops[0].t;
        for (int o = 1; o < nop; o++) if (ops[o].t < tleast) tleast = ops[o].t;
        if ((double)(c->pl->gas - 1) * tleast > c->best * (1 + 1e-12)) break;
        double e = s < pp - 1 ? c->emax[(size_t)s * L + j] : 0;
        hp_front *to = &c->f[(size_t)(s + 1) * (L + 1) + j + 1];
        for (int o = 0; o < nop; o++) {
          double cs = hp_cost_period(ops[o].t, e_in, e);
          for (int k = 0; k < from->n; k++) {
            int pi = from->ix[k];
            const point *x = at(c, pi);
            point np;
            np.fig[MC] = fmax(x->fig[MC], cs);
            np.fig[SUM] = x->fig[SUM] + ops[o].t + e;
            np.fig[RED] = fmax(x->fig[RED], ops[o].red);
            np.fig[GAT] = fmax(x->fig[GAT], ops[o].gat);
            np.fig[STEP] = fmax(x->fig[STEP], ops[o].step);
            np.prev = pi;
            np.start = i;
            np.zfrom = ops[o].zfrom;
            np.rec = ops[o].rec;
            np.mode = ops[o].mode;
            np.smode = ops[o].smode;
            if (lower_bound(c, np.fig, s + 1, j + 1) > c->best * (1 + 1e-12)) continue;
            if (s == pp - 1) {
              double ob = objective(c, np.fig);
              if (ob < c->best) c->best = ob;
            }
            if ((err = insert(c, to, &np))) return err;
            if (work) (*work)++;
          }
        }
      }
    }
  return HP_OK;
}

/* An incumbent before the DP: the even split with, per stage, the fastest option that
 * fits. Any choice is a valid upper bound for pruning. */
static double even_split_bound(dp_ctx *c)
{
  int L = c->L, pp = c->pp, base = L / pp, rem = L % pp, i = 0;
  double fig[NFIG] = { 0 }, e_in = 0;
  for (int s = 0; s < pp; s++) {
    int j = i + base + (s < rem) - 1;
    stage_mem sm;
    option ops[MAX_OPTIONS];
    int nop, b = 0;
    memset(&sm, 0, sizeof sm);
    for (int l = i; l <= j; l++) mem_grow(c, s, l, &sm);
    nop = stage_options(c, s, i, j, &sm, ops);
    if (nop == 0) return INFINITY;
    for (int o = 1; o < nop; o++) if (ops[o].t < ops[b].t) b = o;
    double e = s < pp - 1 ? c->emax[(size_t)s * L + j] : 0;
    fig[MC] = fmax(fig[MC], hp_cost_period(ops[b].t, e_in, e));
    fig[SUM] += ops[b].t + e;
    fig[RED] = fmax(fig[RED], ops[b].red);
    fig[GAT] = fmax(fig[GAT], ops[b].gat);
    fig[STEP] = fmax(fig[STEP], ops[b].step);
    e_in = e;
    i = j + 1;
  }
  return objective(c, fig);
}

static void release_frontiers(dp_ctx *c)
{
  if (c->f)
    for (size_t i = 0; i < (size_t)(c->pp + 1) * (c->L + 1); i++) {
      free(c->f[i].ix);
      c->f[i] = (hp_front){ 0, 0, NULL };
    }
  hp__fpool_release(&c->pool);
}

static void release(dp_ctx *c)
{
  release_frontiers(c);
  free(c->f);
  free(c->nclass);
  free(c->sclass);
  free(c->ntype);
  free(c->stype);
  free(c->scap);
  free(c->inv_hbm);
  free(c->pre);
  free(c->ckpre);
  free(c->emax);
  free(c->rest);
  free(c->mode);
  free(c->spre);
  hp_costs_release(&c->k);
}

/* One run of the DP with c->modes and c->suffix set; if it finds a split below *best,
 * writes it into the plan and lowers *best. HP_LIMIT when stopped. */
static hp_err run_modes(dp_ctx *c, double *best, int *found, long *work)
{
  hp_plan *plan = c->pl;
  hp_err err;
  for (int m = 0; m < HP_N_SHARD; m++)
    if (c->modes >> m & 1u) { c->base = m; break; }
  c->best = even_split_bound(c);
  if (*best < c->best) c->best = *best;
  err = run_dp(c, work);
  if (!err) {
    const hp_front *fin = &c->f[(size_t)c->pp * (c->L + 1) + c->L];
    int bi = -1;
    double bo = *best;
    for (int k = 0; k < fin->n; k++) {
      double ob = objective(c, at(c, fin->ix[k])->fig);
      if (ob < bo || (bi < 0 && !*found && ob <= bo)) { bo = ob; bi = fin->ix[k]; }
    }
    if (bi >= 0) {
      *found = 1;
      *best = bo;
      for (int s = c->pp - 1, pi = bi; s >= 0; s--) {
        const point *x = at(c, pi);
        int end = s == c->pp - 1 ? c->L : plan->first[s + 1];
        plan->first[s] = x->start;
        plan->recompute[s] = x->rec;
        for (int l = x->start; l < end; l++) {
          plan->mode[l] = l < x->zfrom ? x->mode : x->smode;
          plan->slices[l] = 0;
        }
        pi = x->prev;
      }
      plan->first[c->pp] = c->L;
    }
  }
  release_frontiers(c);
  return err;
}

hp_err hp__dp_split(const hp_problem *prob, hp_plan *plan, const hp_dp_opts *o,
                    int *found, double *objective_out, long *work, hp_diag *d)
{
  dp_ctx c;
  hp_err err;
  unsigned job = hp_job_modes(&prob->job), modes = job & (o->modes ? o->modes : HP_SHARD_ALL);
  double best = o->cutoff;
  memset(&c, 0, sizeof c);
  c.p = prob;
  c.pl = plan;
  c.o = o;
  c.L = prob->model->n_layers;
  c.pp = plan->pp;
  c.dp = plan->dp;
  hp__fpool_init(&c.pool, sizeof(point), 4096, 0);
  *found = 0;
  if (plan->pp > c.L) return HP_OK;
  /* the caller's modes outside the job's list: the job's least-sharded mode (a plan must
   * use the job's list); with one replica every mode is dp (7.1): one is enough */
  if (!modes) modes = job;
  if (plan->dp <= 1) modes &= ~modes + 1u;   /* its lowest bit */
  if ((err = prepare(&c)) == HP_OK) {
    if (prob->job.uniform_sharding) {
      /* one mode for the whole plan: the DP once per mode, the best kept */
      for (int m = 0; m < HP_N_SHARD && !err; m++)
        if (modes >> m & 1u) {
          c.modes = 1u << m;
          c.suffix = 0;
          err = run_modes(&c, &best, found, work);
        }
    } else {
      c.modes = modes;
      c.suffix = 1;
      err = run_modes(&c, &best, found, work);
    }
    /* past the deadline or stopped: nothing found, unless an earlier mode's run under
     * uniform_sharding had found a split (written into the plan when that run ended) */
    if (err == HP_LIMIT) err = HP_OK;
  }
  if (err == HP_OK && *found) *objective_out = best;
  release(&c);
  if (err) return hp_fail(d, err, "layer DP: %s", hp_strerror(err));
  return HP_OK;
}
