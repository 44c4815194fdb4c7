/* placement_descent.c -- a local search over the placement of one configuration: which TP
 * group serves which slot (stage, replica), the layer DP splitting the layers for each.
 * Three starts: a given plan of the configuration, if any (first: a search gives its
 * incumbent, and a short share may allow no other start), the best class-order placement
 * (the groups sorted by device type in every order of the types where there are at most
 * DESCENT_ORDERS_UPTO, else in the types' order and its reverse; within a type in device
 * order, so that a stage's groups share nodes), and the best of the same orders taken
 * replica by replica wherever consecutive stages hold one type (a replica's stages then
 * share a node). From each, passes of two kinds of move until a whole pass improves
 * nothing, the deadline or a stop:
 *   - whole stages (pp <= DESCENT_BLOCK_PP): every block of consecutive stages moved, all
 *     its groups at once, to start at another stage; and every run of stages of one type
 *     laid again, in device order, stage by stage, in pairs of stages replica by replica,
 *     or each replica's whole run on consecutive groups. The best of all these, if it
 *     lowers the evaluator's time (best improvement: the first that improves tends to
 *     lead elsewhere);
 *   - swaps of two groups of different stages (or of a used group and an unused one,
 *     where the configuration leaves devices idle) wherever the swap lowers the time,
 *     first improvement. Swaps of two groups of one type on one node are skipped: the
 *     cost model cannot tell them apart;
 *   - from the best end of the starts, each exact node class laid again every way
 *     (relay_class, below), the best arrangement taken where it lowers the time, and the
 *     passes again from there.
 *
 * Why: on clusters of three kinds or more the fixed placements and the pattern DP's
 * decoded plans leave much on the table. On the 4-kind 112-GPU bench row (GPT 2.6B,
 * sharding dp and zdp), pp 7 tp 4 dp 4 mbs 1: the best class order reads 1.979 s, swaps
 * alone descend to 1.855 s in 0.2 s: they pair consecutive stages of a replica on one
 * node, whose hand-off then stays inside it, and park the slowest groups on the cheapest
 * layers. Swaps cannot move a whole stage, nor lay a type's run differently, when every
 * step of the way is worse than the start: a three-kind 56-GPU cluster (2 x 8 H100, 3 x 8
 * A100, 4 x 4 L4; GPT 1.1B, gbs 256, pp 7 tp 2 dp 4) wants an H100 node at each end and
 * the L4 stages in replica pairs, which swaps alone never reached (sharding dp, zdp: 0.8652
 * s, where the certificate's annealing found 0.8256 after 200 s of 300); the stage moves
 * reach 0.8256 in 0.1 s (with dp alone, test_placement_descent.c's job: 0.8627 against
 * 0.8231). The same moves (measured 2026-11-26, from no plan, sharding dp, zdp):
 * the 4-kind row's pp 7 tp 2 dp 8 1.923 -> 1.890, pp 7 tp 4 dp 4 1.855 -> 1.853; the
 * 5-kind 104-GPU row's pp 13 tp 2 dp 4 2.338 -> 2.217 (2.9 s).
 *
 * A plan is offered (hp_result_offer) when it improves on the best of this search. The
 * layer DP is asked only for splits below DESCENT_REACH times the current time: its own
 * figure takes each stage's slowest replica, above the evaluator's where a stage mixes
 * device types, so a cutoff at the current time would miss swaps that improve (with it,
 * the descent above found nothing). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

#define DESCENT_ORDERS_UPTO 5
#define DESCENT_REACH 1.1
#define DESCENT_STARTS 3
/* Stage moves only up to this many stages: a pass tries pp^3 / 2 blocks, each a layer DP
 * (pp 16: about 2,000; the 768-GPU rows' pp 96 would take minutes a pass) */
#define DESCENT_BLOCK_PP 16

typedef struct descent {
  const hp_problem *p;
  const hp_config *c;
  const hp_limits *lim;
  double deadline;
  int ng, slots;
  int *first, *type, *node;   /* per TP group: its first device, device type and node */
  long evals;
  double t0;                  /* hp__now() at the start: the time an evaluation takes */
} descent;

