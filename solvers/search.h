/* search.h -- pieces the search solvers share (internal): the layer-to-stage dynamic
 * program for a fixed configuration and placement, the configurations of cost-model.md
 * section 5, and the search driver of dp, glpk and cbc with the items of its phases and
 * the team it runs in. */
#ifndef HP_SEARCH_H
#define HP_SEARCH_H

#include "../src/internal.h"

/* Monotonic wall clock, seconds. */
double hp__now(void);

/* Whether a search must stop now: past `deadline` (hp__now() seconds; INFINITY: none)
 * or asked to by lim->stop. Records why in out->stopped (the first reason wins). */
int hp__should_stop(const hp_limits *lim, double deadline, hp_result *out);

/* The same test from a stop flag (may be NULL) and a deadline alone. */
int hp__stop_now(const volatile sig_atomic_t *stop, double deadline);

/* The (pp, tp, dp) triples of the search space (cost-model.md section 5): pp*tp*dp = D,
 * tp divides every node's GPU count, pp <= n_layers. Writes up to `cap` triples into
 * `out` (3 ints each) and returns how many there are. */
int hp__degrees(const hp_problem *p, int *out, int cap);
/* The same over a part of the cluster: the nodes k with keep[k] (NULL: every node), whose
 * devices number D (the plan's pp * tp * dp when the others are idle). */
int hp__degrees_kept(const hp_problem *p, const unsigned char *keep, int D, int *out, int cap);

typedef struct hp_dp_opts {
  int allow_recompute;   /* a stage may recompute when it does not fit otherwise */
  /* The sharding modes the DP may use, a mask of 1 << hp_shard, within the job's list
   * (hp_job_modes); 0: the job's list. A mask with none of the job's modes gives the
   * job's modes (a plan must use them). */
  unsigned modes;
  int ignore_memory;     /* AMP as published: no memory model */
  /* Optional per-layer time override (seconds per micro-batch, before recompute), the
   * same for every device: AMP's averaged device speed. NULL: the evaluator's times. */
  const double *layer_time;
  /* Only splits whose DP objective is at most this are of interest (INFINITY: all);
   * the outer search passes its K-th best time so that hopeless configurations stop
   * early. */
  double cutoff;
  /* hp__now() time to give up (INFINITY: none): a DP stopped finds nothing (*found 0) */
  double deadline;
  /* may be NULL: once *stop is set the DP gives up as at its deadline */
  const volatile sig_atomic_t *stop;
  /* At most this many points per state (0: no limit, and the DP is exact): past it the
   * point with the largest objective bound is dropped, and the DP is a heuristic. Deep
   * pipelines of many layers need it: their frontiers grow past any budget. */
  int max_frontier;
} hp_dp_opts;

void hp__dp_opts_init(hp_dp_opts *o);

/* Chooses the stage boundaries of `plan` (its shape, mbs, gas, schedule and placement
 * set), and per stage the recompute flag (only where it does not fit without) and the
 * sharding: each allowed mode for the whole stage, or -- when the least-sharded allowed
 * mode does not fit -- the shortest suffix of the stage's layers in another allowed mode
 * that makes it fit (under uniform_sharding: one mode for the plan, each tried). It
 * minimises cost model 1.2's time under grad_sync end (cost-model.md 3):
 *   (gas-1) max_s c_s + sum_s (t_s + e_s) + max_s red_s + max_s U_s + max_s gat_s,
 * c_s = t_s + (e_{s-1} + e_s) / 2, with t_s, e_s the slowest replica's stage and hand-off
 * times; under overlap the same figure (an upper bound, a heuristic there). Exact over
 * that space; equal to the evaluator's T under `end` when the replicas of every stage are
 * alike. Slices (max_slices) are left at 1. Sets *found to 0 (plan untouched) when no
 * split fits in memory, or when stopped before any split was found. *objective gets the
 * DP's figure. `work` (may be NULL) accumulates the frontier points created. */
hp_err hp__dp_split(const hp_problem *prob, hp_plan *plan, const hp_dp_opts *o,
                    int *found, double *objective, long *work, hp_diag *d);

/* The configurations (pp, tp, dp, mbs) of the search space, in a fixed order. */
typedef struct hp_config { int pp, tp, dp, mbs; } hp_config;
/* Allocates *out (free with free()); returns the count, or -1 out of memory. */
int hp__configs(const hp_problem *prob, hp_config **out);
/* The configurations the certificate bounds: hp__configs's, and under idle_devices then
 * every one with pp * tp * dp < D that has a placement (configs.c), most devices first. */
