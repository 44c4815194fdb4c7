/* configs.c -- the outer configurations (pp, tp, dp, mbs) of the search space
 * (cost-model.md section 5): pp * tp * dp = D, tp divides every node's GPU count,
 * pp <= L, and mbs with gbs / (dp * mbs) a positive integer (mbs <= HP_MAX_MBS). The
 * micro-batch sizes come from factoring gbs / dp, so a huge gbs costs nothing.
 * Under a job with idle_devices, also the configurations of the devices left when
 * nodes of the slow device types are idle (hp__configs_idle): nested prefixes of the
 * nodes from the slowest (by their type's peak x efficiency, then the node's order),
 * within each type but the fastest 1, 2, 4, ... of its nodes and then all of them
 * (idle_levels). A cluster whose slower types hold m_t nodes gets sum_t (ceil(log2 m_t)
 * + 1) levels, each with the configurations of its kept devices: 3 levels for three slow
 * nodes, 8 for 100. On top of them, for each power of two 2^k, the shortest such prefix
 * that leaves a multiple of 2^k devices (at most log2(D) + 1 more): a cluster of one type
 * that lost a node (127 x 8 GPUs) has plans again. Those levels are a heuristic of phase 1;
 * the certificate ranges over every configuration with pp * tp * dp <= D
 * (hp__configs_cert): tp dividing the GPU count of some node, and no more TP groups per
 * plan than the nodes it divides hold. */
#include <stdlib.h>
#include <string.h>

#include "search.h"

/* Room for the divisibility levels: one per power of two up to the device count, at
 * most 17 with HP_MAX_DEVICES (2^16), and a margin. */
#define IDLE_EXTRA_LEVELS 64

#define MAX_MBS_LIST 8192

/* The configurations of the degree triples deg[0 .. nd-1] (3 ints each) and every
 * micro-batch size; writes them to out[n...] when out is not NULL, with `drop` in the
 * idle list (ids may be NULL). Returns the count, -1 out of memory. */
static int expand(const hp_problem *prob, const int *deg, int nd, hp_config *out,
                  hp_idle_config *ids, int drop)
{
  int n = 0, *mbs = hp__calloc(MAX_MBS_LIST, sizeof *mbs);
  if (!mbs) return -1;
  for (int i = 0; i < nd; i++) {
    int dp = deg[3 * i + 2], nm;
    if (prob->job.gbs % dp) continue;
    nm = hp_mbs_divisors(prob->job.gbs / dp, mbs, MAX_MBS_LIST);
    if (nm > MAX_MBS_LIST) nm = MAX_MBS_LIST;
    for (int k = 0; k < nm; k++, n++) {
      hp_config c = { deg[3 * i], deg[3 * i + 1], dp, mbs[k] };
      if (out) out[n] = c;
      if (ids) ids[n] = (hp_idle_config){ c, drop };
    }
  }
  free(mbs);
  return n;
}

int hp__configs(const hp_problem *prob, hp_config **out)
{
  int n, nd = hp__degrees(prob, NULL, 0);
  int *deg = hp__calloc((size_t)(nd > 0 ? nd : 1) * 3, sizeof *deg);
  *out = NULL;
  if (!deg) return -1;
  hp__degrees(prob, deg, nd);
  n = expand(prob, deg, nd, NULL, NULL, 0);
  if (n >= 0 && !(*out = hp__calloc((size_t)(n > 0 ? n : 1), sizeof **out))) n = -1;
  if (n >= 0) expand(prob, deg, nd, *out, NULL, 0);
  free(deg);
  return n;
}

/* The TP groups of degree tp the cluster offers a plan that may leave devices idle: on
 * every node whose GPU count tp divides (cost-model.md 5: no other node can be used). */
static long idle_groups(const hp_cluster *c, int tp)
{
  long n = 0;
  for (int k = 0; k < c->n_nodes; k++)
    if (c->nodes[k].gpus % tp == 0) n += c->nodes[k].gpus / tp;
  return n;
}

