/* mip_build.c -- the exact MIP of one configuration (pp, tp, dp, mbs) and placement:
 * cumulative stage-assignment variables u_l_s (layer l in a stage <= s), per-layer ZeRO-3
 * z_l, per-stage recompute R_s, their products with the assignment (v = x R, w = x z,
 * linearised exactly), per-slot stage times and hand-offs, epigraphs for every max (tau_r
 * for the replica's period max_s c[s,r], P for the slowest replica, Q for the slowest sync, gmax/amax/wmax for the
 * memory maxima), and per-stage memory capacity. Coefficients come from the cost tables
 * (each primitive evaluated at 1, since each is linear), so the objective equals the
 * evaluator's T at every integer point of its space (modes dp and zdp, one slice, the
 * job's end-of-iteration sync, no hbm; under `overlap` Q is 0 and without hbm the step
 * is 0 anyway: with hbm the step is left out, so the objective is then a lower bound). Rows are scaled: times in milliseconds, memory in
 * GiB (mip_internal.h). docs/formulation.md writes it out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mip_internal.h"

void hp_mip_map_release(hp_mip_map *map)
{
  if (!map) return;
  free(map->u);
  free(map->rec);
  free(map->zdp);
  memset(map, 0, sizeof *map);
}

hp_err hp__mip_stages(hp_mip *m, rowb *r, int L, int pp, int dp, int allow_recompute,
                      int allow_zdp, hp_mip_map *map, int *x, int *v, int *w)
{
  memset(map, 0, sizeof *map);
  map->pp = pp;
  map->n_layers = L;
  map->dp = dp;
  map->u = hp__calloc((size_t)L * pp, sizeof *map->u);
  map->rec = hp__calloc((size_t)pp, sizeof *map->rec);
  map->zdp = hp__calloc((size_t)L, sizeof *map->zdp);
  if (!map->u || !map->rec || !map->zdp) return HP_NOMEM;
  /* u_l_s for s < pp - 1 (u_l_{pp-1} = 1); x_l_s = u_l_s - u_l_{s-1}. Layer l sits in a
   * stage between pp - (L - l) and l, which fixes many u. */
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
      rb_add(r, x[k], 1);
      if (s < pp - 1) rb_add(r, map->u[k], -1); else rhs = 1;
      if (s > 0) rb_add(r, map->u[k - 1], 1);
      rb_emit(m, r, 'E', rhs, "def_x_l%d_s%d", l, s);
    }
  for (int l = 0; l + 1 < L; l++)       /* contiguity: u non-increasing in l */
    for (int s = 0; s < pp - 1; s++) {
      rb_add(r, map->u[l * pp + s], 1);
      rb_add(r, map->u[(l + 1) * pp + s], -1);
      rb_emit(m, r, 'G', 0, "order_l%d_s%d", l, s);
    }
  for (int s = 0; s < pp; s++) {        /* every stage holds a layer */
    for (int l = 0; l < L; l++) rb_add(r, x[l * pp + s], 1);
    rb_emit(m, r, 'G', 1, "nonempty_s%d", s);
  }
  /* Recompute and ZeRO-3, and their products with the assignment. */
  for (int s = 0; s < pp; s++) map->rec[s] = allow_recompute ? col(m, 0, 1, 1, 0, "R_s%d", s) : -1;
  for (int l = 0; l < L; l++) map->zdp[l] = dp > 1 && allow_zdp ? col(m, 0, 1, 1, 0, "z_l%d", l) : -1;
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
        rb_add(r, prod[k], 1); rb_add(r, x[k], -1);
        rb_emit(m, r, 'L', 0, "%c1_l%d_s%d", c, l, s);
        rb_add(r, prod[k], 1); rb_add(r, other, -1);
        rb_emit(m, r, 'L', 0, "%c2_l%d_s%d", c, l, s);
        rb_add(r, prod[k], 1); rb_add(r, x[k], -1); rb_add(r, other, -1);
        rb_emit(m, r, 'G', -1, "%c3_l%d_s%d", c, l, s);
      }
    }
  return m->failed ? HP_NOMEM : HP_OK;
}

