/* calibrate.c -- fits a cluster's per-type time parameters and reserve to measured runs
 * (hp_calibrate.h, docs/calibrate.md): least squares on log(predicted / measured) by
 * coordinate descent with a golden-section search per parameter, bounded; the reserve as
 * the mean memory residual (clamped at 0); leave-one-out refits for what the fit is worth.
 * Every prediction is the evaluator's (hp_evaluate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_util.h"

#define GIB 1073741824.0

static double get_eff(const hp_devtype *t) { return t->eff; }
static void set_eff(hp_devtype *t, double v) { t->eff = v; }

/* The local table: the efficiency, every analytic layer time's per-type scale (F mbs /
 * (t peak eff)). The shape model's table (hp_shape.h) has the same shape. */
static const hp_fit_param params[] = {
  { "efficiency", 0.01, 1.0, get_eff, set_eff },
};

const hp_fit_param *hp_calib_params(int *n)
{
  *n = (int)(sizeof params / sizeof *params);
  return params;
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
  hp_cluster_destroy(&c->cluster);
  free(c->cluster_path);
  free(c);
  *pc = NULL;
}

/* --- The fit. A variable is one (type of the calibrated cluster, parameter). */
typedef struct fit_var { int type, param; } fit_var;

/* Sets variable v to x in every run's problem. */
static void apply(hp_calib *c, const fit_var *v, double x)
{
  const hp_fit_param *pt = &params[v->param];
  for (int i = 0; i < c->n_runs; i++) {
    hp_cluster *cl = c->runs[i].prob->cluster;
    for (int k = 0; k < cl->n_types; k++)
      if (c->runs[i].type_map[k] == v->type) pt->set(&cl->types[k], x);
  }
}

/* The predicted iteration time of run i, s. */
static hp_err predict(const hp_calib_run *r, double *t, hp_eval *keep, hp_diag *d)
{
  hp_eval e = {0};
  hp_err err = hp_evaluate(r->prob, r->pl, &e, d);
  *t = err ? NAN : e.iteration_time;
  if (!err && keep) *keep = e;
  else hp_eval_release(&e);
  return err;
}

/* Sum over the runs in `in` (NULL: all) of log(predicted / measured)^2. */
static hp_err objective(hp_calib *c, const unsigned char *in, double *f, hp_diag *d)
{
  double s = 0;
  for (int i = 0; i < c->n_runs; i++) {
    double t;
    hp_err err;
    if (in && !in[i]) continue;
    if ((err = predict(&c->runs[i], &t, NULL, d))) return err;
    s += log(t / c->runs[i].time) * log(t / c->runs[i].time);
  }
  *f = s;
  return HP_OK;
}

/* Whether some run in `in` depends on variable v (its value moved by 10 % moves a
 * prediction); restores the value. */
static hp_err depends(hp_calib *c, const unsigned char *in, const fit_var *v, double x, int *dep,
                      hp_diag *d)
{
  const hp_fit_param *pt = &params[v->param];
  double y = x * 0.9 >= pt->lo ? x * 0.9 : x * 1.1 <= pt->hi ? x * 1.1 : pt->lo;
  hp_err err;
  *dep = 0;
  for (int i = 0; i < c->n_runs && !*dep; i++) {
    double t0, t1;
    int uses = 0;
    if (in && !in[i]) continue;
    for (int k = 0; k < c->runs[i].prob->cluster->n_types; k++) uses |= c->runs[i].type_map[k] == v->type;
    if (!uses) continue;
    apply(c, v, x);
    if ((err = predict(&c->runs[i], &t0, NULL, d))) return err;
    apply(c, v, y);
    err = predict(&c->runs[i], &t1, NULL, d);
    apply(c, v, x);
    if (err) return err;
    *dep = fabs(t1 - t0) > 1e-12 * t0;
  }
  return HP_OK;
}

/* Golden-section search of variable v over its range in log space, the others fixed;
 * leaves it at the best point met (the current value if nothing beats it). */
