/* hp_calibrate.h -- fitting a cluster to measured runs (`hetplan calibrate`,
 * docs/calibrate.md): a handful of plans run on the user's cluster, their measured
 * iteration times (and peak memory where known); per device type the time parameters of
 * a table (the shape model's efficiencies, the FLOPs path's efficiency) are fitted by
 * least squares on the log of predicted over measured time, the reserve from the memory
 * residuals, and each run is predicted again
 * by a fit without it (leave-one-out) so that the user knows what the calibration is
 * worth. The library prints nothing; the CLI shows the result. */
#ifndef HP_CALIBRATE_H
#define HP_CALIBRATE_H

#include "hp_error.h"
#include "hp_plan.h"
#include "hp_problem.h"

/* A device-type parameter the time fit may move: its cluster-file key, its bounds (the
 * fit works in log space, so lo > 0), and where it lives on a type: one of the shape
 * model's constants (hp_shape.h; the key is in the type's "shape" object), with shape
 * NULL the efficiency (the FLOPs path's scale: explicit-layer models, types without
 * "shape"), or with `measured` the profile's scale (profile_scale: every measured layer
 * time of the type times it, hp_problem_scale_profile; written to a calibrated profile,
 * not the cluster). by_default: fitted unless a list names the parameters to fit. */
typedef struct hp_fit_param {
  const char *name;
  double lo, hi;
  const hp_shape_param *shape;
  int by_default;
  int measured;
} hp_fit_param;

#define HP_CALIB_MAX_PARAMS 16
#define HP_CALIB_WHY 256           /* room for a reason a parameter is not fitted */

/* Fills out[] with the table, in the order the fit takes the parameters up, and returns
 * its length (<= HP_CALIB_MAX_PARAMS): gemm_eff, efficiency (a type's overall scale: the
 * one or the other sets it), align_eff, then the shape model's other fittable constants
 * in its table's order (attn_eff, attn_eff64, mem_eff, launch_us), then profile_scale
 * (range [0.25, 4], its floor per type from the peak rule). By default gemm_eff,
 * efficiency, align_eff and profile_scale: a handful of runs pins two scales a type, not
 * six (profile_scale moves only runs with measured layer times). */
int hp_calib_params(hp_fit_param *out);
/* A type's value of the parameter; profile_scale lives on the problem, not the type: 1
 * (a profile as loaded is its own scale), and set leaves the type alone. */
double hp_calib_param_get(const hp_fit_param *q, const hp_devtype *t);
void hp_calib_param_set(const hp_fit_param *q, hp_devtype *t, double v);
/* Which parameters to fit, from a comma-separated list of the table's names (`--params`;
 * "all": every one; NULL: the defaults) into fit[HP_CALIB_MAX_PARAMS] (1: fit it, named;
 * 2: fit it, by default; 0: not).
 * HP_INVAL naming the list and the names it may hold: an unknown name, a shape constant
 * that is a datasheet or kernel-design figure (sms, tile_m, tile_n, align), an empty list. */
hp_err hp_calib_parse_params(const char *list, unsigned char *fit, hp_diag *d);

/* The time fit's bounds. Per fit: one coordinate sweep of golden-section searches over
 * each parameter's whole range in log space (the full fit only: it finds the basin from
 * any start), then Gauss-Newton steps with Levenberg-Marquardt damping on the log
 * residuals (forward-difference Jacobian) until a step moves no parameter by more than
 * HP_CALIB_TOL (in log) or HP_CALIB_MAX_ITER steps. Each leave-one-out refit starts
 * from the full fit's figures and takes only the Gauss-Newton steps. */
#define HP_CALIB_GOLDEN_STEPS 80    /* steps of one golden-section search (0.618^80: 1e-17
                                     * of the log range) */
#define HP_CALIB_MAX_ITER 100       /* Gauss-Newton steps of one fit */
#define HP_CALIB_TOL 1e-10          /* convergence: the largest step, in log */
/* A parameter whose effect on the runs' log times is, but for this fraction of its norm,
 * a combination of the effects of the parameters taken up before it (align_eff when
 * every run's GEMMs are misaligned moves every time as gemm_eff does) is not fitted: the
 * runs cannot tell it apart, and its value would be arbitrary. */
#define HP_CALIB_MIN_DISTINCT 1e-3

/* One measured run. */
typedef struct hp_calib_run {
  char *plan;              /* the plan file, as resolved */
  double time;             /* measured iteration time, s */
  double mem;              /* measured peak memory, bytes; < 0: not given */
  int mem_allocated;       /* 1: PyTorch's max_memory_allocated; 0: nvidia-smi or
                            * max_memory_reserved ("memory_kind", default "reserved") */
  hp_problem *prob;        /* bound from the plan's inputs (or the run's overrides) */
  hp_plan *pl;
  int *type_map;           /* [prob's n_types] index of each type in the calibrated cluster */
  double mem_model;        /* the predicted peak less its device's reserve, bytes */
  double mem_outside;      /* what "allocated" leaves out: the CUDA context, and NCCL's
                            * buffers and the caching allocator's reserve of the run's
                            * framework, bytes (0 for "reserved") */
  int mem_type;            /* calibrated-cluster type of the device of the predicted peak */
  double time_before, time_after, time_loo;   /* predictions, s */
  double mem_before, mem_after, mem_loo;      /* predictions, bytes (NAN without mem) */
  int fits_after;          /* 1 if the plan fits in memory with the fitted figures */
  int shape_stale;         /* 1: a shape constant changed since the problem's shape series
                            * were last recomputed (at the plan's tp, before a prediction) */
} hp_calib_run;

