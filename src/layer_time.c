/* layer_time.c -- the time of one layer on one device type (cost-model.md sections 1, 3
 * and 7.4, 7.10): profiled with interpolation in the micro-batch size, the
 * single-point TP split, or the analytic FLOP and TP all-reduce estimate; a profiled
 * time never below what the FLOPs take at the type's peak. The shape model's estimates
 * (hp_shape.h) arrive as series too, built by problem.c, and are read the same way. */
#include <math.h>

#include "internal.h"

static const hp_series *series_of(const hp_problem *p, int l, int k, int tp)
{
  if (tp < 1 || tp > p->max_tp || !p->series) return NULL;
  return p->series[hp__series_index(p, l, k, tp)];
}

int hp_layer_time_profiled(const hp_problem *p, int l, int k, int tp)
{
  const hp_series *s = series_of(p, l, k, tp);
  return s != NULL && !s->shape;
}

/* Linear interpolation between the bracketing points, extrapolation from the two
 * nearest outside them; needs n >= 2. Clamped at zero. */
static double points_interp(const int *mb, const double *y, int n, int m)
{
  int i;
  double x0, x1, y0, y1, v;
  for (i = 0; i < n; i++)
    if (mb[i] == m) return y[i];
  if (m < mb[0]) i = 0;
  else if (m > mb[n - 1]) i = n - 2;
  else for (i = 0; mb[i + 1] < m; i++) {}
  x0 = mb[i]; x1 = mb[i + 1];
  y0 = y[i]; y1 = y[i + 1];
  v = y0 + (y1 - y0) * ((double)m - x0) / (x1 - x0);
  return v > 0 ? v : 0;
}

static double series_interp(const hp_series *s, int m)
{
  return points_interp(s->mbs, s->seconds, s->n, m);
}

/* A memory figure over its own points: interpolated (clamped at 0), a single point
 * scaled in proportion to m (cost-model.md 7.20). */
static double mem_interp(const int *mb, const double *y, int n, int m)
{
  if (n == 1) return y[0] * m / mb[0];
  return points_interp(mb, y, n, m);
}

int hp__measured_mem(const hp_problem *p, int l, int k, int tp, int mbs, double *act,
                     double *work)
{
  const hp_series *s;
  int got = 0;
  if (!p->mem_measured || k < 0 || !(s = series_of(p, l, k, tp))) return 0;
  if (s->na > 0) { *act = mem_interp(s->amb, s->aval, s->na, mbs); got |= 1; }
  if (s->nw > 0) { *work = mem_interp(s->wmb, s->wval, s->nw, mbs); got |= 2; }
  return got;
}

static double measured_at(const hp_series *s, int m, int *found)
{
  for (int i = 0; i < s->n; i++)
    if (s->mbs[i] == m) { *found = 1; return s->seconds[i]; }
  *found = 0;
  return 0;
}

static double tp_comm_time(const hp_layer *ly, int tp, int mbs, double btp, double lattp)
{
  if (tp <= 1 || ly->tp_comm <= 0) return 0;
  return hp_cost_ring_allreduce(tp) * ly->tp_comm * mbs / btp + hp_cost_ring_latency(tp, lattp);
}

/* The profiled time: the measured point, or derived from the series (section 7.4). */
static double profiled_time(const hp_problem *p, const hp_series *s, const hp_layer *ly,
                            int l, int k, int tp, int tl, int mbs, double btp)
{
  if (s->n >= 2) return series_interp(s, mbs);

  /* A single measured point m0. */
  int m0 = s->mbs[0], found = 0;
  double t0 = s->seconds[0];
  if (mbs == m0) return t0;
  if (tp > 1) {
    const hp_series *s1 = series_of(p, l, k, 1);   /* measured, not the shape model's */
    double t1 = s1 && !s1->shape ? measured_at(s1, m0, &found) : 0;
    if (found) {
      double w = t1 / ((double)m0 * tl);
      double e;
      if (ly->tp_comm > 0) w += hp_cost_ring_allreduce(tp) * ly->tp_comm / btp;
      e = t0 - m0 * w;
      if (e < 0) e = 0;
      return e + mbs * w;
    }
  }
  return t0 * mbs / m0;
}

double hp_layer_time(const hp_problem *p, int l, int k, int tp, int mbs,
                     double btp, double lattp)
{
  const hp_layer *ly = &p->model->layers[l];
  const hp_devtype *ty = &p->cluster->types[k];
  int tl = ly->splittable ? tp : 1;
  const hp_series *s = series_of(p, l, k, tp);
  double t, least, peak = hp_shape_peak(p, k);   /* the model's GEMM precision's */

  if (!s)
    return ly->flops * mbs / (tl * peak * ty->eff)
           + tp_comm_time(ly, tp, mbs, btp, lattp);
  /* The measured points are checked against what the FLOPs take at the type's peak
   * (problem.c refuses a faster one); what is derived from them (interpolated,
   * extrapolated, split) is the spec's, clamped at zero only (cost-model.md 7.4). A profile
   * of other shapes taken knowingly (accept_profile_mismatch) is not checked point by
   * point, so its times are raised to the peak's instead (beyond rounding: a time at the
   * peak itself stands as it is). */
  t = profiled_time(p, s, ly, l, k, tp, tl, mbs, btp);
  if (!p->job.accept_profile_mismatch || s->shape) return t;
  least = ly->flops * mbs / (tl * peak);
  return t < least * (1 - 1e-9) ? least : t;
}
