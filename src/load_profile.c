/* load_profile.c -- reads a profile (formats.md "Profile"): measured layer times, an
 * optional device bandwidth matrix and collective timings, what the layer kinds were
 * measured for (their shape, checked against the model when the problem is bound), and
 * the informative figures hetplan-profile adds (checked, not cost terms). Device-type
 * names are resolved against the cluster when the problem is bound (problem.c). */
#include <stdlib.h>
#include <string.h>

#include "json_util.h"

static const char *const profile_keys[] = {
  "version", "source", "notes", "device_types", "layer_times", "bandwidth_matrix",
  "collectives", "layer_fits", "collective_fits", "model", "kinds", "gpus",
  "sequence_parallel", "calibrated", NULL };
static const char *const kind_keys[] = {
  "params", "flops", "hidden", "heads", "kv_heads", "ffn", "seq", "dtype", NULL };
static const char *const gpu_keys[] = { "name", "dtype", NULL };
static const char *const time_keys[] = {
  "kind", "type", "tp", "mbs", "seconds",
  "compute_seconds", "tp_comm_seconds", "act_bytes", "work_bytes", "peak_bytes", NULL };
/* Informative per-entry figures: non-negative numbers when present (act_bytes and
 * work_bytes, cost terms since 1.2, are read below). */
static const char *const time_info_keys[] = {
  "compute_seconds", "tp_comm_seconds", "peak_bytes", NULL };
static const char *const coll_keys[] = { "op", "ranks", "bytes", "seconds", NULL };
static const char *const layer_fit_keys[] = {
  "kind", "type", "tp", "fixed_seconds", "per_sample_seconds", "points", NULL };
static const char *const coll_fit_keys[] = { "op", "ranks", "lat_us", "bus_gbps", "points",
                                             NULL };

static hp_err read_times(ju_ctx *c, const cJSON *arr, hp_profile *pr)
{
  int n;
  hp_err err;
  if ((err = ju_array(c, arr, "layer_times", &n))) return err;
  pr->measures = hp__calloc((size_t)n, sizeof *pr->measures);
  if (!pr->measures) return hp_fail(c->d, HP_NOMEM, "out of memory");
  const cJSON *o = arr->child;
  for (int i = 0; i < n; i++, o = o->next) {
    hp_measure *m = &pr->measures[i];
    const char *kind, *type;
    char p[64];
    long tp, mbs;
    ju_index(p, sizeof p, "layer_times", i);
    if ((err = ju_object(c, o, p))) return err;
    ju_unknown_keys(c, o, p, time_keys);
    if ((err = ju_str(c, o, p, "kind", 1, NULL, &kind))) return err;
    if ((err = ju_str(c, o, p, "type", 1, NULL, &type))) return err;
    if ((err = ju_int(c, o, p, "tp", 1, 0, 1, 4096, &tp))) return err;
    if ((err = ju_int(c, o, p, "mbs", 1, 0, 1, 1000000, &mbs))) return err;
    if ((err = ju_num(c, o, p, "seconds", 1, 0, 0, 0, &m->seconds))) return err;
    for (int k = 0; time_info_keys[k]; k++) {
      double info;
      if ((err = ju_num(c, o, p, time_info_keys[k], 0, 0, 0, 0, &info))) return err;
    }
    /* measured memory of one micro-batch on one TP rank (1.2): a cost term where given */
    if (cJSON_GetObjectItemCaseSensitive(o, "act_bytes")) {
      if ((err = ju_num(c, o, p, "act_bytes", 1, 0, 0, 0, &m->act))) return err;
      m->has_act = 1;
    }
    if (cJSON_GetObjectItemCaseSensitive(o, "work_bytes")) {
      if ((err = ju_num(c, o, p, "work_bytes", 1, 0, 0, 0, &m->work))) return err;
      m->has_work = 1;
    }
    m->tp = (int)tp;
    m->mbs = (int)mbs;
    m->type = -1;
    m->kind = hp__strdup(kind);
    m->type_name = hp__strdup(type);
    pr->n_measures++;
    if (!m->kind || !m->type_name) return hp_fail(c->d, HP_NOMEM, "out of memory");
  }
  return HP_OK;
}

