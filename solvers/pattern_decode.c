/* pattern_decode.c -- a real plan from a pattern sequence: how many TP groups of each
 * class every stage takes, which groups, and the layer split. Counts follow the kinds
 * (a single-class stage takes dp groups of its class, a mixed stage one of each class
 * and the rest from its classes with the most groups left); where a priced (Lagrangian)
 * sequence asks more of a class than it has, other classes fill in, so the plan is always
 * a plan. Where the plan uses fewer groups than the classes hold (idle devices, allowed
 * only when the job's idle_devices is: the configurations of hp__configs_cert), the rest
 * go to the class fastest for the stage's layers, so the groups left idle are the slow
 * ones, and no group is taken on a node whose GPU count tp does not divide. A single-node
 * stage takes the node of its class that fits it most tightly; a stage that spans nodes
 * takes whole nodes first, so that few replica groups share a node's network. Where some
 * stage spans nodes of one class, a second placement spreads such stages over two nodes,
 * two in a row of one class as a couple (place()); where some stage is of one class, a
 * third has each replica follow its own groups from stage to stage (follow()), so that
 * the replicas of a run of stages on a few nodes take turns to cross between them; the
 * fastest of the plans is kept. A stage's groups go to replicas fastest first to the
 * replica whose pipeline time so far is largest, so that the slow groups of mixed stages
 * fall on different replicas (the bound assumes the replica with a stage's slowest slot
 * is fast elsewhere). The layer DP then splits the layers exactly for each placement. A
 * pattern program's solution decodes the same way (hp_mip_decode_pattern_plan, hp_mip.h:
 * its counts are taken as they are), for the certificate and for `hetplan decode`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

/* Class c's time for stage s's layers in the sequence (before recompute). */
static double stage_time(const hp_patterns *pt, const hp_pat_result *r, int s, int c)
{
  double t = 0;
  for (int l = r->first[s]; l < r->first[s + 1] && l < pt->tab.n_layers; l++)
    t += hp_costs_time(&pt->tab, c, l);
  return t;
}

/* Whether class c is a better pick than `best` (-1: none yet) for stage s's next group:
 * with every group used, the class with the most left (they must all go somewhere);
 * with groups to spare (idle devices), the fastest for the stage's layers, so that the
 * groups left idle are the slow ones. */
static int better(const hp_patterns *pt, const hp_pat_result *r, int s, const int *left, int spare,
                  int c, int best)
{
  if (best < 0) return 1;
  if (spare) {
    double tc = stage_time(pt, r, s, c), tb = stage_time(pt, r, s, best);
    if (tc != tb) return tc < tb;
  }
  return left[c] > left[best];
}

/* Counts per stage and class, n[s * C + c], summing to dp per stage and, over the stages,
 * to the class's groups (at most, with groups to spare: idle devices). */
static void counts(const hp_patterns *pt, const hp_pat_result *r, int pp, int dp, int *n)
{
  int C = pt->n_cls, *left = hp__calloc((size_t)C, sizeof *left);
  long supply = 0;
  if (!left) return;
  for (int c = 0; c < C; c++) left[c] = pt->groups[c];
  for (int c = 0; c < C; c++) supply += pt->groups[c];
  int spare = supply > (long)pp * dp;
  memset(n, 0, (size_t)pp * C * sizeof *n);
  for (int s = 0; s < pp; s++) {            /* each stage's minimum */
    const hp_stage_kind *k = &pt->kind[r->kind[s]];
    int one = __builtin_popcount(k->mask) == 1;
    for (int c = 0; c < C; c++)
      if (k->mask >> c & 1) {
        int want = one ? dp : 1, take = want < left[c] ? want : left[c];
        n[s * C + c] = take;
        left[c] -= take;
      }
  }
  for (int pass = 0; pass < 2; pass++)      /* the rest: the stage's classes, then any */
    for (int s = 0; s < pp; s++) {
      unsigned mask = pass ? ~0u : pt->kind[r->kind[s]].mask;
      int have = 0;
      for (int c = 0; c < C; c++) have += n[s * C + c];
      while (have < dp) {
        int best = -1;
        for (int c = 0; c < C; c++)
          if ((mask >> c & 1) && left[c] > 0 && better(pt, r, s, left, spare, c, best)) best = c;
        if (best < 0) break;
        n[s * C + best]++;
        left[best]--;
        have++;
      }
    }
  free(left);
}

