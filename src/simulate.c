/* simulate.c -- discrete-event simulation of one training iteration under cost model 1.2
 * (cost-model.md 6: the second opinion on the formula of section 3).
 *
 * Every slot (stage s, replica r), its TP group acting as one, runs its schedule's order
 * of forwards and backwards (1F1B: min(pp-s-1, gas) warm-up forwards, then one forward
 * one backward, then the remaining backwards; GPipe: every forward, then the backwards
 * from the last micro-batch down). A forward on s > 0 waits for its activation, a
 * backward on s < pp-1 for its gradient.
 *
 * Durations are the cost tables' (cost.c): a forward is a third of the layer time and half
 * of the ZeRO-3 gather Z; a backward the rest of the compute (with the recomputed forward
 * of checkpointable layers), the other half of Z and the per-micro-batch reduce-scatter
 * Zr of zero2/zdp gradients (hp_cost_fwd_bwd; fwd + bwd = t[s,r]).
 *
 * Transfers block their sender (cost-model.md 3: Megatron-LM's and DeepSpeed's pipeline
 * transfers block): after a forward the slot sends its activation to (s+1, r), after a
 * backward its gradient to (s-1, r), each carrying half of the boundary's hand-off e
 * (O mbs / tp at the lanes' H_s(n)-shared bandwidth, plus one latency), and computes
 * nothing until the transfer is done. The receiver has posted its receive ahead and goes
 * on computing; the op that needs the data waits for its arrival. So a stage pays, per
 * micro-batch, half of each of its boundaries' hand-offs: the formula's period
 * c[s,r] = t[s,r] + (e[s-1,r] + e[s,r]) / 2. A link direction carries one transfer at a
 * time (its sender is the only one using it, and waits).
 *
 * Stage s's gradient reduction red[s] over its replica groups starts when every replica
 * has done its last backward (grad_sync end), or, under grad_sync overlap, when every
 * replica has started the backward pass proper of its last micro-batch (after the half
 * of the gather that precedes it): it runs during that pass (cost-model.md 3). Then a
 * barrier: the optimizer step of every used device (update bytes / hbm of its type, none
 * without hbm) starts when the pipeline and every reduction are done; the weights'
 * all-gather gat[s] of every stage when every step is (the formula's max over devices,
 * then max over stages). Idle devices take no part.
 *
 * Ops are taken in order of start time; each slot's order is fixed and no two slots
 * share a resource, so the order only makes the event list deterministic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void hp_sim_release(hp_sim *s)
{
  if (!s) return;
  free(s->events);
  free(s->busy);
  free(s->peak_inflight);
  *s = (hp_sim){0};
}

typedef struct op { unsigned char bwd; int micro; } op;

typedef struct lane {
  op *ops;             /* the schedule's order */
  int n, next;
  double free_at;      /* when the last op, with its send, ended */
  double fwd, bwd;     /* durations */
  double gather_half;  /* Z[s] / 2, the head of each pass */
  double send_act;     /* e[s,r] / 2: the activation to (s+1, r) (0 on the last stage) */
  double send_grad;    /* e[s-1,r] / 2: the gradient to (s-1, r) (0 on the first stage) */
  double *act_at;      /* [gas] activation arrival (s > 0), INFINITY until known */
  double *grad_at;     /* [gas] gradient arrival (s < pp-1) */
  int inflight, peak;
} lane;

typedef struct sim {
  const hp_problem *p;
  const hp_plan *pl;
  lane *lanes;         /* [pp * dp] */
  double *act_link;    /* [pp * dp] when the link (s, r) -> (s+1, r) is next free */
  double *grad_link;   /* [pp * dp] when the link (s, r) -> (s-1, r) is next free */
  double *red;         /* [pp] red[s] */
  double *gat;         /* [pp] gat[s] */
  double *upd;         /* [pp] update bytes of one device of the stage */
  int *bwd_done;       /* [pp] replicas past their last backward's trigger */
  double *red_from;    /* [pp] latest trigger of the stage's reduction */
  hp_sim *out;
  int cap_events;
} sim;

