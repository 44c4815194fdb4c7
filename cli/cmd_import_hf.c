/* cmd_import_hf.c -- `hetplan import-hf`: a Hugging Face config.json as a hetplan model
 * file (a "transformer" block the generator expands; src/load_hf.c). */
#include <stdlib.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan import-hf config.json [-o model.json] [--seq N] [--dtype bf16|fp16|fp32]\n"
  "                         [--attention flash|eager]\n"
  "\n"
  "Reads a Hugging Face config.json of a Llama, Mistral, Qwen2, GPT-2 or GPT-NeoX style\n"
  "model (hidden_size/n_embd, num_hidden_layers/n_layer, intermediate_size,\n"
  "num_attention_heads, num_key_value_heads, vocab_size, max_position_embeddings/\n"
  "n_positions, tie_word_embeddings, attention_bias, mlp_bias) and writes a model file\n"
  "with a \"transformer\" block (docs/transformer.md) to -o, else stdout. The summary\n"
  "(layers, parameters with a tied head counted once, per-sample FLOPs) goes to stderr.\n"
  "Other keys are ignored; mixture-of-experts configs are refused.\n"
  "\n"
  "  --seq N     tokens per sample (default: max_position_embeddings, at most 4096)\n"
  "  --dtype T   bf16 (default) or fp16: 2-byte weights, gradients and activations with\n"
  "              fp32 optimizer states; fp32: 4-byte ones\n"
  "  --attention A  flash (default): FlashAttention, no s^2 scores saved, QK^T recomputed\n"
  "              in the backward pass; eager: the scores saved (docs/transformer.md)\n"
  "\n"
  "Every command that takes --model also takes a config.json directly (recognised by its\n"
  "keys, read with the defaults above).\n"
  "\n"
  "exit codes: 0 written, 3 the config is unreadable or of an unsupported kind, 2 usage.\n";

typedef struct import_opts {
  const char *input;     /* the config file, a plain argument */
  long seq;              /* tokens per sample, 0: the config's */
  const char *dtype;
  const char *attention; /* "flash" or "eager", NULL: flash */
} import_opts;

static const cli_flag flags[] = {
  { .name = "input", .arg = "config.json", CLI_OWN_ARG(import_opts, input), .file = CLI_FILE_IN,
    .help = "the Hugging Face config file" },
  { .name = "seq", .arg = "N", CLI_OWN_INT(import_opts, seq, 1, 10000000),
    .expect = "a positive number of tokens",
    .help = "tokens per sample (default: max_position_embeddings, at most 4096)" },
  { .name = "dtype", .arg = "T", CLI_OWN_CHOICE(import_opts, dtype, hp_dtype_parse),
    .expect = "bf16, fp16 or fp32", .help = "the precision (default bf16)" },
  { .name = "attention", .arg = "A", CLI_OWN_CHOICE(import_opts, attention, hp_tf_attention_parse),
    .expect = "flash or eager", .help = "the attention kernel (default flash)" },
  CLI_FLAG_OUT,
};

static int check(cli_ctx *c)
{
  const import_opts *o = c->opts;
  if (!o->input)
    return cli_usage_error("import-hf", "missing the config file (hetplan import-hf config.json)");
  return EXIT_OK_;
}

static int run(cli_ctx *c)
{
  const import_opts *o = c->opts;
  hp_hf_opts ho = { 0, HP_DTYPE_BF16 };
  hp_hf_model h;
  hp_model *m = NULL;
  hp_diag d;
  hp_err err;
  char *text = NULL;
  int rc;
  ho.seq = (int)o->seq;
  if (o->dtype) ho.dtype = (hp_dtype)hp_dtype_parse(o->dtype);
  cli_diag_init(&d);
  if ((err = hp_hf_load(o->input, &ho, &h, &d)) == HP_OK && o->attention)
    h.tf.eager_attention = hp_tf_attention_parse(o->attention);
  if (err || (err = hp_hf_expand(&h, &m, &d)) ||
      (err = hp_hf_model_to_json(&h, o->input, &text, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  fprintf(stderr, "hetplan: %s (%s style): %d blocks, hidden %d, %d heads", h.name, h.style,
          h.tf.layers, h.tf.hidden, h.tf.heads);
  if (h.tf.kv_heads > 0) fprintf(stderr, " (%d key/value)", h.tf.kv_heads);
  fprintf(stderr, ", seq %d, %s: %.0f parameters (%.3f B%s), %.4g TFLOP per sample\n",
          h.tf.seq, hp_dtype_name(h.tf.dtype), hp_model_unique_params(m),
          hp_model_unique_params(m) / 1e9, h.tf.tied ? ", head tied to the embedding" : "",
          hp_model_total_flops(m) / 1e12);
  rc = cli_write(c->core.out, text);
  if (!rc && c->core.out) fprintf(stderr, "hetplan: wrote %s\n", c->core.out);
done:
  free(text);
  hp_model_destroy(&m);
  return rc;
}

const cli_cmd cli_cmd_import_hf = {
  .name = "import-hf",
  .summary = "turn a Hugging Face config.json into a model file",
  .help = help,
  CLI_FLAGS(flags),
  .opts_size = sizeof(import_opts),
  .check = check,
  .run = run,
};
