/* calibrate.c -- fits a cluster's per-type time parameters (the shape model's constants,
 * the FLOPs path's efficiency) and reserve to measured runs (hp_calibrate.h,
 * docs/calibrate.md): least squares on log(predicted / measured), a golden-section sweep
 * then damped Gauss-Newton, bounded; the reserve as the mean memory residual (clamped at
 * 0); leave-one-out refits, warm-started, for what the fit is worth. Every prediction is
 * the evaluator's (hp_evaluate), the shape series recomputed after a constant changes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_util.h"

#define GIB 1073741824.0

/* log space needs lo > 0: a constant whose range starts at 0 (launch_us) is searched from
 * this much of a unit up */
#define LOG_FLOOR 1e-2

static hp_fit_param shape_row(const hp_shape_param *q, int by_default)
{
  return (hp_fit_param){ q->name, q->lo > LOG_FLOOR ? q->lo : LOG_FLOOR, q->hi, q, by_default, 0 };
}

/* gemm_eff and the efficiency first: each is a type's overall scale (the shape model's,
 * the FLOPs path's), and with few runs the fit takes up parameters in this order; then
 * align_eff, which the BLOOM sweep shows matters (hidden 14400 against 14336); then the
 * shape model's other fittable constants in its table's order, fitted only when named. */
int hp_calib_params(hp_fit_param *out)
{
  int ns, n = 0;
  const hp_shape_param *q = hp_shape_params(&ns);
  const hp_shape_param *g = hp_shape_param_find("gemm_eff"), *a = hp_shape_param_find("align_eff");
  out[n++] = shape_row(g, 1);
  out[n++] = (hp_fit_param){ "efficiency", 0.01, 1.0, NULL, 1, 0 };
  out[n++] = shape_row(a, 1);
  for (int i = 0; i < ns && n < HP_CALIB_MAX_PARAMS - 1; i++)
    if (q[i].fittable && &q[i] != g && &q[i] != a) out[n++] = shape_row(&q[i], 0);
  /* last: the runs scored from a profile move with nothing above (Aceso's runtime runs
   * 1.08x the Sailor profile it is scored with); [0.25, 4]: a profile off by more is a
   * profile of other hardware or software, to re-measure */
  out[n++] = (hp_fit_param){ "profile_scale", 0.25, 4.0, NULL, 1, 1 };
  return n;
}

double hp_calib_param_get(const hp_fit_param *q, const hp_devtype *t)
{
  if (q->measured) return 1;
  return q->shape ? hp_shape_get(&t->shape, q->shape) : t->eff;
}

void hp_calib_param_set(const hp_fit_param *q, hp_devtype *t, double v)
{
  if (q->measured) return;
  if (q->shape) hp_shape_set(&t->shape, q->shape, v);
  else t->eff = v;
}

hp_err hp_calib_parse_params(const char *list, unsigned char *fit, hp_diag *d)
{
  hp_fit_param t[HP_CALIB_MAX_PARAMS];
  int n = hp_calib_params(t), any = 0;
  char names[256] = "", tok[64];
  size_t len = 0;
  memset(fit, 0, HP_CALIB_MAX_PARAMS);
  for (int i = 0; i < n; i++) {
    fit[i] = list ? 0 : t[i].by_default ? 2 : 0;
    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", t[i].name);
    if (len >= sizeof names) len = sizeof names - 1;
  }
  if (!list) return HP_OK;
  if (!strcmp(list, "all")) {
    memset(fit, 1, (size_t)n);
    return HP_OK;
  }
  for (const char *s = list; *s;) {
    size_t k = strcspn(s, ",");
    int found = -1;
    while (k > 0 && *s == ' ') { s++; k--; }
    while (k > 0 && s[k - 1] == ' ') k--;
    snprintf(tok, sizeof tok, "%.*s", (int)k, s);
    for (int i = 0; i < n && found < 0; i++)
      if (!strcmp(t[i].name, tok)) found = i;
    if (found < 0) {
      const hp_shape_param *q = hp_shape_param_find(tok);
      if (q && !q->fittable)
        return hp_fail(d, HP_INVAL, "--params %s: %s is a datasheet or kernel-design figure of "
                       "the shape model, not fitted: set it in the type's \"shape\" object; "
                       "expected names of: %s (or all)", list, tok, names);
      return hp_fail(d, HP_INVAL, "--params %s: '%s' is not a parameter calibrate fits: "
                     "expected a comma-separated list of: %s (or all)", list, tok, names);
    }
    fit[found] = 1;
    any = 1;
    s += strcspn(s, ",");
    if (*s == ',') s++;
  }
  if (!any)
    return hp_fail(d, HP_INVAL, "--params: an empty list: expected names of: %s (or all)", names);
  return HP_OK;
}

static const char *const run_keys[] = { "plan", "iteration_time_s", "peak_mem_gib",
  "memory_kind", "model", "cluster", "profile", "source", "notes", NULL };
static const char *const root_keys[] = { "version", "runs", "source", "notes", NULL };

/* `path` as written if absolute or found from here, else relative to `base`'s folder. */
static char *resolve(const char *base, const char *path)
{
  const char *slash = strrchr(base, '/');
  char *buf;
  size_t n;
  if (path[0] == '/' || !slash || access(path, R_OK) == 0) return hp__strdup(path);
  n = (size_t)(slash - base) + strlen(path) + 2;
  if (!(buf = malloc(n))) return NULL;
  snprintf(buf, n, "%.*s/%s", (int)(slash - base), base, path);
  if (access(buf, R_OK) != 0) {
    free(buf);
    return hp__strdup(path);
  }
  return buf;
}

/* A file named by the run ("model" etc., relative to the runs file), else by the plan's
 * inputs (relative to the plan), else NULL. */
static char *pick(const cJSON *run, const char *key, const char *runs_path, const char *plan,
                  const char *from_plan)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(run, key);
  if (cJSON_IsString(v) && v->valuestring[0]) return resolve(runs_path, v->valuestring);
  return from_plan ? resolve(plan, from_plan) : NULL;
}

/* The job a plan was planned under (its "inputs"), as cli_inputs.c reads it. */
static hp_job job_of(const hp_plan_info *in, int framework)
{
  hp_job j = { .gbs = in->gbs, .schedule = in->schedule >= 0 ? (hp_schedule)in->schedule : HP_1F1B };
  j.sequence_parallel = in->sequence_parallel == 1;
  if (in->grad_sync >= 0) j.grad_sync = (hp_grad_sync)in->grad_sync;
  j.sharding = in->sharding;
  j.uniform_sharding = in->uniform_sharding == 1;
  j.idle_devices = in->idle_devices == 1;
  j.max_slices = in->max_slices > 1 ? in->max_slices : 0;
  j.framework = framework >= 0 ? framework : in->framework > 0 ? in->framework : HP_FW_NONE;
  return j;
}

static int type_index(const hp_cluster *c, const char *name)
{
  for (int k = 0; k < c->n_types; k++)
    if (!strcmp(c->types[k].name, name)) return k;
  return -1;
}

