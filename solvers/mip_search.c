/* mip_search.c -- the outer loop of the MIP solvers, a certificate over the whole space
 * of cost-model.md section 5:
 *   1. the layer DP's split of every configuration, for the Megatron-order placement and
 *      its stage mirror: plans for the result (the MIP solver is never worse than dp),
 *      starts for the MIPs, and an order (best DP figure first);
 *   2. per configuration, the placement-free relaxation (hp_mip_build_bound): its bound
 *      holds for every placement, and its solution gives a plan (types to TP groups).
 *      A first pass gives each configuration an equal share of the time left; those
 *      stopped early and not yet pruned get the time left over in a second pass. A
 *      configuration whose bound is not below the incumbent is pruned;
 *   3. with the time left, the exact MIPs of the two fixed placements of every
 *      configuration not pruned, most promising first, to improve the incumbent.
 * The global bound is the least bound among configurations not pruned (a stopped
 * relaxation still bounds); a configuration whose relaxation never ran leaves no bound.
 * Progress goes to the limits' observer after every step. Default limit 60 s. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search.h"

#define MIP_DEFAULT_SECONDS 60.0
/* No backend call gets less: a relaxation cut off within milliseconds bounds nothing. */
#define MIP_MIN_SECONDS 0.5

/* One (configuration, placement) to solve, ranked by the DP's figure. */
typedef struct job { int ci, variant; double dp_obj; } job;

static int by_dp(const void *a, const void *b)
{
  const job *x = a, *y = b;
  if (x->dp_obj != y->dp_obj) return x->dp_obj < y->dp_obj ? -1 : 1;
  if (x->ci != y->ci) return x->ci - y->ci;
  return x->variant - y->variant;
}

/* Solves one MIP from an optional start plan; fills `sol`. */
static hp_err solve_one(hp_mip *m, const hp_mip_map *map,
                        const hp_plan *start, hp_mip_backend backend, const hp_limits *lim,
                        double seconds, double cutoff, hp_mip_solution *sol, hp_diag *d)
{
  double *x0 = NULL;
  hp_err err;
  if (start && (x0 = hp__calloc((size_t)m->n_cols, sizeof *x0)))
    hp_mip_encode(m, map, start, x0);
  err = backend(m, x0, lim, seconds, cutoff, sol, d);
  free(x0);
  return err;
}

/* A real plan from the relaxation's solution: its split and flags, and TP groups of the
 * chosen types, in device order, on the slots. */
static hp_err plan_from_bound(const hp_problem *prob, const hp_mip_map *map, const double *x,
                              hp_plan *pl, hp_diag *d)
{
  int D = prob->cluster->n_devices, n = pl->pp * pl->dp;
  int *groups = hp__calloc((size_t)D, sizeof *groups), *used = hp__calloc((size_t)D, sizeof *used);
  int *ty = hp__calloc((size_t)n, sizeof *ty), *order = hp__calloc((size_t)n, sizeof *order);
  int ng = 0;
  hp_err err = HP_OK;
  if (!groups || !used || !ty || !order) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  ng = hp__tp_groups(prob, pl->tp, groups);
  hp_mip_decode(map, x, pl);
  hp_mip_decode_types(map, x, ty);
  for (int i = 0; i < n; i++) {
    int g;
    for (g = 0; g < ng; g++)
      if (!used[g] && hp_mip_option(prob, map, groups[g]) == ty[i]) break;
    if (g == ng) { err = hp_fail(d, HP_INTERNAL, "relaxation: too few TP groups of a type"); goto done; }
    used[g] = 1;
    order[i] = g;
  }
  hp__place_groups(pl, groups, order);
done:
  free(groups);
  free(used);
  free(ty);
  free(order);
  return err;
}

/* The best heuristic's plan as an incumbent: simulated annealing over placements (the
 * DP's plans cover the two fixed placements), within a tenth of the budget. */
static hp_err warm_start_sa(const hp_problem *prob, const hp_limits *lim, double budget,
                            hp_result *out, hp_diag *d)
{
  const hp_solver *sa = hp_solver_find("sa");
  hp_limits l = *lim;
  hp_result r;
  hp_err err;
  if (!sa) return HP_OK;
  l.time_limit = budget / 10;
  l.top = 1;
  l.keep_rejected = 0;
  hp_result_init(&r);
  err = sa->solve(prob, NULL, &l, &r, d);
  if (!err && r.plan) err = hp__score_offer(prob, lim, r.plan, out, d);
  hp_result_release(&r);
  return err;
}

/* Step 1's visits: the DP's split of one fixed placement, offered and kept as a start. */
typedef struct sweep {
  const hp_problem *prob;
  const hp_limits *lim;
  hp_result *out;
  job *jobs;
  int *nj;
  hp_plan **dp_plan;      /* [2 n] the DP's plan of (configuration, variant), or NULL */
} sweep;

