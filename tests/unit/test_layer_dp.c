/* test_layer_dp.c -- the layer DP against brute force under cost model 1.2: for a fixed
 * configuration and placement, every partition of the layers into stages and every
 * per-stage choice of recompute and sharding (each of the job's modes for the whole
 * stage; when the least-sharded mode does not fit, the shortest suffix in another mode
 * that fits) is scored by the evaluator; the DP's plan must reach the minimum exactly,
 * with memory binding, steady-state hand-offs, layers that recompute leaves alone and
 * an optimizer step. Then the job's sharding list, uniform_sharding and idle devices. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "../../solvers/search.h"

/* Eight unequal layers: sizes cycle so that no even split is right; the first and the
 * last are not checkpointable (an embedding and a head: recompute leaves them alone). */
static const char model8[] =
  "{ \"input_bytes\": 1e5, \"layers\": ["
  "{ \"name\": \"l0\", \"params\": 2e6, \"act_bytes\": 3e6, \"out_bytes\": 1e6, \"flops\": 1e12, \"tp_comm_bytes\": 1e6, \"checkpointable\": false },"
  "{ \"name\": \"l1\", \"params\": 4e6, \"act_bytes\": 6e6, \"out_bytes\": 2e6, \"flops\": 2e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l2\", \"params\": 6e6, \"act_bytes\": 9e6, \"out_bytes\": 1e6, \"flops\": 3e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l3\", \"params\": 2e6, \"act_bytes\": 12e6, \"out_bytes\": 3e6, \"flops\": 4e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l4\", \"params\": 4e6, \"act_bytes\": 3e6, \"out_bytes\": 1e6, \"flops\": 5e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l5\", \"params\": 6e6, \"act_bytes\": 6e6, \"out_bytes\": 2e6, \"flops\": 1e12, \"tp_comm_bytes\": 1e6 },"
  "{ \"name\": \"l6\", \"params\": 2e6, \"act_bytes\": 9e6, \"out_bytes\": 1e6, \"flops\": 2e12, \"splittable\": false },"
  "{ \"name\": \"l7\", \"params\": 8e6, \"act_bytes\": 12e6, \"out_bytes\": 4, \"flops\": 3e12, \"tp_comm_bytes\": 1e6, \"checkpointable\": false } ] }";

static char cluster_buf[1024];

/* The tiny two-kind cluster with a given capacity per GPU (GiB); the types' memory
 * bandwidths make the optimizer step a term (hbm_gbs). */
static const char *cluster(double mem_gib)
{
  snprintf(cluster_buf, sizeof cluster_buf,
           "{ \"device_types\": {"
           "  \"fast\": { \"mem_gib\": %g, \"tflops\": 100, \"efficiency\": 0.5, \"hbm_gbs\": 200 },"
           "  \"slow\": { \"mem_gib\": %g, \"tflops\": 40, \"efficiency\": 0.5, \"hbm_gbs\": 90 } },"
           "  \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
           "    { \"name\": \"b\", \"type\": \"slow\", \"gpus\": 2, \"intra_gbps\": 400, \"intra_lat_us\": 4 } ],"
           "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }", mem_gib, mem_gib);
  return cluster_buf;
}

/* What a test sets in the job beside gbs and the schedule. */
typedef struct job_opts { unsigned sharding; int uniform; } job_opts;

static hp_problem *problem(double mem_gib, long gbs, job_opts j)
{
  hp_problem *p = fx_problem(model8, cluster(mem_gib), NULL, gbs, HP_1F1B);
  p->job.sharding = j.sharding;
  p->job.uniform_sharding = j.uniform;
  return p;
}

/* Whether stage s of the plan fits in memory as it stands (every device of a stage
 * holds the same bytes; the first device stands for it). */
static int stage_fits(const hp_problem *p, const hp_plan *pl, int s)
{
  hp_eval e = {0};
  int dv = pl->dev[(size_t)s * pl->dp * pl->tp], fits;
  fits = hp_evaluate(p, pl, &e, NULL) == HP_OK && e.mem[dv] <= e.cap[dv];
  hp_eval_release(&e);
  return fits;
}

/* A stage's sharding choice: `mode` for layers first..zfrom-1, `smode` from zfrom on
 * (zfrom = first: the whole stage in smode). */
typedef struct choice { int zfrom, mode, smode; } choice;

static void shard(hp_plan *pl, int s, choice c)
{
  for (int l = pl->first[s]; l < pl->first[s + 1]; l++) pl->mode[l] = (unsigned char)(l < c.zfrom ? c.mode : c.smode);
}

/* The choices of stage s under the job: each allowed mode for the whole stage (one mode,
 * the least-sharded, when dp = 1: every mode is dp there), then for every other allowed
 * mode every proper suffix with the rest in the least-sharded mode (unless uniform). */
