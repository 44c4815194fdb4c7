/* plan.c -- plan lifetime, validation against a problem (cost-model.md sections 2, 5
 * and 7.8) and two default fillers (in-order placement, even split). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

hp_err hp_plan_create(hp_plan **out, int pp, int tp, int dp, int n_layers, hp_diag *d)
{
  hp_plan *p;
  *out = NULL;
  if (pp < 1 || tp < 1 || dp < 1 || n_layers < 1)
    return hp_fail(d, HP_INVAL, "plan shape pp=%d tp=%d dp=%d over %d layers: all must be >= 1",
                   pp, tp, dp, n_layers);
  p = hp__calloc(1, sizeof *p);
  if (!p) return hp_fail(d, HP_NOMEM, "out of memory for a plan");
  p->pp = pp;
  p->tp = tp;
  p->dp = dp;
  p->mbs = 1;
  p->n_layers = n_layers;
  p->first = hp__calloc((size_t)pp + 1, sizeof *p->first);
  p->recompute = hp__calloc((size_t)pp, sizeof *p->recompute);
  p->dev = hp__calloc((size_t)pp * (size_t)dp * (size_t)tp, sizeof *p->dev);
  p->mode = hp__calloc((size_t)n_layers, sizeof *p->mode);
  p->slices = hp__calloc((size_t)n_layers, sizeof *p->slices);
  if (!p->first || !p->recompute || !p->dev || !p->mode || !p->slices) {
    hp_plan_destroy(&p);
    return hp_fail(d, HP_NOMEM, "out of memory for a plan");
  }
  p->first[pp] = n_layers;
  *out = p;
  return HP_OK;
}

void hp_plan_destroy(hp_plan **pp)
{
  hp_plan *p;
  if (!pp || !*pp) return;
  p = *pp;
  free(p->first);
  free(p->recompute);
  free(p->dev);
  free(p->mode);
  free(p->slices);
  free(p);
  *pp = NULL;
}

hp_err hp_plan_copy(hp_plan **out, const hp_plan *src, hp_diag *d)
{
  hp_err err = hp_plan_create(out, src->pp, src->tp, src->dp, src->n_layers, d);
  if (err) return err;
  hp_plan_assign(*out, src);
  return HP_OK;
}

void hp_plan_assign(hp_plan *dst, const hp_plan *src)
{
  dst->mbs = src->mbs;
  dst->gas = src->gas;
  dst->schedule = src->schedule;
  memcpy(dst->first, src->first, ((size_t)src->pp + 1) * sizeof *dst->first);
  memcpy(dst->recompute, src->recompute, (size_t)src->pp * sizeof *dst->recompute);
  memcpy(dst->dev, src->dev, (size_t)src->pp * (size_t)src->dp * (size_t)src->tp * sizeof *dst->dev);
  memcpy(dst->mode, src->mode, (size_t)src->n_layers * sizeof *dst->mode);
  memcpy(dst->slices, src->slices, (size_t)src->n_layers * sizeof *dst->slices);
}

void hp_plan_set_modes(hp_plan *p, int mode)
{
  memset(p->mode, mode, (size_t)p->n_layers);
}

static const char *const shard_names[HP_N_SHARD] = { "dp", "zero1", "zero2", "zdp" };

const char *hp_shard_name(int mode)
{
  return mode >= 0 && mode < HP_N_SHARD ? shard_names[mode] : "?";
}

int hp_shard_parse(const char *s)
{
  if (!s) return -1;
  for (int m = 0; m < HP_N_SHARD; m++)
    if (!strcmp(s, shard_names[m])) return m;
  return strcmp(s, "zero3") ? -1 : HP_SHARD_ZDP;
}

const char *hp_grad_sync_name(hp_grad_sync g)
{
  return g == HP_SYNC_OVERLAP ? "overlap" : "end";
}

int hp_grad_sync_parse(const char *s)
{
  if (s && !strcmp(s, "end")) return HP_SYNC_END;
  if (s && !strcmp(s, "overlap")) return HP_SYNC_OVERLAP;
  return -1;
}

/* The job's sharding rules (cost-model.md 7.12, 7.17): modes from its list, one mode
 * under uniform_sharding, slices only on zdp layers, powers of two up to max_slices. */
