/* test_placement_descent.c -- the placement descent (solvers/placement_descent.c) on tiny
 * random instances of three or four GPU kinds (ri_problem_kinds: mixed node sizes, links
 * or a device bandwidth matrix, every 1.2 field), each configuration of each:
 *   - every plan it offers is a plan of that configuration that fits, and its figure is
 *     the evaluator's;
 *   - never below the configuration's brute-force optimum (ri_brute_config) over the
 *     same space;
 *   - never worse than its start: given the plan of the fixed placement (Megatron order)
 *     split by the layer DP, as the result's own plan (which an offer frees: the descent
 *     must read it first, and under ASan a read after fails), it returns that plan or a
 *     better one;
 *   - it finds a plan wherever the start is one.
 * How often it reaches the brute-force optimum is printed, not asserted: it is a local
 * search. Tolerance: relative 1e-9 (sums of the same terms in another order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"
#include "random_instance.h"
#include "../../solvers/search.h"

#define PD_TOL 1e-9
#define PD_SEEDS 200
#define PD_FIRST_SEED 3001UL

/* Plan pl split by the layer DP (in place), as the descent splits it: the evaluator's time,
 * INFINITY where no split fits or follows the job. */
static double split_time(const hp_problem *p, hp_plan *pl)
{
  hp_diag d = {0};
  hp_dp_opts o;
  hp_eval e = {0};
  int found = 0;
  double obj, t = INFINITY;
  hp__dp_opts_init(&o);
  o.modes = hp_job_modes(&p->job);
  if (hp__dp_split(p, pl, &o, &found, &obj, NULL, &d) == HP_OK && found &&
      hp__plan_follows_job(p, pl) && hp_evaluate(p, pl, &e, &d) == HP_OK && e.feasible)
    t = e.iteration_time;
  hp_eval_release(&e);
  return t;
}

/* The same for the plan file text `txt`. */
static double pd_split_time(const hp_problem *p, const char *txt)
{
  hp_plan *pl = fx_plan(p, txt);
  double t = pl ? split_time(p, pl) : INFINITY;
  hp_plan_destroy(&pl);
  return t;
}

/* The fixed placement (Megatron order) of c split by the layer DP: its time (INFINITY
 * where no split fits) and the plan into *out (NULL then). */
static double fixed_start(const hp_problem *p, const hp_config *c, hp_plan **out)
{
  hp_diag d = {0};
  double t;
  *out = NULL;
  if (hp__plan_fixed(p, c, 0, out, &d) != HP_OK) return NAN;
  t = split_time(p, *out);
  if (isinf(t)) hp_plan_destroy(out);
  return t;
}

