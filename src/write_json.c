/* write_json.c -- JSON output: the explicit model (hetplan expand), the plan file of
 * formats.md with the evaluator's figures and the solver block, and the evaluator's
 * breakdown (hetplan evaluate --json). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"

static hp_err finish(cJSON *root, int ok, char **out, hp_diag *d)
{
  *out = ok ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  return *out ? HP_OK : hp_fail(d, HP_NOMEM, "out of memory writing JSON");
}

static void num_or_null(cJSON *o, const char *key, double v)
{
  if (isfinite(v)) cJSON_AddNumberToObject(o, key, v);
  else cJSON_AddNullToObject(o, key);
}

static cJSON *layer_json(const hp_layer *ly)
{
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "name", ly->name);
  cJSON_AddStringToObject(o, "kind", ly->kind);
  cJSON_AddNumberToObject(o, "params", ly->params);
  cJSON_AddNumberToObject(o, "act_bytes", ly->act_bytes);
  cJSON_AddNumberToObject(o, "act_bytes_replicated", ly->act_repl);
  cJSON_AddNumberToObject(o, "out_bytes", ly->out_bytes);
  cJSON_AddNumberToObject(o, "flops", ly->flops);
  cJSON_AddNumberToObject(o, "tp_comm_bytes", ly->tp_comm);
  cJSON_AddNumberToObject(o, "work_bytes", ly->work_bytes);
  cJSON_AddNumberToObject(o, "work_bytes_fixed", ly->work_fixed);
  cJSON_AddBoolToObject(o, "splittable", ly->splittable);
  if (ly->no_recompute) cJSON_AddBoolToObject(o, "checkpointable", 0);
  return o;
}

/* The items of `node` (-1: the root) into arr: a module as {"name", "children"}, a layer
 * as in "layers" (formats.md "modules"); depth is at most HP_MAX_MODULE_DEPTH. */
static int add_items(const hp_model *m, int node, cJSON *arr)
{
  int first = node < 0 ? 0 : m->modules[node].first;
  int last = node < 0 ? m->n_layers : m->modules[node].last;
  hp_module_item *it = hp__calloc((size_t)(last - first), sizeof *it);
  int ok = it != NULL;
  int n = ok ? hp_model_items(m, node, it) : 0;
  for (int i = 0; ok && i < n; i++) {
    cJSON *o;
    if (it[i].module < 0) {
      ok = (o = layer_json(&m->layers[it[i].first])) != NULL;
    } else {
      cJSON *kids;
      ok = (o = cJSON_CreateObject()) != NULL;
      if (ok) {
        cJSON_AddStringToObject(o, "name", m->modules[it[i].module].name);
        ok = (kids = cJSON_AddArrayToObject(o, "children")) != NULL &&
             add_items(m, it[i].module, kids);
      }
    }
    if (o) cJSON_AddItemToArray(arr, o);
  }
  free(it);
  return ok;
}

hp_err hp_model_to_json(const hp_model *m, char **out, hp_diag *d)
{
  cJSON *root = cJSON_CreateObject(), *arr;
  int ok = root != NULL;
  if (ok) {
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "name", m->name);
    cJSON_AddNumberToObject(root, "param_bytes", m->param_bytes);
    cJSON_AddNumberToObject(root, "grad_bytes", m->grad_bytes);
    cJSON_AddNumberToObject(root, "state_bytes", m->state_bytes);
    cJSON_AddNumberToObject(root, "input_bytes", m->input_bytes);
    if (m->update_given) cJSON_AddNumberToObject(root, "update_bytes", m->update_bytes);
    if (m->gemm_precision == HP_GEMM_FP8) cJSON_AddStringToObject(root, "gemm_precision", "fp8");
    if (m->tied_params > 0) cJSON_AddNumberToObject(root, "tied_params", m->tied_params);
    if (m->n_modules > 0) {   /* the tree, so that the file reads back as it is */
      arr = cJSON_AddArrayToObject(root, "modules");
      ok = arr != NULL && add_items(m, -1, arr);
    } else {
      arr = cJSON_AddArrayToObject(root, "layers");
      ok = arr != NULL;
      for (int l = 0; ok && l < m->n_layers; l++) {
        cJSON *o = layer_json(&m->layers[l]);
        if (!o) { ok = 0; break; }
        cJSON_AddItemToArray(arr, o);
      }
    }
  }
  return finish(root, ok, out, d);
}

