/* prof_gpu.c -- the GPU side of layer timing (built where the CUDA toolkit is): finds
 * this rank's GPU, allocates a layer's buffers, runs its op list (cuBLAS GEMMs, the
 * kernels of prof_kernels.cu) with CUDA events after warm-up, and takes the median.
 * A missing driver or device is a reason to skip, never a crash (toolchain-notes.md:
 * cudaGetDeviceCount leaves the count alone on error). Memory is measured apart from the
 * timing: one pass with the layer's own buffers allocated from a private memory pool
 * at first use and freed after last use, read from the pool's counters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cublas_v2.h>

#include "prof.h"

#define WORKSPACE_BYTES (32L << 20)   /* cuBLAS workspace, counted in the layer's bytes */

int prof_gpu_built(void) { return 1; }

int prof_gpu_open(int local_rank, prof_gpu *g, char *why, size_t n)
{
  int count = 0;
  size_t fr = 0, tot = 0;
  struct cudaDeviceProp prop;
  cudaError_t e = cudaGetDeviceCount(&count);
  memset(g, 0, sizeof *g);
  if (e != cudaSuccess) {
    snprintf(why, n, "no CUDA device: cudaGetDeviceCount: %s (error %d)", cudaGetErrorString(e),
             (int)e);
    return 0;
  }
  if (count <= 0) {
    snprintf(why, n, "no CUDA device: cudaGetDeviceCount found none");
    return 0;
  }
  g->count = count;
  g->device = local_rank % count;
  if ((e = cudaSetDevice(g->device)) != cudaSuccess ||
      (e = cudaGetDeviceProperties(&prop, g->device)) != cudaSuccess ||
      (e = cudaFree(NULL)) != cudaSuccess ||                /* creates the context */
      (e = cudaMemGetInfo(&fr, &tot)) != cudaSuccess) {
    snprintf(why, n, "CUDA device %d unusable: %s (error %d)", g->device, cudaGetErrorString(e),
             (int)e);
    return 0;
  }
  snprintf(g->name, sizeof g->name, "%s", prop.name);
  g->mem_bytes = (double)tot;
  g->free_bytes = (double)fr;
  g->cc_major = prop.major;
  g->cc_minor = prop.minor;
  g->bf16 = prop.major >= 8;
  return 1;
}

static cudaDataType_t dtype(const prof_buf *b, int bf16)
{
  if (b->elem_bytes == 4) return CUDA_R_32F;
  return bf16 ? CUDA_R_16BF : CUDA_R_16F;
}

