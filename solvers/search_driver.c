/* search_driver.c -- the one search behind `dp` and the certificate of `glpk` and `cbc`,
 * over the configurations of cost-model.md section 5, in phases, each within its share
 * of the time limit (default 60 s):
 *   1. incumbents: the layer DP of every configuration under the two fixed placements,
 *      and the baselines (items of seed.c; the certificate runs the baselines at the head
 *      of phase 2's first round, within this phase's time); a configuration's best figure
 *      there is its promise, the order of phase 2;
 *   2. pattern bounds and plans: the pattern DP of every configuration, most promising
 *      first, with the incumbent as cutoff (items of pattern_pass.c); every sequence
 *      below it decodes into a plan. Two rounds: the first gives each configuration a few
 *      times its share of the time left, so that none starves the rest; the second
 *      finishes those cut short with what is left, under a better cutoff (in a team, each
 *      configuration's DP shared by every member, pattern_dp.c). Between them, where the
 *      first left the second work (for that better cutoff) or a gap remains (for a better
 *      plan), placement descents (items of placement_descent.c) on the configurations
 *      left open. With three classes or more, also descents of the most promising
 *      configurations before the first round (its cutoff); the first round stops where
 *      the count of ranks merged ranks (no prices); the second takes its configurations
 *      least bound first, twice an equal share each, rerunning those whose frontiers or
 *      ranks merged with larger frontiers.
 *   `dp` ends here and claims no bound (a time limit or a cutoff may leave the pattern
 *   bounds partial). The certificate goes on:
 *   3. a short simulated annealing from the incumbent, if a configuration is still open;
 *   4. the pattern programs of the best configuration (even if closed) and of those left
 *      open, best bound first, each with a share of the time left (items of
 *      mip_search.c): plans of their own, and a check of the DP's bounds;
 *   5. closing, if a gap remains: the configurations still open, enumerated plan by plan
 *      where their plans fit in the time left (items of solver_enum.c): each one's optimum;
 *   6. tightening, if a gap remains: the pattern DP again where its bound merged frontiers
 *      or ranks or was cut short, with larger frontiers (and more ranks apart);
 *   7. improving, if a gap remains: annealings with new seeds, from the incumbent and
 *      (every other) from an open configuration's fixed placement, until the gap closes
 *      or the time limit (before tightening, also once four in a row found nothing
 *      better);
 *   and its bound: the least bound of the configurations left open, and the incumbent; a
 *   configuration is pruned on its DP bound alone; if one never had a bound there is
 *   none, and the result names those left. The bound is claimed only where the
 *   certificate's space is the job's (hp__cert_scope); elsewhere the result is
 *   "restricted", with no bound. Pruning inside the search compares the DP's bounds,
 *   valid over the part it searches, with plan times: it only drops configurations
 *   where that part holds nothing better than a plan already found.
 *
 * Every phase runs in a team (hp_team.h): lim->team for the certificate under mpirun,
 * else the solo team of one process (team_solo.c), and nothing here asks which. A phase
 * claims its items from its own counter (so a member that finishes early takes the next),
 * publishes each plan time (every member prunes against the team's best), and merges its
 * figures and plans at its end on every path, a failure included; then the members agree
 * on whether one failed (team_check), and all stop if one did, so none waits forever. The
 * annealing runs on member 0 alone while the others start on phase 4, so it has no merge
 * of its own: phase 4 joins its merges whatever happened in it, and its check covers
 * both. Every member ends with the same state, and the same result as a single process.
 *
 * Where to change what: the phases, their order, time shares, cutoffs and merges are
 * here; what one item does is in seed.c, pattern_pass.c and mip_search.c. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

#define SEARCH_DEFAULT_SECONDS 60.0
/* No backend call or annealing gets less: cut off within milliseconds it proves nothing. */
#define MIP_MIN_SECONDS 0.5

/* The team counters (hp_team.h): one per phase and round. */
enum { CTR_SEEDS = 0, CTR_PATTERN = 1 /* and 2 */, CTR_MIPS = 3, CTR_CLOSE = 4, CTR_TIGHT = 5 };

/* Passes of the tightening phase, each with frontiers TIGHT_GROWTH times larger (one team
 * counter each: CTR_TIGHT + pass - 1 < HP_TEAM_COUNTERS). */
#define TIGHT_PASSES 3
#define TIGHT_GROWTH 4

/* The improving phase's first run (before tightening) ends after this many annealings in
 * a row found no better plan (two from the incumbent, two afresh); its last runs to the
 * limit while a gap remains. */
#define IMPROVE_STALL 4

/* Moves of each annealing of phase 7 (sa's default is 3000): on the three-kind 64-GPU row,
 * from dp's plan, 2 seeds in 4 reach 5.915 with 10,000, 1 in 13 with 3000. (Phase 3 keeps
 * one annealing of sa's default: it runs before the closing phase, and eight of 10,000
 * made the 120 tiny instances of test_certificate12.c, which closing proves, time out
 * under ASan.) */
#define ANNEAL_MOVES 10000

/* The share of the time left that the placement descents between phase 2's rounds take
 * (descending), and how many configurations in a row (on one member) may lower nothing
 * before they stop: where the incumbent is already the best placement (two kinds, in
 * Megatron order), a descent on a deep model spends its whole share to find nothing. */
#define DESCENT_SHARE 0.25
#define DESCENT_STALL 3
/* ... and at most this share of the whole limit: on the 160-layer 140B row (two kinds,
 * 768 GPUs) each layer DP takes long and no swap helps; three descents there took their
 * whole shares, 15 s in all under a cap of 5 % (a quarter of the time left there: 40 s).
 * 10 % since the stage moves: on a five-kind 104-GPU cluster (Llama-2 7B, gbs 1024, 60 s)
 * the descent of pp 13 tp 2 dp 4 needs 1.5 s to go from 20.158 s to 19.393, which the 3 s
 * of 5 % shared among eight configurations never gave it. */
#define DESCENT_LIMIT 0.10
/* With three classes or more, phase 2 begins with the descents of the EARLY_DESCENTS most
 * promising configurations (by phase 1's figure), in EARLY_DESCENT_LIMIT of the limit:
 * there the pattern DP's runs use their whole share below the cutoff, and a better cutoff
 * prunes more of their states. On the five-kind 104-GPU row (GPT 2.6B, 300 s) phase 1
 * leaves 2.4925 s; the descents find 2.2174 s in 3 s, and the first round then ends at
 * 167 s instead of 243 s. */
#define EARLY_DESCENTS 3
#define EARLY_DESCENT_LIMIT 0.03

/* Plans per second the closing phase assumes before it has timed its own enumeration
 * (the evaluator scores about 380,000 a second on the 2-core build machine); an item is
 * started only when its plans fit in CLOSE_SHARE of the time left at that rate. */
#define CLOSE_RATE0 1e5
#define CLOSE_SHARE 0.5

/* With three classes or more, phase 2's first round starts no configuration once the time
 * left is below QUICK_RESERVE times the mean quick bound seen for each one not yet bounded
 * (per member): those take their quick bounds alone (quick_bounds), so that the
 * certificate has a bound where the round runs out of time (the 4-kind 112-GPU row in 60 s
 * had none in some runs: its last configurations were never started; at 10 s, where the
 * cap below is 1 s, 14 of its 72 are still left without one). */
