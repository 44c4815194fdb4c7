/* test_prof.c -- the profiler's parts that need neither MPI nor a GPU: the layer op
 * lists against hetplan's FLOPs and activation bytes (docs/transformer.md), operand
 * extents, the pair schedule, the device numbering, medians and fits (a run's too),
 * bus-bandwidth factors, device names, the command line, and the writers read back by
 * hetplan's own loaders.
 * Ends with "prof_units: N passed, N failed" (tests/profiler/test_profiler.sh adds it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/harness.h"
#include "../../profiler/prof.h"

static hp_model *load_model(const char *path)
{
  hp_diag d = {0};
  hp_model *m = NULL;
  if (hp_model_load(path, &m, &d)) {
    fprintf(stderr, "cannot load %s: %s\n", path, d.msg);
    exit(3);
  }
  return m;
}

/* The model expanded with eager attention: the profiler's block runs the scores as
 * batched GEMMs and its own softmax (no fused attention), so its op lists are the eager
 * expansion's; the generator's default is FlashAttention (docs/transformer.md). */
static hp_model *load_model_eager(const char *path)
{
  hp_diag d = {0};
  hp_model *m = load_model(path);
  hp_transformer t = *m->transformer;
  t.eager_attention = 1;
  if (hp_transformer_expand(&t, m, &d)) {
    fprintf(stderr, "cannot expand %s: %s\n", path, d.msg);
    exit(3);
  }
  return m;
}

static int layer_of_kind(const hp_model *m, const char *kind)
{
  for (int l = 0; l < m->n_layers; l++)
    if (!strcmp(m->layers[l].kind, kind)) return l;
  return -1;
}

/* hetplan's a_l(tp) mbs: what the profiler's saved buffers must add up to */
static double model_act(const hp_layer *L, int tp, int mbs)
{
  int t = L->splittable ? tp : 1;
  return ((L->act_bytes - L->act_repl) / t + L->act_repl) * mbs;
}

static const char *const transformers[] = {
  "models/gpt-1.1b.json", "models/llama2-7b.json", "models/llama2-70b.json" };
static const char *const tf_kinds[] = { "embed", "block", "final_norm", "head" };

TEST(op_lists_have_the_models_flops_and_activation_bytes)
{
  /* GEMM FLOPs of forward + backward = F mbs / t (the head and blocks; embed and
   * final_norm have none); saved buffers = ((A - Ar) / t + Ar) mbs, at tp 1, 2, 8 and
   * mbs 1, 3; GQA (Llama-2-70B: 8 key-value heads) included. */
  static const int tps[] = { 1, 2, 8 }, mbss[] = { 1, 3 };
  for (size_t f = 0; f < sizeof transformers / sizeof *transformers; f++) {
    hp_model *m = load_model_eager(transformers[f]);
    for (size_t k = 0; k < 4; k++) {
      int l = layer_of_kind(m, tf_kinds[k]);
      CHECK(l >= 0);
      for (size_t ti = 0; ti < 3; ti++)
        for (size_t mi = 0; mi < 2; mi++) {
          prof_layer *ly = calloc(1, sizeof *ly);
          char why[256];
          const hp_layer *L = &m->layers[l];
          int t = L->splittable ? tps[ti] : 1;
          CHECK(prof_layer_build(m, l, tps[ti], mbss[mi], 0, ly, why, sizeof why) == 0);
          CHECK_NEAR(prof_layer_flops(ly), L->flops * mbss[mi] / t, 1e-12);
          CHECK_NEAR(prof_layer_bytes(ly, PROF_SAVED), model_act(L, tps[ti], mbss[mi]), 1e-12);
          /* TP all-reduces carry the model's tp_comm_bytes */
          if (tps[ti] > 1) CHECK_NEAR(ly->n_allreduce * ly->allreduce_bytes, L->tp_comm * mbss[mi], 1e-12);
          else CHECK_INT(ly->n_allreduce, 0);
          CHECK(!ly->synthetic);
          free(ly);
        }
    }
    hp_model_destroy(&m);
  }
}

TEST(op_operands_stay_inside_their_buffers)
{
  /* every GEMM and kernel reaches no further than its buffers hold (the GPU run reads
   * and writes exactly these extents), with and without sequence parallelism; GEMM
   * inputs are 16-bit, outputs 16 or 32-bit */
  static const int tps[] = { 1, 2, 4, 8 };
  static const char *const more[] = { "models/gpt2-amp.json" };
  for (size_t f = 0; f < 4; f++) {
    hp_model *m = load_model(f < 3 ? transformers[f] : more[0]);
    for (int l = 0; l < m->n_layers; l++)
      for (size_t ti = 0; ti < 4; ti++)
        for (int k = 0; k < 4; k++) {
          int mbs = k % 2 ? 4 : 1, sp = k / 2;   /* with and without sequence parallelism */
          prof_layer *ly = calloc(1, sizeof *ly);
          char why[256];
          if (prof_layer_build(m, l, tps[ti], mbs, sp, ly, why, sizeof why)) { free(ly); continue; }
          for (int i = 0; i < ly->n_ops; i++) {
            const prof_op *o = &ly->ops[i];
            int ids[4] = { o->in0, o->in1, o->out, o->aux };
            CHECK(o->out >= 0 && o->out < ly->n_bufs);
            for (int w = 0; w < 4; w++) {
              if (ids[w] < 0) continue;
              CHECK(ids[w] < ly->n_bufs);
              if (!(prof_op_extent(ly, i, w) <= ly->bufs[ids[w]].elems)) {
                harness_fail(__FILE__, __LINE__, "%s layer %d op %s operand %d: %.0f > %s %.0f",
                             m->name, l, o->what, w, prof_op_extent(ly, i, w),
                             ly->bufs[ids[w]].name, ly->bufs[ids[w]].elems);
                return;
              }
            }
            if (o->type == PROF_GEMM) {
              CHECK(o->m > 0 && o->n > 0 && o->k > 0 && o->batch > 0);
              CHECK(o->m < 2147483647L && o->n < 2147483647L && o->k < 2147483647L);
              CHECK_INT(ly->bufs[o->in0].elem_bytes, 2);
              CHECK_INT(ly->bufs[o->in1].elem_bytes, 2);
              CHECK(ly->bufs[o->out].elem_bytes == 2 || ly->bufs[o->out].elem_bytes == 4);
            } else {
              CHECK(o->rows > 0 && o->cols > 0);
            }
          }
          free(ly);
        }
    hp_model_destroy(&m);
  }
}

