/* search_util.c -- helpers of the heuristics and baselines: a seeded RNG, TP groups and
 * placements built from them, an exact min-max contiguous split, and scoring. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

void hp__rng_seed(hp_rng *r, unsigned long seed) { r->s = 0x9E3779B97F4A7C15ull ^ seed; }

unsigned long long hp__rng_next(hp_rng *r)
{
  unsigned long long z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int hp__rng_int(hp_rng *r, int n) { return (int)(hp__rng_next(r) % (unsigned long long)n); }

double hp__rng_unit(hp_rng *r) { return (double)(hp__rng_next(r) >> 11) * 0x1.0p-53; }

int hp__next_perm(int *a, int n)
{
  int i = n - 2, j = n - 1, t;
  while (i >= 0 && a[i] >= a[i + 1]) i--;
  if (i < 0) return 0;
  while (a[j] <= a[i]) j--;
  t = a[i]; a[i] = a[j]; a[j] = t;
  for (int l = i + 1, r = n - 1; l < r; l++, r--) { t = a[l]; a[l] = a[r]; a[r] = t; }
  return 1;
}

int hp__next_cuts(int *first, int pp, int L)
{
  int i = pp - 1;
  while (i >= 1 && first[i] == L - (pp - i)) i--;
  if (i < 1) return 0;
  first[i]++;
  for (int k = i + 1; k < pp; k++) first[k] = first[k - 1] + 1;
  return 1;
}

void hp__shuffle(int *a, int n, hp_rng *rng)
{
  for (int i = n - 1; i > 0; i--) {
    int j = hp__rng_int(rng, i + 1), t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

void hp__placement_move(int *order, int n, hp_rng *rng)
{
  int kind = hp__rng_int(rng, 3), i = hp__rng_int(rng, n), j = hp__rng_int(rng, n), t;
  if (i == j) j = (i + 1) % n;
  if (kind == 0) {
    t = order[i]; order[i] = order[j]; order[j] = t;
  } else if (kind == 1) {
    t = order[i];
    if (i < j) memmove(&order[i], &order[i + 1], (size_t)(j - i) * sizeof *order);
    else memmove(&order[j + 1], &order[j], (size_t)(i - j) * sizeof *order);
    order[j] = t;
  } else {
    int a = i < j ? i : j, b = i < j ? j : i;
    for (; a < b; a++, b--) { t = order[a]; order[a] = order[b]; order[b] = t; }
  }
}

/* The TP groups of degree tp, on every node (usable 0) or on those whose GPU count tp
 * divides (usable 1). */
static int tp_groups(const hp_problem *p, int tp, int usable, int *first)
{
  const hp_cluster *c = p->cluster;
  int n = 0;
  for (int k = 0; k < c->n_nodes; k++)
    for (int g = 0; (!usable || c->nodes[k].gpus % tp == 0) && g + tp <= c->nodes[k].gpus; g += tp)
      first[n++] = c->nodes[k].first + g;
  return n;
}

int hp__tp_groups(const hp_problem *p, int tp, int *first)
{
  return tp_groups(p, tp, 0, first);
}

int hp__tp_groups_usable(const hp_problem *p, int tp, int *first)
{
  return tp_groups(p, tp, 1, first);
}

void hp__place_fixed(hp_plan *pl, int variant)
{
  int per = pl->dp * pl->tp;
  if (variant == 0) { hp_plan_place_in_order(pl); return; }
  for (int s = 0; s < pl->pp; s++)
    for (int i = 0; i < per; i++) pl->dev[(size_t)s * per + i] = (pl->pp - 1 - s) * per + i;
}

/* The fixed placements of a configuration that leaves devices idle (pp tp dp < D, only
 * under idle_devices: hp__configs_cert lists them): Megatron order, or its stage mirror,
 * over the TP groups of the nodes tp divides (no other node may be used), those of the
 * fastest device type (peak x efficiency) first, then in device order; the slowest are
 * left idle. HP_NOMEM, or HP_OK with fewer groups than pp dp left to the caller's check
 * (hp__configs_cert lists no such configuration). */
