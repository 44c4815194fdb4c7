/* cmd_calibrate.c -- `hetplan calibrate`: fits a cluster's per-type time parameters (the
 * shape model's constants, the efficiency) and reserve to iteration times (and peak
 * memory) measured on it, prints each run before and after with the leave-one-out error,
 * and writes the calibrated cluster file (docs/calibrate.md). */
#include <math.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan calibrate [--runs] RUNS.json [--cluster C] [--framework F] [--params LIST] [--json]\n"
  "                         [-o OUT.cluster.json] [--profile-out OUT.profile.json]\n"
  "\n"
  "Fits the cluster to runs measured on it. RUNS.json (docs/formats.md \"Runs\") lists\n"
  "plans that were run and what was measured: {\"runs\": [{\"plan\": \"p.json\",\n"
  "\"iteration_time_s\": 1.23, \"peak_mem_gib\": 40.1, \"memory_kind\": \"reserved\"}]}\n"
  "(peak memory and its kind optional; \"model\", \"cluster\", \"profile\" override the\n"
  "plan's \"inputs\"; paths relative to RUNS.json). Per device type the runs use, it fits\n"
  "the time parameters --params names by least squares on log(predicted / measured) time:\n"
  "default gemm_eff,efficiency,align_eff. gemm_eff and align_eff are the shape model's\n"
  "(a type with a \"shape\" object: transformer layers timed from their GEMMs), the\n"
  "efficiency the FLOPs path's scale (explicit-layer models, types without \"shape\");\n"
  "--params all adds attn_eff, attn_eff64, mem_eff, launch_us, for many runs.\n"
  "profile_scale (default too) multiplies every measured layer time of the type, for runs\n"
  "timed from a profile (nothing above moves those); it is kept at or above the scale that\n"
  "would put a time below its FLOPs at the type's peak, and needs the runs' profiles to be\n"
  "one file. --profile-out writes that profile with the fitted types' seconds scaled and a\n"
  "\"calibrated\" block (-o writes the cluster only). A parameter\n"
  "no run's time depends on (attn_eff under eager attention), one the runs cannot tell\n"
  "from one fitted before it (align_eff when every run is misaligned) and any beyond as\n"
  "many as the runs are left as they were, the reason printed. The reserve (reserved_gib)\n"
  "is the mean memory residual of the runs that give peak memory. It prints each run's\n"
  "predicted time and memory before and after against the measurement, each parameter\n"
  "before -> after (or why it was not fitted), and the leave-one-out error: each run\n"
  "predicted by a fit without it, the mean and the worst: what the calibration is worth on\n"
  "a plan it has not seen. --json prints the same as JSON. -o writes the calibrated\n"
  "cluster: the cluster file with every key kept, the fitted figures replaced (shape\n"
  "constants in the type's \"shape\") and a \"calibrated\" block. --cluster names the\n"
  "cluster to calibrate (default the one the plans were made for); --framework replaces\n"
  "the plans' job framework.\n"
  "\n"
  "Bounds (deterministic, no time limit): one sweep of 80 golden-section steps over each\n"
  "parameter's whole range, then at most 100 Gauss-Newton steps (stop: no parameter moves\n"
  "by 1e-10 in log); each leave-one-out refit starts from the full fit's figures and takes\n"
  "at most 100 Gauss-Newton steps. About (runs x steps x parameters) evaluations: seconds\n"
  "for 66 BLOOM runs.\n"
  "\n"
  "exit codes: 0 done, 3 a bad runs file, plan or cluster (fewer than 2 runs, a time that\n"
  "is not positive, a plan that does not fit the cluster, a type the cluster lacks),\n"
  "2 usage (an unknown --params name), 8 the output cannot be written.\n";

#define GIB 1073741824.0

typedef struct calibrate_opts { const char *runs, *params, *profile_out; int json; } calibrate_opts;

