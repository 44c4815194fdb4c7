/* load_model.c -- reads a model file (formats.md "Model"): explicit layers with
 * `repeat`, or the same layers nested in modules, or a `transformer` description expanded
 * by transformer.c, or a Hugging Face config.json (recognised by its keys, read by
 * load_hf.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"

#define MAX_LAYERS HP_MAX_LAYERS

static const char *const model_keys[] = {
  "version", "name", "source", "notes", "param_bytes", "grad_bytes", "state_bytes",
  "input_bytes", "tied_params", "layers", "modules", "transformer", "update_bytes",
  "gemm_precision", NULL };
static const char *const layer_keys[] = {
  "name", "kind", "params", "act_bytes", "out_bytes", "flops", "tp_comm_bytes",
  "splittable", "act_bytes_replicated", "work_bytes", "work_bytes_fixed", "repeat",
  "checkpointable",
  "source", "notes", NULL };
static const char *const tf_keys[] = {
  "family", "layers", "hidden", "heads", "kv_heads", "head_dim", "seq", "vocab", "ffn",
  "positions", "qkv_bias", "out_bias", "mlp_bias", "tied", "dtype", "mlp", "post_norms",
  "qk_norm", "attn_softcap", "logit_softcap", "attention", "gemm_precision", NULL };

/* Reads one layer; `warn`: also warn about unknown keys (the first of the two walks that
 * read every layer does, the second does not repeat it). */
static hp_err read_layer(ju_ctx *c, const cJSON *o, const char *p, int warn, hp_layer *ly,
                         long *repeat, const char **name, const char **kind)
{
  hp_err err;
  int split;
  if ((err = ju_object(c, o, p))) return err;
  if (warn) ju_unknown_keys(c, o, p, layer_keys);
  if ((err = ju_str(c, o, p, "name", 1, NULL, name))) return err;
  if ((err = ju_str(c, o, p, "kind", 0, *name, kind))) return err;
  if ((err = ju_num(c, o, p, "params", 1, 0, 0, 0, &ly->params))) return err;
  if ((err = ju_num(c, o, p, "act_bytes", 1, 0, 0, 0, &ly->act_bytes))) return err;
  if ((err = ju_num(c, o, p, "out_bytes", 1, 0, 0, 0, &ly->out_bytes))) return err;
  if ((err = ju_num(c, o, p, "flops", 1, 0, 0, 0, &ly->flops))) return err;
  if ((err = ju_num(c, o, p, "tp_comm_bytes", 0, 0, 0, 0, &ly->tp_comm))) return err;
  if ((err = ju_bool(c, o, p, "splittable", 0, 1, &split))) return err;
  ly->splittable = split;
  {
    int ck;
    if ((err = ju_bool(c, o, p, "checkpointable", 0, 1, &ck))) return err;
    ly->no_recompute = !ck;
  }
  if ((err = ju_num(c, o, p, "act_bytes_replicated", 0, 0, 0, 0, &ly->act_repl))) return err;
  if ((err = ju_num(c, o, p, "work_bytes", 0, 0, 0, 0, &ly->work_bytes))) return err;
  if ((err = ju_num(c, o, p, "work_bytes_fixed", 0, 0, 0, 0, &ly->work_fixed))) return err;
  if ((err = ju_int(c, o, p, "repeat", 0, 1, 1, MAX_LAYERS, repeat))) return err;
  if (ly->act_repl > ly->act_bytes)
    return hp_fail(c->d, HP_PARSE, "%s: %s.act_bytes_replicated: %.17g exceeds act_bytes %.17g: "
                   "it is the part of act_bytes that TP does not divide", c->file, p,
                   ly->act_repl, ly->act_bytes);
  return HP_OK;
}

/* Appends `rep` copies of a layer read by read_layer: name, or name.0 .. name.N-1. */
static hp_err add_layers(ju_ctx *c, hp_model *m, const hp_layer *ly, long rep,
                         const char *name, const char *kind)
{
  for (long r = 0; r < rep; r++) {
    hp_layer *dst = &m->layers[m->n_layers];
    *dst = *ly;
    if (rep > 1) {
      size_t len = strlen(name) + 24;
      dst->name = malloc(len);
      if (dst->name) snprintf(dst->name, len, "%s.%ld", name, r);
    } else {
      dst->name = hp__strdup(name);
    }
    dst->kind = hp__strdup(kind);
    m->n_layers++;
    if (!dst->name || !dst->kind) return hp_fail(c->d, HP_NOMEM, "out of memory");
  }
  return HP_OK;
}

