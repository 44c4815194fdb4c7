/* load_cluster.c -- reads a cluster file (formats.md "Cluster"): device types, nodes,
 * default inter-node figures, per-pair links and an optional device bandwidth matrix.
 * Units: mem_gib 2^30 bytes, tflops 1e12 FLOP/s, gbps 1e9 bit/s, lat_us microseconds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"

#define GIB 1073741824.0
#define GBPS (1e9 / 8.0)

static const char *const cluster_keys[] = {
  "version", "name", "source", "notes", "device_types", "nodes", "inter_gbps",
  "inter_lat_us", "links", "bandwidth_matrix", "mem_margin", "calibrated", NULL };
static const char *const type_keys[] = {
  "mem_gib", "reserved_gib", "tflops", "efficiency", "hbm_gbs", "tflops_fp8", "shape",
  "source", "notes", NULL };
static const char *const node_keys[] = {
  "name", "type", "gpus", "intra_gbps", "intra_lat_us", "source", "notes", NULL };
static const char *const link_keys[] = { "a", "b", "gbps", "lat_us", NULL };

/* A type's "shape" object (hp_shape.h): each constant of the table in its range, an omitted
 * one at its default; "source" and "notes" say where the figures come from. The shape
 * model streams its memory-bound work at hbm_gbs, so it needs it. */
static hp_err read_shape(ju_ctx *c, const cJSON *it, const char *path, hp_devtype *t)
{
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(it, "shape");
  const char *keys[40];
  int n, nk = 0;
  const hp_shape_param *q = hp_shape_params(&n);
  char p[256];
  hp_err err;
  if (!o) return HP_OK;
  ju_join(p, sizeof p, path, "shape");
  if ((err = ju_object(c, o, p))) return err;
  for (int i = 0; i < n && nk < 37; i++) keys[nk++] = q[i].name;
  keys[nk++] = "source";
  keys[nk++] = "notes";
  keys[nk] = NULL;
  ju_unknown_keys(c, o, p, keys);
  hp_shape_defaults(&t->shape);
  for (int i = 0; i < n; i++) {
    double v;
    if ((err = ju_num(c, o, p, q[i].name, 0, q[i].def, 0, 0, &v))) return err;
    if (!(v >= q[i].lo && v <= q[i].hi))
      return hp_fail(c->d, HP_PARSE, "%s: %s.%s: %g is outside [%g, %g] (docs/cost-model.md, "
                     "\"Shape model\")", c->file, p, q[i].name, v, q[i].lo, q[i].hi);
    hp_shape_set(&t->shape, &q[i], v);
  }
  if (t->hbm <= 0)
    return hp_fail(c->d, HP_PARSE, "%s: %s: the shape model needs the type's memory bandwidth: "
                   "add \"hbm_gbs\" (e.g. 2039 for A100-SXM4-80GB)", c->file, p);
  return HP_OK;
}

