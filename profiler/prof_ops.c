/* prof_ops.c -- the op list of one layer on one tensor-parallel rank: the GEMMs (with
 * the FLOPs of docs/transformer.md) and element-wise kernels (with the bytes) of its
 * forward and backward pass, over buffers whose saved part is Korthikanti et al.'s
 * activation accounting, so that what the GPU keeps is what hetplan's memory model
 * counts. Megatron-style TP: heads, the MLP width and the vocabulary are split. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "prof.h"

typedef struct bld {
  prof_layer *ly;
  int overflow;
} bld;

static int buf(bld *b, const char *name, double elems, int elem_bytes, int role)
{
  prof_layer *ly = b->ly;
  prof_buf *x;
  if (ly->n_bufs == PROF_MAX_BUFS) { b->overflow = 1; return 0; }
  x = &ly->bufs[ly->n_bufs];
  snprintf(x->name, sizeof x->name, "%s", name);
  x->elems = elems > 0 ? elems : 1;
  x->elem_bytes = elem_bytes;
  x->role = role;
  return ly->n_bufs++;
}

static prof_op *op(bld *b, int type, int bwd, const char *what)
{
  prof_layer *ly = b->ly;
  prof_op *o;
  if (ly->n_ops == PROF_MAX_OPS) { b->overflow = 1; return &ly->ops[0]; }
  o = &ly->ops[ly->n_ops++];
  memset(o, 0, sizeof *o);
  o->type = type;
  o->bwd = bwd;
  snprintf(o->what, sizeof o->what, "%s", what);
  o->in0 = o->in1 = o->out = o->aux = -1;
  return o;
}

/* C (m x n) = op(A) op(B), batch times; ta/tb as stored (cuBLAS column-major). */
static void gemm(bld *b, int bwd, const char *what, long m, long n, long k, long batch, int ta,
                 int tb, int A, int B, int C, int acc)
{
  prof_op *o = op(b, PROF_GEMM, bwd, what);
  o->m = m; o->n = n; o->k = k; o->batch = batch;
  o->ta = ta; o->tb = tb; o->accumulate = acc;
  o->in0 = A; o->in1 = B; o->out = C;
}

static prof_op *ew(bld *b, int bwd, const char *what, prof_ew kind, long rows, long cols,
                   int in0, int in1, int out, int aux)
{
  prof_op *o = op(b, PROF_EW, bwd, what);
  o->ew = kind;
  o->rows = rows; o->cols = cols;
  o->in0 = in0; o->in1 = in1; o->out = out; o->aux = aux;
  return o;
}

static double dmax(double a, double b) { return a > b ? a : b; }

/* The rows of the parts sequence parallelism shards (norms, dropouts, residuals): the
 * tokens of one TP rank's share, mbs seq / t, or all of them without it. */
static long seq_rows(long T, int t, int sp) { return sp && t > 1 ? T / t : T; }

/* A GEMM input gathered from the sequence-parallel shards (Megatron's all-gather before
 * the QKV and MLP GEMMs, again in the backward pass for the weight gradient): a whole
 * T x h transient. Without sequence parallelism the GEMM reads the saved buffer itself. */
static int gathered(bld *b, int sp, int t, const char *name, double elems, int saved)
{
  return sp && t > 1 ? buf(b, name, elems, 2, PROF_TEMP) : saved;
}

/* The rank's own rows of a sequence-parallel all-gather (src, rows x cols, into the
 * first rows of dst) or reduce-scatter (the first rows of src into dst); the others'
 * rows are NCCL's, timed as the TP term. Nothing when src is dst (no sequence
 * parallelism). It keeps the lifetimes true: the saved shard is read where the gather
 * reads it. */
static void shard_copy(bld *b, int bwd, const char *what, long rows, long cols, int src, int dst)
{
  if (src != dst) ew(b, bwd, what, PROF_EW_COPY, rows, cols, src, -1, dst, -1);
}

/* A GPT (LayerNorm, GELU MLP, dropout) or Llama (RMSNorm, RoPE, SwiGLU) block. With
 * sequence parallelism (sp, t > 1) the norms, dropouts and residuals run on Tn = T / t
 * rows and keep that much (Korthikanti et al. 2022, Table 2: every saved activation
 * divided by t); the projections' partial outputs are whole until their reduce-scatter,
 * which the element-wise op after them stands for by reading its first Tn rows. */
