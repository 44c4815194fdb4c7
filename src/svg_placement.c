/* svg_placement.c -- a plan's placement as an SVG that fits a page at any cluster size:
 * the nodes grouped by class (device type and GPUs a node), each class drawn once with
 * its count and each node a small strip of its GPUs coloured by stage; then the pipeline
 * in stage order, each stage with the GPUs and nodes it holds, and between consecutive
 * stages the hand-off: the slowest lane's bandwidth (the cost model's Bpp, after the lanes
 * crossing a node share its link, version 1.2) and the bytes it carries per micro-batch and
 * TP lane, each way (O_last mbs / tp, cost-model.md 3). Idle devices are grey. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define WIDTH 1000.0
#define MARGIN 10.0
#define NODE_GAP 8.0
#define LABEL_H 13.0      /* a 9 px label under each node */
#define BOX_H 32.0        /* a stage in the pipeline */
#define LINK_H 22.0       /* the hand-off under it */

static const char *const palette[] = {
  "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
  "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1b9e77", "#d95f02" };

/* Stage colours: the palette up to 12 stages, else hues in stage order. */
static void stage_colour(int s, int pp, char buf[8])
{
  if (pp <= 12) {
    snprintf(buf, 8, "%s", palette[s]);
    return;
  }
  double h = 300.0 * s / (pp - 1) / 60, c = 0.55, x = c * (1 - fabs(fmod(h, 2) - 1)), m = 0.28;
  double r = 0, g = 0, b = 0;
  switch ((int)h) {
  case 0: r = c; g = x; break;
  case 1: r = x; g = c; break;
  case 2: g = c; b = x; break;
  case 3: g = x; b = c; break;
  default: r = x; b = c; break;
  }
  snprintf(buf, 8, "#%02x%02x%02x", (unsigned)lround((r + m) * 255) & 255u,
           (unsigned)lround((g + m) * 255) & 255u, (unsigned)lround((b + m) * 255) & 255u);
}

/* A node class: nodes of one device type and GPU count, in node order. */
typedef struct group { int type, gpus, n; int *nodes; } group;

typedef struct pic {
  const hp_problem *p;
  const hp_plan *pl;
  int *stage_of;       /* [n_devices] its stage, -1 for an idle device */
  hp_sb idle;          /* the cells of idle devices */
  group *g;
  int ng;
  double cs;           /* GPU cell, px */
  int names;           /* node names under the nodes (small clusters) */
  hp_sb *paths;        /* [pp] the cells of each stage */
  int *scratch;        /* [dp * tp] */
} pic;

static hp_err make_groups(pic *P)
{
  const hp_cluster *c = P->p->cluster;
  P->g = hp__calloc((size_t)c->n_nodes, sizeof *P->g);
  if (!P->g) return HP_NOMEM;
  for (int k = 0; k < c->n_nodes; k++) {
    int i = 0;
    while (i < P->ng && (P->g[i].type != c->nodes[k].type || P->g[i].gpus != c->nodes[k].gpus)) i++;
    if (i == P->ng) {
      P->g[i] = (group){ c->nodes[k].type, c->nodes[k].gpus, 0,
                         hp__calloc((size_t)c->n_nodes, sizeof(int)) };
      if (!P->g[i].nodes) return HP_NOMEM;
      P->ng++;
    }
    P->g[i].nodes[P->g[i].n++] = k;
  }
  return HP_OK;
}

/* Stages as "s3", "s3-5" or "s1, s4-5" from a sorted list with repeats. */
static void stage_list(char *buf, size_t n, const int *st, int count)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < count && len < n; i++) {
    int j = i;
    if (st[i] < 0 || (i > 0 && st[i] == st[i - 1])) continue;
    while (j + 1 < count && (st[j + 1] == st[j] || st[j + 1] == st[j] + 1)) j++;
    len += (size_t)snprintf(buf + len, n - len, "%ss%d", len ? ", " : "", st[i]);
    if (st[j] > st[i] && len < n) len += (size_t)snprintf(buf + len, n - len, "-%d", st[j]);
    i = j;
  }
  if (count > 0 && st[0] < 0 && len < n) snprintf(buf + len, n - len, "%sidle", len ? ", " : "");
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static double text_w(const char *s, double font) { return (double)strlen(s) * font * 0.56; }

