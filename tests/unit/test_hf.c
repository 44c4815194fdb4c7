/* test_hf.c -- Hugging Face config.json import (src/load_hf.c): parameter counts against
 * the published figures, the keys of each style, the direct use as a model file, and the
 * refusals. The configs are written here, or kept in examples/hf/, as their model cards
 * publish them. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

static const char llama2_7b[] =
  "{ \"architectures\": [\"LlamaForCausalLM\"], \"bos_token_id\": 1, \"eos_token_id\": 2,"
  "  \"hidden_act\": \"silu\", \"hidden_size\": 4096, \"initializer_range\": 0.02,"
  "  \"intermediate_size\": 11008, \"max_position_embeddings\": 4096, \"model_type\": \"llama\","
  "  \"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 32,"
  "  \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, \"rope_scaling\": null,"
  "  \"tie_word_embeddings\": false, \"torch_dtype\": \"float16\", \"use_cache\": true,"
  "  \"vocab_size\": 32000 }";

static const char llama2_70b[] =
  "{ \"_name_or_path\": \"meta-llama/Llama-2-70b-hf\", \"architectures\": [\"LlamaForCausalLM\"],"
  "  \"hidden_act\": \"silu\", \"hidden_size\": 8192, \"intermediate_size\": 28672,"
  "  \"max_position_embeddings\": 4096, \"model_type\": \"llama\", \"num_attention_heads\": 64,"
  "  \"num_hidden_layers\": 80, \"num_key_value_heads\": 8, \"rms_norm_eps\": 1e-05,"
  "  \"tie_word_embeddings\": false, \"vocab_size\": 32000 }";

static const char gpt2_medium[] =
  "{ \"activation_function\": \"gelu_new\", \"architectures\": [\"GPT2LMHeadModel\"],"
  "  \"attn_pdrop\": 0.1, \"embd_pdrop\": 0.1, \"model_type\": \"gpt2\", \"n_ctx\": 1024,"
  "  \"n_embd\": 1024, \"n_head\": 16, \"n_inner\": null, \"n_layer\": 24, \"n_positions\": 1024,"
  "  \"resid_pdrop\": 0.1, \"vocab_size\": 50257 }";

static const char neox_20b[] =
  "{ \"architectures\": [\"GPTNeoXForCausalLM\"], \"hidden_act\": \"gelu_fast\","
  "  \"hidden_size\": 6144, \"intermediate_size\": 24576, \"max_position_embeddings\": 2048,"
  "  \"model_type\": \"gpt_neox\", \"num_attention_heads\": 64, \"num_hidden_layers\": 44,"
  "  \"rotary_pct\": 0.25, \"tie_word_embeddings\": false, \"use_parallel_residual\": true,"
  "  \"vocab_size\": 50432 }";

static const char qwen2_7b[] =
  "{ \"architectures\": [\"Qwen2ForCausalLM\"], \"hidden_act\": \"silu\", \"hidden_size\": 3584,"
  "  \"intermediate_size\": 18944, \"max_position_embeddings\": 131072, \"model_type\": \"qwen2\","
  "  \"num_attention_heads\": 28, \"num_hidden_layers\": 28, \"num_key_value_heads\": 4,"
  "  \"rope_theta\": 1000000.0, \"sliding_window\": 131072, \"tie_word_embeddings\": false,"
  "  \"use_sliding_window\": false, \"vocab_size\": 152064 }";

static const char mistral_7b[] =
  "{ \"architectures\": [\"MistralForCausalLM\"], \"hidden_act\": \"silu\", \"hidden_size\": 4096,"
  "  \"intermediate_size\": 14336, \"max_position_embeddings\": 32768, \"model_type\": \"mistral\","
  "  \"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 8,"
  "  \"sliding_window\": 4096, \"tie_word_embeddings\": false, \"vocab_size\": 32000 }";

static void count_warning(void *ctx, const char *msg)
{
  (void)msg;
  (*(int *)ctx)++;
}

/* Imports with the options, expands, and returns the model; counts warnings. */
static hp_model *import(const char *text, int seq, hp_dtype dt, hp_hf_model *h, int *warnings)
{
  hp_hf_opts o = { seq, dt };
  hp_diag d = {0};
  hp_model *m = NULL;
  int w = 0;
  d.warn = count_warning;
  d.warn_ctx = &w;
  if (hp_hf_parse(text, "config.json", &o, h, &d) || hp_hf_expand(h, &m, &d)) {
    fprintf(stderr, "import failed: %s\n", d.msg);
    exit(3);
  }
  if (warnings) *warnings = w;
  return m;
}

