/* test_certificate_v3.c -- the certificate's bounds against brute force on tiny random
 * instances of three or four GPU kinds (ri_problem_kinds: mixed node sizes, links or a
 * device bandwidth matrix, every 1.2 field), each narrowed to the space the certificate
 * searches (ri_cert_scope), so that the brute force ranges over that space too:
 *   a. per configuration, the pattern DP's bound (exact count, prices, and the default
 *      that picks) is never above the least time of the configuration's plans, and is
 *      INFINITY only where no plan fits;
 *   b. per configuration, the pattern MIP's optimum (GLPK on every instance, CBC on
 *      every third) lies between the DP's bound and that least time, and its decoded plan
 *      is a plan: never below it;
 *   c. the glpk and cbc solvers over the whole space: their plan never below the global
 *      optimum, their bound never above it, "optimal" only at the optimum, and every run
 *      proved: "optimal", or "infeasible" where nothing fits (what the bounds leave open,
 *      the closing phase enumerates: search_driver.c).
 * And one fixed five-kind instance whose ranks merge: a run with larger frontiers keeps
 * them apart, its bound no lower, never above a plan (what the driver's second round
 * relies on).
 * Each violation is printed with its instance, configuration and figures before the
 * test fails, so one run names them all.
 * Tolerance: relative 1e-9 on every comparison (sums of the same terms in another
 * order), the MIP optima's too: on these programs they come within ~1e-13 of the DP and
 * the brute force, far inside the backends' own tolerances (the driver allows 1e-6,
 * AGREE_TOL in solvers/mip_search.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"
#include "bound_probe.h"
#include "random_instance.h"

#define V3_TOL 1e-9
#define V3_SEEDS 200            /* (a) and (b) */
#define V3_SOLVER_SEEDS 200     /* (c) */
#define V3_FIRST_SEED 3001UL
#if defined(__SANITIZE_ADDRESS__)
#define V3_CBC_EVERY 6UL
/* (b) under AddressSanitizer takes two instances of three: with the slow replica's runs of
 * the count of ranks and rows of the program it took 206 s of its doubled 240 alone on the
 * 2-core machine (169 s before), and ran past them beside another test */
#define V3_MIP_SKIP(seed) ((seed) % 3 == 2)
#else
#define V3_CBC_EVERY 3UL
#define V3_MIP_SKIP(seed) 0
#endif

static const char *const backend_names[2] = { "glpk", "cbc" };

/* The backends this build has (NULL where left out). */
static int backends(hp_mip_backend be[2])
{
  int n = 0;
  be[0] = be[1] = NULL;
#ifdef HP_HAVE_GLPK
  be[0] = hp__glpk_solve_mip;
  n++;
#endif
#ifdef HP_HAVE_CBC
  be[1] = hp__cbc_solve_mip;
  n++;
#endif
  for (int b = 0; b < 2; b++)
    if (!be[b]) fprintf(stderr, "  this build lacks %s: tested without it\n", backend_names[b]);
  return n;
}

/* a <= b within the relative tolerance; INFINITY <= INFINITY. */
static int at_most(double a, double b, double tol)
{
  return a <= b || a <= b + tol * fabs(b);
}

/* One instance of tests (a) and (b): the problem narrowed to the certificate's space, its
 * classes and its configurations (n of them). */
typedef struct v3_inst {
  hp_problem *p;       /* NULL: the instance could not be built (said on stderr) */
  hp_classes cl;
  hp_config *cfg;
  int n;
  char what[768];
} v3_inst;

/* Instance `seed` into *v (idle devices allowed where `idle`: then every configuration
 * with pp tp dp <= D): 0 past the last seed of (a) and (b), else 1 (v->p NULL where it
 * failed); v3_close releases it. */
