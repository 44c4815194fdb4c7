/* hp_result.h -- what a search returns, whoever ran it: a status, the best plan with the
 * evaluator's figure, a bound, and a ranking of the best plans found; and the limits a
 * search runs under. Core types: the plan-file writer reads them, solvers fill them. */
#ifndef HP_RESULT_H
#define HP_RESULT_H

#include <signal.h>

#include "hp_eval.h"

typedef enum {
  HP_SOL_NONE = 0,      /* no plan found, nothing proved ("no-plan") */
  HP_SOL_FEASIBLE,      /* a plan, optimality not proved */
  HP_SOL_OPTIMAL,       /* a plan proved optimal over `space` */
  HP_SOL_INFEASIBLE,    /* proved: no plan of `space` fits */
  HP_SOL_NOFIT          /* a plan, but it does not fit in memory (a solver without a
                         * memory model, such as amp as published); set by hp_solver_run */
} hp_sol_status;

/* The plan-file name of a status: "no-plan", "feasible", "optimal", "infeasible",
 * "does-not-fit". */
const char *hp_sol_status_name(hp_sol_status s);

/* What a search covered. Only a result over HP_SPACE_FULL bounds every plan of
 * cost-model.md section 5; its status OPTIMAL or INFEASIBLE is a claim about all of it. */
typedef enum {
  HP_SPACE_FULL = 0,      /* "full": every plan of section 5 */
  HP_SPACE_RESTRICTED,    /* "restricted": a part by design (a baseline's rules, fixed
                           * placement); the result's space_note says which */
  HP_SPACE_INCOMPLETE     /* "incomplete": meant to cover it all, stopped before it did */
} hp_space;

/* The plan-file name of a space: "full", "restricted", "incomplete". */
const char *hp_space_name(hp_space s);

/* Why a search ended before it had covered its space. */
typedef enum {
  HP_STOP_NONE = 0,       /* it ran to its end */
  HP_STOP_TIME,           /* the time limit */
  HP_STOP_WORK,           /* its work cap (--max-work) */
  HP_STOP_INTERRUPT       /* the caller asked it to stop (limits.stop) */
} hp_stop;

/* The plan-file name of a stop: null for none, else "time-limit", "work-limit",
 * "interrupted". */
const char *hp_stop_name(hp_stop s);

/* Where a running search stands, as its progress observer sees it. */
typedef struct hp_progress {
  const char *solver;   /* who reports, e.g. "CBC" */
  const char *phase;    /* what runs now, e.g. "type relaxations"; "done" at the end */
  int done, total;      /* items of the phase finished, and in all (configurations) */
  double elapsed;       /* seconds since the search started */
  double incumbent;     /* the best plan's iteration time so far, INFINITY if none */
  double bound;         /* a lower bound over the whole space, -INFINITY if none yet,
                         * NAN if this solver claims none (a restricted search) */
} hp_progress;

/* Called by a long search from the thread that runs it, after each step (a
 * configuration done, an incumbent found) and once with phase "done". It must return
 * quickly; throttling what it shows is the observer's business. */
typedef void (*hp_progress_fn)(void *ctx, const hp_progress *p);

typedef struct hp_limits {
  double time_limit;    /* wall-clock seconds, <= 0: none */
  double gap;           /* relative gap at which to stop, MIP solvers */
  unsigned long seed;
  int threads;
  long max_work;        /* solver-defined cap (enumerated plans, moves), <= 0: default */
  int top;              /* keep the best `top` fitting plans */
  int keep_rejected;    /* also keep the `top` fastest plans that do not fit */
  hp_progress_fn progress;   /* may be NULL: the library itself never prints */
  /* may be NULL; once *stop is non-zero (a signal handler may set it), a search stops at
   * its next check and returns its best so far, with stopped = HP_STOP_INTERRUPT. With
   * it set, the glpk and cbc backends solve in a child process (fork) that a stop kills
   * within milliseconds; a solve so cut short claims nothing */
  const volatile sig_atomic_t *stop;
  void *progress_ctx;
  /* may be NULL: processes that search together (hp_team.h); solvers that do not use a
   * team ignore it, and every process then runs the whole search */
  const struct hp_team *team;
  /* `dhondt`'s alpha, the share of memory in a layer's cost (SageMaker's memory_weight),
   * in [0, 1]; hp_limits_init sets HP_MEMORY_WEIGHT_DEFAULT, which stands for
   * SageMaker's default 0.8 (as does any value outside [0, 1]) */
  double memory_weight;
} hp_limits;

#define HP_MEMORY_WEIGHT_DEFAULT (-1.0)

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
  hp_space space;       /* what it covered; HP_SPACE_FULL unless the solver says less */
  char space_note[160]; /* what a restricted search held fixed, or why it stopped early */
  hp_stop stopped;      /* why it ended early, HP_STOP_NONE if it did not */
  hp_ranked *top;       /* up to lim->top fitting plans, best first (plan[0] = `plan`) */
  int n_top;
  hp_ranked *rejected;  /* up to lim->top plans that do not fit, fastest first */
  int n_rejected;
  /* The evaluator's time of the best fitting plan the search met that uses every device
   * (cost-model.md 7.19): under a job with idle_devices, what leaving devices idle is
   * measured against, found by the search itself (hp_result_offer keeps it). NAN when it
   * met none: none fits, or the search did not look at such plans (it is a figure of the
   * plans seen, not a bound: a search that prunes may have passed better ones by). */
  double all_used_time;
  /* The evaluator's figures for `plan`, as hp_solver_run re-scored it (all zero without a
   * plan, or when a solver's solve is called directly): what the CLI, the report and the
   * exporters show, so none evaluates the winner again. Released with the result. */
  hp_eval eval;
} hp_result;

void hp_result_init(hp_result *r);
/* Why a result holds no plan, in words that say whether it is proved that none fits:
 * only status INFEASIBLE over HP_SPACE_FULL is ("no plan of the search space fits in
 * memory (proved)"); otherwise the search found none, and the text says where it looked
 * (the space note) or why it stopped. Writes at most n bytes and returns buf. */
char *hp_result_no_plan_text(const hp_result *r, char *buf, unsigned long n);
/* 1 if the result proves that no plan of cost-model.md section 5 fits. */
int hp_result_proves_none_fits(const hp_result *r);
/* Offers a scored plan to the result: keeps a copy if it ranks among the best `top`
 * fitting (or rejected) plans, keeps `plan`/`objective`/`status` on the best that
 * fits, and `all_used_time` on the best that fits using every device; plans of equal time are ordered by hp_plan_compare, so that what is kept does
 * not depend on the order of the offers. Solvers with an outer loop call it for every
 * candidate. */
hp_err hp_result_offer(hp_result *r, const hp_limits *lim, const hp_plan *plan,
                       const hp_eval *e, hp_diag *d);
void hp_result_release(hp_result *r);

#endif