/* Reorders stage s's groups over the replicas: the fastest group (by its class's time
 * for the stage's layers in the sequence) to the replica with the largest pipeline time
 * so far ((gas-1) max + sum, load[2 r] = max, load[2 r + 1] = sum), and so on. */
static void balance(const hp_patterns *pt, const hp_pat_result *r, int s, int dp, int *slot_node,
                    int *slot_off, const hp_cluster *cl, const hp_classes *cs, double *load)
{
  int base = s * dp, L = pt->tab.n_layers;
  long gas = pt->tab.gas;
  double t[64];
  int node[64], off[64], by[64], rep[64];
  if (dp > 64) return;                    /* large replica counts: keep the order taken */
  for (int i = 0; i < dp; i++) {
    int c = cs->node_class[slot_node[base + i]];
    t[i] = 0;
    for (int l = r->first[s]; l < r->first[s + 1] && l < L; l++) t[i] += hp_costs_time(&pt->tab, c, l);
    node[i] = slot_node[base + i];
    off[i] = slot_off[base + i];
    by[i] = rep[i] = i;
  }
  (void)cl;
  for (int a = 1; a < dp; a++)            /* groups fastest first */
    for (int b = a; b > 0 && t[by[b]] < t[by[b - 1]]; b--) { int x = by[b]; by[b] = by[b - 1]; by[b - 1] = x; }
  for (int a = 1; a < dp; a++)            /* replicas by pipeline time so far, largest first */
    for (int b = a; b > 0; b--) {
      double vb = (gas - 1) * load[2 * rep[b]] + load[2 * rep[b] + 1];
      double va = (gas - 1) * load[2 * rep[b - 1]] + load[2 * rep[b - 1] + 1];
      if (vb <= va) break;
      int x = rep[b]; rep[b] = rep[b - 1]; rep[b - 1] = x;
    }
  for (int i = 0; i < dp; i++) {
    int g = by[i], q = rep[i];
    slot_node[base + q] = node[g];
    slot_off[base + q] = off[g];
    if (t[g] > load[2 * q]) load[2 * q] = t[g];
    load[2 * q + 1] += t[g];
  }
}

/* The plan made to follow the job's sharding rules (cost-model.md 5, 7.12): the pattern
 * searches shard with zdp only where the job lists it (pattern_dp.c, mip_pattern.c, and
 * the layer DP is told below), but they mix dp and zdp layers, which a job with
 * uniform_sharding forbids. Such a plan is replaced by the fastest of its one-mode forms
 * the job allows and that fit; none: *found = 0. The bound is unaffected
 * (uniform plans are a part of the mixed ones the searches relax). */
static void conform(const hp_problem *p, hp_plan *pl, int *found)
{
  unsigned allowed = hp_job_modes(&p->job);
  int L = pl->n_layers, mixed = 0;
  for (int l = 0; l < L; l++) mixed |= pl->mode[l] != pl->mode[0];
  if (!*found || !p->job.uniform_sharding || !mixed) return;
  unsigned char *keep = hp__calloc((size_t)L, 1);
  double best = INFINITY;
  int pick = -1;
  if (!keep) { *found = 0; return; }
  memcpy(keep, pl->mode, (size_t)L);
  for (int mode = HP_SHARD_DP; mode < HP_N_SHARD; mode++) {
    hp_eval e = {0};
    if (!(allowed >> mode & 1)) continue;
    memset(pl->mode, mode, (size_t)L);
    if (hp_evaluate(p, pl, &e, NULL) == HP_OK && e.feasible && e.iteration_time < best) {
      best = e.iteration_time;
      pick = mode;
    }
    hp_eval_release(&e);
  }
  if (pick >= 0) memset(pl->mode, pick, (size_t)L);
  else memcpy(pl->mode, keep, (size_t)L);
  *found = pick >= 0;
  free(keep);
}

