/* hp_transformer.h -- expands a transformer description (GPT-2/GPT-3 or Llama-2 style)
 * into explicit layers: embedding, N blocks, final norm, head. The formulas are in
 * docs/transformer.md (parameters, FLOPs, activations after Korthikanti et al. 2022). */
#ifndef HP_TRANSFORMER_H
#define HP_TRANSFORMER_H

#include "hp_problem.h"

typedef enum { HP_TF_GPT = 0, HP_TF_LLAMA = 1 } hp_tf_family;

typedef struct hp_transformer {
  hp_tf_family family;
  int layers;     /* transformer blocks */
  int hidden;     /* h */
  int heads;      /* a */
  int kv_heads;   /* grouped-query attention; 0: = heads */
  int seq;        /* s */
  int vocab;      /* V */
  int ffn;        /* MLP inner size; 0: 4h (gpt) or Llama's 256-rounded 8h/3 */
} hp_transformer;

/* Parses "gpt" or "llama"; -1 otherwise. */
int hp_tf_family_parse(const char *s);

/* Replaces m->layers by the expansion of `t` (m->input_bytes is set to the token ids,
 * 8 bytes per position). Checks the sizes (positive, heads dividing hidden, kv_heads
 * dividing heads). */
hp_err hp_transformer_expand(const hp_transformer *t, hp_model *m, hp_diag *d);

#endif
