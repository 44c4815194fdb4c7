/* evaluate.c -- the evaluator: applies a plan to its cost tables (cost.c, where every
 * formula of cost-model.md version 1.1 is written). Per slot (stage s, replica r): its
 * class's layer times, recompute, ZeRO-3 gathering; per replica the pipeline time
 * (gas-1) * max t + sum t + sum e; per stage the DP sync; per device the memory. */
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
  const hp_cluster *c = prob->cluster;
  int pp = plan->pp, tp = plan->tp, dp = plan->dp, D = c->n_devices;
  hp_costs k;
  hp_err err;

  if ((err = hp_plan_validate(prob, plan, d))) return err;
  if (alloc_eval(e, pp, dp, D) != HP_OK || hp_costs_build(prob, plan, &k, NULL))
    return hp_fail(d, HP_NOMEM, "out of memory evaluating a plan");

  /* Per stage: ZeRO-3 gathering, gradient sync and the memory of each of its devices. */
  for (int s = 0; s < pp; s++) {
    hp_stage_cost sc;
    hp_costs_stage(&k, s, plan->first[s], hp_stage_last(plan, s), plan->zdp,
                   plan->recompute[s], &sc);
    e->bdp[s] = k.bdp[s];
    e->latdp[s] = k.latdp[s];
    e->gather[s] = sc.gather;
    e->sync[s] = sc.sync;
    e->stage_mem[s] = sc.mem;
  }

  /* Per slot: compute, stage time, hand-off; per replica: the pipeline time. */
  for (int r = 0; r < dp; r++) {
    double tmax = 0, tsum = 0, esum = 0;
    for (int s = 0; s < pp; s++) {
      size_t ix = (size_t)s * (size_t)dp + (size_t)r;
      double comp = hp_costs_compute(&k, k.slot_class[ix], plan->first[s], hp_stage_last(plan, s));
      e->compute[ix] = hp_cost_recompute(comp, plan->recompute[s]);
      e->stage_time[ix] = e->compute[ix] + e->gather[s];
      if (s < pp - 1) e->handoff[ix] = hp_costs_handoff(&k, s, r, hp_stage_last(plan, s));
      if (e->stage_time[ix] > tmax) tmax = e->stage_time[ix];
      tsum += e->stage_time[ix];
      esum += e->handoff[ix];
    }
    e->replica_time[r] = hp_cost_replica(plan->gas, tmax, tsum, esum);
  }
  hp_costs_release(&k);

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
  e->mfu = hp_model_total_flops(prob->model) * (double)prob->job.gbs / e->iteration_time / peaks;
  /* At most 1: no layer time is below its FLOPs at the peak (efficiency <= 1, profiled
   * times checked and floored: layer_time.c), so only rounding could pass it. */
  if (e->mfu > 1) e->mfu = 1;

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
