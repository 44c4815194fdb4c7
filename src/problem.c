/* problem.c -- binds model, cluster, profile and job into a problem: resolves the
 * effective bandwidth matrix, checks that the profile was measured for the model's layers
 * (its shape records) and claims no time below the hardware's peak, and groups profile
 * measurements into per-(layer, type, tp) series for the layer-time look-up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The profile's look-up table holds a pointer per (layer, device type, tp): at most this
 * many (256 MiB). */
#define HP_MAX_SERIES_SLOTS (32L << 20)

double hp_problem_bw(const hp_problem *p, int a, int b)
{
  const hp_cluster *c = p->cluster;
  if (p->bw) return p->bw[(size_t)a * (size_t)c->n_devices + (size_t)b];
  return c->node_bw[(size_t)c->dev_node[a] * (size_t)c->n_nodes + (size_t)c->dev_node[b]];
}

double hp_problem_lat(const hp_problem *p, int a, int b)
{
  const hp_cluster *c = p->cluster;
  if (p->lat) return p->lat[(size_t)a * (size_t)c->n_devices + (size_t)b];
  return c->node_lat[(size_t)c->dev_node[a] * (size_t)c->n_nodes + (size_t)c->dev_node[b]];
}

static int find_type(const hp_cluster *c, const char *name)
{
  for (int k = 0; k < c->n_types; k++)
    if (!strcmp(c->types[k].name, name)) return k;
  return -1;
}

/* A measure and its place in the file: groups sort by (kind, type, tp), then mbs, then
 * file order, so that of duplicates the last is kept. */
typedef struct { const hp_measure *m; int pos; } keyed;

static int cmp_measure(const void *pa, const void *pb)
{
  const keyed *ka = pa, *kb = pb;
  const hp_measure *a = ka->m, *b = kb->m;
  int c = strcmp(a->kind, b->kind);
  if (c) return c;
  if (a->type != b->type) return a->type < b->type ? -1 : 1;
  if (a->tp != b->tp) return a->tp < b->tp ? -1 : 1;
  if (a->mbs != b->mbs) return a->mbs < b->mbs ? -1 : 1;
  return ka->pos < kb->pos ? -1 : 1;
}

static int same_group(const hp_measure *a, const hp_measure *b)
{
  return !strcmp(a->kind, b->kind) && a->type == b->type && a->tp == b->tp;
}

static int model_has_kind(const hp_model *m, const char *kind)
{
  for (int l = 0; l < m->n_layers; l++)
    if (!strcmp(m->layers[l].kind, kind)) return 1;
  return 0;
}

/* Appends "'a', 'b', 'c' and 4 more" of the distinct strings get(0..n-1) to buf. */
static void list_names(char *buf, size_t cap, int n, const char *(*get)(const void *, int),
                       const void *ctx)
{
  int shown = 0, distinct = 0;
  size_t len = strlen(buf);
  for (int i = 0; i < n; i++) {
    const char *s = get(ctx, i);
    int seen = 0;
    for (int j = 0; j < i && !seen; j++) seen = !strcmp(get(ctx, j), s);
    if (seen) continue;
    distinct++;
    if (shown < 4 && len + strlen(s) + 8 < cap) {
      len += (size_t)snprintf(buf + len, cap - len, "%s'%s'", shown ? ", " : "", s);
      shown++;
    }
  }
  if (distinct > shown && len + 24 < cap)
    snprintf(buf + len, cap - len, " and %d more", distinct - shown);
}

static const char *measure_kind(const void *ctx, int i)
{
  return ((const hp_profile *)ctx)->measures[i].kind;
}
static const char *measure_type(const void *ctx, int i)
{
  return ((const hp_profile *)ctx)->measures[i].type_name;
}
static const char *layer_kind(const void *ctx, int i)
{
  return ((const hp_model *)ctx)->layers[i].kind;
}
static const char *type_name(const void *ctx, int i)
{
  return ((const hp_cluster *)ctx)->types[i].name;
}

/* A profile with layer times must match the problem somewhere: at least one entry for
 * one of the model's kinds, on one of the cluster's types, at a tp a node can hold.
 * Otherwise every layer time would silently be the analytic estimate. */
