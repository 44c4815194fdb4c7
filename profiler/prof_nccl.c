/* prof_nccl.c -- NCCL collectives over a communicator's GPUs, as nccl-tests times them:
 * `iters` back-to-back operations between two CUDA events, the average per operation,
 * the slowest rank's figure; three such rounds and their median. Float data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "prof_mpi.h"

#define ROUNDS 3

static const char *const all_ops[] = { "allreduce", "allgather", "reducescatter", "sendrecv" };

/* Enqueues one operation of `bytes` (nccl-tests' size) and returns the bytes it stands
 * for after rounding to whole floats per rank, or -1 on an NCCL error. */
static double enqueue(const char *op, double bytes, void *sb, void *rb, int rank, int size,
                      ncclComm_t nc, cudaStream_t st, ncclResult_t *res)
{
  size_t count;
  if (!strcmp(op, "allreduce")) {
    count = (size_t)(bytes / 4);
    *res = ncclAllReduce(sb, rb, count, ncclFloat, ncclSum, nc, st);
    return 4.0 * count;
  }
  if (!strcmp(op, "allgather")) {       /* bytes: the gathered output */
    count = (size_t)(bytes / 4 / size);
    *res = ncclAllGather(sb, rb, count, ncclFloat, nc, st);
    return 4.0 * count * size;
  }
  if (!strcmp(op, "reducescatter")) {   /* bytes: the input */
    count = (size_t)(bytes / 4 / size);
    *res = ncclReduceScatter(sb, rb, count, ncclFloat, ncclSum, nc, st);
    return 4.0 * count * size;
  }
  count = (size_t)(bytes / 4);          /* sendrecv: a ring, each rank to the next */
  if ((*res = ncclGroupStart()) != ncclSuccess) return -1;
  *res = ncclSend(sb, count, ncclFloat, (rank + 1) % size, nc, st);
  if (*res == ncclSuccess) *res = ncclRecv(rb, count, ncclFloat, (rank + size - 1) % size, nc, st);
  {
    ncclResult_t e = ncclGroupEnd();
    if (*res == ncclSuccess) *res = e;
  }
  return 4.0 * count;
}

/* Makes room in *out for every (op, size) of the run; 0 when out of memory. */
static int grow(prof_coll **out, int have, int n_ops, const prof_nccl_opts *o)
{
  int sizes = 0;
  prof_coll *p;
  for (double b = o->min_bytes; b <= o->max_bytes; b *= 4) sizes++;
  p = realloc(*out, (size_t)(have + n_ops * sizes + 1) * sizeof *p);
  if (!p) return 0;
  *out = p;
  return 1;
}

int prof_nccl_run(MPI_Comm comm, const prof_gpu *g, const char *const *ops, int n_ops,
                  const prof_nccl_opts *o, prof_coll **out, int *n_out, char *why, size_t n)
{
  int rank, size, ok = 1, failed = 0;
  ncclUniqueId id;
  ncclComm_t nc = NULL;
  ncclResult_t res = ncclSuccess;
  cudaStream_t st = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  void *sb = NULL, *rb = NULL;
  char msg[256] = "";

  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (!ops) { ops = all_ops; n_ops = 4; }
  if (size < 2) {
    snprintf(why, n, "one rank: nothing to communicate");
    return -1;
  }
  if (rank == 0 && (res = ncclGetUniqueId(&id)) != ncclSuccess) ok = 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  if (!ok) {
    snprintf(why, n, "ncclGetUniqueId: %s", ncclGetErrorString(res));
    return -1;
  }
  MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm);
  if (cudaSetDevice(g->device) != cudaSuccess ||
      cudaMalloc(&sb, (size_t)o->max_bytes) != cudaSuccess ||
      cudaMalloc(&rb, (size_t)o->max_bytes) != cudaSuccess ||
      cudaMemset(sb, 0, (size_t)o->max_bytes) != cudaSuccess ||
      cudaStreamCreate(&st) != cudaSuccess || cudaEventCreate(&e0) != cudaSuccess ||
      cudaEventCreate(&e1) != cudaSuccess) {
    snprintf(msg, sizeof msg, "rank %d: cannot set up %.0f-byte buffers on GPU %d", rank,
             o->max_bytes, g->device);
    ok = 0;
  } else if (!grow(out, *n_out, n_ops, o)) {
    snprintf(msg, sizeof msg, "rank %d: out of memory", rank);
    ok = 0;
  } else if ((res = ncclCommInitRank(&nc, size, id, rank)) != ncclSuccess) {
    snprintf(msg, sizeof msg, "rank %d: ncclCommInitRank: %s", rank, ncclGetErrorString(res));
    nc = NULL;
    ok = 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) {
    snprintf(why, n, "%s", msg[0] ? msg : "another rank failed to set up NCCL");
    goto done;
  }
  for (int k = 0; k < n_ops && !failed; k++)
    for (double bytes = o->min_bytes; bytes <= o->max_bytes && !failed; bytes *= 4) {
      double eff = 0, round_t[ROUNDS];
      prof_coll *c;
      if (bytes < 4.0 * size) continue;
      for (int r = -1; r < ROUNDS && !failed; r++) {   /* round -1: the warm-up */
        int reps = r < 0 ? o->warmup : o->iters;
        float ms = 0;
        double t;
        MPI_Barrier(comm);
        cudaEventRecord(e0, st);
        for (int i = 0; i < reps && res == ncclSuccess; i++)
          eff = enqueue(ops[k], bytes, sb, rb, rank, size, nc, st, &res);
        cudaEventRecord(e1, st);
        if (res != ncclSuccess || cudaEventSynchronize(e1) != cudaSuccess) {
          snprintf(msg, sizeof msg, "rank %d: %s of %.0f bytes: %s", rank, ops[k], bytes,
                   res != ncclSuccess ? ncclGetErrorString(res) : "CUDA error");
          failed = 1;
        }
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
        if (failed || r < 0) continue;
        cudaEventElapsedTime(&ms, e0, e1);
        t = ms * 1e-3 / (reps > 0 ? reps : 1);
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
        round_t[r] = t;
      }
      if (failed) break;
      c = &(*out)[(*n_out)++];        /* room made by grow() */
      memset(c, 0, sizeof *c);
      snprintf(c->op, sizeof c->op, "%s", ops[k]);
      c->ranks = size;
      c->bytes = eff;
      c->seconds = prof_median(round_t, ROUNDS);
    }
  if (failed) snprintf(why, n, "%s", msg[0] ? msg : "an NCCL operation failed on another rank");
done:
  if (nc) ncclCommDestroy(nc);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (st) cudaStreamDestroy(st);
  if (sb) cudaFree(sb);
  if (rb) cudaFree(rb);
  return ok && !failed ? 0 : -1;
}
