/* explain.c -- explained infeasibility (hp_explain.h, docs/explain.md): a memory-first
 * search for the plan nearest to fitting, then changes to the cluster or the job, each
 * re-planned with the dp solver and re-scored by the evaluator. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

#define GIB 1073741824.0
#define DEFAULT_SECONDS 60.0
/* New nodes of a one-node cluster have no link to copy: assumed 100 Gbit/s, 5 us. */
#define ASSUMED_BW (100e9 / 8)
#define ASSUMED_LAT 5e-6

void hp_explain_release(hp_explain *x)
{
  if (!x) return;
  hp_plan_destroy(&x->miss);
  for (int i = 0; i < x->n_remedies; i++) {
    hp_plan_destroy(&x->remedies[i].plan);
    hp_problem_destroy(&x->remedies[i].prob);
  }
  memset(x, 0, sizeof *x);
}

/* The modes the nearest miss may give a stage: the job's (cost-model.md 5), the
 * least-sharded alone when dp = 1 (every mode is dp there, 7.1). */
static unsigned miss_modes(const hp_problem *prob, const hp_costs *c)
{
  unsigned m = hp_job_modes(&prob->job);
  return c->dp > 1 ? m : m & (~m + 1u);
}

/* The least memory of a stage with terms `t` (t[m]: every layer in mode m), over
 * recompute and the modes of `modes`; the choice goes to *rec, *mode. */
static double least_mem(const hp_costs *c, int s, const hp_mem_terms *t, unsigned modes,
                        int *rec, int *mode)
{
  double best = INFINITY;
  for (int m = 0; m < HP_N_SHARD; m++) {
    if (!(modes >> m & 1u)) continue;
    for (int rr = 0; rr < 2; rr++) {
      double v = hp_cost_mem_total(&t[m], c->inflight[s], rr);
      if (v < best) {   /* strictly less: fewer levers on ties (they cost time) */
        best = v;
        if (rec) *rec = rr;
        if (mode) *mode = m;
      }
    }
  }
  return best;
}

static void add_layer(const hp_costs *c, int l, unsigned modes, hp_mem_terms *t)
{
  for (int m = 0; m < HP_N_SHARD; m++)
    if (modes >> m & 1u) hp_costs_mem_add(c, l, m, 1, -1, &t[m]);
}

/* The split of pl's layers into its pp stages that minimises the largest shortfall
 * max_s (M_s - cap_s), each stage taking its least-memory recompute and mode among
 * `modes`; sets pl->first, recompute and modes, and returns that shortfall (bytes,
 * before reserves: cap is capacity less reserve). */
static double split_least_short(const hp_costs *c, unsigned modes, hp_plan *pl, double *f,
                                int *arg)
{
  int L = c->n_layers, pp = c->pp;
#define F(s, j) f[(size_t)(s) * (size_t)(L + 1) + (size_t)(j)]
#define ARG(s, j) arg[(size_t)(s) * (size_t)(L + 1) + (size_t)(j)]
  for (int s = 0; s < pp; s++)
    for (int j = 0; j <= L; j++) F(s, j) = INFINITY;
  {
    hp_mem_terms t[HP_N_SHARD];
    memset(t, 0, sizeof t);
    for (int j = 1; j <= L - (pp - 1); j++) {
      add_layer(c, j - 1, modes, t);
      F(0, j) = least_mem(c, 0, t, modes, NULL, NULL) - c->cap[0];
      ARG(0, j) = 0;
    }
  }
  for (int s = 1; s < pp; s++)
    for (int j = s + 1; j <= L - (pp - 1 - s); j++) {
      hp_mem_terms t[HP_N_SHARD];
      memset(t, 0, sizeof t);
      for (int i = j - 1; i >= s; i--) {   /* stage s = layers i..j-1 */
        double over, v;
        add_layer(c, i, modes, t);
        if (F(s - 1, i) == INFINITY) continue;
        over = least_mem(c, s, t, modes, NULL, NULL) - c->cap[s];
        v = over > F(s - 1, i) ? over : F(s - 1, i);
        if (v < F(s, j)) {
          F(s, j) = v;
          ARG(s, j) = i;
        }
      }
    }
  if (F(pp - 1, L) < INFINITY) {
    pl->first[pp] = L;
    for (int s = pp - 1, j = L; s >= 0; s--) {
      pl->first[s] = ARG(s, j);
      j = pl->first[s];
    }
  } else {                 /* no split with a finite shortfall (memory terms of 1e308) */
    hp_plan_split_even(pl);
  }
  for (int s = 0; s < pp; s++) {
    hp_mem_terms t[HP_N_SHARD];
    int rec = 0, mode = 0;
    memset(t, 0, sizeof t);
    for (int l = pl->first[s]; l < pl->first[s + 1]; l++) add_layer(c, l, modes, t);
    least_mem(c, s, t, modes, &rec, &mode);
    pl->recompute[s] = (unsigned char)rec;
    for (int l = pl->first[s]; l < pl->first[s + 1]; l++) {
      pl->mode[l] = (unsigned char)mode;
      pl->slices[l] = 0;
    }
  }
  return F(pp - 1, L);
#undef F
#undef ARG
}

