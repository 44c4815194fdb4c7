/* mip_search.c -- the certificate of the MIP solvers over the whole space of
 * cost-model.md section 5, in four steps, each within the time limit:
 *   1. incumbents: the layer DP of every configuration under two fixed placements, and
 *      the baselines (seed.c);
 *   2. the pattern DP of every configuration (pattern_dp.c): a lower bound over all of its
 *      placements, with the incumbent as cutoff, and the plan its best sequence decodes
 *      to; a configuration whose bound reaches the incumbent is pruned;
 *   3. a short simulated annealing from the incumbent;
 *   4. the pattern MIP (formulation/mip_pattern.c) of the configurations left open, best
 *      bound first, and of the best configuration even when it is closed: the backend's
 *      solution decodes into a plan of its own (hp_mip_decode_pattern_plan), and its
 *      figures check the DP's. The MIP's optimum cannot be below the DP's bound (the DP
 *      relaxes the MIP's sharding and counting); if it is, or a plan evaluates below a
 *      bound, the two disagree: that is said, the configuration keeps the lower figure
 *      and is not pruned.
 * Bounds are the DP's: a configuration is pruned on its DP bound alone. The global bound
 * is the least bound of the configurations left open (and the incumbent); if one was
 * never bounded, there is none, and the result names the configurations left.
 *
 * A team (lim->team, hp_team.h: processes under mpirun) shares steps 1, 2 and 4: each
 * member claims the next item of the phase's counter (configurations in order of promise,
 * then of bound), prunes against the team's best time, and after each phase the members
 * merge their figures and plans (sync), so that all hold the same state; step 3 runs on
 * member 0 alone (it is one annealing) while the others start on step 4. A
 * configuration's bound is computed once, by one member; every member ends with the same
 * result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

#define MIP_DEFAULT_SECONDS 60.0
/* No backend call gets less: a solve cut off within milliseconds proves nothing. */
#define MIP_MIN_SECONDS 0.5
/* Relative tolerance of "optimal" and of pruning: bounds and times are sums of the same
 * figures in different orders, equal to ~1e-15; the backends' own tolerances are ~1e-6. */
#define CERT_TOL 1e-9
#define AGREE_TOL 1e-6

typedef struct cert {
  const hp_problem *prob;
  const hp_limits *lim;
  const char *name;
  hp_result *out;
  hp_config *cfg;
  int n;
  hp_cfg_bound *b;
  int *disagree;        /* [n] the DP and the MIP disagreed on configuration i */
  double t0;
  const char *phase;
  const hp_team *team;  /* NULL: a single process */
  double *scratch;      /* [5 n] for merging */
} cert;

/* The best plan time known: this process's, or the team's. */
static double incumbent(const cert *c)
{
  double mine = c->out->plan ? c->out->objective : INFINITY;
  if (c->team) {
    double all = c->team->best(c->team->ctx, mine);
    if (all < mine) return all;
  }
  return mine;
}

static int pruned_at(const cert *c, int i, double inc)
{
  return c->b[i].done && !c->disagree[i] && isfinite(inc) && c->b[i].bound >= inc * (1 - CERT_TOL);
}

static int pruned(const cert *c, int i)
{
  return pruned_at(c, i, c->out->plan ? c->out->objective : INFINITY);
}

/* --- Merging a team's state (collectives: every member calls each, in the same order). */

/* Every member's best plan offered to every member (in rank order; plans of equal time
 * are kept by hp_plan_compare, so all end with the same one). */