TEST(op_lists_under_sequence_parallelism_keep_a_over_t)
{
  /* Korthikanti et al. 2022, Table 2: with sequence parallelism every activation a block
   * saves divides by t, so the saved buffers are A mbs / t (cost-model.md 1: a_l(t) =
   * A_l / t_l), the embedding's and the head's too; the final norm, which the generator
   * keeps whole (t_l = 1), runs on seq / t rows as Megatron's does, so it keeps A mbs / t
   * where the formula counts A mbs. FLOPs and the TP communication are the same as
   * without it (a reduce-scatter and an all-gather of an all-reduce's volume). At tp 1
   * the setting changes nothing. */
  static const int tps[] = { 1, 2, 8 }, mbss[] = { 1, 3 };
  for (size_t f = 0; f < sizeof transformers / sizeof *transformers; f++) {
    hp_model *m = load_model_eager(transformers[f]);   /* the profiler runs eager attention */
    for (size_t k = 0; k < 4; k++) {
      int l = layer_of_kind(m, tf_kinds[k]);
      const hp_layer *L = &m->layers[l];
      for (size_t ti = 0; ti < 3; ti++)
        for (size_t mi = 0; mi < 2; mi++) {
          prof_layer *ly = calloc(1, sizeof *ly), *plain = calloc(1, sizeof *plain);
          char why[256];
          int t = tps[ti], mbs = mbss[mi];
          double want = t == 1 ? model_act(L, 1, mbs) : L->act_bytes * mbs / t;
          CHECK(prof_layer_build(m, l, t, mbs, 1, ly, why, sizeof why) == 0);
          CHECK(prof_layer_build(m, l, t, mbs, 0, plain, why, sizeof why) == 0);
          CHECK_NEAR(prof_layer_bytes(ly, PROF_SAVED), want, 1e-12);
          CHECK_NEAR(prof_layer_flops(ly), prof_layer_flops(plain), 1e-12);
          CHECK_INT(ly->n_allreduce, plain->n_allreduce);
          CHECK_NEAR(ly->allreduce_bytes, plain->allreduce_bytes, 1e-12);
          if (t == 1) CHECK_INT(ly->n_bufs, plain->n_bufs);
          free(ly);
          free(plain);
        }
    }
    hp_model_destroy(&m);
  }
}

TEST(op_list_refuses_sequence_parallelism_that_does_not_divide_the_tokens)
{
  /* gpt-1.1b has seq 2048: tp 8 divides it; a model of seq 1000 at tp 16 does not, and
   * no tp divides its heads then, so check the message on a made-up seq */
  hp_model *m = load_model("models/gpt-1.1b.json");
  prof_layer *ly = calloc(1, sizeof *ly);
  char why[256];
  m->transformer->seq = 2047;
  CHECK(prof_layer_build(m, layer_of_kind(m, "block"), 2, 1, 1, ly, why, sizeof why) == -1);
  CHECK_CONTAINS(why, "sequence parallelism: tp 2 does not divide the 2047 tokens");
  CHECK(prof_layer_build(m, layer_of_kind(m, "block"), 2, 2, 1, ly, why, sizeof why) == 0);
  CHECK(prof_layer_build(m, layer_of_kind(m, "block"), 2, 1, 0, ly, why, sizeof why) == 0);
  free(ly);
  hp_model_destroy(&m);
}

TEST(lifetimes_keep_exactly_the_saved_buffers_across_the_passes)
{
  /* What the memory measurement allocates and frees: every buffer the op list saves
   * lives from the forward into the backward pass and no other non-resident one does,
   * so the act a measurement finds is the saved bytes (plus allocator rounding) */
  static const int tps[] = { 1, 2, 8 };
  for (size_t f = 0; f < sizeof transformers / sizeof *transformers; f++) {
    hp_model *m = load_model(transformers[f]);
    for (size_t k = 0; k < 4; k++)
      for (size_t ti = 0; ti < 3; ti++)
        for (int sp = 0; sp < 2; sp++) {
          prof_layer *ly = calloc(1, sizeof *ly);
          char why[256];
          double act, work;
          CHECK(prof_layer_build(m, layer_of_kind(m, tf_kinds[k]), tps[ti], 2, sp, ly, why,
                                 sizeof why) == 0);
          prof_layer_live_bytes(ly, &act, &work);
          CHECK_NEAR(act, prof_layer_bytes(ly, PROF_SAVED), 1e-12);
          CHECK(work > 0);
          free(ly);
        }
    hp_model_destroy(&m);
  }
}

