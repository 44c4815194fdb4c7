/* node_class.c -- node classes (hp_classes.h): interchangeable nodes found by comparing
 * every link of a node with a class representative's (twins: same type and GPUs, and
 * swapping the two nodes device by device preserves every bandwidth and latency), then
 * the best links inside and between classes. Twin-ness with the representative is
 * transitive, so one comparison per class suffices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void hp_classes_release(hp_classes *c)
{
  if (!c) return;
  for (int i = 0; i < c->n && c->cls; i++) free(c->cls[i].nodes);
  free(c->cls);
  free(c->node_class);
  free(c->inter_bw);
  free(c->inter_lat);
  memset(c, 0, sizeof *c);
}

int hp_classes_groups(const hp_problem *p, const hp_classes *c, int cls, int tp)
{
  int n = 0;
  /* a node whose GPU count tp does not divide holds none: a plan may not use it (cost-model.md
   * 5; without idle devices tp divides every node) */
  for (int i = 0; i < c->cls[cls].n_nodes; i++) {
    int g = p->cluster->nodes[c->cls[cls].nodes[i]].gpus;
    if (g % tp == 0) n += g / tp;
  }
  return n;
}

/* k-subsets of a node worth enumerating */
#define SUBSETS_MAX 20000.0

static double choose(int n, int k)
{
  double r = 1;
  for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
  return r;
}

void hp_classes_subset_links(const hp_problem *p, const hp_classes *c, int cls, int k,
                             double *bw, double *lat)
{
  const hp_node_class *nc = &c->cls[cls];
  int idx[64];
  *bw = 0;
  *lat = INFINITY;
  if (k < 2) { *bw = INFINITY; *lat = 0; return; }
  for (int i = 0; i < nc->n_nodes; i++) {
    const hp_node *nd = &p->cluster->nodes[nc->nodes[i]];
    if (nd->gpus < k) continue;
    if (!p->bw || k > 64 || choose(nd->gpus, k) > SUBSETS_MAX) {   /* a bound instead */
      for (int a = nd->first; a < nd->first + nd->gpus; a++)
        for (int b = a + 1; b < nd->first + nd->gpus; b++) {
          if (hp_problem_bw(p, a, b) > *bw) *bw = hp_problem_bw(p, a, b);
          if (hp_problem_lat(p, a, b) < *lat) *lat = hp_problem_lat(p, a, b);
        }
      continue;         /* with node-level links every pair is alike: the bound is exact */
    }
    for (int j = 0; j < k; j++) idx[j] = j;
    for (;;) {
      double mn = INFINITY, mx = 0;
      for (int a = 0; a < k; a++)
        for (int b = a + 1; b < k; b++) {
          double x = hp_problem_bw(p, nd->first + idx[a], nd->first + idx[b]);
          double y = hp_problem_lat(p, nd->first + idx[a], nd->first + idx[b]);
          if (x < mn) mn = x;
          if (y > mx) mx = y;
        }
      if (mn > *bw) *bw = mn;
      if (mx < *lat) *lat = mx;
      int j = k - 1;                     /* the next k-subset in lexicographic order */
      while (j >= 0 && idx[j] == nd->gpus - k + j) j--;
      if (j < 0) break;
      idx[j]++;
      for (int q = j + 1; q < k; q++) idx[q] = idx[q - 1] + 1;
    }
  }
  if (*bw == 0) { *bw = INFINITY; *lat = 0; }      /* no member has k GPUs */
}

static int same_link(const hp_problem *p, int a1, int b1, int a2, int b2)
{
  return hp_problem_bw(p, a1, b1) == hp_problem_bw(p, a2, b2) &&
         hp_problem_lat(p, a1, b1) == hp_problem_lat(p, a2, b2);
}

/* Whether nodes a and b are twins: same type and GPUs, and exchanging them device by
 * device leaves every link as it was. */