/* Triples by the devices they use, most first, then pp and tp ascending. */
static int by_devices(const void *a, const void *b)
{
  const int *x = a, *y = b;
  long ux = (long)x[0] * x[1] * x[2], uy = (long)y[0] * y[1] * y[2];
  if (ux != uy) return ux > uy ? -1 : 1;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The degree triples with pp * tp * dp < D of a job with idle_devices: pp <= L, dp
 * dividing gbs, tp dividing the GPU count of some node, and at most as many TP groups per
 * plan (pp dp) as the nodes tp divides hold (a triple short of that has no placement).
 * Allocates *deg (3 ints a triple, sorted by by_devices); returns the count, -1 out of
 * memory. The loop is over tp up to the largest node and dp up to the groups: about
 * G log L steps for G groups, whatever D is. */
static int idle_degrees(const hp_problem *p, int **deg)
{
  const hp_cluster *c = p->cluster;
  int D = c->n_devices, L = p->model->n_layers, n = 0, gmax = 0;
  *deg = NULL;
  for (int k = 0; k < c->n_nodes; k++)
    if (c->nodes[k].gpus > gmax) gmax = c->nodes[k].gpus;
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (int tp = 1; tp <= gmax; tp++) {
      long g = idle_groups(c, tp);
      for (int pp = 1; pp <= L && pp <= g; pp++)
        for (long dp = 1; pp * dp <= g && (long)pp * tp * dp < D; dp++) {
          if (p->job.gbs % dp) continue;
          if (pass) {
            (*deg)[3 * n] = pp;
            (*deg)[3 * n + 1] = tp;
            (*deg)[3 * n + 2] = (int)dp;
          }
          n++;
        }
    }
    if (!pass && !(*deg = hp__calloc((size_t)(n > 0 ? n : 1) * 3, sizeof **deg))) return -1;
  }
  qsort(*deg, (size_t)n, 3 * sizeof **deg, by_devices);
  return n;
}

int hp__configs_cert(const hp_problem *prob, hp_config **out)
{
  hp_config *whole = NULL, *all;
  int nw = hp__configs(prob, &whole), nd, ni, *deg;
  if (nw < 0 || !prob->job.idle_devices) { *out = whole; return nw; }
  *out = NULL;
  if ((nd = idle_degrees(prob, &deg)) < 0) { free(whole); return -1; }
  ni = expand(prob, deg, nd, NULL, NULL, 0);
  if (ni < 0 || !(all = hp__calloc((size_t)(nw + ni > 0 ? nw + ni : 1), sizeof *all))) {
    free(deg);
    free(whole);
    return -1;
  }
  if (nw > 0) memcpy(all, whole, (size_t)nw * sizeof *all);
  expand(prob, deg, nd, all + nw, NULL, 0);
  free(deg);
  free(whole);
  *out = all;
  return nw + ni;
}

/* Device types from the slowest: by peak x efficiency, the later type first on ties;
 * only types some node has. Writes them to order[] and returns their count. */
static int slowest_types(const hp_cluster *c, int *order)
{
  int n = 0;
  for (int t = c->n_types - 1; t >= 0; t--) {
    int has = 0;
    for (int k = 0; k < c->n_nodes && !has; k++) has = c->nodes[k].type == t;
    if (!has) continue;
    int at = n++;
    double v = c->types[t].peak * c->types[t].eff;
    /* insertion: stable on ties, so the later type stays first */
    while (at > 0 && c->types[order[at - 1]].peak * c->types[order[at - 1]].eff > v) {
      order[at] = order[at - 1];
      at--;
    }
    order[at] = t;
  }
  return n;
}

/* The idle levels: nodes[] gets every node from the slowest (its type's place in
 * slowest_types, then the node's order in the file), and len[i] the number of nodes that
 * level i + 1 leaves idle, a prefix of nodes[]. Within each type but the fastest, from
 * the slowest type on: 1, 2, 4, ... of its nodes (on top of every node of the slower
 * types), then all of them; the fastest type always works. So each whole-type level is
 * there, one of three slow nodes can go idle, and a type of m nodes adds about
 * log2(m) + 1 levels. Returns the level count; -1 out of memory. */
