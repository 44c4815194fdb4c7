/* bottleneck.c -- the iteration time split into its terms (slowest stage, fill and drain,
 * hand-offs, gradient sync, steady-state hand-offs, ZeRO traffic, optimizer step,
 * all-gather after the step) and the largest of them named: hp_bottleneck.h. */
#include <stdio.h>

#include "internal.h"

const char *hp_bn_name(hp_bn_kind k)
{
  switch (k) {
  case HP_BN_STAGE: return "slowest stage";
  case HP_BN_FILL: return "pipeline fill and drain";
  case HP_BN_HANDOFF: return "hand-offs between stages";
  case HP_BN_SYNC: return "gradient sync";
  case HP_BN_PERIOD: return "steady-state hand-offs";
  case HP_BN_ZERO: return "ZeRO traffic per micro-batch";
  case HP_BN_STEP: return "optimizer step";
  case HP_BN_ALLGATHER: return "all-gather after the step";
  case HP_BN_COUNT: break;
  }
  return "?";
}

void hp_bottleneck_find(const hp_plan *plan, const hp_eval *e, hp_bottleneck *b)
{
  int r = e->slowest_replica, s = e->slowest_stage, dp = plan->dp;
  size_t ix = (size_t)s * (size_t)dp + (size_t)r;
  double others = 0, others_zero = 0, hand = 0;
  int gat_stage = 0;
  for (int q = 0; q < plan->pp; q++) {
    size_t iq = (size_t)q * (size_t)dp + (size_t)r;
    if (q != s) {
      others += e->compute[iq];
      others_zero += e->gather[q] + e->scatter[q];
    }
    hand += e->handoff[iq];
    if (e->gat[q] > e->gat[gat_stage]) gat_stage = q;
  }
  *b = (hp_bottleneck){0};
  b->replica = r;
  b->gas = plan->gas;
  b->stage_time = e->stage_time[ix];
  b->stage_compute = e->compute[ix];
  b->stage_gather = e->gather[s];
  b->stage_scatter = e->scatter[s];
  b->stage_handoff = e->period[ix] - e->stage_time[ix];
  /* compute = sum time (1 + R ck / 3) and backward - Zr = sum time (2 + R ck) / 3
   * (cost-model.md 3): their difference is a third of the plain compute, and recompute
   * is the rest (checkpointable layers only, 1.2) */
  if (plan->recompute[s]) {
    double plain = 3 * (e->compute[ix] - (e->backward[ix] - e->scatter[s]));
    b->stage_recompute = e->compute[ix] - plain > 0 ? e->compute[ix] - plain : 0;
  }
  b->term[HP_BN_STAGE] = (double)plan->gas * e->compute[ix];
  b->term[HP_BN_FILL] = others;
  b->term[HP_BN_HANDOFF] = hand;
  b->term[HP_BN_SYNC] = e->sync_time;
  b->term[HP_BN_PERIOD] = (double)(plan->gas - 1) * b->stage_handoff;
  b->term[HP_BN_ZERO] = (double)plan->gas * (e->gather[s] + e->scatter[s]) + others_zero;
  b->term[HP_BN_STEP] = e->step_time;
  b->term[HP_BN_ALLGATHER] = e->gat_time;
  b->sync_exposed = e->sync_time < e->sync[e->sync_stage] * (1 - 1e-12);
  b->kind = HP_BN_STAGE;
  for (int k = 1; k < HP_BN_COUNT; k++)
    if (b->term[k] > b->term[b->kind]) b->kind = (hp_bn_kind)k;
  b->stage = b->kind == HP_BN_SYNC ? e->sync_stage : b->kind == HP_BN_ALLGATHER ? gat_stage : s;
  b->share = e->iteration_time > 0 ? b->term[b->kind] / e->iteration_time : 0;
}

