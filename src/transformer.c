/* transformer.c -- expands a GPT-2/GPT-3/GPT-NeoX or Llama-2/Mistral/Qwen2/Qwen3/Gemma
 * style transformer into explicit layers (embedding, blocks, final norm, head) and their
 * module tree (embedding; decoder of the blocks; head of the final norm and the head). Formulas and
 * their sources are in docs/transformer.md: parameters and FLOPs (2 FLOPs per
 * multiply-add, backward = 2 x forward, FlashAttention's backward recomputing QK^T),
 * saved activations after Korthikanti et al. 2022 (b-byte elements, 2 for bf16/fp16;
 * no sequence parallelism; FlashAttention by default, eager attention's a s^2 scores
 * on request), tensor-parallel all-reduce bytes after Megatron, and the optimizer
 * step's memory traffic of mixed-precision Adam. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int hp_tf_family_parse(const char *s)
{
  if (!s) return -1;
  if (!strcmp(s, "gpt")) return HP_TF_GPT;
  if (!strcmp(s, "llama")) return HP_TF_LLAMA;
  return -1;
}

int hp_dtype_parse(const char *s)
{
  if (!s) return -1;
  if (!strcmp(s, "bf16")) return HP_DTYPE_BF16;
  if (!strcmp(s, "fp16")) return HP_DTYPE_FP16;
  if (!strcmp(s, "fp32")) return HP_DTYPE_FP32;
  return -1;
}

int hp_tf_attention_parse(const char *s)
{
  if (!s) return -1;
  if (!strcmp(s, "flash")) return 0;
  if (!strcmp(s, "eager")) return 1;
  return -1;
}

const char *hp_tf_attention_name(int eager_attention)
{
  return eager_attention ? "eager" : "flash";
}

const char *hp_dtype_name(hp_dtype t)
{
  return t == HP_DTYPE_FP32 ? "fp32" : t == HP_DTYPE_FP16 ? "fp16" : "bf16";
}

int hp_dtype_bytes(hp_dtype t) { return t == HP_DTYPE_FP32 ? 4 : 2; }

int hp_transformer_ffn(const hp_transformer *t)
{
  if (t->ffn > 0) return t->ffn;
  if (t->family == HP_TF_GPT) return 4 * t->hidden;
  return (int)(256 * ((8 * (long)t->hidden / 3 + 255) / 256));
}

/* The optimizer step's memory traffic per parameter (cost-model.md 1, update_bytes) for
 * the two Adam layouts the generator knows, counted kernel by kernel as Megatron-LM's
 * step runs them (megatron/core/optimizer/optimizer.py; docs/transformer.md), p, g and
 * opt the model's param, grad and optimizer bytes:
 *   g < 4: the gradient converted to fp32 (read g, write 4)    g + 4
 *   the gradient norm for clipping (read the fp32 gradient)    4
 *   fused Adam: read and write the moments                     2 opt (master included
 *     in opt when p = 2) and, when p = 4, the weight itself      + 2 p
 *     and read the fp32 gradient                                 + 4
 *   p = 2: the fp32 master copied into the weight              4 + p
 * Mixed precision (p = 2, opt = 12: master, m, v) and fp32 (p = 4, opt = 8: m, v) both
 * come to 2 opt + p + 12 (+ g + 4 when g < 4): 44 for 2/2/16, 38 for Megatron's
 * 2/4/18, 32 for fp32. 0: a layout it does not know. */
static double adam_update_bytes(const hp_model *m)
{
  double p = m->param_bytes, g = m->grad_bytes, opt = hp_model_opt_bytes(m);
  if (!((p == 2 && opt == 12) || (p == 4 && opt == 8)) || g <= 0 || g > 4) return 0;
  return 2 * opt + p + 12 + (g < 4 ? g + 4 : 0);
}

static hp_err set_layer(hp_layer *ly, const char *name, const char *kind)
{
  ly->name = hp__strdup(name);
  ly->kind = hp__strdup(kind);
  return ly->name && ly->kind ? HP_OK : HP_NOMEM;
}

