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
 *   at the end, red + gat (T >= max_s red_s + max_s U_s + max_s gat_s >= max_s (red_s +
 *   gat_s) + max_s U_s, U_s the stage's own step on its slowest memory, cost-model.md 3):
 *     q  = f (2 G x_dp + (G + W) x_zero1 + W x_zero2) / B + 2 (dp-1) latdp
 *   and the step
 *     u  = upd (x_dp + (1 - x_dp) / dp) / hbm
 *   (red, the first term of q, is 0 under grad_sync overlap, where T >= max_r T[r] + step
 *   + gat; upd is the stage's update bytes, hbm the least hbm_gbs of the kind's classes,
 *   each of which holds a device of the stage; no hbm: no step).
 * All are linear in x, and the assignments that fit form a polytope: the simplex cut by
 * the memory row. Its vertices are the pure modes that fit and, on each edge between a
 * mode that fits and one that does not, the mix that fills the memory exactly. The image
 * of the polytope is the convex hull of the vertices' images.
 *
 * The DP adds dt to the stage's time (so to its period, times gas - 1, and to the sum S),
 * q to the maximum Q and u to the maximum U. A larger dt raises M and S (S by dt itself),
 * a smaller q or u lowers its maximum by at most as much, so an option (dt', q', u') is no
 * worse than (dt, q, u) in every completion when it is no worse in the four figures
 *   dt,  dt + q,  dt + u,  dt + q + u
 * (with q' > q alone the objective rises by at most dt' + q' - dt - q, with u' > u alone
 * by at most dt' + u' - dt - u, with both by at most dt' + q' + u' - dt - q - u). Three
 * cases:
 *  - one vertex no worse than every other in the four is no worse than the whole polytope
 *    (the figures are linear): the one exact option. With the modes dp and zdp, grad_bytes
 *    <= 2 param_bytes and a step cheaper than the gathers, the least zdp fraction that fits;
 *  - no step, or the same at every vertex: the figures are two, (a, b) = (dt, dt + q), and
 *    the options are the lower-left convex hull of the images. A hull edge is a continuum
 *    of assignments; each is covered by a *corner*: the edge is cut into SHARD_STEPS
 *    pieces, and the piece from point u to point v (a rising, b falling) gives the option
 *    (a_u, b_v), no worse than any point of the piece (each corner is at most
 *    1/SHARD_STEPS of its edge below it);
 *  - else the step differs (it is sharded in every mode but dp): one option, the least of
 *    each of the four figures over the vertices, the step cut so that dt + q + u is no
 *    more than the least. Finer covers cost the DP more than they gave: two options (the
 *    assignments with dt = 0 alone, and all) took the five-kind 104-GPU row's 300-s bound
 *    from 1.896 to 1.867; eight slabs of the dp fraction the three-kind 64-GPU row's
 *    60-s bound from 5.87 to 3.80. With the one, AMP's 16 GPUs are proved optimal.
 * So every assignment that fits has an option no worse than it, and the DP's bound holds
 * over every mode of the list.
 *
 * The latency (dp-1) latdp of Zr is added to an option's dt only where its a > 0: an
 * assignment with a > 0 has some zero2 or zdp layer (no other mode costs the pipeline
 * anything), so it pays the latency; one with a = 0 is covered by an option with a = 0,
 * which does not add it. */
#include <math.h>
#include <stdlib.h>

#include "search.h"

/* Pieces per hull edge. More: a bound closer to the hull, and as many more DP options. */
#define SHARD_STEPS 4

/* A point of the polytope, by what it costs: memory, dt and red + gat without their
 * latencies (a, r), and the step u. All are linear in the mode fractions. */
typedef struct vpt { double mem, a, r, u; } vpt;
typedef struct spoint { double a, b; } spoint;   /* (a, a + r) */

#define SHARD_MAX_PTS (HP_N_SHARD + HP_N_SHARD * HP_N_SHARD)

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

static vpt mix(vpt p, vpt q, double al)
{
  return (vpt){ al * p.mem + (1 - al) * q.mem, al * p.a + (1 - al) * q.a, al * p.r + (1 - al) * q.r,
                al * p.u + (1 - al) * q.u };
}

/* The vertices of the simplex spanned by the points g (their convex hull) cut by memory
 * <= cap: the g that fit, and the mixes of one that fits with one that does not that fill
 * the memory exactly. Appends them to out[*n]. */
static void vertices(const vpt *g, int ng, double cap, vpt *out, int *n)
{
  for (int i = 0; i < ng; i++)
    if (g[i].mem <= cap) out[(*n)++] = g[i];
  for (int i = 0; i < ng; i++)
    for (int j = 0; j < ng; j++)
      if (g[i].mem <= cap && g[j].mem > cap)
        out[(*n)++] = mix(g[i], g[j], (g[j].mem - cap) / (g[j].mem - g[i].mem));
}

/* Options no worse in (a, a + r) than every point of the convex hull of pts (the lower-
 * left hull cut into corners), each with step u and the latencies added; at most max. */
static int corners(const vpt *pts, int n, int max, double u, double dtlat, double qlat,
                   hp_shard_opt *out)
{
  spoint pt[SHARD_MAX_PTS], hull[SHARD_MAX_PTS];
  int h = 0, k = 0;
  if (n <= 0) return 0;
  for (int i = 0; i < n; i++) pt[i] = (spoint){ pts[i].a, pts[i].a + pts[i].r };
  qsort(pt, (size_t)n, sizeof *pt, by_a);
  hull[0] = pt[0];
  /* the Pareto points (b falling as a rises), then their lower convex hull */
  for (int i = 0; i < n; i++) {
    if (h > 0 && pt[i].b >= hull[h - 1].b) continue;
    while (h >= 2 && not_below(hull[h - 2], hull[h - 1], pt[i])) h--;
    hull[h++] = pt[i];
  }
  if (h == 1 || max < 2) {
    out[0] = (hp_shard_opt){ hull[0].a + (hull[0].a > 0 ? dtlat : 0), hull[0].b - hull[0].a + qlat, u };
    if (max < 2 && h > 1) {            /* no room for corners: the componentwise least */
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
      out[k++] = (hp_shard_opt){ a + (a > 0 ? dtlat : 0), b - a + qlat, u };
    }
  /* the last hull point covers itself (and what lies beyond it, if the cap cut the corners
   * short: then it is paired with the least a, a componentwise bound) */
  {
    spoint last = hull[h - 1];
    double a = k == (h - 1) * SHARD_STEPS ? last.a : hull[0].a;
    out[k++] = (hp_shard_opt){ a + (a > 0 ? dtlat : 0), last.b - a + qlat, u };
  }
  return k;
}

/* One option no worse than every point of the convex hull of pts in the four figures of
 * the exchange (above): each figure's least over pts (a linear figure's least over a hull
 * is at one of its points), the step cut so that the sum is no more than its least. */
static int least(const vpt *pts, int n, double dtlat, double qlat, hp_shard_opt *out)
{
  double a = INFINITY, ar = INFINITY, au = INFINITY, aru = INFINITY;
  if (n <= 0) return 0;
  for (int i = 0; i < n; i++) {
    a = fmin(a, pts[i].a);
    ar = fmin(ar, pts[i].a + pts[i].r);
    au = fmin(au, pts[i].a + pts[i].u);
    aru = fmin(aru, pts[i].a + pts[i].r + pts[i].u);
  }
  out[0] = (hp_shard_opt){ a + (a > 0 ? dtlat : 0), ar - a + qlat, fmin(au - a, aru - ar) };
  return 1;
}

/* Whether v is no worse than w in the four figures of the exchange (above). */
static int covers(vpt v, vpt w)
{
  return v.a <= w.a && v.a + v.r <= w.a + w.r && v.a + v.u <= w.a + w.u &&
         v.a + v.r + v.u <= w.a + w.r + w.u;
}

int hp__shard_options(const hp_shard_stage *st, hp_shard_opt *out, int max)
{
  double f = st->dp > 1 ? hp_cost_ring_share(st->dp) : 0, B = st->bdp;
  double qlat = st->overlap || st->dp <= 1 ? 0 : hp_cost_ring_latency(st->dp, st->latdp);
  double dtlat = st->dp > 1 ? (double)(st->dp - 1) * st->latdp : 0;
  vpt g[HP_N_SHARD], v[SHARD_MAX_PTS];
  int ng = 0, n = 0;
  unsigned modes = st->dp > 1 ? st->modes : 1u << HP_SHARD_DP;  /* dp = 1: all alike (7.1) */
  for (int m = 0; m < HP_N_SHARD; m++) {
    double red = 0, gat = 0, dt = 0;
    if (!(modes >> m & 1u)) continue;
    if (st->dp > 1 && B > 0)
      switch (m) {
      case HP_SHARD_DP: red = 2 * f * st->G / B; break;
      case HP_SHARD_ZERO1: red = f * st->G / B; gat = f * st->W / B; break;
      case HP_SHARD_ZERO2: dt = f * st->G / B; gat = f * st->W / B; break;
      default: dt = f * (2 * st->W + st->G) / B; break;
      }
    /* the step: sharded but in dp */
    double u = st->hbm > 0 ? st->upd / (m == HP_SHARD_DP || st->dp <= 1 ? 1 : st->dp) / st->hbm : 0;
    g[ng++] = (vpt){ st->mem0 - (st->dp > 1 ? st->save[m] : 0), dt, (st->overlap ? 0 : red) + gat,
                     u };
  }
  vertices(g, ng, st->cap, v, &n);
  if (n == 0) return 0;                /* nothing fits, even the most sharded mode */
  /* one vertex no worse than every other is no worse than all the polytope (the figures
   * are linear): the one exact option */
  for (int i = 0; i < n; i++) {
    int all = 1;
    for (int j = 0; j < n && all; j++) all = covers(v[i], v[j]);
    if (all) {
      out[0] = (hp_shard_opt){ v[i].a + (v[i].a > 0 ? dtlat : 0), v[i].r + qlat, v[i].u };
      return 1;
    }
  }
  double u0 = INFINITY, u1 = -INFINITY;
  for (int i = 0; i < n; i++) {
    u0 = fmin(u0, v[i].u);
    u1 = fmax(u1, v[i].u);
  }
  if (!(u1 > u0)) return corners(v, n, max, u0, dtlat, qlat, out);
  /* the step differs: one option, each figure's least over the vertices */
  return least(v, n, dtlat, qlat, out);
}
