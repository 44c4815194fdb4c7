/* prof_stats.c -- medians, the latency + size / bandwidth fit (also the fixed +
 * per-sample fit of layer times) and nccl-tests' bus-bandwidth factors (the ring
 * factors of the cost tables, hp_cost.h). */
#include <math.h>
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
