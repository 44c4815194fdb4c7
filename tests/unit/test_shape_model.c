/* test_shape_model.c -- the shape model (hp_shape.h, docs/cost-model.md "Shape model"):
 * GEMM times worked by hand (waves, alignment, the memory-bound regime at few tokens), a
 * block's time term by term with FlashAttention and with eager attention, fp8 halving
 * the compute-bound GEMMs, the estimates entering as profile series (TP all-reduce
 * included, coverage origin "shape model"), measured entries winning, the flops switch
 * giving the old figures, the floor at the FLOPs' peak time, and the inputs refused. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"

#define REL 1e-9

/* Constants easy to work by hand: 4 SMs, 128 x 128 tiles, half the peak, alignment 64 at
 * half again, FlashAttention at half (a quarter at head size 64), the whole bandwidth,
 * no launch cost. */
static hp_shape hand_shape(void)
{
  hp_shape s;
  hp_shape_defaults(&s);
  s.sms = 4;
  s.tile_m = s.tile_n = 128;
  s.gemm_eff = 0.5;
  s.align = 64;
  s.align_eff = 0.5;
  s.attn_eff = 0.5;
  s.attn_eff64 = 0.25;
  s.mem_eff = 1;
  s.launch_us = 0;
  return s;
}

TEST(shape_gemm_waves_alignment_and_memory_bound_by_hand)
{
  hp_shape s = hand_shape();
  /* 256 x 256 x 64: 4 tiles, one wave; a tile's 2 128 128 64 FLOPs on one of 4 SMs at
   * 0.5 of 1e12: 2 * 128 * 128 * 64 * 4 / 5e11 = 1.6777216e-5 s (= 2 M N K / (peak eff)) */
  CHECK_NEAR(hp_shape_gemm_time(&s, 1e12, 1e12, 256, 256, 64, 1, 2), 1.6777216e-5, REL);
  /* 384 rows: 6 tiles, two waves: twice the time for 1.5 times the work */
  CHECK_NEAR(hp_shape_gemm_time(&s, 1e12, 1e12, 384, 256, 64, 1, 2), 3.3554432e-5, REL);
  /* N = 200: still 4 tiles, but not a multiple of 64: half the efficiency */
  CHECK_NEAR(hp_shape_gemm_time(&s, 1e12, 1e12, 256, 200, 64, 1, 2), 3.3554432e-5, REL);
  /* N = 250: not a multiple of 8 either: a quarter */
  CHECK_NEAR(hp_shape_gemm_time(&s, 1e12, 1e12, 256, 250, 64, 1, 2), 6.7108864e-5, REL);
  /* 8 tokens x 4096 x 4096 at 1e10 B/s: the tile is cut to 16 rows, 32 tiles in 8 waves
   * take 8 * 2 * 16 * 128 * 4096 * 4 / 5e11 = 1.073741824e-3 s; streaming the operands
   * (8*4096 + 4096*4096 + 8*4096) * 2 bytes takes 3.3685504e-3 s: memory-bound */
  CHECK_NEAR(hp_shape_gemm_time(&s, 1e12, 1e10, 8, 4096, 4096, 1, 2), 3.3685504e-3, REL);
  /* a batch of 2 doubles the tiles: 8 of 256 x 256 x 64 in two waves */
  CHECK_NEAR(hp_shape_gemm_time(&s, 1e12, 1e12, 256, 256, 64, 2, 2), 3.3554432e-5, REL);
  /* the launch cost is added once */
  s.launch_us = 5;
  CHECK_NEAR(hp_shape_gemm_time(&s, 1e12, 1e12, 256, 256, 64, 1, 2), 1.6777216e-5 + 5e-6, REL);
}

/* A one-block gpt (h 256, 2 heads of 128, ffn 1024, seq 256, vocab 512), `extra` added to
 * its transformer object. */
static char *tiny_gpt(const char *extra)
{
  static char buf[512];
  snprintf(buf, sizeof buf, "{ \"name\": \"tiny-gpt\", \"transformer\": { \"family\": \"gpt\", "
           "\"layers\": 1, \"hidden\": 256, \"heads\": 2, \"seq\": 256, \"vocab\": 512%s } }",
           extra);
  return buf;
}

