/* prof_gpu_stub.c -- the GPU parts of a build without the CUDA toolkit: every GPU step
 * says it is skipped and why; the MPI matrix still runs. */
#include <stdio.h>
#include <string.h>

#include "prof_mpi.h"

#define NOT_BUILT "built without the CUDA toolkit (no cuda_runtime.h under CUDA_HOME at build " \
                  "time: rebuild with CUDA_HOME=/path/to/cuda)"

int prof_gpu_built(void) { return 0; }

int prof_gpu_open(int local_rank, prof_gpu *g, char *why, size_t n)
{
  (void)local_rank;
  memset(g, 0, sizeof *g);
  snprintf(why, n, "%s", NOT_BUILT);
  return 0;
}

int prof_gpu_time_layer(const prof_gpu *g, const prof_layer *ly, int warmup, int reps,
                        prof_layer_time *out, char *why, size_t n)
{
  (void)g; (void)ly; (void)warmup; (void)reps;
  memset(out, 0, sizeof *out);
  snprintf(why, n, "%s", NOT_BUILT);
  return -1;
}

int prof_gpu_measure_memory(const prof_gpu *g, const prof_layer *ly, double *act,
                            double *work, char *why, size_t n)
{
  (void)g; (void)ly;
  *act = *work = 0;
  snprintf(why, n, "%s", NOT_BUILT);
  return -1;
}

double prof_gpu_gemm_rate(const prof_gpu *g, int n, int reps)
{
  (void)g; (void)n; (void)reps;
  return 0;
}

int prof_nccl_run(MPI_Comm comm, const prof_gpu *g, const char *const *ops, int n_ops,
                  const prof_nccl_opts *o, prof_coll **out, int *n_out, char *why, size_t n)
{
  (void)comm; (void)g; (void)ops; (void)n_ops; (void)o; (void)out; (void)n_out;
  snprintf(why, n, "%s", NOT_BUILT);
  return -1;
}
