/* cmd_plan.c -- `hetplan plan`: runs a solver, re-scores its plan with the evaluator and
 * writes the plan file (formats.md) with the solver block. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan plan --model M --cluster C --gbs N [--solver NAME] [--schedule 1f1b|gpipe]\n"
  "                    [--profile F [--accept-profile-mismatch]] [--strict-profile] [--job J] [--time-limit S]\n"
  "                    [--seed N] [--max-work N] [--top K] [--show-rejected]\n"
  "                    [--mem-margin F] [-o plan.json]\n"
  "                    [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST] [--uniform-sharding]\n"
  "                    [--idle-devices] [--max-slices N] [--compute-model shape|flops] [--memory-weight W]\n"
  "                    [--framework F]\n"
  "\n"
  "Searches for the fastest plan that fits in memory with the named solver (default: the\n"
  "first of 'hetplan solvers') and writes the plan file: to -o, else to stdout. A summary\n"
  "goes to stderr. The plan's figures are always the evaluator's. --top K lists the K\n"
  "best plans found (on stderr); --show-rejected also lists the fastest plans that do not\n"
  "fit in memory, with the device and the overflow: they are never recommended.\n"
  "Before searching it prints (stderr) the profile coverage of the search space: which\n"
  "(layer kind, device type, tp, mbs) cells --profile measures, which are derived from\n"
  "measured points at other mbs, which are estimated from FLOPs; --strict-profile\n"
  "refuses to plan when any cell would be estimated (exit 3). The plan file carries the\n"
  "coverage of the chosen plan (profile_coverage).\n"
  "\n"
  "When no plan fits, it says whether that is proved (only a solver that covers the\n"
  "whole space can prove it: enum, glpk, cbc) or only that none was found, then names the\n"
  "nearest miss (the device, its stage and how many GiB it is short) and the changes that\n"
  "would make a plan fit (larger or more GPUs, no margin, 1F1B), each re-planned and scored.\n"
  "\n"
  "--mem-margin F keeps the fraction F of every device's memory free (default 0, or the\n"
  "cluster file's mem_margin: see docs/memory-margin.md). --model may be a Hugging Face\n"
  "config.json.\n"
  "\n"
  "--memory-weight W (dhondt only) is SageMaker's memory_weight: a layer's cost is W x its\n"
  "memory share + (1 - W) x its compute share (default 0.8, SageMaker's; docs/search.md).\n"
  "\n"
  "exit codes: 0 a plan was found, 5 the solver's plan does not fit in memory (written,\n"
  "status \"does-not-fit\"), 6 none was found (or none fits: the message says which),\n"
  "7 interrupted by Ctrl-C or SIGTERM (the best plan so far is written, marked\n"
  "\"stopped\": \"interrupted\"; a second signal quits at once), 8 the output cannot be\n"
  "written, 3 an input file is bad, 2 usage.\n";

#define GIB 1073741824.0

/* A ranking on stderr: one line a plan, with its layers per stage. */
static void print_ranking(const hp_problem *prob, const char *title, const hp_ranked *r, int n)
{
  fprintf(stderr, "\n%s:\n rank  pp  tp  dp  mbs   gas  iteration s  samples/s  %-28s  stages (layers)\n",
          title, "memory");
  for (int i = 0; i < n; i++) {
    const hp_plan *p = r[i].plan;
    char mem[64], split[160];
    int len = 0;
    if (r[i].oom_device >= 0)
      snprintf(mem, sizeof mem, "device %d over by %.3f GiB", r[i].oom_device, r[i].oom_bytes / GIB);
    else
      snprintf(mem, sizeof mem, "fits");
    split[0] = '\0';
    for (int s = 0; s < p->pp && len < 140; s++)
      len += snprintf(split + len, sizeof split - (size_t)len, "%s%d", s ? " " : "",
                      p->first[s + 1] - p->first[s]);
    if (len >= 140) snprintf(split + 136, sizeof split - 136, " ...");
    fprintf(stderr, "%5d %3d %3d %3d %4d %5ld %12.6f %10.4f  %-28s  %s\n", i + 1, p->pp, p->tp,
            p->dp, p->mbs, p->gas, r[i].time, (double)prob->job.gbs / r[i].time, mem, split);
  }
  fputc('\n', stderr);
}