/* One node of 2 GPUs of 1 TFLOPS (2 in fp8), 1000 GB/s, 8 Gbit/s between them, with the
 * hand constants. */
static const char hand_cluster[] =
  "{ \"name\": \"hand\", \"device_types\": { \"g\": { \"mem_gib\": 80, \"tflops\": 1, "
  "  \"tflops_fp8\": 2, \"efficiency\": 0.25, \"hbm_gbs\": 1000, \"shape\": { \"sms\": 4, "
  "  \"tile_m\": 128, \"tile_n\": 128, \"gemm_eff\": 0.5, \"align\": 64, \"align_eff\": 0.5, "
  "  \"attn_eff\": 0.5, \"attn_eff64\": 0.25, \"mem_eff\": 1, \"launch_us\": 0 } } },"
  "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 2, \"intra_gbps\": 8, "
  "  \"intra_lat_us\": 0 } ] }";

/* The block's linear GEMMs at mbs 1 (T = 256 tokens), each tile taking
 * 2 * 128 * 128 * K * 4 / 5e11 s (6.7108864e-5 at K = 256):
 *   QKV 256 -> 768: fwd 12 tiles, 3 waves at K 256; dgrad 4 tiles at K 768; wgrad 12
 *     tiles, 3 waves at K 256: 3 * 2.01326592e-4
 *   O 256 -> 256: 3 GEMMs of one wave at K 256: 2.01326592e-4
 *   up 256 -> 1024 and down 1024 -> 256: 3 GEMMs of 2.68435456e-4 each: 8.05306368e-4 each
 * in all 2.415919104e-3 s; memory-bound parts stream 256 * 256 * (26 * 2 + 4) + 5 * 2 *
 * 256 * 1024 = 6291456 bytes: 6.291456e-6 s. */
#define LINEAR 2.415919104e-3
#define STREAM 6.291456e-6
/* FlashAttention: half of 14 s^2 d a = 117440512 FLOPs at 0.5 of 1e12; 4 thread blocks,
 * one wave. Eager: 2 batched (256, 256, 128) GEMMs of 8 tiles (2 waves of 3.3554432e-5),
 * 4 of (256, 128, 256) of 4 tiles (one wave at K 256), and the scores' 2 * 256^2 * 20
 * bytes. */
#define FLASH 2.34881024e-4
#define EAGER (2 * 6.7108864e-5 + 4 * 6.7108864e-5 + 2.62144e-6)

static hp_problem *bind(const char *model, const char *cluster, const char *profile,
                        hp_job job)
{
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *pr = NULL;
  hp_problem *p = NULL;
  hp_diag d = { 0 };
  if (hp_model_parse(model, "m.json", &m, &d) || hp_cluster_parse(cluster, "c.json", &c, &d) ||
      (profile && hp_profile_parse(profile, "p.json", &pr, &d)) ||
      hp_problem_create(&p, m, c, pr, job, &d)) {
    fprintf(stderr, "fixture: %s\n", d.msg);
    abort();
  }
  return p;
}

static hp_job job_of(long gbs, int compute_model)
{
  hp_job j = { .gbs = gbs, .schedule = HP_1F1B };
  j.compute_model = compute_model;
  return j;
}

TEST(shape_block_flash_and_eager_by_hand)
{
  hp_problem *p = bind(tiny_gpt(""), hand_cluster, NULL, job_of(4, HP_COMPUTE_SHAPE));
  hp_problem *e = bind(tiny_gpt(", \"attention\": \"eager\""), hand_cluster, NULL,
                       job_of(4, HP_COMPUTE_SHAPE));
  CHECK_NEAR(hp_shape_layer_time(p, 1, 0, 1, 1), LINEAR + FLASH + STREAM, REL);
  CHECK_NEAR(hp_shape_layer_time(e, 1, 0, 1, 1), LINEAR + EAGER + STREAM, REL);
  /* the series holds the estimate at every mbs dividing gbs: at mbs 1 it is the time */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 1, 1e9, 0), LINEAR + FLASH + STREAM, REL);
  /* at tp 2 the series includes the TP all-reduce at the node's 1e9 B/s: C = 4 b s h =
   * 524288 bytes, 2 (tp - 1) / tp of it: 5.24288e-4 s, whatever the group's figure */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 2, 1, 123.0, 0),
             hp_shape_layer_time(p, 1, 0, 2, 1) + 5.24288e-4, REL);
  /* mbs 2 has twice the tokens: the 12-tile GEMMs become 24 tiles, 6 waves, exactly double
   * (every GEMM here scales by 2: waves of 4 SMs), not a profile's extrapolation */
  CHECK_NEAR(hp_shape_layer_time(p, 1, 0, 1, 2), 2 * (LINEAR + FLASH + STREAM), REL);
  hp_problem_destroy(&p);
  hp_problem_destroy(&e);
}