static void build_block(bld *b, const hp_transformer *tf, int t, long mbs, long ffn, int sp)
{
  int gpt = tf->family == HP_TF_GPT;
  long s = tf->seq, h = tf->hidden, a = tf->heads, g = tf->kv_heads > 0 ? tf->kv_heads : a;
  long d = h / a, T = mbs * s, Tn = seq_rows(T, t, sp);
  long ap = a / t, gp = g / t, qw = ap * d, kw = gp * d, fp = ffn / t, grp = ap / gp;
  long qkvw = qw + 2 * kw, mlp_in = gpt ? fp : 2 * fp, sq = mbs * ap * s * s;
  double big = dmax(dmax((double)T * mlp_in, (double)sq), dmax((double)T * qkvw, (double)T * fp));
  int Wqkv, Wo, W1, W2, B1 = -1, dWqkv, dWo, dW1, dW2;
  int x, ln1, st1, qkv, sc, pr, pm = -1, pd, ctx, at, am = -1, r1, ln2, st2, f1, ac, ac2 = -1;
  int f2, mm = -1, out, dout, gA, gB, gQ, g1, g2, dx, ln1g, ln1gb, ln2g, ln2gb;

  Wqkv = buf(b, "w_qkv", (double)h * qkvw, 2, PROF_PARAM);
  Wo = buf(b, "w_proj", (double)qw * h, 2, PROF_PARAM);
  W1 = buf(b, gpt ? "w_fc1" : "w_gate_up", (double)h * mlp_in, 2, PROF_PARAM);
  W2 = buf(b, gpt ? "w_fc2" : "w_down", (double)fp * h, 2, PROF_PARAM);
  if (gpt) B1 = buf(b, "b_fc1", (double)fp, 2, PROF_PARAM);
  dWqkv = buf(b, "dw_qkv", (double)h * qkvw, 2, PROF_GRAD);
  dWo = buf(b, "dw_proj", (double)qw * h, 2, PROF_GRAD);
  dW1 = buf(b, gpt ? "dw_fc1" : "dw_gate_up", (double)h * mlp_in, 2, PROF_GRAD);
  dW2 = buf(b, gpt ? "dw_fc2" : "dw_down", (double)fp * h, 2, PROF_GRAD);
  (void)B1;

  /* saved for backward: Korthikanti's list (docs/transformer.md) */
  x = buf(b, "x", (double)Tn * h, 2, PROF_SAVED);                /* norm-1 input */
  ln1 = buf(b, "norm1", (double)Tn * h, 2, PROF_SAVED);          /* QKV input */
  qkv = buf(b, "qkv", (double)T * qkvw, 2, PROF_SAVED);          /* Q, K, V */
  pr = buf(b, "probs", (double)sq, 2, PROF_SAVED);               /* softmax output */
  if (gpt) {
    pm = buf(b, "probs_mask", (double)sq, 1, PROF_SAVED);        /* attention dropout */
    pd = buf(b, "probs_drop", (double)sq, 2, PROF_SAVED);
  } else {
    pd = pr;
  }
  ctx = buf(b, "ctx", (double)T * qw, 2, PROF_SAVED);            /* projection input */
  if (gpt) am = buf(b, "attn_mask", (double)Tn * h, 1, PROF_SAVED);
  r1 = buf(b, "res1", (double)Tn * h, 2, PROF_SAVED);            /* norm-2 input */
  ln2 = buf(b, "norm2", (double)Tn * h, 2, PROF_SAVED);          /* MLP input */
  f1 = buf(b, gpt ? "fc1" : "gate_up", (double)T * mlp_in, 2, PROF_SAVED);
  ac = buf(b, gpt ? "gelu" : "swiglu", (double)T * fp, 2, PROF_SAVED);
  if (!gpt) ac2 = buf(b, "silu", (double)T * fp, 2, PROF_SAVED);
  if (gpt) mm = buf(b, "mlp_mask", (double)Tn * h, 1, PROF_SAVED);
  /* transient */
  st1 = buf(b, "norm1_stats", 2.0 * Tn, 4, PROF_TEMP);
  st2 = buf(b, "norm2_stats", 2.0 * Tn, 4, PROF_TEMP);
  ln1g = gathered(b, sp, t, "norm1_gathered", (double)T * h, ln1);
  ln1gb = gathered(b, sp, t, "norm1_regathered", (double)T * h, ln1);
  ln2g = gathered(b, sp, t, "norm2_gathered", (double)T * h, ln2);
  ln2gb = gathered(b, sp, t, "norm2_regathered", (double)T * h, ln2);
  sc = buf(b, "scores", (double)sq, 2, PROF_TEMP);
  at = buf(b, "proj_out", (double)T * h, 2, PROF_TEMP);
  f2 = buf(b, "mlp_out", (double)T * h, 2, PROF_TEMP);
  gA = buf(b, "grad_a", (double)T * h, 2, PROF_TEMP);
  gB = buf(b, "grad_b", (double)T * h, 2, PROF_TEMP);
  gQ = buf(b, "grad_qkv", (double)T * qkvw, 2, PROF_TEMP);
  g1 = buf(b, "grad_big1", big, 2, PROF_TEMP);
  g2 = buf(b, "grad_big2", big, 2, PROF_TEMP);
  /* the neighbours' */
  out = buf(b, "out", (double)Tn * h, 2, PROF_INPUT);
  dout = buf(b, "grad_out", (double)Tn * h, 2, PROF_INPUT);
  dx = buf(b, "grad_x", (double)Tn * h, 2, PROF_INPUT);

  /* forward */
  ew(b, 0, "norm1", gpt ? PROF_EW_LAYERNORM : PROF_EW_RMSNORM, Tn, h, x, -1, ln1, st1);
  shard_copy(b, 0, "norm1_gather", Tn, h, ln1, ln1g);
  gemm(b, 0, "qkv", qkvw, T, h, 1, 1, 0, Wqkv, ln1g, qkv, 0);
  if (!gpt) ew(b, 0, "rope", PROF_EW_ROPE, T, qw + kw, qkv, -1, qkv, -1);
  gemm(b, 0, "scores", s, s * grp, d, mbs * gp, 1, 0, qkv, qkv, sc, 0);
  ew(b, 0, "softmax", PROF_EW_SOFTMAX, mbs * ap * s, s, sc, -1, pr, -1);
  if (gpt) ew(b, 0, "attn_dropout", PROF_EW_DROPOUT, mbs * ap * s, s, pr, -1, pd, pm);
  gemm(b, 0, "context", d, s * grp, s, mbs * gp, 0, 0, qkv, pd, ctx, 0);
  gemm(b, 0, "proj", h, T, qw, 1, 1, 0, Wo, ctx, at, 0);
  if (gpt) ew(b, 0, "proj_dropout_add", PROF_EW_DROPOUT, Tn, h, at, x, r1, am);
  else ew(b, 0, "residual1", PROF_EW_ADD, Tn, h, at, x, r1, -1);
  ew(b, 0, "norm2", gpt ? PROF_EW_LAYERNORM : PROF_EW_RMSNORM, Tn, h, r1, -1, ln2, st2);
  shard_copy(b, 0, "norm2_gather", Tn, h, ln2, ln2g);
  gemm(b, 0, gpt ? "fc1" : "gate_up", mlp_in, T, h, 1, 1, 0, W1, ln2g, f1, 0);
  if (gpt) ew(b, 0, "bias_gelu", PROF_EW_BIAS_GELU, T, fp, f1, -1, ac, -1);
  else ew(b, 0, "swiglu", PROF_EW_SWIGLU, T, fp, f1, -1, ac, ac2);
  gemm(b, 0, gpt ? "fc2" : "down", h, T, fp, 1, 1, 0, W2, ac, f2, 0);
  if (gpt) ew(b, 0, "mlp_dropout_add", PROF_EW_DROPOUT, Tn, h, f2, r1, out, mm);
  else ew(b, 0, "residual2", PROF_EW_ADD, Tn, h, f2, r1, out, -1);

  /* backward: each GEMM's input and weight gradients; element-wise backward kernels;
   * under sequence parallelism the gradients the GEMMs read are gathered into the
   * whole T x h buffers gA, gB (their first Tn rows written by the op before) */
  if (gpt) ew(b, 1, "mlp_dropout_bwd", PROF_EW_DROPOUT_BWD, Tn, h, dout, -1, gA, mm);
  else {
    gA = gathered(b, sp, t, "grad_out_gathered", (double)T * h, dout);
    shard_copy(b, 1, "grad_out_gather", Tn, h, dout, gA);
  }
  gemm(b, 1, gpt ? "fc2_dgrad" : "down_dgrad", fp, T, h, 1, 0, 0, W2, gA, g1, 0);
  gemm(b, 1, gpt ? "fc2_wgrad" : "down_wgrad", h, fp, T, 1, 0, 1, gA, ac, dW2, 1);
  if (gpt) ew(b, 1, "gelu_bwd", PROF_EW_GELU_BWD, T, fp, g1, f1, g2, -1);
  else ew(b, 1, "swiglu_bwd", PROF_EW_SWIGLU_BWD, T, fp, g1, f1, g2, ac2);
  gemm(b, 1, gpt ? "fc1_dgrad" : "gate_up_dgrad", h, T, mlp_in, 1, 0, 0, W1, g2, gB, 0);
  shard_copy(b, 1, "norm2_regather", Tn, h, ln2, ln2gb);
  gemm(b, 1, gpt ? "fc1_wgrad" : "gate_up_wgrad", mlp_in, h, T, 1, 0, 1, g2, ln2gb, dW1, 1);
  ew(b, 1, "norm2_bwd", gpt ? PROF_EW_LAYERNORM_BWD : PROF_EW_RMSNORM_BWD, Tn, h, gB, r1, gB, -1);
  if (!gpt) gA = buf(b, "grad_res1", (double)T * h, 2, PROF_TEMP);
  ew(b, 1, "residual_grad", PROF_EW_ADD, Tn, h, gB, dout, gA, -1);    /* d res1 */
  if (gpt) ew(b, 1, "proj_dropout_bwd", PROF_EW_DROPOUT_BWD, Tn, h, gA, -1, gB, am);
  else gB = gA;
  gemm(b, 1, "proj_dgrad", qw, T, h, 1, 0, 0, Wo, gB, g1, 0);
  gemm(b, 1, "proj_wgrad", h, qw, T, 1, 0, 1, gB, ctx, dWo, 1);
  gemm(b, 1, "context_dgrad", s, s * grp, d, mbs * gp, 1, 0, qkv, g1, g2, 0);   /* d probs */
  gemm(b, 1, "context_vgrad", d, s, s * grp, mbs * gp, 0, 1, g1, pd, gQ, 0);    /* d V */
  if (gpt) ew(b, 1, "attn_dropout_bwd", PROF_EW_DROPOUT_BWD, mbs * ap * s, s, g2, -1, g2, pm);
  ew(b, 1, "softmax_bwd", PROF_EW_SOFTMAX_BWD, mbs * ap * s, s, g2, pr, g2, -1);
  gemm(b, 1, "scores_qgrad", d, s * grp, s, mbs * gp, 0, 0, qkv, g2, gQ, 0);    /* d Q */
  gemm(b, 1, "scores_kgrad", d, s, s * grp, mbs * gp, 0, 1, qkv, g2, gQ, 0);    /* d K */
  if (!gpt) ew(b, 1, "rope_bwd", PROF_EW_ROPE, T, qw + kw, gQ, -1, gQ, -1);
  {
    int gN = buf(b, "grad_norm1", (double)T * h, 2, PROF_TEMP);
    gemm(b, 1, "qkv_dgrad", h, T, qkvw, 1, 0, 0, Wqkv, gQ, gN, 0);
    shard_copy(b, 1, "norm1_regather", Tn, h, ln1, ln1gb);
    gemm(b, 1, "qkv_wgrad", qkvw, h, T, 1, 0, 1, gQ, ln1gb, dWqkv, 1);
    ew(b, 1, "norm1_bwd", gpt ? PROF_EW_LAYERNORM_BWD : PROF_EW_RMSNORM_BWD, Tn, h, gN, x, gN, -1);
    ew(b, 1, "residual_grad_x", PROF_EW_ADD, Tn, h, gN, gA, dx, -1);
  }
  /* after proj and fc2; their input grads. Sequence parallelism replaces each by a
   * reduce-scatter and an all-gather of the same volume (cost-model.md 3): the same
   * time, so the same count and bytes */
  b->ly->n_allreduce = t > 1 ? 4 : 0;
  b->ly->allreduce_bytes = 2.0 * T * h;
}

