/* prof_stats.c -- medians, the latency + size / bandwidth fit, nccl-tests' bus-bandwidth
 * factors (the ring factors of the cost tables, hp_cost.h), and the fits of a run: each
 * collective's latency and bus bandwidth, each layer's fixed + per-sample time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"

static int cmp_double(const void *pa, const void *pb)
{
  double a = *(const double *)pa, b = *(const double *)pb;
  return a < b ? -1 : a > b;
}

double prof_median(double *v, int n)
{
  if (n <= 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Weighted least squares of y = a + b x with weights w = 1 / y^2: relative errors, so
 * that the small sizes fix the latency and the large ones the bandwidth. */
int prof_fit_line(const double *x, const double *y, int n, double *a, double *b)
{
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, det;
  int distinct = 0;
  for (int i = 0; i < n; i++) {
    double w;
    if (!(y[i] > 0) || !isfinite(y[i]) || !isfinite(x[i])) return -1;
    w = 1 / (y[i] * y[i]);
    sw += w;
    sx += w * x[i];
    sy += w * y[i];
    sxx += w * x[i] * x[i];
    sxy += w * x[i] * y[i];
    if (i > 0 && x[i] != x[0]) distinct = 1;
  }
  if (n < 2 || !distinct) return -1;
  det = sw * sxx - sx * sx;
  if (!(det > 0)) return -1;
  *b = (sw * sxy - sx * sy) / det;
  *a = (sy - *b * sx) / sw;
  if (*a < 0) {               /* through the origin: b = sum w x y / sum w x^2 */
    *a = 0;
    *b = sxy / sxx;
  }
  return *b > 0 ? 0 : -1;
}

double prof_bus_factor(const char *op, int n)
{
  if (n < 1) return 0;
  if (!strcmp(op, "allreduce")) return hp_cost_ring_allreduce(n);
  if (!strcmp(op, "allgather") || !strcmp(op, "reducescatter")) return hp_cost_ring_share(n);
  if (!strcmp(op, "sendrecv")) return 1;
  return 0;
}

int prof_fit_collective(const prof_coll *c, int nc, const char *op, int ranks, prof_coll_fit *f)
{
  double x[64], y[64], a, b;
  int k = 0;
  for (int i = 0; i < nc && k < 64; i++)
    if (!strcmp(c[i].op, op) && c[i].ranks == ranks) {
      x[k] = c[i].bytes;
      y[k++] = c[i].seconds;
    }
  if (prof_fit_line(x, y, k, &a, &b)) return -1;
  memset(f, 0, sizeof *f);
  snprintf(f->op, sizeof f->op, "%s", op);
  f->ranks = ranks;
  f->points = k;
  f->lat = a;
  f->bus_bw = prof_bus_factor(op, ranks) / b;
  return 0;
}

int prof_fit_layers(prof_run *r)
{
  r->fits = calloc((size_t)(r->n_points + 1), sizeof *r->fits);
  if (!r->fits) return -1;
  for (int i = 0; i < r->n_points; i++) {
    const prof_point *p = &r->points[i];
    double x[PROF_MAX_LIST * 2], y[PROF_MAX_LIST * 2], a, b;
    int k = 0, first = 1;
    for (int q = 0; q < i && first; q++)
      first = !(r->points[q].type == p->type && r->points[q].tp == p->tp &&
                !strcmp(r->points[q].kind, p->kind));
    if (!first) continue;
    for (int q = i; q < r->n_points && k < PROF_MAX_LIST * 2; q++)
      if (r->points[q].type == p->type && r->points[q].tp == p->tp &&
          !strcmp(r->points[q].kind, p->kind)) {
        x[k] = r->points[q].mbs;
        y[k++] = r->points[q].seconds;
      }
    if (prof_fit_line(x, y, k, &a, &b)) continue;
    {
      prof_line_fit *f = &r->fits[r->n_fits++];
      snprintf(f->kind, sizeof f->kind, "%s", p->kind);
      f->type = p->type;
      f->tp = p->tp;
      f->points = k;
      f->fixed = a;
      f->per_sample = b;
    }
  }
  return 0;
}