static hp_err golden(hp_calib *c, const unsigned char *in, const fit_var *v, double *x,
                     double *fx, hp_diag *d)
{
  const hp_fit_param *pt = &params[v->param];
  const double g = (sqrt(5.0) - 1) / 2;
  double a = log(pt->lo), b = log(pt->hi), u1 = b - g * (b - a), u2 = a + g * (b - a), f1, f2;
  double best = *x, fbest = *fx;
  hp_err err;
  apply(c, v, exp(u1));
  if ((err = objective(c, in, &f1, d))) return err;
  apply(c, v, exp(u2));
  if ((err = objective(c, in, &f2, d))) return err;
  for (int s = 0; s < HP_CALIB_GOLDEN_STEPS && b - a > 1e-13; s++) {
    if (f1 < fbest) { fbest = f1; best = exp(u1); }
    if (f2 < fbest) { fbest = f2; best = exp(u2); }
    if (f1 <= f2) {
      b = u2; u2 = u1; f2 = f1; u1 = b - g * (b - a);
      apply(c, v, exp(u1));
      if ((err = objective(c, in, &f1, d))) return err;
    } else {
      a = u1; u1 = u2; f1 = f2; u2 = a + g * (b - a);
      apply(c, v, exp(u2));
      if ((err = objective(c, in, &f2, d))) return err;
    }
  }
  if (f1 < fbest) { fbest = f1; best = exp(u1); }
  if (f2 < fbest) { fbest = f2; best = exp(u2); }
  apply(c, v, best);
  *x = best;
  *fx = fbest;
  return HP_OK;
}

/* Fits the variables vars[0..nv) (values x, updated) on the runs in `in`; the others stay.
 * Returns the sweeps taken in *sweeps. */
static hp_err fit_time(hp_calib *c, const unsigned char *in, const fit_var *vars, int nv,
                       double *x, int *sweeps, hp_diag *d)
{
  double f;
  hp_err err;
  for (int j = 0; j < nv; j++) apply(c, &vars[j], x[j]);
  if ((err = objective(c, in, &f, d))) return err;
  *sweeps = 0;
  for (int s = 0; s < HP_CALIB_MAX_SWEEPS && nv > 0; s++) {
    double moved = 0;
    *sweeps = s + 1;
    for (int j = 0; j < nv; j++) {
      double old = x[j];
      if ((err = golden(c, in, &vars[j], &x[j], &f, d))) return err;
      if (fabs(log(x[j] / old)) > moved) moved = fabs(log(x[j] / old));
    }
    if (moved < 1e-12 || f < 1e-30) break;
  }
  return HP_OK;
}

/* Memory of run i at the current figures: the peak over its devices (bytes), with the
 * type and reserve of that device. */