static hp_err read_collectives(ju_ctx *c, const cJSON *arr, hp_profile *pr)
{
  int n;
  hp_err err;
  if ((err = ju_array(c, arr, "collectives", &n))) return err;
  const cJSON *o = arr->child;
  for (int i = 0; i < n; i++, o = o->next) {
    const char *op;
    char p[64];
    long ranks;
    double bytes, secs;
    ju_index(p, sizeof p, "collectives", i);
    if ((err = ju_object(c, o, p))) return err;
    ju_unknown_keys(c, o, p, coll_keys);
    if ((err = ju_str(c, o, p, "op", 1, NULL, &op))) return err;
    if ((err = ju_int(c, o, p, "ranks", 1, 0, 1, 1 << 20, &ranks))) return err;
    if ((err = ju_num(c, o, p, "bytes", 1, 0, 0, 0, &bytes))) return err;
    if ((err = ju_num(c, o, p, "seconds", 1, 0, 0, 0, &secs))) return err;
  }
  pr->n_collectives = n;
  return HP_OK;
}

/* layer_fits and collective_fits: what hetplan-profile fitted to its points, kept for
 * people and checked for shape; the planner uses the points themselves. */
static hp_err read_fits(ju_ctx *c, const cJSON *arr, const char *key, int layer)
{
  int n;
  hp_err err;
  if ((err = ju_array(c, arr, key, &n))) return err;
  const cJSON *o = arr->child;
  for (int i = 0; i < n; i++, o = o->next) {
    const char *s;
    char p[64];
    long v;
    double x;
    ju_index(p, sizeof p, key, i);
    if ((err = ju_object(c, o, p))) return err;
    ju_unknown_keys(c, o, p, layer ? layer_fit_keys : coll_fit_keys);
    if (layer) {
      if ((err = ju_str(c, o, p, "kind", 1, NULL, &s))) return err;
      if ((err = ju_str(c, o, p, "type", 1, NULL, &s))) return err;
      if ((err = ju_int(c, o, p, "tp", 1, 0, 1, 4096, &v))) return err;
      if ((err = ju_num(c, o, p, "fixed_seconds", 1, 0, 0, 0, &x))) return err;
      if ((err = ju_num(c, o, p, "per_sample_seconds", 1, 0, 0, 0, &x))) return err;
    } else {
      if ((err = ju_str(c, o, p, "op", 1, NULL, &s))) return err;
      if ((err = ju_int(c, o, p, "ranks", 1, 0, 1, 1 << 20, &v))) return err;
      if ((err = ju_num(c, o, p, "lat_us", 1, 0, 0, 0, &x))) return err;
      if ((err = ju_num(c, o, p, "bus_gbps", 1, 0, 0, 1, &x))) return err;
    }
    if ((err = ju_int(c, o, p, "points", 0, 0, 0, 1 << 20, &v))) return err;
  }
  return HP_OK;
}

static hp_err read_dtype(ju_ctx *c, const cJSON *o, const char *p, int *bytes)
{
  const char *dt;
  hp_err err;
  *bytes = 0;
  if ((err = ju_str(c, o, p, "dtype", 0, NULL, &dt)) || !dt) return err;
  if (hp_dtype_parse(dt) < 0)
    return hp_fail(c->d, HP_PARSE, "%s: %s.dtype: expected \"bf16\", \"fp16\" or \"fp32\", "
                   "got \"%s\"", c->file, p, dt);
  *bytes = hp_dtype_bytes((hp_dtype)hp_dtype_parse(dt));
  return HP_OK;
}

static int by_kind(const void *a, const void *b)
{
  return strcmp(((const hp_profile_kind *)a)->kind, ((const hp_profile_kind *)b)->kind);
}

/* "kinds": kind -> the shape of the layer measured: params and FLOPs per sample, and for
 * a transformer its sizes and element type. */
static hp_err read_kinds(ju_ctx *c, const cJSON *o, hp_profile *pr)
{
  static const char *const sizes[] = { "hidden", "heads", "kv_heads", "ffn", "seq", NULL };
  const cJSON *it;
  hp_err err;
  int n = 0;
  if ((err = ju_object(c, o, "kinds"))) return err;
  cJSON_ArrayForEach(it, o) n++;
  pr->kinds = hp__calloc((size_t)n, sizeof *pr->kinds);
  if (n > 0 && !pr->kinds) return hp_fail(c->d, HP_NOMEM, "out of memory");
  cJSON_ArrayForEach(it, o) {
    hp_profile_kind *k = &pr->kinds[pr->n_kinds];
    char p[256];
    ju_join(p, sizeof p, "kinds", it->string);
    if (!it->string || !*it->string)
      return hp_fail(c->d, HP_PARSE, "%s: kinds: an empty kind name", c->file);
    if ((err = ju_name(c, "kinds", it->string))) return err;
    if ((err = ju_object(c, it, p))) return err;
    ju_unknown_keys(c, it, p, kind_keys);
    if (!(k->kind = hp__strdup(it->string))) return hp_fail(c->d, HP_NOMEM, "out of memory");
    pr->n_kinds++;
    if ((err = ju_num(c, it, p, "params", 0, -1, 0, 0, &k->params))) return err;
    if ((err = ju_num(c, it, p, "flops", 0, -1, 0, 0, &k->flops))) return err;
    int *const dst[] = { &k->hidden, &k->heads, &k->kv_heads, &k->ffn, &k->seq };
    for (int i = 0; sizes[i]; i++) {
      long v;
      if ((err = ju_int(c, it, p, sizes[i], 0, 0, 1, 100000000, &v))) return err;
      *dst[i] = (int)v;
    }
    if ((err = read_dtype(c, it, p, &k->dtype_bytes))) return err;
  }
  qsort(pr->kinds, (size_t)pr->n_kinds, sizeof *pr->kinds, by_kind);
  return HP_OK;
}