static int twins(const hp_problem *p, int a, int b)
{
  const hp_cluster *c = p->cluster;
  const hp_node *na = &c->nodes[a], *nb = &c->nodes[b];
  if (na->type != nb->type || na->gpus != nb->gpus) return 0;
  if (!p->bw) {     /* node-level links: the node's row of the tables */
    int nn = c->n_nodes;
    if (na->gpus > 1 && (c->node_bw[(size_t)a * nn + a] != c->node_bw[(size_t)b * nn + b] ||
                         c->node_lat[(size_t)a * nn + a] != c->node_lat[(size_t)b * nn + b]))
      return 0;
    for (int m = 0; m < nn; m++) {
      if (m == a || m == b) continue;
      if (c->node_bw[(size_t)a * nn + m] != c->node_bw[(size_t)b * nn + m] ||
          c->node_lat[(size_t)a * nn + m] != c->node_lat[(size_t)b * nn + m])
        return 0;
    }
    return 1;
  }
  for (int i = 0; i < na->gpus; i++) {
    int ai = na->first + i, bi = nb->first + i;
    for (int j = 0; j < na->gpus; j++) {
      if (j != i && !same_link(p, ai, na->first + j, bi, nb->first + j)) return 0;
      if (!same_link(p, ai, nb->first + j, bi, na->first + j)) return 0;
    }
    for (int m = 0; m < c->n_devices; m++) {
      int nm = c->dev_node[m];
      if (nm != a && nm != b && !same_link(p, ai, m, bi, m)) return 0;
    }
  }
  return 1;
}

/* Adds node n to class k. */
static int join(hp_classes *c, int k, int n, int cap)
{
  hp_node_class *cl = &c->cls[k];
  if (!cl->nodes && !(cl->nodes = hp__calloc((size_t)cap, sizeof *cl->nodes))) return -1;
  cl->nodes[cl->n_nodes++] = n;
  c->node_class[n] = k;
  return 0;
}

/* Merges class `from` into class `into` (same type); `from` is left empty. */
static void merge(hp_classes *c, int into, int from)
{
  hp_node_class *a = &c->cls[into], *b = &c->cls[from];
  for (int i = 0; i < b->n_nodes; i++) {
    a->nodes[a->n_nodes++] = b->nodes[i];
    c->node_class[b->nodes[i]] = into;
  }
  a->exact = 0;
  b->n_nodes = 0;
}

static int by_int(const void *x, const void *y) { return *(const int *)x - *(const int *)y; }

