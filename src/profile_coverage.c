/* profile_coverage.c -- which (kind, type, tp, mbs) cells of a problem's search space,
 * or of one plan, have measured layer times, which are derived from measured points of
 * the same (kind, type, tp), which come from the shape model, and which fall back to the
 * analytic estimate. The rules
 * are the layer-time look-up's (layer_time.c); the space is cost-model.md section 5's,
 * the same rule as solvers/configs.c. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *hp_cell_source_name(hp_cell_source s)
{
  switch (s) {
  case HP_CELL_MEASURED: return "measured";
  case HP_CELL_DERIVED: return "derived";
  case HP_CELL_SHAPE: return "shape model";
  default: return "estimated";
  }
}

const char *hp_cov_scope_name(hp_cov_scope s)
{
  switch (s) {
  case HP_COV_PLAN: return "plan";
  case HP_COV_GROUPS: return "groups";
  default: return "space";
  }
}

void hp_coverage_destroy(hp_coverage **pc)
{
  hp_coverage *c;
  if (!pc || !*pc) return;
  c = *pc;
  free(c->cells);
  free(c->kinds);
  free(c->kind_layers);
  free(c->by_kind);
  free(c->types);
  free(c->by_type);
  free(c->tps);
  free(c->by_tp);
  free(c->mbs);
  free(c->by_mbs);
  free(c);
  *pc = NULL;
}

static hp_cell_source classify(const hp_problem *p, int l, int k, int tp, int mbs)
{
  const hp_series *s;
  if (tp < 1 || tp > p->max_tp || !p->series) return HP_CELL_ESTIMATED;
  s = p->series[hp__series_index(p, l, k, tp)];
  if (!s) return HP_CELL_ESTIMATED;
  if (s->shape) return HP_CELL_SHAPE;   /* at its own points too: estimates, not measured */
  if (mbs == 0) return HP_CELL_MEASURED;
  for (int i = 0; i < s->n; i++)
    if (s->mbs[i] == mbs) return HP_CELL_MEASURED;
  return HP_CELL_DERIVED;
}

static void count_add(hp_cov_count *n, hp_cell_source s)
{
  n->cells++;
  if (s == HP_CELL_MEASURED) n->measured++;
  else if (s == HP_CELL_DERIVED) n->derived++;
  else if (s == HP_CELL_SHAPE) n->shape++;
  else n->estimated++;
}

static int index_of(const int *v, int n, int x)
{
  for (int i = 0; i < n; i++)
    if (v[i] == x) return i;
  return -1;
}

/* Inserts x into the ascending set v[0..*n-1] (capacity enough). */
static void set_insert(int *v, int *n, int x)
{
  int i = *n;
  if (index_of(v, *n, x) >= 0) return;
  while (i > 0 && v[i - 1] > x) { v[i] = v[i - 1]; i--; }
  v[i] = x;
  (*n)++;
}

/* The tp degrees of the space: tp divides the device count and every node's GPUs. */
static int tp_allowed(const hp_cluster *c, int tp)
{
  if (c->n_devices % tp) return 0;
  for (int k = 0; k < c->n_nodes; k++)
    if (c->nodes[k].gpus % tp) return 0;
  return 1;
}

/* A growing list of (tp, mbs) pairs. */
typedef struct { int tp, mbs; } tm_pair;
typedef struct { tm_pair *v; int n, cap; } tm_list;

static int tm_add(tm_list *t, int tp, int mbs)
{
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 64;
    tm_pair *v = realloc(t->v, (size_t)cap * sizeof *v);
    if (!v) return -1;
    t->v = v;
    t->cap = cap;
  }
  t->v[t->n].tp = tp;
  t->v[t->n++].mbs = mbs;
  return 0;
}

static int cmp_pair(const void *pa, const void *pb)
{
  const tm_pair *a = pa, *b = pb;
  if (a->tp != b->tp) return a->tp < b->tp ? -1 : 1;
  return a->mbs < b->mbs ? -1 : a->mbs > b->mbs;
}

