/* test_simulate.c -- the discrete-event simulator (cost model 1.2) on schedules worked
 * out by hand: 2 stages x 3 micro-batches in 1F1B and GPipe order (forward 1 s, backward
 * 2 s), with and without blocking transfers; gradient reductions after or during the last
 * backward; ZeRO-3 gathers and per-micro-batch reduce-scatters; the optimizer step and
 * the weights' all-gather; an idle device; the in-flight counts the memory model assumes;
 * agreement with the analytic formula where it must hold. */
#include <math.h>
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

static const char plan2_gpipe[] =
  "{ \"pp\": 2, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"schedule\": \"gpipe\","
  " \"stages\": [ { \"layers\": [0, 0], \"devices\": [[0]] },"
  " { \"layers\": [1, 1], \"devices\": [[1]] } ] }";

/* Two stages of two replicas on one node of four devices (1e9 B/s between any two, no
 * latency): stage 0 on devices 0 and 1, stage 1 on 2 and 3. */
static const char plan2x2[] =
  "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 0], \"devices\": [[0], [1]] },"
  "  { \"layers\": [1, 1], \"devices\": [[2], [3]] } ] }";

/* Two layers of 3e12 FLOP (forward 1 s, backward 2 s on 1 TFLOP/s), `params` each, no
 * hand-off bytes, update_bytes 2, on one node of four devices, with a memory bandwidth of
 * 1 GB/s when `with_hbm`; gbs 6 (gas 3 at dp 2). */
static hp_problem *two_stage_dp2(double params, int with_hbm)
{
  char model[512], cluster[512];
  snprintf(model, sizeof model,
           "{ \"update_bytes\": 2, \"layers\": [ { \"name\": \"x\", \"repeat\": 2,"
           "  \"params\": %g, \"act_bytes\": 0, \"out_bytes\": 0, \"flops\": 3e12 } ] }", params);
  snprintf(cluster, sizeof cluster,
           "{ \"device_types\": { \"g\": { \"mem_gib\": 1000, \"tflops\": 1%s } },"
           "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 4, \"intra_gbps\": 8 } ] }",
           with_hbm ? ", \"hbm_gbs\": 1" : "");
  return fx_problem(model, cluster, NULL, 6, HP_1F1B);
}

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
  CHECK_NEAR(s.pipeline_time, 12, 1e-12);   /* no parameters: nothing after the pipeline */
  CHECK_NEAR(s.sync_time + s.step_time + s.gat_time, 0, 1e-12);
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
  hp_plan *pl = fx_plan(p, plan2_gpipe);
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