/* The published sizes within 0.5 % (the requirement); the counts here are exact. */
TEST(hf_llama2_7b_70b_and_gpt2_medium_match_their_published_sizes)
{
  hp_hf_model h;
  hp_model *m;
  int w;

  m = import(llama2_7b, 0, HP_DTYPE_BF16, &h, &w);
  CHECK(!strcmp(h.style, "llama"));
  CHECK_INT(w, 0);                                      /* 19 other keys, no warnings */
  CHECK_INT(h.tf.seq, 4096);
  CHECK_NEAR(hp_model_unique_params(m), 6738415616.0, 0.005);   /* Meta: 6,738,415,616 */
  CHECK_NEAR(hp_model_unique_params(m), 6738415616.0, 0);
  CHECK_INT(m->n_layers, 35);
  hp_model_destroy(&m);

  m = import(llama2_70b, 0, HP_DTYPE_BF16, &h, NULL);
  CHECK(!strcmp(h.name, "Llama-2-70b-hf"));
  CHECK_INT(h.tf.kv_heads, 8);                          /* grouped-query attention */
  CHECK_NEAR(hp_model_unique_params(m), 68976648192.0, 0.005);  /* 68,976,648,192 */
  CHECK_NEAR(hp_model_unique_params(m), 68976648192.0, 0);
  /* a block: Q and O 2h^2, K and V 2 h (h/8), a gated MLP of 3 matrices 3 h f, 2 norms */
  CHECK_NEAR(m->layers[1].params, 2.0 * 8192 * 8192 + 2.0 * 8192 * 1024 + 3.0 * 8192 * 28672
             + 2 * 8192, 0);
  hp_model_destroy(&m);

  m = import(gpt2_medium, 0, HP_DTYPE_BF16, &h, NULL);
  CHECK(!strcmp(h.style, "gpt2"));
  CHECK(h.tf.tied);                                     /* GPT-2's default */
  CHECK_INT(h.tf.seq, 1024);                            /* n_positions */
  CHECK_NEAR(hp_model_unique_params(m), 354823168.0, 0.005);   /* 354,823,168 */
  CHECK_NEAR(hp_model_unique_params(m), 354823168.0, 0);
  /* the tied head's copy is held in memory all the same */
  CHECK_NEAR(m->tied_params, 50257.0 * 1024, 0);
  CHECK_NEAR(hp_model_total_params(m), 354823168.0 + 50257.0 * 1024, 0);
  hp_model_destroy(&m);
}

TEST(hf_neox_qwen2_mistral_counts)
{
  hp_hf_model h;
  hp_model *m;
  int w;
  /* GPT-NeoX-20B: 20,554,567,680 (rotary: no position table; untied) */
  m = import(neox_20b, 0, HP_DTYPE_BF16, &h, NULL);
  CHECK(!strcmp(h.style, "gpt_neox"));
  CHECK_INT(h.tf.positions, -1);
  CHECK_NEAR(hp_model_unique_params(m), 20554567680.0, 0);
  CHECK_NEAR(m->layers[0].params, 50432.0 * 6144, 0);
  hp_model_destroy(&m);
  /* Qwen2-7B: 7,615,616,512 with the Q, K, V biases its code adds; 131072 positions give
   * a 4096-token default and a warning */
  m = import(qwen2_7b, 0, HP_DTYPE_BF16, &h, &w);
  CHECK_INT(h.tf.qkv_bias, 1);
  CHECK_INT(h.tf.seq, 4096);
  CHECK_INT(w, 1);
  CHECK_NEAR(hp_model_unique_params(m), 7615616512.0, 0);
  hp_model_destroy(&m);
  /* Mistral-7B: 7,241,732,096 */
  m = import(mistral_7b, 8192, HP_DTYPE_BF16, &h, &w);
  CHECK_INT(h.tf.seq, 8192);
  CHECK_INT(w, 0);
  CHECK_NEAR(hp_model_unique_params(m), 7241732096.0, 0);
  hp_model_destroy(&m);
}

