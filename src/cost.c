/* cost.c -- the cost tables of hp_cost.h: cost-model.md version 1.1, sections 3 and 4,
 * written once. Per configuration: each layer's memory, gradient and hand-off figures
 * and the in-flight counts; per placement: TP-group classes with their layer times, the
 * hand-off lanes, the replica groups' shared links (R(n)) and the stages' capacities. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

double hp_cost_handoff(double out_bytes, int mbs, int tp, double bw, double lat)
{
  return 2.0 * out_bytes * mbs / tp / bw + 2.0 * lat;
}

double hp_cost_gather(double zbytes, int dp, double bdp)
{
  if (dp <= 1 || zbytes <= 0) return 0;
  return 2.0 * hp_cost_ring_share(dp) * zbytes / bdp;   /* an all-gather each way */
}

double hp_cost_sync(double G, double Gz, int dp, double bdp, double latdp)
{
  if (dp <= 1) return 0;
  return (hp_cost_ring_allreduce(dp) * G + hp_cost_ring_share(dp) * Gz) / bdp
         + hp_cost_ring_latency(dp, latdp);
}

double hp_cost_replica(long gas, double tmax, double tsum, double esum)
{
  return (double)(gas - 1) * tmax + tsum + esum;
}

double hp_cost_recompute(double compute, int recompute)
{
  return recompute ? compute * (1.0 + 1.0 / 3.0) : compute;
}

void hp_cost_fwd_bwd(double compute, int recompute, double gather, double *fwd, double *bwd)
{
  *fwd = compute / 3 + gather / 2;
  *bwd = compute * (2.0 / 3.0 + (recompute ? 1.0 / 3.0 : 0)) + gather / 2;
}

double hp_cost_mem_total(const hp_mem_terms *m, long inflight, int mbs, int dp, int recompute)
{
  double act = recompute ? (double)inflight * mbs * m->inputs + mbs * m->act_max
                         : (double)inflight * mbs * m->act_sum;
  return m->states_dp + m->states_z / dp + m->gather + act + m->work;
}

void hp_cost_mem_coeffs(long inflight, int mbs, int dp, int recompute, hp_mem_terms *coef)
{
  double *out[7] = { &coef->states_dp, &coef->states_z, &coef->gather, &coef->act_sum,
                     &coef->act_max, &coef->inputs, &coef->work };
  for (int i = 0; i < 7; i++) {
    hp_mem_terms unit = {0};
    double *in[7] = { &unit.states_dp, &unit.states_z, &unit.gather, &unit.act_sum,
                      &unit.act_max, &unit.inputs, &unit.work };
    *in[i] = 1;
    *out[i] = hp_cost_mem_total(&unit, inflight, mbs, dp, recompute);
  }
}

long hp_cost_inflight(int pp, long gas, hp_schedule schedule, int s)
{
  if (schedule == HP_GPIPE) return gas;
  return pp - s < gas ? pp - s : gas;
}

long hp_inflight(const hp_plan *plan, int s)
{
  return hp_cost_inflight(plan->pp, plan->gas, plan->schedule, s);
}

void hp_costs_release(hp_costs *c)
{
  if (!c) return;
  free(c->layer);
  free(c->inflight);
  free(c->cls);
  free(c->time);
  free(c->slot_class);
  free(c->hbw);
  free(c->hlat);
  free(c->bdp);
  free(c->latdp);
  free(c->cap);
  memset(c, 0, sizeof *c);
}

/* The configuration part: per-layer figures and in-flight counts. */
static hp_err build_config(const hp_problem *p, const hp_plan *shape, hp_costs *c)
{
  const hp_model *md = p->model;
  int L = md->n_layers;
  memset(c, 0, sizeof *c);
  c->pp = shape->pp;
  c->tp = shape->tp;
  c->dp = shape->dp;
  c->mbs = shape->mbs;
  c->gas = shape->gas;
  c->schedule = shape->schedule;
  c->n_layers = L;
  c->layer = hp__calloc((size_t)L, sizeof *c->layer);
  c->inflight = hp__calloc((size_t)c->pp, sizeof *c->inflight);
  if (!c->layer || !c->inflight) return HP_NOMEM;
  for (int l = 0; l < L; l++) {
    const hp_layer *ly = &md->layers[l];
    int tl = ly->splittable ? c->tp : 1;
    double in = l == 0 ? md->input_bytes : md->layers[l - 1].out_bytes;
    hp_layer_cost *f = &c->layer[l];
    f->state = md->state_bytes * ly->params / tl;
    f->param = md->param_bytes * ly->params / tl;
    f->grad = md->grad_bytes * ly->params / tl;
    f->act = (ly->act_bytes - ly->act_repl) / tl + ly->act_repl;
    f->input = in / tl;
    f->work = (c->mbs * ly->work_bytes + ly->work_fixed) / tl;
    f->out = ly->out_bytes;
  }
  for (int s = 0; s < c->pp; s++) c->inflight[s] = hp_cost_inflight(c->pp, c->gas, c->schedule, s);
  return HP_OK;
}

