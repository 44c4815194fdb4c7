/* evaluate.c -- the evaluator: applies a plan to its cost tables (cost.c, where every
 * formula of cost-model.md version 1.2 is written). Per stage: ZeRO gathering and
 * per-micro-batch gradient scatter, the reduction and all-gather around the step, the
 * step's traffic, the memory; per slot (stage s, replica r): its class's layer times with
 * recompute of checkpointable layers, the hand-off over shared lanes and the steady-state
 * period; per replica the pipeline time; then the iteration under grad_sync end or
 * overlap; per device the memory and the step. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

void hp_eval_release(hp_eval *e)
{
  if (!e) return;
  double **arrays[] = { &e->compute, &e->gather, &e->scatter, &e->stage_time, &e->backward,
                        &e->handoff, &e->period, &e->handoff_bw, &e->replica_time, &e->sync,
                        &e->gat, &e->step, &e->bdp, &e->latdp, &e->stage_mem, &e->mem_states,
                        &e->mem_gather, &e->mem_act, &e->mem_work, &e->mem, &e->cap };
  for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free(*arrays[i]);
  free(e->idle);
  *e = (hp_eval){0};
}

static hp_err alloc_eval(hp_eval *e, int pp, int dp, int D)
{
  size_t slots = (size_t)pp * (size_t)dp;
  double **per_slot[] = { &e->compute, &e->stage_time, &e->backward, &e->handoff, &e->period,
                          &e->handoff_bw };
  double **per_stage[] = { &e->gather, &e->scatter, &e->sync, &e->gat, &e->step, &e->bdp,
                           &e->latdp, &e->stage_mem, &e->mem_states, &e->mem_gather,
                           &e->mem_act, &e->mem_work };
  int ok = 1;
  e->pp = pp;
  e->dp = dp;
  e->n_devices = D;
  for (size_t i = 0; i < sizeof per_slot / sizeof *per_slot; i++)
    ok &= (*per_slot[i] = hp__calloc(slots, sizeof(double))) != NULL;
  for (size_t i = 0; i < sizeof per_stage / sizeof *per_stage; i++)
    ok &= (*per_stage[i] = hp__calloc((size_t)pp, sizeof(double))) != NULL;
  ok &= (e->replica_time = hp__calloc((size_t)dp, sizeof(double))) != NULL;
  ok &= (e->mem = hp__calloc((size_t)D, sizeof(double))) != NULL;
  ok &= (e->cap = hp__calloc((size_t)D, sizeof(double))) != NULL;
  ok &= (e->idle = hp__calloc((size_t)D, 1)) != NULL;
  return ok ? HP_OK : HP_NOMEM;
}

/* Memory and step of every device the plan uses; idle devices hold nothing (7.19). The
 * stage's figures are computed for its first device's type and again for another type
 * only where measured memory makes them differ. */
static void device_terms(const hp_problem *prob, const hp_plan *plan, const hp_costs *k,
                         hp_eval *e)
{
  const hp_cluster *c = prob->cluster;
  int dp = plan->dp, tp = plan->tp;
  for (int dv = 0; dv < e->n_devices; dv++) {
    e->idle[dv] = 1;
    e->cap[dv] = c->types[hp_device_type(prob, dv)].mem;
  }
  for (int s = 0; s < plan->pp; s++) {
    int first_type = hp_device_type(prob, plan->dev[(size_t)s * dp * tp]);
    for (int i = 0; i < dp * tp; i++) {
      int dv = plan->dev[(size_t)s * dp * tp + i], ty = hp_device_type(prob, dv);
      const hp_devtype *t = &c->types[ty];
      double m = e->stage_mem[s];
      if (k->mact && ty != first_type) {
        hp_stage_cost sc;
        hp_costs_stage(k, s, plan->first[s], hp_stage_last(plan, s), plan->mode, plan->slices,
                       plan->recompute[s], ty, &sc);
        m = sc.mem;
      }
      e->idle[dv] = 0;
      e->mem[dv] = m + t->reserved;
    }
  }
}