TEST(placement_descent_offers_plans_never_below_brute_force_nor_above_its_start_on_200_instances)
{
  int bad = 0, configs = 0, found = 0, optimal = 0, better = 0;
  long evals = 0;
  for (unsigned long seed = PD_FIRST_SEED; seed < PD_FIRST_SEED + (unsigned long)harness_count(PD_SEEDS);
       seed++) {
    char what[768];
    hp_config *cfg = NULL;
    hp_problem *p = ri_problem_kinds(seed, what, sizeof what);
    int n;
    CHECK(p != NULL);
    ri_cert_scope(p);
    n = hp__configs(p, &cfg);
    for (int i = 0; i < n; i++) {
      const hp_config *c = &cfg[i];
      hp_plan *start = NULL;
      hp_limits lim;
      hp_result r;
      hp_diag d = {0};
      double bf = ri_brute_config(p, c), st = fixed_start(p, c, &start);
      hp_err err;
      hp_limits_init(&lim);
      hp_result_init(&r);
      configs++;
      /* the start offered first, then given as the result's own plan: an offer of a better
       * one frees it, so the descent must read it before (under ASan a read after fails) */
      if (start) err = hp__score_offer(p, &lim, start, &r, &d);
      else err = HP_OK;
      if (!err) err = hp__descend_config(p, c, r.plan, &lim, INFINITY, &r, &evals, &d);
      if (err != HP_OK) {
        fprintf(stderr, "  FAILED %s\n    pp %d tp %d dp %d mbs %d: %s\n", what, c->pp, c->tp,
                c->dp, c->mbs, d.msg);
        bad++;
      }
      if (r.plan) {
        hp_eval e = {0};
        const hp_plan *pl = r.plan;
        int same = pl->pp == c->pp && pl->tp == c->tp && pl->dp == c->dp && pl->mbs == c->mbs;
        int ok = same && hp_plan_validate(p, pl, NULL) == HP_OK &&
                 hp_evaluate(p, pl, &e, NULL) == HP_OK && e.feasible &&
                 fabs(e.iteration_time - r.objective) <= PD_TOL * r.objective;
        found++;
        optimal += fabs(r.objective - bf) <= PD_TOL * bf;
        better += isfinite(st) && r.objective < st * (1 - PD_TOL);
        if (!ok || r.objective < bf * (1 - PD_TOL) || r.objective > st * (1 + PD_TOL)) {
          fprintf(stderr, "  VIOLATION %s\n    pp %d tp %d dp %d mbs %d: descent %.12g (a plan "
                  "of it that fits, as scored: %d), brute force %.12g, start %.12g\n", what,
                  c->pp, c->tp, c->dp, c->mbs, r.objective, ok, bf, st);
          bad++;
        }
        hp_eval_release(&e);
      } else if (isfinite(st)) {
        fprintf(stderr, "  VIOLATION %s\n    pp %d tp %d dp %d mbs %d: no plan from a start of "
                "%.12g\n", what, c->pp, c->tp, c->dp, c->mbs, st);
        bad++;
      }
      hp_result_release(&r);
      hp_plan_destroy(&start);
    }
    free(cfg);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d configurations, a plan on %d (%ld layer DPs): at the brute-force optimum "
          "on %d, below the fixed placement's on %d\n", configs, found, evals, optimal, better);
  CHECK(found > 0);
  CHECK(better > 0);                   /* it did move: the start alone passes the rest */
  CHECK_INT(bad, 0);
}

/* Three kinds, 56 GPUs (2 x 8 H100, 3 x 8 A100, 4 x 4 L4, 100 Gbit/s between nodes; the
 * data-sheet figures of bench/clusters_v3.sh), GPT 1.1B, gbs 256, pp 7 tp 2 dp 4 mbs 1. */
static const char pd_k3_cluster[] =
  "{ \"version\": 1, \"name\": \"k3-56\", \"device_types\": {"
  "  \"H100\": { \"mem_gib\": 80, \"reserved_gib\": 1, \"tflops\": 989, \"efficiency\": 0.35, \"hbm_gbs\": 3350 },"
  "  \"A100\": { \"mem_gib\": 40, \"reserved_gib\": 1, \"tflops\": 312, \"efficiency\": 0.35, \"hbm_gbs\": 1555 },"
  "  \"L4\": { \"mem_gib\": 24, \"reserved_gib\": 1, \"tflops\": 121, \"efficiency\": 0.35, \"hbm_gbs\": 300 } },"
  "  \"nodes\": ["
  "  { \"name\": \"h100-00\", \"type\": \"H100\", \"gpus\": 8, \"intra_gbps\": 7200, \"intra_lat_us\": 5 },"
  "  { \"name\": \"h100-01\", \"type\": \"H100\", \"gpus\": 8, \"intra_gbps\": 7200, \"intra_lat_us\": 5 },"
  "  { \"name\": \"a100-00\", \"type\": \"A100\", \"gpus\": 8, \"intra_gbps\": 4800, \"intra_lat_us\": 5 },"
  "  { \"name\": \"a100-01\", \"type\": \"A100\", \"gpus\": 8, \"intra_gbps\": 4800, \"intra_lat_us\": 5 },"
  "  { \"name\": \"a100-02\", \"type\": \"A100\", \"gpus\": 8, \"intra_gbps\": 4800, \"intra_lat_us\": 5 },"
  "  { \"name\": \"l4-00\", \"type\": \"L4\", \"gpus\": 4, \"intra_gbps\": 512, \"intra_lat_us\": 5 },"
  "  { \"name\": \"l4-01\", \"type\": \"L4\", \"gpus\": 4, \"intra_gbps\": 512, \"intra_lat_us\": 5 },"
  "  { \"name\": \"l4-02\", \"type\": \"L4\", \"gpus\": 4, \"intra_gbps\": 512, \"intra_lat_us\": 5 },"
  "  { \"name\": \"l4-03\", \"type\": \"L4\", \"gpus\": 4, \"intra_gbps\": 512, \"intra_lat_us\": 5 } ],"
  "  \"inter_gbps\": 100, \"inter_lat_us\": 5 }";