static hp_err dp_start(void *ctx, int i, int variant, hp_plan *pl, hp_diag *d)
{
  sweep *sw = ctx;
  hp_dp_opts o;
  int found = 0;
  double obj = INFINITY;
  hp_err err;
  hp__dp_opts_init(&o);
  if (!(err = hp__dp_split(sw->prob, pl, &o, &found, &obj, NULL, d)) && found) {
    hp_eval e = {0};
    if (!(err = hp_evaluate(sw->prob, pl, &e, d)) && e.feasible &&
        !(err = hp_result_offer(sw->out, sw->lim, pl, &e, d)))
      err = hp_plan_copy(&sw->dp_plan[2 * i + variant], pl, d);   /* the MIPs' start */
    hp_eval_release(&e);
  }
  sw->jobs[(*sw->nj)++] = (job){ i, variant, found ? obj : INFINITY };
  return err;
}

/* Where one configuration stands. */
typedef struct cfg_state {
  double lb;            /* its relaxations' best bound; -INFINITY before one ran */
  int solved;           /* the relaxation of each kind (type 1, node 2) solved to the end */
  int pruned;           /* lb >= incumbent: nothing of it can beat the incumbent */
} cfg_state;

/* The node relaxation where its size stays modest (its columns grow as layers x slots x
 * nodes); the type relaxation is always built. */
#define NODE_RELAX_MAX 100000L

static int node_relaxation_fits(const hp_problem *p, const hp_config *c)
{
  return (long)p->model->n_layers * c->pp * c->dp * p->cluster->n_nodes <= NODE_RELAX_MAX;
}

typedef struct progress {
  const char *name;
  double t0;
  int n;
} progress;

static double global_bound(const cfg_state *st, int n, const hp_result *out)
{
  double b = out->plan ? out->objective : INFINITY;
  for (int i = 0; i < n; i++)
    if (!st[i].pruned && st[i].lb < b) b = st[i].lb;
  return b;
}

/* Tells the limits' observer, if any, where the search stands. */
static void report(const progress *pg, const hp_limits *lim, const char *what, int done,
                   const cfg_state *st, const hp_result *out)
{
  hp_progress p;
  if (!lim->progress) return;
  p.solver = pg->name;
  p.phase = what;
  p.done = done;
  p.total = pg->n;
  p.elapsed = hp__now() - pg->t0;
  p.incumbent = out->plan ? out->objective : INFINITY;
  p.bound = global_bound(st, pg->n, out);
  if (!isfinite(p.bound)) p.bound = -INFINITY;
  lim->progress(lim->progress_ctx, &p);
}

/* The relaxation of configuration c within `seconds`: updates its state and offers the
 * plan its solution gives. */
static hp_err relax_one(const hp_problem *prob, const hp_config *c, int by_node,
                        hp_mip_backend backend, const hp_limits *lim,
                        double seconds, cfg_state *st, hp_result *out, hp_diag *d)
{
  hp_plan *pl = NULL;
  hp_mip *m = NULL;
  hp_mip_map map;
  hp_mip_solution sol = { HP_SOL_NONE, INFINITY, -INFINITY, NULL };
  hp_err err;
  if ((err = hp__plan_fixed(prob, c, 0, &pl, d)) || (err = hp_mip_build_bound(prob, pl, by_node, &m, &map, d)))
    { hp_plan_destroy(&pl); return err; }
  /* no start: it cannot raise the bound, and CBC 2.10.8 given the DP's plan as a start
   * reported the node relaxation of AMP's pp 4, dp 4, mbs 1 "optimal" at 0.916900 where
   * GLPK and CBC without it proved 0.907803, a point both found */
  err = solve_one(m, &map, NULL, backend, lim, seconds,
                  out->plan ? out->objective : INFINITY, &sol, d);
  if (!err) {
    out->work++;
    double lb = sol.status == HP_SOL_INFEASIBLE ? INFINITY : sol.bound;
    if (lb > st->lb) st->lb = lb;       /* a later pass never loosens it */
    if (sol.status == HP_SOL_OPTIMAL || sol.status == HP_SOL_INFEASIBLE) st->solved |= 1 << by_node;
    if (sol.x && !(err = plan_from_bound(prob, &map, sol.x, pl, d)))
      err = hp__score_offer(prob, lim, pl, out, d);
  }
  free(sol.x);
  hp_mip_destroy(&m);
  hp_mip_map_release(&map);
  hp_plan_destroy(&pl);
  return err;
}

static void prune(cfg_state *st, int n, const hp_result *out)
{
  for (int i = 0; i < n && out->plan; i++)
    if (st[i].lb >= out->objective * (1 - 1e-9)) st[i].pruned = 1;
}

