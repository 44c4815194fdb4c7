/* configs.c -- the outer configurations (pp, tp, dp, mbs) of the search space
 * (cost-model.md section 5): pp * tp * dp = D, tp divides every node's GPU count,
 * pp <= L, and mbs with gbs / (dp * mbs) a positive integer. */
#include <stdlib.h>

#include "search.h"

int hp__configs(const hp_problem *prob, hp_config **out)
{
  int D = prob->cluster->n_devices, cap = 0, n = 0, nd;
  int *deg;
  *out = NULL;
  nd = hp__degrees(prob, NULL, 0);
  deg = hp__calloc((size_t)nd * 3, sizeof *deg);
  if (!deg) return -1;
  hp__degrees(prob, deg, nd);
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (int i = 0; i < nd; i++) {
      int dp = deg[3 * i + 2];
      long per;
      if (prob->job.gbs % dp) continue;
      per = prob->job.gbs / dp;
      for (long mbs = 1; mbs <= per; mbs++) {
        if (per % mbs) continue;
        if (pass == 1)
          (*out)[n] = (hp_config){ deg[3 * i], deg[3 * i + 1], dp, (int)mbs };
        n++;
      }
    }
    if (pass == 0) {
      cap = n;
      if (!(*out = hp__calloc((size_t)cap, sizeof **out))) { free(deg); return -1; }
    }
  }
  (void)D;
  free(deg);
  return n;
}