static hp_err add_event(sim *S, hp_ev_kind k, int s, int r, int m, double a, double b)
{
  hp_sim *o = S->out;
  if (o->n_events == S->cap_events) {
    int ncap = S->cap_events ? S->cap_events * 2 : 1024;
    hp_sim_event *ne = realloc(o->events, (size_t)ncap * sizeof *ne);
    if (!ne) return HP_NOMEM;
    o->events = ne;
    S->cap_events = ncap;
  }
  o->events[o->n_events++] = (hp_sim_event){ k, s, r, m, a, b };
  return HP_OK;
}

/* The order of forwards and backwards of stage s. */
static void schedule(const hp_plan *pl, int s, op *ops)
{
  int gas = (int)pl->gas, n = 0;
  if (pl->schedule == HP_GPIPE) {
    for (int m = 0; m < gas; m++) ops[n++] = (op){ 0, m };
    for (int m = gas - 1; m >= 0; m--) ops[n++] = (op){ 1, m };
    return;
  }
  int warm = pl->pp - s - 1 < gas ? pl->pp - s - 1 : gas, f = 0, b = 0;
  while (f < warm) ops[n++] = (op){ 0, f++ };
  while (f < gas) {
    ops[n++] = (op){ 0, f++ };
    ops[n++] = (op){ 1, b++ };
  }
  while (b < gas) ops[n++] = (op){ 1, b++ };
}

static hp_err setup(sim *S)
{
  const hp_problem *p = S->p;
  const hp_plan *pl = S->pl;
  int pp = pl->pp, dp = pl->dp, gas = (int)pl->gas;
  size_t slots = (size_t)pp * (size_t)dp;
  hp_costs k;
  hp_err err = HP_OK;
  if (hp_costs_build(p, pl, &k, NULL)) return HP_NOMEM;
  S->lanes = hp__calloc(slots, sizeof *S->lanes);
  S->act_link = hp__calloc(slots, sizeof *S->act_link);
  S->grad_link = hp__calloc(slots, sizeof *S->grad_link);
  S->red = hp__calloc((size_t)pp, sizeof *S->red);
  S->gat = hp__calloc((size_t)pp, sizeof *S->gat);
  S->upd = hp__calloc((size_t)pp, sizeof *S->upd);
  S->bwd_done = hp__calloc((size_t)pp, sizeof *S->bwd_done);
  S->red_from = hp__calloc((size_t)pp, sizeof *S->red_from);
  if (!S->lanes || !S->act_link || !S->grad_link || !S->red || !S->gat || !S->upd ||
      !S->bwd_done || !S->red_from) {
    err = HP_NOMEM;
    goto done;
  }
  for (int s = 0; s < pp; s++) {
    hp_stage_cost sc;
    hp_costs_stage(&k, s, pl->first[s], hp_stage_last(pl, s), pl->mode, pl->slices,
                   pl->recompute[s], -1, &sc);
    S->red[s] = sc.red;
    S->gat[s] = sc.gat;
    S->upd[s] = sc.upd;
    for (int r = 0; r < dp; r++) {
      lane *ln = &S->lanes[s * dp + r];
      double ck, comp = hp_costs_compute(&k, k.slot_class[s * dp + r], pl->first[s],
                                         hp_stage_last(pl, s), &ck);
      hp_cost_fwd_bwd(comp, ck, pl->recompute[s], sc.gather, sc.zr, &ln->fwd, &ln->bwd);
      ln->gather_half = sc.gather / 2;
      ln->n = 2 * gas;
      ln->ops = hp__calloc((size_t)ln->n, sizeof *ln->ops);
      ln->act_at = hp__calloc((size_t)gas, sizeof *ln->act_at);
      ln->grad_at = hp__calloc((size_t)gas, sizeof *ln->grad_at);
      if (!ln->ops || !ln->act_at || !ln->grad_at) { err = HP_NOMEM; goto done; }
      schedule(pl, s, ln->ops);
      for (int m = 0; m < gas; m++) {
        ln->act_at[m] = s == 0 ? 0 : INFINITY;
        ln->grad_at[m] = s == pp - 1 ? 0 : INFINITY;
      }
      /* each direction carries half of the hand-off e: the activation forward, the
       * gradient back (cost-model.md 3) */
      if (s < pp - 1) ln->send_act = hp_costs_handoff(&k, s, r, hp_stage_last(pl, s)) / 2;
      if (s > 0) ln->send_grad = S->lanes[(s - 1) * dp + r].send_act;
    }
  }
done:
  hp_costs_release(&k);
  return err;
}

