/* test_pattern.c -- the pattern DP's bound against brute force: on random tiny
 * heterogeneous instances, for every configuration, the bound (exact and Lagrangian)
 * never exceeds the least time of any plan of that configuration found by enumerating
 * every placement, partition, recompute and sharding choice, and the plan its best
 * sequence decodes to is a valid plan no faster than the bound; and on AMP's set-up it
 * proves the optimum. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"
#include "bound_probe.h"
#include "random_instance.h"

/* The pattern bound of configuration c; exact: 1 exact count, 0 prices only. *plan_time:
 * the time of the plan its best sequence decodes to (INFINITY: none; NAN: not a valid plan). */
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
      if (hp_plan_validate(p, pl, &d) != HP_OK) *plan_time = NAN;   /* the caller's check fails */
      else if (hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible) *plan_time = e.iteration_time;
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
  hp_shard_stage st = { .dp = 2, .modes = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP, .bdp = 1.0,
                        .W = 1.0, .G = 1.5, .mem0 = 10, .cap = 20 };
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
  /* the step, 2 update bytes at hbm 4: 0.5 replicated; at dp 2 in zero1, 0.25 */
  st.upd = 2;
  st.hbm = 4;
  n = hp__shard_options(&st, o, HP_SHARD_MAX_OPTS);
  CHECK_INT(n, 1);
  CHECK_NEAR(o[0].q, 0, 1e-15);
  CHECK_NEAR(o[0].u, 0.5, 1e-15);
  st.dp = 2;
  st.modes = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZERO1;
  n = hp__shard_options(&st, o, HP_SHARD_MAX_OPTS);   /* zero1: f (G + W) = 1.25, step 0.25 */
  CHECK_INT(n, 1);                                    /* against dp's 1.5 and 0.5 */
  CHECK_NEAR(o[0].q, 1.25, 1e-15);
  CHECK_NEAR(o[0].u, 0.25, 1e-15);
  /* a step that costs more than zdp's gathers (dp 2, zdp dt 1.75): 8 bytes at hbm 1 is 8
   * replicated, 4 sharded; dp gives (dt, q, u) = (0, 1.5, 8), zdp (1.75, 0, 4): neither is
   * no worse in every figure (dt + u: 8 against 5.75; dt + q + u: 9.5 against 5.75). One
   * option, each figure's least over both: dt 0, dt + q 1.5, dt + u 5.75, dt + q + u 5.75,
   * so q 1.5 and u = min(5.75 - 0, 5.75 - 1.5) = 4.25 */
  st.modes = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP;
  st.upd = 8;
  st.hbm = 1;
  n = hp__shard_options(&st, o, HP_SHARD_MAX_OPTS);
  CHECK_INT(n, 1);
  CHECK(o[0].dt == 0 && o[0].q == 1.5);
  CHECK_NEAR(o[0].u, 4.25, 1e-15);
  /* the latency of Zr is not added: dp, which it covers too, has none */
  st.latdp = 0.01;
  n = hp__shard_options(&st, o, HP_SHARD_MAX_OPTS);
  CHECK_INT(n, 1);
  CHECK_NEAR(o[0].dt, 0, 0);
}

/* Every assignment of fractions to the modes that fits has an option no worse than it:
 * dt' <= dt, dt' + q' <= dt + q, dt' + u' <= dt + u and dt' + q' + u' <= dt + q + u (the
 * DP's exchange, pattern_shard.c), on random stages. */
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
    st.upd = hp__rng_int(&r, 2) ? 0 : 12 * hp__rng_unit(&r);
    st.hbm = 1 + 4 * hp__rng_unit(&r);
    double f = (st.dp - 1.0) / st.dp, S[4] = { W + G + opt, W + G + opt / st.dp, W + (G + opt) / st.dp,
                                               (W + G + opt) / st.dp };
    for (int m = 0; m < 4; m++) st.save[m] = S[0] - S[m];
    st.cap = 10;
    st.mem0 = 10 + (S[0] - S[3]) * (hp__rng_unit(&r) * 1.2 - 0.3);
    int n = hp__shard_options(&st, o, it % 4 == 0 ? 1 : HP_SHARD_MAX_OPTS);   /* one: the cap */
    for (int a = 0; a < 300; a++) {          /* random fractions over the allowed modes */
      double x[4] = {0}, sum = 0, mem, dt, q, u, lat = (st.dp - 1) * st.latdp;
      for (int m = 0; m < 4; m++)
        if (st.modes >> m & 1u) sum += x[m] = hp__rng_int(&r, 3) ? hp__rng_unit(&r) : 0;
      if (!(sum > 0)) continue;
      for (int m = 0; m < 4; m++) x[m] /= sum;
      mem = st.mem0 - (x[1] * st.save[1] + x[2] * st.save[2] + x[3] * st.save[3]);
      if (mem > st.cap) continue;
      dt = f * (G * x[2] + (2 * W + G) * x[3]) / st.bdp + (x[2] + x[3] > 0 ? lat : 0);
      q = (st.overlap ? 0 : f * (2 * G * x[0] + G * x[1]) / st.bdp + 2 * lat) +
          f * W * (x[1] + x[2]) / st.bdp;
      u = st.upd * (x[0] + (1 - x[0]) / st.dp) / st.hbm;
      int ok = 0;
#define LE(a, b) ((a) <= (b) * (1 + 1e-12) + 1e-15)
      for (int k = 0; k < n && !ok; k++)
        ok = LE(o[k].dt, dt) && LE(o[k].dt + o[k].q, dt + q) && LE(o[k].dt + o[k].u, dt + u) &&
             LE(o[k].dt + o[k].q + o[k].u, dt + q + u);
#undef LE
      if (!ok) fprintf(stderr, "  it %d: dp %d modes %x: dt %g q %g u %g uncovered (%d options)\n", it, st.dp, st.modes, dt, q, u, n);
      CHECK(ok);
      checked++;
    }
  }
  fprintf(stderr, "  %d assignments that fit, each covered\n", checked);
  CHECK(checked > 10000);
}

/* Three nodes of four GPUs, 80 Gbit/s (10 GB/s) between them, 800 inside: pp 3, tp 1,
 * dp 4. A stage on one node fills it (per_node 4 = dp), so every replica of the boundary
 * to a stage of any kind crosses its interface: H_s(n) = 4 lanes, 10 / 4 = 2.5 GB/s a lane
 * (cost-model.md 3). Two spanning stages can share a node: the intra-node 100 GB/s. */