/* One node at (x, y): its GPUs in rows of up to 8 cells, coloured by stage (added to the
 * stage paths), an outline, and a label under it. */
static void draw_node(hp_sb *b, pic *P, int k, double x, double y, double pitch)
{
  const hp_node *nd = &P->p->cluster->nodes[k];
  int cols = nd->gpus < 8 ? nd->gpus : 8, rows = (nd->gpus + cols - 1) / cols, st[64], ns = 0;
  double cs = P->cs, gap = cs >= 10 ? 1.5 : 0;
  char stages[128], label[256];
  hp__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                "stroke=\"#666\"/>\n", x, y, cols * cs + 3, rows * cs + 3);
  for (int g = 0; g < nd->gpus;) {
    int s = P->stage_of[nd->first + g], e = g;
    /* a run of GPUs of one stage in one cell row; one cell each when the cells are large */
    while (!gap && e + 1 < nd->gpus && (e + 1) % cols && P->stage_of[nd->first + e + 1] == s) e++;
    hp__sb_printf(s >= 0 ? &P->paths[s] : &P->idle, "M%.1f %.1fh%.1fv%.1fh%.1fz", x + 2 + (g % cols) * cs,
                  y + 2 + (g / cols) * cs, (e - g + 1) * cs - 1 - gap, cs - 1 - gap,
                  -((e - g + 1) * cs - 1 - gap));
    g = e + 1;
  }
  for (int g = 0; g < nd->gpus && ns < 64; g++) st[ns++] = P->stage_of[nd->first + g];
  qsort(st, (size_t)ns, sizeof *st, cmp_int);
  stage_list(stages, sizeof stages, st, ns);
  snprintf(label, sizeof label, "%s: %s", nd->name, stages);
  if (!P->names || text_w(label, 9) > pitch - 2) snprintf(label, sizeof label, "%s", stages);
  if (text_w(label, 9) > pitch - 2) return;
  hp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\">", x, y + rows * cs + 3 + 10);
  hp__sb_xml(b, label);
  hp__sb_printf(b, "</text>\n");
}

/* The classes, from y; returns the y below them. */
static double draw_classes(hp_sb *b, pic *P, double y)
{
  const hp_cluster *c = P->p->cluster;
  for (int i = 0; i < P->ng; i++) {
    const group *G = &P->g[i];
    const hp_devtype *t = &c->types[G->type];
    int cols = G->gpus < 8 ? G->gpus : 8, rows = (G->gpus + cols - 1) / cols;
    double nw = cols * P->cs + 3, nh = rows * P->cs + 3 + LABEL_H, pitch;
    double label_w = 0;
    int per_row, lines;
    /* wide enough for the labels the nodes carry */
    for (int q = 0; q < G->n && P->names; q++) {
      double w = text_w(c->nodes[G->nodes[q]].name, 9) + 9 * 0.56 * 8;
      if (w > label_w) label_w = w;
    }
    pitch = (nw > label_w ? nw : label_w) + NODE_GAP;
    if (pitch > nw + 60) pitch = nw + 60;
    per_row = (int)((WIDTH - 2 * MARGIN - 16) / pitch);
    if (per_row < 1) per_row = 1;
    if (per_row > G->n) per_row = G->n;
    lines = (G->n + per_row - 1) / per_row;
    hp__sb_printf(b, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" rx=\"5\" "
                  "fill=\"#f7f7f7\" stroke=\"#999\"/>\n<text x=\"%.0f\" y=\"%.1f\" font-size=\"12\" "
                  "font-weight=\"bold\">%d x %d ", MARGIN, y, WIDTH - 2 * MARGIN,
                  26 + lines * (nh + 6), MARGIN + 8, y + 17, G->n, G->gpus);
    hp__sb_xml(b, t->name);
    hp__sb_printf(b, "</text><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#444\">"
                  "%d node%s of %d %s GPU%s (%.3g GiB, %.4g TFLOP/s each)</text>\n",
                  MARGIN + 16 + text_w("000 x 00 ", 12) + text_w(t->name, 12), y + 17, G->n,
                  G->n == 1 ? "" : "s", G->gpus, t->name, G->gpus == 1 ? "" : "s",
                  t->mem_total / 1073741824.0, t->peak / 1e12);
    for (int q = 0; q < G->n; q++)
      draw_node(b, P, G->nodes[q], MARGIN + 8 + (q % per_row) * pitch,
                y + 26 + (q / per_row) * (nh + 6), pitch);
    y += 26 + lines * (nh + 6) + 10;
  }
  return y;
}

