/* shape_model.c -- a transformer layer's forward+backward time from its shapes
 * (hp_shape.h; formulas and sources in docs/cost-model.md, "Shape model"): each GEMM at
 * the plan's tp and mbs, quantised into tiles and waves of tiles over the SMs, slower
 * where a dimension is not aligned, memory-bound where its operands take longer to
 * stream than its FLOPs to compute; the attention (FlashAttention by head size and heads
 * per GPU, or eager batched GEMMs and a memory-bound softmax); norms, residuals,
 * activations and dropout as memory-bound bytes; a fixed cost per kernel. The constants'
 * table below is the one place they are named, ranged and sourced. */
#include <math.h>
#include <string.h>

#include "internal.h"

#define F(field) offsetof(hp_shape, field)

/* Defaults are A100-SXM4's (bundled cluster files give their types' own). */
static const hp_shape_param params[] = {
  { "sms", 1, 1024, 108, F(sms), 0,
    "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 108 SMs (H100 SXM5 132, "
    "H100 PCIe 114, V100 80, A10G 80, T4 40)" },
  { "tile_m", 16, 512, 128, F(tile_m), 0,
    "CUTLASS's default SM80 and SM90 bf16 threadblock tile 128 x 256 (cutlass/gemm/device/"
    "default_gemm_configuration.h), the tile cuBLAS's heuristics pick for large GEMMs" },
  { "tile_n", 16, 512, 256, F(tile_n), 0, "as tile_m" },
  { "gemm_eff", 0.05, 1, 0.60, F(gemm_eff), 1,
    "fitted on BLOOM-176B's sweep (A100, Megatron-DeepSpeed; rows of odd source_line, "
    "bench/fidelity/fit_shape.py): 0.60 of the peak for every GEMM of a layer, the "
    "framework's own overhead included; cuBLAS alone reaches 0.80-0.87 on large aligned "
    "GEMMs (NVIDIA, Deep Learning Performance Guide, Matrix Multiplication Background)" },
  { "align", 1, 1024, 128, F(align), 0,
    "BLOOM-176B's sweep (bigscience chronicles-prequel.md): hidden sizes not a multiple of 128 "
    "ran slower; NVIDIA's guide asks for multiples of 64-128 elements on A100" },
  { "align_eff", 0.05, 1, 0.75, F(align_eff), 1,
    "fitted on BLOOM-176B's sweep (hidden 14400, and heads of 150 or 225, against 14336 and "
    "128; bench/fidelity/fit_shape.py); applied again below the 8-element (16-byte) "
    "alignment of the tensor-core kernels" },
  { "attn_eff", 0.05, 1, 0.53, F(attn_eff), 1,
    "FlashAttention-2 (Dao 2023, fig. 6): causal forward+backward, head size 128, about "
    "165 of A100's 312 TFLOPS" },
  { "attn_eff64", 0.05, 1, 0.46, F(attn_eff64), 1,
    "FlashAttention-2 (Dao 2023, fig. 6): head size 64, about 145 of 312 TFLOPS" },
  { "mem_eff", 0.05, 1, 0.80, F(mem_eff), 1,
    "element-wise kernels stream 1.3-1.6 of A100's 2.0 TB/s (STREAM-like copy, "
    "NVIDIA's bandwidthTest); not fitted" },
  { "launch_us", 0, 1000, 4, F(launch_us), 1,
    "a kernel's launch and tail, 3-5 us on A100 and H100 (CUDA Graphs' motivation, NVIDIA "
    "blog 2019); not fitted (BLOOM's layers take 10-100 ms: it does not move them)" },
};
#undef F

const hp_shape_param *hp_shape_params(int *n)
{
  *n = (int)(sizeof params / sizeof params[0]);
  return params;
}

const hp_shape_param *hp_shape_param_find(const char *name)
{
  int n;
  const hp_shape_param *q = hp_shape_params(&n);
  for (int i = 0; name && i < n; i++)
    if (!strcmp(q[i].name, name)) return &q[i];
  return NULL;
}

double hp_shape_get(const hp_shape *s, const hp_shape_param *q)
{
  double v;
  memcpy(&v, (const char *)s + q->offset, sizeof v);
  return v;
}

void hp_shape_set(hp_shape *s, const hp_shape_param *q, double v)
{
  memcpy((char *)s + q->offset, &v, sizeof v);
}

void hp_shape_defaults(hp_shape *s)
{
  int n;
  const hp_shape_param *q = hp_shape_params(&n);
  memset(s, 0, sizeof *s);
  for (int i = 0; i < n; i++) hp_shape_set(s, &q[i], q[i].def);
  s->given = 1;
}

const char *hp_compute_model_name(hp_compute_model c)
{
  return c == HP_COMPUTE_FLOPS ? "flops" : "shape";
}

int hp_compute_model_parse(const char *s)
{
  if (!s) return -1;
  if (!strcmp(s, "shape")) return HP_COMPUTE_SHAPE;
  if (!strcmp(s, "flops")) return HP_COMPUTE_FLOPS;
  return -1;
}