/* Layer times of every class, for every layer. */
static hp_err build_times(const hp_problem *p, hp_costs *c)
{
  int L = c->n_layers;
  c->time = hp__calloc((size_t)(c->n_class > 0 ? c->n_class : 1) * (size_t)L, sizeof *c->time);
  if (!c->time) return HP_NOMEM;
  for (int k = 0; k < c->n_class; k++)
    for (int l = 0; l < L; l++)
      c->time[(size_t)k * L + l] = hp_layer_time(p, l, c->cls[k].type, c->tp, c->mbs,
                                                 c->cls[k].bw, c->cls[k].lat);
  return HP_OK;
}

hp_err hp_costs_build_classes(const hp_problem *p, const hp_plan *shape,
                              const hp_tp_class *cls, int n_class, hp_costs *c, hp_diag *d)
{
  hp_err err = build_config(p, shape, c);
  if (!err && n_class > 0 && !(c->cls = hp__calloc((size_t)n_class, sizeof *c->cls))) err = HP_NOMEM;
  if (!err) {
    if (n_class > 0) memcpy(c->cls, cls, (size_t)n_class * sizeof *cls);
    c->n_class = n_class;
    err = build_times(p, c);
  }
  if (err) {
    hp_costs_release(c);
    return hp_fail(d, err, "out of memory building the cost tables");
  }
  return HP_OK;
}

/* Smallest bandwidth and largest latency inside slot (s, r)'s TP group (INFINITY and 0
 * when tp = 1). */
static void tp_link(const hp_problem *p, const hp_plan *plan, int s, int r, double *bw, double *lat)
{
  *bw = INFINITY;
  *lat = 0;
  for (int j = 0; j < plan->tp; j++)
    for (int q = j + 1; q < plan->tp; q++) {
      int a = plan->dev[HP_SLOT(plan, s, r, j)], b = plan->dev[HP_SLOT(plan, s, r, q)];
      double x = hp_problem_bw(p, a, b), y = hp_problem_lat(p, a, b);
      if (x < *bw) *bw = x;
      if (y > *lat) *lat = y;
    }
}

/* The slowest lane between (s, r) and (s + 1, r). */
static void handoff_link(const hp_problem *p, const hp_plan *plan, int s, int r, double *bw,
                         double *lat)
{
  *bw = INFINITY;
  *lat = 0;
  for (int j = 0; j < plan->tp; j++) {
    int a = plan->dev[HP_SLOT(plan, s, r, j)], b = plan->dev[HP_SLOT(plan, s + 1, r, j)];
    double x = hp_problem_bw(p, a, b), y = hp_problem_lat(p, a, b);
    if (x < *bw) *bw = x;
    if (y > *lat) *lat = y;
  }
}

/* R(n): replica groups G(s, j) that have a device on n and one on another node
 * (cost-model.md section 3; 7.10: every group counts, parameters or not). */
static void count_crossing_groups(const hp_problem *prob, const hp_plan *plan, int *R,
                                  int *seen)
{
  const hp_cluster *c = prob->cluster;
  for (int s = 0; s < plan->pp; s++)
    for (int j = 0; j < plan->tp; j++) {
      int n0 = c->dev_node[plan->dev[HP_SLOT(plan, s, 0, j)]], crosses = 0;
      for (int r = 1; r < plan->dp; r++)
        if (c->dev_node[plan->dev[HP_SLOT(plan, s, r, j)]] != n0) crosses = 1;
      if (!crosses) continue;
      for (int r = 0; r < plan->dp; r++) {
        int n = c->dev_node[plan->dev[HP_SLOT(plan, s, r, j)]];
        if (seen[n] != s * plan->tp + j + 1) {  /* count each group once per node */
          seen[n] = s * plan->tp + j + 1;
          R[n]++;
        }
      }
    }
}

/* Bdp[s] and latdp[s] of every stage (0 when dp = 1). */
static hp_err replica_links(const hp_problem *p, const hp_plan *plan, double *bdp, double *latdp)
{
  const hp_cluster *c = p->cluster;
  int *R, *seen;
  for (int s = 0; s < plan->pp; s++) bdp[s] = latdp[s] = 0;
  if (plan->dp == 1) return HP_OK;
  R = hp__calloc((size_t)c->n_nodes, sizeof *R);
  seen = hp__calloc((size_t)c->n_nodes, sizeof *seen);
  if (!R || !seen) { free(R); free(seen); return HP_NOMEM; }
  count_crossing_groups(p, plan, R, seen);
  /* Over every pair of every group of the stage: the shared bandwidth (divided by the
   * busier node's R across nodes) and the latency. */
  for (int s = 0; s < plan->pp; s++) {
    double bmin = INFINITY, lmax = 0;
    for (int j = 0; j < plan->tp; j++)
      for (int r = 0; r < plan->dp; r++)
        for (int q = r + 1; q < plan->dp; q++) {
          int a = plan->dev[HP_SLOT(plan, s, r, j)], b = plan->dev[HP_SLOT(plan, s, q, j)];
          int na = c->dev_node[a], nb = c->dev_node[b];
          double bw = hp_problem_bw(p, a, b), lat = hp_problem_lat(p, a, b);
          if (na != nb) bw /= (R[na] > R[nb] ? R[na] : R[nb]);
          if (bw < bmin) bmin = bw;
          if (lat > lmax) lmax = lat;
        }
    bdp[s] = bmin;
    latdp[s] = lmax;
  }
  free(R);
  free(seen);
  return HP_OK;
}

