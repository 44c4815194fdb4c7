/* mip_build.c -- the MIP of one configuration (pp, tp, dp, mbs) and placement: cumulative
 * stage-assignment variables u_l_s (layer l in a stage <= s), per-layer ZeRO-3 z_l,
 * per-stage recompute R_s, their products with the assignment (v = x R, w = x z,
 * linearised exactly), per-slot stage times, epigraphs for every max (tau_r for the
 * straggler, P for the slowest replica, Q for the slowest sync, gmax/amax/wmax for the
 * memory maxima), and per-stage memory capacity. Coefficients come from the evaluator's
 * formula pieces, so the objective equals the evaluator's T at every integer point.
 * docs/formulation.md writes it out. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/internal.h"
#include "hetplan/hp_mip.h"

void hp_mip_map_release(hp_mip_map *map)
{
  if (!map) return;
  free(map->u);
  free(map->rec);
  free(map->zdp);
  free(map->type);
  memset(map, 0, sizeof *map);
}

/* Row under construction. */
typedef struct rowb { int n, cap; int *idx; double *val; int failed; } rowb;

static void rb_add(rowb *r, int col, double v)
{
  if (col < 0 || v == 0) return;
  if (r->n == r->cap) {
    int ncap = r->cap ? r->cap * 2 : 64;
    int *ni = realloc(r->idx, (size_t)ncap * sizeof *ni);
    double *nv = ni ? realloc(r->val, (size_t)ncap * sizeof *nv) : NULL;
    if (!ni || !nv) { if (ni) r->idx = ni; r->failed = 1; return; }
    r->idx = ni;
    r->val = nv;
    r->cap = ncap;
  }
  r->idx[r->n] = col;
  r->val[r->n++] = v;
}

static void rb_emit(hp_mip *m, rowb *r, char sense, double rhs, const char *fmt, ...)
  __attribute__((format(printf, 5, 6)));

static void rb_emit(hp_mip *m, rowb *r, char sense, double rhs, const char *fmt, ...)
{
  char name[32];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  if (r->failed) m->failed = 1;
  else hp_mip_add_row(m, name, r->n, r->idx, r->val, sense, rhs);
  r->n = 0;
}

static int col(hp_mip *m, double lb, double ub, int integer, double obj, const char *fmt, ...)
  __attribute__((format(printf, 6, 7)));

static int col(hp_mip *m, double lb, double ub, int integer, double obj, const char *fmt, ...)
{
  char name[32];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  return hp_mip_add_col(m, name, lb, ub, integer, obj);
}

/* Per-layer figures of the memory model and the sync, from the cost tables. */
typedef struct layer_fig { double st, pb, g, a, in, wk; } layer_fig;

static void figures(const hp_costs *k, layer_fig *f)
{
  for (int l = 0; l < k->n_layers; l++) {
    const hp_layer_cost *c = &k->layer[l];
    f[l] = (layer_fig){ c->state, c->param, c->grad, c->act, c->input, c->work };
  }
}

/* What the rows need beyond the layers: per slot one or more options (the device types
 * or nodes a slot may take, each with its layer times and capacity), and the links. */
typedef struct coeffs {
  hp_costs tab;         /* the cost tables: per-layer figures, layer times by class */
  int n_opt;            /* options per slot: 1 for a fixed placement, else types or nodes */
  int by_node;          /* options are nodes: links depend on sharing one (below) */
  double *c;            /* [pp * dp * n_opt * L] layer time of slot (s, r) under option o */
  double *cap;          /* [pp * dp * n_opt] capacity less reserve */
  int *count;           /* [n_opt] slots an option may take in all (relaxation), or NULL */
  double *h;            /* [pp * dp * L] hand-off coefficient 2 O mbs / tp / B of the slot */
  double *lat;          /* [pp * dp] 2 latency of the slot's hand-off */
  double *bdp, *latdp;  /* [pp] */
  /* by_node: the best links between nodes, charged on top of h, lat (bdp, latdp) unless
   * the hand-off's two slots (the stage's slots) share a node */
  double *hx, latx, bdpx, latdpx;   /* hx: [L] */
} coeffs;

static void coeffs_free(coeffs *k)
{
  hp_costs_release(&k->tab);
  free(k->c); free(k->cap); free(k->count); free(k->h); free(k->lat); free(k->bdp); free(k->latdp);
  free(k->hx);
}

