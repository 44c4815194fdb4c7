/* cmd_plan.c -- `hetplan plan`: runs a solver, re-scores its plan with the evaluator and
 * writes the plan file (formats.md) with the solver block. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan plan --model M --cluster C --gbs N [--solver NAME] [--schedule 1f1b|gpipe]\n"
  "                    [--profile F] [--strict-profile] [--job J] [--time-limit S]\n"
  "                    [--seed N] [--max-work N]\n"
  "                    [--top K] [--show-rejected] [-o plan.json]\n"
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
  "exit codes: 0 a plan was found, 5 the solver's plan does not fit in memory (written,\n"
  "status \"does-not-fit\"), 6 none was found (or none fits: the solver block says which),\n"
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

int cmd_plan(int argc, char **argv)
{
  cli_opts o;
  hp_problem *prob = NULL;
  const hp_solver *s;
  hp_limits lim;
  cli_progress pg;
  hp_result res;
  hp_eval e = {0};
  hp_coverage *cov = NULL;
  hp_diag d;
  hp_err err;
  char *text = NULL;
  int interrupted = 0;
  int rc = cli_parse(argc, argv, 2, "plan",
                     "model cluster gbs solver schedule profile strict-profile job time-limit "
                     "seed max-work top show-rejected out",
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
  if ((rc = cli_check_output(o.out))) return rc;   /* before the search, not after */
  if ((rc = cli_load_problem(&o, "plan", &prob))) return rc;
  hp_result_init(&res);
  if ((rc = cli_coverage(prob, HP_COV_SPACE, NULL, &cov))) goto done;
  cli_print_coverage(stderr, prob, cov);
  if (o.strict_profile && (rc = cli_strict_profile(prob, cov))) goto done;
  hp_coverage_destroy(&cov);
  cli_diag_init(&d);
  hp_limits_init(&lim);
  lim.time_limit = o.time_limit;
  lim.seed = o.seed;
  lim.max_work = o.max_work;
  lim.top = o.top;
  lim.keep_rejected = o.show_rejected;
  cli_progress_attach(&lim, &pg);
  cli_interrupt_attach(&lim);
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
  interrupted = res.stopped == HP_STOP_INTERRUPT;
  if (!res.plan) {
    if (interrupted) {
      fprintf(stderr, "hetplan: interrupted (%s) before the solver found a plan: nothing "
              "written\n", cli_interrupted() == SIGTERM ? "SIGTERM" : "SIGINT");
      rc = EXIT_INTERRUPTED;
      goto done;
    }
    fprintf(stderr, "hetplan: no plan: %s\n", res.status == HP_SOL_INFEASIBLE
            ? "no plan of the search space fits in memory (proved)"
            : "the solver found none within its limits");
    rc = EXIT_NO_PLAN;
    goto done;
  }
  if ((rc = cli_coverage(prob, HP_COV_PLAN, res.plan, &cov))) goto done;
  if ((err = hp_evaluate(prob, res.plan, &e, &d)) ||
      (err = hp_plan_to_json(prob, res.plan, &e, &res, s->name, &text, &d)) ||
      (err = hp_coverage_add_to_json(cov, prob, &text, &d))) {
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
  if (!res.fits)
    fprintf(stderr, "hetplan: the plan of solver %s does not fit in memory: device %d (stage "
            "%d) needs %.3f GiB of %.3f GiB; written for reference, not for use\n", s->name,
            e.oom_device, e.oom_stage, e.mem[e.oom_device] / GIB, e.cap[e.oom_device] / GIB);
  if (interrupted)
    fprintf(stderr, "hetplan: interrupted (%s): this is the best plan found so far; its file "
            "says \"stopped\": \"interrupted\"\n",
            cli_interrupted() == SIGTERM ? "SIGTERM" : "SIGINT");
  if (!interrupted && cli_interrupted())
    fprintf(stderr, "hetplan: the interrupt came as the solver finished: its result is "
            "complete\n");
  rc = cli_write(o.out, text);
  if (!rc && interrupted) rc = EXIT_INTERRUPTED;
  else if (!rc && !res.fits) rc = EXIT_OOM;
done:
  hp_coverage_destroy(&cov);
  free(text);
  hp_eval_release(&e);
  hp_result_release(&res);
  hp_problem_destroy(&prob);
  return rc;
}