/* The classes, Megatron-order plan and patterns of configuration c of p; 1 if all built
 * (release them with release_patterns either way). */
static int build_patterns(const hp_problem *p, const hp_config *c, hp_classes *cl, hp_plan **pl,
                          hp_patterns *pt)
{
  hp_diag d = {0};
  memset(cl, 0, sizeof *cl);
  memset(pt, 0, sizeof *pt);
  *pl = NULL;
  return hp_classes_build(p, HP_PATTERN_MAX_CLASSES, cl, &d) == HP_OK &&
         hp__plan_for(p, c, pl, &d) == HP_OK && hp_patterns_build(p, cl, *pl, pt, &d) == HP_OK;
}

static void release_patterns(hp_classes *cl, hp_plan **pl, hp_patterns *pt)
{
  hp_patterns_release(pt);
  hp_plan_destroy(pl);
  hp_classes_release(cl);
}

TEST(pattern_handoff_next_to_a_full_node_shares_its_interface_among_every_replica)
{
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 1, \"tflops\": 100, \"efficiency\": 0.5 } },"
    "  \"nodes\": ["
    "    { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"b\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"c\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 800, \"intra_lat_us\": 2 } ],"
    "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";
  hp_problem *p = fx_problem(fx_tiny_model, cluster, NULL, 4, HP_1F1B);
  hp_classes cl;
  hp_patterns pt;
  hp_plan *pl;
  hp_config c = { 3, 1, 4, 1 };
  CHECK(build_patterns(p, &c, &cl, &pl, &pt));
  int one = hp_patterns_find(&pt, 1u, 1), span = hp_patterns_find(&pt, 1u, 0), K = pt.n_kind;
  CHECK(one >= 0 && span >= 0);
  if (one >= 0 && span >= 0) {
    CHECK_NEAR(pt.hbw[one * K + span], 2.5e9, 1e-6);     /* was 10 GB/s: tp lanes only */
    CHECK_NEAR(pt.hbw[span * K + one], 2.5e9, 1e-6);
    CHECK_NEAR(pt.hbw[one * K + one], 2.5e9, 1e-6);
    CHECK_NEAR(pt.hbw[span * K + span], 100e9, 1e-6);
    CHECK_NEAR(pt.hlat[one * K + span], 10e-6, 1e-15);
  }
  release_patterns(&cl, &pl, &pt);
  hp_problem_destroy(&p);
}

/* Two classes, two nodes of four GPUs each, 80 Gbit/s (10 GB/s) between nodes, 800
 * inside: pp 2, tp 1, dp 2. A stage on one node of class x next to a stage of the other
 * class: no replica's other group can be on that node, so both replicas' lanes cross its
 * interface, 10 / 2 = 5 GB/s a lane (before 2026-11-27: one replica, 10 GB/s). Next to a
 * stage spanning its own class, room for two more groups on the node: one replica may
 * stay inside, one crossing alone gets 10 GB/s, and inside 100 GB/s. */
TEST(pattern_handoff_between_a_stage_on_one_node_and_another_class_crosses_for_every_replica)
{
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 1, \"tflops\": 100, \"efficiency\": 0.5 },"
    "                    \"slow\": { \"mem_gib\": 1, \"tflops\": 50, \"efficiency\": 0.5 } },"
    "  \"nodes\": ["
    "    { \"name\": \"f1\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"f2\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"s1\", \"type\": \"slow\", \"gpus\": 4, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"s2\", \"type\": \"slow\", \"gpus\": 4, \"intra_gbps\": 800, \"intra_lat_us\": 2 } ],"
    "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";
  hp_problem *p = fx_problem(fx_tiny_model, cluster, NULL, 4, HP_1F1B);
  hp_classes cl;
  hp_patterns pt;
  hp_plan *pl;
  hp_config c = { 2, 1, 2, 1 };
  CHECK(p != NULL);
  if (!p) return;
  CHECK(build_patterns(p, &c, &cl, &pl, &pt));
  CHECK_INT(cl.n, 2);
  unsigned fm = 0, sm = 0;
  for (int x = 0; x < cl.n; x++) {
    if (!strcmp(p->cluster->types[cl.cls[x].type].name, "fast")) fm = 1u << x;
    else sm = 1u << x;
  }
  int fone = hp_patterns_find(&pt, fm, 1), fspan = hp_patterns_find(&pt, fm, 0);
  int sone = hp_patterns_find(&pt, sm, 1), sspan = hp_patterns_find(&pt, sm, 0), K = pt.n_kind;
  CHECK(fone >= 0 && fspan >= 0 && sone >= 0 && sspan >= 0);
  if (fone >= 0 && fspan >= 0 && sone >= 0 && sspan >= 0) {
    CHECK_NEAR(pt.hbw[fone * K + sspan], 5e9, 1e-6);
    CHECK_NEAR(pt.hbw[sspan * K + fone], 5e9, 1e-6);
    CHECK_NEAR(pt.hbw[sone * K + fspan], 5e9, 1e-6);
    CHECK_NEAR(pt.hbw[fone * K + sone], 5e9, 1e-6);      /* both on one node: dp lanes */
    CHECK_NEAR(pt.hbw[fspan * K + sspan], 10e9, 1e-6);   /* neither: r*'s own lanes */
    CHECK_NEAR(pt.xbw[fone * K + fspan], 10e9, 1e-6);    /* its own class: one may stay */
    CHECK_NEAR(pt.hbw[fone * K + fspan], 100e9, 1e-6);
  }
  release_patterns(&cl, &pl, &pt);
  hp_problem_destroy(&p);
}

/* The decode of a sequence whose stages span nodes of one class (pattern_decode.c,
 * `spread`). Two nodes of 2 GPUs, pp 2 tp 1 dp 2, two layers of 20 ms (1e12 FLOP at 50
 * TFLOPS) with a 400 MB activation between them, 10 Gbit/s between the nodes and 1600
 * inside. Each stage on a node of its own sends both replicas' activations across (two
 * lanes share 1.25 GB/s: 0.64 s a micro-batch); each stage on both nodes, every replica's
 * two GPUs on one node, keeps them inside (2 ms). The DP's best sequence is the second,
 * and its decode must be that placement: before 2026-11-27 a stage that spans nodes took
 * whole nodes first, and the plan crossed. The decoded plan is a valid plan and equals the
 * brute-force optimum. */