/* TP groups still free on node nd: none on a node whose GPU count tp does not divide (a
 * plan may not use it, cost-model.md 5; only under idle devices is there such a node). */
static int free_groups(const hp_cluster *cl, int nd, int tp, const int *used)
{
  return cl->nodes[nd].gpus % tp ? 0 : cl->nodes[nd].gpus / tp - used[nd];
}

/* Whether stage s's groups are all of one class and span nodes (not a single-node kind). */
static int spans_one(const hp_patterns *pt, const hp_pat_result *r, const int *n, int s)
{
  int C = pt->n_cls, classes = 0;
  for (int c = 0; c < C; c++) classes += n[s * C + c] > 0;
  return classes == 1 && !pt->kind[r->kind[s]].single;
}

/* Stage s's groups (all of one class, equally fast) to its replicas so that each replica
 * keeps the node of its group in stage s - 1 where one is left there: its hand-off stays
 * inside the node. The loads balance() added are unchanged (every group as fast). */
static void align(int s, int dp, int *slot_node, int *slot_off)
{
  int node[64], off[64], taken[64] = {0}, got[64] = {0}, base = s * dp, prev = base - dp;
  if (dp > 64 || s == 0) return;
  for (int i = 0; i < dp; i++) { node[i] = slot_node[base + i]; off[i] = slot_off[base + i]; }
  for (int q = 0; q < dp; q++)
    for (int g = 0; g < dp; g++)
      if (!taken[g] && node[g] == slot_node[prev + q]) {
        slot_node[base + q] = node[g];
        slot_off[base + q] = off[g];
        taken[g] = got[q] = 1;
        break;
      }
  for (int q = 0, g = 0; q < dp; q++) {
    if (got[q]) continue;
    while (taken[g]) g++;
    slot_node[base + q] = node[g];
    slot_off[base + q] = off[g];
    taken[g] = 1;
  }
}

/* Stage s's groups, all dp of class c, each replica following its own group of stage
 * s - 1 (the `follow` placement), the replicas that crossed between nodes into stage s - 1
 * first (so that a replica crosses at one boundary of a stage, not both, where it can): a
 * single-node stage on the node with room for dp groups where most replicas' groups of
 * stage s - 1 lie (ties: more of those that crossed in, then the tightest fit); a stage
 * that spans nodes puts each replica on the node of its group of stage s - 1 while it has
 * room and holds at most half the stage's groups (rounded up: the stage still spans
 * nodes), the rest on nodes the stage does not use yet first, the most free first (so
 * that two replicas that cross share no interface while a node is free). On three nodes
 * of four groups, dp 2, the pattern DP's run "spanning, one node, spanning, one node,
 * spanning" so has one replica cross at each boundary, the two in turn. 0 if the class
 * has too few free groups. */