static hp_err check_profile_matches(const hp_problem *p, hp_diag *d)
{
  const hp_profile *pr = p->profile;
  const hp_model *m = p->model;
  const hp_cluster *c = p->cluster;
  int n_type = 0, n_kind = 0, n_both = 0, n_use = 0;
  char a[192] = "", b[192] = "";

  if (!pr || pr->n_measures == 0) return HP_OK;
  for (int i = 0; i < pr->n_measures; i++) {
    const hp_measure *ms = &pr->measures[i];
    int kind_ok = model_has_kind(m, ms->kind), type_ok = ms->type >= 0;
    n_type += type_ok;
    n_kind += kind_ok;
    n_both += kind_ok && type_ok;
    n_use += kind_ok && type_ok && ms->tp <= p->max_tp;
  }
  if (n_use > 0) return HP_OK;
  if (n_type == 0) {
    list_names(a, sizeof a, pr->n_measures, measure_type, pr);
    list_names(b, sizeof b, c->n_types, type_name, c);
    return hp_fail(d, HP_INVAL, "profile '%s' matches none of the device types of cluster "
                   "'%s': its layer_times are for %s, the cluster has %s: profile the "
                   "cluster's devices (hetplan-profile), or name the types as the cluster "
                   "does", pr->name, c->name, a, b);
  }
  if (n_kind == 0) {
    list_names(a, sizeof a, pr->n_measures, measure_kind, pr);
    list_names(b, sizeof b, m->n_layers, layer_kind, m);
    return hp_fail(d, HP_INVAL, "profile '%s' matches none of the layer kinds of model "
                   "'%s': its layer_times are for kinds %s, the model's kinds are %s: "
                   "profile this model (hetplan-profile --model) or give the profile made "
                   "for it", pr->name, m->name, a, b);
  }
  if (n_both == 0)
    return hp_fail(d, HP_INVAL, "profile '%s' has no layer_times entry for a layer kind of "
                   "model '%s' on a device type of cluster '%s' (%d entries match a kind, "
                   "%d a type, none both): profile this model on these devices",
                   pr->name, m->name, c->name, n_kind, n_type);
  return hp_fail(d, HP_INVAL, "profile '%s': its layer_times for model '%s' on cluster "
                 "'%s' are all at tp above %d, the most GPUs of any node: profile tp "
                 "degrees that fit a node", pr->name, m->name, c->name, p->max_tp);
}

/* Two figures agree within a relative 1e-6 (a hand-written profile rounds them). */
static int same_figure(double a, double b)
{
  return fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b));
}

static const hp_profile_kind *find_kind(const hp_profile *pr, const char *kind)
{
  int lo = 0, hi = pr->n_kinds - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2, c = strcmp(pr->kinds[mid].kind, kind);
    if (c == 0) return &pr->kinds[mid];
    if (c < 0) lo = mid + 1; else hi = mid - 1;
  }
  return NULL;
}

/* Whether layer `ly` (of a model expanded from `tf`, or NULL) differs from what its kind
 * was measured for: its parameters, FLOPs or element size. */
static int shape_differs(const hp_profile_kind *k, const hp_layer *ly,
                         const struct hp_transformer *tf)
{
  int bytes = tf ? hp_dtype_bytes(tf->dtype) : 0;
  return (k->params >= 0 && !same_figure(k->params, ly->params)) ||
         (k->flops >= 0 && !same_figure(k->flops, ly->flops)) ||
         (k->dtype_bytes > 0 && bytes > 0 && k->dtype_bytes != bytes);
}

/* Appends " name A vs B" for a transformer size both sides know and disagree on. */
static void size_diff(char *buf, size_t cap, const char *name, int prof, int model)
{
  size_t len = strlen(buf);
  if (prof > 0 && model > 0 && prof != model && len + 48 < cap)
    snprintf(buf + len, cap - len, "%s%s %d vs %d", len ? ", " : "", name, prof, model);
}

/* What differs between kind record `k` and layer `ly`, into buf: "kind 'block' was timed
 * at P parameters and F FLOP per sample, the model's has P' and F' (hidden 4096 vs
 * 8192, ...)". */
static void describe_difference(char *buf, size_t cap, const hp_profile_kind *k,
                                const hp_layer *ly, const struct hp_transformer *tf)
{
  char sizes[192] = "", fig[96] = "", mfig[96] = "";
  if (tf) {
    int kv = tf->kv_heads > 0 ? tf->kv_heads : tf->heads;
    size_diff(sizes, sizeof sizes, "hidden", k->hidden, tf->hidden);
    size_diff(sizes, sizeof sizes, "heads", k->heads, tf->heads);
    size_diff(sizes, sizeof sizes, "kv_heads", k->kv_heads, kv);
    size_diff(sizes, sizeof sizes, "ffn", k->ffn, hp_transformer_ffn(tf));
    size_diff(sizes, sizeof sizes, "seq", k->seq, tf->seq);
    size_diff(sizes, sizeof sizes, "element bytes", k->dtype_bytes, hp_dtype_bytes(tf->dtype));
  }
  if (k->params >= 0 && k->flops >= 0) {
    snprintf(fig, sizeof fig, "%.4g parameters and %.4g FLOP per sample", k->params, k->flops);
    snprintf(mfig, sizeof mfig, "%.4g and %.4g", ly->params, ly->flops);
  } else if (k->params >= 0) {
    snprintf(fig, sizeof fig, "%.4g parameters", k->params);
    snprintf(mfig, sizeof mfig, "%.4g", ly->params);
  } else if (k->flops >= 0) {
    snprintf(fig, sizeof fig, "%.4g FLOP per sample", k->flops);
    snprintf(mfig, sizeof mfig, "%.4g", ly->flops);
  }
  /* a long name may cut the sentence: it is a message, and the cut is at its end */
  int n;
  if (fig[0])
    n = snprintf(buf, cap, "kind '%s' was timed at %s, the model's layer '%s' has %s%s%s%s",
                 k->kind, fig, ly->name, mfig, sizes[0] ? " (" : "", sizes, sizes[0] ? ")" : "");
  else
    n = snprintf(buf, cap, "kind '%s' was timed in %d-byte elements, the model's layer '%s' "
                 "trains in %d-byte ones", k->kind, k->dtype_bytes, ly->name,
                 tf ? hp_dtype_bytes(tf->dtype) : 0);
  if (n < 0 && cap > 0) buf[0] = '\0';
}