/* A parameter of a type, before and after. */
typedef struct hp_calib_value {
  int type;                /* index into the calibrated cluster's types */
  const char *param;       /* the cluster-file key ("efficiency", "reserved_gib", or a key
                            * of the type's "shape": gemm_eff, ...) */
  int in_shape;            /* 1: the key is in the type's "shape" object */
  double before, after;    /* in the file's units (GiB for reserved_gib) */
  int fitted;              /* 0: left as it was, `why` says why */
  char why[HP_CALIB_WHY];  /* "" when fitted */
  int runs;                /* the runs that informed it */
} hp_calib_value;

typedef struct hp_calib {
  hp_cluster *cluster;     /* the cluster calibrated (as loaded: figures of the file) */
  char *cluster_path;
  int n_runs;
  hp_calib_run *runs;
  int n_values;
  hp_calib_value *values;  /* time parameters first, then the reserves */
  hp_fit_param params[HP_CALIB_MAX_PARAMS];   /* hp_calib_params() */
  int n_params;
  unsigned char fit[HP_CALIB_MAX_PARAMS];     /* which to fit (hp_calib_parse_params; the
                                               * defaults after hp_calib_load) */
  int sweeps;              /* golden-section sweeps of the full fit (1, 0 with nothing
                            * to fit) */
  int iterations;          /* Gauss-Newton steps of the full fit */
  int loo_iterations;      /* ... summed over the leave-one-out refits */
  double loo_time_mae, loo_time_worst;   /* relative errors, fractions */
  int loo_time_worst_run;
  int n_mem;               /* runs with measured memory */
  double loo_mem_mae, loo_mem_worst;
  int loo_mem_worst_run;   /* -1 without memory */
  double *scale_lo;        /* [the cluster's n_types] profile_scale's floor per type (the
                            * peak rule, hp_problem_profile_scale_floor, over the runs);
                            * -1 where no run has a measured time of the type */
  char *profile_path;      /* the profile the runs share (of those with one), NULL if none */
  char *profile_other;     /* a second profile file some run uses, NULL if they share one */
} hp_calib;

/* Reads a runs file (formats.md "Runs"): every run's plan is loaded with the files its
 * "inputs" name (paths relative to the plan, or the run's "model", "cluster", "profile",
 * relative to the runs file), bound, validated. `cluster_path` (may be NULL: the plans'
 * own, which must then be one file) is the cluster calibrated; `framework` >= 0 replaces
 * the plans' job framework. HP_PARSE/HP_INVAL naming the file and key: fewer than 2 runs,
 * a time that is not positive, a plan that is invalid or does not match its cluster, a
 * device type used by a run that the calibrated cluster lacks. */
hp_err hp_calib_load(const char *runs_path, const char *cluster_path, int framework,
                     hp_calib **out, hp_diag *d);
/* Fits the parameters c->fit names (bounded: HP_CALIB_GOLDEN_STEPS, HP_CALIB_MAX_ITER)
 * and fills the before/after figures and the leave-one-out errors. Shape constants are
 * fitted for the types whose calibrated-cluster entry has a "shape"; after each change
 * every run's problem is refreshed (hp_problem_refresh_shape). profile_scale is fitted for
 * the types with measured layer times, from 1, above its floor; HP_INVAL when the runs use
 * different profile files and --params names it (by default it is then left out, the
 * reason given). Deterministic. */
hp_err hp_calib_fit(hp_calib *c, hp_diag *d);
/* The calibrated cluster file: the input file's JSON with every key kept, the fitted
 * figures replaced, and a "calibrated" block (the runs file's name, `date`, the
 * parameters before and after, the leave-one-out errors). *out is malloc'd. */
hp_err hp_calib_cluster_json(const hp_calib *c, const char *runs_name, const char *date,
                             char **out, hp_diag *d);
/* Whether profile_scale was fitted on some type (a calibrated profile to write). */
int hp_calib_profile_fitted(const hp_calib *c);
/* The calibrated profile file: the runs' shared profile's JSON with every key kept, each
 * fitted type's layer_times seconds times its scale, and a "calibrated" block (the runs
 * file's name, `date`, the scale per type before and after, the leave-one-out errors).
 * HP_INVAL without a fitted profile_scale. *out is malloc'd. */
hp_err hp_calib_profile_json(const hp_calib *c, const char *runs_name, const char *date,
                             char **out, hp_diag *d);
/* The fit as JSON (what `calibrate --json` prints): "runs" (measured, before, after,
 * leave-one-out; seconds and GiB), "parameters", "leave_one_out". *out is malloc'd. */
hp_err hp_calib_to_json(const hp_calib *c, char **out, hp_diag *d);
void hp_calib_destroy(hp_calib **c);

#endif
