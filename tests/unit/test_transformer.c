/* test_transformer.c -- the transformer generator against published parameter counts
 * and the Korthikanti et al. activation formula; head_dim and the Gemma and Qwen3
 * options (docs/transformer.md). */
#include <stdlib.h>

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
  /* fwd+bwd = 3 * (24 s h^2 + 4 s^2 h) */
  CHECK_NEAR(m->layers[1].flops, 3.0 * (24.0 * 1024 * 1024 * 1024 + 4.0 * 1024 * 1024 * 1024), 0);
  /* Korthikanti: s h (34 + 5 a s / h), of which 10 s h not divided by TP */
  CHECK_NEAR(m->layers[1].act_bytes, 1024.0 * 1024 * (34 + 5.0 * 16 * 1024 / 1024), 0);
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
        a->work_bytes != b->work_bytes || a->splittable != b->splittable)
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
  /* 3 x (2 s (projections) + QK^T and AV 4 s^2 q + 2 s (MLP)) */
  CHECK_NEAR(m->layers[1].flops, 3 * (2 * s * 4 * h * q + 4 * s * s * q + 2 * s * 3 * h * f), 0);
  /* 12 sh + 4 s hk + 8 sf + 2 a s^2, Q and O's input 4 s (q - h) wider: with hk = q,
   * 8 sh + 8 sq + 8 sf + 2 a s^2 */
  CHECK_NEAR(m->layers[1].act_bytes, 8 * s * h + 8 * s * q + 8 * s * f + 2 * a * s * s, 0);
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
   * scores b a s^2 and of the logits b s V; no FLOPs counted for either */
  CHECK_NEAR(g2->layers[1].params - base->layers[1].params, 2 * h, 0);
  CHECK_NEAR(g2->layers[1].act_bytes - base->layers[1].act_bytes, 4 * s * h + 2 * a * s * s, 0);
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