static int follow(const hp_cluster *cl, const hp_classes *cs, int c, int single, int s, int dp,
                  int tp, int *used, int *slot_node, int *slot_off)
{
  const hp_node_class *nc = &cs->cls[c];
  int base = s * dp, prev = base - dp, in_x[64] = {0};
  if (dp > 64) return 0;
  for (int q = 0; q < dp && s > 1; q++)         /* crossed into stage s - 1 */
    in_x[q] = slot_node[prev - dp + q] != slot_node[prev + q];
  if (single) {
    int best = -1, best_on = -1;
    for (int i = 0; i < nc->n_nodes; i++) {
      int nd = nc->nodes[i], fr = free_groups(cl, nd, tp, used), on = 0;
      if (fr < dp) continue;
      /* most replicas staying, those that crossed in before first (a replica crosses at
       * most one of its stage's boundaries where it can) */
      for (int q = 0; q < dp && s > 0; q++) on += slot_node[prev + q] == nd ? dp + in_x[q] : 0;
      if (best < 0 || on > best_on || (on == best_on && fr < free_groups(cl, best, tp, used))) {
        best = nd;
        best_on = on;
      }
    }
    if (best >= 0) {
      for (int q = 0; q < dp; q++) {
        slot_node[base + q] = best;
        slot_off[base + q] = used[best]++;
      }
      return 1;
    }
  }
  int placed[64] = {0}, stage_on[64], n_on = 0, cap = (dp + 1) / 2;
  for (int k = 0; k < 2 * dp && s > 0; k++) {  /* where it was, while there is room: */
    int q = k % dp, nd = slot_node[prev + q], here = 0;
    if (placed[q] || (k < dp) != in_x[q]) continue;   /* those that crossed in first */
    for (int j = 0; j < n_on; j++) here += stage_on[j] == nd;
    if (cs->node_class[nd] != c || free_groups(cl, nd, tp, used) <= 0 || here >= cap) continue;
    slot_node[base + q] = nd;
    slot_off[base + q] = used[nd]++;
    placed[q] = 1;
    stage_on[n_on++] = nd;
  }
  for (int q = 0; q < dp; q++) {               /* the rest: a fresh node first, most free */
    if (placed[q]) continue;
    int best = -1, best_fresh = 0;
    for (int i = 0; i < nc->n_nodes; i++) {
      int nd = nc->nodes[i], fr = free_groups(cl, nd, tp, used), fresh = 1;
      if (fr <= 0) continue;
      for (int j = 0; j < n_on; j++) fresh &= stage_on[j] != nd;
      if (best < 0 || fresh > best_fresh || (fresh == best_fresh && fr > free_groups(cl, best, tp, used))) {
        best = nd;
        best_fresh = fresh;
      }
    }
    if (best < 0) return 0;
    slot_node[base + q] = best;
    slot_off[base + q] = used[best]++;
    stage_on[n_on++] = best;
  }
  return 1;
}

/* The nodes of stage s's groups for the counts n: a single-node stage on the node of its
 * class that fits it most tightly; else whole nodes first, the most free, so that few
 * replica groups share a node's network. With `spread` 2, a stage of one class follows
 * (follow()), the others as without. With `spread` 1, a stage that spans nodes of one
 * class instead takes the nodes and counts of the stage before where that stage spans the
 * same class and they have room (the two a *couple*: every replica's hand-off between them
 * stays inside a node), else half its groups (rounded up) from the node with the most
 * free and the rest from others, the most free first; its replicas keep their nodes
 * (align). All place every group; the caller decodes each and keeps the fastest plan. */