/* The plan's own keys, shared by the plan file and the evaluation output. */
static int add_plan(cJSON *root, const hp_plan *pl, const hp_eval *e)
{
  cJSON *stages, *shard, *mem;
  cJSON_AddNumberToObject(root, "version", 1);
  cJSON_AddStringToObject(root, "cost_model", HP_COST_MODEL_VERSION);
  cJSON_AddNumberToObject(root, "pp", pl->pp);
  cJSON_AddNumberToObject(root, "tp", pl->tp);
  cJSON_AddNumberToObject(root, "dp", pl->dp);
  cJSON_AddNumberToObject(root, "mbs", pl->mbs);
  cJSON_AddNumberToObject(root, "gas", (double)pl->gas);
  cJSON_AddStringToObject(root, "schedule", hp_schedule_name(pl->schedule));
  if (!(stages = cJSON_AddArrayToObject(root, "stages"))) return 0;
  for (int s = 0; s < pl->pp; s++) {
    cJSON *o = cJSON_CreateObject(), *ly, *dv;
    int pair[2] = { pl->first[s], hp_stage_last(pl, s) };
    if (!o) return 0;
    cJSON_AddItemToArray(stages, o);
    if (!(ly = cJSON_CreateIntArray(pair, 2))) return 0;
    cJSON_AddItemToObject(o, "layers", ly);
    cJSON_AddBoolToObject(o, "recompute", pl->recompute[s]);
    if (!(dv = cJSON_AddArrayToObject(o, "devices"))) return 0;
    for (int r = 0; r < pl->dp; r++) {
      cJSON *row = cJSON_CreateIntArray(&pl->dev[HP_SLOT(pl, s, r, 0)], pl->tp);
      if (!row) return 0;
      cJSON_AddItemToArray(dv, row);
    }
  }
  if (!(shard = cJSON_AddArrayToObject(root, "sharding"))) return 0;
  for (int l = 0; l < pl->n_layers; l++)
    cJSON_AddItemToArray(shard, cJSON_CreateString(hp_shard_name(pl->mode[l])));
  {
    int any = 0;
    for (int l = 0; l < pl->n_layers; l++) any |= pl->slices[l] != 0;
    if (any) {
      cJSON *sl = cJSON_AddArrayToObject(root, "slices");
      if (!sl) return 0;
      for (int l = 0; l < pl->n_layers; l++)
        cJSON_AddItemToArray(sl, cJSON_CreateNumber(hp_plan_slices(pl, l)));
    }
  }
  if (!e) return 1;
  if (pl->pp * pl->dp * pl->tp < e->n_devices) {      /* idle devices, listed (checked on load) */
    cJSON *idle = cJSON_AddArrayToObject(root, "idle");
    for (int dv = 0; idle && dv < e->n_devices; dv++)
      if (e->idle[dv]) cJSON_AddItemToArray(idle, cJSON_CreateNumber(dv));
  }
  cJSON_AddNumberToObject(root, "iteration_time", e->iteration_time);
  cJSON_AddNumberToObject(root, "throughput", e->throughput);
  cJSON_AddNumberToObject(root, "mfu", e->mfu);
  cJSON_AddBoolToObject(root, "feasible", e->feasible);
  if (!(mem = cJSON_AddArrayToObject(root, "peak_memory"))) return 0;
  for (int dv = 0; dv < e->n_devices; dv++) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return 0;
    cJSON_AddItemToArray(mem, o);
    cJSON_AddNumberToObject(o, "device", dv);
    cJSON_AddNumberToObject(o, "bytes", e->mem[dv]);
    cJSON_AddNumberToObject(o, "capacity", e->cap[dv]);
  }
  return 1;
}

