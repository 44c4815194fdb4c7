/* hp_calibrate.h -- fitting a cluster to measured runs (`hetplan calibrate`,
 * docs/calibrate.md): a handful of plans run on the user's cluster, their measured
 * iteration times (and peak memory where known); per device type the time parameters of
 * a table (today the efficiency) are fitted by least squares on the log of predicted over
 * measured time, the reserve from the memory residuals, and each run is predicted again
 * by a fit without it (leave-one-out) so that the user knows what the calibration is
 * worth. The library prints nothing; the CLI shows the result. */
#ifndef HP_CALIBRATE_H
#define HP_CALIBRATE_H

#include "hp_error.h"
#include "hp_plan.h"
#include "hp_problem.h"

/* A device-type parameter the time fit may move: its cluster-file key, its bounds (the
 * fit works in log space, so lo > 0) and how to read and set it on a type. The table has
 * the shape of the shape model's (hp_shape.h) so that one can replace the other. */
typedef struct hp_fit_param {
  const char *name;
  double lo, hi;
  double (*get)(const hp_devtype *t);
  void (*set)(hp_devtype *t, double v);
} hp_fit_param;

/* The fittable parameters, in the order the fit takes them up; *n gets the count. */
const hp_fit_param *hp_calib_params(int *n);

/* The time fit's bounds: coordinate descent, golden-section search per parameter over
 * its whole range in log space. */
#define HP_CALIB_MAX_SWEEPS 200     /* sweeps over the parameters */
#define HP_CALIB_GOLDEN_STEPS 80    /* steps of one golden-section search (0.618^80: 1e-17
                                     * of the log range) */

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
  double mem_outside;      /* what "allocated" leaves out: the CUDA context and NCCL's
                            * buffers of the run's framework, bytes (0 for "reserved") */
  int mem_type;            /* calibrated-cluster type of the device of the predicted peak */
  double time_before, time_after, time_loo;   /* predictions, s */
  double mem_before, mem_after, mem_loo;      /* predictions, bytes (NAN without mem) */
  int fits_after;          /* 1 if the plan fits in memory with the fitted figures */
} hp_calib_run;

/* A parameter of a type, before and after. */
typedef struct hp_calib_value {
  int type;                /* index into the calibrated cluster's types */
  const char *param;       /* the cluster-file key ("efficiency", "reserved_gib") */
  double before, after;    /* in the file's units (GiB for reserved_gib) */
  int fitted;              /* 0: left as it was, `why` says why */
  const char *why;
  int runs;                /* the runs that informed it */
} hp_calib_value;

typedef struct hp_calib {
  hp_cluster *cluster;     /* the cluster calibrated (as loaded: figures of the file) */
  char *cluster_path;
  int n_runs;
  hp_calib_run *runs;
  int n_values;
  hp_calib_value *values;  /* time parameters first, then the reserves */
  int sweeps;              /* of the full fit */
  double loo_time_mae, loo_time_worst;   /* relative errors, fractions */
  int loo_time_worst_run;
  int n_mem;               /* runs with measured memory */
  double loo_mem_mae, loo_mem_worst;
  int loo_mem_worst_run;   /* -1 without memory */
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
/* Fits (bounded: HP_CALIB_MAX_SWEEPS) and fills the before/after figures and the
 * leave-one-out errors. Deterministic. */
hp_err hp_calib_fit(hp_calib *c, hp_diag *d);
/* The calibrated cluster file: the input file's JSON with every key kept, the fitted
 * figures replaced, and a "calibrated" block (the runs file's name, `date`, the
 * parameters before and after, the leave-one-out errors). *out is malloc'd. */
hp_err hp_calib_cluster_json(const hp_calib *c, const char *runs_name, const char *date,
                             char **out, hp_diag *d);
/* The fit as JSON (what `calibrate --json` prints): "runs" (measured, before, after,
 * leave-one-out; seconds and GiB), "parameters", "leave_one_out". *out is malloc'd. */
hp_err hp_calib_to_json(const hp_calib *c, char **out, hp_diag *d);
void hp_calib_destroy(hp_calib **c);

#endif