/* Under sequence parallelism the lookup's partial sums are reduce-scattered: its whole
 * output is a transient, the dropout (GPT) and the output keep Tn rows, and the backward
 * lookup reads a gathered gradient. */
static void build_embed(bld *b, const hp_transformer *tf, int t, long mbs, int sp)
{
  int gpt = tf->family == HP_TF_GPT, split = sp && t > 1;
  long s = tf->seq, h = tf->hidden, T = mbs * s, Tn = seq_rows(T, t, sp);
  long Vt = (tf->vocab + t - 1) / t;
  int tab = buf(b, "w_tokens", (double)Vt * h, 2, PROF_PARAM);
  int pos = gpt ? buf(b, "w_positions", (double)s * h, 2, PROF_PARAM) : -1;
  int dtab = buf(b, "dw_tokens", (double)Vt * h, 4, PROF_GRAD);    /* fp32: atomics */
  int tok = buf(b, "tokens", (double)T, 8, PROF_INPUT);
  int out = buf(b, "out", (double)Tn * h, 2, PROF_INPUT);
  int dout = buf(b, "grad_out", (double)Tn * h, 2, PROF_INPUT);
  prof_op *o;
  if (gpt) {
    int mask = buf(b, "drop_mask", (double)Tn * h, 1, PROF_SAVED);
    int e = buf(b, "embedded", (double)T * h, 2, PROF_TEMP);
    int g = buf(b, "grad_embedded", (double)T * h, 2, PROF_TEMP);
    o = ew(b, 0, "lookup", PROF_EW_EMBED, T, h, tab, pos, e, tok);
    o->k = s;
    ew(b, 0, "dropout", PROF_EW_DROPOUT, Tn, h, e, -1, out, mask);
    ew(b, 1, "dropout_bwd", PROF_EW_DROPOUT_BWD, Tn, h, dout, -1, g, mask);
    ew(b, 1, "lookup_bwd", PROF_EW_EMBED_BWD, T, h, g, -1, dtab, tok);
  } else {
    int e = split ? buf(b, "embedded", (double)T * h, 2, PROF_TEMP) : out;
    int g = split ? buf(b, "grad_gathered", (double)T * h, 2, PROF_TEMP) : dout;
    o = ew(b, 0, "lookup", PROF_EW_EMBED, T, h, tab, -1, e, tok);
    o->k = s;
    shard_copy(b, 0, "scatter", Tn, h, e, out);
    shard_copy(b, 1, "grad_gather", Tn, h, dout, g);
    ew(b, 1, "lookup_bwd", PROF_EW_EMBED_BWD, T, h, g, -1, dtab, tok);
  }
  b->ly->n_allreduce = t > 1 ? 1 : 0;        /* vocab-parallel: the output, forward */
  b->ly->allreduce_bytes = 2.0 * T * h;
}