TEST(shape_fp8_halves_compute_bound_gemms)
{
  hp_problem *b = bind(tiny_gpt(""), hand_cluster, NULL, job_of(4, HP_COMPUTE_SHAPE));
  hp_problem *f = bind(tiny_gpt(", \"gemm_precision\": \"fp8\""), hand_cluster, NULL,
                       job_of(4, HP_COMPUTE_SHAPE));
  /* the linear GEMMs at 2 TFLOPS take half; attention (16-bit) and the streamed bytes stay */
  CHECK_NEAR(hp_shape_layer_time(f, 1, 0, 1, 1), LINEAR / 2 + FLASH + STREAM, REL);
  CHECK_NEAR(hp_shape_layer_time(b, 1, 0, 1, 1) - hp_shape_layer_time(f, 1, 0, 1, 1), LINEAR / 2,
             REL);
  /* the top-level key says the same */
  hp_problem_destroy(&f);
  f = bind("{ \"name\": \"t\", \"gemm_precision\": \"fp8\", \"transformer\": { \"family\": "
           "\"gpt\", \"layers\": 1, \"hidden\": 256, \"heads\": 2, \"seq\": 256, \"vocab\": 512 } }",
           hand_cluster, NULL, job_of(4, HP_COMPUTE_SHAPE));
  CHECK_NEAR(hp_shape_layer_time(f, 1, 0, 1, 1), LINEAR / 2 + FLASH + STREAM, REL);
  /* MFU is against the fp8 peak (2 TFLOPS a device) for the fp8 model, the 16-bit one (1)
   * for the bf16 model: one plan, pp 1 tp 1 dp 2 mbs 1, on both */
  {
    hp_problem *pr[2] = { b, f };
    double peak[2] = { 1e12, 2e12 };
    for (int i = 0; i < 2; i++) {
      hp_plan *pl = NULL;
      hp_eval e = {0};
      hp_diag d = { 0 };
      CHECK(hp_plan_create(&pl, 1, 1, 2, pr[i]->model->n_layers, &d) == HP_OK);
      pl->mbs = 1;
      pl->schedule = HP_1F1B;
      hp_plan_split_even(pl);
      hp_plan_place_in_order(pl);
      CHECK(hp_plan_set_gas(pr[i], pl, &d) == HP_OK);
      CHECK(hp_evaluate(pr[i], pl, &e, &d) == HP_OK);
      CHECK_NEAR(e.mfu, hp_model_total_flops(pr[i]->model) * 4 / e.iteration_time / (2 * peak[i]),
                 1e-12);
      CHECK(e.mfu < 1);
      hp_eval_release(&e);
      hp_plan_destroy(&pl);
    }
  }
  hp_problem_destroy(&b);
  hp_problem_destroy(&f);
}

TEST(shape_flops_switch_gives_the_old_figures)
{
  hp_problem *p = bind(tiny_gpt(""), hand_cluster, NULL, job_of(4, HP_COMPUTE_FLOPS));
  double F = p->model->layers[1].flops;
  /* F = 3 (2 s 4h^2 + 4 s^2 h + 2 s 2 h f) + 2 s^2 h = 1442840576 */
  CHECK_NEAR(F, 1442840576.0, REL);
  CHECK(p->series == NULL);
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 2, 1e9, 0), F * 2 / (1e12 * 0.25), REL);
  /* tp 2: F / 2 at the peak's quarter, plus the group's all-reduce at the given 1e9 B/s */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 2, 1, 1e9, 0), F / 2 / 2.5e11 + 524288 / 1e9, REL);
  hp_problem_destroy(&p);
}

