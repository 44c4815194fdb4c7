/* cmd_plan.c -- `hetplan plan`: runs a solver, re-scores its plan with the evaluator and
 * writes the plan file (formats.md) with the solver block. */
#include <math.h>
#include <stdlib.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan plan --model M --cluster C --gbs N [--solver NAME] [--schedule 1f1b|gpipe]\n"
  "                    [--profile F] [--job J] [--time-limit S] [--seed N] [--max-work N]\n"
  "                    [-o plan.json]\n"
  "\n"
  "Searches for the fastest plan that fits in memory with the named solver (default: the\n"
  "first of 'hetplan solvers') and writes the plan file: to -o, else to stdout. A summary\n"
  "goes to stderr. The plan's figures are always the evaluator's.\n"
  "\n"
  "exit codes: 0 a plan was found, 6 none was found (or none fits: the solver block says\n"
  "which), 3 an input file is bad, 2 usage.\n";

int cmd_plan(int argc, char **argv)
{
  cli_opts o;
  hp_problem *prob = NULL;
  const hp_solver *s;
  hp_limits lim;
  hp_result res;
  hp_eval e = {0};
  hp_diag d;
  hp_err err;
  char *text = NULL;
  int rc = cli_parse(argc, argv, 2, "plan",
                     "model cluster gbs solver schedule profile job time-limit seed max-work out",
                     &o);
  if (rc) return rc;
  if (o.help) { fputs(help, stdout); return EXIT_OK_; }
  s = o.solver ? hp_solver_find(o.solver) : hp_solver_all()[0];
  if (!s) {
    fprintf(stderr, "hetplan plan: unknown solver '%s' (see 'hetplan solvers')\n", o.solver);
    return EXIT_USAGE;
  }
  if ((rc = cli_load_problem(&o, "plan", &prob))) return rc;
  cli_diag_init(&d);
  hp_limits_init(&lim);
  lim.time_limit = o.time_limit;
  lim.seed = o.seed;
  lim.max_work = o.max_work;
  hp_result_init(&res);
  if ((err = hp_solver_run(s, prob, NULL, &lim, &res, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  fprintf(stderr, "hetplan: solver %s: %s in %.3f s (%ld plans or states)\n", s->name,
          hp_sol_status_name(res.status), res.seconds, res.work);
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
  fprintf(stderr, "hetplan: pp %d tp %d dp %d mbs %d: iteration %.6f s, %.4f samples/s%s\n",
          res.plan->pp, res.plan->tp, res.plan->dp, res.plan->mbs, e.iteration_time,
          e.throughput, isfinite(res.bound) ? ", optimal over its space" : "");
  rc = cli_write(o.out, text);
done:
  free(text);
  hp_eval_release(&e);
  hp_result_release(&res);
  hp_problem_destroy(&prob);
  return rc;
}
