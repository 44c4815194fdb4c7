/* prof_matrix.c -- the bandwidth and latency matrix, mpiGraph style: every ordered pair,
 * large messages, several iterations, medians; pairs scheduled by prof_schedule.c so
 * that the pairs timed together share no rank and no host network link. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof_mpi.h"

enum { TAG_LAT = 11, TAG_DATA = 12, TAG_ACK = 13 };

/* Half the median round trip of 8 bytes, `me` starting; `peer` echoes. */
static double ping_latency(MPI_Comm comm, int me_starts, int peer, int iters, double *tmp)
{
  char b[8] = { 0 };
  for (int i = -2; i < iters; i++) {      /* two unmeasured round trips */
    if (me_starts) {
      double t0 = MPI_Wtime();
      MPI_Send(b, 8, MPI_CHAR, peer, TAG_LAT, comm);
      MPI_Recv(b, 8, MPI_CHAR, peer, TAG_LAT, comm, MPI_STATUS_IGNORE);
      if (i >= 0) tmp[i] = (MPI_Wtime() - t0) / 2;
    } else {
      MPI_Recv(b, 8, MPI_CHAR, peer, TAG_LAT, comm, MPI_STATUS_IGNORE);
      MPI_Send(b, 8, MPI_CHAR, peer, TAG_LAT, comm);
    }
  }
  return me_starts ? prof_median(tmp, iters) : 0;
}

/* Median bandwidth of `bytes` messages from the sender, each acknowledged by 1 byte. */
static double send_bandwidth(MPI_Comm comm, int sending, int peer, char *buf, long bytes,
                             int iters, double lat, double *tmp)
{
  char ack = 0;
  for (int i = -1; i < iters; i++) {      /* one unmeasured message */
    if (sending) {
      double t0 = MPI_Wtime(), dt;
      MPI_Send(buf, (int)bytes, MPI_CHAR, peer, TAG_DATA, comm);
      MPI_Recv(&ack, 1, MPI_CHAR, peer, TAG_ACK, comm, MPI_STATUS_IGNORE);
      dt = MPI_Wtime() - t0;
      if (dt - lat > dt / 2) dt -= lat;   /* the ack's latency, unless it would dominate */
      if (i >= 0) tmp[i] = (double)bytes / dt;
    } else {
      MPI_Recv(buf, (int)bytes, MPI_CHAR, peer, TAG_DATA, comm, MPI_STATUS_IGNORE);
      MPI_Send(&ack, 1, MPI_CHAR, peer, TAG_ACK, comm);
    }
  }
  return sending ? prof_median(tmp, iters) : 0;
}

int prof_matrix_measure(MPI_Comm comm, const prof_schedule *s, const prof_matrix_opts *o,
                        double *bw, double *lat, char *why, size_t n)
{
  int rank, size, ok = 1, most = o->iters > o->lat_iters ? o->iters : o->lat_iters;
  double *mine_bw, *mine_lat, *tmp;
  char *buf;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (o->bytes < 1 || o->bytes > 1L << 30 || o->iters < 1 || o->lat_iters < 1) {
    snprintf(why, n, "matrix: message size %ld (1 B to 1 GiB) and iterations %d, %d (>= 1)",
             o->bytes, o->iters, o->lat_iters);
    return -1;
  }
  mine_bw = calloc((size_t)size * size, sizeof *mine_bw);
  mine_lat = calloc((size_t)size * size, sizeof *mine_lat);
  tmp = calloc((size_t)most, sizeof *tmp);
  buf = malloc((size_t)o->bytes);
  if (!mine_bw || !mine_lat || !tmp || !buf) ok = 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) {
    snprintf(why, n, "matrix: out of memory for %ld-byte messages", o->bytes);
    free(mine_bw); free(mine_lat); free(tmp); free(buf);
    return -1;
  }
  memset(buf, 1, (size_t)o->bytes);       /* touch the pages before timing */
  for (int sl = 0; sl < s->n_slots; sl++) {
    MPI_Barrier(comm);
    for (int p = s->slot_start[sl]; p < s->slot_start[sl + 1]; p++) {
      int a = s->pairs[p].a, b = s->pairs[p].b, peer;
      double l;
      if (rank != a && rank != b) continue;
      peer = rank == a ? b : a;
      /* latency a -> b and b -> a, then bandwidth a -> b and b -> a */
      l = ping_latency(comm, rank == a, peer, o->lat_iters, tmp);
      if (rank == a) mine_lat[(size_t)a * size + b] = l;
      l = ping_latency(comm, rank == b, peer, o->lat_iters, tmp);
      if (rank == b) mine_lat[(size_t)b * size + a] = l;
      l = send_bandwidth(comm, rank == a, peer, buf, o->bytes, o->iters,
                         rank == a ? mine_lat[(size_t)a * size + b] : 0, tmp);
      if (rank == a) mine_bw[(size_t)a * size + b] = l;
      l = send_bandwidth(comm, rank == b, peer, buf, o->bytes, o->iters,
                         rank == b ? mine_lat[(size_t)b * size + a] : 0, tmp);
      if (rank == b) mine_bw[(size_t)b * size + a] = l;
    }
  }
  /* each entry was measured by exactly one rank, the others hold 0 */
  MPI_Reduce(mine_bw, bw, size * size, MPI_DOUBLE, MPI_SUM, 0, comm);
  MPI_Reduce(mine_lat, lat, size * size, MPI_DOUBLE, MPI_SUM, 0, comm);
  free(mine_bw); free(mine_lat); free(tmp); free(buf);
  return 0;
}
