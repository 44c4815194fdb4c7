/* cmd_compare.c -- `hetplan compare`: runs several solvers on one instance and prints
 * one table: each plan's iteration time (the evaluator's), throughput, memory headroom,
 * solve time, and what is proved (a bound, the distance from the best bound). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan compare --model M --cluster C --gbs N [--solvers a,b,...] [--schedule S]\n"
  "                       [--profile F [--accept-profile-mismatch]] [--job J] [--time-limit S] [--seed N] [--max-work N]\n"
  "                       [--mem-margin F] [--json]\n"
  "                       [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST] [--uniform-sharding]\n"
  "                       [--idle-devices] [--max-slices N] [--compute-model shape|flops] [--memory-weight W]\n"
  "\n"
  "Runs each solver (default: every solver built in) on the instance and prints one row\n"
  "each: status, iteration time and throughput of its plan as the evaluator scores it,\n"
  "the smallest memory headroom of any device, solve time, its proven lower bound (over\n"
  "the space that solver searched: see its 'space'), and its distance above the best\n"
  "bound proved over the whole space ('proven gap'; '-' while none is). Only plans that\n"
  "fit are ranked ('rank', 'vs best'): a plan that does not fit shows the status\n"
  "does-not-fit with its device and overflow, never 'feasible'. The last column is the\n"
  "configuration each solver chose (degrees, micro-batch, layers per stage, recompute,\n"
  "ZeRO-3), or why it has none (whether it is proved that none fits). A solver that\n"
  "refuses the instance says why. --json prints the rows as JSON, configurations included.\n"
  "--mem-margin F keeps that fraction of every device's memory free.\n"
  "--time-limit and --max-work apply to each solver. --memory-weight W sets dhondt's\n"
  "SageMaker memory_weight (default 0.8).\n";

typedef struct row {
  const hp_solver *s;
  hp_result r;
  hp_err err;
  char why[512];
  double headroom;
  int oom_device;      /* the plan's lowest overflowing device, -1 if it fits */
  double oom_bytes;
  int rank;            /* 1 = fastest plan that fits; 0 = no plan, or it does not fit */
  char config[400];    /* the plan's configuration in words */
} row;

static void json_str(const char *t)
{
  putchar('"');
  for (const char *c = t; *c; c++) {
    if (*c == '"' || *c == '\\') putchar('\\');
    if ((unsigned char)*c >= 0x20) putchar(*c);
  }
  putchar('"');
}

/* The status a reader sees: a plan that does not fit is never "feasible" or "optimal". */
static const char *shown_status(const row *w)
{
  if (w->r.plan && !w->r.fits) return "does-not-fit";
  return hp_sol_status_name(w->r.status);
}

typedef struct compare_opts {
  const char *solvers;
  int json;
  const hp_solver *list[64];   /* the solvers named (or all), found by check */
  int n;
} compare_opts;

static const cli_flag flags[] = {
  CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_GBS,
  { .name = "solvers", .arg = "a,b,...", CLI_OWN_TEXT(compare_opts, solvers),
    .help = "the solvers to run, comma-separated (default: every solver built in)" },
  CLI_FLAG_SCHEDULE, CLI_FLAGS_JOB_12, CLI_FLAG_PROFILE, CLI_FLAG_ACCEPT_PROFILE, CLI_FLAG_JOB, CLI_FLAG_TIME_LIMIT, CLI_FLAG_SEED,
  CLI_FLAG_MAX_WORK, CLI_FLAG_MEMORY_WEIGHT,
  { .name = "json", CLI_OWN_SWITCH(compare_opts, json),
    .help = "print the rows as JSON, configurations included" },
  CLI_FLAG_MEM_MARGIN,
};

/* The solvers: named, or all. */
static int check(cli_ctx *c)
{
  compare_opts *o = c->opts;
  if (o->solvers) {
    char buf[512], *save = NULL;
    snprintf(buf, sizeof buf, "%s", o->solvers);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      const hp_solver *s = hp_solver_find(t);
      if (!s) {
        char why[256];
        if (hp_solver_not_built(t, why, sizeof why))
          fprintf(stderr, "hetplan compare: %s\n", why);
        else
          fprintf(stderr, "hetplan compare: unknown solver '%s' (see 'hetplan solvers')\n", t);
        return EXIT_USAGE;
      }
      if (o->n < 64) o->list[o->n++] = s;
    }
  } else {
    for (const hp_solver *const *s = hp_solver_all(); *s && o->n < 64; s++) o->list[o->n++] = *s;
  }
  return EXIT_OK_;
}

