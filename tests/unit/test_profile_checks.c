/* test_profile_checks.c -- profiles that cannot lie (issue 23): one measured for other
 * layer shapes than the model's is refused with the difference named, or used with a
 * warning when the job accepts it; a measured layer time below what its FLOPs take at the
 * device's peak is refused; no derived time goes below that peak and no MFU above 1. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"

#define H100X32                                                                        \
  "{ \"name\": \"h100-4x8\", \"device_types\": { \"H100\": { \"mem_gib\": 79.1787,"     \
  "  \"reserved_gib\": 0.6, \"tflops\": 989, \"efficiency\": 0.4739 } }, \"nodes\": ["  \
  "  { \"name\": \"n0\", \"type\": \"H100\", \"gpus\": 8, \"intra_gbps\": 3600 },"      \
  "  { \"name\": \"n1\", \"type\": \"H100\", \"gpus\": 8, \"intra_gbps\": 3600 },"      \
  "  { \"name\": \"n2\", \"type\": \"H100\", \"gpus\": 8, \"intra_gbps\": 3600 },"      \
  "  { \"name\": \"n3\", \"type\": \"H100\", \"gpus\": 8, \"intra_gbps\": 3600 } ],"    \
  "  \"inter_gbps\": 400 }"

static char warned[1024];
static int n_warned;
static void keep_warning(void *ctx, const char *msg)
{
  (void)ctx;
  n_warned++;
  snprintf(warned, sizeof warned, "%s", msg);
}

/* Binds files and an inline cluster; returns the error (HP_OK and *out on success). */
static hp_err bind(const char *model, const char *cluster, const char *profile, hp_job job,
                   hp_problem **out, hp_diag *d)
{
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *pr = NULL;
  hp_err err;
  *out = NULL;
  d->warn = keep_warning;
  n_warned = 0;
  warned[0] = '\0';
  if ((err = hp_model_load(model, &m, d))) return err;
  if ((err = hp_cluster_parse(cluster, "c.json", &c, d))) { hp_model_destroy(&m); return err; }
  if (profile && (err = hp_profile_load(profile, &pr, d))) {
    hp_model_destroy(&m);
    hp_cluster_destroy(&c);
    return err;
  }
  return hp_problem_create(out, m, c, pr, job, d);
}

/* The evaluator's MFU recomputed from its iteration time, before any clamp: at most 1
 * (beyond rounding) for every plan, or some time claims more than the hardware. */
static double raw_mfu(const hp_problem *p, const hp_eval *e)
{
  double peaks = 0;
  for (int dv = 0; dv < p->cluster->n_devices; dv++)
    peaks += p->cluster->types[hp_device_type(p, dv)].peak;
  return hp_model_total_flops(p->model) * (double)p->job.gbs / e->iteration_time / peaks;
}

TEST(a_profile_of_llama2_7b_is_refused_for_llama2_70b_naming_the_difference)
{
  hp_problem *p = NULL;
  hp_diag d = {0};
  hp_job job = { .gbs = 64, .schedule = HP_1F1B };
  CHECK(bind("models/llama2-70b.json", H100X32, "models/llama2-7b.h100.profile.json", job,
             &p, &d) == HP_INVAL);
  CHECK(p == NULL);
  CHECK_CONTAINS(d.msg, "profile 'models/llama2-7b.h100.profile.json' (measured for model "
                 "'llama2-7b') does not fit model 'llama2-70b': kind 'block' was timed at "
                 "2.024e+08 parameters and 5.798e+12 FLOP per sample, the model's layer "
                 "'block.0' has 8.557e+08 and 2.295e+13 (hidden 4096 vs 8192, heads 32 vs 64, "
                 "kv_heads 32 vs 8, ffn 11008 vs 28672); so do 'embed', 'final_norm', 'head'");
  CHECK_CONTAINS(d.msg, "(--accept-profile-mismatch; job key \"accept_profile_mismatch\": true)");
  CHECK_INT(n_warned, 0);
}

TEST(a_profile_binds_to_the_model_it_was_measured_for_without_a_word)
{
  hp_problem *p = NULL;
  hp_diag d = {0};
  hp_job job = { .gbs = 64, .schedule = HP_1F1B };
  CHECK(bind("models/llama2-7b.json", H100X32, "models/llama2-7b.h100.profile.json", job, &p,
             &d) == HP_OK);
  CHECK_INT(p->profile->n_kinds, 4);
  CHECK_INT(n_warned, 0);
  CHECK(hp_layer_time_profiled(p, 1, 0, 1));
  hp_problem_destroy(&p);
}

