/* cli_commands.c -- the command table: every command in the order of `hetplan --help`
 * (adding one is a line here and a file cmd_NAME.c: docs/adding-a-command.md), the
 * top-level usage made from it, and the commands about hetplan itself: version and the
 * unlisted `flags` (every command's flag table, for scripts and tests/cli/test_flags.sh). */
#include <string.h>

#include "cli.h"

/* each defined in its cmd_NAME.c (version and flags below) */
extern const cli_cmd cli_cmd_import_hf, cli_cmd_plan, cli_cmd_replan, cli_cmd_evaluate, cli_cmd_report,
  cli_cmd_export, cli_cmd_compare, cli_cmd_simulate, cli_cmd_draw, cli_cmd_validate,
  cli_cmd_export_lp, cli_cmd_decode, cli_cmd_expand, cli_cmd_describe, cli_cmd_solvers,
  cli_cmd_version, cli_cmd_flags, cli_cmd_calibrate;

const cli_cmd *const cli_commands[] = {
  &cli_cmd_import_hf, &cli_cmd_plan, &cli_cmd_replan, &cli_cmd_evaluate, &cli_cmd_calibrate, &cli_cmd_report, &cli_cmd_export,
  &cli_cmd_compare, &cli_cmd_simulate, &cli_cmd_draw, &cli_cmd_validate, &cli_cmd_export_lp,
  &cli_cmd_decode, &cli_cmd_expand, &cli_cmd_describe, &cli_cmd_solvers, &cli_cmd_version,
  &cli_cmd_flags, NULL
};

const cli_cmd *cli_command_find(const char *name)
{
  for (const cli_cmd *const *c = cli_commands; *c; c++)
    if (!strcmp((*c)->name, name)) return *c;
  return NULL;
}

static const char usage_head[] =
  "usage: hetplan <command> [flags]\n"
  "\n"
  "Plans the training of a layered model on a (heterogeneous) GPU cluster: pipeline,\n"
  "tensor and data parallel degrees, micro-batch size, stages, placement, ZeRO-3\n"
  "sharding and recompute, scored by one cost model (docs/cost-model.md).\n"
  "\n"
  "commands:\n";

static const char usage_tail[] =
  "\n"
  "'hetplan <command> --help' describes each command's flags. Wherever --model is asked\n"
  "for, a Hugging Face config.json will do (recognised by its keys).\n"
  "\n"
  "exit codes: 0 success, 1 internal error, 2 usage error, 3 bad input file,\n"
  "  4 invalid plan, 5 plan does not fit in memory, 6 no plan found, 7 interrupted\n"
  "  (SIGINT/SIGTERM: the best plan so far is written), 8 an output file cannot be written\n";

void cli_usage_print(FILE *f)
{
  fputs(usage_head, f);
  for (const cli_cmd *const *c = cli_commands; *c; c++) {
    const char *s = (*c)->summary;
    if (!s) continue;
    fprintf(f, "  %-9s  ", (*c)->name);
    for (; *s; s++) {   /* the summary's later lines under its first */
      fputc(*s, f);
      if (*s == '\n' && s[1]) fprintf(f, "%13s", "");
    }
    fputc('\n', f);
  }
  fputs(usage_tail, f);
}

static int run_version(cli_ctx *c)
{
  (void)c;
  printf("hetplan %s (cost model %s)\n", HETPLAN_VERSION, HP_COST_MODEL_VERSION);
  return EXIT_OK_;
}

const cli_cmd cli_cmd_version = {
  .name = "version",
  .summary = "print the version and the cost-model version",
  .steps = CLI_ANY_ARGS,
  .run = run_version,
};

/* --- hetplan flags [COMMAND] */
typedef struct flags_opts { const char *command; } flags_opts;

static const cli_flag flags_flags[] = {
  { .name = "command", .arg = "COMMAND", CLI_OWN_ARG(flags_opts, command),
    .help = "the command whose flags to list (default: every command's)" },
};

static int check_flags(cli_ctx *c)
{
  const flags_opts *o = c->opts;
  if (o->command && !cli_command_find(o->command))
    return cli_usage_error("flags", "unknown command '%s'", o->command);
  return EXIT_OK_;
}

static int run_flags(cli_ctx *c)
{
  const flags_opts *o = c->opts;
  if (o->command) {
    cli_flags_print(stdout, cli_command_find(o->command), NULL);
    return EXIT_OK_;
  }
  for (const cli_cmd *const *k = cli_commands; *k; k++) cli_flags_print(stdout, *k, (*k)->name);
  return EXIT_OK_;
}

const cli_cmd cli_cmd_flags = {
  .name = "flags",
  .summary = NULL,   /* not listed: for scripts and tests */
  .help =
    "usage: hetplan flags [COMMAND]\n"
    "\n"
    "Lists the flags COMMAND takes, one a line of tab-separated columns: the flag as typed\n"
    "(or the placeholder of a plain argument), its value ('-' for a switch), what it sets\n"
    "with the values it takes and its default. Without COMMAND, every command's, each line\n"
    "starting with the command's name. This is the table the parser, --help and the\n"
    "suggestions for a misspelt flag read (cli/cli.h); tests/cli/test_flags.sh checks it\n"
    "against each command's --help and docs/cli.md.\n",
  CLI_FLAGS(flags_flags),
  .opts_size = sizeof(flags_opts),
  .check = check_flags,
  .run = run_flags,
};