static hp_err read_layers(ju_ctx *c, const cJSON *arr, hp_model *m)
{
  int n;
  long total = 0;
  hp_err err;
  char p[64];
  if ((err = ju_array(c, arr, "layers", &n))) return err;
  if (n == 0)
    return hp_fail(c->d, HP_PARSE, "%s: layers: the array is empty: a model needs at least "
                   "one layer", c->file);
  const cJSON *o = arr->child;
  for (int i = 0; i < n; i++, o = o->next) {   /* first pass: validate and count */
    hp_layer ly = {0};
    long rep;
    const char *name, *kind;
    ju_index(p, sizeof p, "layers", i);
    if ((err = read_layer(c, o, p, 1, &ly, &rep, &name, &kind))) return err;
    total += rep;
    if (total > MAX_LAYERS)
      return hp_fail(c->d, HP_PARSE, "%s: %s.repeat: more than %ld layers in all", c->file, p,
                     MAX_LAYERS);
  }
  m->layers = hp__calloc((size_t)total, sizeof *m->layers);
  if (!m->layers) return hp_fail(c->d, HP_NOMEM, "out of memory for %ld layers", total);
  o = arr->child;
  for (int i = 0; i < n; i++, o = o->next) {
    hp_layer ly = {0};
    long rep;
    const char *name, *kind;
    ju_index(p, sizeof p, "layers", i);
    read_layer(c, o, p, 0, &ly, &rep, &name, &kind);
    if ((err = add_layers(c, m, &ly, rep, name, kind))) return err;
  }
  return HP_OK;
}

/* --- "modules": the layers nested in a tree of modules (formats.md). Read in two walks
 * of the same code, as the layers list is: the first checks every node and counts the
 * layers and modules, the second (m set) fills them in pre-order. */
static const char *const module_keys[] = { "name", "children", "source", "notes", NULL };

typedef struct tree_walk {
  ju_ctx *c;
  hp_model *m;           /* NULL on the counting walk */
  long n_layers, n_modules;
  char path[4096];       /* the key path of the node at hand, e.g. modules[1].children[0] */
} tree_walk;

static hp_err read_nodes(tree_walk *w, const cJSON *arr, int parent, int depth)
{
  ju_ctx *c = w->c;
  size_t len = strlen(w->path);
  int n;
  hp_err err;
  if ((err = ju_array(c, arr, w->path, &n))) return err;
  if (n == 0)
    return parent < 0 ? hp_fail(c->d, HP_PARSE, "%s: modules: the array is empty: a model "
                                "needs at least one layer", c->file)
                      : hp_fail(c->d, HP_PARSE, "%s: %s: the array is empty: a module holds at "
                                "least one layer or module (or give the layers without it)",
                                c->file, w->path);
  const cJSON *o = arr->child;
  for (int i = 0; i < n; i++, o = o->next) {
    const cJSON *kids = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "children") : NULL;
    snprintf(w->path + len, sizeof w->path - len, "[%d]", i);
    if (kids) {   /* a module */
      const char *name;
      long k = w->n_modules;
      if (depth >= HP_MAX_MODULE_DEPTH) {   /* the path's middle left out: it is long */
        size_t pl = strlen(w->path);
        return hp_fail(c->d, HP_PARSE, "%s: %.60s%s%s: modules nest more than %d deep: flatten "
                       "the tree", c->file, w->path, pl > 120 ? " ... " : "",
                       w->path + (pl > 120 ? pl - 60 : 60 < pl ? 60 : pl), HP_MAX_MODULE_DEPTH);
      }
      if (!w->m) {
        /* a layer's key on a module would be dropped with a warning, and the model would
         * quietly lose layers (`repeat`) or parameters: refused */
        for (int q = 0; layer_keys[q]; q++)
          if (strcmp(layer_keys[q], "name") && cJSON_GetObjectItemCaseSensitive(o, layer_keys[q]))
            return hp_fail(c->d, HP_PARSE, "%s: %s.%s: a module (a node with \"children\") "
                           "has no \"%s\": %s", c->file, w->path, layer_keys[q], layer_keys[q],
                           strcmp(layer_keys[q], "repeat")
                             ? "its figures are its layers': give them to a layer inside it"
                             : "write the module once per copy, or repeat the layers inside it");
        ju_unknown_keys(c, o, w->path, module_keys);
      }
      if ((err = ju_str(c, o, w->path, "name", 1, NULL, &name))) return err;
      if (k >= MAX_LAYERS)
        return hp_fail(c->d, HP_PARSE, "%s: %s: more than %ld modules in all", c->file,
                       w->path, MAX_LAYERS);
      w->n_modules++;
      if (w->m) {
        hp_module *mod = &w->m->modules[k];
        *mod = (hp_module){ hp__strdup(name), parent, w->m->n_layers, 0, depth };
        w->m->n_modules++;
        if (!mod->name) return hp_fail(c->d, HP_NOMEM, "out of memory");
      }
      size_t at = strlen(w->path);
      snprintf(w->path + at, sizeof w->path - at, ".children");
      if ((err = read_nodes(w, kids, (int)k, depth + 1))) return err;
      if (w->m) w->m->modules[k].last = w->m->n_layers;
    } else {      /* a layer, exactly as in "layers" */
      hp_layer ly = {0};
      long rep;
      const char *name, *kind;
      if ((err = read_layer(c, o, w->path, !w->m, &ly, &rep, &name, &kind))) return err;
      if (!w->m && (w->n_layers += rep) > MAX_LAYERS)
        return hp_fail(c->d, HP_PARSE, "%s: %s.repeat: more than %ld layers in all", c->file,
                       w->path, MAX_LAYERS);
      if (w->m && (err = add_layers(c, w->m, &ly, rep, name, kind))) return err;
    }
    w->path[len] = '\0';
  }
  return HP_OK;
}