static int v3_open(v3_inst *v, unsigned long seed, int idle)
{
  hp_diag d = {0};
  memset(v, 0, sizeof *v);
  if (seed >= V3_FIRST_SEED + (unsigned long)harness_count(V3_SEEDS)) return 0;
  v->p = ri_problem_kinds(seed, v->what, sizeof v->what);
  ri_cert_scope(v->p);
  v->p->job.idle_devices = idle;
  v->n = idle ? hp__configs_cert(v->p, &v->cfg) : hp__configs(v->p, &v->cfg);
  if (hp_classes_build(v->p, HP_PATTERN_MAX_CLASSES, &v->cl, &d) != HP_OK) {
    fprintf(stderr, "  %s: the classes: %s\n", v->what, d.msg);
    free(v->cfg);
    v->cfg = NULL;
    v->n = 0;
    hp_problem_destroy(&v->p);
  }
  return 1;
}

static void v3_close(v3_inst *v)
{
  free(v->cfg);
  if (v->p) hp_classes_release(&v->cl);
  hp_problem_destroy(&v->p);
}

TEST(certificate_v3_pattern_dp_bound_never_above_brute_force_on_200_instances_of_3_kinds)
{
  int bad = 0, configs = 0, none_fit = 0, tight = 0, per_class = 0, per_class_tight = 0;
  int ranked = 0, ranked_tight = 0, sided = 0, sided_tight = 0;
  v3_inst v;
  for (unsigned long seed = V3_FIRST_SEED; v3_open(&v, seed, 0); seed++) {
    hp_problem *p = v.p;
    CHECK(p != NULL);
    for (int i = 0; i < v.n; i++) {
      const hp_config *c = &v.cfg[i];
      double bf = ri_brute_config(p, c);
      configs++;
      none_fit += isinf(bf);
      for (int exact = -1; exact <= 1; exact++) {     /* the default, prices, exact count */
        int counted = 0;
        double b = bp_dp_bound_counted(p, &v.cl, c, exact, 0, INFINITY, NULL, &counted);
        if (exact == -1) tight += isfinite(bf) && b >= bf * (1 - V3_TOL);
        /* three classes or more counted exactly: the count per class (pattern_dp.c) */
        if (exact == -1 && counted && v.cl.n >= 3) {
          per_class++;
          per_class_tight += isfinite(bf) && b >= bf * (1 - V3_TOL);
        }
        if (isnan(b) || !at_most(b, bf, V3_TOL) || (isinf(b) && isfinite(bf))) {
          fprintf(stderr, "  VIOLATION (a) %s\n    pp %d tp %d dp %d mbs %d: DP bound (exact %d) "
                  "%.12g, brute force %.12g\n", v.what, c->pp, c->tp, c->dp, c->mbs, exact, b, bf);
          bad++;
        }
      }
      /* three classes or more: the count of ranks, the two sides and the count per class,
       * each forced */
      for (int count = HP_PAT_COUNT_RANKS; v.cl.n >= 3 && count <= HP_PAT_COUNT_CLASS; count++) {
        int sides = 0;
        double b = bp_dp_bound_count(p, &v.cl, c, count, &sides);
        int at = isfinite(bf) && b >= bf * (1 - V3_TOL);
        if (sides == 2) { ranked++; ranked_tight += at; }
        if (sides == 1) { sided++; sided_tight += at; }
        if (isnan(b) || !at_most(b, bf, V3_TOL) || (isinf(b) && isfinite(bf))) {
          fprintf(stderr, "  VIOLATION (a) %s\n    pp %d tp %d dp %d mbs %d: DP bound (%s) "
                  "%.12g, brute force %.12g\n", v.what, c->pp, c->tp, c->dp, c->mbs,
                  count == HP_PAT_COUNT_RANKS ? "ranks"
                  : count == HP_PAT_COUNT_SIDES ? "sides" : "per class", b, bf);
          bad++;
        }
      }
    }
    v3_close(&v);
  }
  fprintf(stderr, "  %d configurations (%d where nothing fits), the default DP bound tight on %d; "
          "counted per class (3 classes or more) on %d, tight on %d of them; by rank on %d "
          "(tight on %d), in two sides on %d (tight on %d)\n",
          configs, none_fit, tight, per_class, per_class_tight, ranked, ranked_tight, sided,
          sided_tight);
  CHECK(configs > 0);
  CHECK(per_class > 0);                /* the count per class was held against brute force */
  CHECK(ranked > 0 && sided > 0);      /* and the count of ranks, and the sides */
  CHECK_INT(bad, 0);
}

