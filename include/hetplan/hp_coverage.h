/* hp_coverage.h -- profile coverage: which (layer kind, device type, tp, mbs) cells of
 * a problem take their layer time from the profile's measurements and which from the
 * analytic estimate (docs/cost-model.md, "Layer time"), over the whole search space or
 * over the cells one plan uses. Never silent: the CLI reports it, --strict-profile
 * refuses estimated cells. */
#ifndef HP_COVERAGE_H
#define HP_COVERAGE_H

#include "hp_plan.h"

/* Where a cell's layer time comes from. */
typedef enum {
  HP_CELL_MEASURED = 0,  /* the profile has this very (kind, type, tp, mbs) */
  HP_CELL_DERIVED = 1,   /* the profile has (kind, type, tp) at other mbs only: the time
                            is interpolated, extrapolated or scaled from those points */
  HP_CELL_ESTIMATED = 2, /* no measurement of (kind, type, tp): FLOPs / (peak x
                            efficiency) plus the TP all-reduce */
  HP_CELL_SHAPE = 3      /* no measurement of (kind, type, tp): the shape model's estimate
                            (hp_shape.h), entered as profile points; never measured */
} hp_cell_source;

/* Which cells are counted. */
typedef enum {
  HP_COV_SPACE = 0,   /* every kind x every device type with devices x every (tp, mbs)
                         pair of the search space (cost-model.md section 5) */
  HP_COV_PLAN = 1,    /* the (kind, type) pairs a plan's slots run, at its tp and mbs */
  HP_COV_GROUPS = 2   /* kind x type x tp of the space, mbs left out (mbs = 0): for a
                         look without a global batch size; a group is measured if it has
                         any point, estimated otherwise (never derived) */
} hp_cov_scope;

typedef struct hp_cov_cell {
  int kind;            /* index into hp_coverage.kinds */
  int type;            /* device type, index into the cluster's types */
  int tp, mbs;         /* mbs 0 in HP_COV_GROUPS */
  hp_cell_source source;
} hp_cov_cell;

/* Cells and how many of them are measured, derived, estimated (FLOPs), from the shape
 * model. */
typedef struct hp_cov_count { int cells, measured, derived, estimated, shape; } hp_cov_count;

typedef struct hp_coverage {
  hp_cov_scope scope;
  const char *profile;   /* the profile's file name (borrowed from the problem), NULL if none */
  hp_cov_count total;
  int n_cells;
  hp_cov_cell *cells;    /* ordered by kind (model order), type, tp, mbs */
  int n_kinds;
  const char **kinds;    /* distinct layer kinds in model order (borrowed from the model) */
  int *kind_layers;      /* [n_kinds] layers of each kind */
  hp_cov_count *by_kind; /* [n_kinds] */
  int n_types;
  int *types;            /* device types counted, indices into the cluster's types */
  hp_cov_count *by_type; /* [n_types] */
  int n_tps;
  int *tps;              /* ascending */
  hp_cov_count *by_tp;
  int n_mbs;             /* 0 in HP_COV_GROUPS */
  int *mbs;              /* ascending */
  hp_cov_count *by_mbs;
  int profile_entries;   /* layer_times entries of the profile */
  int unused_entries;    /* of them, entries for a kind the model lacks, a type the
                            cluster lacks or a tp no node can hold */
} hp_coverage;

/* Computes the coverage of `scope` (`plan` is required for HP_COV_PLAN and must be
 * valid for `p`, ignored otherwise) into a new object; destroy it with
 * hp_coverage_destroy. HP_NOMEM, or HP_INVAL for a missing plan. */
hp_err hp_coverage_compute(const hp_problem *p, hp_cov_scope scope, const hp_plan *plan,
                           hp_coverage **out, hp_diag *d);
void hp_coverage_destroy(hp_coverage **c);

/* "measured", "derived", "estimated", "shape model"; "space", "plan", "groups". Never
 * NULL. */
const char *hp_cell_source_name(hp_cell_source s);
const char *hp_cov_scope_name(hp_cov_scope s);


#endif