static hp_err read_modules(ju_ctx *c, const cJSON *arr, hp_model *m)
{
  tree_walk *w = hp__calloc(1, sizeof *w);
  hp_err err;
  if (!w) return hp_fail(c->d, HP_NOMEM, "out of memory");
  w->c = c;
  snprintf(w->path, sizeof w->path, "modules");
  if (!(err = read_nodes(w, arr, -1, 0))) {
    m->layers = hp__calloc((size_t)w->n_layers, sizeof *m->layers);
    m->modules = w->n_modules ? hp__calloc((size_t)w->n_modules, sizeof *m->modules) : NULL;
    if (!m->layers || (w->n_modules && !m->modules))
      err = hp_fail(c->d, HP_NOMEM, "out of memory for %ld layers", w->n_layers);
  }
  if (!err) {
    w->m = m;
    w->n_layers = w->n_modules = 0;
    snprintf(w->path, sizeof w->path, "modules");
    err = read_nodes(w, arr, -1, 0);
  }
  free(w);
  return err;
}

/* "gemm_precision" at `path` of o: "bf16" (the default: bf16 or fp16 GEMMs at the type's
 * tflops) or "fp8" (tflops_fp8). Absent: *g is left alone. */
static hp_err read_precision(ju_ctx *c, const cJSON *o, const char *path, int *g)
{
  const char *s;
  hp_err err;
  if (!cJSON_GetObjectItemCaseSensitive(o, "gemm_precision")) return HP_OK;
  if ((err = ju_str(c, o, path, "gemm_precision", 1, NULL, &s))) return err;
  if (hp_gemm_precision_parse(s) < 0)
    return hp_fail(c->d, HP_PARSE, "%s: %s%sgemm_precision: expected \"bf16\" or \"fp8\", got "
                   "\"%s\"", c->file, path, path[0] ? "." : "", s);
  *g = hp_gemm_precision_parse(s);
  return HP_OK;
}

