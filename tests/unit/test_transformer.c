/* test_transformer.c -- the transformer generator against published parameter counts
 * and the Korthikanti et al. activation formula. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

static hp_model *expand(const char *tf)
{
  char text[512];
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