TEST(the_job_key_accepts_a_profile_of_another_shape_with_a_warning_and_mfu_stays_below_one)
{
  hp_problem *p = NULL, *copy = NULL;
  hp_diag d = {0};
  hp_job job = { .gbs = 0, .schedule = HP_1F1B };
  hp_limits lim;
  hp_result r;
  CHECK(hp_job_parse("{ \"gbs\": 64, \"accept_profile_mismatch\": true }", "job.json", &job,
                     &d) == HP_OK);
  CHECK_INT(job.accept_profile_mismatch, 1);
  CHECK_INT(job.gbs, 64);
  CHECK(bind("models/llama2-70b.json", H100X32, "models/llama2-7b.h100.profile.json", job,
             &p, &d) == HP_OK);
  CHECK_INT(n_warned, 1);
  CHECK_CONTAINS(warned, "is used for model 'llama2-70b' though its shapes differ "
                 "(accept_profile_mismatch): kind 'block' was timed at 2.024e+08 parameters");
  /* the 7B block's 12.3 ms would be faster than a 70B block can run: the peak holds */
  CHECK(hp_layer_time_profiled(p, 1, 0, 1));
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 1, 1e11, 0), p->model->layers[1].flops / 989e12, 1e-12);
  /* a copy (what explain and export re-plan on) keeps the acceptance */
  CHECK(hp_problem_copy_with(p, NULL, p->job, &copy, &d) == HP_OK);
  hp_problem_destroy(&copy);
  hp_limits_init(&lim);
  lim.top = 20;
  CHECK(hp_solver_run(hp_solver_find("dp"), p, NULL, &lim, &r, &d) == HP_OK);
  CHECK(r.n_top > 0);
  for (int i = 0; i < r.n_top; i++) {
    hp_eval e = {0};
    CHECK(hp_evaluate(p, r.top[i].plan, &e, &d) == HP_OK);
    CHECK(raw_mfu(p, &e) <= 1 + 1e-9);
    CHECK(e.mfu <= 1);
    hp_eval_release(&e);
  }
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

TEST(a_job_file_without_the_key_leaves_the_acceptance_as_it_was)
{
  hp_diag d = {0};
  hp_job job = { .gbs = 8, .schedule = HP_1F1B, .accept_profile_mismatch = 1 };
  CHECK(hp_job_parse("{ \"gbs\": 16 }", "job.json", &job, &d) == HP_OK);
  CHECK_INT(job.accept_profile_mismatch, 1);
  CHECK(hp_job_parse("{ \"accept_profile_mismatch\": false }", "job.json", &job, &d) == HP_OK);
  CHECK_INT(job.accept_profile_mismatch, 0);
  CHECK(hp_job_parse("{ \"accept_profile_mismatch\": 1 }", "job.json", &job, &d) == HP_PARSE);
  CHECK_CONTAINS(d.msg, "job.json: accept_profile_mismatch: expected true or false, got 1");
}

/* The tiny model's block: 4e12 FLOP per sample; fast: 100 TFLOPS, so at least 0.04 s a
 * sample at tp 1 and 0.02 s at tp 2 (splittable). */
/* The refusal of binding the model and profile texts with the tiny cluster at gbs 8
 * ("" if they bind; "fixture: ..." if a text does not parse). */
static const char *bind_error(const char *model, const char *profile)
{
  static char msg[600];
  hp_diag d = {0};
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *pr = NULL;
  hp_problem *p = NULL;
  hp_job job = { .gbs = 8, .schedule = HP_1F1B };
  msg[0] = '\0';
  if (hp_model_parse(model, "m.json", &m, &d) ||
      hp_cluster_parse(fx_tiny_cluster, "c.json", &c, &d) ||
      hp_profile_parse(profile, "p.json", &pr, &d)) {
    snprintf(msg, sizeof msg, "fixture: %s", d.msg);
    hp_model_destroy(&m);
    hp_cluster_destroy(&c);
    return msg;
  }
  if (hp_problem_create(&p, m, c, pr, job, &d)) snprintf(msg, sizeof msg, "%s", d.msg);
  hp_problem_destroy(&p);
  return msg;
}