static hp_err validate_modes(const hp_problem *prob, const hp_plan *plan, hp_diag *d)
{
  unsigned allowed = hp_job_modes(&prob->job);
  int maxg = hp_job_max_slices(&prob->job);
  for (int l = 0; l < plan->n_layers; l++) {
    int m = plan->mode[l];
    if (m >= HP_N_SHARD)
      return hp_fail(d, HP_PLAN, "plan: sharding[%d]: mode %d is not a sharding mode", l, m);
    if (!(allowed >> m & 1u)) {
      char list[64] = "";
      for (int q = 0; q < HP_N_SHARD; q++)
        if (allowed >> q & 1u) {
          strcat(list, *list ? ", " : "");
          strcat(list, shard_names[q]);
        }
      return hp_fail(d, HP_PLAN, "plan: sharding[%d] is '%s', which the job's sharding list "
                     "(%s) does not allow", l, shard_names[m], list);
    }
    if (prob->job.uniform_sharding && m != plan->mode[0])
      return hp_fail(d, HP_PLAN, "plan: sharding[%d] is '%s' but sharding[0] is '%s': the job "
                     "asks for uniform_sharding (one mode for every layer)", l, shard_names[m],
                     shard_names[plan->mode[0]]);
    if (plan->slices[l] > 0 && m != HP_SHARD_ZDP)
      return hp_fail(d, HP_PLAN, "plan: slices[%d] is %d but the layer is '%s': only a zdp "
                     "layer is gathered in slices", l, hp_plan_slices(plan, l), shard_names[m]);
    if (plan->slices[l] > 30 || (1 << plan->slices[l]) > maxg)
      return hp_fail(d, HP_PLAN, "plan: slices[%d] is %d, above the job's max_slices %d", l,
                     plan->slices[l] > 30 ? -1 : hp_plan_slices(plan, l), maxg);
  }
  return HP_OK;
}

hp_err hp_plan_set_gas(const hp_problem *prob, hp_plan *plan, hp_diag *d)
{
  long per = (long)plan->dp * plan->mbs;
  if (plan->mbs < 1)
    return hp_fail(d, HP_PLAN, "plan: mbs %d: expected a positive integer", plan->mbs);
  if (prob->job.gbs % per != 0)
    return hp_fail(d, HP_PLAN,
                   "plan: gbs %ld is not a multiple of dp * mbs = %d * %d: gas would not be "
                   "an integer", prob->job.gbs, plan->dp, plan->mbs);
  plan->gas = prob->job.gbs / per;
  return HP_OK;
}