TEST(pattern_decode_places_two_spanning_stages_of_one_class_as_a_couple)
{
  static const char model[] =
    "{ \"name\": \"handoff\", \"input_bytes\": 1000, \"layers\": ["
    "  { \"name\": \"l0\", \"params\": 1000, \"act_bytes\": 1e6, \"out_bytes\": 4e8, \"flops\": 1e12 },"
    "  { \"name\": \"l1\", \"params\": 1000, \"act_bytes\": 1e6, \"out_bytes\": 4, \"flops\": 1e12 } ] }";
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 8, \"tflops\": 100, \"efficiency\": 0.5 } },"
    "  \"nodes\": ["
    "    { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 1600, \"intra_lat_us\": 2 },"
    "    { \"name\": \"b\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 1600, \"intra_lat_us\": 2 } ],"
    "  \"inter_gbps\": 10, \"inter_lat_us\": 10 }";
  hp_problem *p = fx_problem(model, cluster, NULL, 8, HP_1F1B);
  hp_classes cl;
  hp_patterns pt;
  hp_plan *pl;
  hp_pat_opts o;
  hp_pat_result r;
  hp_diag d = {0};
  hp_config c = { 2, 1, 2, 1 };
  int found = 0;
  memset(&r, 0, sizeof r);
  CHECK(build_patterns(p, &c, &cl, &pl, &pt));
  hp__pat_opts_init(&o);
  CHECK(hp__pattern_bound(p, &pt, &o, &r, &d) == HP_OK && r.done && r.found);
  if (r.found) {
    CHECK(!pt.kind[r.kind[0]].single && !pt.kind[r.kind[1]].single);   /* both span nodes */
    CHECK(hp__pattern_plan(p, &pt, &r, INFINITY, NULL, pl, &found, &d) == HP_OK && found);
  }
  if (found) {
    hp_eval e = {0};
    CHECK(hp_plan_validate(p, pl, &d) == HP_OK);
    for (int q = 0; q < 2; q++) {                 /* each replica on one node, both stages */
      int d0 = pl->dev[HP_SLOT(pl, 0, q, 0)], d1 = pl->dev[HP_SLOT(pl, 1, q, 0)];
      CHECK(d0 / 2 == d1 / 2);
      CHECK(d0 != d1);
    }
    CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible);
    CHECK_NEAR(e.iteration_time, ri_brute_config(p, &c), 1e-12);
    CHECK(e.iteration_time < 0.2);                /* no 0.64 s crossing in it */
    CHECK(r.bound <= e.iteration_time * (1 + 1e-9));
    hp_eval_release(&e);
  }
  hp__pat_result_release(&r);
  release_patterns(&cl, &pl, &pt);
  hp_problem_destroy(&p);
}

/* The follow placement (pattern_decode.c, follow()). Three nodes of 4 GPUs, pp 6 tp 1
 * dp 2, six layers of 20 ms with a 400 MB activation after each, 10 Gbit/s between nodes,
 * 1600 inside; the sequence spanning, one node, spanning, one node, spanning, one node
 * (the pattern DP's run on the 48-GPU three-kind bench row, 2026-11-27). Followed, every
 * replica keeps its node while it has room, the one that crossed into the stage before
 * first, so at every boundary one replica crosses, alone on the interfaces, the two in
 * turn: no stage's replica crosses twice. The placement written out below (nodes a, b,
 * c; 12 GPUs, all used). Whole nodes first, or spread, both replicas cross together at
 * some boundary (3.2 s against 1.6 s of hand-offs at least: 0.32 s a crossing
 * micro-batch alone, 0.64 s two sharing). The decode must be as fast as the placement
 * written out, and cross as it does. */
TEST(pattern_decode_follows_each_replica_through_a_run_of_one_class)
{
  static const char model[] =
    "{ \"name\": \"run\", \"input_bytes\": 1000, \"layers\": ["
    "  { \"name\": \"l0\", \"params\": 1000, \"act_bytes\": 1e6, \"out_bytes\": 4e8, \"flops\": 1e12 },"
    "  { \"name\": \"l1\", \"params\": 1000, \"act_bytes\": 1e6, \"out_bytes\": 4e8, \"flops\": 1e12 },"
    "  { \"name\": \"l2\", \"params\": 1000, \"act_bytes\": 1e6, \"out_bytes\": 4e8, \"flops\": 1e12 },"
    "  { \"name\": \"l3\", \"params\": 1000, \"act_bytes\": 1e6, \"out_bytes\": 4e8, \"flops\": 1e12 },"
    "  { \"name\": \"l4\", \"params\": 1000, \"act_bytes\": 1e6, \"out_bytes\": 4e8, \"flops\": 1e12 },"
    "  { \"name\": \"l5\", \"params\": 1000, \"act_bytes\": 1e6, \"out_bytes\": 4, \"flops\": 1e12 } ] }";
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 8, \"tflops\": 100, \"efficiency\": 0.5 } },"
    "  \"nodes\": ["
    "    { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 1600, \"intra_lat_us\": 2 },"
    "    { \"name\": \"b\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 1600, \"intra_lat_us\": 2 },"
    "    { \"name\": \"c\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 1600, \"intra_lat_us\": 2 } ],"
    "  \"inter_gbps\": 10, \"inter_lat_us\": 10 }";
  /* the follow placement: stage s, replica q -> device (nodes a 0-3, b 4-7, c 8-11) */
  static const int want[6][2] = { { 0, 4 }, { 1, 2 }, { 8, 3 }, { 9, 10 }, { 5, 11 }, { 6, 7 } };
  hp_problem *p = fx_problem(model, cluster, NULL, 8, HP_1F1B);
  hp_classes cl;
  hp_patterns pt;
  hp_plan *pl = NULL, *hand = NULL;
  hp_pat_result r;
  hp_diag d = {0};
  hp_config c = { 6, 1, 2, 1 };
  int found = 0, pp = 6;
  memset(&r, 0, sizeof r);
  CHECK(p != NULL);
  if (!p) return;
  CHECK(build_patterns(p, &c, &cl, &pl, &pt));
  int one = hp_patterns_find(&pt, 1u, 1), span = -1;
  for (int k = 0; k < pt.n_kind; k++)
    if (pt.kind[k].mask == 1u && !pt.kind[k].single && pt.kind[k].own != 1) span = k;
  CHECK(one >= 0 && span >= 0);
  r.found = 1;
  r.first = calloc((size_t)pp + 1, sizeof *r.first);
  r.kind = calloc((size_t)pp, sizeof *r.kind);
  r.rec = calloc((size_t)pp, 1);
  CHECK(r.first && r.kind && r.rec);
  if (one >= 0 && span >= 0 && r.first && r.kind && r.rec) {
    for (int s = 0; s <= pp; s++) r.first[s] = s;
    for (int s = 0; s < pp; s++) r.kind[s] = s % 2 ? one : span;
    CHECK(hp__pattern_plan(p, &pt, &r, INFINITY, NULL, pl, &found, &d) == HP_OK && found);
  }
  if (found && hp_plan_copy(&hand, pl, &d) == HP_OK) {
    hp_eval e = {0}, eh = {0};
    CHECK(hp_plan_validate(p, pl, &d) == HP_OK);
    for (int s = 0; s < pp; s++)
      for (int q = 0; q < 2; q++) hand->dev[HP_SLOT(hand, s, q, 0)] = want[s][q];
    CHECK(hp_plan_validate(p, hand, &d) == HP_OK);
    for (int s = 0; s + 1 < pp; s++) {            /* one replica crosses, the two in turn */
      int crossing = 0, who = -1;
      for (int q = 0; q < 2; q++)
        if (pl->dev[HP_SLOT(pl, s, q, 0)] / 4 != pl->dev[HP_SLOT(pl, s + 1, q, 0)] / 4) {
          crossing++;
          who = q;
        }
      CHECK_INT(crossing, 1);
      if (s > 0 && crossing == 1) {
        int before = pl->dev[HP_SLOT(pl, s - 1, who, 0)] / 4 != pl->dev[HP_SLOT(pl, s, who, 0)] / 4;
        CHECK(!before);
      }
    }
    CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible);
    CHECK(hp_evaluate(p, hand, &eh, &d) == HP_OK && eh.feasible);
    CHECK_NEAR(e.iteration_time, eh.iteration_time, 1e-12);
    hp_eval_release(&e);
    hp_eval_release(&eh);
  }
  CHECK(found);
  hp_plan_destroy(&hand);
  hp__pat_result_release(&r);
  release_patterns(&cl, &pl, &pt);
  hp_problem_destroy(&p);
}

