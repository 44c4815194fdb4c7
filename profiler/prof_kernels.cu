/* prof_kernels.cu -- the element-wise kernels of the layer op lists (prof_ops.h): norms,
 * activations, softmax with a causal mask, dropout, rotary embeddings, lookups and the
 * cross-entropy loss, forward and backward, on 16-bit data (fp16 or bf16) with fp32
 * arithmetic. They read and write what a framework's unfused kernels would; their
 * values are not checked (only their cost is measured). */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

#include "prof_ops.h"

#define THREADS 256
#define DROP_P 0.1f

__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_f(float x) { return x; }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v)
{
  return __float2bfloat16(v);
}

__device__ __forceinline__ uint32_t hash32(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return (uint32_t)x;
}

/* Sum over the block; every thread gets the result. */
__device__ float block_sum(float v)
{
  __shared__ float part[THREADS / 32];
  __shared__ float total;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    float w = threadIdx.x < THREADS / 32 ? part[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) w += __shfl_xor_sync(0xffffffffu, w, o);
    if (threadIdx.x == 0) total = w;
  }
  __syncthreads();
  float r = total;
  __syncthreads();
  return r;
}

__device__ float block_max(float v)
{
  __shared__ float part[THREADS / 32];
  __shared__ float total;
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    float w = threadIdx.x < THREADS / 32 ? part[threadIdx.x] : -INFINITY;
    for (int o = 16; o > 0; o >>= 1) w = fmaxf(w, __shfl_xor_sync(0xffffffffu, w, o));
    if (threadIdx.x == 0) total = w;
  }
  __syncthreads();
  float r = total;
  __syncthreads();
  return r;
}

/* ---- row kernels: one block per row */

