/* test_evaluate12.c -- the terms version 1.2 of cost-model.md added (its section 8, one
 * test or more per row), against figures computed by hand; the arithmetic is written next
 * to each check.
 *
 * Cluster "u": two nodes of two GPUs of one type g: 1 TFLOPS (efficiency 1), 16 GiB,
 * hbm_gbs 100 (1e11 B/s); inside a node 8 Gbps = 1e9 B/s and 1 us, between nodes
 * 0.8 Gbps = 1e8 B/s and 10 us. Model "two": layers a and b of 1e6 parameters, 1000
 * activation bytes, 100 output bytes, 1e9 FLOPs per sample (1 ms on a GPU), no TP
 * traffic; input 50 bytes; bytes per parameter 2 (weights), 2 (gradients), 16 (state),
 * so the optimizer's part is 12 and update_bytes defaults to 2 * 12 + 2 + 2 = 28. */
#include <stdio.h>

#include "harness.h"
#include "fixtures.h"

#define REL 1e-12

static const char two_model[] =
  "{ \"name\": \"two\", \"input_bytes\": 50, \"layers\": ["
  "  { \"name\": \"a\", \"params\": 1e6, \"act_bytes\": 1000, \"out_bytes\": 100, \"flops\": 1e9 },"
  "  { \"name\": \"b\", \"params\": 1e6, \"act_bytes\": 1000, \"out_bytes\": 100, \"flops\": 1e9 } ] }";

static const char u_cluster[] =
  "{ \"name\": \"u\", \"device_types\": {"
  "    \"g\": { \"mem_gib\": 16, \"tflops\": 1, \"hbm_gbs\": 100 } },"
  "  \"nodes\": ["
  "    { \"name\": \"n0\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8, \"intra_lat_us\": 1 },"
  "    { \"name\": \"n1\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8, \"intra_lat_us\": 1 } ],"
  "  \"inter_gbps\": 0.8, \"inter_lat_us\": 10 }";

/* A problem with a job file's fields (hp_job_parse, formats.md "Job"). */
static hp_problem *job_problem(const char *model, const char *cluster, const char *profile,
                               const char *job_json)
{
  hp_diag d = {0};
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *pr = NULL;
  hp_problem *p = NULL;
  hp_job job = { .gbs = 1, .schedule = HP_1F1B };
  if (hp_job_parse(job_json, "job", &job, &d) || hp_model_parse(model, "model", &m, &d) ||
      hp_cluster_parse(cluster, "cluster", &c, &d) ||
      (profile && hp_profile_parse(profile, "profile", &pr, &d)) ||
      hp_problem_create(&p, m, c, pr, job, &d)) {
    fprintf(stderr, "job_problem: %s\n", d.msg);
    return NULL;
  }
  return p;
}

/* One group of dp 4 over both nodes: R(n0) = R(n1) = 1, so Bdp = min(1e9, 1e8) = 1e8 and
 * latdp = 10 us; pp = 1, gbs 8, mbs 1: gas 2. */
static const char flat4[] =
  "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 1], \"devices\": [[0], [1], [2], [3]] } ], %s }";

