/* evaluate.c -- the evaluator: cost-model.md version 1.1, every term. Per slot (stage s,
 * replica r): layer times of the slowest type in the TP group, recompute, ZeRO-3
 * gathering; per replica the pipeline time (gas-1) * max t + sum t + sum e; per stage
 * the DP sync over the shared replica-group bandwidth; per device the memory. */
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

/* Saved activations of one sample on one TP rank: a_l(t) = (A - Ar) / t_l + Ar. */
static double act_per_rank(const hp_layer *ly, int tp)
{
  return (ly->act_bytes - ly->act_repl) / tp_of(ly, tp) + ly->act_repl;
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

/* Bdp[s] and latdp[s]: over every pair of every replica group of stage s, the shared
 * bandwidth (divided by the busier node's R across nodes) and the latency. */
static void replica_group_links(const hp_problem *prob, const hp_plan *plan, int s,
                                const int *R, double *bdp, double *latdp)
{
  const hp_cluster *c = prob->cluster;
  double bmin = INFINITY, lmax = 0;
  for (int j = 0; j < plan->tp; j++)
    for (int r = 0; r < plan->dp; r++)
      for (int q = r + 1; q < plan->dp; q++) {
        int a = plan->dev[HP_SLOT(plan, s, r, j)], b = plan->dev[HP_SLOT(plan, s, q, j)];
        int na = c->dev_node[a], nb = c->dev_node[b];
        double bw = hp_problem_bw(prob, a, b), lat = hp_problem_lat(prob, a, b);
        if (na != nb) bw /= (R[na] > R[nb] ? R[na] : R[nb]);
        if (bw < bmin) bmin = bw;
        if (lat > lmax) lmax = lat;
      }
  *bdp = bmin;
  *latdp = lmax;
}

/* Memory of one device of stage s, without the type's reserved bytes (section 4). */
static double stage_memory(const hp_problem *prob, const hp_plan *plan, int s)
{
  const hp_model *m = prob->model;
  int tp = plan->tp, dp = plan->dp, mbs = plan->mbs;
  double states = 0, gather = 0, act_all = 0, inputs = 0, act_max = 0, work = 0;
  long inflight = plan->schedule == HP_GPIPE ? plan->gas
                  : (plan->pp - s < plan->gas ? plan->pp - s : plan->gas);
  for (int l = plan->first[s]; l <= hp_stage_last(plan, s); l++) {
    const hp_layer *ly = &m->layers[l];
    int tl = tp_of(ly, tp), z = plan->zdp[l] && dp > 1;
    double in = l == 0 ? m->input_bytes : m->layers[l - 1].out_bytes;
    double a = act_per_rank(ly, tp), w = (mbs * ly->work_bytes + ly->work_fixed) / tl;
    states += m->state_bytes * ly->params / tl / (z ? dp : 1);
    if (z && m->param_bytes * ly->params / tl > gather) gather = m->param_bytes * ly->params / tl;
    act_all += a;
    if (a > act_max) act_max = a;
    inputs += in / tl;
    if (w > work) work = w;
  }
  double act = plan->recompute[s] ? (double)inflight * mbs * inputs + mbs * act_max
                                  : (double)inflight * mbs * act_all;
  return states + gather + act + work;
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
  int *R = NULL, *seen = NULL;
  hp_err err;

  HP_TRY(hp_plan_validate(prob, plan, d));
  if (alloc_eval(e, pp, dp, D) != HP_OK) {
    err = hp_fail(d, HP_NOMEM, "out of memory evaluating a plan");
    goto done;
  }
  R = hp__calloc((size_t)c->n_nodes, sizeof *R);
  seen = hp__calloc((size_t)c->n_nodes, sizeof *seen);
  if (!R || !seen) { err = hp_fail(d, HP_NOMEM, "out of memory evaluating a plan"); goto done; }

  /* Replica groups: shared bandwidth, ZeRO-3 gathering and gradient sync per stage. */
  if (dp > 1) count_crossing_groups(prob, plan, R, seen);
  for (int s = 0; s < pp; s++) {
    double G = 0, Gz = 0, zbytes = 0;
    if (dp == 1) continue;   /* nothing to sync or shard (7.1) */
    replica_group_links(prob, plan, s, R, &e->bdp[s], &e->latdp[s]);
    for (int l = plan->first[s]; l <= hp_stage_last(plan, s); l++) {
      const hp_layer *ly = &m->layers[l];
      int tl = tp_of(ly, tp);
      if (plan->zdp[l]) {
        Gz += m->grad_bytes * ly->params / tl;
        zbytes += m->param_bytes * ly->params / tl;
      } else {
        G += m->grad_bytes * ly->params / tl;
      }
    }
    double f = (double)(dp - 1) / dp;
    e->gather[s] = 2.0 * f * zbytes / e->bdp[s];
    e->sync[s] = (2.0 * f * G + f * Gz) / e->bdp[s] + 2.0 * (dp - 1) * e->latdp[s];
  }

  /* Per slot: compute, stage time, hand-off; per replica: the pipeline time. */
  for (int r = 0; r < dp; r++) {
    double tmax = 0, tsum = 0, esum = 0;
    for (int s = 0; s < pp; s++) {
      size_t ix = (size_t)s * (size_t)dp + (size_t)r;
      double btp = INFINITY, lattp = 0, comp = 0;
      for (int j = 0; j < tp; j++)
        for (int q = j + 1; q < tp; q++) {
          int a = plan->dev[HP_SLOT(plan, s, r, j)], b = plan->dev[HP_SLOT(plan, s, r, q)];
          double bw = hp_problem_bw(prob, a, b), lat = hp_problem_lat(prob, a, b);
          if (bw < btp) btp = bw;
          if (lat > lattp) lattp = lat;
        }
      for (int l = plan->first[s]; l <= hp_stage_last(plan, s); l++) {
        double worst = 0;
        int last_k = -1;
        for (int j = 0; j < tp; j++) {
          int k = hp_device_type(prob, plan->dev[HP_SLOT(plan, s, r, j)]);
          if (k == last_k) continue;
          last_k = k;
          double t = hp_layer_time(prob, l, k, tp, mbs, btp, lattp);
          if (t > worst) worst = t;
        }
        comp += worst;
      }
      if (plan->recompute[s]) comp *= 1.0 + 1.0 / 3.0;
      e->compute[ix] = comp;
      e->stage_time[ix] = comp + e->gather[s];
      if (s < pp - 1) {
        double bpp = INFINITY, latpp = 0;
        for (int j = 0; j < tp; j++) {
          int a = plan->dev[HP_SLOT(plan, s, r, j)], b = plan->dev[HP_SLOT(plan, s + 1, r, j)];
          double bw = hp_problem_bw(prob, a, b), lat = hp_problem_lat(prob, a, b);
          if (bw < bpp) bpp = bw;
          if (lat > latpp) latpp = lat;
        }
        e->handoff[ix] = 2.0 * m->layers[hp_stage_last(plan, s)].out_bytes * mbs / tp / bpp
                         + 2.0 * latpp;
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
  for (int s = 0; s < pp; s++) e->stage_mem[s] = stage_memory(prob, plan, s);
  e->feasible = 1;
  e->oom_device = -1;
  e->oom_stage = -1;
  for (int s = 0; s < pp; s++)
    for (int r = 0; r < dp; r++)
      for (int j = 0; j < tp; j++) {
        int dv = plan->dev[HP_SLOT(plan, s, r, j)];
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
  err = HP_OK;
done:
  free(R);
  free(seen);
  return err;
}