#define QUICK_RESERVE 2.0
/* ... and never more than this share of the limit: the mean of the first few is high (the
 * most promising configurations come first, and are the largest: on that row the first
 * took 0.27 s; whole passes averaged 0.02 to 0.04 s each, 71 in 1.1 s and 41 in 1.6 s) */
#define QUICK_CAP 0.1

typedef struct open_cfg { double bound; int i; } open_cfg;

typedef struct search {
  const hp_problem *prob;
  const hp_limits *lim;
  const hp_search_kind *kind;
  int cert;             /* the certificate (phases 3 and 4, and the bound); else dp */
  hp_cert_scope scope;  /* the certificate's space against the job's */
  hp_result *out;
  const hp_team *team;  /* lim->team's several members, or the solo team */
  hp_config *cfg;
  int n;
  double *fixed;        /* [n] phase 1's best fixed-placement figure per configuration */
  int *order;           /* [n] the configurations, most promising first */
  hp_cfg_bound *b;      /* [n] the pattern bounds */
  int *disagree;        /* [n] the DP and the MIP disagreed on configuration i */
  open_cfg *open;       /* [n] phase 4's configurations */
  double *scratch;      /* [9 n] for merging */
  long *lens;           /* [team size] the bytes each member sends in merge_plans: taken at
                         * the start, so that no merge allocates before its collective */
  int refuted;          /* the closing phase found a plan below a configuration's DP bound */
  double t0, budget, deadline;
  const char *phase;    /* progress: what runs, and how many items it has */
  int total;
  unsigned long slices; /* the improving phase's annealings so far (each its own seed) */
  int rest;             /* phase 1's items after the configurations' that the certificate
                         * leaves to the head of phase 2 (incumbents()) */
} search;

/* --- Incumbents and pruning. */

/* The best plan time known: this member's, or the team's. */
static double incumbent(const search *s)
{
  double mine = s->out->plan ? s->out->objective : INFINITY;
  double all = s->team->best(s->team->ctx, mine);
  return all < mine ? all : mine;
}

/* Tells the team this member's best plan time. */
static void publish(const search *s)
{
  if (s->out->plan) s->team->best(s->team->ctx, s->out->objective);
}

static int pruned_at(const search *s, int i, double inc)
{
  return s->b[i].done && !s->disagree[i] && isfinite(inc) && s->b[i].bound >= inc * (1 - HP_CERT_TOL);
}

static int pruned(const search *s, int i)
{
  return pruned_at(s, i, s->out->plan ? s->out->objective : INFINITY);
}

/* The least bound of the configurations left open, the incumbent if all are closed;
 * -INFINITY if one was never bounded. */
static double global_bound(const search *s)
{
  double g = s->out->plan ? s->out->objective : INFINITY;
  for (int i = 0; i < s->n; i++) {
    if (!s->b[i].done) return -INFINITY;
    if (!pruned(s, i) && s->b[i].bound < g) g = s->b[i].bound;
  }
  return g;
}

/* A gap remains: the global bound is below the incumbent (or no plan yet). */
static int gap_remains(const search *s)
{
  return !(global_bound(s) >= (s->out->plan ? s->out->objective : INFINITY) * (1 - HP_CERT_TOL));
}

static void report(const search *s, int done)
{
  hp_progress p;
  if (!s->lim->progress) return;
  p.solver = s->kind->name;
  p.phase = s->phase;
  p.done = done;
  p.total = s->total;
  p.elapsed = hp__now() - s->t0;
  p.incumbent = s->out->plan ? s->out->objective : INFINITY;
  /* dp, and a certificate over a part of the job's space, claim no bound */
  p.bound = s->cert && s->scope == HP_CERT_FULL ? global_bound(s) : NAN;
  s->lim->progress(s->lim->progress_ctx, &p);
}

/* --- Merging the team's state (collectives: every member calls each, in the same order;
 * with the solo team they leave everything as it is). */

/* Every member's best plan offered to every member (in rank order; plans of equal time
 * are kept by hp_plan_compare, so all end with the same one). */
static hp_err merge_plans(search *s, hp_diag *d)
{
  const hp_team *t = s->team;
  long long *mine = NULL;
  void *all = NULL;
  /* this collective must be joined even out of memory: the counts' array was taken at
   * the start (a member that sends nothing still joins) */
  long n = 0, *len = s->lens;
  hp_err err = HP_OK;
  if (s->out->plan) {
    n = hp_plan_packed_words(s->out->plan);
    if (!(mine = hp__calloc((size_t)n, sizeof *mine))) n = 0;   /* sends nothing; still joins */
    else hp_plan_pack(s->out->plan, mine);
  }
  if (t->gather(t->ctx, mine, n * (long)sizeof *mine, &all, len))
    err = hp_fail(d, HP_INTERNAL, "team: merging the plans failed");
  for (long r = 0, at = 0; r < t->size && !err; at += len[r], r++) {
    hp_plan *pl = NULL;
    if (r == t->rank || len[r] == 0) continue;
    if ((err = hp_plan_unpack((const long long *)((const char *)all + at),
                              len[r] / (long)sizeof(long long), s->prob->model->n_layers, &pl, d)))
      break;
    err = hp__score_offer(s->prob, s->lim, pl, s->out, d);
    hp_plan_destroy(&pl);
  }
  free(all);
  free(mine);
  return err;
}

/* The figures each member computed for the configurations it claimed, and why each
 * stopped (the furthest-reaching reason: an interrupt anywhere stops all). A bound is
 * merged as the largest any member holds (`lower` 0: the pattern DPs, which only raise a
 * bound, every one of which holds), or the least (`lower` 1: the programs, which lower the
 * figure of a configuration they disagree with). Flags are merged as the largest, so
 * every member ends with the same. */
static hp_err merge_figures(search *s, int lower, hp_diag *d)
{
  const hp_team *t = s->team;
  double *v = s->scratch, st = s->out->stopped;
  double all_used = isnan(s->out->all_used_time) ? INFINITY : s->out->all_used_time;
  int n = s->n, bad = 0;
  for (int i = 0; i < n; i++) {
    v[i] = s->b[i].done;
    v[n + i] = s->b[i].exact;
    v[2 * n + i] = s->disagree[i];
    v[3 * n + i] = s->b[i].done ? s->b[i].bound : lower ? INFINITY : -INFINITY;
    v[4 * n + i] = (double)s->b[i].work;
    v[5 * n + i] = s->b[i].merged;
    v[6 * n + i] = s->b[i].enumerated;
    v[7 * n + i] = s->b[i].partial;
    v[8 * n + i] = s->b[i].sides;
  }
  bad |= t->reduce(t->ctx, v, 3L * n, HP_TEAM_MAX);
  bad |= t->reduce(t->ctx, v + 5L * n, 4L * n, HP_TEAM_MAX);
  bad |= t->reduce(t->ctx, v + 3L * n, n, lower ? HP_TEAM_MIN : HP_TEAM_MAX);
  bad |= t->reduce(t->ctx, v + 4L * n, n, HP_TEAM_MAX);   /* one member did each */
  bad |= t->reduce(t->ctx, &st, 1, HP_TEAM_MAX);
  bad |= t->reduce(t->ctx, &all_used, 1, HP_TEAM_MIN);   /* the best any member met */
  if (bad) return hp_fail(d, HP_INTERNAL, "team: merging the bounds failed");
  s->out->all_used_time = isfinite(all_used) ? all_used : NAN;
  for (int i = 0; i < n; i++) {
    s->b[i].done = v[i] > 0;
    s->b[i].exact = v[n + i] > 0;
    s->disagree[i] = v[2 * n + i] > 0;
    if (s->b[i].done) s->b[i].bound = v[3 * n + i];
    s->b[i].work = (long)v[4 * n + i];
    s->b[i].merged = v[5 * n + i] > 0;
    s->b[i].enumerated = v[6 * n + i] > 0;
    s->b[i].partial = v[7 * n + i] > 0;
    s->b[i].sides = (int)v[8 * n + i];
  }
  s->out->stopped = (hp_stop)st;
  return HP_OK;
}