/* Not split by TP (each rank runs it whole), but sequence parallelism shards it like the
 * blocks' norms: Megatron's final norm runs on Tn rows. (hetplan's generator keeps it
 * whole, t_l = 1, so its formula counts t times this measurement's saved input.) */
static void build_final_norm(bld *b, const hp_transformer *tf, int t, long mbs, int sp)
{
  int gpt = tf->family == HP_TF_GPT;
  long h = tf->hidden, T = seq_rows(mbs * tf->seq, t, sp);
  int x = buf(b, "x", (double)T * h, 2, PROF_SAVED);
  int st = buf(b, "stats", 2.0 * T, 4, PROF_TEMP);
  int out = buf(b, "out", (double)T * h, 2, PROF_INPUT);
  int dout = buf(b, "grad_out", (double)T * h, 2, PROF_INPUT);
  int dx = buf(b, "grad_x", (double)T * h, 2, PROF_INPUT);
  ew(b, 0, "norm", gpt ? PROF_EW_LAYERNORM : PROF_EW_RMSNORM, T, h, x, -1, out, st);
  ew(b, 1, "norm_bwd", gpt ? PROF_EW_LAYERNORM_BWD : PROF_EW_RMSNORM_BWD, T, h, dout, x, dx, -1);
  b->ly->n_allreduce = 0;                    /* not split: each rank runs it whole */
}

