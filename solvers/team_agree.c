/* team_agree.c -- agreements over a team (hp_team.h, search.h): where members run one item
 * together (the pattern DP shared among them, pattern_dp.c and pattern_pass.c), every
 * decision that could differ between them, an error, a stop on one's own clock, the best
 * plan time each knows, is made the same on all before it steers what they do next. And
 * the turns of a run of timed items that members take apart (hp__team_turns). */
#include <math.h>

#include "search.h"

static int several(const hp_team *t) { return t && t->size > 1; }

hp_err hp__team_agree_err(const hp_team *t, hp_err err)
{
  double v = err != HP_OK;
  if (!several(t)) return err;
  if (t->reduce(t->ctx, &v, 1, HP_TEAM_MAX)) return err ? err : HP_INTERNAL;
  return err ? err : v > 0 ? HP_INTERNAL : HP_OK;
}

int hp__team_any(const hp_team *t, int yes)
{
  double v = yes != 0;
  if (!several(t)) return yes != 0;
  if (t->reduce(t->ctx, &v, 1, HP_TEAM_MAX)) return 1;   /* a failed collective stops all */
  return v > 0;
}

double hp__team_min(const hp_team *t, double v)
{
  if (several(t)) t->reduce(t->ctx, &v, 1, HP_TEAM_MIN);   /* in place */
  return v;
}

double hp__team_turns(int rank, int size, int n, double window, int *first, int *step)
{
  *first = 0;
  *step = 1;
  if (size <= 1) return window;
  if (rank == 0) {
    *step = n > 1 ? n : 1;
    return n > 1 ? window / 2 : window;
  }
  *first = rank;
  *step = size - 1;
  return window / 2 / (size - 1);
}