static int choices(const hp_problem *p, const hp_plan *pl, int s, choice *out)
{
  unsigned modes = hp_job_modes(&p->job);
  int n = 0, base = -1, first = pl->first[s], last = pl->first[s + 1] - 1;
  for (int m = 0; m < HP_N_SHARD; m++)
    if (modes >> m & 1u) {
      if (base < 0) base = m;
      out[n++] = (choice){ first, m, m };
      if (pl->dp == 1) break;
    }
  if (p->job.uniform_sharding || pl->dp == 1) return n;
  for (int m = base + 1; m < HP_N_SHARD; m++)
    if (modes >> m & 1u)
      for (int k = first + 1; k <= last; k++) out[n++] = (choice){ k, base, m };
  return n;
}

/* Whether a suffix choice is the DP's: the stage in its least-sharded mode overflows,
 * and it is the shortest suffix in its mode that fits (whole-stage choices are always
 * the DP's). */
static int dp_choice(const hp_problem *p, hp_plan *pl, int s, choice c)
{
  int ok = 1;
  if (c.zfrom == pl->first[s]) return 1;
  shard(pl, s, (choice){ pl->first[s], c.mode, c.mode });
  if (stage_fits(p, pl, s)) ok = 0;
  for (int k = pl->first[s + 1] - 1; ok && k > c.zfrom; k--) {   /* a shorter one fits */
    shard(pl, s, (choice){ k, c.mode, c.smode });
    if (stage_fits(p, pl, s)) ok = 0;
  }
  shard(pl, s, c);
  return ok && stage_fits(p, pl, s);
}

/* Minimum evaluator time over the DP's space: all partitions, per-stage recompute, and
 * per-stage sharding choices (above; one mode for every layer under uniform_sharding). */
static double brute(const hp_problem *p, hp_plan *pl, long *fitting, long *tried)
{
  int L = pl->n_layers, pp = pl->pp;
  double best = INFINITY;
  for (int s = 0; s < pp; s++) pl->first[s] = s;
  pl->first[pp] = L;
  *fitting = *tried = 0;
  do {
    for (int rm = 0; rm < (1 << pp); rm++) {
      choice ch[8][32];
      int at[8] = {0}, n_ch[8];
      for (int s = 0; s < pp; s++) {
        pl->recompute[s] = (unsigned char)((rm >> s) & 1);
        n_ch[s] = choices(p, pl, s, ch[s]);
      }
      for (;;) {
        int allowed = 1;
        for (int s = 0; s < pp; s++) shard(pl, s, ch[s][at[s]]);
        for (int s = 1; s < pp && p->job.uniform_sharding; s++)
          allowed = allowed && ch[s][at[s]].smode == ch[0][at[0]].smode;
        for (int s = 0; s < pp && allowed; s++) allowed = dp_choice(p, pl, s, ch[s][at[s]]);
        for (int s = 0; s < pp; s++) shard(pl, s, ch[s][at[s]]);
        if (allowed) {
          hp_eval e = {0};
          (*tried)++;
          if (hp_evaluate(p, pl, &e, NULL) == HP_OK && e.feasible) {
            (*fitting)++;
            if (e.iteration_time < best) best = e.iteration_time;
          }
          hp_eval_release(&e);
        }
        int s = 0;
        while (s < pp && ++at[s] >= n_ch[s]) at[s++] = 0;
        if (s == pp) break;
      }
    }
  } while (hp__next_cuts(pl->first, pl->pp, L));
  return best;
}

typedef struct outcome {
  double time;      /* the evaluator's time of the DP's plan (INFINITY: none) */
  double obj;       /* the DP's own figure */
  double brute;     /* the brute-force minimum */
  long fitting, tried;
  unsigned used;    /* the modes of the DP's plan, a mask */
  int recomputes;   /* stages of the DP's plan that recompute */
} outcome;

/* Runs the DP and brute force on one configuration and placement (devices in slot
 * order). */
static outcome compare(double mem_gib, job_opts j, int pp, int tp, int dp, int mbs, long gbs,
                       const int *dev)
{
  hp_problem *p = problem(mem_gib, gbs, j);
  hp_plan *pl = NULL, *bf = NULL;
  hp_diag d = {0};
  hp_dp_opts o;
  int found = 0;
  outcome r = { INFINITY, INFINITY, INFINITY, 0, 0, 0, 0 };
  hp_plan_create(&pl, pp, tp, dp, 8, &d);
  pl->mbs = mbs;
  hp_plan_set_gas(p, pl, &d);
  for (int i = 0; i < pp * tp * dp; i++) pl->dev[i] = dev[i];
  hp_plan_copy(&bf, pl, &d);
  hp__dp_opts_init(&o);
  if (hp__dp_split(p, pl, &o, &found, &r.obj, NULL, &d) == HP_OK && found) {
    hp_eval e = {0};
    if (hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible) r.time = e.iteration_time;
    hp_eval_release(&e);
    for (int l = 0; l < 8; l++) r.used |= 1u << pl->mode[l];
    for (int s = 0; s < pp; s++) r.recomputes += pl->recompute[s];
  }
  r.brute = brute(p, bf, &r.fitting, &r.tried);
  hp_plan_destroy(&pl);
  hp_plan_destroy(&bf);
  hp_problem_destroy(&p);
  return r;
}

