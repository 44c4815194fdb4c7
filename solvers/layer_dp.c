/* layer_dp.c -- exact layer-to-stage assignment for a fixed configuration and placement
 * (AMP's problem, generalised): per stage position s the serving devices are known, so
 * the time, hand-off, sync and memory of "layers i..j on stage s" follow from prefix
 * sums. A dynamic program over (stage, next layer) keeps, for each state, the Pareto
 * frontier of (max stage time, max sync, sum of stage and hand-off times); the
 * objective (gas-1) max t + sum + max sync is monotone in all three, so the frontier
 * holds an optimal partial solution (proof in docs/search.md). Per stage: recompute or
 * not, and sharding of no layer, every layer, or the shortest suffix that fits. States
 * whose lower bound exceeds the incumbent are pruned. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontier.h"
#include "search.h"

void hp__dp_opts_init(hp_dp_opts *o)
{
  memset(o, 0, sizeof *o);
  o->allow_recompute = 1;
  o->allow_zdp = 1;
  o->cutoff = INFINITY;
  o->deadline = INFINITY;
}

/* A frontier point (frontier.h): its figures, then how it was reached. */
enum { MT, Q, SUM };   /* max stage time, max sync, sum of stage and hand-off times */
typedef struct point {
  double fig[3];       /* [MT], [Q], [SUM] */
  int prev;            /* pool index of the point this one extends, -1 at the start */
  int start;           /* first layer of the stage this point added */
  int zfrom;           /* zdp 2: the stage's layers from zfrom on are sharded */
  unsigned char rec, zdp;   /* zdp: 0 none, 1 every layer, 2 a suffix (zfrom) */
} point;

typedef struct dp_ctx {
  const hp_problem *p;
  hp_plan *pl;
  const hp_dp_opts *o;
  int L, pp, dp;
  hp_costs k;           /* the configuration's and placement's cost tables */
  /* per stage position s */
  int *nclass;          /* [pp] distinct classes of TP group among the stage's replicas */
  int *sclass;          /* [pp * dp] those classes (the first nclass[s] of row s) */
  double *pre;          /* [n_class][L+1] prefix sums of each class's layer times */
  double *emax;         /* [pp][L] hand-off after layer j, slowest replica (0 for the last stage) */
  /* per layer */
  double *zpre;         /* [L+1] prefix sums of param_bytes P / t_l */
  double *gpre;         /* [L+1] prefix sums of grad_bytes P / t_l */
  double *spre;         /* [L+1] prefix sums of state_bytes P / t_l */
  double *rest;         /* [L+1] sum over l >= i of the fastest time of layer l anywhere */
  /* the frontiers */
  hp_fpool pool;        /* of points */
  hp_front *f;          /* [(pp+1) * (L+1)] */
  hp_front_rule rule;   /* at max_frontier points the largest objective goes */
  double best;          /* incumbent objective, for pruning */
} dp_ctx;

static double objective(const dp_ctx *c, double mt, double q, double sum)
{
  return hp_cost_replica(c->pl->gas, mt, sum, 0) + q;
}

static double point_objective(const dp_ctx *c, const point *x)
{
  return objective(c, x->fig[MT], x->fig[Q], x->fig[SUM]);
}

/* The frontiers' score (frontier.h): the objective of a point's figures. */
static double score(const void *ctx, const double *fig)
{
  return objective(ctx, fig[MT], fig[Q], fig[SUM]);
}

static const point *at(const dp_ctx *c, int i) { return hp__fpool_at(&c->pool, i); }

/* A lower bound on the objective of any completion of a point at state (s, i): the
 * remaining layers cost at least their fastest times, and the largest of the remaining
 * pp - s stages is at least their average. Hand-offs and syncs add nothing below. */
static double lower_bound(const dp_ctx *c, const point *pt, int s, int i)
{
  double rest = c->rest[i], mt = pt->fig[MT];
  if (s < c->pp && rest / (c->pp - s) > mt) mt = rest / (c->pp - s);
  return objective(c, mt, pt->fig[Q], pt->fig[SUM] + rest);
}

/* Inserts into a frontier unless dominated; drops the points it dominates, and past
 * max_frontier the least promising point. */
static hp_err insert(dp_ctx *c, hp_front *f, const point *pt)
{
  return hp__front_insert(f, &c->pool, pt, &c->rule) < 0 ? HP_NOMEM : HP_OK;
}

