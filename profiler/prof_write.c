/* prof_write.c -- the files hetplan-profile writes (docs/formats.md): a cluster file
 * with the measured bandwidth matrix, one node per host, and a profile file with the
 * layer times, their fixed + per-sample fits, the NCCL collectives and what the layers
 * were measured for (the shape of each kind, the GPUs), which hetplan checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "prof.h"

/* Rounded for people: 6 significant digits (bandwidths, latencies, seconds keep more). */
static double sig(double v, int digits)
{
  char buf[64];
  if (v == 0 || !isfinite(v)) return v;
  snprintf(buf, sizeof buf, "%.*g", digits, v);
  return strtod(buf, NULL);
}

static cJSON *matrix(const double *v, int n, double scale, int digits)
{
  cJSON *rows = cJSON_CreateArray();
  for (int i = 0; rows && i < n; i++) {
    cJSON *row = cJSON_CreateArray();
    if (!row) { cJSON_Delete(rows); return NULL; }
    cJSON_AddItemToArray(rows, row);
    for (int j = 0; j < n; j++)
      cJSON_AddItemToArray(row, cJSON_CreateNumber(i == j ? 0 : sig(v[(size_t)i * n + j] * scale, digits)));
  }
  return rows;
}

static char *finish(cJSON *root)
{
  char *s = root ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  return s;
}

char *prof_cluster_json(const prof_run *r)
{
  cJSON *root = cJSON_CreateObject(), *types, *nodes, *bm;
  int n = r->n_devices, first = 0;
  double inter_bw = INFINITY, inter_lat = 0;
  if (!root) return NULL;
  cJSON_AddNumberToObject(root, "version", 1);
  cJSON_AddStringToObject(root, "name", r->name);
  cJSON_AddStringToObject(root, "source", r->source);
  if (r->notes[0]) cJSON_AddStringToObject(root, "notes", r->notes);
  types = cJSON_AddObjectToObject(root, "device_types");
  for (int k = 0; types && k < r->n_types; k++) {
    const prof_type_spec *t = &r->types[k];
    cJSON *o = cJSON_AddObjectToObject(types, t->name);
    if (!o) break;
    cJSON_AddNumberToObject(o, "mem_gib", sig(t->mem_gib, 6));
    cJSON_AddNumberToObject(o, "reserved_gib", sig(t->reserved_gib, 4));
    cJSON_AddNumberToObject(o, "tflops", sig(t->tflops, 6));
    cJSON_AddNumberToObject(o, "efficiency", sig(t->efficiency, 4));
  }
  nodes = cJSON_AddArrayToObject(root, "nodes");
  for (int h = 0; nodes && h < r->n_hosts; h++) {
    const prof_host *ho = &r->hosts[h];
    cJSON *o = cJSON_CreateObject();
    double bw = INFINITY, lat = 0;
    if (!o) break;
    cJSON_AddItemToArray(nodes, o);
    cJSON_AddStringToObject(o, "name", ho->name);
    cJSON_AddStringToObject(o, "type", r->types[ho->type].name);
    cJSON_AddNumberToObject(o, "gpus", ho->gpus);
    /* the slowest pair inside the host, in either direction; the matrix has the rest */
    for (int i = first; i < first + ho->gpus; i++)
      for (int j = first; j < first + ho->gpus; j++) {
        if (i == j) continue;
        if (r->bw[(size_t)i * n + j] < bw) bw = r->bw[(size_t)i * n + j];
        if (r->lat[(size_t)i * n + j] > lat) lat = r->lat[(size_t)i * n + j];
      }
    for (int i = first; i < first + ho->gpus; i++)
      for (int j = 0; j < n; j++) {
        if (j >= first && j < first + ho->gpus) continue;
        if (r->bw[(size_t)i * n + j] < inter_bw) inter_bw = r->bw[(size_t)i * n + j];
        if (r->lat[(size_t)i * n + j] > inter_lat) inter_lat = r->lat[(size_t)i * n + j];
      }
    if (ho->gpus > 1) {
      cJSON_AddNumberToObject(o, "intra_gbps", sig(bw * 8 / 1e9, 6));
      cJSON_AddNumberToObject(o, "intra_lat_us", sig(lat * 1e6, 6));
    }
    first += ho->gpus;
  }
  if (r->n_hosts > 1) {
    cJSON_AddNumberToObject(root, "inter_gbps", sig(inter_bw * 8 / 1e9, 6));
    cJSON_AddNumberToObject(root, "inter_lat_us", sig(inter_lat * 1e6, 6));
  }
  if (n > 1 && (bm = cJSON_AddObjectToObject(root, "bandwidth_matrix"))) {
    cJSON_AddItemToObject(bm, "gbps", matrix(r->bw, n, 8 / 1e9, 6));
    cJSON_AddItemToObject(bm, "lat_us", matrix(r->lat, n, 1e6, 6));
  }
  return finish(root);
}