TEST(lifetimes_of_a_final_norm_and_a_head_by_hand)
{
  /* GPT-1.1B (h 1920, s 2048, vocab 50257 as the model has it), tp 1, mbs 1, T = 2048.
   * Final norm: forward norm(x -> out, stats), backward norm_bwd(grad_out, x -> grad_x).
   * out is the next layer's (resident); x lives across: act = 2 T h. Forward: x + stats
   * (8 T); backward: x + grad_out + grad_x = 6 T h: work = 4 T h.
   * Head: logits(W, x -> lg), xent(lg -> loss), xent_bwd(lg -> dl), dgrad(W, dl -> dx),
   * wgrad(dl, x -> dW). x [0, 4], lg (fp32, 4 T V) [0, 2], loss (4 T) [1], dl (2 T V)
   * [2, 4], dx (2 T h) [3]: act = 2 T h + 4 T V; the peak is at xent_bwd, x + lg + dl =
   * 2 T h + 6 T V: work = 2 T V. */
  hp_model *m = load_model("models/gpt-1.1b.json");
  prof_layer *ly = calloc(1, sizeof *ly);
  char why[256];
  int order[PROF_MAX_OPS], first[PROF_MAX_BUFS], last[PROF_MAX_BUFS], resident[PROF_MAX_BUFS];
  double act, work, T = 2048, h = 1920, V = m->transformer->vocab;
  CHECK(prof_layer_build(m, layer_of_kind(m, "final_norm"), 1, 1, 0, ly, why, sizeof why) == 0);
  CHECK_INT(prof_layer_lifetimes(ly, order, first, last, resident), 1);
  prof_layer_live_bytes(ly, &act, &work);
  CHECK_NEAR(act, 2 * T * h, 1e-15);
  CHECK_NEAR(work, 4 * T * h, 1e-15);
  CHECK(prof_layer_build(m, layer_of_kind(m, "head"), 1, 1, 0, ly, why, sizeof why) == 0);
  CHECK_INT(prof_layer_lifetimes(ly, order, first, last, resident), 2);
  for (int b = 0; b < ly->n_bufs; b++) {
    const char *nm = ly->bufs[b].name;
    CHECK_INT(resident[b], !strcmp(nm, "w_head") || !strcmp(nm, "dw_head"));
    if (!strcmp(nm, "logits")) { CHECK_INT(first[b], 0); CHECK_INT(last[b], 2); }
    if (!strcmp(nm, "x")) { CHECK_INT(first[b], 0); CHECK_INT(last[b], 4); }
    if (!strcmp(nm, "grad_x")) { CHECK_INT(first[b], 3); CHECK_INT(last[b], 3); }
  }
  prof_layer_live_bytes(ly, &act, &work);
  CHECK_NEAR(act, 2 * T * h + 4 * T * V, 1e-15);
  CHECK_NEAR(work, 2 * T * V, 1e-15);
  free(ly);
  hp_model_destroy(&m);
}

TEST(op_list_of_a_gpt_block_counts_each_kernel_by_hand)
{
  /* GPT-1.1B block (h 1920, 16 heads, s 2048, f 7680) at tp 2, mbs 1: 35 ops, of which
   * 6 forward GEMMs (qkv, scores, context, proj, fc1, fc2) and 12 backward ones; the
   * final LayerNorm reads T h and writes T h 16-bit values plus 2 T fp32 statistics. */
  hp_model *m = load_model("models/gpt-1.1b.json");
  prof_layer *ly = calloc(1, sizeof *ly);
  char why[256];
  int fwd = 0, bwd = 0;
  double T = 2048, h = 1920;
  CHECK(prof_layer_build(m, layer_of_kind(m, "block"), 2, 1, 0, ly, why, sizeof why) == 0);
  for (int i = 0; i < ly->n_ops; i++)
    if (ly->ops[i].type == PROF_GEMM) { if (ly->ops[i].bwd) bwd++; else fwd++; }
  CHECK_INT(fwd, 6);
  CHECK_INT(bwd, 12);
  CHECK_INT(ly->n_allreduce, 4);
  CHECK_NEAR(ly->allreduce_bytes, 2 * T * h, 1e-15);
  /* scores: 8 heads per rank, batched over them: s x s x d, batch 8 */
  CHECK(!strcmp(ly->ops[2].what, "scores"));
  CHECK_INT(ly->ops[2].m, 2048);
  CHECK_INT(ly->ops[2].k, 120);
  CHECK_INT(ly->ops[2].batch, 8);
  CHECK(prof_layer_build(m, layer_of_kind(m, "final_norm"), 2, 1, 0, ly, why, sizeof why) == 0);
  CHECK_NEAR(prof_layer_ew_bytes(ly), (2 * T * h + 2 * T * h + 2 * T * 4)          /* forward */
                                      + (2 * T * h + 2 * T * h + 2 * T * h), 1e-15);  /* backward */
  free(ly);
  hp_model_destroy(&m);
}

TEST(op_list_refuses_a_tp_that_does_not_divide_the_heads)
{
  hp_model *m = load_model("models/llama2-70b.json");
  prof_layer *ly = calloc(1, sizeof *ly);
  char why[256];
  CHECK(prof_layer_build(m, layer_of_kind(m, "block"), 16, 1, 0, ly, why, sizeof why) == -1);
  CHECK_CONTAINS(why, "tp 16 does not divide the heads (64), the key-value heads (8)");
  free(ly);
  hp_model_destroy(&m);
}

TEST(op_list_of_an_explicit_layer_is_a_synthetic_gemm_with_its_flops)
{
  /* gpt2-amp's block.0: no transformer description; a square weight of its parameters
   * and a GEMM with its FLOPs, to rounding of the side and the row count */
  hp_model *m = load_model("models/gpt2-amp.json");
  prof_layer *ly = calloc(1, sizeof *ly);
  char why[256];
  int l = layer_of_kind(m, "block.0");
  CHECK(l >= 0 && m->transformer == NULL);
  CHECK(prof_layer_build(m, l, 1, 4, 0, ly, why, sizeof why) == 0);
  CHECK(ly->synthetic);
  CHECK_NEAR(prof_layer_flops(ly), m->layers[l].flops * 4, 0.01);
  /* saved: a_l mbs, rounded up to whole rows of 1024 16-bit values */
  CHECK(prof_layer_bytes(ly, PROF_SAVED) >= model_act(&m->layers[l], 1, 4));
  CHECK(prof_layer_bytes(ly, PROF_SAVED) < model_act(&m->layers[l], 1, 4) + 2048);
  free(ly);
  hp_model_destroy(&m);
}

static int pair_index(int n, int a, int b) { return a * n + b; }