/* Loads run i: its plan's inputs, the problem, the plan (validated), the type map. */
static hp_err load_run(ju_ctx *jc, const cJSON *o, int i, const char *cluster_path,
                       int framework, hp_calib *c, hp_diag *d)
{
  hp_calib_run *r = &c->runs[i];
  char p[64], *model = NULL, *cluster = NULL, *profile = NULL;
  const char *plan, *kind;
  double gib;
  hp_plan_info in;
  hp_model *m = NULL;
  hp_cluster *cl = NULL;
  hp_profile *pr = NULL;
  hp_err err;
  memset(&in, 0, sizeof in);
  ju_index(p, sizeof p, "runs", i);
  r->mem = -1;
  r->mem_before = r->mem_after = r->mem_loo = NAN;
  if ((err = ju_object(jc, o, p))) return err;
  ju_unknown_keys(jc, o, p, run_keys);
  if ((err = ju_str(jc, o, p, "plan", 1, NULL, &plan))) return err;
  if ((err = ju_num(jc, o, p, "iteration_time_s", 1, 0, 0, 1, &r->time))) return err;
  if ((err = ju_num(jc, o, p, "peak_mem_gib", 0, -1, 0, 1, &gib)) &&
      cJSON_GetObjectItemCaseSensitive(o, "peak_mem_gib"))
    return err;
  if (cJSON_GetObjectItemCaseSensitive(o, "peak_mem_gib")) r->mem = gib * GIB;
  if ((err = ju_str(jc, o, p, "memory_kind", 0, "reserved", &kind))) return err;
  if (strcmp(kind, "reserved") && strcmp(kind, "allocated"))
    return hp_fail(d, HP_PARSE, "%s: %s.memory_kind: expected \"reserved\" (nvidia-smi, "
                   "max_memory_reserved) or \"allocated\" (max_memory_allocated), got \"%s\"",
                   jc->file, p, kind);
  r->mem_allocated = !strcmp(kind, "allocated");
  if (!(r->plan = resolve(jc->file, plan))) return hp_fail(d, HP_NOMEM, "out of memory");
  if ((err = hp_plan_info_load(r->plan, &in, d))) return err;
  model = pick(o, "model", jc->file, r->plan, in.model);
  cluster = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "cluster")) || !cluster_path
            ? pick(o, "cluster", jc->file, r->plan, in.cluster) : hp__strdup(cluster_path);
  profile = pick(o, "profile", jc->file, r->plan, in.profile);
  if (!model || !cluster) {
    err = hp_fail(d, HP_PARSE, "%s: %s: plan '%s' names no %s in its \"inputs\": give the "
                  "run a \"%s\"", jc->file, p, r->plan, model ? "cluster" : "model",
                  model ? "cluster" : "model");
    goto done;
  }
  if (in.gbs <= 0) {
    err = hp_fail(d, HP_PARSE, "%s: %s: plan '%s' has no \"inputs\".gbs: calibrate reads the "
                  "job from the plan file 'hetplan plan' writes", jc->file, p, r->plan);
    goto done;
  }
  HP_TRY(hp_model_load(model, &m, d));
  HP_TRY(hp_cluster_load(cluster, &cl, d));
  if (in.mem_margin > 0) cl->mem_margin = in.mem_margin;
  if (profile) HP_TRY(hp_profile_load(profile, &pr, d));
  err = hp_problem_create(&r->prob, m, cl, pr, job_of(&in, framework), d);
  m = NULL;
  cl = NULL;
  pr = NULL;
  if (err) goto done;
  if ((err = hp_plan_load(r->plan, r->prob, &r->pl, d))) goto done;
  if (in.schedule < 0) r->prob->job.schedule = r->pl->schedule;
  if ((err = hp_plan_validate(r->prob, r->pl, d))) {
    char why[sizeof d->msg];
    snprintf(why, sizeof why, "%s", d->msg);
    err = hp_fail(d, HP_INVAL, "%s: %s.plan: '%s' is not a valid plan for cluster '%s': %s",
                  jc->file, p, r->plan, r->prob->cluster->name, why);
    goto done;
  }
  r->type_map = hp__calloc((size_t)r->prob->cluster->n_types, sizeof *r->type_map);
  if (!r->type_map) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  for (int k = 0; k < r->prob->cluster->n_types; k++) {
    const char *name = r->prob->cluster->types[k].name;
    if ((r->type_map[k] = type_index(c->cluster, name)) < 0) {
      int used = 0;
      for (int dv = 0; dv < r->prob->cluster->n_devices && !used; dv++)
        used = hp_device_type(r->prob, dv) == k;
      if (!used) continue;     /* a type no device has: nothing to calibrate */
      err = hp_fail(d, HP_INVAL, "%s: %s: device type '%s' of cluster '%s' is not in the "
                    "cluster calibrated, '%s'", jc->file, p, name, r->prob->cluster->name,
                    c->cluster_path);
      goto done;
    }
  }
done:
  hp_model_destroy(&m);
  hp_cluster_destroy(&cl);
  hp_profile_destroy(&pr);
  hp_plan_info_release(&in);
  free(model);
  free(cluster);
  free(profile);
  return err;
}

/* profile_scale's floor per calibrated type over the runs, and the profile file they
 * share (or a second one). */
static hp_err profile_state(hp_calib *c, hp_diag *d)
{
  int nt = c->cluster->n_types;
  if (!(c->scale_lo = hp__calloc((size_t)nt, sizeof *c->scale_lo)))
    return hp_fail(d, HP_NOMEM, "out of memory");
  for (int k = 0; k < nt; k++) c->scale_lo[k] = -1;
  for (int i = 0; i < c->n_runs; i++) {
    const hp_calib_run *r = &c->runs[i];
    const hp_profile *pr = r->prob->profile;
    char *abs;
    if (!pr) continue;
    for (int q = 0; q < r->prob->cluster->n_types; q++) {
      int k = r->type_map[q];
      double f = k >= 0 ? hp_problem_profile_scale_floor(r->prob, q) : -1;
      if (k >= 0 && f > c->scale_lo[k]) c->scale_lo[k] = f;
    }
    if (!pr->path || c->profile_other) continue;
    if (!(abs = hp__abs_path(pr->path))) return hp_fail(d, HP_NOMEM, "out of memory");
    if (!c->profile_path) c->profile_path = abs;
    else if (strcmp(abs, c->profile_path)) c->profile_other = abs;
    else free(abs);
  }
  return HP_OK;
}