/* A placement no class order gives and no swap of two groups reaches: an H100 node at
 * each end (the embedding's and the head's stages), the A100 stages one node each (their
 * reductions inside it), the two L4 stages replica by replica (each replica's pair on one
 * node, its hand-off inside it). Devices: H100 0-15, A100 16-39, L4 40-55. */
static const char pd_k3_plan[] =
  "{ \"pp\": 7, \"tp\": 2, \"dp\": 4, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 3], \"devices\": [[0, 1], [2, 3], [4, 5], [6, 7]] },"
  "  { \"layers\": [4, 7], \"devices\": [[16, 17], [18, 19], [20, 21], [22, 23]] },"
  "  { \"layers\": [8, 11], \"devices\": [[24, 25], [26, 27], [28, 29], [30, 31]] },"
  "  { \"layers\": [12, 15], \"devices\": [[32, 33], [34, 35], [36, 37], [38, 39]] },"
  "  { \"layers\": [16, 19], \"devices\": [[40, 41], [44, 45], [48, 49], [52, 53]] },"
  "  { \"layers\": [20, 23], \"devices\": [[42, 43], [46, 47], [50, 51], [54, 55]] },"
  "  { \"layers\": [24, 26], \"devices\": [[8, 9], [10, 11], [12, 13], [14, 15]] } ] }";

/* The descent's moves beyond swaps of two groups: a block of stages moved elsewhere (all
 * their groups at once) and a run of one type's stages laid again replica by replica. On
 * the instance above, from the class orders alone (no plan given), it must reach at
 * least the plan of pd_k3_plan's placement split by the layer DP, as the evaluator scores
 * it. Measured 2026-11-26: swaps alone ended at 0.862724 s; that placement reads 0.823087
 * s, and the descent with the moves reaches it in 0.3 s. */
TEST(placement_descent_moves_stage_blocks_and_lays_runs_replica_by_replica)
{
  char *model = NULL;
  hp_diag d = {0};
  hp_problem *p;
  hp_limits lim;
  hp_result r;
  hp_config c = { 7, 2, 4, 1 };
  double t_ref;
  CHECK(hp_read_file("models/gpt-1.1b.json", &model, &d) == HP_OK);
  p = fx_problem(model, pd_k3_cluster, NULL, 256, HP_1F1B);
  t_ref = pd_split_time(p, pd_k3_plan);
  CHECK(isfinite(t_ref));
  hp_limits_init(&lim);
  hp_result_init(&r);
  CHECK(hp__descend_config(p, &c, NULL, &lim, INFINITY, &r, NULL, &d) == HP_OK);
  CHECK(r.plan != NULL);
  if (r.plan) {
    fprintf(stderr, "  descent %.6f s, the reference placement %.6f s\n", r.objective, t_ref);
    CHECK(r.objective <= t_ref * (1 + PD_TOL));
  }
  hp_result_release(&r);
  hp_problem_destroy(&p);
  free(model);
}

/* Three kinds, 48 GPUs (3 x 8 H100, 2 x 8 A100, 2 x 4 L4, 100 Gbit/s between nodes; the
 * data-sheet figures of bench/clusters_v3.sh), GPT 1.1B, gbs 256, pp 12 tp 2 dp 2 mbs 1.
 * Devices: H100 0-23 (three nodes), A100 24-39, L4 40-47. */