static hp_err read_types(ju_ctx *c, const cJSON *o, hp_cluster *cl)
{
  const cJSON *it;
  hp_err err;
  int n = 0;
  if ((err = ju_object(c, o, "device_types"))) return err;
  cJSON_ArrayForEach(it, o) n++;
  if (n == 0)
    return hp_fail(c->d, HP_PARSE, "%s: device_types: empty: expected at least one type such "
                   "as \"V100\": {\"mem_gib\": 16, \"tflops\": 125}", c->file);
  cl->types = hp__calloc((size_t)n, sizeof *cl->types);
  if (!cl->types) return hp_fail(c->d, HP_NOMEM, "out of memory");
  cJSON_ArrayForEach(it, o) {
    hp_devtype *t = &cl->types[cl->n_types];
    char p[256];
    double gib, res, tf;
    ju_join(p, sizeof p, "device_types", it->string);
    if ((err = ju_name(c, "device_types", it->string))) return err;   /* the key is the name */
    if ((err = ju_object(c, it, p))) return err;
    ju_unknown_keys(c, it, p, type_keys);
    t->name = hp__strdup(it->string);
    cl->n_types++;
    if (!t->name) return hp_fail(c->d, HP_NOMEM, "out of memory");
    if ((err = ju_num(c, it, p, "mem_gib", 1, 0, 0, 1, &gib))) return err;
    if ((err = ju_num(c, it, p, "reserved_gib", 0, 0, 0, 0, &res))) return err;
    if ((err = ju_num(c, it, p, "tflops", 1, 0, 0, 1, &tf))) return err;
    if ((err = ju_num(c, it, p, "efficiency", 0, 1, 0, 1, &t->eff))) return err;
    if (cJSON_GetObjectItemCaseSensitive(it, "hbm_gbs")) {   /* 1.2: 1e9 bytes/s */
      if ((err = ju_num(c, it, p, "hbm_gbs", 1, 0, 0, 1, &t->hbm))) return err;
      t->hbm *= 1e9;
    }
    if (cJSON_GetObjectItemCaseSensitive(it, "tflops_fp8")) {   /* dense FP8 peak */
      if ((err = ju_num(c, it, p, "tflops_fp8", 1, 0, 0, 1, &t->peak_fp8))) return err;
      /* fp8 runs the same tensor cores at least as fast: a figure below the 16-bit one is
       * a sparse/dense or column mix-up, and would slow an fp8 model and lower its MFU's
       * peak without a word */
      if (t->peak_fp8 < tf)
        return hp_fail(c->d, HP_PARSE, "%s: %s.tflops_fp8: %g is below tflops %g: give the "
                       "dense FP8 peak (at least the 16-bit one; H100 SXM: 1979 against 989), "
                       "or leave the key out", c->file, p, t->peak_fp8, tf);
      t->peak_fp8 *= 1e12;
    }
    if ((err = read_shape(c, it, p, t))) return err;
    if (t->eff > 1)
      return hp_fail(c->d, HP_PARSE, "%s: %s.efficiency: expected a fraction in (0, 1], got %g",
                     c->file, p, t->eff);
    if (res >= gib)
      return hp_fail(c->d, HP_PARSE, "%s: %s.reserved_gib: %g leaves nothing of mem_gib %g",
                     c->file, p, res, gib);
    t->mem = gib * GIB;
    t->reserved = res * GIB;
    t->reserved_default = !cJSON_GetObjectItemCaseSensitive(it, "reserved_gib");
    t->peak = tf * 1e12;
  }
  return HP_OK;
}

/* Names looked up by binary search in a sorted index, so that a cluster of thousands of
 * nodes (or types) loads in n log n, not n^2. */
typedef struct name_ix { const char *name; int i; } name_ix;