TEST(simulate_blocking_transfers_by_hand_match_the_steady_state_period)
{
  hp_problem *p = two_stage(3, HP_1F1B, 1);
  hp_plan *pl = fx_plan(p, plan2);
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  double a, b;
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  /* forward 1 s, backward 2 s; each transfer 0.5 s (e = 1 s, half each way) and its sender
   * waits for it:
   *   stage 0: F0 [0,1] act [1,1.5]; F1 [1.5,2.5] act [2.5,3]; B0 waits for g0 (5):
   *            [5,7]; F2 [7,8] act [8,8.5]; B1 (g1 at 8.5) [8.5,10.5]; B2 (g2 at 12) [12,14]
   *   stage 1: F0 (a0 at 1.5) [1.5,2.5]; B0 [2.5,4.5] grad [4.5,5]; F1 (a1 at 3) [5,6];
   *            B1 [6,8] grad [8,8.5]; F2 (a2 at 8.5) [8.5,9.5]; B2 [9.5,11.5] grad [11.5,12]
   * steady state 3.5 s a micro-batch on both stages: c = 3 + (0 + 1) / 2 */
  CHECK_EVENT(s, HP_EV_SEND_ACT, 0, 0, 1, 1.5);
  CHECK_EVENT(s, HP_EV_FWD, 0, 1, 1.5, 2.5);     /* the sender waited for its send */
  CHECK_EVENT(s, HP_EV_FWD, 1, 0, 1.5, 2.5);
  CHECK_EVENT(s, HP_EV_SEND_GRAD, 1, 0, 4.5, 5);
  CHECK_EVENT(s, HP_EV_BWD, 0, 0, 5, 7);
  CHECK_EVENT(s, HP_EV_FWD, 1, 1, 5, 6);
  CHECK_EVENT(s, HP_EV_FWD, 0, 2, 7, 8);
  CHECK_EVENT(s, HP_EV_SEND_ACT, 0, 2, 8, 8.5);
  CHECK_EVENT(s, HP_EV_BWD, 0, 1, 8.5, 10.5);
  CHECK_EVENT(s, HP_EV_FWD, 1, 2, 8.5, 9.5);
  CHECK_EVENT(s, HP_EV_SEND_GRAD, 1, 2, 11.5, 12);
  CHECK_EVENT(s, HP_EV_BWD, 0, 2, 12, 14);
  CHECK(find(&s, HP_EV_SEND_GRAD, 0, 0, &a, &b) < 0);   /* stage 0 sends no gradient */
  CHECK_NEAR(s.iteration_time, 14, 1e-12);
  CHECK_NEAR(s.pipeline_time, 14, 1e-12);
  /* 1.2's formula: (3 - 1) * 3.5 + (3 + 3) + 1 = 14, the same */
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, 14, 1e-12);
  CHECK_NEAR(s.iteration_time, e.iteration_time, 1e-12);
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(simulate_gpipe_with_transfers_pays_each_phase_s_slowest_send)
{
  hp_problem *p = two_stage(3, HP_GPIPE, 1);
  hp_plan *pl = fx_plan(p, plan2_gpipe);
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  /* the forwards are paced by stage 0's forward and send (1.5 s), the backwards by stage
   * 1's backward and send (2.5 s): 4 s a micro-batch where the formula's period is 3.5.
   *   stage 0: F0 [0,1] act [1,1.5] F1 [1.5,2.5] act [2.5,3] F2 [3,4] act [4,4.5]
   *   stage 1: F0 [1.5,2.5] F1 [3,4] F2 [4.5,5.5] B2 [5.5,7.5] grad [7.5,8]
   *            B1 [8,10] grad [10,10.5] B0 [10.5,12.5] grad [12.5,13]
   *   stage 0: B2 [8,10] B1 [10.5,12.5] B0 [13,15] */
  CHECK_EVENT(s, HP_EV_FWD, 0, 2, 3, 4);
  CHECK_EVENT(s, HP_EV_FWD, 1, 2, 4.5, 5.5);
  CHECK_EVENT(s, HP_EV_SEND_GRAD, 1, 1, 10, 10.5);
  CHECK_EVENT(s, HP_EV_BWD, 0, 2, 8, 10);
  CHECK_EVENT(s, HP_EV_BWD, 0, 0, 13, 15);
  CHECK_NEAR(s.iteration_time, 15, 1e-12);
  /* the formula, both schedules: (3 - 1) * 3.5 + 6 + 1 = 14 */
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, 14, 1e-12);
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(simulate_three_stages_fill_and_drain_half_a_hand_off_shorter_than_the_formula)
{
  /* Three stages, forward 1 s, backward 2 s, 0.5 s a transfer each way, gas 2:
   *   stage 0: F0 [0,1] act [1,1.5]; F1 [1.5,2.5] act [2.5,3]; B0 (g0 at 9) [9,11];
   *            B1 (g1 at 12.5) [12.5,14.5]
   *   stage 1: F0 [1.5,2.5] act [2.5,3]; F1 (a1 at 3) [3,4] act [4,4.5];
   *            B0 (g0 at 6.5) [6.5,8.5] grad [8.5,9]; B1 (g1 at 10) [10,12] grad [12,12.5]
   *   stage 2: F0 (a0 at 3) [3,4]; B0 [4,6] grad [6,6.5]; F1 (a1 at 4.5) [6.5,7.5];
   *            B1 [7.5,9.5] grad [9.5,10]
   * 14.5 s. The formula: periods 3.5, 3 + 1 = 4 (the middle stage pays both halves),
   * 3.5: (2 - 1) x 4 + 9 + 2 = 15, half a hand-off more: compared, not forced equal. */
  hp_problem *p = fx_problem(
    "{ \"layers\": [ { \"name\": \"x\", \"repeat\": 3, \"params\": 0, \"act_bytes\": 0,"
    "  \"out_bytes\": 5e8, \"flops\": 3e12 } ] }",
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1 } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 3, \"intra_gbps\": 8 } ] }",
    NULL, 2, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 3, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                           "  { \"layers\": [0, 0], \"devices\": [[0]] },"
                           "  { \"layers\": [1, 1], \"devices\": [[1]] },"
                           "  { \"layers\": [2, 2], \"devices\": [[2]] } ] }");
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  CHECK_EVENT(s, HP_EV_SEND_ACT, 1, 1, 4, 4.5);
  CHECK_EVENT(s, HP_EV_FWD, 2, 1, 6.5, 7.5);
  CHECK_EVENT(s, HP_EV_BWD, 1, 0, 6.5, 8.5);
  CHECK_EVENT(s, HP_EV_SEND_GRAD, 1, 1, 12, 12.5);
  CHECK_EVENT(s, HP_EV_BWD, 0, 0, 9, 11);
  CHECK_EVENT(s, HP_EV_BWD, 0, 1, 12.5, 14.5);
  CHECK_NEAR(s.iteration_time, 14.5, 1e-12);
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, 15, 1e-12);
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(simulate_a_send_holds_its_sender_and_its_link)
{
  /* 0.1 TFLOP/s on 1e11-FLOP layers: forward 1/3 s, backward 2/3 s, transfers 0.5 s: each
   * forward of stage 0 waits for the previous activation to be sent, and the link carries
   * one activation at a time */
  hp_problem *p = fx_problem(
    "{ \"layers\": [ { \"name\": \"x\", \"repeat\": 2, \"params\": 0, \"act_bytes\": 0,"
    "  \"out_bytes\": 5e8, \"flops\": 1e11 } ] }",
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 0.1 } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8 } ] }",
    NULL, 3, HP_GPIPE);
  hp_plan *pl = fx_plan(p, plan2_gpipe);
  hp_sim s = {0};
  hp_diag d = {0};
  double last = -1;
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  /* F0 [0, 1/3] act [1/3, 5/6]; F1 [5/6, 7/6] act [7/6, 5/3]; F2 [5/3, 2] act [2, 5/2] */
  CHECK_EVENT(s, HP_EV_SEND_ACT, 0, 0, 1.0 / 3, 5.0 / 6);
  CHECK_EVENT(s, HP_EV_FWD, 0, 1, 5.0 / 6, 7.0 / 6);
  CHECK_EVENT(s, HP_EV_SEND_ACT, 0, 1, 7.0 / 6, 5.0 / 3);
  CHECK_EVENT(s, HP_EV_FWD, 0, 2, 5.0 / 3, 2);
  CHECK_EVENT(s, HP_EV_SEND_ACT, 0, 2, 2, 2.5);
  for (int i = 0; i < s.n_events; i++)        /* never two transfers on the link at once */
    if (s.events[i].kind == HP_EV_SEND_ACT) {
      CHECK(s.events[i].start >= last);
      last = s.events[i].end;
    }
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

