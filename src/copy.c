/* copy.c -- deep copies of a problem's parts and the edits that "what if" questions make
 * of a cluster (more nodes, more memory, another margin): what the explanation of an
 * infeasible instance re-plans on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void *dup_mem(const void *src, size_t n, size_t sz)
{
  void *p;
  if (!src) return NULL;
  p = hp__calloc(n, sz);
  if (p) memcpy(p, src, n * sz);
  return p;
}

hp_err hp_model_copy(const hp_model *src, hp_model **out, hp_diag *d)
{
  hp_model *m = hp__calloc(1, sizeof *m);
  *out = NULL;
  if (!m) return hp_fail(d, HP_NOMEM, "out of memory");
  *m = *src;
  m->name = hp__strdup(src->name);
  m->path = hp__strdup(src->path);
  m->transformer = dup_mem(src->transformer, 1, sizeof *m->transformer);
  m->layers = hp__calloc((size_t)src->n_layers, sizeof *m->layers);
  m->n_layers = 0;
  m->modules = src->n_modules ? hp__calloc((size_t)src->n_modules, sizeof *m->modules) : NULL;
  m->n_modules = 0;
  if (!m->layers || !m->name || (src->path && !m->path) || (src->transformer && !m->transformer) ||
      (src->n_modules && !m->modules)) goto oom;
  for (int k = 0; k < src->n_modules; k++) {
    m->modules[k] = src->modules[k];
    m->modules[k].name = hp__strdup(src->modules[k].name);
    m->n_modules++;
    if (!m->modules[k].name) goto oom;
  }
  for (int l = 0; l < src->n_layers; l++) {
    m->layers[l] = src->layers[l];
    m->layers[l].name = hp__strdup(src->layers[l].name);
    m->layers[l].kind = hp__strdup(src->layers[l].kind);
    m->n_layers++;
    if (!m->layers[l].name || !m->layers[l].kind) goto oom;
  }
  *out = m;
  return HP_OK;
oom:
  hp_model_destroy(&m);
  return hp_fail(d, HP_NOMEM, "out of memory");
}

hp_err hp_cluster_copy(const hp_cluster *src, hp_cluster **out, hp_diag *d)
{
  hp_cluster *c = hp__calloc(1, sizeof *c);
  size_t nn = (size_t)src->n_nodes * (size_t)src->n_nodes;
  size_t dd = (size_t)src->n_devices * (size_t)src->n_devices;
  int ok;
  *out = NULL;
  if (!c) return hp_fail(d, HP_NOMEM, "out of memory");
  *c = *src;
  c->name = hp__strdup(src->name);
  c->path = hp__strdup(src->path);
  c->types = dup_mem(src->types, (size_t)src->n_types, sizeof *c->types);
  c->nodes = dup_mem(src->nodes, (size_t)src->n_nodes, sizeof *c->nodes);
  c->dev_node = dup_mem(src->dev_node, (size_t)src->n_devices, sizeof *c->dev_node);
  c->node_bw = dup_mem(src->node_bw, nn, sizeof *c->node_bw);
  c->node_lat = dup_mem(src->node_lat, nn, sizeof *c->node_lat);
  c->dev_bw = dup_mem(src->dev_bw, dd, sizeof *c->dev_bw);
  c->dev_lat = dup_mem(src->dev_lat, dd, sizeof *c->dev_lat);
  ok = c->name && (!src->path || c->path) && c->types && c->nodes && c->dev_node && c->node_bw && c->node_lat &&
       (!src->dev_bw || (c->dev_bw && c->dev_lat));
  /* names are owned: copy them (NULL first, so that a failure frees only copies) */
  for (int k = 0; c->types && k < c->n_types; k++) c->types[k].name = NULL;
  for (int n = 0; c->nodes && n < c->n_nodes; n++) c->nodes[n].name = NULL;
  for (int k = 0; ok && k < c->n_types; k++) ok = (c->types[k].name = hp__strdup(src->types[k].name)) != NULL;
  for (int n = 0; ok && n < c->n_nodes; n++) ok = (c->nodes[n].name = hp__strdup(src->nodes[n].name)) != NULL;
  if (!c->types) c->n_types = 0;
  if (!c->nodes) c->n_nodes = 0;
  if (!ok) {
    hp_cluster_destroy(&c);
    return hp_fail(d, HP_NOMEM, "out of memory");
  }
  *out = c;
  return HP_OK;
}