/* The nearest-miss split of pl: each stage its own least-memory mode, or, under
 * uniform_sharding, the one mode for the plan whose split has the least shortfall. */
static void least_short(const hp_problem *prob, const hp_costs *c, hp_plan *pl, double *f,
                        int *arg)
{
  unsigned modes = miss_modes(prob, c);
  if (prob->job.uniform_sharding && (modes & (modes - 1u))) {
    double best = INFINITY;
    int bm = -1;
    for (int m = 0; m < HP_N_SHARD; m++)
      if (modes >> m & 1u) {
        double v = split_least_short(c, 1u << m, pl, f, arg);
        if (bm < 0 || v < best) { best = v; bm = m; }
      }
    modes = 1u << bm;
  }
  split_least_short(c, modes, pl, f, arg);
}

/* The largest M - capacity of any device, its device, and how many are over. */
static double worst_device(const hp_eval *e, int *dev, int *n_over)
{
  double w = -INFINITY;
  *n_over = 0;
  for (int d = 0; d < e->n_devices; d++) {
    double o = e->mem[d] - e->cap[d];
    if (o > 0) (*n_over)++;
    if (o > w) {
      w = o;
      *dev = d;
    }
  }
  return w;
}

/* The memory-first search: the plan of least shortfall (then least time). */
static hp_err nearest_miss(const hp_problem *prob, double deadline, const hp_limits *lim,
                           hp_explain *x, hp_diag *d)
{
  int L = prob->model->n_layers, nd = hp__degrees(prob, NULL, 0);
  int *deg = hp__calloc((size_t)nd * 3, sizeof *deg);
  double *f = NULL, best = INFINITY;
  int *arg = NULL;
  hp_err err = HP_OK;
  if (!deg) return hp_fail(d, HP_NOMEM, "out of memory");
  hp__degrees(prob, deg, nd);
  for (int i = 0; i < nd && !err; i++) {
    hp_config cfg = { deg[3 * i], deg[3 * i + 1], deg[3 * i + 2], 1 };
    if (prob->job.gbs % cfg.dp) continue;
    if ((lim->stop && *lim->stop) || hp__now() > deadline) break;
    free(f);
    free(arg);
    f = hp__calloc((size_t)cfg.pp * (size_t)(L + 1), sizeof *f);
    arg = hp__calloc((size_t)cfg.pp * (size_t)(L + 1), sizeof *arg);
    if (!f || !arg) { err = hp_fail(d, HP_NOMEM, "out of memory"); break; }
    for (int variant = 0; variant < (cfg.pp > 1 ? 2 : 1) && !err; variant++) {
      hp_plan *pl = NULL;
      hp_costs k;
      hp_eval e = {0};
      int dev = -1, n_over = 0;
      double w;
      if ((err = hp__plan_fixed(prob, &cfg, variant, &pl, d))) break;
      if ((err = hp_costs_build(prob, pl, &k, d))) { hp_plan_destroy(&pl); break; }
      least_short(prob, &k, pl, f, arg);
      hp_costs_release(&k);
      if ((err = hp_evaluate(prob, pl, &e, d))) { hp_plan_destroy(&pl); break; }
      w = worst_device(&e, &dev, &n_over);
      if (!x->miss || w < best || (w == best && e.iteration_time < x->miss_time)) {
        best = w;
        hp_plan_destroy(&x->miss);
        x->miss = pl;
        pl = NULL;
        x->have_miss = 1;
        x->miss_time = e.iteration_time;
        x->device = dev;
        x->need = e.mem[dev];
        x->cap = e.cap[dev];
        x->short_bytes = w;
        x->n_short = n_over;
        x->stage = -1;
        for (int q = 0; q < x->miss->pp * x->miss->dp * x->miss->tp; q++)
          if (x->miss->dev[q] == dev) x->stage = q / (x->miss->dp * x->miss->tp);
      }
      hp_eval_release(&e);
      hp_plan_destroy(&pl);
    }
  }
  free(f);
  free(arg);
  free(deg);
  return err;
}