/* The first point of `kind`, or NULL: only kinds timed get a shape record. */
static const prof_point *first_point(const prof_run *r, const char *kind)
{
  for (int i = 0; i < r->n_points; i++)
    if (!strcmp(r->points[i].kind, kind)) return &r->points[i];
  return NULL;
}

/* "kinds": the shape each kind was timed at, from its first layer (the one timed):
 * parameters and FLOPs per sample, a transformer's sizes, the element type. */
static void add_kinds(cJSON *root, const prof_run *r)
{
  const hp_model *m = r->model;
  const hp_transformer *tf = m->transformer;
  cJSON *kinds = cJSON_AddObjectToObject(root, "kinds");
  for (int l = 0; kinds && l < m->n_layers; l++) {
    const hp_layer *ly = &m->layers[l];
    const prof_point *p = first_point(r, ly->kind);
    cJSON *o;
    if (!p || cJSON_GetObjectItemCaseSensitive(kinds, ly->kind)) continue;
    if (!(o = cJSON_AddObjectToObject(kinds, ly->kind))) return;
    cJSON_AddNumberToObject(o, "params", ly->params);
    cJSON_AddNumberToObject(o, "flops", ly->flops);
    if (tf) {
      cJSON_AddNumberToObject(o, "hidden", tf->hidden);
      cJSON_AddNumberToObject(o, "heads", tf->heads);
      cJSON_AddNumberToObject(o, "kv_heads", tf->kv_heads > 0 ? tf->kv_heads : tf->heads);
      cJSON_AddNumberToObject(o, "ffn", hp_transformer_ffn(tf));
      cJSON_AddNumberToObject(o, "seq", tf->seq);
    }
    cJSON_AddStringToObject(o, "dtype", r->types[p->type].bf16 ? "bf16" : "fp16");
  }
}