/* Where the plan's problem came from, so that commands reading the plan need no more
 * flags: the files (as given when loaded), gbs, schedule and memory margin. */
static void add_inputs(cJSON *root, const hp_problem *prob)
{
  cJSON *in;
  if (!prob || !(in = cJSON_AddObjectToObject(root, "inputs"))) return;
  /* a pipe's name (/dev/fd/63) is no use later */
#define FILE_PATH(p) ((p) && strncmp((p), "/dev/", 5) && strncmp((p), "/proc/", 6))
  if (FILE_PATH(prob->model->path)) cJSON_AddStringToObject(in, "model", prob->model->path);
  if (FILE_PATH(prob->cluster->path)) cJSON_AddStringToObject(in, "cluster", prob->cluster->path);
  if (prob->profile && FILE_PATH(prob->profile->path))
    cJSON_AddStringToObject(in, "profile", prob->profile->path);
#undef FILE_PATH
  cJSON_AddNumberToObject(in, "gbs", (double)prob->job.gbs);
  cJSON_AddStringToObject(in, "schedule", hp_schedule_name(prob->job.schedule));
  cJSON_AddNumberToObject(in, "mem_margin", prob->cluster->mem_margin);
  /* the job's 1.2 fields, where they differ from the defaults */
  if (prob->job.sequence_parallel) cJSON_AddBoolToObject(in, "sequence_parallel", 1);
  if (prob->job.grad_sync != HP_SYNC_END)
    cJSON_AddStringToObject(in, "grad_sync", hp_grad_sync_name(prob->job.grad_sync));
  if (hp_job_modes(&prob->job) != HP_SHARD_ALL) {
    cJSON *m = cJSON_AddArrayToObject(in, "sharding");
    for (int q = 0; m && q < HP_N_SHARD; q++)
      if (hp_job_modes(&prob->job) >> q & 1u) cJSON_AddItemToArray(m, cJSON_CreateString(hp_shard_name(q)));
  }
  if (prob->job.uniform_sharding) cJSON_AddBoolToObject(in, "uniform_sharding", 1);
  if (prob->job.idle_devices) cJSON_AddBoolToObject(in, "idle_devices", 1);
  if (hp_job_max_slices(&prob->job) > 1)
    cJSON_AddNumberToObject(in, "max_slices", hp_job_max_slices(&prob->job));
  if (prob->job.framework != HP_FW_NONE)
    cJSON_AddStringToObject(in, "framework", hp_framework_name(prob->job.framework));
  if (prob->job.compute_model != HP_COMPUTE_SHAPE)
    cJSON_AddStringToObject(in, "compute_model",
                            hp_compute_model_name((hp_compute_model)prob->job.compute_model));
}

static int add_counts(cJSON *o, const hp_cov_count *n)
{
  return cJSON_AddNumberToObject(o, "cells", n->cells) &&
         cJSON_AddNumberToObject(o, "measured", n->measured) &&
         cJSON_AddNumberToObject(o, "derived", n->derived) &&
         cJSON_AddNumberToObject(o, "estimated", n->estimated) &&
         cJSON_AddNumberToObject(o, "shape_model", n->shape);
}

/* One axis of the coverage: [{ key: value, cells, measured, derived, estimated }, ...]. */
static int add_axis(cJSON *root, const char *name, const char *key, int n, const int *num,
                    const char *const *str, const int *layers, const hp_cov_count *by)
{
  cJSON *arr = cJSON_AddArrayToObject(root, name);
  if (!arr) return 0;
  for (int i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return 0;
    cJSON_AddItemToArray(arr, o);
    if (str) cJSON_AddStringToObject(o, key, str[i]);
    else cJSON_AddNumberToObject(o, key, num[i]);
    if (layers) cJSON_AddNumberToObject(o, "layers", layers[i]);
    if (!add_counts(o, &by[i])) return 0;
  }
  return 1;
}

