/* test_pattern.c -- the pattern DP's bound against brute force: on random tiny
 * heterogeneous instances, for every configuration, the bound (exact and Lagrangian)
 * never exceeds the least time of any plan of that configuration found by enumerating
 * every placement, partition, recompute and sharding choice; and on AMP's set-up it
 * proves the optimum. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "random_instance.h"

/* The pattern bound of configuration c; exact: 1 exact count, 0 prices only. */
static double pattern_bound(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                            int exact, double *plan_time)
{
  hp_plan *pl = NULL;
  hp_patterns pt;
  hp_pat_opts o;
  hp_pat_result r;
  hp_diag d = {0};
  double b = NAN;
  int found = 0;
  *plan_time = INFINITY;
  if (hp__plan_for(p, c, &pl, &d) || hp_patterns_build(p, cl, pl, &pt, &d)) return NAN;
  hp__pat_opts_init(&o);
  o.exact = exact;
  if (hp__pattern_bound(p, &pt, &o, &r, &d) == HP_OK && r.done) {
    b = r.bound;
    if (r.found && hp__pattern_plan(p, &pt, &r, INFINITY, NULL, pl, &found, &d) == HP_OK && found) {
      hp_eval e = {0};
      if (hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible) *plan_time = e.iteration_time;
      hp_eval_release(&e);
    }
  }
  hp__pat_result_release(&r);
  hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  return b;
}

/* `space`: 0 the job narrowed to dp and zdp, one slice (ri_cert_scope); 1 the job's own
 * list (dp added where it lacks it: the certificate needs it), uniform sharding and
 * slices, every device used: the pattern DP's options cover every mode (pattern_shard.c). */