hp_err hp_calib_load(const char *runs_path, const char *cluster_path, int framework,
                     hp_calib **out, hp_diag *d)
{
  ju_ctx jc = { runs_path, d };
  char *text = NULL, *first_cluster = NULL;
  cJSON *root = NULL;
  const cJSON *arr;
  hp_calib *c = NULL;
  hp_err err;
  int n = 0;
  *out = NULL;
  HP_TRY(hp_read_file(runs_path, &text, d));
  HP_TRY(ju_parse(&jc, text, &root));
  HP_TRY(ju_object(&jc, root, ""));
  HP_TRY(ju_version(&jc, root));
  ju_unknown_keys(&jc, root, "", root_keys);
  if (!(arr = cJSON_GetObjectItemCaseSensitive(root, "runs"))) {
    err = hp_fail(d, HP_PARSE, "%s: runs: missing: expected an array of runs such as "
                  "{\"plan\": \"plan.json\", \"iteration_time_s\": 1.23}", runs_path);
    goto done;
  }
  HP_TRY(ju_array(&jc, arr, "runs", &n));
  if (n < 2) {
    err = hp_fail(d, HP_PARSE, "%s: runs: %d run%s: calibration needs at least 2 (one to fit, "
                  "one to check the fit against)", runs_path, n, n == 1 ? "" : "s");
    goto done;
  }
  if (!(c = hp__calloc(1, sizeof *c)) || !(c->runs = hp__calloc((size_t)n, sizeof *c->runs))) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    goto done;
  }
  c->n_params = hp_calib_params(c->params);
  HP_TRY(hp_calib_parse_params(NULL, c->fit, d));
  /* the cluster calibrated: the flag's, else the first plan's (every run's must match) */
  if (cluster_path) {
    c->cluster_path = hp__strdup(cluster_path);
  } else {
    hp_plan_info in;
    const cJSON *r0 = arr->child;
    const cJSON *pv = cJSON_IsObject(r0) ? cJSON_GetObjectItemCaseSensitive(r0, "plan") : NULL;
    char *pp;
    if (!cJSON_IsString(pv)) {
      err = ju_expect(&jc, "runs[0].plan", "a plan file", pv);
      goto done;
    }
    if (!(pp = resolve(runs_path, pv->valuestring))) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
    err = hp_plan_info_load(pp, &in, d);
    if (!err) {
      first_cluster = pick(r0, "cluster", runs_path, pp, in.cluster);
      if (!first_cluster)
        err = hp_fail(d, HP_PARSE, "%s: runs[0]: plan '%s' names no cluster: give --cluster",
                      runs_path, pp);
    }
    hp_plan_info_release(&in);
    free(pp);
    if (err) goto done;
    c->cluster_path = hp__strdup(first_cluster);
  }
  if (!c->cluster_path) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  HP_TRY(hp_cluster_load(c->cluster_path, &c->cluster, d));
  {
    const cJSON *o = arr->child;
    for (int i = 0; i < n; i++, o = o->next) {
      c->n_runs = i + 1;
      HP_TRY(load_run(&jc, o, i, cluster_path, framework, c, d));
      if (!cluster_path) {
        const char *mine = c->runs[i].prob->cluster->path, *first = c->cluster->path;
        if (mine && first && strcmp(mine, first)) {
          err = hp_fail(d, HP_INVAL, "%s: runs[%d]: plan '%s' was made for cluster '%s', not "
                        "'%s' as runs[0]'s: give --cluster FILE, the cluster to calibrate",
                        runs_path, i, c->runs[i].plan, mine, first);
          goto done;
        }
      }
    }
  }
  HP_TRY(profile_state(c, d));
  *out = c;
  c = NULL;
done:
  hp_calib_destroy(&c);
  cJSON_Delete(root);
  free(text);
  free(first_cluster);
  return err;
}

void hp_calib_destroy(hp_calib **pc)
{
  hp_calib *c = pc ? *pc : NULL;
  if (!c) return;
  for (int i = 0; i < c->n_runs; i++) {
    hp_calib_run *r = &c->runs[i];
    free(r->plan);
    free(r->type_map);
    hp_plan_destroy(&r->pl);
    hp_problem_destroy(&r->prob);
  }
  free(c->runs);
  free(c->values);
  free(c->scale_lo);
  free(c->profile_path);
  free(c->profile_other);
  hp_cluster_destroy(&c->cluster);
  free(c->cluster_path);
  free(c);
  *pc = NULL;
}

/* --- The fit. A variable is one (type of the calibrated cluster, parameter). */
typedef struct fit_var { int type, param; } fit_var;

/* Whether parameter p exists on calibrated type k: the shape model's constants only where
 * the type's entry has a "shape". */
static int applies(const hp_calib *c, int k, int p)
{
  if (c->params[p].measured) return c->scale_lo[k] >= 0;
  return !c->params[p].shape || c->cluster->types[k].shape.given;
}

/* Variable v's lower bound: its parameter's, and for profile_scale no scale that would
 * put a measured time below its FLOPs at the type's peak (the written profile would be
 * refused). */
static double var_lo(const hp_calib *c, const fit_var *v)
{
  const hp_fit_param *pt = &c->params[v->param];
  return pt->measured && c->scale_lo[v->type] > pt->lo ? c->scale_lo[v->type] : pt->lo;
}

/* Sets variable v to x in every run's problem; the shape model's series of the runs it
 * touched go stale (the evaluator reads those, not the constants): predict() recomputes
 * them, once for any number of constants set. */
static void apply(hp_calib *c, const fit_var *v, double x)
{
  const hp_fit_param *pt = &c->params[v->param];
  for (int i = 0; i < c->n_runs; i++) {
    hp_cluster *cl = c->runs[i].prob->cluster;
    int touched = 0;
    for (int k = 0; k < cl->n_types; k++)
      if (c->runs[i].type_map[k] == v->type) {
        if (pt->measured) hp_problem_scale_profile(c->runs[i].prob, k, x);
        else hp_calib_param_set(pt, &cl->types[k], x);
        touched = 1;
      }
    if (touched && pt->shape) c->runs[i].shape_stale = 1;
  }
}

/* Every parameter that exists on a type, at the values x[k * n_params + p]. */
static void apply_all(hp_calib *c, const double *x)
{
  for (int k = 0; k < c->cluster->n_types; k++)
    for (int p = 0; p < c->n_params; p++)
      if (applies(c, k, p)) apply(c, &(fit_var){ k, p }, x[k * c->n_params + p]);
}

/* Recomputes run r's stale shape series: at its plan's tp, the only ones it reads (the
 * fit leaves every tp fresh when it ends). */
static void fresh(hp_calib_run *r)
{
  if (!r->shape_stale) return;
  hp_problem_refresh_shape(r->prob, r->pl->tp);
  r->shape_stale = 0;
}

/* The predicted iteration time of run i, s. */
static hp_err predict(hp_calib_run *r, double *t, hp_eval *keep, hp_diag *d)
{
  hp_eval e = {0};
  hp_err err;
  fresh(r);
  err = hp_evaluate(r->prob, r->pl, &e, d);
  *t = err ? NAN : e.iteration_time;
  if (!err && keep) *keep = e;
  else hp_eval_release(&e);
  return err;
}

/* The residuals log(predicted / measured) of the runs in `in` (NULL: all) into r[] (may be
 * NULL; 0 for the runs left out), their sum of squares in *f. */
static hp_err residuals(hp_calib *c, const unsigned char *in, double *r, double *f, hp_diag *d)
{
  double s = 0;
  for (int i = 0; i < c->n_runs; i++) {
    double t, e;
    hp_err err;
    if (in && !in[i]) {
      if (r) r[i] = 0;
      continue;
    }
    if ((err = predict(&c->runs[i], &t, NULL, d))) return err;
    e = log(t / c->runs[i].time);
    if (r) r[i] = e;
    s += e * e;
  }
  *f = s;
  return HP_OK;
}

/* How the runs' log times move when variable v goes from x to 0.9 x (1.1 x where 0.9 x is
 * below its range): col[i], 0 for a run outside `in` or without the type; r0 the
 * residuals at x. Restores x. */
