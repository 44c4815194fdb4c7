/* test_certificate_couples.c -- the couples of the pattern DP (pattern_dp.c: a class whose
 * every node holds exactly two TP groups, dp 2, every group used, three classes or more;
 * the pattern MIP's cp rows, mip_pattern.c) against brute force, on random instances of
 * tp 1: two nodes of 2 GPUs of type "a" beside two single GPUs of types "b" and "c" (6
 * devices), or three nodes of 2 GPUs of "a", the fastest, beside two single slow GPUs and a
 * light first layer (8 devices); sometimes slower links between the nodes of "a"; the
 * modes dp or dp and zdp. On every configuration with tp 1, dp 2 and every device used:
 *   - the DP's bound is never above the least time of the configuration's plans (brute
 *     force) and never below its bound without the couples;
 *   - the pattern MIP's optimum (CBC) lies between the DP's bound and that least time, and
 *     the plan its solution decodes to is never below either;
 * and on 8 devices the couples raise the bound on some. Tolerance: relative 1e-9, as
 * test_certificate_v3.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"
#include "bound_probe.h"
#include "random_instance.h"

#define CP_TOL 1e-9
/* Under AddressSanitizer the brute force and the DP run about 25 times slower */
#if defined(__SANITIZE_ADDRESS__)
#define CP_SEEDS 3
#else
#define CP_SEEDS 24
#endif

/* a <= b within the relative tolerance; INFINITY <= INFINITY. */
static int cp_at_most(double a, double b)
{
  return a <= b || a <= b + CP_TOL * fabs(b);
}

