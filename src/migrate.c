/* migrate.c -- the state a plan change moves (hp_migrate.h, docs/replan.md): each layer's
 * weights and optimizer state cut as exact integer intervals of [0, U), U a multiple of
 * both plans' tp * dp, so that every byte the new plan needs is either kept in place or
 * received from exactly one sender (a surviving device or a checkpoint). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef long long units;

const char *hp_move_kind_name(int kind)
{
  return kind == HP_MOVE_OPTIMIZER ? "optimizer" : "weights";
}

void hp_migration_release(hp_migration *m)
{
  if (!m) return;
  free(m->moves);
  free(m->send_seconds);
  free(m->recv_seconds);
  free(m->layer_need);
  free(m->layer_kept);
  free(m->layer_moved);
  memset(m, 0, sizeof *m);
}

int hp_device_map(const hp_cluster *old, const hp_cluster *now, int *old_to_new)
{
  int kept = 0;
  for (int dv = 0; dv < old->n_devices; dv++) old_to_new[dv] = -1;
  /* node names are unique in a cluster (the loader checks): a quadratic look-up over
   * nodes, not devices */
  for (int a = 0; a < old->n_nodes; a++) {
    const hp_node *na = &old->nodes[a];
    for (int b = 0; b < now->n_nodes; b++) {
      const hp_node *nb = &now->nodes[b];
      if (strcmp(na->name, nb->name)) continue;
      for (int g = 0; g < na->gpus && g < nb->gpus; g++) {
        old_to_new[na->first + g] = nb->first + g;
        kept++;
      }
      break;
    }
  }
  return kept;
}

void hp_plan_slot_index(const hp_plan *plan, int n_devices, int *slot_of)
{
  int n = plan->pp * plan->dp * plan->tp;
  for (int dv = 0; dv < n_devices; dv++) slot_of[dv] = -1;
  for (int q = 0; q < n; q++)
    if (plan->dev[q] >= 0 && plan->dev[q] < n_devices) slot_of[plan->dev[q]] = q;
}

