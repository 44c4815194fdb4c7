/* cost.c -- the cost tables of hp_cost.h: cost-model.md version 1.2, sections 3 and 4,
 * written once. Per configuration: each layer's memory, gradient, step and hand-off
 * figures, measured memory and the in-flight counts; per placement: TP-group classes with
 * their layer times, the hand-off lanes sharing each node's interface (H_s(n)), the
 * replica groups' shared links (R(n)) and the stages' capacities. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

double hp_cost_handoff(double out_bytes, int mbs, int tp, double bw, double lat)
{
  return 2.0 * out_bytes * mbs / tp / bw + 2.0 * lat;
}

double hp_cost_gather(double zbytes, double extra, int any, int dp, double bdp, double latdp)
{
  if (dp <= 1 || !any) return 0;
  /* an all-gather each way; each slice after the first pays the latency again, each way */
  return 2.0 * hp_cost_ring_share(dp) * zbytes / bdp + 2.0 * extra * (dp - 1) * latdp;
}

double hp_cost_grad_scatter(double rbytes, int any, int dp, double bdp, double latdp)
{
  if (dp <= 1 || !any) return 0;
  return hp_cost_ring_share(dp) * rbytes / bdp + (double)(dp - 1) * latdp;
}

double hp_cost_reduce(double G, double Gr, int dp, double bdp, double latdp)
{
  if (dp <= 1) return 0;
  return (hp_cost_ring_allreduce(dp) * G + hp_cost_ring_share(dp) * Gr) / bdp
         + hp_cost_ring_latency(dp, latdp);
}

double hp_cost_allgather(double Gp, int dp, double bdp)
{
  if (dp <= 1 || Gp <= 0) return 0;
  return hp_cost_ring_share(dp) * Gp / bdp;
}

double hp_cost_period(double t, double e_in, double e_out)
{
  return t + (e_in + e_out) / 2;
}

double hp_cost_replica(long gas, double cmax, double tsum, double esum)
{
  return (double)(gas - 1) * cmax + tsum + esum;
}

double hp_cost_recompute(double compute, double ck, int recompute)
{
  return recompute ? compute + ck / 3.0 : compute;
}

double hp_cost_backward(double compute, double ck, int recompute, double zr)
{
  return (2.0 * compute + (recompute ? ck : 0)) / 3.0 + zr;
}

void hp_cost_fwd_bwd(double compute, double ck, int recompute, double gather, double zr,
                     double *fwd, double *bwd)
{
  *fwd = compute / 3 + gather / 2;
  *bwd = hp_cost_backward(compute, ck, recompute, zr) + gather / 2;
}

double hp_cost_mem_total(const hp_mem_terms *m, long inflight, int recompute)
{
  double act = recompute && m->any_ck ? (double)inflight * m->act_keep + m->act_max
                                      : (double)inflight * m->act_sum;
  return m->states + m->gather + act + m->work;
}

void hp_cost_mem_coeffs(long inflight, int recompute, hp_mem_terms *coef)
{
  int any = coef->any_ck;
  double *out[6] = { &coef->states, &coef->gather, &coef->act_sum, &coef->act_keep,
                     &coef->act_max, &coef->work };
  double v[6];
  for (int i = 0; i < 6; i++) {
    hp_mem_terms unit = {0};
    double *in[6] = { &unit.states, &unit.gather, &unit.act_sum, &unit.act_keep,
                      &unit.act_max, &unit.work };
    unit.any_ck = any;
    *in[i] = 1;
    v[i] = hp_cost_mem_total(&unit, inflight, recompute);
  }
  for (int i = 0; i < 6; i++) *out[i] = v[i];
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
  free(c->mact);
  free(c->mwork);
  memset(c, 0, sizeof *c);
}

/* Measured memory per type (cost-model.md 1, 7.20), where the profile has some. */
static hp_err build_measured(const hp_problem *p, hp_costs *c)
{
  size_t n = (size_t)c->n_types * (size_t)c->n_layers;
  if (!p->mem_measured) return HP_OK;
  c->mact = hp__calloc(n, sizeof *c->mact);
  c->mwork = hp__calloc(n, sizeof *c->mwork);
  if (!c->mact || !c->mwork) return HP_NOMEM;
  for (int k = 0; k < c->n_types; k++)
    for (int l = 0; l < c->n_layers; l++) {
      double a = NAN, w = NAN;
      size_t i = (size_t)k * (size_t)c->n_layers + (size_t)l;
      int got = hp__measured_mem(p, l, k, c->tp, c->mbs, &a, &w);
      c->mact[i] = got & 1 ? a : NAN;
      c->mwork[i] = got & 2 ? w : NAN;
    }
  return HP_OK;
}