static const char pd_k3b_cluster[] =
  "{ \"version\": 1, \"name\": \"k3-48b\", \"device_types\": {"
  "  \"H100\": { \"mem_gib\": 80, \"reserved_gib\": 1, \"tflops\": 989, \"efficiency\": 0.35, \"hbm_gbs\": 3350 },"
  "  \"A100\": { \"mem_gib\": 40, \"reserved_gib\": 1, \"tflops\": 312, \"efficiency\": 0.35, \"hbm_gbs\": 1555 },"
  "  \"L4\": { \"mem_gib\": 24, \"reserved_gib\": 1, \"tflops\": 121, \"efficiency\": 0.35, \"hbm_gbs\": 300 } },"
  "  \"nodes\": ["
  "  { \"name\": \"h100-00\", \"type\": \"H100\", \"gpus\": 8, \"intra_gbps\": 7200, \"intra_lat_us\": 5 },"
  "  { \"name\": \"h100-01\", \"type\": \"H100\", \"gpus\": 8, \"intra_gbps\": 7200, \"intra_lat_us\": 5 },"
  "  { \"name\": \"h100-02\", \"type\": \"H100\", \"gpus\": 8, \"intra_gbps\": 7200, \"intra_lat_us\": 5 },"
  "  { \"name\": \"a100-00\", \"type\": \"A100\", \"gpus\": 8, \"intra_gbps\": 4800, \"intra_lat_us\": 5 },"
  "  { \"name\": \"a100-01\", \"type\": \"A100\", \"gpus\": 8, \"intra_gbps\": 4800, \"intra_lat_us\": 5 },"
  "  { \"name\": \"l4-00\", \"type\": \"L4\", \"gpus\": 4, \"intra_gbps\": 512, \"intra_lat_us\": 5 },"
  "  { \"name\": \"l4-01\", \"type\": \"L4\", \"gpus\": 4, \"intra_gbps\": 512, \"intra_lat_us\": 5 } ],"
  "  \"inter_gbps\": 100, \"inter_lat_us\": 5 }";

/* The descent's end before the class re-lay (the certificate's incumbent of 2026-11-27,
 * 0.772674 s): the six H100 stages (1-5 and 11) in pairs on nodes, stages 2 and 4 on one
 * node each. */
static const char pd_k3b_start[] =
  "{ \"pp\": 12, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 0], \"devices\": [[44, 45], [42, 43]] },"
  "  { \"layers\": [1, 4], \"devices\": [[0, 1], [8, 9]] },"
  "  { \"layers\": [5, 8], \"devices\": [[2, 3], [4, 5]] },"
  "  { \"layers\": [9, 12], \"devices\": [[16, 17], [6, 7]] },"
  "  { \"layers\": [13, 16], \"devices\": [[18, 19], [20, 21]] },"
  "  { \"layers\": [17, 20], \"devices\": [[10, 11], [22, 23]] },"
  "  { \"layers\": [21, 21], \"devices\": [[24, 25], [36, 37]] },"
  "  { \"layers\": [22, 22], \"devices\": [[28, 29], [32, 33]] },"
  "  { \"layers\": [23, 23], \"devices\": [[30, 31], [34, 35]] },"
  "  { \"layers\": [24, 24], \"devices\": [[26, 27], [38, 39]] },"
  "  { \"layers\": [25, 25], \"devices\": [[40, 41], [46, 47]] },"
  "  { \"layers\": [26, 26], \"devices\": [[12, 13], [14, 15]] } ] }";

/* The same with the H100 groups laid again: replica 0's stages 1-3 and 11 on node 0, its
 * stages 4-5 on node 1 with replica 1's 1-2, replica 1's 3-5 and 11 on node 2 (each
 * replica crosses between nodes once in the run). */