hp_err hp_transformer_expand(const hp_transformer *t, hp_model *m, hp_diag *d)
{
  int gpt = t->family == HP_TF_GPT;
  double s = t->seq, h = t->hidden, a = t->heads, V = t->vocab;
  double kv = t->kv_heads > 0 ? t->kv_heads : t->heads;
  /* a head's width d: h / a unless head_dim says otherwise; without head_dim every
   * formula below is the one it was before head_dim existed, term for term */
  double dh = t->head_dim > 0 ? t->head_dim : h / a;
  double q = t->head_dim > 0 ? a * t->head_dim : h;         /* width of Q and of O's input */
  double hk = t->head_dim > 0 ? kv * t->head_dim : h * kv / a;   /* of K and of V */
  double b = hp_dtype_bytes(t->dtype);   /* activation element, bytes */
  double pos = t->positions > 0 ? t->positions : t->positions == 0 && gpt ? s : 0;
  double f;
  int eager = t->eager_attention;
  int n = t->layers + 3;
  hp_layer *L;

  if (t->layers > HP_MAX_LAYERS - 3)
    return hp_fail(d, HP_INVAL, "transformer: layers: %d blocks make more than the %ld layers "
                   "a model may have (docs/limits.md)", t->layers, HP_MAX_LAYERS);
  if (t->layers < 1 || t->hidden < 1 || t->heads < 1 || t->seq < 1 || t->vocab < 1)
    return hp_fail(d, HP_INVAL, "transformer: layers, hidden, heads, seq and vocab must be "
                   "positive");
  if (t->head_dim < 0)
    return hp_fail(d, HP_INVAL, "transformer.head_dim: %d: must be positive (or absent: "
                   "hidden / heads)", t->head_dim);
  if (t->head_dim == 0 && t->hidden % t->heads != 0)
    return hp_fail(d, HP_INVAL, "transformer.heads: %d does not divide hidden %d", t->heads,
                   t->hidden);
  if (gpt && (t->geglu || t->post_norms || t->qk_norm))
    return hp_fail(d, HP_INVAL, "transformer.%s: a llama-family option (RMSNorm, gated MLP): "
                   "the gpt family has a plain GELU MLP and LayerNorms", t->geglu ? "mlp"
                   : t->post_norms ? "post_norms" : "qk_norm");
  if (t->kv_heads > 0 && t->heads % t->kv_heads != 0)
    return hp_fail(d, HP_INVAL, "transformer.kv_heads: %d does not divide heads %d",
                   t->kv_heads, t->heads);
  if (pos > 0 && pos < s)
    return hp_fail(d, HP_INVAL, "transformer.seq: %d exceeds the %g learned positions: a "
                   "sequence can be at most that long", t->seq, pos);
  f = hp_transformer_ffn(t);

  L = hp__calloc((size_t)n, sizeof *L);
  if (!L) return hp_fail(d, HP_NOMEM, "out of memory for %d layers", n);

  /* Embedding: token table (and learned positions); a lookup, no matmul FLOPs;
   * vocab-parallel under TP, one forward all-reduce of its output. */
  L[0].params = V * h + pos * h;
  L[0].act_bytes = gpt ? s * h : 0;     /* GPT's embedding-dropout mask, 1 byte */
  L[0].act_repl = L[0].act_bytes;
  L[0].out_bytes = b * s * h;
  L[0].tp_comm = b * s * h;
  L[0].splittable = 1;
  L[0].no_recompute = 1;   /* Megatron and DeepSpeed checkpoint the blocks only */

  for (int i = 0; i < t->layers; i++) {
    hp_layer *bl = &L[1 + i];
    double proj = 2 * h * q + 2 * h * hk;           /* Q, O and the K, V projections */
    double mlp = gpt ? 2 * h * f : 3 * h * f;       /* GELU MLP or gated (SwiGLU, GeGLU) */
    if (gpt)   /* biases of QKV, O and the MLP; two LayerNorms */
      bl->params = proj + mlp + (q + h) + 2 * hk + f + h + 4 * h;
    else       /* two RMSNorms (four with post_norms), Q and K norms; the optional biases */
      bl->params = proj + mlp + (t->post_norms ? 4 * h : 2 * h) + (t->qk_norm ? 2 * dh : 0)
                   + (t->qkv_bias ? q + 2 * hk : 0) + (t->out_bias ? h : 0)
                   + (t->mlp_bias ? 2 * f + h : 0);
    /* QK^T and softmax(QK^T) V: 4 s^2 q forward; FlashAttention's backward recomputes
     * QK^T (five matmuls against eager's four: Dao 2023, FlashAttention-2, Algorithm 2), 2 s^2 q
     * more; the output P V is saved, not recomputed */
    bl->flops = 3.0 * (2 * s * proj + 4 * s * s * q + 2 * s * mlp) + (eager ? 0 : 2 * s * s * q);
    if (gpt) {
      /* attention (3b+1) sh + 2b s hk + (2b+1) as^2, MLP (b+1) sh + 2b sf, two LayerNorms
       * 2b sh (1-byte dropout masks); at b = 2: 14 sh + 4 s hk + 4 sf + 5 as^2. Q and
       * the projection's input are q wide: 2b s (q - h) more when q is not h. FlashAttention
       * keeps no score tensor (the softmax output, its dropout mask and output: (2b+1) as^2)
       * and regenerates the dropout mask; it saves the softmax's fp32 log-sum-exp per head
       * and position, 4 a s */
      bl->act_bytes = (6 * b + 2) * s * h + 2 * b * s * hk + 2 * b * s * f
                      + (eager ? (2 * b + 1) * a * s * s : 4 * a * s) + 2 * b * s * (q - h);
      bl->act_repl = (4 * b + 2) * s * h;   /* LN inputs, dropout masks, QKV and MLP inputs */
    } else {
      /* attention 3b sh + 2b s hk + b as^2, gated MLP b sh + 4b sf, two RMSNorms 2b sh;
       * at b = 2: 12 sh + 4 s hk + 8 sf + 2 as^2; Q and the projection's input 2b s (q - h)
       * more when q is not h. FlashAttention: the softmax output b as^2 becomes the
       * log-sum-exp 4 a s */
      bl->act_bytes = 6 * b * s * h + 2 * b * s * hk + 4 * b * s * f
                      + (eager ? b * a * s * s : 4 * a * s) + 2 * b * s * (q - h);
      bl->act_repl = 4 * b * s * h;         /* norm inputs, QKV and MLP inputs */
      if (t->post_norms) {      /* the inputs of the two norms after attention and MLP */
        bl->act_bytes += 2 * b * s * h;
        bl->act_repl += 2 * b * s * h;
      }
      if (t->qk_norm)           /* the Q and K norms' inputs, divided by heads under TP */
        bl->act_bytes += b * s * (q + hk);
    }
    if (t->attn_softcap && eager)   /* the tanh's output, kept beside the softmax's (a
                                     * fused kernel caps the scores it recomputes) */
      bl->act_bytes += b * a * s * s;
    bl->out_bytes = b * s * h;
    bl->tp_comm = 4 * b * s * h;  /* two all-reduces forward, two backward, b sh bytes each */
    bl->splittable = 1;
    /* The backward pass's working set, above the saved activations (cost-model.md 4, W_l):
     * the larger of the attention's and the MLP's transients. Eager attention: the scores'
     * gradient and the softmax backward's output, b as^2 each, live together while the
     * saved softmax output still is (PyTorch's unfused softmax; with dropout its backward
     * replaces the first buffer, it does not add one). FlashAttention-2's backward: the fp32
     * dQ accumulator 4 s q, the gradients of Q, K, V, b s (q + 2 hk), and the fp32 row sums
     * 4 a s (Dao 2023, Algorithm 2). The MLP: the gradient of the gated product and of its
     * two factors, 3b sf (a GELU MLP: its output's and its input's gradient, 2b sf). Heads
     * and ffn divide under TP, as W_l does. */
    {
      double attn = eager ? 2 * b * a * s * s : 4 * s * q + b * s * (q + 2 * hk) + 4 * a * s;
      double ff = (gpt ? 2 : 3) * b * s * f;
      bl->work_bytes = attn > ff ? attn : ff;
    }
  }

  hp_layer *fn = &L[1 + t->layers], *hd = &L[2 + t->layers];
  fn->params = gpt ? 2 * h : h;   /* replicated under TP */
  fn->act_bytes = b * s * h;
  fn->act_repl = b * s * h;
  fn->out_bytes = b * s * h;
  fn->splittable = 0;
  fn->no_recompute = 1;    /* outside Megatron's checkpointed blocks */

  /* Head: a copy of the token table when tied (as Megatron keeps it when pipelined),
   * vocab-parallel; fp32 logits saved for the loss, their gradient a transient. */
  hd->params = V * h;
  hd->flops = 3.0 * 2 * s * h * V;
  hd->act_bytes = b * s * h + 4 * s * V;
  if (t->logit_softcap) hd->act_bytes += b * s * V;   /* the tanh's output, b-byte logits */
  hd->act_repl = b * s * h;
  hd->work_bytes = 4 * s * V;
  hd->out_bytes = 4;              /* the loss */
  hd->tp_comm = b * s * h;        /* backward all-reduce of the input gradient */
  hd->splittable = 1;
  hd->no_recompute = 1;

  hp_err err = set_layer(&L[0], "embed", "embed");
  for (int i = 0; i < t->layers && !err; i++) {
    char name[32];
    snprintf(name, sizeof name, "block.%d", i);
    err = set_layer(&L[1 + i], name, "block");
  }
  if (!err) err = set_layer(fn, "final_norm", "final_norm");
  if (!err) err = set_layer(hd, "head", "head");
  if (err) {
    for (int i = 0; i < n; i++) { free(L[i].name); free(L[i].kind); }
    free(L);
    return hp_fail(d, HP_NOMEM, "out of memory");
  }
  /* The natural tree (formats.md "modules"): the embedding, the decoder holding the
   * blocks (each block is one layer, so a leaf), the head with the final norm. */
  hp_module *mods = hp__calloc(3, sizeof *mods);
  hp_transformer *arch = malloc(sizeof *arch);
  if (mods) {
    static const char *const names[3] = { "embedding", "decoder", "head" };
    const int bounds[4] = { 0, 1, 1 + t->layers, n };
    for (int k = 0; k < 3; k++)
      mods[k] = (hp_module){ hp__strdup(names[k]), -1, bounds[k], bounds[k + 1], 0 };
  }
  if (!arch || !mods || !mods[0].name || !mods[1].name || !mods[2].name) {
    for (int i = 0; i < n; i++) { free(L[i].name); free(L[i].kind); }
    free(L);
    for (int k = 0; mods && k < 3; k++) free(mods[k].name);
    free(mods);
    free(arch);
    return hp_fail(d, HP_NOMEM, "out of memory");
  }
  *arch = *t;
  free(m->transformer);
  m->transformer = arch;
  for (int k = 0; k < m->n_modules; k++) free(m->modules[k].name);
  free(m->modules);
  m->modules = mods;
  m->n_modules = 3;
  for (int i = 0; i < m->n_layers; i++) { free(m->layers[i].name); free(m->layers[i].kind); }
  free(m->layers);
  m->layers = L;
  m->n_layers = n;
  m->input_bytes = 8 * s;         /* int64 token ids */
  m->tied_params = t->tied ? V * h : 0;
  if (adam_update_bytes(m) > 0) {
    m->update_bytes = adam_update_bytes(m);
    m->update_given = 1;
  }
  return HP_OK;
}
