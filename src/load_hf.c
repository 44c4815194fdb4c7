/* load_hf.c -- reads a Hugging Face config.json (Llama, Mistral, Qwen2, Qwen3, Gemma,
 * Gemma 2, GPT-2, GPT-NeoX style keys) into a transformer description for the generator
 * of transformer.c, and
 * writes the model file that `hetplan import-hf` prints. A model file that is an HF
 * config (recognised by its keys) loads through here too. docs/import-hf.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"

#define DEFAULT_SEQ_CAP 4096

/* The architectures read by name; anything else is guessed from its keys. */
typedef struct hf_style {
  const char *model_type;
  hp_tf_family family;
  int learned_positions;   /* GPT-2's position table */
  int tied_default;        /* tie_word_embeddings when the config does not say */
  int qkv_bias;            /* Qwen2's Q, K, V biases (in the code, not the config) */
  int head_dim_default;    /* head_dim when the config does not say (its config class's
                            * default); 0: hidden / heads; -1: the code never reads it */
  int gemma;               /* 1: Gemma's gated MLP of hidden_activation (GeGLU); 2: Gemma 2,
                            * also four norms a block, soft-capping, alternate windows */
  int qk_norm;             /* Qwen3's RMSNorms on each head's Q and K (in the code) */
} hf_style;

static const hf_style styles[] = {
  { "llama",    HP_TF_LLAMA, 0, 0, 0, 0,   0, 0 },
  { "mistral",  HP_TF_LLAMA, 0, 0, 0, 0,   0, 0 },
  { "qwen2",    HP_TF_LLAMA, 0, 0, 1, 0,   0, 0 },
  { "qwen3",    HP_TF_LLAMA, 0, 0, 0, 128, 0, 1 },
  { "gemma",    HP_TF_LLAMA, 0, 1, 0, 256, 1, 0 },
  { "gemma2",   HP_TF_LLAMA, 0, 1, 0, 256, 2, 0 },
  { "gpt2",     HP_TF_GPT,   1, 1, 0, -1,  0, 0 },
  { "gpt_neox", HP_TF_GPT,   0, 0, 0, -1,  0, 0 },
};

int hp__hf_detect(const cJSON *root)
{
  static const char *const marks[] = { "model_type", "architectures", "num_hidden_layers",
                                       "n_layer", NULL };
  if (!cJSON_IsObject(root) || cJSON_GetObjectItemCaseSensitive(root, "layers") ||
      cJSON_GetObjectItemCaseSensitive(root, "modules") ||
      cJSON_GetObjectItemCaseSensitive(root, "transformer"))
    return 0;
  for (int i = 0; marks[i]; i++)
    if (cJSON_GetObjectItemCaseSensitive(root, marks[i])) return 1;
  return 0;
}

/* The first of `keys` present and not null, or NULL. */
static const char *first_key(const cJSON *o, const char *const *keys)
{
  for (int i = 0; keys[i]; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
    if (v && !cJSON_IsNull(v)) return keys[i];
  }
  return NULL;
}

/* An integer under the first present of `keys`; absent: `def` if not required. The
 * message of a bad value names the key the file used. */
static hp_err hf_int(ju_ctx *c, const cJSON *o, const char *const *keys, int required,
                     long def, long lo, long *out, const char **used)
{
  const char *k = first_key(o, keys);
  if (used) *used = k;
  if (!k) {
    if (!required) { *out = def; return HP_OK; }
    char alts[160] = "";
    for (int i = 0, len = 0; keys[i] && len < 150; i++)
      len += snprintf(alts + len, sizeof alts - (size_t)len, "%s\"%s\"", i ? " or " : "", keys[i]);
    return hp_fail(c->d, HP_PARSE, "%s: %s: missing: a Hugging Face config gives it (as an "
                   "integer); is this a transformer's config.json?", c->file, alts);
  }
  return ju_int(c, o, "", k, 1, def, lo, 100000000, out);
}