static const char pd_k3b_ref[] =
  "{ \"pp\": 12, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 0], \"devices\": [[44, 45], [42, 43]] },"
  "  { \"layers\": [1, 4], \"devices\": [[0, 1], [8, 9]] },"
  "  { \"layers\": [5, 8], \"devices\": [[2, 3], [10, 11]] },"
  "  { \"layers\": [9, 12], \"devices\": [[4, 5], [16, 17]] },"
  "  { \"layers\": [13, 16], \"devices\": [[12, 13], [18, 19]] },"
  "  { \"layers\": [17, 20], \"devices\": [[14, 15], [20, 21]] },"
  "  { \"layers\": [21, 21], \"devices\": [[24, 25], [36, 37]] },"
  "  { \"layers\": [22, 22], \"devices\": [[28, 29], [32, 33]] },"
  "  { \"layers\": [23, 23], \"devices\": [[30, 31], [34, 35]] },"
  "  { \"layers\": [24, 24], \"devices\": [[26, 27], [38, 39]] },"
  "  { \"layers\": [25, 25], \"devices\": [[40, 41], [46, 47]] },"
  "  { \"layers\": [26, 26], \"devices\": [[6, 7], [22, 23]] } ] }";

/* Where no stage move and no swap improves, each exact node class is laid again every way
 * (up to its nodes' order). From pd_k3b_start, which neither kind of move leaves (measured
 * 2026-11-27: the descent ended there, 0.772674 s), it must reach at least pd_k3b_ref's
 * placement split by the layer DP (0.747475 s, the best of the 5775 arrangements of the
 * H100 groups with the other stages as they are), each as the evaluator scores it; and
 * the start must be the slower of the two, or the test shows nothing. */
TEST(placement_descent_lays_a_node_class_again_where_no_move_or_swap_improves)
{
  char *model = NULL;
  hp_diag d = {0};
  hp_problem *p;
  hp_plan *start;
  hp_limits lim;
  hp_result r;
  hp_config c = { 12, 2, 2, 1 };
  double t_start, t_ref;
  CHECK(hp_read_file("models/gpt-1.1b.json", &model, &d) == HP_OK);
  p = fx_problem(model, pd_k3b_cluster, NULL, 256, HP_1F1B);
  p->job.sharding = (1u << HP_SHARD_DP) | (1u << HP_SHARD_ZDP);   /* as the bench row */
  t_start = pd_split_time(p, pd_k3b_start);
  t_ref = pd_split_time(p, pd_k3b_ref);
  CHECK(isfinite(t_ref) && t_ref < t_start * (1 - 1e-3));
  start = fx_plan(p, pd_k3b_start);
  hp_limits_init(&lim);
  hp_result_init(&r);
  CHECK(hp__descend_config(p, &c, start, &lim, INFINITY, &r, NULL, &d) == HP_OK);
  CHECK(r.plan != NULL);
  if (r.plan) {
    fprintf(stderr, "  descent %.6f s; the start %.6f s, the reference %.6f s\n", r.objective,
            t_start, t_ref);
    CHECK(r.objective <= t_ref * (1 + PD_TOL));
  }
  hp_result_release(&r);
  hp_plan_destroy(&start);
  hp_problem_destroy(&p);
  free(model);
}

/* A random instance whose first type is one exact node class of K = 2 or 3 nodes of two
 * GPUs (the class the re-lay moves: with tp 1 each node holds two groups), beside a second
 * type on one node of one or two GPUs and, on some, a third on one node of one GPU; every
 * inter-node link alike (node figures only), so the class's nodes are interchangeable. A
 * model of an embedding, two to four blocks and a head, figures drawn. */