/* The bound of configuration c (exact count), NAN if it did not run to its end. */
static double exact_bound(const hp_problem *p, const hp_config *c)
{
  hp_classes cl;
  hp_diag d = {0};
  double t;
  if (hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d)) return NAN;
  double b = pattern_bound(p, &cl, c, 1, &t);
  hp_classes_release(&cl);
  return b;
}

#ifdef HP_HAVE_CBC
/* The pattern MIP of configuration c solved by CBC (bp_mip_optimum), with the time of the
 * plan its solution decodes to in *decoded; NAN where the classes do not build. */
static double cbc_pattern_mip(const hp_problem *p, const hp_config *c, double *decoded)
{
  hp_classes cl;
  hp_diag d = {0};
  double v;
  *decoded = INFINITY;
  if (hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d)) return NAN;
  v = bp_mip_optimum(hp__cbc_solve_mip, p, &cl, c, decoded);
  hp_classes_release(&cl);
  return v;
}
#endif

/* The optimizer step enters the bound. fx_tiny_model: 11e6 parameters, F = 11e12 per
 * sample; 16 state bytes (opt 12), so update_bytes 2 x 12 + 2 + 2 = 28: upd = 308e6 bytes.
 * One GPU of 100 TFLOPS at 0.5: t = 11e12 / 50e12 = 0.22 s, gbs 1: T = 0.22 + upd / hbm,
 * 308e6 / 1e12 = 0.308 ms. Two GPUs on one node (800 Gbit/s = 100 GB/s, 2 us), dp 2, gbs
 * 2, modes dp and zdp: red = 2 (1/2) 22e6 / 100e9 + 2 x 2 us = 0.224 ms. Sharding a
 * fraction adds 0.33 ms x f per micro-batch (gather 0.22, scatter 0.11), saves 0.22 ms x f
 * of sync and (1/2) upd / hbm x f of step: at hbm 2000 GB/s 0.077 ms <= 0.11, so the bound
 * keeps the whole step, 0.154 ms, and equals the all-dp plan (0.220378 s); at 1000 GB/s
 * 0.154 ms > 0.11: the optimum is then all zdp, 0.22 + 0.332 ms (gather, scatter) + 4 us
 * (sync latency) + 0.154 ms (the sharded step 308e6 / 2 / 1e12); the bound's one
 * sharding option (pattern_shard.c: each figure's least over dp and zdp) reaches it but
 * for the scatter's latency (dp, which it covers too, has none): 2 us below. */