static const cli_flag flags[] = {
  { .name = "runs", .arg = "RUNS.json", CLI_OWN_TEXT(calibrate_opts, runs), .positional = 1,
    .file = CLI_FILE_IN, .help = "the measured runs (docs/formats.md \"Runs\")" },
  CLI_FLAG_CLUSTER, CLI_FLAG_FRAMEWORK,
  { .name = "params", .arg = "LIST", CLI_OWN_TEXT(calibrate_opts, params),
    .help = "the time parameters to fit, comma-separated (default gemm_eff,efficiency,"
            "align_eff; all: every one)" },
  { .name = "json", CLI_OWN_SWITCH(calibrate_opts, json),
    .help = "print the fit as JSON" },
  CLI_FLAG_OUT,
  { .name = "profile-out", .arg = "FILE", CLI_OWN_TEXT(calibrate_opts, profile_out),
    .file = CLI_FILE_OUT,
    .help = "write the calibrated profile (profile_scale fitted: the runs' profile, its "
            "seconds scaled)" },
};

static int check(cli_ctx *c)
{
  const calibrate_opts *o = c->opts;
  unsigned char fit[HP_CALIB_MAX_PARAMS];
  hp_diag d = {0};
  if (!o->runs) return cli_usage_error("calibrate", "missing RUNS.json (the measured runs)");
  if (o->params && hp_calib_parse_params(o->params, fit, &d))
    return cli_usage_error("calibrate", "%s", d.msg);
  return EXIT_OK_;
}