/* The slow replica (pattern_dp.c): the count of ranks, forced, with the run for the
 * sequences where some replica holds the top class of every stage, never above the least
 * time of a configuration's plans, and above the same count without it on some. Never
 * below it on these instances: at each price it keeps the larger of the two bounds (the
 * price search may then take another path; on none of these does it end lower). */
TEST(certificate_v3_slow_replica_raises_the_count_of_ranks_never_above_brute_force)
{
  int bad = 0, ranked = 0, raised = 0, lowered = 0, tight = 0, tight_before = 0;
  v3_inst v;
  for (unsigned long seed = V3_FIRST_SEED; v3_open(&v, seed, 0); seed++) {
    hp_problem *p = v.p;
    CHECK(p != NULL);
    for (int i = 0; v.cl.n >= 3 && i < v.n; i++) {
      const hp_config *c = &v.cfg[i];
      int sides = 0, sides0 = 0;
      double b = bp_dp_bound_count(p, &v.cl, c, HP_PAT_COUNT_RANKS, &sides);
      double b0 = bp_dp_bound_count_no_slow(p, &v.cl, c, HP_PAT_COUNT_RANKS, &sides0);
      if (sides != 2 || sides0 != 2) continue;
      double bf = ri_brute_config(p, c);
      ranked++;
      raised += b > b0 * (1 + V3_TOL);
      lowered += b < b0 * (1 - V3_TOL);
      tight += isfinite(bf) && b >= bf * (1 - V3_TOL);
      tight_before += isfinite(bf) && b0 >= bf * (1 - V3_TOL);
      if (isnan(b) || !at_most(b, bf, V3_TOL) || (isinf(b) && isfinite(bf))) {
        fprintf(stderr, "  VIOLATION (slow) %s\n    pp %d tp %d dp %d mbs %d: ranks %.12g (without "
                "the slow replica %.12g), brute force %.12g\n", v.what, c->pp, c->tp, c->dp,
                c->mbs, b, b0, bf);
        bad++;
      }
    }
    v3_close(&v);
  }
  fprintf(stderr, "  %d configurations counted by rank: the slow replica raised %d, lowered %d; "
          "at the brute-force optimum %d (%d without it)\n", ranked, raised, lowered, tight,
          tight_before);
  CHECK(ranked > 0 && raised > 0);
  CHECK_INT(lowered, 0);
  CHECK_INT(bad, 0);
}

/* The quick bound alone (hp__pattern_config with quick: what the certificate gives the
 * configurations its first round leaves unbounded) is a bound, marked partial so that the
 * second round resumes it, never above the least time of the configuration's plans; a plan
 * it decodes is a plan, never below that time. */
TEST(certificate_v3_quick_bound_alone_is_partial_and_never_above_brute_force)
{
  int bad = 0, configs = 0, quick = 0, partial = 0, below_full = 0;
  v3_inst v;
  for (unsigned long seed = V3_FIRST_SEED; v3_open(&v, seed, 0); seed++) {
    hp_problem *p = v.p;
    CHECK(p != NULL);
    for (int i = 0; v.cl.n >= 3 && i < v.n; i++) {
      const hp_config *c = &v.cfg[i];
      double bf = ri_brute_config(p, c), full = bp_dp_bound(p, &v.cl, c, -1, 0, INFINITY, NULL);
      hp_cfg_bound b;
      hp_result r;
      hp_limits lim;
      hp_diag d = {0};
      hp_err err;
      memset(&b, 0, sizeof b);
      hp_result_init(&r);
      hp_limits_init(&lim);
      err = hp__pattern_config(p, &v.cl, c, &lim, INFINITY, INFINITY, INFINITY, 0, 1, NULL, &r, &b, &d);
      configs++;
      quick += b.quick_s > 0;
      partial += b.partial;
      below_full += b.done && b.bound < full * (1 - V3_TOL);
      /* done always; partial wherever the quick run ran and found something to fit */
      if (err || !b.done || !at_most(b.bound, bf, V3_TOL) || (isinf(b.bound) && isfinite(bf)) ||
          (b.quick_s > 0 && isfinite(b.bound) && !b.partial) ||
          (r.plan && !at_most(bf, r.objective, V3_TOL))) {
        fprintf(stderr, "  VIOLATION (quick) %s\n    pp %d tp %d dp %d mbs %d: err %d, done %d, "
                "partial %d, quick bound %.12g, plan %.12g, brute force %.12g\n", v.what, c->pp,
                c->tp, c->dp, c->mbs, (int)err, b.done, b.partial, b.bound,
                r.plan ? r.objective : INFINITY, bf);
        bad++;
      }
      hp_result_release(&r);
    }
    v3_close(&v);
  }
  fprintf(stderr, "  %d configurations of three classes or more: the quick bound ran on %d, "
          "partial on %d, below the full DP bound on %d\n", configs, quick, partial, below_full);
  CHECK(quick > 0 && partial > 0);
  CHECK_INT(bad, 0);
}