TEST(pattern_bound_counts_the_optimizer_step)
{
  static const char one_gpu[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 1, \"tflops\": 100, \"efficiency\": 0.5,"
    "    \"hbm_gbs\": 1000 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 1, \"intra_gbps\": 800 } ] }";
  static const char two_gpus[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 1, \"tflops\": 100, \"efficiency\": 0.5,"
    "    \"hbm_gbs\": %d } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800,"
    "    \"intra_lat_us\": 2 } ] }";
  char text[512];
  hp_problem *p = fx_problem(fx_tiny_model, one_gpu, NULL, 1, HP_1F1B);
  hp_config c1 = { 1, 1, 1, 1 }, c2 = { 1, 1, 2, 1 };
  CHECK_NEAR(exact_bound(p, &c1), 0.22 + 0.308e-3, 1e-12);
  CHECK_NEAR(ri_brute_config(p, &c1), 0.22 + 0.308e-3, 1e-12);
  hp_problem_destroy(&p);
  for (int hbm = 1000; hbm <= 2000; hbm += 1000) {
    snprintf(text, sizeof text, two_gpus, hbm);
    p = fx_problem(fx_tiny_model, text, NULL, 2, HP_1F1B);
    p->job.sharding = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP;
    double opt = hbm == 2000 ? 0.22 + 0.224e-3 + 0.154e-3 : 0.22 + 0.332e-3 + 0.004e-3 + 0.154e-3;
    /* at 1000 GB/s the one option (dp and zdp both covered) leaves out Zr's latency, 2 us */
    CHECK_NEAR(exact_bound(p, &c2), hbm == 2000 ? opt : opt - 2e-6, 1e-12);
    CHECK_NEAR(ri_brute_config(p, &c2), opt, 1e-12);
    hp_problem_destroy(&p);
  }
}

/* Two nodes of two GPUs (800 Gbit/s, 2 us inside; 80 Gbit/s, 10 us between), pp 4, dp 1,
 * one layer of fx_tiny_model per stage (0.02, 0.08, 0.08, 0.04 s), gbs 4: gas 4. A
 * hand-off of O = 1e6 bytes costs 2e6 / 100e9 + 4 us = 24 us inside a node, 2e6 / 10e9 +
 * 20 us = 220 us between. No node holds three stages, so a middle stage has one hand-off
 * between nodes: its period is at least 0.08 + (24 + 220) / 2 us, so M = gas t - t + (gas
 * - 1) 122 us = 0.240366; and of two consecutive boundaries one is crossed between nodes
 * (the DP's bit), so S = 0.22 + (24 + 220 + 24) us: bound 0.460634, the optimum (nodes
 * a a b b: 3 x 0.080122 + 0.22 + (24 + 220 + 24) us). It was 0.460438 with every boundary
 * alone inside a node, 0.460144 without the period's rule. The pattern MIP (its z_s) is
 * the same. */
TEST(pattern_bound_sends_one_hand_off_of_a_middle_stage_between_nodes_when_none_holds_three)
{
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 1, \"tflops\": 100, \"efficiency\": 0.5 } },"
    "  \"nodes\": ["
    "    { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"b\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 } ],"
    "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";
  hp_problem *p = fx_problem(fx_tiny_model, cluster, NULL, 4, HP_1F1B);
  hp_config c = { 4, 1, 1, 1 };
  CHECK_NEAR(exact_bound(p, &c), 0.460634, 1e-12);
  CHECK_NEAR(ri_brute_config(p, &c), 0.460634, 1e-12);
#ifdef HP_HAVE_CBC
  {
    double decoded;
    CHECK_NEAR(cbc_pattern_mip(p, &c, &decoded), 0.460634, 1e-9);
    CHECK(decoded >= 0.460634 * (1 - 1e-12));     /* its plan is a plan */
  }
#endif
  hp_problem_destroy(&p);
}

/* Four nodes of four GPUs, 80 Gbit/s (10 GB/s) between them, 800 (100 GB/s) inside: pp 2,
 * tp 1, dp 8. No stage fits on one node (dp 8 > 4), so the spanning kind is split: on
 * nodes of its own (own 1), each of its two nodes holds 4 of its groups and every lane
 * leaves them: H_s(n) >= 4, 10 / 4 = 2.5 GB/s a lane, and no lane inside a node; sharing a
 * node with the other stage (own -1), which spans nodes too, R(n) >= 2 tp: its replica
 * groups see at most 10 / 2 = 5 GB/s, and a lane may stay inside a node (100 GB/s). */
TEST(pattern_spanning_kind_split_into_own_and_shared_nodes)
{
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 1, \"tflops\": 100, \"efficiency\": 0.5 } },"
    "  \"nodes\": ["
    "    { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 800 },"
    "    { \"name\": \"b\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 800 },"
    "    { \"name\": \"c\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 800 },"
    "    { \"name\": \"d\", \"type\": \"fast\", \"gpus\": 4, \"intra_gbps\": 800 } ],"
    "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";
  hp_problem *p = fx_problem(fx_tiny_model, cluster, NULL, 8, HP_1F1B);
  hp_classes cl;
  hp_patterns pt;
  hp_plan *pl;
  hp_config c = { 2, 1, 8, 1 };
  int own = -1, shared = -1, K;
  CHECK(build_patterns(p, &c, &cl, &pl, &pt));
  K = pt.n_kind;
  CHECK_INT(K, 2);                     /* no single-node kind; the one spanning kind, split */
  for (int k = 0; k < K; k++) {
    if (pt.kind[k].own == 1) own = k;
    if (pt.kind[k].own == -1) shared = k;
  }
  CHECK(own >= 0 && shared >= 0);
  if (own >= 0 && shared >= 0) {
    CHECK_NEAR(pt.hbw[own * K + own], 2.5e9, 1e-6);
    CHECK_NEAR(pt.hbw[own * K + shared], 2.5e9, 1e-6);
    CHECK_NEAR(pt.hbw[shared * K + own], 2.5e9, 1e-6);
    CHECK_NEAR(pt.hbw[shared * K + shared], 100e9, 1e-6);
    CHECK_NEAR(pt.kind[own].bdp, 10e9, 1e-6);
    CHECK_NEAR(pt.kind[shared].bdp, 5e9, 1e-6);
  }
  /* and the bound stays below every plan (brute force over the 16 devices is too much:
   * the evaluator on the two placements that realise each variant) */
  release_patterns(&cl, &pl, &pt);
  hp_problem_destroy(&p);
}

/* Three nodes of two GPUs, 80 Gbit/s (10 GB/s) between them: pp 3, tp 1, dp 2, every
 * device used. A stage may sit on one node (single: its dp 2 groups fill it), so single
 * kinds exist; but a spanning stage's node has room for one group of another stage only,
 * never for a single stage's two: that stage spans nodes too, R(n) >= 2 tp, and the
 * spanning kind's replica groups see at most 10 / 2 = 5 GB/s (was 10: the rule needed a
 * configuration with no single kind at all). Brute force over the 720 placements and
 * every split: the bound is the optimum, 0.32115 s (0.32107 under the old rule). */
TEST(pattern_shared_node_too_small_for_a_single_stage_halves_the_sync_bandwidth)
{
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 1, \"tflops\": 100, \"efficiency\": 0.5 } },"
    "  \"nodes\": ["
    "    { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800 },"
    "    { \"name\": \"b\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800 },"
    "    { \"name\": \"c\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800 } ],"
    "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";
  hp_problem *p = fx_problem(fx_tiny_model, cluster, NULL, 4, HP_1F1B);
  hp_classes cl;
  hp_patterns pt;
  hp_plan *pl;
  hp_config c = { 3, 1, 2, 1 };
  int single = -1, shared = -1;
  p->job.sharding = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP;
  CHECK(build_patterns(p, &c, &cl, &pl, &pt));
  for (int k = 0; k < pt.n_kind; k++) {
    if (pt.kind[k].single) single = k;
    if (pt.kind[k].own == -1) shared = k;
  }
  double b = exact_bound(p, &c), opt = ri_brute_config(p, &c);
  printf("  bound %.9f, brute-force optimum %.9f\n", b, opt);
  CHECK(single >= 0 && shared >= 0);
  if (shared >= 0) CHECK_NEAR(pt.kind[shared].bdp, 5e9, 1e-6);
  CHECK(b <= opt * (1 + 1e-12));
  CHECK_NEAR(opt, 0.32115, 1e-9);
  CHECK_NEAR(b, opt, 1e-9);
  release_patterns(&cl, &pl, &pt);
  hp_problem_destroy(&p);
}