static hp_err read_transformer(ju_ctx *c, const cJSON *o, hp_model *m)
{
  hp_transformer t = {0};
  const char *fam;
  long v;
  hp_err err;
  const char *p = "transformer";
  if ((err = ju_object(c, o, p))) return err;
  ju_unknown_keys(c, o, p, tf_keys);
  if ((err = read_precision(c, o, p, &m->gemm_precision))) return err;
  if ((err = ju_str(c, o, p, "family", 1, NULL, &fam))) return err;
  if (hp_tf_family_parse(fam) < 0)
    return hp_fail(c->d, HP_PARSE, "%s: transformer.family: expected \"gpt\" or \"llama\", "
                   "got \"%s\"", c->file, fam);
  t.family = (hp_tf_family)hp_tf_family_parse(fam);
#define TF_INT(key, field, req, lo)                                                  \
  if ((err = ju_int(c, o, p, key, req, 0, lo, 10000000, &v))) return err;            \
  t.field = (int)v;
  if ((err = ju_int(c, o, p, "layers", 1, 0, 1, MAX_LAYERS - 3, &v))) return err;
  t.layers = (int)v;
  TF_INT("hidden", hidden, 1, 1)
  TF_INT("heads", heads, 1, 1)
  TF_INT("kv_heads", kv_heads, 0, 0)
  TF_INT("head_dim", head_dim, 0, 1)
  TF_INT("seq", seq, 1, 1)
  TF_INT("vocab", vocab, 1, 1)
  TF_INT("ffn", ffn, 0, 0)
  TF_INT("positions", positions, 0, 0)
#undef TF_INT
  if (cJSON_GetObjectItemCaseSensitive(o, "positions") && t.positions == 0)
    t.positions = -1;   /* 0 given: no learned positions (rotary) */
#define TF_BOOL(key, field)                                                          \
  { int b_; if ((err = ju_bool(c, o, p, key, 0, 0, &b_))) return err; t.field = b_; }
  TF_BOOL("qkv_bias", qkv_bias)
  TF_BOOL("out_bias", out_bias)
  TF_BOOL("mlp_bias", mlp_bias)
  TF_BOOL("tied", tied)
  TF_BOOL("post_norms", post_norms)
  TF_BOOL("qk_norm", qk_norm)
  TF_BOOL("attn_softcap", attn_softcap)
  TF_BOOL("logit_softcap", logit_softcap)
#undef TF_BOOL
  {   /* the MLP: "gelu" (gpt), "swiglu" or "geglu" (llama: gated, 3 matrices) */
    const char *mlp;
    int gpt = t.family == HP_TF_GPT;
    if ((err = ju_str(c, o, p, "mlp", 0, gpt ? "gelu" : "swiglu", &mlp))) return err;
    if (gpt ? strcmp(mlp, "gelu") != 0 : strcmp(mlp, "swiglu") != 0 && strcmp(mlp, "geglu") != 0)
      return hp_fail(c->d, HP_PARSE, "%s: transformer.mlp: expected %s for the %s family, got "
                     "\"%s\"", c->file, gpt ? "\"gelu\" (2 matrices)"
                     : "\"swiglu\" or \"geglu\" (gated, 3 matrices)", gpt ? "gpt" : "llama", mlp);
    t.geglu = !strcmp(mlp, "geglu");
  }
  {
    const char *dt;
    if ((err = ju_str(c, o, p, "dtype", 0, "bf16", &dt))) return err;
    if (hp_dtype_parse(dt) < 0)
      return hp_fail(c->d, HP_PARSE, "%s: transformer.dtype: expected \"bf16\", \"fp16\" or "
                     "\"fp32\", got \"%s\"", c->file, dt);
    t.dtype = (hp_dtype)hp_dtype_parse(dt);
  }
  {   /* FlashAttention unless "eager" (docs/transformer.md) */
    const char *at;
    if ((err = ju_str(c, o, p, "attention", 0, "flash", &at))) return err;
    if (hp_tf_attention_parse(at) < 0)
      return hp_fail(c->d, HP_PARSE, "%s: transformer.attention: expected \"flash\" or "
                     "\"eager\", got \"%s\"", c->file, at);
    t.eager_attention = hp_tf_attention_parse(at);
  }
  err = hp_transformer_expand(&t, m, c->d);
  if (err) {
    char msg[sizeof c->d->msg];
    snprintf(msg, sizeof msg, "%s", c->d->msg);
    return hp_fail(c->d, err, "%s: %s", c->file, msg);
  }
  return HP_OK;   /* hp_transformer_expand kept the description in m->transformer */
}

