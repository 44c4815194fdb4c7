/* pattern.c -- stage patterns of a configuration (hp_pattern.h): the kinds a stage can
 * take, and for each the figures no placement of the kind beats. Layer times: a layer's
 * time is monotone in the TP link's bandwidth (falling for analytic times, and for
 * profiles above their measured micro-batch; rising below it, cost-model.md 1.1) and
 * does not fall as latency grows, so the least time over every TP group of a class is the
 * lesser of the times at the weakest and the strongest pair, at the least latency.
 *
 * Idle devices (a configuration with pp tp dp < D, cost-model.md 2, 5, 7.19): a class's
 * groups are those of its nodes that tp divides (hp_classes_groups; no other node may be
 * used), per_node the most one of those holds, and a kind has only classes with groups.
 * Every other figure rests on the slots the plan itself has, which every plan of the
 * configuration has whatever it leaves idle: a crossing replica's tp lanes, a stage's dp
 * groups, the R(n) >= tp of a replica group that crosses nodes. Idle devices count in no
 * H_s(n) or R(n), so they are no sharer any figure assumed; and the capacities (per_node,
 * crossing_single, chain) count room on a node, which idle devices leave free. Layer
 * times and links are the best over every member node, a superset of the usable ones.
 * So each figure stays a lower bound when some devices are idle. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void hp_patterns_release(hp_patterns *pt)
{
  if (!pt) return;
  hp_costs_release(&pt->tab);
  free(pt->groups);
  free(pt->per_node);
  free(pt->kind);
  free(pt->hbw);
  free(pt->hlat);
  free(pt->ibw);
  free(pt->ilat);
  free(pt->xbw);
  free(pt->xlat);
  free(pt->chain);
  free(pt->crowd);
  free(pt->wbw);
  memset(pt, 0, sizeof *pt);
}

int hp_patterns_find(const hp_patterns *pt, unsigned mask, int single)
{
  for (int k = 0; k < pt->n_kind; k++)
    if (pt->kind[k].mask == mask && pt->kind[k].single == single) return k;
  return -1;
}

/* The least of a per-type figure over the device types (the formula's where nothing is
 * measured, `measured` NULL). */
static double least_over_types(const hp_costs *tab, int l, const double *measured,
                               double (*figure)(const hp_costs *, int, int))
{
  double v = figure(tab, l, -1);
  if (!measured) return v;
  for (int k = 0; k < tab->n_types; k++) {
    double x = figure(tab, l, k);
    if (k == 0 || x < v) v = x;
  }
  return v;
}

double hp_patterns_least_act(const hp_costs *tab, int l)
{
  return least_over_types(tab, l, tab->mact, hp_costs_layer_act);
}

double hp_patterns_least_work(const hp_costs *tab, int l)
{
  return least_over_types(tab, l, tab->mwork, hp_costs_layer_work);
}

double hp_patterns_handoff(const hp_patterns *pt, int a, int b, int last)
{
  size_t ix = (size_t)a * pt->n_kind + b;
  if (!(pt->hbw[ix] > 0)) return INFINITY;
  return hp_cost_handoff(pt->tab.layer[last].out, pt->tab.mbs, pt->tab.tp, pt->hbw[ix], pt->hlat[ix]);
}

double hp_patterns_handoff_worst(const hp_patterns *pt, int a, int b, int last)
{
  size_t ix = (size_t)a * pt->n_kind + b;
  if (!(pt->wbw[ix] > 0)) return 0;
  return hp_cost_handoff(pt->tab.layer[last].out, pt->tab.mbs, pt->tab.tp, pt->wbw[ix], pt->xlat[ix]);
}

int hp_patterns_one_class(const hp_patterns *pt, int k)
{
  unsigned m = pt->kind[k].mask;
  return m != 0 && (m & (m - 1)) == 0;
}

int hp_patterns_top_class(const hp_patterns *pt, int k)
{
  int top = -1;
  double worst = -INFINITY;
  for (int c = 0; c < pt->n_cls; c++) {
    double t = 0;
    if (!(pt->kind[k].mask >> c & 1u)) continue;
    for (int l = 0; l < pt->tab.n_layers; l++) t += hp_costs_time(&pt->tab, c, l);
    if (t >= worst) { worst = t; top = c; }
  }
  return top;
}