hp_err hp_profile_copy(const hp_profile *src, hp_profile **out, hp_diag *d)
{
  hp_profile *p = hp__calloc(1, sizeof *p);
  size_t dd = (size_t)src->n_devices * (size_t)src->n_devices;
  int ok;
  *out = NULL;
  if (!p) return hp_fail(d, HP_NOMEM, "out of memory");
  *p = *src;
  p->path = hp__strdup(src->path);
  p->name = hp__strdup(src->name);
  p->measures = hp__calloc((size_t)src->n_measures, sizeof *p->measures);
  p->n_measures = 0;
  p->model = hp__strdup(src->model);
  p->kinds = dup_mem(src->kinds, (size_t)src->n_kinds, sizeof *p->kinds);
  p->n_kinds = 0;
  p->dev_bw = dup_mem(src->dev_bw, dd, sizeof *p->dev_bw);
  p->dev_lat = dup_mem(src->dev_lat, dd, sizeof *p->dev_lat);
  ok = p->measures && (!src->path || p->path) && (!src->name || p->name) && (!src->dev_bw || (p->dev_bw && p->dev_lat)) &&
       (!src->model || p->model) && (!src->n_kinds || p->kinds);
  for (int i = 0; ok && i < src->n_kinds; i++) {   /* names owned: copied one by one */
    ok = (p->kinds[i].kind = hp__strdup(src->kinds[i].kind)) != NULL;
    if (ok) p->n_kinds++;
  }
  for (int i = 0; ok && i < src->n_measures; i++) {
    hp_measure *m = &p->measures[i];
    *m = src->measures[i];
    m->kind = hp__strdup(src->measures[i].kind);
    m->type_name = hp__strdup(src->measures[i].type_name);
    p->n_measures++;
    ok = m->kind && m->type_name;
  }
  if (!ok) {
    hp_profile_destroy(&p);
    return hp_fail(d, HP_NOMEM, "out of memory");
  }
  *out = p;
  return HP_OK;
}

hp_err hp_problem_copy_with(const hp_problem *src, hp_cluster *cluster, hp_job job,
                            hp_problem **out, hp_diag *d)
{
  hp_model *m = NULL;
  hp_profile *pr = NULL;
  hp_err err;
  *out = NULL;
  if ((err = hp_model_copy(src->model, &m, d)) ||
      (src->profile && (err = hp_profile_copy(src->profile, &pr, d)))) {
    hp_model_destroy(&m);
    hp_cluster_destroy(&cluster);
    return err;
  }
  if (!cluster && (err = hp_cluster_copy(src->cluster, &cluster, d))) {
    hp_model_destroy(&m);
    hp_profile_destroy(&pr);
    return err;
  }
  return hp_problem_create(out, m, cluster, pr, job, d);
}

hp_err hp_cluster_add_nodes(hp_cluster *c, int like, int count, double bw, double lat,
                            hp_diag *d)
{
  int nn = c->n_nodes, n2 = nn + count, dev2;
  hp_node *nodes;
  double *nbw, *nlat;
  int *dn;
  if (like < 0 || like >= nn || count < 1)
    return hp_fail(d, HP_INVAL, "adding nodes: node %d x %d is out of range", like, count);
  if (c->dev_bw)
    return hp_fail(d, HP_NOTSUP, "cluster '%s' has a device bandwidth matrix: it does not say "
                   "how new devices would connect", c->name);
  dev2 = c->n_devices + count * c->nodes[like].gpus;
  nodes = realloc(c->nodes, (size_t)n2 * sizeof *nodes);
  if (!nodes) return hp_fail(d, HP_NOMEM, "out of memory");
  c->nodes = nodes;
  nbw = hp__calloc((size_t)n2 * (size_t)n2, sizeof *nbw);
  nlat = hp__calloc((size_t)n2 * (size_t)n2, sizeof *nlat);
  dn = hp__calloc((size_t)dev2, sizeof *dn);
  if (!nbw || !nlat || !dn) {
    free(nbw);
    free(nlat);
    free(dn);
    return hp_fail(d, HP_NOMEM, "out of memory");
  }
  for (int i = 0; i < count; i++) {
    hp_node *nd = &nodes[nn + i];
    size_t len = strlen(nodes[like].name) + 24;
    *nd = nodes[like];
    nd->name = malloc(len);
    if (!nd->name) {
      for (int q = 0; q < i; q++) free(nodes[nn + q].name);
      free(nbw);
      free(nlat);
      free(dn);
      return hp_fail(d, HP_NOMEM, "out of memory");
    }
    snprintf(nd->name, len, "%s+%d", nodes[like].name, i + 1);
    nd->first = c->n_devices + i * nodes[like].gpus;
  }
  /* a new node links to the old ones as `like` does, to its own kind by bw, lat */
  for (int a = 0; a < n2; a++)
    for (int b = 0; b < n2; b++) {
      int sa = a < nn ? a : like, sb = b < nn ? b : like;
      size_t ix = (size_t)a * (size_t)n2 + (size_t)b;
      if (a == b) {
        nbw[ix] = nodes[a].intra_bw;
        nlat[ix] = nodes[a].intra_lat;
      } else if (sa == sb) {      /* two copies of `like`, or `like` and a copy */
        nbw[ix] = bw;
        nlat[ix] = lat;
      } else {
        nbw[ix] = c->node_bw[(size_t)sa * (size_t)nn + (size_t)sb];
        nlat[ix] = c->node_lat[(size_t)sa * (size_t)nn + (size_t)sb];
      }
    }
  for (int n = 0; n < n2; n++)
    for (int g = 0; g < nodes[n].gpus; g++) dn[nodes[n].first + g] = n;
  free(c->node_bw);
  free(c->node_lat);
  free(c->dev_node);
  c->node_bw = nbw;
  c->node_lat = nlat;
  c->dev_node = dn;
  c->n_nodes = n2;
  c->n_devices = dev2;
  return HP_OK;
}

