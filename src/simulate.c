/* simulate.c -- discrete-event simulation of one training iteration. Every slot
 * (stage s, replica r) runs its schedule's order of forwards and backwards (1F1B:
 * min(pp-s-1, gas) warm-up forwards, then one forward one backward, then the remaining
 * backwards; GPipe: every forward, then the backwards from the last micro-batch down).
 * A forward on s > 0 waits for its activation, a backward on s < pp-1 for its gradient;
 * transfers run on the link between the two slots, one per direction at a time, in the
 * order they became ready, while the sender goes on computing (AMP's appendix). A
 * stage's all-reduce starts when every replica of the stage has done its last backward.
 * Durations are the cost model's: forward = 1/3 of the layer time, backward = 2/3 (plus
 * 1/3 with recomputation), half of the ZeRO-3 gather before each; a transfer carries
 * O mbs / tp at the lanes' slowest link plus its latency; the all-reduce is sync[s].
 * Actions are taken in order of start time, so a link serves transfers by readiness. */
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
  double free_at;      /* when the last op ended */
  double fwd, bwd;     /* durations */
  double *act_at;      /* [gas] activation arrival (s > 0), INFINITY until known */
  double *grad_at;     /* [gas] gradient arrival (s < pp-1) */
  int inflight, peak;
} lane;

typedef struct xfer { double ready; int micro; } xfer;

typedef struct link {  /* one direction between (s, r) and its neighbour */
  xfer *q;
  int head, tail;
  double free_at, dur;
} link;

