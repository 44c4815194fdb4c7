/* test_transformer.c -- the transformer generator against published parameter counts
 * and the Korthikanti et al. activation formula; FlashAttention (the default) against
 * eager attention; head_dim and the Gemma and Qwen3 options; what cost model 1.2 reads
 * (checkpointable layers, update_bytes); GPT-3 175B as Megatron-LM trains it fits an
 * 80 GB H100 (docs/transformer.md). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"

static hp_model *expand(const char *tf)
{
  char text[1024];
  hp_model *m = NULL;
  hp_diag d = {0};
  snprintf(text, sizeof text, "{ \"transformer\": %s }", tf);
  if (hp_model_parse(text, "t.json", &m, &d)) {
    fprintf(stderr, "expand failed: %s\n", d.msg);
    exit(3);
  }
  return m;
}

TEST(transformer_gpt2_medium_matches_its_published_size)
{
  hp_model *m = expand("{ \"family\": \"gpt\", \"layers\": 24, \"hidden\": 1024, \"heads\": 16,"
                       "  \"seq\": 1024, \"vocab\": 50257 }");
  CHECK_INT(m->n_layers, 27);
  /* 354,823,168 with the head tied to the embedding; hetplan keeps an untied head copy
   * (Megatron does when the head sits on another stage): + 50257 * 1024 */
  CHECK_NEAR(hp_model_total_params(m), 354823168.0 + 50257.0 * 1024, 0);
  /* block: 12 h^2 + 13 h */
  CHECK_NEAR(m->layers[1].params, 12.0 * 1024 * 1024 + 13 * 1024, 0);
  /* fwd+bwd = 3 * (24 s h^2 + 4 s^2 h), and FlashAttention's backward recomputing QK^T,
   * 2 s^2 h */
  CHECK_NEAR(m->layers[1].flops, 3.0 * (24.0 * 1024 * 1024 * 1024 + 4.0 * 1024 * 1024 * 1024)
             + 2.0 * 1024 * 1024 * 1024, 0);
  /* Korthikanti without the 5 a s^2 of scores FlashAttention does not keep: 34 s h, and
   * the softmax's fp32 log-sum-exp 4 a s; of which 10 s h not divided by TP */
  CHECK_NEAR(m->layers[1].act_bytes, 1024.0 * 1024 * 34 + 4.0 * 16 * 1024, 0);
  CHECK_NEAR(m->layers[1].act_repl, 10.0 * 1024 * 1024, 0);
  CHECK_NEAR(m->layers[1].tp_comm, 8.0 * 1024 * 1024, 0);
  CHECK_NEAR(m->layers[1].out_bytes, 2.0 * 1024 * 1024, 0);
  CHECK(!m->layers[25].splittable);                     /* final norm */
  CHECK(!strcmp(m->layers[26].kind, "head"));
  CHECK(!strcmp(m->layers[3].name, "block.2"));
  CHECK_NEAR(m->input_bytes, 8.0 * 1024, 0);
  hp_model_destroy(&m);
}

TEST(transformer_llama2_sizes_match_meta)
{
  hp_model *m7 = expand("{ \"family\": \"llama\", \"layers\": 32, \"hidden\": 4096, \"heads\": 32,"
                        "  \"seq\": 4096, \"vocab\": 32000 }");
  hp_model *m13 = expand("{ \"family\": \"llama\", \"layers\": 40, \"hidden\": 5120, \"heads\": 40,"
                         "  \"seq\": 4096, \"vocab\": 32000 }");
  hp_model *m70 = expand("{ \"family\": \"llama\", \"layers\": 80, \"hidden\": 8192, \"heads\": 64,"
                         "  \"kv_heads\": 8, \"ffn\": 28672, \"seq\": 4096, \"vocab\": 32000 }");
  /* Llama-2 7B: 6,738,415,616; 13B: 13,015,864,320; 70B: 68,976,648,192 (ffn 11008 and
   * 13824 come from the 256-rounded 8h/3 rule) */
  CHECK_NEAR(hp_model_total_params(m7), 6738415616.0, 0);
  CHECK_NEAR(hp_model_total_params(m13), 13015864320.0, 0);
  CHECK_NEAR(hp_model_total_params(m70), 68976648192.0, 0);
  hp_model_destroy(&m7);
  hp_model_destroy(&m13);
  hp_model_destroy(&m70);
}