/* Allocates the coefficient arrays; the tables in k->tab are already built. */
static hp_err coeffs_alloc(coeffs *k, int pp, int dp, int n_opt, int L)
{
  size_t slots = (size_t)pp * dp;
  k->n_opt = n_opt;
  k->c = hp__calloc(slots * n_opt * L, sizeof *k->c);
  k->cap = hp__calloc(slots * n_opt, sizeof *k->cap);
  k->h = hp__calloc(slots * L, sizeof *k->h);
  k->lat = hp__calloc(slots, sizeof *k->lat);
  k->bdp = hp__calloc((size_t)pp, sizeof *k->bdp);
  k->latdp = hp__calloc((size_t)pp, sizeof *k->latdp);
  return k->c && k->cap && k->h && k->lat && k->bdp && k->latdp ? HP_OK : HP_NOMEM;
}

/* The coefficients of a fixed placement: what the evaluator charges, from its tables. */
static hp_err coeffs_fixed(const hp_problem *p, const hp_plan *pl, coeffs *k)
{
  int L = p->model->n_layers, pp = pl->pp, dp = pl->dp;
  const hp_costs *t = &k->tab;
  memset(k, 0, sizeof *k);
  if (hp_costs_build(p, pl, &k->tab, NULL) || coeffs_alloc(k, pp, dp, 1, L)) return HP_NOMEM;
  for (int s = 0; s < pp; s++) {
    k->bdp[s] = t->bdp[s];
    k->latdp[s] = t->latdp[s];
    for (int r = 0; r < dp; r++) {
      size_t sl = (size_t)s * dp + r;
      for (int l = 0; l < L; l++) k->c[sl * L + l] = hp_costs_time(t, t->slot_class[sl], l);
      k->cap[sl] = t->cap[s];   /* every device of the stage holds the same bytes */
      if (s == pp - 1) continue;
      /* the hand-off is linear in the bytes: its latency, then a coefficient per layer */
      k->lat[sl] = hp_cost_handoff(0, pl->mbs, pl->tp, t->hbw[sl], t->hlat[sl]);
      for (int l = 0; l < L; l++)
        k->h[sl * L + l] = hp_cost_handoff(t->layer[l].out, pl->mbs, pl->tp, t->hbw[sl], 0);
    }
  }
  return HP_OK;
}

/* The best bandwidth and least latency that the pairs of a set of n distinct devices can
 * all have: such a set fits in one node only if a node has n GPUs; otherwise some pair
 * crosses nodes, and the weakest pair is no better than the best link between nodes.
 * where: 0 any such set, 1 sets inside one node, 2 sets across nodes. */
static void best_link(const hp_problem *p, int n, int where, double *bw, double *lat)
{
  const hp_cluster *c = p->cluster;
  *bw = 0;
  *lat = INFINITY;
  for (int a = 0; a < c->n_devices; a++)
    for (int b = a + 1; b < c->n_devices; b++) {
      int na = c->dev_node[a], nb = c->dev_node[b];
      if (na == nb && (c->nodes[na].gpus < n || where == 2)) continue;
      if (na != nb && where == 1) continue;
      if (hp_problem_bw(p, a, b) > *bw) *bw = hp_problem_bw(p, a, b);
      if (hp_problem_lat(p, a, b) < *lat) *lat = hp_problem_lat(p, a, b);
    }
  if (*bw == 0) { *bw = INFINITY; *lat = 0; }    /* no such pair: no cost to bound */
}

/* The relaxation's coefficients. by_node 0: a slot takes a device type; a TP group may
 * be any tp GPUs of one node, so each type's layer times use the best link inside a node
 * of that type with tp GPUs (layer times only fall as the TP link improves); hand-offs
 * (two TP groups, 2 tp devices) and a stage's gathers and syncs (dp TP groups) use
 * best_link for that many devices. by_node 1: a slot takes a node (its type's times with
 * the node's best inside link); links as for types, and hand-offs and syncs pay the
 * best link between nodes unless their slots share a node (node_rows). An option
 * may serve as many slots as it holds TP groups. */