/* The same for the tiny model and a profile of these layer_times entries. */
static const char *profile_error(const char *layer_times)
{
  char text[1024];
  snprintf(text, sizeof text, "{ \"layer_times\": [ %s ] }", layer_times);
  return bind_error(fx_tiny_model, text);
}

TEST(a_measured_time_faster_than_the_peak_is_refused_naming_the_entry)
{
  CHECK_CONTAINS(profile_error(
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.2 },"
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 2, \"seconds\": 0.07 }"),
    "profile 'p.json': layer_times[1]: kind 'block' on 'fast' at tp 1, mbs 2 takes 0.07 s, "
    "less than the 0.08 s its 8e+12 FLOP per GPU take at the type's peak of 100 TFLOPS "
    "(cluster 'tiny-2x2')");
  /* tp 2 halves a splittable layer's FLOPs per GPU; TP communication only adds */
  CHECK_CONTAINS(profile_error(
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 2, \"mbs\": 1, \"seconds\": 0.019 }"),
    "layer_times[0]: kind 'block' on 'fast' at tp 2, mbs 1 takes 0.019 s, less than the "
    "0.02 s");
  CHECK(!strcmp(profile_error(
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 2, \"mbs\": 1, \"seconds\": 0.02 },"
    "{ \"kind\": \"block\", \"type\": \"slow\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.1 }"), ""));
  /* on the slow type (40 TFLOPS) the same 0.05 s is too fast */
  CHECK_CONTAINS(profile_error(
    "{ \"kind\": \"block\", \"type\": \"slow\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.05 }"),
    "less than the 0.1 s its 4e+12 FLOP per GPU take at the type's peak of 40 TFLOPS");
  /* entries the problem does not use (a kind the model lacks, a type the cluster lacks)
   * are not checked against it */
  CHECK(!strcmp(profile_error(
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.2 },"
    "{ \"kind\": \"conv\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 1e-9 }"), ""));
}

TEST(a_non_splittable_layer_is_held_to_its_whole_flops_at_any_tp)
{
  static const char model[] =
    "{ \"layers\": [ { \"name\": \"norm\", \"params\": 1, \"act_bytes\": 1, \"out_bytes\": 1,"
    "  \"flops\": 1e12, \"splittable\": false } ] }";
  static const char profile[] =
    "{ \"layer_times\": [ { \"kind\": \"norm\", \"type\": \"fast\", \"tp\": 2, \"mbs\": 1,"
    "  \"seconds\": 0.006 } ] }";
  CHECK_CONTAINS(bind_error(model, profile), "takes 0.006 s, less than the 0.01 s its 1e+12 FLOP per GPU take");
}

/* Pairs of points whose slope is below the peak's (block: 0.035 s a sample against
 * 0.04 s; head 0.015 against 0.02) or whose line crosses zero (embed): extrapolated they
 * claim more than the hardware. The evaluator keeps the spec's extrapolation (clamped at
 * zero only, cost-model.md 7.4) and never reports an MFU above 1; under
 * accept_profile_mismatch (a profile of other shapes, not checked point by point) the
 * layer time is raised to the peak's, and no plan's MFU passes 1 even before the cap. */