/* The profile's shape records against the model's layers: a kind the problem uses
 * (some layer_times entry on one of the cluster's types at a tp a node holds) whose
 * record differs from one of the model's layers of that kind makes the profile one of
 * another model. Refused, or with job.accept_profile_mismatch a warning. */
static hp_err check_profile_shape(const hp_problem *p, hp_diag *d)
{
  const hp_profile *pr = p->profile;
  const hp_model *m = p->model;
  int *bad = NULL, *used = NULL, n_bad = 0, worst = -1;
  double *weight = NULL;
  char what[400], others[160] = "";
  hp_err err = HP_OK;

  if (!pr || pr->n_kinds == 0 || pr->n_measures == 0) return HP_OK;
  bad = hp__calloc((size_t)pr->n_kinds, sizeof *bad);
  used = hp__calloc((size_t)pr->n_kinds, sizeof *used);
  weight = hp__calloc((size_t)pr->n_kinds, sizeof *weight);
  if (!bad || !used || !weight) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  for (int i = 0; i < pr->n_measures; i++) {
    const hp_measure *ms = &pr->measures[i];
    const hp_profile_kind *k;
    if (ms->type >= 0 && ms->tp <= p->max_tp && (k = find_kind(pr, ms->kind)))
      used[k - pr->kinds] = 1;
  }
  for (int i = 0; i < pr->n_kinds; i++) bad[i] = -1;
  for (int l = 0; l < m->n_layers; l++) {
    const hp_profile_kind *k = find_kind(pr, m->layers[l].kind);
    int i;
    if (!k || !used[i = (int)(k - pr->kinds)]) continue;
    weight[i] += m->layers[l].flops + m->layers[l].params;
    if (bad[i] < 0 && shape_differs(k, &m->layers[l], m->transformer)) {
      bad[i] = l;
      n_bad++;
    }
  }
  if (n_bad == 0) goto done;
  for (int i = 0; i < pr->n_kinds; i++)   /* the one that weighs most is named in full */
    if (bad[i] >= 0 && (worst < 0 || weight[i] > weight[worst])) worst = i;
  describe_difference(what, sizeof what, &pr->kinds[worst], &m->layers[bad[worst]],
                      m->transformer);
  for (int i = 0, shown = 0; i < pr->n_kinds; i++) {
    size_t len = strlen(others);
    if (bad[i] < 0 || i == worst) continue;
    if (shown == 3) {
      snprintf(others + len, sizeof others - len, " and %d more", n_bad - 1 - shown);
      break;
    }
    if (len + strlen(pr->kinds[i].kind) + 24 < sizeof others)
      snprintf(others + len, sizeof others - len, "%s'%s'", shown ? ", " : "; so do ",
               pr->kinds[i].kind);
    shown++;
  }
  if (p->job.accept_profile_mismatch)
    hp_warn(d, "profile '%s'%s%s%s is used for model '%s' though its shapes differ "
            "(accept_profile_mismatch): %s%s; no time below the FLOPs at peak", pr->name,
            pr->model ? " (measured for model '" : "", pr->model ? pr->model : "",
            pr->model ? "')" : "", m->name, what, others);
  else
    err = hp_fail(d, HP_INVAL, "profile '%s'%s%s%s does not fit model '%s': %s%s: profile "
                  "this model (hetplan-profile --model) or take it knowingly "
                  "(--accept-profile-mismatch; job key \"accept_profile_mismatch\": true)", pr->name,
                  pr->model ? " (measured for model '" : "", pr->model ? pr->model : "",
                  pr->model ? "')" : "", m->name, what, others);
done:
  free(bad);
  free(used);
  free(weight);
  return err;
}

/* The largest F / t_l of kind's layers at tp, F the FLOPs the kind was measured for (its
 * shape record), else the layer's own: what one sample of the kind costs one GPU. */
