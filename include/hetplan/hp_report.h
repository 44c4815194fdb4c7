/* hp_report.h -- one page on a plan (src/report.c), Markdown or HTML with the placement
 * and Gantt pictures embedded: configuration, stages, throughput (samples, tokens, tokens
 * per GPU, MFU), memory against capacity, the bottleneck, profile coverage, the baselines
 * and the proven bound. The library writes; the caller runs the baselines. */
#ifndef HP_REPORT_H
#define HP_REPORT_H

#include "hp_io.h"

/* Another solver's result on the same instance. */
typedef struct hp_report_row {
  const char *name;
  const hp_plan *plan;     /* NULL: no plan (then `why` says why) */
  double time;             /* evaluator's iteration time of `plan` */
  int fits;
  const char *why;         /* no plan: the reason (proved or not), or a refusal */
} hp_report_row;

typedef struct hp_report_in {
  const char *title;               /* e.g. the plan file's name; may be NULL */
  const hp_plan_info *info;        /* the plan file's solver block; may be NULL */
  const hp_report_row *rows;       /* the baselines, in the order to show */
  int n_rows;
  int html;                        /* HTML with the SVG pictures; else Markdown */
  /* The evaluator's figures for the plan when the caller has them (a result's `eval`);
   * NULL: the report evaluates the plan itself. Borrowed. */
  const hp_eval *eval;
} hp_report_in;

/* The report's profile coverage is hp_coverage.h's, over the cells the plan uses. */

hp_err hp_report_write(const hp_problem *prob, const hp_plan *plan, const hp_report_in *in,
                       char **out, hp_diag *d);

#endif