void hp_patterns_handoff_split(const hp_patterns *pt, int a, int b, int last, double *intra,
                               double *inter)
{
  size_t ix = (size_t)a * pt->n_kind + b;
  double out = pt->tab.layer[last].out;
  *intra = pt->ibw[ix] > 0 ? hp_cost_handoff(out, pt->tab.mbs, pt->tab.tp, pt->ibw[ix], pt->ilat[ix]) : INFINITY;
  *inter = pt->xbw[ix] > 0 ? hp_cost_handoff(out, pt->tab.mbs, pt->tab.tp, pt->xbw[ix], pt->xlat[ix]) : INFINITY;
}

/* Each class's least layer times: the tables of 2 C link endpoints, folded to C rows. */
static hp_err class_times(const hp_problem *p, const hp_classes *cl, const hp_plan *shape,
                          hp_patterns *pt, hp_diag *d)
{
  int C = cl->n, L = p->model->n_layers;
  hp_tp_class *ends = hp__calloc((size_t)2 * C, sizeof *ends);
  hp_err err;
  if (!ends) return hp_fail(d, HP_NOMEM, "out of memory");
  for (int c = 0; c < C; c++) {
    const hp_node_class *nc = &cl->cls[c];
    double best, lat;
    /* a TP group's weakest pair lies between the node's weakest pair and the best a
     * tp-subset can have; its latency is at least the least a tp-subset can have */
    hp_classes_subset_links(p, cl, c, shape->tp, &best, &lat);
    ends[2 * c] = (hp_tp_class){ nc->type, shape->tp > 1 ? nc->intra_bw_min : INFINITY, lat };
    ends[2 * c + 1] = (hp_tp_class){ nc->type, best, lat };
  }
  err = hp_costs_build_classes(p, shape, ends, 2 * C, &pt->tab, d);
  free(ends);
  if (err) return err;
  for (int c = 0; c < C; c++) {
    for (int l = 0; l < L; l++) {
      double a = hp_costs_time(&pt->tab, 2 * c, l), b = hp_costs_time(&pt->tab, 2 * c + 1, l);
      pt->tab.time[(size_t)c * L + l] = a < b ? a : b;
    }
    pt->tab.cls[c] = pt->tab.cls[2 * c + 1];
  }
  pt->tab.n_class = C;
  return HP_OK;
}

static int popcount(unsigned m) { int n = 0; for (; m; m &= m - 1) n++; return n; }

static hp_err add_kind(hp_patterns *pt, int *cap, unsigned mask, int single)
{
  if (pt->n_kind == *cap) {
    int ncap = *cap ? 2 * *cap : 16;
    hp_stage_kind *nk = realloc(pt->kind, (size_t)ncap * sizeof *nk);
    if (!nk) return HP_NOMEM;
    pt->kind = nk;
    *cap = ncap;
  }
  pt->kind[pt->n_kind++] = (hp_stage_kind){ .mask = mask, .single = single };
  return HP_OK;
}

/* Groups every node of class c holds (its smallest node's GPUs / tp). */
static int groups_min(const hp_classes *cl, const hp_patterns *pt, int c)
{
  return cl->cls[c].gpus_min / pt->tab.tp;
}

/* The kinds of the configuration: single-node on a class whose nodes hold dp groups;
 * spanning nodes of one class that has two or more nodes; mixed, with at most dp classes.
 * A spanning kind of which some class holds two groups or more on every node is split in
 * two (hp_stage_kind.own): its nodes its own, or one of them shared. */