TEST(hf_llama_biases_and_dtype)
{
  char text[2048];
  hp_hf_model h;
  hp_model *a, *b, *c;
  double h_ = 4096, f = 11008;
  a = import(llama2_7b, 0, HP_DTYPE_BF16, &h, NULL);
  snprintf(text, sizeof text, "%.*s, \"attention_bias\": true, \"mlp_bias\": true }",
           (int)(strrchr(llama2_7b, '}') - llama2_7b), llama2_7b);
  b = import(text, 0, HP_DTYPE_BF16, &h, NULL);
  /* Q, K, V, O biases 4h (no GQA here) and gate, up, down 2f + h, per block */
  CHECK_NEAR(b->layers[1].params - a->layers[1].params, 4 * h_ + 2 * f + h_, 0);
  /* fp32: 4-byte weights and gradients; every 2-byte activation doubles, the fp32 logits
   * (4 s V) and FlashAttention's fp32 log-sum-exp (4 a s) do not */
  c = import(llama2_7b, 0, HP_DTYPE_FP32, &h, NULL);
  CHECK_NEAR(c->param_bytes, 4, 0);
  CHECK_NEAR(c->grad_bytes, 4, 0);
  CHECK_NEAR(a->param_bytes, 2, 0);
  CHECK_NEAR(c->layers[1].act_bytes - 4.0 * 32 * 4096, 2 * (a->layers[1].act_bytes - 4.0 * 32 * 4096), 0);
  CHECK_NEAR(c->layers[1].out_bytes, 2 * 4096.0 * 4096 * 2, 0);
  CHECK_NEAR(c->layers[34].act_bytes - 4.0 * 4096 * 32000, 2 * (a->layers[34].act_bytes - 4.0 * 4096 * 32000), 0);
  hp_model_destroy(&a);
  hp_model_destroy(&b);
  hp_model_destroy(&c);
}

/* A config given where a model file is expected loads as the import with the defaults
 * would, and the model file import-hf writes expands to the same layers. */
TEST(hf_config_is_a_model_file_and_the_import_round_trips)
{
  hp_diag d = {0};
  hp_model *direct = NULL, *round = NULL, *ref;
  hp_hf_model h;
  char *json = NULL;
  ref = import(gpt2_medium, 0, HP_DTYPE_BF16, &h, NULL);
  CHECK(hp_model_parse(gpt2_medium, "gpt2/config.json", &direct, &d) == HP_OK);
  CHECK(!strcmp(direct->name, "gpt2"));                 /* the folder names it */
  CHECK(hp_hf_model_to_json(&h, "config.json", &json, &d) == HP_OK);
  CHECK_CONTAINS(json, "\"tied\":\ttrue");
  CHECK_CONTAINS(json, "354823168 parameters");
  CHECK(hp_model_parse(json, "m.json", &round, &d) == HP_OK);
  CHECK_INT(direct->n_layers, ref->n_layers);
  CHECK_INT(round->n_layers, ref->n_layers);
  for (int l = 0; l < ref->n_layers; l++) {
    CHECK_NEAR(direct->layers[l].params, ref->layers[l].params, 0);
    CHECK_NEAR(round->layers[l].params, ref->layers[l].params, 0);
    CHECK_NEAR(round->layers[l].act_bytes, ref->layers[l].act_bytes, 0);
    CHECK_NEAR(round->layers[l].flops, ref->layers[l].flops, 0);
    CHECK_NEAR(round->layers[l].work_bytes, ref->layers[l].work_bytes, 0);
  }
  CHECK_NEAR(round->tied_params, ref->tied_params, 0);
  CHECK_NEAR(direct->tied_params, ref->tied_params, 0);
  free(json);
  hp_model_destroy(&direct);
  hp_model_destroy(&round);
  hp_model_destroy(&ref);
}

