/* pattern_shard.c -- the sharding options of one stage of the pattern DP (pattern_dp.c),
 * over every mode of the job's list: dp, zero1, zero2, zdp (cost-model.md 3, 4).
 *
 * A stage's parameters, gradients and optimizer state per device are each proportional to
 * P_l / t_l with one constant per model, so what a mode assignment costs depends only on
 * the fraction x_m of the stage's parameter mass in each mode m (sum x_m = 1), up to terms
 * the bound leaves out (the gather buffer, which only adds memory; the slices' latencies,
 * which only add time). With W, G the stage's parameter and gradient bytes (sum of
 * param_bytes P / t_l and grad_bytes P / t_l), f = (dp - 1) / dp and B the kind's bound
 * on the replica-group bandwidth:
 *   memory saved against all dp:  sum_m x_m save_m (save_m = S_dp - S_m, the states);
 *   per micro-batch, in the stage time (Z and Zr):
 *     dt = f (G x_zero2 + (2 W + G) x_zdp) / B  (+ (dp-1) latdp when x_zero2 + x_zdp > 0);
 *   at the end, red + gat + U (T >= max_s red_s + step + max_s gat_s >= max_s (red_s +
 *   gat_s + U_s), U_s the stage's own step on its slowest memory, cost-model.md 3):
 *     q  = f (2 G x_dp + (G + W) x_zero1 + W x_zero2) / B + 2 (dp-1) latdp
 *          + upd (x_dp + (1 - x_dp) / dp) / hbm
 *   (red, the first line, is 0 under grad_sync overlap, where T >= max_r T[r] + step +
 *   gat; upd is the stage's update bytes, hbm the least hbm_gbs of the kind's classes,
 *   each of which holds a device of the stage; no hbm: no step).
 * Both are linear in x, and the assignments that fit form a polytope: the simplex cut by
 * the memory row. Its vertices are the pure modes that fit and, on each edge between a
 * mode that fits and one that does not, the mix that fills the memory exactly. The image
 * of the polytope is the convex hull of the vertices' images.
 *
 * The DP adds dt to the stage's time (so to its period, times gas - 1, and to the sum S)
 * and q to the maximum Q. So an option (dt', q') is no worse than (dt, q) in every
 * completion when dt' <= dt and dt' + q' <= dt + q (the exchange of pattern_dp.c: a
 * larger dt raises M and S, a smaller q lowers the maximum Q by at most as much). The
 * options that matter are then the lower-left convex hull of the images in the
 * coordinates (a, b) = (dt, dt + q). A hull edge is a continuum of assignments; each is
 * covered by a *corner*: the edge is cut into SHARD_STEPS pieces, and the piece from
 * point u to point v (a rising, b falling) gives the option (a_u, b_v), no worse than any
 * point of the piece. So every assignment that fits has an option no worse than it, and
 * the DP's bound holds over every mode of the list (each corner is at most 1/SHARD_STEPS
 * of its edge below it). A single hull point is one exact option: with the modes dp and
 * zdp and grad_bytes <= 2 param_bytes, the least zdp fraction that fits, as before.
 *
 * The latency (dp-1) latdp of Zr is added to a corner's dt only where a_u > 0: an
 * assignment with a > 0 has some zero2 or zdp layer (no other mode costs the pipeline
 * anything), so it pays the latency; one with a = 0 is covered by a corner with a_u = 0
 * (the hull's first point), which does not add it. */
#include <math.h>
#include <stdlib.h>

#include "search.h"

/* Pieces per hull edge. More: a bound closer to the hull, and as many more DP options. */
#define SHARD_STEPS 4

typedef struct spoint { double a, b; } spoint;

static int by_a(const void *x, const void *y)
{
  const spoint *p = x, *q = y;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  return (p->b > q->b) - (p->b < q->b);
}

/* Whether b lies on or above the segment from a to c (a.a < b.a < c.a): then it is not a
 * vertex of the lower hull. */
static int not_below(spoint a, spoint b, spoint c)
{
  return (b.b - a.b) * (c.a - a.a) >= (c.b - a.b) * (b.a - a.a);
}