static double kind_flops_per_rank(const hp_problem *p, const char *kind, int tp)
{
  const hp_profile_kind *k = find_kind(p->profile, kind);
  double per_rank = 0;
  for (int l = 0; l < p->model->n_layers; l++) {
    const hp_layer *ly = &p->model->layers[l];
    double f;
    if (strcmp(ly->kind, kind)) continue;
    f = (k && k->flops >= 0 ? k->flops : ly->flops) / (ly->splittable ? tp : 1);
    if (f > per_rank) per_rank = f;
  }
  return per_rank;
}

/* Every measured time of a group (kind, type, tp), entries order[from..to), against the
 * least time its layers' FLOPs take at the type's peak: F mbs / (t_l peak), F the FLOPs
 * the kind was measured for (its shape record), else the largest of the model's layers
 * of the kind. A faster measurement claims more than the hardware does. */
static hp_err check_peak(const hp_problem *p, const keyed *order, int from, int to, hp_diag *d)
{
  const hp_profile *pr = p->profile;
  const hp_measure *a = order[from].m;
  const hp_devtype *ty = &p->cluster->types[a->type];
  double peak = hp_shape_peak(p, a->type);   /* tflops, tflops_fp8 for an fp8 model */
  double per_rank = kind_flops_per_rank(p, a->kind, a->tp);   /* largest F / t_l */
  for (int q = from; q < to; q++) {
    const hp_measure *e = order[q].m;
    double least = per_rank * e->mbs / peak;
    /* 1e-5: hetplan-profile writes times to 6 significant digits */
    if (e->seconds < least * (1 - 1e-5))
      return hp_fail(d, HP_INVAL, "profile '%s': layer_times[%d]: kind '%s' on '%s' at tp %d, "
                     "mbs %d takes %.6g s, less than the %.6g s its %.4g FLOP per GPU take at "
                     "the type's peak of %.4g TFLOPS (cluster '%s'): no GPU is faster than its "
                     "peak; re-measure the layer, or correct the type's tflops", pr->name,
                     order[q].pos, e->kind, ty->name, e->tp, e->mbs, e->seconds, least,
                     per_rank * e->mbs, peak / 1e12, p->cluster->name);
  }
  return HP_OK;
}

/* The measured memory points of a series, from its winning entries (1.2); ignored when
 * the job's sequence_parallel is not the profile's (warned once by the caller). */
static hp_err mem_points(hp_problem *p, hp_series *sr, const hp_measure **win, hp_diag *d)
{
  if (p->job.sequence_parallel != p->profile->sequence_parallel) return HP_OK;
  sr->amb = hp__calloc((size_t)sr->n, sizeof *sr->amb);
  sr->wmb = hp__calloc((size_t)sr->n, sizeof *sr->wmb);
  sr->aval = hp__calloc((size_t)sr->n, sizeof *sr->aval);
  sr->wval = hp__calloc((size_t)sr->n, sizeof *sr->wval);
  if (!sr->amb || !sr->wmb || !sr->aval || !sr->wval)
    return hp_fail(d, HP_NOMEM, "out of memory");
  for (int i = 0; i < sr->n; i++) {
    if (win[i]->has_act) { sr->amb[sr->na] = sr->mbs[i]; sr->aval[sr->na++] = win[i]->act; }
    if (win[i]->has_work) { sr->wmb[sr->nw] = sr->mbs[i]; sr->wval[sr->nw++] = win[i]->work; }
  }
  if (sr->na || sr->nw) p->mem_measured = 1;
  return HP_OK;
}