static const char *str_member(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void set_name(const cJSON *root, const char *file, char *name, size_t n)
{
  const char *s = str_member(root, "_name_or_path");
  const char *slash = strrchr(file, '/');
  if (s && *s) {
    const char *t = strrchr(s, '/');
    snprintf(name, n, "%s", t && t[1] ? t + 1 : s);
    return;
  }
  /* ".../Llama-2-70b-hf/config.json": the folder names the model */
  if (slash && !strcmp(slash + 1, "config.json") && slash > file) {
    const char *start = slash - 1;
    while (start > file && start[-1] != '/') start--;
    if (slash - start > 0 && strncmp(start, ".", (size_t)(slash - start)) != 0) {
      snprintf(name, n, "%.*s", (int)(slash - start), start);
      return;
    }
  }
  s = slash ? slash + 1 : file;
  snprintf(name, n, "%.*s", strlen(s) > 5 && !strcmp(s + strlen(s) - 5, ".json")
           ? (int)strlen(s) - 5 : (int)strlen(s), s);
}

/* The names a config gives that hetplan keeps or prints: no control characters. */
static hp_err check_names(ju_ctx *c, const cJSON *root)
{
  static const char *const keys[] = { "_name_or_path", "model_type", NULL };
  hp_err err;
  for (int i = 0; keys[i]; i++)
    if ((err = ju_name(c, keys[i], str_member(root, keys[i])))) return err;
  return HP_OK;
}

/* Keys that make a model other than the generator's: refused with a reason. */
static hp_err refuse_unsupported(ju_ctx *c, const cJSON *root)
{
  static const char *const moe[] = { "num_local_experts", "num_experts", "n_routed_experts",
                                     "moe_num_experts", NULL };
  for (int i = 0; moe[i]; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, moe[i]);
    if (cJSON_IsNumber(v) && v->valuedouble > 1)
      return hp_fail(c->d, HP_PARSE, "%s: %s: %g experts: mixture-of-experts models are not "
                     "supported (the generator has one MLP per block)", c->file, moe[i],
                     v->valuedouble);
  }
  return HP_OK;
}

/* A head's width: the config's head_dim, else its class's default, else hidden / heads.
 * *out is 0 when it is hidden / heads (the description then omits it). GPT-2's and
 * GPT-NeoX's code derive it from those two and never read head_dim: one that differs is
 * refused rather than read as their code would not. */
static hp_err read_head_dim(ju_ctx *c, const cJSON *root, const hf_style *st, long hidden,
                            long heads, long *out)
{
  static const char *const k_hd[] = { "head_dim", NULL };
  long hd;
  hp_err err;
  int even = hidden % heads == 0;
  *out = 0;
  if ((err = hf_int(c, root, k_hd, 0, st->head_dim_default > 0 ? st->head_dim_default : 0, 1,
                    &hd, NULL)))
    return err;
  if (hd == 0 || (even && hd == hidden / heads)) return HP_OK;
  if (st->head_dim_default < 0)   /* uneven: refused below, as heads not dividing hidden */
    return even ? hp_fail(c->d, HP_PARSE, "%s: head_dim: %ld differs from hidden size / heads "
                          "= %ld: %s's code takes a head's width from those two and does not "
                          "read head_dim", c->file, hd, hidden / heads, st->model_type) : HP_OK;
  *out = hd;
  return HP_OK;
}

/* The gated MLP's activation of a Gemma config: hidden_activation, which Gemma's code
 * reads (Gemma 1 ignores hidden_act), else gelu_pytorch_tanh, the classes' default. */
static hp_err gemma_activation(ju_ctx *c, const cJSON *root, int *geglu)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "hidden_activation");
  const char *act = "gelu_pytorch_tanh";
  if (v && !cJSON_IsNull(v)) {
    if (!cJSON_IsString(v))
      return hp_fail(c->d, HP_PARSE, "%s: hidden_activation: expected a string", c->file);
    act = v->valuestring;
  }
  if (!strncmp(act, "gelu", 4)) *geglu = 1;
  else if (!strcmp(act, "silu") || !strcmp(act, "swish")) *geglu = 0;
  else
    return hp_fail(c->d, HP_PARSE, "%s: hidden_activation: \"%s\": a gated MLP hetplan does "
                   "not name (it writes GELU as GeGLU and SiLU as SwiGLU)", c->file, act);
  return HP_OK;
}

/* A Gemma 2 number that its config class sets when absent (soft-capping, the window):
 * absent: `def`; null: none (0); else the positive number. */