hp_err hp_cluster_remove_nodes(hp_cluster *c, const unsigned char *gone, int *old_to_new,
                               hp_diag *d)
{
  int nn = c->n_nodes, n2 = 0, dev2 = 0, dold = c->n_devices;
  int *node_new = hp__calloc((size_t)nn, sizeof *node_new);
  hp_node *nodes = NULL;
  double *nbw = NULL, *nlat = NULL, *dbw = NULL, *dlat = NULL;
  int *dn = NULL, *dmap = hp__calloc((size_t)dold, sizeof *dmap);
  if (!node_new || !dmap) goto oom;
  for (int n = 0; n < nn; n++) {
    node_new[n] = gone[n] ? -1 : n2++;
    if (!gone[n]) dev2 += c->nodes[n].gpus;
  }
  if (n2 == 0) {
    free(node_new);
    free(dmap);
    return hp_fail(d, HP_INVAL, "removing nodes: that would leave cluster '%s' without a node",
                   c->name);
  }
  nodes = hp__calloc((size_t)n2, sizeof *nodes);
  nbw = hp__calloc((size_t)n2 * (size_t)n2, sizeof *nbw);
  nlat = hp__calloc((size_t)n2 * (size_t)n2, sizeof *nlat);
  dn = hp__calloc((size_t)dev2, sizeof *dn);
  if (!nodes || !nbw || !nlat || !dn) goto oom;
  if (c->dev_bw) {
    dbw = hp__calloc((size_t)dev2 * (size_t)dev2, sizeof *dbw);
    dlat = hp__calloc((size_t)dev2 * (size_t)dev2, sizeof *dlat);
    if (!dbw || !dlat) goto oom;
  }
  /* renumber: the kept nodes in their order, their devices after one another */
  for (int n = 0, first = 0; n < nn; n++) {
    hp_node *src = &c->nodes[n];
    if (gone[n]) {
      for (int g = 0; g < src->gpus; g++) dmap[src->first + g] = -1;
      continue;
    }
    nodes[node_new[n]] = *src;
    nodes[node_new[n]].first = first;
    for (int g = 0; g < src->gpus; g++) {
      dmap[src->first + g] = first + g;
      dn[first + g] = node_new[n];
    }
    first += src->gpus;
  }
  for (int a = 0; a < nn; a++)
    for (int b = 0; b < nn; b++)
      if (node_new[a] >= 0 && node_new[b] >= 0) {
        size_t to = (size_t)node_new[a] * (size_t)n2 + (size_t)node_new[b];
        nbw[to] = c->node_bw[(size_t)a * (size_t)nn + (size_t)b];
        nlat[to] = c->node_lat[(size_t)a * (size_t)nn + (size_t)b];
      }
  if (dbw)
    for (int a = 0; a < dold; a++)
      for (int b = 0; b < dold; b++)
        if (dmap[a] >= 0 && dmap[b] >= 0) {
          size_t to = (size_t)dmap[a] * (size_t)dev2 + (size_t)dmap[b];
          dbw[to] = c->dev_bw[(size_t)a * (size_t)dold + (size_t)b];
          dlat[to] = c->dev_lat[(size_t)a * (size_t)dold + (size_t)b];
        }
  for (int n = 0; n < nn; n++)
    if (gone[n]) free(c->nodes[n].name);
  free(c->nodes);
  free(c->node_bw);
  free(c->node_lat);
  free(c->dev_node);
  free(c->dev_bw);
  free(c->dev_lat);
  c->nodes = nodes;
  c->node_bw = nbw;
  c->node_lat = nlat;
  c->dev_node = dn;
  c->dev_bw = dbw;
  c->dev_lat = dlat;
  c->n_nodes = n2;
  c->n_devices = dev2;
  if (old_to_new) memcpy(old_to_new, dmap, (size_t)dold * sizeof *dmap);
  free(node_new);
  free(dmap);
  return HP_OK;
oom:
  free(node_new);
  free(dmap);
  free(nodes);
  free(nbw);
  free(nlat);
  free(dn);
  free(dbw);
  free(dlat);
  return hp_fail(d, HP_NOMEM, "out of memory");
}