static const job_opts all_modes = { 0, 0 };

TEST(layer_dp_equals_brute_force_on_a_heterogeneous_pipeline)
{
  static const int dev[] = { 0, 1, 2, 3 };   /* stages 0, 1 fast; 2, 3 slow */
  outcome r = compare(16, all_modes, 4, 1, 1, 1, 8, dev);
  CHECK(isfinite(r.brute));
  CHECK_INT(r.fitting, r.tried);   /* 16 GiB: everything fits */
  CHECK_NEAR(r.time, r.brute, 1e-12);
  CHECK_NEAR(r.obj, r.time, 1e-12);      /* dp = 1: the DP's figure is the evaluator's */
}

TEST(layer_dp_equals_brute_force_when_memory_binds)
{
  static const int dev[] = { 0, 1, 2, 3 };
  /* 0.2 GiB per GPU: a few of the 560 (split, recompute) choices fit, and the best of
   * them recomputes */
  outcome r = compare(0.2, all_modes, 4, 1, 1, 2, 8, dev);
  outcome f = compare(16, all_modes, 4, 1, 1, 2, 8, dev);
  CHECK(isfinite(r.brute));
  CHECK_INT(f.tried, 560);   /* 35 splits x 16 recompute flags (dp 1: one mode) */
  CHECK(r.fitting > 0 && r.fitting < f.fitting);   /* memory really binds */
  CHECK(r.brute > f.brute);
  CHECK(r.recomputes > 0);
  CHECK_NEAR(r.time, r.brute, 1e-12);
  CHECK_NEAR(r.obj, r.time, 1e-12);
}

TEST(layer_dp_equals_brute_force_with_replicas_sharding_and_tp)
{
  /* pp 2, dp 2: stage 0 on the fast node, stage 1 on the slow one; the replicas of a
   * stage are alike, so the DP is exact. Memory binds. */
  static const int dev2[] = { 0, 1, 2, 3 };
  static const int devtp[] = { 2, 3, 0, 1 };   /* pp 2, tp 2: slow node first */
  outcome r = compare(0.25, all_modes, 2, 1, 2, 1, 8, dev2);
  outcome f = compare(16, all_modes, 2, 1, 2, 1, 8, dev2);
  CHECK(r.fitting > 0 && r.fitting < f.fitting);   /* memory binds */
  CHECK(isfinite(r.brute));
  CHECK_NEAR(r.time, r.brute, 1e-12);
  CHECK_NEAR(r.obj, r.time, 1e-12);
  CHECK_NEAR(f.time, f.brute, 1e-12);
  CHECK_NEAR(f.obj, f.time, 1e-12);
  r = compare(0.2, all_modes, 2, 2, 1, 2, 8, devtp);
  f = compare(16, all_modes, 2, 2, 1, 2, 8, devtp);
  CHECK(isfinite(r.brute));
  CHECK(r.fitting > 0 && r.fitting < f.fitting);
  CHECK_NEAR(r.time, r.brute, 1e-12);
  CHECK_NEAR(r.obj, r.time, 1e-12);
}

TEST(layer_dp_is_an_upper_bound_when_replicas_differ)
{
  /* pp 2, dp 2 with each stage's replicas on different kinds: the DP charges every
   * stage its slowest replica, an upper bound on the evaluator's max over replicas. */
  static const int dev[] = { 0, 2, 1, 3 };
  outcome r = compare(16, all_modes, 2, 1, 2, 1, 8, dev);
  CHECK(isfinite(r.time));
  CHECK(r.obj >= r.time - 1e-12);
  CHECK(r.time >= r.brute - 1e-12);
}

TEST(layer_dp_reports_nothing_when_no_split_fits)
{
  static const int dev[] = { 0, 1, 2, 3 };
  outcome r = compare(0.01, all_modes, 4, 1, 1, 1, 8, dev);
  CHECK_INT(r.fitting, 0);
  CHECK(!isfinite(r.time));
}