int hp__configs_cert(const hp_problem *prob, hp_config **out);

/* Idle devices (job.idle_devices, cost-model.md 2, 5, 7.19): the configurations of the
 * devices left at each idle level `drop` = 1, 2, ...: the nodes ordered from the slowest
 * (their type's peak x efficiency, of equal types the later first; then the node's
 * order), level by level a longer prefix of them idle: within each type but the fastest
 * 1, 2, 4, ... of its nodes, then the whole type (configs.c says how many levels). Each
 * configuration has pp * tp * dp = the kept devices and tp dividing every kept node's GPU
 * count. The whole-cluster configurations are hp__configs'. */
typedef struct hp_idle_config { hp_config c; int drop; } hp_idle_config;
/* Allocates *out (free with free()); returns the count (0 without idle_devices), or -1
 * out of memory. */
int hp__configs_idle(const hp_problem *prob, hp_idle_config **out);
/* Marks keep[node] for the nodes kept at idle level `drop` (every node at 0); returns
 * their device count (-1 out of memory). */
int hp__idle_kept(const hp_problem *p, int drop, unsigned char *keep);


/* The frontier cap of the layer DP where it serves heuristics (seeds, decoding, sa): far
 * above what it holds on the bundled set-ups, it only binds on deep pipelines. */
#define HP_DP_HEURISTIC_FRONTIER 512

/* --- The sharding of the baselines (solver_common.c). */

/* The mode a baseline that models replication only writes on every layer: dp when the
 * job's sharding list has it, else the list's one mode when it has a single one (the
 * baseline runs as published and the evaluator charges that mode); -1 otherwise. */
int hp__replicated_mode(const hp_problem *p);
/* The modes of a mask, ", "-separated ("dp, zero1"), into buf (n bytes); returns buf. */
char *hp__modes_text(unsigned modes, char *buf, size_t n);
/* A baseline's space note: "<rule>; every layer <mode>, no slices, every device used". */
void hp__baseline_space(hp_result *out, const char *rule, int mode);
/* A result without a plan because the job's sharding list has nothing the baseline writes
 * (`writes`, e.g. "dp on every layer"): status no-plan, the reason in the space note. */
void hp__baseline_no_mode(const hp_problem *p, const char *who, const char *writes,
                          hp_result *out);

/* --- Helpers for the heuristics and baselines (search_util.c). */

/* splitmix64: small, seeded, reproducible on every platform. */
typedef struct hp_rng { unsigned long long s; } hp_rng;
void hp__rng_seed(hp_rng *r, unsigned long seed);
unsigned long long hp__rng_next(hp_rng *r);
/* Uniform in [0, n). */
int hp__rng_int(hp_rng *r, int n);
/* Uniform in [0, 1). */
double hp__rng_unit(hp_rng *r);

/* Next lexicographic permutation of a[0..n-1]; 0 after the last. */
int hp__next_perm(int *a, int n);
/* Next set of stage starts first[1..pp-1], strictly increasing in 1..L-1 (first[0] = 0
 * untouched); 0 after the last. Start from first[s] = s. */
int hp__next_cuts(int *first, int pp, int L);
/* Fisher-Yates shuffle. */
void hp__shuffle(int *a, int n, hp_rng *rng);
/* One of Pipette's placement moves on an order of n >= 2 TP groups, chosen uniformly:
 * swap two, migrate one (take it out, insert it elsewhere), reverse a segment. */
void hp__placement_move(int *order, int n, hp_rng *rng);

/* The TP groups of a degree tp: tp consecutive GPUs of one node, in device order;
 * writes D / tp first-device ids into `first` and returns their count. */
int hp__tp_groups(const hp_problem *p, int tp, int *first);
/* The same on the nodes whose GPU count tp divides, the only groups a plan may use
 * (cost-model.md 5): `sa` and the placement descent. */
int hp__tp_groups_usable(const hp_problem *p, int tp, int *first);
/* The two fixed placements the DP searches: variant 0, Megatron order (TP ranks on
 * consecutive devices, then replicas, then stages); variant 1, its stage mirror (stage s
 * takes the devices variant 0 gives stage pp-1-s: the last nodes' devices first). */