/* Checks a schedule: every unordered pair once, no rank twice in a slot, no host in two
 * inter-host pairs of a slot. Returns the number of slots, -1 on a violation. */
static int check_schedule(int n, const int *host_of)
{
  prof_schedule s;
  int *seen = calloc((size_t)(n * n + 1), sizeof *seen), bad = 0, slots;
  if (prof_schedule_build(n, host_of, &s)) return -1;
  if (s.n_pairs != n * (n - 1) / 2) bad = 1;
  for (int p = 0; p < s.n_pairs; p++) {
    int a = s.pairs[p].a, b = s.pairs[p].b;
    if (a < 0 || b >= n || a >= b || seen[pair_index(n, a, b)]++) bad = 1;
  }
  for (int sl = 0; sl < s.n_slots && !bad; sl++)
    for (int p = s.slot_start[sl]; p < s.slot_start[sl + 1]; p++)
      for (int q = s.slot_start[sl]; q < p; q++) {
        const prof_pair *x = &s.pairs[p], *y = &s.pairs[q];
        int hx0 = host_of ? host_of[x->a] : x->a, hx1 = host_of ? host_of[x->b] : x->b;
        int hy0 = host_of ? host_of[y->a] : y->a, hy1 = host_of ? host_of[y->b] : y->b;
        if (x->a == y->a || x->a == y->b || x->b == y->a || x->b == y->b) bad = 1;
        if (hx0 != hx1 && hy0 != hy1 &&
            (hx0 == hy0 || hx0 == hy1 || hx1 == hy0 || hx1 == hy1)) bad = 1;
      }
  slots = s.n_slots;
  prof_schedule_free(&s);
  free(seen);
  return bad ? -1 : slots;
}

TEST(schedule_times_every_pair_once_and_shares_no_rank_or_host_link)
{
  int two_hosts[4] = { 0, 0, 1, 1 }, rr3[12], one[4] = { 0, 0, 0, 0 };
  for (int i = 0; i < 12; i++) rr3[i] = i % 3;
  for (int n = 1; n <= 9; n++) {
    int slots = check_schedule(n, NULL);
    /* one host per rank: a plain tournament, n - 1 rounds (n even) or n (n odd) */
    CHECK_INT(slots, n < 2 ? 0 : n % 2 ? n : n - 1);
  }
  /* all on one host: 3 rounds of 2 intra-host pairs */
  CHECK_INT(check_schedule(4, one), 3);
  /* hosts {0, 1}, {2, 3}: rounds {0-3, 1-2} and {1-3, 0-2} each split in two (both
   * pairs cross the same two hosts), round {2-3, 0-1} stays: 5 slots */
  CHECK_INT(check_schedule(4, two_hosts), 5);
  CHECK(check_schedule(12, rr3) > 0);
}

TEST(device_order_numbers_hosts_in_order_then_ranks)
{
  int host_of[5] = { 0, 1, 0, 2, 1 }, dev[5], rank[5], size[3];
  CHECK_INT(prof_device_order(5, host_of, dev, rank, size), 3);
  /* host 0: ranks 0, 2 -> devices 0, 1; host 1: ranks 1, 4 -> 2, 3; host 2: rank 3 -> 4 */
  CHECK_INT(dev[0], 0); CHECK_INT(dev[2], 1); CHECK_INT(dev[1], 2); CHECK_INT(dev[4], 3);
  CHECK_INT(dev[3], 4);
  CHECK_INT(rank[1], 2); CHECK_INT(rank[4], 3);
  CHECK_INT(size[0], 2); CHECK_INT(size[1], 2); CHECK_INT(size[2], 1);
}

TEST(median_and_fits_by_hand)
{
  double odd[3] = { 3, 1, 2 }, even[4] = { 4, 1, 3, 2 };
  double x[6], y[6], a, b;
  CHECK_NEAR(prof_median(odd, 3), 2, 0);
  CHECK_NEAR(prof_median(even, 4), 2.5, 0);
  CHECK(isnan(prof_median(even, 0)));
  /* an exact line: 2 us + x / (1 GB/s) */
  for (int i = 0; i < 6; i++) { x[i] = pow(10, 3 + i); y[i] = 2e-6 + x[i] / 1e9; }
  CHECK(prof_fit_line(x, y, 6, &a, &b) == 0);
  CHECK_NEAR(a, 2e-6, 1e-9);
  CHECK_NEAR(b, 1e-9, 1e-9);
  /* y = 2x - 1 at 1, 2, 3: the intercept would be negative, so through the origin with
   * weights 1/y^2: b = sum w x y / sum w x^2 */
  x[0] = 1; x[1] = 2; x[2] = 3; y[0] = 1; y[1] = 3; y[2] = 5;
  CHECK(prof_fit_line(x, y, 3, &a, &b) == 0);
  CHECK_NEAR(a, 0, 0);
  CHECK_NEAR(b, (1 + 6 / 9.0 + 15 / 25.0) / (1 + 4 / 9.0 + 9 / 25.0), 1e-12);
  /* one distinct x, or a zero time, cannot be fitted */
  x[1] = x[2] = 1;
  CHECK(prof_fit_line(x, y, 3, &a, &b) == -1);
  x[1] = 2; y[1] = 0;
  CHECK(prof_fit_line(x, y, 3, &a, &b) == -1);
}

