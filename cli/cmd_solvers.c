/* cmd_solvers.c -- `hetplan solvers`: the solvers built in. */
#include <string.h>

#include "cli.h"

int cmd_solvers(int argc, char **argv)
{
  cli_opts o;
  int rc = cli_parse(argc, argv, 2, "solvers", "", &o);
  if (rc) return rc;
  if (o.help) {
    fputs("usage: hetplan solvers\n\nLists the solvers built in, in order of preference, "
          "with what each proves\n(exact: a proved optimum over its space; bound: a lower "
          "bound).\n", stdout);
    return EXIT_OK_;
  }
  for (const hp_solver *const *s = hp_solver_all(); *s; s++)
    printf("%-10s %-12s %s\n", (*s)->name,
           ((*s)->flags & HP_SOLVER_EXACT) ? "exact" :
           ((*s)->flags & HP_SOLVER_BOUND) ? "bound" : "heuristic", (*s)->desc);
  return EXIT_OK_;
}