TEST(evaluate12_zero1_and_zero2_states_scatter_reduction_allgather_and_step)
{
  hp_problem *p = job_problem(two_model, u_cluster, NULL, "{ \"gbs\": 8 }");
  char text[512];
  snprintf(text, sizeof text, flat4, "\"sharding\": [\"zero1\", \"zero2\"]");
  hp_plan *pl = fx_plan(p, text);
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.bdp[0], 1e8, REL);
  CHECK_NEAR(e.latdp[0], 10e-6, REL);
  /* zero2 (layer b) reduce-scatters its gradients with every micro-batch:
   * Zr = 3/4 * 2e6 / 1e8 + 3 * 10e-6 = 0.01503; no zdp: Z = 0 */
  CHECK_NEAR(e.scatter[0], 0.01503, REL);
  CHECK_NEAR(e.gather[0], 0, REL);
  /* t = 2 ms + Zr; pp = 1: c = t; T[r] = (2 - 1) t + t */
  CHECK_NEAR(e.stage_time[0], 0.01703, REL);
  CHECK_NEAR(e.backward[0], 2e-3 * 2 / 3 + 0.01503, REL);
  CHECK_NEAR(e.pipeline_time, 0.03406, REL);
  /* zero1 (layer a) reduce-scatters once: red = 3/4 * 2e6 / 1e8 + 2 * 3 * 10e-6 = 0.01506 */
  CHECK_NEAR(e.sync[0], 0.01506, REL);
  CHECK_NEAR(e.sync_time, 0.01506, REL);
  /* both all-gather their weights after the step: 3/4 * (2e6 + 2e6) / 1e8 = 0.03 */
  CHECK_NEAR(e.gat[0], 0.03, REL);
  CHECK_NEAR(e.gat_time, 0.03, REL);
  /* step: 28 * (1e6 / 4 + 1e6 / 4) / 1e11 = 1.4e-4 on every device */
  CHECK_NEAR(e.step_time, 1.4e-4, REL);
  CHECK_INT(e.step_device, 0);
  CHECK_NEAR(e.iteration_time, 0.03406 + 0.01506 + 1.4e-4 + 0.03, REL);
  /* states: a zero1 = 2e6 + 2e6 + 12e6 / 4 = 7e6; b zero2 = 2e6 + (2e6 + 12e6) / 4 = 5.5e6;
   * in flight min(1, 2) = 1: act 1000 + 1000 */
  CHECK_NEAR(e.mem_states[0], 12.5e6, REL);
  CHECK_NEAR(e.stage_mem[0], 12.5e6 + 2000, REL);
  CHECK_NEAR(e.mem[3], 12.5e6 + 2000, REL);
  /* MFU: 2e9 FLOPs x 8 samples / T / 4 TFLOPS */
  CHECK_NEAR(e.mfu, 2e9 * 8 / e.iteration_time / 4e12, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(evaluate12_zdp_in_slices_gathers_a_slice_at_a_time_for_a_latency_each)
{
  hp_problem *p = job_problem(two_model, u_cluster, NULL, "{ \"gbs\": 8, \"max_slices\": 2 }");
  char text[512];
  snprintf(text, sizeof text, flat4, "\"sharding\": [\"zdp\", \"zero3\"], \"slices\": [2, 1]");
  hp_plan *pl = fx_plan(p, text);
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_INT(pl->mode[1], HP_SHARD_ZDP);                 /* "zero3" is zdp's other name */
  CHECK_INT(hp_plan_slices(pl, 0), 2);
  /* Z = 2 * 3/4 * (2e6 + 2e6) / 1e8 + 2 (2 - 1) (4 - 1) 10e-6 = 0.06 + 6e-5 */
  CHECK_NEAR(e.gather[0], 0.06006, REL);
  /* Zr = 3/4 * (2e6 + 2e6) / 1e8 + 3 * 10e-6 (once per stage) */
  CHECK_NEAR(e.scatter[0], 0.03003, REL);
  /* t = 2e-3 + Z + Zr = 0.09209; T[r] = 2 t */
  CHECK_NEAR(e.pipeline_time, 2 * 0.09209, REL);
  /* nothing left to reduce but the per-stage latency 2 * 3 * 10e-6; no all-gather after the
   * step; step 28 * 5e5 / 1e11 */
  CHECK_NEAR(e.sync[0], 6e-5, REL);
  CHECK_NEAR(e.gat_time, 0, REL);
  CHECK_NEAR(e.step_time, 1.4e-4, REL);
  CHECK_NEAR(e.iteration_time, 0.18418 + 6e-5 + 1.4e-4, REL);
  /* states 16 * 2e6 / 4; gathered buffer max(2e6 / 2, 2e6 / 1); act 2000 */
  CHECK_NEAR(e.mem_states[0], 8e6, REL);
  CHECK_NEAR(e.mem_gather[0], 2e6, REL);
  CHECK_NEAR(e.stage_mem[0], 10e6 + 2000, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* pp 2, dp 2: stage 0 (layer a) on devices 0 and 2, stage 1 (layer b) on 1 and 3. Groups
 * {0, 2} and {1, 3} both cross: R(n0) = R(n1) = 2, Bdp = 1e8 / 2 = 5e7, latdp 10 us. The
 * hand-off lanes 0->1 and 2->3 stay inside a node: e = 2 * 100 / 1e9 + 2 * 1e-6 = 2.2e-6.
 * gbs 8, mbs 1: gas 4. t = 1 ms per stage. */
static const char across[] =
  "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 0], \"devices\": [[0], [2]] },"
  "  { \"layers\": [1, 1], \"devices\": [[1], [3]] } ] }";

TEST(evaluate12_overlapped_reduction_starts_with_each_stages_last_backward)
{
  hp_problem *pe = job_problem(two_model, u_cluster, NULL, "{ \"gbs\": 8 }");
  hp_problem *po = job_problem(two_model, u_cluster, NULL,
                               "{ \"gbs\": 8, \"grad_sync\": \"overlap\" }");
  hp_plan *a = fx_plan(pe, across), *b = fx_plan(po, across);
  hp_eval e = {0}, o = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(pe, a, &e, &d) == HP_OK);
  CHECK(hp_evaluate(po, b, &o, &d) == HP_OK);
  CHECK_NEAR(e.handoff[0], 2.2e-6, REL);
  /* c = 1e-3 + 2.2e-6 / 2 for both stages; T[r] = 3 * 1.0011e-3 + 2e-3 + 2.2e-6 */
  CHECK_NEAR(e.pipeline_time, 5.0055e-3, REL);
  /* red = 2 * 1/2 * 2e6 / 5e7 + 2 * 1 * 10e-6 = 0.04002 per stage; step 28 * 1e6 / 1e11 */
  CHECK_NEAR(e.sync[0], 0.04002, REL);
  CHECK_NEAR(e.step_time, 2.8e-4, REL);
  CHECK_NEAR(e.iteration_time, 5.0055e-3 + 0.04002 + 2.8e-4, REL);
  /* overlap: b = 2/3 ms; stage 0's backward ends last (tail 0), stage 1's ends
   * tail[1] = b[0] + e[0] / 2 before; T = max (T[r] - tail + max(0, red - b)) + step:
   * stage 0 gives 5.0055e-3 + 0.04002 - 2e-3 / 3 */
  CHECK_NEAR(o.backward[0], 2e-3 / 3, REL);
  CHECK_NEAR(o.pipeline_time, 5.0055e-3, REL);
  CHECK_NEAR(o.sync_time, 0.04002 - 2e-3 / 3, REL);
  CHECK_NEAR(o.iteration_time, 5.0055e-3 + 0.04002 - 2e-3 / 3 + 2.8e-4, REL);
  CHECK(o.iteration_time < e.iteration_time);
  hp_eval_release(&e);
  hp_eval_release(&o);
  hp_plan_destroy(&a);
  hp_plan_destroy(&b);
  hp_problem_destroy(&pe);
  hp_problem_destroy(&po);
}

TEST(evaluate12_overlap_hides_a_reduction_shorter_than_the_backward)
{
  /* one node-internal group per stage (stage 0 on devices 0, 1; stage 1 on 2, 3):
   * red = 2 * 1/2 * 2e6 / 1e9 + 2 * 1e-6 = 2.002e-3, and a model ten times heavier in
   * FLOPs so that b = 2/3 * 10 ms = 6.67 ms > red: fully hidden */
  static const char heavy[] =
    "{ \"name\": \"heavy\", \"input_bytes\": 50, \"layers\": ["
    "  { \"name\": \"a\", \"repeat\": 2, \"params\": 1e6, \"act_bytes\": 1000, \"out_bytes\": 100,"
    "    \"flops\": 1e10 } ] }";
  hp_problem *po = job_problem(heavy, u_cluster, NULL, "{ \"gbs\": 8, \"grad_sync\": \"overlap\" }");
  hp_plan *pl = fx_plan(po, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                            "{ \"layers\": [0, 0], \"devices\": [[0], [1]] },"
                            "{ \"layers\": [1, 1], \"devices\": [[2], [3]] } ] }");
  hp_eval o = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(po, pl, &o, &d) == HP_OK);
  CHECK_NEAR(o.sync[0], 2.002e-3, REL);
  CHECK_NEAR(o.sync_time, 0, REL);
  CHECK_NEAR(o.iteration_time, o.pipeline_time + 2.8e-4, REL);
  hp_eval_release(&o);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&po);
}

