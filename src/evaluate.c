/* evaluate.c -- the evaluator: cost-model.md version 1.1, every term. Per slot (stage s,
 * replica r): layer times of the slowest type in the TP group, recompute, ZeRO-3
 * gathering; per replica the pipeline time (gas-1) * max t + sum t + sum e; per stage
 * the DP sync over the shared replica-group bandwidth; per device the memory. The
 * formula pieces (hp__*) are shared with the search so that each exists once. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

void hp_eval_release(hp_eval *e)
{
  if (!e) return;
  free(e->compute);
  free(e->gather);
  free(e->stage_time);
  free(e->handoff);
  free(e->replica_time);
  free(e->sync);
  free(e->bdp);
  free(e->latdp);
  free(e->stage_mem);
  free(e->mem);
  free(e->cap);
  *e = (hp_eval){0};
}

static int tp_of(const hp_layer *ly, int tp) { return ly->splittable ? tp : 1; }

void hp__mem_add(const hp_problem *p, int l, int tp, int mbs, int zdp, hp_mem_terms *m)
{
  const hp_model *md = p->model;
  const hp_layer *ly = &md->layers[l];
  int tl = tp_of(ly, tp);
  double a = (ly->act_bytes - ly->act_repl) / tl + ly->act_repl;   /* a_l(t) */
  double in = l == 0 ? md->input_bytes : md->layers[l - 1].out_bytes;
  double w = (mbs * ly->work_bytes + ly->work_fixed) / tl;
  double st = md->state_bytes * ly->params / tl, g = md->param_bytes * ly->params / tl;
  if (zdp) {
    m->states_z += st;
    if (g > m->gather) m->gather = g;
  } else {
    m->states_dp += st;
  }
  m->act_sum += a;
  if (a > m->act_max) m->act_max = a;
  m->inputs += in / tl;
  if (w > m->work) m->work = w;
}

double hp__mem_total(const hp_mem_terms *m, long inflight, int mbs, int dp, int recompute)
{
  double act = recompute ? (double)inflight * mbs * m->inputs + mbs * m->act_max
                         : (double)inflight * mbs * m->act_sum;
  return m->states_dp + m->states_z / dp + m->gather + act + m->work;
}

long hp_inflight(const hp_plan *plan, int s)
{
  if (plan->schedule == HP_GPIPE) return plan->gas;
  return plan->pp - s < plan->gas ? plan->pp - s : plan->gas;
}

void hp__tp_link(const hp_problem *p, const hp_plan *plan, int s, int r, double *bw,
                 double *lat)
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