TEST(transformer_rejects_heads_that_do_not_divide_hidden)
{
  CHECK_CONTAINS(fx_model_error("{ \"transformer\": { \"family\": \"gpt\", \"layers\": 2, "
                                "\"hidden\": 100, \"heads\": 3, \"seq\": 8, \"vocab\": 10 } }"),
                 "m.json: transformer.heads: 3 does not divide hidden 100");
  CHECK_CONTAINS(fx_model_error("{ \"transformer\": { \"family\": \"bert\", \"layers\": 2, "
                                "\"hidden\": 100, \"heads\": 4, \"seq\": 8, \"vocab\": 10 } }"),
                 "transformer.family: expected \"gpt\" or \"llama\"");
}

/* Every number of two expansions, layer by layer. */
static int same_layers(const hp_model *x, const hp_model *y)
{
  if (x->n_layers != y->n_layers || x->tied_params != y->tied_params) return 0;
  for (int l = 0; l < x->n_layers; l++) {
    const hp_layer *a = &x->layers[l], *b = &y->layers[l];
    if (a->params != b->params || a->flops != b->flops || a->act_bytes != b->act_bytes ||
        a->act_repl != b->act_repl || a->out_bytes != b->out_bytes || a->tp_comm != b->tp_comm ||
        a->work_bytes != b->work_bytes || a->splittable != b->splittable ||
        a->no_recompute != b->no_recompute)
      return 0;
  }
  return 1;
}

/* head_dim equal to hidden / heads is the description without it, bit for bit, in both
 * families and with every bias */
TEST(transformer_head_dim_of_hidden_over_heads_changes_nothing)
{
  hp_model *a = expand("{ \"family\": \"llama\", \"layers\": 4, \"hidden\": 4096, \"heads\": 32,"
                       "  \"kv_heads\": 8, \"seq\": 4096, \"vocab\": 32000, \"qkv_bias\": true,"
                       "  \"out_bias\": true, \"mlp_bias\": true }");
  hp_model *b = expand("{ \"family\": \"llama\", \"layers\": 4, \"hidden\": 4096, \"heads\": 32,"
                       "  \"kv_heads\": 8, \"head_dim\": 128, \"seq\": 4096, \"vocab\": 32000,"
                       "  \"qkv_bias\": true, \"out_bias\": true, \"mlp_bias\": true }");
  hp_model *c = expand("{ \"family\": \"gpt\", \"layers\": 4, \"hidden\": 1024, \"heads\": 16,"
                       "  \"seq\": 1024, \"vocab\": 50257 }");
  hp_model *e = expand("{ \"family\": \"gpt\", \"layers\": 4, \"hidden\": 1024, \"heads\": 16,"
                       "  \"head_dim\": 64, \"seq\": 1024, \"vocab\": 50257, \"mlp\": \"gelu\" }");
  CHECK(same_layers(a, b));
  CHECK(same_layers(c, e));
  hp_model_destroy(&a);
  hp_model_destroy(&b);
  hp_model_destroy(&c);
  hp_model_destroy(&e);
}

/* Gemma-1 7B (h 3072, 16 heads of d = 256: Q is 4096 wide, not h), GeGLU, tied:
 * 8,537,680,896 parameters as Google publishes; the block's FLOPs and saved activations
 * follow the attention's width a d */
TEST(transformer_head_dim_wider_than_hidden_over_heads)
{
  const double s = 4096, h = 3072, a = 16, d = 256, q = a * d, f = 24576, V = 256000;
  hp_model *m = expand("{ \"family\": \"llama\", \"layers\": 28, \"hidden\": 3072, \"heads\": 16,"
                       "  \"head_dim\": 256, \"ffn\": 24576, \"seq\": 4096, \"vocab\": 256000,"
                       "  \"mlp\": \"geglu\", \"tied\": true }");
  CHECK(m->transformer->geglu);
  CHECK_NEAR(hp_model_unique_params(m), 8537680896.0, 0);
  /* Q and O h q, K and V h q too (no GQA), the gated MLP 3 h f, two norms */
  CHECK_NEAR(m->layers[1].params, 4 * h * q + 3 * h * f + 2 * h, 0);
  /* 3 x (2 s (projections) + QK^T and AV 4 s^2 q + 2 s (MLP)), QK^T again 2 s^2 q */
  CHECK_NEAR(m->layers[1].flops, 3 * (2 * s * 4 * h * q + 4 * s * s * q + 2 * s * 3 * h * f)
             + 2 * s * s * q, 0);
  /* 12 sh + 4 s hk + 8 sf + 4 a s (FlashAttention's log-sum-exp), Q and O's input 4 s (q - h)
   * wider: with hk = q, 8 sh + 8 sq + 8 sf + 4 a s */
  CHECK_NEAR(m->layers[1].act_bytes, 8 * s * h + 8 * s * q + 8 * s * f + 4 * a * s, 0);
  CHECK_NEAR(m->layers[1].act_repl, 8 * s * h, 0);
  CHECK_NEAR(m->layers[1].tp_comm, 8 * s * h, 0);    /* the all-reduced output is h wide */
  CHECK_NEAR(m->layers[1].out_bytes, 2 * s * h, 0);
  CHECK_NEAR(m->tied_params, V * h, 0);
  hp_model_destroy(&m);
}

