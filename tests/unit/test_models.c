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
  /* hand-off between nodes (cost-model.md 3, 1.2): the 4 replicas' lanes of a boundary
   * all leave one node for the next, H = 4, so each sees 10 Gbit/s = 1.25e9 B/s / 4:
   * 2 * (2 * 1024 * 1024 bytes) / 3.125e8 + 2 * 30 us = 0.0134817728 s (1.1: 0.0034154432) */
  const double e01 = 2 * 2097152 / (1.25e9 / 4) + 60e-6;
  for (int s = 0; s < 3; s++)
    for (int r = 0; r < 4; r++) CHECK_NEAR(e.handoff[s * 4 + r], e01, REL);
  CHECK_NEAR(e.handoff[0], 0.0134817728, REL);
  /* stage 3's DP group is inside the T4 node (50 Gbit/s = 6.25e9 B/s, 10 us):
   * P = block (12 h^2 + 13 h = 12596224) + final (2 h + V h = 53512192), grads 2 bytes;
   * sync = 2 * 3/4 * 2 * 66108416 / 6.25e9 + 2 * 3 * 10e-6 */
  CHECK_NEAR(e.sync[3], 1.5 * 2 * 66108416.0 / 6.25e9 + 6e-5, REL);
  CHECK_INT(e.sync_stage, 3);
  /* the optimizer step (1.2): update_bytes 44 (the generator's mixed-precision Adam,
   * models/gpt2-amp.json) times the parameters a device holds, over its HBM bandwidth:
   * stage 0 on a V100 (900 GB/s) 142,732,288 parameters: 6.98 ms; stages 1 and 2, 8
   * blocks, 100,769,792: 4.93 ms; stage 3 on a T4 (320 GB/s) 66,108,416: 9.09 ms, the max */
  CHECK_NEAR(e.step_time, 44 * 66108416.0 / 320e9, REL);
  CHECK_NEAR(e.step[0], 44 * (54558720.0 + 7 * 12596224.0) / 900e9, REL);
  /* T = (8 - 1) * max_s c[s] + sum t + 3 hand-offs + max sync + step, with each stage's
   * period c[s] = t[s] + half of each of its boundaries' hand-offs (1.2): the inner
   * stages pay a whole e01, the end stages half of it; no zero1/zero2 all-gather */
  double cmax = 0, tsum = 0;
  for (int s = 0; s < 4; s++) {
    double c = e.stage_time[s * 4] + ((s > 0) + (s < 3)) * e01 / 2;
    CHECK_NEAR(e.period[s * 4], c, REL);
    tsum += e.stage_time[s * 4];
    if (c > cmax) cmax = c;
  }
  CHECK_NEAR(e.gat_time, 0, 0);
  CHECK_NEAR(e.iteration_time, 7 * cmax + tsum + 3 * e01 + e.sync[3] + 44 * 66108416.0 / 320e9,
             REL);
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

/* Every device type of the bundled clusters gives its memory bandwidth (1.2 "hbm_gbs",
 * the datasheets': V100 900, T4 320, A100 80 GB SXM 2039, H100 SXM5 3350, MI210 1638.4;
 * HetHub's unnamed 'accelerator A' the Ascend 910's 1200, a placeholder like its other
 * figures), so that every plan on them is charged its optimizer step. */
TEST(models_every_bundled_cluster_type_has_its_hbm_bandwidth)
{
  static const struct { const char *path, *type; double gbs; } want[] = {
    { "models/amp-4xp3.json", "V100", 900 },
    { "models/amp-hetero.json", "V100", 900 },
    { "models/amp-hetero.json", "T4", 320 },
    { "models/amp-homo-4xg4dn.json", "T4", 320 },
    { "models/h100-1gpu.cluster.json", "H100", 3350 },
    { "models/hethub-mix-2amd+10acc.json", "AMD", 1638.4 },
    { "models/hethub-mix-2amd+10acc.json", "AccA", 1200 },
    { "models/pipette-high-16x8-a100.json", "A100", 2039 },
    { "models/pipette-mid-16x8-v100.json", "V100", 900 },
    { "models/pipette-real-16x8-a100.json", "A100", 2039 },
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    hp_cluster *c = NULL;
    hp_diag d = {0};
    int found = 0;
    CHECK(hp_cluster_load(want[i].path, &c, &d) == HP_OK);
    if (!c) continue;
    for (int k = 0; k < c->n_types; k++) {
      CHECK(c->types[k].hbm > 0);        /* no type of a bundled cluster goes without */
      if (!strcmp(c->types[k].name, want[i].type)) {
        CHECK_NEAR(c->types[k].hbm, want[i].gbs * 1e9, 0);
        found = 1;
      }
    }
    CHECK(found);
    hp_cluster_destroy(&c);
  }
}
