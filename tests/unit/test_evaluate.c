/* test_evaluate.c -- every cost term of cost-model.md against figures computed by hand
 * on tiny instances; the arithmetic is written next to each check. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

#define GIB 1073741824.0
#define REL 1e-12

/* Tiny cluster: node a = 2 "fast" (100 TFLOPS x 0.5 = 5e13 FLOP/s, 1 GiB, 0.25 GiB
 * reserved), intra 800 Gbps = 1e11 B/s, 2 us; node b = 2 "slow" (40 x 0.5 = 2e13),
 * intra 400 Gbps = 5e10 B/s, 4 us; between nodes 80 Gbps = 1e10 B/s, 10 us.
 * Tiny model: F = 1e12, 4e12, 4e12, 2e12; P = 1e6, 4e6, 4e6, 2e6; A = 2e6, 8e6, 8e6,
 * 4e6; O = 1e6, 1e6, 1e6, 4; C = 0, 2e6, 2e6, 0; I_0 = 1000. */

static const char hetero_plan[] =
  "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 1], \"devices\": [[0], [2]] },"
  "  { \"layers\": [2, 3], \"recompute\": true, \"devices\": [[1], [3]] } ],"
  "  \"sharding\": [\"dp\", \"zdp\", \"dp\", \"dp\"] }";

