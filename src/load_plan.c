/* load_plan.c -- reads a plan file (formats.md "Plan") and a job file for a bound
 * problem. Shapes and ranges are checked here with the key path; the rules that hold
 * for any plan (bijection, TP groups inside nodes, ...) by hp_plan_validate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"

static const char *const plan_keys[] = {
  "version", "pp", "tp", "dp", "mbs", "gas", "schedule", "stages", "sharding", "slices", "idle",
  "iteration_time", "throughput", "mfu", "peak_memory", "solver", "cost_model", "source",
  "notes",
  /* written by hetplan itself (plan files and `evaluate --json`): read back silently */
  "feasible", "gbs", "pipeline_time", "sync_time", "bottleneck", "out_of_memory",
  "replica_time", "stage_breakdown", "profile_coverage", "inputs", NULL };
static const char *const stage_keys[] = { "layers", "recompute", "devices", NULL };
static const char *const job_keys[] = { "version", "gbs", "schedule", "accept_profile_mismatch",
                                         "sequence_parallel", "grad_sync", "sharding",
                                         "uniform_sharding", "idle_devices", "max_slices",
                                         "framework", "compute_model", "source", "notes", NULL };

static hp_err read_stage(ju_ctx *c, const cJSON *o, int s, hp_plan *pl, int n_devices,
                         int *last)
{
  char p[64], q[96];
  const cJSON *ly, *dv;
  int n, rec;
  hp_err err;
  ju_index(p, sizeof p, "stages", s);
  if ((err = ju_object(c, o, p))) return err;
  ju_unknown_keys(c, o, p, stage_keys);
  ju_join(q, sizeof q, p, "layers");
  ly = cJSON_GetObjectItemCaseSensitive(o, "layers");
  if (!ly) return hp_fail(c->d, HP_PARSE, "%s: %s: missing: expected [first, last]", c->file, q);
  if ((err = ju_array(c, ly, q, &n))) return err;
  if (n != 2) return ju_expect(c, q, "an inclusive pair [first, last] of layer indices", ly);
  long pair[2];
  const cJSON *v = ly->child;
  for (int i = 0; i < 2; i++, v = v->next) {
    char r[112];
    snprintf(r, sizeof r, "%s[%d]", q, i);
    if (!ju_int_value(v, 0, pl->n_layers - 1, &pair[i])) {
      char what[64];
      snprintf(what, sizeof what, "a layer index in 0..%d", pl->n_layers - 1);
      return ju_expect(c, r, what, v);
    }
  }
  pl->first[s] = (int)pair[0];
  *last = (int)pair[1];
  if (*last < pl->first[s])
    return hp_fail(c->d, HP_PARSE, "%s: %s: [%d, %d] is empty: last must be >= first", c->file,
                   q, pl->first[s], *last);
  if ((err = ju_bool(c, o, p, "recompute", 0, 0, &rec))) return err;
  pl->recompute[s] = (unsigned char)rec;
  ju_join(q, sizeof q, p, "devices");
  dv = cJSON_GetObjectItemCaseSensitive(o, "devices");
  if (!dv) return hp_fail(c->d, HP_PARSE, "%s: %s: missing: expected %d replica(s) of %d device id(s)",
                          c->file, q, pl->dp, pl->tp);
  if ((err = ju_array(c, dv, q, &n))) return err;
  if (n != pl->dp)
    return hp_fail(c->d, HP_PARSE, "%s: %s: expected dp = %d replicas, got %d", c->file, q,
                   pl->dp, n);
  const cJSON *row = dv->child;
  for (int r = 0; r < pl->dp; r++, row = row->next) {
    char rp[112];
    snprintf(rp, sizeof rp, "%s[%d]", q, r);
    if ((err = ju_array(c, row, rp, &n))) return err;
    if (n != pl->tp)
      return hp_fail(c->d, HP_PARSE, "%s: %s: expected tp = %d device ids, got %d", c->file, rp,
                     pl->tp, n);
    v = row->child;
    for (int j = 0; j < pl->tp; j++, v = v->next) {
      char jp[128], what[64];
      long id;
      snprintf(jp, sizeof jp, "%s[%d]", rp, j);
      snprintf(what, sizeof what, "a device id in 0..%d", n_devices - 1);
      if (!ju_int_value(v, 0, n_devices - 1, &id)) return ju_expect(c, jp, what, v);
      pl->dev[HP_SLOT(pl, s, r, j)] = (int)id;
    }
  }
  return HP_OK;
}