static hp_problem *pd_relay_instance(unsigned long seed, int *K, char *what, size_t n_what)
{
  unsigned long long st = 0x9e3779b97f4a7c15ULL * (seed + 1);
  char model[2048], cluster[2048];
  int nb = 2 + (int)fx_draw(&st, 0, 2.999), g2 = 1 + (int)fx_draw(&st, 0, 1.999);
  int third = fx_draw(&st, 0, 1) < 0.5;
  long gbs = 8L << (int)fx_draw(&st, 0, 1.999);
  size_t n = 0;
  *K = 2 + (fx_draw(&st, 0, 1) < 0.75);
  n += (size_t)snprintf(model + n, sizeof model - n,
                        "{ \"name\": \"relay-%lu\", \"input_bytes\": 1000, \"layers\": ["
                        "{ \"name\": \"embed\", \"params\": %.4g, \"act_bytes\": %.4g, \"out_bytes\": %.4g, \"flops\": %.4g }",
                        seed, fx_log(&st, 1e5, 1e7), fx_log(&st, 1e5, 1e7), fx_log(&st, 1e5, 1e7),
                        fx_log(&st, 1e10, 1e12));
  for (int b = 0; b < nb; b++)
    n += (size_t)snprintf(model + n, sizeof model - n,
                          ", { \"name\": \"block%d\", \"params\": %.4g, \"act_bytes\": %.4g, "
                          "\"out_bytes\": %.4g, \"flops\": %.4g }", b, fx_log(&st, 1e6, 1e8),
                          fx_log(&st, 1e6, 1e8), fx_log(&st, 1e5, 1e8), fx_log(&st, 1e11, 1e13));
  snprintf(model + n, sizeof model - n,
           ", { \"name\": \"head\", \"params\": %.4g, \"act_bytes\": %.4g, \"out_bytes\": 4, "
           "\"flops\": %.4g } ] }", fx_log(&st, 1e5, 1e7), fx_log(&st, 1e5, 1e7),
           fx_log(&st, 1e10, 1e12));
  n = (size_t)snprintf(cluster, sizeof cluster,
                       "{ \"name\": \"relay-%lu\", \"device_types\": {"
                       " \"a\": { \"mem_gib\": 16, \"tflops\": %.4g, \"efficiency\": 0.5 },"
                       " \"b\": { \"mem_gib\": 16, \"tflops\": %.4g, \"efficiency\": 0.5 },"
                       " \"c\": { \"mem_gib\": 16, \"tflops\": %.4g, \"efficiency\": 0.5 } }, \"nodes\": [",
                       seed, fx_log(&st, 50, 400), fx_log(&st, 20, 400), fx_log(&st, 20, 400));
  double ia = fx_log(&st, 100, 2000);
  for (int k = 0; k < *K; k++)
    n += (size_t)snprintf(cluster + n, sizeof cluster - n,
                          "%s{ \"name\": \"a%d\", \"type\": \"a\", \"gpus\": 2, \"intra_gbps\": %.4g, "
                          "\"intra_lat_us\": 2 }", k ? ", " : "", k, ia);
  n += (size_t)snprintf(cluster + n, sizeof cluster - n,
                        ", { \"name\": \"b0\", \"type\": \"b\", \"gpus\": %d, \"intra_gbps\": %.4g, "
                        "\"intra_lat_us\": 2 }", g2, fx_log(&st, 100, 2000));
  if (third)
    n += (size_t)snprintf(cluster + n, sizeof cluster - n,
                          ", { \"name\": \"c0\", \"type\": \"c\", \"gpus\": 1 }");
  snprintf(cluster + n, sizeof cluster - n, " ], \"inter_gbps\": %.4g, \"inter_lat_us\": 10 }",
           fx_log(&st, 5, 200));
  snprintf(what, n_what, "relay seed %lu: %d nodes of 2 a, b x %d%s, %d blocks, gbs %ld", seed,
           *K, g2, third ? ", c x 1" : "", nb, gbs);
  hp_problem *p = fx_problem(model, cluster, NULL, gbs, fx_draw(&st, 0, 1) < 0.5 ? HP_1F1B : HP_GPIPE);
  p->job.sharding = (1u << HP_SHARD_DP) | (1u << HP_SHARD_ZDP);
  return p;
}

/* The next permutation of a[0..n-1] in lexicographic order; 0 after the last. */
static int pd_next_perm(int *a, int n)
{
  int i = n - 2, j = n - 1;
  while (i >= 0 && a[i] >= a[i + 1]) i--;
  if (i < 0) return 0;
  while (a[j] <= a[i]) j--;
  int x = a[i]; a[i] = a[j]; a[j] = x;
  for (int l = i + 1, r = n - 1; l < r; l++, r--) { x = a[l]; a[l] = a[r]; a[r] = x; }
  return 1;
}