hp_err hp_profile_keep_devices(hp_profile *p, const int *old_to_new, int n_old, int n_new,
                               hp_diag *d)
{
  double *bw, *lat;
  if (p->n_devices == 0) return HP_OK;
  if (p->n_devices != n_old)
    return hp_fail(d, HP_INVAL, "profile '%s': its bandwidth matrix is %d x %d, the cluster has "
                   "%d devices", p->name ? p->name : "", p->n_devices, p->n_devices, n_old);
  bw = hp__calloc((size_t)n_new * (size_t)n_new, sizeof *bw);
  lat = hp__calloc((size_t)n_new * (size_t)n_new, sizeof *lat);
  if (!bw || !lat) {
    free(bw);
    free(lat);
    return hp_fail(d, HP_NOMEM, "out of memory");
  }
  for (int a = 0; a < n_old; a++)
    for (int b = 0; b < n_old; b++)
      if (old_to_new[a] >= 0 && old_to_new[b] >= 0) {
        size_t to = (size_t)old_to_new[a] * (size_t)n_new + (size_t)old_to_new[b];
        bw[to] = p->dev_bw[(size_t)a * (size_t)n_old + (size_t)b];
        lat[to] = p->dev_lat[(size_t)a * (size_t)n_old + (size_t)b];
      }
  free(p->dev_bw);
  free(p->dev_lat);
  p->dev_bw = bw;
  p->dev_lat = lat;
  p->n_devices = n_new;
  return HP_OK;
}

/* A type's whole memory: mem_total once a problem has bound it, else mem as loaded. */
static double type_mem(const hp_devtype *t) { return t->mem_total > 0 ? t->mem_total : t->mem; }

/* Whether two types of one name describe the same device; else which figure differs.
 * `b` is the added file's: the optional figures it leaves out (tflops_fp8, shape) are
 * `a`'s, not a difference. */
static const char *type_differs(const hp_devtype *a, const hp_devtype *b)
{
  if (type_mem(a) != type_mem(b)) return "mem_gib";
  /* two reserves both left to the framework's default are the same once bound */
  if (a->reserved != b->reserved && !(a->reserved_default && b->reserved_default))
    return "reserved_gib";
  if (a->peak != b->peak) return "tflops";
  if (a->eff != b->eff) return "efficiency";
  if (a->hbm != b->hbm) return "hbm_gbs";
  if (b->peak_fp8 > 0 && a->peak_fp8 != b->peak_fp8) return "tflops_fp8";
  if (b->shape.given && !a->shape.given) return "shape";
  if (b->shape.given) {
    int n;
    const hp_shape_param *q = hp_shape_params(&n);
    for (int i = 0; i < n; i++)
      if (hp_shape_get(&a->shape, &q[i]) != hp_shape_get(&b->shape, &q[i])) return "shape";
  }
  return NULL;
}

