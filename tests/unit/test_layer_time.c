/* test_layer_time.c -- profiled layer times: interpolation and extrapolation in the
 * micro-batch size, clamping (at zero, then at the peak), duplicates, the single-point
 * rules (cost-model.md 1, 7.4, 7.10) and the analytic fallback. */
#include "harness.h"
#include "fixtures.h"

#define REL 1e-12

/* The tiny cluster with peaks 1000 times higher at a thousandth of the efficiency: the
 * same analytic times (fast 5e13, slow 2e13 FLOP/s achieved), and room under the peaks
 * for the hand-made times below (a measured time faster than the peak is refused). */
static const char cluster[] =
  "{ \"name\": \"tiny-2x2\", \"device_types\": {"
  "    \"fast\": { \"mem_gib\": 1, \"reserved_gib\": 0.25, \"tflops\": 1e5, \"efficiency\": 5e-4 },"
  "    \"slow\": { \"mem_gib\": 1, \"tflops\": 4e4, \"efficiency\": 5e-4 } },"
  "  \"nodes\": ["
  "    { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
  "    { \"name\": \"b\", \"type\": \"slow\", \"gpus\": 2, \"intra_gbps\": 400, \"intra_lat_us\": 4 } ],"
  "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";

/* Layer kinds of the tiny model: "embed" (l = 0), "block" (l = 1, 2; C = 2e6), "head". */
static hp_problem *with_profile(const char *times)
{
  char prof[2048];
  snprintf(prof, sizeof prof, "{ \"layer_times\": [ %s ] }", times);
  return fx_problem(fx_tiny_model, cluster, prof, 8, HP_1F1B);
}

TEST(layer_time_interpolates_between_and_extrapolates_outside_measured_mbs)
{
  hp_problem *p = with_profile(
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.010 },"
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 4, \"seconds\": 0.025 },"
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 8, \"seconds\": 0.045 }");
  /* between 1 and 4: 0.010 + (0.015 / 3) * (2 - 1) */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 2, 0, 0), 0.015, REL);
  CHECK_NEAR(hp_layer_time(p, 2, 0, 1, 4, 0, 0), 0.025, REL);
  /* between 4 and 8: 0.025 + 0.005 * (6 - 4) */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 6, 0, 0), 0.035, REL);
  /* beyond 8, from the two largest: 0.045 + 0.005 * 8 */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 16, 0, 0), 0.085, REL);
  /* the other type is not measured: analytic 4e12 * 2 / 2e13 */
  CHECK(!hp_layer_time_profiled(p, 1, 1, 1));
  CHECK_NEAR(hp_layer_time(p, 1, 1, 1, 2, 0, 0), 0.4, REL);
  hp_problem_destroy(&p);
}

TEST(layer_time_extrapolation_is_clamped_at_zero)
{
  hp_problem *p = with_profile(
    "{ \"kind\": \"head\", \"type\": \"slow\", \"tp\": 1, \"mbs\": 2, \"seconds\": 0.010 },"
    "{ \"kind\": \"head\", \"type\": \"slow\", \"tp\": 1, \"mbs\": 3, \"seconds\": 0.030 }");
  /* 0.010 - 0.020 * (2 - 1) < 0: zero (cost-model.md 7.4), though head's 2e12 FLOP take
   * 5e-5 s at the slow type's 4e16 FLOP/s: the spec clamps at zero only */
  CHECK_NEAR(hp_layer_time(p, 3, 1, 1, 1, 0, 0), 0, REL);
  /* a profile of other shapes taken knowingly is raised to the peak's instead */
  p->job.accept_profile_mismatch = 1;
  CHECK_NEAR(hp_layer_time(p, 3, 1, 1, 1, 0, 0), 2e12 / 4e16, REL);
  hp_problem_destroy(&p);
}

TEST(layer_time_of_duplicates_the_last_wins)
{
  hp_problem *p = with_profile(
    "{ \"kind\": \"embed\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 2, \"seconds\": 0.5 },"
    "{ \"kind\": \"embed\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 2, \"seconds\": 0.2 }");
  CHECK_NEAR(hp_layer_time(p, 0, 0, 1, 2, 0, 0), 0.2, REL);
  /* single point, tp 1: proportional, 0.2 * 5 / 2 */
  CHECK_NEAR(hp_layer_time(p, 0, 0, 1, 5, 0, 0), 0.5, REL);
  hp_problem_destroy(&p);
}

TEST(layer_time_single_point_tp_splits_into_fixed_and_per_sample_parts)
{
  hp_problem *p = with_profile(
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.04 },"
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 2, \"mbs\": 1, \"seconds\": 0.03 },"
    "{ \"kind\": \"head\", \"type\": \"fast\", \"tp\": 2, \"mbs\": 2, \"seconds\": 0.08 }");
  /* w = 0.04 / (1 * 2) + 2 * (1/2) * 2e6 / 1e11 = 0.02002; e = 0.03 - 0.02002 */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 2, 4, 1e11, 2e-6), 0.00998 + 4 * 0.02002, REL);
  /* at m0 itself the measured time stands */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 2, 1, 1e11, 2e-6), 0.03, REL);
  /* head has no tp-1 point at m0 = 2: proportional, 0.08 * 3 / 2 */
  CHECK_NEAR(hp_layer_time(p, 3, 0, 2, 3, 1e11, 0), 0.12, REL);
  hp_problem_destroy(&p);
}

TEST(layer_time_single_point_fixed_part_is_never_negative)
{
  hp_problem *p = with_profile(
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 2, \"seconds\": 0.08 },"
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 2, \"mbs\": 2, \"seconds\": 0.01 }");
  /* w = 0.08 / (2 * 2) + 2e6 / 1e10 = 0.0202; e = max(0, 0.01 - 0.0404) = 0 */
  CHECK_NEAR(hp_layer_time(p, 1, 0, 2, 3, 1e10, 0), 3 * 0.0202, REL);
  hp_problem_destroy(&p);
}

TEST(layer_time_profiled_adds_no_tp_term_and_recompute_scales_it)
{
  hp_problem *p = with_profile(
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 2, \"mbs\": 1, \"seconds\": 0.05 },"
    "{ \"kind\": \"block\", \"type\": \"fast\", \"tp\": 2, \"mbs\": 2, \"seconds\": 0.09 }");
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 2, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                           "{ \"layers\": [0, 2], \"recompute\": true, \"devices\": [[0, 1]] },"
                           "{ \"layers\": [3, 3], \"devices\": [[2, 3]] } ] }");
  hp_eval e = {0};
  hp_diag d = {0};
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* embed analytic 1e12 / 1e14 (C = 0); blocks profiled 0.05 each, no TP term; x 4/3 */
  CHECK_NEAR(e.compute[0], (0.01 + 0.05 + 0.05) * 4.0 / 3.0, REL);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(layer_time_ignores_profile_types_the_cluster_lacks)
{
  /* (a profile with no entry for the cluster's types at all is an error: test_coverage.c) */
  hp_problem *p = with_profile(
    "{ \"kind\": \"block\", \"type\": \"H100\", \"tp\": 1, \"mbs\": 1, \"seconds\": 1 },"
    "{ \"kind\": \"head\", \"type\": \"slow\", \"tp\": 1, \"mbs\": 1, \"seconds\": 1 }");
  CHECK(!hp_layer_time_profiled(p, 1, 0, 1));
  CHECK_NEAR(hp_layer_time(p, 1, 0, 1, 1, 0, 0), 4e12 / 5e13, REL);
  CHECK(hp_layer_time_profiled(p, 3, 1, 1));
  hp_problem_destroy(&p);
}