static void teardown(sim *S)
{
  int n = S->pl->pp * S->pl->dp;
  for (int i = 0; S->lanes && i < n; i++) {
    free(S->lanes[i].ops);
    free(S->lanes[i].act_at);
    free(S->lanes[i].grad_at);
  }
  free(S->lanes);
  free(S->act_link);
  free(S->grad_link);
  free(S->red);
  free(S->gat);
  free(S->upd);
  free(S->bwd_done);
  free(S->red_from);
}

/* When the lane's next op could start, INFINITY while its input has not arrived. */
static double lane_ready(const lane *ln)
{
  const op *o = &ln->ops[ln->next];
  double dep = o->bwd ? ln->grad_at[o->micro] : ln->act_at[o->micro];
  return dep > ln->free_at ? dep : ln->free_at;
}

/* The blocking send after an op that ended at `end` on the link whose next free time is
 * *link_free: it starts when both the sender and the link are free, and the sender waits
 * for it. Returns the arrival. */
static hp_err send(sim *S, hp_ev_kind kind, int s, int r, int m, double end, double dur,
                   double *link_free, double *arrival)
{
  double a = end > *link_free ? end : *link_free;
  *link_free = *arrival = a + dur;
  return add_event(S, kind, s, r, m, a, a + dur);
}

/* Stage s's reduction, once every replica has passed its trigger (its last backward's
 * end, or the start of that backward pass under overlap). */
static hp_err reduction_trigger(sim *S, int s, double at)
{
  if (at > S->red_from[s]) S->red_from[s] = at;
  if (++S->bwd_done[s] < S->pl->dp || S->pl->dp == 1) return HP_OK;
  return add_event(S, HP_EV_ALLREDUCE, s, -1, -1, S->red_from[s], S->red_from[s] + S->red[s]);
}

static hp_err run(sim *S)
{
  const hp_plan *pl = S->pl;
  int pp = pl->pp, dp = pl->dp, n = pp * dp;
  int overlap = S->p->job.grad_sync == HP_SYNC_OVERLAP;
  hp_err err;
  for (;;) {
    double best = INFINITY;
    int which = -1;
    for (int i = 0; i < n; i++) {
      const lane *ln = &S->lanes[i];
      double t;
      if (ln->next < ln->n && (t = lane_ready(ln)) < best) { best = t; which = i; }
    }
    if (which < 0) break;
    int s = which / dp, r = which % dp;
    lane *ln = &S->lanes[which];
    op o = ln->ops[ln->next++];
    double end = best + (o.bwd ? ln->bwd : ln->fwd), free_at = end;
    if ((err = add_event(S, o.bwd ? HP_EV_BWD : HP_EV_FWD, s, r, o.micro, best, end))) return err;
    ln->inflight += o.bwd ? -1 : 1;
    if (ln->inflight > ln->peak) ln->peak = ln->inflight;
    if (!o.bwd && s < pp - 1 &&
        (err = send(S, HP_EV_SEND_ACT, s, r, o.micro, end, ln->send_act, &S->act_link[which],
                    &S->lanes[which + dp].act_at[o.micro])))
      return err;
    if (o.bwd && s > 0 &&
        (err = send(S, HP_EV_SEND_GRAD, s, r, o.micro, end, ln->send_grad, &S->grad_link[which],
                    &S->lanes[which - dp].grad_at[o.micro])))
      return err;
    if (!o.bwd && s < pp - 1) free_at = S->lanes[which + dp].act_at[o.micro];
    if (o.bwd && s > 0) free_at = S->lanes[which - dp].grad_at[o.micro];
    ln->free_at = free_at;
    if (o.bwd && ln->next == ln->n &&
        (err = reduction_trigger(S, s, overlap ? best + ln->gather_half : end)))
      return err;
  }
  return HP_OK;
}

/* After the pipeline and every reduction: each used slot's step, then every stage's
 * all-gather. The step's bytes per device are the stage's; its speed the slot's type
 * (a TP group lies in one node, of one type; the slowest of the group is taken). */
