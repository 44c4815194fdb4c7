/* cli_parse.c -- a command's flags read against its table (cli.h): values checked before
 * anything runs, usage errors with the nearest flag for a misspelt one, and the listing
 * of `hetplan flags`. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_core_init(cli_core *core)
{
  hp_limits lim;
  hp_limits_init(&lim);   /* a search's defaults are the library's */
  memset(core, 0, sizeof *core);
  core->gbs = -1;
  core->mem_margin = -1;
  core->time_limit = lim.time_limit;
  core->seed = (long)lim.seed;
  core->max_work = lim.max_work;
  core->memory_weight = lim.memory_weight;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "hetplan %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n(see 'hetplan %s --help')\n", cmd);
  va_end(ap);
  return EXIT_USAGE;
}

/* An integer flag in lo..hi, range-checked before anything converts it (strtol
 * saturates and sets ERANGE beyond a long: refused too). */
static int parse_long(const char *s, long lo, long hi, long *out)
{
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

/* A number between lo and hi, each end open or closed (NaN is in no range). */
static int parse_num(const char *s, const cli_flag *f, double *out)
{
  char *end;
  double v = strtod(s, &end);
  int lo_ok = (f->open & CLI_OPEN_LO) ? v > f->lo : v >= f->lo;
  int hi_ok = (f->open & CLI_OPEN_HI) ? v < f->hi : v <= f->hi;
  if (end == s || *end || !(lo_ok && hi_ok)) return -1;
  *out = v;
  return 0;
}

/* What a flag's value must be, as its error and `hetplan flags` say it. */
static const char *expected(const cli_flag *f, char *buf, size_t n)
{
  if (f->expect) return f->expect;
  if (f->kind != CLI_INT) return NULL;
  snprintf(buf, n, "an integer in %ld..%ld%s", f->min, f->max, f->note ? f->note : "");
  return buf;
}

static void *field(const cli_flag *f, cli_core *core, void *opts)
{
  return (char *)(f->own ? opts : (void *)core) + f->at;
}

/* Stores val in the flag's field after checking it (EXIT_USAGE with the message). */
static int store(const char *cmd, const cli_flag *f, const char *val, cli_core *core, void *opts)
{
  void *p = field(f, core, opts);
  char buf[96];
  switch (f->kind) {
  case CLI_SWITCH: *(int *)p = 1; return EXIT_OK_;
  case CLI_TEXT: case CLI_ARG: *(const char **)p = val; return EXIT_OK_;
  case CLI_CHOICE: if (f->choice(val) >= 0) { *(const char **)p = val; return EXIT_OK_; } break;
  case CLI_INT: if (!parse_long(val, f->min, f->max, (long *)p)) return EXIT_OK_; break;
  case CLI_NUM: if (!parse_num(val, f, (double *)p)) return EXIT_OK_; break;
  }
  return cli_usage_error(cmd, "--%s: expected %s, got '%s'", f->name, expected(f, buf, sizeof buf),
                         val);
}

static const cli_flag *find(const cli_cmd *cmd, const char *name)
{
  for (int i = 0; i < cmd->n_flags; i++)
    if (cmd->flags[i].kind != CLI_ARG && !strcmp(cmd->flags[i].name, name)) return &cmd->flags[i];
  return NULL;
}

/* Edit distance of two short strings (the flag names), for "did you mean". */
static int distance(const char *a, const char *b)
{
  int la = (int)strlen(a), lb = (int)strlen(b), row[64];
  if (la > 62 || lb > 62) return 99;
  for (int j = 0; j <= lb; j++) row[j] = j;
  for (int i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = i;
    for (int j = 1; j <= lb; j++) {
      int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[lb];
}

/* "unknown flag '--modle' (did you mean '--model'?)", or without the hint when no flag
 * of the command is close; the first of the table's closest wins. */
static int unknown_flag(const cli_cmd *cmd, const char *name)
{
  const char *best = NULL;
  int bd = 99;
  for (int i = 0; i < cmd->n_flags; i++) {
    const char *tok = cmd->flags[i].name;
    int dd;
    if (cmd->flags[i].kind == CLI_ARG) continue;
    dd = distance(name, tok);
    if (!strncmp(tok, name, strlen(name)) && strlen(name) >= 2) dd = dd < 2 ? dd : 2;
    if (dd < bd) { bd = dd; best = tok; }
  }
  if (best && bd <= 2 && bd < (int)strlen(name))
    return cli_usage_error(cmd->name, "unknown flag '--%s' (did you mean '--%s'?)", name, best);
  return cli_usage_error(cmd->name, "unknown flag '--%s'", name);
}

/* The first positional flag not yet given, for a plain argument. */
static const cli_flag *positional(const cli_cmd *cmd, cli_core *core, void *opts)
{
  for (int i = 0; i < cmd->n_flags; i++) {
    const cli_flag *f = &cmd->flags[i];
    if ((f->positional || f->kind == CLI_ARG) && !*(const char **)field(f, core, opts)) return f;
  }
  return NULL;
}

int cli_parse(const cli_cmd *cmd, int argc, char **argv, int first, cli_core *core, void *opts)
{
  for (int i = 0; i < cmd->n_flags; i++)   /* the own flags' defaults */
    if (cmd->flags[i].def && store(cmd->name, &cmd->flags[i], cmd->flags[i].def, core, opts))
      return EXIT_ERROR;                     /* a table whose default it refuses */
  for (int i = first; i < argc; i++) {
    const char *a = argv[i], *val = NULL, *eq;
    const cli_flag *f;
    char name[64];
    size_t n;
    if (!strcmp(a, "--") && (cmd->steps & CLI_REST)) {   /* the rest is the command's */
      core->rest = argv + i + 1;
      core->n_rest = argc - i - 1;
      break;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { core->help = 1; continue; }
    if (!strcmp(a, "-o")) a = "--out";
    if (strncmp(a, "--", 2) != 0) {   /* a plan file may be given without --plan */
      if (a[0] != '-' && (f = positional(cmd, core, opts)) != NULL) {
        store(cmd->name, f, a, core, opts);
        continue;
      }
      return cli_usage_error(cmd->name, "unexpected argument '%s'", argv[i]);
    }
    a += 2;
    eq = strchr(a, '=');
    n = eq ? (size_t)(eq - a) : strlen(a);
    if (n >= sizeof name) return cli_usage_error(cmd->name, "unknown flag '%s'", argv[i]);
    memcpy(name, a, n);
    name[n] = '\0';
    if (!(f = find(cmd, name))) return unknown_flag(cmd, name);
    if (f->kind == CLI_SWITCH) {
      if (eq) return cli_usage_error(cmd->name, "--%s takes no value", name);
      store(cmd->name, f, NULL, core, opts);
      continue;
    }
    if (eq) val = eq + 1;
    else if (i + 1 < argc) val = argv[++i];
    else return cli_usage_error(cmd->name, "--%s needs a value", name);
    if (store(cmd->name, f, val, core, opts)) return EXIT_USAGE;
  }
  return EXIT_OK_;
}

void cli_flags_print(FILE *f, const cli_cmd *cmd, const char *prefix)
{
  for (int i = 0; i < cmd->n_flags; i++) {
    const cli_flag *g = &cmd->flags[i];
    char buf[96];
    const char *exp = expected(g, buf, sizeof buf);
    if (prefix) fprintf(f, "%s\t", prefix);
    if (g->kind == CLI_ARG) fprintf(f, "%s\t-\t%s (a plain argument)", g->arg, g->help);
    else fprintf(f, "--%s\t%s\t%s", g->name, g->arg ? g->arg : "-", g->help);
    if (g->positional) fprintf(f, " (or a plain argument)");
    if (!strcmp(g->name, "out")) fprintf(f, " (or -o)");
    if (exp) fprintf(f, "; takes %s", exp);
    if (g->def) fprintf(f, "; default %s", g->def);
    fputc('\n', f);
  }
}