TEST(evaluate_pipeline_terms_match_hand_computation)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, hetero_plan);
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_INT(pl->gas, 4);                                  /* 8 / (2 * 1) */
  /* compute: stage 0 = (1e12 + 4e12) / 5e13 on device 0 and / 2e13 on device 2 */
  CHECK_NEAR(e.compute[0], 0.1, REL);
  CHECK_NEAR(e.compute[1], 0.25, REL);
  /* stage 1 recomputes: (4e12 + 2e12) / rate * 4/3 */
  CHECK_NEAR(e.compute[2], 0.12 * 4.0 / 3.0, REL);
  CHECK_NEAR(e.compute[3], 0.3 * 4.0 / 3.0, REL);
  /* Replica groups {0,2} and {1,3} both cross nodes: R(a) = R(b) = 2, so
   * Bdp = 1e10 / 2 = 5e9; latdp = 10 us. Z[0] = 2 * (1/2) * 2 * 4e6 / 5e9 = 1.6 ms. */
  CHECK_NEAR(e.bdp[0], 5e9, REL);
  CHECK_NEAR(e.latdp[0], 10e-6, REL);
  CHECK_NEAR(e.gather[0], 1.6e-3, REL);
  CHECK_NEAR(e.gather[1], 0, REL);
  /* 1.2: the zdp layer's gradients are reduce-scattered with every micro-batch:
   * Zr[0] = 1/2 * 2 * 4e6 / 5e9 + 1 * 10e-6 = 0.81 ms; t = 0.1 + 1.6e-3 + 8.1e-4 */
  CHECK_NEAR(e.scatter[0], 8.1e-4, REL);
  CHECK_NEAR(e.scatter[1], 0, REL);
  CHECK_NEAR(e.stage_time[0], 0.10241, REL);
  CHECK_NEAR(e.stage_time[1], 0.25241, REL);
  /* hand-off r0: 2 * 1e6 / 1e11 + 2 * 2e-6; r1 (node b): 2 * 1e6 / 5e10 + 2 * 4e-6 (both
   * lanes inside a node: nothing shared) */
  CHECK_NEAR(e.handoff[0], 2.4e-5, REL);
  CHECK_NEAR(e.handoff[1], 4.8e-5, REL);
  /* 1.2 periods of replica 1: c0 = 0.25241 + 4.8e-5 / 2, c1 = 0.4 + 4.8e-5 / 2 = 0.400024;
   * T[1] = (4-1) * 0.400024 + (0.25241 + 0.4) + 4.8e-5 = 1.85253 */
  CHECK_NEAR(e.period[1], 0.252434, REL);
  CHECK_NEAR(e.period[3], 0.400024, REL);
  CHECK_NEAR(e.replica_time[1], 1.85253, REL);
  CHECK_NEAR(e.replica_time[0], 3 * (0.16 + 1.2e-5) + 0.10241 + 0.16 + 2.4e-5, REL);
  CHECK_INT(e.slowest_replica, 1);
  CHECK_INT(e.slowest_stage, 1);
  /* red[0] = 2 * 1/2 * 2e6 / 5e9 + 2 * 1 * 10e-6 = 0.42 ms (the zdp layer's gradients left
   * with Zr); red[1] = 2 * 1/2 * (8e6 + 4e6) / 5e9 + 2e-5 = 2.42 ms; no zero1/2: gat 0;
   * no hbm_gbs: no step */
  CHECK_NEAR(e.sync[0], 4.2e-4, REL);
  CHECK_NEAR(e.sync[1], 2.42e-3, REL);
  CHECK_NEAR(e.gat_time, 0, REL);
  CHECK_NEAR(e.step_time, 0, REL);
  CHECK_NEAR(e.iteration_time, 1.85253 + 2.42e-3, REL);
  CHECK_NEAR(e.throughput, 8 / 1.85495, REL);
  /* MFU = 11e12 * 8 / T / (2 * 100e12 + 2 * 40e12) */
  CHECK_NEAR(e.mfu, 11e12 * 8 / 1.85495 / 280e12, REL);
  /* memory, stage 0: states 16e6 + 16 * 4e6 / 2; gather 2 * 4e6; in flight min(2, 4) = 2,
   * act 2 * (2e6 + 8e6) -> 76e6 + reserve 0.25 GiB on device 0 */
  CHECK_NEAR(e.stage_mem[0], 76e6, REL);
  CHECK_NEAR(e.mem[0], 76e6 + 0.25 * GIB, REL);
  CHECK_NEAR(e.mem[2], 76e6, REL);
  /* stage 1 recomputes: states 16 * 6e6; in flight 1: inputs (1e6 + 1e6) + max a 8e6 */
  CHECK_NEAR(e.stage_mem[1], 96e6 + 10e6, REL);
  CHECK_NEAR(e.cap[3], GIB, REL);
  CHECK(e.feasible);
  CHECK_INT(e.oom_device, -1);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(evaluate_tensor_parallel_terms)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 2, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                           "{ \"layers\": [0, 2], \"devices\": [[0, 1]] },"
                           "{ \"layers\": [3, 3], \"devices\": [[2, 3]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* layer 0: 1e12 / (2 * 5e13) = 0.01, C = 0; layers 1, 2: 4e12 / 1e14 = 0.04 plus
   * 2 * (1/2) * 2e6 / 1e11 + 2 * 1 * 2e-6 = 2.4e-5 each */
  CHECK_NEAR(e.compute[0], 0.01 + 2 * (0.04 + 2.4e-5), REL);
  CHECK_NEAR(e.compute[1], 2e12 / (2 * 2e13), REL);
  /* hand-off carries O / tp over the slowest lane (0->2, 1->3 at 1e10); 1.2: both lanes
   * cross from node a to node b, H(a) = H(b) = 2, so each sees 1e10 / 2:
   * 2 * 5e5 / 5e9 + 2e-5 = 2.2e-4 */
  CHECK_NEAR(e.handoff[0], 2.2e-4, REL);
  CHECK_NEAR(e.handoff_bw[0], 5e9, REL);
  /* gas 8: periods c0 = 0.090048 + 1.1e-4, c1 = 0.05 + 1.1e-4;
   * T = 7 * 0.090158 + 0.090048 + 0.05 + 2.2e-4; dp = 1: no sync */
  CHECK_NEAR(e.iteration_time, 7 * 0.090158 + 0.090048 + 0.05 + 2.2e-4, REL);
  CHECK_NEAR(e.sync_time, 0, REL);
  /* memory stage 0: states 16 * 9e6 / 2; in flight min(2, 8) = 2, act 2 * 18e6 / 2 */
  CHECK_NEAR(e.stage_mem[0], 72e6 + 18e6, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(evaluate_replica_groups_inside_nodes_do_not_share_links)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *in_node = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                "{ \"layers\": [0, 1], \"devices\": [[0], [1]] },"
                                "{ \"layers\": [2, 3], \"devices\": [[2], [3]] } ] }");
  hp_plan *flat = fx_plan(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 2, \"stages\": ["
                             "{ \"layers\": [0, 3], \"devices\": [[0], [1], [2], [3]] } ] }");
  hp_eval e = {0}, f = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, in_node, &e, &d) == HP_OK);
  /* no group crosses a node: Bdp = the node's own figure */
  CHECK_NEAR(e.bdp[0], 1e11, REL);
  CHECK_NEAR(e.bdp[1], 5e10, REL);
  CHECK_NEAR(e.latdp[1], 4e-6, REL);
  /* sync[1] = 2 * 1/2 * 2 * 6e6 / 5e10 + 2 * 4e-6 */
  CHECK_NEAR(e.sync[1], 12e6 / 5e10 + 8e-6, REL);
  CHECK(hp_evaluate(p, flat, &f, &d) == HP_OK);
  /* one group over both nodes: R(a) = R(b) = 1, so the inter-node pair sees 1e10 */
  CHECK_NEAR(f.bdp[0], 1e10, REL);
  /* gas = 8 / (4 * 2) = 1: T[r] = sum of stage times; replica 2 on slow: 2 * 11e12 / 2e13 */
  CHECK_NEAR(f.replica_time[2], 1.1, REL);
  /* sync = 2 * 3/4 * 2 * 11e6 / 1e10 + 2 * 3 * 10e-6 */
  CHECK_NEAR(f.sync[0], 1.5 * 22e6 / 1e10 + 6e-5, REL);
  hp_eval_release(&e);
  hp_eval_release(&f);
  hp_plan_destroy(&in_node);
  hp_plan_destroy(&flat);
  hp_problem_destroy(&p);
}