/* A uniform draw in [lo, hi) from the state *s (splitmix64). */
static double cp_draw(unsigned long long *s, double lo, double hi)
{
  unsigned long long z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

static double cp_log(unsigned long long *s, double lo, double hi)
{
  return exp(cp_draw(s, log(lo), log(hi)));
}

/* Instance `seed`: model and cluster JSON, its modes into *zdp, its devices into *devices,
 * a description into `what`. */
static void cp_instance(unsigned long seed, int eight, char *model, size_t n_model, char *cluster,
                        size_t n_cluster, int *zdp, int *devices, char *what, size_t n_what)
{
  /* node GPUs and types: type "a" in nodes of 2 (the couples' class). With 8 devices the
   * brute force takes 20 s a configuration: 6 here */
  static const struct { int n; int gpus[5]; char type[6]; } layouts[3] = {
    { 4, { 2, 2, 1, 1, 0 }, "aabc" }, { 4, { 1, 2, 2, 1, 0 }, "baac" }, { 5, { 2, 2, 2, 1, 1 }, "aaabc" } };
  unsigned long long s = seed * 7919 + 11;
  int lay = eight ? 2 : (int)cp_draw(&s, 0, 2), nl, at, g = 0;
  double params = cp_log(&s, 1e6, 1e8), out = cp_log(&s, 1e7, 3e8);
  double inter = cp_log(&s, 2, 40), slow = cp_log(&s, 0.5, 10);
  double ta = cp_draw(&s, 40, 150), tb = cp_draw(&s, 20, 150), tc = cp_draw(&s, 20, 150);
  double fl = cp_draw(&s, 1e12, 6e12), spread = layouts[lay].n == 5 ? 0.2 : 5;
  if (layouts[lay].n == 5) { tb = ta * cp_draw(&s, 0.2, 0.6); tc = ta * cp_draw(&s, 0.2, 0.6); }
  int link = cp_draw(&s, 0, 1) < 0.4;
  *zdp = cp_draw(&s, 0, 1) < 0.5;
  for (int q = 0; q < layouts[lay].n; q++) g += layouts[lay].gpus[q];
  *devices = g;
  nl = g / 2 + (g < 8 && cp_draw(&s, 0, 1) < 0.5);   /* pp = g / 2 layers, or one more */
  at = snprintf(model, n_model, "{ \"name\": \"couples\", \"input_bytes\": 1000, \"layers\": [");
  for (int l = 0; l < nl && at < (int)n_model; l++)
    at += snprintf(model + at, n_model - (size_t)at, "%s { \"name\": \"l%d\", \"params\": %.6g, "
                   "\"act_bytes\": 1e6, \"out_bytes\": %.6g, \"flops\": %.6g }", l ? "," : "", l,
                   params * cp_draw(&s, 0.5, 2), l + 1 < nl ? out * cp_draw(&s, 0.5, 2) : 4,
                   fl * (l == 0 && spread < 1 ? cp_draw(&s, 0.05, 0.3) : cp_draw(&s, 1, 1 + spread)));
  if (at < (int)n_model) snprintf(model + at, n_model - (size_t)at, " ] }");
  at = snprintf(cluster, n_cluster, "{ \"name\": \"couples-%lu\", \"device_types\": { "
                "\"a\": { \"mem_gib\": 80, \"tflops\": %.4g, \"efficiency\": 0.5, \"hbm_gbs\": 2000 }, "
                "\"b\": { \"mem_gib\": 80, \"tflops\": %.4g, \"efficiency\": 0.5 }, "
                "\"c\": { \"mem_gib\": 80, \"tflops\": %.4g, \"efficiency\": 0.5 } }, \"nodes\": [",
                seed, ta, tb, tc);
  for (int q = 0; q < layouts[lay].n && at < (int)n_cluster; q++)
    at += snprintf(cluster + at, n_cluster - (size_t)at, "%s { \"name\": \"n%d\", \"type\": \"%c\", "
                   "\"gpus\": %d, \"intra_gbps\": 1600, \"intra_lat_us\": 2 }", q ? "," : "", q,
                   layouts[lay].type[q], layouts[lay].gpus[q]);
  if (at < (int)n_cluster)
    at += snprintf(cluster + at, n_cluster - (size_t)at, " ], \"inter_gbps\": %.4g, \"inter_lat_us\": 5", inter);
  /* between the nodes of a: every pair of them alike, so that they stay one class (a link
   * between two of three would split them, node_class.c) */
  if (link && layouts[lay].n == 4 && at < (int)n_cluster)
    at += snprintf(cluster + at, n_cluster - (size_t)at, ", \"links\": [ { \"a\": \"n%d\", \"b\": \"n%d\", "
                   "\"gbps\": %.4g, \"lat_us\": 20 } ]", lay, lay + 1, slow);
  if (link && layouts[lay].n == 5 && at < (int)n_cluster)
    at += snprintf(cluster + at, n_cluster - (size_t)at, ", \"links\": [ { \"a\": \"n0\", \"b\": \"n1\", "
                   "\"gbps\": %.4g, \"lat_us\": 20 }, { \"a\": \"n0\", \"b\": \"n2\", \"gbps\": %.4g, "
                   "\"lat_us\": 20 }, { \"a\": \"n1\", \"b\": \"n2\", \"gbps\": %.4g, \"lat_us\": 20 } ]",
                   slow, slow, slow);
  if (at < (int)n_cluster) snprintf(cluster + at, n_cluster - (size_t)at, " }");
  snprintf(what, n_what, "seed %lu: nodes %s, %d layers, params %.3g, out %.3g bytes, inter %.3g "
           "Gbit/s%s, modes %s", seed, layouts[lay].type, nl, params, out, inter,
           link ? " (slower links between the nodes of a)" : "", *zdp ? "dp,zdp" : "dp");
}

/* One configuration's two bounds and, where `brute`, its brute-force optimum, checked as
 * the header says; returns 1 on a violation (printed). *raised: the couples raised the DP's
 * bound. */
static int cp_check(const hp_problem *p, const hp_classes *cl, const hp_config *c, int brute,
                    int mip, const char *what, int *raised, int *tight, int *tight0)
{
  hp_mip_backend be = NULL;
  double bf = brute ? ri_brute_config(p, c) : INFINITY;
  double b1 = bp_dp_bound(p, cl, c, -1, 0, INFINITY, NULL);
  double b0 = bp_dp_bound_no_couples(p, cl, c, NULL);
  double mv = 0, decoded = INFINITY;
#ifdef HP_HAVE_CBC
  be = hp__cbc_solve_mip;
#endif
  *raised = isfinite(b0) && b1 > b0 * (1 + CP_TOL);
  *tight = brute && isfinite(bf) && b1 >= bf * (1 - CP_TOL);
  *tight0 = brute && isfinite(bf) && b0 >= bf * (1 - CP_TOL);
  if (be && mip) mv = bp_mip_optimum(be, p, cl, c, &decoded);
  if (isnan(b1) || isnan(b0) || !cp_at_most(b1, bf) || (isinf(b1) && isfinite(bf)) || !cp_at_most(b0, b1) ||
      (be && mip && (isnan(mv) || !cp_at_most(mv, bf) || !cp_at_most(b1, mv) ||
                     (brute && !cp_at_most(bf, decoded)) || !cp_at_most(mv, decoded)))) {
    fprintf(stderr, "  VIOLATION %s\n    pp %d tp %d dp %d mbs %d: DP bound %.12g (without couples "
            "%.12g), pattern MIP %.12g (decoded plan %.12g), brute force %.12g%s\n", what, c->pp, c->tp,
            c->dp, c->mbs, b1, b0, mv, decoded, bf, brute ? "" : " (not run)");
    return 1;
  }
  return 0;
}

/* Instance `seed` of the family (eight: 8 devices), with its job. */
static hp_problem *cp_problem(unsigned long seed, int eight, int *devices, char *what, size_t n_what)
{
  char model[2048], cluster[2048];
  int zdp;
  cp_instance(seed, eight, model, sizeof model, cluster, sizeof cluster, &zdp, devices, what, n_what);
  hp_problem *p = fx_problem(model, cluster, NULL, seed % 2 ? 64 : 16, HP_1F1B);
  if (zdp) p->job.sharding = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP;
  ri_cert_scope(p);
  return p;
}

/* 6 devices: every configuration with tp 1, dp 2 and every device used, against brute force
 * (0.1 s each), the MIP on every third. The couples seldom bind here (pp 3: a single stage
 * beside a spanning one is what they rule out, and the crossing between two spanning
 * stages): this holds their figures below every plan. */
TEST(certificate_couples_bound_never_above_brute_force_on_6_devices)
{
  int bad = 0, configs = 0, raised = 0, tight = 0, tight0 = 0;
  for (unsigned long seed = 1; seed <= (unsigned long)harness_count(CP_SEEDS); seed++) {
    char what[512];
    int devices;
    hp_classes cl;
    hp_diag d = {0};
    hp_config *cfg = NULL;
    hp_problem *p = cp_problem(seed, 0, &devices, what, sizeof what);
    CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
    int n = hp__configs(p, &cfg);
    for (int i = 0; i < n; i++) {
      const hp_config *c = &cfg[i];
      int r, t, t0;
      if (c->tp != 1 || c->dp != 2 || c->pp * 2 != devices) continue;
      configs++;
      bad += cp_check(p, &cl, c, 1, configs % 3 == 0, what, &r, &t, &t0);
      raised += r;
      tight += t;
      tight0 += t0;
    }
    free(cfg);
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d configurations; the couples raised the bound on %d; at the brute-force "
          "optimum on %d (without: %d)\n", configs, raised, tight, tight0);
  CHECK(configs > 0);
  CHECK_INT(bad, 0);
}

/* 8 devices (three nodes of 2 GPUs of "a", the fastest, a light first layer on the two
 * slow single GPUs, 4 layers): the DP with and without the couples on every configuration
 * with tp 1, dp 2 and every device used, the MIP where the couples raised the bound, and,
 * on the first CP_BRUTE8 of those, brute force (20 s each: none under AddressSanitizer). */
#if defined(__SANITIZE_ADDRESS__)
#define CP_SEEDS8 2
#define CP_BRUTE8 0
#else
#define CP_SEEDS8 16
#define CP_BRUTE8 3
#endif
TEST(certificate_couples_raise_the_bound_on_8_devices_never_above_brute_force)
{
  int bad = 0, configs = 0, raised = 0, tight = 0, tight0 = 0, brute = 0;
  for (unsigned long seed = 1; seed <= (unsigned long)harness_count(CP_SEEDS8); seed++) {
    char what[512];
    int devices;
    hp_classes cl;
    hp_diag d = {0};
    hp_config *cfg = NULL;
    hp_problem *p = cp_problem(seed, 1, &devices, what, sizeof what);
    CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
    int n = hp__configs(p, &cfg);
    for (int i = 0; i < n; i++) {
      const hp_config *c = &cfg[i];
      int r, t, t0;
      if (c->tp != 1 || c->dp != 2 || c->pp * 2 != devices) continue;
      configs++;
      /* first the two DP bounds alone (cheap); where the couples raised it, again with the
       * MIP, and brute force while the budget lasts */
      bad += cp_check(p, &cl, c, 0, 0, what, &r, &t, &t0);
      if (!r) continue;
      raised++;
      bad += cp_check(p, &cl, c, brute < CP_BRUTE8, 1, what, &r, &t, &t0);
      if (brute < CP_BRUTE8) {
        brute++;
        tight += t;
        tight0 += t0;
      }
    }
    free(cfg);
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d configurations; the couples raised the bound on %d (brute force on %d: at "
          "its optimum on %d, without the couples on %d)\n", configs, raised, brute, tight, tight0);
  CHECK(raised > 0);
  CHECK(brute == (CP_BRUTE8 < raised ? CP_BRUTE8 : raised));
  CHECK_INT(bad, 0);
}
