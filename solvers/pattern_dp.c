/* pattern_dp.c -- the pattern DP: a lower bound on the iteration time of every plan of one
 * configuration, whatever its placement, and the plan its best pattern sequence decodes to.
 *
 * The layer DP of layer_dp.c, with each stage also choosing a kind (hp_pattern.h): on one
 * node of a class, spanning nodes of one class, or mixing classes. Stage figures are the
 * patterns' bounds. For the replica r* that holds the slowest slot of a stage s*,
 *   T >= T[r*] + max_s sync[s] >= gas t_max(s*) + sum_{s != s*} t_min(s) + sum_s e_min(s) + Q,
 * so with M = max_s (gas t_max(s) - t_min(s)), S = sum_s (t_min(s) + e_min(s)) and
 * Q = max_s sync(s), every plan has T >= M + S + Q, which is monotone in (M, S, Q): the
 * DP keeps a Pareto frontier of them per state, as the layer DP does (with the optimizer
 * step's maximum U a fourth figure, below).
 *
 * Cost model 1.2 (cost-model.md 3, 7.16): T[r] = (gas - 1) max_s c[s,r] + sum t + sum e
 * with the period c[s,r] = t[s,r] + (e[s-1,r] + e[s,r]) / 2. The DP knows a stage's
 * incoming hand-off when it adds the stage (the previous kind is in the state), not the
 * next stage's kind, so its M term takes c[s] >= t[s] + (e_min(s-1) + e_out(s)) / 2 with
 * e_out(s) the least hand-off after the stage's last layer to a stage of any kind: no
 * larger than the real one (exact where the best next kind is the one taken). Both
 * hand-offs of r* inside a node need its TP groups of stages s-1, s and s+1 on one node
 * (hp_patterns.chain); where that cannot be, a boundary r* crosses inside a node is
 * followed by one it crosses between nodes: the state holds that bit (nb = 2), each
 * boundary branches into inside and between nodes (hp_patterns_handoff_split), in the sum
 * S and in the period (inside: the outgoing hand-off at inter_out, the best link and least
 * latency between nodes over next kinds, as the pattern MIP takes it). Whose pattern the
 * path is: the kinds and splits are the plan's, the branches one replica's. Every replica
 * r has T >= T[r]; for a stage of one class (t_max = t_min) every replica holds its
 * slowest slot, so the period there may follow the path's branches (the path of the
 * replica whose hand-offs sum least, S); where a stage mixes classes, its slowest slot
 * is some replica's whose pattern may be another, so there the period takes only the
 * pair every replica pays (no intra-node pair where the kinds cannot chain: gpair), and
 * T >= T[r_s] >= that period + S still holds. (Taking the branch's pair at a mixed stage
 * too, as this DP did from 2026-11-26, makes the path's max over stages mix replicas: a
 * bound without a proof, though no brute-force instance was found above its optimum.)
 * The period of stage s is settled once the next stage's kind is known: a point also
 * holds P, its last stage's period less the outgoing hand-off (with the incoming hand-off
 * of r*'s branch at a stage of one class, the least any replica pays at one that mixes),
 * and the next stage lifts M to P + (gas - 1) e / 2 with e the hand-off the kinds now give:
 * r*'s branch at a stage of one class, the least any replica pays at one that mixes (P is
 * 0 where no next kind can lift it above M, so that such points compare on four figures;
 * where the next e is the worst replica's, P is lowered to hold, see pterm). At a stage
 * of one class every replica holds its slowest slot, so T >= T[r] for the worst replica
 * too, and S (r*'s, the least sum) still holds: its period may take the pair the worst
 * replica pays (hp_patterns.crowd, wbw):
 * where the classes of kinds a and b hold fewer triples of a replica's groups of three
 * consecutive stages (per_node / 3 per node) than dp, some replica crosses between nodes
 * at that stage (min(intra + inter out, inter + out)); where no replica's hand-off between
 * kinds a and b can stay inside a node, some node holds ceil(dp / its kind's nodes) of a
 * stage's groups, all crossing, and that replica's lanes share its interface (7.11), in the
 * stage after (its incoming pair) and the stage before (its outgoing, through P). A
 * middle stage of one class that spans nodes (a kind with bdp_chain, hp_pattern.h) runs
 * in two variants: some replica crosses at one of its hand-offs (that pair, as crowded),
 * or every replica keeps both inside a node, and then its replica groups see at most
 * bdp_chain (the sharding options at that figure); after a stage on one node only the
 * first can hold. The pattern MIP takes the same pairs and variants (mip_pattern.c), so
 * its optimum stays above this bound.
 * e_min (hp_patterns_handoff) divides a link between nodes by the lanes that must share
 * it (hp_pattern.h: tp, or more next to a stage on one node), and more lanes sharing a
 * node's interface are only slower. Recompute re-runs checkpointable layers only
 * (ck_l, 7.15): a prefix sum of their times per class. Q bounds max_s (red[s] + gat[s])
 * and U max_s U[s], U[s] the stage's optimizer step on the kind's least hbm_gbs: T >= ...
 * + max red + step + max gat >= ... + Q + U (red is 0 under `overlap`, where T >= max_r
 * T[r] + step + gat); the bound is M + S + Q + U, monotone in all four. Memory is
 * counted with the least act/work over device types (hp_patterns_least_act) against the
 * least capacity of the kind: never above a device's own (7.20).
 *
 * Sharding: every mode of the job's list, per layer, as a few options per stage that no
 * assignment of modes that fits beats (pattern_shard.c, where the argument is): each adds
 * its dt to the stage time and its q to Q. Slices only shrink the gather buffer, which
 * the memory here leaves out, so the bound holds whatever max_slices is. Recompute is a
 * per-stage choice.
 *
 * Resources: the TP groups of each class are counted. With one class nothing is counted;
 * with two, the state holds the stages of class 0 and the mixed stages (a feasible
 * count exists iff a dp + m <= N0 <= a dp + m (dp - 1) at the end): exact. With more,
 * where the groups are few, the state is the groups used of each class, each stage taking
 * one split of its dp groups over its kind's classes (the count per class): exact too.
 * Where they are many, the count of ranks: the classes ranked fastest first, the state
 * holds how many stages have each slowest class (those that mix classes apart, where the
 * states fit), and every threshold of ranks checks what the two sides check for one
 * (res_rank): necessary for every count per class, so a relaxation of it, with the prices
 * below on top; where its states are too many, adjacent ranks merge (rank_plan). On the
 * 4-kind 112-GPU bench row (pp 7, 20/20/8/8 groups) it bounds pp 7 tp 2 dp 8 mbs 1 at
 * 1.762 where the two sides and prices gave 1.498 (10 s): the 8 T4 groups, all used, must
 * lie in stages whose slowest class is T4 (one alone, or two that mix: a mixing stage holds
 * at most 7), which prices cannot say. With more, or
 * when the exact state is too large, a Lagrangian relaxation prices each class's groups
 * (for every price vector the priced optimum minus the price of all groups is a bound)
 * and the prices are searched: bisection for two classes, coordinate ascent beyond.
 * Couples (below, couple_next): with the count per class, dp 2 and every group used, a
 * class whose every node holds exactly two TP groups (tp 4 on 8-GPU nodes) also has its
 * stages that span it alone counted by whether they pair into couples (two consecutive
 * stages on the same two nodes, each replica's hand-off inside), which fill their nodes:
 * one such stage left alone cannot be, and two consecutive that are no couple pay a
 * crossing. On a three-kind 64-GPU cluster (3 x 8 A100, 3 x 8 V100, 2 x 8 T4, GPT 1.1B,
 * gbs 256) it proves pp 8 tp 4 dp 2 optimal, where the bound was 1.93 % below.
 * The slow replica (the count of ranks, no rank merged, every group used): a stage's top
 * class is its kind's slowest over the whole model (its rank), and f counts the groups of
 * the mixed stages that are not of their top class. Where f < dp, some replica holds a
 * group of the top class at every stage (at most f replicas hold any other), so T >=
 * T[r'] for that one replica r': every stage at its top class's time, r''s own hand-offs
 * at every stage (its path), T >= (gas - 1) max_s c[s, r'] + sum_s (t_top(s) + e(s)), the
 * figures of a run with t_max = t_min = t_top and no other replica's pair (slow 2). The
 * state's counts bound f from above (slow_slots): where that is below dp, the sequence
 * is the slow run's, else the usual run's (slow 1); the lesser of the two is a bound, and
 * so is the plain run's: priced takes the larger, and runs the two only where the plain
 * run's best sequence is one the slow run keeps. The slow run settles each period by the
 * next kind (P, below), r''s own outgoing hand-off. On the four-kind 112-GPU
 * bench row, pp 7 tp 2 dp 8 mbs 1: the three stages
 * mixing H100 and A100 hold 4 H100 groups of 24, so four replicas or more run A100 in all
 * three, and the bound rises from 1.762 to 1.804 (the path with H100 at every mixed stage
 * is no replica's). The pattern MIP takes the same rows (mip_pattern.c).
 * Idle devices (cost-model.md 2, 7.19): where the plan's pp dp groups are fewer than the
 * classes hold (`slack`: a configuration with pp tp dp < D), a plan uses at most each
 * class's groups, not all: the counted state checks the use against the supply alone,
 * and the prices of these inequalities are >= 0 (the search projects them).
 * States whose bound exceeds the cutoff are dropped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontier.h"
#include "search.h"

/* Transitions the exact state may try before it gives way to the Lagrangian bound (in
 * practice the deadline comes first); the most points any run keeps (64 bytes each). */
#define PAT_EXACT_WORK 2000000000L
#define PAT_MAX_POINTS 20000000L
#define PAT_EXACT_LISTS 4000000.0
/* With two classes, the exact count is one run (no sides, no prices to follow): affordable
 * up to more lists (16 bytes each, two stages' worth, allocated zeroed: only the pages of the
 * states reached are touched). Llama-2 140B on 768 GPUs, pp 96 tp 2 dp 4 (9.4 M lists):
 * 0.13 s exact against 16.2 s priced. */
#define PAT_EXACT_LISTS_TWO 16000000.0
/* The count of ranks (three classes or more) up to as many lists, touched only where its
 * states are reached: the 4-kind 112-GPU bench row, pp 7 with the mixed stages apart, 3432
 * states and 6.7 M lists. */
#define PAT_RANK_LISTS 16000000.0
/* ... and up to as many states, ranks merging until they fit (rank_plan): past them a run
 * costs more than the sides' runs (the 5-kind 104-GPU row, pp 13: 8568 states with five
 * ranks, one run not done in 20 s; with four, 2380 states, 12 s) */
#define PAT_RANK_STATES 4096.0
/* Price updates of the Lagrangian bound's subgradient ascent, at most. */
#define PAT_PRICE_ITERS 24
/* Splits of the kinds' groups over their classes, in all, that the count per class takes. */
#define PAT_MAX_SPLITS 512

/* A frontier point (frontier.h): its figures, then how it was reached. */
enum { FM, FS, FQ, FU, FP, FW, NFIG };   /* M, S, Q and U above; P: the last stage's
                                          * period less its outgoing hand-off (below); W:
                                          * the same for a replica of a couple's class
                                          * (below), 0 where none is tracked */
typedef struct ppoint {
  double fig[NFIG];    /* [FM], [FS], [FQ], [FU], [FP], [FW] */
  int prev;            /* pool index of the point this one extends, -1 at the start */
  short start;         /* first layer of the stage this point added */
  unsigned char kind, rec;
  unsigned char mix;   /* the stage mixes classes: its outgoing hand-off in [FP] is the least
                        * any replica pays, not the path's */
} ppoint;