TEST(hf_refusals_name_the_key)
{
  /* GPT-NeoX's code takes a head's width from hidden / heads and never reads head_dim */
  CHECK_CONTAINS(fx_model_error("{ \"model_type\": \"gpt_neox\", \"hidden_size\": 5120,"
                                " \"num_hidden_layers\": 40, \"num_attention_heads\": 32,"
                                " \"head_dim\": 128, \"intermediate_size\": 14336,"
                                " \"vocab_size\": 131072, \"max_position_embeddings\": 4096 }"),
                 "m.json: head_dim: 128 differs from hidden size / heads = 160: gpt_neox's code "
                 "takes a head's width from those two");
  /* a Gemma this importer does not read by name is refused, not guessed */
  CHECK_CONTAINS(fx_model_error("{ \"model_type\": \"gemma3_text\", \"hidden_size\": 1152,"
                                " \"num_hidden_layers\": 26, \"num_attention_heads\": 4,"
                                " \"num_key_value_heads\": 1, \"head_dim\": 256,"
                                " \"hidden_act\": \"gelu_pytorch_tanh\","
                                " \"hidden_activation\": \"gelu_pytorch_tanh\","
                                " \"intermediate_size\": 6912, \"vocab_size\": 262144,"
                                " \"max_position_embeddings\": 32768 }"),
                 "model_type: \"gemma3_text\": not one hetplan reads, and a Gemma variant by its name");
  CHECK_CONTAINS(fx_model_error("{ \"model_type\": \"gemma\", \"hidden_size\": 64,"
                                " \"num_hidden_layers\": 2, \"num_attention_heads\": 4,"
                                " \"hidden_activation\": \"relu\", \"intermediate_size\": 128,"
                                " \"vocab_size\": 100, \"max_position_embeddings\": 64 }"),
                 "m.json: hidden_activation: \"relu\": a gated MLP hetplan does not name");
  CHECK_CONTAINS(fx_model_error("{ \"model_type\": \"mixtral\", \"hidden_act\": \"silu\","
                                " \"hidden_size\": 4096, \"num_hidden_layers\": 32,"
                                " \"num_attention_heads\": 32, \"intermediate_size\": 14336,"
                                " \"vocab_size\": 32000, \"max_position_embeddings\": 4096,"
                                " \"num_local_experts\": 8 }"),
                 "m.json: num_local_experts: 8 experts: mixture-of-experts models are not supported");
  CHECK_CONTAINS(fx_model_error("{ \"model_type\": \"llama\", \"num_hidden_layers\": 2 }"),
                 "m.json: \"hidden_size\" or \"n_embd\": missing");
  CHECK_CONTAINS(fx_model_error("{ \"model_type\": \"llama\", \"hidden_size\": \"big\","
                                " \"num_hidden_layers\": 2 }"),
                 "m.json: hidden_size: expected an integer");
  CHECK_CONTAINS(fx_model_error("{ \"model_type\": \"t5\", \"num_hidden_layers\": 2,"
                                " \"hidden_size\": 64 }"),
                 "model_type: \"t5\": not one hetplan reads");
  CHECK_CONTAINS(fx_model_error("{ \"model_type\": \"llama\", \"hidden_size\": 64,"
                                " \"num_hidden_layers\": 2, \"num_attention_heads\": 4,"
                                " \"num_key_value_heads\": 3, \"intermediate_size\": 128,"
                                " \"vocab_size\": 100, \"max_position_embeddings\": 64 }"),
                 "num_key_value_heads: 3 does not divide the 4 attention heads");
  {   /* GPT-2's learned positions bound the sequence */
    hp_hf_opts o = { 2048, HP_DTYPE_BF16 };
    hp_hf_model h;
    hp_diag d = {0};
    CHECK(hp_hf_parse(gpt2_medium, "c.json", &o, &h, &d) == HP_INVAL);
    CHECK_CONTAINS(d.msg, "c.json: n_positions: 1024 learned positions: a sequence of 2048 "
                   "tokens does not fit");
  }
}

/* The warnings a read gives: how many, and the last one's text. */
typedef struct warned { int n; char last[512]; } warned;

static void keep_warning(void *ctx, const char *msg)
{
  warned *w = ctx;
  w->n++;
  snprintf(w->last, sizeof w->last, "%s", msg);
}

/* Reads a config file (examples/hf/) with the options and expands it. */
static hp_model *import_file(const char *path, int seq, hp_hf_model *h, warned *w)
{
  hp_hf_opts o = { seq, HP_DTYPE_BF16 };
  hp_diag d = {0};
  hp_model *m = NULL;
  memset(w, 0, sizeof *w);
  d.warn = keep_warning;
  d.warn_ctx = w;
  if (hp_hf_load(path, &o, h, &d) || hp_hf_expand(h, &m, &d)) {
    fprintf(stderr, "import of %s failed: %s\n", path, d.msg);
    exit(3);
  }
  return m;
}