hp_err hp_evaluate(const hp_problem *prob, const hp_plan *plan, hp_eval *e, hp_diag *d)
{
  const hp_cluster *c = prob->cluster;
  int pp = plan->pp, tp = plan->tp, dp = plan->dp, D = c->n_devices;
  double *upd = NULL;
  hp_costs k;
  hp_err err;

  if ((err = hp_plan_validate(prob, plan, d))) return err;
  if (alloc_eval(e, pp, dp, D) != HP_OK || !(upd = hp__calloc((size_t)pp, sizeof *upd)) ||
      hp_costs_build(prob, plan, &k, NULL)) {
    free(upd);
    return hp_fail(d, HP_NOMEM, "out of memory evaluating a plan");
  }

  /* Per stage: gathering, scatter, reduction, all-gather, step traffic, memory. */
  for (int s = 0; s < pp; s++) {
    hp_stage_cost sc;
    hp_costs_stage(&k, s, plan->first[s], hp_stage_last(plan, s), plan->mode, plan->slices,
                   plan->recompute[s], hp_device_type(prob, plan->dev[(size_t)s * dp * tp]), &sc);
    e->bdp[s] = k.bdp[s];
    e->latdp[s] = k.latdp[s];
    e->gather[s] = sc.gather;
    e->scatter[s] = sc.zr;
    e->sync[s] = sc.red;
    e->gat[s] = sc.gat;
    upd[s] = sc.upd;
    e->stage_mem[s] = sc.mem;
    e->mem_states[s] = sc.m_states;
    e->mem_gather[s] = sc.m_gather;
    e->mem_act[s] = sc.m_act;
    e->mem_work[s] = sc.m_work;
  }

  /* Per slot: compute, stage time, backward part, hand-off; then the periods; per
   * replica the pipeline time. */
  for (int r = 0; r < dp; r++) {
    double cmax = -1, tsum = 0, esum = 0;
    for (int s = 0; s < pp; s++) {
      size_t ix = (size_t)s * (size_t)dp + (size_t)r;
      double ck, comp = hp_costs_compute(&k, k.slot_class[ix], plan->first[s],
                                         hp_stage_last(plan, s), &ck);
      e->compute[ix] = hp_cost_recompute(comp, ck, plan->recompute[s]);
      e->stage_time[ix] = e->compute[ix] + e->gather[s] + e->scatter[s];
      e->backward[ix] = hp_cost_backward(comp, ck, plan->recompute[s], e->scatter[s]);
      if (s < pp - 1) {
        e->handoff[ix] = hp_costs_handoff(&k, s, r, hp_stage_last(plan, s));
        e->handoff_bw[ix] = k.hbw[ix];
      }
      tsum += e->stage_time[ix];
      esum += e->handoff[ix];
    }
    for (int s = 0; s < pp; s++) {
      size_t ix = (size_t)s * (size_t)dp + (size_t)r;
      e->period[ix] = hp_cost_period(e->stage_time[ix], s > 0 ? e->handoff[ix - (size_t)dp] : 0,
                                     e->handoff[ix]);
      if (e->period[ix] > cmax) cmax = e->period[ix];
    }
    e->replica_time[r] = hp_cost_replica(plan->gas, cmax, tsum, esum);
  }

  e->slowest_replica = 0;
  for (int r = 1; r < dp; r++)
    if (e->replica_time[r] > e->replica_time[e->slowest_replica]) e->slowest_replica = r;
  e->slowest_stage = 0;
  for (int s = 1; s < pp; s++)
    if (e->period[(size_t)s * dp + e->slowest_replica] >
        e->period[(size_t)e->slowest_stage * dp + e->slowest_replica])
      e->slowest_stage = s;
  e->pipeline_time = e->replica_time[e->slowest_replica];

  /* The gradient reduction: after the pipeline (end), or from each stage's last backward
   * (overlap: stage s's ends tail[s,r] before T[r]). */
  e->sync_stage = 0;
  for (int s = 1; s < pp; s++)
    if (e->sync[s] > e->sync[e->sync_stage]) e->sync_stage = s;
  if (prob->job.grad_sync == HP_SYNC_OVERLAP && dp > 1) {
    double best = -INFINITY, best_s = -INFINITY;
    for (int r = 0; r < dp; r++) {
      double tail = 0;
      for (int s = 0; s < pp; s++) {
        size_t ix = (size_t)s * (size_t)dp + (size_t)r;
        double exposed = e->sync[s] - e->backward[ix];
        double v = e->replica_time[r] - tail + (exposed > 0 ? exposed : 0);
        if (v > best) best = v;
        if (exposed > best_s) { best_s = exposed; e->sync_stage = s; }
        tail += e->backward[ix] + e->handoff[ix] / 2;
      }
    }
    e->sync_time = best - e->pipeline_time;
    if (e->sync_time < 0) e->sync_time = 0;   /* rounding: best >= T[r*] - tail[0] = T[r*] */
  } else {
    e->sync_time = e->sync[e->sync_stage];
  }
  e->gat_time = 0;
  for (int s = 0; s < pp; s++)
    if (e->gat[s] > e->gat_time) e->gat_time = e->gat[s];

  /* Memory and the optimizer step, device by device. */
  device_terms(prob, plan, &k, e);
  hp_costs_release(&k);
  e->step_time = 0;
  e->step_device = -1;
  for (int s = 0; s < pp; s++)
    for (int i = 0; i < dp * tp; i++) {
      int dv = plan->dev[(size_t)s * dp * tp + i];
      const hp_devtype *t = &c->types[hp_device_type(prob, dv)];
      double u = t->hbm > 0 ? upd[s] / t->hbm : 0;
      if (u > e->step[s]) e->step[s] = u;
      if (u > e->step_time || (u == e->step_time && u > 0 && dv < e->step_device)) {
        e->step_time = u;
        e->step_device = dv;
      }
    }
  free(upd);
  e->iteration_time = e->pipeline_time + e->sync_time + e->step_time + e->gat_time;

  double peaks = 0;
  e->n_used = 0;
  for (int dv = 0; dv < D; dv++)
    if (!e->idle[dv]) {
      peaks += hp_shape_peak(prob, hp_device_type(prob, dv));   /* the model's GEMM precision's
                                                                  * peak: tflops, tflops_fp8 */
      e->n_used++;
    }
  e->throughput = (double)prob->job.gbs / e->iteration_time;
  e->mfu = hp_model_total_flops(prob->model) * (double)prob->job.gbs / e->iteration_time / peaks;
  /* At most 1: no layer time is below its FLOPs at the peak (efficiency <= 1, profiled
   * times checked and floored: layer_time.c), so only rounding could pass it. */
  if (e->mfu > 1) e->mfu = 1;

  e->feasible = 1;
  e->oom_device = -1;
  e->oom_stage = -1;
  for (int dv = 0; dv < D; dv++)
    if (!e->idle[dv] && e->mem[dv] > e->cap[dv]) {
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