/* The TP groups a plan may use (hp__tp_groups_usable), with each one's node and type. */
static int list_groups(descent *s)
{
  const hp_cluster *cl = s->p->cluster;
  int n = hp__tp_groups_usable(s->p, s->c->tp, s->first);
  for (int g = 0; g < n; g++) {
    s->node[g] = cl->dev_node[s->first[g]];
    s->type[g] = cl->nodes[s->node[g]].type;
  }
  return n;
}

/* The evaluator's time of the placement `order` split by the layer DP, into *t (INFINITY:
 * no split below `reach`, or none that fits or follows the job); the plan is offered to
 * `out` where *t is below `below`. */
static hp_err cost(descent *s, const int *order, double reach, double below, hp_result *out,
                   double *t, hp_diag *d)
{
  hp_plan *pl = NULL;
  hp_dp_opts o;
  hp_eval e = {0};
  int found = 0;
  double obj;
  hp_err err;
  *t = INFINITY;
  if ((err = hp__plan_for(s->p, s->c, &pl, d))) return err;
  hp__place_groups(pl, s->first, order);
  hp__dp_opts_init(&o);
  o.modes = hp_job_modes(&s->p->job);
  o.cutoff = reach;
  o.deadline = s->deadline;
  o.stop = s->lim->stop;
  o.max_frontier = HP_DP_HEURISTIC_FRONTIER;
  s->evals++;
  err = hp__dp_split(s->p, pl, &o, &found, &obj, NULL, d);
  if (!err && found && hp__plan_follows_job(s->p, pl) && !(err = hp_evaluate(s->p, pl, &e, d)) &&
      e.feasible)
    *t = e.iteration_time;
  if (!err && *t < below) err = hp_result_offer(out, s->lim, pl, &e, d);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  return err;
}

/* The groups sorted by rank[type] (stable: device order within a type) into order. */
static void class_order(const descent *s, const int *rank, int n_types, int *order)
{
  int n = 0;
  for (int r = 0; r < n_types; r++)
    for (int g = 0; g < s->ng; g++)
      if (rank[s->type[g]] == r) order[n++] = g;
}

/* The group order of plan pl's placement (used groups in slot order, then the others);
 * 0 where a slot's devices are not one of the groups. */
static int order_of(const descent *s, const hp_plan *pl, int *order)
{
  unsigned char *taken = hp__calloc((size_t)s->ng + 1, 1);
  int n = 0, ok = taken != NULL;
  for (int i = 0; i < s->slots && ok; i++) {
    int at = -1;
    for (int g = 0; g < s->ng && at < 0; g++)
      if (!taken[g] && s->first[g] == pl->dev[(size_t)i * pl->tp]) at = g;
    ok = at >= 0;
    if (ok) { order[n++] = at; taken[at] = 1; }
  }
  for (int g = 0; g < s->ng && ok; g++)
    if (!taken[g]) order[n++] = g;
  free(taken);
  return ok;
}

/* `in` with every run of consecutive stages whose groups are all of one type taken
 * replica by replica (replica r's stages of the run on consecutive groups, so on one node
 * where it holds several): into out. */
static void replica_major(const descent *s, const int *in, int *out)
{
  int pp = s->c->pp, dp = s->c->dp;
  memcpy(out, in, (size_t)s->ng * sizeof *out);
  for (int s0 = 0, m; s0 < pp; s0 += m) {
    int ty = s->type[in[s0 * dp]], pure = 1;
    for (int r = 1; r < dp; r++) pure &= s->type[in[s0 * dp + r]] == ty;
    for (m = 1; pure && s0 + m < pp; m++) {
      int same = 1;
      for (int r = 0; r < dp; r++) same &= s->type[in[(s0 + m) * dp + r]] == ty;
      if (!same) break;
    }
    for (int j = 0; j < m * dp; j++) out[(s0 + j % m) * dp + j / m] = in[s0 * dp + j];
  }
}

