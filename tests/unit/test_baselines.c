/* test_baselines.c -- each baseline's published rule on a small instance worked out by
 * hand (the solver files' opening comments; /work/shared/docs/seeds-digest.md): the plan
 * the rule must give is derived in the comments from the instance's figures, and the
 * test checks the solver gives that plan. A solver replaced by `random` (or by another
 * baseline) fails them. Units: bytes, FLOP; memory terms of cost-model.md section 4
 * (model states 16 B per parameter, ZeRO-3 gather buffer param_bytes = 2 B per
 * parameter, activations inflight x mbs x act_bytes). */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "../../solvers/search.h"

static hp_result run(const hp_problem *p, const char *solver, hp_err *err)
{
  hp_limits lim;
  hp_result r;
  hp_diag d = {0};
  hp_limits_init(&lim);
  *err = hp_solver_run(hp_solver_find(solver), p, NULL, &lim, &r, &d);
  if (*err) fprintf(stderr, "  %s: %s\n", solver, d.msg);
  return r;
}

#define DEV(pl, s, r, j) ((pl)->dev[HP_SLOT(pl, s, r, j)])

/* A problem under a whole job (fx_problem's job is 1.1's: every mode allowed). */
static hp_problem *with_job(const char *model, const char *cluster, hp_job job)
{
  hp_diag d = {0};
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_problem *p = NULL;
  if (hp_model_parse(model, "model", &m, &d) || hp_cluster_parse(cluster, "cluster", &c, &d) ||
      hp_problem_create(&p, m, c, NULL, job, &d)) {
    fprintf(stderr, "fixture: %s\n", d.msg);
    exit(3);
  }
  return p;
}

#define ONLY(m) (1u << (m))

/* Megatron: the smallest model-parallel size tp * pp that fits, the larger tp first at
 * equal size, TP ranks on consecutive GPUs, then replicas, then stages; mbs 1. Under a
 * job whose sharding list is dp alone (no distributed optimizer): every layer dp.
 * Tiny cluster: 2 nodes x 2 GPUs; fast GPUs 1 GiB less 0.25 reserved = 805,306,368 B.
 * Four layers of 16e6 parameters (states 16 x 16e6 = 2.56e8 B each), 1e6 B activations.
 *   size 1 (tp 1, pp 1, dp 4): 4 x 2.56e8 = 1.024e9 B of states > 8.05e8: no fit;
 *   size 2, tp 2 first (pp 1, dp 2): 1.024e9 / 2 = 5.12e8 + 2e6 B of activations: fits.
 * So: pp 1, tp 2, dp 2, mbs 1, replicas on devices {0,1} and {2,3}, no recompute; a plan
 * of tp 1 pp 2 (which fits too) must not be chosen. */