int hp__shard_options(const hp_shard_stage *st, hp_shard_opt *out, int max)
{
  double f = st->dp > 1 ? hp_cost_ring_share(st->dp) : 0, B = st->bdp;
  double mem[HP_N_SHARD], dt[HP_N_SHARD], q[HP_N_SHARD];
  double qlat = st->overlap || st->dp <= 1 ? 0 : hp_cost_ring_latency(st->dp, st->latdp);
  double dtlat = st->dp > 1 ? (double)(st->dp - 1) * st->latdp : 0;
  spoint pt[HP_N_SHARD + HP_N_SHARD * HP_N_SHARD], hull[HP_N_SHARD + HP_N_SHARD * HP_N_SHARD];
  int n = 0, h = 0, k = 0;
  unsigned modes = st->dp > 1 ? st->modes : 1u << HP_SHARD_DP;  /* dp = 1: all alike (7.1) */
  for (int m = 0; m < HP_N_SHARD; m++) {
    mem[m] = st->mem0 - (st->dp > 1 ? st->save[m] : 0);
    dt[m] = q[m] = 0;
    if (st->dp <= 1 || !(B > 0)) continue;
    double red = 0, gat = 0;
    switch (m) {
    case HP_SHARD_DP: red = 2 * f * st->G / B; break;
    case HP_SHARD_ZERO1: red = f * st->G / B; gat = f * st->W / B; break;
    case HP_SHARD_ZERO2: dt[m] = f * st->G / B; gat = f * st->W / B; break;
    default: dt[m] = f * (2 * st->W + st->G) / B; break;
    }
    q[m] = (st->overlap ? 0 : red) + gat;
  }
  for (int m = 0; m < HP_N_SHARD && st->hbm > 0; m++)   /* the step: sharded but in dp */
    q[m] += st->upd / (m == HP_SHARD_DP || st->dp <= 1 ? 1 : st->dp) / st->hbm;
  /* the vertices: pure modes that fit, and the mixes that fill the memory exactly */
  for (int m = 0; m < HP_N_SHARD; m++)
    if ((modes >> m & 1u) && mem[m] <= st->cap) pt[n++] = (spoint){ dt[m], dt[m] + q[m] };
  for (int u = 0; u < HP_N_SHARD; u++)
    for (int v = 0; v < HP_N_SHARD; v++) {
      double al, a, qq;
      if (!(modes >> u & 1u) || !(modes >> v & 1u) || !(mem[u] <= st->cap) || !(mem[v] > st->cap))
        continue;
      al = (mem[v] - st->cap) / (mem[v] - mem[u]);   /* the fraction in u, in (0, 1] */
      a = al * dt[u] + (1 - al) * dt[v];
      qq = al * q[u] + (1 - al) * q[v];
      pt[n++] = (spoint){ a, a + qq };
    }
  if (n == 0) return 0;                /* nothing fits, even the most sharded mode */
  qsort(pt, (size_t)n, sizeof *pt, by_a);
  /* the Pareto points (b falling as a rises), then their lower convex hull */
  for (int i = 0; i < n; i++) {
    if (h > 0 && pt[i].b >= hull[h - 1].b) continue;
    while (h >= 2 && not_below(hull[h - 2], hull[h - 1], pt[i])) h--;
    hull[h++] = pt[i];
  }
  if (h == 1 || max < 2) {
    out[0] = (hp_shard_opt){ hull[0].a + (hull[0].a > 0 ? dtlat : 0), hull[0].b - hull[0].a + qlat };
    if (max < 2 && h > 1) {            /* no room for corners: the componentwise least */
      out[0].dt = hull[0].a + (hull[0].a > 0 ? dtlat : 0);
      out[0].q = qlat;
      for (int i = 0; i < h; i++)
        if (hull[i].b - hull[i].a < out[0].q - qlat) out[0].q = hull[i].b - hull[i].a + qlat;
    }
    return 1;
  }
  for (int i = 0; i + 1 < h; i++)
    for (int j = 0; j < SHARD_STEPS && k < max - 1; j++) {
      double a = hull[i].a + (hull[i + 1].a - hull[i].a) * j / SHARD_STEPS;
      double b = hull[i].b + (hull[i + 1].b - hull[i].b) * (j + 1) / SHARD_STEPS;
      if (j + 1 == SHARD_STEPS) b = hull[i + 1].b;
      out[k++] = (hp_shard_opt){ a + (a > 0 ? dtlat : 0), b - a + qlat };
    }
  /* the last hull point covers itself (and what lies beyond it, if the cap cut the corners
   * short: then it is paired with the least a, a componentwise bound) */
  {
    spoint last = hull[h - 1];
    double a = k == (h - 1) * SHARD_STEPS ? last.a : hull[0].a;
    out[k++] = (hp_shard_opt){ a + (a > 0 ? dtlat : 0), last.b - a + qlat };
  }
  return k;
}