static hp_err coeffs_bound(const hp_problem *p, const hp_plan *pl, int by_node, coeffs *k)
{
  const hp_cluster *c = p->cluster;
  int L = p->model->n_layers, pp = pl->pp, dp = pl->dp, tp = pl->tp;
  int K = by_node ? c->n_nodes : c->n_types;
  double hbw, hlat, sbw, slat;
  double *tbw = hp__calloc((size_t)K, sizeof *tbw), *tlat = hp__calloc((size_t)K, sizeof *tlat);
  hp_tp_class *cls = hp__calloc((size_t)K, sizeof *cls);
  hp_err err = HP_OK;
  memset(k, 0, sizeof *k);
  if (!tbw || !tlat || !cls || !(k->count = hp__calloc((size_t)K, sizeof *k->count)) ||
      (by_node && !(k->hx = hp__calloc((size_t)L, sizeof *k->hx)))) {
    free(tbw); free(tlat); free(cls);
    return HP_NOMEM;
  }
  k->by_node = by_node;
  for (int o = 0; o < K; o++) tlat[o] = INFINITY;
  for (int a = 0; a < c->n_devices; a++)
    for (int b = a + 1; b < c->n_devices; b++) {
      int n = c->dev_node[a], o = by_node ? n : hp_device_type(p, a);
      if (n != c->dev_node[b] || c->nodes[n].gpus < tp) continue;
      if (hp_problem_bw(p, a, b) > tbw[o]) tbw[o] = hp_problem_bw(p, a, b);
      if (hp_problem_lat(p, a, b) < tlat[o]) tlat[o] = hp_problem_lat(p, a, b);
    }
  best_link(p, 2 * tp, 0, &hbw, &hlat);
  best_link(p, dp * tp, 0, &sbw, &slat);
  for (int n = 0; n < c->n_nodes; n++) k->count[by_node ? n : c->nodes[n].type] += c->nodes[n].gpus / tp;
  /* each option's layer times, at its best inside link (an option without TP groups is
   * never chosen: its times are never read) */
  for (int o = 0; o < K; o++)
    cls[o] = (hp_tp_class){ by_node ? c->nodes[o].type : o, tbw[o] > 0 ? tbw[o] : INFINITY,
                            isinf(tlat[o]) ? 0 : tlat[o] };
  if ((err = hp_costs_build_classes(p, pl, cls, K, &k->tab, NULL)) ||
      (err = coeffs_alloc(k, pp, dp, K, L))) {
    free(tbw); free(tlat); free(cls);
    return HP_NOMEM;
  }
  if (by_node) {
    double xbw, xlat;
    best_link(p, 2, 2, &xbw, &xlat);
    k->latx = hp_cost_handoff(0, pl->mbs, tp, xbw, xlat);
    for (int l = 0; l < L; l++) k->hx[l] = hp_cost_handoff(k->tab.layer[l].out, pl->mbs, tp, xbw, 0);
    k->bdpx = xbw;
    k->latdpx = xlat;
  }
  for (int s = 0; s < pp; s++) {
    k->bdp[s] = sbw;
    k->latdp[s] = slat;
    for (int r = 0; r < dp; r++) {
      size_t sl = (size_t)s * dp + r;
      for (int o = 0; o < K; o++) {
        int ty = cls[o].type;
        k->cap[sl * K + o] = c->types[ty].mem - c->types[ty].reserved;
        for (int l = 0; l < L; l++)
          k->c[(sl * K + o) * L + l] = k->count[o] ? hp_costs_time(&k->tab, o, l) : 0;
      }
      if (s == pp - 1) continue;
      k->lat[sl] = hp_cost_handoff(0, pl->mbs, tp, hbw, hlat);
      for (int l = 0; l < L; l++)
        k->h[sl * L + l] = hp_cost_handoff(k->tab.layer[l].out, pl->mbs, tp, hbw, 0);
    }
  }
  free(tbw);
  free(tlat);
  free(cls);
  return HP_OK;
}

/* The relaxation's disaggregated time of slot k = (s, r): xy_l_s_r_o = x_l_s y_s_r_o
 * (layer l on that slot under type o), exact at integer points from sum_o xy = x and
 * xy <= y, and t_s_r >= sum_l sum_o c_o_l xy + (least c_l) v rc + gathers (rc = 1/3, the
 * recompute's share). The big-M
 * rows imply it at integer points; in the LP it is far tighter. */
static void relax_time_row(hp_mip *m, rowb *r, const coeffs *K, const hp_mip_map *map,
                           int k, int s, int L, int pp, const int *x, const int *v,
                           const int *w, double zt, const layer_fig *fig, int t)
{
  double rc = hp_cost_recompute(1, 1) - 1;      /* recompute's extra share of the compute */
  int no = K->n_opt, dp = map->dp, rr = k % dp;
  double *cmin = hp__calloc((size_t)L, sizeof *cmin);
  int *cols = hp__calloc((size_t)L * no, sizeof *cols);
  if (!cmin || !cols) { m->failed = 1; free(cmin); free(cols); return; }
  for (int l = 0; l < L; l++) {
    cmin[l] = INFINITY;
    for (int o = 0; o < no; o++) {
      int y = map->type[(size_t)k * no + o], c;
      cols[l * no + o] = -1;
      if (!K->count[o]) continue;
      if (K->c[((size_t)k * no + o) * L + l] < cmin[l]) cmin[l] = K->c[((size_t)k * no + o) * L + l];
      c = cols[l * no + o] = col(m, 0, 1, 0, 0, "xy_l%d_s%d_r%d_k%d", l, s, rr, o);
      rb_add(r, c, 1);
      rb_add(r, y, -1);
      rb_emit(m, r, 'L', 0, "xyy_l%d_s%d_r%d_k%d", l, s, rr, o);
    }
    for (int o = 0; o < no; o++) rb_add(r, cols[l * no + o], 1);
    rb_add(r, x[l * pp + s], -1);
    rb_emit(m, r, 'E', 0, "xyx_l%d_s%d_r%d", l, s, rr);
  }
  rb_add(r, t, 1);
  for (int l = 0; l < L; l++) {
    for (int o = 0; o < no; o++)
      if (cols[l * no + o] >= 0) rb_add(r, cols[l * no + o], -K->c[((size_t)k * no + o) * L + l]);
    if (v[l * pp + s] >= 0) rb_add(r, v[l * pp + s], -cmin[l] * rc);
    if (w[l * pp + s] >= 0) rb_add(r, w[l * pp + s], -zt * fig[l].pb);
  }
  rb_emit(m, r, 'G', 0, "timexy_s%d_r%d", s, rr);
  free(cmin);
  free(cols);
}