TEST(evaluate12_handoff_lanes_crossing_a_node_share_its_interface)
{
  /* stage 0 on node n0 (devices 0, 1), stage 1 on n1 (2, 3): both lanes 0->2 and 1->3
   * cross, H(n0) = H(n1) = 2: each sees 1e8 / 2; e = 2 * 100 / 5e7 + 2 * 10e-6 = 2.4e-5.
   * Replica groups stay inside nodes: Bdp 1e9, latdp 1 us. */
  hp_problem *p = job_problem(two_model, u_cluster, NULL, "{ \"gbs\": 8 }");
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "{ \"layers\": [0, 0], \"devices\": [[0], [1]] },"
                           "{ \"layers\": [1, 1], \"devices\": [[2], [3]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.handoff_bw[0], 5e7, REL);
  CHECK_NEAR(e.handoff[0], 2.4e-5, REL);
  CHECK_NEAR(e.handoff[1], 2.4e-5, REL);
  /* every micro-batch pays half of it on both sides: c = 1e-3 + 1.2e-5;
   * T[r] = 3 * 1.012e-3 + 2e-3 + 2.4e-5 = 5.06e-3 */
  CHECK_NEAR(e.period[0], 1.012e-3, REL);
  CHECK_NEAR(e.period[2], 1.012e-3, REL);
  CHECK_NEAR(e.pipeline_time, 5.06e-3, REL);
  /* red = 2 * 1/2 * 2e6 / 1e9 + 2 * 1e-6; step 2.8e-4 */
  CHECK_NEAR(e.iteration_time, 5.06e-3 + 2.002e-3 + 2.8e-4, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* Layer a (checkpointable) with Ar = 200; a head h that recompute leaves alone. */
static const char ck_model[] =
  "{ \"name\": \"ck\", \"input_bytes\": 50, \"layers\": ["
  "  { \"name\": \"a\", \"params\": 1e6, \"act_bytes\": 1000, \"act_bytes_replicated\": 200,"
  "    \"out_bytes\": 100, \"flops\": 1e9 },"
  "  { \"name\": \"h\", \"params\": 1e6, \"act_bytes\": 600, \"out_bytes\": 10, \"flops\": 1e9,"
  "    \"checkpointable\": false } ] }";
/* tp 2 inside each node, dp 2 across, recompute: gbs 4, mbs 1, gas 2, in flight 1 */
static const char ck_plan[] =
  "{ \"pp\": 1, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 1], \"recompute\": true, \"devices\": [[0, 1], [2, 3]] } ] }";

TEST(evaluate12_recompute_reruns_checkpointable_layers_and_keeps_inputs_whole)
{
  hp_problem *p = job_problem(ck_model, u_cluster, NULL, "{ \"gbs\": 4 }");
  hp_problem *q = job_problem(ck_model, u_cluster, NULL, "{ \"gbs\": 4, \"sequence_parallel\": true }");
  hp_plan *pl = fx_plan(p, ck_plan), *ql = fx_plan(q, ck_plan);
  hp_eval e = {0}, f = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK(hp_evaluate(q, ql, &f, &d) == HP_OK);
  /* each layer 1e9 / (2 * 1e12) = 0.5 ms; recompute re-runs a only: 1e-3 + 0.5e-3 / 3 */
  CHECK_NEAR(e.compute[0], 1e-3 + 0.5e-3 / 3, REL);
  /* without sequence parallelism: a_a(2) = 800 / 2 + 200 = 600, a_h(2) = 300; the
   * checkpointed input of a is whole on both TP ranks: i_a = 50. Under recompute:
   * 1 x (50 + 300) + max over checkpointable layers 600 = 950 */
  CHECK_NEAR(e.mem_act[0], 950, REL);
  CHECK_NEAR(e.stage_mem[0], 16 * 1e6 + 950, REL);
  /* with it: a_a = 1000 / 2 = 500, i_a = 50 / 2 = 25: 1 x (25 + 300) + 500 = 825 */
  CHECK_NEAR(f.mem_act[0], 825, REL);
  /* sequence parallelism leaves times alone */
  CHECK_NEAR(f.iteration_time, e.iteration_time, REL);
  /* T = 2 t + red + step: red = 2 * 1/2 * 2 * 1e6 / 5e7 + 2 * 10e-6 (groups {0, 2}, {1, 3}
   * both cross: R = 2); step 28 * 1e6 / 1e11 */
  CHECK_NEAR(e.iteration_time, 2 * (1e-3 + 0.5e-3 / 3) + 0.04002 + 2.8e-4, REL);
  hp_eval_release(&e);
  hp_eval_release(&f);
  hp_plan_destroy(&pl);
  hp_plan_destroy(&ql);
  hp_problem_destroy(&p);
  hp_problem_destroy(&q);
}

TEST(evaluate12_a_recomputed_stage_without_checkpointable_layers_is_charged_as_none)
{
  /* stage 1 holds only the head: with or without its recompute flag, same time, memory */
#define REC_PLAN(r) "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": [" \
                    "{ \"layers\": [0, 0], \"devices\": [[0], [1]] }," \
                    "{ \"layers\": [1, 1], \"recompute\": " r ", \"devices\": [[2], [3]] } ] }"
  const char *a = REC_PLAN("false"), *b = REC_PLAN("true");
  hp_problem *p = job_problem(ck_model, u_cluster, NULL, "{ \"gbs\": 8 }");
  hp_plan *pa = fx_plan(p, a), *pb = fx_plan(p, b);
  hp_eval ea = {0}, eb = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pa, &ea, &d) == HP_OK);
  CHECK(hp_evaluate(p, pb, &eb, &d) == HP_OK);
  CHECK_NEAR(eb.compute[2], 1e-3, REL);
  CHECK_NEAR(eb.iteration_time, ea.iteration_time, REL);
  /* in flight min(2 - 1, 4) = 1: 600 */
  CHECK_NEAR(eb.mem_act[1], 600, REL);
  CHECK_NEAR(eb.stage_mem[1], ea.stage_mem[1], REL);
  hp_eval_release(&ea);
  hp_eval_release(&eb);
  hp_plan_destroy(&pa);
  hp_plan_destroy(&pb);
  hp_problem_destroy(&p);
}