/* The head with the loss: vocab-parallel logits (fp32, kept for the loss's backward),
 * cross-entropy, and the gradients. Under sequence parallelism it keeps its input's
 * Tn rows and gathers them for the logits GEMM and again for the weight gradient. */
static void build_head(bld *b, const hp_transformer *tf, int t, long mbs, int sp)
{
  long h = tf->hidden, T = mbs * tf->seq, Vt = (tf->vocab + t - 1) / t;
  int W = buf(b, "w_head", (double)Vt * h, 2, PROF_PARAM);
  int dW = buf(b, "dw_head", (double)Vt * h, 2, PROF_GRAD);
  int x = buf(b, "x", (double)seq_rows(T, t, sp) * h, 2, PROF_SAVED);
  int xg = gathered(b, sp, t, "x_gathered", (double)T * h, x);
  int xgb = gathered(b, sp, t, "x_regathered", (double)T * h, x);
  int lg = buf(b, "logits", (double)T * Vt, 4, PROF_SAVED);
  int loss = buf(b, "loss", (double)T, 4, PROF_TEMP);
  int dl = buf(b, "grad_logits", (double)T * Vt, 2, PROF_TEMP);
  int dx = buf(b, "grad_x", (double)T * h, 2, PROF_INPUT);
  shard_copy(b, 0, "x_gather", seq_rows(T, t, sp), h, x, xg);
  gemm(b, 0, "logits", Vt, T, h, 1, 1, 0, W, xg, lg, 0);
  ew(b, 0, "cross_entropy", PROF_EW_XENT, T, Vt, lg, -1, loss, -1);
  ew(b, 1, "cross_entropy_bwd", PROF_EW_XENT_BWD, T, Vt, lg, -1, dl, -1);
  gemm(b, 1, "logits_dgrad", h, T, Vt, 1, 0, 0, W, dl, dx, 0);
  shard_copy(b, 1, "x_regather", seq_rows(T, t, sp), h, x, xgb);
  gemm(b, 1, "logits_wgrad", Vt, h, T, 1, 0, 1, dl, xgb, dW, 1);
  b->ly->n_allreduce = t > 1 ? 1 : 0;        /* the input gradient, backward */
  b->ly->allreduce_bytes = 2.0 * T * h;
}