void hp__place_fixed(hp_plan *pl, int variant);
/* A fresh plan of configuration c (gas set, stages empty) under fixed placement `variant`. */
hp_err hp__plan_fixed(const hp_problem *p, const hp_config *c, int variant, hp_plan **out,
                      hp_diag *d);
/* The same on the kept devices of an idle configuration: slot i of variant 0 takes the
 * i-th kept device in device order; variant 1 mirrors the stages. */
hp_err hp__plan_fixed_idle(const hp_problem *p, const hp_idle_config *c, int variant,
                           hp_plan **out, hp_diag *d);
/* Calls fn(ctx, i, variant, plan) for every configuration cfg[i] and both fixed placements
 * (one when pp = 1), with a fresh plan of each that fn may change but not keep. Stops at
 * fn's first error, or early when hp__should_stop(lim, deadline, out). */
typedef hp_err (*hp_fixed_fn)(void *ctx, int i, int variant, hp_plan *pl, hp_diag *d);
hp_err hp__each_fixed_placement(const hp_problem *p, const hp_config *cfg, int n,
                                const hp_limits *lim, double deadline, hp_result *out,
                                hp_fixed_fn fn, void *ctx, hp_diag *d);

/* Places TP groups on slots: slot (s, r) gets group order[s * dp + r]. */
void hp__place_groups(hp_plan *pl, const int *group_first, const int *order);

/* Contiguous split of w[0..L-1] into pp non-empty runs minimising the largest run sum
 * (exact, O(pp L^2)); writes pl->first. */
void hp__split_minmax(hp_plan *pl, const double *w);
/* The same on any array: w[0..L-1] (every w >= 0, 1 <= pp <= L) into pp runs, run k from
 * first[k] to first[k + 1] - 1 (first[0] = 0, first[pp] = L). */
void hp__minmax_runs(const double *w, int L, int pp, int *first);
/* The same least largest run by bisection on its value, a greedy check each step (O(L)
 * a step, at most 200 steps: to the last bit of a double); what hp__split_minmax uses when
 * its exact DP would be too large. Every w[l] >= 0, L >= pp. */
void hp__split_minmax_bisect(hp_plan *pl, const double *w);

/* SageMaker's partitioner (solver_dhondt.c): alpha, the memory weight, from the limits
 * (SageMaker's default 0.8 unless lim->memory_weight is in [0, 1]); each layer's cost
 * alpha memory + (1 - alpha) compute, normalised by the model's totals, into w[n_layers];
 * the pp stages cut along the module tree, first[0..pp] (HP_NOMEM if out of memory). */
double hp__dhondt_alpha(const hp_limits *lim);
void hp__dhondt_weights(const hp_model *m, double alpha, double *w);
hp_err hp__dhondt_stages(const hp_model *m, const double *w, int pp, int *first);

/* Evaluates a plan and offers it to the result (hp_result_offer). */
hp_err hp__score_offer(const hp_problem *p, const hp_limits *lim, const hp_plan *pl,
                       hp_result *out, hp_diag *d);

/* A plan of configuration c with gas set and the job's schedule; NULL on error. */
hp_err hp__plan_for(const hp_problem *p, const hp_config *c, hp_plan **out, hp_diag *d);

/* A uniformly random plan of configuration c: a random order of the TP groups over the
 * slots, random stage boundaries, a random recompute flag per stage and sharding mode
 * per layer (solver_random.c). */
hp_err hp__random_plan(const hp_problem *p, const hp_config *c, hp_rng *rng, hp_plan **out,
                       hp_diag *d);

/* --- The pattern DP (pattern_dp.c): a lower bound over every placement of one
 * configuration, and the pattern sequence that attains it. */
#include "hetplan/hp_pattern.h"

/* With three classes or more, the count of groups the pattern DP keeps in its state
 * (pattern_dp.c): by default the count per class where it is small, else the count of
 * ranks where it fits, else two sides; the others force one (for the tests and for
 * measuring: HP_PAT_COUNT_CLASS tries the count per class however many its states, with
 * all the time and work, before the count of ranks). */
enum { HP_PAT_COUNT_AUTO, HP_PAT_COUNT_RANKS, HP_PAT_COUNT_SIDES, HP_PAT_COUNT_CLASS };

enum { HP_PAT_QUICK = 1, HP_PAT_MERGED_FIRST = 2 };   /* hp_pat_opts.quick */
/* Points a pattern DP frontier keeps by default (hp_pat_opts.frontier 0); the search's
 * larger runs (second round, tightening) ask multiples of it. */