int hp__mip_any_sharded(hp_mip *m, rowb *r, int L, int pp, int s, const int *w)
{
  int y = -1;
  for (int l = 0; l < L; l++) {
    if (w[l * pp + s] < 0) continue;
    if (y < 0) y = col(m, 0, 1, 0, 0, "y_s%d", s);
    rb_add(r, y, 1);
    rb_add(r, w[l * pp + s], -1);
    rb_emit(m, r, 'G', 0, "y_l%d_s%d", l, s);
  }
  return y;
}

void hp__mip_memory_maxima(hp_mip *m, rowb *r, const hp_costs *tab, int s,
                           const hp_mip_map *map, const int *x, const int *v, const int *w,
                           int *maxima, double *worst)
{
  int L = tab->n_layers, pp = tab->pp;
  hp_mem_terms k0 = { .any_ck = 1 }, k1 = { .any_ck = 1 };
  hp_cost_mem_coeffs(tab->inflight[s], 0, &k0);
  hp_cost_mem_coeffs(tab->inflight[s], 1, &k1);
  maxima[0] = tab->dp > 1 ? col(m, 0, INFINITY, 0, 0, "gmax_s%d", s) : -1;
  maxima[1] = map->rec[s] >= 0 ? col(m, 0, INFINITY, 0, 0, "amax_s%d", s) : -1;
  maxima[2] = col(m, 0, INFINITY, 0, 0, "wmax_s%d", s);
  *worst = 0;
  for (int l = 0; l < L; l++) {
    int k = l * pp + s;
    const hp_layer_cost *f = &tab->layer[l];
    if (maxima[0] >= 0) { rb_add(r, maxima[0], 1); rb_add(r, w[k], -f->param * HP_MIP_GIB); rb_emit(m, r, 'G', 0, "gmax_l%d_s%d", l, s); }
    /* the least over device types (hp_pattern.h): never over-counts a device's memory */
    double act = hp_patterns_least_act(tab, l), work = hp_patterns_least_work(tab, l);
    if (maxima[1] >= 0 && f->ck) { rb_add(r, maxima[1], 1); rb_add(r, v[k], -act * HP_MIP_GIB); rb_emit(m, r, 'G', 0, "amax_l%d_s%d", l, s); }
    rb_add(r, maxima[2], 1); rb_add(r, x[k], -work * HP_MIP_GIB); rb_emit(m, r, 'G', 0, "wmax_l%d_s%d", l, s);
    *worst += (f->state * k0.states + k0.act_sum * act + k1.act_keep * tab->mbs * f->input +
               k0.gather * f->param + k1.act_max * act + k0.work * work) * HP_MIP_GIB;
  }
}

void hp__mip_memory_row(rowb *r, const hp_costs *tab, int s, const int *x, const int *v,
                        const int *w, const int *maxima)
{
  int L = tab->n_layers, pp = tab->pp;
  hp_mem_terms k0 = { .any_ck = 1 }, k1 = { .any_ck = 1 };   /* without, with recompute */
  hp_cost_mem_coeffs(tab->inflight[s], 0, &k0);
  hp_cost_mem_coeffs(tab->inflight[s], 1, &k1);
  /* replicated, no recompute; sharding moves states to the sharded term; recompute
   * trades the saved activations for the inputs */
  for (int l = 0; l < L; l++) {
    int k = l * pp + s;
    const hp_layer_cost *f = &tab->layer[l];
    double act = hp_patterns_least_act(tab, l);   /* as in hp__mip_memory_maxima */
    rb_add(r, x[k], (f->state * k0.states + k0.act_sum * act) * HP_MIP_GIB);
    if (w[k] >= 0)
      rb_add(r, w[k], (hp_costs_layer_states(tab, l, HP_SHARD_ZDP) - f->state) * k0.states * HP_MIP_GIB);
    /* recompute keeps a checkpointable layer's input instead of its activations */
    if (v[k] >= 0 && f->ck)
      rb_add(r, v[k], (k1.act_keep * tab->mbs * f->input - k0.act_sum * act) * HP_MIP_GIB);
  }
  rb_add(r, maxima[0], k0.gather);
  rb_add(r, maxima[1], k1.act_max);
  rb_add(r, maxima[2], k0.work);
}