/* When nothing fits: the nearest miss and the changes that make a plan fit (explain.c). */
static int explain(const hp_problem *prob, const cli_ctx *ctx)
{
  const cli_core *o = &ctx->core;
  const hp_cluster *c = prob->cluster;
  hp_explain x;
  hp_limits lim;
  hp_diag d;
  hp_err err;
  char text[400];
  cli_diag_init(&d);
  hp_limits_init(&lim);
  lim.time_limit = o->time_limit;
  lim.stop = ctx->lim.stop;     /* an interrupt cuts the explanation short too */
  if ((err = hp_explain_infeasible(prob, &lim, &x, &d))) return cli_fail(&d, err);
  if (!x.have_miss && cli_interrupted()) {
    fprintf(stderr, "hetplan: interrupted (%s) before the nearest miss was found\n",
            cli_interrupted() == SIGTERM ? "SIGTERM" : "SIGINT");
    hp_explain_release(&x);
    return EXIT_OK_;
  }
  if (!x.have_miss) {
    fprintf(stderr, "hetplan: the search space is empty: no (pp, tp, dp) with dp dividing gbs %ld "
            "and tp dividing every node's GPU count\n", prob->job.gbs);
    return EXIT_OK_;
  }
  if (x.short_bytes > 0) {
    const hp_node *nd = &c->nodes[c->dev_node[x.device]];
    fprintf(stderr, "hetplan: nearest miss: %s\n", hp_plan_describe(x.miss, text, sizeof text));
    fprintf(stderr, "hetplan:   device %d (stage %d, node '%s', %s) needs %.3f GiB of %.3f GiB: "
            "short by %.3f GiB%s", x.device, x.stage, nd->name, c->types[nd->type].name,
            x.need / GIB, x.cap / GIB, x.short_bytes / GIB, x.n_short > 1 ? "" : "\n");
    if (x.n_short > 1) fprintf(stderr, " (%d devices are short)\n", x.n_short);
    fprintf(stderr, "hetplan:   it already takes %s\n", x.levers);
  }
  if (x.n_remedies > 0) {
    fprintf(stderr, "hetplan: %s (each re-planned with the dp solver, scored by the evaluator):\n",
            x.short_bytes > 0 ? "what would make a plan fit" : "a plan fits all the same");
    for (int i = 0; i < x.n_remedies; i++) {
      const hp_remedy *m = &x.remedies[i];
      fprintf(stderr, "hetplan:   - %s\n", m->what);
      fprintf(stderr, "hetplan:     fits: %s: iteration %.6f s, %.4f samples/s\n",
              hp_plan_describe(m->plan, text, sizeof text), m->time,
              (double)m->prob->job.gbs / m->time);
    }
  }
  for (int i = 0; i < x.n_tried; i++)
    fprintf(stderr, "hetplan:   not enough: %s\n", x.tried[i]);
  if (x.short_bytes > 0 && x.n_remedies == 0)
    fprintf(stderr, "hetplan: no change tried makes a plan fit: a smaller model, a shorter "
            "sequence or a cluster with far more memory is needed\n");
  if (cli_interrupted())
    fprintf(stderr, "hetplan: interrupted (%s): the explanation stops at what was tried "
            "before it\n", cli_interrupted() == SIGTERM ? "SIGTERM" : "SIGINT");
  hp_explain_release(&x);
  return EXIT_OK_;
}

/* The GPUs i < n with flag[i], as "0-1, 3"; returns buf. */
static char *gpu_ranges(const unsigned char *flag, int n, char *buf, size_t size)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && len < size; i++) {
    int j = i;
    if (!flag[i]) continue;
    while (j + 1 < n && flag[j + 1]) j++;
    len += (size_t)snprintf(buf + len, size - len, len ? ", %d" : "%d", i);
    if (j > i && len < size) len += (size_t)snprintf(buf + len, size - len, "-%d", j);
    i = j;
  }
  return buf;
}

/* Under a job with idle_devices: which devices the plan leaves idle, by type and node,
 * and why: its time against the best plan the search met that uses every device
 * (res->all_used_time, found by the search itself). One line when it uses them all. */
