/* svg_gantt.c -- the simulated schedule as an SVG Gantt chart, one row per stage in
 * pipeline order: the slowest replica's forwards and backwards numbered with their
 * micro-batch (every k-th where boxes are narrow), its transfers on a strip below, the
 * stage's gradient reduction, the replica's optimizer step and the stage's all-gather at
 * the end, a time axis and a legend. Runs of boxes too narrow to
 * tell apart become one band, so the picture's size follows its width, not pp x gas. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define WIDTH 1000.0
#define LEFT 150.0
#define PLOT_W 820.0
#define TOP 62.0
#define SHAPE_BUDGET 4000   /* boxes and bands in all: about 26 bytes each */
#define LABEL_SPACING 36.0  /* px between dense micro-batch numbers, at least */

enum { K_FWD, K_BWD, K_ACT, K_GRAD, K_SYNC, K_STEP, N_KINDS };

static const char *const colour[N_KINDS] = { "#4e79a7", "#59a14f", "#f28e2b", "#b07aa1",
                                             "#e15759", "#9c755f" };
static const char *const kind_name[N_KINDS] = { "forward", "backward", "activation sent",
                                                "gradient sent", "reduce, all-gather",
                                                "optimizer step" };

static int kind_of(hp_ev_kind k)
{
  switch (k) {
  case HP_EV_FWD: return K_FWD;
  case HP_EV_BWD: return K_BWD;
  case HP_EV_SEND_ACT: return K_ACT;
  case HP_EV_SEND_GRAD: return K_GRAD;
  case HP_EV_ALLREDUCE: return K_SYNC;
  case HP_EV_ALLGATHER: return K_SYNC;
  case HP_EV_STEP: return K_STEP;
  }
  return K_SYNC;
}

/* One box on a row, in pixels. */
typedef struct box { double x0, x1; int kind, micro; } box;

/* A row's lanes: compute (forwards and backwards), activations sent, gradients sent. */
enum { L_COMP, L_ACT, L_GRAD, N_LANES };

typedef struct chart {
  const hp_plan *pl;
  int rstar;                 /* the replica drawn: the last to finish its backwards */
  int *start;                /* [pp * N_LANES + 1] offsets into boxes */
  box *boxes;
  double *sync0, *sync1;     /* [2 pp] the stage's reduction at 2 s, its all-gather after
                              * the step at 2 s + 1, px; sync1 < 0 if none */
  double row, band;          /* row height; compute band height */
  hp_sb path[N_KINDS];       /* every box of a kind in one path */
  int banded;                /* some band was drawn */
} chart;

/* A round tick step near T / 8: 1, 2 or 5 times a power of ten. */
static double tick_step(double T)
{
  double raw = T / 8, p = pow(10, floor(log10(raw)));
  if (raw / p < 2) return p;
  if (raw / p < 5) return 2 * p;
  return 5 * p;
}

static void emit(chart *C, int kind, double x0, double x1, double y, double h)
{
  double w = x1 - x0 < 0.5 ? 0.5 : x1 - x0;
  if (h < 0.05) return;
  hp__sb_printf(&C->path[kind], "M%.1f %.1fh%.1fv%.1fh%.1fz", x0, y, w, h, -w);
}

/* Draws one lane's boxes (time order) into y .. y + h, or only counts the shapes when
 * draw is 0. A box at least `narrow` px wide, or alone, is drawn as itself; a run of
 * narrower boxes with gaps under `narrow` becomes one band: on the compute lane (share
 * set) the forward share of the run's time on top, the backward share under it, the idle
 * rest empty; on a transfer lane the whole strip. */
