/* hp_solver.h -- the one solver interface. Every search method (exhaustive enumeration,
 * DP, SA, baselines, MIP backends) fills an hp_solver and returns an hp_result whose
 * objective is the evaluator's figure for its plan.
 * Adding a solver: see docs/adding-a-solver.md. */
#ifndef HP_SOLVER_H
#define HP_SOLVER_H

#include "hp_result.h"

enum {
  HP_SOLVER_EXACT = 1u << 0,   /* returns a proved optimum over its space */
  HP_SOLVER_BOUND = 1u << 1,   /* reports a lower bound */
  HP_SOLVER_TEAM = 1u << 2     /* shares its search with a team (hp_limits.team, hp_team.h) */
};

typedef struct hp_solver {
  const char *name;     /* as on the command line */
  const char *desc;     /* one line, with its source */
  unsigned flags;
  /* Solves `prob` within `lim`. `start` (may be NULL) is a plan to start from.
   * Returns HP_OK when it ran, whether or not it found a plan (see out->status);
   * any other code is an error explained in `d`. */
  hp_err (*solve)(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                  hp_result *out, hp_diag *d);
} hp_solver;

/* NULL-terminated list of the solvers built in, in order of preference. */
const hp_solver *const *hp_solver_all(void);
/* The solver of that name, or NULL. */
const hp_solver *hp_solver_find(const char *name);
/* If `name` is an optional solver this build left out (glpk, cbc), writes why and what
 * to install into buf (n bytes) and returns it; else NULL. */
const char *hp_solver_not_built(const char *name, char *buf, unsigned long n);

/* Runs a solver and fills the parts every solver shares: wall time, and the plan's
 * objective re-scored by the evaluator (a solver's own figure is never kept). */
hp_err hp_solver_run(const hp_solver *s, const hp_problem *prob, const hp_plan *start,
                     const hp_limits *lim, hp_result *out, hp_diag *d);

#endif