static hp_err place(const hp_cluster *cl, const hp_patterns *pt, const hp_pat_result *r,
                    const int *n, int spread, int pp, int dp, int tp, int *used,
                    int *slot_node, int *slot_off, double *load, int *couples, hp_diag *d)
{
  const hp_classes *cs = pt->cls;
  int C = pt->n_cls;
  *couples = 0;
  memset(used, 0, (size_t)cl->n_nodes * sizeof *used);
  memset(load, 0, (size_t)dp * 2 * sizeof *load);
  for (int s = 0; s < pp; s++) {
    int r0 = 0, classes = 0, couple = 0;
    for (int c = 0; c < C; c++) classes += n[s * C + c] > 0;
    if (spread == 2 && classes == 1) {              /* follow: each replica its own way */
      int c = 0;
      while (n[s * C + c] == 0) c++;
      if (!follow(cl, cs, c, pt->kind[r->kind[s]].single, s, dp, tp, used, slot_node, slot_off))
        return hp_fail(d, HP_INTERNAL, "pattern decode: class %d has too few groups", c);
      double t = stage_time(pt, r, s, c);      /* the loads balance() reads */
      for (int q = 0; q < dp; q++) {
        if (t > load[2 * q]) load[2 * q] = t;
        load[2 * q + 1] += t;
      }
      continue;
    }
    if (spread == 1 && s > 0 && spans_one(pt, r, n, s) && spans_one(pt, r, n, s - 1) &&
        memcmp(&n[s * C], &n[(s - 1) * C], (size_t)C * sizeof *n) == 0) {
      couple = 1;                               /* the nodes of the stage before, if room */
      for (int q = 0; q < dp && couple; q++) {
        int nd = slot_node[(s - 1) * dp + q], k = 0;
        for (int q2 = 0; q2 < dp; q2++) k += slot_node[(s - 1) * dp + q2] == nd;
        couple = free_groups(cl, nd, tp, used) >= k;
      }
      *couples += couple;
      for (int q = 0; q < dp && couple; q++, r0++) {
        int nd = slot_node[(s - 1) * dp + q];
        slot_node[s * dp + r0] = nd;
        slot_off[s * dp + r0] = used[nd]++;
      }
    }
    for (int c = 0; c < C && !couple; c++) {
      int need = n[s * C + c];
      const hp_node_class *nc = &cs->cls[c];
      if (need == 0) continue;
      if (classes == 1 && pt->kind[r->kind[s]].single) {   /* one node, the tightest fit */
        int best = -1;
        for (int i = 0; i < nc->n_nodes; i++) {
          int nd = nc->nodes[i], fr = free_groups(cl, nd, tp, used);
          if (fr >= need && (best < 0 || fr < free_groups(cl, best, tp, used))) best = nd;
        }
        if (best >= 0) {
          for (int q = 0; q < need; q++, r0++) {
            slot_node[s * dp + r0] = best;
            slot_off[s * dp + r0] = used[best]++;
          }
          continue;
        }
      }
      /* spread: at most half the groups (rounded up) from the first node, the rest from
       * others where they have room; without it, as many as a node has */
      int halve = spread && classes == 1, first = -1;
      for (int part = 0; need > 0; part++) {    /* the most free first */
        int best = -1;
        for (int pass = 0; pass < 2 && best < 0; pass++)
          for (int i = 0; i < nc->n_nodes; i++) {
            int nd = nc->nodes[i], fr = free_groups(cl, nd, tp, used);
            if (fr > 0 && (pass || nd != first) && (best < 0 || fr > free_groups(cl, best, tp, used))) best = nd;
          }
        if (best < 0) return hp_fail(d, HP_INTERNAL, "pattern decode: class %d has too few groups", c);
        if (part == 0) first = best;
        int most = halve && part == 0 && need > 1 ? (need + 1) / 2 : need;
        for (int fr = free_groups(cl, best, tp, used); fr > 0 && need > 0 && most > 0; fr--, need--, most--, r0++) {
          slot_node[s * dp + r0] = best;
          slot_off[s * dp + r0] = used[best]++;
        }
      }
    }
    if (r0 != dp) return hp_fail(d, HP_INTERNAL, "pattern decode: stage %d has %d of %d groups", s, r0, dp);
    balance(pt, r, s, dp, slot_node, slot_off, cl, cs, load);
    if (spread == 1 && classes == 1) align(s, dp, slot_node, slot_off);
  }
  return HP_OK;
}

/* The plan of one placement: the layer DP's split (exact where the replicas of a stage are
 * alike), or the sequence's own split and recompute flags where that is faster, made to
 * follow the job's sharding rules; *time its iteration time (INFINITY: none found). */