/* The figures of every class, once its members are known. */
static void figures(const hp_problem *p, hp_classes *c)
{
  const hp_cluster *cl = p->cluster;
  int n = c->n;
  for (int k = 0; k < n; k++) {
    hp_node_class *nc = &c->cls[k];
    qsort(nc->nodes, (size_t)nc->n_nodes, sizeof *nc->nodes, by_int);
    nc->type = cl->nodes[nc->nodes[0]].type;
    nc->gpus_min = nc->gpus_max = cl->nodes[nc->nodes[0]].gpus;
    nc->intra_bw_min = INFINITY;
    nc->intra_bw_max = 0;
    nc->intra_lat_min = INFINITY;
    for (int i = 0; i < nc->n_nodes; i++) {
      const hp_node *nd = &cl->nodes[nc->nodes[i]];
      if (nd->gpus < nc->gpus_min) nc->gpus_min = nd->gpus;
      if (nd->gpus > nc->gpus_max) nc->gpus_max = nd->gpus;
      for (int a = nd->first; a < nd->first + nd->gpus; a++)
        for (int b = a + 1; b < nd->first + nd->gpus; b++) {
          double bw = hp_problem_bw(p, a, b), lat = hp_problem_lat(p, a, b);
          if (bw < nc->intra_bw_min) nc->intra_bw_min = bw;
          if (bw > nc->intra_bw_max) nc->intra_bw_max = bw;
          if (lat < nc->intra_lat_min) nc->intra_lat_min = lat;
        }
    }
    if (nc->intra_bw_max == 0) { nc->intra_bw_min = 0; nc->intra_bw_max = INFINITY; nc->intra_lat_min = 0; }
  }
  for (int i = 0; i < n * n; i++) { c->inter_bw[i] = 0; c->inter_lat[i] = INFINITY; }
  if (!p->bw) {
    for (int a = 0; a < cl->n_nodes; a++)
      for (int b = 0; b < cl->n_nodes; b++) {
        size_t ix = (size_t)c->node_class[a] * n + c->node_class[b];
        double bw = cl->node_bw[(size_t)a * cl->n_nodes + b], lat = cl->node_lat[(size_t)a * cl->n_nodes + b];
        if (a == b) continue;
        if (bw > c->inter_bw[ix]) c->inter_bw[ix] = bw;
        if (lat < c->inter_lat[ix]) c->inter_lat[ix] = lat;
      }
    return;
  }
  for (int a = 0; a < cl->n_devices; a++)
    for (int b = 0; b < cl->n_devices; b++) {
      int na = cl->dev_node[a], nb = cl->dev_node[b];
      size_t ix = (size_t)c->node_class[na] * n + c->node_class[nb];
      if (na == nb) continue;
      if (hp_problem_bw(p, a, b) > c->inter_bw[ix]) c->inter_bw[ix] = hp_problem_bw(p, a, b);
      if (hp_problem_lat(p, a, b) < c->inter_lat[ix]) c->inter_lat[ix] = hp_problem_lat(p, a, b);
    }
}

hp_err hp_classes_build(const hp_problem *p, int max_classes, hp_classes *out, hp_diag *d)
{
  const hp_cluster *cl = p->cluster;
  int nn = cl->n_nodes, *rep = hp__calloc((size_t)nn, sizeof *rep);
  memset(out, 0, sizeof *out);
  out->cls = hp__calloc((size_t)nn, sizeof *out->cls);
  out->node_class = hp__calloc((size_t)nn, sizeof *out->node_class);
  if (!rep || !out->cls || !out->node_class) goto nomem;
  for (int n = 0; n < nn; n++) {
    int k;
    for (k = 0; k < out->n; k++)
      if (twins(p, rep[k], n)) break;
    if (k == out->n) {
      rep[out->n] = n;
      out->cls[out->n++].exact = 1;
    }
    if (join(out, k, n, nn)) goto nomem;
  }
  /* too many: merge classes of one type, the smallest into the first of its type */
  while (out->n > max_classes) {
    int from = -1, into = -1;
    for (int a = 0; a < out->n && from < 0; a++)
      for (int b = a + 1; b < out->n; b++)
        if (cl->nodes[out->cls[a].nodes[0]].type == cl->nodes[out->cls[b].nodes[0]].type) {
          into = a;
          from = b;
          break;
        }
    if (from < 0) break;              /* one class per type: nothing more to merge */
    merge(out, into, from);
    free(out->cls[from].nodes);
    memmove(&out->cls[from], &out->cls[from + 1], (size_t)(out->n - from - 1) * sizeof *out->cls);
    out->n--;
    for (int k = 0; k < out->n; k++)
      for (int i = 0; i < out->cls[k].n_nodes; i++) out->node_class[out->cls[k].nodes[i]] = k;
  }
  out->inter_bw = hp__calloc((size_t)out->n * out->n, sizeof *out->inter_bw);
  out->inter_lat = hp__calloc((size_t)out->n * out->n, sizeof *out->inter_lat);
  if (!out->inter_bw || !out->inter_lat) goto nomem;
  figures(p, out);
  free(rep);
  return HP_OK;
nomem:
  free(rep);
  hp_classes_release(out);
  return hp_fail(d, HP_NOMEM, "out of memory grouping %d nodes into classes", nn);
}