typedef struct pdp {
  const hp_problem *p;
  const hp_patterns *pt;
  const hp_pat_opts *o;
  int L, pp, dp, C, K, R, exact;
  int nb;                /* 2 where some pair of kinds cannot chain (hp_patterns.chain): the
                          * state then holds a bit, replica r*'s hand-off into the stage was
                          * inside a node and the next cannot be; else 1 */
  int KS;                /* previous-kind slots of a state: (K + 1) nb */
  int slack;             /* fewer groups used (pp dp) than the classes hold: idle devices,
                          * the counts bound use from above only */
  long gas;
  const double *lambda;  /* [C] prices (Lagrangian), NULL in exact mode */
  double *pen;           /* [K] least priced cost of each kind's groups */
  double pen_min;
  double *pre;           /* [C][L+1] prefix sums of class times */
  double *rest;          /* [L+1] sum over l >= i of the fastest class time */
  double ratio[HP_PATTERN_MAX_CLASSES];   /* max_l fastest(l) / time of class c (<= 1) */
  /* The counted state (exact): the classes in two sides, side[c] 0 or 1 (with two classes,
   * one each: the count is exact; with more, a relaxation that prices within a side) */
  unsigned char side[HP_PATTERN_MAX_CLASSES];
  long ng[2];            /* TP groups of each side */
  double sratio[2];      /* the larger ratio of each side's classes */
  unsigned char *kside;  /* [K] the sides a kind holds: bit 0 side 0, bit 1 side 1 */
  /* The count per class (three classes or more, where it is small): the state is the TP
   * groups used of every class, res = sum_c u_c stride[c]; a stage of a kind takes one of
   * its splits, dp groups with at least one of every class present (all dp of a one-class
   * kind): the exact count, as the two sides are with two classes. */
  int percls;
  long stride[HP_PATTERN_MAX_CLASSES];
  /* Couples (the count per class, dp 2, no device idle): the classes whose every node holds
   * exactly two TP groups get a digit each, cpd[x] (else -1), and res = the count + cpbase
   * (pend + 3 (sum_d status_d 3^d)): see couple_next. */
  int ncp;
  int cpd[HP_PATTERN_MAX_CLASSES];
  long cpbase;
  int *split;            /* [K][nsp_max][C] the splits of each kind */
  int *nsp, nsp_max;     /* [K] how many each kind has */
  /* The count of ranks (three classes or more, where the count per class is too large): the
   * classes ranked fastest first; a stage's rank is the highest of its kind's classes (its
   * slowest). The state counts the stages of each rank, apart for those whose kind also
   * holds a faster class (mixed) where rmix: a vector v of D = C (or 2C - 1) counts, v[h]
   * the stages of rank h (alone), v[C + h - 1] the mixed ones of rank h >= 1, numbered
   * among all the vectors of sum <= pp (res = its combinatorial rank, rdec its counts).
   * Necessary for every count per class (res_rank), so a relaxation of it that holds
   * every threshold of ranks at once, where the sides hold one. */
  int ranked, rmix, rdim;
  int slowok;            /* the slow replica applies (header; set by counted_ranks) */
  int slow;              /* this run: 0 every sequence; 1 those where slow_slots >= dp; 2
                          * those where it is below dp, figured for the slow replica */
  int *ktop;             /* [K] each kind's top class (hp_patterns_top_class) */
  int nlev;              /* ranks: where the states of C ranks do not fit, adjacent ranks
                          * merge into one (those of the closest times first), nlev left:
                          * the same argument over the merged classes */
  unsigned char rank_of[HP_PATTERN_MAX_CLASSES];   /* class -> its rank (merged) */
  long rgroups[HP_PATTERN_MAX_CLASSES];   /* [rank] TP groups of that rank's classes */
  long rlow[HP_PATTERN_MAX_CLASSES];      /* [j] TP groups of ranks <= j */
  double rratio[HP_PATTERN_MAX_CLASSES];  /* [rank] the largest ratio of its classes */
  unsigned char *kco;    /* [K] the coordinate of v a stage of the kind adds to */
  unsigned char *rdec;   /* [R][rdim] the counts of each state */
  double *rcap;          /* [R] rank_cap of each state (NULL with slack: no figure) */
  long *rbin;            /* [(pp + rdim + 1)(rdim + 1)] binomials for the numbering */
  double *ckpre;         /* [C][L+1] prefix sums of class times of checkpointable layers */
  double *ppre, *gpre;   /* [L+1] prefix sums of gathered and gradient bytes */
  double *mpre[HP_N_SHARD];   /* [L+1] prefix sums of the states in each mode */
  unsigned modes;        /* the job's sharding list */
  double *upre;          /* [L+1] prefix sums of the optimizer step's bytes (replicated) */
  hp_fpool pool;         /* of ppoints, at most PAT_MAX_POINTS */
  hp_front *cur, *nxt;   /* [(L+1) * KS * R] frontiers of stage s and s+1 */
  size_t *tcur, *tnxt;   /* the frontiers of cur and nxt that hold points */
  size_t n_tcur, n_tnxt, cap_t;
  hp_front **own;        /* the frontiers (of either array) touched with no list yet: the
                          * ones release frees, not all (L+1) KS R of them, most of which
                          * a run never touches (reading them all faulted in every page
                          * of the arrays: 0.6 s past the deadline on the 4-kind row) */
  size_t n_own, cap_own;
  double cutoff;         /* compare priced values with it (cutoff + price of all groups) */
  long work, max_work;   /* max_work: transitions this run may try (0: any) */
  int merged;            /* some frontier merged points: the bound is below the exact DP's */
  hp_front_rule rule;    /* merge past o->frontier points (HP_PAT_FRONTIER by default) */
  int stopped, overflow;
  int defer;             /* the period waits for the next kind (P, above): in the runs that
                          * count exactly, once each, and the slow runs (priced); the price
                          * search's other runs, many, leave it (Pipette's row: 1.9 times
                          * the time, its bound the same) */
  const hp_team *team;   /* members sharing this DP (o->team of two or more), else NULL */
  long *tlen;            /* [team size] the bytes each member sends at a stage's end */
} pdp;

/* M + S + Q + U, the bound of a point: the sum of its figures, the frontiers' score when
 * they merge (frontier.h, a rule without a score). */
static double objective(const ppoint *x) { return x->fig[FM] + x->fig[FS] + x->fig[FQ] + x->fig[FU]; }

static const ppoint *at(const pdp *c, long i) { return hp__fpool_at(&c->pool, i); }

/* Inserts unless dominated; drops the points it dominates. A frontier at its cap takes
 * the new point merged into the existing point nearest it: their componentwise least
 * (M, S, Q, U), which every completion of either costs at least, so the bound holds (it
 * may only get lower); the merged point keeps the existing one's sequence, and the run
 * records that it merged. -1: overflow (recorded), -2: no memory. */
static int insert(pdp *c, hp_front *f, const ppoint *pt, double slack)
{
  int r = hp__front_insert(f, &c->pool, pt, &c->rule, slack);
  if (r == HP_FRONT_MERGED) c->merged = 1;
  if (r == -1) c->overflow = 1;
  return r < 0 ? r : 0;
}

/* --- Resources: state index and its change with a kind. */

static int res_rank(const pdp *c, int res, int kind, int s_after);

/* The counted state: (a, m) = stages of side 0 alone, stages holding both sides; b = s -
 * a - m. A stage of side 0 alone takes dp groups of side 0; one holding both, between 1
 * and dp - 1 of each: necessary for any count of the classes, and with one class a side,
 * sufficient. */
static int res_next(const pdp *c, int res, int kind, int s_after)
{
  int a, m, b, dp = c->dp, left = c->pp - s_after;
  long n0 = c->ng[0], n1 = c->ng[1];
  if (!c->exact || c->C == 1) return 0;
  if (c->ranked) return res_rank(c, res, kind, s_after);
  a = res / (c->pp + 1);
  m = res % (c->pp + 1);
  if (c->kside[kind] == 1u) a++;
  else if (c->kside[kind] == 3u) m++;
  b = s_after - a - m;
  /* used so far: class 0 in [a dp + m, a dp + m (dp - 1)], class 1 alike; with slack
   * (idle devices) a side need not be used up, so only the supply bounds the use */
  if ((long)a * dp + m > n0 || (long)b * dp + m > n1) return -1;
  if (c->slack) return a * (c->pp + 1) + m;
  if ((long)a * dp + (long)m * (dp - 1) + (long)left * dp < n0) return -1;
  if ((long)b * dp + (long)m * (dp - 1) + (long)left * dp < n1) return -1;
  return a * (c->pp + 1) + m;
}

/* The count per class: state res after a stage of `kind` takes its split sp; -1 where a
 * class would use more groups than it has. */
static int res_split(const pdp *c, int res, int kind, int sp)
{
  const int *n = &c->split[((size_t)kind * c->nsp_max + sp) * c->C];
  int nres = 0;
  for (int x = 0; x < c->C; x++) {
    int u = (int)(res / c->stride[x] % (c->pt->groups[x] + 1)) + n[x];
    if (u > c->pt->groups[x]) return -1;
    nres += u * (int)c->stride[x];
  }
  return nres;
}

static void memcpy_counts(unsigned char *to, const int *v, int D)
{
  for (int d = 0; d < D; d++) to[d] = (unsigned char)v[d];
}

/* The count of ranks: the number of counts v (sum <= pp) in the combinatorial number
 * system: c_i = v_0 + .. + v_i + i is increasing, below pp + D, and sum_i C(c_i, i + 1) is
 * a bijection onto [0, C(pp + D, D)). */
static int rank_code(const pdp *c, const int *v)
{
  long code = 0;
  int ci = -1, W = c->rdim + 1;
  for (int i = 0; i < c->rdim; i++) {
    ci += v[i] + 1;
    code += c->rbin[(size_t)ci * W + i + 1];
  }
  return (int)code;
}

/* The slow replica (header): with p_h the stages of rank h alone and x_h the mixed ones
 * (no rank merged, every group used), R_j = groups of rank j less dp p_j lie in mixed
 * stages; those not of their stage's top rank lie in mixed stages of a higher rank h, at
 * most dp - 1 in each, so f <= sum_h min((dp - 1) x_h, sum_{j<h} R_j). With `left` stages
 * still to come, each of which may mix, and R_j only falling as they come, x_h + left
 * bounds the final count of every later state. */
static long slow_slots(const pdp *c, const long *p, const long *x, int left)
{
  long f = 0, below = 0, dp = c->dp;
  for (int h = 0; h < c->nlev; h++) {
    long cap = (dp - 1) * (x[h] + left);
    if (h > 0) f += cap < below ? cap : below;
    below += c->rgroups[h] - dp * p[h];
  }
  return f;
}

/* The count of ranks: state res after a stage of `kind` (s_after stages then); -1 where no
 * count per class fits. With p_h the stages of rank h alone and x_h the mixed ones (rmix;
 * else n_h = p_h + x_h, the split unknown), for every threshold j (low: ranks <= j, high:
 * the rest):
 *   - a stage of rank <= j holds dp low groups; a mixed one of rank j + 1 holds one or
 *     more low and at most dp - 1 high; one alone of rank > j holds dp high; any other of
 *     rank > j between 1 and dp high;
 *   - a stage of rank h holds one of rank h or more (dp alone); groups of rank h lie in
 *     stages of rank h or in mixed ones of a higher rank, at most dp - 1 in a mixed one;
 * so the use of low, of high and of each rank has a least and (every group used, no
 * slack) a most, and the groups there are must lie between them, counting dp for each
 * stage left. */
static int res_rank(const pdp *c, int res, int kind, int s_after)
{
  int v[2 * HP_PATTERN_MAX_CLASSES], C = c->nlev, D = c->rdim, left = c->pp - s_after;
  long p[HP_PATTERN_MAX_CLASSES], x[HP_PATTERN_MAX_CLASSES], dp = c->dp, all = c->rlow[C - 1];
  int mixk = c->rmix;
  for (int d = 0; d < D; d++) v[d] = c->rdec[(size_t)res * D + d];
  v[c->kco[kind]]++;
  for (int h = 0; h < C; h++) {
    p[h] = v[h];
    x[h] = mixk && h > 0 ? v[C + h - 1] : 0;
  }
  /* untracked (rmix 0): x is 0 and p[h] counts every stage of rank h, each taken at what
   * any of them may hold: one group of rank h or more; above j, 1 to dp high and at most
   * dp - 1 low */
  for (int h = 0; h < C; h++) {
    long xs = 0;                        /* mixed stages of a higher rank */
    for (int g = h + 1; g < C; g++) xs += mixk ? x[g] : p[g];
    if (mixk ? p[h] * dp + x[h] > c->rgroups[h] : p[h] > c->rgroups[h]) return -1;
    if (!c->slack && c->rgroups[h] > dp * (p[h] + left) + (dp - 1) * (x[h] + xs)) return -1;
  }
  for (int j = 0; j < C - 1; j++) {
    long A = 0, hp = 0, hx = 0, xnext, gl = c->rlow[j], gh = all - gl;
    for (int h = 0; h <= j; h++) A += p[h] + x[h];
    for (int h = j + 1; h < C; h++) { hp += p[h]; hx += x[h]; }
    if (mixk) {
      xnext = x[j + 1];                 /* mixed of rank j + 1: some low, some high */
      if (A * dp + xnext > gl) return -1;
      if (dp * hp + hx > gh) return -1;
      if (!c->slack && gh > dp * (hp + hx - xnext + left) + (dp - 1) * xnext) return -1;
      if (!c->slack && gl > dp * (A + left) + (dp - 1) * hx) return -1;
    } else {
      if (A * dp > gl || hp > gh) return -1;
      if (!c->slack && gh > dp * (hp + left)) return -1;
      if (!c->slack && gl > dp * (A + left) + (dp - 1) * hp) return -1;
    }
  }
  if (c->slow) {
    /* the slow replica (header): the usual run keeps what may reach f >= dp, the slow run
     * what cannot (f >= the mixed stages, so none past dp - 1 of them) */
    long f = slow_slots(c, p, x, left), X = 0;
    for (int h = 1; h < C; h++) X += x[h];
    if (c->slow == 1 ? f < dp : X >= dp || (left == 0 && f >= dp)) return -1;
  }
  return rank_code(c, v);
}