static hp_err merge_all(search *s, int lower, hp_diag *d)
{
  hp_err err = merge_figures(s, lower, d);
  hp_err e2 = merge_plans(s, d);
  return err ? err : e2;
}

/* Whether every member says yes (a decision that must be the same on all). */
static int all_agree(const search *s, int yes)
{
  double v = yes ? 1 : 0;
  if (s->team->reduce(s->team->ctx, &v, 1, HP_TEAM_MIN)) return 0;
  return v > 0;
}

/* The end of a phase: if any member failed, all stop (this one with a message of its own). */
static hp_err team_check(const search *s, hp_err err, hp_diag *d)
{
  if (!all_agree(s, err == HP_OK) && !err)
    err = hp_fail(d, HP_INTERNAL, "team: another process of the search failed");
  return err;
}

/* --- The phases. */

/* 1. Incumbents. The certificate gives them a quarter of the time (the rest is for its
 * bounds); dp all of it. */
static hp_err incumbents(search *s, hp_diag *d)
{
  const hp_team *t = s->team;
  int items = hp__seed_items(s->prob, s->n);
  double until = s->cert ? s->t0 + s->budget / 4 : s->deadline;
  /* the certificate runs the configurations' items here (the promise order of phase 2 is
   * theirs) and the rest, the baselines, at the head of phase 2's first round, in the same
   * order: the same work in the same order for one process, while in a team a baseline
   * that takes seconds (Pipette's: 6 s on the 160-layer model at 768 GPUs) no longer holds
   * every other member at this phase's merge */
  if (s->cert) {
    s->rest = items - s->n;
    items = s->n;
  }
  hp_err err = HP_OK, e2;
  s->phase = s->cert ? "heuristics" : "fixed placements and baselines";
  s->total = s->cert ? s->n : items;
  for (int i = 0; i < s->n; i++) s->fixed[i] = INFINITY;
  for (int k = 0; k < items && !err; k++) {
    long item = t->claim(t->ctx, CTR_SEEDS);
    if (item >= items || (k > 0 && hp__should_stop(s->lim, until, s->out))) break;
    err = hp__seed_item(s->prob, s->cfg, s->n, s->lim, until, s->out, s->fixed, (int)item, d);
    publish(s);
    if (!s->cert) report(s, k + 1);    /* the certificate reports the phase once, at its end */
  }
  /* joined whatever happened above; each member holds only its own items' figures */
  e2 = merge_plans(s, d);
  if (t->reduce(t->ctx, s->fixed, s->n, HP_TEAM_MIN) && !err)
    err = hp_fail(d, HP_INTERNAL, "team: merging the fixed-placement figures failed");
  if (!err) err = e2;
  if ((err = team_check(s, err, d))) return err;
  if (s->cert) {
    s->out->stopped = HP_STOP_NONE;    /* the quarter's limit is not the search's */
    if (s->lim->stop && *s->lim->stop) s->out->stopped = HP_STOP_INTERRUPT;
    report(s, 0);
  }
  return HP_OK;
}

typedef struct order_key { double v; int i; } order_key;

static int by_value(const void *a, const void *b)
{
  const order_key *x = a, *y = b;
  if (x->v != y->v) return x->v < y->v ? -1 : 1;
  return x->i - y->i;
}

/* The configurations in order of their fixed-placement figure, the most promising first
 * (ties by index); NULL out of memory. */
static int *promise_order(const double *fixed, int n)
{
  order_key *k = hp__calloc((size_t)(n > 0 ? n : 1), sizeof *k);
  int *order = hp__calloc((size_t)(n > 0 ? n : 1), sizeof *order);
  if (!k || !order) { free(k); free(order); return NULL; }
  for (int i = 0; i < n; i++) k[i] = (order_key){ fixed[i], i };
  qsort(k, (size_t)n, sizeof *k, by_value);
  for (int i = 0; i < n; i++) order[i] = k[i].i;
  free(k);
  return order;
}

/* Whether phase 2's second round has work: a configuration its first round left without a
 * bound, or with a price search cut short, that the incumbent does not prune. */
static int resumes(const search *s)
{
  double inc = incumbent(s);
  for (int i = 0; i < s->n; i++)
    if (!s->b[i].done || (s->b[i].partial && !pruned_at(s, i, inc))) return 1;
  return 0;
}

static int by_bound(const void *a, const void *b)
{
  const open_cfg *x = a, *y = b;
  if (x->bound != y->bound) return x->bound < y->bound ? -1 : 1;
  return x->i - y->i;
}

/* After phase 2's first round, where the second has work or a gap remains: the placement
 * descent (placement_descent.c) of every configuration the incumbent does not prune, the
 * incumbent's own first (its plan is the descent's given start, and a better placement of
 * the best configuration is the likeliest better plan), then least bound first (those
 * without one first), in DESCENT_SHARE of the time left (DESCENT_LIMIT of the limit at
 * most), each half of what remains (the last all of it: a descent that ends early leaves
 * the rest to the next), until DESCENT_STALL in a row lowered nothing; in a team the first
 * is member 0's, the others those of members 1 to size - 1 in turn (below; no counter:
 * they run no collective). `early` (before the first round, three classes or more): the
 * EARLY_DESCENTS most promising by phase 1's figure instead, the incumbent's own first,
 * in EARLY_DESCENT_LIMIT of the limit. Plans merged at the end, whatever happened. */