static cublasStatus_t run_gemm(cublasHandle_t h, const prof_layer *ly, const prof_op *o,
                               void *const *ptr, int bf16)
{
  const prof_buf *A = &ly->bufs[o->in0], *B = &ly->bufs[o->in1], *C = &ly->bufs[o->out];
  float alpha = 1, beta = o->accumulate ? 1.0f : 0.0f;
  int m = (int)o->m, nn = (int)o->n, k = (int)o->k;
  int lda = o->ta ? k : m, ldb = o->tb ? nn : k, ldc = m;
  cublasOperation_t ta = o->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = o->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (o->batch == 1)
    return cublasGemmEx(h, ta, tb, m, nn, k, &alpha, ptr[o->in0], dtype(A, bf16), lda,
                        ptr[o->in1], dtype(B, bf16), ldb, &beta, ptr[o->out], dtype(C, bf16), ldc,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return cublasGemmStridedBatchedEx(h, ta, tb, m, nn, k, &alpha,
                                    ptr[o->in0], dtype(A, bf16), lda, (long long)o->m * o->k,
                                    ptr[o->in1], dtype(B, bf16), ldb, (long long)o->k * o->n,
                                    &beta, ptr[o->out], dtype(C, bf16), ldc,
                                    (long long)o->m * o->n, (int)o->batch,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

/* Runs op i of the layer. Returns 0 or -1 with why. */
static int run_op(cublasHandle_t h, cudaStream_t st, const prof_layer *ly, int i, void *const *ptr,
                  int bf16, char *why, size_t n)
{
  const prof_op *o = &ly->ops[i];
  if (o->type == PROF_GEMM) {
    cublasStatus_t s = run_gemm(h, ly, o, ptr, bf16);
    if (s != CUBLAS_STATUS_SUCCESS) {
      snprintf(why, n, "layer '%s': GEMM '%s' (%ld x %ld x %ld, batch %ld): cuBLAS status %d",
               ly->kind, o->what, o->m, o->n, o->k, o->batch, (int)s);
      return -1;
    }
  } else {
    void *p[4] = { o->in0 >= 0 ? ptr[o->in0] : NULL, o->in1 >= 0 ? ptr[o->in1] : NULL,
                   ptr[o->out], o->aux >= 0 ? ptr[o->aux] : NULL };
    long table = 0;
    int e;
    if (o->ew == PROF_EW_EMBED) table = (long)(ly->bufs[o->in0].elems / (double)o->cols);
    if (o->ew == PROF_EW_EMBED_BWD) table = (long)(ly->bufs[o->out].elems / (double)o->cols);
    if ((e = prof_launch_ew(o, p, table, bf16, st)) != 0) {
      snprintf(why, n, "layer '%s': kernel '%s': %s", ly->kind, o->what,
               cudaGetErrorString((cudaError_t)e));
      return -1;
    }
  }
  return 0;
}

/* Runs the forward (bwd = 0) or backward ops. Returns 0 or -1 with why. */
static int run_pass(cublasHandle_t h, cudaStream_t st, const prof_layer *ly, void *const *ptr,
                    int bwd, int bf16, char *why, size_t n)
{
  for (int i = 0; i < ly->n_ops; i++)
    if (ly->ops[i].bwd == bwd && run_op(h, st, ly, i, ptr, bf16, why, n)) return -1;
  return 0;
}

/* The rows of the table a lookup in the op list indexes (1 if none): the token ids of
 * the fills stay inside it. */
static long lookup_table_rows(const prof_layer *ly)
{
  for (int i = 0; i < ly->n_ops; i++)
    if (ly->ops[i].type == PROF_EW && ly->ops[i].ew == PROF_EW_EMBED)
      return (long)(ly->bufs[ly->ops[i].in0].elems / (double)ly->ops[i].cols);
  return 1;
}

/* A stream, the cuBLAS workspace and a handle on them: 0, or 1 when the workspace does
 * not fit, -1 on another failure (why says which); what was made is the caller's to free. */
static int cublas_on_stream(const prof_gpu *g, cudaStream_t *st, void **ws, cublasHandle_t *h,
                            char *why, size_t n)
{
  cudaError_t e;
  if ((e = cudaStreamCreate(st)) != cudaSuccess) {
    snprintf(why, n, "cudaStreamCreate: %s", cudaGetErrorString(e));
    return -1;
  }
  if ((e = cudaMalloc(ws, WORKSPACE_BYTES)) != cudaSuccess) {
    cudaGetLastError();                        /* clear the sticky allocation error */
    snprintf(why, n, "cudaMalloc of the cuBLAS workspace: %s", cudaGetErrorString(e));
    return e == cudaErrorMemoryAllocation ? 1 : -1;
  }
  if (cublasCreate(h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(*h, *st) != CUBLAS_STATUS_SUCCESS ||
      cublasSetWorkspace(*h, *ws, WORKSPACE_BYTES) != CUBLAS_STATUS_SUCCESS) {
    snprintf(why, n, "cuBLAS could not be set up on device %d", g->device);
    return -1;
  }
  return 0;
}

int prof_gpu_time_layer(const prof_gpu *g, const prof_layer *ly, int warmup, int reps,
                        prof_layer_time *out, char *why, size_t n)
{
  void *ptr[PROF_MAX_BUFS] = { 0 }, *ws = NULL;
  double need = WORKSPACE_BYTES, *fb = NULL, *ff = NULL;
  size_t fr = 0, tot = 0, fr_after = 0;
  cublasHandle_t h = NULL;
  cudaStream_t st = NULL;
  cudaEvent_t ev[3] = { NULL, NULL, NULL };
  long table_rows = 0;
  int rc = -1;
  cudaError_t e;

  memset(out, 0, sizeof *out);
  for (int i = 0; i < ly->n_bufs; i++) need += ly->bufs[i].elems * ly->bufs[i].elem_bytes;
  if ((e = cudaSetDevice(g->device)) != cudaSuccess || (e = cudaMemGetInfo(&fr, &tot)) != cudaSuccess) {
    snprintf(why, n, "cudaMemGetInfo: %s", cudaGetErrorString(e));
    return -1;
  }
  if (need > 0.92 * (double)fr) return 1;       /* does not fit: leave room for the runtime */
  out->alloc_bytes = need;
  for (int i = 0; i < ly->n_bufs; i++) {
    size_t bytes = (size_t)ceil(ly->bufs[i].elems) * (size_t)ly->bufs[i].elem_bytes;
    if ((e = cudaMalloc(&ptr[i], bytes)) != cudaSuccess) {
      cudaGetLastError();                      /* clear the sticky allocation error */
      rc = e == cudaErrorMemoryAllocation ? 1 : -1;
      snprintf(why, n, "cudaMalloc of %zu bytes for '%s': %s", bytes, ly->bufs[i].name,
               cudaGetErrorString(e));
      goto done;
    }
  }
  if ((rc = cublas_on_stream(g, &st, &ws, &h, why, n)) != 0) goto done;
  rc = -1;
  for (int i = 0; i < 3; i++)
    if ((e = cudaEventCreate(&ev[i])) != cudaSuccess) {
      snprintf(why, n, "cudaEventCreate: %s", cudaGetErrorString(e));
      goto done;
    }
  /* token ids index the table of the lookup */
  table_rows = lookup_table_rows(ly);
  for (int i = 0; i < ly->n_bufs; i++)
    if ((e = (cudaError_t)prof_launch_fill(ptr[i], ly->bufs[i].elems, ly->bufs[i].elem_bytes,
                                           g->bf16, table_rows > 0 ? table_rows : 1,
                                           (unsigned)(i + 1), st)) != cudaSuccess) {
      snprintf(why, n, "filling '%s': %s", ly->bufs[i].name, cudaGetErrorString(e));
      goto done;
    }
  fb = calloc((size_t)reps, sizeof *fb);
  ff = calloc((size_t)reps, sizeof *ff);
  if (!fb || !ff) { snprintf(why, n, "out of memory"); goto done; }
  for (int r = -warmup; r < reps; r++) {
    float t_fwd = 0, t_all = 0;
    cudaEventRecord(ev[0], st);
    if (run_pass(h, st, ly, ptr, 0, g->bf16, why, n)) goto done;
    cudaEventRecord(ev[1], st);
    if (run_pass(h, st, ly, ptr, 1, g->bf16, why, n)) goto done;
    cudaEventRecord(ev[2], st);
    if ((e = cudaEventSynchronize(ev[2])) != cudaSuccess) {
      snprintf(why, n, "layer '%s' failed on the GPU: %s", ly->kind, cudaGetErrorString(e));
      goto done;
    }
    cudaEventElapsedTime(&t_fwd, ev[0], ev[1]);
    cudaEventElapsedTime(&t_all, ev[0], ev[2]);
    if (r >= 0) {
      ff[r] = t_fwd * 1e-3;
      fb[r] = t_all * 1e-3;
    }
  }
  cudaMemGetInfo(&fr_after, &tot);
  out->peak_bytes = (double)fr - (double)fr_after;
  {
    double lo = INFINITY, hi = 0;
    for (int r = 0; r < reps; r++) {
      if (fb[r] < lo) lo = fb[r];
      if (fb[r] > hi) hi = fb[r];
    }
    out->seconds = prof_median(fb, reps);
    out->fwd_seconds = prof_median(ff, reps);
    out->spread = out->seconds > 0 ? (hi - lo) / out->seconds : 0;
  }
  rc = 0;
done:
  free(fb);
  free(ff);
  for (int i = 0; i < 3; i++)
    if (ev[i]) cudaEventDestroy(ev[i]);
  if (h) cublasDestroy(h);
  if (st) cudaStreamDestroy(st);
  for (int i = 0; i < ly->n_bufs; i++)
    if (ptr[i]) cudaFree(ptr[i]);
  if (ws) cudaFree(ws);
  return rc;
}

/* The pool's counter `attr` (bytes), or -1 on an error. */
static double pool_bytes(cudaMemPool_t pool, enum cudaMemPoolAttr attr)
{
  unsigned long long v = 0;
  return cudaMemPoolGetAttribute(pool, attr, &v) == cudaSuccess ? (double)v : -1;
}

int prof_gpu_measure_memory(const prof_gpu *g, const prof_layer *ly, double *act,
                            double *work, char *why, size_t n)
{
  int order[PROF_MAX_OPS], first[PROF_MAX_BUFS], last[PROF_MAX_BUFS], resident[PROF_MAX_BUFS];
  void *ptr[PROF_MAX_BUFS] = { 0 }, *ws = NULL;
  double need = WORKSPACE_BYTES, fwd_end = -1, high;
  size_t fr = 0, tot = 0;
  cudaMemPool_t pool = NULL;
  struct cudaMemPoolProps props;
  cublasHandle_t h = NULL;
  cudaStream_t st = NULL;
  unsigned long long zero = 0;
  long table_rows = lookup_table_rows(ly);
  int first_bwd, rc = -1;
  cudaError_t e;

  *act = *work = 0;
  first_bwd = prof_layer_lifetimes(ly, order, first, last, resident);
  for (int i = 0; i < ly->n_bufs; i++) need += ly->bufs[i].elems * ly->bufs[i].elem_bytes;
  if ((e = cudaSetDevice(g->device)) != cudaSuccess || (e = cudaMemGetInfo(&fr, &tot)) != cudaSuccess) {
    snprintf(why, n, "cudaMemGetInfo: %s", cudaGetErrorString(e));
    return -1;
  }
  if (need > 0.92 * (double)fr) return 1;       /* as the timing: room for the runtime */
  /* a private pool: its counters see this layer's allocations and nothing else */
  memset(&props, 0, sizeof props);
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = g->device;
  if ((e = cudaMemPoolCreate(&pool, &props)) != cudaSuccess) {
    snprintf(why, n, "cudaMemPoolCreate: %s", cudaGetErrorString(e));
    pool = NULL;
    goto done;
  }
  /* what exists before and after the layer (weights, gradients, the forward's inputs and
   * output) and the cuBLAS workspace (one per process, like the CUDA context: res_k)
   * come from outside the pool */
  if ((rc = cublas_on_stream(g, &st, &ws, &h, why, n)) != 0) goto done;
  rc = -1;
  for (int i = 0; i < ly->n_bufs; i++) {
    size_t bytes = (size_t)ceil(ly->bufs[i].elems) * (size_t)ly->bufs[i].elem_bytes;
    if (!resident[i] || first[i] < 0) continue;
    if ((e = cudaMalloc(&ptr[i], bytes)) != cudaSuccess ||
        (e = (cudaError_t)prof_launch_fill(ptr[i], ly->bufs[i].elems, ly->bufs[i].elem_bytes,
                                           g->bf16, table_rows, (unsigned)(i + 1), st)) != cudaSuccess) {
      cudaGetLastError();
      rc = e == cudaErrorMemoryAllocation ? 1 : -1;
      snprintf(why, n, "'%s' (%zu bytes): %s", ly->bufs[i].name, bytes, cudaGetErrorString(e));
      goto done;
    }
  }
  if ((e = cudaStreamSynchronize(st)) != cudaSuccess ||
      (e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero)) != cudaSuccess) {
    snprintf(why, n, "before the layer: %s", cudaGetErrorString(e));
    goto done;
  }
  /* one forward and backward pass, in the executor's order; each buffer of the layer's
   * own allocated (and filled: what an all-gather would write) before its first use,
   * freed after its last */
  for (int pos = 0; pos < ly->n_ops; pos++) {
    int i = order[pos];
    const prof_op *o = &ly->ops[i];
    int ids[4] = { o->in0, o->in1, o->out, o->aux };
    if (pos == first_bwd) {
      if ((e = cudaStreamSynchronize(st)) != cudaSuccess) {
        snprintf(why, n, "layer '%s' failed on the GPU: %s", ly->kind, cudaGetErrorString(e));
        goto done;
      }
      fwd_end = pool_bytes(pool, cudaMemPoolAttrUsedMemCurrent);
    }
    for (int w = 0; w < 4; w++) {
      int b = ids[w];
      size_t bytes;
      if (b < 0 || resident[b] || first[b] != pos || ptr[b]) continue;
      bytes = (size_t)ceil(ly->bufs[b].elems) * (size_t)ly->bufs[b].elem_bytes;
      if ((e = cudaMallocFromPoolAsync(&ptr[b], bytes, pool, st)) != cudaSuccess) {
        cudaGetLastError();
        ptr[b] = NULL;
        rc = e == cudaErrorMemoryAllocation ? 1 : -1;
        snprintf(why, n, "'%s' (%zu bytes) from the pool: %s", ly->bufs[b].name, bytes,
                 cudaGetErrorString(e));
        goto done;
      }
      if ((e = (cudaError_t)prof_launch_fill(ptr[b], ly->bufs[b].elems, ly->bufs[b].elem_bytes,
                                             g->bf16, table_rows, (unsigned)(b + 1), st)) != cudaSuccess) {
        snprintf(why, n, "filling '%s': %s", ly->bufs[b].name, cudaGetErrorString(e));
        goto done;
      }
    }
    if (run_op(h, st, ly, i, ptr, g->bf16, why, n)) goto done;
    for (int w = 0; w < 4; w++) {
      int b = ids[w];
      if (b < 0 || resident[b] || last[b] != pos || !ptr[b]) continue;
      if ((e = cudaFreeAsync(ptr[b], st)) != cudaSuccess) {
        snprintf(why, n, "freeing '%s': %s", ly->bufs[b].name, cudaGetErrorString(e));
        goto done;
      }
      ptr[b] = NULL;
    }
  }
  if ((e = cudaStreamSynchronize(st)) != cudaSuccess) {
    snprintf(why, n, "layer '%s' failed on the GPU: %s", ly->kind, cudaGetErrorString(e));
    goto done;
  }
  if (fwd_end < 0) fwd_end = 0;                 /* no backward op: nothing kept for it */
  high = pool_bytes(pool, cudaMemPoolAttrUsedMemHigh);
  if (high < 0) {
    snprintf(why, n, "cudaMemPoolGetAttribute: %s", cudaGetErrorString(cudaGetLastError()));
    goto done;
  }
  *act = fwd_end;
  *work = high > fwd_end ? high - fwd_end : 0;
  rc = 0;
done:
  if (st) cudaStreamSynchronize(st);
  for (int i = 0; i < ly->n_bufs; i++) {
    if (!ptr[i]) continue;
    if (resident[i]) cudaFree(ptr[i]);
    else cudaFreeAsync(ptr[i], st);
  }
  if (st) cudaStreamSynchronize(st);
  if (h) cublasDestroy(h);
  if (st) cudaStreamDestroy(st);
  if (ws) cudaFree(ws);
  if (pool) cudaMemPoolDestroy(pool);
  return rc;
}

double prof_gpu_gemm_rate(const prof_gpu *g, int n, int reps)
{
  prof_layer *ly = calloc(1, sizeof *ly);
  prof_layer_time t;
  char why[256];
  double rate = 0;
  if (!ly || reps < 1) { free(ly); return 0; }
  snprintf(ly->kind, sizeof ly->kind, "gemm-%d", n);
  ly->n_bufs = 3;
  for (int i = 0; i < 3; i++) {
    snprintf(ly->bufs[i].name, sizeof ly->bufs[i].name, "%c", 'a' + i);
    ly->bufs[i].elems = (double)n * n;
    ly->bufs[i].elem_bytes = 2;
    ly->bufs[i].role = PROF_TEMP;
  }
  ly->n_ops = 1;
  memset(&ly->ops[0], 0, sizeof ly->ops[0]);
  ly->ops[0].type = PROF_GEMM;
  ly->ops[0].m = ly->ops[0].n = ly->ops[0].k = n;
  ly->ops[0].batch = 1;
  ly->ops[0].in0 = 0;
  ly->ops[0].in1 = 1;
  ly->ops[0].out = 2;
  ly->ops[0].aux = -1;
  snprintf(ly->ops[0].what, sizeof ly->ops[0].what, "square");
  if (prof_gpu_time_layer(g, ly, 3, reps, &t, why, sizeof why) == 0 && t.seconds > 0)
    rate = 2.0 * n * n * n / t.seconds;
  free(ly);
  return rate;
}