static hp_err merge_plans(cert *c, hp_diag *d)
{
  const hp_team *t = c->team;
  long long *mine = NULL;
  void *all = NULL;
  /* the counts on the stack up to 1024 members: this collective must be joined even out
   * of memory (a member that sends nothing still joins) */
  long n = 0, few[1024], *len = t->size <= 1024 ? few : hp__calloc((size_t)t->size, sizeof *len);
  hp_err err = HP_OK;
  if (!len) return hp_fail(d, HP_NOMEM, "out of memory for a team of %d", t->size);
  if (c->out->plan) {
    n = hp_plan_packed_words(c->out->plan);
    if (!(mine = hp__calloc((size_t)n, sizeof *mine))) n = 0;   /* sends nothing; still joins */
    else hp_plan_pack(c->out->plan, mine);
  }
  if (t->gather(t->ctx, mine, n * (long)sizeof *mine, &all, len))
    err = hp_fail(d, HP_INTERNAL, "team: merging the plans failed");
  for (long r = 0, at = 0; r < t->size && !err; at += len[r], r++) {
    hp_plan *pl = NULL;
    if (r == t->rank || len[r] == 0) continue;
    if ((err = hp_plan_unpack((const long long *)((const char *)all + at),
                              len[r] / (long)sizeof(long long), c->prob->model->n_layers, &pl, d)))
      break;
    err = hp__score_offer(c->prob, c->lim, pl, c->out, d);
    hp_plan_destroy(&pl);
  }
  free(all);
  free(mine);
  if (len != few) free(len);
  return err;
}

/* The figures each member computed for the configurations it claimed, and why each
 * stopped (the furthest-reaching reason: an interrupt anywhere stops all). */
static hp_err merge_figures(cert *c, hp_diag *d)
{
  const hp_team *t = c->team;
  double *v = c->scratch, st = c->out->stopped;
  int n = c->n, bad = 0;
  for (int i = 0; i < n; i++) {
    v[i] = c->b[i].done;
    v[n + i] = c->b[i].exact;
    v[2 * n + i] = c->disagree[i];
    v[3 * n + i] = c->b[i].done ? c->b[i].bound : INFINITY;
    v[4 * n + i] = (double)c->b[i].work;
  }
  bad |= t->reduce(t->ctx, v, 3L * n, HP_TEAM_MAX);
  bad |= t->reduce(t->ctx, v + 3L * n, n, HP_TEAM_MIN);
  bad |= t->reduce(t->ctx, v + 4L * n, n, HP_TEAM_MAX);   /* one member did each */
  bad |= t->reduce(t->ctx, &st, 1, HP_TEAM_MAX);
  if (bad) return hp_fail(d, HP_INTERNAL, "team: merging the bounds failed");
  for (int i = 0; i < n; i++) {
    c->b[i].done = v[i] > 0;
    c->b[i].exact = v[n + i] > 0;
    c->disagree[i] = v[2 * n + i] > 0;
    if (c->b[i].done) c->b[i].bound = v[3 * n + i];
    c->b[i].work = (long)v[4 * n + i];
  }
  c->out->stopped = (hp_stop)st;
  return HP_OK;
}

/* Whether every member says yes (a decision that must be the same on all). */
static int all_agree(const cert *c, int yes)
{
  double v = yes ? 1 : 0;
  if (!c->team) return yes;
  if (c->team->reduce(c->team->ctx, &v, 1, HP_TEAM_MIN)) return 0;
  return v > 0;
}

/* After a phase: if any member failed, all stop (this one with a message of its own). */
static hp_err team_check(const cert *c, hp_err err, hp_diag *d)
{
  if (!c->team) return err;
  if (!all_agree(c, err == HP_OK) && !err)
    err = hp_fail(d, HP_INTERNAL, "team: another process of the search failed");
  return err;
}

static hp_err merge_all(void *ctx, hp_diag *d)
{
  cert *c = ctx;
  hp_err err = merge_figures(c, d);
  hp_err e2 = merge_plans(c, d);
  return err ? err : e2;
}

/* The least bound of the configurations left open, the incumbent if all are closed;
 * -INFINITY if one was never bounded. */
static double global_bound(const cert *c)
{
  double g = c->out->plan ? c->out->objective : INFINITY;
  for (int i = 0; i < c->n; i++) {
    if (!c->b[i].done) return -INFINITY;
    if (!pruned(c, i) && c->b[i].bound < g) g = c->b[i].bound;
  }
  return g;
}

static void report(cert *c, int done)
{
  hp_progress p;
  if (!c->lim->progress) return;
  p.solver = c->name;
  p.phase = c->phase;
  p.done = done;
  p.total = c->n;
  p.elapsed = hp__now() - c->t0;
  p.incumbent = c->out->plan ? c->out->objective : INFINITY;
  p.bound = global_bound(c);
  c->lim->progress(c->lim->progress_ctx, &p);
}