TEST(fits_of_a_runs_collectives_and_layer_times)
{
  prof_coll c[5];
  prof_coll_fit f;
  prof_point pts[5];
  prof_run r;
  /* all-reduce on 4 ranks: 10 us + bytes / 10 GB/s of algorithm bandwidth, the bus
   * bandwidth 1.5 times that; a send/recv point on its own does not fit */
  for (int i = 0; i < 4; i++) {
    snprintf(c[i].op, sizeof c[i].op, "allreduce");
    c[i].ranks = 4;
    c[i].bytes = pow(16, i + 2);
    c[i].seconds = 1e-5 + c[i].bytes / 1e10;
  }
  snprintf(c[4].op, sizeof c[4].op, "sendrecv");
  c[4].ranks = 4;
  c[4].bytes = 1024;
  c[4].seconds = 1e-5;
  CHECK(prof_fit_collective(c, 5, "allreduce", 4, &f) == 0);
  CHECK(!strcmp(f.op, "allreduce"));
  CHECK_INT(f.ranks, 4);
  CHECK_INT(f.points, 4);
  CHECK_NEAR(f.lat, 1e-5, 1e-9);
  CHECK_NEAR(f.bus_bw, 1.5e10, 1e-9);
  CHECK(prof_fit_collective(c, 5, "sendrecv", 4, &f) == -1);
  CHECK(prof_fit_collective(c, 5, "allreduce", 8, &f) == -1);
  /* layer times: block on type 0 at tp 1, mbs 1, 2, 4 (10 ms + 5 ms a sample) with a
   * tp 2 point between them; head at one mbs: one fit */
  memset(pts, 0, sizeof pts);
  memset(&r, 0, sizeof r);
  for (int i = 0; i < 5; i++) snprintf(pts[i].kind, sizeof pts[i].kind, "%s", i < 4 ? "block" : "head");
  for (int i = 0; i < 4; i++) {
    pts[i].tp = i == 1 ? 2 : 1;
    pts[i].mbs = i == 0 ? 1 : i == 2 ? 2 : 4;
    pts[i].seconds = 0.01 + 0.005 * pts[i].mbs;
  }
  pts[4].tp = pts[4].mbs = 1;
  pts[4].seconds = 0.02;
  r.points = pts;
  r.n_points = 5;
  CHECK(prof_fit_layers(&r) == 0);
  CHECK_INT(r.n_fits, 1);
  CHECK(!strcmp(r.fits[0].kind, "block"));
  CHECK_INT(r.fits[0].tp, 1);
  CHECK_INT(r.fits[0].points, 3);
  CHECK_NEAR(r.fits[0].fixed, 0.01, 1e-9);
  CHECK_NEAR(r.fits[0].per_sample, 0.005, 1e-9);
  free(r.fits);
}

/* prof_parse_args on a NULL-terminated list (argv[0] first), copied into writable
 * strings (static: the options point into them). */
static int parse(prof_opts *o, char *err, size_t n, const char *const *args)
{
  static char buf[16][64];
  char *argv[16];
  int argc = 0;
  for (; args[argc] && argc < 16; argc++) {
    snprintf(buf[argc], sizeof buf[argc], "%s", args[argc]);
    argv[argc] = buf[argc];
  }
  return prof_parse_args(argc, argv, o, err, n);
}

TEST(arguments_take_defaults_and_say_what_is_wrong)
{
  prof_opts o;
  char err[256];
  static const char *const none[] = { "hetplan-profile", NULL };
  static const char *const some[] = { "hetplan-profile", "--tp", "1,2,4", "--matrix-bytes", "1M",
                                      "--mpi-only", "--tflops", "312", "--sequence-parallel", NULL };
  static const char *const bad_size[] = { "hetplan-profile", "--matrix-bytes", "3Q", NULL };
  static const char *const unknown[] = { "hetplan-profile", "--colour", "red", NULL };
  static const char *const no_value[] = { "hetplan-profile", "--model", NULL };
  static const char *const order[] = { "hetplan-profile", "--nccl-min-bytes", "1M",
                                       "--nccl-max-bytes", "1K", NULL };
  static const char *const reserve[] = { "hetplan-profile", "--mem-gib", "16", "--reserved-gib",
                                         "16", NULL };
  static const char *const help[] = { "hetplan-profile", "--help", NULL };
  CHECK_INT(parse(&o, err, sizeof err, none), 0);
  CHECK(!strcmp(o.cluster_out, "profiled.cluster.json") && !strcmp(o.profile_out, "profiled.profile.json"));
  CHECK(!o.model && !o.mpi_only && !o.help && o.n_tps == 0 && o.n_mbs == 0);
  CHECK_INT(o.sequence_parallel, 0);
  CHECK_INT(o.max_mbs, 16);
  CHECK_INT(o.reps, 10);
  CHECK_INT(o.matrix_bytes, 16L << 20);
  CHECK_NEAR(o.nccl_max, 256.0 * 1048576, 0);
  CHECK(o.mem_gib < 0 && o.reserved_gib < 0 && o.tflops < 0 && o.efficiency < 0);
  CHECK_INT(parse(&o, err, sizeof err, some), 0);
  CHECK_INT(o.n_tps, 3);
  CHECK_INT(o.tps[2], 4);
  CHECK_INT(o.matrix_bytes, 1048576);
  CHECK(o.mpi_only);
  CHECK_NEAR(o.tflops, 312, 0);
  CHECK_INT(o.sequence_parallel, 1);
  CHECK_INT(parse(&o, err, sizeof err, bad_size), 2);
  CHECK_CONTAINS(err, "--matrix-bytes: expected a size from 1 to 1G, got '3Q'");
  CHECK_INT(parse(&o, err, sizeof err, unknown), 2);
  CHECK_CONTAINS(err, "unknown flag '--colour'");
  CHECK_INT(parse(&o, err, sizeof err, no_value), 2);
  CHECK_CONTAINS(err, "--model needs a value");
  CHECK_INT(parse(&o, err, sizeof err, order), 2);
  CHECK_CONTAINS(err, "--nccl-min-bytes is above --nccl-max-bytes");
  CHECK_INT(parse(&o, err, sizeof err, reserve), 2);
  CHECK_CONTAINS(err, "--reserved-gib must be below --mem-gib");
  CHECK_INT(parse(&o, err, sizeof err, help), 0);
  CHECK(o.help);
  CHECK(!strncmp(prof_help, "usage: mpirun", 13));
}