/* Re-plans `prob` (taken over) with the dp solver; a remedy if a plan fits, else a line
 * of what was tried. */
static hp_err try_change(hp_problem *prob, hp_fix_kind kind, const char *what,
                         const hp_limits *lim, double deadline, hp_explain *x, int *fits,
                         hp_diag *d)
{
  const hp_solver *dp = hp_solver_find("dp");
  hp_limits l2 = *lim;
  hp_result r;
  hp_err err;
  *fits = 0;
  l2.top = 1;
  l2.keep_rejected = 0;
  l2.progress = NULL;
  l2.time_limit = deadline - hp__now();
  if (l2.time_limit < 1) l2.time_limit = 1;
  if ((err = hp_solver_run(dp, prob, NULL, &l2, &r, d))) {
    hp_problem_destroy(&prob);
    return err;
  }
  if (r.plan && r.fits && x->n_remedies < HP_EXPLAIN_MAX) {
    hp_remedy *m = &x->remedies[x->n_remedies++];
    m->kind = kind;
    snprintf(m->what, sizeof m->what, "%s", what);
    m->fits = 1;
    m->prob = prob;
    m->plan = r.plan;
    m->time = r.objective;
    r.plan = NULL;
    prob = NULL;
    *fits = 1;
  }
  hp_result_release(&r);
  hp_problem_destroy(&prob);
  return HP_OK;
}