static hp_err finish(const hp_problem *p, const hp_pat_result *r, const int *slot_node,
                     const int *slot_off, double deadline, const volatile sig_atomic_t *stop,
                     hp_plan *pl, int *found, double *time, hp_diag *d)
{
  const hp_cluster *cl = p->cluster;
  int pp = pl->pp, dp = pl->dp, tp = pl->tp;
  hp_plan *own = NULL;
  hp_dp_opts o;
  double obj;
  hp_err err;
  *found = 0;
  *time = INFINITY;
  for (int i = 0; i < pp * dp; i++)
    for (int j = 0; j < tp; j++)
      pl->dev[(size_t)i * tp + j] = cl->nodes[slot_node[i]].first + slot_off[i] * tp + j;
  if ((err = hp_plan_copy(&own, pl, d))) return err;
  memcpy(own->first, r->first, (size_t)(pp + 1) * sizeof *own->first);
  memcpy(own->recompute, r->rec, (size_t)pp);
  if (r->zdp)
    for (int l = 0; l < pl->n_layers; l++) own->mode[l] = r->zdp[l] ? HP_SHARD_ZDP : HP_SHARD_DP;
  else memset(own->mode, 0, (size_t)pl->n_layers);
  hp__dp_opts_init(&o);
  /* every mode of the job's list, per stage (the pattern DP's bound covers them all) */
  o.modes = hp_job_modes(&p->job);
  o.deadline = deadline;
  o.stop = stop;
  o.max_frontier = HP_DP_HEURISTIC_FRONTIER;
  if (!(err = hp__dp_split(p, pl, &o, found, &obj, NULL, d))) {
    hp_eval a = {0}, b = {0};
    int fa = *found && hp_evaluate(p, pl, &a, NULL) == HP_OK && a.feasible;
    int fb = hp_evaluate(p, own, &b, NULL) == HP_OK && b.feasible;
    if (fb && (!fa || b.iteration_time < a.iteration_time)) {
      memcpy(pl->first, own->first, (size_t)(pp + 1) * sizeof *pl->first);
      memcpy(pl->recompute, own->recompute, (size_t)pp);
      memcpy(pl->mode, own->mode, (size_t)pl->n_layers);
      *found = 1;
    }
    hp_eval_release(&a);
    hp_eval_release(&b);
    conform(p, pl, found);
    if (*found && hp_evaluate(p, pl, &a, NULL) == HP_OK && a.feasible) *time = a.iteration_time;
    hp_eval_release(&a);
  }
  hp_plan_destroy(&own);
  return err;
}

static int by_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Whether placement b puts as many of each stage's groups on every node as a does; a is
 * sorted in place, b copied into tmp ([dp]) stage by stage. */
static int same_nodes(int *a, const int *b, int *tmp, int pp, int dp)
{
  for (int s = 0; s < pp; s++) {
    memcpy(tmp, b + (size_t)s * dp, (size_t)dp * sizeof *tmp);
    qsort(a + (size_t)s * dp, (size_t)dp, sizeof *a, by_int);
    qsort(tmp, (size_t)dp, sizeof *tmp, by_int);
    if (memcmp(a + (size_t)s * dp, tmp, (size_t)dp * sizeof *a)) return 0;
  }
  return 1;
}

hp_err hp__pattern_plan(const hp_problem *p, const hp_patterns *pt, const hp_pat_result *r,
                        double deadline, const volatile sig_atomic_t *stop, hp_plan *pl,
                        int *found, hp_diag *d)
{
  const hp_cluster *cl = p->cluster;
  int pp = pl->pp, dp = pl->dp, tp = pl->tp, C = pt->n_cls, nn = cl->n_nodes, spreads = 0, ones = 0;
  int *n = hp__calloc((size_t)pp * C, sizeof *n), *used = hp__calloc((size_t)nn, sizeof *used);
  int *slot_node = hp__calloc((size_t)pp * dp, sizeof *slot_node);
  int *slot_off = hp__calloc((size_t)pp * dp, sizeof *slot_off);
  /* the first placement's nodes, a copy to sort and dp to sort in (same_nodes) */
  int *node0 = hp__calloc((size_t)(2 * pp + 1) * dp, sizeof *node0), couples;
  double *load = hp__calloc((size_t)dp * 2, sizeof *load), t0, t1;
  hp_plan *alt = NULL;
  hp_err err = HP_OK;
  *found = 0;
  if (!n || !used || !slot_node || !slot_off || !node0 || !load) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  if (!r->found) goto done;
  if (r->count) memcpy(n, r->count, (size_t)pp * C * sizeof *n);
  else counts(pt, r, pp, dp, n);
  if ((err = place(cl, pt, r, n, 0, pp, dp, tp, used, slot_node, slot_off, load, &couples, d)) ||
      (err = finish(p, r, slot_node, slot_off, deadline, stop, pl, found, &t0, d)))
    goto done;
  /* the spread placement too, where some stage spans nodes of one class (decoded whole
   * nodes first, such a stage may sit on one node, and two in a row never keep their
   * hand-offs inside nodes), and the follow placement where some stage is of one class:
   * the fastest plan. Where the spread puts every stage on the same nodes, as many groups
   * on each, and pairs no stages, it is the same plan but for which replica takes which
   * group: not decoded again (a layer DP saved) */
  for (int s = 0; s < pp; s++) {
    int classes = 0;
    for (int c = 0; c < C; c++) classes += n[s * C + c] > 0;
    spreads += spans_one(pt, r, n, s);
    ones += classes == 1;
  }
  if (dp < 2) goto done;
  memcpy(node0, slot_node, (size_t)pp * dp * sizeof *node0);
  for (int mode = 1; mode <= 2; mode++) {
    int found1 = 0;
    if (mode == 1 ? !spreads : !ones || dp > 64) continue;   /* follow() takes dp <= 64 */
    if ((err = place(cl, pt, r, n, mode, pp, dp, tp, used, slot_node, slot_off, load, &couples, d)))
      goto done;
    size_t np = (size_t)pp * dp;
    if (mode == 1 && !couples) {
      memcpy(node0 + np, node0, np * sizeof *node0);
      if (same_nodes(node0 + np, slot_node, node0 + 2 * np, pp, dp)) continue;
    }
    /* every replica's group on the node the first placement gave it: the same plan */
    if (mode == 2 && memcmp(node0, slot_node, np * sizeof *node0) == 0) continue;
    hp_plan_destroy(&alt);
    if ((err = hp_plan_copy(&alt, pl, d))) goto done;
    if ((err = finish(p, r, slot_node, slot_off, deadline, stop, alt, &found1, &t1, d))) goto done;
    if (found1 && isfinite(t1) && (!*found || t1 < t0)) {
      hp_plan_assign(pl, alt);
      *found = 1;
      t0 = t1;
    }
  }
done:
  hp_plan_destroy(&alt);
  free(node0);
  free(n);
  free(used);
  free(slot_node);
  free(slot_off);
  free(load);
  return err;
}

