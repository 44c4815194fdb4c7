/* configs.c -- the outer configurations (pp, tp, dp, mbs) of the search space
 * (cost-model.md section 5): pp * tp * dp = D, tp divides every node's GPU count,
 * pp <= L, and mbs with gbs / (dp * mbs) a positive integer (mbs <= HP_MAX_MBS). The
 * micro-batch sizes come from factoring gbs / dp, so a huge gbs costs nothing. */
#include <stdlib.h>

#include "search.h"

int hp__configs(const hp_problem *prob, hp_config **out)
{
  int cap = 0, n = 0, nd;
  int *deg, *mbs = NULL;
  *out = NULL;
  nd = hp__degrees(prob, NULL, 0);
  deg = hp__calloc((size_t)(nd > 0 ? nd : 1) * 3, sizeof *deg);
  mbs = hp__calloc(8192, sizeof *mbs);
  if (!deg || !mbs) { free(deg); free(mbs); return -1; }
  hp__degrees(prob, deg, nd);
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (int i = 0; i < nd; i++) {
      int dp = deg[3 * i + 2], nm;
      if (prob->job.gbs % dp) continue;
      nm = hp_mbs_divisors(prob->job.gbs / dp, mbs, 8192);
      if (nm > 8192) nm = 8192;
      for (int k = 0; k < nm; k++) {
        if (pass == 1) (*out)[n] = (hp_config){ deg[3 * i], deg[3 * i + 1], dp, mbs[k] };
        n++;
      }
    }
    if (pass == 0) {
      cap = n;
      if (!(*out = hp__calloc((size_t)(cap > 0 ? cap : 1), sizeof **out))) {
        free(deg);
        free(mbs);
        return -1;
      }
    }
  }
  free(deg);
  free(mbs);
  return n;
}
