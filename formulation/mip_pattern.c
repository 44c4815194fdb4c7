/* mip_pattern.c -- the pattern MIP (hp_mip.h): the pattern relaxation of one
 * configuration as a mixed-integer program, placement inside it as counts of TP groups
 * per node class. The same figures as the pattern DP (hp_pattern.h), reached the other
 * way: where the DP prices sharding by the least fraction and counts groups by state or
 * by prices, the program chooses every layer's sharding and every stage's counts, so its
 * optimum is never below the DP's bound; both bound every plan. Conditional rows carry
 * big-M constants from the largest value their right side can take. Times in
 * milliseconds, memory in GiB. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mip_internal.h"

void hp_mip_pmap_release(hp_mip_pmap *map)
{
  if (!map) return;
  hp_mip_map_release(&map->base);
  free(map->kind);
  free(map->count);
  memset(map, 0, sizeof *map);
}

void hp_mip_decode_pattern(const hp_mip_pmap *map, const double *x, int *kind, int *count)
{
  int pp = map->base.pp, K = map->n_kind, C = map->n_cls;
  for (int s = 0; s < pp; s++) {
    kind[s] = 0;
    for (int k = 0; k < K; k++)
      if (x[map->kind[s * K + k]] > 0.5) kind[s] = k;
    for (int c = 0; c < C; c++) count[s * C + c] = (int)lround(x[map->count[s * C + c]]);
  }
}

/* Adds the presence of class c in stage s (the sum of the kinds holding it), times v. */
static void add_presence(rowb *r, const hp_patterns *pt, const hp_mip_pmap *map, int s, int c,
                         double v)
{
  for (int k = 0; k < pt->n_kind; k++)
    if (pt->kind[k].mask >> c & 1) rb_add(r, map->kind[s * pt->n_kind + k], v);
}

/* Adds class c's compute of stage s (with recompute), times sign, milliseconds. */
static void add_compute(rowb *r, const hp_costs *tab, int s, int c, const int *x, const int *v,
                        double sign)
{
  double rc = hp_cost_recompute(1, 1, 1) - 1;
  int L = tab->n_layers, pp = tab->pp;
  for (int l = 0; l < L; l++) {
    double t = hp_costs_time(tab, c, l) * HP_MIP_MS;
    rb_add(r, x[l * pp + s], sign * t);
    if (v[l * pp + s] >= 0 && tab->layer[l].ck) rb_add(r, v[l * pp + s], sign * t * rc);
  }
}

/* The terms of T >= (gas - 1) (peak(s*) + (e(s*-1) + e(s*)) / 2) + peak(s*) + sum_{s != s*}
 * rest(s) + sum e into r (column T, stage st = s*): the pair of hand-offs is pc[st] where
 * the middle stage has one (the chain rule below), else e on both sides. */
static void pipe_row(rowb *r, const hp_costs *tab, int T, int st, const int *peak,
                     const int *rest, const int *e, const int *pc)
{
  int pp = tab->pp;
  double g1 = hp_cost_replica(tab->gas, 1, 0, 0);
  rb_add(r, T, 1);
  rb_add(r, peak[st], -g1 - 1);
  if (st > 0 && st + 1 < pp && pc[st] >= 0) {
    rb_add(r, pc[st], -g1 / 2);
  } else {
    if (st > 0) rb_add(r, e[st - 1], -g1 / 2);
    if (st + 1 < pp) rb_add(r, e[st], -g1 / 2);
  }
  for (int s = 0; s < pp; s++) {
    if (s != st) rb_add(r, rest[s], -1);
    if (s + 1 < pp) rb_add(r, e[s], -1);
  }
}