/* Coverage of a problem: every cell of a transformer's kinds on a type with "shape" is
 * "shape model" (never measured); a measured (kind, type, tp) wins and stays measured. */
TEST(shape_coverage_origin_and_measured_entries_win)
{
  hp_problem *p = bind(tiny_gpt(""), hand_cluster, NULL, job_of(4, HP_COMPUTE_SHAPE));
  hp_coverage *c = NULL;
  hp_diag d = { 0 };
  CHECK_INT(hp_coverage_compute(p, HP_COV_SPACE, NULL, &c, &d), HP_OK);
  CHECK(c->total.cells > 0);
  CHECK_INT(c->total.shape, c->total.cells);
  CHECK_INT(c->total.measured + c->total.derived + c->total.estimated, 0);
  CHECK(!strcmp(hp_cell_source_name(HP_CELL_SHAPE), "shape model"));
  CHECK(!hp_layer_time_profiled(p, 1, 0, 1));
  hp_coverage_destroy(&c);
  hp_problem_destroy(&p);

  p = bind(tiny_gpt(""), hand_cluster,
           "{ \"layer_times\": ["
           "{ \"kind\": \"block\", \"type\": \"g\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.01 },"
           "{ \"kind\": \"block\", \"type\": \"g\", \"tp\": 1, \"mbs\": 4, \"seconds\": 0.04 } ] }",
           job_of(4, HP_COMPUTE_SHAPE));
  CHECK(hp_layer_time_profiled(p, 1, 0, 1));
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 1, 1e9, 0), 0.01, REL);
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 2, 1e9, 0), 0.02, REL);   /* interpolated */
  /* tp 2 is not measured: the shape model's, all-reduce included */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 2, 1, 1e9, 0), hp_shape_layer_time(p, 1, 0, 2, 1) + 5.24288e-4,
             REL);
  CHECK_INT(hp_coverage_compute(p, HP_COV_SPACE, NULL, &c, &d), HP_OK);
  /* mbs 1, 2, 4 at tp 1 and 2 (dp 1 or 2 on 2 GPUs): block at tp 1 measured at 1 and 4,
   * derived at 2; every other cell the shape model's */
  CHECK_INT(c->total.measured, 2);
  CHECK_INT(c->total.derived, 1);
  CHECK_INT(c->total.estimated, 0);
  CHECK_INT(c->total.shape, c->total.cells - 3);
  hp_coverage_destroy(&c);
  hp_problem_destroy(&p);
}

/* Never below what the FLOPs take at the precision's peak (cost-model.md 7.4), over
 * shapes, tp and mbs, with generous constants (efficiencies 1). */
TEST(shape_time_never_below_flops_at_peak)
{
  static const char cl[] =
    "{ \"name\": \"fast\", \"device_types\": { \"g\": { \"mem_gib\": 80, \"tflops\": 312, "
    "  \"tflops_fp8\": 624, \"hbm_gbs\": 2039, \"shape\": { \"gemm_eff\": 1, \"align_eff\": 1, "
    "  \"attn_eff\": 1, \"attn_eff64\": 1, \"mem_eff\": 1, \"launch_us\": 0 } } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 8, \"intra_gbps\": 2400 } ] }";
  static const char *const tf[] = {
    "\"family\": \"gpt\", \"layers\": 2, \"hidden\": 14400, \"heads\": 96, \"seq\": 2048, "
    "\"vocab\": 250880, \"attention\": \"eager\"",
    "\"family\": \"llama\", \"layers\": 2, \"hidden\": 4096, \"heads\": 32, \"kv_heads\": 8, "
    "\"seq\": 4096, \"vocab\": 32000",
    "\"family\": \"llama\", \"layers\": 2, \"hidden\": 4096, \"heads\": 32, \"seq\": 512, "
    "\"vocab\": 32000, \"gemm_precision\": \"fp8\"",
  };
  int checked = 0;
  for (int i = 0; i < 3; i++) {
    char model[512];
    snprintf(model, sizeof model, "{ \"name\": \"m\", \"transformer\": { %s } }", tf[i]);
    hp_problem *p = bind(model, cl, NULL, job_of(64, HP_COMPUTE_SHAPE));
    double peak = hp_shape_peak(p, 0);
    CHECK_NEAR(peak, i == 2 ? 624e12 : 312e12, REL);
    for (int l = 0; l < p->model->n_layers; l++)
      for (int tp = 1; tp <= 8; tp *= 2)
        for (int mbs = 1; mbs <= 64; mbs *= 4) {
          const hp_layer *ly = &p->model->layers[l];
          double t = hp_shape_layer_time(p, l, 0, tp, mbs);
          double least = ly->flops * mbs / ((ly->splittable ? tp : 1) * peak);
          CHECK(t > 0);
          CHECK(t >= least * (1 - 1e-12));
          checked++;
        }
    hp_problem_destroy(&p);
  }
  CHECK_INT(checked, 3 * 5 * 4 * 4);
}