/* "gpus": device type -> { name (as the profiler saw it), dtype }: informative, checked
 * for shape and for names without control characters. */
static hp_err read_gpus(ju_ctx *c, const cJSON *o)
{
  const cJSON *it;
  hp_err err;
  if ((err = ju_object(c, o, "gpus"))) return err;
  cJSON_ArrayForEach(it, o) {
    char p[256];
    const char *name;
    int bytes;
    ju_join(p, sizeof p, "gpus", it->string);
    if ((err = ju_name(c, "gpus", it->string))) return err;
    if ((err = ju_object(c, it, p))) return err;
    ju_unknown_keys(c, it, p, gpu_keys);
    if ((err = ju_str(c, it, p, "name", 0, NULL, &name))) return err;
    if ((err = read_dtype(c, it, p, &bytes))) return err;
  }
  return HP_OK;
}

hp_err hp_profile_parse(const char *text, const char *file, hp_profile **out, hp_diag *d)
{
  ju_ctx c = { file, d };
  cJSON *root = NULL;
  hp_profile *pr = NULL;
  const cJSON *v;
  hp_err err;
  int n;

  *out = NULL;
  HP_TRY(ju_parse(&c, text, &root));
  HP_TRY(ju_object(&c, root, ""));
  HP_TRY(ju_version(&c, root));
  ju_unknown_keys(&c, root, "", profile_keys);
  pr = hp__calloc(1, sizeof *pr);
  if (!pr || !(pr->name = hp__strdup(file))) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    goto done;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "device_types"))) {
    HP_TRY(ju_array(&c, v, "device_types", &n));
    const cJSON *s = v->child;
    for (int i = 0; i < n; i++, s = s->next) {
      char p[64];
      ju_index(p, sizeof p, "device_types", i);
      if (!cJSON_IsString(s) || !*s->valuestring) {
        err = ju_expect(&c, p, "a device type name", s);
        goto done;
      }
      HP_TRY(ju_name(&c, p, s->valuestring));
    }
  }
  {
    int sp;
    HP_TRY(ju_bool(&c, root, "", "sequence_parallel", 0, 0, &sp));
    pr->sequence_parallel = sp;
  }
  if (cJSON_GetObjectItemCaseSensitive(root, "model")) {
    const char *model;
    HP_TRY(ju_str(&c, root, "", "model", 1, NULL, &model));
    if (!(pr->model = hp__strdup(model))) {
      err = hp_fail(d, HP_NOMEM, "out of memory");
      goto done;
    }
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "kinds"))) HP_TRY(read_kinds(&c, v, pr));
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "gpus"))) HP_TRY(read_gpus(&c, v));
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "layer_times"))) HP_TRY(read_times(&c, v, pr));
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "bandwidth_matrix")))
    HP_TRY(ju_bw_matrix(&c, v, "bandwidth_matrix", &pr->n_devices, &pr->dev_bw, &pr->dev_lat));
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "collectives")))
    HP_TRY(read_collectives(&c, v, pr));
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "layer_fits")))
    HP_TRY(read_fits(&c, v, "layer_fits", 1));
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "collective_fits")))
    HP_TRY(read_fits(&c, v, "collective_fits", 0));
  *out = pr;
  pr = NULL;
done:
  hp_profile_destroy(&pr);
  cJSON_Delete(root);
  return err;
}

hp_err hp_profile_load(const char *path, hp_profile **out, hp_diag *d)
{
  char *text = NULL;
  hp_err err = hp_read_file(path, &text, d);
  if (!err) err = hp_profile_parse(text, path, out, d);
  if (!err && !((*out)->path = hp__abs_path(path))) {
    hp_profile_destroy(out);
    err = hp_fail(d, HP_NOMEM, "out of memory");
  }
  free(text);
  return err;
}