static hp_err descending(search *s, int early, hp_diag *d)
{
  const hp_team *t = s->team;
  const char *was = s->phase;
  const hp_plan *inc = s->out->plan;
  double window = fmin(DESCENT_SHARE * (s->deadline - hp__now()),
                       (early ? EARLY_DESCENT_LIMIT : DESCENT_LIMIT) * s->budget), end;
  int n_open = 0;
  hp_err err = HP_OK, e2;
  for (int i = 0; i < s->n; i++) {
    const hp_config *c = &s->cfg[i];
    int own = inc && c->pp == inc->pp && c->tp == inc->tp && c->dp == inc->dp && c->mbs == inc->mbs;
    if (early ? isfinite(s->fixed[i]) : !pruned(s, i))
      s->open[n_open++] = (open_cfg){ own ? -INFINITY : early ? s->fixed[i] :
                                      s->b[i].done ? s->b[i].bound : -DBL_MAX, i };
  }
  qsort(s->open, (size_t)n_open, sizeof *s->open, by_bound);
  if (early && n_open > EARLY_DESCENTS) n_open = EARLY_DESCENTS;
  s->phase = "placement descent";
  s->total = n_open;
  /* Alone: every configuration in turn, in the window. A team does the single process's
   * work in less time, each configuration with the time one process would give it
   * (hp__team_turns): member 0 descends the first alone, the others the rest. (With the
   * whole window each and the configurations dealt in turn, the 160-layer 140B row at 768
   * GPUs, where the descents lower nothing, spent 30 s of a pair's 62.5 s to its
   * certificate in them, as one process does: 1.41x for the pair.) */
  int first, step;
  end = hp__now() + hp__team_turns(t->rank, t->size, n_open, window, &first, &step);
  for (int q = first, stall = 0; q < n_open && !err && stall < DESCENT_STALL; q += step) {
    int mine = (n_open - q + step - 1) / step;           /* this member's, this one on */
    double now = hp__now(), before = incumbent(s);
    double until = now + (end - now) / (mine > 1 ? 2 : 1);
    if (hp__stop_now(s->lim->stop, end)) break;
    err = hp__descend_config(s->prob, &s->cfg[s->open[q].i], s->out->plan, s->lim, until, s->out,
                             NULL, d);
    stall = s->out->plan && s->out->objective < before * (1 - HP_CERT_TOL) ? 0 : stall + 1;
    publish(s);
    report(s, q + 1);
  }
  e2 = merge_plans(s, d);              /* joined whatever happened above */
  if (!err) err = e2;
  s->phase = was;
  s->total = s->n;
  return team_check(s, err, d);
}

/* The quick bound alone (pattern_dp.c) of every configuration the first round of phase 2
 * left with no bound, most promising first, the q-th member q % size's, each an equal share
 * of the time left; then, in what is left, those it cut short again (their quick bounds
 * take from milliseconds to about a quarter of a second on the 4-kind 112-GPU row). Merged at the
 * end, whatever happened. The second round resumes them (they are partial). */
static hp_err quick_bounds(search *s, const hp_classes *cl, hp_diag *d)
{
  const hp_team *t = s->team;
  const char *was = s->phase;
  int n_open = 0;
  hp_err err = HP_OK, e2;
  for (int q = 0; q < s->n; q++)
    if (!s->b[s->order[q]].done) s->open[n_open++] = (open_cfg){ 0, s->order[q] };
  s->phase = "quick bounds";
  s->total = n_open;
  for (int sweep = 0; sweep < 2 && !err; sweep++) {
    int mine = 0;
    for (int q = t->rank; q < n_open; q += t->size) mine += !s->b[s->open[q].i].done;
    for (int q = t->rank; q < n_open && !err; q += t->size) {
      int i = s->open[q].i;
      if (s->b[i].done) continue;
      if (hp__should_stop(s->lim, s->deadline, s->out)) break;
      err = hp__pattern_config(s->prob, cl, &s->cfg[i], s->lim, incumbent(s), s->deadline,
                               (s->deadline - hp__now()) / mine--, 0, 1, NULL, s->out, &s->b[i], d);
      publish(s);
      report(s, q + 1);
    }
  }
  e2 = merge_all(s, 0, d);             /* joined whatever happened above */
  if (!err) err = e2;
  s->phase = was;
  s->total = s->n;
  return err;
}

/* The mean time of the quick bounds this member has run (0: none yet). */
static double quick_mean(const search *s)
{
  double sum = 0;
  int n = 0;
  for (int i = 0; i < s->n; i++)
    if (s->b[i].quick_s > 0) { sum += s->b[i].quick_s; n++; }
  return n ? sum / n : 0;
}

/* Some configuration has no bound yet. */
static int unbounded(const search *s)
{
  for (int i = 0; i < s->n; i++)
    if (!s->b[i].done) return 1;
  return 0;
}

/* The second round's work with three classes or more, into s->open: the configurations
 * without a bound, then those whose bound is below the incumbent `inc` and may rise (a
 * price search cut short, or merged frontiers or ranks), least bound first; their count.
 * Every member builds the same list (the figures are merged, the cutoff agreed). */
static int second_round(search *s, double inc)
{
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    const hp_cfg_bound *b = &s->b[i];
    if (!b->done) s->open[n++] = (open_cfg){ -DBL_MAX, i };
    else if ((b->partial || b->merged) && !b->enumerated && !pruned_at(s, i, inc))
      s->open[n++] = (open_cfg){ b->bound, i };
  }
  qsort(s->open, (size_t)n, sizeof *s->open, by_bound);
  return n;
}

/* 2. The pattern bound and plan of every configuration, most promising first, in two
 * rounds; the figures and plans are merged after each, whatever happened in it. With three
 * classes or more, the first round keeps a reserve for the quick bounds (quick_bounds) of
 * the configurations it does not reach. Between the rounds, where the first left work for
 * the second (the instance is too large for the shares: small ones never pay for it), the
 * placement descents (descending), so that the second round runs under a better cutoff.
 * With three classes or more, also descents before the first round (EARLY_DESCENTS), and
 * the second round takes its configurations least bound first (second_round: the least
 * bound is the certificate's), each twice an equal share of the time left (the least
 * bound's first run must end, and a run that does not leaves the bound where it was),
 * and runs those whose frontiers or ranks merged with frontiers TIGHT_GROWTH times
 * larger, which keeps more ranks apart (pattern_dp.c). On the five-kind 104-GPU row (GPT
 * 2.6B, 300 s) the first round leaves 6 configurations below the incumbent, each bounded
 * with V100 and L4 merged, and the round used to resume the first of them for all the
 * 125 s left (bound 1.9422 s, gap 12.41 %); with the five ranks apart the first run of
 * pp 13 tp 2 dp 4 mbs 1 takes 12 to 18 s and reads 2.046 (an equal share, about 20 s,
 * ended at 2.0165 s, 9.06 %, unloaded, and at 1.9422 with the machine's other core
 * busy; twice that share, 6.63 % in one run and 9.06 % in another, a second short). So the
 * first round, with three classes or more, stops a configuration's search after its first
 * run where the ranks merged (HP_PAT_MERGED_FIRST; the second round redoes it, prices and
 * all): on that row the first round then ends at 31 s, not 166, and two runs read 6.63 %,
 * that figure reached at 207 s. */