/* Runs the dp = 2 plan under grad_sync `sync`, checks both replicas' stage reductions at
 * [a1, b1] (stage 1) and [a0, b0] (stage 0), and returns the simulated and analytic
 * times in *sim_t and *formula. */
static int reductions(double params, hp_grad_sync sync, double a1, double b1, double a0,
                      double b0, double *sim_t, double *formula)
{
  hp_problem *p = two_stage_dp2(params, 0);
  hp_plan *pl = fx_plan(p, plan2x2);
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  double a, b;
  int ok;
  p->job.grad_sync = sync;
  ok = hp_simulate(p, pl, &s, &d) == HP_OK && hp_evaluate(p, pl, &e, &d) == HP_OK &&
       find(&s, HP_EV_ALLREDUCE, 1, -1, &a, &b) == 0 && fabs(a - a1) < 1e-12 && fabs(b - b1) < 1e-12 &&
       find(&s, HP_EV_ALLREDUCE, 0, -1, &a, &b) == 0 && fabs(a - a0) < 1e-12 && fabs(b - b0) < 1e-12;
  *sim_t = s.iteration_time;
  *formula = e.iteration_time;
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
  return ok;
}

TEST(simulate_overlap_hides_a_short_reduction_behind_the_last_backward)
{
  /* 5e8 parameters a layer: red = 2 (2-1)/2 x 2 B x 5e8 / 1e9 B/s = 1 s on each stage.
   * Both replicas run the timeline of the first test: stage 1's last backward [8, 10],
   * stage 0's [10, 12].
   * end: stage 1 reduces [10, 11], stage 0 [12, 13]: 13 s; formula 12 + 1 = 13.
   * overlap: stage 1 [8, 9], stage 0 [10, 11], both inside their backward: 12 s;
   * formula max(12 + max(0, 1 - 2), 12 - 2 + 0) = 12. */
  double sim_t, formula;
  CHECK(reductions(5e8, HP_SYNC_END, 10, 11, 12, 13, &sim_t, &formula));
  CHECK_NEAR(sim_t, 13, 1e-12);
  CHECK_NEAR(formula, 13, 1e-12);
  CHECK(reductions(5e8, HP_SYNC_OVERLAP, 8, 9, 10, 11, &sim_t, &formula));
  CHECK_NEAR(sim_t, 12, 1e-12);
  CHECK_NEAR(formula, 12, 1e-12);
}

