/* team_solo.c -- the team of one process (hp_team.h) that a search runs in when no team of
 * several is given: claims counted here (0, 1, 2, ... per counter), the best time a
 * running minimum, reductions that leave their figures as they are (one member: they are
 * already the team's), and a gather that hands back this process's own bytes. With it the
 * search driver always has a team and never asks whether it runs under MPI; a plain run
 * pays a few function calls per item for it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

static long solo_claim(void *ctx, int k)
{
  hp_team_solo *s = ctx;
  return s->next[k]++;
}

static double solo_best(void *ctx, double mine)
{
  hp_team_solo *s = ctx;
  if (mine < s->best) s->best = mine;
  return s->best;
}

static int solo_reduce(void *ctx, double *v, long n, hp_team_op op)
{
  (void)ctx;
  (void)v;
  (void)n;
  (void)op;
  return 0;
}

/* Never fails: out of memory it hands back nothing, which for the one member is nothing
 * lost (the bytes are its own). */
static int solo_gather(void *ctx, const void *mine, long n, void **all, long *len)
{
  (void)ctx;
  *all = malloc((size_t)n + 1);
  len[0] = *all ? n : 0;
  if (*all && n > 0) memcpy(*all, mine, (size_t)n);
  return 0;
}

const hp_team *hp__team_solo(hp_team_solo *s)
{
  memset(s, 0, sizeof *s);
  s->best = INFINITY;
  s->team = (hp_team){ 0, 1, s, solo_claim, solo_best, solo_reduce, solo_gather };
  return &s->team;
}

const hp_team *hp__team_pick(const hp_team *given, hp_team_solo *solo)
{
  /* the one place that looks at a team's size: a team of one is a single process, which
   * the solo team is (and always was: such a team was never called) */
  return given && given->size > 1 ? given : hp__team_solo(solo);
}