static void say_idle(const hp_problem *prob, const hp_result *res, const hp_eval *e)
{
  const hp_cluster *c = prob->cluster;
  int first_type = 1;
  if (!prob->job.idle_devices || !e->idle) return;
  if (e->n_used == e->n_devices) {
    fprintf(stderr, "hetplan: idle devices allowed: the best plan found uses every device\n");
    return;
  }
  fprintf(stderr, "hetplan: leaving");
  for (int t = 0; t < c->n_types; t++) {
    int n = 0, first_node = 1;
    for (int dv = 0; dv < c->n_devices; dv++) n += e->idle[dv] && c->nodes[c->dev_node[dv]].type == t;
    if (!n) continue;
    fprintf(stderr, "%s %d x %s (", first_type ? "" : " and", n, c->types[t].name);
    for (int k = 0; k < c->n_nodes; k++) {
      const hp_node *nd = &c->nodes[k];
      char ranges[256];
      int m = 0;
      if (nd->type != t) continue;
      for (int g = 0; g < nd->gpus; g++) m += e->idle[nd->first + g];
      if (!m) continue;
      fprintf(stderr, "%snode %s GPU%s %s", first_node ? "" : "; ", nd->name, m > 1 ? "s" : "",
              gpu_ranges(e->idle + nd->first, nd->gpus, ranges, sizeof ranges));
      first_node = 0;
    }
    fprintf(stderr, ")");
    first_type = 0;
  }
  fprintf(stderr, " idle: %.6f s per iteration; ", e->iteration_time);
  if (isnan(res->all_used_time))
    fprintf(stderr, "the search found no plan using every device that fits in memory\n");
  else
    fprintf(stderr, "the best plan found using every device: %.6f s (%+.1f %%)\n",
            res->all_used_time, 100 * (res->all_used_time - e->iteration_time) / e->iteration_time);
}

typedef struct plan_opts {
  const char *solver;
  long top;
  int show_rejected;
  const hp_solver *s;    /* the solver named, found by check */
} plan_opts;

static const cli_flag flags[] = {
  CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_GBS,
  { .name = "solver", .arg = "NAME", CLI_OWN_TEXT(plan_opts, solver),
    .help = "the solver (default: the first of 'hetplan solvers')" },
  CLI_FLAG_SCHEDULE, CLI_FLAGS_JOB_12, CLI_FLAG_FRAMEWORK, CLI_FLAG_PROFILE, CLI_FLAG_ACCEPT_PROFILE, CLI_FLAG_STRICT_PROFILE, CLI_FLAG_JOB,
  CLI_FLAG_TIME_LIMIT, CLI_FLAG_SEED, CLI_FLAG_MAX_WORK, CLI_FLAG_MEMORY_WEIGHT,
  { .name = "top", .arg = "K", CLI_OWN_INT(plan_opts, top, 1, 1000), .def = "1",
    .help = "list the K best plans found, on stderr" },
  { .name = "show-rejected", CLI_OWN_SWITCH(plan_opts, show_rejected),
    .help = "also list the fastest plans that do not fit in memory" },
  CLI_FLAG_OUT, CLI_FLAG_MEM_MARGIN,
};

/* The solver, and what a process of a team does (before -o is checked or a file read). */
static int check(cli_ctx *c)
{
  plan_opts *o = c->opts;
  const hp_team *team = cli_team();
  const hp_solver *s = o->solver ? hp_solver_find(o->solver) : hp_solver_all()[0];
  if (!s) {
    char why[256];
    if (hp_solver_not_built(o->solver, why, sizeof why))
      fprintf(stderr, "hetplan plan: %s\n", why);
    else
      fprintf(stderr, "hetplan plan: unknown solver '%s' (see 'hetplan solvers')\n", o->solver);
    return EXIT_USAGE;
  }
  o->s = s;
  if (team && team->rank > 0) {
    /* rank 0 prints and writes; the others search with it (or, for a solver that does not
     * share its search, leave it to rank 0) and keep quiet */
    if (!(s->flags & HP_SOLVER_TEAM)) return CLI_DONE;
    c->core.out = NULL;                /* its stdout and stderr are /dev/null (main.c) */
    o->top = 1;
    o->show_rejected = 0;
  }
  if (team && team->rank == 0 && !(s->flags & HP_SOLVER_TEAM))
    fprintf(stderr, "hetplan: solver %s does not share its search: rank 0 runs it alone (glpk "
            "and cbc share theirs among the %d processes)\n", s->name, team->size);
  return EXIT_OK_;
}