TEST(bus_bandwidth_factors_are_nccl_tests)
{
  CHECK_NEAR(prof_bus_factor("allreduce", 8), 1.75, 0);
  CHECK_NEAR(prof_bus_factor("allgather", 8), 0.875, 0);
  CHECK_NEAR(prof_bus_factor("reducescatter", 4), 0.75, 0);
  CHECK_NEAR(prof_bus_factor("sendrecv", 8), 1, 0);
  CHECK_NEAR(prof_bus_factor("broadcast", 8), 0, 0);
}

TEST(device_names_become_type_names)
{
  char t[64];
  prof_type_name("NVIDIA H100 80GB HBM3", t, sizeof t);
  CHECK(!strcmp(t, "H100"));
  prof_type_name("NVIDIA H100 PCIe", t, sizeof t);
  CHECK(!strcmp(t, "H100-PCIe"));
  prof_type_name("NVIDIA L40S", t, sizeof t);
  CHECK(!strcmp(t, "L40S"));
  prof_type_name("NVIDIA L4", t, sizeof t);
  CHECK(!strcmp(t, "L4"));
  prof_type_name("Tesla V100-SXM2-16GB", t, sizeof t);
  CHECK(!strcmp(t, "V100"));
  prof_type_name("NVIDIA GeForce RTX 4090", t, sizeof t);
  CHECK(!strcmp(t, "GeForce-RTX-4090"));
  CHECK_NEAR(prof_peak_tflops("NVIDIA H100 80GB HBM3"), 989, 0);
  CHECK_NEAR(prof_peak_tflops("Tesla T4"), 65, 0);
  CHECK_NEAR(prof_peak_tflops("NVIDIA GeForce RTX 4090"), 0, 0);
}

static int warnings;
static void count_warning(void *ctx, const char *msg) { (void)ctx; (void)msg; warnings++; }

/* 4 devices on 2 hosts of 2; bandwidth (bytes/s) 100e9 inside a host except 0 -> 1
 * at 90e9, 10e9 between hosts except 3 -> 0 at 8e9; latency 2 us inside, 10 us between */
static void fill_run(prof_run *r, prof_host *hosts, double *bw, double *lat)
{
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "test-2x2");
  snprintf(r->source, sizeof r->source, "test_prof.c");
  r->n_types = 1;
  snprintf(r->types[0].name, sizeof r->types[0].name, "H100");
  r->types[0].mem_gib = 79.1;
  r->types[0].reserved_gib = 1;
  r->types[0].tflops = 989;
  r->types[0].efficiency = 0.5;
  r->n_hosts = 2;
  r->hosts = hosts;
  snprintf(hosts[0].name, sizeof hosts[0].name, "node-a");
  snprintf(hosts[1].name, sizeof hosts[1].name, "node-b");
  hosts[0].gpus = hosts[1].gpus = 2;
  r->n_devices = 4;
  r->bw = bw;
  r->lat = lat;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      int same = i / 2 == j / 2;
      bw[i * 4 + j] = i == j ? 0 : same ? 100e9 : 10e9;
      lat[i * 4 + j] = i == j ? 0 : same ? 2e-6 : 10e-6;
    }
  bw[0 * 4 + 1] = 90e9;
  bw[3 * 4 + 0] = 8e9;
}

TEST(cluster_file_reads_back_through_hetplans_loader)
{
  prof_run r;
  prof_host hosts[2];
  double bw[16], lat[16];
  hp_cluster *c = NULL;
  hp_diag d = {0};
  char *text;
  fill_run(&r, hosts, bw, lat);
  text = prof_cluster_json(&r);
  CHECK(text != NULL);
  d.warn = count_warning;
  warnings = 0;
  CHECK(hp_cluster_parse(text, "profiled.json", &c, &d) == HP_OK);
  CHECK_INT(warnings, 0);
  CHECK_INT(c->n_devices, 4);
  CHECK_INT(c->n_nodes, 2);
  CHECK(!strcmp(c->nodes[1].name, "node-b"));
  CHECK_NEAR(c->types[0].mem, 79.1 * 1073741824.0, 1e-12);
  /* intra-node default: the slowest pair inside the host (0 -> 1: 90e9 B/s = 720 Gbps) */
  CHECK_NEAR(c->nodes[0].intra_bw, 90e9, 1e-12);
  CHECK_NEAR(c->nodes[1].intra_bw, 100e9, 1e-12);
  CHECK_NEAR(c->nodes[0].intra_lat, 2e-6, 1e-12);
  /* the matrix, made symmetric on load (the smaller bandwidth) */
  CHECK(c->dev_bw != NULL);
  CHECK_NEAR(c->dev_bw[0 * 4 + 3], 8e9, 1e-12);
  CHECK_NEAR(c->dev_bw[3 * 4 + 0], 8e9, 1e-12);
  CHECK_NEAR(c->dev_bw[1 * 4 + 2], 10e9, 1e-12);
  CHECK_NEAR(c->dev_lat[1 * 4 + 2], 10e-6, 1e-12);
  CHECK_NEAR(c->node_bw[0 * 2 + 1], 8e9, 1e-12);   /* inter_gbps: the slowest pair */
  free(text);
  hp_cluster_destroy(&c);
}

