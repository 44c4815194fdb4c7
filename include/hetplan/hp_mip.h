/* hp_mip.h -- a solver-neutral mixed-integer program (minimisation): columns with bounds,
 * integrality and objective coefficients, sparse rows with a sense and a right-hand
 * side, readable names; CPLEX LP and free MPS writers; and the builders that encode the
 * cost model: exactly for one configuration and placement, and as the pattern relaxation
 * over every placement of a configuration (docs/formulation.md). GLPK and CBC
 * adapters (solvers/) read it; nothing here includes a solver's header. */
#ifndef HP_MIP_H
#define HP_MIP_H

#include <stdio.h>

#include "hp_pattern.h"

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
  double obj_scale;     /* seconds per unit of the objective (1e-3: it is in milliseconds) */
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
} hp_mip_map;

void hp_mip_map_release(hp_mip_map *map);

/* Encodes the cost model for `plan`'s configuration and placement (its stages, flags
 * and sharding are ignored): stage assignment, per-layer ZeRO-3, per-stage recompute
 * (if allow_recompute), memory capacity, per-replica pipeline times and per-stage sync.
 * Exact: for every integer point the objective (milliseconds) equals the evaluator's
 * iteration time of the decoded plan (tested). */
hp_err hp_mip_build(const hp_problem *prob, const hp_plan *plan, int allow_recompute,
                    hp_mip **out, hp_mip_map *map, hp_diag *d);

/* Reads stages, recompute and sharding from a solution x into `plan`. */
void hp_mip_decode(const hp_mip_map *map, const double *x, hp_plan *plan);

/* The integer columns' values for a plan (others 0): a start for a backend to complete.
 * For the exact MIP's map (hp_mip_build). Writes n_cols values. */
void hp_mip_encode(const hp_mip *m, const hp_mip_map *map, const hp_plan *plan, double *x);

/* --- The pattern MIP (mip_pattern.c): the pattern relaxation of hp_pattern.h as a
 * program, placement inside it as TP-group counts per node class. Per stage a kind
 * (kappa_s_k) and counts n_s_c of each class's groups (summing to dp, each class's over
 * the stages to its groups); per-layer sharding and per-stage recompute exactly as in
 * the exact MIP; per stage the slowest and the fastest class present (t_max_s, t_min_s),
 * the hand-off bound of the two kinds around each boundary, the sync bound of the kind;
 * the objective T + Q with T >= gas t_max_s* + sum_{s != s*} t_min_s + sum e_s for every
 * s*. Every plan of the configuration maps to a point of no greater objective, so its
 * optimum bounds them all; where the pattern figures are exact (exact classes, stages
 * whose replicas are alike) its objective is the plan's time. */
typedef struct hp_mip_pmap {
  hp_mip_map base;      /* stages, recompute, sharding, the objective's columns */
  int n_kind, n_cls;
  int *kind;            /* [pp * n_kind] column of kappa_s_k */
  int *count;           /* [pp * n_cls] column of n_s_c */
} hp_mip_pmap;

void hp_mip_pmap_release(hp_mip_pmap *map);

hp_err hp_mip_build_pattern(const hp_problem *prob, const hp_patterns *pt, hp_mip **out,
                            hp_mip_pmap *map, hp_diag *d);

/* The kind and the counts of each stage of a solution: kind[s], count[s * n_cls + c]. */
void hp_mip_decode_pattern(const hp_mip_pmap *map, const double *x, int *kind, int *count);

/* The plan a pattern program's solution x decodes to, the one decoding of the glpk and
 * cbc solvers and of `hetplan decode` (implemented in solvers/pattern_decode.c: it splits
 * with the layer DP). Each stage takes TP groups of the classes its counts name (one node
 * per single-node stage, whole nodes first elsewhere, the slow groups of mixed stages
 * spread over the replicas); its stages, recompute and sharding are the better of the
 * solution's own and the layer DP's for that placement, the DP within `seconds`
 * (INFINITY: no limit; a DP cut short leaves the solution's own). `plan` gives the configuration of
 * pt and map (hp_patterns_build, hp_mip_build_pattern) and receives the plan; *found = 0
 * when no split of the placement fits in memory. HP_PLAN if a stage's counts do not sum
 * to dp: x is not a solution of this program. */
hp_err hp_mip_decode_pattern_plan(const hp_problem *prob, const hp_patterns *pt,
                                  const hp_mip_pmap *map, const double *x, double seconds,
                                  hp_plan *plan, int *found, hp_diag *d);

#endif