/* Adds "profile_coverage": {...} (docs/formats.md) to a plan file's or evaluation's tree. */
static int add_coverage(cJSON *root, const hp_coverage *c, const hp_problem *p)
{
  cJSON *cov = NULL, *est = NULL;
  const char **tnames = hp__calloc((size_t)c->n_types + 1, sizeof *tnames);
  int ok = tnames && (cov = cJSON_AddObjectToObject(root, "profile_coverage")) != NULL;
  for (int i = 0; ok && i < c->n_types; i++) tnames[i] = p->cluster->types[c->types[i]].name;
  if (ok) {
    if (c->profile) cJSON_AddStringToObject(cov, "profile", c->profile);
    else cJSON_AddNullToObject(cov, "profile");
    cJSON_AddStringToObject(cov, "scope", hp_cov_scope_name(c->scope));
    ok = add_counts(cov, &c->total) &&
         add_axis(cov, "kinds", "kind", c->n_kinds, NULL, c->kinds, c->kind_layers, c->by_kind) &&
         add_axis(cov, "types", "type", c->n_types, NULL, tnames, NULL, c->by_type) &&
         add_axis(cov, "tp", "tp", c->n_tps, c->tps, NULL, NULL, c->by_tp) &&
         (c->scope == HP_COV_GROUPS ||
          add_axis(cov, "mbs", "mbs", c->n_mbs, c->mbs, NULL, NULL, c->by_mbs)) &&
         (est = cJSON_AddArrayToObject(cov, "estimated_cells")) != NULL;
  }
  for (int i = 0; ok && i < c->n_cells; i++) {
    const hp_cov_cell *cell = &c->cells[i];
    cJSON *o;
    if (cell->source != HP_CELL_ESTIMATED && cell->source != HP_CELL_SHAPE) continue;
    if (!(o = cJSON_CreateObject())) { ok = 0; break; }
    cJSON_AddItemToArray(est, o);
    if (cell->source == HP_CELL_SHAPE) cJSON_AddStringToObject(o, "source", "shape model");
    cJSON_AddStringToObject(o, "kind", c->kinds[cell->kind]);
    cJSON_AddStringToObject(o, "type", p->cluster->types[cell->type].name);
    cJSON_AddNumberToObject(o, "tp", cell->tp);
    if (cell->mbs > 0) cJSON_AddNumberToObject(o, "mbs", cell->mbs);
  }
  if (ok) {
    cJSON_AddNumberToObject(cov, "profile_entries", c->profile_entries);
    cJSON_AddNumberToObject(cov, "unused_profile_entries", c->unused_entries);
  }
  free(tnames);
  return ok;
}

hp_err hp_plan_to_json(const hp_problem *prob, const hp_plan *plan, const hp_eval *e,
                       const hp_result *res, const char *solver_name,
                       const hp_coverage *cov, char **out, hp_diag *d)
{
  cJSON *root = cJSON_CreateObject();
  int ok = root && add_plan(root, plan, e);
  if (ok) add_inputs(root, prob);
  if (ok && res) {
    cJSON *s = cJSON_AddObjectToObject(root, "solver");
    ok = s != NULL;
    if (ok) {
      double gap = isfinite(res->bound) && res->objective > 0
                   ? (res->objective - res->bound) / res->objective : NAN;
      cJSON_AddStringToObject(s, "name", solver_name ? solver_name : "unknown");
      cJSON_AddStringToObject(s, "status", hp_sol_status_name(res->status));
      num_or_null(s, "lower_bound", res->bound);
      num_or_null(s, "gap", gap < 0 ? 0 : gap);
      cJSON_AddNumberToObject(s, "seconds", res->seconds);
      cJSON_AddStringToObject(s, "space", hp_space_name(res->space));
      if (res->space_note[0]) cJSON_AddStringToObject(s, "space_note", res->space_note);
      if (hp_stop_name(res->stopped)) cJSON_AddStringToObject(s, "stopped", hp_stop_name(res->stopped));
      cJSON_AddNumberToObject(s, "work", (double)res->work);
      /* a plan that leaves devices idle: the best the search met using them all */
      if (e && e->n_used < e->n_devices) num_or_null(s, "all_used_time", res->all_used_time);
    }
  }
  if (ok && cov) ok = add_coverage(root, cov, prob);
  return finish(root, ok, out, d);
}