static hp_err run_memory(hp_calib_run *r, double *peak, int *ctype, double *res, hp_diag *d)
{
  hp_eval e = {0};
  hp_err err = hp_evaluate(r->prob, r->pl, &e, d);
  int best = -1;
  if (err) return err;
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

/* Chooses the variables to fit on the runs in `in`: every (used type, parameter) that
 * some run's time depends on, the types used by more runs first, at most as many as the
 * runs. why[] (may be NULL) gets the reason of those left out. */
static hp_err choose(hp_calib *c, const unsigned char *in, const double *start, fit_var *vars,
                     int *nv, const char **why, hp_diag *d)
{
  int np, nt = c->cluster->n_types, nin = 0, cand = 0;
  hp_calib_params(&np);
  for (int i = 0; i < c->n_runs; i++) nin += !in || in[i];
  *nv = 0;
  for (int p = 0; p < np; p++) {
    /* types by the runs using them, most first (ties: file order) */
    for (int want = c->n_runs; want >= 1; want--)
      for (int k = 0; k < nt; k++) {
        int dep, idx = k * np + p;
        hp_err err;
        if (runs_using(c, in, k) != want) continue;
        if ((err = depends(c, in, &(fit_var){ k, p }, start[idx], &dep, d))) return err;
        if (!dep) {
          if (why) why[idx] = "no run's time depends on it (another type sets the pace, or its layers are profiled)";
          continue;
        }
        cand++;
        if (*nv >= nin) {
          if (why) why[idx] = "more parameters than runs: add runs to fit it";
          continue;
        }
        vars[(*nv)++] = (fit_var){ k, p };
      }
  }
  (void)cand;
  return HP_OK;
}

hp_err hp_calib_fit(hp_calib *c, hp_diag *d)
{
  int np, nt = c->cluster->n_types, n = c->n_runs, nv = 0, sw;
  const hp_fit_param *pt = hp_calib_params(&np);
  double *start = NULL, *x = NULL, *res0 = NULL, *res = NULL;
  const char **why = NULL;
  fit_var *vars = NULL;
  unsigned char *in = NULL;
  int *used = NULL, *memruns = NULL;
  hp_err err = HP_OK;
  start = hp__calloc((size_t)(nt * np), sizeof *start);
  x = hp__calloc((size_t)(nt * np), sizeof *x);
  why = hp__calloc((size_t)(nt * np), sizeof *why);
  vars = hp__calloc((size_t)(nt * np), sizeof *vars);
  res0 = hp__calloc((size_t)nt, sizeof *res0);
  res = hp__calloc((size_t)nt, sizeof *res);
  in = hp__calloc((size_t)n, 1);
  used = hp__calloc((size_t)nt, sizeof *used);
  memruns = hp__calloc((size_t)nt, sizeof *memruns);
  c->values = hp__calloc((size_t)(nt * (np + 1)), sizeof *c->values);
  if (!start || !x || !why || !vars || !res0 || !res || !in || !used || !memruns || !c->values) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    goto done;
  }
  /* the starting figures: the calibrated cluster's own (the runs' problems may carry a
   * framework's default reserve: the bound figure is the one a plan sees) */
  for (int k = 0; k < nt; k++) {
    for (int p = 0; p < np; p++) start[k * np + p] = pt[p].get(&c->cluster->types[k]);
    res0[k] = -1;
    used[k] = runs_using(c, NULL, k);
  }
  for (int k = 0; k < nt; k++)
    for (int p = 0; p < np; p++) apply(c, &(fit_var){ k, p }, start[k * np + p]);
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
      }
    }
  }
  for (int k = 0; k < nt; k++) if (res0[k] < 0) res0[k] = c->cluster->types[k].reserved;
  /* the time fit on every run */
  memcpy(x, start, (size_t)(nt * np) * sizeof *x);
  HP_TRY(choose(c, NULL, start, vars, &nv, why, d));
  {
    double *xv = hp__calloc((size_t)(nv ? nv : 1), sizeof *xv);
    if (!xv) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
    for (int j = 0; j < nv; j++) xv[j] = start[vars[j].type * np + vars[j].param];
    err = fit_time(c, NULL, vars, nv, xv, &c->sweeps, d);
    for (int j = 0; !err && j < nv; j++) x[vars[j].type * np + vars[j].param] = xv[j];
    free(xv);
    if (err) goto done;
  }
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
  /* the values, before and after */
  c->n_values = 0;
  for (int p = 0; p < np; p++)
    for (int k = 0; k < nt; k++) {
      int idx = k * np + p, fitted = 0;
      if (!used[k]) continue;
      for (int j = 0; j < nv; j++) fitted |= vars[j].type == k && vars[j].param == p;
      c->values[c->n_values++] = (hp_calib_value){ k, pt[p].name, start[idx], x[idx], fitted,
                                                   fitted ? NULL : why[idx], used[k] };
    }
  for (int k = 0; k < nt; k++) {
    if (!used[k]) continue;
    c->values[c->n_values++] = (hp_calib_value){ k, "reserved_gib", res0[k] / GIB, res[k] / GIB,
      memruns[k] > 0, memruns[k] > 0 ? NULL : "no run gives peak memory on it", memruns[k] };
  }
  /* leave-one-out: refit without run i (from the starting figures), predict run i */
  c->loo_time_mae = c->loo_time_worst = c->loo_mem_mae = c->loo_mem_worst = 0;
  c->loo_time_worst_run = 0;
  c->loo_mem_worst_run = -1;
  for (int i = 0; i < n; i++) {
    hp_calib_run *r = &c->runs[i];
    int lnv, cnt;
    double *xv, e;
    memset(in, 1, (size_t)n);
    in[i] = 0;
    for (int k = 0; k < nt; k++)
      for (int p = 0; p < np; p++) apply(c, &(fit_var){ k, p }, start[k * np + p]);
    HP_TRY(choose(c, in, start, vars, &lnv, NULL, d));
    if (!(xv = hp__calloc((size_t)(lnv ? lnv : 1), sizeof *xv))) {
      err = hp_fail(d, HP_NOMEM, "out of memory");
      goto done;
    }
    for (int j = 0; j < lnv; j++) xv[j] = start[vars[j].type * np + vars[j].param];
    err = fit_time(c, in, vars, lnv, xv, &sw, d);
    free(xv);
    if (err) goto done;
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
  /* leave the problems at the fitted figures */
  for (int k = 0; k < nt; k++)
    for (int p = 0; p < np; p++) apply(c, &(fit_var){ k, p }, x[k * np + p]);
  for (int k = 0; k < nt; k++) apply_reserve(c, k, res[k]);
done:
  free(start);
  free(x);
  free(why);
  free(vars);
  free(res0);
  free(res);
  free(in);
  free(used);
  free(memruns);
  return err;
}