static const char *base_name(const char *path)
{
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

hp_err hp_model_parse(const char *text, const char *file, hp_model **out, hp_diag *d)
{
  ju_ctx c = { file, d };
  cJSON *root = NULL;
  hp_model *m = NULL;
  const cJSON *layers, *modules, *tf;
  const char *name;
  hp_err err;

  *out = NULL;
  HP_TRY(ju_parse(&c, text, &root));
  HP_TRY(ju_object(&c, root, ""));
  m = hp__calloc(1, sizeof *m);
  if (!m) { err = hp_fail(d, HP_NOMEM, "out of memory"); goto done; }
  if (hp__hf_detect(root)) {   /* a Hugging Face config.json: load_hf.c */
    HP_TRY(hp__hf_model(&c, root, m));
    goto loaded;
  }
  HP_TRY(ju_version(&c, root));
  ju_unknown_keys(&c, root, "", model_keys);
  HP_TRY(ju_str(&c, root, "", "name", 0, base_name(file), &name));
  m->name = hp__strdup(name);
  HP_TRY(ju_num(&c, root, "", "param_bytes", 0, 2, 0, 1, &m->param_bytes));
  HP_TRY(ju_num(&c, root, "", "grad_bytes", 0, 2, 0, 1, &m->grad_bytes));
  HP_TRY(ju_num(&c, root, "", "state_bytes", 0, 16, 0, 1, &m->state_bytes));
  HP_TRY(ju_num(&c, root, "", "input_bytes", 0, 0, 0, 0, &m->input_bytes));
  if (cJSON_GetObjectItemCaseSensitive(root, "update_bytes")) {
    HP_TRY(ju_num(&c, root, "", "update_bytes", 1, 0, 0, 0, &m->update_bytes));
    m->update_given = 1;
  }
  HP_TRY(read_precision(&c, root, "", &m->gemm_precision));
  layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
  modules = cJSON_GetObjectItemCaseSensitive(root, "modules");
  tf = cJSON_GetObjectItemCaseSensitive(root, "transformer");
  if (layers && tf) {
    err = hp_fail(d, HP_PARSE, "%s: give either \"layers\" or \"transformer\", not both", file);
    goto done;
  }
  if (modules && (layers || tf)) {
    err = hp_fail(d, HP_PARSE, "%s: modules: give either \"modules\" or \"%s\", not both%s",
                  file, layers ? "layers" : "transformer", layers ? ": \"modules\" holds the "
                  "layers" : ": the generator makes the transformer's tree");
    goto done;
  }
  if (!layers && !modules && !tf) {
    err = hp_fail(d, HP_PARSE, "%s: layers: missing: expected an array of layers (or "
                  "\"modules\", or a \"transformer\" object)", file);
    goto done;
  }
  if (layers || modules) {
    double in = m->input_bytes;
    HP_TRY(layers ? read_layers(&c, layers, m) : read_modules(&c, modules, m));
    m->input_bytes = in;
  } else {
    const cJSON *ib = cJSON_GetObjectItemCaseSensitive(root, "input_bytes");
    double in = m->input_bytes, upd = m->update_bytes;
    int upd_given = m->update_given, top = m->gemm_precision;
    HP_TRY(read_transformer(&c, tf, m));
    if (cJSON_GetObjectItemCaseSensitive(root, "gemm_precision") &&
        cJSON_GetObjectItemCaseSensitive(tf, "gemm_precision") && top != m->gemm_precision) {
      err = hp_fail(d, HP_PARSE, "%s: gemm_precision: \"%s\" at the top and \"%s\" in "
                    "\"transformer\": give it once", file, hp_gemm_precision_name(top),
                    hp_gemm_precision_name(m->gemm_precision));
      goto done;
    }
    if (ib) m->input_bytes = in;   /* an explicit figure wins over the generator's */
    if (upd_given) m->update_bytes = upd;
  }
  if (cJSON_GetObjectItemCaseSensitive(root, "tied_params")) {
    HP_TRY(ju_num(&c, root, "", "tied_params", 0, 0, 0, 0, &m->tied_params));
    if (m->tied_params > hp_model_total_params(m)) {
      err = hp_fail(d, HP_PARSE, "%s: tied_params: %.17g exceeds the %.17g parameters of the "
                    "layers: it counts the copies among them", file, m->tied_params,
                    hp_model_total_params(m));
      goto done;
    }
  }
loaded:
  *out = m;
  m = NULL;
done:
  hp_model_destroy(&m);
  cJSON_Delete(root);
  return err;
}

hp_err hp_model_load(const char *path, hp_model **out, hp_diag *d)
{
  char *text = NULL;
  hp_err err = hp_read_file(path, &text, d);
  if (!err) err = hp_model_parse(text, path, out, d);
  if (!err && !((*out)->path = hp__abs_path(path))) {
    hp_model_destroy(out);
    err = hp_fail(d, HP_NOMEM, "out of memory");
  }
  free(text);
  return err;
}