const char *hp_gemm_precision_name(int g) { return g == HP_GEMM_FP8 ? "fp8" : "bf16"; }

int hp_gemm_precision_parse(const char *s)
{
  if (!s) return -1;
  if (!strcmp(s, "bf16")) return HP_GEMM_BF16;
  if (!strcmp(s, "fp8")) return HP_GEMM_FP8;
  return -1;
}

double hp_shape_peak(const hp_problem *p, int k)
{
  const hp_devtype *t = &p->cluster->types[k];
  return p->model->gemm_precision == HP_GEMM_FP8 && t->peak_fp8 > 0 ? t->peak_fp8 : t->peak;
}

static int multiple(double x, double of) { return fabs(x - of * floor(x / of + 0.5)) < 1e-9; }

/* The efficiency factor of a GEMM's dimensions: align_eff for a dimension that is not a
 * multiple of `align`, once more for one not a multiple of 8 elements. */
static double align_factor(const hp_shape *s, double M, double N, double K)
{
  double dims[3] = { M, N, K }, f = 1;
  int off = 0, off8 = 0;
  for (int i = 0; i < 3; i++) {
    off |= !multiple(dims[i], s->align);
    off8 |= !multiple(dims[i], 8);
  }
  if (off) f *= s->align_eff;
  if (off8) f *= s->align_eff;
  return f;
}

double hp_shape_gemm_time(const hp_shape *s, double peak, double hbm, double M, double N,
                          double K, double batch, double bytes)
{
  double tiles, waves, tile_time, compute, memory, tm, tn;
  if (M <= 0 || N <= 0 || K <= 0 || batch <= 0) return 0;
  /* a dimension smaller than the tile gets a tile cut to it (a multiple of 16), as the
   * libraries pick narrow kernels for skinny GEMMs */
  tm = fmin(s->tile_m, 16 * ceil(M / 16 - 1e-9));
  tn = fmin(s->tile_n, 16 * ceil(N / 16 - 1e-9));
  tiles = ceil(M / tm - 1e-9) * ceil(N / tn - 1e-9) * batch;
  waves = ceil(tiles / s->sms - 1e-9);
  /* one tile's 2 tm tn K FLOPs on one SM, at the aligned efficiency of the peak */
  tile_time = 2 * tm * tn * K * s->sms / (peak * s->gemm_eff * align_factor(s, M, N, K));
  compute = waves * tile_time;
  memory = (M * K + K * N + M * N) * batch * bytes / (hbm * s->mem_eff);
  return (compute > memory ? compute : memory) + s->launch_us * 1e-6;
}

/* A layer's tally: seconds and kernels. */
typedef struct { double sec; int kernels; } tally;

/* A linear layer of `in` -> `out` features over T tokens: forward, the input's gradient
 * (dgrad) and the weight's (wgrad). */
static void linear(tally *a, const hp_shape *s, double peak, double hbm, double T, double in,
                   double out, double bytes)
{
  a->sec += hp_shape_gemm_time(s, peak, hbm, T, out, in, 1, bytes)     /* Y = X W */
            + hp_shape_gemm_time(s, peak, hbm, T, in, out, 1, bytes)   /* dX = dY W^T */
            + hp_shape_gemm_time(s, peak, hbm, in, out, T, 1, bytes);  /* dW = X^T dY */
}

/* Memory-bound work: `bytes` streamed at hbm mem_eff in `kernels` kernels. */
static void streamed(tally *a, const hp_shape *s, double hbm, double bytes, int kernels)
{
  a->sec += bytes / (hbm * s->mem_eff);
  a->kernels += kernels;
}

/* FlashAttention's fraction of the 16-bit peak at head size d. */
static double attn_eff(const hp_shape *s, double d)
{
  if (d >= 128) return s->attn_eff;
  if (d >= 64) return s->attn_eff64 + (s->attn_eff - s->attn_eff64) * (d - 64) / 64;
  return s->attn_eff64 * d / 64;
}

/* The attention of one block on one GPU: `a` heads of width d (padded to 8 elements, as
 * the kernels do), mbs samples of s positions. */
