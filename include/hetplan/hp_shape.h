/* hp_shape.h -- the shape model: a transformer layer's forward+backward time on a device
 * type from its GEMMs' shapes at the plan's tp and mbs (tile and wave quantisation,
 * alignment, memory-bound small GEMMs), its attention (FlashAttention by head size and
 * heads per GPU, or eager batched GEMMs with a memory-bound softmax), its element-wise and
 * normalisation kernels (memory-bound) and a per-kernel launch overhead. Formulas,
 * constants and their sources: docs/cost-model.md, "Shape model".
 *
 * A device type's constants are few; their table (names, ranges, defaults, sources) is
 * hp_shape_params(), the one place they are listed, so that a fitting tool (`hetplan
 * calibrate`) can set them by name. hp_problem_create turns the estimates into profile
 * series (origin "shape model", never "measured"); measured entries always win. */
#ifndef HP_SHAPE_H
#define HP_SHAPE_H

#include <stddef.h>

/* A device type's shape constants (cluster file: the type's "shape" object; a key it
 * omits takes the table's default). `given` is 0 for a type without "shape": the
 * FLOPs / (peak x efficiency) estimate stands for it. */
typedef struct hp_shape {
  int given;
  double sms;        /* streaming multiprocessors: a GEMM's tiles run in waves of this many */
  double tile_m;     /* output tile of a large GEMM kernel, rows (tokens) */
  double tile_n;     /* ... and columns */
  double gemm_eff;   /* fraction of the precision's peak a full-wave, aligned GEMM reaches */
  double align;      /* elements: a GEMM dimension not a multiple of it runs slower kernels */
  double align_eff;  /* the efficiency factor such a GEMM pays (twice below 8 elements) */
  double attn_eff;   /* FlashAttention's fraction of the 16-bit peak at head size >= 128 */
  double attn_eff64; /* ... at head size 64 (linear between; proportional below 64) */
  double mem_eff;    /* fraction of hbm_gbs that element-wise kernels stream at */
  double launch_us;  /* fixed cost of one kernel, microseconds */
} hp_shape;

/* One constant of the table. */
typedef struct hp_shape_param {
  const char *name;    /* its key in the "shape" object */
  double lo, hi;       /* the range a file may give (and a fit may search) */
  double def;          /* the default: A100-SXM4 figures */
  size_t offset;       /* offsetof(hp_shape, the field) */
  int fittable;        /* 1: an efficiency or overhead a fit may move; 0: a datasheet or
                        * kernel-design figure (SMs, tiles, alignment) */
  const char *source;  /* where the default comes from */
} hp_shape_param;

/* The table, and its length in *n. */
const hp_shape_param *hp_shape_params(int *n);
/* The table's entry named `name`, NULL if none. */
const hp_shape_param *hp_shape_param_find(const char *name);
double hp_shape_get(const hp_shape *s, const hp_shape_param *q);
void hp_shape_set(hp_shape *s, const hp_shape_param *q, double v);
/* Every constant at its default, given = 1. */
void hp_shape_defaults(hp_shape *s);

/* How a problem's layer times are estimated where no profile measures them (the job's
 * "compute_model"): the shape model (default) or FLOPs / (peak x efficiency). */
typedef enum { HP_COMPUTE_SHAPE = 0, HP_COMPUTE_FLOPS = 1 } hp_compute_model;
const char *hp_compute_model_name(hp_compute_model c);   /* "shape", "flops" */
int hp_compute_model_parse(const char *s);               /* -1 if neither */

/* The precision a model's GEMMs run in (model key "gemm_precision"). */
typedef enum { HP_GEMM_BF16 = 0, HP_GEMM_FP8 = 1 } hp_gemm_precision;
const char *hp_gemm_precision_name(int g);               /* "bf16", "fp8" */
int hp_gemm_precision_parse(const char *s);              /* -1 if neither */

/* One GEMM C[M x N] = A[M x K] B[K x N], `batch` of them in one kernel, on a type with
 * shape constants s, precision peak `peak` (FLOP/s), memory bandwidth `hbm` (bytes/s),
 * operands of `bytes` bytes per element: max(waves x tile time, bytes / (hbm mem_eff))
 * at the alignment's efficiency, plus one launch. Seconds. */
double hp_shape_gemm_time(const hp_shape *s, double peak, double hbm, double M, double N,
                          double K, double batch, double bytes);

struct hp_problem;
/* The shape model's forward+backward time (s) of one micro-batch of `mbs` samples of
 * layer l (a layer of a transformer model: embed, a block, final_norm or head) on device
 * type k at tensor-parallel degree tp, without its TP all-reduce; never below the
 * layer's FLOPs at the peak of the model's GEMM precision. -1 where the shape model does
 * not apply (no transformer description, no "shape" for the type). */
double hp_shape_layer_time(const struct hp_problem *p, int l, int k, int tp, int mbs);

/* The peak (FLOP/s) of type k in model precision: tflops_fp8 for an fp8 model, else
 * tflops. */
double hp_shape_peak(const struct hp_problem *p, int k);

#endif