/* The node relaxation's surcharges. A hand-off (s, r) -> (s + 1, r) stays inside a node
 * only if both slots take it: same_s_r <= sum_n z_s_r_n, z <= y of either slot; else
 * ex_s_r (in pipe_r) pays the inside-to-between difference for the stage's last layer.
 * A stage syncs inside a node only if all its slots take it: samest_s <= sum_n zs_s_n,
 * zs <= y of each slot; else Q pays the sync at the best link between nodes. Each "else"
 * is a big-M row whose M is the largest difference, void when the slots share a node. */
static void node_rows(hp_mip *m, rowb *r, const coeffs *K, const hp_mip_map *map,
                      const hp_plan *pl, const layer_fig *fig, const int *ex, const int *x,
                      const int *w)
{
  int pp = pl->pp, dp = pl->dp, L = map->n_layers, no = K->n_opt;
  /* the sync is linear in the gradient bytes: coefficients of replicated and sharded ones */
  double aG = hp_cost_sync(1, 0, dp, K->bdpx, 0), aZ = hp_cost_sync(0, 1, dp, K->bdpx, 0);
  int *z = hp__calloc((size_t)no, sizeof *z);
  if (!z) { m->failed = 1; return; }
  for (int s = 0; s + 1 < pp; s++)
    for (int rr = 0; rr < dp; rr++) {
      size_t sl = (size_t)s * dp + rr, nx = (size_t)(s + 1) * dp + rr;
      int same = col(m, 0, 1, 0, 0, "same_s%d_r%d", s, rr);
      double big = K->latx - K->lat[sl], most = 0;
      for (int o = 0; o < no; o++) {
        z[o] = -1;
        if (!K->count[o]) continue;
        z[o] = col(m, 0, 1, 0, 0, "z_s%d_r%d_n%d", s, rr, o);
        for (int q = 0; q < 2; q++) {
          rb_add(r, z[o], 1);
          rb_add(r, map->type[(q ? nx : sl) * no + o], -1);
          rb_emit(m, r, 'L', 0, "z%d_s%d_r%d_n%d", q + 1, s, rr, o);
        }
      }
      rb_add(r, same, 1);
      for (int o = 0; o < no; o++) rb_add(r, z[o], -1);
      rb_emit(m, r, 'L', 0, "same_s%d_r%d", s, rr);
      /* ex >= latx - lat + sum_l (hx_l - h_l) last_l - big same */
      rb_add(r, ex[sl], 1);
      for (int l = 0; l + 1 < L; l++) {
        double dh = K->hx[l] - K->h[sl * L + l];
        if (dh > most) most = dh;
        rb_add(r, map->u[l * pp + s], -dh);
        rb_add(r, map->u[(l + 1) * pp + s], dh);
      }
      big += most;
      rb_add(r, same, big > 0 ? big : 0);
      rb_emit(m, r, 'G', K->latx - K->lat[sl], "cross_s%d_r%d", s, rr);
    }
  for (int s = 0; s < pp && dp > 1; s++) {
    int same = col(m, 0, 1, 0, 0, "samest_s%d", s);
    double big = hp_cost_sync(0, 0, dp, K->bdpx, K->latdpx);
    for (int o = 0; o < no; o++) {
      z[o] = -1;
      if (!K->count[o]) continue;
      z[o] = col(m, 0, 1, 0, 0, "zs_s%d_n%d", s, o);
      for (int rr = 0; rr < dp; rr++) {
        rb_add(r, z[o], 1);
        rb_add(r, map->type[((size_t)s * dp + rr) * no + o], -1);
        rb_emit(m, r, 'L', 0, "zs_s%d_r%d_n%d", s, rr, o);
      }
    }
    rb_add(r, same, 1);
    for (int o = 0; o < no; o++) rb_add(r, z[o], -1);
    rb_emit(m, r, 'L', 0, "samest_s%d", s);
    /* Q >= sync at the best link between nodes - big samest_s (the sync_s row's terms) */
    rb_add(r, map->obj_sync, 1);
    for (int l = 0; l < L; l++) {
      rb_add(r, x[l * pp + s], -aG * fig[l].g);
      rb_add(r, w[l * pp + s], (aG - aZ) * fig[l].g);
      big += aG * fig[l].g;
    }
    rb_add(r, same, big);
    rb_emit(m, r, 'G', hp_cost_sync(0, 0, dp, K->bdpx, K->latdpx), "syncx_s%d", s);
  }
  free(z);
}