static int run(cli_ctx *ctx)
{
  const plan_opts *o = ctx->opts;
  const hp_problem *prob = ctx->prob;
  const hp_solver *s = o->s;
  hp_limits *lim = &ctx->lim;
  hp_result res;
  const hp_eval *e = &res.eval;        /* the winner's figures, as hp_solver_run scored it */
  hp_coverage *cov = NULL;
  hp_diag d;
  hp_err err;
  char *text = NULL;
  int rc, interrupted = 0;
  const hp_team *team = cli_team();
  hp_result_init(&res);
  cli_diag_init(&d);
  lim->top = (int)o->top;
  lim->keep_rejected = o->show_rejected;
  if (team && (s->flags & HP_SOLVER_TEAM)) lim->team = team;
  if ((err = hp_solver_run(s, prob, NULL, lim, &res, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  fprintf(stderr, "hetplan: solver %s: %s in %.3f s (%ld plans or states)\n", s->name,
          hp_sol_status_name(res.status), res.seconds, res.work);
  if (o->top > 1 && res.n_top > 0) print_ranking(prob, "best plans", res.top, res.n_top);
  if (o->show_rejected) {
    if (res.n_rejected > 0) print_ranking(prob, "fastest plans that do not fit (never recommended)",
                                          res.rejected, res.n_rejected);
    else fprintf(stderr, "hetplan: no rejected plan kept by solver %s\n", s->name);
  }
  interrupted = res.stopped == HP_STOP_INTERRUPT;
  if (!res.plan) {
    char why[400];
    if (interrupted) {
      fprintf(stderr, "hetplan: interrupted (%s) before the solver found a plan: nothing "
              "written\n", cli_interrupted() == SIGTERM ? "SIGTERM" : "SIGINT");
      rc = EXIT_INTERRUPTED;
      goto done;
    }
    fprintf(stderr, "hetplan: no plan: %s\n", hp_result_no_plan_text(&res, why, sizeof why));
    rc = explain(prob, ctx);
    if (!rc) rc = EXIT_NO_PLAN;
    goto done;
  }
  if ((rc = cli_coverage(prob, HP_COV_PLAN, res.plan, &cov))) goto done;
  if ((err = hp_plan_to_json(prob, res.plan, e, &res, s->name, cov, &text, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  fprintf(stderr, "hetplan: pp %d tp %d dp %d mbs %d: iteration %.6f s, %.4f samples/s",
          res.plan->pp, res.plan->tp, res.plan->dp, res.plan->mbs, e->iteration_time,
          e->throughput);
  if (res.status == HP_SOL_OPTIMAL)
    fprintf(stderr, ", optimal over its space\n");
  else if (isfinite(res.bound))
    fprintf(stderr, ", lower bound %.6f s (gap %.2f%%) over its space\n", res.bound,
            100 * (res.objective - res.bound) / res.objective);
  else
    fprintf(stderr, "\n");
  say_idle(prob, &res, e);
  if (res.stopped != HP_STOP_NONE && !interrupted)      /* what the search did not finish, and so what is not claimed */
    fprintf(stderr, "hetplan: the search stopped (%s)%s%s\n", hp_stop_name(res.stopped),
            res.space == HP_SPACE_INCOMPLETE ? ": " : "",
            res.space == HP_SPACE_INCOMPLETE ? res.space_note : "");
  {
    const hp_cluster *c = prob->cluster;
    double h = cli_headroom(e);
    if (c->mem_margin > 0)
      fprintf(stderr, "hetplan: memory margin %g %%: every device stays below %g %% of its "
              "memory; the tightest has %.1f %% of that capacity free\n", 100 * c->mem_margin,
              100 * (1 - c->mem_margin), 100 * h);
    else if (h < 0.02)
      fprintf(stderr, "hetplan: note: a device would use %.1f %% of its memory; the estimate has "
              "no slack for allocator fragmentation: --mem-margin 0.05 keeps 5 %% free "
              "(docs/memory-margin.md)\n", 100 * (1 - h));
  }
  if (!res.fits)
    fprintf(stderr, "hetplan: the plan of solver %s does not fit in memory: device %d (stage "
            "%d) needs %.3f GiB of %.3f GiB; written for reference, not for use\n", s->name,
            e->oom_device, e->oom_stage, e->mem[e->oom_device] / GIB, e->cap[e->oom_device] / GIB);
  if (interrupted)
    fprintf(stderr, "hetplan: interrupted (%s): this is the best plan found so far; its file "
            "says \"stopped\": \"interrupted\"\n",
            cli_interrupted() == SIGTERM ? "SIGTERM" : "SIGINT");
  if (!interrupted && cli_interrupted())
    fprintf(stderr, "hetplan: the interrupt came as the solver finished: its result is "
            "complete\n");
  rc = cli_write(ctx->core.out, text);
  if (!rc && interrupted) rc = EXIT_INTERRUPTED;
  else if (!rc && !res.fits) rc = EXIT_OOM;
done:
  hp_coverage_destroy(&cov);
  free(text);
  hp_result_release(&res);
  return rc;
}

const cli_cmd cli_cmd_plan = {
  .name = "plan",
  .summary = "search for the best plan with a solver and write the plan file",
  .help = help,
  CLI_FLAGS(flags),
  .opts_size = sizeof(plan_opts),
  .steps = CLI_CHECK_OUT | CLI_PROBLEM | CLI_COVER_SPACE | CLI_PROGRESS | CLI_INTERRUPT,
  .check = check,
  .run = run,
};