static hp_err step_and_gather(sim *S)
{
  const hp_plan *pl = S->pl;
  const hp_cluster *c = S->p->cluster;
  hp_sim *o = S->out;
  double barrier = 0, step_end;
  hp_err err;
  for (int i = 0; i < o->n_events; i++) {
    const hp_sim_event *e = &o->events[i];
    if (e->kind != HP_EV_ALLREDUCE && e->end > o->pipeline_time) o->pipeline_time = e->end;
    if (e->end > barrier) barrier = e->end;
  }
  o->sync_time = barrier - o->pipeline_time;
  for (int s = 0; s < pl->pp; s++)
    for (int r = 0; r < pl->dp; r++) {
      double u = 0;
      for (int j = 0; j < pl->tp; j++) {
        double hbm = c->types[hp_device_type(S->p, pl->dev[HP_SLOT(pl, s, r, j)])].hbm;
        double uj = hbm > 0 ? S->upd[s] / hbm : 0;
        if (uj > u) u = uj;
      }
      if (u <= 0) continue;
      if ((err = add_event(S, HP_EV_STEP, s, r, -1, barrier, barrier + u))) return err;
      if (u > o->step_time) o->step_time = u;
    }
  step_end = barrier + o->step_time;
  for (int s = 0; s < pl->pp; s++) {
    if (S->gat[s] <= 0) continue;
    if ((err = add_event(S, HP_EV_ALLGATHER, s, -1, -1, step_end, step_end + S->gat[s]))) return err;
    if (S->gat[s] > o->gat_time) o->gat_time = S->gat[s];
  }
  o->iteration_time = step_end + o->gat_time;
  return HP_OK;
}

/* By start time, then end, kind, stage, replica and micro-batch: a total order, so the
 * listing is the same on every platform. */
static int by_start(const void *a, const void *b)
{
  const hp_sim_event *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  if (x->kind != y->kind) return (int)x->kind - (int)y->kind;
  if (x->stage != y->stage) return x->stage - y->stage;
  if (x->replica != y->replica) return x->replica - y->replica;
  return x->micro - y->micro;
}

hp_err hp_simulate(const hp_problem *prob, const hp_plan *plan, hp_sim *out, hp_diag *d)
{
  sim S;
  hp_err err;
  int D = prob->cluster->n_devices;
  if ((err = hp_plan_validate(prob, plan, d))) return err;
  memset(&S, 0, sizeof S);
  S.p = prob;
  S.pl = plan;
  S.out = out;
  out->pp = plan->pp;
  out->dp = plan->dp;
  out->n_devices = D;
  out->n_used = plan->pp * plan->dp * plan->tp;
  out->busy = hp__calloc((size_t)D, sizeof *out->busy);
  out->peak_inflight = hp__calloc((size_t)plan->pp, sizeof *out->peak_inflight);
  if (!out->busy || !out->peak_inflight || (err = setup(&S)) || (err = run(&S)) ||
      (err = step_and_gather(&S))) {
    teardown(&S);
    hp_sim_release(out);
    return hp_fail(d, HP_NOMEM, "out of memory simulating a plan");
  }
  double busy_all = 0;
  qsort(out->events, (size_t)out->n_events, sizeof *out->events, by_start);
  for (int i = 0; i < out->n_events; i++) {
    const hp_sim_event *e = &out->events[i];
    if (e->kind == HP_EV_FWD || e->kind == HP_EV_BWD || e->kind == HP_EV_STEP)
      for (int j = 0; j < plan->tp; j++) {
        out->busy[plan->dev[HP_SLOT(plan, e->stage, e->replica, j)]] += e->end - e->start;
        busy_all += e->end - e->start;
      }
  }
  for (int s = 0; s < plan->pp; s++)
    for (int r = 0; r < plan->dp; r++)
      if (S.lanes[s * plan->dp + r].peak > out->peak_inflight[s])
        out->peak_inflight[s] = S.lanes[s * plan->dp + r].peak;
  out->bubble = out->iteration_time > 0 ? 1 - busy_all / (out->n_used * out->iteration_time) : 0;
  teardown(&S);
  return HP_OK;
}