/* Every group used, and a node whose groups are a multiple of dp (src/pattern.c, "full
 * nodes"): one node of four GPUs of type a, one GPU each of types b and c, 20 Gbit/s (2.5
 * GB/s) between nodes; pp 3, tp 1, dp 2, all six devices used. A single stage fits on the
 * node of a beside another stage's group (dp + 1 = 3 <= 4), which the old rule took to mean
 * that a spanning or mixing stage's node may hold nothing else that crosses. But a stage
 * with one group on that node leaves three, and single stages fill only pairs: another
 * stage with a group elsewhere is there, R(n) >= 2 tp, and the mixing kinds' replica groups
 * see at most 2.5 / 2 GB/s. Layers of 200 M parameters, so that the reduction counts. Brute
 * force over the 720 placements and every split: the bound is the optimum (0.921142 under
 * the old rule, 2026-11-27). */
TEST(pattern_full_node_of_a_multiple_of_dp_groups_halves_a_mixing_stages_sync_bandwidth)
{
  static const char model[] =
    "{ \"name\": \"full\", \"input_bytes\": 1000, \"layers\": ["
    "  { \"name\": \"l0\", \"params\": 2e8, \"act_bytes\": 1e6, \"out_bytes\": 1e7, \"flops\": 2e12 },"
    "  { \"name\": \"l1\", \"params\": 2e8, \"act_bytes\": 1e6, \"out_bytes\": 1e7, \"flops\": 2e12 },"
    "  { \"name\": \"l2\", \"params\": 2e8, \"act_bytes\": 1e6, \"out_bytes\": 1e7, \"flops\": 2e12 },"
    "  { \"name\": \"l3\", \"params\": 2e8, \"act_bytes\": 1e6, \"out_bytes\": 4, \"flops\": 2e12 } ] }";
  static const char cluster[] =
    "{ \"device_types\": {"
    "    \"a\": { \"mem_gib\": 40, \"tflops\": 100, \"efficiency\": 0.5 },"
    "    \"b\": { \"mem_gib\": 40, \"tflops\": 60, \"efficiency\": 0.5 },"
    "    \"c\": { \"mem_gib\": 40, \"tflops\": 50, \"efficiency\": 0.5 } },"
    "  \"nodes\": ["
    "    { \"name\": \"a0\", \"type\": \"a\", \"gpus\": 4, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"b0\", \"type\": \"b\", \"gpus\": 1 },"
    "    { \"name\": \"c0\", \"type\": \"c\", \"gpus\": 1 } ],"
    "  \"inter_gbps\": 20, \"inter_lat_us\": 10 }";
  hp_problem *p = fx_problem(model, cluster, NULL, 16, HP_1F1B);
  hp_classes cl;
  hp_patterns pt;
  hp_plan *pl;
  hp_config c = { 3, 1, 2, 1 };
  int mixing = 0;
  p->job.sharding = 1u << HP_SHARD_DP;
  CHECK(build_patterns(p, &c, &cl, &pl, &pt));
  for (int k = 0; k < pt.n_kind; k++)
    if (!pt.kind[k].single && __builtin_popcount(pt.kind[k].mask) == 2 &&
        (pt.kind[k].mask & 1u << cl.node_class[0])) {   /* a with b, a with c */
      mixing++;
      CHECK_NEAR(pt.kind[k].bdp, 1.25e9, 1e-6);
    }
  CHECK_INT(mixing, 2);
  double b = exact_bound(p, &c), opt = ri_brute_config(p, &c);
  printf("  bound %.9f, brute-force optimum %.9f\n", b, opt);
  CHECK(b <= opt * (1 + 1e-12));
  CHECK_NEAR(b, opt, 1e-9);
  CHECK(b > 0.921142 * 1.01);
  release_patterns(&cl, &pl, &pt);
  hp_problem_destroy(&p);
}

/* The same rule on random instances: one node of four GPUs of type a beside either one
 * GPU of b and one of c, or a node of two GPUs of b; random peaks, layer figures (3 or 4
 * layers), links (node figures, or a slower link from the node of a), modes (dp, or dp and
 * zdp) and schedules; pp 3 tp 1 dp 2 (every device used), mbs 1 and 2. The DP's bound is
 * never above the brute-force optimum, and the pattern MIP's optimum (CBC, in a child
 * process) lies between the two: both take the kinds' figures, the halved sync among
 * them. Tolerance: relative 1e-9. Measured 2026-11-27: the DP bound at the optimum on 24 of
 * the 80 configurations, on 20 without the rule. */