static hp_err pattern_bounds(search *s, hp_diag *d)
{
  const hp_team *t = s->team;
  hp_classes cl;
  hp_err err = HP_OK;
  memset(&cl, 0, sizeof cl);
  s->phase = s->cert ? "pattern bounds" : "pattern placements";
  s->total = s->n;
  if (!(s->order = promise_order(s->fixed, s->n))) err = hp_fail(d, HP_NOMEM, "out of memory");
  if (!err) err = hp_classes_build(s->prob, HP_PATTERN_SEARCH_CLASSES, &cl, d);
  if (all_agree(s, !err && cl.n >= 3 && !hp__should_stop(s->lim, s->deadline, s->out)))
    err = descending(s, 1, d);
  for (int round = 0; round < 2; round++) {
    hp_err e2;
    /* round 1 in a team: every member on one configuration at a time, its DP shared
     * (pattern_dp.c), so that no one configuration keeps one member busy while the others
     * wait (issue "Certificate v3", item 5: on the 160-layer model at 768 GPUs one took
     * 30 s alone there). Round 0 claims configurations, one member each. */
    const hp_team *shared = round == 1 && t->size > 1 ? t : NULL;
    /* round 0 of the certificate begins with phase 1's items after the configurations'
     * (the baselines: incumbents) */
    int head = round == 0 ? s->rest : 0;
    /* round 1 with three classes or more: second_round's list, in s->open */
    int by_bound1 = round == 1 && cl.n >= 3;
    int items = by_bound1 ? second_round(s, hp__team_min(shared, incumbent(s))) : s->n;
    for (int q0 = 0; q0 < head + items && !err; q0++) {
      int q = shared ? q0 : (int)t->claim(t->ctx, CTR_PATTERN + round), i, todo = 0;
      double share = INFINITY, inc;
      if (q >= head + items) break;
      if (q < head) {
        if (hp__should_stop(s->lim, s->deadline, s->out)) break;
        if (hp__now() < s->t0 + s->budget / 4)   /* phase 1's time, as there */
          err = hp__seed_item(s->prob, s->cfg, s->n, s->lim, s->t0 + s->budget / 4, s->out, NULL, s->n + q, d);
        publish(s);
        continue;
      }
      q -= head;
      i = by_bound1 ? s->open[q].i : s->order[q];
      inc = hp__team_min(shared, incumbent(s));   /* the members' cutoffs are one */
      /* round 1 also resumes a price search stopped early whose bound is below the best plan
       * (with three classes or more, also reruns merged ones: second_round) */
      if (by_bound1 ? s->b[i].done && pruned_at(s, i, inc) :
          s->b[i].done && !(round == 1 && s->b[i].partial && !pruned_at(s, i, inc))) continue;
      if (hp__team_any(shared, hp__should_stop(s->lim, s->deadline, s->out))) break;
      /* round 0: a few times the configuration's share of the time left. A team keeps the
       * single process's share, though it has more time in all: what round 0 cuts short,
       * round 1 finishes under a better cutoff, so a larger share would only do more work
       * under a worse one (measured: 20 % more) */
      if (by_bound1) todo = items - q;
      else
        for (int k = q; k < s->n; k++) todo += !s->b[s->order[k]].done || s->b[s->order[k]].partial;
      /* the reserve: what is left goes to the quick bounds of those not bounded */
      if (round == 0 && cl.n >= 3 && isfinite(s->deadline) &&
          s->deadline - hp__now() < fmin(QUICK_CAP * s->budget,
                                         QUICK_RESERVE * quick_mean(s) * todo / t->size))
        break;
      if (round == 0 && isfinite(s->deadline)) share = fmax(1.0, 4 * (s->deadline - hp__now()) / todo);
      if (by_bound1 && isfinite(s->deadline)) share = fmax(1.0, 2 * (s->deadline - hp__now()) / todo);
      err = hp__pattern_config(s->prob, &cl, &s->cfg[i], s->lim, inc, s->deadline, share,
                               by_bound1 && s->b[i].merged ? HP_PAT_FRONTIER * TIGHT_GROWTH : 0,
                               round == 0 && cl.n >= 3 ? HP_PAT_MERGED_FIRST : 0,
                               shared, s->out, &s->b[i], d);
      err = hp__team_agree_err(shared, err);
      publish(s);
      report(s, q + 1);
    }
    e2 = merge_all(s, 0, d);
    if (!err) err = e2;
    /* agreed: the quick bounds and the descents end in collectives (a member that failed
     * says no) */
    if (round == 0 && all_agree(s, !err && cl.n >= 3 && unbounded(s) &&
                                   !hp__should_stop(s->lim, s->deadline, s->out)))
      err = quick_bounds(s, &cl, d);
    /* the descents, where round 1 has work (for its cutoff) or a gap remains (for the
     * plan: a configuration bounded below the best plan may hold a better one, which the
     * descent's moves often find in a second where the annealing takes minutes) */
    if (round == 0 && all_agree(s, !err && (resumes(s) || gap_remains(s)) &&
                                   !hp__should_stop(s->lim, s->deadline, s->out)))
      err = descending(s, 0, d);
  }
  hp_classes_release(&cl);
  return team_check(s, err, d);
}

/* An annealing within `seconds` from `start` (the incumbent where NULL), from the job's
 * seed moved by `shift` (0: the job's own). */
static hp_err anneal(search *s, double seconds, unsigned long shift, const hp_plan *start,
                     long moves, hp_diag *d)
{
  const hp_solver *sa = hp_solver_find("sa");
  hp_limits l = *s->lim;
  hp_result r;
  hp_err err;
  if (!sa || seconds < MIP_MIN_SECONDS) return HP_OK;
  /* sa's moves keep to the job's modes, uniformity, slices and idle devices (solver_sa.c) */
  l.time_limit = seconds;
  l.seed = s->lim->seed + shift;
  l.top = 1;
  l.keep_rejected = 0;
  l.progress = NULL;
  l.max_work = moves;                  /* 0: sa's default */
  l.team = NULL;                       /* one annealing, one process's */
  hp_result_init(&r);
  err = sa->solve(s->prob, start ? start : s->out->plan, &l, &r, d);
  if (!err && r.plan) err = hp__score_offer(s->prob, s->lim, r.plan, s->out, d);
  if (!(s->out->all_used_time <= r.all_used_time)) s->out->all_used_time = r.all_used_time;
  hp_result_release(&r);
  return err;
}

/* 3. The annealing, if some configuration is still open: on member 0 alone (it is one
 * annealing, seeded, from the merged incumbent) while the others start on phase 4; its
 * plan reaches them through the team's best time at once and as a plan in phase 4's
 * merge, which also agrees on whether it failed. */
static hp_err annealing(search *s, hp_diag *d)
{
  hp_err err = HP_OK;
  if (!all_agree(s, !hp__should_stop(s->lim, s->deadline, s->out) && gap_remains(s)))
    return HP_OK;
  s->phase = "annealing";
  if (s->team->rank == 0) err = anneal(s, fmin(s->budget / 10, (s->deadline - hp__now()) / 4), 0, NULL, 0, d);
  if (err) return err;
  publish(s);
  report(s, s->n);
  return HP_OK;
}

/* 4. The pattern programs: the best configuration, then those left open, best bound
 * first. They check the bounds and offer plans, but bound nothing themselves: each gets a
 * share of what is left, not the whole. Entered with the annealing's failure, if any:
 * the merges are joined all the same. */