static hp_err kinds(const hp_problem *p, const hp_classes *cl, int dp, int full, int split,
                    hp_patterns *pt)
{
  int C = cl->n, cap = 0, n_base;
  for (int c = 0; c < C; c++)
    if (dp <= pt->per_node[c] && dp <= pt->groups[c] && add_kind(pt, &cap, 1u << c, 1)) return HP_NOMEM;
  for (int c = 0; c < C; c++)
    if (dp >= 2 && dp <= pt->groups[c] && cl->cls[c].n_nodes >= 2 && add_kind(pt, &cap, 1u << c, 0))
      return HP_NOMEM;
  for (unsigned m = 1; m < (1u << C); m++) {
    int usable = 1;                     /* a class with no group (idle devices) takes no part */
    for (int c = 0; c < C; c++) usable &= !(m >> c & 1) || pt->groups[c] > 0;
    if (usable && popcount(m) >= 2 && popcount(m) <= dp && add_kind(pt, &cap, m, 0)) return HP_NOMEM;
  }
  n_base = pt->n_kind;
  for (int k = 0; k < n_base; k++) {
    unsigned m = pt->kind[k].mask;
    int gain = 0, fill = 0;
    /* with idle devices a node may hold fewer of the stage's groups than it has room for */
    if (!split || pt->kind[k].single || dp < 2 || p->job.idle_devices) continue;
    for (int c = 0; c < C; c++)
      if (m >> c & 1) { gain |= groups_min(cl, pt, c) >= 2; fill += groups_min(cl, pt, c); }
    if (!gain) continue;
    if (popcount(m) == 1) fill *= 2;
    /* nodes of its own, whole: at least one of every class present, two of its one class
     * (it spans nodes), so dp >= fill; else only the shared variant can be */
    if (dp >= fill) {
      pt->n_split++;                   /* one kind more */
      pt->kind[k].own = 1;
      if (add_kind(pt, &cap, m, 0)) return HP_NOMEM;
      pt->kind[pt->n_kind - 1].own = -1;
    } else {
      pt->kind[k].own = -1;
    }
  }
  for (int k = 0; k < pt->n_kind; k++) {
    hp_stage_kind *kd = &pt->kind[k];
    kd->cap = INFINITY;
    for (int c = 0; c < C; c++)
      if (kd->mask >> c & 1) {
        const hp_devtype *t = &p->cluster->types[cl->cls[c].type];
        if (t->mem - t->reserved < kd->cap) kd->cap = t->mem - t->reserved;
        if (t->hbm > 0 && (kd->hbm == 0 || t->hbm < kd->hbm)) kd->hbm = t->hbm;
      }
    if (dp == 1) continue;
    if (kd->single) {   /* a replica group is dp GPUs of one node: no better than a dp-subset */
      hp_classes_subset_links(p, cl, __builtin_ctz(kd->mask), dp, &kd->bdp, &kd->latdp);
      continue;
    }
    /* Spanning nodes: each of the tp replica groups G(s, j) crosses nodes, so R(n) >= tp
     * on both nodes of a crossing pair, whose shared bandwidth is then at most its link /
     * tp. A mixed stage's replica groups hold a device of every class present, so a pair
     * of every two of them exists: Bdp, the least over pairs, is at most the least over
     * class pairs of their best link / tp, and latdp at least the largest of their least
     * latencies. Spanning one class, the pair is between two of its nodes. */
    kd->bdp = INFINITY;
    kd->latdp = 0;
    for (int a = 0; a < C; a++)
      for (int b = a; b < C; b++) {
        size_t ix = (size_t)a * C + b;
        if (!(kd->mask >> a & 1) || !(kd->mask >> b & 1)) continue;
        if (a == b && kd->mask != 1u << a) continue;      /* not a pair that must exist */
        if (cl->inter_bw[ix] / pt->tab.tp < kd->bdp) kd->bdp = cl->inter_bw[ix] / pt->tab.tp;
        if (cl->inter_lat[ix] > kd->latdp) kd->latdp = cl->inter_lat[ix];
      }
    /* Shared: a node n of the stage also holds a group of another stage s'. Where s'
     * cannot be single there, s' spans nodes too, so each of its tp replica groups has a
     * device on n and one elsewhere, as each of the stage's own has: R(n) >= 2 tp, and the
     * stage's replica groups have a pair between n and another node of the stage, each of
     * a class of the mask, which sees at most its link / (2 tp). A single s' holds its dp
     * groups on one node, so beside a group of this stage only on a node of a class c with
     * a single kind and dp + 1 <= per_node[c] (was: no single kind at all; the three-kind
     * 64-GPU row's pp 8 tp 4 dp 2 has single kinds, whose dp 2 groups fill a node whole). */
    int alone = 1;
    for (int c = 0; c < C; c++)
      if ((kd->mask >> c & 1) && hp_patterns_find(pt, 1u << c, 1) >= 0 && dp + 1 <= pt->per_node[c])
        alone = 0;
    /* Full nodes (2026-11-27): where the plan uses every group (full), a node n of class c
     * holds exactly its P groups; if every node of c holds a multiple of dp (P = gpus / tp,
     * one GPU count in the class), a node of c holding m of the stage's groups, 0 < m < dp
     * (the stage has a group elsewhere), holds P - m of other stages, not a multiple of dp:
     * not single stages alone. So another stage that spans nodes or mixes classes has a
     * group on n and one elsewhere, and R(n) >= 2 tp there, whatever the kinds allow. The
     * stage holds a node of every class of its mask: one such class is enough. */
    int forced = 0;
    for (int c = 0; c < C && full && kd->own != 1; c++) {
      const hp_node_class *nc = &cl->cls[c];
      int g = nc->gpus_min;
      if ((kd->mask >> c & 1) && g == nc->gpus_max && g % pt->tab.tp == 0 && (g / pt->tab.tp) % dp == 0)
        forced = 1;
    }
    if ((kd->own == -1 && alone) || forced) {
      double best = 0;
      for (int a = 0; a < C; a++)
        for (int b = 0; b < C; b++) {
          size_t ix = (size_t)a * C + b;
          if ((kd->mask >> a & 1) && (kd->mask >> b & 1) && cl->inter_bw[ix] > best) best = cl->inter_bw[ix];
        }
      if (best / (2.0 * pt->tab.tp) < kd->bdp) kd->bdp = best / (2.0 * pt->tab.tp);
    }
    /* Chained: every replica r keeps both hand-offs of a stage s of one class inside a node,
     * node(r, s-1) = node(r, s) = node(r, s+1). Then s-1 and s+1 span nodes too (were
     * either's dp groups on one node, s's would be there with them), so for every lane j
     * the node n holding r's three groups holds a device of G(s-1, j), G(s, j) and
     * G(s+1, j), each with a device elsewhere: R(n) >= 3 tp, and a pair of G(s, j) between
     * n and another node of the class sees at most its best link / (3 tp). A kind of own
     * nodes (own 1) never chains: its nodes hold no other stage. */
    kd->bdp_chain = 0;
    if (hp_patterns_one_class(pt, k) && kd->own != 1) {
      int x = __builtin_ctz(kd->mask);
      double b3 = cl->inter_bw[(size_t)x * C + x] / (3.0 * pt->tab.tp);
      if (b3 > 0 && b3 < kd->bdp) kd->bdp_chain = b3;
    }
  }
  return HP_OK;
}

