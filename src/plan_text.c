/* plan_text.c -- a plan's configuration in one line of words, for messages, rankings and
 * reports: degrees, micro-batch, layers per stage, recompute and ZeRO-3 as ranges. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Appends the indices i in [0, n) with flag[i] set as ranges "0-3, 7"; returns the count. */
static int ranges(char *buf, size_t cap, size_t *len, const unsigned char *flag, int n)
{
  int count = 0;
  for (int i = 0; i < n; i++) {
    int j = i;
    if (!flag[i]) continue;
    while (j + 1 < n && flag[j + 1]) j++;
    count += j - i + 1;
    if (*len < cap) {
      int w = j > i ? snprintf(buf + *len, cap - *len, "%s%d-%d", count > j - i + 1 ? ", " : "", i, j)
                    : snprintf(buf + *len, cap - *len, "%s%d", count > 1 ? ", " : "", i);
      if (w > 0) *len += (size_t)w;
    }
    i = j;
  }
  return count;
}

char *hp_plan_describe(const hp_plan *pl, char *buf, unsigned long n)
{
  size_t len = 0, cap = n;
  unsigned char *rec = pl->recompute;
  int w;
  if (n == 0) return buf;
  buf[0] = '\0';
#define PUT(...) do { if (len < cap && (w = snprintf(buf + len, cap - len, __VA_ARGS__)) > 0) \
                        len += (size_t)w; } while (0)
  PUT("pp %d, tp %d, dp %d, mbs %d (gas %ld); layers per stage ", pl->pp, pl->tp, pl->dp,
      pl->mbs, pl->gas);
  for (int s = 0; s < pl->pp && len < cap; s++) {
    if (s >= 12 && pl->pp > 16) {
      PUT("+... (%d stages)", pl->pp);
      break;
    }
    PUT("%s%d", s ? "+" : "", pl->first[s + 1] - pl->first[s]);
  }
  {
    int nr = 0, nz = 0;
    for (int s = 0; s < pl->pp; s++) nr += rec[s] != 0;
    int cnt[HP_N_SHARD] = {0}, ng = 0;
    for (int l = 0; l < pl->n_layers; l++) {
      cnt[hp_plan_mode(pl, l)]++;
      ng += pl->slices[l] > 0 && pl->mode[l] == HP_SHARD_ZDP && pl->dp > 1;
    }
    nz = pl->n_layers - cnt[HP_SHARD_DP];
    if (nr == pl->pp) PUT("; recompute on every stage");
    else if (nr > 0) {
      PUT("; recompute on stage%s ", nr > 1 ? "s" : "");
      ranges(buf, cap, &len, rec, pl->pp);
    }
    static const char *const label[HP_N_SHARD] = { "", "ZeRO-1", "ZeRO-2", "ZeRO-3" };
    for (int m = HP_SHARD_ZERO1; m < HP_N_SHARD && nz > 0; m++) {
      unsigned char is[4096];
      if (cnt[m] == pl->n_layers) PUT("; %s on every layer", label[m]);
      else if (cnt[m] > 0) {
        PUT("; %s on layer%s ", label[m], cnt[m] > 1 ? "s" : "");
        if (pl->n_layers <= (int)sizeof is) {
          for (int l = 0; l < pl->n_layers; l++) is[l] = hp_plan_mode(pl, l) == m;
          ranges(buf, cap, &len, is, pl->n_layers);
        } else PUT("(%d)", cnt[m]);
      }
    }
    if (ng > 0) PUT("; %d layer%s gathered in slices", ng, ng > 1 ? "s" : "");
  }
#undef PUT
  if (len >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
  return buf;
}