static hp_err read_sharding(ju_ctx *c, const cJSON *arr, hp_plan *pl)
{
  int n;
  hp_err err;
  if ((err = ju_array(c, arr, "sharding", &n))) return err;
  if (n != pl->n_layers)
    return hp_fail(c->d, HP_PARSE, "%s: sharding: expected one mode per layer (%d), got %d",
                   c->file, pl->n_layers, n);
  const cJSON *v = arr->child;
  for (int l = 0; l < n; l++, v = v->next) {
    char p[64];
    ju_index(p, sizeof p, "sharding", l);
    int m = cJSON_IsString(v) ? hp_shard_parse(v->valuestring) : -1;
    if (m < 0) return ju_expect(c, p, "\"dp\", \"zero1\", \"zero2\" or \"zdp\" (\"zero3\")", v);
    pl->mode[l] = (unsigned char)m;
  }
  return HP_OK;
}

/* "slices": one g_l per layer, each a power of two (the job's bounds: hp_plan_validate). */
static hp_err read_slices(ju_ctx *c, const cJSON *arr, hp_plan *pl)
{
  int n;
  hp_err err;
  if ((err = ju_array(c, arr, "slices", &n))) return err;
  if (n != pl->n_layers)
    return hp_fail(c->d, HP_PARSE, "%s: slices: expected one slice count per layer (%d), got %d",
                   c->file, pl->n_layers, n);
  const cJSON *v = arr->child;
  for (int l = 0; l < n; l++, v = v->next) {
    char p[64];
    int k = 0;
    ju_index(p, sizeof p, "slices", l);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1) || v->valuedouble > 1 << 30 ||
        v->valuedouble != (double)(long)v->valuedouble)
      return ju_expect(c, p, "a power of two >= 1", v);
    while ((1L << k) < (long)v->valuedouble) k++;
    if ((1L << k) != (long)v->valuedouble)     /* a plan the model refuses (7.17), not a bad file */
      return hp_fail(c->d, HP_PLAN, "plan: %s is %ld: a zdp layer is gathered in a power of two "
                     "of slices (1, 2, 4, ...)", p, (long)v->valuedouble);
    pl->slices[l] = (unsigned char)k;
  }
  return HP_OK;
}

/* "idle": the devices no slot names, checked when given (formats.md "Plan"). */
static hp_err check_idle(ju_ctx *c, const cJSON *arr, const hp_plan *pl, int D)
{
  int n, used = pl->pp * pl->dp * pl->tp;
  hp_err err;
  unsigned char *in = NULL;
  if ((err = ju_array(c, arr, "idle", &n))) return err;
  if (n != D - used)
    return hp_fail(c->d, HP_PLAN, "%s: idle: lists %d devices but the plan leaves %d of %d idle",
                   c->file, n, D - used, D);
  if (!(in = hp__calloc((size_t)D, 1))) return hp_fail(c->d, HP_NOMEM, "out of memory");
  for (int i = 0; i < used; i++)
    if (pl->dev[i] >= 0 && pl->dev[i] < D) in[pl->dev[i]] = 1;
  const cJSON *v = arr->child;
  for (int i = 0; i < n; i++, v = v->next) {
    char p[64];
    ju_index(p, sizeof p, "idle", i);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= D ||
        v->valuedouble != (double)(int)v->valuedouble) {
      free(in);
      return ju_expect(c, p, "a device id", v);
    }
    if (in[(int)v->valuedouble]) {
      free(in);
      return hp_fail(c->d, HP_PLAN, "%s: %s: device %d is named by a slot or listed twice: "
                     "idle lists the devices no slot names", c->file, p, (int)v->valuedouble);
    }
    in[(int)v->valuedouble] = 1;
  }
  free(in);
  return HP_OK;
}

