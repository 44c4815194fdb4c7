/* cmd_expand.c -- `hetplan expand`: prints a model's explicit layer list. */
#include <stdlib.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan expand --model M [-o FILE]\n"
  "\n"
  "Prints model M as explicit layers (the form the cost model reads): a \"transformer\"\n"
  "description is expanded with the formulas of docs/transformer.md, and `repeat`\n"
  "entries are unrolled.\n";

int cmd_expand(int argc, char **argv)
{
  cli_opts o;
  hp_model *m = NULL;
  hp_diag d;
  hp_err err;
  char *text = NULL;
  int rc = cli_parse(argc, argv, 2, "expand", "model out", &o);
  if (rc) return rc;
  if (o.help) { fputs(help, stdout); return EXIT_OK_; }
  if (!o.model) {
    fprintf(stderr, "hetplan expand: missing --model FILE\n(see 'hetplan expand --help')\n");
    return EXIT_USAGE;
  }
  cli_diag_init(&d);
  if ((err = hp_model_load(o.model, &m, &d)) || (err = hp_model_to_json(m, &text, &d)))
    rc = cli_fail(&d, err);
  else
    rc = cli_write(o.out, text);
  free(text);
  hp_model_destroy(&m);
  return rc;
}