TEST(megatron_takes_the_smallest_model_parallel_size_that_fits_larger_tp_first)
{
  static const char model[] =
    "{ \"layers\": [ { \"name\": \"l\", \"repeat\": 4, \"params\": 16e6, \"act_bytes\": 1e6,"
    "  \"out_bytes\": 1e6, \"flops\": 1e12 } ] }";
  hp_problem *p = with_job(model, fx_tiny_cluster,
                           (hp_job){ .gbs = 8, .sharding = ONLY(HP_SHARD_DP) });
  hp_err err;
  hp_result r = run(p, "megatron", &err);
  CHECK(!err && r.plan && r.fits);
  CHECK_INT(r.plan->pp, 1);
  CHECK_INT(r.plan->tp, 2);
  CHECK_INT(r.plan->dp, 2);
  CHECK_INT(r.plan->mbs, 1);
  CHECK_INT(DEV(r.plan, 0, 0, 0), 0);
  CHECK_INT(DEV(r.plan, 0, 0, 1), 1);
  CHECK_INT(DEV(r.plan, 0, 1, 0), 2);
  CHECK_INT(DEV(r.plan, 0, 1, 1), 3);
  CHECK_INT(r.plan->recompute[0], 0);
  for (int l = 0; l < 4; l++) CHECK_INT(r.plan->mode[l], HP_SHARD_DP);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

/* Megatron with its distributed optimizer (ZeRO-1), which it uses when the job allows
 * zero1 (the default list allows all four modes): every layer zero1, and the same rule
 * for the model-parallel size. The instance above: at size 1 (tp 1, pp 1, dp 4) zero1
 * keeps per parameter param 2 + grad 2 + opt 12 / 4 = 7 B: 4 x 16e6 x 7 = 4.48e8 B, plus
 * in flight min(1, gas 2) = 1 micro-batch of 4 x 1e6 B: 4.52e8 B <= 8.05e8 (the fast
 * GPUs' 1 GiB less 0.25 GiB) and <= 1 GiB (the slow ones): it fits, so size 1 it is.
 * Under a job without zero1 and dp (zero2, zdp only), Megatron has nothing it can
 * launch: no plan, and the reason names the job's list. */
TEST(megatron_uses_zero1_on_every_layer_when_the_job_allows_its_distributed_optimizer)
{
  static const char model[] =
    "{ \"layers\": [ { \"name\": \"l\", \"repeat\": 4, \"params\": 16e6, \"act_bytes\": 1e6,"
    "  \"out_bytes\": 1e6, \"flops\": 1e12 } ] }";
  hp_problem *p = fx_problem(model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_err err;
  hp_eval e = {0};
  hp_diag d = {0};
  char why[512];
  hp_result r = run(p, "megatron", &err);
  CHECK(!err && r.plan && r.fits);
  CHECK_INT(r.plan->pp, 1);
  CHECK_INT(r.plan->tp, 1);
  CHECK_INT(r.plan->dp, 4);
  CHECK_INT(r.plan->mbs, 1);
  for (int l = 0; l < 4; l++) CHECK_INT(r.plan->mode[l], HP_SHARD_ZERO1);
  CHECK(hp_evaluate(p, r.plan, &e, &d) == HP_OK);
  CHECK_NEAR(e.mem[0], 4.48e8 + 4e6 + 0.25 * 1073741824.0, 1e-12);
  CHECK_CONTAINS(r.space_note, "every layer zero1");
  hp_eval_release(&e);
  hp_result_release(&r);
  hp_problem_destroy(&p);

  p = with_job(model, fx_tiny_cluster,
               (hp_job){ .gbs = 8, .sharding = ONLY(HP_SHARD_ZERO2) | ONLY(HP_SHARD_ZDP) });
  r = run(p, "megatron", &err);
  CHECK(!err && !r.plan);
  CHECK_INT(r.status, HP_SOL_NONE);
  CHECK_CONTAINS(hp_result_no_plan_text(&r, why, sizeof why), "the job's sharding list (zero2, zdp)");
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

/* The baselines that model replication only (hethub, dhondt, pipette, amp) write dp on
 * every layer; under a job whose list lacks dp they use its one mode if it has a single
 * one, and otherwise return no plan with the reason, never an invalid plan. */
TEST(replicating_baselines_write_the_jobs_only_mode_or_say_why_they_have_no_plan)
{
  static const char model[] =
    "{ \"layers\": [ { \"name\": \"l\", \"repeat\": 4, \"params\": 1e6, \"act_bytes\": 1e6,"
    "  \"out_bytes\": 1e6, \"flops\": 1e12 } ] }";
  static const char *names[] = { "hethub", "dhondt", "pipette", "amp" };
  for (int k = 0; k < 4; k++) {
    hp_problem *p = with_job(model, fx_tiny_cluster, (hp_job){ .gbs = 8, .sharding = ONLY(HP_SHARD_ZERO2) });
    hp_err err;
    char why[512];
    hp_result r = run(p, names[k], &err);
    CHECK(!err && r.plan);
    for (int l = 0; l < 4; l++) CHECK_INT(r.plan->mode[l], HP_SHARD_ZERO2);
    CHECK_CONTAINS(r.space_note, "every layer zero2, no slices, every device used");
    hp_result_release(&r);
    hp_problem_destroy(&p);
    p = with_job(model, fx_tiny_cluster,
                 (hp_job){ .gbs = 8, .sharding = ONLY(HP_SHARD_ZERO1) | ONLY(HP_SHARD_ZDP) });
    r = run(p, names[k], &err);
    CHECK(!err && !r.plan);
    CHECK_INT(r.status, HP_SOL_NONE);
    CHECK_CONTAINS(hp_result_no_plan_text(&r, why, sizeof why),
                   "writes dp on every layer and the job's sharding list (zero1, zdp) allows none");
    hp_result_release(&r);
    hp_problem_destroy(&p);
  }
}

/* Layers balanced by count (megatron) or by parameters (megatron-params), on four
 * single-GPU nodes of 1 GiB = 1,073,741,824 B (tp is 1), under a job of dp alone (with
 * zero1, 7 B a parameter at dp 4, pp 1 would fit). Parameters 60e6, 20e6, 20e6,
 * 20e6: states 9.6e8, 3.2e8, 3.2e8, 3.2e8 B; activations 1e6 B a layer.
 *   pp 1: 1.92e9 B: no fit.
 *   pp 2 by count, layers {0,1} | {2,3}: stage 0 holds 1.28e9 B: no fit; so megatron
 *     goes on to pp 4, one layer a stage (at most 9.6e8 + 4e6 B in flight: fits).
 *   pp 2 by parameters, the min-max split of (3, 1, 1, 1): {0} | {1,2,3}, 9.6e8 B each
 *     stage plus at most 2 x 1e6 B x 1 layer or 1 x 3e6 B of activations: fits.
 * So megatron: pp 4, stages of one layer on devices 0..3; megatron-params: pp 2,
 * dp 2, stages [0,0] and [1,3], stage 0 on devices 0 and 1, stage 1 on 2 and 3. */
TEST(megatron_balances_layers_by_count_and_megatron_params_by_parameters)
{
  static const char model[] =
    "{ \"layers\": ["
    "  { \"name\": \"big\", \"params\": 60e6, \"act_bytes\": 1e6, \"out_bytes\": 1e6, \"flops\": 1e12 },"
    "  { \"name\": \"l\", \"repeat\": 3, \"params\": 20e6, \"act_bytes\": 1e6, \"out_bytes\": 1e6,"
    "    \"flops\": 1e12 } ] }";
  static const char cluster[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 100 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"g\", \"gpus\": 1 },"
    "             { \"name\": \"b\", \"type\": \"g\", \"gpus\": 1 },"
    "             { \"name\": \"c\", \"type\": \"g\", \"gpus\": 1 },"
    "             { \"name\": \"d\", \"type\": \"g\", \"gpus\": 1 } ], \"inter_gbps\": 100 }";
  hp_problem *p = with_job(model, cluster, (hp_job){ .gbs = 4, .sharding = ONLY(HP_SHARD_DP) });
  hp_err err;
  hp_result a = run(p, "megatron", &err), b;
  CHECK(!err && a.plan && a.fits);
  CHECK_INT(a.plan->pp, 4);
  for (int s = 0; s < 4; s++) {
    CHECK_INT(a.plan->first[s], s);
    CHECK_INT(DEV(a.plan, s, 0, 0), s);
  }
  b = run(p, "megatron-params", &err);
  CHECK(!err && b.plan && b.fits);
  CHECK_INT(b.plan->pp, 2);
  CHECK_INT(b.plan->dp, 2);
  CHECK_INT(b.plan->first[1], 1);
  CHECK_INT(DEV(b.plan, 0, 0, 0), 0);
  CHECK_INT(DEV(b.plan, 0, 1, 0), 1);
  CHECK_INT(DEV(b.plan, 1, 0, 0), 2);
  CHECK_INT(DEV(b.plan, 1, 1, 0), 3);
  hp_result_release(&a);
  hp_result_release(&b);
  hp_problem_destroy(&p);
}

/* AMP as published: one averaged device speed per layer, Megatron placement, no memory
 * model. Two single-GPU nodes, 100 and 25 TFLOPS, 10 Gbit/s apart; four layers of 1e12
 * FLOP and 1e9 parameters; gbs 2.
 *   averaged time of a layer per sample: (1e12/100e12 + 1e12/25e12) / 2 = 0.025 s;
 *   pp 2, dp 1, mbs 1 (gas 2): the averaged DP splits four equal layers 2 | 2 (0.05 s a
 *     stage): (2-1) 0.05 + 0.1 = 0.15 s and a 2e3 B hand-off;
 *   pp 2, mbs 2 (gas 1): 0.1 + 0.1 = 0.2 s;
 *   pp 1, dp 2 (mbs 1, gas 1): 0.1 s of compute plus the sync of 2 x 4e9 B of gradients
 *     at 1.25e9 B/s: about 6.4 s.
 * So AMP returns pp 2, mbs 1, layers 2 | 2 on devices 0 then 1, although 16 B x 2e9
 * parameters = 3.2e10 B per stage fit in no 1 GiB GPU: its status says the plan does
 * not fit. (A speed-aware split would give the fast GPU three layers.) */
TEST(amp_splits_by_the_averaged_speed_and_ignores_memory)
{
  static const char model[] =
    "{ \"layers\": [ { \"name\": \"l\", \"repeat\": 4, \"params\": 1e9, \"act_bytes\": 1e6,"
    "  \"out_bytes\": 1e3, \"flops\": 1e12 } ] }";
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 1, \"tflops\": 100 },"
    "                    \"slow\": { \"mem_gib\": 1, \"tflops\": 25 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 1 },"
    "             { \"name\": \"b\", \"type\": \"slow\", \"gpus\": 1 } ], \"inter_gbps\": 10 }";
  hp_problem *p = fx_problem(model, cluster, NULL, 2, HP_1F1B);
  hp_err err;
  hp_result r = run(p, "amp", &err);
  CHECK(!err && r.plan);
  CHECK_INT(r.status, HP_SOL_NOFIT);
  CHECK_INT(r.fits, 0);
  CHECK_INT(r.plan->pp, 2);
  CHECK_INT(r.plan->dp, 1);
  CHECK_INT(r.plan->mbs, 1);
  CHECK_INT(r.plan->first[1], 2);
  CHECK_INT(DEV(r.plan, 0, 0, 0), 0);
  CHECK_INT(DEV(r.plan, 1, 0, 0), 1);
  CHECK_CONTAINS(hp_sol_status_name(r.status), "does-not-fit");
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

/* HetHub: stages on one device kind each, each stage's share of the FLOPs proportional
 * to its devices' speed (peak x efficiency x tp), cut at the first layer that reaches
 * the share; the kind order is tried both ways and the evaluator's better kept. Two
 * single-GPU nodes of 300 and 100 TFLOPS (80 GiB), 10 Gbit/s apart; layers of 1, 1, 1
 * and 3 TFLOP; gbs 4, so pp 2 at mbs 1 runs 4 micro-batches. The hand-off is
 * e = 2 x 1e3 B / 1.25e9 B/s = 1.6e-6 s (one lane: nothing shared), and since 1.2 every
 * micro-batch's period pays half of it (cost-model.md 3): c_s = t_s + 8e-7 s.
 *   fast first: share 3/4 of 6 = 4.5 TFLOP: not reached before the last layer, which
 *     must stay for the slow stage: fast {0,1,2} 3e12 / 300e12 = 0.01 s, slow {3}
 *     3e12 / 100e12 = 0.03 s: T = 3 x 0.0300008 + 0.04 + 1.6e-6 = 0.1300040 s;
 *   slow first: share 1/4 = 1.5 TFLOP, reached at layer 1: slow {0,1} 0.02 s, fast {2,3}
 *     4e12 / 300e12 = 0.013333 s: T = 3 x 0.0200008 + 0.033333 + 1.6e-6 = 0.0933373 s:
 *     HetHub's plan (under 1.1 it was 0.0933349 s, without the 3 x 8e-7).
 *   Larger micro-batches or pp 1 (dp 2, sync of 2 x 4e8 B at 1.25e9 B/s) are slower.
 * The best plan of this space is another (slow {0}, fast {1,2,3}: 0.076668 s): a search
 * that finds it is not HetHub. */
TEST(hethub_splits_flops_in_proportion_to_device_speed)
{
  static const char model[] =
    "{ \"layers\": [ { \"name\": \"l\", \"repeat\": 3, \"params\": 1e8, \"act_bytes\": 1e6,"
    "  \"out_bytes\": 1e3, \"flops\": 1e12 },"
    "  { \"name\": \"last\", \"params\": 1e8, \"act_bytes\": 1e6, \"out_bytes\": 1e3, \"flops\": 3e12 } ] }";
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 80, \"tflops\": 300 },"
    "                    \"slow\": { \"mem_gib\": 80, \"tflops\": 100 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 1 },"
    "             { \"name\": \"b\", \"type\": \"slow\", \"gpus\": 1 } ], \"inter_gbps\": 10 }";
  hp_problem *p = fx_problem(model, cluster, NULL, 4, HP_1F1B);
  hp_err err;
  hp_result r = run(p, "hethub", &err);
  CHECK(!err && r.plan && r.fits);
  CHECK_INT(r.plan->pp, 2);
  CHECK_INT(r.plan->mbs, 1);
  CHECK_INT(DEV(r.plan, 0, 0, 0), 1);      /* the slow GPU first */
  CHECK_INT(DEV(r.plan, 1, 0, 0), 0);
  CHECK_INT(r.plan->first[1], 2);
  CHECK_NEAR(r.objective, 3 * (0.02 + 1e3 / 1.25e9) + 0.02 + 4e12 / 300e12 + 2 * 1e3 / 1.25e9, 1e-9);
  for (int l = 0; l < 4; l++) CHECK_INT(r.plan->mode[l], HP_SHARD_DP);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

/* SageMaker's partitioner: layer cost alpha memory share + (1 - alpha) compute share
 * (the shares are equal here, so any alpha gives the same costs), min-max segments, then
 * D'Hondt: the next fastest TP group goes to the segment of largest
 * cost / (groups it has + 1). Four single-GPU nodes, two fast (devices 0, 1) then two
 * slow (2, 3); two layers and gbs 2, so the only configuration is pp 2, dp 2, mbs 1 and
 * the segments are {0} and {1}.
 *   costs 0.75 and 0.25 (layer 0 three times layer 1 in parameters and FLOPs):
 *     fast 0 -> segment 0 (0.75 vs 0.25); fast 1 -> segment 0 (0.375 vs 0.25);
 *     slow 2 -> segment 1 (segment 0 is full); slow 3 -> segment 1.
 *   costs 0.6 and 0.4 (layer 0 1.5 times layer 1):
 *     fast 0 -> 0; fast 1 -> 1 (0.3 vs 0.4); slow 2 -> 0 (0.3 vs 0.2); slow 3 -> 1. */
TEST(dhondt_allots_the_fastest_groups_by_largest_quotient)
{
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 80, \"tflops\": 300 },"
    "                    \"slow\": { \"mem_gib\": 80, \"tflops\": 100 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 1 },"
    "             { \"name\": \"b\", \"type\": \"fast\", \"gpus\": 1 },"
    "             { \"name\": \"c\", \"type\": \"slow\", \"gpus\": 1 },"
    "             { \"name\": \"d\", \"type\": \"slow\", \"gpus\": 1 } ], \"inter_gbps\": 100 }";
  static const char three_to_one[] =
    "{ \"layers\": ["
    "  { \"name\": \"a\", \"params\": 3e6, \"act_bytes\": 0, \"out_bytes\": 1e3, \"flops\": 3e12 },"
    "  { \"name\": \"b\", \"params\": 1e6, \"act_bytes\": 0, \"out_bytes\": 1e3, \"flops\": 1e12 } ] }";
  static const char three_to_two[] =
    "{ \"layers\": ["
    "  { \"name\": \"a\", \"params\": 1.5e6, \"act_bytes\": 0, \"out_bytes\": 1e3, \"flops\": 1.5e12 },"
    "  { \"name\": \"b\", \"params\": 1e6, \"act_bytes\": 0, \"out_bytes\": 1e3, \"flops\": 1e12 } ] }";
  hp_problem *p = fx_problem(three_to_one, cluster, NULL, 2, HP_1F1B);
  hp_err err;
  hp_result r = run(p, "dhondt", &err);
  CHECK(!err && r.plan && r.fits);
  CHECK_INT(r.plan->pp, 2);
  CHECK_INT(r.plan->dp, 2);
  CHECK_INT(DEV(r.plan, 0, 0, 0), 0);
  CHECK_INT(DEV(r.plan, 0, 1, 0), 1);
  CHECK_INT(DEV(r.plan, 1, 0, 0), 2);
  CHECK_INT(DEV(r.plan, 1, 1, 0), 3);
  hp_result_release(&r);
  hp_problem_destroy(&p);

  p = fx_problem(three_to_two, cluster, NULL, 2, HP_1F1B);
  r = run(p, "dhondt", &err);
  CHECK(!err && r.plan && r.fits);
  CHECK_INT(DEV(r.plan, 0, 0, 0), 0);
  CHECK_INT(DEV(r.plan, 0, 1, 0), 2);
  CHECK_INT(DEV(r.plan, 1, 0, 0), 1);
  CHECK_INT(DEV(r.plan, 1, 1, 0), 3);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

/* OSDP: data parallel only, each layer replicated or ZeRO-3 sharded by a DFS that keeps
 * the fastest choice that fits; the micro-batch grows until nothing fits. Two single-GPU
 * nodes of 1 GiB = 1,073,741,824 B, 1 Gbit/s apart (so that a pipeline, which OSDP never
 * considers, would be faster); layers of 50e6, 10e6, 10e6 parameters (states 8e8,
 * 1.6e8, 1.6e8 B; gather buffers 1e8, 2e7, 2e7 B) and 4e7 B of activations each; gbs 8.
 *   mbs 1 (activations 1.2e8 B): all replicated 1.24e9 B, no fit; shard 1 and 2:
 *     8e8 + 1.6e8 + 2e7 + 1.2e8 = 1.1e9, no fit; so layer 0 must be sharded, and alone it
 *     fits: 4e8 + 3.2e8 + 1e8 + 1.2e8 = 9.4e8 B. Sharding more only adds gathers.
 *   mbs 2 (2.4e8 B): shard layer 0: 1.06e9 B, fits; mbs 4 (4.8e8 B): even with every
 *     layer sharded, 5.6e8 + 1e8 + 4.8e8 = 1.14e9 B, no fit: the sweep stops.
 *   mbs 2 beats mbs 1: the same compute in half the micro-batches, half the gathers;
 *   and sharding more layers only adds gathers (gas 2 > 1).
 * So: pp 1, tp 1, dp 2, mbs 2, sharding zdp, dp, dp. */
TEST(osdp_shards_the_layers_that_must_be_and_grows_the_batch_until_it_does_not_fit)
{
  static const char model[] =
    "{ \"layers\": ["
    "  { \"name\": \"big\", \"params\": 50e6, \"act_bytes\": 4e7, \"out_bytes\": 1e6, \"flops\": 1e12 },"
    "  { \"name\": \"small\", \"repeat\": 2, \"params\": 10e6, \"act_bytes\": 4e7, \"out_bytes\": 1e6,"
    "    \"flops\": 1e12 } ] }";
  static const char cluster[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 100 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"g\", \"gpus\": 1 },"
    "             { \"name\": \"b\", \"type\": \"g\", \"gpus\": 1 } ], \"inter_gbps\": 1 }";
  hp_problem *p = fx_problem(model, cluster, NULL, 8, HP_1F1B);
  hp_err err;
  hp_result r = run(p, "osdp", &err);
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(!err && r.plan && r.fits);
  CHECK_INT(r.plan->pp, 1);
  CHECK_INT(r.plan->dp, 2);
  CHECK_INT(r.plan->mbs, 2);
  CHECK_INT(r.plan->mode[0], HP_SHARD_ZDP);
  CHECK_INT(r.plan->mode[1], HP_SHARD_DP);
  CHECK_INT(r.plan->mode[2], HP_SHARD_DP);
  CHECK(hp_evaluate(p, r.plan, &e, &d) == HP_OK);
  CHECK_NEAR(e.mem[0], 4e8 + 3.2e8 + 1e8 + 2.4e8, 1e-12);   /* the sum worked out above */
  hp_eval_release(&e);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

/* OSDP's operator splitting: a zdp layer gathered in g slices needs a gather buffer of
 * 1/g of its weights, for one more latency per extra slice. Two single-GPU nodes of 1 GiB
 * = 1,073,741,824 B, 1 Gbit/s apart; a big layer of 1e8 parameters with 1e8 B of
 * activations a sample, a small one of 1e6 parameters and none; gbs 4 (mbs 1 or 2).
 * Memory at dp 2, pp 1 (one micro-batch in flight): the big layer replicated holds
 * 16 x 1e8 = 1.6e9 B: never fits, so it is zdp: states 16 x 1e8 / 2 = 8e8 B and a gather
 * buffer of 2 x 1e8 / g B; the small one replicated 1.6e7 B (zdp would only add its
 * gather per micro-batch to save 8e6 B).
 *   mbs 1: g 1: 8e8 + 1.6e7 + 2e8 + 1e8 = 1.116e9 B, no fit; g 2: + 1e8 instead of 2e8:
 *     1.016e9 B, fits.
 *   mbs 2: g 2: 8e8 + 1.6e7 + 1e8 + 2e8 = 1.116e9 B, no fit; g 4: 8e8 + 1.6e7 + 5e7 + 2e8
 *     = 1.066e9 B, fits.
 * So with max_slices 1 nothing fits (no plan); with 2: mbs 1, the big layer in 2 slices
 * (the sweep stops at mbs 2); with 4: both batch sizes fit and mbs 2 (gas 1) in 4 slices
 * wins: its gathers and reduce-scatters run once, not twice (2 x (2e8 + 1e8) B / 1.25e8
 * B/s = 4.8 s against 2.4 s), which outweighs 2 more slices' latencies. */
TEST(osdp_gathers_a_layer_in_slices_when_its_gather_buffer_does_not_fit)
{
  static const char model[] =
    "{ \"layers\": ["
    "  { \"name\": \"big\", \"params\": 1e8, \"act_bytes\": 1e8, \"out_bytes\": 1e6, \"flops\": 1e12 },"
    "  { \"name\": \"small\", \"params\": 1e6, \"act_bytes\": 0, \"out_bytes\": 1e6, \"flops\": 1e12 } ] }";
  static const char cluster[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 1, \"tflops\": 100 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"g\", \"gpus\": 1 },"
    "             { \"name\": \"b\", \"type\": \"g\", \"gpus\": 1 } ], \"inter_gbps\": 1,"
    "  \"inter_lat_us\": 10 }";
  static const int max_slices[3] = { 1, 2, 4 }, want_mbs[3] = { 0, 1, 2 }, want_log[3] = { 0, 1, 2 };
  static const double want_mem[3] = { 0, 1.016e9, 1.066e9 };
  for (int k = 0; k < 3; k++) {
    hp_problem *p = with_job(model, cluster, (hp_job){ .gbs = 4, .max_slices = max_slices[k] });
    hp_err err;
    hp_eval e = {0};
    hp_diag d = {0};
    hp_result r = run(p, "osdp", &err);
    CHECK(!err);
    if (k == 0) {
      CHECK(!r.plan);
      CHECK_INT(r.status, HP_SOL_NONE);
    } else {
      CHECK(r.plan && r.fits);
      CHECK_INT(r.plan->pp, 1);
      CHECK_INT(r.plan->dp, 2);
      CHECK_INT(r.plan->mbs, want_mbs[k]);
      CHECK_INT(r.plan->mode[0], HP_SHARD_ZDP);
      CHECK_INT(r.plan->slices[0], want_log[k]);
      CHECK_INT(r.plan->mode[1], HP_SHARD_DP);
      CHECK_INT(r.plan->slices[1], 0);
      CHECK(hp_evaluate(p, r.plan, &e, &d) == HP_OK);
      CHECK_NEAR(e.mem[0], want_mem[k], 1e-12);
      CHECK_NEAR(e.mem_gather[0], 2e8 / (1 << want_log[k]), 1e-12);
      hp_eval_release(&e);
    }
    hp_result_release(&r);
    hp_problem_destroy(&p);
  }
}

/* Pipette: one stage per server (pp = 2 nodes), layers split uniformly whatever they
 * cost, the GPU mapping annealed on the link bandwidths. Two nodes of two GPUs, 1,000
 * Gbit/s inside a node, 1 Gbit/s between; 1e9 B of activations handed from stage to
 * stage, little to sync (1e3 parameters), TP all-reduces of 1e10 B (tp 2 is hopeless).
 *   tp 1, dp 2: each replica hands 2 x 1e9 B from stage 0 to stage 1: 0.016 s over a
 *   node's own links (1.25e11 B/s), 16 s between nodes (1.25e8 B/s). The mappings that
 *   keep both hand-offs inside a node (one stage-0 replica on each node, its stage-1
 *   partner beside it) are the only ones without a 16 s term; tp 2 hands off between
 *   nodes (8 s). Annealing finds one on four GPUs.
 *   The uniform split of four layers is 2 | 2 although layer 0 has four times the FLOPs
 *   and gbs 8 runs several micro-batches, where {0} | {1,2,3} would be faster. */
TEST(pipette_anneals_the_mapping_onto_the_fast_links_and_splits_uniformly)
{
  static const char model[] =
    "{ \"layers\": ["
    "  { \"name\": \"a\", \"params\": 1e3, \"act_bytes\": 1e6, \"out_bytes\": 1e9, \"flops\": 4e12,"
    "    \"tp_comm_bytes\": 1e10 },"
    "  { \"name\": \"b\", \"repeat\": 3, \"params\": 1e3, \"act_bytes\": 1e6, \"out_bytes\": 1e9,"
    "    \"flops\": 1e12, \"tp_comm_bytes\": 1e10 } ] }";
  static const char cluster[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 80, \"tflops\": 100 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 1000 },"
    "             { \"name\": \"b\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 1000 } ],"
    "  \"inter_gbps\": 1 }";
  hp_problem *p = fx_problem(model, cluster, NULL, 8, HP_1F1B);
  hp_err err;
  hp_result r = run(p, "pipette", &err);
  CHECK(!err && r.plan && r.fits);
  CHECK_INT(r.plan->pp, 2);
  CHECK_INT(r.plan->tp, 1);
  CHECK_INT(r.plan->first[1], 2);
  for (int rep = 0; rep < 2; rep++)
    CHECK_INT(p->cluster->dev_node[DEV(r.plan, 0, rep, 0)], p->cluster->dev_node[DEV(r.plan, 1, rep, 0)]);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

/* The largest run of a split of w by pl->first. */
static double largest_run(const hp_plan *pl, const double *w)
{
  double most = 0;
  for (int s = 0; s < pl->pp; s++) {
    double sum = 0;
    for (int l = pl->first[s]; l < pl->first[s + 1]; l++) sum += w[l];
    if (sum > most) most = sum;
  }
  return most;
}

/* megatron-params and dhondt split by least largest run: the exact DP, or on deep models
 * bisection on the run's value. On 400 random instances (1 to 40 layers, weights of 0 to
 * 100 with ties and zeros) the bisection's split is a valid split (pp non-empty runs in
 * order) whose largest run equals the DP's to 1e-12. */
TEST(split_by_bisection_matches_the_exact_split)
{
  unsigned seed = 12345;
  for (int t = 0; t < 400; t++) {
    seed = seed * 1103515245u + 12345u;
    int L = 1 + (int)(seed >> 16) % 40;
    seed = seed * 1103515245u + 12345u;
    int pp = 1 + (int)(seed >> 16) % L;
    double w[40];
    for (int l = 0; l < L; l++) {
      seed = seed * 1103515245u + 12345u;
      int v = (int)(seed >> 16) % 12;
      w[l] = v < 2 ? 0 : v < 4 ? 50 : (double)((seed >> 8) % 10000) / 100.0;
    }
    hp_plan *a = NULL, *b = NULL;
    CHECK(hp_plan_create(&a, pp, 1, 1, L, NULL) == HP_OK);
    CHECK(hp_plan_create(&b, pp, 1, 1, L, NULL) == HP_OK);
    hp__split_minmax(a, w);
    hp__split_minmax_bisect(b, w);
    CHECK_INT(b->first[0], 0);
    CHECK_INT(b->first[pp], L);
    for (int s = 0; s < pp; s++) CHECK(b->first[s] < b->first[s + 1]);
    double da = largest_run(a, w), db = largest_run(b, w);
    if (fabs(da - db) > 1e-12 * (1 + da))
      fprintf(stderr, "  instance %d: L %d pp %d\n", t, L, pp);
    CHECK_NEAR(db, da, 1e-12);
    hp_plan_destroy(&a);
    hp_plan_destroy(&b);
  }
}
