/* prof_gpu.c -- the GPU side of layer timing (built where the CUDA toolkit is): finds
 * this rank's GPU, allocates a layer's buffers, runs its op list (cuBLAS GEMMs, the
 * kernels of prof_kernels.cu) with CUDA events after warm-up, and takes the median.
 * A missing driver or device is a reason to skip, never a crash (toolchain-notes.md:
 * cudaGetDeviceCount leaves the count alone on error). */
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

/* Runs the forward (bwd = 0) or backward ops. Returns 0 or -1 with why. */
static int run_pass(cublasHandle_t h, cudaStream_t st, const prof_layer *ly, void *const *ptr,
                    int bwd, int bf16, char *why, size_t n)
{
  for (int i = 0; i < ly->n_ops; i++) {
    const prof_op *o = &ly->ops[i];
    if (o->bwd != bwd) continue;
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
  if ((e = cudaMalloc(&ws, WORKSPACE_BYTES)) != cudaSuccess) {
    cudaGetLastError();
    rc = e == cudaErrorMemoryAllocation ? 1 : -1;
    snprintf(why, n, "cudaMalloc of the cuBLAS workspace: %s", cudaGetErrorString(e));
    goto done;
  }
  if ((e = cudaStreamCreate(&st)) != cudaSuccess) {
    snprintf(why, n, "cudaStreamCreate: %s", cudaGetErrorString(e));
    goto done;
  }
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, st) != CUBLAS_STATUS_SUCCESS ||
      cublasSetWorkspace(h, ws, WORKSPACE_BYTES) != CUBLAS_STATUS_SUCCESS) {
    snprintf(why, n, "cuBLAS could not be set up on device %d", g->device);
    goto done;
  }
  for (int i = 0; i < 3; i++)
    if ((e = cudaEventCreate(&ev[i])) != cudaSuccess) {
      snprintf(why, n, "cudaEventCreate: %s", cudaGetErrorString(e));
      goto done;
    }
  /* token ids index the table of the lookup */
  for (int i = 0; i < ly->n_ops; i++)
    if (ly->ops[i].type == PROF_EW && ly->ops[i].ew == PROF_EW_EMBED)
      table_rows = (long)(ly->bufs[ly->ops[i].in0].elems / (double)ly->ops[i].cols);
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