static hp_err place_fixed_idle(const hp_problem *p, hp_plan *pl, int variant, hp_diag *d)
{
  const hp_cluster *c = p->cluster;
  int n = 0, need = pl->pp * pl->dp;
  int *first = hp__calloc((size_t)c->n_devices + 1, sizeof *first);
  double *speed = hp__calloc((size_t)c->n_devices + 1, sizeof *speed);
  if (!first || !speed) {
    free(first);
    free(speed);
    return hp_fail(d, HP_NOMEM, "out of memory");
  }
  for (int k = 0; k < c->n_nodes; k++) {
    const hp_devtype *t = &c->types[c->nodes[k].type];
    if (c->nodes[k].gpus % pl->tp) continue;
    for (int g = 0; g < c->nodes[k].gpus; g += pl->tp) {
      int at = n++;                      /* insertion, stable: device order among equals */
      while (at > 0 && speed[at - 1] < t->peak * t->eff) {
        first[at] = first[at - 1];
        speed[at] = speed[at - 1];
        at--;
      }
      first[at] = c->nodes[k].first + g;
      speed[at] = t->peak * t->eff;
    }
  }
  for (int s = 0; s < pl->pp && n >= need; s++)
    for (int r = 0; r < pl->dp; r++)
      for (int j = 0; j < pl->tp; j++)
        pl->dev[((size_t)s * pl->dp + r) * pl->tp + j] =
          first[(variant ? pl->pp - 1 - s : s) * pl->dp + r] + j;
  free(first);
  free(speed);
  return HP_OK;
}

hp_err hp__plan_fixed(const hp_problem *p, const hp_config *c, int variant, hp_plan **out,
                      hp_diag *d)
{
  hp_err err = hp__plan_for(p, c, out, d);
  if (err) return err;
  if ((long)c->pp * c->tp * c->dp < p->cluster->n_devices) {
    if ((err = place_fixed_idle(p, *out, variant, d))) hp_plan_destroy(out);
    return err;
  }
  hp__place_fixed(*out, variant);
  return err;
}

hp_err hp__plan_fixed_idle(const hp_problem *p, const hp_idle_config *c, int variant,
                           hp_plan **out, hp_diag *d)
{
  const hp_cluster *cl = p->cluster;
  unsigned char *keep = hp__calloc((size_t)cl->n_nodes, 1);
  int *kept = hp__calloc((size_t)cl->n_devices, sizeof *kept), n = 0;
  hp_err err = HP_OK;
  if (!keep || !kept || hp__idle_kept(p, c->drop, keep) < 0) err = hp_fail(d, HP_NOMEM, "out of memory");
  if (!err) {
    for (int k = 0; k < cl->n_nodes; k++)
      if (keep[k])
        for (int g = 0; g < cl->nodes[k].gpus; g++) kept[n++] = cl->nodes[k].first + g;
    if (!(err = hp__plan_for(p, &c->c, out, d))) {
      hp_plan *pl = *out;
      int per = pl->dp * pl->tp;
      /* whole kept nodes in device order, tp dividing each: a TP group of consecutive
       * kept devices lies in one node */
      for (int s = 0; s < pl->pp; s++)
        for (int i = 0; i < per; i++)
          pl->dev[(size_t)s * per + i] = kept[(size_t)(variant ? pl->pp - 1 - s : s) * per + i];
    }
  }
  free(keep);
  free(kept);
  return err;
}

hp_err hp__each_fixed_placement(const hp_problem *p, const hp_config *cfg, int n,
                                const hp_limits *lim, double deadline, hp_result *out,
                                hp_fixed_fn fn, void *ctx, hp_diag *d)
{
  hp_err err = HP_OK;
  for (int i = 0; i < n && !err; i++) {
    for (int variant = 0; variant < (cfg[i].pp > 1 ? 2 : 1) && !err; variant++) {
      hp_plan *pl = NULL;
      if (!(err = hp__plan_fixed(p, &cfg[i], variant, &pl, d))) err = fn(ctx, i, variant, pl, d);
      hp_plan_destroy(&pl);
    }
    if (i + 1 < n && hp__should_stop(lim, deadline, out)) break;
  }
  return err;
}

void hp__place_groups(hp_plan *pl, const int *group_first, const int *order)
{
  for (int i = 0; i < pl->pp * pl->dp; i++)
    for (int j = 0; j < pl->tp; j++) pl->dev[i * pl->tp + j] = group_first[order[i]] + j;
}

/* Whether w can be cut into at most pp runs of sum <= t (greedy: each run as long as it
 * can be); every w[l] <= t is the caller's. */
static int fits_runs(const double *w, int L, int pp, double t)
{
  int runs = 1;
  double sum = 0;
  for (int l = 0; l < L; l++) {
    if (sum + w[l] > t) { runs++; sum = 0; }
    sum += w[l];
  }
  return runs <= pp;
}

/* The split for a threshold t that fits: each run as long as it can be while leaving an
 * element for every later run. */
