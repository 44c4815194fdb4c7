/* test_simulate.c -- the discrete-event simulator on schedules worked out by hand:
 * 2 stages x 3 micro-batches in 1F1B and GPipe order (forward 1 s, backward 2 s), with
 * and without transfers; the in-flight counts the memory model assumes; agreement with
 * the analytic formula where it must hold. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

/* Each layer 3e12 FLOP on 1 TFLOP/s devices: 3 s per micro-batch, forward 1, backward 2.
 * out_bytes 5e8 at 8 Gbit/s = 1e9 B/s: 0.5 s a transfer (used with `with_comm`). */
static hp_problem *two_stage(long gbs, hp_schedule sched, int with_comm)
{
  char model[512];
  snprintf(model, sizeof model,
           "{ \"layers\": [ { \"name\": \"x\", \"repeat\": 2, \"params\": 0, \"act_bytes\": 0,"
           "  \"out_bytes\": %g, \"flops\": 3e12 } ] }", with_comm ? 5e8 : 0.0);
  return fx_problem(model,
                    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1 } },"
                    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8 } ] }",
                    NULL, gbs, sched);
}

static const char plan2[] =
  "{ \"pp\": 2, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 0], \"devices\": [[0]] }, { \"layers\": [1, 1], \"devices\": [[1]] } ] }";

/* The [start, end] of an event, or -1 if absent. */
static int find(const hp_sim *s, hp_ev_kind k, int stage, int micro, double *a, double *b)
{
  for (int i = 0; i < s->n_events; i++) {
    const hp_sim_event *e = &s->events[i];
    if (e->kind == k && e->stage == stage && e->micro == micro) { *a = e->start; *b = e->end; return 0; }
  }
  return -1;
}

#define CHECK_EVENT(sim, kind, stage, micro, a0, b0)                                  \
  do {                                                                                \
    double ev_a, ev_b;                                                                \
    CHECK(find(&(sim), kind, stage, micro, &ev_a, &ev_b) == 0);                      \
    CHECK_NEAR(ev_a, a0, 1e-12);                                                      \
    CHECK_NEAR(ev_b, b0, 1e-12);                                                      \
  } while (0)