/* The replicas of a boundary out of (or into) a single-node stage of class c whose lanes
 * must leave its node: the node holds the stage's dp groups and room for at most
 * per_node[c] - dp groups of the other stage (kind o), so at least 2 dp - per_node[c] of
 * the other stage's groups lie elsewhere (at least 1 when a replica crosses at all); all
 * dp where o cannot be on that node at all (no class c in it, or nodes of its own). */
static int crossing_single(const hp_patterns *pt, const hp_stage_kind *k, const hp_stage_kind *o,
                           int dp)
{
  int c = __builtin_ctz(k->mask), x = 2 * dp - pt->per_node[c];
  if (!(o->mask >> c & 1) || o->own == 1) return dp;
  return x > 1 ? x : 1;
}

/* The best hand-off link from a stage of kind a to the next of kind b: inside a node of a
 * class both have, if one node can hold a TP group of each (a lane inside a node shares
 * nothing, 7.11), else between their classes, shared by at least the tp lanes of every
 * replica that crosses between the two nodes' interfaces: all dp tp lanes of the boundary
 * when both kinds hold their stage on one node each, and tp (2 dp - per_node) when one
 * does (crossing_single), all dp tp where the other kind cannot be on its node. */
/* TP groups a stage of kind k puts on a node it uses, at least: all dp when it is a
 * single-node kind, else one. */
static int need(const hp_stage_kind *k, int dp) { return k->single ? dp : 1; }

