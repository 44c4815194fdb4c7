/* cmd_plan.c -- `hetplan plan`: runs a solver, re-scores its plan with the evaluator and
 * writes the plan file (formats.md) with the solver block. */
#include <math.h>
#include <stdlib.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan plan --model M --cluster C --gbs N [--solver NAME] [--schedule 1f1b|gpipe]\n"
  "                    [--profile F] [--job J] [--time-limit S] [--seed N] [--max-work N]\n"
  "                    [--top K] [--show-rejected] [-o plan.json]\n"
  "\n"
  "Searches for the fastest plan that fits in memory with the named solver (default: the\n"
  "first of 'hetplan solvers') and writes the plan file: to -o, else to stdout. A summary\n"
  "goes to stderr. The plan's figures are always the evaluator's. --top K lists the K\n"
  "best plans found (on stderr); --show-rejected also lists the fastest plans that do not\n"
  "fit in memory, with the device and the overflow: they are never recommended.\n"
  "\n"
  "exit codes: 0 a plan was found, 6 none was found (or none fits: the solver block says\n"
  "which), 3 an input file is bad, 2 usage.\n";

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

int cmd_plan(int argc, char **argv)
{
  cli_opts o;
  hp_problem *prob = NULL;
  const hp_solver *s;
  hp_limits lim;
  cli_progress pg;
  hp_result res;
  hp_eval e = {0};
  hp_diag d;
  hp_err err;
  char *text = NULL;
  int rc = cli_parse(argc, argv, 2, "plan",
                     "model cluster gbs solver schedule profile job time-limit seed max-work "
                     "top show-rejected out mem-margin",
                     &o);
  if (rc) return rc;
  if (o.help) { fputs(help, stdout); return EXIT_OK_; }
  s = o.solver ? hp_solver_find(o.solver) : hp_solver_all()[0];
  if (!s) {
    char why[256];
    if (hp_solver_not_built(o.solver, why, sizeof why))
      fprintf(stderr, "hetplan plan: %s\n", why);
    else
      fprintf(stderr, "hetplan plan: unknown solver '%s' (see 'hetplan solvers')\n", o.solver);
    return EXIT_USAGE;
  }
  if ((rc = cli_load_problem(&o, "plan", &prob))) return rc;
  cli_diag_init(&d);
  hp_limits_init(&lim);
  lim.time_limit = o.time_limit;
  lim.seed = o.seed;
  lim.max_work = o.max_work;
  lim.top = o.top;
  lim.keep_rejected = o.show_rejected;
  cli_progress_attach(&lim, &pg);
  hp_result_init(&res);
  if ((err = hp_solver_run(s, prob, NULL, &lim, &res, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  fprintf(stderr, "hetplan: solver %s: %s in %.3f s (%ld plans or states)\n", s->name,
          hp_sol_status_name(res.status), res.seconds, res.work);
  if (o.top > 1 && res.n_top > 0) print_ranking(prob, "best plans", res.top, res.n_top);
  if (o.show_rejected) {
    if (res.n_rejected > 0) print_ranking(prob, "fastest plans that do not fit (never recommended)",
                                          res.rejected, res.n_rejected);
    else fprintf(stderr, "hetplan: no rejected plan kept by solver %s\n", s->name);
  }
  if (!res.plan) {
    fprintf(stderr, "hetplan: no plan: %s\n", res.status == HP_SOL_INFEASIBLE
            ? "no plan of the search space fits in memory (proved)"
            : "the solver found none within its limits");
    rc = EXIT_NO_PLAN;
    goto done;
  }
  if ((err = hp_evaluate(prob, res.plan, &e, &d)) ||
      (err = hp_plan_to_json(prob, res.plan, &e, &res, s->name, &text, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  fprintf(stderr, "hetplan: pp %d tp %d dp %d mbs %d: iteration %.6f s, %.4f samples/s",
          res.plan->pp, res.plan->tp, res.plan->dp, res.plan->mbs, e.iteration_time,
          e.throughput);
  if (res.status == HP_SOL_OPTIMAL)
    fprintf(stderr, ", optimal over its space\n");
  else if (isfinite(res.bound))
    fprintf(stderr, ", lower bound %.6f s (gap %.2f%%) over its space\n", res.bound,
            100 * (res.objective - res.bound) / res.objective);
  else
    fprintf(stderr, "\n");
  rc = cli_write(o.out, text);
done:
  free(text);
  hp_eval_release(&e);
  hp_result_release(&res);
  hp_problem_destroy(&prob);
  return rc;
}