void hp__handoff_link(const hp_problem *p, const hp_plan *plan, int s, int r, double *bw,
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

hp_err hp__replica_links(const hp_problem *p, const hp_plan *plan, double *bdp, double *latdp)
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

double hp__slot_layer_time(const hp_problem *p, const hp_plan *plan, int s, int r, int l,
                           double btp, double lattp)
{
  double worst = 0;
  int last_k = -1;
  for (int j = 0; j < plan->tp; j++) {
    int k = hp_device_type(p, plan->dev[HP_SLOT(plan, s, r, j)]);
    if (k == last_k) continue;
    last_k = k;
    double t = hp_layer_time(p, l, k, plan->tp, plan->mbs, btp, lattp);
    if (t > worst) worst = t;
  }
  return worst;
}

double hp__handoff_time(double out_bytes, int mbs, int tp, double bw, double lat)
{
  return 2.0 * out_bytes * mbs / tp / bw + 2.0 * lat;
}

double hp__gather_time(double zbytes, int dp, double bdp)
{
  if (dp <= 1 || zbytes <= 0) return 0;
  return 2.0 * (double)(dp - 1) / dp * zbytes / bdp;
}

double hp__sync_time(double G, double Gz, int dp, double bdp, double latdp)
{
  double f;
  if (dp <= 1) return 0;
  f = (double)(dp - 1) / dp;
  return (2.0 * f * G + f * Gz) / bdp + 2.0 * (dp - 1) * latdp;
}

static hp_err alloc_eval(hp_eval *e, int pp, int dp, int D)
{
  size_t slots = (size_t)pp * (size_t)dp;
  e->pp = pp;
  e->dp = dp;
  e->n_devices = D;
  e->compute = hp__calloc(slots, sizeof(double));
  e->gather = hp__calloc((size_t)pp, sizeof(double));
  e->stage_time = hp__calloc(slots, sizeof(double));
  e->handoff = hp__calloc(slots, sizeof(double));
  e->replica_time = hp__calloc((size_t)dp, sizeof(double));
  e->sync = hp__calloc((size_t)pp, sizeof(double));
  e->bdp = hp__calloc((size_t)pp, sizeof(double));
  e->latdp = hp__calloc((size_t)pp, sizeof(double));
  e->stage_mem = hp__calloc((size_t)pp, sizeof(double));
  e->mem = hp__calloc((size_t)D, sizeof(double));
  e->cap = hp__calloc((size_t)D, sizeof(double));
  if (!e->compute || !e->gather || !e->stage_time || !e->handoff || !e->replica_time ||
      !e->sync || !e->bdp || !e->latdp || !e->stage_mem || !e->mem || !e->cap)
    return HP_NOMEM;
  return HP_OK;
}

hp_err hp_evaluate(const hp_problem *prob, const hp_plan *plan, hp_eval *e, hp_diag *d)
{
  const hp_model *m = prob->model;
  const hp_cluster *c = prob->cluster;
  int pp = plan->pp, tp = plan->tp, dp = plan->dp, mbs = plan->mbs, D = c->n_devices;
  hp_err err;

  if ((err = hp_plan_validate(prob, plan, d))) return err;
  if (alloc_eval(e, pp, dp, D) != HP_OK || hp__replica_links(prob, plan, e->bdp, e->latdp))
    return hp_fail(d, HP_NOMEM, "out of memory evaluating a plan");

  /* Per stage: ZeRO-3 gathering, gradient sync (nothing to shard when dp = 1, 7.1), and
   * the memory of each of its devices. */
  for (int s = 0; s < pp; s++) {
    double G = 0, Gz = 0, zbytes = 0;
    hp_mem_terms mt = {0};
    for (int l = plan->first[s]; l <= hp_stage_last(plan, s); l++) {
      const hp_layer *ly = &m->layers[l];
      int z = plan->zdp[l] && dp > 1;
      if (z) {
        Gz += m->grad_bytes * ly->params / tp_of(ly, tp);
        zbytes += m->param_bytes * ly->params / tp_of(ly, tp);
      } else {
        G += m->grad_bytes * ly->params / tp_of(ly, tp);
      }
      hp__mem_add(prob, l, tp, mbs, z, &mt);
    }
    e->gather[s] = hp__gather_time(zbytes, dp, e->bdp[s]);
    e->sync[s] = hp__sync_time(G, Gz, dp, e->bdp[s], e->latdp[s]);
    e->stage_mem[s] = hp__mem_total(&mt, hp_inflight(plan, s), mbs, dp, plan->recompute[s]);
  }

  /* Per slot: compute, stage time, hand-off; per replica: the pipeline time. */
  for (int r = 0; r < dp; r++) {
    double tmax = 0, tsum = 0, esum = 0;
    for (int s = 0; s < pp; s++) {
      size_t ix = (size_t)s * (size_t)dp + (size_t)r;
      double btp, lattp, comp = 0;
      hp__tp_link(prob, plan, s, r, &btp, &lattp);
      for (int l = plan->first[s]; l <= hp_stage_last(plan, s); l++)
        comp += hp__slot_layer_time(prob, plan, s, r, l, btp, lattp);
      if (plan->recompute[s]) comp *= 1.0 + 1.0 / 3.0;
      e->compute[ix] = comp;
      e->stage_time[ix] = comp + e->gather[s];
      if (s < pp - 1) {
        double bpp, latpp;
        hp__handoff_link(prob, plan, s, r, &bpp, &latpp);
        e->handoff[ix] = hp__handoff_time(m->layers[hp_stage_last(plan, s)].out_bytes, mbs,
                                          tp, bpp, latpp);
      }
      if (e->stage_time[ix] > tmax) tmax = e->stage_time[ix];
      tsum += e->stage_time[ix];
      esum += e->handoff[ix];
    }
    e->replica_time[r] = (double)(plan->gas - 1) * tmax + tsum + esum;
  }

  e->slowest_replica = 0;
  for (int r = 1; r < dp; r++)
    if (e->replica_time[r] > e->replica_time[e->slowest_replica]) e->slowest_replica = r;
  e->slowest_stage = 0;
  for (int s = 1; s < pp; s++)
    if (e->stage_time[(size_t)s * dp + e->slowest_replica] >
        e->stage_time[(size_t)e->slowest_stage * dp + e->slowest_replica])
      e->slowest_stage = s;
  e->sync_stage = 0;
  for (int s = 1; s < pp; s++)
    if (e->sync[s] > e->sync[e->sync_stage]) e->sync_stage = s;
  e->pipeline_time = e->replica_time[e->slowest_replica];
  e->sync_time = e->sync[e->sync_stage];
  e->iteration_time = e->pipeline_time + e->sync_time;

  double peaks = 0;
  for (int dv = 0; dv < D; dv++) peaks += c->types[hp_device_type(prob, dv)].peak;
  e->throughput = (double)prob->job.gbs / e->iteration_time;
  e->mfu = hp_model_total_flops(m) * (double)prob->job.gbs / e->iteration_time / peaks;

  /* Memory: every device of a stage holds the same bytes plus its type's reserve. */
  e->feasible = 1;
  e->oom_device = -1;
  e->oom_stage = -1;
  for (int s = 0; s < pp; s++)
    for (int i = 0; i < dp * tp; i++) {
      int dv = plan->dev[(size_t)s * dp * tp + i];
      const hp_devtype *ty = &c->types[hp_device_type(prob, dv)];
      e->mem[dv] = e->stage_mem[s] + ty->reserved;
      e->cap[dv] = ty->mem;
    }
  for (int dv = 0; dv < D; dv++)
    if (e->mem[dv] > e->cap[dv]) {
      e->feasible = 0;
      e->oom_device = dv;
      e->oom_bytes = e->mem[dv] - e->cap[dv];
      break;
    }
  if (e->oom_device >= 0)
    for (int s = 0; s < pp; s++)
      for (int i = 0; i < dp * tp; i++)
        if (plan->dev[(size_t)s * dp * tp + i] == e->oom_device) e->oom_stage = s;
  return HP_OK;
}