#define HP_PAT_FRONTIER 64   /* past it the nearest pair merges: a relaxation, never above the exact DP */

typedef struct hp_pat_opts {
  double cutoff;       /* only bounds below it matter (INFINITY: all); at or above it the
                        * bound reported is the cutoff itself */
  double deadline;     /* hp__now() time to give up (INFINITY: none) */
  const volatile sig_atomic_t *stop;   /* may be NULL */
  int exact;           /* 1: count groups exactly (two classes at most) whatever it costs;
                        * 0: prices only; -1: exact while affordable, else prices */
  int count;           /* three classes or more: which count of groups (HP_PAT_COUNT_*) */
  int frontier;        /* points a frontier keeps before it merges (0: HP_PAT_FRONTIER);
                        * more: a bound as high or higher, at more cost; the count of ranks
                        * then keeps as many times more states (fewer ranks merged) */
  int quick;           /* three classes or more: HP_PAT_QUICK the quick bound alone (marked
                        * partial); HP_PAT_MERGED_FIRST where the count of ranks merges
                        * ranks, its first run alone, no prices (marked partial: a run with
                        * larger frontiers, which keeps them apart, will redo it); 0 all */
  int no_couples;      /* 1: the DP leaves out the couples' digits (pattern_dp.c), so that
                        * tests can measure what they add; 0 (the default): where they apply */
  int no_slow;         /* 1: the count of ranks leaves out the slow replica (pattern_dp.c),
                        * so that tests can measure what it adds; 0 (the default): where it
                        * applies */
  const struct hp_team *team;   /* several members run this one DP together, each stage's
                        * targets split among them (pattern_dp.c): every member calls with
                        * the same problem and options, and all end with the same result,
                        * the single process's; NULL (or one member): alone */
} hp_pat_opts;

void hp__pat_opts_init(hp_pat_opts *o);

typedef struct hp_pat_result {
  int done;            /* ran to the end; else stopped, and `bound` holds nothing */
  double bound;        /* lower bound on every plan of the configuration; INFINITY: none
                        * fits; the cutoff when nothing is below it */
  int exact;           /* the bound counted groups exactly (else it is Lagrangian) */
  int sides;           /* Lagrangian over a count of the classes (3 or more): 1 two sides,
                        * 2 ranks */
  int partial;         /* the price search stopped early: `bound` holds, a better may exist */
  int merged;          /* some frontier merged points, or the count of ranks merged ranks
                        * (relaxations of the DP's own that larger frontiers, o.frontier,
                        * may undo) */
  int found;           /* a sequence below the cutoff is recorded: */
  int *first;          /* [pp + 1] stage starts */
  int *kind;           /* [pp] kinds (hp_patterns.kind) */
  unsigned char *rec;  /* [pp] recompute */
  double value, kept;  /* its DP value; the bound of the price it was found at */
  double fig[4];       /* its value's terms (pattern_dp.c): M, S (with the prices of its
                        * groups, if priced), Q and U; 0 from a pattern MIP's solution */
  long work;           /* points created */
  double quick_s;      /* seconds from the call to its quick bound (three classes or more;
                        * 0: none ran) */
  /* from a pattern MIP's solution instead (NULL from the DP): groups of each class per
   * stage, count[s * n_cls + c], and per-layer sharding */
  int *count;
  unsigned char *zdp;
} hp_pat_result;

hp_err hp__pattern_bound(const hp_problem *p, const hp_patterns *pt, const hp_pat_opts *o,
                         hp_pat_result *r, hp_diag *d);

/* The sharding options of one stage of the pattern DP (pattern_shard.c, where the
 * argument is): what the stage's mode assignments that fit in memory cost, as a few
 * options no worse than any of them. */
typedef struct hp_shard_stage {
  int dp;
  unsigned modes;        /* the job's list (hp_job_modes) */
  int overlap;           /* grad_sync overlap: the DP counts no sync */
  double bdp, latdp;     /* the kind's replica-group figures */
  double W, G;           /* the stage's parameter and gradient bytes per device */
  double upd, hbm;       /* its optimizer step's bytes (replicated), the kind's least
                          * hbm_gbs in bytes/s (0: no step counted) */
  double save[HP_N_SHARD];  /* memory the stage saves in mode m against dp (its states) */
  double mem0, cap;      /* its memory with every layer dp, and the kind's capacity */
} hp_shard_stage;
/* An option: time added to every micro-batch of the stage (Z, Zr), and lower bounds on its
 * red + gat (q) and on its optimizer step U (u). */