static hp_err pattern_mips(search *s, hp_err err, hp_diag *d)
{
  const hp_team *t = s->team;
  int n_open = 0;
  /* the programs of open configurations end by half the time left: the rest is for
   * closing, tightening and improving (on the three-kind 64-GPU row they took all of it,
   * 7 s each, and offered no plan) */
  double w, until = s->deadline - (s->deadline - hp__now()) / 2;
  hp_err e2;
  s->phase = "pattern MIPs";
  for (int i = 0; i < s->n; i++)
    if (s->b[i].done && isfinite(s->b[i].bound)) s->open[n_open++] = (open_cfg){ s->b[i].bound, i };
  qsort(s->open, (size_t)n_open, sizeof *s->open, by_bound);
  for (int q0 = 0; q0 < n_open && !err; q0++) {
    int q = (int)t->claim(t->ctx, CTR_MIPS);
    if (q >= n_open) break;
    int i = s->open[q].i, todo = 0;
    double left = s->deadline - hp__now(), inc = incumbent(s);
    if (q > 0 && pruned_at(s, i, inc)) continue;
    if (q > 0) left = until - hp__now();
    if (hp__should_stop(s->lim, s->deadline, s->out) || left < MIP_MIN_SECONDS) break;
    for (int k = q; k < n_open; k++) todo += k == q || !pruned_at(s, s->open[k].i, inc);
    todo = (todo + t->size - 1) / t->size;    /* the members share them */
    double share = fmin(q == 0 ? left / 2 : left / todo, fmax(10, s->budget / 10));
    /* the best configuration's program runs without a cutoff: its plan and figures are
     * wanted even when the bound already closes it */
    err = hp__pattern_mip(s->prob, &s->cfg[i], s->kind->backend, s->lim, fmax(MIP_MIN_SECONDS, share),
                          q > 0 ? incumbent(s) : INFINITY, s->deadline, s->out, &s->b[i],
                          &s->disagree[i], d);
    publish(s);
    report(s, q + 1);
  }
  /* joined whatever happened above, and in the annealing */
  e2 = merge_all(s, 1, d);
  w = (double)s->out->work;
  if (!err) err = e2;
  if (t->reduce(t->ctx, &w, 1, HP_TEAM_SUM) && !err)
    err = hp_fail(d, HP_INTERNAL, "team: merging the work counts failed");
  s->out->work = (long)w;
  return team_check(s, err, d);
}

/* 5. Closing: the configurations still open once the programs are done (no bound, a bound
 * below the incumbent, or a disagreement), least bound first, each enumerated plan by plan
 * (hp__enum_config) where its plans fit in the time left at the measured rate. A complete
 * enumeration is the configuration's exact optimum: its bound (above the DP's, which is a
 * relaxation) and its plan. An optimum below the DP's bound refutes that bound: the search
 * then claims no bound at all (certify), since every other configuration was pruned on a
 * DP bound of its own. Figures are merged at the end: a configuration one member settled
 * takes that member's figure on all. */
static hp_err closing(search *s, hp_diag *d)
{
  const hp_team *t = s->team;
  double *v = s->scratch, rate = CLOSE_RATE0;
  int n = s->n, n_open = 0, bad = 0;
  hp_err err = HP_OK;
  if (!all_agree(s, !hp__should_stop(s->lim, s->deadline, s->out) && gap_remains(s)))
    return HP_OK;
  s->phase = "closing by enumeration";
  for (int i = 0; i < n; i++) {
    v[i] = 0;                          /* settled here */
    v[n + i] = INFINITY;               /* its optimum */
    v[2 * n + i] = 0;                  /* refutes its DP bound */
    if (!s->b[i].done || s->disagree[i] || !pruned(s, i))
      s->open[n_open++] = (open_cfg){ s->b[i].done ? s->b[i].bound : -INFINITY, i };
  }
  qsort(s->open, (size_t)n_open, sizeof *s->open, by_bound);
  s->total = n_open;
  for (int q0 = 0; q0 < n_open && !err; q0++) {
    int q = (int)t->claim(t->ctx, CTR_CLOSE), i, complete = 0;
    double best, t1, plans, left;
    long w0 = s->out->work;
    if (q >= n_open) break;
    i = s->open[q].i;
    if (hp__should_stop(s->lim, s->deadline, s->out)) break;
    if (s->b[i].done && !s->disagree[i] && pruned_at(s, i, incumbent(s))) continue;
    plans = hp__enum_config_size(s->prob, &s->cfg[i]);
    left = s->deadline - hp__now();
    if (plans > rate * left * CLOSE_SHARE) continue;     /* too many plans for the time left */
    t1 = hp__now();
    err = hp__enum_config(s->prob, &s->cfg[i], s->lim, s->deadline, s->out, &best, &complete, d);
    if (s->out->work - w0 > 1000 && hp__now() - t1 > 0.01)
      rate = (double)(s->out->work - w0) / (hp__now() - t1);
    if (!err && complete) {
      v[i] = 1;
      v[n + i] = best;
      /* the exact optimum below the relaxation's bound: that bound was wrong */
      if (s->b[i].done && best < s->b[i].bound * (1 - HP_CERT_TOL)) v[2 * n + i] = 1;
    }
    publish(s);
    report(s, q + 1);
  }
  /* joined whatever happened above */
  bad |= t->reduce(t->ctx, v, n, HP_TEAM_MAX);
  bad |= t->reduce(t->ctx, v + n, n, HP_TEAM_MIN);
  bad |= t->reduce(t->ctx, v + 2L * n, n, HP_TEAM_MAX);
  if (bad && !err) err = hp_fail(d, HP_INTERNAL, "team: merging the closed configurations failed");
  if (!err) {
    hp_err e2 = merge_plans(s, d);
    if (e2) err = e2;
  }
  for (int i = 0; i < n && !err; i++) {
    if (!(v[i] > 0)) continue;
    if (v[2 * n + i] > 0) {
      s->refuted++;
      hp_warn(d, "the enumeration of pp %d tp %d dp %d mbs %d found a plan of %.9g s, below "
              "the pattern DP's bound %.9g s: the certificate claims no bound", s->cfg[i].pp,
              s->cfg[i].tp, s->cfg[i].dp, s->cfg[i].mbs, v[n + i], s->b[i].bound);
    }
    s->b[i].done = 1;
    s->b[i].bound = v[n + i];
    s->b[i].enumerated = 1;
    s->disagree[i] = 0;                /* settled by the evaluator itself */
  }
  s->total = n;
  return team_check(s, err, d);
}

/* 6. Tightening, while a gap remains and time is left, in passes: an annealing slice from
 * the incumbent (member 0), then the pattern DP of every configuration still open again
 * (least bound first, a share of the time left each) with frontiers TIGHT_GROWTH times
 * larger than the pass before (they merge less, so the bound can only rise: merging is
 * the DP's own relaxation) and the incumbent as cutoff. A configuration keeps the larger
 * of its two bounds (both hold). Merged at the end of each pass: a configuration takes the
 * largest bound any member holds, its flags merged alike on all. Configurations the
 * programs disagreed on, or enumerated, are left as they are, and so are those whose DP
 * neither merged points nor stopped its price search early: a rerun would give them the
 * same bound. */