/* The job the plan was scored under (cost-model.md 1 "Job"), whole, defaults included. */
static void add_job(cJSON *root, const hp_problem *prob)
{
  const hp_job *j = &prob->job;
  cJSON *o = cJSON_AddObjectToObject(root, "job"), *m;
  if (!o) return;
  cJSON_AddNumberToObject(o, "gbs", (double)j->gbs);
  cJSON_AddStringToObject(o, "schedule", hp_schedule_name(j->schedule));
  cJSON_AddBoolToObject(o, "sequence_parallel", j->sequence_parallel);
  cJSON_AddStringToObject(o, "grad_sync", hp_grad_sync_name(j->grad_sync));
  if ((m = cJSON_AddArrayToObject(o, "sharding")) != NULL)
    for (int q = 0; q < HP_N_SHARD; q++)
      if (hp_job_modes(j) >> q & 1u) cJSON_AddItemToArray(m, cJSON_CreateString(hp_shard_name(q)));
  cJSON_AddBoolToObject(o, "uniform_sharding", j->uniform_sharding);
  cJSON_AddBoolToObject(o, "idle_devices", j->idle_devices);
  cJSON_AddNumberToObject(o, "max_slices", hp_job_max_slices(j));
  cJSON_AddStringToObject(o, "compute_model", hp_compute_model_name((hp_compute_model)j->compute_model));
}

/* One stage of the breakdown (docs/formats.md "Evaluation"): per replica [r] arrays, per
 * stage numbers. */
static int add_stage(cJSON *st, const hp_plan *plan, const hp_eval *e, int s)
{
  int dp = plan->dp, pair[2] = { plan->first[s], hp_stage_last(plan, s) };
  size_t at = (size_t)s * (size_t)dp;
  char modes[96];
  cJSON *o = cJSON_CreateObject(), *mem;
  if (!o) return 0;
  cJSON_AddItemToArray(st, o);
  cJSON_AddNumberToObject(o, "stage", s);
  cJSON_AddItemToObject(o, "layers", cJSON_CreateIntArray(pair, 2));
  cJSON_AddStringToObject(o, "modes", hp_stage_modes(plan, s, modes, sizeof modes));
  cJSON_AddBoolToObject(o, "recompute", plan->recompute[s]);
  cJSON_AddItemToObject(o, "compute", cJSON_CreateDoubleArray(&e->compute[at], dp));
  cJSON_AddNumberToObject(o, "gather", e->gather[s]);
  cJSON_AddNumberToObject(o, "scatter", e->scatter[s]);
  cJSON_AddItemToObject(o, "stage_time", cJSON_CreateDoubleArray(&e->stage_time[at], dp));
  cJSON_AddItemToObject(o, "backward", cJSON_CreateDoubleArray(&e->backward[at], dp));
  cJSON_AddItemToObject(o, "handoff", cJSON_CreateDoubleArray(&e->handoff[at], dp));
  cJSON_AddItemToObject(o, "handoff_bandwidth", cJSON_CreateDoubleArray(&e->handoff_bw[at], dp));
  cJSON_AddItemToObject(o, "period", cJSON_CreateDoubleArray(&e->period[at], dp));
  cJSON_AddNumberToObject(o, "sync", e->sync[s]);
  cJSON_AddNumberToObject(o, "allgather", e->gat[s]);
  cJSON_AddNumberToObject(o, "step", e->step[s]);
  cJSON_AddNumberToObject(o, "dp_bandwidth", e->bdp[s]);
  cJSON_AddNumberToObject(o, "dp_latency", e->latdp[s]);
  cJSON_AddNumberToObject(o, "memory_bytes", e->stage_mem[s]);
  if (!(mem = cJSON_AddObjectToObject(o, "memory"))) return 0;
  cJSON_AddNumberToObject(mem, "states", e->mem_states[s]);
  cJSON_AddNumberToObject(mem, "gather", e->mem_gather[s]);
  cJSON_AddNumberToObject(mem, "activations", e->mem_act[s]);
  cJSON_AddNumberToObject(mem, "work", e->mem_work[s]);
  return 1;
}

