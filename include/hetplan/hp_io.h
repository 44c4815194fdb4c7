/* hp_io.h -- reading and writing the JSON files of formats.md (model, cluster, profile,
 * job, plan). Every error names the file, the key path (e.g. "layers[3].params") and
 * what was expected; unknown keys are reported through hp_diag.warn. Returned strings
 * are malloc'd and owned by the caller (free). */
#ifndef HP_IO_H
#define HP_IO_H

#include "hp_solver.h"

hp_err hp_model_load(const char *path, hp_model **out, hp_diag *d);
hp_err hp_cluster_load(const char *path, hp_cluster **out, hp_diag *d);
hp_err hp_profile_load(const char *path, hp_profile **out, hp_diag *d);

/* Reads {"gbs": N, "schedule": "1f1b"|"gpipe"} into `job`; keys absent from the file
 * leave `job` as it was. */
hp_err hp_job_load(const char *path, hp_job *job, hp_diag *d);

/* Reads a plan for `prob` (shape and ranges checked here, the rest by
 * hp_plan_validate). Output figures in the file (iteration_time, ...) are ignored. */
hp_err hp_plan_load(const char *path, const hp_problem *prob, hp_plan **out, hp_diag *d);

/* Parses from memory; `name` stands for the file name in messages. */
hp_err hp_model_parse(const char *text, const char *name, hp_model **out, hp_diag *d);
hp_err hp_cluster_parse(const char *text, const char *name, hp_cluster **out, hp_diag *d);
hp_err hp_profile_parse(const char *text, const char *name, hp_profile **out, hp_diag *d);
hp_err hp_job_parse(const char *text, const char *name, hp_job *job, hp_diag *d);
hp_err hp_plan_parse(const char *text, const char *name, const hp_problem *prob,
                     hp_plan **out, hp_diag *d);

/* The explicit layer list of a model as a model file (what `hetplan expand` prints). */
hp_err hp_model_to_json(const hp_model *m, char **out, hp_diag *d);

/* A plan file as formats.md: the plan, the evaluator's figures from `e`, and the
 * solver block from `res` (may be NULL). */
hp_err hp_plan_to_json(const hp_problem *prob, const hp_plan *plan, const hp_eval *e,
                       const hp_result *res, const char *solver_name, char **out,
                       hp_diag *d);

/* The evaluator's breakdown as JSON (what `hetplan evaluate --json` prints). */
hp_err hp_eval_to_json(const hp_problem *prob, const hp_plan *plan, const hp_eval *e,
                       char **out, hp_diag *d);

/* The largest input file read, bytes (64 MiB): a larger one, or one that never ends
 * (/dev/zero), is refused with HP_IO before it is read to the end. docs/limits.md gives
 * what a file of that size may cost in memory. */
#define HP_MAX_FILE_BYTES (64 << 20)

/* Reads a whole file into a NUL-terminated malloc'd buffer: HP_IO if it cannot be read,
 * is a directory or is larger than HP_MAX_FILE_BYTES; HP_PARSE if it holds a NUL byte. */
hp_err hp_read_file(const char *path, char **out, hp_diag *d);

#endif