static hp_err gemma2_number(ju_ctx *c, const cJSON *root, const char *key, double def,
                            double *out)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!v) { *out = def; return HP_OK; }
  if (cJSON_IsNull(v)) { *out = 0; return HP_OK; }
  return ju_num(c, root, "", key, 1, def, 0, 1, out);
}

/* Another model_type is read by its keys, and *why says which: GPT-2's n_embd, else
 * hidden_act (SiLU: a gated MLP, GELU: a plain one). A Gemma variant is refused: its
 * keys tell neither its norms nor its attention. */
static hp_err guess_style(ju_ctx *c, const cJSON *root, const char *mt, hf_style *g,
                          char *why, size_t n)
{
  const char *act = str_member(root, "hidden_act");
  if ((mt && strstr(mt, "gemma")) || cJSON_GetObjectItemCaseSensitive(root, "hidden_activation"))
    return hp_fail(c->d, HP_PARSE, "%s: model_type: %s%s%s: not one hetplan reads, and a Gemma "
                   "variant by its %s (hetplan reads gemma and gemma2; the others' norms and "
                   "attention differ): write a model file with a \"transformer\" block instead "
                   "(docs/transformer.md)", c->file, mt ? "\"" : "", mt ? mt : "missing",
                   mt ? "\"" : "", mt && strstr(mt, "gemma") ? "name" : "hidden_activation key");
  if (first_key(root, (const char *const[]){ "n_embd", NULL })) {
    *g = (hf_style){ "gpt2", HP_TF_GPT, 1, 1, 0, 0, 0, 0 };
    snprintf(why, n, "n_embd is GPT-2's key: LayerNorms, a plain GELU MLP of 2 matrices, "
             "learned positions");
  } else if (act && (!strcmp(act, "silu") || !strcmp(act, "swish"))) {
    *g = (hf_style){ "llama", HP_TF_LLAMA, 0, 0, 0, 0, 0, 0 };
    snprintf(why, n, "hidden_act \"%s\": a gated MLP of 3 matrices (SwiGLU), RMSNorm", act);
  } else if (act && !strncmp(act, "gelu", 4)) {
    *g = (hf_style){ "gpt_neox", HP_TF_GPT, 0, 0, 0, 0, 0, 0 };
    snprintf(why, n, "hidden_act \"%s\" taken for a plain GELU MLP of 2 matrices, LayerNorms "
             "(a gated one, GeGLU, would have 3)", act);
  } else {
    return hp_fail(c->d, HP_PARSE, "%s: model_type: %s%s%s: not one hetplan reads (llama, "
                   "mistral, qwen2, qwen3, gemma, gemma2, gpt2, gpt_neox), and its keys do not "
                   "say whether its MLP is gated: write a model file with a \"transformer\" "
                   "block instead (docs/transformer.md)", c->file, mt ? "\"" : "",
                   mt ? mt : "missing", mt ? "\"" : "");
  }
  return HP_OK;
}