typedef struct hp_shard_opt { double dt, q, u; } hp_shard_opt;
/* Up to `max` options (max >= 1), as many as it writes; 0 when nothing fits. */
int hp__shard_options(const hp_shard_stage *st, hp_shard_opt *out, int max);
#define HP_SHARD_MAX_OPTS 40
void hp__pat_result_release(hp_pat_result *r);

/* A real plan from a pattern sequence (pattern_decode.c): TP groups of each class counted
 * to the kinds (repaired where a priced sequence uses more of a class than there is),
 * placed one node per single-node stage and whole nodes first elsewhere, then split by
 * the layer DP. `pl` has the configuration (hp__plan_for); *found = 0 if nothing fits. */
hp_err hp__pattern_plan(const hp_problem *p, const hp_patterns *pt, const hp_pat_result *r,
                        double deadline, const volatile sig_atomic_t *stop, hp_plan *pl,
                        int *found, hp_diag *d);

/* Where one configuration's pattern bound stands (pattern_pass.c). */
typedef struct hp_cfg_bound {
  int done;            /* bounded: `bound` holds */
  double bound;        /* lower bound over every plan of the configuration (the cutoff it
                        * ran with, when nothing was below it); INFINITY: nothing fits */
  int exact;           /* groups counted exactly, not priced */
  int merged;          /* the DP's frontiers merged points, or its ranks merged (a further
                        * relaxation, which tightening's larger frontiers may undo) */
  int enumerated;      /* `bound` is the configuration's optimum, by enumeration */
  int partial;         /* its DP stopped in the price search, or its split kinds' run was
                        * cut short (pattern_pass.c): the bound holds, may rise */
  int sides;           /* counted over two sides (1) or ranks (2) of the classes, priced
                        * within */
  long work;
  double quick_s;      /* the longest its quick bound took, its patterns built (0: none ran) */
} hp_cfg_bound;

/* One item of the driver's phase 2 (pattern_pass.c): configuration c's pattern DP with
 * `cutoff` (the incumbent; INFINITY: none), within min(deadline, the time its patterns are
 * built + share); records the bound in *b if the DP ran to its end (its work either way),
 * and decodes the sequence found below the cutoff, if any, into a plan offered to `out`.
 * A configuration not yet bounded (!b->done) runs over unsplit kinds first, the split ones
 * only if that bound is below the cutoff; a split run cut short marks b partial. `quick`
 * (three classes or more, hp_pat_opts.quick): HP_PAT_QUICK its quick bound alone, marked
 * partial, for a configuration that the time left cannot take further; HP_PAT_MERGED_FIRST
 * no price search after a first run whose ranks merged (the driver's first round, whose
 * second reruns those with the ranks apart); 0 the whole search. With a
 * team (else NULL), every member runs this item together, each DP shared (hp_pat_opts.team),
 * with the same cutoff and b: all end with the same b, the single process's. */
hp_err hp__pattern_config(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                          const hp_limits *lim, double cutoff, double deadline, double share,
                          int frontier, int quick, const hp_team *team, hp_result *out,
                          hp_cfg_bound *b, hp_diag *d);

/* --- The placement descent (placement_descent.c): a local search over which TP group
 * serves which slot of configuration c, the layer DP splitting each: from the best
 * class-order placements and from `start` (may be NULL; used where it is of c; may be
 * out->plan: it is read before anything is offered), swaps of two groups while they lower
 * the evaluator's time, until none does, `deadline` or a stop. Every better plan is
 * offered to `out`; *evals (may be NULL) counts the layer DPs run. */
hp_err hp__descend_config(const hp_problem *p, const hp_config *c, const hp_plan *start,
                          const hp_limits *lim, double deadline, hp_result *out, long *evals,
                          hp_diag *d);

/* The items of the driver's phase 1 (seed.c): hp__seed_items(p, n) of them,
 * configurations 0..n-1, then the baselines (hethub, dhondt, megatron, megatron-params,
 * pipette, amp, osdp), then, under idle_devices, the idle configurations
 * (hp__configs_idle). Item i < n is the layer DP of configuration i under both fixed
 * placements, its best figure written to fixed_obj[i] (INFINITY if none fits); an idle
 * configuration's item is the same on its kept devices, with no figure written; a
 * baseline's item runs it within the deadline and keeps its plan if it fits. Plans are
 * offered to `out`. */