static hp_err tightening(search *s, hp_diag *d)
{
  const hp_team *t = s->team;
  int n = s->n, frontier = HP_PAT_FRONTIER;
  hp_classes cl;
  hp_err err = HP_OK;
  memset(&cl, 0, sizeof cl);
  for (int pass = 1; pass <= TIGHT_PASSES && !err; pass++) {
    int n_open = 0;
    hp_err e2;
    if (!all_agree(s, !hp__should_stop(s->lim, s->deadline, s->out) && gap_remains(s)))
      break;
    s->phase = "tightening bounds";
    frontier *= TIGHT_GROWTH;
    if (t->rank == 0) err = anneal(s, fmin(s->budget / 20, (s->deadline - hp__now()) / 8), (unsigned long)pass, NULL, 0, d);
    publish(s);
    if (!err && !cl.cls) err = hp_classes_build(s->prob, HP_PATTERN_SEARCH_CLASSES, &cl, d);
    for (int i = 0; i < n; i++) {
      /* only a bound that merged frontiers or ranks, or stopped its price search, can rise
       * here */
      if (s->b[i].done && !s->b[i].enumerated && !s->disagree[i] && !pruned(s, i) &&
          (s->b[i].merged || s->b[i].partial))
        s->open[n_open++] = (open_cfg){ s->b[i].bound, i };
    }
    qsort(s->open, (size_t)n_open, sizeof *s->open, by_bound);
    s->total = n_open;
    for (int q0 = 0; q0 < n_open && !err; q0++) {
      int q = (int)t->claim(t->ctx, CTR_TIGHT + pass - 1), i;   /* a counter per pass */
      double left;
      if (q >= n_open) break;
      i = s->open[q].i;
      if (hp__should_stop(s->lim, s->deadline, s->out)) break;
      if (pruned_at(s, i, incumbent(s))) continue;
      left = s->deadline - hp__now();
      err = hp__pattern_config(s->prob, &cl, &s->cfg[i], s->lim, incumbent(s), s->deadline,
                               fmax(MIP_MIN_SECONDS, left / (double)(n_open - q)), frontier, 0,
                               NULL, s->out, &s->b[i], d);
      publish(s);
      report(s, q + 1);
    }
    /* joined whatever happened above: bounds as the largest held, flags alike on all */
    e2 = merge_all(s, 0, d);
    if (!err) err = e2;
    err = team_check(s, err, d);
  }
  hp_classes_release(&cl);
  s->total = n;
  return err;
}

/* The k-th configuration still open (least bound first, cycling), and its plan under the
 * fixed placements (phase 1's item: the exact layer DP, by `end`) into *r; r->plan NULL
 * where none fits or none is open. */
static hp_err open_start(search *s, int k, double end, hp_result *r, hp_diag *d)
{
  hp_limits l = *s->lim;
  int n_open = 0;
  hp_result_init(r);
  for (int i = 0; i < s->n; i++)
    if (s->b[i].done && !s->b[i].enumerated && !pruned(s, i))
      s->open[n_open++] = (open_cfg){ s->b[i].bound, i };
  if (n_open == 0) return HP_OK;
  qsort(s->open, (size_t)n_open, sizeof *s->open, by_bound);
  l.top = 1;
  l.keep_rejected = 0;
  l.progress = NULL;
  l.team = NULL;
  return hp__seed_item(s->prob, s->cfg, s->n, &l, end, r, NULL, s->open[k % n_open].i, d);
}

/* One annealing on member 0 (phase 7), to the time limit at most, seeded with `shift`: the
 * k-th of a round, from the incumbent where k is odd, else afresh from the fixed placement
 * of the (k/2)-th configuration still open (open_start). */
static hp_err anneal_slice(search *s, unsigned long k, unsigned long shift, hp_diag *d)
{
  hp_result start;
  hp_err err = HP_OK;
  hp_result_init(&start);
  if (k % 2 == 0) err = open_start(s, (int)(k / 2 - 1), s->deadline, &start, d);
  if (!err) err = anneal(s, s->deadline - hp__now(), shift, start.plan, ANNEAL_MOVES, d);
  hp_result_release(&start);
  return err;
}

/* 7. Improving, while a gap remains and time is left (issue "Certificate v3", item 2: keep
 * working instead of stopping): whole annealings, each from a seed of its own, until the
 * gap closes, `end`, or (with `stall_rule`) IMPROVE_STALL annealings in a row that
 * found nothing better. Run twice, before tightening (to a quarter of the time left, with
 * the stall rule, so that tightening keeps its time) and after it (to the limit, without:
 * on Pipette's measured 16 x 8 row at 300 s the stall ended the search at 89 s with a
 * 0.75 % gap, where annealings to the limit found a plan at 185 s that leaves 0.30 %),
 * the seeds going on (s->slices). (A caller's infinite time limit keeps the stall rule:
 * a gap the relaxation leaves would never close.) Every other one starts afresh, from
 * the fixed placement of a configuration still open (least bound first, in turn): from
 * one start the annealing keeps to one basin (on the three-kind 64-GPU row, from the
 * incumbent it held at 5.994 s, while from another start some seeds reached 5.912). On
 * member 0 alone, as phase 3, each annealing its full moves unless the time limit cuts
 * it: `end` only decides whether another starts (one it cut would end where the
 * machine's speed left it, and the result with it), so the team's result stays the
 * single process's wherever the run ends before its time limit. This phase closes the
 * gap from the incumbent's side. */
static hp_err improving(search *s, double end, int stall_rule, hp_diag *d)
{
  hp_err err = HP_OK;
  int stall = 0;
  while (!err && (!stall_rule || stall < IMPROVE_STALL)) {
    double before = s->out->plan ? s->out->objective : INFINITY;
    unsigned long slice = ++s->slices;
    hp_err e2;
    if (!all_agree(s, !hp__should_stop(s->lim, s->deadline, s->out) && gap_remains(s) &&
                      s->out->plan && end - hp__now() >= MIP_MIN_SECONDS))
      break;
    s->phase = "improving plans";
    if (s->team->rank == 0) err = anneal_slice(s, slice, TIGHT_PASSES + slice, d);
    publish(s);
    e2 = merge_plans(s, d);            /* joined whatever happened above */
    if (!err) err = e2;
    err = team_check(s, err, d);
    /* the same on every member after the merge */
    stall = s->out->plan && s->out->objective < before * (1 - HP_CERT_TOL) ? 0 : stall + 1;
    report(s, s->n);
  }
  return err;
}

/* The configurations a bound still waits for, named in the result's note. */
static void name_open(const search *s)
{
  hp_result *out = s->out;
  int len, left = 0, shown = 0;
  for (int i = 0; i < s->n; i++) left += !s->b[i].done;
  len = snprintf(out->space_note, sizeof out->space_note, "stopped before %d configuration%s "
                 "had a bound (no bound): ", left, left == 1 ? "" : "s");
  for (int i = 0; i < s->n && len < (int)sizeof out->space_note - 40; i++)
    if (!s->b[i].done) {
      len += snprintf(out->space_note + len, sizeof out->space_note - (size_t)len, "%spp %d tp %d dp %d mbs %d",
                      shown++ ? ", " : "", s->cfg[i].pp, s->cfg[i].tp, s->cfg[i].dp, s->cfg[i].mbs);
    }
  if (shown < left && len < (int)sizeof out->space_note - 12)
    snprintf(out->space_note + len, sizeof out->space_note - (size_t)len, ", and %d more", left - shown);
}

/* What the bounds of the configurations rest on, in the result's note (issue "Certificate
 * v3": say where the DP's frontier is merged or priced): enumerated (the configuration's
 * optimum), counted exactly, priced (the Lagrangian bound), merged frontiers. */