TEST(evaluate_gpipe_keeps_every_micro_batch_in_flight)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_GPIPE);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"schedule\": \"gpipe\","
                           " \"stages\": [ { \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                           "{ \"layers\": [2, 3], \"devices\": [[1], [3]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* in flight = gas = 4 on both stages: stage 1 act = 4 * (8e6 + 4e6), states 96e6 */
  CHECK_NEAR(e.stage_mem[1], 96e6 + 48e6, REL);
  CHECK_NEAR(e.stage_mem[0], 80e6 + 4 * 10e6, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(evaluate_zdp_is_plain_dp_when_dp_is_one)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 4, HP_1F1B);
  const char *base = "{ \"pp\": 4, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                     "{ \"layers\": [0, 0], \"devices\": [[0]] }, { \"layers\": [1, 1], \"devices\": [[1]] },"
                     "{ \"layers\": [2, 2], \"devices\": [[2]] }, { \"layers\": [3, 3], \"devices\": [[3]] } ]";
  char a[1024], b[1024];
  snprintf(a, sizeof a, "%s }", base);
  snprintf(b, sizeof b, "%s, \"sharding\": [\"zdp\", \"zdp\", \"zdp\", \"zdp\"] }", base);
  hp_plan *pa = fx_plan(p, a), *pb = fx_plan(p, b);
  hp_eval ea = {0}, eb = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pa, &ea, &d) == HP_OK);
  CHECK(hp_evaluate(p, pb, &eb, &d) == HP_OK);
  CHECK_NEAR(eb.iteration_time, ea.iteration_time, REL);
  for (int s = 0; s < 4; s++) CHECK_NEAR(eb.stage_mem[s], ea.stage_mem[s], REL);
  /* stage 3 (layer 3, slow device 3): states 16 * 2e6, in flight min(1, 4) = 1, act 4e6 */
  CHECK_NEAR(ea.stage_mem[3], 32e6 + 4e6, REL);
  /* T = (4-1) * max_s c + sum t + hand-offs; 1.2: c_s = t_s + (e_{s-1} + e_s) / 2, largest
   * for layer 2 on device 2: 4e12 / 2e13 plus half of both its hand-offs (one lane each:
   * nothing shared) */
  double t0 = 0.02, t1 = 0.08, t2 = 0.2, t3 = 0.1;
  double e01 = 2 * 1e6 / 1e11 + 4e-6, e12 = 2 * 1e6 / 1e10 + 2e-5, e23 = 2 * 1e6 / 5e10 + 8e-6;
  CHECK_NEAR(ea.iteration_time, 3 * (t2 + (e12 + e23) / 2) + t0 + t1 + t2 + t3 + e01 + e12 + e23, REL);
  hp_eval_release(&ea);
  hp_eval_release(&eb);
  hp_plan_destroy(&pa);
  hp_plan_destroy(&pb);
  hp_problem_destroy(&p);
}

static const char one_gpu_cluster[] =
  "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1 } },"
  "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 1 } ] }";
static const char one_plan[] =
  "{ \"pp\": 1, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"stages\": [ { \"layers\": [0, 0], \"devices\": [[0]] } ] }";