/* The splits of every kind's dp groups over its classes (at least one of each present, all
 * dp for one class); 0 where there are more than `max` in all (the count is not tried). */
static int build_splits(pdp *c, int max)
{
  int total = 0, C = c->C, dp = c->dp;
  c->nsp_max = 0;
  for (int k = 0; k < c->K; k++) {
    int q = __builtin_popcount(c->pt->kind[k].mask);
    double ways = 1;                   /* C(dp - 1, q - 1) */
    for (int t = 1; t < q; t++) ways = ways * (dp - t) / t;
    if (ways > max || (total += (int)ways) > max) return 0;
    if ((int)ways > c->nsp_max) c->nsp_max = (int)ways;
  }
  free(c->split);
  free(c->nsp);
  c->split = hp__calloc((size_t)c->K * c->nsp_max * C + 1, sizeof *c->split);
  c->nsp = hp__calloc((size_t)c->K + 1, sizeof *c->nsp);
  if (!c->split || !c->nsp) return -1;
  for (int k = 0; k < c->K; k++) {
    unsigned m = c->pt->kind[k].mask;
    int cls[HP_PATTERN_MAX_CLASSES], q = 0, n[HP_PATTERN_MAX_CLASSES];
    for (int x = 0; x < C; x++)
      if (m >> x & 1) cls[q++] = x;
    /* every n[0..q-1] >= 1 with sum dp, in odometer order over the first q - 1 */
    for (int t = 0; t < q; t++) n[t] = 1;
    n[q - 1] = dp - (q - 1);
    for (;;) {
      int *w = &c->split[((size_t)k * c->nsp_max + c->nsp[k]) * C];
      if (n[q - 1] >= 1) {
        for (int t = 0; t < q; t++) w[cls[t]] = n[t];
        c->nsp[k]++;
      }
      int t = 0, sum = 0;
      for (; t < q - 1; t++) {          /* next: raise n[t], reset those below */
        n[t]++;
        sum = 0;
        for (int u = 0; u < q - 1; u++) sum += n[u];
        if (sum <= dp - 1) break;
        n[t] = 1;
      }
      if (t == q - 1) break;
      n[q - 1] = dp - sum;
    }
  }
  return 1;
}

/* With slack, a use of side 0 in [a dp + m, a dp + m (dp - 1)] that leaves side 1 within
 * its supply exists iff a dp + m <= N0 and b dp + m <= N1 (pp dp = (a + b + m) dp), which
 * res_next checked: nothing is left to check at the end. */
static int res_final_ok(const pdp *c, int res)
{
  int a, m;
  if (!c->exact || c->C == 1 || c->slack || c->ranked) return 1;   /* ranks: res_rank at left 0 */
  if (c->percls) {                     /* every group used */
    for (int x = 0; x < c->C; x++)
      if (res / c->stride[x] % (c->pt->groups[x] + 1) != c->pt->groups[x]) return 0;
    return 1;
  }
  a = res / (c->pp + 1);
  m = res % (c->pp + 1);
  return (long)a * c->dp + m <= c->ng[0] && c->ng[0] <= (long)a * c->dp + (long)m * (c->dp - 1);
}

/* --- Couples (the count per class, dp 2, every group used). Take a class x whose every
 * node holds exactly two TP groups. A stage's two groups lie on one node of x (a single
 * kind, the node full), on two nodes of x one each (a spanning kind of x alone), or one
 * in x and one in another class (a kind that mixes x). Two consecutive stages spanning x
 * alone are a *couple* where each replica's hand-off between them stays inside a node: the
 * two nodes then hold those two stages' groups and nothing else, so no stage is in two
 * couples, and r*'s branch between them is the one inside. Let E count the stages spanning
 * x alone in no couple and H the stages that mix x. The nodes of x that no single stage or
 * couple fills hold exactly the E stages' groups (two nodes each, one a node) and the H
 * groups, two a node: E = 1 with H = 0 cannot be (that stage's two nodes would hold one
 * group each; H is even, all groups being used). And between two consecutive stages
 * spanning x alone that are no couple, some replica crosses between nodes: the stage after
 * pays it with its own least outgoing hand-off, and the stage before pays it with its own
 * least incoming one, both of one class (every replica as slow). The state holds, past the
 * count (cpbase), pend (0: the last stage spans no such class alone, or is the second of a
 * couple; 1: it does, in no couple yet; 2: the same, entered across no couple) and a
 * status per class (0: E = H = 0; 1: E = 1, H = 0; 2: any other, each stays possible); a
 * point's W is its last stage's period less the outgoing hand-off for the replica that
 * crossed in where pend is 2, else with the least incoming one. The pattern MIP takes the
 * same rows (mip_pattern.c). */

/* The class of a couple (cpd >= 0) that a kind spans alone, or -1. */
static int couple_class(const pdp *c, int k)
{
  if (!c->ncp || k >= c->K || c->pt->kind[k].single || !hp_patterns_one_class(c->pt, k)) return -1;
  int x = __builtin_ctz(c->pt->kind[k].mask);
  return c->cpd[x] >= 0 ? x : -1;
}

/* The digits past the count after stage s, of kind k, follows the stage before in state
 * res; xk and xkp: the couple classes the two span alone (couple_class; xkp -1 at the first
 * stage); cp 1 where the two are a couple. -1 where the end cannot be. */
static long couple_next(const pdp *c, int res, int k, int xk, int xkp, int s, int cp)
{
  long ext = res / c->cpbase, t = ext / 3;
  int pend = (int)(ext % 3), st[HP_PATTERN_MAX_CLASSES], npend = 0;
  for (int d = 0; d < c->ncp; d++) { st[d] = (int)(t % 3); t /= 3; }
  if (pend && !cp) {                   /* the stage before ends in no couple: one more E */
    int d = c->cpd[xkp];
    st[d] = st[d] ? 2 : 1;
  }
  if (xk >= 0 && !cp) npend = xkp == xk ? 2 : 1;
  if (!hp_patterns_one_class(c->pt, k))
    for (int x = 0; x < c->C; x++)
      if ((c->pt->kind[k].mask >> x & 1) && c->cpd[x] >= 0) st[c->cpd[x]] = 2;   /* an H */
  if (s == c->pp - 1) {
    if (npend) { int d = c->cpd[xk]; st[d] = st[d] ? 2 : 1; }
    npend = 0;
    for (int d = 0; d < c->ncp; d++)
      if (st[d] == 1) return -1;
  }
  t = 0;
  for (int d = c->ncp - 1; d >= 0; d--) t = t * 3 + st[d];
  return npend + 3 * t;
}

/* The least priced cost of a kind's groups, and the counts that reach it (may be NULL). */
static double kind_penalty(const pdp *c, int kind, int *count)
{
  const hp_stage_kind *k = &c->pt->kind[kind];
  int n[HP_PATTERN_MAX_CLASSES] = {0}, left = c->dp;
  double v = 0;
  for (int x = 0; x < c->C; x++)
    if (k->mask >> x & 1) { n[x] = 1; left--; }
  while (left > 0) {                   /* the rest to the cheapest class with groups left */
    int best = -1;
    for (int x = 0; x < c->C; x++)
      if ((k->mask >> x & 1) && n[x] < c->pt->groups[x] &&
          (best < 0 || (c->lambda ? c->lambda[x] : 0) < (c->lambda ? c->lambda[best] : 0)))
        best = x;
    if (best < 0) return INFINITY;
    n[best]++;
    left--;
  }
  for (int x = 0; x < c->C; x++) {
    if (c->lambda) v += c->lambda[x] * n[x];
    if (count) count[x] = n[x];
  }
  return v;
}

/* --- One stage's option: layers i..j, a kind and the recompute flag. */

typedef struct popt { double t_max, t_min, q, u; int ok; } popt;

/* Adds layer l, replicated, to a stage's memory terms with its least act/work over device
 * types (hp_costs_mem_add's terms, each no larger than any device's). */
static void least_mem_add(const hp_costs *tab, int l, hp_mem_terms *m)
{
  const hp_layer_cost *f = &tab->layer[l];
  double act = hp_patterns_least_act(tab, l), work = hp_patterns_least_work(tab, l);
  m->states += hp_costs_layer_states(tab, l, HP_SHARD_DP);
  m->act_sum += act;
  if (f->ck) {
    m->any_ck = 1;
    m->act_keep += tab->mbs * f->input;
    if (act > m->act_max) m->act_max = act;
  } else {
    m->act_keep += act;
  }
  if (work > m->work) m->work = work;
}

/* The options of layers i..j on a stage of `kind` with recompute flag rec (memory mem0
 * with every layer dp): the stage's compute over its classes, plus each sharding option
 * (pattern_shard.c: every mode of the job's list, whatever layers take it), with Bdp at
 * most `bdp` (the kind's, or its chained figure). Returns how many it wrote (0: nothing
 * fits). */