static const char *base(const char *path)
{
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static void print_text(FILE *f, const hp_calib *cb)
{
  fprintf(f, "calibrating %s on %d runs\n\n", cb->cluster_path, cb->n_runs);
  fprintf(f, "%-3s %-28s %10s %10s %8s %10s %8s %8s\n", "run", "plan", "measured_s", "before_s",
          "err", "after_s", "err", "loo_err");
  for (int i = 0; i < cb->n_runs; i++) {
    const hp_calib_run *r = &cb->runs[i];
    fprintf(f, "%-3d %-28.28s %10.4f %10.4f %+7.1f%% %10.4f %+7.1f%% %+7.1f%%\n", i, base(r->plan),
            r->time, r->time_before, 100 * (r->time_before / r->time - 1), r->time_after,
            100 * (r->time_after / r->time - 1), 100 * (r->time_loo / r->time - 1));
  }
  if (cb->n_mem > 0) {
    fprintf(f, "\n%-3s %-28s %12s %10s %8s %10s %8s %8s\n", "run", "plan", "measured_GiB",
            "before", "err", "after", "err", "loo_err");
    for (int i = 0; i < cb->n_runs; i++) {
      const hp_calib_run *r = &cb->runs[i];
      double m = r->mem + r->mem_outside;   /* what the prediction compares with */
      if (r->mem < 0) continue;
      fprintf(f, "%-3d %-28.28s %12.3f %10.3f %+7.1f%% %10.3f %+7.1f%% %+7.1f%%%s\n", i,
              base(r->plan), r->mem / GIB, r->mem_before / GIB, 100 * (r->mem_before / m - 1),
              r->mem_after / GIB, 100 * (r->mem_after / m - 1), 100 * (r->mem_loo / m - 1),
              r->mem_allocated ? "  (allocated: context and NCCL added)" : "");
    }
  }
  fprintf(f, "\nparameters (type, name: before -> after)\n");
  for (int v = 0; v < cb->n_values; v++) {
    const hp_calib_value *cv = &cb->values[v];
    fprintf(f, "  %-12s %-12s %10.6g -> %-10.6g", cb->cluster->types[cv->type].name, cv->param,
            cv->before, cv->after);
    if (cv->fitted) fprintf(f, " fitted on %d run%s\n", cv->runs, cv->runs == 1 ? "" : "s");
    else fprintf(f, " not fitted: %s\n", cv->why);
  }
  fprintf(f, "\nleave-one-out error (each run predicted by a fit without it):\n");
  fprintf(f, "  time:   mean %.1f %%, worst %.1f %% (run %d)\n", 100 * cb->loo_time_mae,
          100 * cb->loo_time_worst, cb->loo_time_worst_run);
  if (cb->n_mem > 0)
    fprintf(f, "  memory: mean %.1f %%, worst %.1f %% (run %d) over %d run%s\n",
            100 * cb->loo_mem_mae, 100 * cb->loo_mem_worst, cb->loo_mem_worst_run, cb->n_mem,
            cb->n_mem == 1 ? "" : "s");
  else fprintf(f, "  memory: no run gives peak memory\n");
  for (int i = 0; i < cb->n_runs; i++)
    if (!cb->runs[i].fits_after)
      fprintf(f, "note: run %d's plan does not fit in memory with the fitted figures\n", i);
}

/* Whether output `out` is a file the runs led calibrate to read (a run's plan, the cluster
 * calibrated, the runs' profile): the flags' own check (cli_check_outputs) sees only files
 * named on the command line, and writing one of these would replace a plan or the measured
 * profile with the calibrated figures. Names it in the message; 1 if so. */
static int overwrites_input(const char *flag, const char *out, const hp_calib *cb)
{
  struct stat so, si;
  const char *what = NULL, *path = NULL;
  if (!out || stat(out, &so) != 0 || !S_ISREG(so.st_mode)) return 0;
  for (int i = 0; i <= cb->n_runs + 2 && !what; i++) {
    const char *q = i < cb->n_runs ? cb->runs[i].plan
                    : i == cb->n_runs ? cb->cluster_path
                    : i == cb->n_runs + 1 ? cb->profile_path : cb->profile_other;
    if (q && stat(q, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
      what = i < cb->n_runs ? "a run's plan" : i == cb->n_runs ? "the cluster calibrated"
             : "the runs' profile";
      path = q;
    }
  }
  if (!what) return 0;
  fprintf(stderr, "hetplan: error: %s '%s' is %s, '%s', which calibrate reads: writing it "
          "would destroy an input (name another file)\n", flag, out, what, path);
  return 1;
}

static int run(cli_ctx *c)
{
  const calibrate_opts *o = c->opts;
  hp_calib *cb = NULL;
  hp_diag d;
  hp_err err;
  int rc = EXIT_OK_;
  char date[32];
  time_t now = time(NULL);
  struct tm tmv;
  cli_diag_init(&d);
  if ((err = hp_calib_load(o->runs, c->core.cluster,
                           c->core.framework ? hp_framework_parse(c->core.framework) : -1, &cb, &d)) ||
      (err = hp_calib_parse_params(o->params, cb->fit, &d)) || (err = hp_calib_fit(cb, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  if (overwrites_input("-o", c->core.out, cb) ||
      overwrites_input("--profile-out", o->profile_out, cb)) {
    rc = EXIT_USAGE;
    goto done;
  }
  if (o->json) {
    char *text = NULL;
    if ((err = hp_calib_to_json(cb, &text, &d))) { rc = cli_fail(&d, err); goto done; }
    fputs(text, stdout);
    fputc('\n', stdout);
    free(text);
  } else {
    print_text(stdout, cb);
  }
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tmv));
  if (c->core.out) {
    char *text = NULL;
    if ((err = hp_calib_cluster_json(cb, o->runs, date, &text, &d))) {
      rc = cli_fail(&d, err);
      goto done;
    }
    rc = cli_write(c->core.out, text);
    free(text);
    if (rc) goto done;
    if (!o->json) fprintf(stderr, "hetplan: calibrated cluster written to %s\n", c->core.out);
  }
  if (o->profile_out && hp_calib_profile_fitted(cb)) {
    char *text = NULL;
    if ((err = hp_calib_profile_json(cb, o->runs, date, &text, &d))) {
      rc = cli_fail(&d, err);
      goto done;
    }
    rc = cli_write(o->profile_out, text);
    free(text);
    if (rc) goto done;
    if (!o->json) fprintf(stderr, "hetplan: calibrated profile written to %s\n", o->profile_out);
  } else if (o->profile_out) {
    fprintf(stderr, "hetplan: note: no profile_scale was fitted (no run's time comes from a "
            "measured profile, or --params leaves it out): %s not written\n", o->profile_out);
  } else if (hp_calib_profile_fitted(cb)) {
    /* the cluster holds no profile scale: without this the fit would be lost unsaid */
    fprintf(stderr, "hetplan: note: profile_scale was fitted but the calibrated cluster does "
            "not hold it: give --profile-out FILE to write the profile %s scaled\n",
            cb->profile_path);
  }
done:
  hp_calib_destroy(&cb);
  return rc;
}

const cli_cmd cli_cmd_calibrate = {
  .name = "calibrate",
  .summary = "fit a cluster's efficiencies and reserve to measured runs, with the\n"
             "leave-one-out error",
  .help = help,
  CLI_FLAGS(flags),
  .opts_size = sizeof(calibrate_opts),
  .steps = 0,
  .check = check,
  .run = run,
};