/* The counts of groups with idle devices allowed (the counts then bound each class's use
 * from above only): every count, forced, never above the least time of a configuration's
 * plans, brute force leaving any devices idle. */
TEST(certificate_v3_counts_with_idle_devices_never_above_brute_force_on_200_instances)
{
  int bad = 0, configs = 0, idle = 0, ranked = 0, ranked_tight = 0;
  v3_inst v;
  for (unsigned long seed = V3_FIRST_SEED; v3_open(&v, seed, 1); seed++) {   /* pp tp dp < D too */
    hp_problem *p = v.p;
    CHECK(p != NULL);
    for (int i = 0; v.cl.n >= 3 && i < v.n; i++) {
      const hp_config *c = &v.cfg[i];
      double bf = ri_brute_config(p, c);
      configs++;
      idle += c->pp * c->tp * c->dp < p->cluster->n_devices;
      for (int count = HP_PAT_COUNT_AUTO; count <= HP_PAT_COUNT_CLASS; count++) {
        int sides = 0;
        double b = bp_dp_bound_count(p, &v.cl, c, count, &sides);
        if (sides == 2) { ranked++; ranked_tight += isfinite(bf) && b >= bf * (1 - V3_TOL); }
        if (isnan(b) || !at_most(b, bf, V3_TOL) || (isinf(b) && isfinite(bf))) {
          fprintf(stderr, "  VIOLATION %s, idle devices\n    pp %d tp %d dp %d mbs %d: DP bound "
                  "(count %d) %.12g, brute force %.12g\n", v.what, c->pp, c->tp, c->dp, c->mbs,
                  count, b, bf);
          bad++;
        }
      }
    }
    v3_close(&v);
  }
  fprintf(stderr, "  %d configurations of three classes or more, %d leaving devices idle; by rank "
          "on %d, tight on %d\n", configs, idle, ranked, ranked_tight);
  CHECK(idle > 0 && ranked > 0);
  CHECK_INT(bad, 0);
}