static void attention(tally *y, const hp_shape *s, double peak16, double hbm, int eager,
                      int gpt, double mbs, double seq, double a, double d, double b)
{
  if (eager) {
    /* S = Q K^T and O = P V per (sample, head) in one batched GEMM each; backward dQ, dK,
     * dV (s x d x s) and dP (s x s x d): 2 GEMMs of (s, s, d) and 4 of (s, d, s) */
    double B = mbs * a;
    y->sec += 2 * hp_shape_gemm_time(s, peak16, hbm, seq, seq, d, B, b)
              + 4 * hp_shape_gemm_time(s, peak16, hbm, seq, d, seq, B, b);
    /* the scores: fused scale-mask-softmax forward (read, write) and backward (read the
     * gradient and the output, write), and with gpt's attention dropout its forward (read,
     * write, a 1-byte mask) and backward (read, mask, write): 9b + 2 bytes a score, 5b
     * without dropout */
    streamed(y, s, hbm, B * seq * seq * (gpt ? 9 * b + 2 : 5 * b), gpt ? 4 : 2);
  } else {
    /* causal: the kernels skip the masked half of the 14 s^2 d FLOPs a head's forward and
     * backward count (docs/transformer.md); thread blocks of 128 query rows per (sample,
     * head) run in waves over the SMs */
    double dp = 8 * ceil(d / 8 - 1e-9);
    double flops = 0.5 * 14 * seq * seq * dp * a * mbs;
    double blocks = mbs * a * ceil(seq / 128 - 1e-9);
    double quant = ceil(blocks / s->sms - 1e-9) * s->sms / blocks;
    y->sec += flops / (peak16 * attn_eff(s, dp)) * quant;
    y->kernels += 3;   /* forward; backward's pre-processing and main kernel */
  }
}

double hp_shape_layer_time(const hp_problem *p, int l, int k, int tp, int mbs)
{
  const hp_model *m = p->model;
  const hp_transformer *t = m->transformer;
  const hp_devtype *ty = &p->cluster->types[k];
  const hp_shape *s = &ty->shape;
  const hp_layer *ly = &m->layers[l];
  tally y = { 0, 0 };
  double peak16 = ty->peak, peak = hp_shape_peak(p, k), hbm = ty->hbm;
  double gb, floor_t;
  int gpt, tl;

  if (!t || !s->given || hbm <= 0 || tp < 1 || mbs < 1 || m->n_layers != t->layers + 3)
    return -1;
  gpt = t->family == HP_TF_GPT;
  tl = ly->splittable ? tp : 1;
  {
    double seq = t->seq, h = t->hidden, a = t->heads, V = t->vocab;
    double kv = t->kv_heads > 0 ? t->kv_heads : t->heads;
    double d = t->head_dim > 0 ? t->head_dim : h / a;
    double q = a * d, hk = kv * d, f = hp_transformer_ffn(t);
    double b = hp_dtype_bytes(t->dtype), T = (double)mbs * seq;
    /* what the norms, residuals and dropout see: the whole hidden state on every TP rank,
     * a tp-th of it with sequence parallelism */
    double hs = p->job.sequence_parallel ? h / tp : h;
    /* the block's linear layers run in the model's precision: 1-byte operands in fp8 */
    gb = m->gemm_precision == HP_GEMM_FP8 && ty->peak_fp8 > 0 ? 1 : b;

    if (l == 0) {                     /* embedding: a row gather, its gradient scattered */
      streamed(&y, s, hbm, T * h * (gpt ? 12 * b + 2 : 5 * b), gpt ? 6 : 2);
    } else if (l == t->layers + 1) {  /* final norm: LayerNorm/RMSNorm forward, backward */
      streamed(&y, s, hbm, 5 * b * T * h, 2);
    } else if (l == t->layers + 2) {  /* head: the logits GEMM (16-bit), the fp32 loss */
      linear(&y, s, peak16, hbm, T, h, V / tp, b);
      streamed(&y, s, hbm, T * V / tp * (2 * b + 28), 6);
    } else {                          /* a block */
      double mlp_out = gpt ? f / tp : 2 * f / tp;     /* gated: gate and up together */
      linear(&y, s, peak, hbm, T, h, (q + 2 * hk) / tp, gb);   /* Q, K, V */
      linear(&y, s, peak, hbm, T, q / tp, h, gb);              /* O */
      linear(&y, s, peak, hbm, T, h, mlp_out, gb);             /* up (and gate) */
      linear(&y, s, peak, hbm, T, f / tp, h, gb);              /* down */
      attention(&y, s, peak16, hbm, t->eager_attention, gpt, mbs, seq, a / tp, d, b);
      if (gpt)   /* two LayerNorms 5b; two bias-dropout-residuals 5b + 2; the residual
                  * gradients' adds 3b each; GELU 5b on the MLP's inner width */
        streamed(&y, s, hbm, T * hs * (26 * b + 4) + 5 * b * T * f / tp, 12);
      else       /* RMSNorms 5b (four with post_norms); residual adds 3b forward and
                  * backward; SwiGLU 8b on the inner width; rotary 4b on Q and K, and
                  * their norms 5b with qk_norm */
        streamed(&y, s, hbm, T * hs * (5 * b * (t->post_norms ? 4 : 2) + 12 * b)
                 + 8 * b * T * f / tp + (4 * b + (t->qk_norm ? 5 * b : 0)) * T * (q + hk) / tp,
                 t->post_norms ? 16 : 12);
    }
  }
  y.sec += y.kernels * s->launch_us * 1e-6;
  /* never below what the FLOPs take at the precision's peak (cost-model.md 7.4) */
  floor_t = ly->flops * mbs / (tl * peak);
  return y.sec > floor_t ? y.sec : floor_t;
}