/* An explicit layer: no structure is known, so a GEMM with its FLOPs over a square
 * weight of its parameters (forward, then the input and weight gradients), and an
 * element-wise pass over its saved activations each way. */
static void build_synthetic(bld *b, const hp_model *m, const hp_layer *L, int t, long mbs)
{
  int tl = L->splittable ? t : 1;
  double P = L->params / tl, F = L->flops * mbs / tl;
  double act = ((L->act_bytes - L->act_repl) / tl + L->act_repl) * mbs;
  double io = dmax(L->out_bytes * mbs / 2, 1);
  long w = P >= 1 ? (long)llround(sqrt(P)) : 0;
  long nt = w > 0 ? (long)llround(F / (6.0 * (double)w * (double)w)) : 0;
  int sv = buf(b, "saved", dmax(act / 2, 1), 2, PROF_SAVED);
  int gs = buf(b, "grad_saved", dmax(act / 2, 1), 2, PROF_TEMP);
  int out = buf(b, "out", io, 2, PROF_INPUT);
  int dout = buf(b, "grad_out", io, 2, PROF_INPUT);
  (void)m;
  b->ly->synthetic = 1;
  if (w > 0 && nt > 0) {
    int W = buf(b, "w", (double)w * w, 2, PROF_PARAM);
    int dW = buf(b, "dw", (double)w * w, 2, PROF_GRAD);
    int X = buf(b, "x", (double)w * nt, 2, PROF_TEMP);
    int Y = buf(b, "y", (double)w * nt, 2, PROF_TEMP);
    int dX = buf(b, "grad_x", (double)w * nt, 2, PROF_TEMP);
    gemm(b, 0, "gemm", w, nt, w, 1, 1, 0, W, X, Y, 0);
    gemm(b, 1, "gemm_dgrad", w, nt, w, 1, 0, 0, W, Y, dX, 0);
    gemm(b, 1, "gemm_wgrad", w, w, nt, 1, 0, 1, Y, X, dW, 1);
  }
  {
    long cols = 1024, rows = (long)ceil(dmax(act / 2, 1) / (double)cols);
    long orows = (long)ceil(io / (double)cols);
    b->ly->bufs[sv].elems = (double)rows * cols;
    b->ly->bufs[gs].elems = (double)rows * cols;
    b->ly->bufs[out].elems = b->ly->bufs[dout].elems = (double)orows * cols;
    ew(b, 0, "activations", PROF_EW_ADD, rows, cols, sv, sv, sv, -1);
    ew(b, 0, "output", PROF_EW_ADD, orows, cols, out, out, out, -1);
    ew(b, 1, "activations_bwd", PROF_EW_ADD, rows, cols, sv, sv, gs, -1);
    ew(b, 1, "output_bwd", PROF_EW_ADD, orows, cols, dout, dout, dout, -1);
  }
  b->ly->n_allreduce = t > 1 && L->tp_comm > 0 ? 1 : 0;
  b->ly->allreduce_bytes = L->tp_comm * mbs;
}