hp_err hp_mip_build_pattern(const hp_problem *prob, const hp_patterns *pt, hp_mip **out,
                            hp_mip_pmap *map, hp_diag *d)
{
  const hp_costs *tab = &pt->tab;
  int L = tab->n_layers, pp = tab->pp, dp = tab->dp, K = pt->n_kind, C = pt->n_cls;
  double rc = hp_cost_recompute(1, 1, 1) - 1, sum_param = 0, sum_grad = 0, max_out = 0;
  hp_mip *m = NULL;
  int *x = hp__calloc((size_t)L * pp, sizeof *x), *v = hp__calloc((size_t)L * pp, sizeof *v);
  int *w = hp__calloc((size_t)L * pp, sizeof *w), *tmax = hp__calloc((size_t)pp, sizeof *tmax);
  int *tmin = hp__calloc((size_t)pp, sizeof *tmin), *g = hp__calloc((size_t)pp, sizeof *g);
  int *e = hp__calloc((size_t)pp, sizeof *e), *pc = hp__calloc((size_t)pp, sizeof *pc);
  int *eh = hp__calloc((size_t)pp, sizeof *eh), *zc = hp__calloc((size_t)pp, sizeof *zc);
  int *zv = hp__calloc((size_t)pp, sizeof *zv);
  double *obw = hp__calloc((size_t)2 * K + 1, sizeof *obw), *olat = obw + K;
  double *bigc = hp__calloc((size_t)C, sizeof *bigc);
  rowb r = {0};
  hp_err err = HP_OK;

  *out = NULL;
  memset(map, 0, sizeof *map);
  if (pp > L) { err = hp_fail(d, HP_PLAN, "MIP: pp %d exceeds the %d layers", pp, L); goto done; }
  map->n_kind = K;
  map->n_cls = C;
  map->kind = hp__calloc((size_t)pp * K + 1, sizeof *map->kind);
  map->count = hp__calloc((size_t)pp * C + 1, sizeof *map->count);
  if (!x || !v || !w || !tmax || !tmin || !g || !e || !pc || !eh || !zc || !zv || !obw || !bigc || !map->kind || !map->count ||
      hp_mip_create(&m, d) || hp__mip_stages(m, &r, L, pp, dp, 1, (hp_job_modes(&prob->job) >> HP_SHARD_ZDP & 1) != 0,
                     &map->base, x, v, w)) {
    err = hp_fail(d, HP_NOMEM, "out of memory building the pattern MIP");
    goto done;
  }
  m->obj_scale = 1 / HP_MIP_MS;
  for (int l = 0; l < L; l++) {
    sum_param += tab->layer[l].param;
    sum_grad += tab->layer[l].grad;
    if (tab->layer[l].out > max_out) max_out = tab->layer[l].out;
  }

  /* Kinds and counts. */
  for (int s = 0; s < pp; s++) {
    for (int k = 0; k < K; k++) {
      map->kind[s * K + k] = col(m, 0, 1, 1, 0, "kappa_s%d_k%d", s, k);
      rb_add(&r, map->kind[s * K + k], 1);
    }
    rb_emit(m, &r, 'E', 1, "kind_s%d", s);
    for (int c = 0; c < C; c++) {
      int cap = dp < pt->groups[c] ? dp : pt->groups[c];
      int n = map->count[s * C + c] = col(m, 0, cap, 1, 0, "n_s%d_c%d", s, c);
      rb_add(&r, n, 1);                       /* present: at least one group */
      add_presence(&r, pt, map, s, c, -1);
      rb_emit(m, &r, 'G', 0, "nlo_s%d_c%d", s, c);
      rb_add(&r, n, 1);                       /* absent: none */
      add_presence(&r, pt, map, s, c, -cap);
      rb_emit(m, &r, 'L', 0, "nhi_s%d_c%d", s, c);
    }
    for (int c = 0; c < C; c++) rb_add(&r, map->count[s * C + c], 1);
    rb_emit(m, &r, 'E', dp, "groups_s%d", s);
  }
  {
    /* every group used, or, where the plan's pp dp groups are fewer than the classes hold
     * (idle devices: a configuration with pp tp dp < D), at most the supply of each */
    long supply = 0;
    for (int c = 0; c < C; c++) supply += pt->groups[c];
    for (int c = 0; c < C; c++) {
      for (int s = 0; s < pp; s++) rb_add(&r, map->count[s * C + c], 1);
      rb_emit(m, &r, supply > (long)pp * dp ? 'L' : 'E', pt->groups[c], "supply_c%d", c);
    }
  }

  /* Chained (hp_pattern.h, bdp_chain): zc_s = 1 where every replica keeps both hand-offs
   * of the middle stage s inside a node. A stage of a kind with a chained figure then has
   * its replica groups at that figure (gathers and sync below), else some replica crosses
   * (the worst replica's rows below): the DP's two variants (pattern_dp.c). Only where
   * some pair of kinds leaves the choice (not crowded, the kind before not on one node):
   * elsewhere a replica crosses, and the columns would only slow the backends (AMP's
   * 16-GPU row, GLPK: 3.3 s to 5.3 s with them on every program) */
  int choice = 0;
  for (int b = 0; b < K && dp > 1; b++)
    for (int a = 0; a < K && pt->kind[b].bdp_chain > 0; a++) {
      size_t ab = (size_t)a * K + b;
      if (pt->hbw[ab] > 0 && !pt->crowd[ab] && !pt->kind[a].single) choice = 1;
    }
  for (int s = 0; s < pp; s++) zc[s] = choice && s > 0 && s + 1 < pp ? col(m, 0, 1, 1, 0, "zc_s%d", s) : -1;

  /* Gathers: g_s >= gather at the kind's bandwidth (no sharding when dp = 1 or the job
   * has no zdp); where zc_s = 1, at its chained figure too. */
  for (int s = 0; s < pp; s++) {
    g[s] = -1;
    if (dp <= 1) continue;
    int y = hp__mip_any_sharded(m, &r, L, pp, s, w);
    if (y < 0) continue;
    g[s] = col(m, 0, INFINITY, 0, 0, "g_s%d", s);
    for (int k = 0; k < K; k++)
      for (int vb = 0; vb < 2; vb++) {
        double bdp = vb ? pt->kind[k].bdp_chain : pt->kind[k].bdp;
        if (vb && !(bdp > 0 && zc[s] >= 0)) continue;
        /* per byte sharded: the gather and the gradients' per-micro-batch scatter, and the
         * scatter's latency once if the stage shards a layer (y_s), at the kind's bounds
         * (bdp at least Bdp, latdp at most latdp: cost-model.md 3, 7.22) */
        double gam = hp_cost_gather(1, 0, 1, dp, bdp, 0) * HP_MIP_MS;
        double gr = hp_cost_grad_scatter(1, 1, dp, bdp, 0) * HP_MIP_MS;
        double glat = hp_cost_grad_scatter(0, 1, dp, bdp, pt->kind[k].latdp) * HP_MIP_MS;
        double big = gam * sum_param + gr * sum_grad + glat;
        rb_add(&r, g[s], 1);
        for (int l = 0; l < L; l++)
          rb_add(&r, w[l * pp + s], -gam * tab->layer[l].param - gr * tab->layer[l].grad);
        rb_add(&r, y, -glat);
        rb_add(&r, map->kind[s * K + k], -big);
        if (vb) rb_add(&r, zc[s], -big);
        rb_emit(m, &r, 'G', -(vb ? 2 : 1) * big, vb ? "gatherc_s%d_k%d" : "gather_s%d_k%d", s, k);
      }
  }

  /* Stage times: the slowest class present and a fastest one (chosen). */
  int any_g = 0;                       /* some stage may shard (zdp): its g_s in the rows */
  for (int s = 0; s < pp; s++) any_g |= g[s] >= 0;
  for (int c = 0; c < C; c++) {
    double worst_gather = 0;
    for (int l = 0; l < L; l++) bigc[c] += hp_costs_time(tab, c, l) * (1 + rc) * HP_MIP_MS;
    for (int k = 0; k < K; k++) {
      /* the chained figure is the smaller, where its rows are (choice): its gathers the
       * larger */
      double bdp = choice && pt->kind[k].bdp_chain > 0 ? pt->kind[k].bdp_chain : pt->kind[k].bdp;
      double gam = (hp_cost_gather(1, 0, 1, dp, bdp, 0) * sum_param +
                    hp_cost_grad_scatter(sum_grad, 1, dp, bdp, pt->kind[k].latdp)) * HP_MIP_MS;
      if (any_g && gam > worst_gather) worst_gather = gam;
    }
    bigc[c] += worst_gather;
  }
  for (int s = 0; s < pp; s++) {
    tmax[s] = col(m, 0, INFINITY, 0, 0, "tmax_s%d", s);
    tmin[s] = C > 1 ? col(m, 0, INFINITY, 0, 0, "tmin_s%d", s) : tmax[s];
    for (int c = 0; c < C; c++) {
      rb_add(&r, tmax[s], 1);
      add_compute(&r, tab, s, c, x, v, -1);
      rb_add(&r, g[s], -1);
      add_presence(&r, pt, map, s, c, -bigc[c]);
      rb_emit(m, &r, 'G', -bigc[c], "tmax_s%d_c%d", s, c);
    }
    if (C == 1) {
      /* one class: the stage time itself (tmax >= it; the objective holds it down) */
      continue;
    }
    int q[HP_PATTERN_MAX_CLASSES];
    for (int c = 0; c < C; c++) {
      q[c] = col(m, 0, 1, 1, 0, "fast_s%d_c%d", s, c);
      rb_add(&r, q[c], 1);                    /* only a class that is present */
      add_presence(&r, pt, map, s, c, -1);
      rb_emit(m, &r, 'L', 0, "fastp_s%d_c%d", s, c);
      rb_add(&r, tmin[s], 1);
      add_compute(&r, tab, s, c, x, v, -1);
      rb_add(&r, g[s], -1);
      rb_add(&r, q[c], -bigc[c]);
      rb_emit(m, &r, 'G', -bigc[c], "tmin_s%d_c%d", s, c);
    }
    for (int c = 0; c < C; c++) rb_add(&r, q[c], 1);
    rb_emit(m, &r, 'E', 1, "fast_s%d", s);
  }

  /* Hand-offs: the bound of the two kinds around each boundary, eh_s (what every replica
   * pays); e_s, replica r*'s (below), is no less. */
  for (int s = 0; s + 1 < pp; s++) {
    e[s] = col(m, 0, INFINITY, 0, 0, "e_s%d", s);
    eh[s] = col(m, 0, INFINITY, 0, 0, "eh_s%d", s);
    rb_add(&r, e[s], 1);
    rb_add(&r, eh[s], -1);
    rb_emit(m, &r, 'G', 0, "ehe_s%d", s);
    for (int a = 0; a < K; a++)
      for (int b = 0; b < K; b++) {
        size_t ix = (size_t)a * K + b;
        if (!(pt->hbw[ix] > 0)) {             /* no placement has that pair */
          rb_add(&r, map->kind[s * K + a], 1);
          rb_add(&r, map->kind[(s + 1) * K + b], 1);
          rb_emit(m, &r, 'L', 1, "nopair_s%d_%d_%d", s, a, b);
          continue;
        }
        double lat = hp_cost_handoff(0, tab->mbs, tab->tp, pt->hbw[ix], pt->hlat[ix]) * HP_MIP_MS;
        double big = hp_cost_handoff(max_out, tab->mbs, tab->tp, pt->hbw[ix], pt->hlat[ix]) * HP_MIP_MS;
        rb_add(&r, eh[s], 1);
        for (int l = 0; l + 1 < L; l++) {
          double h = hp_cost_handoff(tab->layer[l].out, tab->mbs, tab->tp, pt->hbw[ix], 0) * HP_MIP_MS;
          rb_add(&r, map->base.u[l * pp + s], -h);
          rb_add(&r, map->base.u[(l + 1) * pp + s], h);
        }
        rb_add(&r, map->kind[s * K + a], -big);
        rb_add(&r, map->kind[(s + 1) * K + b], -big);
        rb_emit(m, &r, 'G', lat - 2 * big, "hand_s%d_%d_%d", s, a, b);
      }
  }

  /* Replica r*'s hand-off at each boundary, as the DP takes it (pattern_dp.c): inside a
   * node (z_s = 1: at least intra(a, b), only where a node can hold both its groups) or
   * between nodes (z_s = 0: at least inter(a, b), only where a link can); and where no
   * node can hold its groups of stages s-1, s and s+1 (hp_patterns.chain of their kinds
   * a, b), not both of the middle stage's hand-offs inside a node. */
  for (int s = 0, zprev = -1; s + 1 < pp; s++) {
    int z = zv[s] = col(m, 0, 1, 1, 0, "z_s%d", s);
    for (int a = 0; a < K; a++)
      for (int b = 0; b < K; b++) {
        size_t ab = (size_t)a * K + b;
        if (!(pt->hbw[ab] > 0)) continue;     /* the pair is excluded above */
        for (int w2 = 0; w2 < 2; w2++) {
          double bw = w2 ? pt->xbw[ab] : pt->ibw[ab], lat = w2 ? pt->xlat[ab] : pt->ilat[ab];
          if (!(bw > 0)) {                    /* none can: z_s = w2 is excluded */
            rb_add(&r, map->kind[s * K + a], 1);
            rb_add(&r, map->kind[(s + 1) * K + b], 1);
            rb_add(&r, z, w2 ? -1 : 1);
            rb_emit(m, &r, 'L', w2 ? 1 : 2, "zno%d_s%d_%d_%d", w2, s, a, b);
            continue;
          }
          /* e_s >= handoff(bw, lat) where both kinds are taken and z_s = 1 - w2 */
          double big = hp_cost_handoff(max_out, tab->mbs, tab->tp, bw, lat) * HP_MIP_MS;
          rb_add(&r, e[s], 1);
          for (int l = 0; l + 1 < L; l++) {
            double h = hp_cost_handoff(tab->layer[l].out, tab->mbs, tab->tp, bw, 0) * HP_MIP_MS;
            rb_add(&r, map->base.u[l * pp + s], -h);
            rb_add(&r, map->base.u[(l + 1) * pp + s], h);
          }
          rb_add(&r, map->kind[s * K + a], -big);
          rb_add(&r, map->kind[(s + 1) * K + b], -big);
          rb_add(&r, z, w2 ? big : -big);
          rb_emit(m, &r, 'G', hp_cost_handoff(0, tab->mbs, tab->tp, bw, lat) * HP_MIP_MS - (w2 ? 2 : 3) * big,
                  "hz%d_s%d_%d_%d", w2, s, a, b);
        }
      }
    for (int a = 0; a < K && zprev >= 0; a++)
      for (int b = 0; b < K; b++) {
        if (pt->chain[(size_t)a * K + b] || !(pt->ibw[(size_t)a * K + b] > 0)) continue;
        rb_add(&r, zprev, 1);
        rb_add(&r, z, 1);
        rb_add(&r, map->kind[(s - 1) * K + a], 1);
        rb_add(&r, map->kind[s * K + b], 1);
        rb_emit(m, &r, 'L', 3, "zalt_s%d_%d_%d", s, a, b);
      }
    zprev = z;
  }

  /* Both hand-offs of a middle stage, as the DP takes them (pattern_dp.c): where no node
   * can hold one replica's groups of stages s-1, s and s+1 (hp_patterns.chain of their
   * kinds a, b), one of them leaves its node: pc_s >= min(intra(a, b) + inter_out(b),
   * inter(a, b) + e_s), the min chosen by a binary y_s; always pc_s >= e_{s-1} + e_s.
   * inter_out(b): the best link and least latency between nodes to any next kind. */
  for (int b = 0; b < K; b++) {        /* inter_out(b) */
    obw[b] = 0;
    olat[b] = INFINITY;
    for (int k2 = 0; k2 < K; k2++) {
      size_t kk = (size_t)b * K + k2;
      if (pt->xbw[kk] > obw[b]) obw[b] = pt->xbw[kk];
      if (pt->xbw[kk] > 0 && pt->xlat[kk] < olat[b]) olat[b] = pt->xlat[kk];
    }
  }
  for (int s = 0; s < pp; s++) pc[s] = -1;
  for (int s = 1; s + 1 < pp; s++) {
    double M = 1;
    int any = 0;
    for (int a = 0; a < K; a++)
      for (int b = 0; b < K; b++) {
        size_t ab = (size_t)a * K + b;
        if (pt->chain[ab]) continue;
        any = 1;
        double ox = obw[b] > 0 ? hp_cost_handoff(max_out, tab->mbs, tab->tp, obw[b], olat[b]) : 0;
        if (pt->ibw[ab] > 0) M = fmax(M, (hp_cost_handoff(max_out, tab->mbs, tab->tp, pt->ibw[ab], pt->ilat[ab]) + ox) * HP_MIP_MS + 1);
        if (pt->xbw[ab] > 0) M = fmax(M, hp_cost_handoff(max_out, tab->mbs, tab->tp, pt->xbw[ab], pt->xlat[ab]) * HP_MIP_MS + 1);
      }
    if (!any) continue;
    pc[s] = col(m, 0, INFINITY, 0, 0, "pc_s%d", s);
    int y = col(m, 0, 1, 1, 0, "pcy_s%d", s);
    rb_add(&r, pc[s], 1);
    rb_add(&r, e[s - 1], -1);
    rb_add(&r, e[s], -1);
    rb_emit(m, &r, 'G', 0, "pcsum_s%d", s);
    for (int a = 0; a < K; a++)
      for (int b = 0; b < K; b++) {
        size_t ab = (size_t)a * K + b;
        int ra = !pt->chain[ab] && pt->ibw[ab] > 0 && obw[b] > 0, rx = !pt->chain[ab] && pt->xbw[ab] > 0;
        for (int w2 = 0; w2 < 2; w2++) {
          if (w2 == 0 ? !ra : !rx) continue;
          /* w2 0: intra(a, b) at stage s-1's last layer + inter_out(b) at stage s's; 1:
           * inter(a, b) + e_s; with both rows, y_s = 1 frees the first, 0 the second */
          double bw = w2 ? pt->xbw[ab] : pt->ibw[ab], lat = w2 ? pt->xlat[ab] : pt->ilat[ab];
          double cst = 2 * lat * HP_MIP_MS + (w2 ? 0 : 2 * olat[b] * HP_MIP_MS) - 2 * M;
          rb_add(&r, pc[s], 1);
          for (int l = 0; l + 1 < L; l++) {
            double h = hp_cost_handoff(tab->layer[l].out, tab->mbs, tab->tp, bw, 0) * HP_MIP_MS;
            rb_add(&r, map->base.u[l * pp + s - 1], -h);
            rb_add(&r, map->base.u[(l + 1) * pp + s - 1], h);
            if (w2 == 0) {
              double o = hp_cost_handoff(tab->layer[l].out, tab->mbs, tab->tp, obw[b], 0) * HP_MIP_MS;
              rb_add(&r, map->base.u[l * pp + s], -o);
              rb_add(&r, map->base.u[(l + 1) * pp + s], o);
            }
          }
          if (w2) rb_add(&r, e[s], -1);
          rb_add(&r, map->kind[(s - 1) * K + a], -M);
          rb_add(&r, map->kind[s * K + b], -M);
          if (ra && rx) {
            rb_add(&r, y, w2 ? -M : M);
            if (w2) cst -= M;
          }
          rb_emit(m, &r, 'G', cst, "pc%d_s%d_%d_%d", w2, s, a, b);
        }
      }
  }

  /* T >= (gas - 1) (t_max(s*) + (e(s*-1) + e(s*)) / 2) + t_max(s*) + sum_{s != s*} t_min(s)
   * + sum e, every s*: the replica r* that holds stage s*'s slowest slot has period
   * max_s c[s,r*] >= c[s*,r*] = t[s*,r*] + (e[s*-1,r*] + e[s*,r*]) / 2 (cost-model.md 3,
   * 7.16), and each e here is below every replica's hand-off (shared lanes are slower). */
  map->base.obj_pipe = col(m, 0, INFINITY, 0, 1, "T");
  for (int st = 0; st < pp; st++) {
    pipe_row(&r, tab, map->base.obj_pipe, st, tmax, tmin, e, pc);
    rb_emit(m, &r, 'G', 0, "pipe_s%d", st);
  }

  /* The worst replica of a stage of one class (its replicas all as slow, so T >= T[r] for
   * each, and the least sum of hand-offs is r*'s): T >= (gas - 1) (t_max + wq_s / 2) +
   * t_max + sum_{s' != s} t_min + sum e, wq_s at least (hp_patterns.crowd, wbw), with a the
   * previous kind, b the stage's, c the next:
   *   crowd(a, b): min(intra(a, b) + inter_out(b), inter(a, b) + eh_s), y chooses;
   *   wbw(a, b):   worst(a, b) + eh_s (0 at the last stage);
   *   wbw(b, c):   eh_{s-1} (0 at the first stage) + worst(b, c).
   * The DP (pattern_dp.c) takes the same pairs, with the least over next kinds where this
   * knows the next kind, so this optimum is not below its bound. */
  {
    double big = 1;                    /* the largest such pair, for the big-M rows */
    for (size_t ab = 0; ab < (size_t)K * K; ab++) {
      double bws[4] = { pt->ibw[ab], pt->xbw[ab], pt->wbw[ab], pt->hbw[ab] };
      double lats[4] = { pt->ilat[ab], pt->xlat[ab], pt->xlat[ab], pt->hlat[ab] };
      for (int q = 0; q < 4; q++)
        if (bws[q] > 0) big = fmax(big, 2 * hp_cost_handoff(max_out, tab->mbs, tab->tp, bws[q], lats[q]) * HP_MIP_MS + 1);
    }
    for (int b = 0; b < K; b++)
      if (obw[b] > 0) big = fmax(big, 2 * hp_cost_handoff(max_out, tab->mbs, tab->tp, obw[b], olat[b]) * HP_MIP_MS + 1);
    for (int st = 0; st < pp; st++) {
      int wq = -1, y = -1;
      for (int b = 0; b < K; b++) {
        if (!hp_patterns_one_class(pt, b)) continue;
        for (int a = 0; a < K; a++) {
          size_t ab = (size_t)a * K + b, ba = (size_t)b * K + a;
          /* rows: 0 crowd intra-in, 1 crowd inter-in, 2 worst in (a, b), 3 worst out (b, a);
           * a chained kind b after a single a crosses as a crowded one does (s would be on
           * a's node), after another unless zc_s = 1 (free: the chained figure holds) */
          int use[4] = { 0, 0, 0, 0 };
          int chained = st > 0 && st + 1 < pp && dp > 1 && pt->kind[b].bdp_chain > 0;
          int cross = pt->crowd[ab] || (chained && pt->kind[a].single);
          if (st > 0 && st + 1 < pp && (cross || chained) && pt->hbw[ab] > 0) {
            use[0] = pt->ibw[ab] > 0 && obw[b] > 0;
            use[1] = pt->xbw[ab] > 0;
          }
          use[2] = st > 0 && pt->wbw[ab] > 0;
          use[3] = st + 1 < pp && pt->wbw[ba] > 0;
          for (int q = 0; q < 4; q++) {
            if (!use[q]) continue;
            if (wq < 0) wq = col(m, 0, INFINITY, 0, 0, "wq_s%d", st);
            if (q < 2 && use[0] && use[1] && y < 0) y = col(m, 0, 1, 1, 0, "wqy_s%d", st);
            /* the hand-off into the stage (at stage st-1's last layer) and out of it (at
             * its own), each over its link */
            double bin = q == 0 ? pt->ibw[ab] : q == 1 ? pt->xbw[ab] : q == 2 ? pt->wbw[ab] : 0;
            double lin = q == 0 ? pt->ilat[ab] : q == 1 || q == 2 ? pt->xlat[ab] : 0;
            double bout = q == 0 ? obw[b] : q == 3 ? pt->wbw[ba] : 0;
            double lout = q == 0 ? olat[b] : q == 3 ? pt->xlat[ba] : 0;
            double cst = (bin > 0 ? hp_cost_handoff(0, tab->mbs, tab->tp, bin, lin) : 0) * HP_MIP_MS +
                         (bout > 0 ? hp_cost_handoff(0, tab->mbs, tab->tp, bout, lout) : 0) * HP_MIP_MS - 2 * big;
            rb_add(&r, wq, 1);
            for (int l = 0; l + 1 < L; l++) {
              if (bin > 0) {
                double h = hp_cost_handoff(tab->layer[l].out, tab->mbs, tab->tp, bin, 0) * HP_MIP_MS;
                rb_add(&r, map->base.u[l * pp + st - 1], -h);
                rb_add(&r, map->base.u[(l + 1) * pp + st - 1], h);
              }
              if (bout > 0) {
                double h = hp_cost_handoff(tab->layer[l].out, tab->mbs, tab->tp, bout, 0) * HP_MIP_MS;
                rb_add(&r, map->base.u[l * pp + st], -h);
                rb_add(&r, map->base.u[(l + 1) * pp + st], h);
              }
            }
            if ((q == 1 || q == 2) && st + 1 < pp) rb_add(&r, eh[st], -1);   /* the other side */
            if (q == 3 && st > 0) rb_add(&r, eh[st - 1], -1);
            if (q < 3) {
              rb_add(&r, map->kind[(st - 1) * K + a], -big);
              rb_add(&r, map->kind[st * K + b], -big);
            } else {
              rb_add(&r, map->kind[st * K + b], -big);
              rb_add(&r, map->kind[(st + 1) * K + a], -big);
            }
            if (q < 2 && !cross) rb_add(&r, zc[st], big);   /* zc_s = 1 frees both */
            if (q < 2 && use[0] && use[1]) {   /* y = 1 frees the intra-in row, 0 the other
                                                * (a pair with one of them: no choice) */
              rb_add(&r, y, q == 1 ? -big : big);
              if (q == 1) cst -= big;
            }
            rb_emit(m, &r, 'G', cst, "wq%d_s%d_%d_%d", q, st, a, b);
          }
        }
      }
      if (wq < 0) continue;
      double g1 = hp_cost_replica(tab->gas, 1, 0, 0);
      rb_add(&r, map->base.obj_pipe, 1);
      rb_add(&r, tmax[st], -g1 - 1);
      rb_add(&r, wq, -g1 / 2);
      for (int s = 0; s < pp; s++) {
        if (s != st) rb_add(&r, tmin[s], -1);
        if (s + 1 < pp) rb_add(&r, e[s], -1);
      }
      rb_emit(m, &r, 'G', 0, "pipew_s%d", st);
    }
  }

  /* Couples (pattern_dp.c, where the argument is): for a class x whose every node holds
   * exactly two TP groups, with dp 2, every group used and three classes or more (as the
   * DP takes them), sigma_s the kinds spanning x alone at stage s and mu_s those that mix
   * x: cp_s = 1 where stages s and s+1 are a couple (both spanning x alone, r* inside
   * between them, z_s = 1; no stage in two); E = sum sigma - 2 sum cp, H = sum mu, and
   * E = 1 with H = 0 cannot be (u = 1 where E >= 1: E <= pp u, E >= 2 u - H). Where two
   * such stages are no couple some replica crosses between them: the stage after pays that
   * crossing with its least outgoing hand-off (eh), the stage before with its least
   * incoming one, each a period of one class (wn_s, as wq_s above). */
  {
    long supply = 0;
    double big = 1;
    int *wn = hp__calloc((size_t)pp, sizeof *wn);
    if (!wn) { err = hp_fail(d, HP_NOMEM, "out of memory building the pattern MIP"); goto done; }
    for (int c = 0; c < C; c++) supply += pt->groups[c];
    for (size_t ab = 0; ab < (size_t)K * K; ab++)
      if (pt->hbw[ab] > 0) big = fmax(big, 2 * hp_cost_handoff(max_out, tab->mbs, tab->tp, pt->hbw[ab], pt->hlat[ab]) * HP_MIP_MS + 1);
    for (size_t ab = 0; ab < (size_t)K * K; ab++)
      if (pt->xbw[ab] > 0) big = fmax(big, 2 * hp_cost_handoff(max_out, tab->mbs, tab->tp, pt->xbw[ab], pt->xlat[ab]) * HP_MIP_MS + 1);
    for (int s = 0; s < pp; s++) wn[s] = -1;
    for (int xc = 0; xc < C && dp == 2 && C >= 3 && supply == (long)pp * dp && pp >= 2; xc++) {
      const hp_node_class *nc = &pt->cls->cls[xc];
      if (!(nc->gpus_min == nc->gpus_max && nc->gpus_min == 2 * tab->tp)) continue;
      int any = 0, u, *cp = hp__calloc((size_t)pp, sizeof *cp);
      if (!cp) { free(wn); err = hp_fail(d, HP_NOMEM, "out of memory building the pattern MIP"); goto done; }
      for (int k = 0; k < K; k++)
        any |= !pt->kind[k].single && pt->kind[k].mask == 1u << xc;
      if (!any) { free(cp); continue; }
      for (int s = 0; s + 1 < pp; s++) {
        cp[s] = col(m, 0, 1, 1, 0, "cp_s%d_c%d", s, xc);
        for (int t = s; t <= s + 1; t++) {   /* cp_s <= sigma_s, sigma_s+1 */
          rb_add(&r, cp[s], 1);
          for (int k = 0; k < K; k++)
            if (!pt->kind[k].single && pt->kind[k].mask == 1u << xc) rb_add(&r, map->kind[t * K + k], -1);
          rb_emit(m, &r, 'L', 0, "cps_s%d_%d_c%d", s, t, xc);
        }
        rb_add(&r, cp[s], 1);                 /* r* inside */
        rb_add(&r, zv[s], -1);
        rb_emit(m, &r, 'L', 0, "cpz_s%d_c%d", s, xc);
        if (s > 0) {                          /* in one couple at most */
          rb_add(&r, cp[s - 1], 1);
          rb_add(&r, cp[s], 1);
          rb_emit(m, &r, 'L', 1, "cp2_s%d_c%d", s, xc);
        }
      }
      /* E <= pp u and E - 2 u + H >= 0 */
      u = col(m, 0, 1, 1, 0, "cpu_c%d", xc);
      for (int q = 0; q < 2; q++) {
        for (int s = 0; s < pp; s++)
          for (int k = 0; k < K; k++) {
            unsigned mk = pt->kind[k].mask;
            if (!pt->kind[k].single && mk == 1u << xc) rb_add(&r, map->kind[s * K + k], 1);
            else if (q == 1 && (mk >> xc & 1u) && mk != 1u << xc) rb_add(&r, map->kind[s * K + k], 1);
          }
        for (int s = 0; s + 1 < pp; s++) rb_add(&r, cp[s], -2);
        rb_add(&r, u, q == 0 ? -pp : -2);
        rb_emit(m, &r, q == 0 ? 'L' : 'G', 0, q == 0 ? "cpe_c%d" : "cph_c%d", xc);
      }
      /* no couple: the crossing, into stage s + 1 (q 0) and out of stage s (q 1) */
      for (int s = 0; s + 1 < pp; s++)
        for (int a = 0; a < K; a++)
          for (int b = 0; b < K; b++) {
            size_t ab = (size_t)a * K + b;
            if (pt->kind[a].single || pt->kind[a].mask != 1u << xc || pt->kind[b].single ||
                pt->kind[b].mask != 1u << xc || !(pt->xbw[ab] > 0))
              continue;
            for (int q = 0; q < 2; q++) {
              int st = q == 0 ? s + 1 : s;
              if (wn[st] < 0) wn[st] = col(m, 0, INFINITY, 0, 0, "wn_s%d", st);
              rb_add(&r, wn[st], 1);
              for (int l = 0; l + 1 < L; l++) {
                double h = hp_cost_handoff(tab->layer[l].out, tab->mbs, tab->tp, pt->xbw[ab], 0) * HP_MIP_MS;
                rb_add(&r, map->base.u[l * pp + s], -h);
                rb_add(&r, map->base.u[(l + 1) * pp + s], h);
              }
              if (q == 0 && s + 1 < pp - 1) rb_add(&r, eh[s + 1], -1);   /* its least out */
              if (q == 1 && s > 0) rb_add(&r, eh[s - 1], -1);            /* its least in */
              rb_add(&r, map->kind[s * K + a], -big);
              rb_add(&r, map->kind[(s + 1) * K + b], -big);
              rb_add(&r, cp[s], big);
              rb_emit(m, &r, 'G', hp_cost_handoff(0, tab->mbs, tab->tp, pt->xbw[ab], pt->xlat[ab]) * HP_MIP_MS - 2 * big,
                      "wn%d_s%d_%d_%d", q, s, a, b);
            }
          }
      free(cp);
    }
    for (int st = 0; st < pp; st++) {
      if (wn[st] < 0) continue;
      double g1 = hp_cost_replica(tab->gas, 1, 0, 0);
      rb_add(&r, map->base.obj_pipe, 1);
      rb_add(&r, tmax[st], -g1 - 1);
      rb_add(&r, wn[st], -g1 / 2);
      for (int s = 0; s < pp; s++) {
        if (s != st) rb_add(&r, tmin[s], -1);
        if (s + 1 < pp) rb_add(&r, e[s], -1);
      }
      rb_emit(m, &r, 'G', 0, "pipen_s%d", st);
    }
    free(wn);
  }

  /* The slow replica (pattern_dp.c, where the argument is): with three classes or more,
   * every group used and some kind that mixes classes, f = sum_s (dp - the groups of the
   * top class of stage s's kind, hp_patterns_top_class); where f < dp (slow = 1), some
   * replica holds a group of the top class at every stage, so T >= (gas - 1) (tb(s*) +
   * (e(s*-1) + e(s*)) / 2) + sum_s tb(s) + sum e, tb(s) the top class's time; slow = 0
   * needs f >= dp. nb_s >= the groups of the top class, so f is no larger than the plan's;
   * with slow = 0 the tb rows hold nothing (tb 0), and the rows below are the pipe rows'
   * with less. The DP's slow run takes the same figures, where it counts ranks. */
  {
    long supply = 0;
    int mixes = 0;
    for (int c = 0; c < C; c++) supply += pt->groups[c];
    for (int k = 0; k < K; k++) mixes |= !hp_patterns_one_class(pt, k);
    if (C >= 3 && dp >= 2 && supply == (long)pp * dp && mixes) {
      int slow = col(m, 0, 1, 1, 0, "slow"), *tb = hp__calloc((size_t)2 * pp + K, sizeof *tb);
      int *nb = tb + pp, *top = nb + pp;          /* top: each kind's top class */
      if (!tb) { err = hp_fail(d, HP_NOMEM, "out of memory building the pattern MIP"); goto done; }
      for (int k = 0; k < K; k++) top[k] = hp_patterns_top_class(pt, k);
      for (int s = 0; s < pp; s++) {
        nb[s] = col(m, 0, dp, 0, 0, "nb_s%d", s);
        tb[s] = col(m, 0, INFINITY, 0, 0, "tb_s%d", s);
        for (int c = 0; c < C; c++) {
          int any = 0;
          for (int k = 0; k < K; k++) any |= top[k] == c;
          if (!any) continue;
          /* nb_s >= n_s,c where the kind's top class is c */
          rb_add(&r, nb[s], 1);
          rb_add(&r, map->count[s * C + c], -1);
          for (int k = 0; k < K; k++)
            if (top[k] == c) rb_add(&r, map->kind[s * K + k], -dp);
          rb_emit(m, &r, 'G', -dp, "nb_s%d_c%d", s, c);
          /* tb_s >= class c's time where the top class is c and slow = 1 */
          rb_add(&r, tb[s], 1);
          add_compute(&r, tab, s, c, x, v, -1);
          rb_add(&r, g[s], -1);
          for (int k = 0; k < K; k++)
            if (top[k] == c) rb_add(&r, map->kind[s * K + k], -bigc[c]);
          rb_add(&r, slow, -bigc[c]);
          rb_emit(m, &r, 'G', -2 * bigc[c], "tb_s%d_c%d", s, c);
        }
      }
      for (int s = 0; s < pp; s++) rb_add(&r, nb[s], -1);   /* f = sum_s (dp - nb_s) >= dp (1 - slow) */
      rb_add(&r, slow, dp);
      rb_emit(m, &r, 'G', (double)dp - (double)dp * pp, "slowf");
      for (int st = 0; st < pp; st++) {
        pipe_row(&r, tab, map->base.obj_pipe, st, tb, tb, e, pc);
        rb_emit(m, &r, 'G', 0, "pipeb_s%d", st);
      }
      free(tb);
    }
  }

  /* Q >= the sync bound of the stage's kind. */
  map->base.obj_sync = col(m, 0, INFINITY, 0, 1, "Q");
  /* overlapped, the reduction may hide behind the pipeline: Q = 0 is a lower bound */
  for (int s = 0; s < pp && dp > 1 && prob->job.grad_sync != HP_SYNC_OVERLAP; s++)
    for (int k = 0; k < K; k++)
      for (int vb = 0; vb < 2; vb++) {   /* the kind's figure; where zc_s = 1, the chained */
        const hp_stage_kind *kd = &pt->kind[k];
        double bdp = vb ? kd->bdp_chain : kd->bdp;
        if (vb && !(bdp > 0 && zc[s] >= 0)) continue;
        double aG = hp_cost_reduce(1, 0, dp, bdp, 0) * HP_MIP_MS;
        double aZ = 0;                /* zdp gradients were scattered per micro-batch */
        double c0 = hp_cost_reduce(0, 0, dp, bdp, kd->latdp) * HP_MIP_MS, big = aG * sum_grad + c0;
        rb_add(&r, map->base.obj_sync, 1);
        for (int l = 0; l < L; l++) {
          rb_add(&r, x[l * pp + s], -aG * tab->layer[l].grad);
          rb_add(&r, w[l * pp + s], (aG - aZ) * tab->layer[l].grad);
        }
        rb_add(&r, map->kind[s * K + k], -big);
        if (vb) rb_add(&r, zc[s], -big);
        rb_emit(m, &r, 'G', c0 - (vb ? 2 : 1) * big, vb ? "syncc_s%d_k%d" : "sync_s%d_k%d", s, k);
      }

  /* U >= the optimizer step of the stage's kind: upd / hbm with the kind's least hbm (a
   * device of every class of the kind is in the stage, cost-model.md 3), zdp layers' bytes
   * divided by dp; where the job lists zero1 or zero2 every layer may shard its step
   * without a gather, so all are divided (the DP's stage_step takes the same figures). */
  int ucol = col(m, 0, INFINITY, 0, 1, "U");
  unsigned modes = hp_job_modes(&prob->job);
  int step_sharded = dp > 1 && (modes & (1u << HP_SHARD_ZERO1 | 1u << HP_SHARD_ZERO2)) != 0;
  for (int s = 0; s < pp; s++)
    for (int k = 0; k < K; k++) {
      double hbm = pt->kind[k].hbm, big = 0;
      if (!(hbm > 0)) continue;
      rb_add(&r, ucol, 1);
      for (int l = 0; l < L; l++) {
        double u = tab->layer[l].upd / hbm * HP_MIP_MS / (step_sharded ? dp : 1);
        big += u;
        rb_add(&r, x[l * pp + s], -u);
        if (!step_sharded && w[l * pp + s] >= 0) rb_add(&r, w[l * pp + s], u * (1 - 1.0 / dp));
      }
      rb_add(&r, map->kind[s * K + k], -big);
      rb_emit(m, &r, 'G', -big, "step_s%d_k%d", s, k);
    }

  /* Memory against the smallest capacity of the kind's classes. */
  for (int s = 0; s < pp; s++) {
    int maxima[3];
    double worst;
    hp__mip_memory_maxima(m, &r, tab, s, &map->base, x, v, w, maxima, &worst);
    for (int k = 0; k < K; k++) {
      double cap = pt->kind[k].cap * HP_MIP_GIB, big = worst > cap ? worst - cap : 0;
      hp__mip_memory_row(&r, tab, s, x, v, w, maxima);
      rb_add(&r, map->kind[s * K + k], big);
      rb_emit(m, &r, 'L', cap + big, "mem_s%d_k%d", s, k);
    }
  }
  if (m->failed) err = hp_fail(d, HP_NOMEM, "out of memory building the pattern MIP");
done:
  free(r.idx);
  free(r.val);
  free(x);
  free(v);
  free(w);
  free(tmax);
  free(tmin);
  free(g);
  free(e);
  free(eh);
  free(zc);
  free(zv);
  free(pc);
  free(obw);
  free(bigc);
  if (err) {
    hp_mip_destroy(&m);
    hp_mip_pmap_release(map);
  }
  *out = m;
  return err;
}
