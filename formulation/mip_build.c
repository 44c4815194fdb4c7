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

/* Per-layer figures of the memory model, from the evaluator's own accumulation. */
typedef struct layer_fig { double st, pb, g, a, in, wk; } layer_fig;

static void figures(const hp_problem *p, const hp_plan *pl, layer_fig *f)
{
  for (int l = 0; l < p->model->n_layers; l++) {
    hp_mem_terms rep = {0}, z = {0};
    const hp_layer *ly = &p->model->layers[l];
    hp__mem_add(p, l, pl->tp, pl->mbs, 0, &rep);
    hp__mem_add(p, l, pl->tp, pl->mbs, 1, &z);
    f[l].st = rep.states_dp;
    f[l].pb = z.gather;
    f[l].g = p->model->grad_bytes * ly->params / (ly->splittable ? pl->tp : 1);
    f[l].a = rep.act_sum;
    f[l].in = rep.inputs;
    f[l].wk = rep.work;
  }
}

hp_err hp_mip_build(const hp_problem *prob, const hp_plan *pl, int allow_recompute,
                    hp_mip **out, hp_mip_map *map, hp_diag *d)
{
  const hp_model *md = prob->model;
  int L = md->n_layers, pp = pl->pp, dp = pl->dp, tp = pl->tp, mbs = pl->mbs;
  double f = dp > 1 ? (double)(dp - 1) / dp : 0;
  hp_mip *m = NULL;
  layer_fig *fig = hp__calloc((size_t)L, sizeof *fig);
  double *bdp = hp__calloc((size_t)pp, sizeof *bdp), *latdp = hp__calloc((size_t)pp, sizeof *latdp);
  int *x = hp__calloc((size_t)L * pp, sizeof *x), *v = hp__calloc((size_t)L * pp, sizeof *v);
  int *w = hp__calloc((size_t)L * pp, sizeof *w), *t = hp__calloc((size_t)pp * dp, sizeof *t);
  int *tau = hp__calloc((size_t)dp, sizeof *tau);
  rowb r = {0};
  hp_err err = HP_OK;

  memset(map, 0, sizeof *map);
  map->pp = pp;
  map->n_layers = L;
  map->dp = dp;
  map->u = hp__calloc((size_t)L * pp, sizeof *map->u);
  map->rec = hp__calloc((size_t)pp, sizeof *map->rec);
  map->zdp = hp__calloc((size_t)L, sizeof *map->zdp);
  if (!fig || !bdp || !latdp || !x || !v || !w || !t || !tau || !map->u || !map->rec ||
      !map->zdp || hp_mip_create(&m, d) || hp__replica_links(prob, pl, bdp, latdp)) {
    err = hp_fail(d, HP_NOMEM, "out of memory building the MIP");
    goto done;
  }
  if (pp > L) { err = hp_fail(d, HP_PLAN, "MIP: pp %d exceeds the %d layers", pp, L); goto done; }
  figures(prob, pl, fig);

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
      int pairs[2][2] = { { map->rec[s], 0 }, { map->zdp[l], 1 } };
      for (int q = 0; q < 2; q++) {
        int other = pairs[q][0], *prod = q == 0 ? v : w;
        prod[k] = -1;
        if (other < 0) continue;
        prod[k] = col(m, 0, 1, 0, 0, "%c_l%d_s%d", q == 0 ? 'v' : 'w', l, s);
        rb_add(&r, prod[k], 1); rb_add(&r, x[k], -1);
        rb_emit(m, &r, 'L', 0, "%c1_l%d_s%d", q == 0 ? 'v' : 'w', l, s);
        rb_add(&r, prod[k], 1); rb_add(&r, other, -1);
        rb_emit(m, &r, 'L', 0, "%c2_l%d_s%d", q == 0 ? 'v' : 'w', l, s);
        rb_add(&r, prod[k], 1); rb_add(&r, x[k], -1); rb_add(&r, other, -1);
        rb_emit(m, &r, 'G', -1, "%c3_l%d_s%d", q == 0 ? 'v' : 'w', l, s);
      }
    }

  /* Stage times t_s_r = sum c (x + v / 3) + Z; the straggler tau_r >= t_s_r. */
  for (int s = 0; s < pp; s++)
    for (int rr = 0; rr < dp; rr++) {
      double btp, lattp, zt = dp > 1 ? 2.0 * f / bdp[s] : 0;
      int k = s * dp + rr;
      hp__tp_link(prob, pl, s, rr, &btp, &lattp);
      t[k] = col(m, 0, INFINITY, 0, 0, "t_s%d_r%d", s, rr);
      rb_add(&r, t[k], 1);
      for (int l = 0; l < L; l++) {
        double c = hp__slot_layer_time(prob, pl, s, rr, l, btp, lattp);
        rb_add(&r, x[l * pp + s], -c);
        if (v[l * pp + s] >= 0) rb_add(&r, v[l * pp + s], -c / 3);
        if (w[l * pp + s] >= 0) rb_add(&r, w[l * pp + s], -zt * fig[l].pb);
      }
      rb_emit(m, &r, 'E', 0, "time_s%d_r%d", s, rr);
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
    rb_add(&r, tau[rr], -(double)(pl->gas - 1));
    for (int s = 0; s < pp; s++) {
      rb_add(&r, t[s * dp + rr], -1);
      if (s == pp - 1) continue;
      double bw, lt;
      hp__handoff_link(prob, pl, s, rr, &bw, &lt);
      lat += hp__handoff_time(0, mbs, tp, bw, lt);
      for (int l = 0; l + 1 < L; l++) {
        double h = hp__handoff_time(md->layers[l].out_bytes, mbs, tp, bw, 0);
        rb_add(&r, map->u[l * pp + s], -h);
        rb_add(&r, map->u[(l + 1) * pp + s], h);
      }
    }
    rb_emit(m, &r, 'G', lat, "pipe_r%d", rr);
  }

  /* Q >= sync_s. */
  map->obj_sync = col(m, 0, INFINITY, 0, 1, "Q");
  for (int s = 0; s < pp && dp > 1; s++) {
    rb_add(&r, map->obj_sync, 1);
    for (int l = 0; l < L; l++) {
      rb_add(&r, x[l * pp + s], -2.0 * f * fig[l].g / bdp[s]);
      rb_add(&r, w[l * pp + s], (2.0 * f - f) * fig[l].g / bdp[s]);
    }
    rb_emit(m, &r, 'G', hp__sync_time(0, 0, dp, bdp[s], latdp[s]), "sync_s%d", s);
  }

  /* Memory of every device of stage s against the smallest capacity less reserve. */
  for (int s = 0; s < pp; s++) {
    double cap = INFINITY, infl = (double)hp_inflight(pl, s);
    for (int i = 0; i < dp * tp; i++) {
      const hp_devtype *ty = &prob->cluster->types[hp_device_type(prob, pl->dev[(size_t)s * dp * tp + i])];
      if (ty->mem - ty->reserved < cap) cap = ty->mem - ty->reserved;
    }
    int gmax = dp > 1 ? col(m, 0, INFINITY, 0, 0, "gmax_s%d", s) : -1;
    int amax = map->rec[s] >= 0 ? col(m, 0, INFINITY, 0, 0, "amax_s%d", s) : -1;
    int wmax = col(m, 0, INFINITY, 0, 0, "wmax_s%d", s);
    for (int l = 0; l < L; l++) {
      int k = l * pp + s;
      if (gmax >= 0) { rb_add(&r, gmax, 1); rb_add(&r, w[k], -fig[l].pb); rb_emit(m, &r, 'G', 0, "gmax_l%d_s%d", l, s); }
      if (amax >= 0) { rb_add(&r, amax, 1); rb_add(&r, v[k], -fig[l].a); rb_emit(m, &r, 'G', 0, "amax_l%d_s%d", l, s); }
      rb_add(&r, wmax, 1); rb_add(&r, x[k], -fig[l].wk); rb_emit(m, &r, 'G', 0, "wmax_l%d_s%d", l, s);
    }
    for (int l = 0; l < L; l++) {
      int k = l * pp + s;
      rb_add(&r, x[k], fig[l].st + infl * mbs * fig[l].a);
      if (w[k] >= 0) rb_add(&r, w[k], -fig[l].st * f);           /* st - st / dp */
      if (v[k] >= 0) rb_add(&r, v[k], infl * mbs * (fig[l].in - fig[l].a));
    }
    rb_add(&r, gmax, 1);
    rb_add(&r, amax, (double)mbs);
    rb_add(&r, wmax, 1);
    rb_emit(m, &r, 'L', cap, "mem_s%d", s);
  }
  if (m->failed) err = hp_fail(d, HP_NOMEM, "out of memory building the MIP");
done:
  free(r.idx);
  free(r.val);
  free(fig);
  free(bdp);
  free(latdp);
  free(x);
  free(v);
  free(w);
  free(t);
  free(tau);
  if (err) {
    hp_mip_destroy(&m);
    hp_mip_map_release(map);
  }
  *out = m;
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
