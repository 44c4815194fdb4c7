/* hp_mip.h -- a solver-neutral mixed-integer program (minimisation): columns with bounds,
 * integrality and objective coefficients, sparse rows with a sense and a right-hand
 * side, readable names; CPLEX LP and free MPS writers; and the builder that encodes the
 * cost model for one configuration and placement (docs/formulation.md). GLPK and CBC
 * adapters (solvers/) read it; nothing here includes a solver's header. */
#ifndef HP_MIP_H
#define HP_MIP_H

#include <stdio.h>

#include "hp_plan.h"

typedef struct hp_mip_col {
  char name[32];
  double lb, ub;        /* ub may be INFINITY */
  double obj;
  int integer;
} hp_mip_col;

typedef struct hp_mip_row {
  char name[32];
  char sense;           /* 'L' (<=), 'G' (>=) or 'E' (=) */
  double rhs;
  int start, n;         /* entries [start, start + n) of the entry arrays */
} hp_mip_row;

typedef struct hp_mip {
  int n_cols, n_rows, n_nz;
  hp_mip_col *cols;
  hp_mip_row *rows;
  int *idx;             /* [n_nz] column of each entry */
  double *val;          /* [n_nz] coefficient */
  int cap_cols, cap_rows, cap_nz;
  int failed;           /* an allocation failed: the MIP is unusable */
} hp_mip;

hp_err hp_mip_create(hp_mip **out, hp_diag *d);
void hp_mip_destroy(hp_mip **m);
/* Adds a column; returns its index, or -1 (and sets m->failed) out of memory. */
int hp_mip_add_col(hp_mip *m, const char *name, double lb, double ub, int integer, double obj);
/* Adds a row sum val[k] * x[idx[k]] (sense) rhs; entries with a zero value are dropped and
 * repeated columns merged. Returns its index or -1. */
int hp_mip_add_row(hp_mip *m, const char *name, int n, const int *idx, const double *val,
                   char sense, double rhs);

/* Objective value of a point. */
double hp_mip_objective(const hp_mip *m, const double *x);
/* 1 if x satisfies every bound, integrality and row within tol (absolute, scaled by the
 * row's largest term); else 0 and a description of the first violation in `why`. */
int hp_mip_check(const hp_mip *m, const double *x, double tol, char *why, size_t n_why);

/* CPLEX LP and free MPS text (malloc'd, caller frees). */
hp_err hp_mip_write_lp(const hp_mip *m, char **out, hp_diag *d);
hp_err hp_mip_write_mps(const hp_mip *m, char **out, hp_diag *d);

/* Where the builder put the plan's decisions. */
typedef struct hp_mip_map {
  int pp, n_layers, dp;
  int *u;               /* [n_layers * pp] column of u_l_s (layer l in stage <= s), -1 if constant */
  int *rec;             /* [pp] column of R_s, -1 if recompute is not modelled */
  int *zdp;             /* [n_layers] column of z_l, -1 when dp = 1 */
  int obj_pipe, obj_sync;
  int n_types;          /* relaxation only: options of a slot (device types, or nodes) */
  int by_node;          /* the options are nodes */
  int *type;            /* [pp * dp * n_types] column of y_s_r_k (slot (s, r) takes option k), or NULL */
} hp_mip_map;

void hp_mip_map_release(hp_mip_map *map);

/* Encodes the cost model for `plan`'s configuration and placement (its stages, flags
 * and sharding are ignored): stage assignment, per-layer ZeRO-3, per-stage recompute
 * (if allow_recompute), memory capacity, per-replica pipeline times and per-stage sync.
 * Exact: for every integer point the objective equals the evaluator's iteration time of
 * the decoded plan (tested). */
hp_err hp_mip_build(const hp_problem *prob, const hp_plan *plan, int allow_recompute,
                    hp_mip **out, hp_mip_map *map, hp_diag *d);

/* The placement-free relaxation of `plan`'s configuration (its placement is ignored).
 * by_node 0: each slot chooses a device type, as many slots of a type as it has TP
 * groups; layer times are each type's best over its TP groups; hand-offs, gathers and
 * syncs run at the best link a set of that many devices can have. by_node 1: each slot
 * chooses a node (the aggregation of its identical GPUs); hand-offs and syncs pay the
 * best link between nodes unless their slots share a node. Memory is exact for the
 * chosen types. Every plan of the configuration is a feasible point of either at no
 * greater objective, so its optimum (or a backend's bound) is a lower bound over every
 * placement (docs/formulation.md). */
hp_err hp_mip_build_bound(const hp_problem *prob, const hp_plan *plan, int by_node,
                          hp_mip **out, hp_mip_map *map, hp_diag *d);

/* Reads stages, recompute and sharding from a solution x into `plan`. */
void hp_mip_decode(const hp_mip_map *map, const double *x, hp_plan *plan);
/* A relaxation's solution: the option (type or node) of each slot, slot_type[s * dp + r]. */
void hp_mip_decode_types(const hp_mip_map *map, const double *x, int *slot_type);

/* The option of a device in a relaxation: its node if map->by_node, else its type. */
int hp_mip_option(const hp_problem *prob, const hp_mip_map *map, int dev);

/* The integer columns' values for a plan (others 0): a start for a backend to complete.
 * For the exact MIP's map (hp_mip_build); relaxations are solved without a start. Writes
 * n_cols values. */
void hp_mip_encode(const hp_mip *m, const hp_mip_map *map, const hp_plan *plan, double *x);

#endif
