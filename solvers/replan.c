/* replan.c -- re-planning on a changed cluster (hp_replan.h, docs/replan.md): the old
 * plan where it still stands, the old plan repaired, and a solver's best plans relabelled
 * to keep state in place; each re-scored by the evaluator, costed by hp_migrate, and
 * chosen by iteration time + W * migration time. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

#define DEFAULT_TOP 16
/* Relabelling a stage costs about dp^2 tp + dp tp^2 evaluations of what a slot keeps,
 * each over the stage's layers: beyond this much work a plan is left as the solver gave it. */
#define RELABEL_WORK 50000000.0

const char *hp_cand_kind_name(int kind)
{
  switch (kind) {
  case HP_CAND_NO_MOVE: return "no-move";
  case HP_CAND_REPAIR: return "repair";
  default: return "solver";
  }
}

void hp_replan_opts_init(hp_replan_opts *o)
{
  memset(o, 0, sizeof *o);
  o->top = DEFAULT_TOP;
  o->max_move_bytes = INFINITY;
}

void hp_replan_release(hp_replan *r)
{
  if (!r) return;
  for (int i = 0; i < r->n_cands; i++) {
    hp_plan_destroy(&r->cands[i].plan);
    hp_migration_release(&r->cands[i].mig);
  }
  free(r->cands);
  free(r->old_to_new);
  memset(r, 0, sizeof *r);
}

static void note(hp_replan_cand *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(hp_replan_cand *c, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->note, sizeof c->note, fmt, ap);
  va_end(ap);
}

/* The default checkpoint read bandwidth: the slowest link between two nodes of the new
 * problem (a device matrix's figure between their first devices), else with one node the
 * slowest link inside it. */
static double default_storage_bw(const hp_problem *p)
{
  const hp_cluster *c = p->cluster;
  double bw = INFINITY;
  for (int a = 0; a < c->n_nodes; a++)
    for (int b = a + 1; b < c->n_nodes; b++) {
      double x = hp_problem_bw(p, c->nodes[a].first, c->nodes[b].first);
      if (x < bw) bw = x;
    }
  if (isfinite(bw)) return bw;
  for (int a = 0; a < c->n_nodes; a++)
    if (c->nodes[a].gpus > 1) {
      double x = hp_problem_bw(p, c->nodes[a].first, c->nodes[a].first + 1);
      if (x < bw) bw = x;
    }
  return isfinite(bw) ? bw : 1e9;   /* one GPU in all: nothing is ever read from another */
}

/* Scores a candidate's plan: the evaluator's figures, the migration, the objective. An
 * invalid plan becomes a candidate without a plan, the validator's words as its note. */
static hp_err score(const hp_problem *old, const hp_plan *old_plan, const hp_problem *now,
                    const hp_replan_opts *o, const hp_replan *r, hp_replan_cand *c, hp_diag *d)
{
  hp_eval e = {0};
  hp_diag vd = {0};
  hp_err err;
  if ((err = hp_evaluate(now, c->plan, &e, &vd))) {
    if (err != HP_PLAN) return hp_fail(d, err, "%s", vd.msg);
    note(c, "not valid on the new cluster: %s", vd.msg);
    hp_plan_destroy(&c->plan);
    return HP_OK;
  }
  c->time = e.iteration_time;
  c->fits = e.feasible;
  c->oom_device = e.oom_device;
  hp_eval_release(&e);
  hp_migration_release(&c->mig);
  if ((err = hp_migrate(old, old_plan, now, c->plan, r->old_to_new, r->storage_bw, &c->mig, d)))
    return err;
  c->objective = c->time + o->move_weight * c->mig.seconds;
  c->allowed = c->fits && !(c->mig.moved_bytes > o->max_move_bytes);
  return HP_OK;
}

/* Whether candidate a is better than b: allowed first, then the objective, then fewer
 * bytes moved. */
static int better(const hp_replan_cand *a, const hp_replan_cand *b)
{
  if (!a->plan) return 0;
  if (!b->plan) return 1;
  if (a->allowed != b->allowed) return a->allowed;
  if (a->objective != b->objective) return a->objective < b->objective;
  return a->mig.moved_bytes < b->mig.moved_bytes;
}