/* Gemma 2's four norms and soft-capping, Qwen3's Q and K norms, against the same
 * description without them */
TEST(transformer_post_norms_qk_norm_and_softcaps)
{
  const double s = 2048, h = 2304, a = 8, g = 4, d = 256, V = 256000;
  hp_model *base = expand("{ \"family\": \"llama\", \"layers\": 2, \"hidden\": 2304,"
                          "  \"heads\": 8, \"kv_heads\": 4, \"head_dim\": 256, \"ffn\": 9216,"
                          "  \"seq\": 2048, \"vocab\": 256000, \"mlp\": \"geglu\" }");
  hp_model *g2 = expand("{ \"family\": \"llama\", \"layers\": 2, \"hidden\": 2304,"
                        "  \"heads\": 8, \"kv_heads\": 4, \"head_dim\": 256, \"ffn\": 9216,"
                        "  \"seq\": 2048, \"vocab\": 256000, \"mlp\": \"geglu\","
                        "  \"post_norms\": true, \"attn_softcap\": true, \"logit_softcap\": true }");
  hp_model *qk = expand("{ \"family\": \"llama\", \"layers\": 2, \"hidden\": 2304,"
                        "  \"heads\": 8, \"kv_heads\": 4, \"head_dim\": 256, \"ffn\": 9216,"
                        "  \"seq\": 2048, \"vocab\": 256000, \"qk_norm\": true }");
  /* two more norms of h; their inputs saved and not divided by TP; the tanh of the
   * logits b s V (FlashAttention caps the scores it recomputes: nothing saved); no FLOPs
   * counted for either */
  CHECK_NEAR(g2->layers[1].params - base->layers[1].params, 2 * h, 0);
  CHECK_NEAR(g2->layers[1].act_bytes - base->layers[1].act_bytes, 4 * s * h, 0);
  CHECK_NEAR(g2->layers[1].act_repl - base->layers[1].act_repl, 4 * s * h, 0);
  CHECK_NEAR(g2->layers[1].flops, base->layers[1].flops, 0);
  CHECK_NEAR(g2->layers[4].act_bytes - base->layers[4].act_bytes, 2 * s * V, 0);
  CHECK_NEAR(g2->layers[4].params, base->layers[4].params, 0);
  /* a norm of d on Q and on K; their inputs (a d + g d wide) saved, divided by heads */
  CHECK_NEAR(qk->layers[1].params - base->layers[1].params, 2 * d, 0);
  CHECK_NEAR(qk->layers[1].act_bytes - base->layers[1].act_bytes, 2 * s * (a * d + g * d), 0);
  CHECK_NEAR(qk->layers[1].act_repl, base->layers[1].act_repl, 0);
  hp_model_destroy(&base);
  hp_model_destroy(&g2);
  hp_model_destroy(&qk);
  /* eager attention saves the tanh of the scores too, b a s^2 */
  base = expand("{ \"family\": \"llama\", \"layers\": 2, \"hidden\": 2304,"
                "  \"heads\": 8, \"kv_heads\": 4, \"head_dim\": 256, \"ffn\": 9216,"
                "  \"seq\": 2048, \"vocab\": 256000, \"attention\": \"eager\" }");
  g2 = expand("{ \"family\": \"llama\", \"layers\": 2, \"hidden\": 2304,"
              "  \"heads\": 8, \"kv_heads\": 4, \"head_dim\": 256, \"ffn\": 9216,"
              "  \"seq\": 2048, \"vocab\": 256000, \"attention\": \"eager\","
              "  \"post_norms\": true, \"attn_softcap\": true }");
  CHECK_NEAR(g2->layers[1].act_bytes - base->layers[1].act_bytes, 4 * s * h + 2 * a * s * s, 0);
  hp_model_destroy(&base);
  hp_model_destroy(&g2);
}