static void handoffs(const hp_classes *cl, int dp, hp_patterns *pt)
{
  int C = cl->n, K = pt->n_kind, tp = pt->tab.tp;
  for (int a = 0; a < K; a++)
    for (int b = 0; b < K; b++) {
      const hp_stage_kind *ka = &pt->kind[a], *kb = &pt->kind[b];
      double bw = 0, lat = INFINITY;
      /* a TP group lies in one node: a replica whose two stages sit on different nodes
       * sends all its tp lanes between them, so H_s(n) >= tp on both. Two stages each on
       * one node (single kinds), on two nodes, send every lane of the boundary between
       * those two: H_s = dp tp on both (cost-model.md 3, 7.11, 7.18); on one node, the
       * intra-node option above. One stage on one node n (single kind): every replica
       * whose other stage's group is off n sends its tp lanes over n's interface, so a
       * crossing replica sees H_s(n) >= tp x crossing_single (a replica that stays on n is
       * the intra-node option). Each lane sees at most the link / share. */
      int cross = 1;
      if (ka->single && kb->single) cross = dp;
      else if (ka->single) cross = crossing_single(pt, ka, kb, dp);
      else if (kb->single) cross = crossing_single(pt, kb, ka, dp);
      double xbw = 0, xlat = INFINITY;
      /* a stage on nodes of its own (own 1): every lane leaves its node, a node of class x
       * holding groups_min(x) groups or more of it: H_s(n) >= groups_min(x) tp there, and
       * no lane stays inside a node */
      int inside = ka->own != 1 && kb->own != 1;
      for (int c = 0; c < C && inside; c++) {
        if (!(ka->mask >> c & 1) || !(kb->mask >> c & 1)) continue;
        if (pt->per_node[c] >= need(ka, dp) + need(kb, dp) && cl->cls[c].intra_bw_max > 0) {
          if (cl->cls[c].intra_bw_max > bw) bw = cl->cls[c].intra_bw_max;
          if (cl->cls[c].intra_lat_min < lat) lat = cl->cls[c].intra_lat_min;
        }
      }
      for (int x = 0; x < C; x++)
        for (int y = 0; y < C; y++) {
          size_t ix = (size_t)x * C + y;
          int cx = cross;
          if (!(ka->mask >> x & 1) || !(kb->mask >> y & 1) || !(cl->inter_bw[ix] > 0)) continue;
          if (ka->own == 1 && groups_min(cl, pt, x) > cx) cx = groups_min(cl, pt, x);
          if (kb->own == 1 && groups_min(cl, pt, y) > cx) cx = groups_min(cl, pt, y);
          double share = (double)cx * tp;
          if (cl->inter_bw[ix] / share > xbw) xbw = cl->inter_bw[ix] / share;
          if (cl->inter_lat[ix] < xlat) xlat = cl->inter_lat[ix];
        }
      size_t ab = (size_t)a * K + b;
      pt->ibw[ab] = bw;
      pt->ilat[ab] = bw > 0 ? lat : 0;
      pt->xbw[ab] = xbw;
      pt->xlat[ab] = xbw > 0 ? xlat : 0;
      pt->hbw[ab] = bw > xbw ? bw : xbw;
      lat = xlat < lat ? xlat : lat;
      pt->hlat[ab] = isinf(lat) ? 0 : lat;
      /* both hand-offs of one replica inside a node n: its groups of three consecutive
       * stages on n, each stage of a single kind with all its dp groups there, so n of
       * class c holds need(a) + need(b) + the least need of a kind with c */
      pt->chain[ab] = 0;
      for (int c = 0; c < C; c++) {
        int third = INT_MAX;
        if (!(ka->mask >> c & 1) || !(kb->mask >> c & 1) || !(cl->cls[c].intra_bw_max > 0) || !inside) continue;
        for (int k = 0; k < K; k++)
          if (pt->kind[k].mask >> c & 1 && need(&pt->kind[k], dp) < third) third = need(&pt->kind[k], dp);
        if (third < INT_MAX && need(ka, dp) + need(kb, dp) + third <= pt->per_node[c]) pt->chain[ab] = 1;
      }
    }
}