static void bound_vs_brute(unsigned long seed0, int count, int space)
{
  int configs = 0, tight = 0, instances = 0;
  for (unsigned long seed = seed0; seed < seed0 + (unsigned long)count; seed++) {
    char what[256];
    hp_problem *p = ri_problem(seed, what, sizeof what);
    if (space == 0) {
      ri_cert_scope(p);               /* the bound's space; the brute force's too */
    } else {
      p->job.idle_devices = 0;
      p->job.sharding = hp_job_modes(&p->job) | 1u << HP_SHARD_DP;
    }
    hp_classes cl;
    hp_config *cfg = NULL;
    hp_diag d = {0};
    int n = hp__configs(p, &cfg);
    CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
    for (int i = 0; i < n; i++) {
      double bf = ri_brute_config(p, &cfg[i]);
      for (int exact = 1; exact >= 0; exact--) {
        double pt_time, b = pattern_bound(p, &cl, &cfg[i], exact, &pt_time);
        if (!(b <= bf * (1 + 1e-9) + 1e-12) || (isinf(b) && !isinf(bf)) || isnan(b) ||
            !(pt_time >= b * (1 - 1e-9)))
          fprintf(stderr, "  %s\n  pp %d tp %d dp %d mbs %d (%s): bound %.9g brute %.9g decoded %.9g\n",
                  what, cfg[i].pp, cfg[i].tp, cfg[i].dp, cfg[i].mbs, exact ? "exact" : "prices",
                  b, bf, pt_time);
        CHECK(!isnan(b));
        CHECK(b <= bf * (1 + 1e-9) + 1e-12);          /* a bound */
        CHECK(!(isinf(b) && isfinite(bf)));            /* "nothing fits" only when true */
        CHECK(pt_time >= b * (1 - 1e-9));              /* its plan is a plan */
        if (exact) { configs++; tight += isfinite(bf) && b >= bf * (1 - 1e-9); }
      }
    }
    instances++;
    free(cfg);
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d instances, %d configurations, exact bound tight on %d\n", instances, configs, tight);
  CHECK(instances == count);
}

TEST(pattern_bound_never_exceeds_brute_force_on_70_random_instances)
{
  bound_vs_brute(1, harness_count(70), 0);
}

TEST(pattern_bound_over_every_mode_and_slices_never_exceeds_brute_force_on_150_instances)
{
  bound_vs_brute(5001, harness_count(150), 1);
}

/* The sharding options of one stage (pattern_shard.c), by hand and against every mode
 * assignment: f = (dp - 1) / dp = 1/2 at dp 2, bandwidth 1, latency 0. */
TEST(shard_options_by_hand)
{
  hp_shard_stage st = { 2, 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP, 0, 1.0, 0.0, 1.0, 1.5,
                        { 0, 0, 0, 0 }, 10, 20 };
  hp_shard_opt o[HP_SHARD_MAX_OPTS];
  int n;
  /* states per unit: W 1, G 1.5, optimizer 4: saves zero1 2, zero2 2.75, zdp 3.25 */
  st.save[HP_SHARD_ZERO1] = 2;
  st.save[HP_SHARD_ZERO2] = 2.75;
  st.save[HP_SHARD_ZDP] = 3.25;
  /* dp fits, G <= 2 W: dp alone, q = 2 f G = 1.5 (zdp's dt 1.75 saves no more) */
  n = hp__shard_options(&st, o, HP_SHARD_MAX_OPTS);
  CHECK_INT(n, 1);
  CHECK_NEAR(o[0].dt, 0, 1e-15);
  CHECK_NEAR(o[0].q, 1.5, 1e-15);
  /* zero1 too: q = f (G + W) = 1.25 at no pipeline cost beats dp */
  st.modes |= 1u << HP_SHARD_ZERO1;
  n = hp__shard_options(&st, o, HP_SHARD_MAX_OPTS);
  CHECK_INT(n, 1);
  CHECK_NEAR(o[0].q, 1.25, 1e-15);
  /* dp does not fit (mem0 22 > cap 20; zdp saves 3.25): the least zdp fraction 2 / 3.25
   * costs dt = (2/3.25) f (2 W + G) = (2/3.25) 1.75, q = (1 - 2/3.25) 1.5 */
  st.modes = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP;
  st.mem0 = 22;
  n = hp__shard_options(&st, o, HP_SHARD_MAX_OPTS);
  CHECK_INT(n, 1);
  CHECK_NEAR(o[0].dt, 2 / 3.25 * 1.75, 1e-12);
  CHECK_NEAR(o[0].q, (1 - 2 / 3.25) * 1.5, 1e-12);
  /* nothing fits: none */
  st.mem0 = 24;
  CHECK_INT(hp__shard_options(&st, o, HP_SHARD_MAX_OPTS), 0);
  /* dp = 1: one option, no cost, whatever the list */
  st.dp = 1;
  st.mem0 = 20;
  n = hp__shard_options(&st, o, HP_SHARD_MAX_OPTS);
  CHECK_INT(n, 1);
  CHECK(o[0].dt == 0 && o[0].q == 0);
}

/* Every assignment of fractions to the modes that fits has an option no worse than it:
 * dt' <= dt and dt' + q' <= dt + q (the DP's exchange), on random stages. */
TEST(shard_options_cover_every_assignment_that_fits)
{
  hp_rng r;
  int checked = 0;
  hp__rng_seed(&r, 77);
  for (int it = 0; it < 400; it++) {
    hp_shard_stage st;
    hp_shard_opt o[HP_SHARD_MAX_OPTS];
    double opt = 1 + 8 * hp__rng_unit(&r), W = 0.2 + 2 * hp__rng_unit(&r), G = 0.2 + 4 * hp__rng_unit(&r);
    st.dp = 2 + hp__rng_int(&r, 7);
    st.modes = 1u << HP_SHARD_DP | (unsigned)hp__rng_int(&r, 16);
    st.overlap = hp__rng_int(&r, 4) == 0;
    st.bdp = 0.5 + hp__rng_unit(&r);
    st.latdp = hp__rng_int(&r, 2) ? 0 : 0.01 * hp__rng_unit(&r);
    st.W = W;
    st.G = G;
    double f = (st.dp - 1.0) / st.dp, S[4] = { W + G + opt, W + G + opt / st.dp, W + (G + opt) / st.dp,
                                               (W + G + opt) / st.dp };
    for (int m = 0; m < 4; m++) st.save[m] = S[0] - S[m];
    st.cap = 10;
    st.mem0 = 10 + (S[0] - S[3]) * (hp__rng_unit(&r) * 1.2 - 0.3);
    int n = hp__shard_options(&st, o, HP_SHARD_MAX_OPTS);
    for (int a = 0; a < 300; a++) {          /* random fractions over the allowed modes */
      double x[4] = {0}, sum = 0, mem, dt, q, lat = (st.dp - 1) * st.latdp;
      for (int m = 0; m < 4; m++)
        if (st.modes >> m & 1u) sum += x[m] = hp__rng_int(&r, 3) ? hp__rng_unit(&r) : 0;
      if (!(sum > 0)) continue;
      for (int m = 0; m < 4; m++) x[m] /= sum;
      mem = st.mem0 - (x[1] * st.save[1] + x[2] * st.save[2] + x[3] * st.save[3]);
      if (mem > st.cap) continue;
      dt = f * (G * x[2] + (2 * W + G) * x[3]) / st.bdp + (x[2] + x[3] > 0 ? lat : 0);
      q = st.overlap ? 0 : f * (2 * G * x[0] + (G + W) * x[1] + W * x[2]) / st.bdp + 2 * lat;
      int ok = 0;
      for (int k = 0; k < n && !ok; k++)
        ok = o[k].dt <= dt * (1 + 1e-12) + 1e-15 && o[k].dt + o[k].q <= (dt + q) * (1 + 1e-12) + 1e-15;
      if (!ok) fprintf(stderr, "  it %d: dp %d modes %x: dt %g q %g uncovered (%d options)\n", it, st.dp, st.modes, dt, q, n);
      CHECK(ok);
      checked++;
    }
  }
  CHECK(checked > 10000);
}