/* The starts of the descent (DESCENT_STARTS of them): every order of the types (Heap's
 * algorithm) where there are at most DESCENT_ORDERS_UPTO, else the types' order and its
 * reverse, each as it is (start 0: stages take the groups in that order) and replica by
 * replica (start 1); the best of each into start[k], t[k]. Each plan better than *best
 * is offered to out. */
static hp_err class_orders(descent *s, int **start, double *t, double *best, hp_result *out,
                           hp_diag *d)
{
  int T = s->p->cluster->n_types, perm[DESCENT_ORDERS_UPTO], c[DESCENT_ORDERS_UPTO] = {0};
  int rank[64], *order = hp__calloc((size_t)s->ng + 1, sizeof *order);
  int *rm = hp__calloc((size_t)s->ng + 1, sizeof *rm);
  hp_err err = HP_OK;
  if (!order || !rm) err = hp_fail(d, HP_NOMEM, "out of memory");
  if (T > 64) T = 64;
  for (int i = 0; i < T && T <= DESCENT_ORDERS_UPTO; i++) perm[i] = i;
  for (int i = 0, k = 0; !err && i < T && !hp__stop_now(s->lim->stop, s->deadline); k++) {
    if (T > DESCENT_ORDERS_UPTO) {    /* the types' order and its reverse */
      if (k == 2) break;
      for (int j = 0; j < T; j++) rank[j] = k ? T - 1 - j : j;
    } else {
      if (k > 0) {                    /* the next order: Heap's algorithm */
        if (c[i] >= i) { c[i++] = 0; k--; continue; }
        int j = i % 2 ? c[i] : 0, x = perm[j];
        perm[j] = perm[i];
        perm[i] = x;
        c[i]++;
        i = 0;
      }
      for (int j = 0; j < T; j++) rank[perm[j]] = j;
    }
    class_order(s, rank, T, order);
    replica_major(s, order, rm);
    for (int v = 0; v < DESCENT_STARTS - 1 && !err; v++) {
      const int *o = v ? rm : order;
      double x;
      if (!(err = cost(s, o, INFINITY, *best, out, &x, d)) && x < t[v]) {
        t[v] = x;
        memcpy(start[v], o, (size_t)s->ng * sizeof *o);
      }
      if (x < *best) *best = x;
    }
  }
  free(order);
  free(rm);
  return err;
}

/* cur with its stages a .. a+k-1 (their groups) moved to start at stage b, the others
 * keeping their order: into out (the first pp dp slots). */
static void move_block(const int *cur, int *out, int a, int k, int b, int pp, int dp)
{
  int n = 0;
  for (int x = 0; x < pp; x++) {
    if (x >= a && x < a + k) continue;
    if (n == b) n += k;
    memcpy(out + (size_t)n * dp, cur + (size_t)x * dp, (size_t)dp * sizeof *cur);
    n++;
  }
  memcpy(out + (size_t)b * dp, cur + (size_t)a * dp, (size_t)k * dp * sizeof *cur);
}

/* The end of the run of stages from s0 whose groups are all of one type (s0 + 1 at least):
 * a run of one type is what the placement can lay stage by stage or replica by replica. */
static int run_end(const descent *s, const int *cur, int s0)
{
  int pp = s->c->pp, dp = s->c->dp, ty = s->type[cur[s0 * dp]], e;
  for (e = s0; e < pp; e++) {
    int same = 1;
    for (int r = 0; r < dp; r++) same &= s->type[cur[e * dp + r]] == ty;
    if (!same) break;
  }
  return e > s0 ? e : s0 + 1;
}

/* cur with the groups of stages s0 .. s0+m-1 laid again: in device order, in blocks of q
 * stages (q >= m: the whole run) each replica by replica, so that consecutive groups (one
 * node's) serve one replica's consecutive stages; q = 1 lays them stage by stage (a
 * stage's groups on one node where it holds them). Into out (all ng entries); sorted is
 * scratch of m dp entries. */