/* The (tp, mbs) pairs of the space's configurations: pp tp dp = D, pp <= L, tp divides
 * every node, gbs / (dp mbs) a positive integer. Sorted, without duplicates. */
static int space_pairs(const hp_problem *p, tm_list *t)
{
  const hp_cluster *c = p->cluster;
  int D = c->n_devices, n = 0, mbs[8192], nm;
  long gbs = p->job.gbs;
  for (int tp = 1; tp <= D; tp++) {
    if (!tp_allowed(c, tp)) continue;
    for (int pp = 1; pp <= D / tp && pp <= p->model->n_layers; pp++) {
      int dp;
      long per;
      if ((D / tp) % pp) continue;
      dp = D / tp / pp;
      if (gbs % dp) continue;
      per = gbs / dp;
      nm = hp_mbs_divisors(per, mbs, 8192);
      for (int k = 0; k < nm && k < 8192; k++)
        if (tm_add(t, tp, mbs[k])) return -1;
    }
  }
  qsort(t->v, (size_t)t->n, sizeof *t->v, cmp_pair);
  for (int i = 0; i < t->n; i++)
    if (n == 0 || cmp_pair(&t->v[i], &t->v[n - 1])) t->v[n++] = t->v[i];
  t->n = n;
  return 0;
}

hp_err hp_coverage_compute(const hp_problem *p, hp_cov_scope scope, const hp_plan *plan,
                           hp_coverage **out, hp_diag *d)
{
  const hp_model *m = p->model;
  const hp_cluster *c = p->cluster;
  const hp_profile *pr = p->profile;
  hp_coverage *cv = NULL;
  int *first_layer = NULL, *kind_of = NULL;
  unsigned char *kt = NULL;
  tm_list pairs = { NULL, 0, 0 };
  int D = c->n_devices;
  hp_err err = HP_OK;

  *out = NULL;
  if (scope == HP_COV_PLAN && !plan)
    return hp_fail(d, HP_INVAL, "profile coverage of a plan: no plan given");
  cv = hp__calloc(1, sizeof *cv);
  if (!cv) return hp_fail(d, HP_NOMEM, "out of memory");
  cv->scope = scope;
  cv->profile = pr ? pr->name : NULL;

  /* Kinds, in model order, with each one's first layer (the series are per kind). */
  cv->kinds = hp__calloc((size_t)m->n_layers, sizeof *cv->kinds);
  cv->kind_layers = hp__calloc((size_t)m->n_layers, sizeof *cv->kind_layers);
  first_layer = hp__calloc((size_t)m->n_layers, sizeof *first_layer);
  kind_of = hp__calloc((size_t)m->n_layers, sizeof *kind_of);
  cv->types = hp__calloc((size_t)c->n_types, sizeof *cv->types);
  cv->tps = hp__calloc((size_t)D + 1, sizeof *cv->tps);   /* tp <= D */
  if (!cv->kinds || !cv->kind_layers || !first_layer || !kind_of || !cv->types || !cv->tps)
    goto nomem;
  for (int l = 0; l < m->n_layers; l++) {
    int k;
    for (k = 0; k < cv->n_kinds; k++)
      if (!strcmp(cv->kinds[k], m->layers[l].kind)) break;
    if (k == cv->n_kinds) {
      cv->kinds[k] = m->layers[l].kind;
      first_layer[k] = l;
      cv->n_kinds++;
    }
    cv->kind_layers[k]++;
    kind_of[l] = k;
  }

  /* The (kind, type) pairs and the (tp, mbs) pairs counted. */
  kt = hp__calloc((size_t)cv->n_kinds * (size_t)c->n_types, 1);
  if (!kt) goto nomem;
  if (scope == HP_COV_PLAN) {
    for (int s = 0; s < plan->pp; s++)
      for (int r = 0; r < plan->dp; r++)
        for (int j = 0; j < plan->tp; j++) {
          int k = hp_device_type(p, plan->dev[HP_SLOT(plan, s, r, j)]);
          for (int l = plan->first[s]; l <= hp_stage_last(plan, s); l++)
            kt[(size_t)kind_of[l] * c->n_types + k] = 1;
        }
    if (tm_add(&pairs, plan->tp, plan->mbs)) goto nomem;
  } else {
    for (int n = 0; n < c->n_nodes; n++)
      for (int k = 0; k < cv->n_kinds; k++) kt[(size_t)k * c->n_types + c->nodes[n].type] = 1;
    if (scope == HP_COV_SPACE) {
      if (space_pairs(p, &pairs)) goto nomem;
    } else {
      for (int tp = 1; tp <= D; tp++)
        if (tp_allowed(c, tp) && tm_add(&pairs, tp, 0)) goto nomem;
    }
  }

  /* The axes: types, tps and mbs values that occur. */
  for (int k = 0; k < c->n_types; k++) {
    int used = 0;
    for (int q = 0; q < cv->n_kinds && !used; q++) used = kt[(size_t)q * c->n_types + k];
    if (used) cv->types[cv->n_types++] = k;
  }
  cv->mbs = hp__calloc((size_t)pairs.n, sizeof *cv->mbs);
  if (!cv->mbs) goto nomem;
  for (int i = 0; i < pairs.n; i++) {
    set_insert(cv->tps, &cv->n_tps, pairs.v[i].tp);
    if (pairs.v[i].mbs > 0) set_insert(cv->mbs, &cv->n_mbs, pairs.v[i].mbs);
  }
  cv->by_kind = hp__calloc((size_t)cv->n_kinds, sizeof *cv->by_kind);
  cv->by_type = hp__calloc((size_t)cv->n_types, sizeof *cv->by_type);
  cv->by_tp = hp__calloc((size_t)cv->n_tps, sizeof *cv->by_tp);
  cv->by_mbs = hp__calloc((size_t)cv->n_mbs, sizeof *cv->by_mbs);
  cv->cells = hp__calloc((size_t)cv->n_kinds * (size_t)cv->n_types * (size_t)pairs.n,
                         sizeof *cv->cells);
  if (!cv->by_kind || !cv->by_type || !cv->by_tp || !cv->by_mbs || !cv->cells) goto nomem;

  /* The cells, kind by kind in model order, then type, tp, mbs. */
  for (int q = 0; q < cv->n_kinds; q++)
    for (int ti = 0; ti < cv->n_types; ti++) {
      int k = cv->types[ti];
      if (!kt[(size_t)q * c->n_types + k]) continue;
      for (int i = 0; i < pairs.n; i++) {
        hp_cov_cell *cell = &cv->cells[cv->n_cells++];
        cell->kind = q;
        cell->type = k;
        cell->tp = pairs.v[i].tp;
        cell->mbs = pairs.v[i].mbs;
        cell->source = classify(p, first_layer[q], k, cell->tp, cell->mbs);
        count_add(&cv->total, cell->source);
        count_add(&cv->by_kind[q], cell->source);
        count_add(&cv->by_type[ti], cell->source);
        count_add(&cv->by_tp[index_of(cv->tps, cv->n_tps, cell->tp)], cell->source);
        if (cell->mbs > 0)
          count_add(&cv->by_mbs[index_of(cv->mbs, cv->n_mbs, cell->mbs)], cell->source);
      }
    }

  if (pr) {
    cv->profile_entries = pr->n_measures;
    for (int i = 0; i < pr->n_measures; i++) {
      const hp_measure *ms = &pr->measures[i];
      int known = ms->type >= 0 && ms->tp <= p->max_tp;
      if (known) {
        known = 0;
        for (int q = 0; q < cv->n_kinds && !known; q++) known = !strcmp(cv->kinds[q], ms->kind);
      }
      cv->unused_entries += !known;
    }
  }
  goto done;
nomem:
  err = hp_fail(d, HP_NOMEM, "out of memory for the profile coverage");
done:
  free(first_layer);
  free(kind_of);
  free(kt);
  free(pairs.v);
  if (err) hp_coverage_destroy(&cv);
  *out = cv;
  return err;
}