/* Under AddressSanitizer the brute force and the DP run about 25 times slower */
#if defined(__SANITIZE_ADDRESS__)
#define FULL_SEEDS 6
#else
#define FULL_SEEDS 40
#endif
TEST(pattern_full_node_bounds_never_above_brute_force_on_40_random_instances)
{
  int n = harness_count(FULL_SEEDS), configs = 0, tight = 0, bad = 0;
  for (int seed = 1; seed <= n; seed++) {
    char model[2048], cluster[2048];
    unsigned long long st = 0x5bd1e995ULL * (unsigned long long)seed + 7;
    int nl = 3 + (fx_draw(&st, 0, 1) < 0.5), len, two = fx_draw(&st, 0, 1) < 0.5;
    int zdp = fx_draw(&st, 0, 1) < 0.5, gpipe = fx_draw(&st, 0, 1) < 0.3;
    len = snprintf(model, sizeof model, "{ \"name\": \"m\", \"input_bytes\": 1000, \"layers\": [");
    for (int l = 0; l < nl; l++)
      len += snprintf(model + len, sizeof model - (size_t)len, "%s{ \"name\": \"l%d\", \"params\": %.4g, "
                      "\"act_bytes\": 1e6, \"out_bytes\": %.4g, \"flops\": %.4g }", l ? "," : "", l,
                      fx_log(&st, 1e6, 4e8), l + 1 < nl ? fx_log(&st, 1e5, 1e8) : 4.0,
                      fx_log(&st, 2e11, 4e12));
    snprintf(model + len, sizeof model - (size_t)len, "] }");
    double inter = fx_log(&st, 2, 100), slow = inter * fx_draw(&st, 0.1, 1);
    len = snprintf(cluster, sizeof cluster,
                   "{ \"name\": \"full-%d\", \"device_types\": {"
                   " \"a\": { \"mem_gib\": 40, \"tflops\": %.4g, \"efficiency\": 0.5 },"
                   " \"b\": { \"mem_gib\": 40, \"tflops\": %.4g, \"efficiency\": 0.5 },"
                   " \"c\": { \"mem_gib\": 40, \"tflops\": %.4g, \"efficiency\": 0.5 } },"
                   " \"nodes\": [ { \"name\": \"a0\", \"type\": \"a\", \"gpus\": 4, \"intra_gbps\": %.4g, "
                   "\"intra_lat_us\": 2 }, ", seed, fx_log(&st, 30, 300), fx_log(&st, 30, 300),
                   fx_log(&st, 30, 300), fx_log(&st, 200, 2000));
    if (two)
      len += snprintf(cluster + len, sizeof cluster - (size_t)len,
                      "{ \"name\": \"b0\", \"type\": \"b\", \"gpus\": 2, \"intra_gbps\": %.4g } ],",
                      fx_log(&st, 100, 1000));
    else
      len += snprintf(cluster + len, sizeof cluster - (size_t)len,
                      "{ \"name\": \"b0\", \"type\": \"b\", \"gpus\": 1 }, "
                      "{ \"name\": \"c0\", \"type\": \"c\", \"gpus\": 1 } ],");
    if (fx_draw(&st, 0, 1) < 0.5)
      len += snprintf(cluster + len, sizeof cluster - (size_t)len,
                      " \"links\": [ { \"a\": \"a0\", \"b\": \"b0\", \"gbps\": %.4g, \"lat_us\": 5 } ],", slow);
    snprintf(cluster + len, sizeof cluster - (size_t)len, " \"inter_gbps\": %.4g, \"inter_lat_us\": 10 }", inter);
    hp_problem *p = fx_problem(model, cluster, NULL, 8L << (int)fx_draw(&st, 0, 2.99),
                               gpipe ? HP_GPIPE : HP_1F1B);
    hp_classes cl;
    hp_diag d = {0};
    p->job.sharding = 1u << HP_SHARD_DP | (zdp ? 1u << HP_SHARD_ZDP : 0);
    CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
    for (int mbs = 1; mbs <= 2; mbs++) {
      hp_config c = { 3, 1, 2, mbs };
      double bf = ri_brute_config(p, &c), b = bp_dp_bound(p, &cl, &c, -1, 0, INFINITY, NULL), dec;
      double mip = bp_mip_optimum_in_child(hp__cbc_solve_mip, p, &cl, &c, &dec);
      configs++;
      tight += isfinite(bf) && fabs(b - bf) <= 1e-9 * bf;
      if (!(b <= bf * (1 + 1e-9)) || !(mip >= b * (1 - 1e-9)) || !(mip <= bf * (1 + 1e-9))) {
        fprintf(stderr, "  VIOLATION seed %d mbs %d: DP bound %.12g, pattern MIP %.12g, brute force "
                "%.12g\n    %s\n    %s\n", seed, mbs, b, mip, bf, model, cluster);
        bad++;
      }
    }
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d configurations, the DP bound at the brute-force optimum on %d\n", configs, tight);
  CHECK(configs > 0);
  CHECK_INT(bad, 0);
}

/* Middle stages that mix classes, where the hand-offs alternate (pattern_dp.c): three
 * nodes of 2 GPUs (a fast and a slow type), pp 3 tp 1 dp 2, so that a stage's two groups
 * span two nodes and no node holds one replica's groups of three stages (the bit), with
 * links of their own between the node pairs and three layers (the brute force walks every
 * placement of the 6 devices). The random families of the other tests never reach a
 * middle stage with dp 2. At a stage mixing classes the period may take only the pair
 * every replica pays: the bound against the brute-force optimum, on instances where some
 * pair of kinds cannot chain and the best sequence mixes classes at a stage. */
static unsigned long alt_state;
static double alt_rnd(void)
{
  alt_state = alt_state * 6364136223846793005UL + 1442695040888963407UL;
  return (double)(alt_state >> 11) / 9007199254740992.0;
}

TEST(pattern_bound_with_alternating_hand_offs_and_mixed_stages_never_exceeds_brute_force)
{
  int n = harness_count(100), tried = 0, alternating = 0, mixed = 0;
  for (int seed = 1; seed <= n; seed++) {
    char model[2048], cluster[2048];
    int len, t2;
    double slow;
    alt_state = (unsigned long)seed * 7919 + 3;
    len = snprintf(model, sizeof model, "{ \"name\": \"m\", \"input_bytes\": 1000, \"layers\": [");
    for (int l = 0; l < 3; l++)
      len += snprintf(model + len, sizeof model - (size_t)len, "%s{ \"name\": \"l%d\", \"params\": %.3g, "
                      "\"act_bytes\": 1e6, \"out_bytes\": %.3g, \"flops\": %.3g }", l ? "," : "", l,
                      1e6 * (1 + 4 * alt_rnd()), 1e6 * (1 + 30 * alt_rnd()), 1e12 * (1 + 4 * alt_rnd()));
    snprintf(model + len, sizeof model - (size_t)len, "] }");
    t2 = alt_rnd() < 0.5;
    slow = 20 + 60 * alt_rnd();
    {
      double ab = 0.2 + 10 * alt_rnd(), bc = 0.2 + 10 * alt_rnd(), ac = 0.2 + 10 * alt_rnd();
      snprintf(cluster, sizeof cluster,
               "{ \"name\": \"c\", \"device_types\": { \"fast\": { \"mem_gib\": 8, \"tflops\": 100, "
               "\"efficiency\": 0.5 }, \"slow\": { \"mem_gib\": 8, \"tflops\": %.3g, \"efficiency\": 0.5 } },"
               " \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 2000, "
               "\"intra_lat_us\": 1 }, { \"name\": \"b\", \"type\": \"slow\", \"gpus\": 2, \"intra_gbps\": 2000, "
               "\"intra_lat_us\": 1 }, { \"name\": \"c\", \"type\": \"%s\", \"gpus\": 2, \"intra_gbps\": 2000, "
               "\"intra_lat_us\": 1 } ], \"links\": [ { \"a\": \"a\", \"b\": \"b\", \"gbps\": %.3g, \"lat_us\": 5 },"
               " { \"a\": \"b\", \"b\": \"c\", \"gbps\": %.3g, \"lat_us\": 5 }, { \"a\": \"a\", \"b\": \"c\", "
               "\"gbps\": %.3g, \"lat_us\": 5 } ], \"inter_gbps\": %.3g, \"inter_lat_us\": 5 }",
               slow, t2 ? "slow" : "fast", ab, bc, ac, 0.2 + 3 * alt_rnd());
    }
    long gbs = 2 * (2 + (long)(30 * alt_rnd()));
    hp_problem *p = fx_problem(model, cluster, NULL, gbs, HP_1F1B);
    hp_classes cl;
    hp_diag d = {0};
    ri_cert_scope(p);
    CHECK(hp_classes_build(p, HP_PATTERN_MAX_CLASSES, &cl, &d) == HP_OK);
    for (int mbs = 1; mbs <= 4; mbs *= 2) {
      hp_config c = { 3, 1, 2, mbs };
      hp_plan *pl = NULL;
      hp_patterns pt;
      hp_pat_opts o;
      hp_pat_result r;
      int alt = 0;
      if (gbs % (2 * mbs)) continue;
      if (hp__plan_for(p, &c, &pl, &d) || hp_patterns_build(p, &cl, pl, &pt, &d)) { hp_plan_destroy(&pl); continue; }
      for (size_t ab = 0; ab < (size_t)pt.n_kind * pt.n_kind; ab++) alt |= !pt.chain[ab] && pt.ibw[ab] > 0;
      hp__pat_opts_init(&o);
      CHECK(hp__pattern_bound(p, &pt, &o, &r, &d) == HP_OK && r.done);
      double bf = ri_brute_config(p, &c);
      if (!(r.bound <= bf * (1 + 1e-9) + 1e-12))
        fprintf(stderr, "  seed %d mbs %d gbs %ld: bound %.9g above the brute force %.9g\n", seed, mbs, gbs, r.bound, bf);
      CHECK(r.bound <= bf * (1 + 1e-9) + 1e-12);
      tried++;
      alternating += alt;
      if (alt && r.found)
        for (int s = 0; s < c.pp; s++) mixed += __builtin_popcount(pt.kind[r.kind[s]].mask) > 1;
      hp__pat_result_release(&r);
      hp_patterns_release(&pt);
      hp_plan_destroy(&pl);
    }
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d configurations, %d with hand-offs that alternate, %d mixed stages in their best "
          "sequences\n", tried, alternating, mixed);
  CHECK(alternating > n / 2);
  CHECK(mixed > 0);
}

/* A middle stage of one class pays its path's hand-offs in and out together (pattern_dp.c,
 * P): nodes s1 (slow, 1 GPU, 32 GiB), f1 and f2 (fast, 2 GPUs each, 1 GiB), s2 (slow, 1),
 * 10 GB/s between nodes, 100 GB/s inside; five layers of 1e12 FLOPs and 1e8 output bytes,
 * the first and last with 1e9 parameters (16 GB of states: only a slow GPU holds them);
 * pp 5 tp 1 dp 1, gas 16, idle devices allowed. A layer takes 20 ms on a fast GPU, 25 on a
 * slow one; a hand-off 2 ms (+ 2 us) inside a node, 20 ms (+ 10 us) between. The order is
 * slow, fast, fast, fast, slow: no node holds the three fast stages, so the replica
 * crosses between nodes into one of them and out of it, a period of 20 + (20 + 20) / 2 = 40
 * ms (the slow stages' 25 + 20 / 2 = 35): T = 15 x 40 + 110 + 3 x 20.01 + 2.002 ms + the
 * step, 0.772364 s, the brute-force optimum. The bound took that stage's crossing in and
 * its crossing out at different stages' least (P with the least incoming hand-off any
 * replica pays): 0.697214, periods of 35 ms. */
TEST(pattern_bound_charges_a_one_class_stage_its_path_crossing_in_and_out)
{
  static const char model[] =
    "{ \"name\": \"m\", \"input_bytes\": 1000, \"layers\": ["
    "  { \"name\": \"l0\", \"params\": 1e9, \"act_bytes\": 1e3, \"out_bytes\": 1e8, \"flops\": 1e12 },"
    "  { \"name\": \"l1\", \"params\": 1e3, \"act_bytes\": 1e3, \"out_bytes\": 1e8, \"flops\": 1e12 },"
    "  { \"name\": \"l2\", \"params\": 1e3, \"act_bytes\": 1e3, \"out_bytes\": 1e8, \"flops\": 1e12 },"
    "  { \"name\": \"l3\", \"params\": 1e3, \"act_bytes\": 1e3, \"out_bytes\": 1e8, \"flops\": 1e12 },"
    "  { \"name\": \"l4\", \"params\": 1e9, \"act_bytes\": 1e3, \"out_bytes\": 1e8, \"flops\": 1e12 } ] }";
  static const char cluster[] =
    "{ \"device_types\": { \"fast\": { \"mem_gib\": 1, \"tflops\": 100, \"efficiency\": 0.5 },"
    "                      \"slow\": { \"mem_gib\": 32, \"tflops\": 80, \"efficiency\": 0.5 } },"
    "  \"nodes\": ["
    "    { \"name\": \"s1\", \"type\": \"slow\", \"gpus\": 1, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"f1\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"f2\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"s2\", \"type\": \"slow\", \"gpus\": 1, \"intra_gbps\": 800, \"intra_lat_us\": 2 } ],"
    "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";
  hp_problem *p = fx_problem(model, cluster, NULL, 16, HP_1F1B);
  hp_config c = { 5, 1, 1, 1 };
  p->job.sharding = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP;
  p->job.idle_devices = 1;
  double b = exact_bound(p, &c), opt = ri_brute_config(p, &c);
  printf("  bound %.9f, brute-force optimum %.9f\n", b, opt);
  CHECK(b <= opt * (1 + 1e-12));
  CHECK_NEAR(b, opt, 1e-9);
#ifdef HP_HAVE_CBC
  {
    /* the pattern MIP (its pc rows: r*'s hand-offs of each middle stage) is not below it */
    double decoded, mip = cbc_pattern_mip(p, &c, &decoded);
    printf("  pattern MIP %.9f, its plan %.9f\n", mip, decoded);
    CHECK(mip >= b * (1 - 1e-9));
    CHECK(mip <= opt * (1 + 1e-9));
    CHECK(decoded >= opt * (1 - 1e-12));
  }
#endif
  hp_problem_destroy(&p);
}