/* Bytes as "16.0 MiB". */
static void bytes_text(char *buf, size_t n, double v)
{
  static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  int u = 0;
  while (v >= 1024 && u < 4) { v /= 1024; u++; }
  snprintf(buf, n, u ? "%.3g %s" : "%.0f %s", v, unit[u]);
}

/* What stage s holds, in at most `width` characters: "4 x 8 A100" per device type of
 * its TP groups, then its nodes by name, as many as fit before "+N more". */
static void stage_text(const pic *P, int s, char *buf, size_t n, size_t width)
{
  const hp_problem *p = P->p;
  const hp_plan *pl = P->pl;
  const hp_cluster *c = p->cluster;
  size_t len = 0;
  int *nodes = P->scratch, nn = 0, shown = 0, distinct = 0;
  char more[32];
  buf[0] = '\0';
  if (width >= n) width = n - 1;
  for (int t = 0; t < c->n_types && len < n; t++) {
    int reps = 0;
    for (int r = 0; r < pl->dp; r++) reps += hp_device_type(p, pl->dev[HP_SLOT(pl, s, r, 0)]) == t;
    if (reps)
      len += (size_t)snprintf(buf + len, n - len, "%s%d x %d %s", len ? " + " : "", reps, pl->tp,
                              c->types[t].name);
  }
  for (int i = 0; i < pl->dp * pl->tp; i++) nodes[nn++] = c->dev_node[pl->dev[(size_t)s * pl->dp * pl->tp + i]];
  qsort(nodes, (size_t)nn, sizeof *nodes, cmp_int);
  for (int i = 0; i < nn; i++) distinct += i == 0 || nodes[i] != nodes[i - 1];
  if (len < n) len += (size_t)snprintf(buf + len, n - len, " on %d node%s:", distinct, distinct == 1 ? "" : "s");
  for (int i = 0; i < nn && len < width; i++) {
    const char *name = c->nodes[nodes[i]].name;
    if (i > 0 && nodes[i] == nodes[i - 1]) continue;
    snprintf(more, sizeof more, " +%d more", distinct - shown - 1);
    if (len + strlen(name) + 2 + (shown + 1 < distinct ? strlen(more) : 0) > width) {
      snprintf(buf + len, n - len, " +%d more", distinct - shown);
      break;
    }
    len += (size_t)snprintf(buf + len, n - len, "%s %s", shown ? "," : "", name);
    shown++;
  }
  if (strlen(buf) > width && width > 3) snprintf(buf + width - 3, 4, "...");
}

/* The hand-off from stage s to s + 1: bandwidth range over the replicas, where the lanes
 * run, the sharing of the slowest lane (a node's link divided among the H_s(n) lanes that
 * cross it, cost-model.md 3), and the bytes each way per micro-batch and TP lane. */
