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