static units gcd_u(units a, units b)
{
  while (b) {
    units t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Whether a part of layer l is sharded across the replicas (cost-model.md 2, 4): the
 * optimizer state under zero1, zero2 and zdp, the weights under zdp; never with dp = 1. */
static int part_sharded(const hp_plan *p, int l, int kind)
{
  int m = hp_plan_mode(p, l);
  if (kind == HP_MOVE_WEIGHTS) return m == HP_SHARD_ZDP;
  return m != HP_SHARD_DP;
}

/* The interval [*lo, *hi) of [0, U) that slot (r, j) of plan p holds of layer l's part. */
static void slot_interval(const hp_model *mdl, const hp_plan *p, int l, int kind, int r, int j,
                          units U, units *lo, units *hi)
{
  int split = mdl->layers[l].splittable && p->tp > 1;
  units a = 0, len = U;
  if (split) {
    len = U / p->tp;
    a = (units)j * len;
  }
  if (part_sharded(p, l, kind)) {
    len /= p->dp;
    a += (units)r * len;
  }
  *lo = a;
  *hi = a + len;
}

static double part_bytes(const hp_model *mdl, int l, int kind)
{
  double per = kind == HP_MOVE_WEIGHTS ? mdl->param_bytes : hp_model_opt_bytes(mdl);
  return mdl->layers[l].params * per;
}

/* The stage of plan p that holds layer l. */
static int stage_of(const hp_plan *p, int l)
{
  int s = 0;
  while (s + 1 < p->pp && p->first[s + 1] <= l) s++;
  return s;
}

static units common_units(const hp_plan *a, const hp_plan *b)
{
  units x = (units)a->tp * a->dp, y = (units)b->tp * b->dp;
  return x / gcd_u(x, y) * y;
}

/* The overlap of [a, b) and [c, e). */
static units overlap(units a, units b, units c, units e)
{
  units lo = a > c ? a : c, hi = b < e ? b : e;
  return hi > lo ? hi - lo : 0;
}

/* Of slot (s, r, j) of new_plan, what old_dev held: bytes, both parts. */
double hp_migrate_kept_on(const hp_problem *old, const hp_plan *old_plan, const int *slot_of,
                          const hp_plan *new_plan, int s, int r, int j, int old_dev)
{
  const hp_model *mdl = old->model;
  int q, so, ro, jo;
  units U = common_units(old_plan, new_plan);
  double kept = 0;
  if (old_dev < 0 || (q = slot_of[old_dev]) < 0) return 0;
  so = q / (old_plan->dp * old_plan->tp);
  ro = q / old_plan->tp % old_plan->dp;
  jo = q % old_plan->tp;
  for (int l = new_plan->first[s]; l < new_plan->first[s + 1]; l++) {
    if (l < old_plan->first[so] || l >= old_plan->first[so + 1]) continue;
    for (int kind = 0; kind < 2; kind++) {
      units a, b, c, e;
      slot_interval(mdl, new_plan, l, kind, r, j, U, &a, &b);
      slot_interval(mdl, old_plan, l, kind, ro, jo, U, &c, &e);
      kept += (double)overlap(a, b, c, e) / (double)U * part_bytes(mdl, l, kind);
    }
  }
  return kept;
}

/* A growing list of moves. */
typedef struct move_list { hp_move *v; int n, cap; } move_list;

/* Adds `bytes` of (l, kind) from -> to: onto the last record when it is the same
 * transfer (the segments of one interval from one sender are one transfer). */
static int add_move(move_list *ml, int l, int kind, int from, int to, double bytes)
{
  hp_move *last = ml->n ? &ml->v[ml->n - 1] : NULL;
  if (last && last->layer == l && last->kind == kind && last->from == from && last->to == to) {
    last->bytes += bytes;
    return 0;
  }
  if (ml->n == ml->cap) {
    int cap = ml->cap ? 2 * ml->cap : 64;
    hp_move *v = realloc(ml->v, (size_t)cap * sizeof *v);
    if (!v) return -1;
    ml->v = v;
    ml->cap = cap;
  }
  ml->v[ml->n++] = (hp_move){ .layer = l, .kind = kind, .from = from, .to = to, .bytes = bytes };
  return 0;
}

/* What the migration reads of the problems and plans. */
typedef struct mig_ctx {
  const hp_problem *old, *now;
  const hp_plan *op, *np;
  const int *old_to_new;
  units U;
} mig_ctx;

/* The surviving holder (a device of the new problem) of old_plan's layer l, part `kind`,
 * at unit x that serves receiver `to` best: on its node first, then the highest
 * bandwidth, then the lowest id; -1 if none survives. *end gets the end of the segment
 * from x on that the same devices hold. */
static int best_holder(const mig_ctx *c, int l, int kind, units x, int to, units *end)
{
  const hp_plan *p = c->op;
  const hp_cluster *cl = c->now->cluster;
  int so = stage_of(p, l), split = c->old->model->layers[l].splittable && p->tp > 1;
  int sharded = part_sharded(p, l, kind);
  units piece = split ? c->U / p->tp : c->U, j0 = split ? x / piece : -1, r0 = -1;
  int best = -1, best_same = 0;
  double best_bw = 0;
  if (sharded) {
    units shard = piece / p->dp;
    r0 = (x - (split ? j0 * piece : 0)) / shard;
    *end = (x / shard + 1) * shard;
  } else {
    *end = split ? (j0 + 1) * piece : c->U;
  }
  for (int r = r0 < 0 ? 0 : (int)r0; r < (r0 < 0 ? p->dp : (int)r0 + 1); r++)
    for (int j = j0 < 0 ? 0 : (int)j0; j < (j0 < 0 ? p->tp : (int)j0 + 1); j++) {
      int from = c->old_to_new[p->dev[HP_SLOT(p, so, r, j)]], same;
      double bw;
      if (from < 0 || from == to) continue;
      same = cl->dev_node[from] == cl->dev_node[to];
      bw = hp_problem_bw(c->now, from, to);
      if (best < 0 || same > best_same || (same == best_same && (bw > best_bw ||
                                                                 (bw == best_bw && from < best)))) {
        best = from;
        best_same = same;
        best_bw = bw;
      }
    }
  return best;
}

/* Receives [a, b) of (l, kind) on `to`, segment by segment from the best holders. */
static int receive(const mig_ctx *c, move_list *ml, int l, int kind, int to, units a, units b,
                   double per_unit)
{
  units x = a;
  while (x < b) {
    units end;
    int from = best_holder(c, l, kind, x, to, &end);
    if (end > b) end = b;
    if (add_move(ml, l, kind, from, to, (double)(end - x) * per_unit)) return -1;
    x = end;
  }
  return 0;
}

hp_err hp_migrate(const hp_problem *old, const hp_plan *old_plan, const hp_problem *now,
                  const hp_plan *new_plan, const int *old_to_new, double storage_bw,
                  hp_migration *m, hp_diag *d)
{
  const hp_model *mdl = now->model;
  int L = mdl->n_layers, D = now->cluster->n_devices, Dold = old->cluster->n_devices;
  int *new_to_old = NULL, *slot_of = NULL;
  move_list ml = { NULL, 0, 0 };
  mig_ctx c = { old, now, old_plan, new_plan, old_to_new, common_units(old_plan, new_plan) };
  memset(m, 0, sizeof *m);
  if (old->model->n_layers != L || old_plan->n_layers != L || new_plan->n_layers != L)
    return hp_fail(d, HP_INVAL, "migration: the plans are for models of %d and %d layers, the "
                   "problem's has %d", old_plan->n_layers, new_plan->n_layers, L);
  if (!(storage_bw > 0))
    return hp_fail(d, HP_INVAL, "migration: the checkpoint's read bandwidth must be positive");
  m->n_layers = L;
  m->n_devices = D;
  m->slowest_device = -1;
  new_to_old = hp__calloc((size_t)D, sizeof *new_to_old);
  slot_of = hp__calloc((size_t)Dold, sizeof *slot_of);
  m->send_seconds = hp__calloc((size_t)D, sizeof *m->send_seconds);
  m->recv_seconds = hp__calloc((size_t)D, sizeof *m->recv_seconds);
  m->layer_need = hp__calloc((size_t)L * 2, sizeof *m->layer_need);
  m->layer_kept = hp__calloc((size_t)L * 2, sizeof *m->layer_kept);
  m->layer_moved = hp__calloc((size_t)L * 2, sizeof *m->layer_moved);
  if (!new_to_old || !slot_of || !m->send_seconds || !m->recv_seconds || !m->layer_need ||
      !m->layer_kept || !m->layer_moved)
    goto oom;
  for (int dv = 0; dv < D; dv++) new_to_old[dv] = -1;
  for (int dv = 0; dv < Dold; dv++)
    if (old_to_new[dv] >= 0) new_to_old[old_to_new[dv]] = dv;
  hp_plan_slot_index(old_plan, Dold, slot_of);

  for (int s = 0; s < new_plan->pp; s++)
    for (int r = 0; r < new_plan->dp; r++)
      for (int j = 0; j < new_plan->tp; j++) {
        int to = new_plan->dev[HP_SLOT(new_plan, s, r, j)];
        int od = new_to_old[to], q = od >= 0 ? slot_of[od] : -1;
        int so = -1, ro = 0, jo = 0;
        if (q >= 0) {
          so = q / (old_plan->dp * old_plan->tp);
          ro = q / old_plan->tp % old_plan->dp;
          jo = q % old_plan->tp;
        }
        for (int l = new_plan->first[s]; l < new_plan->first[s + 1]; l++)
          for (int kind = 0; kind < 2; kind++) {
            double per_unit = part_bytes(mdl, l, kind) / (double)c.U;
            units a, b, hc = 0, he = 0;
            int n0 = ml.n;
            slot_interval(mdl, new_plan, l, kind, r, j, c.U, &a, &b);
            if (so >= 0 && l >= old_plan->first[so] && l < old_plan->first[so + 1])
              slot_interval(mdl, old_plan, l, kind, ro, jo, c.U, &hc, &he);
            m->layer_need[2 * l + kind] += (double)(b - a) * per_unit;
            m->layer_kept[2 * l + kind] += (double)overlap(a, b, hc, he) * per_unit;
            if (!(per_unit > 0)) continue;    /* a layer without parameters moves nothing */
            /* what is not held: before the held interval, and after it */
            if (hc >= he) {
              if (receive(&c, &ml, l, kind, to, a, b, per_unit)) goto oom;
            } else {
              if (a < hc && receive(&c, &ml, l, kind, to, a, b < hc ? b : hc, per_unit)) goto oom;
              if (he < b && receive(&c, &ml, l, kind, to, a > he ? a : he, b, per_unit)) goto oom;
            }
            for (int i = n0; i < ml.n; i++) m->layer_moved[2 * l + kind] += ml.v[i].bytes;
          }
      }

  for (int i = 0; i < ml.n; i++) {
    hp_move *mv = &ml.v[i];
    if (mv->from >= 0) {
      mv->seconds = mv->bytes / hp_problem_bw(now, mv->from, mv->to) +
                    hp_problem_lat(now, mv->from, mv->to);
      m->send_seconds[mv->from] += mv->seconds;
    } else {
      mv->seconds = mv->bytes / storage_bw;
      m->lost_bytes += mv->bytes;
    }
    m->recv_seconds[mv->to] += mv->seconds;
    m->moved_bytes += mv->bytes;
  }
  for (int i = 0; i < 2 * L; i++) {
    m->need_bytes += m->layer_need[i];
    m->kept_bytes += m->layer_kept[i];
  }
  for (int dv = 0; dv < D; dv++) {
    double t = m->send_seconds[dv] > m->recv_seconds[dv] ? m->send_seconds[dv] : m->recv_seconds[dv];
    if (t > m->seconds) {
      m->seconds = t;
      m->slowest_device = dv;
    }
  }
  m->moves = ml.v;
  m->n_moves = ml.n;
  free(new_to_old);
  free(slot_of);
  return HP_OK;
oom:
  free(ml.v);
  free(new_to_old);
  free(slot_of);
  hp_migration_release(m);
  return hp_fail(d, HP_NOMEM, "out of memory");
}