static void relay_run(const descent *s, const int *cur, int *out, int *sorted, int s0, int m,
                      int q)
{
  int dp = s->c->dp, n = m * dp, *g = out + (size_t)s0 * dp;
  memcpy(out, cur, (size_t)s->ng * sizeof *cur);
  for (int i = 0; i < n; i++) {        /* insertion sort by first device */
    int x = g[i], j = i;
    for (; j > 0 && s->first[sorted[j - 1]] > s->first[x]; j--) sorted[j] = sorted[j - 1];
    sorted[j] = x;
  }
  for (int b0 = 0; b0 < m; b0 += q) {
    int qq = q < m - b0 ? q : m - b0;
    for (int j = 0; j < qq * dp; j++) g[(b0 + j % qq) * dp + j / qq] = sorted[b0 * dp + j];
  }
}

/* The placement cand scored (the layer DP's split, the evaluator): kept in bm where it is
 * below *bt, which then takes its time. */
static hp_err keep_best(descent *s, const int *cand, double t, double best, double *bt, int *bm,
                        hp_result *out, hp_diag *d)
{
  double ct;
  hp_err err = cost(s, cand, t * DESCENT_REACH, fmin(best, *bt), out, &ct, d);
  if (!err && ct < *bt) {
    *bt = ct;
    memcpy(bm, cand, (size_t)s->ng * sizeof *cand);
  }
  return err;
}

/* One pass of the stage moves from cur (time *t): every block of stages moved (pp <=
 * DESCENT_BLOCK_PP) and every run of one type laid again, the best of them taken where it
 * lowers *t (*improved then 1). buf: 3 ng entries of scratch. */
static hp_err stage_moves(descent *s, int *cur, double *t, double *best, int *buf, int *stop,
                          int *improved, hp_result *out, hp_diag *d)
{
  int dp = s->c->dp, pp = s->c->pp, *tmp = buf, *bm = buf + s->ng, *scratch = buf + 2 * s->ng;
  double bt = *t * (1 - 1e-9);
  hp_err err = HP_OK;
  for (int a = 0; a < pp && pp <= DESCENT_BLOCK_PP && !err && !*stop; a++)
    for (int k = 1; a + k <= pp && !err && !*stop; k++)
      for (int b = 0; b + k <= pp && !err && !*stop; b++) {
        if (b == a || (*stop = hp__stop_now(s->lim->stop, s->deadline))) continue;
        memcpy(tmp, cur, (size_t)s->ng * sizeof *cur);
        move_block(cur, tmp, a, k, b, pp, dp);
        err = keep_best(s, tmp, *t, *best, &bt, bm, out, d);
      }
  for (int s0 = 0, e; s0 < pp && !err && !*stop; s0 = e) {
    int m, qs[3] = { 1, 2, 0 };        /* stage by stage, in pairs, whole runs */
    e = run_end(s, cur, s0);
    qs[2] = m = e - s0;
    for (int v = 0; v < 3 && m > 1 && !err && !*stop; v++) {
      if ((v == 1 && qs[1] >= m) || (*stop = hp__stop_now(s->lim->stop, s->deadline))) continue;
      relay_run(s, cur, tmp, scratch, s0, m, qs[v]);
      if (memcmp(tmp, cur, (size_t)s->slots * sizeof *cur))
        err = keep_best(s, tmp, *t, *best, &bt, bm, out, d);
    }
  }
  if (!err && bt < *t * (1 - 1e-9)) {
    *t = bt;
    if (bt < *best) *best = bt;
    *improved = 1;
    memcpy(cur, bm, (size_t)s->ng * sizeof *cur);
  }
  return err;
}