hp_err hp_calib_cluster_json(const hp_calib *c, const char *runs_name, const char *date,
                             char **out, hp_diag *d)
{
  ju_ctx jc = { c->cluster_path, d };
  char *text = NULL;
  cJSON *root = NULL, *types, *cal, *arr, *loo;
  hp_err err;
  *out = NULL;
  HP_TRY(hp_read_file(c->cluster_path, &text, d));
  HP_TRY(ju_parse(&jc, text, &root));
  types = cJSON_GetObjectItemCaseSensitive(root, "device_types");
  for (int v = 0; v < c->n_values; v++) {
    const hp_calib_value *cv = &c->values[v];
    cJSON *t = cJSON_GetObjectItemCaseSensitive(types, c->cluster->types[cv->type].name);
    if (!cv->fitted || !cJSON_IsObject(t)) continue;
    /* a reserve as fitted, in GiB to the byte; a time parameter as fitted */
    cJSON_DeleteItemFromObjectCaseSensitive(t, cv->param);
    if (!cJSON_AddNumberToObject(t, cv->param, cv->after)) goto oom;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(root, "calibrated");
  if (!(cal = cJSON_AddObjectToObject(root, "calibrated"))) goto oom;
  cJSON_AddStringToObject(cal, "runs", runs_name ? runs_name : "");
  cJSON_AddStringToObject(cal, "date", date ? date : "");
  cJSON_AddNumberToObject(cal, "n_runs", c->n_runs);
  cJSON_AddNumberToObject(cal, "sweeps", c->sweeps);
  if (!(arr = cJSON_AddArrayToObject(cal, "parameters"))) goto oom;
  for (int v = 0; v < c->n_values; v++) {
    const hp_calib_value *cv = &c->values[v];
    cJSON *o = cJSON_CreateObject();
    if (!o) goto oom;
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "type", c->cluster->types[cv->type].name);
    cJSON_AddStringToObject(o, "name", cv->param);
    cJSON_AddNumberToObject(o, "before", cv->before);
    cJSON_AddNumberToObject(o, "after", cv->after);
    cJSON_AddBoolToObject(o, "fitted", cv->fitted);
    if (cv->why) cJSON_AddStringToObject(o, "why_not", cv->why);
  }
  if (!(loo = cJSON_AddObjectToObject(cal, "leave_one_out"))) goto oom;
  cJSON_AddNumberToObject(loo, "time_mae", c->loo_time_mae);
  cJSON_AddNumberToObject(loo, "time_worst", c->loo_time_worst);
  if (c->n_mem > 0) {
    cJSON_AddNumberToObject(loo, "memory_mae", c->loo_mem_mae);
    cJSON_AddNumberToObject(loo, "memory_worst", c->loo_mem_worst);
  }
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
    cJSON_AddNumberToObject(o, "before", cv->before);
    cJSON_AddNumberToObject(o, "after", cv->after);
    cJSON_AddBoolToObject(o, "fitted", cv->fitted);
    cJSON_AddNumberToObject(o, "runs", cv->runs);
    if (cv->why) cJSON_AddStringToObject(o, "why_not", cv->why);
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