TEST(hf_unknown_model_type_is_read_by_its_keys_with_a_warning)
{
  hp_hf_model h;
  hp_hf_opts o = { 0, HP_DTYPE_BF16 };
  hp_diag d = {0};
  warned w = { 0, "" };
  char text[1024];
  hp_model *m;
  snprintf(text, sizeof text, "%s", llama2_7b);
  memcpy(strstr(text, "\"llama\""), "\"llamb\"", 7);
  d.warn = keep_warning;
  d.warn_ctx = &w;
  CHECK(hp_hf_parse(text, "c.json", &o, &h, &d) == HP_OK);
  CHECK(hp_hf_expand(&h, &m, &d) == HP_OK);
  CHECK_INT(w.n, 1);
  /* the warning names what it read */
  CHECK_CONTAINS(w.last, "c.json: model_type \"llamb\" is not one hetplan reads by name; read "
                 "as llama style by its keys: hidden_act \"silu\": a gated MLP of 3 matrices "
                 "(SwiGLU)");
  CHECK(!strcmp(h.style, "llama"));
  CHECK_NEAR(hp_model_unique_params(m), 6738415616.0, 0);
  hp_model_destroy(&m);
  /* GELU is taken for a plain MLP, and the warning says so and what else it could be */
  snprintf(text, sizeof text, "%s", neox_20b);
  memcpy(strstr(text, "\"gpt_neox\""), "\"gpt_neoy\"", 10);
  CHECK(hp_hf_parse(text, "c.json", &o, &h, &d) == HP_OK);
  CHECK_INT(w.n, 2);
  CHECK_CONTAINS(w.last, "read as gpt_neox style by its keys: hidden_act \"gelu_fast\" taken for "
                 "a plain GELU MLP of 2 matrices, LayerNorms (a gated one, GeGLU, would have 3)");
}

/* A gated-MLP (llama family) model's parameters from its config's numbers: the token table
 * V h, and as much again for an untied head; per block Q and O h (a d) each, K and V
 * h (g d) each, the gated MLP 3 h f, `norms` RMSNorm weights of h and `qk` of d (Qwen3's
 * Q and K norms); the final norm h. */
static double gated_params(double V, double h, double L, double a, double g, double d, double f,
                           int norms, int qk, int tied)
{
  double block = 2 * h * a * d + 2 * h * g * d + 3 * h * f + norms * h + qk * d;
  return V * h * (tied ? 1 : 2) + L * block + h;
}

/* Gemma 1 and 2 as Google publishes their configs (examples/hf/): GeGLU, a tied head,
 * heads of 256 (Gemma-2 27B: 128) whatever hidden / heads is, Gemma 2's four norms a
 * block; the totals of their model cards */
TEST(hf_gemma_and_gemma2_match_their_published_sizes)
{
  static const struct {
    const char *path, *style;
    double V, h, L, a, g, d, f;
    int norms;
    double published;
  } c[] = {
    { "examples/hf/gemma-2b/config.json",    "gemma",  256000, 2048, 18,  8,  1, 256, 16384, 2, 2506172416.0 },
    { "examples/hf/gemma-7b/config.json",    "gemma",  256000, 3072, 28, 16, 16, 256, 24576, 2, 8537680896.0 },
    { "examples/hf/gemma-2-2b/config.json",  "gemma2", 256000, 2304, 26,  8,  4, 256,  9216, 4, 2614341888.0 },
    { "examples/hf/gemma-2-9b/config.json",  "gemma2", 256000, 3584, 42, 16,  8, 256, 14336, 4, 9241705984.0 },
    { "examples/hf/gemma-2-27b/config.json", "gemma2", 256000, 4608, 46, 32, 16, 128, 36864, 4, 27227128320.0 },
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    hp_hf_model h;
    warned w;
    hp_model *m = import_file(c[i].path, 0, &h, &w);
    int wide = c[i].a * c[i].d != c[i].h;   /* Gemma-1 2B's 8 x 256 is its hidden size */
    CHECK_NEAR(gated_params(c[i].V, c[i].h, c[i].L, c[i].a, c[i].g, c[i].d, c[i].f, c[i].norms,
                            0, 1), c[i].published, 0);
    CHECK_NEAR(hp_model_unique_params(m), c[i].published, 0);
    CHECK(!strcmp(h.style, c[i].style));
    CHECK_INT(h.tf.family, HP_TF_LLAMA);
    CHECK_INT(h.tf.geglu, 1);                 /* hidden_activation or, Gemma 1, its default */
    CHECK_INT(h.tf.tied, 1);                  /* Gemma's default: no tie_word_embeddings */
    CHECK_INT(h.tf.head_dim, wide ? (long)c[i].d : 0);
    CHECK_INT(h.tf.post_norms, c[i].norms == 4);
    CHECK_INT(h.tf.attn_softcap, c[i].norms == 4);
    CHECK_INT(h.tf.logit_softcap, c[i].norms == 4);
    CHECK_INT(h.tf.seq, 4096);
    CHECK_INT(w.n, 1);                        /* only the 8192 positions planned as 4096 */
    CHECK_CONTAINS(w.last, "max_position_embeddings is 8192");
    CHECK_NEAR(m->tied_params, c[i].V * c[i].h, 0);
    hp_model_destroy(&m);
  }
}