int hp__seed_items(const hp_problem *p, int n);
hp_err hp__seed_item(const hp_problem *p, const hp_config *cfg, int n, const hp_limits *lim,
                     double deadline, hp_result *out, double *fixed_obj, int item, hp_diag *d);

/* --- The pattern programs of the certificate (mip_search.c). */
#include "hetplan/hp_mip.h"

typedef struct hp_mip_solution {
  hp_sol_status status;
  double obj, bound;      /* bound: the backend's best bound, -INFINITY if none */
  double *x;              /* [n_cols] malloc'd, NULL without a solution */
} hp_mip_solution;

/* Solves m within `seconds` (<= 0: no limit) from an optional start (integer columns
 * set; the backend completes and checks it). `cutoff` (INFINITY: none): only points
 * below it matter; the backend may stop once its bound reaches it, and then reports
 * that bound (>= cutoff) with status HP_SOL_NONE, or HP_SOL_FEASIBLE if it had a point. */
typedef hp_err (*hp_mip_backend)(const hp_mip *m, const double *start, const hp_limits *lim,
                                 double seconds, double cutoff, hp_mip_solution *out,
                                 hp_diag *d);

#ifdef HP_HAVE_GLPK
hp_err hp__glpk_solve_mip(const hp_mip *m, const double *start, const hp_limits *lim,
                          double seconds, double cutoff, hp_mip_solution *out, hp_diag *d);
#endif
#ifdef HP_HAVE_CBC
hp_err hp__cbc_solve_mip(const hp_mip *m, const double *start, const hp_limits *lim,
                         double seconds, double cutoff, hp_mip_solution *out, hp_diag *d);
#endif

/* Runs solve(m, ...) so that lim->stop ends it within milliseconds, in a child process
 * whose result comes back through a pipe (mip_child.c); `name` ("cbc") heads its errors.
 * Once lim->stop is set (before or during the solve) the solve is dropped and claims
 * nothing: status HP_SOL_NONE, x NULL, bound -INFINITY, HP_OK. Without a stop flag it
 * calls solve directly. What the child computes is what solve computes here. */
hp_err hp__mip_solve_stoppable(hp_mip_backend solve, const char *name, const hp_mip *m,
                               const double *start, const hp_limits *lim, double seconds,
                               double cutoff, hp_mip_solution *out, hp_diag *d);

/* hp_mip_decode_pattern_plan (hp_mip.h) whose layer DP also gives up once *stop is set
 * (stop may be NULL): the decoding of the certificate's pattern programs. */
hp_err hp__mip_decode_pattern_plan(const hp_problem *p, const hp_patterns *pt,
                                   const hp_mip_pmap *map, const double *x, double seconds,
                                   const volatile sig_atomic_t *stop, hp_plan *pl, int *found,
                                   hp_diag *d);

/* Relative tolerance of "optimal", of pruning and of "a plan below a bound": bounds and
 * times are sums of the same figures in different orders, equal to ~1e-15; the backends'
 * own tolerances are ~1e-6. */
#define HP_CERT_TOL 1e-9

/* One item of the driver's phase 4: configuration c's pattern program, solved by
 * `backend` within `seconds` with `cutoff` (seconds; INFINITY: none). Its solution
 * decodes into a plan offered to `out` (the layer DP's split within the deadline), and
 * its figures check the DP's bound b->bound: if the program's optimum is below it, a plan
 * evaluates below it, or the program has no point where the DP has one, *disagree is set
 * and b->bound becomes the lesser figure. Counts the call in out->work. */
hp_err hp__pattern_mip(const hp_problem *p, const hp_config *c, hp_mip_backend backend,
                       const hp_limits *lim, double seconds, double cutoff, double deadline,
                       hp_result *out, hp_cfg_bound *b, int *disagree, hp_diag *d);

/* One item of the driver's closing phase (solver_enum.c): every plan of configuration c
 * in the job's space (its sharding list, uniform sharding, slices; every device used),
 * scored by the evaluator, as `enum` does for the whole space. *best gets the least time
 * (INFINITY: none fits) and *complete 1 when it saw every plan; stopped by lim->stop or
 * `deadline` (recorded in out->stopped, as a stop of the search) it claims nothing. Its
 * best plan is offered to `out`; the plans it scored are added to out->work. */