hp_err hp__hf_read(ju_ctx *c, const cJSON *root, const hp_hf_opts *opts, hp_hf_model *out)
{
  static const char *const k_hidden[] = { "hidden_size", "n_embd", NULL };
  static const char *const k_layers[] = { "num_hidden_layers", "n_layer", NULL };
  static const char *const k_heads[] = { "num_attention_heads", "n_head", NULL };
  static const char *const k_kv[] = { "num_key_value_heads", NULL };
  static const char *const k_ffn[] = { "intermediate_size", "n_inner", NULL };
  static const char *const k_vocab[] = { "vocab_size", NULL };
  static const char *const k_pos[] = { "max_position_embeddings", "n_positions", "n_ctx", NULL };
  hp_hf_opts def = { 0, HP_DTYPE_BF16 };
  hf_style guess = { 0 };
  hp_transformer *t = &out->tf;
  const hf_style *st = NULL;
  const char *mt = str_member(root, "model_type");
  const char *pos_key = NULL;
  long hidden, layers, heads, kv, ffn, vocab, maxpos, head_dim;
  double window = 0;
  int tied;
  hp_err err;

  if (!opts) opts = &def;
  memset(out, 0, sizeof *out);
  if ((err = check_names(c, root))) return err;
  for (size_t i = 0; mt && i < sizeof styles / sizeof styles[0]; i++)
    if (!strcmp(mt, styles[i].model_type)) st = &styles[i];
  if (st) {
    snprintf(out->style, sizeof out->style, "%s", st->model_type);
  } else {
    char why[160];
    if ((err = guess_style(c, root, mt, &guess, why, sizeof why))) return err;
    st = &guess;
    snprintf(out->style, sizeof out->style, "%s", st->model_type);
    hp_warn(c->d, "%s: model_type %s%s%s is not one hetplan reads by name; read as %s style by "
            "its keys: %s", c->file, mt ? "\"" : "", mt ? mt : "missing", mt ? "\"" : "",
            st->model_type, why);
  }

  if ((err = hf_int(c, root, k_hidden, 1, 0, 1, &hidden, NULL))) return err;
  if ((err = hf_int(c, root, k_layers, 1, 0, 1, &layers, NULL))) return err;
  if (layers > HP_MAX_LAYERS - 3)
    return hp_fail(c->d, HP_PARSE, "%s: %ld transformer blocks: more than the %ld layers a "
                   "model may have (docs/limits.md)", c->file, layers, HP_MAX_LAYERS);
  if ((err = hf_int(c, root, k_heads, 1, 0, 1, &heads, NULL))) return err;
  if ((err = hf_int(c, root, k_kv, 0, heads, 1, &kv, NULL))) return err;
  if ((err = hf_int(c, root, k_ffn, st->family == HP_TF_LLAMA, 0, 1, &ffn, NULL))) return err;
  if ((err = hf_int(c, root, k_vocab, 1, 0, 1, &vocab, NULL))) return err;
  if ((err = hf_int(c, root, k_pos, 0, 0, 1, &maxpos, &pos_key))) return err;
  if ((err = refuse_unsupported(c, root))) return err;
  if ((err = read_head_dim(c, root, st, hidden, heads, &head_dim))) return err;
  if (!head_dim && hidden % heads)
    return hp_fail(c->d, HP_PARSE, "%s: %s: %ld heads do not divide the hidden size %ld",
                   c->file, first_key(root, k_heads), heads, hidden);
  if (heads % kv)
    return hp_fail(c->d, HP_PARSE, "%s: num_key_value_heads: %ld does not divide the %ld "
                   "attention heads", c->file, kv, heads);
  if ((err = ju_bool(c, root, "", "tie_word_embeddings", 0, st->tied_default, &tied))) return err;
  if (st->gemma) {
    int geglu = 0;
    double cap;
    if ((err = gemma_activation(c, root, &geglu))) return err;
    t->geglu = geglu;
    if (st->gemma == 2) {
      t->post_norms = 1;
      if ((err = gemma2_number(c, root, "attn_logit_softcapping", 50, &cap))) return err;
      t->attn_softcap = cap > 0;
      if ((err = gemma2_number(c, root, "final_logit_softcapping", 30, &cap))) return err;
      t->logit_softcap = cap > 0;
      if ((err = gemma2_number(c, root, "sliding_window", 4096, &window))) return err;
    }
  }

  /* the sequence length */
  if (opts->seq > 0) {
    t->seq = opts->seq;
    if (maxpos > 0 && opts->seq > maxpos) {
      if (st->learned_positions)
        return hp_fail(c->d, HP_INVAL, "%s: %s: %ld learned positions: a sequence of %d "
                       "tokens does not fit (give --seq %ld or less)", c->file, pos_key, maxpos,
                       opts->seq, maxpos);
      hp_warn(c->d, "%s: %s is %ld: sequences of %d tokens are longer than the model was "
              "made for", c->file, pos_key, maxpos, opts->seq);
    }
  } else if (maxpos > 0) {
    t->seq = (int)(maxpos > DEFAULT_SEQ_CAP ? DEFAULT_SEQ_CAP : maxpos);
    if (maxpos > DEFAULT_SEQ_CAP) {
      hp_warn(c->d, "%s: %s is %ld: planning for sequences of %d tokens (import-hf --seq N "
              "sets another length)", c->file, pos_key, maxpos, DEFAULT_SEQ_CAP);
    }
  } else {
    return hp_fail(c->d, HP_PARSE, "%s: max_position_embeddings: missing, so the sequence "
                   "length is unknown: give it with 'hetplan import-hf --seq N'", c->file);
  }
  /* Gemma 2 attends within a window on every other layer; the generator's blocks all
   * attend over the whole sequence, as eager attention computes a windowed layer too */
  if (window > 0 && t->seq > window)
    hp_warn(c->d, "%s: sliding_window is %g on every other layer: hetplan counts those layers' "
            "attention over all %d tokens, as eager attention computes it (an over-estimate of "
            "their attention FLOPs, and of eager attention's memory, where a kernel skips what "
            "the window masks)", c->file, window, t->seq);

  t->family = st->family;
  t->layers = (int)layers;
  t->hidden = (int)hidden;
  t->heads = (int)heads;
  t->kv_heads = kv != heads ? (int)kv : 0;
  t->head_dim = (int)head_dim;    /* 0: hidden / heads */
  t->ffn = (int)ffn;              /* 0: the family's default (GPT-2's n_inner null: 4h) */
  t->vocab = (int)vocab;
  t->positions = st->learned_positions ? (int)(maxpos > 0 ? maxpos : t->seq) : -1;
  t->tied = tied;
  t->dtype = opts->dtype;
  t->qk_norm = st->qk_norm;
  if (st->family == HP_TF_LLAMA) {
    int ab = 0, mb = 0;
    if ((err = ju_bool(c, root, "", "attention_bias", 0, 0, &ab))) return err;
    if ((err = ju_bool(c, root, "", "mlp_bias", 0, 0, &mb))) return err;
    t->qkv_bias = st->qkv_bias || ab;
    t->out_bias = ab;
    t->mlp_bias = mb;
  }
  /* mixed precision keeps 2-byte weights and gradients beside the fp32 master, momentum
   * and variance (16 bytes a parameter); fp32 training 4-byte ones, no master (16) */
  out->param_bytes = hp_dtype_bytes(opts->dtype);
  out->grad_bytes = hp_dtype_bytes(opts->dtype);
  out->state_bytes = 16;
  return HP_OK;
}