hp_err hp_plan_parse(const char *text, const char *file, const hp_problem *prob,
                     hp_plan **out, hp_diag *d)
{
  ju_ctx c = { file, d };
  cJSON *root = NULL;
  hp_plan *pl = NULL;
  const cJSON *stages, *v;
  const char *sched;
  long pp, tp, dp, mbs, gas;
  int n, D = prob->cluster->n_devices;
  hp_err err;

  *out = NULL;
  HP_TRY(ju_parse(&c, text, &root));
  HP_TRY(ju_object(&c, root, ""));
  HP_TRY(ju_version(&c, root));
  ju_unknown_keys(&c, root, "", plan_keys);
  HP_TRY(hp__plan_names(&c, root));
  HP_TRY(ju_int(&c, root, "", "pp", 1, 0, 1, D, &pp));
  HP_TRY(ju_int(&c, root, "", "tp", 1, 0, 1, D, &tp));
  HP_TRY(ju_int(&c, root, "", "dp", 1, 0, 1, D, &dp));
  HP_TRY(ju_int(&c, root, "", "mbs", 1, 0, 1, HP_MAX_MBS, &mbs));
  HP_TRY(ju_int(&c, root, "", "gas", 0, 0, 1, 1L << 40, &gas));
  HP_TRY(ju_str(&c, root, "", "schedule", 0, hp_schedule_name(prob->job.schedule), &sched));
  if (hp_schedule_parse(sched) < 0) {
    err = hp_fail(d, HP_PARSE, "%s: schedule: expected \"1f1b\" or \"gpipe\", got \"%s\"", file,
                  sched);
    goto done;
  }
  if (prob->job.idle_devices ? pp * tp * dp > D : pp * tp * dp != D) {
    err = hp_fail(d, HP_PLAN, "%s: pp * tp * dp = %ld * %ld * %ld = %ld but cluster '%s' has %d "
                  "devices%s", file, pp, tp, dp, pp * tp * dp, prob->cluster->name, D,
                  prob->job.idle_devices || pp * tp * dp > D ? "" :
                  " (a plan may leave devices idle only under a job with idle_devices: "
                  "--idle-devices)");
    goto done;
  }
  HP_TRY(hp_plan_create(&pl, (int)pp, (int)tp, (int)dp, prob->model->n_layers, d));
  pl->mbs = (int)mbs;
  pl->schedule = (hp_schedule)hp_schedule_parse(sched);
  if (prob->job.gbs % (dp * mbs) != 0) {
    err = hp_fail(d, HP_PLAN, "%s: mbs: gbs %ld is not a multiple of dp * mbs = %ld * %ld, so "
                  "gas would not be an integer", file, prob->job.gbs, dp, mbs);
    goto done;
  }
  pl->gas = prob->job.gbs / (dp * mbs);
  if (cJSON_GetObjectItemCaseSensitive(root, "gas") && gas != pl->gas) {
    err = hp_fail(d, HP_PLAN, "%s: gas: %ld but gbs / (dp * mbs) = %ld / (%ld * %ld) = %ld",
                  file, gas, prob->job.gbs, dp, mbs, pl->gas);
    goto done;
  }
  stages = cJSON_GetObjectItemCaseSensitive(root, "stages");
  if (!stages) {
    err = hp_fail(d, HP_PARSE, "%s: stages: missing: expected pp = %ld stages", file, pp);
    goto done;
  }
  HP_TRY(ju_array(&c, stages, "stages", &n));
  if (n != pp) {
    err = hp_fail(d, HP_PARSE, "%s: stages: expected pp = %ld stages, got %d", file, pp, n);
    goto done;
  }
  const cJSON *st = stages->child;
  for (int s = 0, prev_last = -1; s < pp; s++, st = st->next) {
    int last = -1;
    HP_TRY(read_stage(&c, st, s, pl, D, &last));
    if (pl->first[s] != prev_last + 1) {
      if (s == 0)
        err = hp_fail(d, HP_PLAN, "%s: stages[0].layers: starts at layer %d: the first stage "
                      "must start at layer 0", file, pl->first[s]);
      else
        err = hp_fail(d, HP_PLAN, "%s: stages[%d].layers: starts at layer %d but stages[%d] ends "
                      "at layer %d: stages must be contiguous and in order", file, s,
                      pl->first[s], s - 1, prev_last);
      goto done;
    }
    prev_last = last;
    if (s == pp - 1 && last != pl->n_layers - 1) {
      err = hp_fail(d, HP_PLAN, "%s: stages[%d].layers: ends at layer %d but the model's last "
                    "layer is %d", file, s, last, pl->n_layers - 1);
      goto done;
    }
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "sharding"))) HP_TRY(read_sharding(&c, v, pl));
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "slices"))) HP_TRY(read_slices(&c, v, pl));
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "idle"))) HP_TRY(check_idle(&c, v, pl, D));
  *out = pl;
  pl = NULL;
done:
  hp_plan_destroy(&pl);
  cJSON_Delete(root);
  return err;
}

hp_err hp_plan_load(const char *path, const hp_problem *prob, hp_plan **out, hp_diag *d)
{
  char *text = NULL;
  hp_err err = hp_read_file(path, &text, d);
  if (!err) err = hp_plan_parse(text, path, prob, out, d);
  free(text);
  return err;
}