/* --- Laying one node class again, every way. Where the stage moves and the swaps improve
 * nothing, the placement may still be far from the best: the time is a maximum over
 * periods and over reductions, so a better arrangement of one class's groups can need
 * several swaps at once, each alone worse or no better. On the three-kind 48-GPU bench row
 * (3 x 8 H100, 2 x 8 A100, 2 x 4 L4; GPT 1.1B, pp 12 tp 2 dp 2 mbs 1) the descent stopped at
 * 0.772674 s with its six H100 stages in pairs on nodes; the best of the 5775 arrangements
 * of the twelve H100 groups over the three nodes (up to the nodes' order) gives 0.747475 s,
 * each replica's first stages on one node and its last on another (all their hand-offs but
 * one inside a node, the reductions slower). So, for an exact node class (hp_classes: its nodes
 * interchangeable) of two nodes or more, each holding the same number of groups, every
 * partition of the positions its groups hold (the plan's slots, and unused groups) among
 * its nodes is tried, up to the nodes' order and the order within a node, where there are
 * at most DESCENT_RELAY_MAX, and the best kept where it lowers the time. */
#define DESCENT_RELAY_MAX 8000
#define DESCENT_RELAY_NODES 64   /* a class of more nodes is not laid again */

typedef struct relay {
  descent *s;
  const int *cur;
  int *cand, *bm;          /* [ng] the arrangement tried, the best one */
  int K, G, u, n_idle;     /* nodes, groups a node, used positions, unused ones */
  const int *pos;          /* [u + n_idle] the positions, used first */
  const int *grp;          /* [K][G] each node's groups, by first device */
  int *blk, *fill;         /* [u] the node of each used position, [K] the fill of each */
  int counting;            /* 1: count the arrangements (up to cap + 1) and try none */
  long count, cap;
  double t, best, bt;
  int stop;
  hp_result *out;
  hp_diag *d;
} relay;

static hp_err relay_visit(relay *x)
{
  int at[DESCENT_RELAY_NODES];
  if (x->counting) {
    if (++x->count > x->cap) x->stop = 1;
    return HP_OK;
  }
  if ((x->stop = hp__stop_now(x->s->lim->stop, x->s->deadline))) return HP_OK;
  memcpy(x->cand, x->cur, (size_t)x->s->ng * sizeof *x->cand);
  for (int b = 0; b < x->K; b++) at[b] = 0;
  for (int i = 0; i < x->u; i++) {
    int b = x->blk[i];
    x->cand[x->pos[i]] = x->grp[b * x->G + at[b]++];
  }
  for (int i = 0, b = 0; i < x->n_idle; i++) {   /* the unused positions: the rest */
    while (at[b] == x->G) b++;
    x->cand[x->pos[x->u + i]] = x->grp[b * x->G + at[b]++];
  }
  return keep_best(x->s, x->cand, x->t, x->best, &x->bt, x->bm, x->out, x->d);
}

/* Used position i and on to a node each: to one already holding some with room, or to the
 * first empty one (each partition once, whatever the nodes' order). */
static hp_err relay_rec(relay *x, int i, int opened)
{
  hp_err err = HP_OK;
  if (i == x->u) return relay_visit(x);
  for (int b = 0; b < opened + (opened < x->K) && !err && !x->stop; b++) {
    if (x->fill[b] == x->G) continue;
    x->blk[i] = b;
    x->fill[b]++;
    err = relay_rec(x, i + 1, b == opened ? opened + 1 : opened);
    x->fill[b]--;
  }
  return err;
}

/* Node class k of cl laid again every way (above) from cur (time *t); cur and *t take the
 * best where it improves (*improved then 1). buf: 3 ng entries of scratch. */
