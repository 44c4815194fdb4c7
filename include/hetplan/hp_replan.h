/* hp_replan.h -- re-planning after the cluster changed (solvers/replan.c,
 * docs/replan.md): candidate plans for the new cluster (the old plan as it stands, the old
 * plan repaired, a solver's best plans each relabelled to keep state in place), each
 * scored by the evaluator and by what it moves (hp_migrate.h), and the choice by
 * iteration time + W * migration time. */
#ifndef HP_REPLAN_H
#define HP_REPLAN_H

#include "hp_migrate.h"
#include "hp_solver.h"

typedef enum {
  HP_CAND_NO_MOVE = 0,   /* the old plan on the same devices of the new cluster */
  HP_CAND_REPAIR,        /* its degrees, stages, modes and mbs, lost devices replaced */
  HP_CAND_SOLVER         /* one of the solver's best plans on the new problem */
} hp_cand_kind;

const char *hp_cand_kind_name(int kind);   /* "no-move", "repair", "solver" */

typedef struct hp_replan_opts {
  const hp_solver *solver;   /* NULL: dp */
  int top;                   /* the solver's best plans considered; <= 0: 16 */
  double move_weight;        /* W >= 0: seconds of iteration a second of migration costs */
  double max_move_bytes;     /* the most bytes a chosen plan may move; INFINITY: no cap */
  double storage_bw;         /* bytes/s at which a checkpoint is read; <= 0: the new
                              * cluster's slowest link between two nodes (with one node,
                              * its slowest link inside) */
} hp_replan_opts;

void hp_replan_opts_init(hp_replan_opts *o);

typedef struct hp_replan_cand {
  int kind;               /* hp_cand_kind */
  int rank;               /* HP_CAND_SOLVER: its rank among the solver's plans, from 1 */
  int relabelled;         /* 1: stages' devices, replicas or TP ranks renumbered to keep more
                           * in place */
  char note[240];         /* without a plan: why not; else what it is, or "" */
  hp_plan *plan;          /* owned; NULL when the candidate does not exist */
  double time;            /* the evaluator's iteration time on the new problem, seconds */
  int fits;               /* the evaluator's verdict */
  int oom_device;         /* the device that overflows, -1 if it fits */
  hp_migration mig;       /* what moving from the old plan to it takes */
  double objective;       /* time + W * mig.seconds */
  int allowed;            /* fits, and moves at most max_move_bytes */
} hp_replan_cand;

typedef struct hp_replan {
  int n_cands;
  hp_replan_cand *cands;  /* no-move, repair, then the solver's in its order */
  int chosen;             /* the allowed candidate of least objective (ties: fewer bytes
                           * moved, then the earlier), -1 if none is allowed */
  int *old_to_new;        /* [n_old] the device map (hp_device_map) */
  int n_old;
  int n_lost;             /* devices the old plan used that the new cluster lacks */
  double storage_bw;      /* what checkpoint reads were timed at, bytes/s */
  int storage_default;    /* 1: the default of hp_replan_opts.storage_bw */
  /* the solver's run on the new problem */
  const char *solver;
  hp_sol_status status;
  hp_space space;
  hp_stop stopped;
  char space_note[160];
  double bound;           /* its proven lower bound on the iteration time of every plan of
                           * the new problem's space (HP_SPACE_FULL), -INFINITY if none; a
                           * bound on time + W * move as well, since move >= 0 */
  double solver_seconds;
  int n_unscored;         /* the solver's plans left out: the time limit was reached */
} hp_replan;

/* Re-plans: `old_plan` is a plan for `old`; `now` is the same model and job on the new
 * cluster. Runs o->solver within lim (time limit, stop; lim->top is replaced by o->top),
 * builds the candidates, scores each with hp_evaluate and hp_migrate, and chooses.
 * lim->time_limit bounds the whole call: the solver runs for what is left of it after
 * the no-move and repair candidates, and once it has passed, the solver's plans after
 * its best are left out (n_unscored) and none is relabelled. `out`
 * is overwritten; release with hp_replan_release. Returns HP_OK whether or not a
 * candidate is allowed (out->chosen). */
hp_err hp_replan_run(const hp_problem *old, const hp_plan *old_plan, const hp_problem *now,
                     const hp_replan_opts *o, const hp_limits *lim, hp_replan *out,
                     hp_diag *d);
void hp_replan_release(hp_replan *r);

#endif