hp_err hp_mip_build(const hp_problem *prob, const hp_plan *pl, int allow_recompute,
                    hp_mip **out, hp_mip_map *map, hp_diag *d)
{
  int L = prob->model->n_layers, pp = pl->pp, dp = pl->dp;
  double rc = hp_cost_recompute(1, 1, 1) - 1;   /* recompute's extra share of the compute */
  hp_costs tab;
  hp_mip *m = NULL;
  int *x = hp__calloc((size_t)L * pp, sizeof *x), *v = hp__calloc((size_t)L * pp, sizeof *v);
  int *w = hp__calloc((size_t)L * pp, sizeof *w), *t = hp__calloc((size_t)pp * dp, sizeof *t);
  int *tau = hp__calloc((size_t)dp, sizeof *tau), *e = hp__calloc((size_t)pp * dp, sizeof *e);
  rowb r = {0};
  hp_err err = HP_OK;

  *out = NULL;
  memset(map, 0, sizeof *map);
  memset(&tab, 0, sizeof tab);
  if (pp > L) { err = hp_fail(d, HP_PLAN, "MIP: pp %d exceeds the %d layers", pp, L); goto done; }
  if (!x || !v || !w || !t || !tau || !e || hp_costs_build(prob, pl, &tab, NULL) ||
      hp_mip_create(&m, d) ||
      hp__mip_stages(m, &r, L, pp, dp, allow_recompute,
                     (hp_job_modes(&prob->job) >> HP_SHARD_ZDP & 1) != 0, map, x, v, w)) {
    err = hp_fail(d, HP_NOMEM, "out of memory building the MIP");
    goto done;
  }
  m->obj_scale = 1 / HP_MIP_MS;

  /* Stage times: t_s_r = sum c (x + rc v_ck) + Z + Zr, milliseconds (cost-model.md 3):
   * recompute re-runs checkpointable layers only (ck_l, 7.15); a sharded (zdp) layer adds
   * its gather and its gradients' reduce-scatter, both per byte (no slices: the gather
   * has no latency), and the stage pays the scatter's (dp-1) latdp once if it shards any
   * layer (y_s). Exact at integer points for modes dp and zdp with one slice. */
  for (int s = 0; s < pp; s++) {
    int y = hp__mip_any_sharded(m, &r, L, pp, s, w);
    double zlat = hp_cost_grad_scatter(0, 1, dp, tab.bdp[s], tab.latdp[s]) * HP_MIP_MS;
    for (int rr = 0; rr < dp; rr++) {
      int k = s * dp + rr, cls = tab.slot_class[k];
      double zt = hp_cost_gather(1, 0, 1, dp, tab.bdp[s], 0) * HP_MIP_MS;
      double zr = hp_cost_grad_scatter(1, 1, dp, tab.bdp[s], 0) * HP_MIP_MS;
      t[k] = col(m, 0, INFINITY, 0, 0, "t_s%d_r%d", s, rr);
      rb_add(&r, t[k], 1);
      for (int l = 0; l < L; l++) {
        double c = hp_costs_time(&tab, cls, l) * HP_MIP_MS;
        rb_add(&r, x[l * pp + s], -c);
        if (v[l * pp + s] >= 0 && tab.layer[l].ck) rb_add(&r, v[l * pp + s], -c * rc);
        if (w[l * pp + s] >= 0)
          rb_add(&r, w[l * pp + s], -zt * tab.layer[l].param - zr * tab.layer[l].grad);
      }
      rb_add(&r, y, -zlat);
      rb_emit(m, &r, 'E', 0, "time_s%d_r%d", s, rr);
    }
  }
  /* Hand-offs e_s_r (s < pp - 1), with the lane's shared link (tab.hbw, H_s(n)): the last
   * layer of stage s is l exactly when u_l_s - u_{l+1}_s = 1. */
  for (int s = 0; s + 1 < pp; s++)
    for (int rr = 0; rr < dp; rr++) {
      size_t sl = (size_t)s * dp + rr;
      e[sl] = col(m, 0, INFINITY, 0, 0, "e_s%d_r%d", s, rr);
      rb_add(&r, e[sl], 1);
      for (int l = 0; l + 1 < L; l++) {
        double h = hp_cost_handoff(tab.layer[l].out, pl->mbs, pl->tp, tab.hbw[sl], 0) * HP_MIP_MS;
        rb_add(&r, map->u[l * pp + s], -h);
        rb_add(&r, map->u[(l + 1) * pp + s], h);
      }
      rb_emit(m, &r, 'E', hp_cost_handoff(0, pl->mbs, pl->tp, tab.hbw[sl], tab.hlat[sl]) * HP_MIP_MS,
              "hand_s%d_r%d", s, rr);
    }
  /* The period tau_r >= c[s,r] = t_s_r + (e_{s-1,r} + e_s_r) / 2 (cost-model.md 3, 7.16). */
  for (int rr = 0; rr < dp; rr++) {
    tau[rr] = col(m, 0, INFINITY, 0, 0, "tau_r%d", rr);
    for (int s = 0; s < pp; s++) {
      rb_add(&r, tau[rr], 1);
      rb_add(&r, t[s * dp + rr], -1);
      if (s > 0) rb_add(&r, e[(s - 1) * dp + rr], -0.5);
      if (s + 1 < pp) rb_add(&r, e[s * dp + rr], -0.5);
      rb_emit(m, &r, 'G', 0, "strag_s%d_r%d", s, rr);
    }
  }

  /* P >= T[r] = (gas-1) tau_r + sum_s t_s_r + sum_s e_s_r. */
  map->obj_pipe = col(m, 0, INFINITY, 0, 1, "P");
  for (int rr = 0; rr < dp; rr++) {
    rb_add(&r, map->obj_pipe, 1);
    rb_add(&r, tau[rr], -hp_cost_replica(pl->gas, 1, 0, 0));
    for (int s = 0; s < pp; s++) {
      rb_add(&r, t[(size_t)s * dp + rr], -1);
      if (s + 1 < pp) rb_add(&r, e[(size_t)s * dp + rr], -1);
    }
    rb_emit(m, &r, 'G', 0, "pipe_r%d", rr);
  }

  /* Q >= sync_s (the sync is linear in the gradient bytes). */
  map->obj_sync = col(m, 0, INFINITY, 0, 1, "Q");
  /* overlapped, the reduction may hide behind the pipeline: Q = 0 is a lower bound */
  for (int s = 0; s < pp && dp > 1 && prob->job.grad_sync != HP_SYNC_OVERLAP; s++) {
    double aG = hp_cost_reduce(1, 0, dp, tab.bdp[s], 0) * HP_MIP_MS;
    double aZ = 0;                  /* zdp gradients were scattered per micro-batch */
    rb_add(&r, map->obj_sync, 1);
    for (int l = 0; l < L; l++) {
      rb_add(&r, x[l * pp + s], -aG * tab.layer[l].grad);
      rb_add(&r, w[l * pp + s], (aG - aZ) * tab.layer[l].grad);
    }
    rb_emit(m, &r, 'G', hp_cost_reduce(0, 0, dp, tab.bdp[s], tab.latdp[s]) * HP_MIP_MS, "sync_s%d", s);
  }

  /* Memory of the stage's devices against their smallest capacity, GiB. */
  for (int s = 0; s < pp; s++) {
    int maxima[3];
    double worst;
    hp__mip_memory_maxima(m, &r, &tab, s, map, x, v, w, maxima, &worst);
    hp__mip_memory_row(&r, &tab, s, x, v, w, maxima);
    rb_emit(m, &r, 'L', tab.cap[s] * HP_MIP_GIB, "mem_s%d", s);
  }
  if (m->failed) err = hp_fail(d, HP_NOMEM, "out of memory building the MIP");
done:
  hp_costs_release(&tab);
  free(r.idx);
  free(r.val);
  free(x);
  free(v);
  free(w);
  free(t);
  free(tau);
  free(e);
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
    plan->mode[l] = map->zdp[l] >= 0 && x[map->zdp[l]] > 0.5 ? HP_SHARD_ZDP : HP_SHARD_DP;
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
    if (map->zdp[l] >= 0) x[map->zdp[l]] = plan->mode[l] == HP_SHARD_ZDP;
}