TEST(layer_dp_chooses_zero1_over_dp_when_memory_binds)
{
  /* pp 1, dp 4 over both nodes, gas 2: the whole model (34e6 parameters: 544 MB of
   * replicated states, 60 MB of activations; 581 MB with recompute) does not fit 0.53 GiB
   * (569 MB) replicated, with or without recompute; ZeRO-1 (10 bytes a parameter: 400 MB
   * in all) does. A job of dp alone has no plan; one that allows zero1 gets the all-zero1
   * plan, exactly brute force's. */
  static const int dev[] = { 0, 1, 2, 3 };
  job_opts only_dp = { 1u << HP_SHARD_DP, 0 };
  job_opts dp_zero1 = { 1u << HP_SHARD_DP | 1u << HP_SHARD_ZERO1, 0 };
  outcome a = compare(0.53, only_dp, 1, 1, 4, 1, 8, dev);
  outcome b = compare(0.53, dp_zero1, 1, 1, 4, 1, 8, dev);
  CHECK_INT(a.fitting, 0);
  CHECK(!isfinite(a.time));
  CHECK(isfinite(b.time));
  CHECK_INT(b.used, 1u << HP_SHARD_ZERO1);
  CHECK_INT(b.recomputes, 0);
  CHECK_NEAR(b.time, b.brute, 1e-12);
  CHECK_NEAR(b.obj, b.time, 1e-12);
  /* with every mode allowed, zero1 still wins: zero2 and zdp reduce-scatter every
   * micro-batch, and zdp gathers the weights too */
  b = compare(0.53, all_modes, 1, 1, 4, 1, 8, dev);
  CHECK_INT(b.used, 1u << HP_SHARD_ZERO1);
  CHECK_NEAR(b.time, b.brute, 1e-12);
}

TEST(layer_dp_keeps_one_mode_under_uniform_sharding)
{
  /* pp 2, dp 2, a job of dp and zdp with memory binding: the free DP mixes the two (a
   * zdp suffix); under uniform_sharding every layer takes one mode, and the DP equals
   * brute force over the uniform plans, which is slower here. */
  static const int dev[] = { 0, 1, 2, 3 };
  job_opts mixed = { 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP, 0 };
  job_opts uni = { 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP, 1 };
  outcome f = compare(0.25, mixed, 2, 1, 2, 1, 8, dev);
  outcome u = compare(0.25, uni, 2, 1, 2, 1, 8, dev);
  CHECK(isfinite(u.time));
  CHECK(u.fitting < f.fitting);
  CHECK_INT(__builtin_popcount(u.used), 1);
  CHECK(__builtin_popcount(f.used) > 1);
  CHECK_NEAR(u.time, u.brute, 1e-12);
  CHECK_NEAR(u.obj, u.time, 1e-12);
  CHECK_NEAR(f.time, f.brute, 1e-12);
  CHECK(u.time > f.time);
}

/* Plans with the dp solver on a cluster of two fast nodes and a very slow one. */
static double plan_with_idle(int idle, int *n_used, int *slow_used)
{
  static const char slow_cluster[] =
    "{ \"device_types\": {"
    "  \"fast\": { \"mem_gib\": 16, \"tflops\": 100, \"efficiency\": 0.5 },"
    "  \"crawl\": { \"mem_gib\": 16, \"tflops\": 2, \"efficiency\": 0.5 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800 },"
    "    { \"name\": \"b\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800 },"
    "    { \"name\": \"c\", \"type\": \"crawl\", \"gpus\": 2, \"intra_gbps\": 800 } ],"
    "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";
  hp_problem *p = fx_problem(model8, slow_cluster, NULL, 16, HP_1F1B);
  hp_limits lim;
  hp_result r;
  hp_diag d = {0};
  double t = INFINITY;
  p->job.idle_devices = idle;
  hp_limits_init(&lim);
  lim.time_limit = 20;
  *n_used = *slow_used = -1;
  if (hp_solver_run(hp_solver_find("dp"), p, NULL, &lim, &r, &d) == HP_OK && r.plan && r.fits) {
    t = r.objective;
    *n_used = r.eval.n_used;
    *slow_used = !r.eval.idle[4] + !r.eval.idle[5];
  }
  hp_result_release(&r);
  hp_problem_destroy(&p);
  return t;
}

TEST(layer_dp_search_leaves_a_slow_node_idle_when_the_job_allows_it)
{
  int n0, s0, n1, s1;
  double all = plan_with_idle(0, &n0, &s0), some = plan_with_idle(1, &n1, &s1);
  CHECK(isfinite(all) && isfinite(some));
  CHECK_INT(n0, 6);          /* without idle_devices every device works */
  CHECK_INT(n1, 4);          /* with it the slow node is left out */
  CHECK_INT(s1, 0);
  CHECK(some < 0.5 * all);   /* 50 times slower GPUs: leaving them out pays */
}