static void add_tried(hp_explain *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_tried(hp_explain *x, const char *fmt, ...)
{
  va_list ap;
  if (x->n_tried >= HP_EXPLAIN_MAX) return;
  va_start(ap, fmt);
  vsnprintf(x->tried[x->n_tried++], sizeof x->tried[0], fmt, ap);
  va_end(ap);
}

/* A marketed memory size at or above `gib` (whole GiB below 8 GiB). */
static double round_up_gib(double gib)
{
  static const double sizes[] = { 8, 12, 16, 24, 32, 40, 48, 64, 80, 94, 96, 128, 141, 192, 256 };
  if (gib <= 8) return ceil(gib - 1e-9);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (sizes[i] >= gib - 1e-9) return sizes[i];
  return ceil(gib);
}

/* Larger GPUs: every type with a short device in the nearest miss gets the memory its
 * neediest device there asks for (at least), rounded up to a marketed size. */
static hp_err larger_gpus(const hp_problem *prob, const hp_eval *e, const hp_limits *lim,
                          double deadline, hp_explain *x, hp_diag *d)
{
  const hp_cluster *c = prob->cluster;
  hp_cluster *cl = NULL;
  hp_problem *p2 = NULL;
  char what[256];
  int len = 0, fits, any = 0;
  hp_err err;
  if ((err = hp_cluster_copy(c, &cl, d))) return err;
  for (int k = 0; k < c->n_types; k++) {
    double need = 0;
    for (int dv = 0; dv < e->n_devices; dv++)
      if (hp_device_type(prob, dv) == k && e->mem[dv] > e->cap[dv] && e->mem[dv] > need)
        need = e->mem[dv];
    if (need <= 0) continue;
    if (!(need < 1e30)) {        /* memory terms that overflow: no GPU is large enough */
      hp_cluster_destroy(&cl);
      add_tried(x, "larger GPUs: not tried: the nearest miss needs more memory than any GPU "
                "has (%g bytes)", need);
      return HP_OK;
    }
    need /= 1 - c->mem_margin;
    cl->types[k].mem_total = round_up_gib(need / GIB) * GIB;
    if (len < (int)sizeof what)
      len += snprintf(what + len, sizeof what - (size_t)len, "%s%s GPUs with %g GiB instead of "
                      "%g (the nearest miss needs %.3f GiB on them)", any ? "; " : "",
                      c->types[k].name, cl->types[k].mem_total / GIB, c->types[k].mem_total / GIB,
                      need / GIB);
    any = 1;
  }
  if (!any) { hp_cluster_destroy(&cl); return HP_OK; }
  if ((err = hp_problem_copy_with(prob, cl, prob->job, &p2, d))) return err;
  if ((err = try_change(p2, HP_FIX_LARGER_GPUS, what, lim, deadline, x, &fits, d))) return err;
  if (!fits) add_tried(x, "%s: still nothing fits", what);
  return HP_OK;
}

/* More GPUs: 1, 2, 4, ... more nodes like the one holding the shortest device, up to as
 * many devices again as the cluster has. */
static hp_err more_gpus(const hp_problem *prob, const hp_limits *lim, double deadline,
                        hp_explain *x, hp_diag *d)
{
  const hp_cluster *c = prob->cluster;
  int like = c->dev_node[x->device], gpus = c->nodes[like].gpus, tried = 0;
  double bw = INFINITY, lat = 0;
  int assumed = 0;
  if (c->dev_bw || (prob->profile && prob->profile->n_devices > 0)) {
    add_tried(x, "more GPUs: not tried: the bandwidth matrix covers only the devices there are");
    return HP_OK;
  }
  for (int n = 0; n < c->n_nodes; n++)
    if (n != like) {
      size_t ix = (size_t)like * (size_t)c->n_nodes + (size_t)n;
      if (c->node_bw[ix] < bw) bw = c->node_bw[ix];
      if (c->node_lat[ix] > lat) lat = c->node_lat[ix];
    }
  if (!isfinite(bw)) { bw = ASSUMED_BW; lat = ASSUMED_LAT; assumed = 1; }
  for (int k = 1; k * gpus <= c->n_devices && hp__now() < deadline; k *= 2) {
    hp_cluster *cl = NULL;
    hp_problem *p2 = NULL;
    char what[256];
    int fits;
    hp_err err;
    tried = k;
    snprintf(what, sizeof what, "%d more node%s like '%s' (%d x %s each, linked at %.4g Gbit/s%s)",
             k, k > 1 ? "s" : "", c->nodes[like].name, gpus, c->types[c->nodes[like].type].name,
             bw * 8 / 1e9, assumed ? ", assumed: the cluster has one node" : " as it is");
    if ((err = hp_cluster_copy(c, &cl, d))) return err;
    if ((err = hp_cluster_add_nodes(cl, like, k, bw, lat, d))) { hp_cluster_destroy(&cl); return err; }
    if ((err = hp_problem_copy_with(prob, cl, prob->job, &p2, d))) return err;
    if ((err = try_change(p2, HP_FIX_MORE_GPUS, what, lim, deadline, x, &fits, d))) return err;
    if (fits) return HP_OK;
  }
  if (tried)
    add_tried(x, "more GPUs: up to %d more node%s like '%s' (%d devices in all): still nothing "
              "fits", tried, tried > 1 ? "s" : "", c->nodes[like].name, c->n_devices + tried * gpus);
  return HP_OK;
}

static void describe_levers(const hp_problem *prob, hp_explain *x)
{
  const hp_plan *m = x->miss;
  int nr = 0, ns = 0, pp_max = 0, nd = hp__degrees(prob, NULL, 0), per[HP_N_SHARD] = {0};
  int *deg = hp__calloc((size_t)nd * 3, sizeof *deg);
  char modes[96] = "";
  size_t len = 0;
  if (deg) {
    hp__degrees(prob, deg, nd);
    for (int i = 0; i < nd; i++)
      if (deg[3 * i] > pp_max && prob->job.gbs % deg[3 * i + 2] == 0) pp_max = deg[3 * i];
    free(deg);
  }
  for (int s = 0; s < m->pp; s++) nr += m->recompute[s];
  for (int l = 0; l < m->n_layers; l++)
    if (hp_plan_sharded(m, l)) {
      ns++;
      per[m->mode[l]]++;
    }
  for (int q = 1; q < HP_N_SHARD; q++)
    if (per[q] && len < sizeof modes)
      len += (size_t)snprintf(modes + len, sizeof modes - len, "%s%s %d", len ? ", " : " (",
                              hp_shard_name(q), per[q]);
  if (len && len < sizeof modes) snprintf(modes + len, sizeof modes - len, ")");
  snprintf(x->levers, sizeof x->levers, "micro-batches of 1; recompute on %d of %d stages; "
           "sharding on %d of %d layers%s%s; %d stages (the space allows up to %d); each where "
           "it saves memory", nr, m->pp, ns, m->n_layers, modes,
           m->dp > 1 ? "" : " (dp 1: nothing to shard)", m->pp, pp_max);
}

hp_err hp_explain_infeasible(const hp_problem *prob, const hp_limits *lim, hp_explain *x,
                             hp_diag *d)
{
  double deadline = hp__now() + (lim->time_limit > 0 ? lim->time_limit : DEFAULT_SECONDS);
  hp_eval e = {0};
  hp_err err;
  memset(x, 0, sizeof *x);
  if ((err = nearest_miss(prob, deadline, lim, x, d))) goto fail;
  if (!x->have_miss) return HP_OK;
  describe_levers(prob, x);
  if ((err = hp_evaluate(prob, x->miss, &e, d))) goto fail;
  if (x->short_bytes <= 0) {
    /* a plan fits: the solver that failed missed it; the dp solver's best, or this one */
    hp_problem *p2 = NULL;
    int fits = 0;
    if ((err = hp_problem_copy_with(prob, NULL, prob->job, &p2, d))) goto fail;
    if ((err = try_change(p2, HP_FIX_SOLVER, "another solver: the dp solver", lim, deadline,
                          x, &fits, d)))
      goto fail;
    if (!fits && x->n_remedies < HP_EXPLAIN_MAX) {
      hp_remedy *m = &x->remedies[x->n_remedies++];
      m->kind = HP_FIX_SOLVER;
      snprintf(m->what, sizeof m->what, "another solver: this plan, found by the memory-first "
               "search");
      m->fits = 1;
      if ((err = hp_problem_copy_with(prob, NULL, prob->job, &m->prob, d)) ||
          (err = hp_plan_copy(&m->plan, x->miss, d)))
        goto fail;
      m->time = x->miss_time;
    }
    hp_eval_release(&e);
    return HP_OK;
  }
  if ((err = larger_gpus(prob, &e, lim, deadline, x, d))) goto fail;
  if ((err = more_gpus(prob, lim, deadline, x, d))) goto fail;
  if (prob->cluster->mem_margin > 0) {
    hp_cluster *cl = NULL;
    hp_problem *p2 = NULL;
    char what[128];
    int fits;
    snprintf(what, sizeof what, "no memory margin (it is %g %%)", 100 * prob->cluster->mem_margin);
    if ((err = hp_cluster_copy(prob->cluster, &cl, d))) goto fail;
    cl->mem_margin = 0;
    if ((err = hp_problem_copy_with(prob, cl, prob->job, &p2, d)) ||
        (err = try_change(p2, HP_FIX_MARGIN, what, lim, deadline, x, &fits, d)))
      goto fail;
    if (!fits) add_tried(x, "%s: still nothing fits", what);
  }
  if (prob->job.schedule == HP_GPIPE) {
    hp_problem *p2 = NULL;
    hp_job job = prob->job;
    int fits;
    job.schedule = HP_1F1B;
    if ((err = hp_problem_copy_with(prob, NULL, job, &p2, d)) ||
        (err = try_change(p2, HP_FIX_SCHEDULE, "the 1F1B schedule instead of GPipe (at most pp - s "
                          "micro-batches in flight on stage s, not gas)", lim, deadline, x, &fits, d)))
      goto fail;
    if (!fits) add_tried(x, "the 1F1B schedule instead of GPipe: still nothing fits");
  }
  hp_eval_release(&e);
  return HP_OK;
fail:
  hp_eval_release(&e);
  hp_explain_release(x);
  return err;
}
