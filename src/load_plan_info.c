/* load_plan_info.c -- what a plan file says beyond the plan: the "inputs" block (where
 * its model, cluster and profile came from; gbs, schedule, margin, the job's 1.2 fields)
 * and the "solver" block
 * (who found it, its status, the space searched and the proved bound). Commands that
 * read a plan take their missing flags from here; `report` shows the bound. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"

static const char *str_of(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A boolean key: 0 or 1, -1 when absent or not a boolean. */
static int bool_of(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

static double num_of(const cJSON *o, const char *key, double def)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : def;
}

hp_err hp__plan_names(ju_ctx *c, const cJSON *root)
{
  static const char *const blocks[] = { "inputs", "solver", NULL };
  static const char *const keys[] = { "model", "cluster", "profile", "schedule", "name",
                                      "status", "space", "grad_sync", "framework",
                                      "compute_model", NULL };
  hp_err err;
  for (int b = 0; blocks[b]; b++) {
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, blocks[b]);
    if (!cJSON_IsObject(o)) continue;
    for (int k = 0; keys[k]; k++) {
      char p[64];
      ju_join(p, sizeof p, blocks[b], keys[k]);
      if ((err = ju_name(c, p, str_of(o, keys[k])))) return err;
    }
  }
  return HP_OK;
}

/* The job's 1.2 fields of "inputs" (write_json.c add_inputs); a value out of range is
 * taken as absent, as gbs is. */
static void read_job_12(const cJSON *ip, hp_plan_info *in)
{
  const char *gs = str_of(ip, "grad_sync");
  const cJSON *modes = cJSON_GetObjectItemCaseSensitive(ip, "sharding"), *it;
  double slices = num_of(ip, "max_slices", -1);
  in->has_inputs = 1;
  in->sequence_parallel = bool_of(ip, "sequence_parallel");
  in->uniform_sharding = bool_of(ip, "uniform_sharding");
  in->idle_devices = bool_of(ip, "idle_devices");
  in->grad_sync = gs ? hp_grad_sync_parse(gs) : -1;
  in->framework = str_of(ip, "framework") ? hp_framework_parse(str_of(ip, "framework")) : -1;
  in->compute_model = hp_compute_model_parse(str_of(ip, "compute_model"));
  if (slices >= 1 && slices <= (1 << 20) && slices == floor(slices) &&
      ((long)slices & ((long)slices - 1)) == 0)
    in->max_slices = (int)slices;
  if (cJSON_IsArray(modes)) {
    unsigned mask = 0;
    int bad = 0;
    cJSON_ArrayForEach(it, modes) {
      int m = cJSON_IsString(it) ? hp_shard_parse(it->valuestring) : -1;
      if (m < 0) bad = 1;
      else mask |= 1u << m;
    }
    in->sharding = bad ? 0 : mask;
  }
}

void hp_plan_info_release(hp_plan_info *in)
{
  if (!in) return;
  free(in->model);
  free(in->cluster);
  free(in->profile);
  memset(in, 0, sizeof *in);
}

hp_err hp_plan_info_parse(const char *text, const char *file, hp_plan_info *in, hp_diag *d)
{
  ju_ctx c = { file, d };
  cJSON *root = NULL;
  const cJSON *ip, *sv;
  hp_err err;
  memset(in, 0, sizeof *in);
  in->schedule = -1;
  in->mem_margin = -1;
  in->sequence_parallel = in->grad_sync = in->uniform_sharding = in->idle_devices = -1;
  in->max_slices = -1;
  in->framework = -1;
  in->compute_model = -1;
  in->lower_bound = NAN;
  HP_TRY(ju_parse(&c, text, &root));
  HP_TRY(ju_object(&c, root, ""));
  HP_TRY(hp__plan_names(&c, root));
  ip = cJSON_GetObjectItemCaseSensitive(root, "inputs");
  if (cJSON_IsObject(ip)) {
    const char *m = str_of(ip, "model"), *cl = str_of(ip, "cluster"), *pr = str_of(ip, "profile");
    const char *sch = str_of(ip, "schedule");
    double g = num_of(ip, "gbs", 0);
    in->model = hp__strdup(m);
    in->cluster = hp__strdup(cl);
    in->profile = hp__strdup(pr);
    if ((m && !in->model) || (cl && !in->cluster) || (pr && !in->profile)) {
      err = hp_fail(d, HP_NOMEM, "out of memory");
      goto done;
    }
    if (g >= 1 && g == floor(g) && g < 1e15) in->gbs = (long)g;
    if (sch) in->schedule = hp_schedule_parse(sch);
    in->mem_margin = num_of(ip, "mem_margin", -1);
    if (!(in->mem_margin >= 0 && in->mem_margin < 1)) in->mem_margin = -1;
    read_job_12(ip, in);
  }
  sv = cJSON_GetObjectItemCaseSensitive(root, "solver");
  if (cJSON_IsObject(sv)) {
    const char *name = str_of(sv, "name"), *st = str_of(sv, "status"), *sp = str_of(sv, "space");
    in->has_solver = 1;
    snprintf(in->solver, sizeof in->solver, "%s", name ? name : "unknown");
    snprintf(in->status, sizeof in->status, "%s", st ? st : "");
    snprintf(in->space, sizeof in->space, "%s", sp ? sp : "");
    in->lower_bound = num_of(sv, "lower_bound", NAN);
  }
  err = HP_OK;
done:
  cJSON_Delete(root);
  if (err) hp_plan_info_release(in);
  return err;
}

hp_err hp_plan_info_load(const char *path, hp_plan_info *in, hp_diag *d)
{
  char *text = NULL;
  hp_err err = hp_read_file(path, &text, d);
  memset(in, 0, sizeof *in);
  if (!err) err = hp_plan_info_parse(text, path, in, d);
  free(text);
  return err;
}