static void link_text(const pic *P, const hp_costs *k, int s, char *buf, size_t n)
{
  const hp_plan *pl = P->pl;
  const hp_cluster *c = P->p->cluster;
  double lo = INFINITY, hi = 0, raw = 0;
  int same = 0, lanes = pl->dp * pl->tp, shared = 1;
  int *H = hp__calloc((size_t)c->n_nodes, sizeof *H);
  char bytes[32];
  for (int r = 0; r < pl->dp; r++) {
    double bw = k->hbw[s * pl->dp + r];
    if (bw < lo) lo = bw;
    if (bw > hi) hi = bw;
    for (int j = 0; j < pl->tp; j++) {
      int na = c->dev_node[pl->dev[HP_SLOT(pl, s, r, j)]], nb = c->dev_node[pl->dev[HP_SLOT(pl, s + 1, r, j)]];
      same += na == nb;
      if (H && na != nb) { H[na]++; H[nb]++; }
    }
  }
  /* the lane that gives the slowest figure: its link and how many lanes share it */
  for (int r = 0; H && r < pl->dp; r++)
    for (int j = 0; j < pl->tp; j++) {
      int a = pl->dev[HP_SLOT(pl, s, r, j)], b = pl->dev[HP_SLOT(pl, s + 1, r, j)];
      int na = c->dev_node[a], nb = c->dev_node[b], h = H[na] > H[nb] ? H[na] : H[nb];
      double x = hp_problem_bw(P->p, a, b);
      if (na != nb && h > 1 && fabs(x / h - lo) <= 1e-9 * lo && h > shared) { shared = h; raw = x; }
    }
  free(H);
  bytes_text(bytes, sizeof bytes, k->layer[hp_stage_last(pl, s)].out * pl->mbs / pl->tp);
  if (hi / lo < 1.0005)
    snprintf(buf, n, "%.4g Gbit/s", lo * 8 / 1e9);
  else
    snprintf(buf, n, "%.4g-%.4g Gbit/s", lo * 8 / 1e9, hi * 8 / 1e9);
  snprintf(buf + strlen(buf), n - strlen(buf), " %s", same == lanes ? "inside nodes" :
           same == 0 ? "between nodes" : "inside and between nodes");
  if (shared > 1)
    snprintf(buf + strlen(buf), n - strlen(buf), " (%.4g / %d lanes)", raw * 8 / 1e9, shared);
  snprintf(buf + strlen(buf), n - strlen(buf), "; %s each way", bytes);
}

/* The pipeline from y: stages in order, in up to 3 columns; returns the y below it. */
static double draw_pipeline(hp_sb *b, pic *P, const hp_costs *k, double y)
{
  const hp_plan *pl = P->pl;
  int ncol = pl->pp <= 12 ? 1 : pl->pp <= 32 ? 2 : 3, rows = (pl->pp + ncol - 1) / ncol;
  double colw = (WIDTH - 2 * MARGIN - (ncol - 1) * 16) / ncol, boxw = colw < 620 ? colw : 620;
  int chars = (int)((boxw - 22) / (9.5 * 0.56));
  hp__sb_printf(b, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\">Pipeline, "
                "stage 0 first</text><text x=\"%.0f\" y=\"%.1f\" font-size=\"10\" fill=\"#444\">"
                "Under each stage, its hand-off to the next: the slowest lane's bandwidth (the cost "
                "model's Bpp; a link shared by the lanes crossing a node: link / lanes) and the bytes a micro-batch sends on each TP lane, each way "
                "(activations forward, gradients back).</text>\n", MARGIN, y + 14, MARGIN, y + 29);
  y += 38;
  for (int s = 0; s < pl->pp; s++) {
    double x = MARGIN + (s / rows) * (colw + 16), yy = y + (s % rows) * (BOX_H + LINK_H);
    char col[8], line[600];
    int zero = 0;
    for (int l = pl->first[s]; l <= hp_stage_last(pl, s); l++) zero += hp_plan_sharded(pl, l);
    stage_colour(s, pl->pp, col);
    hp__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"white\" "
                  "stroke=\"#888\"/><rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"%.0f\" "
                  "fill=\"%s\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">stage %d: ", x, yy,
                  boxw, BOX_H, x, yy, BOX_H, col, x + 16, yy + 13, s);
    if (pl->first[s] == hp_stage_last(pl, s)) hp__sb_printf(b, "layer %d", pl->first[s]);
    else hp__sb_printf(b, "layers %d-%d", pl->first[s], hp_stage_last(pl, s));
    if (pl->recompute[s]) hp__sb_printf(b, ", recompute");
    if (zero) {
      char modes[96];
      hp__sb_printf(b, ", ");
      hp__sb_xml(b, hp_stage_modes(pl, s, modes, sizeof modes));
    }
    hp__sb_printf(b, "</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"9.5\" fill=\"#333\">",
                  x + 16, yy + 26);
    stage_text(P, s, line, sizeof line, (size_t)chars);
    hp__sb_xml(b, line);
    hp__sb_printf(b, "</text>\n");
    if (s + 1 == pl->pp) continue;
    double ax = x + 24, ay = yy + BOX_H, ay2 = ay + LINK_H - 2;
    if ((s + 1) % rows == 0) {                /* the next stage heads the next column */
      ay2 = ay + 12;
      snprintf(line, sizeof line, "to stage %d: ", s + 1);
    } else {
      line[0] = '\0';
    }
    link_text(P, k, s, line + strlen(line), sizeof line - strlen(line));
    hp__sb_printf(b, "<path d=\"M%.1f %.1fV%.1fm-4 -5l4 5l4 -5\" fill=\"none\" stroke=\"#333\" "
                  "stroke-width=\"1.3\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"9.5\">", ax, ay,
                  ay2, ax + 10, ay + 14);
    hp__sb_xml(b, line);
    hp__sb_printf(b, "</text>\n");
  }
  return y + rows * (BOX_H + LINK_H);
}