hp_err hp__mip_search(const hp_problem *prob, const hp_limits *lim, hp_mip_backend backend,
                      const char *name, hp_result *out, hp_diag *d)
{
  hp_config *cfg = NULL;
  int n = hp__configs(prob, &cfg), nj = 0;
  double budget = lim->time_limit > 0 ? lim->time_limit : MIP_DEFAULT_SECONDS;
  double deadline = hp__now() + budget, bound;
  job *jobs = n > 0 ? hp__calloc((size_t)n * 2, sizeof *jobs) : NULL;
  hp_plan **dp_plan = n > 0 ? hp__calloc((size_t)n * 2, sizeof *dp_plan) : NULL;
  cfg_state *st = n > 0 ? hp__calloc((size_t)n, sizeof *st) : NULL;
  int *order = n > 0 ? hp__calloc((size_t)n, sizeof *order) : NULL;
  progress pg = { name, hp__now(), n };
  hp_err err = HP_OK;
  if (n < 0 || (n > 0 && (!jobs || !dp_plan || !st || !order))) {
    free(cfg); free(jobs); free(dp_plan); free(st); free(order);
    return hp_fail(d, HP_NOMEM, "out of memory");
  }
  for (int i = 0; i < n; i++) st[i].lb = -INFINITY;

  /* 1. the DP's split of every (configuration, placement) */
  sweep sw = { prob, lim, out, jobs, &nj, dp_plan };
  err = hp__each_fixed_placement(prob, cfg, n, lim, deadline, out, dp_start, &sw, d);
  qsort(jobs, (size_t)nj, sizeof *jobs, by_dp);
  if (!err) err = warm_start_sa(prob, lim, budget, out, d);
  for (int k = 0, c = 0; k < nj; k++) {   /* configurations in the order of their best job */
    int seen = 0;
    for (int q = 0; q < c; q++) seen |= order[q] == jobs[k].ci;
    if (!seen) order[c++] = jobs[k].ci;
  }

  /* 2. the relaxations of the configurations not pruned: the type relaxation, again for
   *    those it left open (with at most half the time left), then the node relaxation,
   *    again with all the time left; each pass shares its time equally */
  static const char *const pass_name[4] = { "type relaxations", "type relaxations, again",
                                            "node relaxations", "node relaxations, again" };
  for (int pass = 0; pass < 4 && !err; pass++) {
    int todo = 0, done = 0, kind = pass / 2;
    double share = pass == 1 ? 0.5 : 1;
    for (int q = 0; q < n; q++) {
      int ci = order[q];
      todo += !st[ci].pruned && !(st[ci].solved & (1 << kind)) &&
              (kind == 0 || node_relaxation_fits(prob, &cfg[ci]));
    }
    for (int q = 0; q < n && !err; q++) {
      int ci = order[q];
      double left = deadline - hp__now();
      if (st[ci].pruned || (st[ci].solved & (1 << kind)) ||
          (kind == 1 && !node_relaxation_fits(prob, &cfg[ci])))
        continue;
      double give = share * left / (todo > done ? todo - done : 1);
      if (left < MIP_MIN_SECONDS) break;
      err = relax_one(prob, &cfg[ci], kind, backend, lim,
                      give > MIP_MIN_SECONDS ? give : MIP_MIN_SECONDS, &st[ci], out, d);
      done++;
      prune(st, n, out);
      report(&pg, lim, pass_name[pass], done, st, out);
    }
  }

  /* 3. the exact MIPs of the fixed placements, most promising first */
  for (int k = 0; k < nj && !err; k++) {
    int ci = jobs[k].ci;
    hp_plan *pl = NULL;
    hp_mip *m = NULL;
    hp_mip_map map;
    hp_mip_solution sol = { HP_SOL_NONE, INFINITY, -INFINITY, NULL };
    double left = deadline - hp__now();
    if (left < MIP_MIN_SECONDS) break;
    if (st[ci].pruned || !isfinite(jobs[k].dp_obj)) continue;
    if ((err = hp__plan_fixed(prob, &cfg[ci], jobs[k].variant, &pl, d)) ||
        (err = hp_mip_build(prob, pl, 1, &m, &map, d)))
      { hp_plan_destroy(&pl); break; }
    err = solve_one(m, &map, dp_plan[2 * ci + jobs[k].variant], backend, lim, left,
                    INFINITY, &sol, d);
    if (!err) {
      out->work++;
      if (sol.x) {
        hp_mip_decode(&map, sol.x, pl);
        err = hp__score_offer(prob, lim, pl, out, d);
      }
    }
    free(sol.x);
    hp_mip_destroy(&m);
    hp_mip_map_release(&map);
    hp_plan_destroy(&pl);
    prune(st, n, out);
    report(&pg, lim, "fixed-placement MIPs", k + 1, st, out);
  }
  bound = global_bound(st, n, out);
  report(&pg, lim, "done", n, st, out);
  for (int i = 0; i < 2 * n; i++) hp_plan_destroy(&dp_plan[i]);
  free(cfg);
  free(jobs);
  free(dp_plan);
  free(st);
  free(order);
  if (err) return err;
  if (!isfinite(bound) && bound != INFINITY) {   /* a configuration never bounded */
    out->space = HP_SPACE_INCOMPLETE;
    out->stopped = HP_STOP_TIME;
    snprintf(out->space_note, sizeof out->space_note, "stopped at the time limit before "
             "every configuration was bounded: no bound");
  }
  out->bound = bound;
  if (out->plan)
    out->status = bound >= out->objective * (1 - 1e-9) ? HP_SOL_OPTIMAL : HP_SOL_FEASIBLE;
  else
    out->status = bound == INFINITY ? HP_SOL_INFEASIBLE : HP_SOL_NONE;
  return HP_OK;
}