TEST(extrapolated_times_follow_the_spec_and_mfu_never_reads_above_one)
{
  static const char cluster[] =
    "{ \"name\": \"eff1\", \"device_types\": { \"fast\": { \"mem_gib\": 64, \"tflops\": 100,"
    "  \"efficiency\": 1 } }, \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2,"
    "  \"intra_gbps\": 800 }, { \"name\": \"b\", \"type\": \"fast\", \"gpus\": 2,"
    "  \"intra_gbps\": 800 } ], \"inter_gbps\": 80 }";
  static const char profile[] =
    "{ \"layer_times\": ["
    "  { \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.05 },"
    "  { \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 2, \"seconds\": 0.085 },"
    "  { \"kind\": \"embed\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 4, \"seconds\": 0.04 },"
    "  { \"kind\": \"embed\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 8, \"seconds\": 0.1 },"
    "  { \"kind\": \"head\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.03 },"
    "  { \"kind\": \"head\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 2, \"seconds\": 0.045 } ] }";
  hp_problem *p = fx_problem(fx_tiny_model, cluster, profile, 64, HP_1F1B);
  hp_diag d = {0};
  int plans = 0;
  /* the spec's figures: block 0.05 + 2 x 0.035 = 0.12 at mbs 3, 0.05 + 7 x 0.035 = 0.295 at
   * mbs 8; embed 0.04 - 3 x 0.015 < 0 at mbs 1, clamped at 0; head 0.045 + 62 x 0.015 =
   * 0.975 at mbs 64 */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 3, 1e11, 0), 0.12, 1e-12);
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 8, 1e11, 0), 0.295, 1e-12);
  CHECK_NEAR(hp_layer_time(p, 0, 0, 1, 1, 1e11, 0), 0, 1e-12);
  CHECK_NEAR(hp_layer_time(p, 3, 0, 1, 64, 1e11, 0), 0.975, 1e-12);
  /* under accept_profile_mismatch: raised to the peak's 0.32, 0.01 and 1.28 */
  p->job.accept_profile_mismatch = 1;
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 3, 1e11, 0), 0.12, 1e-12);
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 8, 1e11, 0), 0.32, 1e-12);
  CHECK_NEAR(hp_layer_time(p, 0, 0, 1, 1, 1e11, 0), 0.01, 1e-12);
  /* interpolated between checked points: at least the peak's already */
  CHECK_NEAR(hp_layer_time(p, 0, 0, 1, 6, 1e11, 0), 0.07, 1e-12);
  CHECK_NEAR(hp_layer_time(p, 3, 0, 1, 64, 1e11, 0), 1.28, 1e-12);
  /* every shape (TP groups inside the 2-GPU nodes), micro-batch size and recompute, in
   * Megatron order with even stages; with the spec's figures, then raised */
  for (int acc = 0; acc < 2; acc++)
  for (int pp = 1; pp <= 4; pp *= 2)
    for (int tp = 1; tp <= 2 && pp * tp <= 4; tp *= 2)
      for (int mbs = 1, dp = 4 / (pp * tp); mbs <= 64 / dp; mbs *= 2)
        for (int rec = 0; rec < 2; rec++) {
          hp_plan *pl = NULL;
          hp_eval e = {0};
          p->job.accept_profile_mismatch = acc;
          CHECK(hp_plan_create(&pl, pp, tp, dp, 4, &d) == HP_OK);
          pl->mbs = mbs;
          pl->gas = 64 / (dp * mbs);
          for (int st = 0; st <= pp; st++) pl->first[st] = st * 4 / pp;
          for (int i = 0; i < 4; i++) pl->dev[i] = i;
          for (int st = 0; st < pp; st++) pl->recompute[st] = (unsigned char)rec;
          CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
          plans++;
          if (p->job.accept_profile_mismatch && !(raw_mfu(p, &e) <= 1 + 1e-9))
            harness_fail(__FILE__, __LINE__, "pp %d tp %d dp %d mbs %d: MFU %.17g above 1", pp,
                         tp, dp, mbs, raw_mfu(p, &e));
          if (!(e.mfu <= 1)) harness_fail(__FILE__, __LINE__, "reported MFU %g", e.mfu);
          hp_eval_release(&e);
          hp_plan_destroy(&pl);
        }
  CHECK(plans > 60);
  hp_problem_destroy(&p);
}

/* A shape record compares parameters and FLOPs within 1e-6, and the element size where
 * both know it; a profile without one is not checked (it cannot be). */
TEST(shape_records_compare_within_rounding_and_only_what_both_sides_know)
{
#define SHAPED                                                                           \
  "{ \"kinds\": { \"block\": { \"params\": %s, \"flops\": %s } }, \"layer_times\": ["  \
  "  { \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.2 } ] }"
  char text[1024];
  snprintf(text, sizeof text, SHAPED, "4.000001e6", "4e12");
  CHECK(!strcmp(fx_profile_error(text), ""));
  {
    hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, text, 8, HP_1F1B);
    hp_problem_destroy(&p);
  }
  snprintf(text, sizeof text, SHAPED, "4.00001e6", "4e12");
  CHECK_CONTAINS(bind_error(fx_tiny_model, text), "profile 'p.json' does not fit model "
                 "'tiny-4': kind 'block' was timed at 4e+06 parameters and 4e+12 FLOP per "
                 "sample, the model's layer 'block.0' has 4e+06 and 4e+12");
}