TEST(evaluate_memory_equal_to_capacity_fits_one_byte_more_does_not)
{
  /* 2^30 / 16 = 67108864 parameters fill 1 GiB of states exactly */
  hp_problem *p = fx_problem("{ \"layers\": [ { \"name\": \"x\", \"params\": 67108864, "
                             "\"act_bytes\": 0, \"out_bytes\": 0, \"flops\": 1 } ] }",
                             one_gpu_cluster, NULL, 1, HP_1F1B);
  hp_problem *q = fx_problem("{ \"layers\": [ { \"name\": \"x\", \"params\": 67108865, "
                             "\"act_bytes\": 0, \"out_bytes\": 0, \"flops\": 1 } ] }",
                             one_gpu_cluster, NULL, 1, HP_1F1B);
  hp_plan *a = fx_plan(p, one_plan), *b = fx_plan(q, one_plan);
  hp_eval ea = {0}, eb = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, a, &ea, &d) == HP_OK);
  CHECK(ea.feasible);
  CHECK_NEAR(ea.mem[0], GIB, REL);
  CHECK(hp_evaluate(q, b, &eb, &d) == HP_OK);
  CHECK(!eb.feasible);
  CHECK_INT(eb.oom_device, 0);
  CHECK_INT(eb.oom_stage, 0);
  CHECK_NEAR(eb.oom_bytes, 16, 1e-9);
  hp_eval_release(&ea);
  hp_eval_release(&eb);
  hp_plan_destroy(&a);
  hp_plan_destroy(&b);
  hp_problem_destroy(&p);
  hp_problem_destroy(&q);
}