static hp_err expand_into(const hp_hf_model *h, hp_model *m, hp_diag *d)
{
  m->param_bytes = h->param_bytes;
  m->grad_bytes = h->grad_bytes;
  m->state_bytes = h->state_bytes;
  m->name = hp__strdup(h->name);
  if (!m->name) return hp_fail(d, HP_NOMEM, "out of memory");
  return hp_transformer_expand(&h->tf, m, d);
}

hp_err hp__hf_model(ju_ctx *c, const cJSON *root, hp_model *m)
{
  hp_hf_model h;
  hp_err err = hp__hf_read(c, root, NULL, &h);
  if (err) return err;
  set_name(root, c->file, h.name, sizeof h.name);
  if ((err = ju_name(c, "name (taken from the file's path)", h.name))) return err;
  if ((err = expand_into(&h, m, c->d))) {
    char msg[sizeof c->d->msg];
    snprintf(msg, sizeof msg, "%s", c->d->msg);
    return hp_fail(c->d, err, "%s: %s", c->file, msg);
  }
  return HP_OK;
}

hp_err hp_hf_parse(const char *text, const char *file, const hp_hf_opts *o, hp_hf_model *out,
                   hp_diag *d)
{
  ju_ctx c = { file, d };
  cJSON *root = NULL;
  hp_err err;
  memset(out, 0, sizeof *out);
  HP_TRY(ju_parse(&c, text, &root));
  HP_TRY(ju_object(&c, root, ""));
  if (!hp__hf_detect(root)) {
    err = hp_fail(d, HP_PARSE, "%s: not a Hugging Face config: it has none of model_type, "
                  "architectures, num_hidden_layers, n_layer%s", file,
                  cJSON_GetObjectItemCaseSensitive(root, "layers") ||
                  cJSON_GetObjectItemCaseSensitive(root, "transformer")
                  ? " (it is a hetplan model file already)" : "");
    goto done;
  }
  HP_TRY(hp__hf_read(&c, root, o, out));
  set_name(root, file, out->name, sizeof out->name);
  HP_TRY(ju_name(&c, "name (taken from the file's path)", out->name));
done:
  cJSON_Delete(root);
  return err;
}