hp_err hp_plan_svg(const hp_problem *prob, const hp_plan *pl, char **out, hp_diag *d)
{
  const hp_cluster *c = prob->cluster;
  int D = c->n_devices;
  hp_sb b = {0}, body = {0};
  hp_costs k;
  hp_err err;
  pic P;
  double y;
  *out = NULL;
  if ((err = hp_costs_build(prob, pl, &k, d))) return err;
  memset(&P, 0, sizeof P);
  P.p = prob;
  P.pl = pl;
  P.stage_of = hp__calloc((size_t)D, sizeof *P.stage_of);
  P.paths = hp__calloc((size_t)pl->pp, sizeof *P.paths);
  P.scratch = hp__calloc((size_t)pl->dp * pl->tp, sizeof *P.scratch);
  if (!P.stage_of || !P.paths || !P.scratch || make_groups(&P)) goto nomem;
  for (int dv = 0; dv < D; dv++) P.stage_of[dv] = -1;
  for (int i = 0; i < pl->pp * pl->dp * pl->tp; i++) P.stage_of[pl->dev[i]] = i / (pl->dp * pl->tp);
  P.cs = D <= 64 ? 14 : D <= 256 ? 10 : 7;
  P.names = c->n_nodes <= 32;

  y = draw_classes(&body, &P, 48);
  for (int s = 0; s < pl->pp; s++) {
    char col[8];
    stage_colour(s, pl->pp, col);
    if (P.paths[s].failed) body.failed = 1;
    if (P.paths[s].len) hp__sb_printf(&body, "<path fill=\"%s\" d=\"%s\"/>\n", col, P.paths[s].s);
  }
  if (P.idle.failed) body.failed = 1;
  if (P.idle.len) hp__sb_printf(&body, "<path fill=\"#d9d9d9\" d=\"%s\"/>\n", P.idle.s);
  y = draw_pipeline(&body, &P, &k, y + 4) + 8;
  if (body.failed) goto nomem;

  hp__sb_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"10\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", WIDTH, y, WIDTH, y);
  hp__sb_printf(&b, "<text x=\"%.0f\" y=\"20\" font-size=\"14\">", MARGIN);
  hp__sb_xml(&b, c->name);
  hp__sb_printf(&b, ": pp %d, tp %d, dp %d on %d GPUs in %d node%s", pl->pp, pl->tp, pl->dp, D,
                c->n_nodes, c->n_nodes == 1 ? "" : "s");
  if (pl->pp * pl->dp * pl->tp < D) hp__sb_printf(&b, ", %d idle", D - pl->pp * pl->dp * pl->tp);
  hp__sb_printf(&b, "</text>\n<text x=\"%.0f\" y=\"37\" font-size=\"11\">Nodes grouped by class "
                "(device type and GPUs a node); each GPU coloured by its stage (grey: idle), under "
                "each node the stages it holds.</text>\n", MARGIN);
  hp__sb_printf(&b, "%s</svg>\n", body.s ? body.s : "");
  if (b.failed) goto nomem;
  *out = b.s;
  b.s = NULL;
nomem:
  for (int i = 0; i < P.ng; i++) free(P.g[i].nodes);
  for (int s = 0; P.paths && s < pl->pp; s++) free(P.paths[s].s);
  free(P.g);
  free(P.paths);
  free(P.stage_of);
  free(P.idle.s);
  free(P.scratch);
  free(body.s);
  free(b.s);
  hp_costs_release(&k);
  if (!*out) return hp_fail(d, HP_NOMEM, "out of memory drawing the placement");
  return HP_OK;
}