TEST(simulate_overlap_leaves_a_long_reduction_sticking_out)
{
  /* 2e9 parameters a layer: red = 2 x 2e9 / 1e9 = 4 s, longer than the 2 s backward.
   * end: stage 1 [10, 14], stage 0 [12, 16]: 16 s; formula 12 + 4.
   * overlap: stage 1 [8, 12], stage 0 [10, 14]: 14 s; formula
   * max(12 + (4 - 2), 10 + (4 - 2)) = 14. */
  double sim_t, formula;
  CHECK(reductions(2e9, HP_SYNC_END, 10, 14, 12, 16, &sim_t, &formula));
  CHECK_NEAR(sim_t, 16, 1e-12);
  CHECK_NEAR(formula, 16, 1e-12);
  CHECK(reductions(2e9, HP_SYNC_OVERLAP, 8, 12, 10, 14, &sim_t, &formula));
  CHECK_NEAR(sim_t, 14, 1e-12);
  CHECK_NEAR(formula, 14, 1e-12);
}

TEST(simulate_zdp_gathers_and_scatters_with_every_micro_batch)
{
  /* One stage, two replicas, gas 2: layer z (zdp, 5e8 parameters) and layer d (dp, 2e9),
   * 1.5 s of compute each; 1e9 B/s between the replicas, no latency.
   *   Z  = 2 (1/2) x 2 B x 5e8 / 1e9 = 1 s: half before each forward, half before each
   *        backward;
   *   Zr = (1/2) x 2 B x 5e8 / 1e9 = 0.5 s, with every backward;
   *   red = 2 (1/2) x 2 B x 2e9 / 1e9 = 4 s, layer d's all-reduce.
   * forward 1 + 0.5 = 1.5 s, backward 2 + 0.5 + 0.5 = 3 s:
   *   F0 [0, 1.5] B0 [1.5, 4.5] F1 [4.5, 6] B1 [6, 9].
   * end: the reduction [9, 13]: 13 s; formula 2 x 4.5 + 4 = 13.
   * overlap: it starts with B1's backward pass, after its half gather: [6.5, 10.5]:
   * 10.5 s; formula 9 + max(0, 4 - b) with b = 2 + 0.5 = 2.5: 10.5. */
  hp_problem *p = fx_problem(
    "{ \"layers\": ["
    "  { \"name\": \"z\", \"params\": 5e8, \"act_bytes\": 0, \"out_bytes\": 0, \"flops\": 1.5e12 },"
    "  { \"name\": \"d\", \"params\": 2e9, \"act_bytes\": 0, \"out_bytes\": 0, \"flops\": 1.5e12 } ] }",
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1000, \"tflops\": 1 } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8 } ] }",
    NULL, 4, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"sharding\": [\"zdp\", \"dp\"],"
                           " \"stages\": [ { \"layers\": [0, 1], \"devices\": [[0], [1]] } ] }");
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  CHECK_EVENT(s, HP_EV_FWD, 0, 0, 0, 1.5);
  CHECK_EVENT(s, HP_EV_BWD, 0, 0, 1.5, 4.5);
  CHECK_EVENT(s, HP_EV_FWD, 0, 1, 4.5, 6);
  CHECK_EVENT(s, HP_EV_BWD, 0, 1, 6, 9);
  CHECK_EVENT(s, HP_EV_ALLREDUCE, 0, -1, 9, 13);
  CHECK_NEAR(s.iteration_time, 13, 1e-12);
  CHECK_NEAR(s.busy[1], 9, 1e-12);            /* gathers and scatters count as busy */
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, 13, 1e-12);
  hp_eval_release(&e);
  hp_sim_release(&s);
  p->job.grad_sync = HP_SYNC_OVERLAP;
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  CHECK_EVENT(s, HP_EV_ALLREDUCE, 0, -1, 6.5, 10.5);
  CHECK_NEAR(s.iteration_time, 10.5, 1e-12);
  CHECK_NEAR(s.pipeline_time, 9, 1e-12);
  CHECK_NEAR(s.sync_time, 1.5, 1e-12);
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, 10.5, 1e-12);
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(simulate_step_on_each_device_at_its_own_memory_bandwidth)
{
  /* Two stages on two nodes, one type each: hbm 1 GB/s (stage 0) and 0.5 GB/s (stage 1).
   * update_bytes 2 on 5e8 parameters a stage: U = 1e9 / 1e9 = 1 s and 1e9 / 5e8 = 2 s.
   * Pipeline 12 s (the first test's timeline: nothing is sent), no replicas to reduce:
   * steps [12, 13] and [12, 14]: 14 s; formula 12 + 0 + max(1, 2) + 0 = 14. */
  hp_problem *p = fx_problem(
    "{ \"update_bytes\": 2, \"layers\": [ { \"name\": \"x\", \"repeat\": 2, \"params\": 5e8,"
    "  \"act_bytes\": 0, \"out_bytes\": 0, \"flops\": 3e12 } ] }",
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1000, \"tflops\": 1, \"hbm_gbs\": 1 },"
    "                      \"h\": { \"mem_gib\": 1000, \"tflops\": 1, \"hbm_gbs\": 0.5 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"g\", \"gpus\": 1, \"intra_gbps\": 8 },"
    "             { \"name\": \"b\", \"type\": \"h\", \"gpus\": 1, \"intra_gbps\": 8 } ],"
    "  \"inter_gbps\": 8 }",
    NULL, 3, HP_1F1B);
  hp_plan *pl = fx_plan(p, plan2);
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  CHECK_EVENT(s, HP_EV_BWD, 0, 2, 10, 12);
  CHECK_EVENT(s, HP_EV_STEP, 0, -1, 12, 13);
  CHECK_EVENT(s, HP_EV_STEP, 1, -1, 12, 14);
  CHECK_NEAR(s.step_time, 2, 1e-12);
  CHECK_NEAR(s.iteration_time, 14, 1e-12);
  CHECK_NEAR(s.busy[1], 9 + 2, 1e-12);       /* the step is device work */
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.step_time, 2, 1e-12);
  CHECK_NEAR(e.iteration_time, 14, 1e-12);
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(simulate_zero1_reduces_steps_then_gathers_the_weights)
{
  /* The dp = 2 plan with both layers zero1, 5e8 parameters each, hbm 1 GB/s:
   *   red = (1/2) x 2 B x 5e8 / 1e9 = 0.5 s (a reduce-scatter),
   *   U   = 2 B x 5e8 / 2 replicas / 1e9 = 0.5 s on every device,
   *   gat = (1/2) x 2 B x 5e8 / 1e9 = 0.5 s (the updated weights' all-gather).
   * end: reductions [10, 10.5] (stage 1) and [12, 12.5] (stage 0); then every step
   * [12.5, 13]; then the all-gathers [13, 13.5]: 13.5 s; formula 12 + 0.5 + 0.5 + 0.5.
   * overlap: reductions [8, 8.5] and [10, 10.5], hidden; steps [12, 12.5], all-gathers
   * [12.5, 13]: 13 s; formula 12 + 0 + 0.5 + 0.5. */
  hp_problem *p = two_stage_dp2(5e8, 1);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"sharding\": [\"zero1\", \"zero1\"],"
                           " \"stages\": [ { \"layers\": [0, 0], \"devices\": [[0], [1]] },"
                           " { \"layers\": [1, 1], \"devices\": [[2], [3]] } ] }");
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  int steps = 0;
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  CHECK_EVENT(s, HP_EV_ALLREDUCE, 1, -1, 10, 10.5);
  CHECK_EVENT(s, HP_EV_ALLREDUCE, 0, -1, 12, 12.5);
  for (int i = 0; i < s.n_events; i++)
    if (s.events[i].kind == HP_EV_STEP) {
      steps++;
      CHECK_NEAR(s.events[i].start, 12.5, 1e-12);
      CHECK_NEAR(s.events[i].end, 13, 1e-12);
    }
  CHECK_INT(steps, 4);                        /* one a slot */
  CHECK_EVENT(s, HP_EV_ALLGATHER, 0, -1, 13, 13.5);
  CHECK_EVENT(s, HP_EV_ALLGATHER, 1, -1, 13, 13.5);
  CHECK_NEAR(s.iteration_time, 13.5, 1e-12);
  CHECK_NEAR(s.pipeline_time, 12, 1e-12);
  CHECK_NEAR(s.sync_time, 0.5, 1e-12);
  CHECK_NEAR(s.step_time, 0.5, 1e-12);
  CHECK_NEAR(s.gat_time, 0.5, 1e-12);
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, 13.5, 1e-12);
  hp_eval_release(&e);
  hp_sim_release(&s);
  p->job.grad_sync = HP_SYNC_OVERLAP;
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  CHECK_EVENT(s, HP_EV_ALLREDUCE, 1, -1, 8, 8.5);
  CHECK_EVENT(s, HP_EV_ALLREDUCE, 0, -1, 10, 10.5);
  CHECK_EVENT(s, HP_EV_STEP, 0, -1, 12, 12.5);
  CHECK_EVENT(s, HP_EV_ALLGATHER, 1, -1, 12.5, 13);
  CHECK_NEAR(s.iteration_time, 13, 1e-12);
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, 13, 1e-12);
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(simulate_leaves_an_idle_device_alone)
{
  /* Three devices, the plan uses 0 and 2 (job idle_devices): the first test's 12 s
   * pipeline, then a 1 s step (2 B x 5e8 / 1e9) on the two used devices: 13 s, formula
   * 12 + 1. Device 1 does nothing; the bubble counts the used devices only:
   * busy 9 + 1 on each, 1 - 20 / (2 x 13). */
  hp_problem *p = fx_problem(
    "{ \"update_bytes\": 2, \"layers\": [ { \"name\": \"x\", \"repeat\": 2, \"params\": 5e8,"
    "  \"act_bytes\": 0, \"out_bytes\": 0, \"flops\": 3e12 } ] }",
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1000, \"tflops\": 1, \"hbm_gbs\": 1 } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 3, \"intra_gbps\": 8 } ] }",
    NULL, 3, HP_1F1B);
  hp_plan *pl;
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d = {0};
  int steps = 0;
  p->job.idle_devices = 1;
  pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                  "  { \"layers\": [0, 0], \"devices\": [[0]] }, { \"layers\": [1, 1], \"devices\": [[2]] } ] }");
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  for (int i = 0; i < s.n_events; i++) steps += s.events[i].kind == HP_EV_STEP;
  CHECK_INT(steps, 2);
  CHECK_INT(s.n_used, 2);
  CHECK_NEAR(s.iteration_time, 13, 1e-12);
  CHECK_NEAR(s.busy[0], 10, 1e-12);
  CHECK_NEAR(s.busy[1], 0, 1e-12);
  CHECK_NEAR(s.busy[2], 10, 1e-12);
  CHECK_NEAR(s.bubble, 1 - 20.0 / 26, 1e-12);
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, 13, 1e-12);
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