hp_err hp_hf_load(const char *path, const hp_hf_opts *o, hp_hf_model *out, hp_diag *d)
{
  char *text = NULL;
  hp_err err = hp_read_file(path, &text, d);
  if (!err) err = hp_hf_parse(text, path, o, out, d);
  free(text);
  return err;
}

hp_err hp_hf_expand(const hp_hf_model *h, hp_model **out, hp_diag *d)
{
  hp_model *m = hp__calloc(1, sizeof *m);
  hp_err err;
  *out = NULL;
  if (!m) return hp_fail(d, HP_NOMEM, "out of memory");
  if ((err = expand_into(h, m, d))) {
    hp_model_destroy(&m);
    return err;
  }
  *out = m;
  return HP_OK;
}

hp_err hp_hf_model_to_json(const hp_hf_model *h, const char *source, char **out, hp_diag *d)
{
  cJSON *root = cJSON_CreateObject(), *tf;
  hp_model *m = NULL;
  const hp_transformer *t = &h->tf;
  char src[1024];
  hp_err err;
  *out = NULL;
  if ((err = hp_hf_expand(h, &m, d))) { cJSON_Delete(root); return err; }
  snprintf(src, sizeof src, "imported by hetplan import-hf from %s (%s style): %.0f parameters%s; "
           "docs/transformer.md gives the formulas", source ? source : "a Hugging Face config",
           h->style, hp_model_unique_params(m), t->tied ? " with the head tied to the embedding" : "");
  hp_model_destroy(&m);
  if (!root || !(tf = cJSON_CreateObject())) {
    cJSON_Delete(root);
    return hp_fail(d, HP_NOMEM, "out of memory writing JSON");
  }
  cJSON_AddNumberToObject(root, "version", 1);
  cJSON_AddStringToObject(root, "name", h->name);
  cJSON_AddStringToObject(root, "source", src);
  cJSON_AddNumberToObject(root, "param_bytes", h->param_bytes);
  cJSON_AddNumberToObject(root, "grad_bytes", h->grad_bytes);
  cJSON_AddNumberToObject(root, "state_bytes", h->state_bytes);
  cJSON_AddItemToObject(root, "transformer", tf);
  cJSON_AddStringToObject(tf, "family", t->family == HP_TF_GPT ? "gpt" : "llama");
  cJSON_AddNumberToObject(tf, "layers", t->layers);
  cJSON_AddNumberToObject(tf, "hidden", t->hidden);
  cJSON_AddNumberToObject(tf, "heads", t->heads);
  if (t->kv_heads > 0) cJSON_AddNumberToObject(tf, "kv_heads", t->kv_heads);
  if (t->head_dim > 0) cJSON_AddNumberToObject(tf, "head_dim", t->head_dim);
  if (t->ffn > 0) cJSON_AddNumberToObject(tf, "ffn", t->ffn);
  cJSON_AddNumberToObject(tf, "seq", t->seq);
  cJSON_AddNumberToObject(tf, "vocab", t->vocab);
  cJSON_AddNumberToObject(tf, "positions", t->positions > 0 ? t->positions : 0);
  if (t->family == HP_TF_LLAMA) {
    if (t->qkv_bias) cJSON_AddBoolToObject(tf, "qkv_bias", 1);
    if (t->out_bias) cJSON_AddBoolToObject(tf, "out_bias", 1);
    if (t->mlp_bias) cJSON_AddBoolToObject(tf, "mlp_bias", 1);
    if (t->geglu) cJSON_AddStringToObject(tf, "mlp", "geglu");
    if (t->post_norms) cJSON_AddBoolToObject(tf, "post_norms", 1);
    if (t->qk_norm) cJSON_AddBoolToObject(tf, "qk_norm", 1);
  }
  if (t->attn_softcap) cJSON_AddBoolToObject(tf, "attn_softcap", 1);
  if (t->logit_softcap) cJSON_AddBoolToObject(tf, "logit_softcap", 1);
  cJSON_AddBoolToObject(tf, "tied", t->tied);
  cJSON_AddStringToObject(tf, "dtype", hp_dtype_name(t->dtype));
  cJSON_AddStringToObject(tf, "attention", hp_tf_attention_name(t->eager_attention));
  *out = cJSON_Print(root);
  cJSON_Delete(root);
  return *out ? HP_OK : hp_fail(d, HP_NOMEM, "out of memory writing JSON");
}