static hp_err effect(hp_calib *c, const unsigned char *in, const fit_var *v, double x,
                     const double *r0, double *col, hp_diag *d)
{
  const hp_fit_param *pt = &c->params[v->param];
  double lo = var_lo(c, v), y = x * 0.9 >= lo ? x * 0.9 : x * 1.1 <= pt->hi ? x * 1.1 : lo;
  hp_err err = HP_OK;
  apply(c, v, y);
  for (int i = 0; i < c->n_runs && !err; i++) {
    double t;
    int uses = 0;
    col[i] = 0;
    if (in && !in[i]) continue;
    for (int k = 0; k < c->runs[i].prob->cluster->n_types; k++) uses |= c->runs[i].type_map[k] == v->type;
    if (!uses) continue;
    if (!(err = predict(&c->runs[i], &t, NULL, d)))
      col[i] = log(t / c->runs[i].time) - r0[i];
  }
  apply(c, v, x);
  return err;
}

static double dot(const double *a, const double *b, int n)
{
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* Golden-section search of variable v over its range in log space, the others fixed;
 * leaves it at the best point met (the current value if nothing beats it). */
static hp_err golden(hp_calib *c, const unsigned char *in, const fit_var *v, double *x,
                     double *fx, hp_diag *d)
{
  const hp_fit_param *pt = &c->params[v->param];
  const double g = (sqrt(5.0) - 1) / 2;
  double a = log(var_lo(c, v)), b = log(pt->hi), u1 = b - g * (b - a), u2 = a + g * (b - a), f1, f2;
  double best = *x, fbest = *fx;
  hp_err err;
  apply(c, v, exp(u1));
  if ((err = residuals(c, in, NULL, &f1, d))) return err;
  apply(c, v, exp(u2));
  if ((err = residuals(c, in, NULL, &f2, d))) return err;
  for (int s = 0; s < HP_CALIB_GOLDEN_STEPS && b - a > 1e-13; s++) {
    if (f1 < fbest) { fbest = f1; best = exp(u1); }
    if (f2 < fbest) { fbest = f2; best = exp(u2); }
    if (f1 <= f2) {
      b = u2; u2 = u1; f2 = f1; u1 = b - g * (b - a);
      apply(c, v, exp(u1));
      if ((err = residuals(c, in, NULL, &f1, d))) return err;
    } else {
      a = u1; u1 = u2; f1 = f2; u2 = a + g * (b - a);
      apply(c, v, exp(u2));
      if ((err = residuals(c, in, NULL, &f2, d))) return err;
    }
  }
  if (f1 < fbest) { fbest = f1; best = exp(u1); }
  if (f2 < fbest) { fbest = f2; best = exp(u2); }
  apply(c, v, best);
  *x = best;
  *fx = fbest;
  return HP_OK;
}

/* Solves M z = b (m x m, row-major, overwritten) by Gaussian elimination with partial
 * pivoting; 0 if M is singular. */
static int solve(double *M, double *b, double *z, int m)
{
  for (int col = 0; col < m; col++) {
    int piv = col;
    for (int i = col + 1; i < m; i++)
      if (fabs(M[i * m + col]) > fabs(M[piv * m + col])) piv = i;
    if (!(fabs(M[piv * m + col]) > 0)) return 0;
    if (piv != col) {
      for (int j = 0; j < m; j++) {
        double t = M[col * m + j];
        M[col * m + j] = M[piv * m + j];
        M[piv * m + j] = t;
      }
      double t = b[col];
      b[col] = b[piv];
      b[piv] = t;
    }
    for (int i = col + 1; i < m; i++) {
      double f = M[i * m + col] / M[col * m + col];
      for (int j = col; j < m; j++) M[i * m + j] -= f * M[col * m + j];
      b[i] -= f * b[col];
    }
  }
  for (int i = m - 1; i >= 0; i--) {
    double s = b[i];
    for (int j = i + 1; j < m; j++) s -= M[i * m + j] * z[j];
    z[i] = s / M[i * m + i];
  }
  return 1;
}

/* Gauss-Newton on the log residuals over u = log x of vars[0..nv), Levenberg-Marquardt
 * damped, projected on the bounds (a variable at a bound that the gradient pushes out
 * stays there for the step); stops when a step moves no variable by HP_CALIB_TOL, when
 * no damped step lowers the sum of squares, or after HP_CALIB_MAX_ITER steps (*iters). */
static hp_err gauss_newton(hp_calib *c, const unsigned char *in, const fit_var *vars, int nv,
                           double *x, int *iters, hp_diag *d)
{
  const double h0 = 1e-7;   /* the Jacobian's step in log: round-off 1e-16 / 1e-7 */
  int n = c->n_runs;
  double *r = hp__calloc((size_t)n, sizeof *r), *rt = hp__calloc((size_t)n, sizeof *rt);
  double *J = hp__calloc((size_t)(n * nv) + 1, sizeof *J);
  double *A = hp__calloc((size_t)(nv * nv) + 1, sizeof *A), *M = hp__calloc((size_t)(nv * nv) + 1, sizeof *M);
  double *g = hp__calloc((size_t)nv + 1, sizeof *g), *u = hp__calloc((size_t)nv + 1, sizeof *u);
  double *un = hp__calloc((size_t)nv + 1, sizeof *un), *z = hp__calloc((size_t)nv + 1, sizeof *z);
  double *rhs = hp__calloc((size_t)nv + 1, sizeof *rhs);
  int *fr = hp__calloc((size_t)nv + 1, sizeof *fr);
  double f, lambda = 1e-3;
  hp_err err = HP_OK;
  *iters = 0;
  if (!r || !rt || !J || !A || !M || !g || !u || !un || !z || !rhs || !fr) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    goto done;
  }
  for (int j = 0; j < nv; j++) {
    apply(c, &vars[j], x[j]);
    u[j] = log(x[j]);
  }
  if ((err = residuals(c, in, r, &f, d))) goto done;
  for (int it = 0; it < HP_CALIB_MAX_ITER && nv > 0 && f > 1e-30; it++) {
    int m = 0, accepted = 0;
    double step = 0;
    *iters = it + 1;
    for (int j = 0; j < nv; j++) {   /* the Jacobian, forward differences (inward at hi) */
      const hp_fit_param *pt = &c->params[vars[j].param];
      double h = u[j] + h0 <= log(pt->hi) ? h0 : -h0, ft;
      apply(c, &vars[j], exp(u[j] + h));
      err = residuals(c, in, rt, &ft, d);
      apply(c, &vars[j], exp(u[j]));
      if (err) goto done;
      for (int i = 0; i < n; i++) J[i * nv + j] = (rt[i] - r[i]) / h;
    }
    for (int j = 0; j < nv; j++) {
      const hp_fit_param *pt = &c->params[vars[j].param];
      g[j] = 0;
      for (int i = 0; i < n; i++) g[j] += J[i * nv + j] * r[i];
      for (int k = 0; k < nv; k++) {
        A[j * nv + k] = 0;
        for (int i = 0; i < n; i++) A[j * nv + k] += J[i * nv + j] * J[i * nv + k];
      }
      /* free: it moves the runs, and no bound stops the way the gradient points */
      if (A[j * nv + j] > 0 && !(u[j] <= log(var_lo(c, &vars[j])) && g[j] > 0) &&
          !(u[j] >= log(pt->hi) && g[j] < 0))
        fr[m++] = j;
    }
    if (m == 0) break;
    for (int tries = 0; tries < 40 && !accepted && lambda < 1e20; tries++) {
      double fn;
      for (int a = 0; a < m; a++) {
        for (int b = 0; b < m; b++) M[a * m + b] = A[fr[a] * nv + fr[b]];
        M[a * m + a] *= 1 + lambda;
        rhs[a] = -g[fr[a]];
      }
      if (!solve(M, rhs, z, m)) { lambda *= 10; continue; }
      memcpy(un, u, (size_t)nv * sizeof *u);
      for (int a = 0; a < m; a++) {
        const hp_fit_param *pt = &c->params[vars[fr[a]].param];
        double v = u[fr[a]] + z[a], lo = log(var_lo(c, &vars[fr[a]]));
        un[fr[a]] = v < lo ? lo : v > log(pt->hi) ? log(pt->hi) : v;
      }
      step = 0;
      for (int j = 0; j < nv; j++) step = fmax(step, fabs(un[j] - u[j]));
      if (step == 0) break;
      for (int j = 0; j < nv; j++) apply(c, &vars[j], exp(un[j]));
      if ((err = residuals(c, in, rt, &fn, d))) goto done;
      if (fn < f) {
        double *t = r;
        r = rt;
        rt = t;
        f = fn;
        memcpy(u, un, (size_t)nv * sizeof *u);
        lambda = fmax(lambda / 10, 1e-12);
        accepted = 1;
      } else {
        lambda *= 10;
      }
    }
    if (!accepted) {   /* no damped step descends: at the minimum, to round-off */
      for (int j = 0; j < nv; j++) apply(c, &vars[j], exp(u[j]));
      break;
    }
    if (step < HP_CALIB_TOL) break;
  }
  for (int j = 0; j < nv; j++) x[j] = exp(u[j]);
done:
  free(r); free(rt); free(J); free(A); free(M); free(g); free(u); free(un); free(z); free(rhs);
  free(fr);
  return err;
}

