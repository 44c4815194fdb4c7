/* plan_pack.c -- plans as integers for another process, and the total order on plans
 * that makes the choice among plans of equal time independent of the order met. */
#include <string.h>

#include "hetplan/hetplan.h"

static int cmp_int(long long a, long long b) { return a < b ? -1 : a > b; }

int hp_plan_compare(const hp_plan *a, const hp_plan *b)
{
  int c;
  long n;
  if ((c = cmp_int(a->pp, b->pp)) || (c = cmp_int(a->tp, b->tp)) || (c = cmp_int(a->dp, b->dp)) ||
      (c = cmp_int(a->mbs, b->mbs)) || (c = cmp_int(a->schedule, b->schedule)) ||
      (c = cmp_int(a->n_layers, b->n_layers)))
    return c;
  for (int s = 0; s <= a->pp; s++)
    if ((c = cmp_int(a->first[s], b->first[s]))) return c;
  n = (long)a->pp * a->dp * a->tp;
  for (long i = 0; i < n; i++)
    if ((c = cmp_int(a->dev[i], b->dev[i]))) return c;
  if ((c = memcmp(a->recompute, b->recompute, (size_t)a->pp))) return c < 0 ? -1 : 1;
  if ((c = memcmp(a->mode, b->mode, (size_t)a->n_layers))) return c < 0 ? -1 : 1;
  if ((c = memcmp(a->slices, b->slices, (size_t)a->n_layers))) return c < 0 ? -1 : 1;
  return 0;
}

/* Layout: pp tp dp mbs gas schedule n_layers | first[pp+1] | dev[pp dp tp] |
 * recompute[pp] | zdp[n_layers] */
#define HEAD 7

long hp_plan_packed_words(const hp_plan *p)
{
  return HEAD + (p->pp + 1) + (long)p->pp * p->dp * p->tp + p->pp + p->n_layers;
}

void hp_plan_pack(const hp_plan *p, long long *w)
{
  long k = 0, n = (long)p->pp * p->dp * p->tp;
  w[k++] = p->pp;
  w[k++] = p->tp;
  w[k++] = p->dp;
  w[k++] = p->mbs;
  w[k++] = p->gas;
  w[k++] = p->schedule;
  w[k++] = p->n_layers;
  for (int s = 0; s <= p->pp; s++) w[k++] = p->first[s];
  for (long i = 0; i < n; i++) w[k++] = p->dev[i];
  for (int s = 0; s < p->pp; s++) w[k++] = p->recompute[s];
  for (int l = 0; l < p->n_layers; l++) w[k++] = p->mode[l] | p->slices[l] << 4;
}

hp_err hp_plan_unpack(const long long *w, long n, int n_layers, hp_plan **out, hp_diag *d)
{
  hp_plan *p = NULL;
  long k = HEAD, slots;
  hp_err err;
  *out = NULL;
  if (n < HEAD || w[0] < 1 || w[1] < 1 || w[2] < 1 || w[0] > HP_MAX_DEVICES ||
      w[1] > HP_MAX_DEVICES || w[2] > HP_MAX_DEVICES || w[0] * w[1] * w[2] > HP_MAX_DEVICES ||
      w[3] < 1 || w[3] > HP_MAX_MBS || w[4] < 1 || w[4] > HP_MAX_GBS || w[6] != n_layers ||
      (w[5] != HP_1F1B && w[5] != HP_GPIPE))
    return hp_fail(d, HP_PLAN, "plan message: a header that does not describe a plan of "
                   "this problem");
  slots = w[0] * w[1] * w[2];
  if (n != HEAD + (w[0] + 1) + slots + w[0] + n_layers)
    return hp_fail(d, HP_PLAN, "plan message: %ld words where its header asks for %lld", n,
                   HEAD + (w[0] + 1) + slots + w[0] + n_layers);
  if ((err = hp_plan_create(&p, (int)w[0], (int)w[1], (int)w[2], n_layers, d))) return err;
  p->mbs = (int)w[3];
  p->gas = (long)w[4];
  p->schedule = (hp_schedule)w[5];
  for (int s = 0; s <= p->pp; s++) p->first[s] = (int)w[k++];
  for (long i = 0; i < slots; i++) p->dev[i] = (int)w[k++];
  for (int s = 0; s < p->pp; s++) p->recompute[s] = (unsigned char)(w[k++] != 0);
  for (int l = 0; l < n_layers; l++, k++) {
    if (w[k] < 0 || (w[k] & 15) >= HP_N_SHARD || (w[k] >> 4) > 30)
      return hp_fail(d, HP_PLAN, "plan message: layer %d's mode word %lld is not a mode", l, w[k]);
    p->mode[l] = (unsigned char)(w[k] & 15);
    p->slices[l] = (unsigned char)(w[k] >> 4);
  }
  *out = p;
  return HP_OK;
}