/* Layer a measured at mbs 1 and 2 (act 700, 1500) and work at mbs 1 only (100). */
static const char mem_profile[] =
  "{ %s \"layer_times\": ["
  "  { \"kind\": \"a\", \"type\": \"g\", \"tp\": 1, \"mbs\": 1, \"seconds\": 1e-3,"
  "    \"act_bytes\": 700, \"work_bytes\": 100 },"
  "  { \"kind\": \"a\", \"type\": \"g\", \"tp\": 1, \"mbs\": 2, \"seconds\": 2e-3, \"act_bytes\": 1500 } ] }";

TEST(evaluate12_measured_activation_and_working_memory_replace_the_formula)
{
  char prof[1024];
  snprintf(prof, sizeof prof, mem_profile, "");
  hp_problem *p = job_problem(two_model, u_cluster, prof, "{ \"gbs\": 8 }");
  hp_plan *pl = fx_plan(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 2, \"stages\": ["
                           "{ \"layers\": [0, 1], \"devices\": [[0], [1], [2], [3]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* gas 1, in flight 1: a measured 1500 at mbs 2; b by formula 2 x 1000; work: a's single
   * point scales with m: 100 x 2 = 200 */
  CHECK_NEAR(e.mem_act[0], 1500 + 2000, REL);
  CHECK_NEAR(e.mem_work[0], 200, REL);
  CHECK_NEAR(e.stage_mem[0], 32e6 + 3700, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);

  /* measured without sequence parallelism, planned with it: the figures are ignored */
  hp_problem *q = job_problem(two_model, u_cluster, prof,
                              "{ \"gbs\": 8, \"sequence_parallel\": true }");
  pl = fx_plan(q, "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 2, \"stages\": ["
                  "{ \"layers\": [0, 1], \"devices\": [[0], [1], [2], [3]] } ] }");
  CHECK(hp_evaluate(q, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.mem_act[0], 4000, REL);
  CHECK_NEAR(e.mem_work[0], 0, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&q);

  /* a profile that says it was measured with sequence parallelism, planned with it */
  snprintf(prof, sizeof prof, mem_profile, "\"sequence_parallel\": true,");
  q = job_problem(two_model, u_cluster, prof, "{ \"gbs\": 8, \"sequence_parallel\": true }");
  pl = fx_plan(q, "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 2, \"stages\": ["
                  "{ \"layers\": [0, 1], \"devices\": [[0], [1], [2], [3]] } ] }");
  CHECK(hp_evaluate(q, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.mem_act[0], 3500, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&q);
}

TEST(evaluate12_idle_devices_hold_nothing_take_no_step_and_leave_mfu)
{
  const char *two = "{ \"pp\": 1, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                    "{ \"layers\": [0, 1], \"devices\": [[0], [1]] } ], \"idle\": [2, 3] }";
  hp_problem *p = job_problem(two_model, u_cluster, NULL, "{ \"gbs\": 4, \"idle_devices\": true }");
  hp_problem *q = job_problem(two_model, u_cluster, NULL, "{ \"gbs\": 4 }");
  hp_plan *pl = fx_plan(p, two), *ql = NULL;
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* gas 2; the group {0, 1} inside n0: red = 2 * 1/2 * 4e6 / 1e9 + 2 * 1e-6; step
   * 28 * 2e6 / 1e11 */
  CHECK_NEAR(e.pipeline_time, 4e-3, REL);
  CHECK_NEAR(e.iteration_time, 4e-3 + 4.002e-3 + 5.6e-4, REL);
  CHECK_INT(e.n_used, 2);
  CHECK(e.idle[2] && e.idle[3] && !e.idle[0]);
  CHECK_NEAR(e.mem[2], 0, REL);
  /* MFU over the two GPUs used */
  CHECK_NEAR(e.mfu, 2e9 * 4 / e.iteration_time / 2e12, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  /* without idle_devices the plan is invalid: the dims rule */
  CHECK_CONTAINS(fx_plan_error(q, two), "idle_devices");
  CHECK(hp_plan_parse(two, "plan", q, &ql, &d) != HP_OK);
  CHECK_CONTAINS(d.msg, "pp * tp * dp = 1 * 1 * 2 = 2 but cluster");
  hp_problem_destroy(&p);
  hp_problem_destroy(&q);
}

TEST(evaluate12_the_jobs_sharding_rules_make_plans_invalid_naming_the_rule)
{
  hp_problem *p = job_problem(two_model, u_cluster, NULL,
                              "{ \"gbs\": 8, \"sharding\": [\"dp\", \"zero1\"] }");
  hp_problem *u = job_problem(two_model, u_cluster, NULL,
                              "{ \"gbs\": 8, \"uniform_sharding\": true, \"max_slices\": 2 }");
  char text[512];
  snprintf(text, sizeof text, flat4, "\"sharding\": [\"zero1\", \"zdp\"]");
  CHECK_CONTAINS(fx_plan_error(p, text), "sharding[1] is 'zdp', which the job's sharding list (dp, zero1) does not allow");
  CHECK_CONTAINS(fx_plan_error(u, text), "uniform_sharding");
  snprintf(text, sizeof text, flat4, "\"sharding\": [\"zero1\", \"zero1\"], \"slices\": [2, 1]");
  CHECK_CONTAINS(fx_plan_error(u, text), "only a zdp layer is gathered in slices");
  snprintf(text, sizeof text, flat4, "\"sharding\": [\"zdp\", \"zdp\"], \"slices\": [4, 1]");
  CHECK_CONTAINS(fx_plan_error(u, text), "above the job's max_slices 2");
  snprintf(text, sizeof text, flat4, "\"sharding\": [\"zdp\", \"zdp\"], \"slices\": [3, 1]");
  CHECK_CONTAINS(fx_plan_error(u, text), "a power of two");
  /* no sharding key: all dp, which a job without dp refuses (7.21) */
  hp_problem *z = job_problem(two_model, u_cluster, NULL, "{ \"gbs\": 8, \"sharding\": [\"zero1\"] }");
  snprintf(text, sizeof text, flat4, "\"notes\": \"\"");
  CHECK_CONTAINS(fx_plan_error(z, text), "sharding[0] is 'dp'");
  hp_problem_destroy(&p);
  hp_problem_destroy(&u);
  hp_problem_destroy(&z);
}

TEST(evaluate12_a_negative_optimizer_part_and_bad_job_fields_are_input_errors)
{
  hp_diag d = {0};
  hp_job job = { .gbs = 8 };
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_problem *p = NULL;
  CHECK(hp_job_parse("{ \"gbs\": 8, \"max_slices\": 3 }", "job.json", &job, &d) != HP_OK);
  CHECK_CONTAINS(d.msg, "max_slices: 3 is not a power of two");
  CHECK(hp_job_parse("{ \"gbs\": 8, \"sharding\": [\"zero4\"] }", "job.json", &job, &d) != HP_OK);
  CHECK_CONTAINS(d.msg, "sharding[0]");
  CHECK(hp_job_parse("{ \"gbs\": 8, \"grad_sync\": \"later\" }", "job.json", &job, &d) != HP_OK);
  CHECK_CONTAINS(d.msg, "grad_sync: expected \"end\" or \"overlap\"");
  CHECK(hp_model_parse("{ \"state_bytes\": 3, \"layers\": [ { \"name\": \"x\", \"params\": 1,"
                       " \"act_bytes\": 0, \"out_bytes\": 0, \"flops\": 1 } ] }", "m.json", &m, &d) == HP_OK);
  CHECK(hp_cluster_parse(u_cluster, "c.json", &c, &d) == HP_OK);
  CHECK(hp_problem_create(&p, m, c, NULL, job, &d) != HP_OK);
  CHECK_CONTAINS(d.msg, "cannot be negative");
}

TEST(evaluate12_update_bytes_given_sets_the_steps_traffic)
{
  static const char m[] =
    "{ \"update_bytes\": 10, \"layers\": [ { \"name\": \"x\", \"params\": 1e6,"
    "  \"act_bytes\": 0, \"out_bytes\": 0, \"flops\": 1e9 } ] }";
  hp_problem *p = job_problem(m, u_cluster, NULL, "{ \"gbs\": 4 }");
  hp_plan *pl = fx_plan(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 1, \"stages\": ["
                           "{ \"layers\": [0, 0], \"devices\": [[0], [1], [2], [3]] } ],"
                           " \"sharding\": [\"zero1\"] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* 10 bytes per parameter over the quarter each device updates: 10 * 2.5e5 / 1e11 */
  CHECK_NEAR(e.step_time, 2.5e-5, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}