static void step(void *ctx, int done) { report(ctx, done); }

/* A short annealing from the incumbent, within `seconds`. */
static hp_err anneal(cert *c, double seconds, hp_diag *d)
{
  const hp_solver *sa = hp_solver_find("sa");
  hp_limits l = *c->lim;
  hp_result r;
  hp_err err;
  if (!sa || seconds < MIP_MIN_SECONDS) return HP_OK;
  l.time_limit = seconds;
  l.top = 1;
  l.keep_rejected = 0;
  l.progress = NULL;
  l.max_work = 0;
  hp_result_init(&r);
  err = sa->solve(c->prob, c->out->plan, &l, &r, d);
  if (!err && r.plan) err = hp__score_offer(c->prob, c->lim, r.plan, c->out, d);
  hp_result_release(&r);
  return err;
}

/* Configuration i's pattern MIP within `seconds`: decodes its solution into a plan, and
 * checks the DP's bound against the MIP's figures. */
static hp_err solve_mip(cert *c, int i, hp_mip_backend backend, double seconds, int cut,
                        double deadline, hp_diag *d)
{
  const hp_problem *p = c->prob;
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_classes cl;
  hp_mip *m = NULL;
  hp_mip_pmap map;
  hp_mip_solution sol = { HP_SOL_NONE, INFINITY, -INFINITY, NULL };
  hp_err err;
  double cutoff = INFINITY, dpb = c->b[i].bound;
  memset(&map, 0, sizeof map);
  memset(&pt, 0, sizeof pt);
  if ((err = hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, d))) return err;
  if ((err = hp__plan_for(p, &c->cfg[i], &pl, d)) || (err = hp_patterns_build(p, &cl, pl, &pt, d)) ||
      (err = hp_mip_build_pattern(p, &pt, &m, &map, d)))
    goto done;
  if (cut && isfinite(incumbent(c))) cutoff = incumbent(c) / m->obj_scale;
  if ((err = backend(m, NULL, c->lim, seconds, cutoff, &sol, d))) goto done;
  c->out->work++;
  if (sol.x) {
    double obj = sol.obj * m->obj_scale;
    int found = 0;
    if (sol.status == HP_SOL_OPTIMAL && obj < dpb * (1 - AGREE_TOL) - 1e-12) c->disagree[i] = 1;
    if (!(err = hp_mip_decode_pattern_plan(p, &pt, &map, sol.x, deadline - hp__now(), pl, &found, d)) &&
        found) {
      hp_eval e = {0};
      if (!(err = hp_evaluate(p, pl, &e, d)) && e.feasible) {
        if (e.iteration_time < dpb * (1 - CERT_TOL)) c->disagree[i] = 1;   /* a plan below a bound */
        err = hp_result_offer(c->out, c->lim, pl, &e, d);
      }
      hp_eval_release(&e);
    }
    if (c->disagree[i] && obj < c->b[i].bound) c->b[i].bound = obj;
  } else if (sol.status == HP_SOL_INFEASIBLE && isfinite(dpb)) {
    c->disagree[i] = 1;          /* the DP has a sequence that fits; the MIP says none */
  }
done:
  free(sol.x);
  hp_mip_destroy(&m);
  hp_mip_pmap_release(&map);
  hp_patterns_release(&pt);
  hp_classes_release(&cl);
  hp_plan_destroy(&pl);
  return err;
}

/* The configurations a bound still waits for, named in the result's note. */
static void name_open(const cert *c)
{
  hp_result *out = c->out;
  int len, left = 0, shown = 0;
  for (int i = 0; i < c->n; i++) left += !c->b[i].done;
  len = snprintf(out->space_note, sizeof out->space_note, "stopped before %d configuration%s "
                 "had a bound (no bound): ", left, left == 1 ? "" : "s");
  for (int i = 0; i < c->n && len < (int)sizeof out->space_note - 40; i++)
    if (!c->b[i].done) {
      len += snprintf(out->space_note + len, sizeof out->space_note - (size_t)len, "%spp %d tp %d dp %d mbs %d",
                      shown++ ? ", " : "", c->cfg[i].pp, c->cfg[i].tp, c->cfg[i].dp, c->cfg[i].mbs);
    }
  if (shown < left && len < (int)sizeof out->space_note - 12)
    snprintf(out->space_note + len, sizeof out->space_note - (size_t)len, ", and %d more", left - shown);
}

