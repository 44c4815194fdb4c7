/* svg_gantt.c -- the simulated schedule as an SVG Gantt chart: one row per device,
 * forwards, backwards, transfers (on the sender's row) and all-reduces (on every device
 * of the stage) in distinct colours, a time axis with round ticks, and a legend. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

#define LEFT 150.0
#define PLOT_W 1000.0
#define TOP 56.0

static const char *colour(hp_ev_kind k)
{
  switch (k) {
  case HP_EV_FWD: return "#4e79a7";
  case HP_EV_BWD: return "#59a14f";
  case HP_EV_SEND_ACT: return "#f28e2b";
  case HP_EV_SEND_GRAD: return "#b07aa1";
  case HP_EV_ALLREDUCE: return "#e15759";
  }
  return "#999999";
}

/* A round tick step near T / 8: 1, 2 or 5 times a power of ten. */
static double tick_step(double T)
{
  double raw = T / 8, p = pow(10, floor(log10(raw)));
  if (raw / p < 2) return p;
  if (raw / p < 5) return 2 * p;
  return 5 * p;
}

static void rect(hp_sb *b, double x0, double x1, double y, double h, const char *fill)
{
  double w = x1 - x0 < 0.5 ? 0.5 : x1 - x0;
  hp__sb_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                x0, y, w, h, fill);
}

hp_err hp_sim_svg(const hp_problem *prob, const hp_plan *pl, const hp_sim *s, char **out,
                  hp_diag *d)
{
  hp_sb b = {0};
  int D = prob->cluster->n_devices, *slot_of = hp__calloc((size_t)D, sizeof *slot_of);
  double T = s->iteration_time > 0 ? s->iteration_time : 1;
  double row = D <= 16 ? 22 : D <= 64 ? 14 : 900.0 / D;
  double height = TOP + row * D + 70, scale = PLOT_W / T;
  double unit = T < 1 ? 1e3 : 1, step = tick_step(T);
  const char *uname = T < 1 ? "ms" : "s";
  *out = NULL;
  if (!slot_of) return hp_fail(d, HP_NOMEM, "out of memory drawing the schedule");
  for (int i = 0; i < pl->pp * pl->dp * pl->tp; i++) slot_of[pl->dev[i]] = i;

  hp__sb_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "font-family=\"sans-serif\" font-size=\"%d\">\n", LEFT + PLOT_W + 30, height,
                row < 12 ? 8 : 11);
  hp__sb_printf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  hp__sb_printf(&b, "<text x=\"10\" y=\"20\" font-size=\"14\">");
  hp__sb_xml(&b, prob->model->name);
  hp__sb_printf(&b, " on ");
  hp__sb_xml(&b, prob->cluster->name);
  hp__sb_printf(&b, ": pp %d, tp %d, dp %d, mbs %d, gas %ld, %s; simulated iteration %.6g s, "
                "bubble %.1f%%</text>\n", pl->pp, pl->tp, pl->dp, pl->mbs, pl->gas,
                hp_schedule_name(pl->schedule), s->iteration_time, 100 * s->bubble);
  /* row labels and guides */
  for (int dv = 0; dv < D; dv++) {
    int sl = slot_of[dv], st = sl / (pl->dp * pl->tp), r = (sl / pl->tp) % pl->dp, j = sl % pl->tp;
    double y = TOP + row * dv;
    if (dv % 2 == 0) rect(&b, LEFT, LEFT + PLOT_W, y, row, "#f4f4f4");
    hp__sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\">device %d: s%d r%d", 6.0, y + row * 0.75, dv, st, r);
    if (pl->tp > 1) hp__sb_printf(&b, " t%d", j);
    hp__sb_printf(&b, "</text>\n");
  }
  /* events */
  for (int i = 0; i < s->n_events; i++) {
    const hp_sim_event *e = &s->events[i];
    double x0 = LEFT + e->start * scale, x1 = LEFT + e->end * scale;
    for (int r = 0; r < pl->dp; r++) {
      if (e->kind != HP_EV_ALLREDUCE && r != e->replica) continue;
      for (int j = 0; j < pl->tp; j++) {
        double y = TOP + row * pl->dev[HP_SLOT(pl, e->stage, r, j)];
        switch (e->kind) {
        case HP_EV_FWD: case HP_EV_BWD: rect(&b, x0, x1, y + 1, row - 2, colour(e->kind)); break;
        case HP_EV_SEND_ACT: case HP_EV_SEND_GRAD:
          rect(&b, x0, x1, y + row * 0.7, row * 0.3 - 1, colour(e->kind)); break;
        case HP_EV_ALLREDUCE: rect(&b, x0, x1, y + 1, row * 0.3, colour(e->kind)); break;
        }
      }
    }
  }
  /* time axis */
  double ya = TOP + row * D + 4;
  hp__sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                LEFT, ya, LEFT + PLOT_W, ya);
  for (double t = 0; t <= T * (1 + 1e-9); t += step) {
    double x = LEFT + t * scale;
    hp__sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                  x, ya, x, ya + 5, x, ya + 17, t * unit);
  }
  hp__sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (%s)</text>\n",
                LEFT + PLOT_W / 2, ya + 32, uname);
  /* legend */
  static const hp_ev_kind kinds[] = { HP_EV_FWD, HP_EV_BWD, HP_EV_SEND_ACT, HP_EV_SEND_GRAD, HP_EV_ALLREDUCE };
  static const char *const names[] = { "forward", "backward", "activation sent",
                                       "gradient sent", "all-reduce" };
  for (int k = 0; k < 5; k++) {
    double x = LEFT + k * 150;
    rect(&b, x, x + 14, height - 22, 12, colour(kinds[k]));
    hp__sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 18, height - 12, names[k]);
  }
  hp__sb_printf(&b, "</svg>\n");
  free(slot_of);
  if (b.failed) {
    free(b.s);
    return hp_fail(d, HP_NOMEM, "out of memory drawing the schedule");
  }
  *out = b.s;
  return HP_OK;
}