TEST(transformer_rejects_llama_options_on_gpt_and_a_bad_mlp)
{
  CHECK_CONTAINS(fx_model_error("{ \"transformer\": { \"family\": \"gpt\", \"layers\": 2, "
                                "\"hidden\": 64, \"heads\": 4, \"seq\": 8, \"vocab\": 10, "
                                "\"post_norms\": true } }"),
                 "m.json: transformer.post_norms: a llama-family option");
  CHECK_CONTAINS(fx_model_error("{ \"transformer\": { \"family\": \"gpt\", \"layers\": 2, "
                                "\"hidden\": 64, \"heads\": 4, \"seq\": 8, \"vocab\": 10, "
                                "\"mlp\": \"geglu\" } }"),
                 "m.json: transformer.mlp: expected \"gelu\" (2 matrices) for the gpt family, "
                 "got \"geglu\"");
  CHECK_CONTAINS(fx_model_error("{ \"transformer\": { \"family\": \"llama\", \"layers\": 2, "
                                "\"hidden\": 64, \"heads\": 4, \"seq\": 8, \"vocab\": 10, "
                                "\"mlp\": \"reglu\" } }"),
                 "transformer.mlp: expected \"swiglu\" or \"geglu\"");
  CHECK_CONTAINS(fx_model_error("{ \"transformer\": { \"family\": \"llama\", \"layers\": 2, "
                                "\"hidden\": 64, \"heads\": 4, \"head_dim\": 0, \"seq\": 8, "
                                "\"vocab\": 10 } }"),
                 "transformer.head_dim");
  /* with head_dim, heads need not divide hidden */
  {
    hp_model *m = expand("{ \"family\": \"llama\", \"layers\": 1, \"hidden\": 100, \"heads\": 3,"
                         "  \"head_dim\": 32, \"ffn\": 256, \"seq\": 8, \"vocab\": 10 }");
    CHECK_NEAR(m->layers[1].params, 4 * 100.0 * 96 + 3 * 100.0 * 256 + 2 * 100, 0);
    hp_model_destroy(&m);
  }
}

/* A small GPT and a small Llama with grouped-query attention, by hand, under FlashAttention
 * (the default) and eager attention. s = 32, h = 64, a = 4, f = 4h = 256 (GPT), b = 2.
 *   GPT block, flash: 34 sh + 4 a s = 69,632 + 512 = 70,144 bytes a sample
 *              eager: 34 sh + 5 a s^2 = 69,632 + 20,480 = 90,112 (Korthikanti's Table 2)
 *   not divided by TP in both: 10 sh = 20,480
 *   FLOPs eager: 3 (2 s 4h^2 + 4 s^2 h + 2 s 2 h f) = 3 (1,048,576 + 262,144 + 2,097,152)
 *              = 10,223,616; flash: + QK^T recomputed, 2 s^2 h = 131,072: 10,354,688
 * Llama, g = 2 K/V heads (hk = 32), f = 128:
 *   flash: 12 sh + 4 s hk + 8 sf + 4 a s = 24,576 + 4,096 + 32,768 + 512 = 61,952
 *   eager: 12 sh + 4 s hk + 8 sf + 2 a s^2 = 61,440 + 8,192 = 69,632; Ar 8 sh = 16,384 */
