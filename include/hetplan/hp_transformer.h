/* hp_transformer.h -- expands a transformer description (GPT-2/GPT-3/GPT-NeoX or
 * Llama-2/Mistral/Qwen2/Qwen3/Gemma style) into explicit layers: embedding, N blocks,
 * final norm, head. The formulas are in docs/transformer.md (parameters, FLOPs, activations after
 * Korthikanti et al. 2022). */
#ifndef HP_TRANSFORMER_H
#define HP_TRANSFORMER_H

#include "hp_problem.h"

typedef enum { HP_TF_GPT = 0, HP_TF_LLAMA = 1 } hp_tf_family;

/* The training precision: bf16 and fp16 mixed precision (2-byte activations, weights
 * and gradients) or fp32 (4 bytes). */
typedef enum { HP_DTYPE_BF16 = 0, HP_DTYPE_FP16 = 1, HP_DTYPE_FP32 = 2 } hp_dtype;

typedef struct hp_transformer {
  hp_tf_family family;
  int layers;     /* transformer blocks */
  int hidden;     /* h */
  int heads;      /* a */
  int kv_heads;   /* grouped-query attention; 0: = heads */
  int seq;        /* s */
  int vocab;      /* V */
  int ffn;        /* MLP inner size; 0: 4h (gpt) or Llama's 256-rounded 8h/3 */
  int positions;  /* rows of a learned position table: 0 the family's default (gpt: seq,
                   * llama: none), -1 none (rotary, as GPT-NeoX) */
  int qkv_bias;   /* llama family: biases on Q, K, V (Qwen2); gpt has every bias */
  int out_bias;   /* llama family: a bias on the attention output (Llama attention_bias) */
  int mlp_bias;   /* llama family: biases on the three MLP matrices (Llama mlp_bias) */
  int tied;       /* the head is the token table (GPT-2): its copy counts in memory (as
                   * Megatron keeps one on the last stage), not in the model's size */
  hp_dtype dtype; /* element size of activations and of what TP and pipelines send */
  int head_dim;   /* d, the width of a head; 0: h / a. Q and the attention output are
                   * a d wide, K and V g d (Gemma, Qwen3: a d need not be h) */
  int geglu;      /* llama family: the gate's activation is GELU (GeGLU, Gemma), not SiLU
                   * (SwiGLU): the same matrices, FLOPs and saved tensors */
  int post_norms; /* llama family: RMSNorms after the attention and after the MLP too
                   * (Gemma 2): four norms a block, not two */
  int qk_norm;    /* llama family: RMSNorms of width d on each head's Q and K (Qwen3) */
  int attn_softcap;  /* tanh soft-capping of the attention scores (Gemma 2): the tanh's
                      * output is saved beside the softmax's */
  int logit_softcap; /* tanh soft-capping of the logits (Gemma 2): its output is saved */
  int eager_attention; /* 1: eager attention, the a s^2 scores (softmax output, dropout)
                        * saved for the backward pass; 0 (the default): FlashAttention,
                        * no s^2 tensor saved, the scores recomputed in the backward pass
                        * (JSON "attention": "eager" | "flash") */
} hp_transformer;

/* Parses "gpt" or "llama"; -1 otherwise. */
int hp_tf_family_parse(const char *s);
/* Parses "flash" (0) or "eager" (1), the value of eager_attention; -1 otherwise. */
int hp_tf_attention_parse(const char *s);
const char *hp_tf_attention_name(int eager_attention);
/* Parses "bf16", "fp16" or "fp32"; -1 otherwise. */
int hp_dtype_parse(const char *s);
const char *hp_dtype_name(hp_dtype t);
/* Bytes of an element: 2, or 4 for fp32. */
int hp_dtype_bytes(hp_dtype t);

/* The MLP's inner size: `ffn`, or the family's default when 0 (gpt 4h, llama the
 * 256-rounded 8h/3). */
int hp_transformer_ffn(const hp_transformer *t);

/* Replaces m->layers by the expansion of `t` (m->input_bytes is set to the token ids,
 * 8 bytes per position; m->tied_params to the head's size when tied). The embedding, the
 * final norm and the head are not checkpointable (full recompute re-runs the blocks
 * only). When m's bytes per parameter are a layout the generator knows (mixed-precision
 * Adam: 2-byte weights, 12 bytes of fp32 master, momentum and variance; or fp32 Adam:
 * 4-byte weights, 8 of moments), m->update_bytes is set to that optimizer step's memory
 * traffic (docs/transformer.md) and update_given to 1; otherwise both are left alone.
 * Checks the sizes
 * (positive, heads dividing hidden unless head_dim is given, kv_heads dividing heads,
 * seq within learned positions) and that geglu, post_norms and qk_norm come with the
 * llama family. */
hp_err hp_transformer_expand(const hp_transformer *t, hp_model *m, hp_diag *d);

#endif