hp_err hp_cluster_merge(hp_cluster *c, const hp_cluster *add, double bw, double lat,
                        hp_diag *d)
{
  int nn = c->n_nodes, na = add->n_nodes, n2 = nn + na, nt = c->n_types, nt2 = nt;
  int dev2 = c->n_devices + add->n_devices;
  int *type_of = NULL, *dn = NULL;
  hp_devtype *types = NULL;
  hp_node *nodes = NULL;
  double *nbw = NULL, *nlat = NULL;
  const char *who = add->path ? add->path : add->name;   /* the file, where it was one */
  if (c->dev_bw || add->dev_bw)
    return hp_fail(d, HP_NOTSUP, "adding the nodes of '%s': cluster '%s' has a device bandwidth "
                   "matrix, which does not say how its devices connect to the others",
                   who, c->dev_bw ? c->name : add->name);
  if (!(bw > 0) && nn > 0)
    return hp_fail(d, HP_INVAL, "adding the nodes of '%s': no bandwidth for the links between "
                   "its nodes and those of '%s'", who, c->name);
  if (n2 > HP_MAX_NODES || dev2 > HP_MAX_DEVICES)
    return hp_fail(d, HP_INVAL, "adding the nodes of '%s': more than %d nodes or %d devices",
                   who, HP_MAX_NODES, HP_MAX_DEVICES);
  for (int a = 0; a < na; a++)
    for (int b = 0; b < nn; b++)
      if (!strcmp(add->nodes[a].name, c->nodes[b].name))
        return hp_fail(d, HP_INVAL, "adding the nodes of '%s': node '%s' is already in cluster "
                       "'%s' (node names must be unique)", who, add->nodes[a].name, c->name);
  type_of = hp__calloc((size_t)add->n_types, sizeof *type_of);
  if (!type_of) return hp_fail(d, HP_NOMEM, "out of memory");
  for (int k = 0; k < add->n_types; k++) {   /* types matched by name, added if new */
    type_of[k] = -1;
    for (int q = 0; q < nt; q++)
      if (!strcmp(add->types[k].name, c->types[q].name)) {
        const char *why = type_differs(&c->types[q], &add->types[k]);
        if (why) {
          free(type_of);
          return hp_fail(d, HP_INVAL, "adding the nodes of '%s': device type '%s' differs from "
                         "cluster '%s''s type of that name in %s: give it another name or the "
                         "same figures", who, add->types[k].name, c->name, why);
        }
        type_of[k] = q;
      }
    if (type_of[k] < 0) type_of[k] = nt2++;
  }
  types = hp__calloc((size_t)nt2, sizeof *types);
  nodes = hp__calloc((size_t)n2, sizeof *nodes);
  nbw = hp__calloc((size_t)n2 * (size_t)n2, sizeof *nbw);
  nlat = hp__calloc((size_t)n2 * (size_t)n2, sizeof *nlat);
  dn = hp__calloc((size_t)dev2, sizeof *dn);
  if (!types || !nodes || !nbw || !nlat || !dn) goto oom;
  memcpy(types, c->types, (size_t)nt * sizeof *types);
  memcpy(nodes, c->nodes, (size_t)nn * sizeof *nodes);
  for (int k = 0; k < add->n_types; k++)
    if (type_of[k] >= nt) {
      hp_devtype *t = &types[type_of[k]];
      *t = add->types[k];
      t->mem_total = type_mem(&add->types[k]);   /* binding applies the margin afresh */
      t->mem = t->mem_total;
      if (!(t->name = hp__strdup(add->types[k].name))) goto oom_names;
    }
  for (int a = 0; a < na; a++) {
    hp_node *nd = &nodes[nn + a];
    *nd = add->nodes[a];
    nd->type = type_of[add->nodes[a].type];
    nd->first = c->n_devices + add->nodes[a].first;
    if (!(nd->name = hp__strdup(add->nodes[a].name))) goto oom_names;
  }
  for (int a = 0; a < n2; a++)
    for (int b = 0; b < n2; b++) {
      size_t ix = (size_t)a * (size_t)n2 + (size_t)b;
      if (a < nn && b < nn) {
        nbw[ix] = c->node_bw[(size_t)a * (size_t)nn + (size_t)b];
        nlat[ix] = c->node_lat[(size_t)a * (size_t)nn + (size_t)b];
      } else if (a >= nn && b >= nn) {
        nbw[ix] = add->node_bw[(size_t)(a - nn) * (size_t)na + (size_t)(b - nn)];
        nlat[ix] = add->node_lat[(size_t)(a - nn) * (size_t)na + (size_t)(b - nn)];
      } else {
        nbw[ix] = bw;
        nlat[ix] = lat;
      }
    }
  for (int n = 0; n < n2; n++)
    for (int g = 0; g < nodes[n].gpus; g++) dn[nodes[n].first + g] = n;
  free(c->types);
  free(c->nodes);
  free(c->node_bw);
  free(c->node_lat);
  free(c->dev_node);
  c->types = types;
  c->nodes = nodes;
  c->node_bw = nbw;
  c->node_lat = nlat;
  c->dev_node = dn;
  c->n_types = nt2;
  c->n_nodes = n2;
  c->n_devices = dev2;
  free(type_of);
  return HP_OK;
oom_names:
  for (int k = nt; k < nt2; k++) free(types[k].name);
  for (int a = nn; a < n2; a++) free(nodes[a].name);
oom:
  free(type_of);
  free(types);
  free(nodes);
  free(nbw);
  free(nlat);
  free(dn);
  return hp_fail(d, HP_NOMEM, "out of memory");
}