static hp_err relay_class(descent *s, const hp_classes *cl, int k, int *cur, double *t,
                          double *best, int *buf, int *stop, int *improved, hp_result *out,
                          hp_diag *d)
{
  const hp_node_class *nc = &cl->cls[k];
  int K = nc->n_nodes, ng = s->ng, *pos = buf, *grp = buf + ng, *blk = buf + 2 * ng;
  int fill[DESCENT_RELAY_NODES] = {0}, G = -1, n = 0, u = 0;
  hp_err err = HP_OK;
  if (!nc->exact || K < 2 || K > DESCENT_RELAY_NODES) return HP_OK;
  for (int b = 0; b < K; b++) {        /* each node's groups, the same number of each */
    int m = 0;
    for (int g = 0; g < ng; g++)
      if (s->node[g] == nc->nodes[b]) m++;
    if (G >= 0 && m != G) return HP_OK;
    G = m;
  }
  if (G < 1) return HP_OK;
  for (int b = 0, m = 0; b < K; b++)
    for (int g = 0; g < ng; g++)       /* groups are listed by first device */
      if (s->node[g] == nc->nodes[b]) grp[m++] = g;
  for (int pass = 0; pass < 2; pass++) /* the used positions, then the unused */
    for (int i = 0; i < ng; i++)
      if (cl->node_class[s->node[cur[i]]] == k && (i < s->slots) == !pass) {
        pos[n++] = i;
        if (!pass) u++;
      }
  if (n != K * G || u == 0) return HP_OK;
  relay x = { s, cur, NULL, NULL, K, G, u, n - u, pos, grp, blk, fill, 1, 0, DESCENT_RELAY_MAX,
              *t, *best, *t * (1 - 1e-9), 0, out, d };
  relay_rec(&x, 0, 0);                 /* count first: past the cap, nothing is tried */
  if (x.stop) return HP_OK;
  /* nor where, at the descent's own pace so far, they would take more than half the time
   * left: a search gives its descents a window, and the other configurations' share it (the
   * five-kind 104-GPU row with Llama-2 7B: 5775 arrangements of its H100 groups at about a
   * millisecond each took the whole 60-s row's window, and its gap went from 6.77 % to 8.6 %) */
  if (isfinite(s->deadline) && s->evals > 0) {
    double now = hp__now();
    if ((now - s->t0) / (double)s->evals * (double)x.count > 0.5 * (s->deadline - now)) return HP_OK;
  }
  x.counting = 0;
  x.cand = hp__calloc(2 * (size_t)ng + 1, sizeof *x.cand);
  if (!x.cand) return hp_fail(d, HP_NOMEM, "out of memory");
  x.bm = x.cand + ng;
  err = relay_rec(&x, 0, 0);
  if (x.stop) *stop = 1;
  if (!err && x.bt < *t * (1 - 1e-9)) {
    *t = x.bt;
    if (x.bt < *best) *best = x.bt;
    *improved = 1;
    memcpy(cur, x.bm, (size_t)ng * sizeof *cur);
  }
  free(x.cand);
  return err;
}

/* Passes of the stage moves (the best of them) and the pair swaps (first improvement) from
 * cur (time *t) until a whole pass improves nothing, the deadline or a stop; cur and *t end
 * at the last improvement. With cl (not NULL), cur is where such passes ended: each node
 * class of cl is laid again every way (relay_class) first, and wherever that improves, the
 * passes go on, then the classes again. */
static hp_err descend(descent *s, const hp_classes *cl, int *cur, double *t, double *best,
                      hp_result *out, hp_diag *d)
{
  hp_err err = HP_OK;
  int dp = s->c->dp, stop = 0, moves = !cl;
  double ct;
  int *buf = hp__calloc(3 * (size_t)s->ng + 1, sizeof *buf);
  if (!buf) return hp_fail(d, HP_NOMEM, "out of memory");
  for (int improved = isfinite(*t); improved && !err && !stop; moves = 1) {
    improved = 0;
    if (moves) err = stage_moves(s, cur, t, best, buf, &stop, &improved, out, d);
    for (int a = 0; a < s->slots && moves && !err && !stop; a++)
      for (int b = a + 1; b < s->ng && !err && !stop; b++) {
        int ga = cur[a], gb = cur[b];
        if (b < s->slots && a / dp == b / dp) continue;                 /* one stage */
        if (s->type[ga] == s->type[gb] && s->node[ga] == s->node[gb]) continue;
        if ((stop = hp__stop_now(s->lim->stop, s->deadline))) break;
        cur[a] = gb;
        cur[b] = ga;
        if ((err = cost(s, cur, *t * DESCENT_REACH, fmin(*best, *t * (1 - 1e-9)), out, &ct, d)))
          break;
        if (ct < *t * (1 - 1e-9)) {
          *t = ct;
          if (ct < *best) *best = ct;
          improved = 1;
        } else {
          cur[a] = ga;
          cur[b] = gb;
        }
      }
    /* where neither kind of move improves, each node class laid again every way */
    for (int k = 0; cl && k < cl->n && !improved && !err && !stop; k++)
      err = relay_class(s, cl, k, cur, t, best, buf, &stop, &improved, out, d);
  }
  free(buf);
  return err;
}