/* Memory of run i at the current figures: the peak over its devices (bytes), with the
 * type and reserve of that device. */
static hp_err run_memory(hp_calib_run *r, double *peak, int *ctype, double *res, hp_diag *d)
{
  hp_eval e = {0};
  hp_err err;
  int best = -1;
  fresh(r);
  if ((err = hp_evaluate(r->prob, r->pl, &e, d))) return err;
  for (int dv = 0; dv < e.n_devices; dv++)
    if (!e.idle[dv] && (best < 0 || e.mem[dv] > e.mem[best])) best = dv;
  *peak = e.mem[best];
  *ctype = r->type_map[hp_device_type(r->prob, best)];
  *res = r->prob->cluster->types[hp_device_type(r->prob, best)].reserved;
  hp_eval_release(&e);
  return HP_OK;
}

/* The reserve of calibrated type k fitted on the runs in `in` with memory: the mean of
 * measured less the model's memory, clamped at 0; *count the runs (0: keep `keep`). */
static double fit_reserve(const hp_calib *c, const unsigned char *in, int k, double keep,
                          int *count)
{
  double s = 0;
  int n = 0;
  for (int i = 0; i < c->n_runs; i++) {
    const hp_calib_run *r = &c->runs[i];
    if ((in && !in[i]) || r->mem < 0 || r->mem_type != k) continue;
    s += r->mem + r->mem_outside - r->mem_model;
    n++;
  }
  *count = n;
  if (!n) return keep;
  return s / n > 0 ? s / n : 0;
}

/* Sets calibrated type k's reserve (bytes) in every run's problem. */
static void apply_reserve(hp_calib *c, int k, double res)
{
  for (int i = 0; i < c->n_runs; i++) {
    hp_cluster *cl = c->runs[i].prob->cluster;
    for (int q = 0; q < cl->n_types; q++)
      if (c->runs[i].type_map[q] == k) cl->types[q].reserved = res;
  }
}

/* The calibrated cluster's type of each run's used devices: how many runs use type k. */
static int runs_using(const hp_calib *c, const unsigned char *in, int k)
{
  int n = 0;
  for (int i = 0; i < c->n_runs; i++) {
    const hp_calib_run *r = &c->runs[i];
    int uses = 0;
    if (in && !in[i]) continue;
    for (int q = 0; q < r->pl->pp * r->pl->dp * r->pl->tp; q++)
      if (r->type_map[hp_device_type(r->prob, r->pl->dev[q])] == k) uses = 1;
    n += uses;
  }
  return n;
}

/* Why a parameter may move no time though the type sets the pace: the layers the model
 * has do not use it. */
static const char *unused(const hp_fit_param *q)
{
  if (q->measured) return "the runs' plans use none of its measured layer times";
  if (!q->shape) return "the shape model times the type's layers: its efficiency is unused";
  if (!strcmp(q->name, "align_eff")) return "every GEMM of the runs is aligned";
  if (!strcmp(q->name, "attn_eff")) return "the attention is eager, or its heads are narrower than 64";
  if (!strcmp(q->name, "attn_eff64")) return "the attention is eager, or its heads are 128 wide or more";
  return "the runs' layers do not use it";
}

/* Chooses the variables to fit on the runs in `in`, at the figures applied now (x: their
 * values): in the table's order, each parameter c->fit names on the types it exists on,
 * the types used by more runs first; one that no run's time depends on, one whose effect
 * on the runs is (but for HP_CALIB_MIN_DISTINCT) that of those taken before it, and any
 * beyond as many as the runs are left out, why[idx] (may be NULL) saying why. */
static hp_err choose(hp_calib *c, const unsigned char *in, const double *x, fit_var *vars,
                     int *nv, char (*why)[HP_CALIB_WHY], hp_diag *d)
{
  int np = c->n_params, nt = c->cluster->n_types, n = c->n_runs, nin = 0;
  double *r0 = hp__calloc((size_t)n, sizeof *r0), *col = hp__calloc((size_t)n, sizeof *col);
  double *raw = hp__calloc((size_t)(n * (nt * np + 1)), sizeof *raw);   /* chosen effects */
  double *basis = hp__calloc((size_t)(n * (nt * np + 1)), sizeof *basis);   /* orthonormal */
  int *users = hp__calloc((size_t)nt, sizeof *users);
  double f;
  hp_err err = HP_OK;
  *nv = 0;
  if (!r0 || !col || !raw || !basis || !users) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  for (int i = 0; i < n; i++) nin += !in || in[i];
  for (int k = 0; k < nt; k++) users[k] = runs_using(c, in, k);
  if ((err = residuals(c, in, r0, &f, d))) goto done;
  for (int p = 0; p < np; p++) {
    if (!c->fit[p]) continue;
    /* types by the runs using them, most first (ties: file order) */
    for (int want = n; want >= 1; want--)
      for (int k = 0; k < nt; k++) {
        int idx = k * np + p, moves = 0, like = -1;
        double norm, rest, *w = &basis[*nv * n], best = 0;
        if (users[k] != want || !applies(c, k, p)) continue;
        if ((err = effect(c, in, &(fit_var){ k, p }, x[idx], r0, col, d))) goto done;
        for (int i = 0; i < n; i++) moves |= fabs(col[i]) > 1e-12;
        if (!moves) {
          if (why)
            snprintf(why[idx], HP_CALIB_WHY, "no run's time depends on it (another type sets "
                     "the pace, its layers are profiled, or %s)", unused(&c->params[p]));
          continue;
        }
        if (*nv >= nin) {
          if (why) snprintf(why[idx], HP_CALIB_WHY, "more parameters than runs: add runs to fit it");
          continue;
        }
        /* its effect less its projection on those taken before it (twice: round-off) */
        memcpy(w, col, (size_t)n * sizeof *w);
        for (int pass = 0; pass < 2; pass++)
          for (int j = 0; j < *nv; j++) {
            double a = dot(&basis[j * n], w, n);
            for (int i = 0; i < n; i++) w[i] -= a * basis[j * n + i];
          }
        norm = sqrt(dot(col, col, n));
        rest = sqrt(dot(w, w, n));
        if (rest < HP_CALIB_MIN_DISTINCT * norm) {
          for (int j = 0; j < *nv; j++) {   /* the one it is most like */
            const double *o = &raw[j * n];
            double cs = fabs(dot(o, col, n)) / sqrt(dot(o, o, n));
            if (cs > best) { best = cs; like = j; }
          }
          if (why)
            snprintf(why[idx], HP_CALIB_WHY, "the runs cannot tell it from %s%s's %s: their "
                     "times move with it as with %s; add runs that differ in it",
                     *nv > 1 ? "the parameters fitted before it, most like " : "",
                     c->cluster->types[vars[like].type].name, c->params[vars[like].param].name,
                     *nv > 1 ? "those" : "that");
          continue;
        }
        for (int i = 0; i < n; i++) w[i] /= rest;
        memcpy(&raw[*nv * n], col, (size_t)n * sizeof *col);
        vars[(*nv)++] = (fit_var){ k, p };
      }
  }
done:
  free(r0);
  free(col);
  free(raw);
  free(basis);
  free(users);
  return err;
}