static int stage_option(const pdp *c, int i, int j, int kind, int rec, double mem0, double bdp,
                        popt *o, int max)
{
  const hp_stage_kind *k = &c->pt->kind[kind];
  hp_shard_stage st;
  hp_shard_opt so[HP_SHARD_MAX_OPTS];
  double lo = INFINITY, hi = 0;
  int n;
  st.dp = c->dp;
  st.modes = c->modes;
  st.overlap = c->p->job.grad_sync == HP_SYNC_OVERLAP;   /* overlapped: T >= the pipeline */
  st.bdp = bdp;
  st.latdp = k->latdp;
  st.W = c->ppre[j + 1] - c->ppre[i];
  st.G = c->gpre[j + 1] - c->gpre[i];
  for (int m = 0; m < HP_N_SHARD; m++)
    st.save[m] = (c->mpre[HP_SHARD_DP][j + 1] - c->mpre[HP_SHARD_DP][i]) - (c->mpre[m][j + 1] - c->mpre[m][i]);
  st.upd = c->upre[j + 1] - c->upre[i];
  st.hbm = k->hbm;
  st.mem0 = mem0;
  st.cap = k->cap;
  if (!(n = hp__shard_options(&st, so, max < HP_SHARD_MAX_OPTS ? max : HP_SHARD_MAX_OPTS))) return 0;
  for (int x = 0; x < c->C; x++)
    if (k->mask >> x & 1) {
      const double *px = &c->pre[(size_t)x * (c->L + 1)], *cx = &c->ckpre[(size_t)x * (c->L + 1)];
      double v = hp_cost_recompute(px[j + 1] - px[i], cx[j + 1] - cx[i], rec);
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  if (c->slow == 2) {                  /* the slow replica's slot: its top class */
    int x = c->ktop[kind];
    const double *px = &c->pre[(size_t)x * (c->L + 1)], *cx = &c->ckpre[(size_t)x * (c->L + 1)];
    lo = hi = hp_cost_recompute(px[j + 1] - px[i], cx[j + 1] - cx[i], rec);
  }
  /* lo and hi include recompute of the checkpointable layers (7.15) */
  for (int q = 0; q < n; q++)
    o[q] = (popt){ hi + so[q].dt, lo + so[q].dt, so[q].q, so[q].u, 1 };
  return n;
}

/* A lower bound on any completion of a point at (stage s done, next layer i). */
static double completion_bound(const pdp *c, const ppoint *x, int s, int i, int res)
{
  double rest = c->rest[i], M = x->fig[FM], T = 0;
  int left = c->pp - s;
  if (left > 0) T = rest / left;        /* the largest remaining stage is at least the mean */
  if (left > 0 && c->percls) {
    /* counted per class: a stage holding a group of class c holds at most ratio[c] x T of
     * fastest time (below), so a stage at most T x the least ratio of its classes; the
     * remaining groups, at most those left of each class, fill the left stages dp at a time,
     * and the sum of their least ratios is largest with the groups sorted by ratio and cut
     * in runs of dp (an exchange argument): T >= rest / that sum */
    int ord[HP_PATTERN_MAX_CLASSES], C = c->C;
    long need = (long)left * c->dp, run = 0;
    double D = 0;
    for (int y = 0; y < C; y++) ord[y] = y;
    for (int z = 1; z < C; z++)
      for (int y = z; y > 0 && c->ratio[ord[y]] > c->ratio[ord[y - 1]]; y--) {
        int t = ord[y]; ord[y] = ord[y - 1]; ord[y - 1] = t;
      }
    for (int q = 0; q < C && need > 0; q++) {
      int cx = ord[q];
      long have = c->pt->groups[cx] - res / c->stride[cx] % (c->pt->groups[cx] + 1);
      if (have > need) have = need;
      need -= have;
      /* the stages that end in this class's groups: each at the ratio of its last group */
      run += have;
      while (run >= c->dp) { D += c->ratio[cx]; run -= c->dp; }
    }
    if (need > 0 || run > 0) D = 0;     /* cannot fill (the final check drops it): no figure */
    if (D > 0 && rest / D > T) T = rest / D;
  } else if (left > 0 && c->ranked && c->rcap) {
    if (c->rcap[res] > 0 && rest / c->rcap[res] > T) T = rest / c->rcap[res];   /* rank_cap */
  } else if (left > 0 && c->exact && c->C >= 2 && !c->ranked) {
    /* with groups counted: at most k0 of the remaining stages can be of side 0 alone, at
     * most k1 of side 1 alone; a stage holding a group of class c takes at least its
     * layers' class-c time, so holds at most ratio[c] x T of fastest time (ratio[c] =
     * max_l fastest_l / time_c(l)), a stage holding side 1 at most sratio[1] x T (the
     * larger of its classes'); hence, the k0 stages counted at the larger ratio,
     * T >= rest / (k0 max ratio + (left - k0) sratio[1]), and symmetrically */
    int a = res / (c->pp + 1), m = res % (c->pp + 1), b = s - a - m;
    long k0 = (c->ng[0] - ((long)a * c->dp + m)) / c->dp;
    long k1 = (c->ng[1] - ((long)b * c->dp + m)) / c->dp;
    if (k0 > left) k0 = left;
    if (k1 > left) k1 = left;
    if (k0 < 0) k0 = 0;
    if (k1 < 0) k1 = 0;
    double hi = fmax(c->sratio[0], c->sratio[1]);   /* the k stages alone: at most the larger */
    double d0 = k0 * hi + (left - k0) * c->sratio[1];
    double d1 = k1 * hi + (left - k1) * c->sratio[0];
    if (d0 > 0 && rest / d0 > T) T = rest / d0;
    if (d1 > 0 && rest / d1 > T) T = rest / d1;
  }
  if ((double)(c->gas - 1) * T > M) M = (double)(c->gas - 1) * T;
  return M + x->fig[FS] + rest + x->fig[FQ] + x->fig[FU] + (left > 0 ? left * c->pen_min : 0);
}

static size_t fidx(const pdp *c, int i, int slot, int res)
{
  return ((size_t)i * (size_t)c->KS + (size_t)slot) * (size_t)c->R + (size_t)res;
}

static int by_index(const void *a, const void *b)
{
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

/* Notes the frontier at index ix of the next stage as touched, if it is empty, and as
 * one for release to free, if it has no list yet: 0, or -2 out of memory. */
static int touch(pdp *c, size_t ix)
{
  if (!c->nxt[ix].ix) {                /* its list is about to be allocated */
    if (c->n_own == c->cap_own) {
      size_t ncap = c->cap_own ? 2 * c->cap_own : 1024;
      hp_front **a = realloc(c->own, ncap * sizeof *a);
      if (!a) return -2;
      c->own = a;
      c->cap_own = ncap;
    }
    c->own[c->n_own++] = &c->nxt[ix];
  }
  if (c->nxt[ix].n == 0) {
    if (c->n_tnxt == c->cap_t) {
      size_t ncap = c->cap_t ? 2 * c->cap_t : 1024;
      size_t *a = realloc(c->tcur, ncap * sizeof *a), *b2;
      if (!a) return -2;
      c->tcur = a;
      if (!(b2 = realloc(c->tnxt, ncap * sizeof *b2))) return -2;
      c->tnxt = b2;
      c->cap_t = ncap;
    }
    c->tnxt[c->n_tnxt++] = ix;
  }
  return 0;
}

/* Inserts into the frontier at index ix of the next stage, noting it as touched. */
static int insert_next(pdp *c, size_t ix, const ppoint *pt, double slack)
{
  if (touch(c, ix) < 0) return -2;
  return insert(c, &c->nxt[ix], pt, slack);
}

/* --- The end of a stage, and a DP shared by a team (hp_pat_opts.team).
 * At each stage's end the frontiers of the next are compacted: the pool is cut back to
 * where the stage began and the points the frontiers kept are appended again, in the order
 * of their frontiers, so that the points the stage made and dropped (dominated, merged)
 * take no room (PAT_MAX_POINTS counts the kept ones; a point's `prev` is an index below
 * the cut). In a team, each stage's targets are split among the members by the stage's
 * last layer and kind: the member that owns (j, k) makes every point of the frontiers of
 * next layer j + 1 and kind k, from every state of the stage, in the order a single
 * process would, so those frontiers hold the same points in the same order; at the
 * stage's end every member appends every member's frontiers, in rank order, so that the
 * pools are the same on all members. They agree on whether any was stopped, overflowed or
 * ran out of memory, whether any merged, and on the work done. The result is the single
 * process's, except where the deadline, a stop or the work cap cuts a run (each member
 * sees its own clock and counts the team's work only at a stage's end; they stop
 * together, at the end of a stage). */

static int owns(const pdp *c, int j, int k)
{
  return !c->team || (j + k) % c->team->size == c->team->rank;
}

typedef struct fhead { long long ix, n; } fhead;

/* The end of a stage, as above. `n0` is the pool's size and `work0` the (team's) work when
 * the stage began; `err` this member's error in the stage, if any. */
static hp_err end_stage(pdp *c, long n0, long work0, hp_err err)
{
  const hp_team *t = c->team;
  size_t bytes = 0, pos = 0;
  char *mine = NULL, *all = NULL;
  long one[1] = { 0 };
  double flag[4], work = (double)(c->work - work0);
  int nomem = err != HP_OK, members = t ? t->size : 1;
  for (size_t q = 0; q < c->n_tnxt; q++) bytes += sizeof(fhead) + (size_t)c->nxt[c->tnxt[q]].n * sizeof(ppoint);
  if (!nomem && !(mine = malloc(bytes + 1))) nomem = 1;
  if (nomem) bytes = 0;                /* sends nothing, still joins; all fail below */
  for (size_t q = 0; q < c->n_tnxt && !nomem; q++) {
    const hp_front *f = &c->nxt[c->tnxt[q]];
    fhead h = { (long long)c->tnxt[q], f->n };
    memcpy(mine + pos, &h, sizeof h);
    pos += sizeof h;
    for (int i = 0; i < f->n; i++, pos += sizeof(ppoint)) memcpy(mine + pos, at(c, f->ix[i]), sizeof(ppoint));
  }
  if (!t) {
    all = mine;
    one[0] = (long)bytes;
  } else {
    if (t->gather(t->ctx, mine, (long)bytes, (void **)&all, c->tlen)) nomem = 1;
    free(mine);
  }
  if (nomem && !t) {                   /* alone, no room to compact: the frontiers stay */
    free(all);
    return err;
  }
  for (size_t q = 0; q < c->n_tnxt; q++) c->nxt[c->tnxt[q]].n = 0;
  c->n_tnxt = 0;
  c->pool.n = n0;
  pos = 0;
  for (int r = 0; r < members && !nomem && !c->overflow && all; r++) {
    size_t end = pos + (size_t)(t ? c->tlen[r] : one[0]);
    while (pos < end && !nomem && !c->overflow) {
      fhead h;
      memcpy(&h, all + pos, sizeof h);
      pos += sizeof h;
      hp_front *f = &c->nxt[h.ix];
      if (touch(c, (size_t)h.ix) < 0) { nomem = 1; break; }
      for (long long i = 0; i < h.n; i++, pos += sizeof(ppoint)) {
        long id = hp__fpool_push(&c->pool, all + pos);
        if (id == -1) { c->overflow = 1; break; }
        if (id < 0 || (f->n == f->cap && hp__front_grow(f) < 0)) { nomem = 1; break; }
        f->ix[f->n++] = (int)id;
      }
    }
    pos = end;
  }
  free(all);
  if (!t) return nomem ? HP_NOMEM : HP_OK;
  flag[0] = c->stopped;
  flag[1] = c->overflow;
  flag[2] = nomem;
  flag[3] = c->merged;
  if (t->reduce(t->ctx, flag, 4, HP_TEAM_MAX) || t->reduce(t->ctx, &work, 1, HP_TEAM_SUM)) return HP_INTERNAL;
  c->stopped = flag[0] > 0;
  c->overflow = flag[1] > 0;
  c->merged = flag[3] > 0;
  c->work = work0 + (long)work;
  return flag[2] > 0 ? (err ? err : HP_NOMEM) : HP_OK;
}

/* One DP run; the best final point's pool index in *best (-1 if none below the cutoff).
 * Only the states reached are visited: each stage keeps the list of frontiers it
 * touched, sorted so that those of one first layer come together. */
static hp_err run(pdp *c, long *best)
{
  int L = c->L, pp = c->pp, K = c->K, R = c->R;
  double mem0[2];
  ppoint start = { { 0, 0, 0, 0, 0 }, -1, 0, 0, 0, 0 };
  hp_err err = HP_OK;
  *best = -1;
  c->pool.n = 0;
  c->stopped = c->overflow = 0;
  for (size_t q = 0; q < c->n_tcur; q++) c->cur[c->tcur[q]].n = 0;
  for (size_t q = 0; q < c->n_tnxt; q++) c->nxt[c->tnxt[q]].n = 0;
  c->n_tcur = c->n_tnxt = 0;
  if (insert_next(c, fidx(c, 0, K * c->nb, 0), &start, 0) < 0) return HP_NOMEM;
  for (int s = 0; s <= pp && !err && !c->stopped && !c->overflow; s++) {
    /* the states of stage s are those stage s - 1 touched; stage s - 1's own are done */
    for (size_t q = 0; q < c->n_tcur; q++) c->cur[c->tcur[q]].n = 0;
    hp_front *t = c->cur; c->cur = c->nxt; c->nxt = t;
    size_t *tt = c->tcur; c->tcur = c->tnxt; c->tnxt = tt;
    c->n_tcur = c->n_tnxt;
    c->n_tnxt = 0;
    qsort(c->tcur, c->n_tcur, sizeof *c->tcur, by_index);
    if (s == pp) break;
    long n0 = c->pool.n, work0 = c->work;   /* where the stage began (a team's exchange) */
    for (size_t g0 = 0, g1; g0 < c->n_tcur && !err && !c->overflow; g0 = g1) {
      int i = (int)(c->tcur[g0] / ((size_t)c->KS * R));
      for (g1 = g0; g1 < c->n_tcur && (int)(c->tcur[g1] / ((size_t)c->KS * R)) == i; g1++) {}
      if (i > L - (pp - s)) continue;
      if (hp__stop_now(c->o->stop, c->o->deadline)) { c->stopped = 1; break; }
      hp_mem_terms mt = {0};
      int jmax = s == pp - 1 ? L - 1 : L - (pp - s);
      for (int j = i; j <= jmax && !err && !c->overflow; j++) {
        least_mem_add(&c->pt->tab, j, &mt);
        if (s == pp - 1 && j < L - 1) continue;   /* the last stage takes the rest */
        double least = INFINITY;
        for (int x = 0; x < c->C; x++) {
          const double *px = &c->pre[(size_t)x * (L + 1)];
          if (c->pt->groups[x] > 0 && px[j + 1] - px[i] < least) least = px[j + 1] - px[i];
        }
        /* M >= (gas - 1) t_max >= (gas - 1) x the least compute: longer stages only grow */
        if ((double)(c->gas - 1) * least + pp * fmin(c->pen_min, 0) > (c->cutoff + 1e-12 * fabs(c->cutoff))) break;
        for (int rec = 0; rec < 2; rec++)
          mem0[rec] = hp_cost_mem_total(&mt, c->pt->tab.inflight[s], rec);
        for (int k = 0; k < K && !err && !c->overflow; k++)
          for (int rec = 0; rec < 2 && !err && !c->overflow && owns(c, j, k); rec++) {
            popt ov[HP_SHARD_MAX_OPTS], ovc[HP_SHARD_MAX_OPTS];
            int nov = stage_option(c, i, j, k, rec, mem0[rec], c->pt->kind[k].bdp, ov, HP_SHARD_MAX_OPTS);
            if (!nov) continue;
            /* a middle stage of one class that spans nodes: either some replica crosses
             * between nodes at one of its hand-offs (the period below takes that pair,
             * variant 0), or every replica keeps both inside a node and its replica groups
             * see at most bdp_chain (hp_pattern.h; its options at that figure, variant 1) */
            int chained = s > 0 && s < pp - 1 && c->pt->kind[k].bdp_chain > 0, novc = 0;
            if (chained) novc = stage_option(c, i, j, k, rec, mem0[rec], c->pt->kind[k].bdp_chain, ovc, HP_SHARD_MAX_OPTS);
            int rflag = rec;
            if (rec == 0 && mem0[0] <= c->pt->kind[k].cap) rec = 2;   /* recompute cannot help */
            double eout = INFINITY;     /* the least outgoing hand-off, over next kinds */
            double obw = 0, olat = INFINITY, eout_x = INFINITY;   /* and between nodes */
            double emax = 0;            /* the most the next stage can settle it at */
            double wgap = 0;            /* the most a next kind's worst replica's crossing
                                         * exceeds the path's (hw - hx, below) */
            for (int k2 = 0; k2 < K && s < pp - 1; k2++) {
              size_t kk = (size_t)k * K + k2;
              double h = hp_patterns_handoff(c->pt, k, k2, j), hi, hx, hw;
              if (h < eout) eout = h;
              hp_patterns_handoff_split(c->pt, k, k2, j, &hi, &hx);
              hw = hp_patterns_handoff_worst(c->pt, k, k2, j);
              if (isfinite(hi) && hi > emax) emax = hi;
              if (isfinite(hx) && hx > emax) emax = hx;
              if (isfinite(h) && hw > emax) emax = hw;
              /* (the slow run follows one replica: no other's pair) */
              if (isfinite(h) && hw > 0 && isfinite(hx) && hw - hx > wgap && c->slow != 2) wgap = hw - hx;
              if (c->pt->xbw[kk] > obw) obw = c->pt->xbw[kk];
              if (c->pt->xbw[kk] > 0 && c->pt->xlat[kk] < olat) olat = c->pt->xlat[kk];
            }
            if (obw > 0) eout_x = hp_cost_handoff(c->pt->tab.layer[j].out, c->pt->tab.mbs, c->pt->tab.tp, obw, olat);
            if (s == pp - 1 || !isfinite(eout)) eout = 0;
            for (int var = 0; var < (chained ? 2 : 1) && !err && !c->overflow; var++)
            for (int oi = 0; oi < (var ? novc : nov) && !err && !c->overflow; oi++) {
            const popt o = var ? ovc[oi] : ov[oi];
            double mterm0 = (double)c->gas * o.t_max - o.t_min + (double)(c->gas - 1) * eout / 2;
            for (size_t g = g0; g < g1 && !err && !c->overflow; g++) {
              size_t ix = c->tcur[g];
              int slot = (int)(ix / R % (size_t)c->KS), res = (int)(ix % (size_t)R);
              int kp = slot / c->nb, bit = slot % c->nb, nbr = 0;
              const hp_front *from = &c->cur[ix];
              /* the hand-off into the stage for replica r*, and the period: c[s] >= t[s] +
               * (e(s-1) + e(s)) / 2. Where no node can hold r*'s groups of stages s-1, s and
               * s+1 (chain), a stage entered inside a node leaves it between nodes, and the
               * stage after it is entered between nodes (the bit): two branches, inside (ei)
               * and between nodes (ex), each no larger than what r* pays */
              double be[2], bpair[2], gpair, emin = 0, ew = 0, wpair = -INFINITY;
              double eib = INFINITY, exb = INFINITY;   /* this boundary inside, between nodes */
              int bbit[2];
              if (s == 0) {
                be[0] = 0; bpair[0] = gpair = eout; bbit[0] = 0; nbr = 1;
              } else {
                double e, ei, ex;
                if (kp == K) continue;
                e = emin = hp_patterns_handoff(c->pt, kp, k, i - 1);
                if (!isfinite(e)) continue;
                hp_patterns_handoff_split(c->pt, kp, k, i - 1, &ei, &ex);
                eib = ei;
                exb = ex;
                int chain = s == pp - 1 || c->pt->chain[(size_t)kp * K + k];
                /* the pair of hand-offs every replica pays at least, whatever its own
                 * pattern: no intra-node pair where the kinds cannot chain */
                double alt = fmin(ei + eout_x, ex + eout);
                gpair = !chain && isfinite(alt) && alt > e + eout ? alt : e + eout;
                /* a stage of one class pays its worst replica's pair: where not all can
                 * chain, one crossing (crowd); the crossing on the most crowded node (ew,
                 * also the previous stage's, below) */
                ew = hp_patterns_handoff_worst(c->pt, kp, k, i - 1);
                /* chained with the stage before on one node: s would be on it too, so
                 * some replica crosses (variant 0 alone); crowded: the same */
                int cross = c->pt->crowd[(size_t)kp * K + k] || (chained && c->pt->kind[kp].single);
                if (var == 1 && cross) continue;
                if (hp_patterns_one_class(c->pt, k)) {
                  if (s < pp - 1 && (cross || (chained && var == 0)) && isfinite(alt)) wpair = alt;
                  if (ew + eout > wpair) wpair = ew + eout;
                }
                if (!hp_patterns_one_class(c->pt, kp) || c->slow == 2) ew = 0;
                if (c->slow == 2) wpair = -INFINITY;   /* r' alone: its own pairs */
                if (bit) {                       /* entered between nodes */
                  if (isfinite(ex)) { be[0] = ex; bpair[0] = ex + eout; bbit[0] = 0; nbr = 1; }
                } else if (chain) {
                  be[0] = e; bpair[0] = e + eout; bbit[0] = 0; nbr = 1;
                } else if (c->nb == 1) {         /* no intra-node hand-off where it cannot chain */
                  be[0] = e; bpair[0] = gpair; bbit[0] = 0; nbr = 1;
                } else {
                  if (isfinite(ei) && isfinite(ei + eout_x)) { be[nbr] = ei; bpair[nbr] = ei + eout_x; bbit[nbr++] = 1; }
                  if (isfinite(ex)) { be[nbr] = ex; bpair[nbr] = ex + eout; bbit[nbr++] = 0; }
                }
              }
              for (int br = 0; br < nbr && !err && !c->overflow; br++) {
              double e = be[br];
              /* the period of the replica that holds the stage's slowest slot: that
               * replica's own pattern where every replica holds one as slow (one class),
               * else only what every replica pays (gpair; see the header) */
              int mix = o.t_max > o.t_min;
              double mterm = mterm0 + (double)(c->gas - 1) * ((mix ? gpair : fmax(bpair[br], wpair)) - eout) / 2;
              /* the stage's period less its outgoing hand-off, which the next stage's kind
               * settles (the period above takes the least over next kinds). Where the stage
               * mixes classes, with the least incoming hand-off any replica pays (emin): the
               * next stage adds the least outgoing one. Where it is of one class, the next
               * stage adds r*'s outgoing hand-off (its branch e') or the worst replica's
               * (ew, where some node is crowded: then no replica stays inside, e' is the
               * crossing hx and ew >= hx), as the larger: so P may hold r*'s incoming e
               * where the stage settles at r*'s pair (e + e'), and must not exceed the
               * least incoming plus ew - e' where it settles at the worst replica's, which
               * may be another replica: P = max(P(e) - (gas - 1) max(ew - hx) / 2, P(emin))
               * over next kinds, below both (until 2026-11-27 P(emin) alone: r*'s crossing
               * into a stage and out of it were never charged together) */
              double pterm = 0, p0 = (double)c->gas * o.t_max - o.t_min, pmin = p0 + (double)(c->gas - 1) * emin / 2;
              if (s < pp - 1 && c->defer) pterm = mix ? pmin : fmax(p0 + (double)(c->gas - 1) * (e - wgap) / 2, pmin);
              /* couples (above): this stage and the one before span one such class alone
               * (rel); a couple where the stage before is in none yet (pend) and r* stays
               * inside; else some replica crosses between them (nc) */
              int xk = couple_class(c, k), xkp = s > 0 ? couple_class(c, kp) : -1;
              int rel = xk >= 0 && xkp == xk;
              int pend = c->ncp ? (int)(res / c->cpbase % 3) : 0;
              int ncpo = rel && pend && !(e > eib) ? 2 : 1;
              for (int sp = 0; sp < (c->percls ? c->nsp[k] : 1) && !err && !c->overflow; sp++) {
              int nres0 = c->percls ? res_split(c, res, k, sp) : res_next(c, res, k, s + 1);
              if (nres0 < 0) continue;
              if (s == pp - 1 && !res_final_ok(c, nres0)) continue;
              for (int cp = 0; cp < ncpo && !err && !c->overflow; cp++) {
              long ext = c->ncp ? couple_next(c, res, k, xk, xkp, s, cp) : 0;
              if (ext < 0) continue;
              int nc = rel && !cp, nres = (int)(nres0 + c->cpbase * ext);
              double mterm_c = mterm, wterm = 0;
              if (nc && !mix && isfinite(exb))  /* the crossing replica, with the least out */
                mterm_c = fmax(mterm, mterm0 + (double)(c->gas - 1) * exb / 2);
              if (xk >= 0 && s < pp - 1 && c->defer) wterm = nc && isfinite(exb) ? p0 + (double)(c->gas - 1) * exb / 2 : pmin;
              size_t to = fidx(c, j + 1, k * c->nb + bbit[br], nres);
              for (int q = 0; q < from->n; q++) {
                int pi = from->ix[q];
                const ppoint *x = at(c, pi);
                /* the previous stage's period, now that this stage's kind gives its outgoing
                 * hand-off: where it mixes classes the least any replica pays (emin), else
                 * the path's (r*'s, this branch) or the most crowded replica's (ew) */
                double mx = s == 0 || !c->defer ? x->fig[FM] : fmax(x->fig[FM], x->fig[FP] + (double)(c->gas - 1) * (x->mix ? emin : fmax(e, ew)) / 2);
                /* a couple's class: the stage before, for its replica that crossed in (pend
                 * 2: with the least outgoing hand-off) or for the one that crosses out here
                 * (nc, with its least incoming one in W) */
                if (c->ncp && s > 0 && c->defer)
                  mx = fmax(mx, x->fig[FW] + (double)(c->gas - 1) * (nc && pend != 2 ? exb : emin) / 2);
                ppoint np = { { mx > mterm_c ? mx : mterm_c,
                                x->fig[FS] + o.t_min + e + c->pen[k],
                                x->fig[FQ] > o.q ? x->fig[FQ] : o.q,
                                x->fig[FU] > o.u ? x->fig[FU] : o.u, pterm, wterm }, pi, (short)i, (unsigned char)k,
                              (unsigned char)rflag, (unsigned char)mix };
                /* a period no next kind can lift above M says nothing more: 0, so that the
                 * point compares on four figures (frontiers stay as small as before) */
                if (pterm + (double)(c->gas - 1) * emax / 2 <= np.fig[FM]) np.fig[FP] = 0;
                if (wterm + (double)(c->gas - 1) * emax / 2 <= np.fig[FM]) np.fig[FW] = 0;
                if (++c->work > c->max_work && c->max_work > 0) { c->overflow = 1; break; }
                if (completion_bound(c, &np, s + 1, j + 1, nres) > (c->cutoff + 1e-12 * fabs(c->cutoff))) continue;
                /* the frontier's points share (j, k): P counts only up to M + that */
                int r = insert_next(c, to, &np, (double)(c->gas - 1) * emax / 2);
                if (r == -2) { err = HP_NOMEM; break; }
                if (r == -1) break;
              }
              }
              }
              }
            }
            }
          }
      }
    }
    /* every member of a team, whatever happened; alone, a stage that ended */
    if (c->team || (!err && !c->stopped && !c->overflow)) err = end_stage(c, n0, work0, err);
  }
  if (!err && !c->stopped && !c->overflow)
    for (size_t q = 0; q < c->n_tcur; q++) {
      size_t ix = c->tcur[q];
      const hp_front *f = &c->cur[ix];
      if ((int)(ix / ((size_t)c->KS * R)) != L) continue;
      for (int r = 0; r < f->n; r++)
        if (*best < 0 || objective(at(c, f->ix[r])) < objective(at(c, *best)))
          *best = f->ix[r];
    }
  return err;
}

/* --- Set-up, the price search, and the result. */

static void release(pdp *c)
{
  for (size_t q = 0; q < c->n_own; q++) {   /* one may be listed twice: freed once */
    free(c->own[q]->ix);
    c->own[q]->ix = NULL;
  }
  free(c->own);
  c->own = NULL;
  c->n_own = c->cap_own = 0;
  free(c->cur);
  free(c->nxt);
  c->cur = c->nxt = NULL;
  free(c->tcur);
  free(c->tnxt);
  c->tcur = c->tnxt = NULL;
  c->n_tcur = c->n_tnxt = c->cap_t = 0;
  hp__fpool_release(&c->pool);
}

static hp_err setup_frontiers(pdp *c)
{
  size_t nf = (size_t)(c->L + 1) * (size_t)c->KS * (size_t)c->R;
  c->cur = hp__calloc(nf, sizeof *c->cur);
  c->nxt = hp__calloc(nf, sizeof *c->nxt);
  return hp__team_agree_err(c->team, c->cur && c->nxt ? HP_OK : HP_NOMEM);
}

/* Records the best sequence of a run into the result (its arrays of pp + 1 and pp). */
static void record(const pdp *c, long best, hp_pat_result *r)
{
  int s = c->pp - 1;
  r->found = 1;
  r->value = objective(at(c, best));
  for (int q = 0; q < 4; q++) r->fig[q] = at(c, best)->fig[q];   /* FM, FS, FQ, FU */
  for (long pi = best; pi >= 0 && s >= 0; s--) {
    const ppoint *x = at(c, pi);
    r->first[s] = x->start;
    r->kind[s] = x->kind;
    r->rec[s] = x->rec;
    pi = x->prev;
  }
  r->first[c->pp] = c->L;
}

/* One priced run: its bound (priced optimum less the price of every group; cutoff if
 * nothing is below it), *usage the best sequence's groups per class, *best its point (-1:
 * none). */
static hp_err priced_run(pdp *c, const double *lambda, double cutoff, double *bound, int *usage,
                         int *done, long *best)
{
  double price_all = 0;
  hp_err err;
  c->lambda = lambda;
  c->pen_min = INFINITY;
  for (int x = 0; x < c->C; x++) price_all += lambda[x] * c->pt->groups[x];
  for (int k = 0; k < c->K; k++) {
    c->pen[k] = kind_penalty(c, k, NULL);
    if (c->pen[k] < c->pen_min) c->pen_min = c->pen[k];
  }
  c->cutoff = cutoff + price_all;
  if ((err = run(c, best))) return err;
  *done = !c->stopped && !c->overflow;
  if (!*done) return HP_OK;
  /* nothing below the cutoff; or a best point of no finite time (nothing fits), whose
   * rounding allowance below would read inf - inf */
  if (*best < 0 || objective(at(c, *best)) == INFINITY) {
    *best = -1;
    *bound = isfinite(cutoff) ? cutoff : INFINITY;
    return HP_OK;
  }
  /* the priced optimum less the prices: two sums that can be large and near each other
   * when prices are (a merged frontier can mislead the price search far out); less what
   * their rounding may have added, so that the difference stays a bound */
  *bound = objective(at(c, *best)) - price_all -
           8e-16 * (c->pp + 4) * (fabs(objective(at(c, *best))) + fabs(price_all));
  for (int x = 0; x < c->C; x++) usage[x] = 0;
  for (long pi = *best; pi >= 0; pi = at(c, pi)->prev) {
    int cnt[HP_PATTERN_MAX_CLASSES];
    if (at(c, pi)->prev < 0) break;      /* the start point */
    kind_penalty(c, at(c, pi)->kind, cnt);
    for (int x = 0; x < c->C; x++) usage[x] += cnt[x];
  }
  return HP_OK;
}

/* A run's best sequence into *t, zeroed (its arrays allocated here, freed by the caller):
 * 0, or HP_NOMEM. */
static hp_err keep_seq(const pdp *c, long best, hp_pat_result *t)
{
  t->first = hp__calloc((size_t)c->pp + 1, sizeof *t->first);
  t->kind = hp__calloc((size_t)c->pp, sizeof *t->kind);
  t->rec = hp__calloc((size_t)c->pp, sizeof *t->rec);
  if (!t->first || !t->kind || !t->rec) return HP_NOMEM;
  record(c, best, t);
  return HP_OK;
}

/* A kept sequence (keep_seq) into the result, found at a price whose bound is b. */
static void put_seq(const pdp *c, const hp_pat_result *t, double b, hp_pat_result *r)
{
  r->found = 1;
  r->value = t->value;
  memcpy(r->fig, t->fig, sizeof r->fig);
  memcpy(r->first, t->first, ((size_t)c->pp + 1) * sizeof *r->first);
  memcpy(r->kind, t->kind, (size_t)c->pp * sizeof *r->kind);
  memcpy(r->rec, t->rec, (size_t)c->pp * sizeof *r->rec);
  r->kept = b;
}

/* The slow replica's bound on f of a run's best sequence (slow_slots at its end). */
static long seq_slots(const pdp *c, long best)
{
  long p[HP_PATTERN_MAX_CLASSES] = {0}, x[HP_PATTERN_MAX_CLASSES] = {0};
  for (long pi = best; pi >= 0 && at(c, pi)->prev >= 0; pi = at(c, pi)->prev) {
    int co = c->kco[at(c, pi)->kind];
    if (co < c->nlev) p[co]++;
    else x[co - c->nlev + 1]++;
  }
  return slow_slots(c, p, x, 0);
}

/* The bound at prices lambda, as priced_run's, and the sequence of the best price so far
 * recorded. With the slow replica (header): where the usual run's best sequence may have
 * a slow replica (its bound on f below dp), the slow run (those sequences, r''s figures)
 * and the usual run over the others (with the slow run's bound as its cutoff: only what is
 * below it matters) give another bound, the lesser of the two, and the bound is the
 * larger of it and the first run's (both hold). Elsewhere the first run's best sequence
 * is among the others, so the lesser of the two would be no larger: one run. */
static hp_err priced(pdp *c, const double *lambda, hp_pat_result *r, double cutoff,
                     double *bound, int *usage, int *done)
{
  hp_pat_result t0, t2;                /* the first run's and the slow run's sequences */
  int use2[HP_PATTERN_MAX_CLASSES] = {0}, use1[HP_PATTERN_MAX_CLASSES] = {0};
  double b2, b1;
  long best, best2;
  int slow;
  hp_err err;
  if ((err = priced_run(c, lambda, cutoff, bound, usage, done, &best)) || !*done) return err;
  slow = c->slowok && c->ranked && best >= 0 && seq_slots(c, best) < c->dp;
  if (!hp__team_any(c->team, slow)) {  /* (every member's run is the same: they agree) */
    if (best >= 0 && (!r->found || *bound > r->kept)) {
      record(c, best, r);
      r->kept = *bound;
    }
    return HP_OK;
  }
  memset(&t0, 0, sizeof t0);
  memset(&t2, 0, sizeof t2);
  err = hp__team_agree_err(c->team, keep_seq(c, best, &t0));
  if (!err) {
    /* the slow run settles each period once the next kind is known (P, above: r''s own
     * outgoing hand-off, as the exact runs do), whatever the price search's runs do */
    int defer = c->defer;
    c->slow = 2;
    c->defer = 1;
    err = priced_run(c, lambda, cutoff, &b2, use2, done, &best2);
    c->defer = defer;
    if (!err && *done && best2 >= 0) err = keep_seq(c, best2, &t2);
    err = hp__team_agree_err(c->team, err);
  }
  if (!err && *done) {
    c->slow = 1;
    err = priced_run(c, lambda, fmin(cutoff, b2), &b1, use1, done, &best);
  }
  c->slow = 0;
  if (!err && !*done) {                /* cut short: the first run's bound holds */
    *done = 1;
    if (c->overflow) c->slowok = 0;    /* too many points: no more slow runs */
    if (!r->found || *bound > r->kept) put_seq(c, &t0, *bound, r);
  } else if (!err) {
    /* the lesser of the two runs: the usual one's where it found something below */
    int usual = best >= 0 && b1 < b2;
    double m = usual ? b1 : b2;
    if (m > *bound) {
      *bound = m;
      memcpy(usage, usual ? use1 : use2, sizeof use1);
      if (!r->found || m > r->kept) {
        if (usual) { record(c, best, r); r->kept = m; }
        else if (t2.found) put_seq(c, &t2, m, r);
      }
    } else if (!r->found || *bound > r->kept) {
      put_seq(c, &t0, *bound, r);
    }
  }
  free(t0.first); free(t0.kind); free(t0.rec);
  free(t2.first); free(t2.kind); free(t2.rec);
  return err;
}

/* The states of the counted runs: (a, m) of two sides, or the vectors of rdim counts of
 * the ranks (sum <= pp). */
static int counted_states(const pdp *c)
{
  if (c->ranked) return (int)c->rbin[(size_t)(c->pp + c->rdim) * (c->rdim + 1) + c->rdim];
  return (c->pp + 1) * (c->pp + 1);
}

/* The states of the count of ranks with D counts, C(pp + D, D); 0 past `max`. */
static double rank_states(int pp, int D, double max)
{
  double v = 1;
  for (int i = 1; i <= D; i++) v = v * (pp + i) / i;
  return v > max ? 0 : v;
}

/* The Lagrangian bound: the best of the priced runs over a search of prices. */
static hp_err price_search(pdp *c, hp_pat_result *r, double cutoff, int counted, int *done)
{
  double lam[HP_PATTERN_MAX_CLASSES] = {0}, v, scale = 0;
  int use[HP_PATTERN_MAX_CLASSES], C = c->C;
  hp_err err;
  release(c);
  c->exact = counted;                  /* the sides or ranks counted, prices within them */
  c->R = counted ? counted_states(c) : 1;
  if ((err = setup_frontiers(c))) return err;
  if ((err = priced(c, lam, r, cutoff, &v, use, done)) || !*done) return err;
  if (v > r->bound) r->bound = v;
  if (v >= cutoff || C == 1) return HP_OK;
  if (c->ranked && c->nlev < C && c->o->quick == HP_PAT_MERGED_FIRST) {
    r->partial = 1;                    /* merged ranks: a larger run redoes it, prices and all */
    return HP_OK;
  }
  /* a price step of the order of a stage time per group */
  scale = (isfinite(cutoff) ? cutoff : v) / (c->dp > 0 ? c->dp : 1);
  if (C == 2) {
    /* one price (the other class's is fixed: every group is used, so only their
     * difference matters): bisection on its subgradient, the priced optimum's use of
     * class o less its supply. With slack (idle devices) the uses are at most the
     * supplies: the prices must be >= 0 (a negative one would reward leaving groups
     * idle below what the bound may assume), and the uses, summing to pp dp < N0 + N1,
     * exceed at most one supply: at the best prices that class's is >= 0 and the other's
     * 0 (raising both by k changes the bound by -k (N0 + N1 - pp dp) <= 0). So o is the
     * over-used class, its price searched from 0 up; none over-used at price 0: the
     * unpriced optimum uses no more than there is, and its bound is the best. */
    double a, b = 0, step = scale;
    int g, dir, bracketed = 0, o = 0;
    if (c->slack) {
      o = use[0] > c->pt->groups[0] ? 0 : use[1] > c->pt->groups[1] ? 1 : -1;
      if (o < 0) return HP_OK;
    }
    if ((g = use[o] - c->pt->groups[o]) == 0) return HP_OK;
    dir = g > 0 ? 1 : -1;                 /* over-used: raise its price (with slack, always) */
    a = lam[o];
    /* prices past 1000 times a stage time per group say nothing more (a merged frontier's
     * counts can point the wrong way for ever) and lose the bound to rounding */
    for (int t = 0; t < 40 && !bracketed && fabs(a) < 1e3 * scale; t++, step *= 2) {
      b = a + dir * step;
      lam[o] = b;
      if ((err = priced(c, lam, r, cutoff, &v, use, done)) || !*done) return err;
      if (v > r->bound) r->bound = v;
      if (r->bound >= cutoff) return HP_OK;
      g = use[o] - c->pt->groups[o];
      if (g == 0 || (g > 0 ? 1 : -1) != dir) bracketed = 1; else a = b;
    }
    if (!bracketed || g == 0) return HP_OK;
    for (int t = 0; t < 16 && fabs(b - a) > 1e-4 * scale; t++) {
      lam[o] = (a + b) / 2;
      if ((err = priced(c, lam, r, cutoff, &v, use, done)) || !*done) return err;
      if (v > r->bound) r->bound = v;
      if (r->bound >= cutoff) return HP_OK;
      g = use[o] - c->pt->groups[o];
      if (g == 0) break;
      if ((g > 0 ? 1 : -1) == dir) a = lam[o]; else b = lam[o];
    }
    return HP_OK;
  }
  /* Three classes or more: subgradient ascent on all the prices at once, Polyak's step
   * towards the cutoff. The priced optimum's use of each class less its supply is a
   * subgradient of the (concave) bound; searches one price at a time stall at its kinks
   * (measured: 5.588 against 5.747 on a three-kind 64-GPU configuration). The step shrinks
   * when the bound stops rising. Every run's bound holds, whatever the prices. */
  /* With slack (idle devices) the uses are at most the supplies and the prices >= 0: the
   * ascent is projected (a price at 0 that the subgradient would push below stays, and
   * its component leaves the step), and stops where the projected subgradient is 0. */
  {
    double theta = 1.0, best = v;
    int stall = 0;
    for (int it = 0; it < PAT_PRICE_ITERS && theta > 1e-3; it++) {
      double gg = 0, target = isfinite(cutoff) ? cutoff : best + scale, t, gx[HP_PATTERN_MAX_CLASSES];
      for (int x = 0; x < C; x++) {
        gx[x] = use[x] - c->pt->groups[x];
        if (c->slack && lam[x] <= 0 && gx[x] < 0) gx[x] = 0;
        gg += gx[x] * gx[x];
      }
      if (gg == 0) break;               /* a subgradient of 0: these prices are the best */
      t = theta * (target - v) / gg;
      for (int x = 0; x < C; x++) {
        lam[x] += t * gx[x];
        if (c->slack && lam[x] < 0) lam[x] = 0;
        if (fabs(lam[x]) > 1e3 * scale) lam[x] = lam[x] > 0 ? 1e3 * scale : -1e3 * scale;   /* as above */
      }
      if ((err = priced(c, lam, r, cutoff, &v, use, done)) || !*done) return err;
      if (v > r->bound) r->bound = v;
      if (r->bound >= cutoff) return HP_OK;
      if (v > best * (1 + 1e-9)) { best = v; stall = 0; }
      else if (++stall >= 2) { theta /= 2; stall = 0; }
    }
  }
  return HP_OK;
}

static hp_err lagrange(pdp *c, hp_pat_result *r, double cutoff, int counted, int *done);

/* Puts the classes of `mask0` on side 0 and the rest on side 1 (the counted state). */
static void set_sides(pdp *c, unsigned mask0)
{
  c->ng[0] = c->ng[1] = 0;
  c->sratio[0] = c->sratio[1] = 0;
  for (int x = 0; x < c->C; x++) {
    int sd = !(mask0 >> x & 1u);
    c->side[x] = (unsigned char)sd;
    c->ng[sd] += c->pt->groups[x];
    if (c->ratio[x] > c->sratio[sd]) c->sratio[sd] = c->ratio[x];
  }
  for (int k = 0; k < c->K; k++) {
    unsigned m = c->pt->kind[k].mask, b = 0;
    for (int x = 0; x < c->C; x++)
      if (m >> x & 1u) b |= 1u << c->side[x];
    c->kside[k] = (unsigned char)b;
  }
}

/* A class's time for the whole model, and the classes in order of it, fastest first
 * (insertion sort: C <= 6): the order of the sides tried and of the ranks. */
static double class_time(const pdp *c, int x)
{
  return c->pre[(size_t)x * (c->L + 1) + c->L];
}

static void fastest_first(const pdp *c, int *order)
{
  for (int x = 0; x < c->C; x++) order[x] = x;
  for (int x = 1; x < c->C; x++)
    for (int y = x; y > 0 && class_time(c, order[y]) < class_time(c, order[y - 1]); y--) {
      int t = order[y]; order[y] = order[y - 1]; order[y - 1] = t;
    }
}

/* With three classes or more: the counted state over two sides of the classes, with prices
 * within them. The sides tried are the fastest classes against the rest (1, 2, .., C - 1
 * of them, by their time for the whole model), each by one unpriced run; the price search
 * then runs on the side that bound best. A relaxation of the exact count (the sides'
 * counts are necessary), and of the plain prices' (it adds constraints), so a bound. */
static hp_err counted_sides(pdp *c, hp_pat_result *r, double cutoff, int *done)
{
  int order[HP_PATTERN_MAX_CLASSES], C = c->C, use[HP_PATTERN_MAX_CLASSES];
  double zero[HP_PATTERN_MAX_CLASSES] = {0}, best = -INFINITY, v;
  unsigned best_mask = 1u, mask = 0;
  hp_err err;
  fastest_first(c, order);
  for (int k = 1; k < C; k++) {
    mask |= 1u << order[k - 1];
    set_sides(c, mask);
    release(c);
    c->exact = 1;
    c->R = (c->pp + 1) * (c->pp + 1);
    if ((err = setup_frontiers(c))) return err;
    if ((err = priced(c, zero, r, cutoff, &v, use, done))) return err;
    if (!*done) {                      /* stopped: what the sides tried so far bound it */
      if (r->bound > -INFINITY) { *done = 1; r->partial = 1; }
      return HP_OK;
    }
    if (v > best) { best = v; best_mask = mask; }
    if (best > r->bound) r->bound = best;
    if (best >= cutoff) return HP_OK;
  }
  set_sides(c, best_mask);
  if ((err = lagrange(c, r, cutoff, 1, done)) || !*done) return err;
  if (best > r->bound) r->bound = best;
  return HP_OK;
}

/* The completion bound's capacity of the stages left after counts v (every group used):
 * the groups of ranks above j that the stages so far cannot hold (dp a stage of a rank above
 * j, dp - 1 a mixing one of rank j + 1: res_rank) need that many stages left of a rank above
 * j, dp groups each at most: at least need[j], nested (a stage above j + 1 is above j). A
 * stage of rank r holds at most ratio x T of fastest time (completion_bound), so the left
 * stages hold at most D x T, the k-th slowest of them at the largest ratio of the ranks it
 * may have; D is returned (0: no figure). */
static double rank_cap(const pdp *c, const unsigned char *v, int left)
{
  int C = c->nlev;
  long need[HP_PATTERN_MAX_CLASSES + 1], dp = c->dp;
  double D = 0, top = 0;
  need[C - 1] = 0;
  for (int j = C - 2; j >= 0; j--) {
    long held = 0, gh = c->rlow[C - 1] - c->rlow[j];
    for (int h = j + 1; h < C; h++) {
      held += dp * v[h];
      if (c->rmix) held += (h == j + 1 ? dp - 1 : dp) * v[C + h - 1];
    }
    need[j] = gh > held ? (gh - held + dp - 1) / dp : 0;
    if (need[j] < need[j + 1]) need[j] = need[j + 1];
    if (need[j] > left) need[j] = left;
  }
  for (int j = C - 2; j >= -1; j--) {   /* top: the largest ratio of the ranks above j */
    if (c->rgroups[j + 1] > 0 && c->rratio[j + 1] > top) top = c->rratio[j + 1];
    D += top * (double)((j >= 0 ? need[j] : left) - need[j + 1]);
  }
  return D;
}

/* The ranks for the count of ranks: the classes fastest first (by their time for the whole
 * model); where C(pp + D, D) states (D = 2n - 1 counts with the mixed stages apart, n
 * without) exceed `most` for n ranks, the two adjacent ranks of the closest times merge,
 * down to 3 (two would be the sides). Sets rank_of, nlev, rmix; 0 where nothing fits. */
static int rank_plan(pdp *c, double most)
{
  int order[HP_PATTERN_MAX_CLASSES], lev[HP_PATTERN_MAX_CLASSES], C = c->C, n = C;
  fastest_first(c, order);
  for (int q = 0; q < C; q++) lev[q] = q;    /* lev[q]: the rank of the q-th fastest */
  for (; n >= 3; n--) {
    if (rank_states(c->pp, 2 * n - 1, most) > 0 || rank_states(c->pp, n, most) > 0) {
      c->rmix = rank_states(c->pp, 2 * n - 1, most) > 0;
      c->nlev = n;
      for (int q = 0; q < C; q++) c->rank_of[order[q]] = (unsigned char)lev[q];
      return 1;
    }
    /* merge the adjacent ranks whose times are closest: the first class of rank b + 1
     * joins rank b, and so do the ones after it */
    int best = -1;
    double bratio = INFINITY;
    for (int q = 1; q < C; q++)
      if (lev[q] != lev[q - 1]) {
        double r = class_time(c, order[q]) / fmax(class_time(c, order[q - 1]), 1e-300);
        if (r < bratio) { bratio = r; best = q; }
      }
    for (int q = best; q < C; q++) lev[q]--;
  }
  return 0;
}

/* With three classes or more: the count of ranks over rank_plan's ranks, one unpriced run,
 * then the price search within it: a relaxation of the count per class, so a bound. Sets
 * up each rank's groups and ratio, each kind's coordinate, and every state's counts and
 * completion capacity. */
static hp_err counted_ranks(pdp *c, hp_pat_result *r, double cutoff, int *done)
{
  int C = c->nlev, D = c->rmix ? 2 * C - 1 : C, W = D + 1, R;
  int v[2 * HP_PATTERN_MAX_CLASSES] = {0};
  long low = 0;
  hp_err err = HP_OK;
  for (int q = 0; q < C; q++) { c->rgroups[q] = 0; c->rratio[q] = 0; }
  for (int x = 0; x < c->C; x++) {
    int q = c->rank_of[x];
    c->rgroups[q] += c->pt->groups[x];
    if (c->pt->groups[x] > 0 && c->ratio[x] > c->rratio[q]) c->rratio[q] = c->ratio[x];
  }
  for (int q = 0; q < C; q++) c->rlow[q] = (low += c->rgroups[q]);
  for (int k = 0; k < c->K; k++) {
    int hi = 0, lo = C;
    for (int x = 0; x < c->C; x++)
      if (c->pt->kind[k].mask >> x & 1u) {
        if (c->rank_of[x] > hi) hi = c->rank_of[x];
        if (c->rank_of[x] < lo) lo = c->rank_of[x];
      }
    c->kco[k] = (unsigned char)(c->rmix && lo < hi ? C + hi - 1 : hi);
  }
  c->rdim = D;
  free(c->rbin);
  free(c->rdec);
  c->rdec = NULL;
  if (!(c->rbin = hp__calloc((size_t)(c->pp + D + 1) * W, sizeof *c->rbin))) err = HP_NOMEM;
  for (int n = 0; !err && n <= c->pp + D; n++)   /* Pascal's triangle, up to k = D */
    for (int k = 0; k <= D && k <= n; k++)
      c->rbin[(size_t)n * W + k] = k == 0 || k == n ? 1 : c->rbin[(size_t)(n - 1) * W + k - 1] +
                                                           (k <= n - 1 ? c->rbin[(size_t)(n - 1) * W + k] : 0);
  c->ranked = 1;
  /* the slow replica (header): where no rank merged, every group is used and some kind
   * mixes ranks (ranks, one class each, in the order of the top classes) */
  c->slowok = 0;
  if (c->rmix && c->nlev == c->C && !c->slack && c->dp >= 2 && !c->o->no_slow)
    for (int k = 0; k < c->K; k++)
      if (c->kco[k] >= C) c->slowok = 1;
  R = err ? 0 : counted_states(c);
  if (!err && !(c->rdec = hp__calloc((size_t)R * D, 1))) err = HP_NOMEM;
  if ((err = hp__team_agree_err(c->team, err))) { c->ranked = 0; return err; }
  free(c->rcap);
  c->rcap = NULL;
  if (!c->slack && !(c->rcap = hp__calloc((size_t)R, sizeof *c->rcap))) err = HP_NOMEM;
  if ((err = hp__team_agree_err(c->team, err))) { c->ranked = 0; return err; }
  for (int sum = 0;;) {                  /* every vector of sum <= pp, odometer order */
    int code = rank_code(c, v);
    memcpy_counts(c->rdec + (size_t)code * D, v, D);
    if (c->rcap) c->rcap[code] = rank_cap(c, c->rdec + (size_t)code * D, c->pp - sum);
    int d = 0;
    for (; d < D; d++) {
      if (sum < c->pp) { v[d]++; sum++; break; }
      sum -= v[d];
      v[d] = 0;
    }
    if (d == D) break;
  }
  err = lagrange(c, r, cutoff, 1, done);
  c->ranked = c->slowok = 0;
  return err;
}

/* The price search, anytime: stopped (deadline, stop or too many points) after a run that
 * completed, it keeps the best bound found so far, which holds for every price, and says
 * the bound is partial (the driver may resume it with more time). */
static hp_err lagrange(pdp *c, hp_pat_result *r, double cutoff, int counted, int *done)
{
  hp_err err = price_search(c, r, cutoff, counted, done);
  if (!err && !*done && r->bound > -INFINITY) {
    *done = 1;
    r->partial = 1;
  }
  return err;
}

void hp__pat_opts_init(hp_pat_opts *o)
{
  memset(o, 0, sizeof *o);
  o->cutoff = INFINITY;
  o->deadline = INFINITY;
  o->exact = -1;
}

void hp__pat_result_release(hp_pat_result *r)
{
  free(r->first);
  free(r->kind);
  free(r->rec);
  free(r->count);
  free(r->zdp);
  memset(r, 0, sizeof *r);
}

hp_err hp__pattern_bound(const hp_problem *p, const hp_patterns *pt, const hp_pat_opts *o,
                         hp_pat_result *r, hp_diag *d)
{
  const hp_costs *tab = &pt->tab;
  pdp c;
  hp_err err = HP_OK;
  int L = tab->n_layers, done = 0, counted;
  double quick = -INFINITY, t_in = hp__now();   /* the quick bound with three classes or more */
  memset(&c, 0, sizeof c);
  memset(r, 0, sizeof *r);
  hp__fpool_init(&c.pool, sizeof(ppoint), 8192, PAT_MAX_POINTS);
  r->bound = -INFINITY;
  c.p = p;
  c.pt = pt;
  c.o = o;
  c.L = L;
  c.pp = tab->pp;
  c.dp = tab->dp;
  c.gas = tab->gas;
  c.C = pt->n_cls;
  c.K = pt->n_kind;
  c.nb = 1;
  for (size_t ab = 0; ab < (size_t)c.K * c.K; ab++)
    if (!pt->chain[ab] && pt->ibw[ab] > 0) c.nb = 2;
  c.KS = (c.K + 1) * c.nb;
  c.team = o->team && o->team->size > 1 ? o->team : NULL;
  c.rule = (hp_front_rule){ o->frontier > 0 ? o->frontier : HP_PAT_FRONTIER, HP_FRONT_MERGE, NULL, NULL, NFIG };
  {
    long supply = 0;
    for (int x = 0; x < c.C; x++) supply += pt->groups[x];
    c.slack = supply > (long)c.pp * c.dp;
  }
  if (c.C > HP_PATTERN_MAX_CLASSES) return hp_fail(d, HP_INTERNAL, "pattern DP: %d classes", c.C);
  r->first = hp__calloc((size_t)c.pp + 1, sizeof *r->first);
  r->kind = hp__calloc((size_t)c.pp, sizeof *r->kind);
  r->rec = hp__calloc((size_t)c.pp, sizeof *r->rec);
  c.pen = hp__calloc((size_t)c.K + 1, sizeof *c.pen);
  c.kside = hp__calloc((size_t)c.K + 1, sizeof *c.kside);
  c.kco = hp__calloc((size_t)c.K + 1, sizeof *c.kco);
  c.ktop = hp__calloc((size_t)c.K + 1, sizeof *c.ktop);
  c.pre = hp__calloc((size_t)c.C * (L + 1), sizeof *c.pre);
  c.ckpre = hp__calloc((size_t)c.C * (L + 1), sizeof *c.ckpre);
  c.modes = hp_job_modes(&p->job);
  c.rest = hp__calloc((size_t)L + 1, sizeof *c.rest);
  for (int m = 0; m < HP_N_SHARD; m++)
    if (!(c.mpre[m] = hp__calloc((size_t)L + 1, sizeof *c.mpre[m]))) err = HP_NOMEM;
  c.ppre = hp__calloc((size_t)L + 1, sizeof *c.ppre);
  c.gpre = hp__calloc((size_t)L + 1, sizeof *c.gpre);
  c.upre = hp__calloc((size_t)L + 1, sizeof *c.upre);
  if (c.team) c.tlen = hp__calloc((size_t)c.team->size, sizeof *c.tlen);
  if (!r->first || !r->kind || !r->rec || !c.pen || !c.kside || !c.kco || !c.ktop || !c.pre || !c.ckpre || !c.rest || !c.ppre || !c.gpre ||
      !c.upre || (c.team && !c.tlen))
    err = HP_NOMEM;
  if ((err = hp__team_agree_err(c.team, err))) goto done;
  if (c.pp > L || c.K == 0) { r->bound = INFINITY; r->done = 1; goto done; }   /* no kind fits */
  for (int x = 0; x < c.C; x++)
    for (int l = 0; l < L; l++)
    {
      size_t ix = (size_t)x * (L + 1) + l;
      c.pre[ix + 1] = c.pre[ix] + hp_costs_time(tab, x, l);
      c.ckpre[ix + 1] = c.ckpre[ix] + (tab->layer[l].ck ? hp_costs_time(tab, x, l) : 0);
    }
  for (int l = L - 1; l >= 0; l--) {
    double f = INFINITY;
    for (int x = 0; x < c.C; x++)
      if (pt->groups[x] > 0 && hp_costs_time(tab, x, l) < f) f = hp_costs_time(tab, x, l);
    c.rest[l] = c.rest[l + 1] + f;
    /* a layer of no time on class x has none on the fastest either: it adds nothing to
     * either side of f <= ratio t, so it leaves the ratio alone (taken as 1, it made every
     * ratio 1 on the bench rows, whose models have such layers) */
    for (int x = 0; x < c.C; x++) {
      double t = hp_costs_time(tab, x, l);
      if (t > 0 && f / t > c.ratio[x]) c.ratio[x] = f / t;
    }
  }
  for (int k = 0; k < c.K; k++) c.ktop[k] = hp_patterns_top_class(pt, k);
  for (int l = 0; l < L; l++) {
    for (int m = 0; m < HP_N_SHARD; m++)
      c.mpre[m][l + 1] = c.mpre[m][l] + hp_costs_layer_states(tab, l, m);
    c.ppre[l + 1] = c.ppre[l] + tab->layer[l].param;
    c.gpre[l + 1] = c.gpre[l] + tab->layer[l].grad;
    c.upre[l + 1] = c.upre[l] + tab->layer[l].upd;
  }
  /* the exact count of groups where it is affordable, else (or when it gives up) prices */
  /* the exact count's frontiers: (L + 1)(K + 1)(pp + 1)^2 lists, affordable up to a size */
  counted = o->exact == 1 ||
            (o->exact != 0 && (double)(L + 1) * (c.K + 1) * (double)(c.pp + 1) * (c.pp + 1) <=
                                  (c.C <= 2 ? PAT_EXACT_LISTS_TWO : PAT_EXACT_LISTS));
  if (c.C == 2) set_sides(&c, 1u);
  if (c.C <= 2 && (o->exact == 1 || (o->exact != 0 && (c.C == 1 || counted)))) {
    double zero[HP_PATTERN_MAX_CLASSES] = {0};
    int use[HP_PATTERN_MAX_CLASSES];
    double v;
    c.exact = c.defer = 1;
    c.max_work = o->exact == 1 ? 0 : PAT_EXACT_WORK;
    c.R = c.C == 2 ? (c.pp + 1) * (c.pp + 1) : 1;
    if (!(err = setup_frontiers(&c))) {
      err = priced(&c, zero, r, o->cutoff, &v, use, &done);
      if (!err && done) {
        r->bound = v;
        r->exact = 1;
        r->done = 1;
        goto done;
      }
    }
    if (err || c.stopped) goto done;
    r->found = 0;                      /* the exact state was too large: prices instead */
    r->kept = -INFINITY;
    c.defer = 0;
  }
  c.max_work = 0;
  /* three classes or more: first a quick bound, neither counted nor priced (one run over
   * one state per frontier: the Lagrangian bound at prices 0), so that a configuration
   * whose counted runs cannot finish in its share still has a bound, marked partial (the
   * five-kind bench row had none for 5 configurations in 60 s) */
  if (c.C >= 3 && o->exact != 0) {
    double zero[HP_PATTERN_MAX_CLASSES] = {0}, v;
    int use[HP_PATTERN_MAX_CLASSES];
    c.exact = 0;
    c.R = 1;
    if ((err = setup_frontiers(&c))) goto done;
    if ((err = priced(&c, zero, r, o->cutoff, &v, use, &done))) goto done;
    if (!done) goto done;              /* not even this: no bound */
    quick = v;
    r->quick_s = hp__now() - t_in;
    if (v > r->bound) r->bound = v;
    if (v >= o->cutoff) { r->done = 1; goto done; }
    if (o->quick == HP_PAT_QUICK) goto done;   /* marked partial below: the counted runs wait */
    done = 0;
    release(&c);
  }
  /* three classes or more: the count per class where its states are few (and each kind's
   * splits), with half the time left; if it cannot finish, the counted sides and prices.
   * "Few": no more than the runs of the sides and their price search visit in all (C - 1
   * sides, up to PAT_PRICE_ITERS prices, (pp + 1)^2 states each); where it is more, its one
   * run tends not to finish, and half the time lost starves the prices (measured on the
   * 4-kind 112-GPU bench row: pp 7 tp 4 dp 4 mbs 8, 3025 states, 1.81 against 2.00 in 5 s) */
  if (c.C >= 3 && o->exact != 0 && (o->count == HP_PAT_COUNT_AUTO || o->count == HP_PAT_COUNT_CLASS)) {
    int forced = o->count == HP_PAT_COUNT_CLASS;
    double states = 1;
    for (int x = 0; x < c.C; x++) states *= pt->groups[x] + 1;
    double lists = (double)(L + 1) * (c.K + 1) * states;
    /* forced (to measure), up to 64 times the lists: 4 GiB of list heads an array */
    if ((forced && lists <= 64 * PAT_EXACT_LISTS) ||
        (lists <= PAT_EXACT_LISTS && states <= (double)(c.C - 1 + PAT_PRICE_ITERS) * (c.pp + 1) * (c.pp + 1))) {
      int ok = build_splits(&c, PAT_MAX_SPLITS);
      if ((err = hp__team_agree_err(c.team, ok < 0 ? HP_NOMEM : HP_OK))) goto done;
      if (ok) {
        hp_pat_opts half = *o;
        double zero[HP_PATTERN_MAX_CLASSES] = {0}, v;
        int use[HP_PATTERN_MAX_CLASSES];
        if (isfinite(o->deadline) && !forced) half.deadline = hp__now() + (o->deadline - hp__now()) / 2;
        c.o = &half;
        c.percls = c.exact = c.defer = 1;
        c.R = (int)states;
        /* couples (above), where every group is used, dp is 2 and the lists stay few */
        c.ncp = 0;
        if (!c.slack && c.dp == 2 && !o->no_couples) {
          double mult = 3;
          for (int x = 0; x < c.C; x++) {
            const hp_node_class *nc = &pt->cls->cls[x];
            c.cpd[x] = -1;
            if (nc->gpus_min == nc->gpus_max && nc->gpus_min == 2 * tab->tp) { c.cpd[x] = c.ncp++; mult *= 3; }
          }
          if (c.ncp && lists * c.nb * mult <= PAT_EXACT_LISTS_TWO) {   /* lists: K + 1 slots */
            c.cpbase = (long)states;
            c.R = (int)(states * mult);
          } else {
            c.ncp = 0;
          }
        }
        c.stride[0] = 1;
        for (int x = 1; x < c.C; x++) c.stride[x] = c.stride[x - 1] * (pt->groups[x - 1] + 1);
        c.max_work = forced ? 0 : PAT_EXACT_WORK;
        if (!(err = setup_frontiers(&c))) err = priced(&c, zero, r, o->cutoff, &v, use, &done);
        c.o = o;
        c.percls = c.defer = c.ncp = 0;
        c.max_work = 0;
        if (err) goto done;
        if (done) {
          if (v > r->bound) r->bound = v;
          r->exact = 1;
          r->done = 1;
          goto done;
        }
        if (hp__team_any(c.team, hp__stop_now(o->stop, o->deadline))) goto done;
        r->found = 0;                  /* gave up: the counted sides instead */
        r->kept = -INFINITY;
        release(&c);
      }
    }
  }
  /* three classes or more: the count of ranks where its states fit (the mixed stages
   * apart where they fit too); where its frontiers overflow, the sides */
  if (c.C >= 3 && o->exact != 0 && o->count != HP_PAT_COUNT_SIDES) {
    /* a run with larger frontiers (the search's tightening) keeps more ranks apart, in
     * proportion: where ranks merged, the classes of a merged rank stand in for each other
     * (on the five-kind 104-GPU row, pp 13 tp 2 dp 4 mbs 1: with V100 and L4 merged, the
     * eight L4 groups "lie" in stages of V100 and H100, and the first run reads 1.940; the
     * five ranks apart, 8568 states, read 2.046 in one run of about 20 s) */
    double grow = o->frontier > HP_PAT_FRONTIER ? (double)o->frontier / HP_PAT_FRONTIER : 1;
    if (rank_plan(&c, fmin(PAT_RANK_STATES * grow, PAT_RANK_LISTS * grow / ((double)(L + 1) * c.KS)))) {
      r->sides = 2;
      err = counted_ranks(&c, r, o->cutoff, &done);
      if (c.nlev < c.C) c.merged = 1;  /* merged ranks: a tighter run may keep them apart */
      if (err || done || c.stopped || !c.overflow) goto counted_done;
      r->sides = 0;
      r->found = 0;
      r->kept = -INFINITY;
    }
  }
  if (c.C >= 3 && counted) {
    r->sides = 1;
    err = counted_sides(&c, r, o->cutoff, &done);
    if (!err && !done && c.overflow && !c.stopped) {   /* too many points: plain prices */
      r->sides = 0;
      r->found = 0;
      r->kept = -INFINITY;
      err = lagrange(&c, r, o->cutoff, 0, &done);
    }
  } else {
    err = lagrange(&c, r, o->cutoff, 0, &done);
  }
counted_done:
  r->done = done && !err;
done:
  if (!err && !r->done && quick > -INFINITY) {   /* the counted runs were cut short */
    if (quick > r->bound) r->bound = quick;
    r->done = 1;
    r->partial = 1;
  }
  r->work = c.work;
  r->merged = c.merged;
  release(&c);
  free(c.pen);
  free(c.kside);
  free(c.kco);
  free(c.ktop);
  free(c.rdec);
  free(c.rcap);
  free(c.rbin);
  free(c.split);
  free(c.nsp);
  free(c.pre);
  free(c.ckpre);
  free(c.rest);
  for (int m = 0; m < HP_N_SHARD; m++) free(c.mpre[m]);
  free(c.ppre);
  free(c.gpre);
  free(c.upre);
  free(c.tlen);
  if (err) {
    hp__pat_result_release(r);
    return hp_fail(d, err, "pattern DP: %s", hp_strerror(err));
  }
  return HP_OK;
}