static long lane(chart *C, const box *bx, int n, double y, double h, double narrow, int share,
                 int draw)
{
  long shapes = 0;
  for (int i = 0; i < n;) {
    int j = i;
    if (bx[i].x1 - bx[i].x0 < narrow)
      while (j + 1 < n && bx[j + 1].x1 - bx[j + 1].x0 < narrow && bx[j + 1].x0 - bx[j].x1 < narrow) j++;
    if (j == i) {
      shapes++;
      if (draw) emit(C, bx[i].kind, bx[i].x0, bx[i].x1, y, h);
    } else if (!share) {
      shapes++;
      if (draw) emit(C, bx[i].kind, bx[i].x0, bx[j].x1, y, h);
      C->banded |= draw;
    } else {
      double busy[N_KINDS] = {0}, span = bx[j].x1 - bx[i].x0, yy = y;
      for (int q = i; q <= j; q++) busy[bx[q].kind] += bx[q].x1 - bx[q].x0;
      for (int k = K_FWD; k <= K_BWD; k++) {
        double hk = span > 0 ? h * busy[k] / span : 0;
        if (hk > h) hk = h;
        if (busy[k] <= 0) continue;
        shapes++;
        if (draw) emit(C, k, bx[i].x0, bx[j].x1, yy, hk);
        yy += hk;
      }
      C->banded |= draw;
    }
    i = j + 1;
  }
  return shapes;
}

static long draw_lanes(chart *C, double narrow, int draw)
{
  const hp_plan *pl = C->pl;
  long shapes = 0;
  for (int s = 0; s < pl->pp; s++) {
    double y = TOP + C->row * s + 2;
    for (int l = 0; l < N_LANES; l++) {
      int a = C->start[s * N_LANES + l], b = C->start[s * N_LANES + l + 1];
      double ly = l == L_COMP ? y : y + C->band + 1 + (l - L_ACT) * 3;
      shapes += lane(C, C->boxes + a, b - a, ly, l == L_COMP ? C->band : 2.5, narrow,
                     l == L_COMP, draw);
    }
  }
  return shapes;
}

static int digits(long m)
{
  int n = 1;
  while (m >= 10) { m /= 10; n++; }
  return n;
}

/* Whether every box of the kind holds its number. */
static int fits_inside(const box *bx, int n, int kind)
{
  for (int i = 0; i < n; i++)
    if (bx[i].kind == kind && bx[i].x1 - bx[i].x0 < digits(bx[i].micro) * 5.6 + 4) return 0;
  return 1;
}