/* The old plan on the same devices, where every device it uses is still there. */
static hp_err no_move(const hp_problem *now, const hp_plan *old_plan, const hp_replan *r,
                      hp_replan_cand *c, hp_diag *d)
{
  int n = old_plan->pp * old_plan->dp * old_plan->tp, idle;
  hp_err err;
  c->kind = HP_CAND_NO_MOVE;
  if (r->n_lost) {
    note(c, "not possible: %d of the devices it uses are not in the new cluster", r->n_lost);
    return HP_OK;
  }
  idle = now->cluster->n_devices - n;
  if (idle > 0 && !now->job.idle_devices) {
    note(c, "not allowed: it would leave %d device%s of the new cluster idle (--idle-devices "
         "allows that)", idle, idle > 1 ? "s" : "");
    return HP_OK;
  }
  if ((err = hp_plan_copy(&c->plan, old_plan, d))) return err;
  for (int q = 0; q < n; q++) c->plan->dev[q] = r->old_to_new[old_plan->dev[q]];
  return HP_OK;
}

/* The fastest device type of the new cluster (peak x efficiency; the lower index on ties). */
static double type_speed(const hp_cluster *c, int k) { return c->types[k].peak * c->types[k].eff; }

/* A node with at least `need` unused devices: of type `want` (-1: any) if one has them,
 * else of the fastest type; the lowest index among equals. -1 if none. */
static int node_with_room(const hp_cluster *c, const unsigned char *used, int need, int want)
{
  int best = -1;
  for (int n = 0; n < c->n_nodes; n++) {
    int room = 0, k = c->nodes[n].type;
    for (int g = 0; g < c->nodes[n].gpus; g++) room += !used[c->nodes[n].first + g];
    if (room < need) continue;
    if (best < 0) { best = n; continue; }
    {
      int kb = c->nodes[best].type, wa = k == want, wb = kb == want;
      if (wa != wb) { if (wa) best = n; continue; }
      if (type_speed(c, k) > type_speed(c, kb)) best = n;
    }
  }
  return best;
}

/* The new cluster's type of the old device's type name, -1 if it has none. */
static int same_type(const hp_problem *old, const hp_problem *now, int old_dev)
{
  const char *name = old->cluster->types[hp_device_type(old, old_dev)].name;
  for (int k = 0; k < now->cluster->n_types; k++)
    if (!strcmp(now->cluster->types[k].name, name)) return k;
  return -1;
}

/* The old plan's degrees, stages, modes and micro-batch with each lost device replaced by
 * an unused one: in a TP group with survivors, from their node; a group with none left,
 * or whose node has no room, moves whole to a node with room (the lost devices' type
 * first, else the fastest). */
static hp_err repair(const hp_problem *old, const hp_problem *now, const hp_plan *old_plan,
                     const hp_replan *r, hp_replan_cand *c, hp_diag *d)
{
  const hp_cluster *cl = now->cluster;
  int pp = old_plan->pp, dp = old_plan->dp, tp = old_plan->tp, n = pp * dp * tp;
  int D = cl->n_devices;
  unsigned char *used = NULL;
  hp_plan *pl = NULL;
  hp_err err = HP_OK;
  c->kind = HP_CAND_REPAIR;
  if (!r->n_lost) {
    note(c, "nothing to repair: every device the old plan uses is in the new cluster");
    return HP_OK;
  }
  if (n > D) {
    note(c, "not possible: the old plan's %d devices (pp %d x tp %d x dp %d) are more than the "
         "new cluster's %d", n, pp, tp, dp, D);
    return HP_OK;
  }
  if (n < D && !now->job.idle_devices) {
    note(c, "not allowed: it would leave %d device%s of the new cluster idle (--idle-devices "
         "allows that)", D - n, D - n > 1 ? "s" : "");
    return HP_OK;
  }
  used = hp__calloc((size_t)D, 1);
  if (!used || (err = hp_plan_copy(&pl, old_plan, d))) {
    free(used);
    return err ? err : hp_fail(d, HP_NOMEM, "out of memory");
  }
  for (int q = 0; q < n; q++) {
    pl->dev[q] = r->old_to_new[old_plan->dev[q]];
    if (pl->dev[q] >= 0) used[pl->dev[q]] = 1;
  }
  for (int s = 0; s < pp && !c->note[0]; s++)
    for (int rr = 0; rr < dp && !c->note[0]; rr++) {
      int *g = &pl->dev[HP_SLOT(pl, s, rr, 0)], lost = 0, alive = -1, node = -1, want;
      for (int j = 0; j < tp; j++) {
        if (g[j] < 0) lost++;
        else alive = g[j];
      }
      if (!lost) continue;
      want = same_type(old, now, old_plan->dev[HP_SLOT(old_plan, s, rr, 0)]);
      if (alive >= 0) {   /* replacements beside the survivors, if their node has room */
        int nd = cl->dev_node[alive], room = 0;
        for (int q = 0; q < cl->nodes[nd].gpus; q++) room += !used[cl->nodes[nd].first + q];
        if (room >= lost) node = nd;
      }
      if (node < 0) {     /* the whole group to a node with room */
        for (int j = 0; j < tp; j++)
          if (g[j] >= 0) { used[g[j]] = 0; g[j] = -1; }
        node = node_with_room(cl, used, tp, want);
        if (node < 0) {
          note(c, "not possible: no node of the new cluster has %d unused device%s for the TP "
               "group of stage %d, replica %d", tp, tp > 1 ? "s" : "", s, rr);
          break;
        }
      }
      for (int j = 0, q = 0; j < tp; j++) {
        if (g[j] >= 0) continue;
        while (used[cl->nodes[node].first + q]) q++;
        g[j] = cl->nodes[node].first + q;
        used[g[j]] = 1;
      }
    }
  free(used);
  if (c->note[0]) hp_plan_destroy(&pl);
  c->plan = pl;
  return HP_OK;
}