TEST(certificate_v3_pattern_mip_between_dp_and_brute_force_on_200_instances_of_3_kinds)
{
  hp_mip_backend be[2];
  int bad = 0, solves = 0, equal = 0;
  double worst_mip_bf = 0, worst_mip_dp = 0;     /* the largest relative excess seen */
  SKIP_UNLESS(backends(be) > 0, "this build has no MIP backend (GLPK=0 CBC=0)");
  v3_inst v;
  for (unsigned long seed = V3_FIRST_SEED; v3_open(&v, seed, 0); seed++) {
    hp_problem *p = v.p;
    CHECK(p != NULL);
    for (int i = 0; i < v.n && !V3_MIP_SKIP(seed); i++) {
      const hp_config *c = &v.cfg[i];
      double bf = ri_brute_config(p, c), dpb = bp_dp_bound(p, &v.cl, c, -1, 0, INFINITY, NULL);
      if (v.cl.n >= 3) {                 /* the count of ranks too: the program must not be below */
        int sides = 0;
        double rb = bp_dp_bound_count(p, &v.cl, c, HP_PAT_COUNT_RANKS, &sides);
        if (sides == 2 && rb > dpb) dpb = rb;
      }
      for (int k = 0; k < 2; k++) {
        double decoded, mv;
        /* GLPK on every instance; CBC (about 40 ms a program, 30 times GLPK) on every third,
         * every sixth under AddressSanitizer (where, with each solution decoded in three
         * placements, pattern_decode.c, it ran past its doubled limit on 2026-11-27), so
         * that the test keeps within its limit */
        if (!be[k] || (k == 1 && seed % V3_CBC_EVERY != 0)) continue;
        mv = bp_mip_optimum(be[k], p, &v.cl, c, &decoded);
        solves++;
        equal += isfinite(bf) && mv >= bf * (1 - V3_TOL);
        if (isfinite(mv) && isfinite(bf) && mv > bf) worst_mip_bf = fmax(worst_mip_bf, (mv - bf) / bf);
        if (isfinite(mv) && isfinite(dpb) && mv < dpb) worst_mip_dp = fmax(worst_mip_dp, (dpb - mv) / dpb);
        if (isnan(mv) || !at_most(mv, bf, V3_TOL) || !at_most(dpb, mv, V3_TOL) ||
            !at_most(bf, decoded, V3_TOL)) {
          fprintf(stderr, "  VIOLATION (b) %s\n    pp %d tp %d dp %d mbs %d: %s pattern MIP %.12g, "
                  "DP bound %.12g, brute force %.12g, decoded plan %.12g\n", v.what, c->pp, c->tp,
                  c->dp, c->mbs, backend_names[k], mv, dpb, bf, decoded);
          bad++;
        }
      }
    }
    v3_close(&v);
  }
  fprintf(stderr, "  %d MIP solves, %d at the brute-force optimum; largest excess over brute force "
          "%.2g, below the DP %.2g (relative)\n", solves, equal, worst_mip_bf, worst_mip_dp);
  CHECK(solves > 0);
  CHECK_INT(bad, 0);
}

/* Found past the 200 seeds above (seeds 200895, 700215 and 700959 of (b)): one-stage
 * pattern programs, each continuous column of the objective in one row with coefficient
 * 1 (T >= tmax, Q, U), on which CBC 2.10.8 took the objective to move in steps of 1 and,
 * once a heuristic found a plan (1215.416 ms on the first), cut off a step below it and
 * called it optimal where a better one exists (1214.544; solver_cbc.c: the guard
 * column). Both backends must reach the brute force's optimum. */
TEST(certificate_v3_cbc_takes_no_objective_step_on_a_one_stage_pattern_program)
{
  static const struct { unsigned long seed; int dp, mbs; double optimum; } cases[] = {
    { 200895UL, 3, 2, 1.21454350722 }, { 700215UL, 3, 1, 0.796942809016 },
    { 700959UL, 4, 2, 0.802363142657 },
  };
  hp_mip_backend be[2];
  int checked = 0;
  SKIP_UNLESS(backends(be) > 0, "this build has no MIP backend (GLPK=0 CBC=0)");
  for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
    char what[768];
    const hp_config c = { .pp = 1, .tp = 1, .dp = cases[q].dp, .mbs = cases[q].mbs };
    hp_classes cl;
    hp_diag d = {0};
    hp_problem *p = ri_problem_kinds(cases[q].seed, what, sizeof what);
    CHECK(p != NULL);
    ri_cert_scope(p);
    CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
    double bf = ri_brute_config(p, &c);
    CHECK_NEAR(bf, cases[q].optimum, 1e-9);   /* the instance is the one that failed */
    for (int k = 0; k < 2; k++) {
      double decoded, mv;
      if (!be[k]) continue;
      mv = bp_mip_optimum(be[k], p, &cl, &c, &decoded);
      if (!(fabs(mv - bf) <= V3_TOL * bf))
        fprintf(stderr, "  seed %lu, %s: pattern MIP %.12g, brute force %.12g\n", cases[q].seed,
                backend_names[k], mv, bf);
      CHECK(fabs(mv - bf) <= V3_TOL * bf);
      CHECK(fabs(decoded - bf) <= V3_TOL * bf);
      checked++;
    }
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
  }
  CHECK(checked >= 3);
}