/* Fits vars[0..nv) (values x, updated) on the runs in `in`: from afar (`search`: one
 * golden-section sweep over each whole range first), then Gauss-Newton. */
static hp_err fit_time(hp_calib *c, const unsigned char *in, const fit_var *vars, int nv,
                       double *x, int search, int *sweeps, int *iters, hp_diag *d)
{
  double f;
  hp_err err;
  *sweeps = *iters = 0;
  if (nv == 0) return HP_OK;
  for (int j = 0; j < nv; j++) apply(c, &vars[j], x[j]);
  if (search) {
    if ((err = residuals(c, in, NULL, &f, d))) return err;
    for (int j = 0; j < nv; j++)
      if ((err = golden(c, in, &vars[j], &x[j], &f, d))) return err;
    *sweeps = 1;
  }
  return gauss_newton(c, in, vars, nv, x, iters, d);
}

hp_err hp_calib_fit(hp_calib *c, hp_diag *d)
{
  int np = c->n_params, nt = c->cluster->n_types, n = c->n_runs, nv = 0, sw, it;
  const hp_fit_param *pt = c->params;
  double *start = NULL, *x = NULL, *res0 = NULL, *res = NULL, *xv = NULL;
  char (*why)[HP_CALIB_WHY] = NULL;
  fit_var *vars = NULL;
  unsigned char *in = NULL;
  int *used = NULL, *memruns = NULL;
  hp_err err = HP_OK;
  start = hp__calloc((size_t)(nt * np), sizeof *start);
  x = hp__calloc((size_t)(nt * np), sizeof *x);
  xv = hp__calloc((size_t)(nt * np), sizeof *xv);
  why = hp__calloc((size_t)(nt * np), sizeof *why);
  vars = hp__calloc((size_t)(nt * np), sizeof *vars);
  res0 = hp__calloc((size_t)nt, sizeof *res0);
  res = hp__calloc((size_t)nt, sizeof *res);
  in = hp__calloc((size_t)n, 1);
  used = hp__calloc((size_t)nt, sizeof *used);
  memruns = hp__calloc((size_t)nt, sizeof *memruns);
  /* one profile scaled: a scale fitted across two profiles would belong to neither file */
  for (int p = 0; p < np; p++)
    if (pt[p].measured && c->fit[p] && c->profile_other) {
      if (c->fit[p] == 1)
        return hp_fail(d, HP_INVAL, "--params %s: the runs use different profile files ('%s', "
                       "'%s'): profile_scale scales one profile: calibrate the runs of each "
                       "profile apart, or leave profile_scale out of --params", pt[p].name,
                       c->profile_path, c->profile_other);
      hp_warn(d, "profile_scale not fitted: the runs use different profile files ('%s', '%s'); "
              "calibrate the runs of each profile apart to fit it", c->profile_path,
              c->profile_other);
      c->fit[p] = 0;
    }
  free(c->values);
  c->values = hp__calloc((size_t)(nt * (np + 1)), sizeof *c->values);
  if (!start || !x || !xv || !why || !vars || !res0 || !res || !in || !used || !memruns || !c->values) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    goto done;
  }
  /* the starting figures: the calibrated cluster's own (the runs' problems may carry a
   * framework's default reserve: the bound figure is the one a plan sees) */
  for (int k = 0; k < nt; k++) {
    for (int p = 0; p < np; p++)
      if (applies(c, k, p)) start[k * np + p] = hp_calib_param_get(&pt[p], &c->cluster->types[k]);
    res0[k] = -1;
    used[k] = runs_using(c, NULL, k);
  }
  apply_all(c, start);
  /* before: times, memory and the memory model (less the device's reserve) */
  for (int i = 0; i < n; i++) {
    hp_calib_run *r = &c->runs[i];
    double peak, rv;
    HP_TRY(predict(r, &r->time_before, NULL, d));
    HP_TRY(run_memory(r, &peak, &r->mem_type, &rv, d));
    r->mem_model = peak - rv;
    if (res0[r->mem_type] < 0) res0[r->mem_type] = rv;
    if (r->mem >= 0) {
      r->mem_before = peak;
      if (r->mem_allocated) {   /* the parts nvidia-smi shows and max_allocated does not */
        hp_fw_reserve parts;
        const hp_devtype *t = &c->cluster->types[r->mem_type];
        hp_framework_reserve(HP_FW_MEGATRON, t->name, &parts);
        r->mem_outside = parts.context;
        hp_framework_reserve(r->prob->job.framework, t->name, &parts);
        r->mem_outside += parts.nccl;
        /* and the caching allocator's reserve, which the framework default charges */
        r->mem_outside += hp_framework_allocator(r->prob->job.framework,
                                                 t->mem_total > 0 ? t->mem_total : t->mem);
      }
    }
  }
  for (int k = 0; k < nt; k++) if (res0[k] < 0) res0[k] = c->cluster->types[k].reserved;
  /* the time fit on every run */
  memcpy(x, start, (size_t)(nt * np) * sizeof *x);
  HP_TRY(choose(c, NULL, start, vars, &nv, why, d));
  for (int j = 0; j < nv; j++) xv[j] = start[vars[j].type * np + vars[j].param];
  HP_TRY(fit_time(c, NULL, vars, nv, xv, 1, &c->sweeps, &c->iterations, d));
  for (int j = 0; j < nv; j++) x[vars[j].type * np + vars[j].param] = xv[j];
  /* the reserve fit on every run with memory */
  for (int k = 0; k < nt; k++) {
    res[k] = fit_reserve(c, NULL, k, res0[k], &memruns[k]);
    apply_reserve(c, k, res[k]);
  }
  c->n_mem = 0;
  for (int i = 0; i < n; i++) {
    hp_calib_run *r = &c->runs[i];
    double peak, rv;
    int kk;
    hp_eval e = {0};
    HP_TRY(predict(r, &r->time_after, &e, d));
    r->fits_after = e.feasible;
    hp_eval_release(&e);
    HP_TRY(run_memory(r, &peak, &kk, &rv, d));
    if (r->mem >= 0) {
      r->mem_after = peak;
      c->n_mem++;
    }
  }
  /* the values, before and after: every parameter fitted or asked for, on the types the
   * runs use and it exists on */
  c->n_values = 0;
  for (int p = 0; p < np; p++)
    for (int k = 0; k < nt; k++) {
      int idx = k * np + p, fitted = 0;
      hp_calib_value *cv;
      if (!used[k] || !c->fit[p] || !applies(c, k, p)) continue;
      for (int j = 0; j < nv; j++) fitted |= vars[j].type == k && vars[j].param == p;
      cv = &c->values[c->n_values++];
      *cv = (hp_calib_value){ .type = k, .param = pt[p].name, .in_shape = pt[p].shape != NULL,
                              .before = start[idx], .after = x[idx], .fitted = fitted,
                              .runs = used[k] };
      if (!fitted) snprintf(cv->why, sizeof cv->why, "%s", why[idx]);
    }
  for (int k = 0; k < nt; k++) {
    hp_calib_value *cv;
    if (!used[k]) continue;
    cv = &c->values[c->n_values++];
    *cv = (hp_calib_value){ .type = k, .param = "reserved_gib", .before = res0[k] / GIB,
                            .after = res[k] / GIB, .fitted = memruns[k] > 0, .runs = memruns[k] };
    if (!memruns[k]) snprintf(cv->why, sizeof cv->why, "no run gives peak memory on it");
  }
  /* leave-one-out: refit without run i, predict run i. Each refit chooses its variables
   * at the starting figures, as the full fit did, and starts them from the full fit's
   * values (the minimum without one run lies near the one with it: a few Gauss-Newton
   * steps instead of a search) */
  c->loo_time_mae = c->loo_time_worst = c->loo_mem_mae = c->loo_mem_worst = 0;
  c->loo_time_worst_run = 0;
  c->loo_mem_worst_run = -1;
  c->loo_iterations = 0;
  for (int i = 0; i < n; i++) {
    hp_calib_run *r = &c->runs[i];
    int lnv, cnt;
    double e;
    memset(in, 1, (size_t)n);
    in[i] = 0;
    apply_all(c, start);
    HP_TRY(choose(c, in, start, vars, &lnv, NULL, d));
    for (int j = 0; j < lnv; j++) xv[j] = x[vars[j].type * np + vars[j].param];
    HP_TRY(fit_time(c, in, vars, lnv, xv, 0, &sw, &it, d));
    c->loo_iterations += it;
    HP_TRY(predict(r, &r->time_loo, NULL, d));
    e = fabs(r->time_loo / r->time - 1);
    c->loo_time_mae += e / n;
    if (e > c->loo_time_worst) { c->loo_time_worst = e; c->loo_time_worst_run = i; }
    if (r->mem >= 0) {
      double rk = fit_reserve(c, in, r->mem_type, res0[r->mem_type], &cnt);
      r->mem_loo = r->mem_model + rk;
      e = fabs((r->mem_loo - r->mem_outside) / r->mem - 1);
      c->loo_mem_mae += e / c->n_mem;
      if (c->loo_mem_worst_run < 0 || e > c->loo_mem_worst) {
        c->loo_mem_worst = e;
        c->loo_mem_worst_run = i;
      }
    }
  }
  /* leave the problems at the fitted figures, their shape series at every tp */
  apply_all(c, x);
  for (int k = 0; k < nt; k++) apply_reserve(c, k, res[k]);
  for (int i = 0; i < n; i++) {
    hp_problem_refresh_shape(c->runs[i].prob, 0);
    c->runs[i].shape_stale = 0;
  }