TEST(simulate_1f1b_two_stages_three_micro_batches_by_hand)
{
  hp_problem *p = two_stage(3, HP_1F1B, 0);
  hp_plan *pl = fx_plan(p, plan2);
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  /* stage 0: F0 F1 B0 F2 B1 B2 (one warm-up forward); stage 1: F0 B0 F1 B1 F2 B2 */
  CHECK_EVENT(s, HP_EV_FWD, 0, 0, 0, 1);
  CHECK_EVENT(s, HP_EV_FWD, 0, 1, 1, 2);
  CHECK_EVENT(s, HP_EV_FWD, 1, 0, 1, 2);
  CHECK_EVENT(s, HP_EV_BWD, 1, 0, 2, 4);
  CHECK_EVENT(s, HP_EV_BWD, 0, 0, 4, 6);    /* waits for the gradient */
  CHECK_EVENT(s, HP_EV_FWD, 1, 1, 4, 5);
  CHECK_EVENT(s, HP_EV_BWD, 1, 1, 5, 7);
  CHECK_EVENT(s, HP_EV_FWD, 0, 2, 6, 7);
  CHECK_EVENT(s, HP_EV_BWD, 0, 1, 7, 9);
  CHECK_EVENT(s, HP_EV_FWD, 1, 2, 7, 8);
  CHECK_EVENT(s, HP_EV_BWD, 1, 2, 8, 10);
  CHECK_EVENT(s, HP_EV_BWD, 0, 2, 10, 12);
  CHECK_NEAR(s.iteration_time, 12, 1e-12);
  /* uniform stages, no communication: the analytic (3-1) * 3 + 3 + 3 */
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(s.iteration_time, e.iteration_time, 1e-12);
  CHECK_INT(s.peak_inflight[0], 2);          /* min(pp - s, gas): the memory model's count */
  CHECK_INT(s.peak_inflight[1], 1);
  CHECK_NEAR(s.busy[0], 9, 1e-12);
  CHECK_NEAR(s.bubble, 1 - 18.0 / (2 * 12), 1e-12);
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(simulate_gpipe_two_stages_three_micro_batches_by_hand)
{
  hp_problem *p = two_stage(3, HP_GPIPE, 0);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"schedule\": \"gpipe\","
                           " \"stages\": [ { \"layers\": [0, 0], \"devices\": [[0]] },"
                           " { \"layers\": [1, 1], \"devices\": [[1]] } ] }");
  hp_sim s = {0};
  hp_diag d = {0};
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  /* all forwards, then the backwards from the last micro-batch down */
  CHECK_EVENT(s, HP_EV_FWD, 0, 2, 2, 3);
  CHECK_EVENT(s, HP_EV_FWD, 1, 2, 3, 4);
  CHECK_EVENT(s, HP_EV_BWD, 1, 2, 4, 6);
  CHECK_EVENT(s, HP_EV_BWD, 0, 2, 6, 8);
  CHECK_EVENT(s, HP_EV_BWD, 1, 0, 8, 10);
  CHECK_EVENT(s, HP_EV_BWD, 0, 0, 10, 12);
  CHECK_NEAR(s.iteration_time, 12, 1e-12);
  CHECK_INT(s.peak_inflight[0], 3);          /* GPipe keeps all gas in flight */
  CHECK_INT(s.peak_inflight[1], 3);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(simulate_transfers_on_the_critical_path_differ_from_the_formula)
{
  hp_problem *p = two_stage(3, HP_1F1B, 1);
  hp_plan *pl = fx_plan(p, plan2);
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  /* each transfer 0.5 s: F0 [0,1], act [1,1.5], F0' [1.5,2.5], B0' [2.5,4.5], grad
   * [4.5,5], B0 [5,7], F2 [7,8], ..., B2' [9.5,11.5], grad [11.5,12], B2 [12,14] */
  CHECK_EVENT(s, HP_EV_SEND_ACT, 0, 0, 1, 1.5);
  CHECK_EVENT(s, HP_EV_FWD, 1, 0, 1.5, 2.5);
  CHECK_EVENT(s, HP_EV_SEND_GRAD, 1, 0, 4.5, 5);
  CHECK_EVENT(s, HP_EV_BWD, 0, 0, 5, 7);
  CHECK_EVENT(s, HP_EV_FWD, 1, 1, 4.5, 5.5);
  CHECK_EVENT(s, HP_EV_BWD, 0, 1, 8, 10);
  CHECK_EVENT(s, HP_EV_FWD, 1, 2, 8.5, 9.5);
  CHECK_EVENT(s, HP_EV_BWD, 0, 2, 12, 14);
  CHECK_NEAR(s.iteration_time, 14, 1e-12);
  /* the formula charges the hand-off once: (3-1) * 3 + 6 + 2 * 0.5 = 13 */
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, 13, 1e-12);
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(simulate_link_serialises_transfers_that_outlast_the_compute)
{
  /* 0.1 TFLOP/s on 1e11-FLOP layers: forward 1/3 s, backward 2/3 s, transfers 0.5 s: the
   * forward link queues activations: act k leaves at max(ready, previous end) */
  hp_problem *p = fx_problem(
    "{ \"layers\": [ { \"name\": \"x\", \"repeat\": 2, \"params\": 0, \"act_bytes\": 0,"
    "  \"out_bytes\": 5e8, \"flops\": 1e11 } ] }",
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 0.1 } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8 } ] }",
    NULL, 3, HP_GPIPE);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"schedule\": \"gpipe\","
                           " \"stages\": [ { \"layers\": [0, 0], \"devices\": [[0]] },"
                           " { \"layers\": [1, 1], \"devices\": [[1]] } ] }");
  hp_sim s = {0};
  hp_diag d = {0};
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  /* forwards end at 1/3, 2/3, 1: transfers [1/3, 5/6], [5/6, 4/3], [4/3, 11/6] */
  CHECK_EVENT(s, HP_EV_SEND_ACT, 0, 0, 1.0 / 3, 5.0 / 6);
  CHECK_EVENT(s, HP_EV_SEND_ACT, 0, 1, 5.0 / 6, 4.0 / 3);
  CHECK_EVENT(s, HP_EV_SEND_ACT, 0, 2, 4.0 / 3, 11.0 / 6);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(simulate_in_flight_matches_the_memory_model_and_allreduce_follows_the_last_backward)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 16, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "{ \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                           "{ \"layers\": [2, 3], \"devices\": [[1], [3]] } ] }");
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  double last = 0, a, b;
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_INT(s.peak_inflight[0], 2);
  CHECK_INT(s.peak_inflight[1], 1);
  for (int i = 0; i < s.n_events; i++)
    if (s.events[i].kind == HP_EV_BWD && s.events[i].stage == 0 && s.events[i].end > last)
      last = s.events[i].end;
  CHECK(find(&s, HP_EV_ALLREDUCE, 0, -1, &a, &b) == 0);
  CHECK_NEAR(a, last, 1e-12);
  CHECK_NEAR(b - a, e.sync[0], 1e-12);       /* the cost model's sync */
  for (int i = 1; i < s.n_events; i++) CHECK(s.events[i].start >= s.events[i - 1].start);
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(spearman_by_hand_with_ties)
{
  /* x ranks 1 2 3 4, y ranks 1 3 2 4: d^2 = 0 1 1 0, rho = 1 - 6 * 2 / (4 * 15) = 0.8 */
  static const double x[] = { 1, 2, 3, 4 }, y[] = { 10, 30, 20, 40 };
  /* with a tie in y (2.5, 2.5): Pearson on ranks (1, 2, 3, 4) and (1, 2.5, 2.5, 4) */
  static const double yt[] = { 1, 5, 5, 9 };
  static const double z[] = { 4, 3, 2, 1 };
  CHECK_NEAR(hp_spearman(x, y, 4), 0.8, 1e-12);
  CHECK_NEAR(hp_spearman(x, z, 4), -1.0, 1e-12);
  /* mean 2.5; sxy = (-1.5)(-1.5) + (-0.5)(0) + (0.5)(0) + (1.5)(1.5) = 4.5;
   * sxx = 5, syy = 4.5: rho = 4.5 / sqrt(22.5) */
  CHECK_NEAR(hp_spearman(x, yt, 4), 4.5 / sqrt(22.5), 1e-12);
}

TEST(crosscheck_agrees_exactly_where_stages_are_equal_and_nothing_is_sent)
{
  /* two equal layers, no parameters (no sync), no hand-off bytes: every plan without
   * recomputation has equal stages, where the simulation must equal the formula; with
   * recomputation on one stage of two the stages differ and the two may differ */
  hp_problem *p = two_stage(6, HP_1F1B, 0);
  hp_crosscheck c;
  hp_diag d = {0};
  int equal = 0;
  CHECK(hp_crosscheck_run(p, 40, 5, &c, &d) == HP_OK);
  CHECK(c.n >= 40);
  for (int i = 0; i < c.n; i++) {
    const hp_plan *pl = c.plans[i];
    int uniform = 1;
    for (int s = 1; s < pl->pp; s++) uniform &= pl->recompute[s] == pl->recompute[0];
    if (!uniform) continue;
    equal++;
    CHECK_NEAR(c.simulated[i], c.analytic[i], 1e-12);
  }
  CHECK(equal > 0);
  CHECK(c.spearman > 0.5);
  hp_crosscheck_release(&c);
  hp_problem_destroy(&p);
}