static int run(cli_ctx *ctx)
{
  const compare_opts *o = ctx->opts;
  const hp_problem *prob = ctx->prob;
  row rows[64];
  int n = o->n;
  double best_bound = -INFINITY, best_time = INFINITY;
  for (int i = 0; i < n; i++) rows[i].s = o->list[i];

  for (int i = 0; i < n; i++) {
    row *w = &rows[i];
    hp_diag d;
    if (cli_interrupted()) {
      w->err = HP_LIMIT;
      snprintf(w->why, sizeof w->why, "skipped: interrupted");
      hp_result_init(&w->r);
      continue;
    }
    cli_diag_init(&d);
    cli_progress_attach(&ctx->lim, &ctx->progress);
    w->why[0] = '\0';
    w->config[0] = '\0';
    w->headroom = NAN;
    w->oom_device = -1;
    w->oom_bytes = 0;
    w->rank = 0;
    w->err = hp_solver_run(w->s, prob, NULL, &ctx->lim, &w->r, &d);
    if (w->err) {
      snprintf(w->why, sizeof w->why, "%s", d.msg);
      hp_result_init(&w->r);
      continue;
    }
    if (w->r.plan) {
      const hp_eval *e = &w->r.eval;     /* the winner's figures, scored by hp_solver_run */
      w->headroom = cli_headroom(e);
      w->oom_device = e->oom_device;
      w->oom_bytes = e->oom_bytes;
      hp_plan_describe(w->r.plan, w->config, sizeof w->config);
      if (w->r.fits && w->r.objective < best_time) best_time = w->r.objective;
    }
    /* only a bound over the whole space bounds every plan */
    if (w->r.space == HP_SPACE_FULL && isfinite(w->r.bound) && w->r.bound > best_bound)
      best_bound = w->r.bound;
  }

  /* ranks: fitting plans only, fastest first */
  for (int i = 0; i < n; i++) {
    row *w = &rows[i];
    if (w->err || !w->r.plan || !w->r.fits) continue;
    w->rank = 1;
    for (int j = 0; j < n; j++)
      if (!rows[j].err && rows[j].r.plan && rows[j].r.fits && rows[j].r.objective < w->r.objective)
        w->rank++;
  }

  if (o->json) {
    printf("{ \"gbs\": %ld, \"best_bound\": ", prob->job.gbs);
    if (isfinite(best_bound)) printf("%.17g", best_bound); else printf("null");
    printf(", \"solvers\": [\n");
    for (int i = 0; i < n; i++) {
      const row *w = &rows[i];
      printf("  { \"name\": \"%s\", ", w->s->name);
      if (w->err) {
        printf("\"status\": \"refused\", \"reason\": \"");
        for (const char *c = w->why; *c; c++) {
          if (*c == '"' || *c == '\\') putchar('\\');
          putchar(*c);
        }
        printf("\" }");
      } else {
        const hp_plan *pl = w->r.plan;
        char why[400];
        printf("\"status\": \"%s\", \"iteration_time\": ", shown_status(w));
        if (pl) {
          printf("%.17g, \"fits\": %s, \"headroom\": %.6f, \"rank\": ", w->r.objective,
                 w->r.fits ? "true" : "false", w->headroom);
          if (w->rank) printf("%d, \"vs_best\": %.9g", w->rank, w->r.objective / best_time - 1);
          else printf("null, \"vs_best\": null");
          if (!w->r.fits)
            printf(", \"out_of_memory\": { \"device\": %d, \"overflow_bytes\": %.17g }",
                   w->oom_device, w->oom_bytes);
          printf(", \"config\": { \"pp\": %d, \"tp\": %d, \"dp\": %d, \"mbs\": %d, \"gas\": %ld, "
                 "\"layers_per_stage\": [", pl->pp, pl->tp, pl->dp, pl->mbs, pl->gas);
          for (int s2 = 0; s2 < pl->pp; s2++)
            printf("%s%d", s2 ? ", " : "", pl->first[s2 + 1] - pl->first[s2]);
          printf("], \"recompute_stages\": [");
          for (int s2 = 0, k = 0; s2 < pl->pp; s2++)
            if (pl->recompute[s2]) printf("%s%d", k++ ? ", " : "", s2);
          printf("], \"zero3_layers\": [");
          for (int l = 0, k = 0; l < pl->n_layers; l++)
            if (hp_plan_sharded(pl, l)) printf("%s%d", k++ ? ", " : "", l);
          printf("], \"text\": ");
          json_str(w->config);
          printf(" }");
        } else {
          printf("null, \"fits\": null, \"rank\": null, \"proved_none_fits\": %s, \"why\": ",
                 hp_result_proves_none_fits(&w->r) ? "true" : "false");
          json_str(hp_result_no_plan_text(&w->r, why, sizeof why));
        }
        printf(", \"solver_status\": \"%s\", \"seconds\": %.6f, \"lower_bound\": ",
               hp_sol_status_name(w->r.status), w->r.seconds);
        if (isfinite(w->r.bound)) printf("%.17g", w->r.bound); else printf("null");
        if (hp_stop_name(w->r.stopped)) printf(", \"stopped\": \"%s\"", hp_stop_name(w->r.stopped));
        else printf(", \"stopped\": null");
        printf(", \"space\": \"%s\", \"space_note\": ", hp_space_name(w->r.space));
        json_str(w->r.space_note);
        printf(" }");
      }
      printf("%s\n", i + 1 < n ? "," : "");
    }
    printf("] }\n");
  } else {
    printf("model %s (%d layers) on %s (%d devices), gbs %ld, %s\n\n", prob->model->name,
           prob->model->n_layers, prob->cluster->name, prob->cluster->n_devices, prob->job.gbs,
           hp_schedule_name(prob->job.schedule));
    printf("%-15s %-12s %12s %10s %9s %9s %12s %10s %4s  %-22s %s\n", "solver", "status",
           "iteration s", "samples/s", "headroom", "solve s", "lower bound", "proven gap", "rank",
           "vs best", "configuration");
    for (int i = 0; i < n; i++) {
      const row *w = &rows[i];
      char vs[64];
      if (w->err) {
        printf("%-15s refused: %s\n", w->s->name, w->why);
        continue;
      }
      printf("%-15s %-12s ", w->s->name, shown_status(w));
      if (w->r.plan)
        printf("%12.6f %10.4f %8.1f%% %9.3f ", w->r.objective,
               (double)prob->job.gbs / w->r.objective, 100 * w->headroom, w->r.seconds);
      else
        printf("%12s %10s %9s %9.3f ", "-", "-", "-", w->r.seconds);
      if (isfinite(w->r.bound)) printf("%12.6f ", w->r.bound); else printf("%12s ", "-");
      if (w->rank && isfinite(best_bound))
        printf("%9.2f%% ", 100 * (w->r.objective - best_bound) / w->r.objective);
      else
        printf("%10s ", "-");
      if (w->rank) {
        printf("%4d  ", w->rank);
        snprintf(vs, sizeof vs, "%+.2f%%", 100 * (w->r.objective / best_time - 1));
      } else {
        printf("%4s  ", "-");
        if (w->r.plan)
          snprintf(vs, sizeof vs, "OOM: dev %d +%.2f GiB", w->oom_device, w->oom_bytes / 1073741824.0);
        else
          snprintf(vs, sizeof vs, "-");
      }
      printf("%-22s ", vs);
      if (w->r.plan) {
        printf("%s\n", w->config);
      } else {
        char why[400];
        printf("%s\n", hp_result_no_plan_text(&w->r, why, sizeof why));
      }
    }
    printf("\nlower bound: proven over the whole space (glpk, cbc: the pattern bound of every "
           "configuration; enum: all plans)\nproven gap: distance above the best bound over the "
           "whole space%s\n",
           isfinite(best_bound) ? "" : " (none proved here)");
  }
  for (int i = 0; i < n; i++) hp_result_release(&rows[i].r);
  if (cli_interrupted()) {
    fprintf(stderr, "hetplan compare: interrupted: the rows above are what ran before it\n");
    return EXIT_INTERRUPTED;
  }
  return EXIT_OK_;
}

const cli_cmd cli_cmd_compare = {
  .name = "compare",
  .summary = "run several solvers on one instance and print one table",
  .help = help,
  CLI_FLAGS(flags),
  .opts_size = sizeof(compare_opts),
  .steps = CLI_PROBLEM | CLI_INTERRUPT,   /* Ctrl-C stops the running solver; the rest are skipped */
  .check = check,
  .run = run,
};