done:
  free(start);
  free(x);
  free(xv);
  free(why);
  free(vars);
  free(res0);
  free(res);
  free(in);
  free(used);
  free(memruns);
  return err;
}

/* Sets o[key] to v, in its place if o has it (the file's key order kept), else at the
 * end; 0 when out of memory. */
static int set_number(cJSON *o, const char *key, double v)
{
  cJSON *num = cJSON_CreateNumber(v);
  if (!num) return 0;
  if (cJSON_GetObjectItemCaseSensitive(o, key))
    return cJSON_ReplaceItemInObjectCaseSensitive(o, key, num) ? 1 : (cJSON_Delete(num), 0);
  cJSON_AddItemToObject(o, key, num);
  return 1;
}

/* The "calibrated" block of a written file (replacing any): the runs, the date, what was
 * fitted and the leave-one-out errors. only NULL: a cluster's (every parameter, the
 * fit's sweeps and iterations, memory's errors); else a profile's (that parameter's values
 * alone, in an array of its name). NULL out of memory. */
static cJSON *calibrated_block(cJSON *root, const hp_calib *c, const char *runs_name,
                               const char *date, const char *only)
{
  cJSON *cal, *arr, *loo;
  cJSON_DeleteItemFromObjectCaseSensitive(root, "calibrated");
  if (!(cal = cJSON_AddObjectToObject(root, "calibrated"))) return NULL;
  cJSON_AddStringToObject(cal, "runs", runs_name ? runs_name : "");
  cJSON_AddStringToObject(cal, "date", date ? date : "");
  cJSON_AddNumberToObject(cal, "n_runs", c->n_runs);
  if (!only) {
    cJSON_AddNumberToObject(cal, "sweeps", c->sweeps);
    cJSON_AddNumberToObject(cal, "iterations", c->iterations);
  }
  if (!(arr = cJSON_AddArrayToObject(cal, only ? only : "parameters"))) return NULL;
  for (int v = 0; v < c->n_values; v++) {
    const hp_calib_value *cv = &c->values[v];
    cJSON *o;
    if (only && strcmp(cv->param, only)) continue;
    if (!(o = cJSON_CreateObject())) return NULL;
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "type", c->cluster->types[cv->type].name);
    if (!only) cJSON_AddStringToObject(o, "name", cv->param);
    if (!only && cv->in_shape) cJSON_AddStringToObject(o, "in", "shape");
    cJSON_AddNumberToObject(o, "before", cv->before);
    cJSON_AddNumberToObject(o, "after", cv->after);
    cJSON_AddBoolToObject(o, "fitted", cv->fitted);
    if (!cv->fitted) cJSON_AddStringToObject(o, "why_not", cv->why);
  }
  if (!(loo = cJSON_AddObjectToObject(cal, "leave_one_out"))) return NULL;
  cJSON_AddNumberToObject(loo, "time_mae", c->loo_time_mae);
  cJSON_AddNumberToObject(loo, "time_worst", c->loo_time_worst);
  if (!only && c->n_mem > 0) {
    cJSON_AddNumberToObject(loo, "memory_mae", c->loo_mem_mae);
    cJSON_AddNumberToObject(loo, "memory_worst", c->loo_mem_worst);
  }
  return cal;
}