static hp_err build_series(hp_problem *p, hp_diag *d)
{
  const hp_profile *pr = p->profile;
  const hp_model *m = p->model;
  const hp_cluster *c = p->cluster;
  keyed *order = NULL;
  int n_use = 0, n_groups = 0;
  hp_err err = HP_OK;
  size_t slots = (size_t)m->n_layers * (size_t)c->n_types * (size_t)(p->max_tp + 1);

  if (!pr || pr->n_measures == 0) return HP_OK;   /* no table: every time is analytic */
  if (slots > HP_MAX_SERIES_SLOTS)
    return hp_fail(d, HP_INVAL, "profile '%s': its look-up table for model '%s' (%d layers) on "
                   "cluster '%s' (%d device types, nodes of up to %d GPUs) would take %zu "
                   "entries, more than the %ld hetplan allows: use fewer layers, or nodes of "
                   "fewer GPUs", pr->name, m->name, m->n_layers, c->name, c->n_types,
                   p->max_tp, slots, (long)HP_MAX_SERIES_SLOTS);
  p->series = hp__calloc(slots, sizeof *p->series);
  if (!p->series) return hp_fail(d, HP_NOMEM, "out of memory for the profile table");

  order = hp__calloc((size_t)pr->n_measures, sizeof *order);
  if (!order) return hp_fail(d, HP_NOMEM, "out of memory for the profile table");
  for (int i = 0; i < pr->n_measures; i++) {
    hp_measure *ms = &pr->measures[i];
    ms->type = find_type(c, ms->type_name);
    if (ms->type < 0) {           /* one warning per unknown type, at its first entry */
      int count = 0, first = 1;
      for (int k = 0; k < pr->n_measures; k++)
        if (!strcmp(pr->measures[k].type_name, ms->type_name)) {
          if (k < i) first = 0;
          count++;
        }
      if (first)
        hp_warn(d, "profile '%s': %d layer_times entries (the first is layer_times[%d]) "
                "are for device type '%s', which cluster '%s' lacks; ignored", pr->name,
                count, i, ms->type_name, c->name);
      continue;
    }
    if (ms->tp > p->max_tp) continue;  /* no TP group of that size fits in a node */
    order[n_use].m = ms;
    order[n_use++].pos = i;
  }
  if ((err = check_profile_matches(p, d))) goto done;
  if ((err = check_profile_shape(p, d))) goto done;
  qsort(order, (size_t)n_use, sizeof *order, cmp_measure);

  for (int i = 0; i < n_use; i++)
    if (i == 0 || !same_group(order[i].m, order[i - 1].m)) n_groups++;
  p->series_store = hp__calloc((size_t)n_groups, sizeof *p->series_store);
  if (!p->series_store) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  p->n_series = n_groups;

  for (int i = 0, g = -1; i < n_use; i++) {
    const hp_measure *a = order[i].m;
    if (i == 0 || !same_group(a, order[i - 1].m)) {
      int end = i;
      hp_series *sr = &p->series_store[++g];
      while (end < n_use && same_group(order[end].m, a)) end++;
      if ((err = check_peak(p, order, i, end, d))) goto done;
      sr->mbs = hp__calloc((size_t)(end - i), sizeof *sr->mbs);
      sr->seconds = hp__calloc((size_t)(end - i), sizeof *sr->seconds);
      if (!sr->mbs || !sr->seconds) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
      const hp_measure **win = hp__calloc((size_t)(end - i), sizeof *win);
      if (!win) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
      for (int q = i; q < end; q++) {
        const hp_measure *e = order[q].m;
        if (sr->n > 0 && sr->mbs[sr->n - 1] == e->mbs) {
          sr->seconds[sr->n - 1] = e->seconds;   /* later duplicate wins */
          win[sr->n - 1] = e;
        } else {
          sr->mbs[sr->n] = e->mbs;
          sr->seconds[sr->n] = e->seconds;
          win[sr->n++] = e;
        }
      }
      err = mem_points(p, sr, win, d);
      free(win);
      if (err) goto done;
      for (int l = 0; l < m->n_layers; l++)
        if (!strcmp(m->layers[l].kind, a->kind))
          p->series[hp__series_index(p, l, a->type, a->tp)] = sr;
    }
  }
done:
  free(order);
  return err;
}

/* The micro-batch sizes the shape model's series hold: the divisors of gbs (every mbs of
 * the space divides gbs / dp, so divides gbs), all of them up to SHAPE_MAX_MBS values,
 * else the 32 smallest and a geometric selection of the rest ending at the largest;
 * sizes in between are interpolated as the profile's are (cost-model.md 1). */
#define SHAPE_MAX_MBS 64
static int shape_mbs(long gbs, int *out)
{
  /* the divisors on the heap (at most 6720 for a gbs up to HP_MAX_GBS): no static
   * buffer, so that problems may be bound on several threads; -1 out of memory */
  int *all = hp__calloc(8192, sizeof *all), n, k = 0;
  if (!all) return -1;
  n = hp_mbs_divisors(gbs, all, 8192);
  if (n > 8192) n = 8192;
  if (n <= SHAPE_MAX_MBS) {
    memcpy(out, all, (size_t)n * sizeof *out);
    free(all);
    return n;
  }
  for (; k < SHAPE_MAX_MBS / 2; k++) out[k] = all[k];
  for (int j = 1; j <= SHAPE_MAX_MBS / 2; j++) {
    int at = k - 1 + (int)ceil(pow((double)(n - k), (double)j / (SHAPE_MAX_MBS / 2)));
    if (at > n - 1) at = n - 1;
    if (at > 0 && all[at] > out[k - 1]) out[k++] = all[at];
  }
  free(all);
  return k;
}

/* The smallest bandwidth and largest latency between two GPUs of a node of type `ty`
 * whose GPU count tp divides: what a TP group of that type may get at worst. 0 if no
 * node of the type holds tp GPUs. */