hp_err hp_plan_validate(const hp_problem *prob, const hp_plan *plan, hp_diag *d)
{
  const hp_cluster *c = prob->cluster;
  int D = c->n_devices, L = prob->model->n_layers;
  int *owner = NULL;
  long per;
  hp_err err = HP_OK;

  long used = (long)plan->pp * plan->tp * plan->dp;
  if (prob->job.idle_devices ? used > D : used != D)
    return hp_fail(d, HP_PLAN, "plan: dims: pp * tp * dp = %d * %d * %d = %ld but cluster '%s' "
                   "has %d devices%s", plan->pp, plan->tp, plan->dp, used, c->name, D,
                   prob->job.idle_devices ? "" : used < D ? " (a plan may leave devices idle "
                   "only under a job with idle_devices)" : "");
  if (plan->n_layers != L)
    return hp_fail(d, HP_PLAN, "plan: covers %d layers but model '%s' has %d",
                   plan->n_layers, prob->model->name, L);
  if (plan->mbs < 1)
    return hp_fail(d, HP_PLAN, "plan: mbs %d: expected a positive integer", plan->mbs);
  per = (long)plan->dp * plan->mbs;
  if (prob->job.gbs % per != 0)
    return hp_fail(d, HP_PLAN, "plan: gbs %ld is not a multiple of dp * mbs = %d * %d",
                   prob->job.gbs, plan->dp, plan->mbs);
  if (plan->gas != prob->job.gbs / per)
    return hp_fail(d, HP_PLAN, "plan: gas %ld but gbs / (dp * mbs) = %ld", plan->gas,
                   prob->job.gbs / per);
  if (plan->schedule != prob->job.schedule)
    return hp_fail(d, HP_PLAN, "plan: schedule '%s' but the job's is '%s'",
                   hp_schedule_name(plan->schedule), hp_schedule_name(prob->job.schedule));
  if (plan->pp > L)
    return hp_fail(d, HP_PLAN, "plan: pp %d exceeds the %d layers of the model", plan->pp, L);
  if (plan->first[0] != 0)
    return hp_fail(d, HP_PLAN, "plan: stages[0] starts at layer %d: it must start at 0",
                   plan->first[0]);
  for (int s = 0; s < plan->pp; s++)
    if (plan->first[s + 1] <= plan->first[s])
      return hp_fail(d, HP_PLAN, "plan: stages[%d] is empty or out of order (starts at %d, "
                     "next starts at %d)", s, plan->first[s], plan->first[s + 1]);
  if (plan->first[plan->pp] != L)
    return hp_fail(d, HP_PLAN, "plan: the stages end at layer %d but the model has %d layers",
                   plan->first[plan->pp] - 1, L);

  if ((err = validate_modes(prob, plan, d))) return err;

  owner = hp__calloc((size_t)D, sizeof *owner);
  if (!owner) return hp_fail(d, HP_NOMEM, "out of memory");
  for (int i = 0; i < D; i++) owner[i] = -1;
  for (int s = 0; s < plan->pp; s++)
    for (int r = 0; r < plan->dp; r++) {
      int node0 = -1;
      for (int j = 0; j < plan->tp; j++) {
        int slot = HP_SLOT(plan, s, r, j), dv = plan->dev[slot];
        if (dv < 0 || dv >= D) {
          err = hp_fail(d, HP_PLAN, "plan: stages[%d].devices[%d][%d] = %d: expected a device "
                        "id in 0..%d", s, r, j, dv, D - 1);
          goto done;
        }
        if (owner[dv] >= 0) {
          int o = owner[dv], os = o / (plan->dp * plan->tp);
          int orr = (o / plan->tp) % plan->dp, oj = o % plan->tp;
          err = hp_fail(d, HP_PLAN, "plan: device %d serves both stages[%d].devices[%d][%d] "
                        "and stages[%d].devices[%d][%d]: a device serves one slot",
                        dv, os, orr, oj, s, r, j);
          goto done;
        }
        owner[dv] = slot;
        if (j == 0) node0 = c->dev_node[dv];
        else if (c->dev_node[dv] != node0) {
          err = hp_fail(d, HP_PLAN, "plan: stages[%d].devices[%d]: the TP group spans nodes "
                        "'%s' and '%s'; a TP group must lie inside one node", s, r,
                        c->nodes[node0].name, c->nodes[c->dev_node[dv]].name);
          goto done;
        }
      }
    }
done:
  free(owner);
  return err;
}

void hp_plan_place_in_order(hp_plan *plan)
{
  int n = plan->pp * plan->dp * plan->tp;
  for (int i = 0; i < n; i++) plan->dev[i] = i;
}

void hp_plan_split_even(hp_plan *plan)
{
  int L = plan->n_layers, pp = plan->pp, base = L / pp, rem = L % pp, at = 0;
  for (int s = 0; s < pp; s++) {
    plan->first[s] = at;
    at += base + (s < rem ? 1 : 0);
  }
  plan->first[pp] = L;
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int hp_mbs_divisors(long per, int *out, int cap)
{
  long prime[40];
  int mult[40], np = 0, n = 1, k;
  int buf[8192];          /* per <= 2^40 has at most 6720 divisors */
  long rest = per;
  if (per < 1) return 0;
  for (long f = 2; f <= rest / f; f += f == 2 ? 1 : 2)
    if (rest % f == 0) {
      prime[np] = f;
      mult[np] = 0;
      while (rest % f == 0) { rest /= f; mult[np]++; }
      np++;
    }
  if (rest > 1) { prime[np] = rest; mult[np] = 1; np++; }
  buf[0] = 1;             /* the divisors up to HP_MAX_MBS, prime by prime */
  for (int i = 0; i < np; i++) {
    int had = n;
    for (int j = 0; j < had; j++) {
      long v = buf[j];
      for (int e = 1; e <= mult[i]; e++) {
        if (v > HP_MAX_MBS / prime[i]) break;
        v *= prime[i];
        if (n < (int)(sizeof buf / sizeof *buf)) buf[n++] = (int)v;
      }
    }
  }
  qsort(buf, (size_t)n, sizeof *buf, cmp_int);
  for (k = 0; out && k < n && k < cap; k++) out[k] = buf[k];
  return n;
}