TEST(hf_gemma2_window_softcaps_and_round_trip)
{
  hp_hf_model h;
  warned w;
  hp_diag d = {0};
  hp_model *m, *direct = NULL, *round = NULL, *capless;
  char *json = NULL, text[4096];
  char *win;
  /* longer than the window: every layer counted as full attention, with a warning */
  m = import_file("examples/hf/gemma-2-9b/config.json", 8192, &h, &w);
  CHECK_INT(w.n, 1);
  CHECK_CONTAINS(w.last, "sliding_window is 4096 on every other layer: hetplan counts those "
                 "layers' attention over all 8192 tokens");
  CHECK(hp_hf_model_to_json(&h, "config.json", &json, &d) == HP_OK);
  CHECK_CONTAINS(json, "\"head_dim\":\t256");
  CHECK_CONTAINS(json, "\"mlp\":\t\"geglu\"");
  CHECK_CONTAINS(json, "\"post_norms\":\ttrue");
  CHECK_CONTAINS(json, "\"attn_softcap\":\ttrue");
  CHECK_CONTAINS(json, "\"logit_softcap\":\ttrue");
  CHECK_CONTAINS(json, "9241705984 parameters");
  CHECK_CONTAINS(json, "\"attention\":\t\"flash\"");
  /* the model file import-hf writes, and the config given as a model file (at its default
   * seq), expand to the import's layers */
  CHECK(hp_model_parse(json, "m.json", &round, &d) == HP_OK);
  CHECK(hp_model_load("examples/hf/gemma-2-9b/config.json", &direct, &d) == HP_OK);
  CHECK_INT(round->n_layers, m->n_layers);
  for (int l = 0; l < m->n_layers; l++) {
    CHECK_NEAR(round->layers[l].params, m->layers[l].params, 0);
    CHECK_NEAR(round->layers[l].flops, m->layers[l].flops, 0);
    CHECK_NEAR(round->layers[l].act_bytes, m->layers[l].act_bytes, 0);
    CHECK_NEAR(round->layers[l].act_repl, m->layers[l].act_repl, 0);
    CHECK_NEAR(direct->layers[l].params, m->layers[l].params, 0);
  }
  CHECK_INT(direct->transformer->seq, 4096);
  /* soft-capping and the window turned off by null: no tanh outputs, no warning */
  {
    char *f = NULL;
    CHECK(hp_read_file("examples/hf/gemma-2-9b/config.json", &f, &d) == HP_OK);
    snprintf(text, sizeof text, "%s", f);
    free(f);
  }
  memcpy(strstr(text, "50.0"), "null", 4);
  memcpy(strstr(text, "30.0"), "null", 4);
  win = strstr(text, "\"sliding_window\": 4096");
  CHECK(win != NULL);
  memcpy(win + strlen("\"sliding_window\": "), "null", 4);
  {
    hp_hf_opts o = { 8192, HP_DTYPE_BF16 };
    hp_hf_model h2;
    memset(&w, 0, sizeof w);
    d.warn = keep_warning;
    d.warn_ctx = &w;
    CHECK(hp_hf_parse(text, "c.json", &o, &h2, &d) == HP_OK);
    CHECK(hp_hf_expand(&h2, &capless, &d) == HP_OK);
    CHECK_INT(w.n, 0);
    CHECK_INT(h2.tf.attn_softcap, 0);
    CHECK_INT(h2.tf.logit_softcap, 0);
    /* FlashAttention (the default) caps the scores it recomputes: no tanh output saved
     * in a block; in the head the tanh of the logits, 2 s V */
    CHECK_NEAR(m->layers[1].act_bytes - capless->layers[1].act_bytes, 0, 0);
    CHECK_NEAR(m->layers[44].act_bytes - capless->layers[44].act_bytes, 2.0 * 8192 * 256000, 0);
    CHECK_NEAR(hp_model_unique_params(capless), 9241705984.0, 0);
    hp_model_destroy(&capless);
    /* eager attention saves the tanh of the scores beside the softmax's: 2 a s^2 bytes */
    {
      hp_model *me = NULL, *ce = NULL;
      h.tf.eager_attention = 1;
      h2.tf.eager_attention = 1;
      CHECK(hp_hf_expand(&h, &me, &d) == HP_OK);
      CHECK(hp_hf_expand(&h2, &ce, &d) == HP_OK);
      CHECK_NEAR(me->layers[1].act_bytes - ce->layers[1].act_bytes, 2.0 * 16 * 8192 * 8192, 0);
      hp_model_destroy(&me);
      hp_model_destroy(&ce);
    }
  }
  free(json);
  hp_model_destroy(&m);
  hp_model_destroy(&round);
  hp_model_destroy(&direct);
}