/* Greedy assignment on an n x n matrix of gains: repeatedly the largest gain among the
 * rows and columns left (the lower row, then column, on ties); to[row] = column. */
static void assign(const double *gain, int n, int *to, unsigned char *row_done,
                   unsigned char *col_done)
{
  memset(row_done, 0, (size_t)n);
  memset(col_done, 0, (size_t)n);
  for (int k = 0; k < n; k++) {
    int br = -1, bc = -1;
    double bg = -1;
    for (int a = 0; a < n; a++) {
      if (row_done[a]) continue;
      for (int b = 0; b < n; b++)
        if (!col_done[b] && gain[(size_t)a * (size_t)n + (size_t)b] > bg) {
          bg = gain[(size_t)a * (size_t)n + (size_t)b];
          br = a;
          bc = b;
        }
    }
    /* a row keeps its own column when nothing is to be gained by moving it */
    if (bg <= 0) {
      for (int a = 0; a < n; a++)
        if (!row_done[a]) {
          int b = col_done[a] ? -1 : a;
          for (int q = 0; b < 0 && q < n; q++)
            if (!col_done[q]) b = q;
          to[a] = b;
          row_done[a] = col_done[b] = 1;
        }
      return;
    }
    to[br] = bc;
    row_done[br] = col_done[bc] = 1;
  }
}

/* The plan with its stages' device blocks, then each stage's replica rows, then each
 * row's TP ranks renumbered to keep the most of the old state where it is (greedy
 * matchings; a block keeps its (replica, rank) shape, so TP groups stay on their nodes).
 * The evaluator decides whether the time changed. *out is NULL when nothing changes or
 * the work would be too large. */