/* The configuration part: per-layer figures, measured memory and in-flight counts. */
static hp_err build_config(const hp_problem *p, const hp_plan *shape, hp_costs *c)
{
  const hp_model *md = p->model;
  int L = md->n_layers, sp = p->job.sequence_parallel && shape->tp > 1;
  double opt = hp_model_opt_bytes(md), upd = hp_model_update_bytes(md);
  memset(c, 0, sizeof *c);
  c->pp = shape->pp;
  c->tp = shape->tp;
  c->dp = shape->dp;
  c->mbs = shape->mbs;
  c->gas = shape->gas;
  c->schedule = shape->schedule;
  c->n_layers = L;
  c->n_types = p->cluster->n_types;
  c->layer = hp__calloc((size_t)L, sizeof *c->layer);
  c->inflight = hp__calloc((size_t)c->pp, sizeof *c->inflight);
  if (!c->layer || !c->inflight) return HP_NOMEM;
  for (int l = 0; l < L; l++) {
    const hp_layer *ly = &md->layers[l];
    int tl = ly->splittable ? c->tp : 1;
    double in = l == 0 ? md->input_bytes : md->layers[l - 1].out_bytes;
    hp_layer_cost *f = &c->layer[l];
    f->q = ly->params / tl;
    f->state = md->state_bytes * f->q;
    f->param = md->param_bytes * f->q;
    f->grad = md->grad_bytes * f->q;
    f->opt = opt * f->q;
    f->upd = upd * f->q;
    /* sequence parallelism divides the part TP leaves whole too (1.2) */
    f->act = sp ? ly->act_bytes / tl : (ly->act_bytes - ly->act_repl) / tl + ly->act_repl;
    /* the checkpointed input is whole on every TP rank without sequence parallelism */
    f->input = sp ? in / tl : in;
    f->work = (c->mbs * ly->work_bytes + ly->work_fixed) / tl;
    f->out = ly->out_bytes;
    f->ck = !ly->no_recompute;
  }
  for (int s = 0; s < c->pp; s++) c->inflight[s] = hp_cost_inflight(c->pp, c->gas, c->schedule, s);
  return build_measured(p, c);
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

/* The hand-off lanes of every boundary s: (dev(s,r,j), dev(s+1,r,j)) for every r, j, run
 * at once; a lane between nodes sees its link divided by the larger of its two nodes'
 * counts H_s(n) of crossing lanes (cost-model.md 3, 7.11, 7.18). hbw/hlat[s * dp + r] get
 * the slowest lane of replica r. */
static hp_err handoff_links(const hp_problem *p, const hp_plan *plan, double *hbw, double *hlat)
{
  const hp_cluster *c = p->cluster;
  int dp = plan->dp, tp = plan->tp;
  int *H = hp__calloc((size_t)c->n_nodes, sizeof *H);
  if (!H) return HP_NOMEM;
  for (int s = 0; s + 1 < plan->pp; s++) {
    for (int r = 0; r < dp; r++)
      for (int j = 0; j < tp; j++) {
        int na = c->dev_node[plan->dev[HP_SLOT(plan, s, r, j)]];
        int nb = c->dev_node[plan->dev[HP_SLOT(plan, s + 1, r, j)]];
        if (na != nb) { H[na]++; H[nb]++; }
      }
    for (int r = 0; r < dp; r++) {
      double bmin = INFINITY, lmax = 0;
      for (int j = 0; j < tp; j++) {
        int a = plan->dev[HP_SLOT(plan, s, r, j)], b = plan->dev[HP_SLOT(plan, s + 1, r, j)];
        int na = c->dev_node[a], nb = c->dev_node[b];
        double x = hp_problem_bw(p, a, b), y = hp_problem_lat(p, a, b);
        if (na != nb) x /= H[na] > H[nb] ? H[na] : H[nb];
        if (x < bmin) bmin = x;
        if (y > lmax) lmax = y;
      }
      hbw[s * dp + r] = bmin;
      hlat[s * dp + r] = lmax;
    }
    for (int r = 0; r < dp; r++)          /* reset the counts this boundary touched */
      for (int j = 0; j < tp; j++) {
        H[c->dev_node[plan->dev[HP_SLOT(plan, s, r, j)]]] = 0;
        H[c->dev_node[plan->dev[HP_SLOT(plan, s + 1, r, j)]]] = 0;
      }
  }
  free(H);
  return HP_OK;
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
    }
  if (handoff_links(p, plan, c->hbw, c->hlat)) return HP_NOMEM;
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

double hp_costs_compute(const hp_costs *c, int cls, int first, int last, double *ck)
{
  const double *t = &c->time[(size_t)cls * (size_t)c->n_layers];
  double sum = 0, sck = 0;
  for (int l = first; l <= last; l++) {
    sum += t[l];
    if (c->layer[l].ck) sck += t[l];
  }
  if (ck) *ck = sck;
  return sum;
}

double hp_costs_handoff(const hp_costs *c, int s, int r, int last)
{
  int i = s * c->dp + r;
  return hp_cost_handoff(c->layer[last].out, c->mbs, c->tp, c->hbw[i], c->hlat[i]);
}

double hp_costs_layer_act(const hp_costs *c, int l, int type)
{
  if (c->mact && type >= 0) {
    double v = c->mact[(size_t)type * (size_t)c->n_layers + (size_t)l];
    if (!isnan(v)) return v;
  }
  return c->mbs * c->layer[l].act;
}

double hp_costs_layer_work(const hp_costs *c, int l, int type)
{
  if (c->mwork && type >= 0) {
    double v = c->mwork[(size_t)type * (size_t)c->n_layers + (size_t)l];
    if (!isnan(v)) return v;
  }
  return c->layer[l].work;
}

double hp_costs_layer_states(const hp_costs *c, int l, int mode)
{
  const hp_layer_cost *f = &c->layer[l];
  double dp = c->dp;
  switch (c->dp > 1 ? mode : HP_SHARD_DP) {
  case HP_SHARD_ZERO1: return f->param + f->grad + f->opt / dp;
  case HP_SHARD_ZERO2: return f->param + (f->grad + f->opt) / dp;
  case HP_SHARD_ZDP: return f->state / dp;
  default: return f->state;
  }
}

void hp_costs_mem_add(const hp_costs *c, int l, int mode, int slices, int type, hp_mem_terms *m)
{
  const hp_layer_cost *f = &c->layer[l];
  double act = hp_costs_layer_act(c, l, type), work = hp_costs_layer_work(c, l, type);
  if (c->dp <= 1) mode = HP_SHARD_DP;
  m->states += hp_costs_layer_states(c, l, mode);
  if (mode == HP_SHARD_ZDP && f->param / slices > m->gather) m->gather = f->param / slices;
  m->act_sum += act;
  if (f->ck) {
    m->any_ck = 1;
    m->act_keep += c->mbs * f->input;
    if (act > m->act_max) m->act_max = act;
  } else {
    m->act_keep += act;
  }
  if (work > m->work) m->work = work;
}

void hp_costs_stage(const hp_costs *c, int s, int first, int last, const unsigned char *mode,
                    const unsigned char *slices, int recompute, int type, hp_stage_cost *out)
{
  double G = 0, Gr = 0, Gp = 0, zbytes = 0, extra = 0, rbytes = 0, upd = 0;
  int anyz = 0, anyr = 0;
  hp_mem_terms mt = {0};
  for (int l = first; l <= last; l++) {
    const hp_layer_cost *f = &c->layer[l];
    int m = mode && c->dp > 1 ? mode[l] : HP_SHARD_DP;   /* nothing to shard at dp = 1 (7.1) */
    int g = slices ? 1 << slices[l] : 1;
    switch (m) {
    case HP_SHARD_DP: G += f->grad; break;
    case HP_SHARD_ZERO1: Gr += f->grad; Gp += f->param; break;
    case HP_SHARD_ZERO2: rbytes += f->grad; anyr = 1; Gp += f->param; break;
    default: rbytes += f->grad; anyr = 1; zbytes += f->param; extra += g - 1; anyz = 1; break;
    }
    upd += m == HP_SHARD_DP ? f->upd : f->upd / c->dp;
    hp_costs_mem_add(c, l, m, m == HP_SHARD_ZDP ? g : 1, type, &mt);
  }
  out->gather = hp_cost_gather(zbytes, extra, anyz, c->dp, c->bdp[s], c->latdp[s]);
  out->zr = hp_cost_grad_scatter(rbytes, anyr, c->dp, c->bdp[s], c->latdp[s]);
  out->red = hp_cost_reduce(G, Gr, c->dp, c->bdp[s], c->latdp[s]);
  out->gat = hp_cost_allgather(Gp, c->dp, c->bdp[s]);
  out->upd = upd;
  out->mem = hp_cost_mem_total(&mt, c->inflight[s], recompute);
  out->m_states = mt.states;
  out->m_gather = mt.gather;
  out->m_work = mt.work;
  out->m_act = out->mem - mt.states - mt.gather - mt.work;
}
