/* test_models.c -- the bundled set-ups: a four-stage GPT-2 plan on AMP's heterogeneous
 * cluster with AMP's measured module times, checked against hand computation from the
 * numbers in ../shared/data/amp/layer_profiles.json (copied here). Run from the
 * repository root (tests/run.sh does). */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

#define GIB 1073741824.0
#define REL 1e-9

TEST(models_amp_gpt2_four_stage_plan_matches_hand_computation)
{
  hp_problem *p = fx_load("models/gpt2-amp.json", "models/amp-hetero.json",
                       "models/gpt2-amp.profile.json", 32);
  hp_diag d = {0};
  hp_plan *pl = NULL;
  hp_eval e = {0};
  CHECK(hp_plan_load("examples/amp-gpt2-hetero-4stage.plan.json", p, &pl, &d) == HP_OK);
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  /* Stage 3 (modules 25-29) on a T4 at tp 1, mbs 1: 3 x AMP's forward times */
  double t3 = 3 * (0.005709648132324219 + 2.4557113647460938e-05 + 6.937980651855469e-05 +
                   0.003076314926147461 + 0.0014796257019042969);
  CHECK_NEAR(e.compute[3 * 4 + 0], t3, REL);
  /* Stage 0 (modules 0-8) on a V100: embed, noop, blocks 0-6 */
  double t0 = 3 * (0.00036597251892089844 + 0.00017547607421875 + 0.004277944564819336 +
                   0.00397944450378418 + 0.0038747787475585938 + 0.00394129753112793 +
                   0.0039293766021728516 + 0.0038976669311523438 + 0.003941059112548828);
  CHECK_NEAR(e.compute[0], t0, REL);
  /* hand-off between nodes: 2 * (2 * 1024 * 1024 bytes) / (10 Gbit/s = 1.25e9 B/s) + 2 * 30 us */
  CHECK_NEAR(e.handoff[0], 2 * 2097152 / 1.25e9 + 60e-6, REL);
  /* stage 3's DP group is inside the T4 node (50 Gbit/s = 6.25e9 B/s, 10 us):
   * P = block (12 h^2 + 13 h = 12596224) + final (2 h + V h = 53512192), grads 2 bytes;
   * sync = 2 * 3/4 * 2 * 66108416 / 6.25e9 + 2 * 3 * 10e-6 */
  CHECK_NEAR(e.sync[3], 1.5 * 2 * 66108416.0 / 6.25e9 + 6e-5, REL);
  CHECK_INT(e.sync_stage, 3);
  /* T = (8 - 1) * max t + sum t + 3 hand-offs + max sync */
  double tmax = 0, tsum = 0;
  for (int s = 0; s < 4; s++) {
    tsum += e.stage_time[s * 4];
    if (e.stage_time[s * 4] > tmax) tmax = e.stage_time[s * 4];
  }
  CHECK_NEAR(e.iteration_time, 7 * tmax + tsum + 3 * (2 * 2097152 / 1.25e9 + 60e-6) + e.sync[3], REL);
  /* memory, stage 0: states 16 x (embed 52256 * 1024 + 1024^2 + 7 blocks of 12596224);
   * 1F1B keeps min(4 - 0, 8) = 4 micro-batches of (embed s h + 7 x (34 s h + 5 a s^2));
   * plus the V100's 1 GiB reserve */
  double states = 16.0 * (54558720.0 + 7 * 12596224.0);
  double act = 4.0 * (1048576.0 + 7 * (34.0 * 1048576 + 5.0 * 16 * 1048576));
  CHECK_NEAR(e.mem[0], states + act + GIB, REL);
  CHECK(e.feasible);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(models_every_bundled_model_fits_its_documented_size)
{
  hp_diag d = {0};
  hp_model *m = NULL;
  CHECK(hp_model_load("models/llama2-70b.json", &m, &d) == HP_OK);
  {
    /* Llama 2 70B (Touvron et al. 2023, table 1; the file's transformer block): L = 80,
     * h = 8192, 64 heads of which 8 for K and V (GQA: K and V are h x 8/64 h = 1024
     * wide), SwiGLU ffn f = 28672, vocab V = 32000, RMSNorm weights h, untied head.
     * Per block: Q and O 2 h^2, K and V 2 h 1024, the MLP's three matrices 3 h f, two
     * norms 2 h; embedding and head V h each; the final norm h. */
    double h = 8192, L = 80, f = 28672, V = 32000, kv = h * 8 / 64;
    double block = 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h;
    CHECK_NEAR(hp_model_total_params(m), L * block + 2 * V * h + h, 0);
    CHECK_NEAR(L * block + 2 * V * h + h, 68976648192.0, 0);   /* the file's "source" says */
  }
  CHECK_INT(m->n_layers, 80 + 3);      /* embedding, 80 blocks, final norm, head */
  hp_model_destroy(&m);
  CHECK(hp_model_load("models/gpt2-amp.json", &m, &d) == HP_OK);
  CHECK_INT(m->n_layers, 30);          /* AMP's GPT-2: 30 layer entries (seeds digest) */
  hp_model_destroy(&m);
  CHECK(hp_model_load("models/transgan-amp.json", &m, &d) == HP_OK);
  CHECK_INT(m->n_layers, 56);          /* AMP's TransGAN generator: 56 layer entries */
  hp_model_destroy(&m);
}
