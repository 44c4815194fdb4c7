/* cmd_solvers.c -- `hetplan solvers`: the solvers built in. */
#include <string.h>

#include "cli.h"

static int run(cli_ctx *c)
{
  (void)c;
  for (const hp_solver *const *s = hp_solver_all(); *s; s++)
    printf("%-10s %-12s %s\n", (*s)->name,
           ((*s)->flags & HP_SOLVER_EXACT) ? "exact" :
           ((*s)->flags & HP_SOLVER_BOUND) ? "bound" : "heuristic", (*s)->desc);
  return EXIT_OK_;
}

const cli_cmd cli_cmd_solvers = {
  .name = "solvers",
  .summary = "list the solvers built in",
  .help = "usage: hetplan solvers\n\nLists the solvers built in, in order of preference, with "
          "what each proves\n(exact: a proved optimum over its space; bound: a lower bound).\n",
  .run = run,
};