/* Prefix sums of class k's layer times (or of the override, one class). */
static const double *PRE(const dp_ctx *c, int k) { return &c->pre[(size_t)k * (c->L + 1)]; }

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
  c->pre = hp__calloc((size_t)nk * (L + 1), sizeof *c->pre);
  c->emax = hp__calloc((size_t)pp * L, sizeof *c->emax);
  c->zpre = hp__calloc((size_t)L + 1, sizeof *c->zpre);
  c->gpre = hp__calloc((size_t)L + 1, sizeof *c->gpre);
  c->spre = hp__calloc((size_t)L + 1, sizeof *c->spre);
  c->f = hp__calloc((size_t)(pp + 1) * (L + 1), sizeof *c->f);
  c->rest = hp__calloc((size_t)L + 1, sizeof *c->rest);
  if (!c->nclass || !c->sclass || !c->pre || !c->emax || !c->zpre || !c->gpre || !c->spre || !c->f || !c->rest)
    return HP_NOMEM;
  for (int l = 0; l < L; l++) {
    c->zpre[l + 1] = c->zpre[l] + c->k.layer[l].param;
    c->gpre[l + 1] = c->gpre[l] + c->k.layer[l].grad;
    c->spre[l + 1] = c->spre[l] + c->k.layer[l].state;
  }
  for (int k = 0; k < nk; k++) {
    double *pk = &c->pre[(size_t)k * (L + 1)];
    for (int l = 0; l < L; l++)
      pk[l + 1] = pk[l] + (c->o->layer_time ? c->o->layer_time[l] : hp_costs_time(&c->k, k, l));
  }
  /* the classes of each stage's replicas: replicas of one class have equal times */
  for (int s = 0; s < pp; s++)
    for (int r = 0; r < dp; r++) {
      int k = c->o->layer_time ? 0 : c->k.slot_class[s * dp + r], seen = 0;
      for (int q = 0; q < c->nclass[s]; q++) seen |= c->sclass[s * dp + q] == k;
      if (!seen) c->sclass[s * dp + c->nclass[s]++] = k;
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

/* One way to run layers i..j on stage s: its time, sync and whether it fits. */
typedef struct option { double t, q; int zfrom; unsigned char rec, zdp; } option;

/* The shortest suffix k..j of the stage whose sharding brings its memory (replicated
 * terms mdp) within capacity, or -1: sharding a layer saves (1 - 1/dp) of its states and
 * adds the largest sharded layer's gather buffer; layers of a stack are alike, so a short
 * suffix shards nearly as few bytes as any set that fits. */
static int shard_suffix(const dp_ctx *c, int s, int i, int j, const hp_mem_terms *mdp, int rec,
                        hp_mem_terms *part)
{
  int dp = c->pl->dp;
  double buf = 0;
  for (int k = j; k > i; k--) {       /* k = i is every layer: that option exists apart */
    hp_mem_terms t = *mdp;
    double sz = c->spre[j + 1] - c->spre[k];
    if (c->k.layer[k].param > buf) buf = c->k.layer[k].param;
    t.states -= sz * (1 - 1.0 / dp);
    t.gather = buf;
    if (hp_cost_mem_total(&t, c->k.inflight[s], rec) <= c->k.cap[s]) {
      *part = t;
      return k;
    }
  }
  return -1;
}

static int stage_options(const dp_ctx *c, int s, int i, int j, const hp_mem_terms *mdp,
                         const hp_mem_terms *mz, option *out)
{
  const hp_plan *pl = c->pl;
  int n = 0, dp = pl->dp;
  double base = 0;
  for (int q = 0; q < c->nclass[s]; q++) {
    const double *pk = PRE(c, c->sclass[s * dp + q]);
    if (pk[j + 1] - pk[i] > base) base = pk[j + 1] - pk[i];
  }
  double zb = c->zpre[j + 1] - c->zpre[i], gb = c->gpre[j + 1] - c->gpre[i];
  for (int z = 0; z <= (c->o->allow_zdp && dp > 1); z++)
    for (int rec = 0; rec <= c->o->allow_recompute; rec++) {
      double mem = hp_cost_mem_total(z ? mz : mdp, c->k.inflight[s], rec);
      if (!c->o->ignore_memory && mem > c->k.cap[s]) {
        hp_mem_terms part;
        int k;
        /* replicated does not fit: shard the shortest suffix that makes it fit */
        if (z || !c->o->allow_zdp || dp <= 1 || c->o->ignore_memory || i == j ||
            (k = shard_suffix(c, s, i, j, mdp, rec, &part)) < 0)
          continue;
        double pz = c->zpre[j + 1] - c->zpre[k], gz = c->gpre[j + 1] - c->gpre[k];
        option *op = &out[n++];
        op->t = hp_cost_recompute(base, base, rec) +
                hp_cost_gather(pz, 0, 1, dp, c->k.bdp[s], c->k.latdp[s]) +
                hp_cost_grad_scatter(gz, 1, dp, c->k.bdp[s], c->k.latdp[s]);
        op->q = hp_cost_reduce(gb - gz, 0, dp, c->k.bdp[s], c->k.latdp[s]);
        op->rec = (unsigned char)rec;
        op->zdp = 2;
        op->zfrom = k;
        continue;
      }
      option *op = &out[n++];
      op->t = hp_cost_recompute(base, base, rec) +
              (z ? hp_cost_gather(zb, 0, 1, dp, c->k.bdp[s], c->k.latdp[s]) +
                   hp_cost_grad_scatter(gb, 1, dp, c->k.bdp[s], c->k.latdp[s]) : 0);
      op->q = hp_cost_reduce(z ? 0 : gb, 0, dp, c->k.bdp[s], c->k.latdp[s]);
      op->rec = (unsigned char)rec;
      op->zdp = (unsigned char)z;
      op->zfrom = i;
      if (!rec) break;   /* no recompute fits: recomputing would only be slower */
    }
  return n;
}

static hp_err run_dp(dp_ctx *c, long *work)
{
  int L = c->L, pp = c->pp;
  point start = { { 0, 0, 0 }, -1, 0, 0, 0, 0 };
  hp_err err;
  hp_front *f0 = &c->f[0];
  if ((err = insert(c, f0, &start))) return err;
  for (int s = 0; s < pp; s++)
    for (int i = s; i <= L - (pp - s); i++) {
      hp_front *from = &c->f[(size_t)s * (L + 1) + i];
      hp_mem_terms mdp = {0}, mz = {0};
      if (from->n == 0) continue;
      if (hp__stop_now(c->o->stop, c->o->deadline)) return HP_LIMIT;
      for (int j = i; j <= L - (pp - s); j++) {
        option ops[4];
        int nop;
        if (s == pp - 1 && j < L - 1) {   /* the last stage takes every remaining layer */
          hp_costs_mem_add(&c->k, j, HP_SHARD_DP, 1, -1, &mdp);
          hp_costs_mem_add(&c->k, j, HP_SHARD_ZDP, 1, -1, &mz);
          continue;
        }
        hp_costs_mem_add(&c->k, j, HP_SHARD_DP, 1, -1, &mdp);
        hp_costs_mem_add(&c->k, j, HP_SHARD_ZDP, 1, -1, &mz);
        nop = stage_options(c, s, i, j, &mdp, &mz, ops);
        /* memory only grows with the layers, and (gas - 1) x the stage time bounds the
         * objective: past either limit no longer stage can help */
        if (nop == 0) break;
        double tleast = ops[0].t;
        for (int o = 1; o < nop; o++) if (ops[o].t < tleast) tleast = ops[o].t;
        if ((double)(c->pl->gas - 1) * tleast > c->best * (1 + 1e-12)) break;
        double e = s < pp - 1 ? c->emax[(size_t)s * L + j] : 0;
        hp_front *to = &c->f[(size_t)(s + 1) * (L + 1) + j + 1];
        for (int o = 0; o < nop; o++)
          for (int k = 0; k < from->n; k++) {
            int pi = from->ix[k];
            const point *x = at(c, pi);
            point np = { { x->fig[MT] > ops[o].t ? x->fig[MT] : ops[o].t,
                           x->fig[Q] > ops[o].q ? x->fig[Q] : ops[o].q, x->fig[SUM] + ops[o].t + e },
                         pi, i, ops[o].zfrom, ops[o].rec, ops[o].zdp };
            if (lower_bound(c, &np, s + 1, j + 1) > c->best * (1 + 1e-12)) continue;
            if (s == pp - 1) {
              double ob = point_objective(c, &np);
              if (ob < c->best) c->best = ob;
            }
            if ((err = insert(c, to, &np))) return err;
            if (work) (*work)++;
          }
      }
    }
  return HP_OK;
}

/* An incumbent before the DP: the even split with, per stage, the fastest option that
 * fits. Any choice is a valid upper bound for pruning. */
static double even_split_bound(const dp_ctx *c)
{
  int L = c->L, pp = c->pp, base = L / pp, rem = L % pp, i = 0;
  double mt = 0, q = 0, sum = 0;
  for (int s = 0; s < pp; s++) {
    int j = i + base + (s < rem) - 1;
    hp_mem_terms mdp = {0}, mz = {0};
    option ops[4];
    int nop, b = 0;
    for (int l = i; l <= j; l++) {
      hp_costs_mem_add(&c->k, l, HP_SHARD_DP, 1, -1, &mdp);
      hp_costs_mem_add(&c->k, l, HP_SHARD_ZDP, 1, -1, &mz);
    }
    nop = stage_options(c, s, i, j, &mdp, &mz, ops);
    if (nop == 0) return INFINITY;
    for (int o = 1; o < nop; o++) if (ops[o].t < ops[b].t) b = o;
    if (ops[b].t > mt) mt = ops[b].t;
    if (ops[b].q > q) q = ops[b].q;
    sum += ops[b].t + (s < pp - 1 ? c->emax[(size_t)s * L + j] : 0);
    i = j + 1;
  }
  return objective(c, mt, q, sum);
}

static void release(dp_ctx *c)
{
  if (c->f)
    for (size_t i = 0; i < (size_t)(c->pp + 1) * (c->L + 1); i++) free(c->f[i].ix);
  free(c->f);
  hp__fpool_release(&c->pool);
  free(c->nclass);
  free(c->sclass);
  free(c->pre);
  free(c->emax);
  hp_costs_release(&c->k);
  free(c->zpre);
  free(c->gpre);
  free(c->spre);
  free(c->rest);
}

hp_err hp__dp_split(const hp_problem *prob, hp_plan *plan, const hp_dp_opts *o,
                    int *found, double *objective_out, long *work, hp_diag *d)
{
  dp_ctx c;
  hp_err err;
  memset(&c, 0, sizeof c);
  c.p = prob;
  c.pl = plan;
  c.o = o;
  c.L = prob->model->n_layers;
  c.pp = plan->pp;
  c.dp = plan->dp;
  hp__fpool_init(&c.pool, sizeof(point), 4096, 0);
  c.rule = (hp_front_rule){ o->max_frontier, HP_FRONT_DROP_WORST, score, &c };
  *found = 0;
  if (plan->pp > c.L) return HP_OK;
  if ((err = prepare(&c)) == HP_OK) {
    c.best = even_split_bound(&c);
    if (o->cutoff < c.best) c.best = o->cutoff;
    err = run_dp(&c, work);
    if (err == HP_LIMIT) { release(&c); return HP_OK; }   /* past the deadline or stopped: nothing found */
  }
  if (err == HP_OK) {
    const hp_front *fin = &c.f[(size_t)c.pp * (c.L + 1) + c.L];
    int bi = -1;
    double bo = INFINITY;
    for (int k = 0; k < fin->n; k++) {
      double ob = point_objective(&c, at(&c, fin->ix[k]));
      if (ob < bo) { bo = ob; bi = fin->ix[k]; }
    }
    if (bi >= 0) {
      *found = 1;
      *objective_out = bo;
      for (int s = c.pp - 1, pi = bi; s >= 0; s--) {
        const point *x = at(&c, pi);
        plan->first[s] = x->start;
        plan->recompute[s] = x->rec;
        for (int l = x->start; l < (s == c.pp - 1 ? c.L : plan->first[s + 1]); l++)
          plan->mode[l] = x->zdp == 1 || (x->zdp == 2 && l >= x->zfrom) ? HP_SHARD_ZDP : HP_SHARD_DP;
        pi = x->prev;
      }
      plan->first[c.pp] = c.L;
    }
  }
  release(&c);
  if (err) return hp_fail(d, err, "layer DP: %s", hp_strerror(err));
  return HP_OK;
}