static double type_tp_link(const hp_problem *p, int ty, int tp, double *lat)
{
  const hp_cluster *c = p->cluster;
  double bw = 0;
  *lat = 0;
  for (int n = 0; n < c->n_nodes; n++) {
    const hp_node *nd = &c->nodes[n];
    if (nd->type != ty || nd->gpus % tp) continue;
    if (p->bw) {
      for (int a = nd->first; a < nd->first + nd->gpus; a++)
        for (int b = a + 1; b < nd->first + nd->gpus; b++) {
          double x = hp_problem_bw(p, a, b), y = hp_problem_lat(p, a, b);
          if (bw == 0 || x < bw) bw = x;
          if (y > *lat) *lat = y;
        }
    } else {
      if (bw == 0 || nd->intra_bw < bw) bw = nd->intra_bw;
      if (nd->intra_lat > *lat) *lat = nd->intra_lat;
    }
  }
  return bw;
}

/* The shape model's seconds of series sr (layer l's kind on type k at tp) at its micro-batch
 * sizes, the TP all-reduce over a link of btp bytes/s and latency lat included. */
static void shape_seconds(const hp_problem *p, hp_series *sr, int l, int k, int tp, double btp,
                          double lat)
{
  const hp_layer *ly = &p->model->layers[l];
  for (int i = 0; i < sr->n; i++) {
    double sec = hp_shape_layer_time(p, l, k, tp, sr->mbs[i]);
    if (tp > 1 && ly->tp_comm > 0)
      sec += hp_cost_ring_allreduce(tp) * ly->tp_comm * sr->mbs[i] / btp
             + hp_cost_ring_latency(tp, lat);
    sr->seconds[i] = sec;
  }
}

/* The shape model's series (hp_shape.h): for every layer kind of a transformer model,
 * device type with "shape" and tp its nodes can hold, not measured by the profile, the
 * estimate at each micro-batch size of shape_mbs, the TP all-reduce at the type's worst
 * intra-node link included, as a profiled time includes it (cost-model.md 7.4). */
static hp_err build_shape_series(hp_problem *p, hp_diag *d)
{
  const hp_model *m = p->model;
  const hp_cluster *c = p->cluster;
  const hp_transformer *t = m->transformer;
  size_t slots = (size_t)m->n_layers * (size_t)c->n_types * (size_t)(p->max_tp + 1);
  int mbs[SHAPE_MAX_MBS], nm, any = 0, cap, L;

  if (p->job.compute_model != HP_COMPUTE_SHAPE || !t || m->n_layers != t->layers + 3) return HP_OK;
  for (int k = 0; k < c->n_types; k++) any |= c->types[k].shape.given && c->types[k].hbm > 0;
  if (!any) return HP_OK;
  if (slots > HP_MAX_SERIES_SLOTS) {
    hp_warn(d, "model '%s' on cluster '%s': the shape model's table would take %zu entries, "
            "more than %ld: layer times are FLOPs / (peak x efficiency)", m->name, c->name,
            slots, (long)HP_MAX_SERIES_SLOTS);
    return HP_OK;
  }
  if (!p->series && !(p->series = hp__calloc(slots, sizeof *p->series)))
    return hp_fail(d, HP_NOMEM, "out of memory for the shape model's table");
  if ((nm = shape_mbs(p->job.gbs, mbs)) < 0)
    return hp_fail(d, HP_NOMEM, "out of memory for the shape model's table");
  L = t->layers;
  cap = 4 * c->n_types * p->max_tp;
  if (!(p->shape_store = hp__calloc((size_t)cap, sizeof *p->shape_store)))
    return hp_fail(d, HP_NOMEM, "out of memory for the shape model's table");
  for (int k = 0; k < c->n_types; k++) {
    if (!c->types[k].shape.given || c->types[k].hbm <= 0) continue;
    for (int tp = 1; tp <= p->max_tp; tp++) {
      double btp, lat;
      if (!(btp = type_tp_link(p, k, tp, &lat)) && tp > 1) continue;
      if (tp == 1) {   /* a node of the type at all */
        int has = 0;
        for (int n = 0; n < c->n_nodes && !has; n++) has = c->nodes[n].type == k;
        if (!has) continue;
      }
      const int first[4] = { 0, 1, L + 1, L + 2 }, last[4] = { 0, L, L + 1, L + 2 };
      for (int q = 0; q < 4; q++) {
        hp_series *sr;
        if (p->series[hp__series_index(p, first[q], k, tp)]) continue;   /* measured */
        sr = &p->shape_store[p->n_shape++];
        sr->shape = 1;
        sr->mbs = hp__calloc((size_t)nm, sizeof *sr->mbs);
        sr->seconds = hp__calloc((size_t)nm, sizeof *sr->seconds);
        if (!sr->mbs || !sr->seconds) return hp_fail(d, HP_NOMEM, "out of memory");
        for (int i = 0; i < nm; i++) sr->mbs[i] = mbs[i];
        sr->n = nm;
        shape_seconds(p, sr, first[q], k, tp, btp, lat);
        for (int l = first[q]; l <= last[q]; l++) p->series[hp__series_index(p, l, k, tp)] = sr;
      }
    }
  }
  return HP_OK;
}

