/* prof_ops.h -- the op list of a layer: buffers, GEMMs and element-wise kernels (plain
 * C types, shared by prof_ops.c, the executor prof_gpu.c and the kernels of
 * prof_kernels.cu). */
#ifndef HP_PROF_OPS_H
#define HP_PROF_OPS_H

#ifdef __cplusplus
extern "C" {
#endif

/* A layer's forward and backward pass on one TP rank, as the GEMMs and element-wise
 * kernels a Megatron-style implementation runs, over named buffers. The executor
 * (prof_gpu.c) runs them; the tests check FLOPs, saved bytes and operand extents. */

enum { PROF_PARAM = 0, PROF_GRAD = 1, PROF_SAVED = 2, PROF_TEMP = 3, PROF_INPUT = 4 };

typedef struct prof_buf {
  char name[24];
  double elems;        /* elements */
  int elem_bytes;      /* 1 (masks), 2 (fp16/bf16), 4 (fp32), 8 (token ids) */
  int role;            /* PROF_PARAM, PROF_GRAD, PROF_SAVED (kept from forward to
                          backward: what hetplan's act_bytes counts), PROF_TEMP
                          (transient: scores, norm statistics, activation gradients),
                          PROF_INPUT (the neighbours': the layer's output, the incoming
                          gradient and the gradient it passes back, token ids) */
} prof_buf;

enum { PROF_GEMM = 0, PROF_EW = 1 };

/* Element-wise kernels (prof_kernels.cu). Shapes are rows x cols. */
typedef enum {
  PROF_EW_LAYERNORM,      /* in0 -> out; row statistics to aux (fp32, 2 per row) */
  PROF_EW_LAYERNORM_BWD,  /* in0 grad, in1 saved input -> out */
  PROF_EW_RMSNORM,        /* in0 -> out */
  PROF_EW_RMSNORM_BWD,    /* in0 grad, in1 saved input -> out */
  PROF_EW_BIAS_GELU,      /* in0 pre-activation -> out (tanh GELU) */
  PROF_EW_GELU_BWD,       /* in0 grad, in1 saved pre-activation -> out */
  PROF_EW_SWIGLU,         /* in0 (rows x 2 cols: gate | up) -> out (rows x cols); silu(gate) to aux */
  PROF_EW_SWIGLU_BWD,     /* in0 grad (rows x cols), in1 saved gate|up, aux saved silu -> out (rows x 2 cols) */
  PROF_EW_ROPE,           /* in0 -> out (rows x cols, rotary on pairs) */
  PROF_EW_SOFTMAX,        /* in0 scores -> out probabilities, scaled and causal-masked */
  PROF_EW_SOFTMAX_BWD,    /* in0 grad, in1 saved probabilities -> out */
  PROF_EW_DROPOUT,        /* in0 (+ in1 residual if >= 0) -> out; mask to aux (1 byte) */
  PROF_EW_DROPOUT_BWD,    /* in0 grad, aux mask -> out */
  PROF_EW_ADD,            /* in0 + in1 -> out */
  PROF_EW_EMBED,          /* gather rows of in0 (table, rows = vocab) by aux (token ids)
                             -> out (rows x cols: tokens x hidden); + in1 positions if >= 0 */
  PROF_EW_EMBED_BWD,      /* scatter-add of in0 grad rows into out (table) by aux */
  PROF_EW_XENT,           /* in0 fp32 logits rows x cols -> out (loss per row, fp32) */
  PROF_EW_XENT_BWD,       /* in0 fp32 logits -> out (gradient, 16-bit) */
  PROF_EW_COPY            /* in0 -> out (rows x cols): a rank's own part of a sequence-
                             parallel all-gather or reduce-scatter; the rest is NCCL's */
} prof_ew;

typedef struct prof_op {
  int type;            /* PROF_GEMM or PROF_EW */
  int bwd;             /* 0 forward, 1 backward */
  char what[24];
  /* GEMM, column-major as cuBLAS: C (m x n) = op(A) (m x k) op(B) (k x n), `batch`
   * times with strides m k, k n, m n; A = in0, B = in1, C = out; beta 1 accumulates. */
  long m, n, k, batch;
  int ta, tb, accumulate;
  /* element-wise; a lookup (PROF_EW_EMBED) keeps the positions' rows (seq) in k */
  prof_ew ew;
  long rows, cols;
  int in0, in1, out, aux;   /* buffer indices, -1 for none */
} prof_op;

#define PROF_MAX_OPS 64
#define PROF_MAX_BUFS 48

typedef struct prof_layer {
  char kind[64];
  int tp, mbs;
  int synthetic;           /* 1: built from an explicit layer's figures (no structure) */
  int n_ops, n_bufs;
  prof_op ops[PROF_MAX_OPS];
  prof_buf bufs[PROF_MAX_BUFS];
  int n_allreduce;         /* TP all-reduces per micro-batch, forward and backward */
  double allreduce_bytes;  /* bytes of each */
} prof_layer;

/* Launches the element-wise kernel of op `o` (prof_kernels.cu) on `stream` (a
 * cudaStream_t): p[] are the device pointers of in0, in1, out, aux (NULL for none);
 * table_rows is the number of rows of a lookup's table; bf16 selects bf16 over fp16
 * for the 16-bit buffers. Returns a cudaError_t (0 on success). */
int prof_launch_ew(const prof_op *o, void *const p[4], long table_rows, int bf16, void *stream);

/* Fills `elems` elements of `elem_bytes` each: 16-bit (bf16 or fp16) and fp32 values
 * uniform in [-1, 1), bytes at random (dropout masks), 8-byte integers in [0, modulo)
 * (token ids). Returns a cudaError_t. */
int prof_launch_fill(void *p, double elems, int elem_bytes, int bf16, long modulo,
                     unsigned seed, void *stream);

#ifdef __cplusplus
}
#endif

#endif