char *prof_profile_json(const prof_run *r)
{
  cJSON *root = cJSON_CreateObject(), *arr;
  if (!root) return NULL;
  cJSON_AddNumberToObject(root, "version", 1);
  cJSON_AddStringToObject(root, "source", r->source);
  if (r->notes[0]) cJSON_AddStringToObject(root, "notes", r->notes);
  if (r->model && r->n_points > 0) {
    cJSON_AddStringToObject(root, "model", r->model->name);
    add_kinds(root, r);
  }
  for (int k = 0; k < r->n_types; k++) {
    cJSON *gpus = cJSON_GetObjectItemCaseSensitive(root, "gpus"), *o;
    if (!r->types[k].gpu[0]) continue;
    if (!gpus && !(gpus = cJSON_AddObjectToObject(root, "gpus"))) break;
    if (!(o = cJSON_AddObjectToObject(gpus, r->types[k].name))) break;
    cJSON_AddStringToObject(o, "name", r->types[k].gpu);
    cJSON_AddStringToObject(o, "dtype", r->types[k].bf16 ? "bf16" : "fp16");
  }
  /* the setting the layers were built under: a job with the other ignores the memory */
  cJSON_AddBoolToObject(root, "sequence_parallel", r->sequence_parallel != 0);
  if ((arr = cJSON_AddArrayToObject(root, "device_types")))
    for (int k = 0; k < r->n_types; k++) cJSON_AddItemToArray(arr, cJSON_CreateString(r->types[k].name));
  if ((arr = cJSON_AddArrayToObject(root, "layer_times")))
    for (int i = 0; i < r->n_points; i++) {
      const prof_point *p = &r->points[i];
      cJSON *o = cJSON_CreateObject();
      if (!o) break;
      cJSON_AddItemToArray(arr, o);
      cJSON_AddStringToObject(o, "kind", p->kind);
      cJSON_AddStringToObject(o, "type", r->types[p->type].name);
      cJSON_AddNumberToObject(o, "tp", p->tp);
      cJSON_AddNumberToObject(o, "mbs", p->mbs);
      cJSON_AddNumberToObject(o, "seconds", sig(p->seconds, 6));
      cJSON_AddNumberToObject(o, "compute_seconds", sig(p->compute_seconds, 6));
      cJSON_AddNumberToObject(o, "tp_comm_seconds", sig(p->tp_comm_seconds, 6));
      cJSON_AddNumberToObject(o, "peak_bytes", p->peak_bytes);
      /* cost terms since 1.2 (cost-model.md 1): written only where measured, never a 0
       * that would read as a measured nothing */
      if (p->mem_measured) {
        cJSON_AddNumberToObject(o, "act_bytes", p->act_bytes);
        cJSON_AddNumberToObject(o, "work_bytes", p->work_bytes);
      }
    }
  if (r->n_fits > 0 && (arr = cJSON_AddArrayToObject(root, "layer_fits")))
    for (int i = 0; i < r->n_fits; i++) {
      const prof_line_fit *f = &r->fits[i];
      cJSON *o = cJSON_CreateObject();
      if (!o) break;
      cJSON_AddItemToArray(arr, o);
      cJSON_AddStringToObject(o, "kind", f->kind);
      cJSON_AddStringToObject(o, "type", r->types[f->type].name);
      cJSON_AddNumberToObject(o, "tp", f->tp);
      cJSON_AddNumberToObject(o, "fixed_seconds", sig(f->fixed, 6));
      cJSON_AddNumberToObject(o, "per_sample_seconds", sig(f->per_sample, 6));
      cJSON_AddNumberToObject(o, "points", f->points);
    }
  if (r->n_colls > 0 && (arr = cJSON_AddArrayToObject(root, "collectives")))
    for (int i = 0; i < r->n_colls; i++) {
      const prof_coll *c = &r->colls[i];
      cJSON *o = cJSON_CreateObject();
      if (!o) break;
      cJSON_AddItemToArray(arr, o);
      cJSON_AddStringToObject(o, "op", c->op);
      cJSON_AddNumberToObject(o, "ranks", c->ranks);
      cJSON_AddNumberToObject(o, "bytes", c->bytes);
      cJSON_AddNumberToObject(o, "seconds", sig(c->seconds, 6));
    }
  if (r->n_coll_fits > 0 && (arr = cJSON_AddArrayToObject(root, "collective_fits")))
    for (int i = 0; i < r->n_coll_fits; i++) {
      const prof_coll_fit *c = &r->coll_fits[i];
      cJSON *o = cJSON_CreateObject();
      if (!o) break;
      cJSON_AddItemToArray(arr, o);
      cJSON_AddStringToObject(o, "op", c->op);
      cJSON_AddNumberToObject(o, "ranks", c->ranks);
      cJSON_AddNumberToObject(o, "lat_us", sig(c->lat * 1e6, 6));
      cJSON_AddNumberToObject(o, "bus_gbps", sig(c->bus_bw * 8 / 1e9, 6));
      cJSON_AddNumberToObject(o, "points", c->points);
    }
  return finish(root);
}
