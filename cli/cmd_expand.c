/* cmd_expand.c -- `hetplan expand`: prints a model's explicit layer list. */
#include <stdlib.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan expand --model M [-o FILE]\n"
  "\n"
  "Prints model M as explicit layers (the form the cost model reads): a \"transformer\"\n"
  "description is expanded with the formulas of docs/transformer.md, and `repeat`\n"
  "entries are unrolled.\n";

static const cli_flag flags[] = { CLI_FLAG_MODEL, CLI_FLAG_OUT };

static int check(cli_ctx *c)
{
  return c->core.model ? EXIT_OK_ : cli_usage_error("expand", "missing --model FILE");
}

static int run(cli_ctx *c)
{
  hp_model *m = NULL;
  hp_diag d;
  hp_err err;
  char *text = NULL;
  int rc;
  cli_diag_init(&d);
  if ((err = hp_model_load(c->core.model, &m, &d)) || (err = hp_model_to_json(m, &text, &d)))
    rc = cli_fail(&d, err);
  else
    rc = cli_write(c->core.out, text);
  free(text);
  hp_model_destroy(&m);
  return rc;
}

const cli_cmd cli_cmd_expand = {
  .name = "expand",
  .summary = "print a model's explicit layer list (expands \"transformer\")",
  .help = help,
  CLI_FLAGS(flags),
  .check = check,
  .run = run,
};
