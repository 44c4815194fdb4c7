/* cli_coverage.c -- prints the profile coverage (hp_coverage.h) for evaluate, plan and
 * describe, and refuses estimated cells under --strict-profile. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_KIND_ROWS 12

int cli_coverage(const hp_problem *p, hp_cov_scope scope, const hp_plan *plan,
                 hp_coverage **out)
{
  hp_diag d;
  hp_err err;
  cli_diag_init(&d);
  if ((err = hp_coverage_compute(p, scope, plan, out, &d))) return cli_fail(&d, err);
  return EXIT_OK_;
}

/* A row; the "shape" column only where some cell comes from the shape model. */
static void row(FILE *f, const char *axis, const char *name, const hp_cov_count *n, int shape)
{
  char label[48];
  snprintf(label, sizeof label, "%s %s", axis, name);
  fprintf(f, "  %-24.24s %7d %9d %8d %10d", label, n->cells, n->measured, n->derived,
          n->estimated);
  if (shape) fprintf(f, " %6d", n->shape);
  fputc('\n', f);
}

static const char *scope_text(const hp_coverage *c, const hp_problem *p, char *buf, size_t n)
{
  if (c->scope == HP_COV_PLAN) snprintf(buf, n, "of the plan");
  else if (c->scope == HP_COV_SPACE) snprintf(buf, n, "of the search space at gbs %ld", p->job.gbs);
  else snprintf(buf, n, "of the search space's tp degrees");
  return buf;
}

void cli_print_coverage(FILE *f, const hp_problem *p, const hp_coverage *c)
{
  const char *dims = c->scope == HP_COV_GROUPS ? "layer kind x device type x tp"
                                               : "layer kind x device type x tp x mbs";
  char where[64], name[32];
  int shown = 0, quiet = 0;

  int sh = c->total.shape > 0;
  scope_text(c, p, where, sizeof where);
  if (!c->profile && !sh) {
    fprintf(f, "profile coverage %s: no profile: all %d cells (%s) are estimated from "
            "FLOPs / (peak x efficiency)\n", where, c->total.cells, dims);
    return;
  }
  if (!c->profile)
    fprintf(f, "profile coverage %s: no profile: %d cells (%s): %d from the shape model, %d "
            "estimated from FLOPs / (peak x efficiency)\n", where, c->total.cells, dims,
            c->total.shape, c->total.estimated);
  else
    fprintf(f, "profile coverage %s: %d cells (%s): %d measured, %d derived, %d estimated%s",
            where, c->total.cells, dims, c->total.measured, c->total.derived,
            c->total.estimated, sh ? "" : "\n");
  if (c->profile && sh) fprintf(f, ", %d shape model\n", c->total.shape);
  if (c->profile)
    fprintf(f, "  profile '%s': %d layer_times entries, %d of them for kinds, types or tp "
            "this problem lacks\n", c->profile, c->profile_entries, c->unused_entries);
  if (c->total.derived == 0 && c->total.estimated == 0 && !sh) return;
  if (!c->profile && c->total.estimated == 0) return;
  fprintf(f, "  %-24s %7s %9s %8s %10s%s\n", "", "cells", "measured", "derived", "estimated",
          sh ? "  shape" : "");
  /* Many kinds (one per module, say): a row for each kind with estimated cells, up to
   * MAX_KIND_ROWS, and one row for the rest. */
  {
    hp_cov_count rest = { 0, 0, 0, 0, 0 };
    int rest_est = 0;
    for (int q = 0; q < c->n_kinds; q++) {
      const hp_cov_count *n = &c->by_kind[q];
      if (c->n_kinds > MAX_KIND_ROWS && (n->estimated == 0 || shown == MAX_KIND_ROWS)) {
        quiet++;
        rest_est += n->estimated > 0;
        rest.cells += n->cells;
        rest.measured += n->measured;
        rest.derived += n->derived;
        rest.estimated += n->estimated;
        rest.shape += n->shape;
        continue;
      }
      row(f, "kind", c->kinds[q], n, sh);
      shown++;
    }
    if (quiet) {
      snprintf(name, sizeof name, "(%d %s)", quiet, shown ? "others" : "kinds");
      row(f, "kind", name, &rest, sh);
      if (rest_est) fprintf(f, "  (%d of those kinds have estimated cells: the JSON forms list every cell)\n", rest_est);
    }
  }
  for (int i = 0; i < c->n_types; i++)
    row(f, "type", p->cluster->types[c->types[i]].name, &c->by_type[i], sh);
  for (int i = 0; i < c->n_tps; i++) {
    snprintf(name, sizeof name, "%d", c->tps[i]);
    row(f, "tp", name, &c->by_tp[i], sh);
  }
  for (int i = 0; i < c->n_mbs; i++) {
    snprintf(name, sizeof name, "%d", c->mbs[i]);
    row(f, "mbs", name, &c->by_mbs[i], sh);
  }
  fprintf(f, "  measured: the profile has the cell; derived: interpolated, extrapolated or "
          "scaled from\n  other mbs of the same (kind, type, tp); estimated: FLOPs / (peak x "
          "efficiency) + TP all-reduce\n");
  if (sh)
    fprintf(f, "  shape: the shape model's estimate from the layer's GEMM and attention shapes "
            "(docs/cost-model.md), never measured\n");
}

/* The estimated (kind, type, tp) groups as "embed on fast at tp 2, ..." (at most 6). */
static void estimated_groups(const hp_problem *p, const hp_coverage *c, char *buf, size_t n)
{
  int groups = 0, shown = 0;
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < c->n_cells; i++) {
    const hp_cov_cell *a = &c->cells[i];
    if (a->source != HP_CELL_ESTIMATED && a->source != HP_CELL_SHAPE) continue;
    if (i > 0 && c->cells[i - 1].source == a->source && c->cells[i - 1].kind == a->kind &&
        c->cells[i - 1].type == a->type && c->cells[i - 1].tp == a->tp)
      continue;   /* the same group at another mbs */
    groups++;
    if (shown < 6 && len + 80 < n) {
      len += (size_t)snprintf(buf + len, n - len, "%s%s on %s at tp %d", shown ? ", " : "",
                              c->kinds[a->kind], p->cluster->types[a->type].name, a->tp);
      shown++;
    }
  }
  if (groups > shown && len + 24 < n) snprintf(buf + len, n - len, " and %d more", groups - shown);
}

int cli_strict_profile(const hp_problem *p, const hp_coverage *c)
{
  char where[64], groups[600];
  if (c->total.estimated + c->total.shape == 0) return EXIT_OK_;
  scope_text(c, p, where, sizeof where);
  estimated_groups(p, c, groups, sizeof groups);
  fprintf(stderr, "hetplan: error: --strict-profile: %d of the %d cells %s are "
          "estimated, not measured%s%s%s: %s; measure them (hetplan-profile --model, see "
          "docs/profiler.md) or drop --strict-profile\n", c->total.estimated + c->total.shape,
          c->total.cells,
          where, c->profile ? " (profile '" : " (no --profile given)",
          c->profile ? c->profile : "", c->profile ? "')" : "", groups);
  return EXIT_INPUT;
}