static hp_err build(const hp_problem *prob, const hp_plan *pl, const coeffs *K, int allow_recompute,
                    hp_mip **out, hp_mip_map *map, hp_diag *d)
{
  const hp_model *md = prob->model;
  int L = md->n_layers, pp = pl->pp, dp = pl->dp, mbs = pl->mbs, no = K->n_opt;
  double rc = hp_cost_recompute(1, 1) - 1;   /* recompute's extra share of the compute */
  hp_mip *m = NULL;
  layer_fig *fig = hp__calloc((size_t)L, sizeof *fig);
  int *x = hp__calloc((size_t)L * pp, sizeof *x), *v = hp__calloc((size_t)L * pp, sizeof *v);
  int *w = hp__calloc((size_t)L * pp, sizeof *w), *t = hp__calloc((size_t)pp * dp, sizeof *t);
  int *tau = hp__calloc((size_t)dp, sizeof *tau), *ex = hp__calloc((size_t)pp * dp, sizeof *ex);
  rowb r = {0};
  hp_err err = HP_OK;

  memset(map, 0, sizeof *map);
  map->pp = pp;
  map->n_layers = L;
  map->dp = dp;
  map->u = hp__calloc((size_t)L * pp, sizeof *map->u);
  map->rec = hp__calloc((size_t)pp, sizeof *map->rec);
  map->zdp = hp__calloc((size_t)L, sizeof *map->zdp);
  if (no > 1) {
    map->n_types = no;
    map->type = hp__calloc((size_t)pp * dp * no, sizeof *map->type);
  }
  if (!fig || !x || !v || !w || !t || !tau || !ex || !map->u || !map->rec || !map->zdp ||
      (no > 1 && !map->type) || hp_mip_create(&m, d)) {
    err = hp_fail(d, HP_NOMEM, "out of memory building the MIP");
    goto done;
  }
  if (pp > L) { err = hp_fail(d, HP_PLAN, "MIP: pp %d exceeds the %d layers", pp, L); goto done; }
  figures(&K->tab, fig);

  /* Stage assignment: u_l_s for s < pp - 1 (u_l_{pp-1} = 1); x_l_s = u_l_s - u_l_{s-1}.
   * Layer l sits in a stage between pp - (L - l) and l, which fixes many u. */
  for (int l = 0; l < L; l++)
    for (int s = 0; s < pp; s++) {
      int k = l * pp + s;
      map->u[k] = -1;
      if (s < pp - 1) {
        double lb = s >= l ? 1 : 0, ub = s < pp - (L - l) ? 0 : 1;
        map->u[k] = col(m, lb, ub, 1, 0, "u_l%d_s%d", l, s);
      }
      x[k] = col(m, 0, 1, 0, 0, "x_l%d_s%d", l, s);
    }
  for (int l = 0; l < L; l++)
    for (int s = 0; s < pp; s++) {
      int k = l * pp + s;
      double rhs = 0;
      rb_add(&r, x[k], 1);
      if (s < pp - 1) rb_add(&r, map->u[k], -1); else rhs = 1;
      if (s > 0) rb_add(&r, map->u[k - 1], 1);
      rb_emit(m, &r, 'E', rhs, "def_x_l%d_s%d", l, s);
    }
  for (int l = 0; l + 1 < L; l++)       /* contiguity: u non-increasing in l */
    for (int s = 0; s < pp - 1; s++) {
      rb_add(&r, map->u[l * pp + s], 1);
      rb_add(&r, map->u[(l + 1) * pp + s], -1);
      rb_emit(m, &r, 'G', 0, "order_l%d_s%d", l, s);
    }
  for (int s = 0; s < pp; s++) {        /* every stage holds a layer */
    for (int l = 0; l < L; l++) rb_add(&r, x[l * pp + s], 1);
    rb_emit(m, &r, 'G', 1, "nonempty_s%d", s);
  }

  /* Recompute and ZeRO-3, and their products with the assignment. */
  for (int s = 0; s < pp; s++) map->rec[s] = allow_recompute ? col(m, 0, 1, 1, 0, "R_s%d", s) : -1;
  for (int l = 0; l < L; l++) map->zdp[l] = dp > 1 ? col(m, 0, 1, 1, 0, "z_l%d", l) : -1;
  for (int l = 0; l < L; l++)
    for (int s = 0; s < pp; s++) {
      int k = l * pp + s;
      int pairs[2] = { map->rec[s], map->zdp[l] };
      for (int q = 0; q < 2; q++) {
        int other = pairs[q], *prod = q == 0 ? v : w;
        char c = q == 0 ? 'v' : 'w';
        prod[k] = -1;
        if (other < 0) continue;
        prod[k] = col(m, 0, 1, 0, 0, "%c_l%d_s%d", c, l, s);
        rb_add(&r, prod[k], 1); rb_add(&r, x[k], -1);
        rb_emit(m, &r, 'L', 0, "%c1_l%d_s%d", c, l, s);
        rb_add(&r, prod[k], 1); rb_add(&r, other, -1);
        rb_emit(m, &r, 'L', 0, "%c2_l%d_s%d", c, l, s);
        rb_add(&r, prod[k], 1); rb_add(&r, x[k], -1); rb_add(&r, other, -1);
        rb_emit(m, &r, 'G', -1, "%c3_l%d_s%d", c, l, s);
      }
    }

  /* Slot types (relaxation): one per slot, no more slots of a type than its TP groups,
   * replicas ordered by their stage-0 type (they are interchangeable). */
  if (no > 1) {
    for (int s = 0; s < pp; s++)
      for (int rr = 0; rr < dp; rr++) {
        for (int o = 0; o < no; o++) {
          int *y = &map->type[((size_t)s * dp + rr) * no + o];
          *y = col(m, 0, K->count[o] > 0 ? 1 : 0, 1, 0, "y_s%d_r%d_k%d", s, rr, o);
          rb_add(&r, *y, 1);
        }
        rb_emit(m, &r, 'E', 1, "type_s%d_r%d", s, rr);
      }
    for (int o = 0; o < no; o++) {
      for (int i = 0; i < pp * dp; i++) rb_add(&r, map->type[(size_t)i * no + o], 1);
      rb_emit(m, &r, 'L', K->count[o], "count_k%d", o);
    }
    for (int rr = 0; rr + 1 < dp; rr++) {
      for (int o = 0; o < no; o++) {
        rb_add(&r, map->type[(size_t)rr * no + o], o);
        rb_add(&r, map->type[(size_t)(rr + 1) * no + o], -o);
      }
      rb_emit(m, &r, 'L', 0, "symm_r%d", rr);
    }
  }

  /* Stage times: t_s_r = sum c (x + rc v) + Z for its option (>= under each chosen type,
   * big-M from the largest value the right side can take). The straggler tau_r >= t_s_r. */
  for (int s = 0; s < pp; s++)
    for (int rr = 0; rr < dp; rr++) {
      int k = s * dp + rr;
      double zt = hp_cost_gather(1, dp, K->bdp[s]);   /* the gather per byte sharded */
      t[k] = col(m, 0, INFINITY, 0, 0, "t_s%d_r%d", s, rr);
      for (int o = 0; o < no; o++) {
        const double *c = &K->c[(((size_t)k) * no + o) * L];
        double big = 0;
        rb_add(&r, t[k], 1);
        for (int l = 0; l < L; l++) {
          rb_add(&r, x[l * pp + s], -c[l]);
          if (v[l * pp + s] >= 0) rb_add(&r, v[l * pp + s], -c[l] * rc);
          if (w[l * pp + s] >= 0) rb_add(&r, w[l * pp + s], -zt * fig[l].pb);
          big += c[l] * (1 + rc) + zt * fig[l].pb;
        }
        if (no == 1) {
          rb_emit(m, &r, 'E', 0, "time_s%d_r%d", s, rr);
        } else {
          rb_add(&r, map->type[(size_t)k * no + o], -big);
          rb_emit(m, &r, 'G', -big, "time_s%d_r%d_k%d", s, rr, o);
        }
      }
      if (no > 1) relax_time_row(m, &r, K, map, k, s, L, pp, x, v, w, zt, fig, t[k]);
    }
  for (int rr = 0; rr < dp; rr++) {
    tau[rr] = col(m, 0, INFINITY, 0, 0, "tau_r%d", rr);
    for (int s = 0; s < pp; s++) {
      rb_add(&r, tau[rr], 1);
      rb_add(&r, t[s * dp + rr], -1);
      rb_emit(m, &r, 'G', 0, "strag_s%d_r%d", s, rr);
    }
  }

  /* P >= (gas-1) tau_r + sum_s t_s_r + hand-offs: the last layer of stage s is l exactly
   * when u_l_s - u_{l+1}_s = 1. */
  map->obj_pipe = col(m, 0, INFINITY, 0, 1, "P");
  for (int rr = 0; rr < dp; rr++) {
    double lat = 0;
    rb_add(&r, map->obj_pipe, 1);
    rb_add(&r, tau[rr], -hp_cost_replica(pl->gas, 1, 0, 0));
    for (int s = 0; s < pp; s++) {
      size_t sl = (size_t)s * dp + rr;
      rb_add(&r, t[sl], -1);
      if (s == pp - 1) continue;
      if (K->by_node) rb_add(&r, ex[sl] = col(m, 0, INFINITY, 0, 0, "ex_s%d_r%d", s, rr), -1);
      lat += K->lat[sl];
      for (int l = 0; l + 1 < L; l++) {
        rb_add(&r, map->u[l * pp + s], -K->h[sl * L + l]);
        rb_add(&r, map->u[(l + 1) * pp + s], K->h[sl * L + l]);
      }
    }
    rb_emit(m, &r, 'G', lat, "pipe_r%d", rr);
  }

  /* Q >= sync_s. */
  map->obj_sync = col(m, 0, INFINITY, 0, 1, "Q");
  for (int s = 0; s < pp && dp > 1; s++) {
    double aG = hp_cost_sync(1, 0, dp, K->bdp[s], 0), aZ = hp_cost_sync(0, 1, dp, K->bdp[s], 0);
    rb_add(&r, map->obj_sync, 1);
    for (int l = 0; l < L; l++) {
      rb_add(&r, x[l * pp + s], -aG * fig[l].g);
      rb_add(&r, w[l * pp + s], (aG - aZ) * fig[l].g);
    }
    rb_emit(m, &r, 'G', hp_cost_sync(0, 0, dp, K->bdp[s], K->latdp[s]), "sync_s%d", s);
  }
  if (K->by_node) node_rows(m, &r, K, map, pl, fig, ex, x, w);

  /* Memory of the stage's devices against the capacity of each slot's option. */
  for (int s = 0; s < pp; s++) {
    double big = 0, cap = INFINITY;
    hp_mem_terms k0, k1;               /* the memory's coefficients without, with recompute */
    hp_cost_mem_coeffs(K->tab.inflight[s], mbs, dp, 0, &k0);
    hp_cost_mem_coeffs(K->tab.inflight[s], mbs, dp, 1, &k1);
    int gmax = dp > 1 ? col(m, 0, INFINITY, 0, 0, "gmax_s%d", s) : -1;
    int amax = map->rec[s] >= 0 ? col(m, 0, INFINITY, 0, 0, "amax_s%d", s) : -1;
    int wmax = col(m, 0, INFINITY, 0, 0, "wmax_s%d", s);
    for (int l = 0; l < L; l++) {
      int k = l * pp + s;
      if (gmax >= 0) { rb_add(&r, gmax, 1); rb_add(&r, w[k], -fig[l].pb); rb_emit(m, &r, 'G', 0, "gmax_l%d_s%d", l, s); }
      if (amax >= 0) { rb_add(&r, amax, 1); rb_add(&r, v[k], -fig[l].a); rb_emit(m, &r, 'G', 0, "amax_l%d_s%d", l, s); }
      rb_add(&r, wmax, 1); rb_add(&r, x[k], -fig[l].wk); rb_emit(m, &r, 'G', 0, "wmax_l%d_s%d", l, s);
      big += fig[l].st * k0.states_dp + k0.act_sum * fig[l].a + k1.inputs * fig[l].in +
             k0.gather * fig[l].pb + k1.act_max * fig[l].a + k0.work * fig[l].wk;
    }
    for (int rr = 0; rr < dp; rr++)
      for (int o = 0; o < no; o++)
        if (K->cap[((size_t)s * dp + rr) * no + o] < cap) cap = K->cap[((size_t)s * dp + rr) * no + o];
    for (int rr = 0; rr < (no == 1 ? 1 : dp); rr++)
      for (int o = 0; o < no; o++) {
        for (int l = 0; l < L; l++) {
          int k = l * pp + s;
          /* replicated, no recompute; sharding moves states to the sharded term;
           * recompute trades the saved activations for the inputs */
          rb_add(&r, x[k], fig[l].st * k0.states_dp + k0.act_sum * fig[l].a);
          if (w[k] >= 0) rb_add(&r, w[k], fig[l].st * (k0.states_z - k0.states_dp));
          if (v[k] >= 0) rb_add(&r, v[k], k1.inputs * fig[l].in - k0.act_sum * fig[l].a);
        }
        rb_add(&r, gmax, k0.gather);
        rb_add(&r, amax, k1.act_max);
        rb_add(&r, wmax, k0.work);
        if (no == 1) {
          rb_emit(m, &r, 'L', cap, "mem_s%d", s);
        } else {                         /* binds only under the slot's chosen type */
          double c = K->cap[((size_t)s * dp + rr) * no + o];
          rb_add(&r, map->type[((size_t)s * dp + rr) * no + o], big);
          rb_emit(m, &r, 'L', c + big, "mem_s%d_r%d_k%d", s, rr, o);
        }
      }
  }
  if (m->failed) err = hp_fail(d, HP_NOMEM, "out of memory building the MIP");
done:
  free(r.idx);
  free(r.val);
  free(fig);
  free(x);
  free(v);
  free(w);
  free(t);
  free(tau);
  free(ex);
  if (err) {
    hp_mip_destroy(&m);
    hp_mip_map_release(map);
  }
  *out = m;
  return err;
}

