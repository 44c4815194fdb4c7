/* prof_mpi.h -- the MPI parts of hetplan-profile: which ranks share a host, the
 * bandwidth and latency matrix, and the NCCL collectives (which need MPI to hand out
 * NCCL's unique id). */
#ifndef HP_PROF_MPI_H
#define HP_PROF_MPI_H

#include <mpi.h>

#include "prof.h"

typedef struct prof_hosts {
  int rank, size;
  int n_hosts;
  int *host_of;        /* [size] host of each rank, numbered by first rank */
  char (*names)[MPI_MAX_PROCESSOR_NAME];   /* [n_hosts] */
  int *host_size;      /* [n_hosts] ranks on each host */
  int *device_of;      /* [size] device id of each rank (prof_device_order) */
  int *rank_of;        /* [size] rank of each device id */
  int local_rank;      /* this rank's index among its host's ranks (its GPU) */
  int shared_agrees;   /* 1 if MPI_Comm_split_type(SHARED) groups the ranks as the
                          processor names do (else the names won) */
  int simulated;       /* hosts made up by --simulate-hosts */
} prof_hosts;

/* Groups the ranks of comm by MPI_Get_processor_name, checked against
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). simulate > 0 instead spreads the ranks
 * round-robin over that many made-up hosts ("sim-host-0", ...), to exercise the
 * grouping on one machine. Collective; returns 0 or -1 with why. */
int prof_hosts_discover(MPI_Comm comm, int simulate, prof_hosts *h, char *why, size_t n);
void prof_hosts_free(prof_hosts *h);

typedef struct prof_matrix_opts {
  long bytes;          /* message size of the bandwidth test */
  int iters;           /* timed messages per direction */
  int lat_iters;       /* timed small round trips per direction */
} prof_matrix_opts;

/* Measures every ordered pair (a, b) of comm's ranks: bw[a * n + b] (bytes/s, a
 * sending; the median over iters of size / (time of a message and its 1-byte ack - the
 * ack's latency)) and lat[a * n + b] (s, half the median round trip of 8 bytes, a
 * starting). Pairs run slot by slot of the schedule, one slot at a time. Collective;
 * the matrices (rank order, n x n) are complete on rank 0. Returns 0 or -1 with why. */
int prof_matrix_measure(MPI_Comm comm, const prof_schedule *s, const prof_matrix_opts *o,
                        double *bw, double *lat, char *why, size_t n);

typedef struct prof_nccl_opts {
  double min_bytes, max_bytes;   /* sizes min, 4 min, 16 min, ... up to max */
  int warmup, iters;
} prof_nccl_opts;

/* Times all-reduce, all-gather, reduce-scatter and send/recv (a ring: each rank sends to
 * the next) over comm's ranks, every rank with its GPU open, for each size: the median
 * over iters of the slowest rank's time (CUDA events). Sizes follow nccl-tests: the
 * all-reduce and send/recv buffer, the all-gather output, the reduce-scatter input.
 * ops: NULL for all four. Collective; results appended to *out (malloc'd, *n_out
 * entries) on every rank. Returns 0, or -1 with why (also when built without CUDA). */
int prof_nccl_run(MPI_Comm comm, const prof_gpu *g, const char *const *ops, int n_ops,
                  const prof_nccl_opts *o, prof_coll **out, int *n_out, char *why, size_t n);

#endif