TEST(evaluate_names_the_lowest_overflowing_device)
{
  /* 4 layers of 20e6 parameters: 320 MB of states each. Stage 0 holds three layers
   * (960 MB + reserve on device 0 is over 1 GiB), stage 1 one layer. */
  static const char m[] =
    "{ \"layers\": [ { \"name\": \"x\", \"repeat\": 4, \"params\": 2e7, \"act_bytes\": 0,"
    "  \"out_bytes\": 0, \"flops\": 1e9 } ] }";
  hp_problem *p = fx_problem(m, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "{ \"layers\": [0, 0], \"devices\": [[3], [2]] },"
                           "{ \"layers\": [1, 3], \"devices\": [[1], [0]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK(!e.feasible);
  /* devices 0 and 1 (both fast, reserve 0.25 GiB) overflow by the same bytes: 0 is named */
  CHECK_INT(e.oom_device, 0);
  CHECK_INT(e.oom_stage, 1);
  CHECK_NEAR(e.oom_bytes, 3 * 16 * 2e7 + 0.25 * GIB - GIB, 1e-12);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(evaluate_replicated_activations_and_working_memory_under_tp)
{
  static const char m[] =
    "{ \"layers\": ["
    "  { \"name\": \"a\", \"params\": 1000, \"act_bytes\": 1000, \"act_bytes_replicated\": 200,"
    "    \"out_bytes\": 10, \"flops\": 1e9, \"work_bytes\": 300, \"work_bytes_fixed\": 50 },"
    "  { \"name\": \"n\", \"params\": 1000, \"act_bytes\": 400, \"out_bytes\": 10, \"flops\": 1e9,"
    "    \"splittable\": false, \"work_bytes\": 100, \"work_bytes_fixed\": 500 } ] }";
  static const char c[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1 } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8 } ] }";
  hp_problem *p = fx_problem(m, c, NULL, 3, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 1, \"tp\": 2, \"dp\": 1, \"mbs\": 3, \"stages\": ["
                           "{ \"layers\": [0, 1], \"devices\": [[0, 1]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* states 16 * (1000 / 2 + 1000); in flight min(1, 1) = 1; act 3 * ((800 / 2 + 200) + 400);
   * work max((3 * 300 + 50) / 2, (3 * 100 + 500) / 1) = 800 */
  CHECK_NEAR(e.stage_mem[0], 16 * 1500.0 + 3 * 1000.0 + 800, REL);
  /* time: a split over 2, n replicated: 3 * 1e9 / (2 * 1e12) + 3 * 1e9 / 1e12 (C = 0) */
  CHECK_NEAR(e.compute[0], 1.5e-3 + 3e-3, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(evaluate_recompute_memory_keeps_inputs_and_one_layer)
{
  static const char m[] =
    "{ \"input_bytes\": 100, \"layers\": ["
    "  { \"name\": \"a\", \"params\": 0, \"act_bytes\": 1000, \"out_bytes\": 10, \"flops\": 1e9 },"
    "  { \"name\": \"b\", \"params\": 0, \"act_bytes\": 3000, \"out_bytes\": 20, \"flops\": 1e9 } ] }";
  static const char c[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1 } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 1 } ] }";
  hp_problem *p = fx_problem(m, c, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 1, \"mbs\": 2, \"stages\": ["
                           "{ \"layers\": [0, 1], \"recompute\": true, \"devices\": [[0]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* gas 4, in flight min(1, 4) = 1: 1 * 2 * (100 + 10) + 2 * 3000 */
  CHECK_NEAR(e.stage_mem[0], 220 + 6000, REL);
  /* time: 2 * 2e9 / 1e12 * 4/3 per micro-batch, gas 4: T = 3 t + t */
  CHECK_NEAR(e.iteration_time, 4 * 4e-3 * 4.0 / 3.0, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(evaluate_asymmetric_matrix_takes_slower_direction_and_larger_latency)
{
  static const char m[] =
    "{ \"layers\": [ { \"name\": \"a\", \"params\": 0, \"act_bytes\": 0, \"out_bytes\": 1e6, \"flops\": 1e9 },"
    "                { \"name\": \"b\", \"params\": 0, \"act_bytes\": 0, \"out_bytes\": 1, \"flops\": 1e9 } ] }";
  static const char c[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1 } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 1 }, { \"name\": \"o\", \"type\": \"g\", \"gpus\": 1 } ],"
    "  \"bandwidth_matrix\": { \"gbps\": [[0, 80], [40, 0]], \"lat_us\": [[0, 1], [3, 0]] } }";
  hp_problem *p = fx_problem(m, c, NULL, 1, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                           "{ \"layers\": [0, 0], \"devices\": [[0]] }, { \"layers\": [1, 1], \"devices\": [[1]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK_NEAR(hp_problem_bw(p, 0, 1), 5e9, REL);
  CHECK_NEAR(hp_problem_bw(p, 1, 0), 5e9, REL);
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* 2 * 1e6 / 5e9 + 2 * 3e-6 */
  CHECK_NEAR(e.handoff[0], 4e-4 + 6e-6, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(evaluate_profile_matrix_overrides_node_and_link_figures)
{
  static const char prof[] =
    "{ \"bandwidth_matrix\": { \"gbps\": [[0, 8, 8, 8], [8, 0, 16, 8], [8, 16, 0, 8], [8, 8, 8, 0]] } }";
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, prof, 8, HP_1F1B);
  /* devices 0 and 1 share node a (800 Gbps) but the profile says 8 Gbps = 1e9 B/s, no latency */
  CHECK_NEAR(hp_problem_bw(p, 0, 1), 1e9, REL);
  CHECK_NEAR(hp_problem_bw(p, 1, 2), 2e9, REL);
  CHECK_NEAR(hp_problem_lat(p, 0, 3), 0, REL);
  hp_problem_destroy(&p);
}

TEST(evaluate_links_override_the_inter_node_default)
{
  static const char c[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 1 } },"
    "  \"nodes\": [ { \"name\": \"x\", \"type\": \"g\", \"gpus\": 1 }, { \"name\": \"y\", \"type\": \"g\", \"gpus\": 1 },"
    "               { \"name\": \"z\", \"type\": \"g\", \"gpus\": 1 } ],"
    "  \"inter_gbps\": 100, \"inter_lat_us\": 5,"
    "  \"links\": [ { \"a\": \"x\", \"b\": \"z\", \"gbps\": 10, \"lat_us\": 50 },"
    "               { \"a\": \"z\", \"b\": \"x\", \"gbps\": 20 } ] }";
  hp_problem *p = fx_problem(fx_tiny_model, c, NULL, 3, HP_1F1B);
  CHECK_NEAR(hp_problem_bw(p, 0, 1), 100e9 / 8, REL);
  CHECK_NEAR(hp_problem_lat(p, 0, 1), 5e-6, REL);
  /* the later duplicate link wins, in both directions, latency defaulting to 0 */
  CHECK_NEAR(hp_problem_bw(p, 2, 0), 20e9 / 8, REL);
  CHECK_NEAR(hp_problem_lat(p, 0, 2), 0, REL);
  hp_problem_destroy(&p);
}

TEST(evaluate_each_replica_runs_at_its_own_type_and_the_slowest_sets_the_pace)
{
  /* A TP group lies in one node and a node has one type, so k* is that node's type;
   * replicas on different types run at different speeds. */
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 2, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 1, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "{ \"layers\": [0, 3], \"devices\": [[0, 1], [2, 3]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* replica 1 on slow: 11e12 / (2 * 2e13) + two TP terms 2 * 1/2 * 2e6 / 5e10 + 2 * 4e-6 */
  CHECK_NEAR(e.compute[1], 0.275 + 2 * (4e-5 + 8e-6), REL);
  CHECK_NEAR(e.compute[0], 0.11 + 2 * (2e-5 + 4e-6), REL);
  CHECK_NEAR(e.pipeline_time, e.compute[1], REL);   /* gas 1 */
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}