char *hp_bottleneck_describe(const hp_bottleneck *b, const hp_eval *e, char *buf, unsigned long n)
{
  double pct = 100 * b->share;
  int len = 0;
  switch (b->kind) {
  case HP_BN_STAGE:
    len = snprintf(buf, n, "stage %d of replica %d: %.3f ms of compute per micro-batch x gas %ld = "
                   "%.6f s, %.1f %% of the iteration", b->stage, b->replica,
                   b->stage_compute * 1e3, b->gas, b->term[HP_BN_STAGE], pct);
    if (len > 0 && (unsigned long)len < n && b->stage_recompute > 0)
      snprintf(buf + len, n - (unsigned long)len, " (of which %.3f ms recompute)",
               b->stage_recompute * 1e3);
    break;
  case HP_BN_FILL:
    snprintf(buf, n, "pipeline fill and drain: %.6f s, %.1f %% of the iteration (each other stage "
             "of replica %d once; more micro-batches per iteration or fewer stages shrink it)",
             b->term[HP_BN_FILL], pct, b->replica);
    break;
  case HP_BN_HANDOFF:
    snprintf(buf, n, "hand-offs between stages: %.6f s, %.1f %% of the iteration (replica %d)",
             b->term[HP_BN_HANDOFF], pct, b->replica);
    break;
  case HP_BN_PERIOD:
    snprintf(buf, n, "steady-state hand-offs of stage %d of replica %d: %.3f ms per micro-batch "
             "(half of each hand-off it sends and receives) x (gas - 1) %ld = %.6f s, %.1f %% of "
             "the iteration", b->stage, b->replica, b->stage_handoff * 1e3, b->gas - 1,
             b->term[HP_BN_PERIOD], pct);
    break;
  case HP_BN_ZERO:
    snprintf(buf, n, "ZeRO traffic per micro-batch: stage %d's %.3f ms ZeRO-3 gathering and %.3f ms "
             "gradient scatter x gas %ld, the other stages' once: %.6f s, %.1f %% of the iteration "
             "(replica-group bandwidth %.3f GB/s)", b->stage, b->stage_gather * 1e3,
             b->stage_scatter * 1e3, b->gas, b->term[HP_BN_ZERO], pct, e->bdp[b->stage] / 1e9);
    break;
  case HP_BN_STEP:
    snprintf(buf, n, "the optimizer step: %.6f s (device %d), %.1f %% of the iteration (the "
             "optimizer's memory traffic over the device's memory bandwidth)",
             b->term[HP_BN_STEP], e->step_device, pct);
    break;
  case HP_BN_ALLGATHER:
    snprintf(buf, n, "the weights' all-gather after the step on stage %d (zero1, zero2): %.6f s, "
             "%.1f %% of the iteration (replica-group bandwidth %.3f GB/s)", b->stage,
             b->term[HP_BN_ALLGATHER], pct, e->bdp[b->stage] / 1e9);
    break;
  default:
    if (b->sync_exposed)
      snprintf(buf, n, "the gradient sync of stage %d, what overlap with the backward leaves "
               "exposed: %.6f s of its %.6f s, %.1f %% of the iteration (replica-group bandwidth "
               "%.3f GB/s)", b->stage, b->term[HP_BN_SYNC], e->sync[b->stage], pct,
               e->bdp[b->stage] / 1e9);
    else
      snprintf(buf, n, "the gradient sync of stage %d: %.6f s, %.1f %% of the iteration "
               "(replica-group bandwidth %.3f GB/s)", b->stage, b->term[HP_BN_SYNC], pct,
               e->bdp[b->stage] / 1e9);
    break;
  }
  return buf;
}

char *hp_stage_modes(const hp_plan *pl, int s, char *buf, unsigned long n)
{
  int has[HP_N_SHARD] = {0}, gmin = 0, gmax = 0, len = 0;
  if (n == 0) return buf;
  buf[0] = '\0';
  for (int l = pl->first[s]; l <= hp_stage_last(pl, s); l++) {
    int m = hp_plan_mode(pl, l), g = hp_plan_slices(pl, l);
    has[m] = 1;
    if (m == HP_SHARD_ZDP) {
      if (!gmin || g < gmin) gmin = g;
      if (g > gmax) gmax = g;
    }
  }
  for (int m = 0; m < HP_N_SHARD; m++) {
    int w;
    if (!has[m] || (unsigned long)len >= n) continue;
    w = snprintf(buf + len, n - (unsigned long)len, "%s%s", len ? "," : "", hp_shard_name(m));
    if (w > 0) len += w;
    if (m == HP_SHARD_ZDP && gmax > 1 && (unsigned long)len < n) {
      w = gmin == gmax ? snprintf(buf + len, n - (unsigned long)len, "(%d slices)", gmax)
                       : snprintf(buf + len, n - (unsigned long)len, "(%d-%d slices)", gmin, gmax);
      if (w > 0) len += w;
    }
  }
  return buf;
}