void hp_problem_refresh_shape(hp_problem *p, int only_tp)
{
  const hp_cluster *c = p->cluster;
  int L;
  if (!p->n_shape) return;
  L = p->model->transformer->layers;
  for (int k = 0; k < c->n_types; k++) {
    if (!c->types[k].shape.given || c->types[k].hbm <= 0) continue;
    for (int tp = 1; tp <= p->max_tp; tp++) {
      if (only_tp > 0 && tp != only_tp) continue;
      /* the layers that head each of the four series of (k, tp), as build_shape_series */
      const int first[4] = { 0, 1, L + 1, L + 2 };
      double lat, btp = type_tp_link(p, k, tp, &lat);
      for (int q = 0; q < 4; q++) {
        hp_series *sr = p->series[hp__series_index(p, first[q], k, tp)];
        if (sr && sr->shape) shape_seconds(p, sr, first[q], k, tp, btp, lat);
      }
    }
  }
}

/* The measured series point that profile entry ms feeds (its group's series, the index of
 * its mbs), NULL where it feeds none (a type the cluster lacks, a tp no node holds, a kind
 * no layer has). */
static double *measured_point(const hp_problem *p, const hp_measure *ms)
{
  hp_series *sr = NULL;
  if (ms->type < 0 || ms->tp > p->max_tp || !p->series) return NULL;
  for (int l = 0; l < p->model->n_layers && !sr; l++)
    if (!strcmp(p->model->layers[l].kind, ms->kind)) {
      sr = p->series[hp__series_index(p, l, ms->type, ms->tp)];
      if (!sr || sr->shape) return NULL;
    }
  for (int i = 0; sr && i < sr->n; i++)
    if (sr->mbs[i] == ms->mbs) return &sr->seconds[i];
  return NULL;
}

void hp_problem_scale_profile(hp_problem *p, int type, double scale)
{
  if (!p->profile) return;
  /* from the profile's own seconds, in file order: a later duplicate wins, as it did when
   * the series were built, and a scale set twice does not compound */
  for (int i = 0; i < p->profile->n_measures; i++) {
    const hp_measure *ms = &p->profile->measures[i];
    double *sec;
    if (ms->type != type || !(sec = measured_point(p, ms))) continue;
    *sec = ms->seconds * scale;
  }
}

double hp_problem_profile_scale_floor(const hp_problem *p, int type)
{
  double floor = -1;
  if (!p->profile) return -1;
  for (int i = 0; i < p->profile->n_measures; i++) {
    const hp_measure *ms = &p->profile->measures[i];
    double least;
    if (ms->type != type || !measured_point(p, ms)) continue;
    least = kind_flops_per_rank(p, ms->kind, ms->tp) * ms->mbs / hp_shape_peak(p, type);
    if (least / ms->seconds > floor) floor = least / ms->seconds;
  }
  return floor;
}

/* An fp8 model needs every device type's FP8 peak. */
static hp_err check_precision(const hp_problem *p, hp_diag *d)
{
  const hp_cluster *c = p->cluster;
  if (p->model->gemm_precision != HP_GEMM_FP8) return HP_OK;
  for (int k = 0; k < c->n_types; k++)
    if (c->types[k].peak_fp8 <= 0)
      return hp_fail(d, HP_INVAL, "model '%s' runs its GEMMs in fp8 (\"gemm_precision\": "
                     "\"fp8\") but device type '%s' of cluster '%s' gives no \"tflops_fp8\": add "
                     "the type's dense FP8 peak (e.g. 989 for H100 SXM), or train in bf16 "
                     "(\"gemm_precision\": \"bf16\")", p->model->name, c->types[k].name, c->name);
  return HP_OK;
}

