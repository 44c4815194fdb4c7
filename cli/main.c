/* main.c -- the hetplan command: dispatch to a command of the table (cli_commands.c),
 * rank 0 alone speaking under mpirun; no planning logic here. */
#include <string.h>

#include "cli.h"

static int run(int argc, char **argv)
{
  const char *name = argc > 1 ? argv[1] : NULL;
  const cli_cmd *cmd;
  if (!name || !strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
    cli_usage_print(name ? stdout : stderr);
    return name ? EXIT_OK_ : EXIT_USAGE;
  }
  if (!strcmp(name, "--version")) name = "version";
  if ((cmd = cli_command_find(name))) return cli_command_run(cmd, argc, argv);
  fprintf(stderr, "hetplan: unknown command '%s'\n\n", name);
  cli_usage_print(stderr);
  return EXIT_USAGE;
}

int main(int argc, char **argv)
{
  int rc = cli_team_start(&argc, &argv);
  const hp_team *team;
  if (rc == -2) {
    fprintf(stderr, "hetplan: started by mpirun with other processes, but this build has no MPI "
            "(build it where Open MPI is, without MPI=0), or run it without mpirun\n");
    return EXIT_USAGE;
  }
  if (rc) {
    fprintf(stderr, "hetplan: MPI could not start (under mpirun)\n");
    return EXIT_ERROR;
  }
  team = cli_team();
  /* rank 0 speaks for the team: the others print nothing (they read the same inputs, so
   * any error they meet, rank 0 meets and prints too); only `plan` shares its search, any
   * other command runs on rank 0 alone */
  if (team && team->rank > 0 &&
      (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)))
    rc = EXIT_IO;
  else if (team && team->rank > 0 && !(argc > 1 && !strcmp(argv[1], "plan")))
    rc = EXIT_OK_;
  else
    rc = run(argc, argv);
  cli_team_end();
  return rc;
}