/* 1, 2, 5, 10, 20, 50, ... */
static long next_step(long k)
{
  long lead = k;
  while (lead >= 10) lead /= 10;
  return lead == 2 ? k / 2 * 5 : k * 2;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The step k that numbers every k-th micro-batch LABEL_SPACING apart on every row: from
 * the median distance between consecutive boxes of a kind (warm-up forwards sit closer;
 * numbers that would collide there are left out when drawing). 0 when out of memory. */
static long number_step(const chart *C)
{
  const hp_plan *pl = C->pl;
  long k = 1;
  double *gap = hp__calloc((size_t)pl->gas + 1, sizeof *gap);
  if (!gap) return 0;
  for (int st = 0; st < pl->pp; st++) {
    const box *bx = C->boxes + C->start[st * N_LANES + L_COMP];
    int n = C->start[st * N_LANES + L_COMP + 1] - C->start[st * N_LANES + L_COMP];
    for (int kind = K_FWD; kind <= K_BWD; kind++) {
      int m = 0;
      double last = NAN;
      for (int i = 0; i < n; i++) {
        double c = (bx[i].x0 + bx[i].x1) / 2;
        if (bx[i].kind != kind) continue;
        if (!isnan(last)) gap[m++] = c - last;
        last = c;
      }
      if (m == 0) continue;
      qsort(gap, (size_t)m, sizeof *gap, cmp_double);
      while (k < pl->gas && k * gap[m / 2] < LABEL_SPACING) k = next_step(k);
    }
  }
  free(gap);
  return k;
}

/* The micro-batch numbers of one kind on one row, at ybase: every k-th, leaving out one
 * that would touch the number before it (the white halo keeps them legible over the
 * neighbouring boxes). */
static void numbers(hp_sb *b, const box *bx, int n, int kind, long k, double ybase)
{
  double last = -INFINITY;
  for (int i = 0; i < n; i++) {
    double c = (bx[i].x0 + bx[i].x1) / 2, half = digits(bx[i].micro) * 2.6 + 2;
    if (bx[i].kind != kind || bx[i].micro % k || c - half < last + 3) continue;
    hp__sb_printf(b, "<text x=\"%.0f\" y=\"%.1f\">%d</text>", c, ybase, bx[i].micro);
    last = c + half;
  }
  hp__sb_printf(b, "\n");
}

/* The replica whose forwards and backwards end last (the lowest on a tie). */
static int slowest_replica(const hp_plan *pl, const hp_sim *s)
{
  double best = -1;
  int r = 0;
  double *end = hp__calloc((size_t)pl->dp, sizeof *end);
  if (!end) return 0;
  for (int i = 0; i < s->n_events; i++) {
    const hp_sim_event *e = &s->events[i];
    if ((e->kind == HP_EV_FWD || e->kind == HP_EV_BWD) && e->end > end[e->replica]) end[e->replica] = e->end;
  }
  for (int q = 0; q < pl->dp; q++)
    if (end[q] > best) { best = end[q]; r = q; }
  free(end);
  return r;
}

/* The step is drawn on the compute lane, after the last backward. */
static int lane_of(int kind)
{
  return kind <= K_BWD || kind == K_STEP ? L_COMP : kind == K_ACT ? L_ACT : L_GRAD;
}

/* Fills the rows: boxes of the drawn replica per (stage, lane), with its steps; the
 * reduction and the all-gather per stage. */
static hp_err collect(chart *C, const hp_sim *s, double scale)
{
  const hp_plan *pl = C->pl;
  int nl = pl->pp * N_LANES, *fill;
  C->start = hp__calloc((size_t)nl + 1, sizeof *C->start);
  C->sync0 = hp__calloc(2 * (size_t)pl->pp, sizeof *C->sync0);
  C->sync1 = hp__calloc(2 * (size_t)pl->pp, sizeof *C->sync1);
  if (!C->start || !C->sync0 || !C->sync1) return HP_NOMEM;
  for (int st = 0; st < 2 * pl->pp; st++) C->sync1[st] = -1;
  for (int i = 0; i < s->n_events; i++) {
    const hp_sim_event *e = &s->events[i];
    int k = kind_of(e->kind);
    if (k == K_SYNC) {
      int at = 2 * e->stage + (e->kind == HP_EV_ALLGATHER);
      C->sync0[at] = LEFT + e->start * scale;
      C->sync1[at] = LEFT + e->end * scale;
    } else if (e->replica == C->rstar) {
      C->start[e->stage * N_LANES + lane_of(k) + 1]++;
    }
  }
  for (int i = 0; i < nl; i++) C->start[i + 1] += C->start[i];
  C->boxes = hp__calloc((size_t)C->start[nl] + 1, sizeof *C->boxes);
  fill = hp__calloc((size_t)nl, sizeof *fill);
  if (!C->boxes || !fill) { free(fill); return HP_NOMEM; }
  for (int i = 0; i < s->n_events; i++) {     /* events are in start order */
    const hp_sim_event *e = &s->events[i];
    int k = kind_of(e->kind), l;
    if (k == K_SYNC || e->replica != C->rstar) continue;
    l = e->stage * N_LANES + lane_of(k);
    C->boxes[C->start[l] + fill[l]++] = (box){ LEFT + e->start * scale, LEFT + e->end * scale, k, e->micro };
  }
  free(fill);
  return HP_OK;
}

static void row_labels(hp_sb *b, const hp_problem *prob, const hp_plan *pl, const chart *C)
{
  for (int st = 0; st < pl->pp; st++) {
    double y = TOP + C->row * st;
    int dv = pl->dev[HP_SLOT(pl, st, C->rstar, 0)];
    if (st % 2 == 0)
      hp__sb_printf(b, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"#f2f2f2\"/>\n",
                    LEFT, y, PLOT_W, C->row);
    hp__sb_printf(b, "<text x=\"6\" y=\"%.1f\">stage %d (%d x %d)</text>\n",
                  y + (C->row >= 26 ? 12.5 : C->row * 0.5 + 4), st, pl->dp, pl->tp);
    if (C->row >= 26) {
      hp__sb_printf(b, "<text x=\"6\" y=\"%.1f\" font-size=\"9\" fill=\"#555\">", y + 23.5);
      hp__sb_xml(b, prob->cluster->types[hp_device_type(prob, dv)].name);
      hp__sb_printf(b, ", layers %d-%d</text>\n", pl->first[st], hp_stage_last(pl, st));
    }
  }
}

/* How the boxes are numbered: 1 and *inside set where every box holds its number (then
 * in the middle of each), else every k-th with forwards on top and backwards below.
 * 0 when out of memory. */
static long numbering(const chart *C, int *inside)
{
  const hp_plan *pl = C->pl;
  *inside = 1;
  for (int st = 0; st < pl->pp && *inside; st++) {
    const box *bx = C->boxes + C->start[st * N_LANES + L_COMP];
    int n = C->start[st * N_LANES + L_COMP + 1] - C->start[st * N_LANES + L_COMP];
    *inside = fits_inside(bx, n, K_FWD) && fits_inside(bx, n, K_BWD);
  }
  return *inside ? 1 : number_step(C);
}

/* Whether the rows are high enough for the numbers. */
static int numbered(const chart *C, int inside) { return C->band >= (inside ? 10 : 18); }

static void draw_numbers(hp_sb *b, const hp_plan *pl, const chart *C, long k, int inside)
{
  if (!numbered(C, inside)) return;
  hp__sb_printf(b, "<g font-size=\"9\" text-anchor=\"middle\" fill=\"#1a1a1a\" stroke=\"white\" "
                "stroke-width=\"2.5\" stroke-linejoin=\"round\" paint-order=\"stroke\">\n");
  for (int st = 0; st < pl->pp; st++) {
    const box *bx = C->boxes + C->start[st * N_LANES + L_COMP];
    int n = C->start[st * N_LANES + L_COMP + 1] - C->start[st * N_LANES + L_COMP];
    double y = TOP + C->row * st + 2;
    numbers(b, bx, n, K_FWD, k, inside ? y + C->band / 2 + 3.2 : y + 8);
    numbers(b, bx, n, K_BWD, k, inside ? y + C->band / 2 + 3.2 : y + C->band - 2);
  }
  hp__sb_printf(b, "</g>\n");
}

/* The reductions and all-gathers; a reduction that overlaps the backwards (grad_sync
 * overlap) takes the lower half of the row, leaving the backward it runs beside visible. */
static void draw_syncs(const hp_plan *pl, chart *C, int overlap)
{
  for (int st = 0; st < pl->pp; st++)
    for (int q = 2 * st; q < 2 * st + 2; q++) {
      double y = TOP + C->row * st + 2, h = C->band;
      if (C->sync1[q] < 0) continue;
      if (overlap && q == 2 * st) {
        h /= 2;
        y += h;
      }
      emit(C, K_SYNC, C->sync0[q], C->sync1[q], y, h);
    }
}

static void axis(hp_sb *b, double T, double scale, double ya, double y_top)
{
  double unit = T < 1 ? 1e3 : 1, step = tick_step(T);
  hp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                LEFT, ya, LEFT + PLOT_W, ya);
  for (double t = 0; t <= T * (1 + 1e-9); t += step) {
    double x = LEFT + t * scale;
    hp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ccc\"/>"
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                  x, y_top, x, ya, x, ya, x, ya + 5, x, ya + 17, t * unit);
  }
  hp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (%s)</text>\n",
                LEFT + PLOT_W / 2, ya + 32, T < 1 ? "ms" : "s");
}