static void basis_note(const search *s)
{
  int en = 0, ex = 0, sd = 0, rk = 0, pr = 0, mg = 0, pa = 0;
  for (int i = 0; i < s->n; i++) {
    if (s->b[i].enumerated) { en++; continue; }
    if (s->b[i].exact) ex++; else if (s->b[i].sides == 2) rk++; else if (s->b[i].sides) sd++; else pr++;
    mg += s->b[i].merged;
    pa += s->b[i].partial;
  }
  char note[256] = {0};                /* counts of up to 5 digits fit space_note */
  snprintf(note, sizeof note, "bounds: %d enumerated, %d counted exactly, %d by rank and %d "
           "in two sides (priced), %d priced, %d merged, %d searches cut short", en, ex, rk, sd,
           pr, mg, pa);
  memcpy(s->out->space_note, note, sizeof s->out->space_note - 1);
  s->out->space_note[sizeof s->out->space_note - 1] = '\0';
}

/* The certificate's bound and status; over a part of the job's space, only a status
 * (feasible or no plan) and no bound. */
static void certify(search *s)
{
  hp_result *out = s->out;
  double bound = global_bound(s);
  int n_dis = 0;
  for (int i = 0; i < s->n; i++)     /* a program's plan refuted a DP bound it cannot replace */
    s->refuted += s->b[i].done && s->b[i].bound == -INFINITY && !s->b[i].enumerated;
  if (s->scope != HP_CERT_FULL || s->refuted) {
    out->bound = -INFINITY;
    out->status = out->plan ? HP_SOL_FEASIBLE : HP_SOL_NONE;
    if (s->refuted)
      snprintf(out->space_note, sizeof out->space_note, "a plan below the pattern DP's bound of "
               "%d configuration%s (enumerated, or decoded from a program): no bound is claimed",
               s->refuted, s->refuted == 1 ? "" : "s");
    return;
  }
  for (int i = 0; i < s->n; i++) n_dis += s->disagree[i];
  if (!isfinite(bound) && bound < 0) {             /* a configuration never bounded */
    out->space = HP_SPACE_INCOMPLETE;
    if (out->stopped == HP_STOP_NONE) out->stopped = HP_STOP_TIME;
    name_open(s);
  } else if (n_dis) {
    snprintf(out->space_note, sizeof out->space_note, "the pattern DP and the pattern MIP "
             "disagreed on (or the backend failed on) %d configuration%s: each keeps the lesser figure "
             "and stays open",
             n_dis, n_dis == 1 ? "" : "s");
  } else {
    basis_note(s);
  }
  out->bound = out->plan && bound > out->objective ? out->objective : bound;
  if (out->plan)
    out->status = out->bound >= out->objective * (1 - HP_CERT_TOL) ? HP_SOL_OPTIMAL : HP_SOL_FEASIBLE;
  else
    out->status = bound == INFINITY ? HP_SOL_INFEASIBLE : HP_SOL_NONE;
}

hp_cert_scope hp__cert_scope(const hp_problem *prob, char *note, size_t n_note)
{
  const hp_job *j = &prob->job;
  unsigned modes = hp_job_modes(j);
  if (n_note) note[0] = 0;
  if (!(modes >> HP_SHARD_DP & 1)) {
    snprintf(note, n_note, "the certificate searches modes dp and zdp with every other layer "
             "dp; the job does not allow dp: nothing searched beyond the heuristics, no bound");
    return HP_CERT_NONE;
  }
  /* every mode and slice count of the list: the pattern DP's options cover them
   * (pattern_shard.c), and slices only shrink the gather buffer it leaves out; idle
   * devices: every configuration with pp * tp * dp <= D is bounded (hp__configs_cert),
   * its patterns counting the TP groups used against at most the supply */
  return HP_CERT_FULL;
}

hp_err hp__search(const hp_problem *prob, const hp_limits *lim, const hp_team *team,
                  const hp_search_kind *kind, hp_result *out, hp_diag *d)
{
  search s;
  hp_team_solo solo;
  hp_err err = HP_OK;

  memset(&s, 0, sizeof s);
  s.prob = prob;
  s.lim = lim;
  s.kind = kind;
  s.cert = kind->backend != NULL;
  s.out = out;
  s.team = hp__team_pick(team, &solo);
  s.t0 = hp__now();
  s.budget = lim->time_limit > 0 ? lim->time_limit : SEARCH_DEFAULT_SECONDS;
  s.deadline = s.t0 + s.budget;
  if (!s.cert) {
    out->space = HP_SPACE_RESTRICTED;
    snprintf(out->space_note, sizeof out->space_note, "placement: Megatron order, its stage "
             "mirror, the baselines', the pattern DP's and their descents'; sharding per stage");
  } else if ((s.scope = hp__cert_scope(prob, out->space_note, sizeof out->space_note)) != HP_CERT_FULL) {
    out->space = HP_SPACE_RESTRICTED;
  }
  s.n = hp__configs_cert(prob, &s.cfg);
  if (s.n < 0) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    s.n = 0;
  }
  s.fixed = hp__calloc((size_t)s.n + 1, sizeof *s.fixed);
  s.b = hp__calloc((size_t)s.n + 1, sizeof *s.b);
  s.disagree = hp__calloc((size_t)s.n + 1, sizeof *s.disagree);
  s.open = hp__calloc((size_t)s.n + 1, sizeof *s.open);
  s.scratch = hp__calloc(9 * (size_t)s.n + 1, sizeof *s.scratch);
  s.lens = hp__calloc((size_t)s.team->size + 1, sizeof *s.lens);
  if (!err && (!s.fixed || !s.b || !s.disagree || !s.open || !s.scratch || !s.lens))
    err = hp_fail(d, HP_NOMEM, "out of memory");
  /* a member that fails never leaves the others waiting in a collective: from here on,
   * every failure is agreed on at the end of its phase */
  if (!(err = team_check(&s, err, d)) && !(err = incumbents(&s, d)) && s.scope == HP_CERT_NONE) {
    certify(&s);                       /* no pattern search can give the job a plan */
  } else if (!err && !(err = pattern_bounds(&s, d)) && s.cert) {
    report(&s, s.n);                   /* every configuration bounded: the certificate */
    err = annealing(&s, d);
    /* improving before tightening too, in a quarter of the time left: on a row where
     * tightening can raise no bound it would take all the rest (three kinds, 64 GPUs);
     * a quarter leaves tightening most of it (the five-kind row read the same with half) */
    if (!(err = pattern_mips(&s, err, d)) && !(err = closing(&s, d)) &&
        !(err = improving(&s, hp__now() + (s.deadline - hp__now()) / 4, 1, d)) &&
        !(err = tightening(&s, d)) && !(err = improving(&s, s.deadline, !isfinite(s.deadline), d)))
      certify(&s);
  }
  if (!err) {
    if (!s.cert && !out->plan) out->status = HP_SOL_NONE;
    s.phase = "done";
    report(&s, s.n);
  }
  free(s.cfg);
  free(s.fixed);
  free(s.order);
  free(s.b);
  free(s.disagree);
  free(s.open);
  free(s.scratch);
  free(s.lens);
  return err;
}