TEST(transformer_flash_and_eager_attention_by_hand)
{
  hp_model *gf = expand("{ \"family\": \"gpt\", \"layers\": 2, \"hidden\": 64, \"heads\": 4,"
                        "  \"seq\": 32, \"vocab\": 100 }");
  hp_model *ge = expand("{ \"family\": \"gpt\", \"layers\": 2, \"hidden\": 64, \"heads\": 4,"
                        "  \"seq\": 32, \"vocab\": 100, \"attention\": \"eager\" }");
  hp_model *lf = expand("{ \"family\": \"llama\", \"layers\": 2, \"hidden\": 64, \"heads\": 4,"
                        "  \"kv_heads\": 2, \"ffn\": 128, \"seq\": 32, \"vocab\": 100,"
                        "  \"attention\": \"flash\" }");
  hp_model *le = expand("{ \"family\": \"llama\", \"layers\": 2, \"hidden\": 64, \"heads\": 4,"
                        "  \"kv_heads\": 2, \"ffn\": 128, \"seq\": 32, \"vocab\": 100,"
                        "  \"attention\": \"eager\" }");
  CHECK_INT(gf->transformer->eager_attention, 0);
  CHECK_INT(ge->transformer->eager_attention, 1);
  for (int b = 1; b <= 2; b++) {
    CHECK_NEAR(gf->layers[b].act_bytes, 70144, 0);
    CHECK_NEAR(ge->layers[b].act_bytes, 90112, 0);
    CHECK_NEAR(gf->layers[b].act_repl, 20480, 0);
    CHECK_NEAR(ge->layers[b].act_repl, 20480, 0);
    CHECK_NEAR(ge->layers[b].flops, 10223616, 0);
    CHECK_NEAR(gf->layers[b].flops, 10354688, 0);
    CHECK_NEAR(lf->layers[b].act_bytes, 61952, 0);
    CHECK_NEAR(le->layers[b].act_bytes, 69632, 0);
    CHECK_NEAR(lf->layers[b].act_repl, 16384, 0);
    CHECK_NEAR(le->layers[b].act_repl, 16384, 0);
    CHECK_NEAR(lf->layers[b].flops - le->layers[b].flops, 2.0 * 32 * 32 * 64, 0);
  }
  /* nothing outside the blocks depends on the attention kernel */
  for (int l = 0; l < gf->n_layers; l += gf->n_layers - 1) {
    CHECK_NEAR(gf->layers[l].act_bytes, ge->layers[l].act_bytes, 0);
    CHECK_NEAR(gf->layers[l].flops, ge->layers[l].flops, 0);
  }
  CHECK_CONTAINS(fx_model_error("{ \"transformer\": { \"family\": \"gpt\", \"layers\": 2, "
                                "\"hidden\": 64, \"heads\": 4, \"seq\": 8, \"vocab\": 10, "
                                "\"attention\": \"sdpa\" } }"),
                 "m.json: transformer.attention: expected \"flash\" or \"eager\", got \"sdpa\"");
  hp_model_destroy(&gf);
  hp_model_destroy(&ge);
  hp_model_destroy(&lf);
  hp_model_destroy(&le);
}

/* Cost model 1.2's inputs: the embedding, the final norm and the head are not
 * checkpointable (Megatron recomputes the blocks only); every block's input, the
 * previous layer's output, is the hidden state b s h; update_bytes is set for the Adam
 * layouts the generator knows, an explicit figure wins. */