/* Qwen3-8B (examples/hf/): 128-wide heads that are hidden / heads, an RMSNorm of 128 on
 * each head's Q and K, untied: 8,190,735,360. Qwen3-0.6B (its config, inline): heads of
 * 128 over hidden 1024 / 16 = 64, tied: 596,049,920. */
static const char qwen3_0_6b[] =
  "{ \"architectures\": [\"Qwen3ForCausalLM\"], \"attention_bias\": false, \"head_dim\": 128,"
  "  \"hidden_act\": \"silu\", \"hidden_size\": 1024, \"intermediate_size\": 3072,"
  "  \"max_position_embeddings\": 40960, \"max_window_layers\": 28, \"model_type\": \"qwen3\","
  "  \"num_attention_heads\": 16, \"num_hidden_layers\": 28, \"num_key_value_heads\": 8,"
  "  \"rms_norm_eps\": 1e-06, \"rope_theta\": 1000000, \"sliding_window\": null,"
  "  \"tie_word_embeddings\": true, \"use_sliding_window\": false, \"vocab_size\": 151936 }";

TEST(hf_qwen3_reads_head_dim_and_its_qk_norms)
{
  hp_hf_model h;
  warned w;
  int n;
  hp_model *m = import_file("examples/hf/Qwen3-8B/config.json", 0, &h, &w);
  CHECK_NEAR(gated_params(151936, 4096, 36, 32, 8, 128, 12288, 2, 2, 0), 8190735360.0, 0);
  CHECK_NEAR(hp_model_unique_params(m), 8190735360.0, 0);
  CHECK(!strcmp(h.style, "qwen3"));
  CHECK_INT(h.tf.qk_norm, 1);
  CHECK_INT(h.tf.qkv_bias, 0);                 /* attention_bias false, unlike Qwen2 */
  CHECK_INT(h.tf.head_dim, 0);                 /* 128 is 4096 / 32: not written */
  CHECK_INT(h.tf.tied, 0);
  hp_model_destroy(&m);
  m = import(qwen3_0_6b, 0, HP_DTYPE_BF16, &h, &n);
  CHECK_NEAR(gated_params(151936, 1024, 28, 16, 8, 128, 3072, 2, 2, 1), 596049920.0, 0);
  CHECK_NEAR(hp_model_unique_params(m), 596049920.0, 0);
  CHECK_INT(h.tf.head_dim, 128);
  CHECK_INT(h.tf.tied, 1);
  hp_model_destroy(&m);
}

/* head_dim is read in every gated style (a Mistral with Mistral-Nemo's shape: 32 heads of
 * 128 over hidden 5120, 40 blocks, vocab 131072, untied: 12,247,782,400 by gated_params);
 * one equal to hidden / heads writes the model file the config without it does */