TEST(certificate_v3_glpk_and_cbc_bound_brute_force_on_instances_of_3_kinds)
{
  static const char *const names[2] = { "glpk", "cbc" };
  int runs = 0, optimal = 0, bad = 0, seeds = 0, closed = 0, no_bound = 0;
  for (unsigned long seed = V3_FIRST_SEED;
       seed < V3_FIRST_SEED + (unsigned long)harness_count(V3_SOLVER_SEEDS); seed++) {
    char what[768];
    hp_problem *p = ri_problem_kinds(seed, what, sizeof what);
    ri_cert_scope(p);
    double bf = ri_brute_all(p, NULL);       /* the certificate's space: no idle devices */
    seeds++;
    for (int k = 0; k < 2; k++) {
      hp_result r;
      double plan_time;
      int ran = bp_certify(names[k], p, 3, what, &r, &plan_time);
      if (ran == 0) continue;
      if (ran < 0) { bad++; continue; }
      runs++;
      optimal += r.status == HP_SOL_OPTIMAL;
      no_bound += !(r.bound > -INFINITY);
      closed += r.status != HP_SOL_OPTIMAL && isfinite(bf) && r.bound >= bf * (1 - V3_TOL);
      if (r.status != (isfinite(bf) ? HP_SOL_OPTIMAL : HP_SOL_INFEASIBLE)) {
        fprintf(stderr, "  UNPROVED (c) %s\n    %s: %s, plan %.12g, bound %.12g, brute force "
                "%.12g (%s)\n", what, names[k], hp_sol_status_name(r.status), plan_time, r.bound,
                bf, r.space_note);
        bad++;
      }
      if ((r.plan && !at_most(bf, plan_time, V3_TOL)) || !at_most(r.bound, bf, V3_TOL) ||
          (r.status == HP_SOL_OPTIMAL && !(fabs(plan_time - bf) <= V3_TOL * bf)) ||
          (r.status == HP_SOL_INFEASIBLE && isfinite(bf))) {
        fprintf(stderr, "  VIOLATION (c) %s\n    %s: status %d, plan %.12g, bound %.12g, brute force "
                "%.12g\n", what, names[k], (int)r.status, plan_time, r.bound, bf);
        bad++;
      }
      hp_result_release(&r);
    }
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d seeds, %d solver runs, %d ended optimal (%d others with a bound at the "
          "optimum, %d with no bound)\n", seeds, runs, optimal, closed, no_bound);
  CHECK_INT(bad, 0);
  SKIP_UNLESS(runs > 0, "this build has no MIP backend (GLPK=0 CBC=0)");
}

/* Five kinds, two 4-GPU nodes each (the data-sheet figures of bench/clusters_v3.sh),
 * 100 Gbit/s between nodes: five exact classes. Written into buf. */
static void v3_k5_cluster(char *buf, size_t n)
{
  static const struct { const char *type; int mem, tflops, hbm, intra; } k[5] = {
    { "H100", 80, 989, 3350, 7200 }, { "A100", 40, 312, 1555, 4800 }, { "V100", 32, 125, 900, 2400 },
    { "L4", 24, 121, 300, 512 }, { "T4", 16, 65, 320, 256 } };
  size_t at = (size_t)snprintf(buf, n, "{ \"version\": 1, \"name\": \"k5-40\", \"device_types\": {");
  for (int t = 0; t < 5 && at < n; t++)
    at += (size_t)snprintf(buf + at, n - at, "%s \"%s\": { \"mem_gib\": %d, \"reserved_gib\": 1, "
                           "\"tflops\": %d, \"efficiency\": 0.35, \"hbm_gbs\": %d }", t ? "," : "",
                           k[t].type, k[t].mem, k[t].tflops, k[t].hbm);
  for (int q = 0; q < 10 && at < n; q++)
    at += (size_t)snprintf(buf + at, n - at, "%s { \"name\": \"%s-%02d\", \"type\": \"%s\", "
                           "\"gpus\": 4, \"intra_gbps\": %d, \"intra_lat_us\": 5 }",
                           q ? "," : " }, \"nodes\": [", k[q / 2].type, q % 2, k[q / 2].type, k[q / 2].intra);
  if (at < n) snprintf(buf + at, n - at, " ], \"inter_gbps\": 100, \"inter_lat_us\": 5 }");
}

/* What the certificate's second round asks of a configuration whose ranks merged (with
 * three classes or more, search_driver.c reruns it with frontiers 4 times the default):
 * five kinds, idle devices allowed, pp 11 tp 1 dp 1 (the count per class is too large,
 * 9^5 states; five ranks apart are 4,368 states, past the 4,096 the default run keeps, so
 * two ranks merge). The default run must say it merged; the larger run keeps the five
 * ranks apart (and merges nothing), and its bound is at least the merged one and at most
 * the time of a real plan of the configuration (the placement descent's). The driver's
 * first round (HP_PAT_MERGED_FIRST) stops after the merged first run: partial, merged, no
 * higher than the whole merged search. Measured
 * 2026-11-26: both read 0.447947 s (with idle devices the bound's sequence leaves the
 * merged classes out; on the five-kind bench row, where every device works, the larger
 * run reads 2.046 against 1.940), the plan 0.482631 s; 0.9 and 3.4 s. */
TEST(certificate_v3_merged_ranks_kept_apart_by_a_larger_run_bound_not_lower_nor_above_a_plan)
{
  char *model = NULL;
  hp_diag d = {0};
  hp_problem *p;
  hp_classes cl;
  hp_config c = { 11, 1, 1, 1 };
  hp_cfg_bound b64, b256, bfirst;
  hp_result r, pr;
  hp_limits lim;
  char cluster[4096];
  v3_k5_cluster(cluster, sizeof cluster);
  CHECK(hp_read_file("models/gpt-1.1b.json", &model, &d) == HP_OK);
  p = fx_problem(model, cluster, NULL, 64, HP_1F1B);
  ri_cert_scope(p);
  p->job.idle_devices = 1;
  CHECK(hp_classes_build(p, HP_PATTERN_SEARCH_CLASSES, &cl, &d) == HP_OK);
  CHECK_INT(cl.n, 5);
  hp_limits_init(&lim);
  memset(&b64, 0, sizeof b64);
  memset(&b256, 0, sizeof b256);
  memset(&bfirst, 0, sizeof bfirst);
  hp_result_init(&r);
  hp_result_init(&pr);
  double t0 = hp__now();
  CHECK(hp__pattern_config(p, &cl, &c, &lim, INFINITY, INFINITY, INFINITY, 0, 0, NULL, &r, &b64, &d) == HP_OK);
  double t1 = hp__now();
  CHECK(hp__pattern_config(p, &cl, &c, &lim, INFINITY, INFINITY, INFINITY, 4 * HP_PAT_FRONTIER, 0, NULL, &r, &b256,
                           &d) == HP_OK);
  double t2 = hp__now();
  /* the driver's first round: where the ranks merged, the first run alone, partial */
  CHECK(hp__pattern_config(p, &cl, &c, &lim, INFINITY, INFINITY, INFINITY, 0, HP_PAT_MERGED_FIRST,
                           NULL, &r, &bfirst, &d) == HP_OK);
  CHECK(hp__descend_config(p, &c, NULL, &lim, INFINITY, &pr, NULL, &d) == HP_OK);
  fprintf(stderr, "  merged run: bound %.6f (merged %d, sides %d) in %.2f s; larger run: %.6f (merged %d, sides %d) in %.2f s; "
          "merged, first run alone: %.6f (partial %d); plan %.6f\n",
          b64.bound, b64.merged, b64.sides, t1 - t0, b256.bound, b256.merged, b256.sides, t2 - t1,
          bfirst.bound, bfirst.partial, pr.plan ? pr.objective : INFINITY);
  CHECK(b64.done && b256.done && pr.plan != NULL);
  CHECK(b64.merged);
  CHECK(!b256.merged);                 /* five ranks apart, no frontier merged */
  CHECK(bfirst.done && bfirst.merged && bfirst.partial);
  CHECK(bfirst.bound <= b64.bound * (1 + V3_TOL));
  CHECK(b256.bound >= b64.bound * (1 - V3_TOL));
  CHECK(pr.plan && at_most(b256.bound, pr.objective, V3_TOL));
  hp_result_release(&r);
  hp_result_release(&pr);
  hp_classes_release(&cl);
  hp_problem_destroy(&p);
  free(model);
}