/* The placement part: classes of the slots, hand-off lanes, replica links, capacities. */
static hp_err build_placement(const hp_problem *p, const hp_plan *plan, hp_costs *c)
{
  int pp = plan->pp, dp = plan->dp, tp = plan->tp, n = pp * dp;
  c->slot_class = hp__calloc((size_t)n, sizeof *c->slot_class);
  c->cls = hp__calloc((size_t)n, sizeof *c->cls);
  c->hbw = hp__calloc((size_t)n, sizeof *c->hbw);
  c->hlat = hp__calloc((size_t)n, sizeof *c->hlat);
  c->bdp = hp__calloc((size_t)pp, sizeof *c->bdp);
  c->latdp = hp__calloc((size_t)pp, sizeof *c->latdp);
  c->cap = hp__calloc((size_t)pp, sizeof *c->cap);
  if (!c->slot_class || !c->cls || !c->hbw || !c->hlat || !c->bdp || !c->latdp || !c->cap)
    return HP_NOMEM;
  for (int s = 0; s < pp; s++)
    for (int r = 0; r < dp; r++) {
      hp_tp_class k;
      int i = s * dp + r, found = -1;
      k.type = hp_device_type(p, plan->dev[HP_SLOT(plan, s, r, 0)]);
      tp_link(p, plan, s, r, &k.bw, &k.lat);
      for (int q = 0; q < c->n_class && found < 0; q++)
        if (c->cls[q].type == k.type && c->cls[q].bw == k.bw && c->cls[q].lat == k.lat) found = q;
      if (found < 0) {
        found = c->n_class++;
        c->cls[found] = k;
      }
      c->slot_class[i] = found;
      if (s < pp - 1) handoff_link(p, plan, s, r, &c->hbw[i], &c->hlat[i]);
    }
  if (replica_links(p, plan, c->bdp, c->latdp)) return HP_NOMEM;
  for (int s = 0; s < pp; s++) {
    c->cap[s] = INFINITY;
    for (int i = 0; i < dp * tp; i++) {
      const hp_devtype *t = &p->cluster->types[hp_device_type(p, plan->dev[(size_t)s * dp * tp + i])];
      if (t->mem - t->reserved < c->cap[s]) c->cap[s] = t->mem - t->reserved;
    }
  }
  return HP_OK;
}

hp_err hp_costs_build(const hp_problem *p, const hp_plan *plan, hp_costs *c, hp_diag *d)
{
  hp_err err = build_config(p, plan, c);
  if (!err) err = build_placement(p, plan, c);
  if (!err) err = build_times(p, c);
  if (err) {
    hp_costs_release(c);
    return hp_fail(d, err, "out of memory building the cost tables");
  }
  return HP_OK;
}

double hp_costs_compute(const hp_costs *c, int cls, int first, int last)
{
  const double *t = &c->time[(size_t)cls * (size_t)c->n_layers];
  double sum = 0;
  for (int l = first; l <= last; l++) sum += t[l];
  return sum;
}

double hp_costs_handoff(const hp_costs *c, int s, int r, int last)
{
  int i = s * c->dp + r;
  return hp_cost_handoff(c->layer[last].out, c->mbs, c->tp, c->hbw[i], c->hlat[i]);
}

void hp_costs_mem_add(const hp_costs *c, int l, int zdp, hp_mem_terms *m)
{
  const hp_layer_cost *f = &c->layer[l];
  if (zdp) {
    m->states_z += f->state;
    if (f->param > m->gather) m->gather = f->param;
  } else {
    m->states_dp += f->state;
  }
  m->act_sum += f->act;
  if (f->act > m->act_max) m->act_max = f->act;
  m->inputs += f->input;
  if (f->work > m->work) m->work = f->work;
}

void hp_costs_stage(const hp_costs *c, int s, int first, int last, const unsigned char *zdp,
                    int recompute, hp_stage_cost *out)
{
  double G = 0, Gz = 0, zbytes = 0;
  hp_mem_terms mt = {0};
  for (int l = first; l <= last; l++) {
    int z = zdp && zdp[l] && c->dp > 1;     /* nothing to shard when dp = 1 (7.1) */
    if (z) {
      Gz += c->layer[l].grad;
      zbytes += c->layer[l].param;
    } else {
      G += c->layer[l].grad;
    }
    hp_costs_mem_add(c, l, z, &mt);
  }
  out->gather = hp_cost_gather(zbytes, c->dp, c->bdp[s]);
  out->sync = hp_cost_sync(G, Gz, c->dp, c->bdp[s], c->latdp[s]);
  out->mem = hp_cost_mem_total(&mt, c->inflight[s], c->mbs, c->dp, recompute);
}
