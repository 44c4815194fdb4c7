/* hp_team.h -- processes that search together (docs/distributed.md). The library never
 * links MPI and keeps no process-wide state: a caller that runs several processes (the
 * CLI under mpirun: cli/team.c) hands a search an hp_team through hp_limits.team, whose
 * operations the search calls at fixed points. A NULL team, or one of size 1, is a plain
 * search in one process, exactly as before: the search then runs in a team of its own,
 * the solo team (solvers/team_solo.c: claims counted locally, the best time a running
 * minimum, merges that leave everything as it is), so that it never asks which.
 *
 * The search driver (solvers/search_driver.c) uses the team of the MIP solvers thus (dp
 * shares nothing: it always runs in the solo team): items of work (the fixed-placement
 * DPs and baselines, the pattern bounds of the configurations in order of promise, the
 * pattern MIPs in order of bound) are claimed one at a time from shared counters, so a
 * process that finishes early takes the next; each plan time found is published, so every
 * process prunes against the team's best; at the end of each phase, whatever happened in
 * it, the processes merge their figures and plans (collectives), so that each then holds
 * the same state and the result does not depend on how many processes there were. A team
 * serves one search: its counters start at 0. */
#ifndef HP_TEAM_H
#define HP_TEAM_H

#define HP_TEAM_COUNTERS 8

typedef enum { HP_TEAM_MIN = 0, HP_TEAM_MAX = 1, HP_TEAM_SUM = 2 } hp_team_op;

typedef struct hp_team {
  int rank, size;       /* this process, and how many there are */
  void *ctx;
  /* The next item of counter k (0 .. HP_TEAM_COUNTERS - 1): 0, 1, 2, ... over the whole
   * team, each handed out once. Counters start at 0. */
  long (*claim)(void *ctx, int k);
  /* Publishes `mine` (a plan time found here, INFINITY: none) and returns the least
   * published by any process so far. */
  double (*best)(void *ctx, double mine);
  /* Collective: v[0 .. n-1] combined elementwise over the team with op, in place. */
  int (*reduce)(void *ctx, double *v, long n, hp_team_op op);
  /* Collective: every process's `n` bytes at `mine`, concatenated in rank order into a
   * malloc'd *all; len[r] (an array of `size` longs the caller gives) receives each
   * process's count. */
  int (*gather)(void *ctx, const void *mine, long n, void **all, long *len);
} hp_team;

#endif