static int idle_levels(const hp_cluster *c, int *nodes, int *len)
{
  int *order = hp__calloc((size_t)(c->n_types > 0 ? c->n_types : 1), sizeof *order);
  int n_types, at = 0, levels = 0;
  if (!order) return -1;
  n_types = slowest_types(c, order);
  for (int q = 0; q < n_types; q++) {
    int m = 0;
    for (int k = 0; k < c->n_nodes; k++)
      if (c->nodes[k].type == order[q]) { nodes[at + m] = k; m++; }
    if (q < n_types - 1) {
      for (int j = 1; j < m; j *= 2) len[levels++] = at + j;
      len[levels++] = at + m;
    }
    at += m;
  }
  free(order);
  /* Levels for divisibility: a node lost from a cluster of one type (127 nodes of 8 for
   * gbs 1024) leaves a device count that no pp x tp x dp with dp dividing the batch
   * matches. So for each power of two 2^k up to the device count, also the shortest
   * prefix that leaves a multiple of 2^k devices, short of every node: at most
   * log2(D) + 1 more levels, the fastest type never wholly idle (it comes last). */
  {
    long D = 0, kept;
    for (int k = 0; k < c->n_nodes; k++) D += c->nodes[k].gpus;
    for (long pw = 2; pw <= D; pw *= 2) {
      kept = D;
      if (D % pw == 0) continue;            /* every device already a multiple */
      for (int q = 0; q + 1 < c->n_nodes; q++) {
        kept -= c->nodes[nodes[q]].gpus;
        if (kept > 0 && kept % pw == 0) {
          int have = 0;
          for (int i = 0; i < levels && !have; i++) have = len[i] == q + 1;
          if (!have) len[levels++] = q + 1;
          break;
        }
      }
    }
  }
  /* nested: ascending prefix lengths (insertion; the type levels already are) */
  for (int i = 1; i < levels; i++)
    for (int j = i; j > 0 && len[j - 1] > len[j]; j--) {
      int t = len[j]; len[j] = len[j - 1]; len[j - 1] = t;
    }
  return levels;
}

int hp__idle_kept(const hp_problem *p, int drop, unsigned char *keep)
{
  const hp_cluster *c = p->cluster;
  int *nodes = hp__calloc((size_t)c->n_nodes, sizeof *nodes);
  int *len = hp__calloc((size_t)c->n_nodes + IDLE_EXTRA_LEVELS, sizeof *len), levels, n = 0;
  if (!nodes || !len || (levels = idle_levels(c, nodes, len)) < 0) {
    free(nodes);
    free(len);
    return -1;
  }
  memset(keep, 1, (size_t)c->n_nodes);
  if (drop >= 1 && drop <= levels)
    for (int i = 0; i < len[drop - 1]; i++) keep[nodes[i]] = 0;
  for (int k = 0; k < c->n_nodes; k++)
    if (keep[k]) n += c->nodes[k].gpus;
  free(nodes);
  free(len);
  return n;
}

int hp__configs_idle(const hp_problem *prob, hp_idle_config **out)
{
  const hp_cluster *c = prob->cluster;
  int *nodes = hp__calloc((size_t)c->n_nodes, sizeof *nodes);
  int *len = hp__calloc((size_t)c->n_nodes + IDLE_EXTRA_LEVELS, sizeof *len);
  unsigned char *keep = hp__calloc((size_t)c->n_nodes, 1);
  int n = 0, cap = 0, levels = 0;
  *out = NULL;
  if (!nodes || !len || !keep ||
      (prob->job.idle_devices && (levels = idle_levels(c, nodes, len)) < 0)) {
    free(nodes); free(len); free(keep);
    return -1;
  }
  /* two passes: count, then fill */
  for (int pass = 0; pass < 2 && n >= 0; pass++) {
    n = 0;
    for (int drop = 1; drop <= levels && n >= 0; drop++) {
      int D = hp__idle_kept(prob, drop, keep), nd, got;
      int *deg;
      if (D <= 0) continue;
      nd = hp__degrees_kept(prob, keep, D, NULL, 0);
      if (!(deg = hp__calloc((size_t)(nd > 0 ? nd : 1) * 3, sizeof *deg))) { n = -1; break; }
      hp__degrees_kept(prob, keep, D, deg, nd);
      got = expand(prob, deg, nd, NULL, pass ? *out + n : NULL, drop);
      free(deg);
      n = got < 0 ? -1 : n + got;
    }
    if (pass == 0 && n >= 0) {
      cap = n;
      if (!(*out = hp__calloc((size_t)(cap > 0 ? cap : 1), sizeof **out))) n = -1;
    }
  }
  free(nodes);
  free(len);
  free(keep);
  if (n < 0) { free(*out); *out = NULL; }
  return n;
}