TEST(shape_inputs_refused_with_the_fix)
{
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_problem *p = NULL;
  hp_diag d = { 0 };
  static const char no_fp8[] =
    "{ \"name\": \"c\", \"device_types\": { \"A100\": { \"mem_gib\": 80, \"tflops\": 312 } },"
    "  \"nodes\": [ { \"name\": \"n\", \"type\": \"A100\", \"gpus\": 1 } ] }";
  CHECK_INT(hp_model_parse(tiny_gpt(", \"gemm_precision\": \"fp8\""), "m.json", &m, &d), HP_OK);
  CHECK_INT(hp_cluster_parse(no_fp8, "c.json", &c, &d), HP_OK);
  CHECK_INT(hp_problem_create(&p, m, c, NULL, job_of(4, HP_COMPUTE_SHAPE), &d), HP_INVAL);
  CHECK_CONTAINS(d.msg, "device type 'A100'");
  CHECK_CONTAINS(d.msg, "tflops_fp8");
  CHECK_CONTAINS(fx_model_error(tiny_gpt(", \"gemm_precision\": \"fp4\"")),
                 "transformer.gemm_precision: expected \"bf16\" or \"fp8\"");
  CHECK_CONTAINS(fx_cluster_error(
    "{ \"device_types\": { \"g\": { \"mem_gib\": 8, \"tflops\": 1, \"hbm_gbs\": 100, "
    "\"shape\": { \"gemm_eff\": 1.5 } } }, \"nodes\": [ { \"name\": \"n\", \"type\": \"g\", "
    "\"gpus\": 1 } ] }"), "shape.gemm_eff: 1.5 is outside [0.05, 1]");
  CHECK_CONTAINS(fx_cluster_error(
    "{ \"device_types\": { \"g\": { \"mem_gib\": 8, \"tflops\": 1, \"shape\": {} } }, "
    "\"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 1 } ] }"), "add \"hbm_gbs\"");
  /* an fp8 peak below the 16-bit one (sparse/dense or columns mixed up) would slow an fp8
   * model and lower its MFU's peak without a word */
  CHECK_CONTAINS(fx_cluster_error(
    "{ \"device_types\": { \"g\": { \"mem_gib\": 8, \"tflops\": 989, \"tflops_fp8\": 500 } }, "
    "\"nodes\": [ { \"name\": \"n\", \"type\": \"g\", \"gpus\": 1 } ] }"),
    "device_types.g.tflops_fp8: 500 is below tflops 989");
}

TEST(shape_params_table_by_name)
{
  int n;
  const hp_shape_param *q = hp_shape_params(&n);
  hp_shape s;
  CHECK_INT(n, 10);
  hp_shape_defaults(&s);
  CHECK(s.given);
  for (int i = 0; i < n; i++) {
    CHECK(q[i].lo <= q[i].def && q[i].def <= q[i].hi);
    CHECK(q[i].source && q[i].source[0]);
    CHECK(hp_shape_param_find(q[i].name) == &q[i]);
    CHECK_NEAR(hp_shape_get(&s, &q[i]), q[i].def, REL);
  }
  hp_shape_set(&s, hp_shape_param_find("gemm_eff"), 0.7);
  CHECK_NEAR(s.gemm_eff, 0.7, REL);
  CHECK(hp_shape_param_find("nope") == NULL);
  CHECK_INT(hp_compute_model_parse("flops"), HP_COMPUTE_FLOPS);
  CHECK_INT(hp_compute_model_parse("shape"), HP_COMPUTE_SHAPE);
  CHECK_INT(hp_compute_model_parse("Shape"), -1);
}