/* The descent ends where its moves, the class re-lay among them, improve nothing. Checked
 * against every permutation of the class's devices over the slots they serve in the
 * descent's plan (all K 2! orders, not up to symmetry as the descent enumerates them),
 * each split by the layer DP as the descent splits (its cutoff: 1.1 times the time, its
 * frontier) and scored by the evaluator: none is faster than the descent's plan.
 * Configurations with tp 1 (a group is a device; with tp 2 each node holds one group, and
 * there is one arrangement). Without the re-lay (its cap set to 1, 2026-11-27) the swaps and
 * stage moves end above some arrangement on 7 configurations of seeds 243, 345, 423 and
 * 587; with it, on none. */
/* Under AddressSanitizer the layer DP runs about 25 times slower: the first 100 */
#if defined(__SANITIZE_ADDRESS__)
#define PD_RELAY_SEEDS 100
#else
#define PD_RELAY_SEEDS 600
#endif
TEST(placement_descent_ends_where_no_arrangement_of_a_node_class_is_faster_on_600_instances)
{
  int bad = 0, checked = 0, perms = 0;
  for (unsigned long seed = 1; seed <= (unsigned long)harness_count(PD_RELAY_SEEDS); seed++) {
    char what[256];
    int K, n;
    hp_config *cfg = NULL;
    hp_problem *p = pd_relay_instance(seed, &K, what, sizeof what);
    n = hp__configs(p, &cfg);
    for (int i = 0; i < n; i++) {
      const hp_config *c = &cfg[i];
      hp_limits lim;
      hp_result r;
      hp_diag d = {0};
      int items[16], adev[16], m = 0;
      if (c->tp != 1) continue;
      hp_limits_init(&lim);
      hp_result_init(&r);
      if (hp__descend_config(p, c, NULL, &lim, INFINITY, &r, NULL, &d) != HP_OK) {
        fprintf(stderr, "  FAILED %s: %s\n", what, d.msg);
        bad++;
      }
      if (!r.plan) { hp_result_release(&r); continue; }
      const hp_plan *pl = r.plan;
      for (int x = 0; x < pl->pp * pl->dp; x++)   /* the slots on class a (devices 0..2K-1) */
        if (pl->dev[x] < 2 * K) { items[m] = x; adev[m++] = pl->dev[x]; }
      for (int a = 1; a < m; a++)              /* sorted, the first permutation */
        for (int b = a; b > 0 && adev[b - 1] > adev[b]; b--) { int t = adev[b]; adev[b] = adev[b - 1]; adev[b - 1] = t; }
      checked++;
      do {
        hp_plan *q = NULL;
        hp_dp_opts o;
        hp_eval e = {0};
        int found = 0;
        double obj;
        if (hp_plan_copy(&q, pl, &d) != HP_OK) { bad++; break; }
        for (int j = 0; j < m; j++) q->dev[items[j]] = adev[j];
        hp__dp_opts_init(&o);
        o.modes = hp_job_modes(&p->job);
        o.cutoff = 1.1 * r.objective;          /* DESCENT_REACH */
        o.max_frontier = HP_DP_HEURISTIC_FRONTIER;
        perms++;
        if (hp__dp_split(p, q, &o, &found, &obj, NULL, &d) == HP_OK && found &&
            hp__plan_follows_job(p, q) && hp_evaluate(p, q, &e, &d) == HP_OK && e.feasible &&
            e.iteration_time < r.objective * (1 - PD_TOL)) {
          fprintf(stderr, "  VIOLATION %s pp %d dp %d mbs %d: the descent ends at %.12g, an "
                  "arrangement of class a reads %.12g\n", what, c->pp, c->dp, c->mbs,
                  r.objective, e.iteration_time);
          bad++;
        }
        hp_eval_release(&e);
        hp_plan_destroy(&q);
      } while (pd_next_perm(adev, m));
      hp_result_release(&r);
    }
    free(cfg);
    hp_problem_destroy(&p);
  }
  fprintf(stderr, "  %d configurations checked, %d arrangements\n", checked, perms);
  CHECK(checked > 0);
  CHECK_INT(bad, 0);
}
