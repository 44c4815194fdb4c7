/* cli_outputs.c -- the files a command writes checked against those it reads, before
 * anything runs: `plan -o model.json` would replace the model with the plan. Files are
 * compared by identity (st_dev, st_ino), so a hard or symbolic link to an input is the
 * input; an existing directory is no output either. The flag table says which flags name
 * files and which way (cli_flag.file). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define MAX_FILES 16

typedef struct named_file {
  const char *path;
  const cli_flag *flag;  /* the flag that names it; NULL: the plan file's "inputs" */
  const char *what;      /* the plan file's "inputs": which file ("model", ...) */
} named_file;

/* The flag's value if the command's table has it with this direction and it was given. */
static int collect(const cli_ctx *c, int dir, named_file *out, int n)
{
  const cli_cmd *cmd = c->cmd;
  for (int i = 0; i < cmd->n_flags && n < MAX_FILES; i++) {
    const cli_flag *f = &cmd->flags[i];
    const char *v;
    if (f->file != dir) continue;
    v = *(const char *const *)((const char *)(f->own ? c->opts : (const void *)&c->core) + f->at);
    if (!v || !strcmp(v, "-")) continue;
    out[n++] = (named_file){ v, f, NULL };
  }
  return n;
}

/* The files a plan file's "inputs" block gives where the flags do not: read as the
 * problem will be (cli_plan_inputs). */
static int plan_inputs(const cli_ctx *c, named_file *out, int n)
{
  unsigned st = c->cmd->steps;
  cli_core filled = c->core;
  if (!c->core.plan || !(st & (CLI_PROBLEM | CLI_PLAN | CLI_PLAN_IF_GIVEN))) return n;
  if (!cli_plan_inputs(&filled)) return n;
  const char *const given[3] = { c->core.model, c->core.cluster, c->core.profile };
  const char *const got[3] = { filled.model, filled.cluster, filled.profile };
  static const char *const name[3] = { "model", "cluster", "profile" };
  for (int k = 0; k < 3 && n < MAX_FILES; k++)
    if (got[k] && got[k] != given[k]) out[n++] = (named_file){ got[k], NULL, name[k] };
  return n;
}

static void describe(const named_file *f, char *buf, size_t n)
{
  if (!f->flag) snprintf(buf, n, "the %s file '%s' (named by the plan file's \"inputs\")",
                        f->what, f->path);
  else if (f->flag->kind == CLI_ARG) snprintf(buf, n, "the %s argument '%s'", f->flag->arg,
                                                f->path);
  else if (!strcmp(f->flag->name, "out")) snprintf(buf, n, "-o '%s'", f->path);
  else snprintf(buf, n, "--%s '%s'", f->flag->name, f->path);
}

static int same_file(const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int cli_check_outputs(const cli_ctx *c)
{
  named_file out[MAX_FILES], in[MAX_FILES];
  struct stat so[MAX_FILES], si;
  int n_out = collect(c, CLI_FILE_OUT, out, 0), n_in, exists[MAX_FILES];
  char a[4200], b[4200];
  if (n_out == 0) return EXIT_OK_;
  n_in = plan_inputs(c, in, collect(c, CLI_FILE_IN, in, 0));
  for (int i = 0; i < n_out; i++) {
    exists[i] = stat(out[i].path, &so[i]) == 0;
    if (exists[i] && S_ISDIR(so[i].st_mode)) {
      fprintf(stderr, "hetplan: error: cannot write '%s': %s\n", out[i].path, strerror(EISDIR));
      return EXIT_IO;
    }
    /* only a regular file is replaced: a device or pipe (/dev/null) is written in place */
    if (exists[i] && !S_ISREG(so[i].st_mode)) exists[i] = 0;
  }
  for (int i = 0; i < n_out; i++) {
    describe(&out[i], a, sizeof a);
    for (int j = 0; j < n_in && exists[i]; j++)
      if (stat(in[j].path, &si) == 0 && same_file(&so[i], &si)) {
        describe(&in[j], b, sizeof b);
        return cli_usage_error(c->cmd->name, "%s is the same file as %s, which this command "
                               "reads: writing it would destroy an input (name another file)",
                               a, b);
      }
    for (int j = 0; j < i; j++)
      if (exists[i] && exists[j] ? same_file(&so[i], &so[j]) : !strcmp(out[i].path, out[j].path)) {
        describe(&out[j], b, sizeof b);
        return cli_usage_error(c->cmd->name, "%s is the same file as %s: one output would "
                               "replace the other (name another file)", a, b);
      }
  }
  return EXIT_OK_;
}
