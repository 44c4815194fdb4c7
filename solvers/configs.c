/* configs.c -- the outer configurations (pp, tp, dp, mbs) of the search space
 * (cost-model.md section 5): pp * tp * dp = D, tp divides every node's GPU count,
 * pp <= L, and mbs with gbs / (dp * mbs) a positive integer (mbs <= HP_MAX_MBS). The
 * micro-batch sizes come from factoring gbs / dp, so a huge gbs costs nothing.
 * Under a job with idle_devices, also the configurations of the devices left when the
 * slowest device types are idle (hp__configs_idle). */
#include <stdlib.h>

#include "search.h"

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

int hp__idle_kept(const hp_problem *p, int drop, unsigned char *keep)
{
  const hp_cluster *c = p->cluster;
  int *order = hp__calloc((size_t)(c->n_types > 0 ? c->n_types : 1), sizeof *order), n = 0;
  if (!order) return -1;
  slowest_types(c, order);
  for (int k = 0; k < c->n_nodes; k++) {
    int kept = 1;
    for (int q = 0; q < drop; q++) kept &= c->nodes[k].type != order[q];
    keep[k] = (unsigned char)kept;
    if (kept) n += c->nodes[k].gpus;
  }
  free(order);
  return n;
}

int hp__configs_idle(const hp_problem *prob, hp_idle_config **out)
{
  const hp_cluster *c = prob->cluster;
  int *order = hp__calloc((size_t)(c->n_types > 0 ? c->n_types : 1), sizeof *order);
  unsigned char *keep = hp__calloc((size_t)c->n_nodes, 1);
  int n = 0, cap = 0, levels;
  *out = NULL;
  if (!order || !keep) { free(order); free(keep); return -1; }
  levels = prob->job.idle_devices ? slowest_types(c, order) : 0;
  /* two passes: count, then fill */
  for (int pass = 0; pass < 2 && n >= 0; pass++) {
    n = 0;
    for (int drop = 1; drop < levels && n >= 0; drop++) {
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
  free(order);
  free(keep);
  if (n < 0) { free(*out); *out = NULL; }
  return n;
}