typedef struct sim {
  const hp_problem *p;
  const hp_plan *pl;
  lane *lanes;         /* [pp * dp] */
  link *fwd_links;     /* [pp * dp]: (s, r) -> (s+1, r) */
  link *bwd_links;     /* [pp * dp]: (s, r) -> (s-1, r) */
  double *sync;        /* [pp] */
  int *bwd_done;       /* [pp] replicas done with their last backward */
  double *last_bwd;    /* [pp] latest last-backward end */
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
  hp_costs k;
  hp_err err = HP_OK;
  if (hp_costs_build(p, pl, &k, NULL)) return HP_NOMEM;
  S->lanes = hp__calloc((size_t)pp * dp, sizeof *S->lanes);
  S->fwd_links = hp__calloc((size_t)pp * dp, sizeof *S->fwd_links);
  S->bwd_links = hp__calloc((size_t)pp * dp, sizeof *S->bwd_links);
  S->sync = hp__calloc((size_t)pp, sizeof *S->sync);
  S->bwd_done = hp__calloc((size_t)pp, sizeof *S->bwd_done);
  S->last_bwd = hp__calloc((size_t)pp, sizeof *S->last_bwd);
  if (!S->lanes || !S->fwd_links || !S->bwd_links || !S->sync || !S->bwd_done || !S->last_bwd) {
    err = HP_NOMEM;
    goto done;
  }
  for (int s = 0; s < pp; s++) {
    hp_stage_cost sc;
    hp_costs_stage(&k, s, pl->first[s], hp_stage_last(pl, s), pl->mode, pl->slices,
                   pl->recompute[s], -1, &sc);
    S->sync[s] = sc.red;
    for (int r = 0; r < dp; r++) {
      lane *ln = &S->lanes[s * dp + r];
      double ck, comp = hp_costs_compute(&k, k.slot_class[s * dp + r], pl->first[s],
                                         hp_stage_last(pl, s), &ck);
      hp_cost_fwd_bwd(comp, ck, pl->recompute[s], sc.gather, sc.zr, &ln->fwd, &ln->bwd);
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
      if (s < pp - 1) {
        link *f = &S->fwd_links[s * dp + r], *b = &S->bwd_links[(s + 1) * dp + r];
        /* each direction carries half of the hand-off e */
        f->dur = b->dur = hp_costs_handoff(&k, s, r, hp_stage_last(pl, s)) / 2;
        f->q = hp__calloc((size_t)gas, sizeof *f->q);
        b->q = hp__calloc((size_t)gas, sizeof *b->q);
        if (!f->q || !b->q) { err = HP_NOMEM; goto done; }
      }
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
  for (int i = 0; S->fwd_links && i < n; i++) free(S->fwd_links[i].q);
  for (int i = 0; S->bwd_links && i < n; i++) free(S->bwd_links[i].q);
  free(S->lanes);
  free(S->fwd_links);
  free(S->bwd_links);
  free(S->sync);
  free(S->bwd_done);
  free(S->last_bwd);
}

/* When the lane's next op could start, INFINITY while its input has not arrived. */
static double lane_ready(const lane *ln)
{
  const op *o = &ln->ops[ln->next];
  double dep = o->bwd ? ln->grad_at[o->micro] : ln->act_at[o->micro];
  return dep > ln->free_at ? dep : ln->free_at;
}

static double link_ready(const link *lk)
{
  if (lk->head == lk->tail) return INFINITY;
  return lk->q[lk->head].ready > lk->free_at ? lk->q[lk->head].ready : lk->free_at;
}

static hp_err run(sim *S)
{
  const hp_plan *pl = S->pl;
  int pp = pl->pp, dp = pl->dp, n = pp * dp;
  hp_err err;
  for (;;) {
    /* the earliest action: a lane's next op, or a link's next transfer */
    double best = INFINITY;
    int which = -1, kind = 0;   /* kind 0 lane, 1 forward link, 2 backward link */
    for (int i = 0; i < n; i++) {
      const lane *ln = &S->lanes[i];
      double t;
      if (ln->next < ln->n && (t = lane_ready(ln)) < best) { best = t; which = i; kind = 0; }
    }
    for (int i = 0; i < n; i++) {
      double t;
      if ((t = link_ready(&S->fwd_links[i])) < best) { best = t; which = i; kind = 1; }
      if ((t = link_ready(&S->bwd_links[i])) < best) { best = t; which = i; kind = 2; }
    }
    if (which < 0) break;
    int s = which / dp, r = which % dp;
    if (kind == 0) {
      lane *ln = &S->lanes[which];
      op o = ln->ops[ln->next++];
      double end = best + (o.bwd ? ln->bwd : ln->fwd);
      if ((err = add_event(S, o.bwd ? HP_EV_BWD : HP_EV_FWD, s, r, o.micro, best, end))) return err;
      ln->free_at = end;
      ln->inflight += o.bwd ? -1 : 1;
      if (ln->inflight > ln->peak) ln->peak = ln->inflight;
      if (!o.bwd && s < pp - 1) {
        link *lk = &S->fwd_links[which];
        lk->q[lk->tail++] = (xfer){ end, o.micro };
      }
      if (o.bwd && s > 0) {
        link *lk = &S->bwd_links[which];
        lk->q[lk->tail++] = (xfer){ end, o.micro };
      }
      if (o.bwd && ln->next == ln->n) {      /* last backward: maybe the all-reduce */
        if (end > S->last_bwd[s]) S->last_bwd[s] = end;
        if (++S->bwd_done[s] == dp && dp > 1 &&
            (err = add_event(S, HP_EV_ALLREDUCE, s, -1, -1, S->last_bwd[s], S->last_bwd[s] + S->sync[s])))
          return err;
      }
    } else {
      link *lk = kind == 1 ? &S->fwd_links[which] : &S->bwd_links[which];
      xfer x = lk->q[lk->head++];
      double end = best + lk->dur;
      lk->free_at = end;
      if ((err = add_event(S, kind == 1 ? HP_EV_SEND_ACT : HP_EV_SEND_GRAD, s, r, x.micro, best, end)))
        return err;
      if (kind == 1) S->lanes[(s + 1) * dp + r].act_at[x.micro] = end;
      else S->lanes[(s - 1) * dp + r].grad_at[x.micro] = end;
    }
  }
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
  out->busy = hp__calloc((size_t)D, sizeof *out->busy);
  out->peak_inflight = hp__calloc((size_t)plan->pp, sizeof *out->peak_inflight);
  if (!out->busy || !out->peak_inflight || (err = setup(&S)) || (err = run(&S))) {
    teardown(&S);
    hp_sim_release(out);
    return hp_fail(d, HP_NOMEM, "out of memory simulating a plan");
  }
  double busy_all = 0;
  qsort(out->events, (size_t)out->n_events, sizeof *out->events, by_start);
  for (int i = 0; i < out->n_events; i++) {
    const hp_sim_event *e = &out->events[i];
    if (e->end > out->iteration_time) out->iteration_time = e->end;
    if (e->kind == HP_EV_FWD || e->kind == HP_EV_BWD)
      for (int j = 0; j < plan->tp; j++) {
        out->busy[plan->dev[HP_SLOT(plan, e->stage, e->replica, j)]] += e->end - e->start;
        busy_all += e->end - e->start;
      }
  }
  for (int s = 0; s < plan->pp; s++)
    for (int r = 0; r < plan->dp; r++)
      if (S.lanes[s * plan->dp + r].peak > out->peak_inflight[s])
        out->peak_inflight[s] = S.lanes[s * plan->dp + r].peak;
  out->bubble = out->iteration_time > 0 ? 1 - busy_all / (D * out->iteration_time) : 0;
  teardown(&S);
  return HP_OK;
}