hp_err hp_mip_decode_pattern_plan(const hp_problem *p, const hp_patterns *pt,
                                  const hp_mip_pmap *map, const double *x, double seconds,
                                  hp_plan *pl, int *found, hp_diag *d)
{
  return hp__mip_decode_pattern_plan(p, pt, map, x, seconds, NULL, pl, found, d);
}

hp_err hp__mip_decode_pattern_plan(const hp_problem *p, const hp_patterns *pt,
                                   const hp_mip_pmap *map, const double *x, double seconds,
                                   const volatile sig_atomic_t *stop, hp_plan *pl, int *found,
                                   hp_diag *d)
{
  int pp = pl->pp, L = pl->n_layers, C = pt->n_cls;
  hp_pat_result r;
  hp_err err = HP_OK;
  *found = 0;
  memset(&r, 0, sizeof r);
  r.found = 1;
  r.first = hp__calloc((size_t)pp + 1, sizeof *r.first);
  r.kind = hp__calloc((size_t)pp, sizeof *r.kind);
  r.rec = hp__calloc((size_t)pp, 1);
  r.count = hp__calloc((size_t)pp * C, sizeof *r.count);
  r.zdp = hp__calloc((size_t)L, 1);
  if (!r.first || !r.kind || !r.rec || !r.count || !r.zdp) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  hp_mip_decode(&map->base, x, pl);
  memcpy(r.first, pl->first, (size_t)(pp + 1) * sizeof *r.first);
  memcpy(r.rec, pl->recompute, (size_t)pp);
  for (int l = 0; l < L; l++) r.zdp[l] = pl->mode[l] == HP_SHARD_ZDP;
  hp_mip_decode_pattern(map, x, r.kind, r.count);
  for (int s = 0; s < pp; s++) {            /* counts must be a placement's */
    int sum = 0;
    for (int c = 0; c < C; c++) sum += r.count[s * C + c];
    if (sum != pl->dp) {
      err = hp_fail(d, HP_PLAN, "stage %d takes %d TP groups, not dp = %d: the solution is "
                    "not one of this program", s, sum, pl->dp);
      goto done;
    }
  }
  err = hp__pattern_plan(p, pt, &r, isinf(seconds) ? INFINITY : hp__now() + seconds, stop, pl,
                         found, d);
done:
  hp__pat_result_release(&r);
  return err;
}