static int by_name(const void *a, const void *b)
{
  const name_ix *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int find_name(const name_ix *ix, int n, const char *name)
{
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2, c = strcmp(ix[mid].name, name);
    if (c == 0) return ix[mid].i;
    if (c < 0) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}

static name_ix *index_types(const hp_cluster *cl)
{
  name_ix *ix = hp__calloc((size_t)cl->n_types, sizeof *ix);
  if (!ix) return NULL;
  for (int k = 0; k < cl->n_types; k++) ix[k] = (name_ix){ cl->types[k].name, k };
  qsort(ix, (size_t)cl->n_types, sizeof *ix, by_name);
  return ix;
}

/* Reads the nodes; *ix gets their names sorted (for the links), the caller frees it. */
static hp_err read_nodes(ju_ctx *c, const cJSON *arr, hp_cluster *cl, name_ix **ix)
{
  int n;
  long total = 0;
  hp_err err;
  name_ix *types = NULL;
  *ix = NULL;
  if ((err = ju_array(c, arr, "nodes", &n))) return err;
  if (n == 0)
    return hp_fail(c->d, HP_PARSE, "%s: nodes: empty: expected at least one node such as "
                   "{\"name\": \"n0\", \"type\": \"V100\", \"gpus\": 4, \"intra_gbps\": 170}",
                   c->file);
  if (n > HP_MAX_NODES)
    return hp_fail(c->d, HP_PARSE, "%s: nodes: %d nodes, more than the %d hetplan handles (its "
                   "node-pair tables grow as the square of the count): describe servers as "
                   "nodes of several GPUs", c->file, n, HP_MAX_NODES);
  cl->nodes = hp__calloc((size_t)n, sizeof *cl->nodes);
  *ix = hp__calloc((size_t)n, sizeof **ix);
  if (!cl->nodes || !*ix || !(types = index_types(cl))) {
    free(types);
    return hp_fail(c->d, HP_NOMEM, "out of memory");
  }
  const cJSON *o = arr->child;
  for (int i = 0; i < n; i++, o = o->next) {
    hp_node *nd = &cl->nodes[i];
    const char *name, *type;
    char p[64];
    long gpus;
    double gbps, lat;
    ju_index(p, sizeof p, "nodes", i);
    if ((err = ju_object(c, o, p))) break;
    ju_unknown_keys(c, o, p, node_keys);
    if ((err = ju_str(c, o, p, "name", 1, NULL, &name))) break;
    if ((err = ju_str(c, o, p, "type", 1, NULL, &type))) break;
    nd->type = find_name(types, cl->n_types, type);
    if (nd->type < 0) {
      err = hp_fail(c->d, HP_PARSE, "%s: %s.type: \"%s\" is not in device_types", c->file, p,
                    type);
      break;
    }
    if ((err = ju_int(c, o, p, "gpus", 1, 0, 1, 4096, &gpus))) break;
    nd->gpus = (int)gpus;
    if ((err = ju_num(c, o, p, "intra_gbps", gpus > 1, 0, 0, 1, &gbps))) break;
    if ((err = ju_num(c, o, p, "intra_lat_us", 0, 0, 0, 0, &lat))) break;
    nd->intra_bw = gbps * GBPS;
    nd->intra_lat = lat * 1e-6;
    nd->name = hp__strdup(name);
    cl->n_nodes++;
    if (!nd->name) { err = hp_fail(c->d, HP_NOMEM, "out of memory"); break; }
    (*ix)[i] = (name_ix){ nd->name, i };
    total += gpus;
    if (total > HP_MAX_DEVICES) {
      err = hp_fail(c->d, HP_PARSE, "%s: nodes: more than %d devices in all", c->file,
                    HP_MAX_DEVICES);
      break;
    }
  }
  free(types);
  if (err) return err;
  qsort(*ix, (size_t)n, sizeof **ix, by_name);
  for (int k = 1; k < n; k++)
    if (!strcmp((*ix)[k - 1].name, (*ix)[k].name))
      return hp_fail(c->d, HP_PARSE, "%s: nodes[%d].name: \"%s\" names two nodes (nodes[%d] "
                     "too): node names must be unique", c->file, (*ix)[k].i, (*ix)[k].name,
                     (*ix)[k - 1].i);
  return HP_OK;
}

static hp_err read_links(ju_ctx *c, const cJSON *arr, hp_cluster *cl, const name_ix *ix)
{
  int n, nn = cl->n_nodes;
  hp_err err;
  if ((err = ju_array(c, arr, "links", &n))) return err;
  const cJSON *o = arr->child;
  for (int i = 0; i < n; i++, o = o->next) {
    const char *an, *bn;
    char p[64];
    int a, b;
    double gbps, lat;
    ju_index(p, sizeof p, "links", i);
    if ((err = ju_object(c, o, p))) return err;
    ju_unknown_keys(c, o, p, link_keys);
    if ((err = ju_str(c, o, p, "a", 1, NULL, &an))) return err;
    if ((err = ju_str(c, o, p, "b", 1, NULL, &bn))) return err;
    a = find_name(ix, cl->n_nodes, an);
    b = find_name(ix, cl->n_nodes, bn);
    if (a < 0 || b < 0)
      return hp_fail(c->d, HP_PARSE, "%s: %s.%s: \"%s\" is not the name of a node", c->file, p,
                     a < 0 ? "a" : "b", a < 0 ? an : bn);
    if (a == b)
      return hp_fail(c->d, HP_PARSE, "%s: %s: a link joins two different nodes; use the "
                     "node's intra_gbps for \"%s\" itself", c->file, p, an);
    if ((err = ju_num(c, o, p, "gbps", 1, 0, 0, 1, &gbps))) return err;
    if ((err = ju_num(c, o, p, "lat_us", 0, 0, 0, 0, &lat))) return err;
    cl->node_bw[(size_t)a * nn + b] = cl->node_bw[(size_t)b * nn + a] = gbps * GBPS;
    cl->node_lat[(size_t)a * nn + b] = cl->node_lat[(size_t)b * nn + a] = lat * 1e-6;
  }
  return HP_OK;
}

hp_err hp_cluster_parse(const char *text, const char *file, hp_cluster **out, hp_diag *d)
{
  ju_ctx c = { file, d };
  cJSON *root = NULL;
  hp_cluster *cl = NULL;
  const cJSON *links, *mat;
  const char *name, *slash = strrchr(file, '/');
  double inter_gbps, inter_lat;
  name_ix *names = NULL;
  hp_err err;

  *out = NULL;
  HP_TRY(ju_parse(&c, text, &root));
  HP_TRY(ju_object(&c, root, ""));
  HP_TRY(ju_version(&c, root));
  ju_unknown_keys(&c, root, "", cluster_keys);
  cl = hp__calloc(1, sizeof *cl);
  if (!cl) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  HP_TRY(ju_str(&c, root, "", "name", 0, slash ? slash + 1 : file, &name));
  cl->name = hp__strdup(name);
  if (!cJSON_GetObjectItemCaseSensitive(root, "device_types")) {
    err = hp_fail(d, HP_PARSE, "%s: device_types: missing: expected an object of device types",
                  file);
    goto done;
  }
  HP_TRY(read_types(&c, cJSON_GetObjectItemCaseSensitive(root, "device_types"), cl));
  if (!cJSON_GetObjectItemCaseSensitive(root, "nodes")) {
    err = hp_fail(d, HP_PARSE, "%s: nodes: missing: expected an array of nodes", file);
    goto done;
  }
  HP_TRY(read_nodes(&c, cJSON_GetObjectItemCaseSensitive(root, "nodes"), cl, &names));
  HP_TRY(ju_num(&c, root, "", "inter_gbps", 0, 0, 0, 1, &inter_gbps));
  HP_TRY(ju_num(&c, root, "", "inter_lat_us", 0, 0, 0, 0, &inter_lat));
  HP_TRY(ju_num(&c, root, "", "mem_margin", 0, 0, 0, 0, &cl->mem_margin));
  if (cl->mem_margin >= 1) {
    err = hp_fail(d, HP_PARSE, "%s: mem_margin: %g: expected the fraction of each device's "
                  "memory to keep free, in [0, 1) (0.1 keeps 10 %%)", file, cl->mem_margin);
    goto done;
  }
  HP_TRY(hp_cluster_finish(cl, inter_gbps * GBPS, inter_lat * 1e-6, d));
  links = cJSON_GetObjectItemCaseSensitive(root, "links");
  if (links) HP_TRY(read_links(&c, links, cl, names));
  mat = cJSON_GetObjectItemCaseSensitive(root, "bandwidth_matrix");
  if (mat) {
    int n;
    HP_TRY(ju_bw_matrix(&c, mat, "bandwidth_matrix", &n, &cl->dev_bw, &cl->dev_lat));
    if (n != cl->n_devices) {
      err = hp_fail(d, HP_PARSE, "%s: bandwidth_matrix: is %d x %d but the nodes have %d "
                    "devices", file, n, n, cl->n_devices);
      goto done;
    }
  } else {
    for (int a = 0; a < cl->n_nodes; a++)
      for (int b = a + 1; b < cl->n_nodes; b++)
        if (cl->node_bw[(size_t)a * cl->n_nodes + b] <= 0) {
          err = hp_fail(d, HP_PARSE, "%s: inter_gbps: missing: nodes \"%s\" and \"%s\" have no "
                        "link; give inter_gbps (the default between nodes) or a link",
                        file, cl->nodes[a].name, cl->nodes[b].name);
          goto done;
        }
  }
  *out = cl;
  cl = NULL;
done:
  free(names);
  hp_cluster_destroy(&cl);
  cJSON_Delete(root);
  return err;
}

hp_err hp_cluster_load(const char *path, hp_cluster **out, hp_diag *d)
{
  char *text = NULL;
  hp_err err = hp_read_file(path, &text, d);
  if (!err) err = hp_cluster_parse(text, path, out, d);
  if (!err && !((*out)->path = hp__abs_path(path))) {
    hp_cluster_destroy(out);
    err = hp_fail(d, HP_NOMEM, "out of memory");
  }
  free(text);
  return err;
}

hp_err hp_cluster_inter_default(const char *path, double *bw, double *lat, hp_diag *d)
{
  ju_ctx c = { path, d };
  cJSON *root = NULL;
  char *text = NULL;
  double gbps = 0, us = 0;
  hp_err err;
  *bw = 0;
  *lat = 0;
  HP_TRY(hp_read_file(path, &text, d));
  HP_TRY(ju_parse(&c, text, &root));
  HP_TRY(ju_object(&c, root, ""));
  HP_TRY(ju_num(&c, root, "", "inter_gbps", 0, 0, 0, 1, &gbps));
  HP_TRY(ju_num(&c, root, "", "inter_lat_us", 0, 0, 0, 0, &us));
  *bw = gbps * GBPS;
  *lat = us * 1e-6;
done:
  cJSON_Delete(root);
  free(text);
  return err;
}
