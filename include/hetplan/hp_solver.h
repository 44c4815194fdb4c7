/* hp_solver.h -- the one solver interface. Every search method (exhaustive enumeration,
 * DP, SA, baselines, MIP backends) fills an hp_solver and returns an hp_result whose
 * objective is the evaluator's figure for its plan.
 * Adding a solver: see docs/adding-a-solver.md. */
#ifndef HP_SOLVER_H
#define HP_SOLVER_H

#include "hp_eval.h"

typedef enum {
  HP_SOL_NONE = 0,      /* no plan found, nothing proved ("no-plan") */
  HP_SOL_FEASIBLE,      /* a plan, optimality not proved */
  HP_SOL_OPTIMAL,       /* a plan proved optimal over `space` */
  HP_SOL_INFEASIBLE     /* proved: no plan of `space` fits */
} hp_sol_status;

/* The plan-file name of a status: "no-plan", "feasible", "optimal", "infeasible". */
const char *hp_sol_status_name(hp_sol_status s);

typedef struct hp_limits {
  double time_limit;    /* wall-clock seconds, <= 0: none */
  double gap;           /* relative gap at which to stop, MIP solvers */
  unsigned long seed;
  int threads;
  long max_work;        /* solver-defined cap (enumerated plans, moves), <= 0: default */
  int top;              /* keep the best `top` fitting plans */
  int keep_rejected;    /* also keep the `top` fastest plans that do not fit */
} hp_limits;

void hp_limits_init(hp_limits *lim);

/* A plan kept in a ranking, with the evaluator's verdict. */
typedef struct hp_ranked {
  hp_plan *plan;        /* owned */
  double time;          /* evaluator's iteration time */
  int oom_device;       /* -1 if it fits */
  double oom_bytes;
} hp_ranked;

typedef struct hp_result {
  hp_sol_status status;
  hp_plan *plan;        /* owned; NULL unless FEASIBLE or OPTIMAL */
  double objective;     /* evaluator's iteration time of `plan`, seconds */
  int fits;             /* evaluator's verdict: 1 if `plan` fits in memory */
  double bound;         /* proven lower bound over `space`; -INFINITY if none */
  double seconds;       /* wall time spent in solve() */
  long work;            /* solver-defined: plans evaluated, states, nodes */
  char space[128];      /* "full", or what the solver held fixed */
  hp_ranked *top;       /* up to lim->top fitting plans, best first (plan[0] = `plan`) */
  int n_top;
  hp_ranked *rejected;  /* up to lim->top plans that do not fit, fastest first */
  int n_rejected;
} hp_result;

void hp_result_init(hp_result *r);
/* Offers a scored plan to the result: keeps a copy if it ranks among the best `top`
 * fitting (or rejected) plans, and keeps `plan`/`objective`/`status` on the best that
 * fits. Solvers with an outer loop call it for every candidate. */
hp_err hp_result_offer(hp_result *r, const hp_limits *lim, const hp_plan *plan,
                       const hp_eval *e, hp_diag *d);
void hp_result_release(hp_result *r);

enum {
  HP_SOLVER_EXACT = 1u << 0,   /* returns a proved optimum over its space */
  HP_SOLVER_BOUND = 1u << 1    /* reports a lower bound */
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

/* Runs a solver and fills the parts every solver shares: wall time, and the plan's
 * objective re-scored by the evaluator (a solver's own figure is never kept). */
hp_err hp_solver_run(const hp_solver *s, const hp_problem *prob, const hp_plan *start,
                     const hp_limits *lim, hp_result *out, hp_diag *d);

#endif