template <typename T>
__global__ void norm_fwd(const T *x, T *y, float *stats, long cols, int rms)
{
  size_t r = blockIdx.x;
  const T *xr = x + r * cols;
  T *yr = y + r * cols;
  float s = 0, s2 = 0;
  for (long j = threadIdx.x; j < cols; j += THREADS) {
    float v = to_f(xr[j]);
    s += v;
    s2 += v * v;
  }
  s = block_sum(s);
  s2 = block_sum(s2);
  float mean = rms ? 0.0f : s / cols;
  float var = s2 / cols - mean * mean;
  float rstd = rsqrtf(var + 1e-5f);
  for (long j = threadIdx.x; j < cols; j += THREADS) yr[j] = from_f<T>((to_f(xr[j]) - mean) * rstd);
  if (stats && threadIdx.x == 0) {
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
}

/* dx = rstd (dy - mean(dy) - xhat mean(dy xhat)) (LayerNorm; RMSNorm drops mean(dy)) */
template <typename T>
__global__ void norm_bwd(const T *dy, const T *x, T *dx, long cols, int rms)
{
  size_t r = blockIdx.x;
  const T *dyr = dy + r * cols, *xr = x + r * cols;
  T *dxr = dx + r * cols;
  float s = 0, s2 = 0;
  for (long j = threadIdx.x; j < cols; j += THREADS) {
    float v = to_f(xr[j]);
    s += v;
    s2 += v * v;
  }
  s = block_sum(s);
  s2 = block_sum(s2);
  float mean = rms ? 0.0f : s / cols, rstd = rsqrtf(s2 / cols - mean * mean + 1e-5f);
  float sd = 0, sdx = 0;
  for (long j = threadIdx.x; j < cols; j += THREADS) {
    float g = to_f(dyr[j]), xh = (to_f(xr[j]) - mean) * rstd;
    sd += g;
    sdx += g * xh;
  }
  sd = rms ? 0.0f : block_sum(sd) / cols;
  sdx = block_sum(sdx) / cols;
  for (long j = threadIdx.x; j < cols; j += THREADS) {
    float g = to_f(dyr[j]), xh = (to_f(xr[j]) - mean) * rstd;
    dxr[j] = from_f<T>(rstd * (g - sd - xh * sdx));
  }
}

/* Scaled, causal: query i of a head (row % seq) sees keys 0..i. */
template <typename T>
__global__ void softmax_fwd(const T *x, T *y, long cols)
{
  size_t r = blockIdx.x;
  long q = (long)(r % (size_t)cols);
  const T *xr = x + r * cols;
  T *yr = y + r * cols;
  float scale = rsqrtf((float)cols), m = -INFINITY, s = 0;
  for (long j = threadIdx.x; j <= q; j += THREADS) m = fmaxf(m, to_f(xr[j]) * scale);
  m = block_max(m);
  for (long j = threadIdx.x; j <= q; j += THREADS) s += __expf(to_f(xr[j]) * scale - m);
  s = block_sum(s);
  for (long j = threadIdx.x; j < cols; j += THREADS)
    yr[j] = from_f<T>(j <= q ? __expf(to_f(xr[j]) * scale - m) / s : 0.0f);
}

/* dx = y (dy - sum(dy y)) */
template <typename T>
__global__ void softmax_bwd(const T *dy, const T *y, T *dx, long cols)
{
  size_t r = blockIdx.x;
  const T *dyr = dy + r * cols, *yr = y + r * cols;
  T *dxr = dx + r * cols;
  float s = 0;
  for (long j = threadIdx.x; j < cols; j += THREADS) s += to_f(dyr[j]) * to_f(yr[j]);
  s = block_sum(s);
  for (long j = threadIdx.x; j < cols; j += THREADS) {
    float yv = to_f(yr[j]);
    dxr[j] = from_f<T>(yv * (to_f(dyr[j]) - s));
  }
}

/* Cross-entropy of fp32 logits against target row % cols: loss = log sum exp - x_t. */
__global__ void xent_fwd(const float *x, float *loss, long cols)
{
  size_t r = blockIdx.x;
  const float *xr = x + r * cols;
  float m = -INFINITY, s = 0;
  for (long j = threadIdx.x; j < cols; j += THREADS) m = fmaxf(m, xr[j]);
  m = block_max(m);
  for (long j = threadIdx.x; j < cols; j += THREADS) s += __expf(xr[j] - m);
  s = block_sum(s);
  if (threadIdx.x == 0) loss[r] = logf(s) + m - xr[r % (size_t)cols];
}

template <typename T>
__global__ void xent_bwd(const float *x, T *dx, long cols)
{
  size_t r = blockIdx.x;
  const float *xr = x + r * cols;
  T *dxr = dx + r * cols;
  long target = (long)(r % (size_t)cols);
  float m = -INFINITY, s = 0;
  for (long j = threadIdx.x; j < cols; j += THREADS) m = fmaxf(m, xr[j]);
  m = block_max(m);
  for (long j = threadIdx.x; j < cols; j += THREADS) s += __expf(xr[j] - m);
  s = block_sum(s);
  for (long j = threadIdx.x; j < cols; j += THREADS)
    dxr[j] = from_f<T>(__expf(xr[j] - m) / s - (j == target ? 1.0f : 0.0f));
}

/* ---- element kernels: grid-stride loops */

#define FOR_EACH(i, n) \
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

__device__ __forceinline__ float gelu(float x)
{
  return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__device__ __forceinline__ float gelu_grad(float x)
{
  float u = 0.7978845608f * (x + 0.044715f * x * x * x), t = tanhf(u);
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * 0.7978845608f * (1.0f + 3.0f * 0.044715f * x * x);
}

template <typename T> __global__ void gelu_fwd(const T *x, T *y, size_t n)
{
  FOR_EACH(i, n) y[i] = from_f<T>(gelu(to_f(x[i])));
}

template <typename T> __global__ void gelu_bwd(const T *dy, const T *x, T *dx, size_t n)
{
  FOR_EACH(i, n) dx[i] = from_f<T>(to_f(dy[i]) * gelu_grad(to_f(x[i])));
}

template <typename T> __global__ void swiglu_fwd(const T *gu, T *y, T *silu, long cols, size_t n)
{
  FOR_EACH(i, n) {
    size_t r = i / cols, j = i % cols;
    float g = to_f(gu[r * 2 * cols + j]), u = to_f(gu[r * 2 * cols + cols + j]);
    float s = g / (1.0f + __expf(-g));
    silu[i] = from_f<T>(s);
    y[i] = from_f<T>(s * u);
  }
}

template <typename T>
__global__ void swiglu_bwd(const T *dy, const T *gu, const T *silu, T *dgu, long cols, size_t n)
{
  FOR_EACH(i, n) {
    size_t r = i / cols, j = i % cols;
    float g = to_f(gu[r * 2 * cols + j]), u = to_f(gu[r * 2 * cols + cols + j]);
    float d = to_f(dy[i]), sg = 1.0f / (1.0f + __expf(-g));
    dgu[r * 2 * cols + j] = from_f<T>(d * u * sg * (1.0f + g * (1.0f - sg)));
    dgu[r * 2 * cols + cols + j] = from_f<T>(d * to_f(silu[i]));
  }
}

/* Rotary embedding on pairs (2j, 2j + 1) of each row, the position being the row. */
template <typename T> __global__ void rope(const T *x, T *y, long cols, size_t n_pairs)
{
  FOR_EACH(i, n_pairs) {
    size_t r = i / (cols / 2), j = i % (cols / 2);
    float th = (float)r * __powf(10000.0f, -2.0f * (float)j / (float)cols), c, s;
    __sincosf(th, &s, &c);
    float a = to_f(x[r * cols + 2 * j]), b = to_f(x[r * cols + 2 * j + 1]);
    y[r * cols + 2 * j] = from_f<T>(a * c - b * s);
    y[r * cols + 2 * j + 1] = from_f<T>(a * s + b * c);
  }
}

template <typename T>
__global__ void dropout_fwd(const T *x, const T *res, T *y, uint8_t *mask, size_t n, uint32_t seed)
{
  FOR_EACH(i, n) {
    uint8_t keep = (hash32(((uint64_t)seed << 40) ^ i) & 0xffffffu) >= (uint32_t)(DROP_P * 16777216.0f);
    float v = keep ? to_f(x[i]) / (1.0f - DROP_P) : 0.0f;
    if (res) v += to_f(res[i]);
    mask[i] = keep;
    y[i] = from_f<T>(v);
  }
}

template <typename T> __global__ void dropout_bwd(const T *dy, const uint8_t *mask, T *dx, size_t n)
{
  FOR_EACH(i, n) dx[i] = from_f<T>(mask[i] ? to_f(dy[i]) / (1.0f - DROP_P) : 0.0f);
}

template <typename T> __global__ void add(const T *a, const T *b, T *y, size_t n)
{
  FOR_EACH(i, n) y[i] = from_f<T>(to_f(a[i]) + to_f(b[i]));
}

template <typename T> __global__ void copy(const T *a, T *y, size_t n)
{
  FOR_EACH(i, n) y[i] = a[i];
}

template <typename T>
__global__ void embed_fwd(const T *table, const T *pos, const int64_t *tok, T *y, long cols,
                          long table_rows, long seq, size_t n)
{
  FOR_EACH(i, n) {
    size_t t = i / cols, j = i % cols;
    int64_t id = tok[t] % table_rows;
    float v = to_f(table[(size_t)id * cols + j]);
    if (pos) v += to_f(pos[(t % (size_t)seq) * cols + j]);
    y[i] = from_f<T>(v);
  }
}

template <typename T>
__global__ void embed_bwd(const T *dy, const int64_t *tok, float *dtable, long cols, long table_rows,
                          size_t n)
{
  FOR_EACH(i, n) {
    size_t t = i / cols, j = i % cols;
    atomicAdd(&dtable[(size_t)(tok[t] % table_rows) * cols + j], to_f(dy[i]));
  }
}

template <typename T> __global__ void fill16(T *p, size_t n, uint32_t seed)
{
  FOR_EACH(i, n) p[i] = from_f<T>((float)(hash32(((uint64_t)seed << 40) ^ i) >> 8) / 8388608.0f - 1.0f);
}

__global__ void fill32(float *p, size_t n, uint32_t seed)
{
  FOR_EACH(i, n) p[i] = (float)(hash32(((uint64_t)seed << 40) ^ i) >> 8) / 8388608.0f - 1.0f;
}

__global__ void fill8(uint8_t *p, size_t n, uint32_t seed)
{
  FOR_EACH(i, n) p[i] = (uint8_t)hash32(((uint64_t)seed << 40) ^ i);
}

__global__ void fill_ids(int64_t *p, size_t n, long modulo, uint32_t seed)
{
  FOR_EACH(i, n) p[i] = (int64_t)(hash32(((uint64_t)seed << 40) ^ i) % (uint32_t)modulo);
}

static unsigned grid_for(size_t n)
{
  size_t b = (n + THREADS - 1) / THREADS;
  return (unsigned)(b < 65536 * 8 ? (b > 0 ? b : 1) : 65536 * 8);
}

template <typename T>
static void launch(const prof_op *o, void *const p[4], long table_rows, cudaStream_t st)
{
  const T *in0 = (const T *)p[0], *in1 = (const T *)p[1];
  T *out = (T *)p[2];
  size_t rows = (size_t)o->rows, cols = (size_t)o->cols, n = rows * cols;
  unsigned g = grid_for(n);
  switch (o->ew) {
  case PROF_EW_LAYERNORM:
  case PROF_EW_RMSNORM:
    norm_fwd<T><<<(unsigned)rows, THREADS, 0, st>>>(in0, out, (float *)p[3], o->cols,
                                                    o->ew == PROF_EW_RMSNORM);
    break;
  case PROF_EW_LAYERNORM_BWD:
  case PROF_EW_RMSNORM_BWD:
    norm_bwd<T><<<(unsigned)rows, THREADS, 0, st>>>(in0, in1, out, o->cols,
                                                    o->ew == PROF_EW_RMSNORM_BWD);
    break;
  case PROF_EW_BIAS_GELU: gelu_fwd<T><<<g, THREADS, 0, st>>>(in0, out, n); break;
  case PROF_EW_GELU_BWD: gelu_bwd<T><<<g, THREADS, 0, st>>>(in0, in1, out, n); break;
  case PROF_EW_SWIGLU: swiglu_fwd<T><<<g, THREADS, 0, st>>>(in0, out, (T *)p[3], o->cols, n); break;
  case PROF_EW_SWIGLU_BWD:
    swiglu_bwd<T><<<g, THREADS, 0, st>>>(in0, in1, (const T *)p[3], out, o->cols, n);
    break;
  case PROF_EW_ROPE: rope<T><<<grid_for(n / 2), THREADS, 0, st>>>(in0, out, o->cols, n / 2); break;
  case PROF_EW_SOFTMAX: softmax_fwd<T><<<(unsigned)rows, THREADS, 0, st>>>(in0, out, o->cols); break;
  case PROF_EW_SOFTMAX_BWD:
    softmax_bwd<T><<<(unsigned)rows, THREADS, 0, st>>>(in0, in1, out, o->cols);
    break;
  case PROF_EW_DROPOUT:
    dropout_fwd<T><<<g, THREADS, 0, st>>>(in0, in1, out, (uint8_t *)p[3], n, 7u);
    break;
  case PROF_EW_DROPOUT_BWD:
    dropout_bwd<T><<<g, THREADS, 0, st>>>(in0, (const uint8_t *)p[3], out, n);
    break;
  case PROF_EW_ADD: add<T><<<g, THREADS, 0, st>>>(in0, in1, out, n); break;
  case PROF_EW_COPY: copy<T><<<g, THREADS, 0, st>>>(in0, out, n); break;
  case PROF_EW_EMBED:
    embed_fwd<T><<<g, THREADS, 0, st>>>(in0, in1, (const int64_t *)p[3], out, o->cols,
                                        table_rows > 0 ? table_rows : 1, o->k > 0 ? o->k : 1, n);
    break;
  case PROF_EW_EMBED_BWD:
    embed_bwd<T><<<g, THREADS, 0, st>>>(in0, (const int64_t *)p[3], (float *)p[2], o->cols,
                                        table_rows > 0 ? table_rows : 1, n);
    break;
  case PROF_EW_XENT:
    xent_fwd<<<(unsigned)rows, THREADS, 0, st>>>((const float *)p[0], (float *)p[2], o->cols);
    break;
  case PROF_EW_XENT_BWD:
    xent_bwd<T><<<(unsigned)rows, THREADS, 0, st>>>((const float *)p[0], out, o->cols);
    break;
  }
}

extern "C" int prof_launch_ew(const prof_op *o, void *const p[4], long table_rows, int bf16,
                              void *stream)
{
  cudaStream_t st = (cudaStream_t)stream;
  if (bf16) launch<__nv_bfloat16>(o, p, table_rows, st);
  else launch<__half>(o, p, table_rows, st);
  return (int)cudaGetLastError();
}

extern "C" int prof_launch_fill(void *p, double elems, int elem_bytes, int bf16, long modulo,
                                unsigned seed, void *stream)
{
  cudaStream_t st = (cudaStream_t)stream;
  size_t n = (size_t)elems;
  unsigned g = grid_for(n);
  switch (elem_bytes) {
  case 1: fill8<<<g, THREADS, 0, st>>>((uint8_t *)p, n, seed); break;
  case 2:
    if (bf16) fill16<__nv_bfloat16><<<g, THREADS, 0, st>>>((__nv_bfloat16 *)p, n, seed);
    else fill16<__half><<<g, THREADS, 0, st>>>((__half *)p, n, seed);
    break;
  case 4: fill32<<<g, THREADS, 0, st>>>((float *)p, n, seed); break;
  default: fill_ids<<<g, THREADS, 0, st>>>((int64_t *)p, n, modulo > 0 ? modulo : 1, seed); break;
  }
  return (int)cudaGetLastError();
}