hp_err hp_problem_create(hp_problem **out, hp_model *model, hp_cluster *cluster,
                         hp_profile *profile, hp_job job, hp_diag *d)
{
  hp_err err = HP_OK;
  hp_problem *p = hp__calloc(1, sizeof *p);
  *out = NULL;
  if (!p) {
    hp_model_destroy(&model);
    hp_cluster_destroy(&cluster);
    hp_profile_destroy(&profile);
    return hp_fail(d, HP_NOMEM, "out of memory");
  }
  p->model = model;
  p->cluster = cluster;
  p->profile = profile;
  p->job = job;
  if (job.gbs <= 0 || job.gbs > HP_MAX_GBS) {
    err = hp_fail(d, HP_INVAL, "global batch size %ld: expected an integer in 1..%ld (--gbs)",
                  job.gbs, HP_MAX_GBS);
    goto done;
  }
  if (model->n_layers <= 0) {
    err = hp_fail(d, HP_INVAL, "model '%s' has no layers", model->name);
    goto done;
  }
  if (!(cluster->mem_margin >= 0 && cluster->mem_margin < 1)) {
    err = hp_fail(d, HP_INVAL, "cluster '%s': memory margin %g: expected a fraction in [0, 1) "
                  "of each device's memory to keep free", cluster->name, cluster->mem_margin);
    goto done;
  }
  for (int k = 0; k < cluster->n_types; k++) {
    hp_devtype *t = &cluster->types[k];
    if (t->mem_total <= 0) t->mem_total = t->mem;
    /* a type whose file gave no reserved_gib takes the job's framework default (0 under
     * "none", as before frameworks existed); a copy rebound under another job follows it */
    if (t->reserved_default)
      t->reserved = hp_framework_reserve(job.framework, t->name, NULL) +
                    hp_framework_allocator(job.framework, t->mem_total);
    t->mem = t->mem_total * (1 - cluster->mem_margin);
    if (t->reserved >= t->mem) {
      err = hp_fail(d, HP_INVAL, "cluster '%s': device type '%s': its reserve of %.3f GiB "
                    "leaves nothing of %.3f GiB less the %g %% memory margin: lower the "
                    "margin or the reserve", cluster->name, t->name, t->reserved / 1073741824.0,
                    t->mem_total / 1073741824.0, 100 * cluster->mem_margin);
      goto done;
    }
  }
  for (int n = 0; n < cluster->n_nodes; n++)
    if (cluster->nodes[n].gpus > p->max_tp) p->max_tp = cluster->nodes[n].gpus;
  if (profile && profile->n_devices > 0) {
    if (profile->n_devices != cluster->n_devices) {
      err = hp_fail(d, HP_PARSE,
                    "profile: bandwidth_matrix is %d x %d but cluster '%s' has %d devices",
                    profile->n_devices, profile->n_devices, cluster->name,
                    cluster->n_devices);
      goto done;
    }
    p->bw = profile->dev_bw;
    p->lat = profile->dev_lat;
  } else if (cluster->dev_bw) {
    p->bw = cluster->dev_bw;
    p->lat = cluster->dev_lat;
  }
  if (hp_model_opt_bytes(model) < 0) {
    err = hp_fail(d, HP_INVAL, "model '%s': state_bytes %g is less than param_bytes %g + "
                  "grad_bytes %g: the optimizer's part (state - param - grad) cannot be "
                  "negative; raise state_bytes", model->name, model->state_bytes,
                  model->param_bytes, model->grad_bytes);
    goto done;
  }
  if (job.sharding & ~HP_SHARD_ALL || (job.max_slices > 1 && (job.max_slices & (job.max_slices - 1)))) {
    err = hp_fail(d, HP_INVAL, "job: sharding mask %#x or max_slices %d: expected modes of "
                  "dp, zero1, zero2, zdp and a power of two", job.sharding, job.max_slices);
    goto done;
  }
  if (job.compute_model != HP_COMPUTE_SHAPE && job.compute_model != HP_COMPUTE_FLOPS) {
    err = hp_fail(d, HP_INVAL, "job: compute_model %d: expected shape or flops", job.compute_model);
    goto done;
  }
  HP_TRY(check_precision(p, d));
  HP_TRY(build_series(p, d));
  HP_TRY(build_shape_series(p, d));
  if (profile && p->job.sequence_parallel != profile->sequence_parallel) {
    int n = 0;
    for (int i = 0; i < profile->n_measures; i++)
      n += profile->measures[i].has_act || profile->measures[i].has_work;
    if (n > 0)
      hp_warn(d, "profile '%s': its memory figures (act_bytes, work_bytes in %d entries) were "
              "measured %s sequence parallelism and the job runs %s it: they are ignored, the "
              "formula stands", profile->name, n, profile->sequence_parallel ? "with" : "without",
              p->job.sequence_parallel ? "with" : "without");
  }
  *out = p;
  return HP_OK;
done:
  hp_problem_destroy(&p);
  return err;
}

void hp_problem_destroy(hp_problem **pp)
{
  hp_problem *p;
  if (!pp || !*pp) return;
  p = *pp;
  for (int i = 0; i < p->n_series; i++) {
    free(p->series_store[i].mbs);
    free(p->series_store[i].seconds);
    free(p->series_store[i].amb);
    free(p->series_store[i].wmb);
    free(p->series_store[i].aval);
    free(p->series_store[i].wval);
  }
  free(p->series_store);
  for (int i = 0; i < p->n_shape; i++) {
    free(p->shape_store[i].mbs);
    free(p->shape_store[i].seconds);
  }
  free(p->shape_store);
  free(p->series);
  hp_model_destroy(&p->model);
  hp_cluster_destroy(&p->cluster);
  hp_profile_destroy(&p->profile);
  free(p);
  *pp = NULL;
}