hp_err hp_mip_build(const hp_problem *prob, const hp_plan *pl, int allow_recompute,
                    hp_mip **out, hp_mip_map *map, hp_diag *d)
{
  coeffs k;
  hp_err err = coeffs_fixed(prob, pl, &k);
  *out = NULL;
  memset(map, 0, sizeof *map);
  if (err) err = hp_fail(d, HP_NOMEM, "out of memory building the MIP");
  else err = build(prob, pl, &k, allow_recompute, out, map, d);
  coeffs_free(&k);
  return err;
}

hp_err hp_mip_build_bound(const hp_problem *prob, const hp_plan *pl, int by_node,
                          hp_mip **out, hp_mip_map *map, hp_diag *d)
{
  coeffs k;
  hp_err err = coeffs_bound(prob, pl, by_node, &k);
  *out = NULL;
  memset(map, 0, sizeof *map);
  if (err) err = hp_fail(d, HP_NOMEM, "out of memory building the MIP");
  else if (!(err = build(prob, pl, &k, 1, out, map, d))) map->by_node = by_node;
  coeffs_free(&k);
  return err;
}

void hp_mip_decode(const hp_mip_map *map, const double *x, hp_plan *plan)
{
  int L = map->n_layers, pp = map->pp, prev = -1;
  for (int l = 0; l < L; l++) {
    int st = pp - 1;
    for (int s = 0; s < pp - 1; s++) {
      int c = map->u[l * pp + s];
      double val = c >= 0 ? x[c] : (s >= l ? 1 : 0);
      if (val > 0.5) { st = s; break; }
    }
    for (int s = prev + 1; s <= st; s++) plan->first[s] = l;
    if (st > prev) prev = st;
    plan->zdp[l] = map->zdp[l] >= 0 && x[map->zdp[l]] > 0.5;
  }
  plan->first[pp] = L;
  for (int s = 0; s < pp; s++) plan->recompute[s] = map->rec[s] >= 0 && x[map->rec[s]] > 0.5;
}

