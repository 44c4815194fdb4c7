/* hp_sim.h -- the discrete-event pipeline simulator: the second opinion on a plan's
 * iteration time (docs/simulator.md, cost-model.md 6). Durations are the cost model's
 * (version 1.2); the simulator adds the schedule's order, blocking sends, per-link
 * serialisation and the reductions' overlap with the backwards. */
#ifndef HP_SIM_H
#define HP_SIM_H

#include "hp_plan.h"

typedef enum {
  HP_EV_FWD = 0,       /* forward of a micro-batch on a slot (with half its ZeRO-3 gather) */
  HP_EV_BWD,           /* backward (the other half of the gather, recomputation, and the
                        * reduce-scatter Zr of zero2/zdp gradients) */
  HP_EV_SEND_ACT,      /* activation transfer from (s, r) to (s+1, r); the sender waits */
  HP_EV_SEND_GRAD,     /* gradient transfer from (s, r) to (s-1, r); the sender waits */
  HP_EV_ALLREDUCE,     /* stage s's gradient reduction red[s] over its replica groups */
  HP_EV_STEP,          /* the optimizer step of slot (s, r)'s devices */
  HP_EV_ALLGATHER      /* stage s's all-gather of the updated weights, gat[s] */
} hp_ev_kind;

/* One interval of the timeline. For transfers, (stage, replica) is the sender. For an
 * all-reduce and an all-gather, replica is -1; micro is -1 but for forwards, backwards
 * and transfers. */
typedef struct hp_sim_event {
  hp_ev_kind kind;
  int stage, replica, micro;
  double start, end;           /* seconds from the iteration's start */
} hp_sim_event;

typedef struct hp_sim {
  double iteration_time;       /* the last event's end */
  /* its parts, as hp_eval splits the formula's: iteration_time = pipeline_time +
   * sync_time + step_time + gat_time */
  double pipeline_time;        /* the last forward, backward or transfer's end */
  double sync_time;            /* how far the reductions end after it (0 if before) */
  double step_time;            /* the slowest device's step, after every reduction */
  double gat_time;             /* the slowest all-gather, after every step */
  int n_events;
  hp_sim_event *events;        /* in start order */
  int pp, dp, n_devices;
  int n_used;                  /* devices the plan uses (pp tp dp); the others are idle */
  double *busy;                /* [n_devices] compute time (forwards, backwards with their
                                * gathers and scatters, the step); 0 on idle devices */
  double bubble;               /* 1 - sum busy / (used devices x iteration time) */
  int *peak_inflight;          /* [pp] most micro-batches forwarded, not yet backwarded, on any replica */
} hp_sim;

void hp_sim_release(hp_sim *s);

/* Simulates one iteration of a valid plan. `s` must be zeroed or released. The plan is
 * checked as by hp_evaluate; memory does not matter here. */
hp_err hp_simulate(const hp_problem *prob, const hp_plan *plan, hp_sim *s, hp_diag *d);

/* The simulation as an SVG Gantt chart, 1000 px wide (svg_gantt.c): one row per stage in
 * pipeline order, drawn for the replica whose backwards end last, forwards and backwards
 * numbered with their micro-batch (every k-th where boxes are narrow), its transfers
 * under them, its optimizer step, and the stage's reduction and all-gather (a reduction
 * overlapping the backwards in the row's lower half); runs of boxes too narrow to tell apart become
 * bands, so the size stays near 100 KB at any pp and gas (malloc'd, caller frees). */
hp_err hp_sim_svg(const hp_problem *prob, const hp_plan *plan, const hp_sim *s, char **out,
                  hp_diag *d);

/* The plan's placement as an SVG, 1000 px wide (svg_placement.c): the nodes grouped by
 * class (device type and GPUs a node), each GPU coloured by its stage; then the stages in
 * order with the GPUs and nodes they hold, and each hand-off's bandwidth (the slowest
 * lane's Bpp) and the bytes it carries per micro-batch and TP lane, each way
 * (malloc'd, caller frees). */
hp_err hp_plan_svg(const hp_problem *prob, const hp_plan *plan, char **out, hp_diag *d);

/* The analytic-versus-simulated cross-check: `samples` random valid plans of the search
 * space (seeded) and the `dp` solver's 10 best, each scored by the evaluator and by the
 * simulator (memory is not considered): the whole iteration of cost model 1.2 both ways. */
typedef struct hp_crosscheck {
  int n;
  double *analytic, *simulated;   /* [n] iteration times */
  double mape;                    /* mean |analytic - simulated| / simulated */
  double spearman;                /* rank correlation of the two */
  int worst;                      /* index of the largest relative error */
  hp_plan **plans;                /* [n] owned */
} hp_crosscheck;

hp_err hp_crosscheck_run(const hp_problem *prob, long samples, unsigned long seed,
                         hp_crosscheck *out, hp_diag *d);
void hp_crosscheck_release(hp_crosscheck *c);

/* Spearman's rank correlation of two series (ties get their mean rank); 0 if either is
 * constant. */
double hp_spearman(const double *x, const double *y, int n);

#endif