int prof_layer_build(const hp_model *m, int l, int tp, int mbs, int sequence_parallel,
                     prof_layer *out, char *why, size_t n)
{
  int sp = sequence_parallel != 0;
  const hp_transformer *tf = m->transformer;
  const hp_layer *L = &m->layers[l];
  bld b = { out, 0 };
  memset(out, 0, sizeof *out);
  snprintf(out->kind, sizeof out->kind, "%s", L->kind);
  out->tp = tp;
  out->mbs = mbs;
  if (tp < 1 || mbs < 1) {
    snprintf(why, n, "tp %d, mbs %d: expected positive integers", tp, mbs);
    return -1;
  }
  if (!tf) {
    build_synthetic(&b, m, L, tp, mbs);
  } else {
    long g = tf->kv_heads > 0 ? tf->kv_heads : tf->heads;
    long ffn = tf->ffn > 0 ? tf->ffn
             : tf->family == HP_TF_GPT ? 4L * tf->hidden
             : 256L * ((8L * tf->hidden / 3 + 255) / 256);
    if (tf->heads % tp || g % tp || ffn % tp) {
      snprintf(why, n, "tp %d does not divide the heads (%d), the key-value heads (%ld) and "
               "the MLP width (%ld) of model '%s'", tp, tf->heads, g, ffn, m->name);
      return -1;
    }
    if (sp && tp > 1 && ((long)mbs * tf->seq) % tp) {
      snprintf(why, n, "sequence parallelism: tp %d does not divide the %ld tokens of a "
               "micro-batch (mbs %d x seq %d)", tp, (long)mbs * tf->seq, mbs, tf->seq);
      return -1;
    }
    if (!strcmp(L->kind, "block")) build_block(&b, tf, tp, mbs, ffn, sp);
    else if (!strcmp(L->kind, "embed")) build_embed(&b, tf, tp, mbs, sp);
    else if (!strcmp(L->kind, "final_norm")) build_final_norm(&b, tf, tp, mbs, sp);
    else if (!strcmp(L->kind, "head")) build_head(&b, tf, tp, mbs, sp);
    else build_synthetic(&b, m, L, tp, mbs);
  }
  if (b.overflow) {
    snprintf(why, n, "layer '%s': more than %d ops or %d buffers", L->name, PROF_MAX_OPS,
             PROF_MAX_BUFS);
    return -1;
  }
  return 0;
}

double prof_layer_flops(const prof_layer *ly)
{
  double f = 0;
  for (int i = 0; i < ly->n_ops; i++) {
    const prof_op *o = &ly->ops[i];
    if (o->type == PROF_GEMM) f += 2.0 * o->m * o->n * o->k * o->batch;
  }
  return f;
}

double prof_layer_bytes(const prof_layer *ly, int role)
{
  double s = 0;
  for (int i = 0; i < ly->n_bufs; i++)
    if (ly->bufs[i].role == role) s += ly->bufs[i].elems * ly->bufs[i].elem_bytes;
  return s;
}