static hp_err relabel(const hp_problem *old, const hp_plan *old_plan, const int *slot_of,
                      const int *new_to_old, const hp_plan *pl, hp_plan **out, hp_diag *d)
{
  int pp = pl->pp, dp = pl->dp, tp = pl->tp, per = dp * tp, changed = 0;
  int n = pp > per ? pp : per;
  double *gain = NULL, work = 0;
  int *to = NULL, *dev = NULL;
  unsigned char *rd = NULL, *cd = NULL;
  hp_plan *src = NULL;
  hp_err err = HP_OK;
  *out = NULL;
  for (int s = 0; s < pp; s++)   /* kept_on evaluations, each over the stage's layers */
    work += ((double)pp * per * per + (double)dp * dp * tp + (double)dp * tp * tp) *
            (pl->first[s + 1] - pl->first[s]);
  if (work > RELABEL_WORK) return HP_OK;
  gain = hp__calloc((size_t)n * (size_t)n, sizeof *gain);
  to = hp__calloc((size_t)n, sizeof *to);
  dev = hp__calloc((size_t)n, sizeof *dev);
  rd = hp__calloc((size_t)n, 1);
  cd = hp__calloc((size_t)n, 1);
  if (!gain || !to || !dev || !rd || !cd || (err = hp_plan_copy(&src, pl, d)) ||
      (err = hp_plan_copy(out, pl, d))) {
    if (!err) err = hp_fail(d, HP_NOMEM, "out of memory");
    goto done;
  }
  /* blocks: the devices of stage b taking stage s, each device credited with the most it
   * would keep in any slot of s (the row and rank steps below place it) */
  if (pp > 1) {
    for (int b = 0; b < pp; b++)
      for (int s = 0; s < pp; s++) {
        double g = 0;
        for (int i = 0; i < per; i++) {
          int od = new_to_old[pl->dev[(size_t)b * per + i]];
          double best = 0;
          for (int q = 0; od >= 0 && q < per; q++) {
            double k = hp_migrate_kept_on(old, old_plan, slot_of, pl, s, q / tp, q % tp, od);
            if (k > best) best = k;
          }
          g += best;
        }
        gain[(size_t)b * (size_t)pp + (size_t)s] = g;
      }
    assign(gain, pp, to, rd, cd);
    for (int b = 0; b < pp; b++)
      for (int i = 0; i < per; i++) src->dev[(size_t)to[b] * per + i] = pl->dev[(size_t)b * per + i];
    memcpy((*out)->dev, src->dev, (size_t)pp * per * sizeof *src->dev);
  }
  for (int s = 0; s < pp; s++) {
    hp_plan *q = *out;
    /* rows: row r of the stage taking replica index r2 */
    for (int r = 0; r < dp; r++)
      for (int r2 = 0; r2 < dp; r2++) {
        double g = 0;
        for (int j = 0; j < tp; j++)
          g += hp_migrate_kept_on(old, old_plan, slot_of, src, s, r2, j,
                                  new_to_old[src->dev[HP_SLOT(src, s, r, j)]]);
        gain[(size_t)r * (size_t)dp + (size_t)r2] = g;
      }
    assign(gain, dp, to, rd, cd);
    for (int r = 0; r < dp; r++)
      for (int j = 0; j < tp; j++) q->dev[HP_SLOT(q, s, to[r], j)] = src->dev[HP_SLOT(src, s, r, j)];
    /* then the TP ranks inside each row */
    for (int r = 0; r < dp; r++) {
      for (int j = 0; j < tp; j++) dev[j] = q->dev[HP_SLOT(q, s, r, j)];
      for (int j = 0; j < tp; j++)
        for (int j2 = 0; j2 < tp; j2++)
          gain[(size_t)j * (size_t)tp + (size_t)j2] =
            hp_migrate_kept_on(old, old_plan, slot_of, q, s, r, j2, new_to_old[dev[j]]);
      assign(gain, tp, to, rd, cd);
      for (int j = 0; j < tp; j++) q->dev[HP_SLOT(q, s, r, to[j])] = dev[j];
    }
  }
  for (int i = 0; i < pp * per; i++) changed |= (*out)->dev[i] != pl->dev[i];
  if (!changed) hp_plan_destroy(out);
done:
  hp_plan_destroy(&src);
  free(gain);
  free(to);
  free(dev);
  free(rd);
  free(cd);
  if (err) hp_plan_destroy(out);
  return err;
}

static hp_replan_cand *add_cand(hp_replan *r, int cap)
{
  hp_replan_cand *c;
  if (r->n_cands >= cap) return NULL;
  c = &r->cands[r->n_cands++];
  memset(c, 0, sizeof *c);
  c->oom_device = -1;
  return c;
}