hp_err hp__enum_config(const hp_problem *p, const hp_config *c, const hp_limits *lim,
                       double deadline, hp_result *out, double *best, int *complete,
                       hp_diag *d);
/* The plans hp__enum_config scores for c, counted as `enum` counts them before it starts
 * (node limits on TP groups not applied: at least the real count). */
double hp__enum_config_size(const hp_problem *p, const hp_config *c);

/* --- The team a search runs in (team_solo.c, hp_team.h). */

/* The team of one process: claims 0, 1, 2, ... per counter, the best time a running
 * minimum, merges that leave everything as it is. */
typedef struct hp_team_solo {
  hp_team team;
  long next[HP_TEAM_COUNTERS];
  double best;
} hp_team_solo;

/* Initialises s and returns its team. */
const hp_team *hp__team_solo(hp_team_solo *s);
/* `given` if it has several members, else the solo team s, initialised. */
const hp_team *hp__team_pick(const hp_team *given, hp_team_solo *solo);

/* Agreements (team_agree.c): collectives over team t, which every member calls at the
 * same point; with t NULL or of one member, the value itself. */
/* Any member's error is every member's: err if this member's, else HP_INTERNAL if another
 * member's (or the collective failed), else HP_OK. */
hp_err hp__team_agree_err(const hp_team *t, hp_err err);
/* Whether any member says yes. */
int hp__team_any(const hp_team *t, int yes);
/* The least v of the members. */
double hp__team_min(const hp_team *t, double v);
/* Member `rank` of `size` in a run of n items that one process takes in turn within
 * `window` seconds, giving the first half the window (all of it where it is the only
 * one) and each next one half of what is left: alone, every item, in the window; in a
 * team, member 0 the first item alone, for the share one process gives it, and members 1
 * to size - 1 the items 1, 2, ... in turn, in the other half of the window split among
 * them (the team spends the single process's time in all, each item its share). Sets the
 * member's items (*first, *first + *step, ... below n) and returns its window. */
double hp__team_turns(int rank, int size, int n, double window, int *first, int *step);

/* --- The search driver (search_driver.c): the one search of dp, glpk and cbc. */

typedef struct hp_search_kind {
  const char *name;          /* who reports progress: "DP", "GLPK", "CBC" */
  /* NULL: phases 1 and 2 alone, no bound claimed (dp); else the certificate (glpk, cbc),
   * which adds the annealing and the pattern programs, solved by this backend, and
   * claims the bound */
  hp_mip_backend backend;
} hp_search_kind;

/* Whether a plan's sharding modes follow the job's list and uniform_sharding (cost-model.md
 * 7.12; search_util.c): the heuristics that feed the searches (the layer DP's seeds, the
 * annealing) shard dp/zdp without asking the job; hp__score_offer and the seeds skip a
 * plan that does not. */
int hp__plan_follows_job(const hp_problem *p, const hp_plan *pl);

/* What the certificate searches (cost-model.md 5 restricted): sharding modes dp and zdp
 * per layer, one slice, every device used. It bounds the job's whole space, and may say
 * "full", "optimal" or "infeasible", only where that space lies inside it: the job's
 * sharding list within {dp, zdp} (uniform_sharding allowed: its plans are a part of the
 * mixed ones, and decoded plans are made uniform), max_slices 1 or no zdp, no idle
 * devices. Otherwise it still searches its part for plans, says "restricted" and why in
 * `note`, and claims no bound. A job without dp leaves it nothing to search (every
 * unsharded layer of its programs is dp). The one place this is decided. */
typedef enum {
  HP_CERT_FULL = 0,          /* its space is the job's: bound and status claimed */
  HP_CERT_PART,              /* a part of the job's space: plans, no bound */
  HP_CERT_NONE               /* no plan of the job's space is in it: no pattern search */
} hp_cert_scope;
hp_cert_scope hp__cert_scope(const hp_problem *prob, char *note, size_t n_note);

/* Runs the search of `kind` over every configuration within lim->time_limit (default
 * 60 s), sharing it with `team` if it has several members (else, and with NULL, a
 * single process: the solo team). Every member of a team ends with the same result. */
hp_err hp__search(const hp_problem *prob, const hp_limits *lim, const hp_team *team,
                  const hp_search_kind *kind, hp_result *out, hp_diag *d);
#endif