/* The worst replica's figures (hp_patterns.crowd, wbw): counts of nodes and triples. */
static void worst_replica(const hp_classes *cl, int dp, hp_patterns *pt)
{
  int C = cl->n, K = pt->n_kind;
  for (int a = 0; a < K; a++)
    for (int b = 0; b < K; b++) {
      size_t ab = (size_t)a * K + b;
      unsigned ma = pt->kind[a].mask, mb = pt->kind[b].mask;
      long triples = 0, na = 0, nb = 0, share;
      for (int x = 0; x < C; x++) {
        if (ma >> x & mb >> x & 1u) triples += (long)cl->cls[x].n_nodes * (pt->per_node[x] / 3);
        if (ma >> x & 1u) na += cl->cls[x].n_nodes;
        if (mb >> x & 1u) nb += cl->cls[x].n_nodes;
      }
      pt->crowd[ab] = triples < dp;
      pt->wbw[ab] = 0;
      if (pt->ibw[ab] > 0 || !(pt->xbw[ab] > 0) || na <= 0 || nb <= 0) continue;
      share = (dp + na - 1) / na;
      if ((dp + nb - 1) / nb > share) share = (dp + nb - 1) / nb;
      for (int x = 0; x < C; x++)
        for (int y = 0; y < C; y++) {
          double bw = cl->inter_bw[(size_t)x * C + y] / ((double)share * pt->tab.tp);
          if ((ma >> x & 1u) && (mb >> y & 1u) && bw > pt->wbw[ab]) pt->wbw[ab] = bw;
        }
      if (pt->wbw[ab] > pt->xbw[ab]) pt->wbw[ab] = pt->xbw[ab];   /* and the best a replica gets */
    }
}

hp_err hp_patterns_build(const hp_problem *p, const hp_classes *cl, const hp_plan *shape,
                         hp_patterns *out, hp_diag *d)
{
  return hp_patterns_build_split(p, cl, shape, 1, out, d);
}

hp_err hp_patterns_build_split(const hp_problem *p, const hp_classes *cl, const hp_plan *shape,
                               int split, hp_patterns *out, hp_diag *d)
{
  int C = cl->n, tp = shape->tp;
  hp_err err;
  memset(out, 0, sizeof *out);
  out->cls = cl;
  out->n_cls = C;
  if ((err = class_times(p, cl, shape, out, d))) return err;
  out->groups = hp__calloc((size_t)C, sizeof *out->groups);
  out->per_node = hp__calloc((size_t)C, sizeof *out->per_node);
  if (!out->groups || !out->per_node) goto nomem;
  for (int c = 0; c < C; c++) {
    out->groups[c] = hp_classes_groups(p, cl, c, tp);
    for (int i = 0; i < cl->cls[c].n_nodes; i++) {   /* nodes tp divides: the usable ones */
      int g = p->cluster->nodes[cl->cls[c].nodes[i]].gpus;
      if (g % tp == 0 && g / tp > out->per_node[c]) out->per_node[c] = g / tp;
    }
  }
  long all = 0;                        /* the plan uses every group: no node has room left */
  for (int c = 0; c < C; c++) all += out->groups[c];
  if (kinds(p, cl, shape->dp, (long)shape->pp * shape->dp == all, split, out)) goto nomem;
  out->hbw = hp__calloc((size_t)out->n_kind * out->n_kind + 1, sizeof *out->hbw);
  out->hlat = hp__calloc((size_t)out->n_kind * out->n_kind + 1, sizeof *out->hlat);
  out->ibw = hp__calloc((size_t)out->n_kind * out->n_kind + 1, sizeof *out->ibw);
  out->ilat = hp__calloc((size_t)out->n_kind * out->n_kind + 1, sizeof *out->ilat);
  out->xbw = hp__calloc((size_t)out->n_kind * out->n_kind + 1, sizeof *out->xbw);
  out->xlat = hp__calloc((size_t)out->n_kind * out->n_kind + 1, sizeof *out->xlat);
  out->chain = hp__calloc((size_t)out->n_kind * out->n_kind + 1, sizeof *out->chain);
  out->crowd = hp__calloc((size_t)out->n_kind * out->n_kind + 1, sizeof *out->crowd);
  out->wbw = hp__calloc((size_t)out->n_kind * out->n_kind + 1, sizeof *out->wbw);
  if (!out->hbw || !out->hlat || !out->ibw || !out->ilat || !out->xbw || !out->xlat || !out->chain ||
      !out->crowd || !out->wbw)
    goto nomem;
  handoffs(cl, shape->dp, out);
  worst_replica(cl, shape->dp, out);
  return HP_OK;
nomem:
  hp_patterns_release(out);
  return hp_fail(d, HP_NOMEM, "out of memory building stage patterns");
}