TEST(an_fp32_model_is_refused_a_profile_timed_in_16_bit)
{
  static const char model[] =
    "{ \"name\": \"g32\", \"transformer\": { \"family\": \"gpt\", \"layers\": 2, \"hidden\": 64,"
    "  \"heads\": 4, \"seq\": 32, \"vocab\": 100, \"dtype\": \"fp32\" } }";
  char profile[1024];
  hp_diag d = {0};
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *pr = NULL;
  hp_problem *p = NULL;
  hp_job job = { .gbs = 8, .schedule = HP_1F1B };
  CHECK(hp_model_parse(model, "m.json", &m, &d) == HP_OK);
  snprintf(profile, sizeof profile,
           "{ \"model\": \"g16\", \"kinds\": { \"block\": { \"params\": %.17g, \"flops\": %.17g,"
           "  \"hidden\": 64, \"dtype\": \"bf16\" } }, \"layer_times\": [ { \"kind\": \"block\","
           "  \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.01 } ] }",
           m->layers[1].params, m->layers[1].flops);
  CHECK(hp_cluster_parse(fx_tiny_cluster, "c.json", &c, &d) == HP_OK);
  CHECK(hp_profile_parse(profile, "p.json", &pr, &d) == HP_OK);
  CHECK(hp_problem_create(&p, m, c, pr, job, &d) == HP_INVAL);
  CHECK_CONTAINS(d.msg, "profile 'p.json' (measured for model 'g16') does not fit model "
                 "'g32': kind 'block' was timed at");
  CHECK_CONTAINS(d.msg, "(element bytes 2 vs 4)");
}

TEST(shape_records_are_checked_for_form)
{
  CHECK_CONTAINS(fx_profile_error("{ \"kinds\": { \"block\": { \"params\": -1 } } }"),
                 "p.json: kinds.block.params: expected a non-negative number, got -1");
  CHECK_CONTAINS(fx_profile_error("{ \"kinds\": { \"block\": { \"dtype\": \"int8\" } } }"),
                 "kinds.block.dtype: expected \"bf16\", \"fp16\" or \"fp32\", got \"int8\"");
  CHECK_CONTAINS(fx_profile_error("{ \"kinds\": { \"block\": { \"seq\": 0 } } }"),
                 "kinds.block.seq: expected an integer in 1..100000000, got 0");
  CHECK_CONTAINS(fx_profile_error("{ \"kinds\": [] }"), "kinds: expected an object");
  CHECK_CONTAINS(fx_profile_error("{ \"gpus\": { \"H100\": { \"name\": 5 } } }"),
                 "gpus.H100.name: expected a non-empty string, got 5");
  CHECK_CONTAINS(fx_profile_error("{ \"model\": \"\" }"), "model: expected a non-empty string");
  CHECK(!strcmp(fx_profile_error("{ \"model\": \"m\", \"kinds\": {}, \"gpus\": { \"H100\": {"
                                 " \"name\": \"NVIDIA H100 80GB HBM3\", \"dtype\": \"bf16\" } } }"),
                ""));
}

TEST(every_bundled_profile_loads_with_its_model_and_passes_the_checks)
{
  static const char *const sets[][3] = {
    { "models/gpt2-amp.json", "models/amp-hetero.json", "models/gpt2-amp.profile.json" },
    { "models/gpt2-amp.json", "models/amp-homo-4xg4dn.json", "models/gpt2-amp.profile.json" },
    { "models/gpt2-amp.json", "models/amp-4xp3.json", "models/gpt2-amp.profile.json" },
    { "models/transgan-amp.json", "models/amp-hetero.json", "models/transgan-amp.profile.json" },
    { "models/transgan-amp.json", "models/amp-4xp3.json", "models/transgan-amp.profile.json" },
    { "models/llama2-7b.json", "models/h100-1gpu.cluster.json",
      "models/llama2-7b.h100.profile.json" },
    { "examples/tiny/model.json", "examples/tiny/cluster.json", "examples/tiny/profile.json" },
  };
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
    hp_problem *p = fx_load(sets[i][0], sets[i][1], sets[i][2], 32);
    CHECK(p->profile->n_measures > 0);
    CHECK(p->profile->n_kinds > 0 || strstr(sets[i][2], "tiny"));
    hp_problem_destroy(&p);
  }
}