/* The job's 1.2 fields (formats.md "Job"); each keeps the job's value when absent. */
static hp_err read_job_12(ju_ctx *c, const cJSON *root, hp_job *job)
{
  const char *gs;
  const cJSON *v;
  long slices;
  int sp, uni, idle;
  hp_err err;
  if ((err = ju_bool(c, root, "", "sequence_parallel", 0, job->sequence_parallel, &sp))) return err;
  if ((err = ju_bool(c, root, "", "uniform_sharding", 0, job->uniform_sharding, &uni))) return err;
  if ((err = ju_bool(c, root, "", "idle_devices", 0, job->idle_devices, &idle))) return err;
  if ((err = ju_str(c, root, "", "grad_sync", 0, hp_grad_sync_name(job->grad_sync), &gs))) return err;
  if (hp_grad_sync_parse(gs) < 0)
    return hp_fail(c->d, HP_PARSE, "%s: grad_sync: expected \"end\" or \"overlap\", got \"%s\"",
                   c->file, gs);
  {
    const char *cm;
    if ((err = ju_str(c, root, "", "compute_model", 0,
                      hp_compute_model_name((hp_compute_model)job->compute_model), &cm))) return err;
    if (hp_compute_model_parse(cm) < 0)
      return hp_fail(c->d, HP_PARSE, "%s: compute_model: expected \"shape\" or \"flops\", got "
                     "\"%s\"", c->file, cm);
    job->compute_model = hp_compute_model_parse(cm);
  }
  if ((err = ju_int(c, root, "", "max_slices", 0, hp_job_max_slices(job), 1, 1 << 20, &slices)))
    return err;
  {
    const char *fw;
    if ((err = ju_str(c, root, "", "framework", 0, hp_framework_name(job->framework), &fw)))
      return err;
    if (hp_framework_parse(fw) < 0)
      return hp_fail(c->d, HP_PARSE, "%s: framework: expected \"none\", \"megatron\", "
                     "\"deepspeed\" or \"fsdp\", got \"%s\"", c->file, fw);
    job->framework = hp_framework_parse(fw);
  }
  if (slices & (slices - 1))
    return hp_fail(c->d, HP_PARSE, "%s: max_slices: %ld is not a power of two (1, 2, 4, ...)",
                   c->file, slices);
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "sharding"))) {
    unsigned mask = 0;
    int n;
    if ((err = ju_array(c, v, "sharding", &n))) return err;
    if (n == 0)
      return hp_fail(c->d, HP_PARSE, "%s: sharding: empty: list the modes plans may use, of "
                     "\"dp\", \"zero1\", \"zero2\", \"zdp\"", c->file);
    const cJSON *it = v->child;
    for (int i = 0; i < n; i++, it = it->next) {
      char p[64];
      int m = cJSON_IsString(it) ? hp_shard_parse(it->valuestring) : -1;
      ju_index(p, sizeof p, "sharding", i);
      if (m < 0) return ju_expect(c, p, "\"dp\", \"zero1\", \"zero2\" or \"zdp\" (\"zero3\")", it);
      mask |= 1u << m;
    }
    job->sharding = mask;
  }
  job->sequence_parallel = sp;
  job->uniform_sharding = uni;
  job->idle_devices = idle;
  job->grad_sync = (hp_grad_sync)hp_grad_sync_parse(gs);
  job->max_slices = (int)slices;
  return HP_OK;
}

hp_err hp_job_parse(const char *text, const char *file, hp_job *job, hp_diag *d)
{
  ju_ctx c = { file, d };
  cJSON *root = NULL;
  const char *sched;
  long gbs;
  int accept;
  hp_err err;
  HP_TRY(ju_parse(&c, text, &root));
  HP_TRY(ju_object(&c, root, ""));
  HP_TRY(ju_version(&c, root));
  ju_unknown_keys(&c, root, "", job_keys);
  HP_TRY(ju_int(&c, root, "", "gbs", 0, job->gbs, 1, HP_MAX_GBS, &gbs));
  HP_TRY(ju_bool(&c, root, "", "accept_profile_mismatch", 0, job->accept_profile_mismatch,
                 &accept));
  HP_TRY(ju_str(&c, root, "", "schedule", 0, hp_schedule_name(job->schedule), &sched));
  if (hp_schedule_parse(sched) < 0) {
    err = hp_fail(d, HP_PARSE, "%s: schedule: expected \"1f1b\" or \"gpipe\", got \"%s\"", file,
                  sched);
    goto done;
  }
  job->gbs = gbs;
  job->schedule = (hp_schedule)hp_schedule_parse(sched);
  job->accept_profile_mismatch = accept;
  HP_TRY(read_job_12(&c, root, job));
done:
  cJSON_Delete(root);
  return err;
}

hp_err hp_job_load(const char *path, hp_job *job, hp_diag *d)
{
  char *text = NULL;
  hp_err err = hp_read_file(path, &text, d);
  if (!err) err = hp_job_parse(text, path, job, d);
  free(text);
  return err;
}