hp_err hp_eval_to_json(const hp_problem *prob, const hp_plan *plan, const hp_eval *e,
                       const hp_coverage *cov, char **out, hp_diag *d)
{
  cJSON *root = cJSON_CreateObject(), *st, *rep, *bn;
  int ok = root && add_plan(root, plan, e);
  int dp = plan->dp;
  if (ok) add_inputs(root, prob);
  if (ok) {
    add_job(root, prob);
    cJSON_AddNumberToObject(root, "gbs", (double)prob->job.gbs);
    cJSON_AddNumberToObject(root, "pipeline_time", e->pipeline_time);
    cJSON_AddNumberToObject(root, "sync_time", e->sync_time);
    cJSON_AddNumberToObject(root, "step_time", e->step_time);
    cJSON_AddNumberToObject(root, "allgather_time", e->gat_time);
    cJSON_AddNumberToObject(root, "step_device", e->step_device);
    cJSON_AddNumberToObject(root, "devices_used", e->n_used);
    ok = (bn = cJSON_AddObjectToObject(root, "bottleneck")) != NULL;
  }
  if (ok) {
    hp_bottleneck b;
    cJSON *terms;
    hp_bottleneck_find(plan, e, &b);
    cJSON_AddStringToObject(bn, "kind", hp_bn_name(b.kind));
    cJSON_AddNumberToObject(bn, "seconds", b.term[b.kind]);
    cJSON_AddNumberToObject(bn, "share", b.share);
    cJSON_AddNumberToObject(bn, "replica", e->slowest_replica);
    cJSON_AddNumberToObject(bn, "stage", e->slowest_stage);
    cJSON_AddNumberToObject(bn, "sync_stage", e->sync_stage);
    if ((terms = cJSON_AddObjectToObject(bn, "terms")) != NULL) {
      cJSON_AddNumberToObject(terms, "slowest_stage", b.term[HP_BN_STAGE]);
      cJSON_AddNumberToObject(terms, "fill_drain", b.term[HP_BN_FILL]);
      cJSON_AddNumberToObject(terms, "handoffs", b.term[HP_BN_HANDOFF]);
      cJSON_AddNumberToObject(terms, "sync", b.term[HP_BN_SYNC]);
      cJSON_AddNumberToObject(terms, "steady_state_handoffs", b.term[HP_BN_PERIOD]);
      cJSON_AddNumberToObject(terms, "zero_per_microbatch", b.term[HP_BN_ZERO]);
      cJSON_AddNumberToObject(terms, "step", b.term[HP_BN_STEP]);
      cJSON_AddNumberToObject(terms, "allgather", b.term[HP_BN_ALLGATHER]);
    }
    if (!e->feasible) {
      cJSON *o = cJSON_AddObjectToObject(root, "out_of_memory");
      ok = o != NULL;
      if (ok) {
        cJSON_AddNumberToObject(o, "device", e->oom_device);
        cJSON_AddNumberToObject(o, "stage", e->oom_stage);
        cJSON_AddNumberToObject(o, "overflow_bytes", e->oom_bytes);
      }
    }
  }
  if (ok) ok = (rep = cJSON_CreateDoubleArray(e->replica_time, dp)) != NULL;
  if (ok) cJSON_AddItemToObject(root, "replica_time", rep);
  if (ok) ok = (st = cJSON_AddArrayToObject(root, "stage_breakdown")) != NULL;
  for (int s = 0; ok && s < plan->pp; s++) ok = add_stage(st, plan, e, s);
  if (ok && cov) ok = add_coverage(root, cov, prob);
  return finish(root, ok, out, d);
}