hp_err hp__descend_config(const hp_problem *p, const hp_config *c, const hp_plan *start,
                          const hp_limits *lim, double deadline, hp_result *out, long *evals,
                          hp_diag *d)
{
  descent s = { p, c, lim, deadline, 0, c->pp * c->dp, NULL, NULL, NULL, 0, hp__now() };
  hp_classes cl = {0};
  int D = p->cluster->n_devices, *st[DESCENT_STARTS] = { NULL };
  double t[DESCENT_STARTS], best = INFINITY;
  hp_err err = HP_OK;
  int ok = 1, given;
  s.first = hp__calloc((size_t)D + 1, sizeof *s.first);
  s.type = hp__calloc((size_t)D + 1, sizeof *s.type);
  s.node = hp__calloc((size_t)D + 1, sizeof *s.node);
  for (int k = 0; k < DESCENT_STARTS; k++) {
    t[k] = INFINITY;
    ok &= (st[k] = hp__calloc((size_t)D + 1, sizeof *st[k])) != NULL;
  }
  if (!s.first || !s.type || !s.node || !ok) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  s.ng = list_groups(&s);
  if (s.ng < s.slots) goto done;      /* no placement (hp__configs_cert lists none such) */
  /* the last start: the given plan's placement, read before anything is offered (start may
   * be out's own plan, which an offer frees) */
  given = start && start->pp == c->pp && start->tp == c->tp && start->dp == c->dp &&
          start->mbs == c->mbs && order_of(&s, start, st[DESCENT_STARTS - 1]);
  start = NULL;
  /* the given plan first: where a search calls with its incumbent, the likeliest to lead
   * to a better plan (and a short share may allow no other) */
  if (given) {
    int g = DESCENT_STARTS - 1;
    if ((err = cost(&s, st[g], INFINITY, best, out, &t[g], d))) goto done;
    if (isfinite(t[g])) {
      best = t[g];
      if ((err = descend(&s, NULL, st[g], &t[g], &best, out, d))) goto done;
    }
  }
  if ((err = class_orders(&s, st, t, &best, out, d))) goto done;
  for (int k = 0; k < DESCENT_STARTS - 1 && !err; k++) {
    int seen = 0;
    for (int j = 0; j < k; j++) seen |= !memcmp(st[j], st[k], (size_t)s.ng * sizeof *st[k]);
    if (seen || !isfinite(t[k])) continue;
    if (t[k] < best) best = t[k];
    err = descend(&s, NULL, st[k], &t[k], &best, out, d);
  }
  /* the classes laid again every way once, from the best end of the starts: at every end
   * it took the time of the later starts (the five-kind 104-GPU row with Llama-2 7B at
   * 60 s: an incumbent of 19.83 s against 19.39) */
  int kb = -1;
  for (int k = 0; k < DESCENT_STARTS; k++)
    if (isfinite(t[k]) && (kb < 0 || t[k] < t[kb])) kb = k;
  if (!err && kb >= 0 && !(err = hp_classes_build(p, INT_MAX, &cl, d)))   /* exact classes */
    err = descend(&s, &cl, st[kb], &t[kb], &best, out, d);
done:
  if (evals) *evals += s.evals;
  hp_classes_release(&cl);
  free(s.first);
  free(s.type);
  free(s.node);
  for (int k = 0; k < DESCENT_STARTS; k++) free(st[k]);
  return err;
}