hp_err hp_calib_cluster_json(const hp_calib *c, const char *runs_name, const char *date,
                             char **out, hp_diag *d)
{
  ju_ctx jc = { c->cluster_path, d };
  char *text = NULL;
  cJSON *root = NULL, *types;
  hp_err err;
  *out = NULL;
  HP_TRY(hp_read_file(c->cluster_path, &text, d));
  HP_TRY(ju_parse(&jc, text, &root));
  types = cJSON_GetObjectItemCaseSensitive(root, "device_types");
  for (int v = 0; v < c->n_values; v++) {
    const hp_calib_value *cv = &c->values[v];
    cJSON *t = cJSON_GetObjectItemCaseSensitive(types, c->cluster->types[cv->type].name);
    if (!cv->fitted || !cJSON_IsObject(t)) continue;
    /* a shape constant into the type's "shape" (its other keys, "source" among them,
     * kept); a reserve as fitted, in GiB to the byte; an efficiency as fitted */
    if (cv->in_shape) {
      cJSON *sh = cJSON_GetObjectItemCaseSensitive(t, "shape");
      if (!cJSON_IsObject(sh)) {
        cJSON_DeleteItemFromObjectCaseSensitive(t, "shape");
        if (!(sh = cJSON_AddObjectToObject(t, "shape"))) goto oom;
      }
      t = sh;
    }
    if (!set_number(t, cv->param, cv->after)) goto oom;
  }
  if (!calibrated_block(root, c, runs_name, date, NULL)) goto oom;
  if (!(*out = cJSON_Print(root))) goto oom;
  err = HP_OK;
  goto done;
oom:
  err = hp_fail(d, HP_NOMEM, "out of memory");
done:
  cJSON_Delete(root);
  free(text);
  return err;
}

int hp_calib_profile_fitted(const hp_calib *c)
{
  for (int v = 0; v < c->n_values; v++)
    if (c->values[v].fitted && !strcmp(c->values[v].param, "profile_scale")) return 1;
  return 0;
}

/* The fitted scale of the profile's type `name`, 0 where none was fitted. */
static double fitted_scale(const hp_calib *c, const char *name)
{
  for (int v = 0; v < c->n_values; v++) {
    const hp_calib_value *cv = &c->values[v];
    if (cv->fitted && !strcmp(cv->param, "profile_scale") &&
        !strcmp(c->cluster->types[cv->type].name, name))
      return cv->after;
  }
  return 0;
}

hp_err hp_calib_profile_json(const hp_calib *c, const char *runs_name, const char *date,
                             char **out, hp_diag *d)
{
  ju_ctx jc = { c->profile_path, d };
  char *text = NULL;
  cJSON *root = NULL, *times, *it;
  hp_err err;
  *out = NULL;
  if (!c->profile_path || !hp_calib_profile_fitted(c))
    return hp_fail(d, HP_INVAL, "calibrate: no profile_scale was fitted: no calibrated profile "
                   "to write");
  HP_TRY(hp_read_file(c->profile_path, &text, d));
  HP_TRY(ju_parse(&jc, text, &root));
  times = cJSON_GetObjectItemCaseSensitive(root, "layer_times");
  /* every entry of a fitted type, those the runs did not use too: the scale is the
   * type's (its clock, its software), not one layer's */
  cJSON_ArrayForEach(it, times) {
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(it, "type");
    cJSON *sec = cJSON_GetObjectItemCaseSensitive(it, "seconds");
    double f = cJSON_IsString(ty) ? fitted_scale(c, ty->valuestring) : 0;
    if (f > 0 && cJSON_IsNumber(sec) && !set_number(it, "seconds", sec->valuedouble * f))
      goto oom;
  }
  if (!calibrated_block(root, c, runs_name, date, "profile_scale")) goto oom;
  if (!(*out = cJSON_Print(root))) goto oom;
  err = HP_OK;
  goto done;
oom:
  err = hp_fail(d, HP_NOMEM, "out of memory");
done:
  cJSON_Delete(root);
  free(text);
  return err;
}

/* The fit as JSON (`calibrate --json`): runs before and after, parameters, leave-one-out. */
hp_err hp_calib_to_json(const hp_calib *cb, char **out, hp_diag *d)
{
  cJSON *root = cJSON_CreateObject(), *runs, *vals, *loo;
  *out = NULL;
  if (!root) return hp_fail(d, HP_NOMEM, "out of memory");
  cJSON_AddStringToObject(root, "cluster", cb->cluster_path);
  cJSON_AddNumberToObject(root, "sweeps", cb->sweeps);
  cJSON_AddNumberToObject(root, "iterations", cb->iterations);
  cJSON_AddNumberToObject(root, "loo_iterations", cb->loo_iterations);
  runs = cJSON_AddArrayToObject(root, "runs");
  for (int i = 0; runs && i < cb->n_runs; i++) {
    const hp_calib_run *r = &cb->runs[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddItemToArray(runs, o);
    cJSON_AddStringToObject(o, "plan", r->plan);
    cJSON_AddNumberToObject(o, "measured_s", r->time);
    cJSON_AddNumberToObject(o, "before_s", r->time_before);
    cJSON_AddNumberToObject(o, "after_s", r->time_after);
    cJSON_AddNumberToObject(o, "loo_s", r->time_loo);
    if (r->mem >= 0) {
      cJSON_AddNumberToObject(o, "measured_gib", r->mem / GIB);
      cJSON_AddStringToObject(o, "memory_kind", r->mem_allocated ? "allocated" : "reserved");
      cJSON_AddNumberToObject(o, "before_gib", r->mem_before / GIB);
      cJSON_AddNumberToObject(o, "after_gib", r->mem_after / GIB);
      cJSON_AddNumberToObject(o, "loo_gib", r->mem_loo / GIB);
    }
    cJSON_AddBoolToObject(o, "fits_after", r->fits_after);
  }
  vals = cJSON_AddArrayToObject(root, "parameters");
  for (int v = 0; vals && v < cb->n_values; v++) {
    const hp_calib_value *cv = &cb->values[v];
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddItemToArray(vals, o);
    cJSON_AddStringToObject(o, "type", cb->cluster->types[cv->type].name);
    cJSON_AddStringToObject(o, "name", cv->param);
    if (cv->in_shape) cJSON_AddStringToObject(o, "in", "shape");
    cJSON_AddNumberToObject(o, "before", cv->before);
    cJSON_AddNumberToObject(o, "after", cv->after);
    cJSON_AddBoolToObject(o, "fitted", cv->fitted);
    cJSON_AddNumberToObject(o, "runs", cv->runs);
    if (!cv->fitted) cJSON_AddStringToObject(o, "why_not", cv->why);
  }
  loo = cJSON_AddObjectToObject(root, "leave_one_out");
  if (loo) {
    cJSON_AddNumberToObject(loo, "time_mae", cb->loo_time_mae);
    cJSON_AddNumberToObject(loo, "time_worst", cb->loo_time_worst);
    cJSON_AddNumberToObject(loo, "time_worst_run", cb->loo_time_worst_run);
    if (cb->n_mem > 0) {
      cJSON_AddNumberToObject(loo, "memory_mae", cb->loo_mem_mae);
      cJSON_AddNumberToObject(loo, "memory_worst", cb->loo_mem_worst);
      cJSON_AddNumberToObject(loo, "memory_worst_run", cb->loo_mem_worst_run);
    }
  }
  *out = cJSON_Print(root);
  cJSON_Delete(root);
  return *out ? HP_OK : hp_fail(d, HP_NOMEM, "out of memory");
}