TEST(profile_file_reads_back_and_binds_to_its_model)
{
  prof_run r;
  prof_host hosts[2];
  double bw[16], lat[16];
  prof_point pts[2];
  prof_line_fit fit;
  prof_coll coll;
  prof_coll_fit cfit;
  hp_profile *pr = NULL;
  hp_cluster *c = NULL;
  hp_model *m = NULL;
  hp_problem *p = NULL;
  hp_diag d = {0};
  hp_job job = { .gbs = 8, .schedule = HP_1F1B };
  char *ptext, *ctext;
  fill_run(&r, hosts, bw, lat);
  memset(pts, 0, sizeof pts);
  for (int i = 0; i < 2; i++) {
    snprintf(pts[i].kind, sizeof pts[i].kind, "block");
    pts[i].tp = 2;
    pts[i].mbs = 1 + 3 * i;
    pts[i].compute_seconds = 0.01 * (1 + 3 * i);
    pts[i].tp_comm_seconds = 0.001;
    pts[i].seconds = pts[i].compute_seconds + pts[i].tp_comm_seconds;
    pts[i].act_bytes = 1e8;
    pts[i].peak_bytes = 2e8;
  }
  memset(&fit, 0, sizeof fit);
  snprintf(fit.kind, sizeof fit.kind, "block");
  fit.tp = 2; fit.points = 2; fit.fixed = 0.0077; fit.per_sample = 0.0033;
  memset(&coll, 0, sizeof coll);
  snprintf(coll.op, sizeof coll.op, "allreduce");
  coll.ranks = 4; coll.bytes = 1 << 20; coll.seconds = 1e-4;
  memset(&cfit, 0, sizeof cfit);
  snprintf(cfit.op, sizeof cfit.op, "allreduce");
  cfit.ranks = 4; cfit.points = 8; cfit.lat = 2e-5; cfit.bus_bw = 1.5e11;
  r.points = pts; r.n_points = 2;
  r.fits = &fit; r.n_fits = 1;
  r.colls = &coll; r.n_colls = 1;
  r.coll_fits = &cfit; r.n_coll_fits = 1;
  ptext = prof_profile_json(&r);
  ctext = prof_cluster_json(&r);
  CHECK(ptext && ctext);
  CHECK_CONTAINS(ptext, "\"bus_gbps\":\t1200");
  d.warn = count_warning;
  warnings = 0;
  CHECK(hp_profile_parse(ptext, "profiled.profile.json", &pr, &d) == HP_OK);
  CHECK_INT(warnings, 0);
  CHECK_INT(pr->n_measures, 2);
  CHECK_NEAR(pr->measures[1].seconds, 0.041, 1e-12);
  CHECK_INT(pr->n_collectives, 1);
  CHECK(hp_cluster_parse(ctext, "profiled.cluster.json", &c, &d) == HP_OK);
  m = load_model("models/llama2-7b.json");
  CHECK(hp_problem_create(&p, m, c, pr, job, &d) == HP_OK);
  /* measured at mbs 1 and 4, so mbs 2 interpolates: 0.011 + (0.041 - 0.011) / 3 */
  CHECK(hp_layer_time_profiled(p, 1, 0, 2));
  CHECK_NEAR(hp_layer_time(p, 1, 0, 2, 2, 1e11, 0), 0.021, 1e-12);
  hp_problem_destroy(&p);
  free(ptext);
  free(ctext);
}

/* The profile records what it measured for (issue 23): the model, each timed kind's
 * shape, the GPU of each type; hetplan binds it to that model and refuses it for another
 * (Llama-2-7B's block times for Llama-2-70B's blocks), naming the difference. */
TEST(profile_file_records_the_shape_it_measured_and_refuses_another_model)
{
  prof_run r;
  prof_host hosts[2];
  double bw[16], lat[16];
  prof_point pt;
  hp_profile *pr = NULL, *pr2 = NULL;
  hp_cluster *c = NULL, *c2 = NULL;
  hp_model *m7 = load_model("models/llama2-7b.json");
  hp_problem *p = NULL;
  hp_diag d = {0};
  hp_job job = { .gbs = 8, .schedule = HP_1F1B };
  char *ptext, *ctext;
  fill_run(&r, hosts, bw, lat);
  snprintf(r.types[0].gpu, sizeof r.types[0].gpu, "NVIDIA H100 80GB HBM3");
  r.types[0].bf16 = 1;
  memset(&pt, 0, sizeof pt);
  snprintf(pt.kind, sizeof pt.kind, "block");
  pt.tp = 1;
  pt.mbs = 1;
  pt.seconds = pt.compute_seconds = 0.0123;
  r.points = &pt;
  r.n_points = 1;
  r.model = m7;
  ptext = prof_profile_json(&r);
  ctext = prof_cluster_json(&r);
  CHECK(ptext && ctext);
  CHECK_CONTAINS(ptext, "\"model\":\t\"llama2-7b\"");
  CHECK_CONTAINS(ptext, "\"params\":\t202383360");
  CHECK_CONTAINS(ptext, "\"ffn\":\t11008");
  CHECK_CONTAINS(ptext, "\"name\":\t\"NVIDIA H100 80GB HBM3\"");
  CHECK(strstr(ptext, "\"embed\":") == NULL);   /* only kinds timed are recorded */
  CHECK(hp_profile_parse(ptext, "p.json", &pr, &d) == HP_OK);
  CHECK(hp_profile_parse(ptext, "p.json", &pr2, &d) == HP_OK);
  CHECK_INT(pr->n_kinds, 1);
  CHECK(!strcmp(pr->model, "llama2-7b"));
  CHECK_INT(pr->kinds[0].hidden, 4096);
  CHECK_INT(pr->kinds[0].dtype_bytes, 2);
  CHECK(hp_cluster_parse(ctext, "c.json", &c, &d) == HP_OK);
  CHECK(hp_cluster_parse(ctext, "c.json", &c2, &d) == HP_OK);
  CHECK(hp_problem_create(&p, m7, c, pr, job, &d) == HP_OK);
  hp_problem_destroy(&p);
  CHECK(hp_problem_create(&p, load_model("models/llama2-70b.json"), c2, pr2, job, &d) == HP_INVAL);
  CHECK_CONTAINS(d.msg, "(measured for model 'llama2-7b') does not fit model 'llama2-70b': "
                 "kind 'block' was timed at 2.024e+08 parameters");
  CHECK_CONTAINS(d.msg, "hidden 4096 vs 8192");
  free(ptext);
  free(ctext);
}