static void cut_runs(const double *w, int L, int pp, double t, int *first)
{
  int l = 0;
  for (int k = 0; k < pp; k++) {
    double sum = w[l];
    first[k] = l++;
    if (k == pp - 1) break;
    while (L - l > pp - 1 - k && sum + w[l] <= t) sum += w[l++];
  }
  first[pp] = L;
}

static void minmax_bisect(const double *w, int L, int pp, int *first)
{
  double lo = 0, hi = 0;
  for (int l = 0; l < L; l++) {
    hi += w[l];
    if (w[l] > lo) lo = w[l];
  }
  if (hi < lo) hi = lo;
  if (fits_runs(w, L, pp, lo)) hi = lo;
  for (int it = 0; it < 200 && hi > lo; it++) {
    double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (fits_runs(w, L, pp, mid)) hi = mid; else lo = mid;
  }
  cut_runs(w, L, pp, hi, first);
}

void hp__split_minmax_bisect(hp_plan *pl, const double *w)
{
  minmax_bisect(w, pl->n_layers, pl->pp, pl->first);
}

void hp__minmax_runs(const double *w, int L, int pp, int *first)
{
  double *pre, *best;
  int *arg;
  /* Large instances: the least largest run by bisection (minmax_bisect). The exact DP
   * below costs pp L^2 time and 12 (pp + 1)(L + 1) bytes: 1.2 GB at 10,000 layers. */
  if ((double)pp * L * L > 2e8 || (double)(pp + 1) * (L + 1) > 4e6) {
    minmax_bisect(w, L, pp, first);
    return;
  }
  pre = calloc((size_t)L + 1, sizeof *pre);
  best = calloc((size_t)(pp + 1) * (L + 1), sizeof *best);
  arg = calloc((size_t)(pp + 1) * (L + 1), sizeof *arg);
  if (!pre || !best || !arg) {   /* out of memory: fall back to bisection, which needs none */
    free(pre); free(best); free(arg);
    minmax_bisect(w, L, pp, first);
    return;
  }
  for (int l = 0; l < L; l++) pre[l + 1] = pre[l] + w[l];
  /* best[k][i]: least largest run over splits of the first i elements into k runs */
  for (size_t i = 0; i < (size_t)(pp + 1) * (L + 1); i++) best[i] = INFINITY;
  best[0] = 0;
  for (int k = 1; k <= pp; k++)
    for (int i = k; i <= L - (pp - k); i++)
      for (int j = k - 1; j < i; j++) {
        double v = best[(size_t)(k - 1) * (L + 1) + j], run = pre[i] - pre[j];
        if (run > v) v = run;
        if (v < best[(size_t)k * (L + 1) + i]) {
          best[(size_t)k * (L + 1) + i] = v;
          arg[(size_t)k * (L + 1) + i] = j;
        }
      }
  first[pp] = L;
  for (int k = pp, i = L; k >= 1; k--) {
    i = arg[(size_t)k * (L + 1) + i];
    first[k - 1] = i;
  }
  free(pre);
  free(best);
  free(arg);
}

void hp__split_minmax(hp_plan *pl, const double *w)
{
  hp__minmax_runs(w, pl->n_layers, pl->pp, pl->first);
}

/* (search.h) A plan outside the job's rules is not one of its plans, and is not offered. */
int hp__plan_follows_job(const hp_problem *p, const hp_plan *pl)
{
  unsigned allowed = hp_job_modes(&p->job);
  for (int l = 0; l < pl->n_layers; l++) {
    if (!(allowed >> pl->mode[l] & 1)) return 0;
    if (p->job.uniform_sharding && pl->mode[l] != pl->mode[0]) return 0;
  }
  return 1;
}

hp_err hp__score_offer(const hp_problem *p, const hp_limits *lim, const hp_plan *pl,
                       hp_result *out, hp_diag *d)
{
  hp_eval e = {0};
  if (!hp__plan_follows_job(p, pl)) return HP_OK;
  hp_err err = hp_evaluate(p, pl, &e, d);
  if (!err) err = hp_result_offer(out, lim, pl, &e, d);
  hp_eval_release(&e);
  return err;
}

hp_err hp__plan_for(const hp_problem *p, const hp_config *c, hp_plan **out, hp_diag *d)
{
  hp_err err = hp_plan_create(out, c->pp, c->tp, c->dp, p->model->n_layers, d);
  if (err) return err;
  (*out)->mbs = c->mbs;
  (*out)->schedule = p->job.schedule;
  if ((err = hp_plan_set_gas(p, *out, d))) hp_plan_destroy(out);
  return err;
}
