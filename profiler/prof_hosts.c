/* prof_hosts.c -- which ranks share a host: MPI_Get_processor_name gathered from every
 * rank, checked against MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); the device numbering
 * follows (hosts in order of their first rank). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof_mpi.h"

void prof_hosts_free(prof_hosts *h)
{
  free(h->host_of);
  free(h->names);
  free(h->host_size);
  free(h->device_of);
  free(h->rank_of);
  memset(h, 0, sizeof *h);
}

int prof_hosts_discover(MPI_Comm comm, int simulate, prof_hosts *h, char *why, size_t n)
{
  char (*all)[MPI_MAX_PROCESSOR_NAME] = NULL;
  char me[MPI_MAX_PROCESSOR_NAME];
  int len = 0, ok = 1, shared_leader, *leaders = NULL;
  MPI_Comm local;

  memset(h, 0, sizeof *h);
  MPI_Comm_rank(comm, &h->rank);
  MPI_Comm_size(comm, &h->size);
  memset(me, 0, sizeof me);
  MPI_Get_processor_name(me, &len);
  if (simulate > 0) snprintf(me, sizeof me, "sim-host-%d", h->rank % simulate);
  h->simulated = simulate > 0;

  all = calloc((size_t)h->size, sizeof *all);
  h->host_of = calloc((size_t)h->size, sizeof *h->host_of);
  h->device_of = calloc((size_t)h->size, sizeof *h->device_of);
  h->rank_of = calloc((size_t)h->size, sizeof *h->rank_of);
  h->host_size = calloc((size_t)h->size, sizeof *h->host_size);
  h->names = calloc((size_t)h->size, sizeof *h->names);
  leaders = calloc((size_t)h->size, sizeof *leaders);
  if (!all || !h->host_of || !h->device_of || !h->rank_of || !h->host_size || !h->names ||
      !leaders)
    ok = 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) {
    snprintf(why, n, "out of memory grouping %d ranks by host", h->size);
    free(all);
    free(leaders);
    prof_hosts_free(h);
    return -1;
  }
  MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                comm);
  for (int r = 0; r < h->size; r++) {
    int k;
    for (k = 0; k < h->n_hosts; k++)
      if (!strncmp(all[r], h->names[k], MPI_MAX_PROCESSOR_NAME)) break;
    if (k == h->n_hosts) memcpy(h->names[h->n_hosts++], all[r], MPI_MAX_PROCESSOR_NAME);
    h->host_of[r] = k;
  }
  prof_device_order(h->size, h->host_of, h->device_of, h->rank_of, h->host_size);
  for (int r = 0; r < h->rank; r++) h->local_rank += h->host_of[r] == h->host_of[h->rank];

  /* The shared-memory grouping names each rank's node leader (its lowest rank); the
   * names agree if every rank's leader is the first rank of its named host. */
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, h->rank, MPI_INFO_NULL, &local);
  MPI_Allreduce(&h->rank, &shared_leader, 1, MPI_INT, MPI_MIN, local);
  MPI_Comm_free(&local);
  MPI_Allgather(&shared_leader, 1, MPI_INT, leaders, 1, MPI_INT, comm);
  h->shared_agrees = 1;
  for (int r = 0; r < h->size; r++) {
    int first = 0;
    while (h->host_of[first] != h->host_of[r]) first++;
    if (leaders[r] != first) h->shared_agrees = 0;
  }
  free(all);
  free(leaders);
  return 0;
}