/* Measured memory (cost-model.md 1, version 1.2): the profile writes act_bytes and
 * work_bytes only for points measured on a GPU, and records the sequence_parallel
 * setting; read back, the planner charges the measured figures in place of the formula's
 * under a job with the same setting, and the formula under the other. */
static const char mem_model[] =
  "{ \"name\": \"two-blocks\", \"layers\": ["
  "  { \"name\": \"b\", \"kind\": \"blk\", \"repeat\": 2, \"params\": 1e6, \"act_bytes\": 1e6,"
  "    \"out_bytes\": 1e3, \"flops\": 1e9 } ] }";

/* The profile of two points of kind blk (H100, tp 1, mbs 1 and 2) written by the
 * profiler's writer, memory measured or not, under sequence parallelism or not; bound
 * with the 2 x 2 cluster to a job of gbs 8 and the given setting, and evaluated for the
 * plan pp 1, tp 1, dp 4, mbs 2 (gas 1, one micro-batch in flight). *text: the profile. */
static void mem_profile(int measured, int sp_profile, int sp_job, hp_eval *e, char **text)
{
  prof_run r;
  prof_host hosts[2];
  double bw[16], lat[16];
  prof_point pts[2];
  hp_profile *pr = NULL;
  hp_cluster *c = NULL;
  hp_model *m = NULL;
  hp_problem *p = NULL;
  hp_plan *pl = NULL;
  hp_diag d = {0};
  hp_job job = { .gbs = 8, .schedule = HP_1F1B };
  char *ptext, *ctext;
  fill_run(&r, hosts, bw, lat);
  memset(pts, 0, sizeof pts);
  for (int i = 0; i < 2; i++) {
    snprintf(pts[i].kind, sizeof pts[i].kind, "blk");
    pts[i].tp = 1;
    pts[i].mbs = 1 + i;
    pts[i].seconds = pts[i].compute_seconds = 0.01 * (1 + i);
    pts[i].peak_bytes = 9e9;
    pts[i].mem_measured = measured;
    pts[i].act_bytes = measured ? 3e6 * (1 + i) : 0;
    pts[i].work_bytes = measured ? 5e5 * (1 + i) : 0;
  }
  r.points = pts;
  r.n_points = 2;
  r.sequence_parallel = sp_profile;
  *text = ptext = prof_profile_json(&r);
  ctext = prof_cluster_json(&r);
  CHECK(ptext && ctext);
  d.warn = count_warning;
  warnings = 0;
  CHECK(hp_profile_parse(ptext, "p.json", &pr, &d) == HP_OK);
  CHECK_INT(warnings, 0);
  CHECK_INT(pr->sequence_parallel, sp_profile);
  CHECK_INT(pr->n_measures, 2);
  CHECK_INT(pr->measures[1].has_act, measured);
  CHECK_INT(pr->measures[1].has_work, measured);
  if (measured) {
    CHECK_NEAR(pr->measures[1].act, 6e6, 0);
    CHECK_NEAR(pr->measures[1].work, 1e6, 0);
  }
  CHECK(hp_cluster_parse(ctext, "c.json", &c, &d) == HP_OK);
  CHECK(hp_model_parse(mem_model, "m.json", &m, &d) == HP_OK);
  job.sequence_parallel = sp_job;
  d.warn = NULL;
  CHECK(hp_problem_create(&p, m, c, pr, job, &d) == HP_OK);
  CHECK(hp_plan_create(&pl, 1, 1, 4, 2, &d) == HP_OK);
  pl->mbs = 2;
  pl->schedule = HP_1F1B;
  pl->first[0] = 0;
  pl->first[1] = 2;
  for (int r_ = 0; r_ < 4; r_++) pl->dev[HP_SLOT(pl, 0, r_, 0)] = r_;
  CHECK(hp_plan_set_gas(p, pl, &d) == HP_OK);
  CHECK(hp_evaluate(p, pl, e, &d) == HP_OK);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
  free(ctext);
}

TEST(profile_writes_measured_memory_only_and_the_planner_charges_it)
{
  hp_eval e = {0};
  char *text = NULL;
  /* measured, without sequence parallelism, job without: the two blocks keep the
   * measured 6e6 each at mbs 2 (the formula's a_l mbs would be 2e6), the work is the
   * measured 1e6 (the formula's W is 0) */
  mem_profile(1, 0, 0, &e, &text);
  CHECK_CONTAINS(text, "\"sequence_parallel\":\tfalse");
  CHECK_CONTAINS(text, "\"act_bytes\":\t3000000");
  CHECK_CONTAINS(text, "\"work_bytes\":\t1000000");
  CHECK_NEAR(e.mem_act[0], 2 * 6e6, 1e-12);
  CHECK_NEAR(e.mem_work[0], 1e6, 1e-12);
  hp_eval_release(&e);
  free(text);
  /* not measured (no GPU pass, or a synthetic layer): no key at all, the formula */
  mem_profile(0, 0, 0, &e, &text);
  CHECK(strstr(text, "act_bytes") == NULL && strstr(text, "work_bytes") == NULL);
  CHECK_NEAR(e.mem_act[0], 2 * 2 * 1e6, 1e-12);
  CHECK_NEAR(e.mem_work[0], 0, 0);
  hp_eval_release(&e);
  free(text);
  /* measured under --sequence-parallel: recorded; a job with it charges the figures, a
   * job without it keeps the formula */
  mem_profile(1, 1, 1, &e, &text);
  CHECK_CONTAINS(text, "\"sequence_parallel\":\ttrue");
  CHECK_NEAR(e.mem_act[0], 2 * 6e6, 1e-12);
  CHECK_NEAR(e.mem_work[0], 1e6, 1e-12);
  hp_eval_release(&e);
  free(text);
  mem_profile(1, 1, 0, &e, &text);
  CHECK_NEAR(e.mem_act[0], 2 * 2 * 1e6, 1e-12);
  CHECK_NEAR(e.mem_work[0], 0, 0);
  hp_eval_release(&e);
  free(text);
}
