/* svg_placement.c -- a plan's placement as an SVG: each node a box of its devices,
 * each device coloured by its stage and labelled with its replica (and TP rank), the
 * hand-off links of every replica drawn between consecutive stages, and a legend of the
 * stages with their layers. */
#include <stdlib.h>

#include "internal.h"

#define CELL 34.0
#define GAP 6.0
#define NODE_PAD 10.0
#define PER_ROW 4

static const char *const palette[] = {
  "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
  "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1b9e77", "#d95f02" };

hp_err hp_plan_svg(const hp_problem *prob, const hp_plan *pl, char **out, hp_diag *d)
{
  const hp_cluster *c = prob->cluster;
  int D = c->n_devices, nn = c->n_nodes, maxg = 1;
  int *slot_of = hp__calloc((size_t)D, sizeof *slot_of);
  double *cx = hp__calloc((size_t)D, sizeof *cx), *cy = hp__calloc((size_t)D, sizeof *cy);
  hp_sb b = {0};
  *out = NULL;
  if (!slot_of || !cx || !cy) {
    free(slot_of); free(cx); free(cy);
    return hp_fail(d, HP_NOMEM, "out of memory drawing the placement");
  }
  for (int i = 0; i < pl->pp * pl->dp * pl->tp; i++) slot_of[pl->dev[i]] = i;
  for (int k = 0; k < nn; k++) if (c->nodes[k].gpus > maxg) maxg = c->nodes[k].gpus;
  int cols = maxg < 8 ? maxg : 8, rows_in = (maxg + cols - 1) / cols;
  double node_w = NODE_PAD * 2 + cols * (CELL + GAP), node_h = NODE_PAD * 2 + 40 + rows_in * (CELL + GAP);
  int per_row = nn < PER_ROW ? nn : PER_ROW, node_rows = (nn + per_row - 1) / per_row;
  double width = 20 + per_row * (node_w + 20), legend_h = 20.0 * (pl->pp + 2);
  double height = 40 + node_rows * (node_h + 20) + legend_h;

  hp__sb_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "font-family=\"sans-serif\" font-size=\"10\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", width, height);
  hp__sb_printf(&b, "<text x=\"10\" y=\"22\" font-size=\"14\">");
  hp__sb_xml(&b, c->name);
  hp__sb_printf(&b, ": pp %d, tp %d, dp %d (devices coloured by stage; lines: hand-offs)</text>\n",
                pl->pp, pl->tp, pl->dp);
  /* positions; then node boxes, hand-off arcs, and the devices on top */
  for (int k = 0; k < nn; k++) {
    const hp_node *nd = &c->nodes[k];
    double x = 20 + (k % per_row) * (node_w + 20), y = 40 + (k / per_row) * (node_h + 20);
    for (int g = 0; g < nd->gpus; g++) {
      cx[nd->first + g] = x + NODE_PAD + (g % cols) * (CELL + GAP) + CELL / 2;
      cy[nd->first + g] = y + NODE_PAD + 40 + (g / cols) * (CELL + GAP) + CELL / 2;
    }
    hp__sb_printf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"6\" "
                  "fill=\"#fafafa\" stroke=\"#555\"/>\n<text x=\"%.1f\" y=\"%.1f\">",
                  x, y, node_w, node_h, x + NODE_PAD, y + 14);
    hp__sb_xml(&b, nd->name);
    hp__sb_printf(&b, " (");
    hp__sb_xml(&b, c->types[nd->type].name);
    hp__sb_printf(&b, ")</text>\n");
  }
  /* hand-off links of TP rank 0 of every replica: arcs above the devices, higher for
   * later replicas so that they can be told apart */
  for (int r = 0; r < pl->dp; r++)
    for (int s = 0; s + 1 < pl->pp; s++) {
      int a = pl->dev[HP_SLOT(pl, s, r, 0)], e = pl->dev[HP_SLOT(pl, s + 1, r, 0)];
      double top = (cy[a] < cy[e] ? cy[a] : cy[e]) - CELL / 2 - 8 - 4.0 * (r % 6);
      hp__sb_printf(&b, "<path d=\"M %.1f %.1f Q %.1f %.1f %.1f %.1f\" fill=\"none\" "
                    "stroke=\"%s\" stroke-opacity=\"0.7\" stroke-width=\"1.5\"/>\n",
                    cx[a], cy[a] - CELL / 2, (cx[a] + cx[e]) / 2, top - 20, cx[e],
                    cy[e] - CELL / 2, palette[s % 12]);
    }
  for (int dv = 0; dv < D; dv++) {
    int sl = slot_of[dv], st = sl / (pl->dp * pl->tp), r = (sl / pl->tp) % pl->dp, j = sl % pl->tp;
    double gx = cx[dv] - CELL / 2, gy = cy[dv] - CELL / 2;
    hp__sb_printf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                  "stroke=\"#333\"/>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                  "fill=\"white\">r%d", gx, gy, CELL, CELL, palette[st % 12], cx[dv], cy[dv] + 3, r);
    if (pl->tp > 1) hp__sb_printf(&b, ".%d", j);
    hp__sb_printf(&b, "</text>\n");
  }
  double ly = 40 + node_rows * (node_h + 20);
  for (int s = 0; s < pl->pp; s++) {
    double y = ly + 20.0 * s;
    hp__sb_printf(&b, "<rect x=\"20\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\"/>"
                  "<text x=\"40\" y=\"%.1f\">stage %d: layers %d-%d%s</text>\n", y,
                  palette[s % 12], y + 11, s, pl->first[s], hp_stage_last(pl, s),
                  pl->recompute[s] ? ", recompute" : "");
  }
  hp__sb_printf(&b, "</svg>\n");
  free(slot_of);
  free(cx);
  free(cy);
  if (b.failed) {
    free(b.s);
    return hp_fail(d, HP_NOMEM, "out of memory drawing the placement");
  }
  *out = b.s;
  return HP_OK;
}