typedef struct open_cfg { double bound; int i; } open_cfg;

static int by_bound(const void *a, const void *b)
{
  const open_cfg *x = a, *y = b;
  if (x->bound != y->bound) return x->bound < y->bound ? -1 : 1;
  return x->i - y->i;
}

hp_err hp__mip_search(const hp_problem *prob, const hp_limits *lim, hp_mip_backend backend,
                      const char *name, hp_result *out, hp_diag *d)
{
  cert c;
  double budget = lim->time_limit > 0 ? lim->time_limit : MIP_DEFAULT_SECONDS;
  double deadline, *fixed = NULL, bound;
  int *order = NULL, n_open = 0, n_dis = 0;
  open_cfg *open = NULL;
  hp_classes cl;
  hp_err err = HP_OK;

  memset(&c, 0, sizeof c);
  memset(&cl, 0, sizeof cl);
  c.prob = prob;
  c.lim = lim;
  c.name = name;
  c.out = out;
  c.t0 = hp__now();
  c.team = lim->team && lim->team->size > 1 ? lim->team : NULL;
  deadline = c.t0 + budget;
  c.n = hp__configs(prob, &c.cfg);
  if (c.n < 0) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    c.n = 0;
  }
  fixed = hp__calloc((size_t)c.n + 1, sizeof *fixed);
  c.b = hp__calloc((size_t)c.n + 1, sizeof *c.b);
  c.disagree = hp__calloc((size_t)c.n + 1, sizeof *c.disagree);
  open = hp__calloc((size_t)c.n + 1, sizeof *open);
  c.scratch = hp__calloc(5 * (size_t)c.n + 1, sizeof *c.scratch);
  /* a member that fails never leaves the others waiting in a collective: every failure
   * from here on is agreed on (team_check) at the end of its phase */
  if (!err && (!fixed || !c.b || !c.disagree || !open || !c.scratch)) err = hp_fail(d, HP_NOMEM, "out of memory");
  if ((err = team_check(&c, err, d))) goto done;

  /* 1. incumbents, within a quarter of the time */
  c.phase = "heuristics";
  err = hp__seed_heuristics(prob, c.cfg, c.n, lim, c.t0 + budget / 4, c.team, out, fixed,
                            NULL, NULL, d);
  if (c.team) {                        /* joined whatever happened above */
    hp_err e2 = merge_plans(&c, d);
    if (c.team->reduce(c.team->ctx, fixed, c.n, HP_TEAM_MIN) && !err)
      err = hp_fail(d, HP_INTERNAL, "team: merging the fixed-placement figures failed");
    if (!err) err = e2;
    err = team_check(&c, err, d);
  }
  if (err) goto done;
  out->stopped = HP_STOP_NONE;     /* the heuristics' own limit is not the search's */
  if (lim->stop && *lim->stop) out->stopped = HP_STOP_INTERRUPT;
  report(&c, 0);

  /* 2. the pattern bound of every configuration, most promising first */
  c.phase = "pattern bounds";
  if (!(order = hp__promise_order(fixed, c.n))) err = hp_fail(d, HP_NOMEM, "out of memory");
  if (!err) err = hp_classes_build(prob, HP_PATTERN_MAX_CLASSES, &cl, d);
  if (!err) {
    err = hp__pattern_pass(prob, &cl, c.cfg, order, c.n, lim, deadline, out, c.b, step, &c,
                           c.team ? merge_all : NULL, d);
  } else if (c.team) {                 /* the pass's two merges, joined all the same */
    merge_all(&c, d);
    merge_all(&c, d);
  }
  if ((err = team_check(&c, err, d))) goto done;
  report(&c, c.n);                     /* every configuration bounded: the certificate */

  /* 3. a short annealing from the incumbent, if some configuration is still open */
  if (all_agree(&c, !hp__should_stop(lim, deadline, out) &&
                     !(global_bound(&c) >= (out->plan ? out->objective : INFINITY) * (1 - CERT_TOL)))) {
    c.phase = "annealing";
    /* a team: member 0 anneals while the others start on step 4; its plan reaches them
     * through the shared best time at once and as a plan in the merge after step 4 */
    if (!c.team || c.team->rank == 0) err = anneal(&c, fmin(budget / 10, (deadline - hp__now()) / 4), d);
    if (c.team && !err && out->plan) c.team->best(c.team->ctx, out->objective);
    if (err && !c.team) goto done;
    report(&c, c.n);
  }

  /* 4. the pattern MIPs: the best configuration, then those left open, best bound first */
  c.phase = "pattern MIPs";
  for (int i = 0; i < c.n; i++)
    if (c.b[i].done && isfinite(c.b[i].bound)) open[n_open++] = (open_cfg){ c.b[i].bound, i };
  qsort(open, (size_t)n_open, sizeof *open, by_bound);
  for (int q0 = 0; q0 < n_open && !err; q0++) {
    int q = c.team ? (int)c.team->claim(c.team->ctx, HP_CTR_MIPS) : q0;
    if (q >= n_open) break;
    int i = open[q].i, todo = 0;
    double left = deadline - hp__now(), inc = incumbent(&c);
    if (q > 0 && pruned_at(&c, i, inc)) continue;
    if (hp__should_stop(lim, deadline, out) || left < MIP_MIN_SECONDS) break;
    for (int k = q; k < n_open; k++) todo += k == q || !pruned_at(&c, open[k].i, inc);
    if (c.team) todo = (todo + c.team->size - 1) / c.team->size;
    /* the MIPs check the bounds and offer plans, but bound nothing themselves: they get
     * a share, not the whole of what is left */
    double share = fmin(q == 0 ? left / 2 : left / todo, fmax(10, budget / 10));
    err = solve_mip(&c, i, backend, fmax(MIP_MIN_SECONDS, share), q > 0, deadline, d);
    if (c.team && out->plan) c.team->best(c.team->ctx, out->objective);
    report(&c, q + 1);
  }
  if (c.team) {                        /* joined whatever happened above */
    hp_err e2 = merge_all(&c, d);
    double w = (double)out->work;
    if (!err) err = e2;
    if (c.team->reduce(c.team->ctx, &w, 1, HP_TEAM_SUM) && !err)
      err = hp_fail(d, HP_INTERNAL, "team: merging the work counts failed");
    out->work = (long)w;
    err = team_check(&c, err, d);
  }
  if (err) goto done;

  bound = global_bound(&c);
  for (int i = 0; i < c.n; i++) n_dis += c.disagree[i];
  if (!isfinite(bound) && bound < 0) {             /* a configuration never bounded */
    out->space = HP_SPACE_INCOMPLETE;
    if (out->stopped == HP_STOP_NONE) out->stopped = HP_STOP_TIME;
    name_open(&c);
  } else if (n_dis) {
    snprintf(out->space_note, sizeof out->space_note, "the pattern DP and the pattern MIP "
             "disagreed on %d configuration%s: each keeps the lesser figure and stays open",
             n_dis, n_dis == 1 ? "" : "s");
  }
  out->bound = out->plan && bound > out->objective ? out->objective : bound;
  if (out->plan)
    out->status = out->bound >= out->objective * (1 - CERT_TOL) ? HP_SOL_OPTIMAL : HP_SOL_FEASIBLE;
  else
    out->status = bound == INFINITY ? HP_SOL_INFEASIBLE : HP_SOL_NONE;
  c.phase = "done";
  report(&c, c.n);
done:
  hp_classes_release(&cl);
  free(c.cfg);
  free(c.b);
  free(c.disagree);
  free(fixed);
  free(order);
  free(open);
  free(c.scratch);
  return err;
}