TEST(crosscheck_compares_the_whole_iteration_of_cost_model_1_2)
{
  /* Two equal layers of 5e8 parameters on four devices with hbm: plans with replicas
   * reduce their gradients, every plan steps, zero1/zero2 plans all-gather. Where the
   * stages are equal (the same recompute flag and one sharding mode for both layers) and
   * nothing is sent, the whole iteration (pipeline, exposed reduction, step, all-gather)
   * must agree exactly; elsewhere the two are compared, not forced equal. */
  hp_problem *p = two_stage_dp2(5e8, 1);
  hp_crosscheck c;
  hp_diag d = {0};
  int equal = 0, reduced = 0;
  p->job.gbs = 8;
  CHECK(hp_crosscheck_run(p, 60, 7, &c, &d) == HP_OK);
  for (int i = 0; i < c.n; i++) {
    const hp_plan *pl = c.plans[i];
    int uniform = 1;
    for (int s = 1; s < pl->pp; s++) uniform &= pl->recompute[s] == pl->recompute[0];
    for (int l = 1; l < pl->n_layers; l++) uniform &= pl->mode[l] == pl->mode[0];
    if (!uniform) continue;
    equal++;
    reduced += pl->dp > 1;
    CHECK_NEAR(c.simulated[i], c.analytic[i], 1e-9);
  }
  CHECK(equal > 0);
  CHECK(reduced > 0);
  CHECK(c.spearman > 0.5);
  hp_crosscheck_release(&c);
  hp_problem_destroy(&p);
}