TEST(hf_head_dim_is_read_where_a_config_gives_it)
{
  static const char nemo[] =
    "{ \"model_type\": \"mistral\", \"hidden_size\": 5120, \"num_hidden_layers\": 40,"
    "  \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"head_dim\": 128,"
    "  \"intermediate_size\": 14336, \"vocab_size\": 131072, \"max_position_embeddings\": 4096,"
    "  \"tie_word_embeddings\": false }";
  hp_hf_model h;
  hp_diag d = {0};
  hp_model *m = import(nemo, 0, HP_DTYPE_BF16, &h, NULL);
  char text[2048], *with = NULL, *without = NULL;
  CHECK_INT(h.tf.head_dim, 128);
  CHECK_NEAR(hp_model_unique_params(m), gated_params(131072, 5120, 40, 32, 8, 128, 14336, 2, 0, 0), 0);
  CHECK_NEAR(hp_model_unique_params(m), 12247782400.0, 0);
  hp_model_destroy(&m);
  snprintf(text, sizeof text, "%.*s, \"head_dim\": 128 }",
           (int)(strrchr(llama2_70b, '}') - llama2_70b), llama2_70b);
  m = import(text, 0, HP_DTYPE_BF16, &h, NULL);
  CHECK_INT(h.tf.head_dim, 0);
  CHECK(hp_hf_model_to_json(&h, "config.json", &with, &d) == HP_OK);
  hp_model_destroy(&m);
  m = import(llama2_70b, 0, HP_DTYPE_BF16, &h, NULL);
  CHECK(hp_hf_model_to_json(&h, "config.json", &without, &d) == HP_OK);
  CHECK(!strcmp(with, without));
  free(with);
  free(without);
  hp_model_destroy(&m);
}

/* Meta-Llama-3-8B (examples/hf/, as Meta publishes it): 32 blocks, h 4096, 32 heads of
 * which 8 for K and V (K, V 1024 wide), SwiGLU ffn 14336, vocab 128256, untied:
 * 2 V h + 32 (2 h^2 + 2 h 1024 + 3 h f + 2 h) + h = 8,030,261,248, Meta's "8.03 B".
 * FlashAttention by default; at its 8192 positions, mbs 1 (s = 8192), a block keeps
 *   flash: 12 sh + 4 s hk + 8 sf + 4 a s = 402,653,184 + 33,554,432 + 939,524,096
 *          + 1,048,576 = 1,376,780,288 bytes (1.28 GiB)
 *   eager: 12 sh + 4 s hk + 8 sf + 2 a s^2 = 1,375,731,712 + 4,294,967,296
 *          = 5,670,699,008 bytes (5.28 GiB)
 * of which 8 sh = 268,435,456 not divided by TP in both. */
TEST(hf_llama3_8b_matches_its_published_size_with_flash_attention)
{
  const double s = 8192, h = 4096, hk = 1024, f = 14336, a = 32, V = 128256;
  hp_hf_model hm;
  warned w;
  hp_diag d = {0};
  hp_model *m = import_file("examples/hf/Meta-Llama-3-8B/config.json", 8192, &hm, &w), *e = NULL;
  char *json = NULL;
  CHECK_NEAR(gated_params(V, h, 32, 32, 8, 128, f, 2, 0, 0), 8030261248.0, 0);
  CHECK_NEAR(hp_model_unique_params(m), 8030261248.0, 0);
  CHECK_INT(hm.tf.kv_heads, 8);
  CHECK_INT(hm.tf.eager_attention, 0);
  CHECK_INT(w.n, 0);
  CHECK_NEAR(m->layers[1].act_bytes, 12 * s * h + 4 * s * hk + 8 * s * f + 4 * a * s, 0);
  CHECK_NEAR(m->layers[1].act_bytes, 1376780288.0, 0);
  CHECK_NEAR(m->layers[1].act_repl, 268435456.0, 0);
  /* 3 x (projections 2 s (2 h^2 + 2 h hk) + attention 4 s^2 h + MLP 6 s h f), and the
   * recomputed QK^T, 2 s^2 h */
  CHECK_NEAR(m->layers[1].flops, 3 * (2 * s * (2 * h * h + 2 * h * hk) + 4 * s * s * h
                                      + 6 * s * h * f) + 2 * s * s * h, 0);
  CHECK(hp_hf_model_to_json(&hm, "config.json", &json, &d) == HP_OK);
  CHECK_CONTAINS(json, "\"attention\":\t\"flash\"");
  free(json);
  hm.tf.eager_attention = 1;
  CHECK(hp_hf_expand(&hm, &e, &d) == HP_OK);
  CHECK_NEAR(e->layers[1].act_bytes, 5670699008.0, 0);
  CHECK_NEAR(e->layers[1].act_repl, 268435456.0, 0);
  CHECK_NEAR(m->layers[1].flops - e->layers[1].flops, 2 * s * s * h, 0);
  CHECK(hp_hf_model_to_json(&hm, "config.json", &json, &d) == HP_OK);
  CHECK_CONTAINS(json, "\"attention\":\t\"eager\"");
  free(json);
  hp_model_destroy(&e);
  hp_model_destroy(&m);
}
