/* main.c -- the hetplan command: dispatch to a command; no planning logic here. */
#include <string.h>

#include "cli.h"

static const char usage[] =
  "usage: hetplan <command> [flags]\n"
  "\n"
  "Plans the training of a layered model on a (heterogeneous) GPU cluster: pipeline,\n"
  "tensor and data parallel degrees, micro-batch size, stages, placement, ZeRO-3\n"
  "sharding and recompute, scored by one cost model (docs/cost-model.md).\n"
  "\n"
  "commands:\n"
  "  import-hf  turn a Hugging Face config.json into a model file\n"
  "  plan       search for the best plan with a solver and write the plan file\n"
  "  evaluate   score a plan: per-stage and per-replica times, sync, memory\n"
  "  report     one page on a plan: configuration, stages, throughput, MFU, memory,\n"
  "             bottleneck, profile coverage, baselines (Markdown, or --html)\n"
  "  export     launch settings for a plan: Megatron-LM arguments, a DeepSpeed config,\n"
  "             or torchrun commands, with the hostfile and rank order it needs\n"
  "  compare    run several solvers on one instance and print one table\n"
  "  simulate   simulate a plan's iteration event by event (--svg: a Gantt chart)\n"
  "  draw       draw a plan's placement on the cluster as SVG\n"
  "  validate   score many plans by the formula and by simulation; compare the two\n"
  "  export-lp  write the MIP of one configuration as CPLEX LP or free MPS\n"
  "  decode     turn an external solver's solution of that MIP into a plan\n"
  "  expand     print a model's explicit layer list (expands \"transformer\")\n"
  "  describe   check and summarise model, cluster and profile files\n"
  "  solvers    list the solvers built in\n"
  "  version    print the version and the cost-model version\n"
  "\n"
  "'hetplan <command> --help' describes each command's flags. Wherever --model is asked\n"
  "for, a Hugging Face config.json will do (recognised by its keys).\n"
  "\n"
  "exit codes: 0 success, 1 internal error, 2 usage error, 3 bad input file,\n"
  "  4 invalid plan, 5 plan does not fit in memory, 6 no plan found, 7 interrupted\n"
  "  (SIGINT/SIGTERM: the best plan so far is written), 8 an output file cannot be written\n";

static int run(int argc, char **argv)
{
  const char *cmd = argc > 1 ? argv[1] : NULL;
  if (!cmd || !strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
    fputs(usage, cmd ? stdout : stderr);
    return cmd ? EXIT_OK_ : EXIT_USAGE;
  }
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("hetplan %s (cost model %s)\n", HETPLAN_VERSION, HP_COST_MODEL_VERSION);
    return EXIT_OK_;
  }
  if (!strcmp(cmd, "evaluate")) return cmd_evaluate(argc, argv);
  if (!strcmp(cmd, "plan")) return cmd_plan(argc, argv);
  if (!strcmp(cmd, "expand")) return cmd_expand(argc, argv);
  if (!strcmp(cmd, "solvers")) return cmd_solvers(argc, argv);
  if (!strcmp(cmd, "describe")) return cmd_describe(argc, argv);
  if (!strcmp(cmd, "compare")) return cmd_compare(argc, argv);
  if (!strcmp(cmd, "simulate")) return cmd_simulate(argc, argv);
  if (!strcmp(cmd, "draw")) return cmd_draw(argc, argv);
  if (!strcmp(cmd, "validate")) return cmd_validate(argc, argv);
  if (!strcmp(cmd, "export-lp")) return cmd_export_lp(argc, argv);
  if (!strcmp(cmd, "decode")) return cmd_decode(argc, argv);
  if (!strcmp(cmd, "import-hf")) return cmd_import_hf(argc, argv);
  if (!strcmp(cmd, "export")) return cmd_export_launch(argc, argv);
  if (!strcmp(cmd, "report")) return cmd_report(argc, argv);
  fprintf(stderr, "hetplan: unknown command '%s'\n\n%s", cmd, usage);
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