void hp_mip_decode_types(const hp_mip_map *map, const double *x, int *slot_type)
{
  for (int i = 0; i < map->pp * map->dp; i++) {
    slot_type[i] = 0;
    for (int o = 0; o < map->n_types; o++)
      if (x[map->type[(size_t)i * map->n_types + o]] > 0.5) slot_type[i] = o;
  }
}

int hp_mip_option(const hp_problem *prob, const hp_mip_map *map, int dev)
{
  return map->by_node ? prob->cluster->dev_node[dev] : hp_device_type(prob, dev);
}

void hp_mip_encode(const hp_mip *m, const hp_mip_map *map, const hp_plan *plan, double *x)
{
  int L = map->n_layers, pp = map->pp;
  memset(x, 0, (size_t)m->n_cols * sizeof *x);
  for (int s = 0; s < pp; s++)
    for (int l = 0; l < L; l++)
      if (map->u[l * pp + s] >= 0) x[map->u[l * pp + s]] = l < plan->first[s + 1] ? 1 : 0;
  for (int s = 0; s < pp; s++)
    if (map->rec[s] >= 0) x[map->rec[s]] = plan->recompute[s];
  for (int l = 0; l < L; l++)
    if (map->zdp[l] >= 0) x[map->zdp[l]] = plan->zdp[l];
}