hp_err hp_replan_run(const hp_problem *old, const hp_plan *old_plan, const hp_problem *now,
                     const hp_replan_opts *o, const hp_limits *lim, hp_replan *out,
                     hp_diag *d)
{
  const hp_solver *solver = o->solver ? o->solver : hp_solver_find("dp");
  int top = o->top > 0 ? o->top : DEFAULT_TOP, cap = top + 2, Dn = now->cluster->n_devices;
  int *slot_of = NULL, *new_to_old = NULL;
  hp_limits l2 = *lim;
  hp_result res;
  hp_err err = HP_OK;
  /* the time limit bounds the whole re-planning: the solver gets what is left of it,
   * and the candidates after it stop at it (each relabelling costs about as much as a
   * few evaluations, and a large cluster's --top K of them can take seconds) */
  double deadline = lim->time_limit > 0 ? hp__now() + lim->time_limit : INFINITY;
  memset(out, 0, sizeof *out);
  hp_result_init(&res);
  out->chosen = -1;
  out->bound = -INFINITY;
  if (!solver) return hp_fail(d, HP_INVAL, "replan: no solver");
  if (!(o->move_weight >= 0))
    return hp_fail(d, HP_INVAL, "replan: the move weight must be at least 0, got %g", o->move_weight);
  if (old->model->n_layers != now->model->n_layers)
    return hp_fail(d, HP_INVAL, "replan: the old and new problems have models of %d and %d layers",
                   old->model->n_layers, now->model->n_layers);
  out->solver = solver->name;
  out->n_old = old->cluster->n_devices;
  out->storage_bw = o->storage_bw > 0 ? o->storage_bw : default_storage_bw(now);
  out->storage_default = !(o->storage_bw > 0);
  out->old_to_new = hp__calloc((size_t)out->n_old, sizeof *out->old_to_new);
  out->cands = hp__calloc((size_t)cap, sizeof *out->cands);
  slot_of = hp__calloc((size_t)out->n_old, sizeof *slot_of);
  new_to_old = hp__calloc((size_t)Dn, sizeof *new_to_old);
  if (!out->old_to_new || !out->cands || !slot_of || !new_to_old) {
    err = hp_fail(d, HP_NOMEM, "out of memory");
    goto done;
  }
  hp_device_map(old->cluster, now->cluster, out->old_to_new);
  hp_plan_slot_index(old_plan, out->n_old, slot_of);
  for (int dv = 0; dv < Dn; dv++) new_to_old[dv] = -1;
  for (int dv = 0; dv < out->n_old; dv++) {
    if (out->old_to_new[dv] >= 0) new_to_old[out->old_to_new[dv]] = dv;
    if (slot_of[dv] >= 0 && out->old_to_new[dv] < 0) out->n_lost++;
  }

  /* (a) the old plan where it stands, (b) repaired */
  {
    hp_replan_cand *c = add_cand(out, cap);
    if ((err = no_move(now, old_plan, out, c, d))) goto done;
    if (c->plan && (err = score(old, old_plan, now, o, out, c, d))) goto done;
    c = add_cand(out, cap);
    if ((err = repair(old, now, old_plan, out, c, d))) goto done;
    if (c->plan && (err = score(old, old_plan, now, o, out, c, d))) goto done;
  }

  /* (c) the solver's best plans, each also relabelled */
  l2.top = top;
  l2.keep_rejected = 0;
  if (isfinite(deadline)) {
    double left = deadline - hp__now();
    l2.time_limit = left > 1e-3 ? left : 1e-3;   /* > 0: 0 would mean no limit */
  }
  if ((err = hp_solver_run(solver, now, NULL, &l2, &res, d))) goto done;
  out->status = res.status;
  out->space = res.space;
  out->stopped = res.stopped;
  snprintf(out->space_note, sizeof out->space_note, "%s", res.space_note);
  out->solver_seconds = res.seconds;
  if (res.space == HP_SPACE_FULL && isfinite(res.bound)) out->bound = res.bound;
  for (int i = 0; i < res.n_top; i++) {
    hp_replan_cand *c, alt;
    hp_plan *re = NULL;
    if (i > 0 && hp__now() > deadline) {   /* the best plan is always scored */
      out->n_unscored = res.n_top - i;
      break;
    }
    if (!(c = add_cand(out, cap))) break;
    c->kind = HP_CAND_SOLVER;
    c->rank = i + 1;
    if ((err = hp_plan_copy(&c->plan, res.top[i].plan, d))) goto done;
    if ((err = score(old, old_plan, now, o, out, c, d))) goto done;
    if (!c->plan) continue;
    if (hp__now() > deadline) {
      note(c, "not relabelled: the time limit was reached");
      continue;
    }
    if ((err = relabel(old, old_plan, slot_of, new_to_old, c->plan, &re, d))) goto done;
    if (!re) continue;
    memset(&alt, 0, sizeof alt);
    alt.kind = HP_CAND_SOLVER;
    alt.rank = i + 1;
    alt.relabelled = 1;
    alt.oom_device = -1;
    alt.plan = re;
    if ((err = score(old, old_plan, now, o, out, &alt, d))) {
      hp_plan_destroy(&alt.plan);
      hp_migration_release(&alt.mig);
      goto done;
    }
    if (better(&alt, c)) {   /* the better of the two by the objective stands */
      hp_plan_destroy(&c->plan);
      hp_migration_release(&c->mig);
      *c = alt;
      snprintf(c->note, sizeof c->note, "stages' devices, replicas and TP ranks renumbered to keep state in place");
    } else {
      hp_plan_destroy(&alt.plan);
      hp_migration_release(&alt.mig);
    }
  }
  if (res.n_top == 0 && out->n_cands < cap) {
    hp_replan_cand *c = add_cand(out, cap);
    char why[400];
    c->kind = HP_CAND_SOLVER;
    note(c, "solver %s: %s", solver->name, res.plan ? "its plan does not fit in memory"
         : hp_result_no_plan_text(&res, why, sizeof why));
  }

  for (int i = 0; i < out->n_cands; i++) {
    const hp_replan_cand *c = &out->cands[i];
    if (c->plan && c->allowed && (out->chosen < 0 || better(c, &out->cands[out->chosen])))
      out->chosen = i;
  }
done:
  hp_result_release(&res);
  free(slot_of);
  free(new_to_old);
  if (err) hp_replan_release(out);
  return err;
}