static void legend(hp_sb *b, const chart *C, double y, double narrow)
{
  for (int k = 0; k < N_KINDS; k++) {
    double x = LEFT + k * 140;
    hp__sb_printf(b, "<rect x=\"%.0f\" y=\"%.1f\" width=\"14\" height=\"12\" fill=\"%s\"/>"
                  "<text x=\"%.0f\" y=\"%.1f\">%s</text>\n", x, y, colour[k], x + 18, y + 10,
                  kind_name[k]);
  }
  if (C->banded)
    hp__sb_printf(b, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"10\" fill=\"#444\">Boxes under %g px "
                  "wide are drawn as bands: the band's forward (top) and backward (below) heights "
                  "are their shares of its time, the rest idle.</text>\n", LEFT, y + 28, narrow);
}

hp_err hp_sim_svg(const hp_problem *prob, const hp_plan *pl, const hp_sim *s, char **out,
                  hp_diag *d)
{
  static const double narrows[] = { 0, 1.5, 2.5, 4, 6, 9, 14, 20, 30, 45, 70, 100, 1000 };
  hp_sb b = {0};
  chart C;
  double T = s->iteration_time > 0 ? s->iteration_time : 1, scale = PLOT_W / T, narrow = 0;
  double height;
  long k;
  int inside;
  memset(&C, 0, sizeof C);
  *out = NULL;
  C.pl = pl;
  C.rstar = slowest_replica(pl, s);
  C.row = pl->pp <= 16 ? 30 : pl->pp <= 64 ? 28 : 14;
  C.band = C.row - 9;
  if (collect(&C, s, scale)) goto nomem;
  for (size_t i = 0; i < sizeof narrows / sizeof *narrows; i++) {
    narrow = narrows[i];
    if (draw_lanes(&C, narrow, 0) <= SHAPE_BUDGET) break;
  }
  if ((k = numbering(&C, &inside)) == 0) goto nomem;
  height = TOP + C.row * pl->pp + 100;

  hp__sb_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
                WIDTH, height, WIDTH, height);
  hp__sb_printf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  hp__sb_printf(&b, "<text x=\"6\" y=\"20\" font-size=\"14\">");
  hp__sb_xml(&b, prob->model->name);
  hp__sb_printf(&b, " on ");
  hp__sb_xml(&b, prob->cluster->name);
  hp__sb_printf(&b, ": pp %d, tp %d, dp %d, mbs %d, gas %ld, %s</text>\n", pl->pp, pl->tp, pl->dp,
                pl->mbs, pl->gas, hp_schedule_name(pl->schedule));
  hp__sb_printf(&b, "<text x=\"6\" y=\"38\">Simulated iteration %.6g s, bubble %.1f %%; one row "
                "per stage in pipeline order, labelled stage (replicas x tp), with the drawn "
                "replica's device type and the stage's layers.</text>\n", s->iteration_time,
                100 * s->bubble);
  hp__sb_printf(&b, "<text x=\"6\" y=\"52\">Drawn: replica %d", C.rstar);
  if (pl->dp > 1) hp__sb_printf(&b, " of %d, the last to finish", pl->dp);
  hp__sb_printf(&b, ". ");
  if (!numbered(&C, inside)) hp__sb_printf(&b, "Rows too low for micro-batch numbers.");
  else if (inside) hp__sb_printf(&b, "In each box its micro-batch (from 0).");
  else if (k == 1) hp__sb_printf(&b, "Numbers: micro-batches (from 0), forwards above, backwards "
                                 "below.");
  else hp__sb_printf(&b, "Numbers: every %ld%s micro-batch (from 0), forwards above, backwards "
                     "below.", k, k == 2 ? "nd" : "th");
  hp__sb_printf(&b, " Under each row: activations sent, then gradients sent.</text>\n");
  row_labels(&b, prob, pl, &C);
  axis(&b, T, scale, TOP + C.row * pl->pp + 4, TOP);
  draw_lanes(&C, narrow, 1);
  draw_syncs(pl, &C, prob->job.grad_sync == HP_SYNC_OVERLAP);
  for (int q = 0; q < N_KINDS; q++) {
    if (C.path[q].failed) b.failed = 1;
    if (C.path[q].len) hp__sb_printf(&b, "<path fill=\"%s\" d=\"%s\"/>\n", colour[q], C.path[q].s);
  }
  draw_numbers(&b, pl, &C, k, inside);
  legend(&b, &C, height - 52, narrow);
  hp__sb_printf(&b, "</svg>\n");
  if (b.failed) goto nomem;
  *out = b.s;
  b.s = NULL;
nomem:
  for (int q = 0; q < N_KINDS; q++) free(C.path[q].s);
  free(C.start);
  free(C.boxes);
  free(C.sync0);
  free(C.sync1);
  free(b.s);
  if (!*out) return hp_fail(d, HP_NOMEM, "out of memory drawing the schedule");
  return HP_OK;
}