TEST(transformer_checkpointable_layers_hidden_state_and_update_bytes)
{
  hp_model *m = expand("{ \"family\": \"llama\", \"layers\": 3, \"hidden\": 64, \"heads\": 4,"
                       "  \"seq\": 32, \"vocab\": 100 }");
  hp_model *x = NULL;
  hp_diag d = {0};
  int n = m->n_layers;
  CHECK_INT(n, 6);
  CHECK_INT(m->layers[0].no_recompute, 1);          /* embed */
  CHECK_INT(m->layers[n - 2].no_recompute, 1);      /* final_norm */
  CHECK_INT(m->layers[n - 1].no_recompute, 1);      /* head */
  for (int l = 1; l <= 3; l++) {
    CHECK_INT(m->layers[l].no_recompute, 0);
    CHECK_NEAR(m->layers[l - 1].out_bytes, 2.0 * 32 * 64, 0);   /* I_l = O_{l-1} = 2 s h */
  }
  /* bf16 weights and gradients, fp32 master, m, v (state 16, opt 12): gradient to fp32
   * (2 + 4), its norm (4), Adam (2 x 12 + 4), the master into the weight (4 + 2): 44 */
  CHECK_INT(m->update_given, 1);
  CHECK_NEAR(hp_model_update_bytes(m), 44, 0);
  hp_model_destroy(&m);
  /* Megatron's fp32 gradients (grad 4, state 18): no conversion, 38 */
  CHECK(hp_model_parse("{ \"grad_bytes\": 4, \"state_bytes\": 18, \"transformer\": {"
                       "  \"family\": \"gpt\", \"layers\": 1, \"hidden\": 64, \"heads\": 4,"
                       "  \"seq\": 32, \"vocab\": 100 } }", "m.json", &x, &d) == HP_OK);
  CHECK_NEAR(hp_model_update_bytes(x), 38, 0);
  hp_model_destroy(&x);
  /* fp32 Adam (param 4, grad 4, state 16: m, v): 2 x 8 + 2 x 4 (the weight) + 4 + 4 = 32 */
  CHECK(hp_model_parse("{ \"param_bytes\": 4, \"grad_bytes\": 4, \"transformer\": {"
                       "  \"family\": \"gpt\", \"layers\": 1, \"hidden\": 64, \"heads\": 4,"
                       "  \"seq\": 32, \"vocab\": 100 } }", "m.json", &x, &d) == HP_OK);
  CHECK_NEAR(hp_model_update_bytes(x), 32, 0);
  hp_model_destroy(&x);
  /* a layout it does not know (opt 16): the spec's default 2 opt + grad + param = 36 */
  CHECK(hp_model_parse("{ \"state_bytes\": 20, \"transformer\": {"
                       "  \"family\": \"gpt\", \"layers\": 1, \"hidden\": 64, \"heads\": 4,"
                       "  \"seq\": 32, \"vocab\": 100 } }", "m.json", &x, &d) == HP_OK);
  CHECK_INT(x->update_given, 0);
  CHECK_NEAR(hp_model_update_bytes(x), 36, 0);
  hp_model_destroy(&x);
  /* the file's own figure wins */
  CHECK(hp_model_parse("{ \"update_bytes\": 30, \"transformer\": {"
                       "  \"family\": \"gpt\", \"layers\": 1, \"hidden\": 64, \"heads\": 4,"
                       "  \"seq\": 32, \"vocab\": 100 } }", "m.json", &x, &d) == HP_OK);
  CHECK_NEAR(hp_model_update_bytes(x), 30, 0);
  hp_model_destroy(&x);
}

/* GPT-3 175B as Megatron-LM trains it (Narayanan et al. 2021, table 1 and the repository's
 * README: 96 layers, h 12288, 96 heads, seq 2048, tp 8, pp 16, 1024 GPUs, gbs 1536, mbs 1;
 * vocab 50257 padded to 51200 at tp 8; bf16 weights, fp32 gradients: state 18), here on
 * 128 nodes of 8 H100 80 GB with sequence parallelism and the distributed optimizer
 * (zero1), FlashAttention: it fits, as the real runs do. Stage 0 (embed + 6 blocks) on one
 * TP rank, by hand:
 *   parameters: embed (51200 + 2048) 12288 / 8 = 81,788,928; a block 12 h^2 + 13 h =
 *     1,812,099,072, / 8 = 226,512,384, six 1,359,074,304; together 1,440,863,232
 *   states, zero1: 2 + 4 + 12 / 8 = 7.5 bytes each: 10,806,474,240
 *   full recompute, 1F1B: min(16, 192) = 16 micro-batches of the blocks' inputs
 *     2 s h / 8 = 6,291,456 (x 6) and the embedding's mask s h / 8 = 3,145,728
 *     (not checkpointable): 16 x 40,894,464 = 654,311,424; one block's activations
 *     (34 s h + 4 a s) / 8 = 107,053,056; act 761,364,480
 *   M = 11,567,838,720 + 1 GiB reserved = 12,641,580,544 (11.8 GiB)
 * Without recompute (FlashAttention is Megatron's selective recompute): 16 x (3,145,728 +
 * 6 x 107,053,056) = 10,327,425,024 of activations, 22,207,641,088 in all (20.7 GiB).
 * Eager attention, no sequence parallelism, no recompute: a block keeps (34 s h + 5 a s^2 -
 * 10 s h) / 8 + 10 s h = 578,813,952, the embedding s h = 25,165,824 whole: 16 x
 * 3,498,049,536 = 55,968,792,576 of activations, 67,849,008,640 in all (63.2 GiB): it
 * still fits 80 GiB, with 8 times the activations. */
static char *gpt3_cluster(void)
{
  size_t cap = 16384, len;
  char *t = malloc(cap);
  if (!t) exit(3);
  len = (size_t)snprintf(t, cap, "{ \"device_types\": { \"H100\": { \"mem_gib\": 80, "
                         "\"reserved_gib\": 1, \"tflops\": 989, \"efficiency\": 0.5, "
                         "\"hbm_gbs\": 3350 } }, \"inter_gbps\": 400, \"inter_lat_us\": 5, "
                         "\"nodes\": [");
  for (int n = 0; n < 128; n++)
    len += (size_t)snprintf(t + len, cap - len, "%s{ \"name\": \"n%d\", \"type\": \"H100\", "
                            "\"gpus\": 8, \"intra_gbps\": 3600 }", n ? ", " : "", n);
  snprintf(t + len, cap - len, "] }");
  return t;
}

