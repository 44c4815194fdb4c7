/* bottleneck.c -- the iteration time split into its terms (slowest stage, fill and drain,
 * hand-offs, gradient sync) and the largest of them named: hp_bottleneck.h. */
#include <stdio.h>

#include "internal.h"

const char *hp_bn_name(hp_bn_kind k)
{
  switch (k) {
  case HP_BN_STAGE: return "slowest stage";
  case HP_BN_FILL: return "pipeline fill and drain";
  case HP_BN_HANDOFF: return "hand-offs between stages";
  case HP_BN_SYNC: return "gradient sync";
  case HP_BN_COUNT: break;
  }
  return "?";
}

void hp_bottleneck_find(const hp_plan *plan, const hp_eval *e, hp_bottleneck *b)
{
  int r = e->slowest_replica, s = e->slowest_stage, dp = plan->dp;
  size_t ix = (size_t)s * (size_t)dp + (size_t)r;
  double others = 0, hand = 0;
  for (int q = 0; q < plan->pp; q++) {
    size_t iq = (size_t)q * (size_t)dp + (size_t)r;
    if (q != s) others += e->stage_time[iq];
    hand += e->handoff[iq];
  }
  *b = (hp_bottleneck){0};
  b->replica = r;
  b->gas = plan->gas;
  b->stage_time = e->stage_time[ix];
  b->stage_gather = e->gather[s];
  /* recompute repeats the forward, a quarter of the compute with it (1 + 1/3) */
  b->stage_recompute = plan->recompute[s] ? e->compute[ix] / 4 : 0;
  b->term[HP_BN_STAGE] = (double)plan->gas * e->stage_time[ix];
  b->term[HP_BN_FILL] = others;
  b->term[HP_BN_HANDOFF] = hand;
  b->term[HP_BN_SYNC] = e->sync_time;
  b->kind = HP_BN_STAGE;
  for (int k = 1; k < HP_BN_COUNT; k++)
    if (b->term[k] > b->term[b->kind]) b->kind = (hp_bn_kind)k;
  b->stage = b->kind == HP_BN_SYNC ? e->sync_stage : s;
  b->share = e->iteration_time > 0 ? b->term[b->kind] / e->iteration_time : 0;
}

char *hp_bottleneck_describe(const hp_bottleneck *b, const hp_eval *e, char *buf, unsigned long n)
{
  double pct = 100 * b->share;
  int len = 0;
  switch (b->kind) {
  case HP_BN_STAGE:
    len = snprintf(buf, n, "stage %d of replica %d: %.3f ms per micro-batch x gas %ld = %.6f s, "
                   "%.1f %% of the iteration", b->stage, b->replica, b->stage_time * 1e3, b->gas,
                   b->term[HP_BN_STAGE], pct);
    if (len > 0 && (unsigned long)len < n && (b->stage_recompute > 0 || b->stage_gather > 0))
      snprintf(buf + len, n - (unsigned long)len, " (of each micro-batch %.3f ms recompute, "
               "%.3f ms ZeRO-3 gathering)", b->stage_recompute * 1e3, b->stage_gather * 1e3);
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
  default:
    snprintf(buf, n, "the gradient sync of stage %d: %.6f s, %.1f %% of the iteration "
             "(replica-group bandwidth %.3f GB/s)", b->stage, b->term[HP_BN_SYNC], pct,
             e->bdp[b->stage] / 1e9);
    break;
  }
  return buf;
}