double prof_op_extent(const prof_layer *ly, int i, int which)
{
  const prof_op *o = &ly->ops[i];
  double rc = (double)o->rows * o->cols;
  if (o->type == PROF_GEMM) {
    if (which == 0) return (double)o->m * o->k * o->batch;
    if (which == 1) return (double)o->k * o->n * o->batch;
    if (which == 2) return (double)o->m * o->n * o->batch;
    return 0;
  }
  switch (o->ew) {
  case PROF_EW_LAYERNORM: case PROF_EW_RMSNORM:
    return which == 3 ? 2.0 * o->rows : rc;
  case PROF_EW_SWIGLU:
    return which == 0 ? 2 * rc : rc;
  case PROF_EW_SWIGLU_BWD:
    return which == 1 || which == 2 ? 2 * rc : rc;
  case PROF_EW_EMBED:
    if (which == 0) return (double)o->cols;           /* at least one table row */
    if (which == 1) return (double)o->k * o->cols;    /* positions: seq x hidden */
    if (which == 3) return (double)o->rows;           /* token ids */
    return rc;
  case PROF_EW_EMBED_BWD:
    if (which == 2) return (double)o->cols;
    if (which == 3) return (double)o->rows;
    return rc;
  case PROF_EW_XENT:
    return which == 2 ? (double)o->rows : rc;
  default:
    return rc;
  }
}

double prof_layer_ew_bytes(const prof_layer *ly)
{
  double s = 0;
  for (int i = 0; i < ly->n_ops; i++) {
    const prof_op *o = &ly->ops[i];
    int ids[4] = { o->in0, o->in1, o->out, o->aux };
    if (o->type != PROF_EW) continue;
    for (int w = 0; w < 4; w++) {
      if (ids[w] < 0) continue;
      /* the table of a lookup is read where the tokens point, a row per token */
      if ((o->ew == PROF_EW_EMBED && w == 0) || (o->ew == PROF_EW_EMBED_BWD && w == 2))
        s += (double)o->rows * o->cols * ly->bufs[ids[w]].elem_bytes;
      else
        s += prof_op_extent(ly, i, w) * ly->bufs[ids[w]].elem_bytes;
    }
  }
  return s;
}

int prof_layer_lifetimes(const prof_layer *ly, int *order, int *first, int *last, int *resident)
{
  int pos = 0, first_bwd = -1;
  for (int b = 0; b < ly->n_bufs; b++) first[b] = last[b] = -1;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < ly->n_ops; i++) {
      const prof_op *o = &ly->ops[i];
      int ids[4] = { o->in0, o->in1, o->out, o->aux };
      if (o->bwd != pass) continue;
      if (pass == 1 && first_bwd < 0) first_bwd = pos;
      for (int w = 0; w < 4; w++) {
        if (ids[w] < 0) continue;
        if (first[ids[w]] < 0) first[ids[w]] = pos;
        last[ids[w]] = pos;
      }
      order[pos++] = i;
    }
  if (first_bwd < 0) first_bwd = pos;
  /* weights and their gradients are model states; a neighbours' buffer the forward pass
   * touches (the tokens, the output the next layer keeps) is other memory than this
   * layer's; the gradients passed along in the backward pass are this layer's transients */
  for (int b = 0; b < ly->n_bufs; b++) {
    int role = ly->bufs[b].role;
    resident[b] = role == PROF_PARAM || role == PROF_GRAD ||
                  (role == PROF_INPUT && first[b] >= 0 && first[b] < first_bwd);
  }
  return first_bwd;
}

void prof_layer_live_bytes(const prof_layer *ly, double *act, double *work)
{
  int order[PROF_MAX_OPS], first[PROF_MAX_BUFS], last[PROF_MAX_BUFS], resident[PROF_MAX_BUFS];
  int first_bwd = prof_layer_lifetimes(ly, order, first, last, resident);
  double peak = 0, saved = 0;
  for (int b = 0; b < ly->n_bufs; b++)
    if (!resident[b] && first[b] >= 0 && first[b] < first_bwd && last[b] >= first_bwd)
      saved += ly->bufs[b].elems * ly->bufs[b].elem_bytes;
  for (int pos = 0; pos < ly->n_ops; pos++) {
    double live = 0;
    for (int b = 0; b < ly->n_bufs; b++)
      if (!resident[b] && first[b] >= 0 && first[b] <= pos && pos <= last[b])
        live += ly->bufs[b].elems * ly->bufs[b].elem_bytes;
    if (live > peak) peak = live;
  }
  *act = saved;
  *work = peak > saved ? peak - saved : 0;
}