static char *gpt3_plan(int recompute)
{
  size_t cap = 32768, len;
  char *t = malloc(cap);
  if (!t) exit(3);
  len = (size_t)snprintf(t, cap, "{ \"pp\": 16, \"tp\": 8, \"dp\": 8, \"mbs\": 1, \"stages\": [");
  for (int s = 0; s < 16; s++) {
    int first = s == 0 ? 0 : 6 * s + 1, last = s == 15 ? 98 : 6 * s + 6;
    len += (size_t)snprintf(t + len, cap - len, "%s{ \"layers\": [%d, %d], \"recompute\": %s, "
                            "\"devices\": [", s ? ", " : "", first, last,
                            recompute ? "true" : "false");
    for (int r = 0; r < 8; r++) {
      int node = s * 8 + r;
      len += (size_t)snprintf(t + len, cap - len, "%s[", r ? ", " : "");
      for (int j = 0; j < 8; j++)
        len += (size_t)snprintf(t + len, cap - len, "%s%d", j ? ", " : "", node * 8 + j);
      len += (size_t)snprintf(t + len, cap - len, "]");
    }
    len += (size_t)snprintf(t + len, cap - len, "] }");
  }
  len += (size_t)snprintf(t + len, cap - len, "], \"sharding\": [");
  for (int l = 0; l < 99; l++)
    len += (size_t)snprintf(t + len, cap - len, "%s\"zero1\"", l ? ", " : "");
  snprintf(t + len, cap - len, "] }");
  return t;
}

static hp_eval gpt3_eval(const char *attention, int sp, int recompute)
{
  char model[512], *cluster = gpt3_cluster(), *plan_text = gpt3_plan(recompute);
  hp_problem *p;
  hp_plan *pl;
  hp_eval e = {0};
  hp_diag d = {0};
  snprintf(model, sizeof model, "{ \"grad_bytes\": 4, \"state_bytes\": 18, \"transformer\": {"
           " \"family\": \"gpt\", \"layers\": 96, \"hidden\": 12288, \"heads\": 96,"
           " \"seq\": 2048, \"vocab\": 51200, \"attention\": \"%s\" } }", attention);
  p = fx_problem(model, cluster, NULL, 1536, HP_1F1B);
  p->job.sequence_parallel = sp;
  pl = fx_plan(p, plan_text);
  if (hp_evaluate(p, pl, &e, &d) != HP_OK) {
    fprintf(stderr, "evaluate failed: %s\n", d.msg);
    exit(3);
  }
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
  free(cluster);
  free(plan_text);
  return e;
}

TEST(transformer_gpt3_175b_as_megatron_trains_it_fits_an_h100)
{
  const double GiB = 1073741824.0;
  hp_eval e = gpt3_eval("flash", 1, 1);
  CHECK(e.feasible);
  CHECK_NEAR(e.mem_states[0], 10806474240.0, 1e-9 * 10806474240.0);
  CHECK_NEAR(e.mem_act[0], 761364480.0, 1e-9 * 761364480.0);
  CHECK_NEAR(e.mem[0], 12641580544.0, 1e-9 * 12641580544.0);
  for (int dv = 0; dv < e.n_devices; dv++) CHECK(e.mem[dv] <= 80 * GiB);
  hp_eval_release(&e);
  e = gpt3_eval("flash", 1, 0);
  CHECK(e.feasible);
  CHECK_NEAR(e.mem_act[0], 10327425024.0, 1e-9 * 10327425024.0);
  CHECK_NEAR(e.mem[0], 22207641088.0, 1e-9 * 22207641088.0);
  hp_eval_release(&e);
  e = gpt3_eval("eager", 0, 0);
  CHECK(e.feasible);
  CHECK_NEAR(e.mem_act[0], 55968792576.0, 1e-9 * 55968792576.0);
  CHECK_NEAR(e.mem[0], 67849008640.0, 1e-9 * 67849008640.0);
  hp_eval_release(&e);
}
