/* prof_schedule.c -- which rank pairs measure their link together: a round-robin
 * tournament (circle method: n - 1 rounds of n / 2 disjoint pairs), each round split so
 * that a host's network link carries one inter-host pair at a time; and the device
 * numbering of the ranks (hosts in order, as a cluster file numbers devices). */
#include <stdlib.h>

#include "prof.h"

void prof_schedule_free(prof_schedule *s)
{
  free(s->slot_start);
  free(s->pairs);
  s->slot_start = NULL;
  s->pairs = NULL;
  s->n_slots = s->n_pairs = 0;
}

static int host(const int *host_of, int r) { return host_of ? host_of[r] : r; }

/* Whether pair p may join the pairs q[0..n-1] of a slot: an inter-host pair may not
 * share a host with another inter-host pair of the slot. */
static int fits_slot(const prof_pair *p, const prof_pair *q, int n, const int *host_of)
{
  int ha = host(host_of, p->a), hb = host(host_of, p->b);
  if (ha == hb) return 1;
  for (int i = 0; i < n; i++) {
    int qa = host(host_of, q[i].a), qb = host(host_of, q[i].b);
    if (qa == qb) continue;
    if (qa == ha || qa == hb || qb == ha || qb == hb) return 0;
  }
  return 1;
}

int prof_schedule_build(int n, const int *host_of, prof_schedule *out)
{
  int m = n + (n % 2);                  /* with a bye when n is odd */
  int rounds = m - 1, max_pairs = n * (n - 1) / 2;
  prof_pair *round = NULL, *left = NULL;
  out->n_slots = out->n_pairs = 0;
  out->pairs = calloc((size_t)(max_pairs > 0 ? max_pairs : 1), sizeof *out->pairs);
  out->slot_start = calloc((size_t)(max_pairs + 1), sizeof *out->slot_start);
  round = calloc((size_t)(m / 2 + 1), sizeof *round);
  left = calloc((size_t)(m / 2 + 1), sizeof *left);
  if (!out->pairs || !out->slot_start || !round || !left) {
    free(round);
    free(left);
    prof_schedule_free(out);
    return -1;
  }
  if (n < 2) { free(round); free(left); return 0; }
  for (int r = 0; r < rounds; r++) {
    int np = 0, nl;
    /* circle method: m - 1 stays, the others rotate */
    for (int i = 0; i < m / 2; i++) {
      int a = i == 0 ? m - 1 : (r + i) % (m - 1);
      int b = (r + m - 1 - i) % (m - 1);
      if (i == 0) b = r % (m - 1);
      if (a >= n || b >= n) continue;   /* the bye */
      round[np].a = a < b ? a : b;
      round[np].b = a < b ? b : a;
      np++;
    }
    /* greedy split into slots */
    while (np > 0) {
      int start = out->n_pairs;
      nl = 0;
      for (int i = 0; i < np; i++) {
        if (fits_slot(&round[i], out->pairs + start, out->n_pairs - start, host_of))
          out->pairs[out->n_pairs++] = round[i];
        else
          left[nl++] = round[i];
      }
      out->slot_start[out->n_slots++] = start;
      for (int i = 0; i < nl; i++) round[i] = left[i];
      np = nl;
    }
  }
  out->slot_start[out->n_slots] = out->n_pairs;
  free(round);
  free(left);
  return 0;
}

int prof_device_order(int n, const int *host_of, int *device_of, int *rank_of, int *host_size)
{
  int n_hosts = 0, next = 0;
  for (int r = 0; r < n; r++)
    if (host_of[r] + 1 > n_hosts) n_hosts = host_of[r] + 1;
  for (int h = 0; h < n_hosts; h++) host_size[h] = 0;
  for (int h = 0; h < n_hosts; h++)
    for (int r = 0; r < n; r++)
      if (host_of[r] == h) {
        device_of[r] = next;
        rank_of[next++] = r;
        host_size[h]++;
      }
  return n_hosts;
}
