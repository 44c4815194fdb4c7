/* cli_inputs.c -- a plan file names the files it was planned from ("inputs", written by
 * `plan`); commands that read a plan take --model, --cluster, --profile, --gbs, --schedule,
 * --mem-margin and the job's 1.2 fields (--sequence-parallel, --grad-sync, --sharding,
 * --uniform-sharding, --idle-devices, --max-slices, --framework, --compute-model) from it
 * when they are not given.
 * Flags always win; a job file (--job) wins over the plan's gbs and job fields. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The path as written, or relative to the plan file's folder if it is not found from here. */
static const char *resolve(const char *plan, const char *path, char *buf, size_t n)
{
  const char *slash = strrchr(plan, '/');
  if (path[0] == '/' || access(path, R_OK) == 0 || !slash) return path;
  snprintf(buf, n, "%.*s/%s", (int)(slash - plan), plan, path);
  return access(buf, R_OK) == 0 ? buf : path;
}

/* The job's 1.2 fields of the plan's "inputs" where neither a flag nor a job file gives
 * them: the plan is evaluated under the job it was planned for. */
static void job_12(cli_core *o, const hp_plan_info *in)
{
  static char modes[64], slices[16];
  if (!o->job && !o->compute_model && in->compute_model >= 0)
    o->compute_model = hp_compute_model_name((hp_compute_model)in->compute_model);
  if (o->job) return;
  if (!o->sequence_parallel && in->sequence_parallel == 1) o->sequence_parallel = 1;
  if (!o->grad_sync && in->grad_sync >= 0) o->grad_sync = hp_grad_sync_name((hp_grad_sync)in->grad_sync);
  if (!o->sharding && in->sharding) o->sharding = cli_sharding_text(in->sharding, modes, sizeof modes);
  if (!o->uniform_sharding && in->uniform_sharding == 1) o->uniform_sharding = 1;
  if (!o->idle_devices && in->idle_devices == 1) o->idle_devices = 1;
  if (!o->framework && in->framework > 0) o->framework = hp_framework_name(in->framework);
  if (!o->max_slices && in->max_slices > 1) {
    snprintf(slices, sizeof slices, "%d", in->max_slices);
    o->max_slices = slices;
  }
}

int cli_plan_inputs(cli_core *o)
{
  static char model[4096], cluster[4096], profile[4096];
  hp_plan_info in;
  hp_diag d;
  hp_err err;
  int all_files;
  /* with the files and gbs given, only the job's fields are still to take (none with --job) */
  int given = o->model && o->cluster && (o->gbs > 0 || o->job);
  struct stat st;
  /* a plan read from a pipe can be read once: the plan loader's (its own files given) */
  if (!o->plan || (given && (o->job || stat(o->plan, &st) || !S_ISREG(st.st_mode)))) return 0;
  cli_diag_init(&d);
  d.warn = NULL;
  if ((err = hp_plan_info_load(o->plan, &in, &d)) != HP_OK) {
    /* with the files given, the plan loader says why later; without them, say it now
     * (not "missing --model") */
    if (o->model && o->cluster) return 0;
    return -cli_fail(&d, err);
  }
  job_12(o, &in);
  if (given) {
    hp_plan_info_release(&in);
    return 0;
  }
  all_files = !o->model && !o->cluster;
  if (!o->model && in.model) {
    const char *r = resolve(o->plan, in.model, model, sizeof model);
    if (r != model) snprintf(model, sizeof model, "%s", r);
    o->model = model;
  }
  if (!o->cluster && in.cluster) {
    const char *r = resolve(o->plan, in.cluster, cluster, sizeof cluster);
    if (r != cluster) snprintf(cluster, sizeof cluster, "%s", r);
    o->cluster = cluster;
  }
  if (all_files && !o->profile && in.profile) {
    const char *r = resolve(o->plan, in.profile, profile, sizeof profile);
    if (r != profile) snprintf(profile, sizeof profile, "%s", r);
    o->profile = profile;
  }
  if (o->gbs <= 0 && !o->job && in.gbs > 0) o->gbs = in.gbs;
  if (!o->schedule && in.schedule >= 0) o->schedule = hp_schedule_name((hp_schedule)in.schedule);
  if (o->mem_margin < 0 && in.mem_margin > 0) o->mem_margin = in.mem_margin;
  hp_plan_info_release(&in);
  return 1;
}
