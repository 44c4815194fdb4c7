/* cmd_report.c -- `hetplan report plan.json`: one page on a plan (src/report.c), with the
 * baselines run on the same instance for comparison. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan report [--plan] plan.json [--html] [-o FILE] [--solvers a,b,...|none]\n"
  "                      [--time-limit S] [--model M --cluster C --gbs N] [--schedule S]\n"
  "                      [--profile F [--accept-profile-mismatch]] [--job J] [--mem-margin F]\n"
  "                      [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST] [--uniform-sharding]\n"
  "                      [--idle-devices] [--max-slices N] [--compute-model shape|flops] [--memory-weight W]\n"
  "\n"
  "Writes one page on the plan, Markdown (default) or HTML (--html, with the placement and\n"
  "a simulated iteration embedded as SVG), to -o or stdout: the configuration; the stages\n"
  "with their layers and devices; iteration time, samples/s, tokens/s, tokens per GPU per\n"
  "second and MFU; memory per device against capacity; the bottleneck (the largest of:\n"
  "slowest stage x gas, pipeline fill and drain, hand-offs, gradient sync); how much of the\n"
  "layer times the profile measured; how the plan compares with baseline solvers run on\n"
  "the same instance (default dp,megatron,amp,hethub,dhondt,osdp,pipette; --time-limit\n"
  "each, default 10 s; 'none' runs none); and the proven lower bound and gap when the plan\n"
  "file's solver proved one over the whole space. --memory-weight W sets the dhondt\n"
  "baseline's SageMaker memory_weight (default 0.8).\n"
  "\n"
  "The model, cluster and gbs come from the plan file's \"inputs\" (written by 'plan'), or\n"
  "from the flags.\n"
  "\n"
  "exit codes: 0 written (also for a plan that does not fit: the page says so), 4 the plan\n"
  "is invalid, 3 an input file is bad, 2 usage.\n";

#define DEFAULT_BASELINES "dp,megatron,amp,hethub,dhondt,osdp,pipette"

typedef struct report_opts {
  int html;
  const char *solvers;
} report_opts;

static const cli_flag flags[] = {
  CLI_FLAG_PLAN, CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_GBS, CLI_FLAG_SCHEDULE, CLI_FLAGS_JOB_12,
  CLI_FLAG_PROFILE, CLI_FLAG_ACCEPT_PROFILE, CLI_FLAG_JOB,
  { .name = "html", CLI_OWN_SWITCH(report_opts, html),
    .help = "HTML, with the placement and a simulated iteration as SVG, not Markdown" },
  CLI_FLAG_OUT,
  { .name = "solvers", .arg = "a,b,...", CLI_OWN_TEXT(report_opts, solvers),
    .help = "the baselines run beside the plan, comma-separated, or none (default "
            DEFAULT_BASELINES ")" },
  CLI_FLAG_TIME_LIMIT, CLI_FLAG_MEM_MARGIN, CLI_FLAG_MEMORY_WEIGHT,
};

/* The baselines' names, before any work. */
static int check(cli_ctx *c)
{
  const report_opts *o = c->opts;
  char list[512], why[400];
  snprintf(list, sizeof list, "%s", o->solvers ? o->solvers : DEFAULT_BASELINES);
  if (strcmp(list, "none")) {
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
      if (!hp_solver_find(t) && !hp_solver_not_built(t, why, sizeof why)) {
        fprintf(stderr, "hetplan report: unknown solver '%s' (see 'hetplan solvers')\n", t);
        return EXIT_USAGE;
      }
  }
  return EXIT_OK_;
}

static int run(cli_ctx *c)
{
  const report_opts *o = c->opts;
  const char *plan_file = c->core.plan;
  const hp_problem *prob = c->prob;
  const hp_plan *plan = c->plan;
  hp_plan_info info;
  hp_report_in in = {0};
  hp_report_row rows[32];
  hp_result res[32];
  char why[32][400];
  hp_diag d;
  hp_err err;
  char *text = NULL, list[512];
  int n = 0, rc;
  snprintf(list, sizeof list, "%s", o->solvers ? o->solvers : DEFAULT_BASELINES);
  cli_diag_init(&d);
  memset(&info, 0, sizeof info);
  hp_plan_info_load(plan_file, &info, &d);   /* the solver block, if any */
  if (strcmp(list, "none")) {
    char *save = NULL;
    hp_limits lim = c->lim;
    if (lim.time_limit <= 0) lim.time_limit = 10;
    for (char *t = strtok_r(list, ",", &save); t && n < 32; t = strtok_r(NULL, ",", &save)) {
      const hp_solver *s = hp_solver_find(t);
      hp_report_row *r = &rows[n];
      hp_diag sd;
      cli_diag_init(&sd);
      memset(r, 0, sizeof *r);
      r->name = t;
      hp_result_init(&res[n]);
      if (!s) {
        hp_solver_not_built(t, why[n], sizeof why[n]);
        r->why = why[n++];
        continue;
      }
      if (hp_solver_run(s, prob, NULL, &lim, &res[n], &sd)) {
        snprintf(why[n], sizeof why[n], "refused: %.380s", sd.msg);
        hp_result_init(&res[n]);
      } else if (res[n].plan) {
        r->plan = res[n].plan;
        r->time = res[n].objective;
        r->fits = res[n].fits;
      } else {
        hp_result_no_plan_text(&res[n], why[n], sizeof why[n]);
      }
      r->why = why[n];
      n++;
    }
  }
  in.title = plan_file;
  in.info = &info;
  in.rows = rows;
  in.n_rows = n;
  in.html = o->html;
  if ((err = hp_report_write(prob, plan, &in, &text, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  rc = cli_write(c->core.out, text);
  if (!rc && c->core.out) fprintf(stderr, "hetplan: wrote %s\n", c->core.out);
done:
  free(text);
  for (int i = 0; i < n; i++) hp_result_release(&res[i]);
  hp_plan_info_release(&info);
  return rc;
}

const cli_cmd cli_cmd_report = {
  .name = "report",
  .summary = "one page on a plan: configuration, stages, throughput, MFU, memory,\n"
             "bottleneck, profile coverage, baselines (Markdown, or --html)",
  .help = help,
  CLI_FLAGS(flags),
  .opts_size = sizeof(report_opts),
  .steps = CLI_CHECK_OUT | CLI_PLAN,   /* -o checked before the baselines run */
  .check = check,
  .run = run,
};
