/* cli_common.c -- option parsing, problem loading, errors and output for the commands. */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void warn_stderr(void *ctx, const char *msg)
{
  (void)ctx;
  fprintf(stderr, "hetplan: warning: %s\n", msg);
}

/* Progress on stderr: nothing for the first two seconds, then at most a line a second,
 * and the closing line of any search that printed. */
static void progress_stderr(void *ctx, const hp_progress *p)
{
  cli_progress *st = ctx;
  int last = !strcmp(p->phase, "done");
  if (p->elapsed < 2 && !(last && st->printed)) return;
  if (!last && st->printed && p->elapsed - st->last < 1) return;
  st->printed = 1;
  st->last = p->elapsed;
  fprintf(stderr, "%s: %5.1f s  %s %d/%d  incumbent ", p->solver, p->elapsed, p->phase,
          p->done, p->total);
  if (isfinite(p->incumbent)) fprintf(stderr, "%.6f", p->incumbent);
  else fprintf(stderr, "none");
  if (isfinite(p->bound) && isfinite(p->incumbent))
    fprintf(stderr, "  bound %.6f  gap %.2f%%\n", p->bound,
            100 * (p->incumbent - p->bound) / p->incumbent);
  else
    fprintf(stderr, "  bound %s\n", p->bound == INFINITY ? "infinite" : "none yet");
}

void cli_progress_attach(hp_limits *lim, cli_progress *st)
{
  memset(st, 0, sizeof *st);
  lim->progress = progress_stderr;
  lim->progress_ctx = st;
}

void cli_diag_init(hp_diag *d)
{
  memset(d, 0, sizeof *d);
  d->warn = warn_stderr;
}

int cli_fail(const hp_diag *d, hp_err err)
{
  fprintf(stderr, "hetplan: error: %s\n", d->msg[0] ? d->msg : hp_strerror(err));
  switch (err) {
  case HP_OK: return EXIT_OK_;
  case HP_IO: case HP_PARSE: case HP_INVAL: return EXIT_INPUT;
  case HP_PLAN: return EXIT_BAD_PLAN;
  case HP_LIMIT: return EXIT_NO_PLAN;
  default: return EXIT_ERROR;
  }
}

static int allowed_flag(const char *allowed, const char *name)
{
  size_t n = strlen(name);
  for (const char *p = allowed; (p = strstr(p, name)) != NULL; p += n)
    if ((p == allowed || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
  return 0;
}

static int usage_error(const char *cmd, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static int usage_error(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "hetplan %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n(see 'hetplan %s --help')\n", cmd);
  va_end(ap);
  return EXIT_USAGE;
}

static int parse_long(const char *s, long lo, long *out)
{
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo) return -1;
  *out = v;
  return 0;
}

int cli_parse(int argc, char **argv, int first, const char *cmd, const char *allowed,
              cli_opts *o)
{
  memset(o, 0, sizeof *o);
  o->gbs = -1;
  o->seed = 1;
  o->top = 1;
  o->samples = 200;
  o->mem_margin = -1;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    char name[64];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { o->help = 1; continue; }
    if (!strcmp(a, "-o")) a = "--out";
    if (strncmp(a, "--", 2) != 0) {   /* a plan file may be given without --plan */
      if (a[0] != '-' && allowed_flag(allowed, "plan") && !o->plan) {
        o->plan = a;
        continue;
      }
      if (a[0] != '-' && allowed_flag(allowed, "input") && !o->input) {
        o->input = a;
        continue;
      }
      return usage_error(cmd, "unexpected argument '%s'", argv[i]);
    }
    a += 2;
    const char *eq = strchr(a, '=');
    size_t n = eq ? (size_t)(eq - a) : strlen(a);
    if (n >= sizeof name) return usage_error(cmd, "unknown flag '%s'", argv[i]);
    memcpy(name, a, n);
    name[n] = '\0';
    if (!allowed_flag(allowed, name)) return usage_error(cmd, "unknown flag '--%s'", name);
    if (!strcmp(name, "json") || !strcmp(name, "show-rejected") || !strcmp(name, "mps") ||
        !strcmp(name, "html") || !strcmp(name, "strict-profile") || !strcmp(name, "fixed")) {
      if (eq) return usage_error(cmd, "--%s takes no value", name);
      if (name[0] == 'j') o->json = 1;
      else if (name[0] == 'm') o->mps = 1;
      else if (name[0] == 'h') o->html = 1;
      else if (!strcmp(name, "strict-profile")) o->strict_profile = 1;
      else if (!strcmp(name, "fixed")) o->fixed = 1;
      else o->show_rejected = 1;
      continue;
    }
    if (eq) val = eq + 1;
    else if (i + 1 < argc) val = argv[++i];
    else return usage_error(cmd, "--%s needs a value", name);
    if (!strcmp(name, "model")) o->model = val;
    else if (!strcmp(name, "cluster")) o->cluster = val;
    else if (!strcmp(name, "profile")) o->profile = val;
    else if (!strcmp(name, "job")) o->job = val;
    else if (!strcmp(name, "plan")) o->plan = val;
    else if (!strcmp(name, "out")) o->out = val;
    else if (!strcmp(name, "solver")) o->solver = val;
    else if (!strcmp(name, "solvers")) o->solvers = val;
    else if (!strcmp(name, "svg")) o->svg = val;
    else if (!strcmp(name, "config")) o->config = val;
    else if (!strcmp(name, "solution")) o->solution = val;
    else if (!strcmp(name, "samples")) {
      if (parse_long(val, 1, &o->samples) || o->samples > 100000)
        return usage_error(cmd, "--samples: expected an integer in 1..100000, got '%s'", val);
    }
    else if (!strcmp(name, "top")) {
      long k;
      if (parse_long(val, 1, &k) || k > 1000)
        return usage_error(cmd, "--top: expected an integer in 1..1000, got '%s'", val);
      o->top = (int)k;
    }
    else if (!strcmp(name, "schedule")) {
      if (hp_schedule_parse(val) < 0)
        return usage_error(cmd, "--schedule: expected 1f1b or gpipe, got '%s'", val);
      o->schedule = val;
    } else if (!strcmp(name, "gbs")) {
      if (parse_long(val, 1, &o->gbs))
        return usage_error(cmd, "--gbs: expected a positive integer, got '%s'", val);
    } else if (!strcmp(name, "seed")) {
      long s;
      if (parse_long(val, 0, &s))
        return usage_error(cmd, "--seed: expected a non-negative integer, got '%s'", val);
      o->seed = (unsigned long)s;
    } else if (!strcmp(name, "max-work")) {
      if (parse_long(val, 1, &o->max_work))
        return usage_error(cmd, "--max-work: expected a positive integer, got '%s'", val);
    } else if (!strcmp(name, "time-limit")) {
      char *end;
      o->time_limit = strtod(val, &end);
      if (end == val || *end || !isfinite(o->time_limit) || o->time_limit <= 0)
        return usage_error(cmd, "--time-limit: expected a positive number of seconds, got '%s'",
                           val);
    } else if (!strcmp(name, "seq")) {
      if (parse_long(val, 1, &o->seq) || o->seq > 10000000)
        return usage_error(cmd, "--seq: expected a positive number of tokens, got '%s'", val);
    } else if (!strcmp(name, "dtype")) {
      if (hp_dtype_parse(val) < 0)
        return usage_error(cmd, "--dtype: expected bf16, fp16 or fp32, got '%s'", val);
      o->dtype = val;
    } else if (!strcmp(name, "format")) {
      o->format = val;
    } else if (!strcmp(name, "mem-margin")) {
      char *end;
      o->mem_margin = strtod(val, &end);
      if (end == val || *end || !(o->mem_margin >= 0 && o->mem_margin < 1))
        return usage_error(cmd, "--mem-margin: expected the fraction of memory to keep free, "
                           "in [0, 1) (0.1 keeps 10 %%), got '%s'", val);
    } else {
      return usage_error(cmd, "unknown flag '--%s'", name);
    }
  }
  return EXIT_OK_;
}

int cli_load_problem(const cli_opts *o, const char *cmd, hp_problem **out)
{
  hp_diag d;
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *p = NULL;
  hp_job job = { 0, HP_1F1B };
  hp_err err;

  cli_opts filled;
  cli_diag_init(&d);
  *out = NULL;
  if (o->plan) {   /* a plan file names the files it was planned from (cli_inputs.c) */
    filled = *o;
    cli_plan_inputs(&filled);
    o = &filled;
  }
  if (!o->model) return usage_error(cmd, "missing --model FILE");
  if (!o->cluster) return usage_error(cmd, "missing --cluster FILE");
  if (o->job && (err = hp_job_load(o->job, &job, &d))) return cli_fail(&d, err);
  if (o->gbs > 0) job.gbs = o->gbs;
  if (o->schedule) job.schedule = (hp_schedule)hp_schedule_parse(o->schedule);
  if (job.gbs <= 0) return usage_error(cmd, "missing --gbs N (the global batch size)");
  if ((err = hp_model_load(o->model, &m, &d))) return cli_fail(&d, err);
  if ((err = hp_cluster_load(o->cluster, &c, &d))) {
    hp_model_destroy(&m);
    return cli_fail(&d, err);
  }
  if (o->mem_margin >= 0) c->mem_margin = o->mem_margin;   /* the flag wins over the file */
  if (o->profile && (err = hp_profile_load(o->profile, &p, &d))) {
    hp_model_destroy(&m);
    hp_cluster_destroy(&c);
    return cli_fail(&d, err);
  }
  if ((err = hp_problem_create(out, m, c, p, job, &d))) return cli_fail(&d, err);
  return EXIT_OK_;
}

int cli_write(const char *path, const char *text)
{
  FILE *f;
  if (!path || !strcmp(path, "-")) {
    fputs(text, stdout);
    fputc('\n', stdout);
    return EXIT_OK_;
  }
  f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0) {
    fprintf(stderr, "hetplan: error: cannot write '%s'\n", path);
    if (f) fclose(f);
    return EXIT_ERROR;
  }
  if (fclose(f)) {
    fprintf(stderr, "hetplan: error: cannot write '%s'\n", path);
    return EXIT_ERROR;
  }
  return EXIT_OK_;
}

double cli_headroom(const hp_eval *e)
{
  double h = 1;
  for (int d = 0; d < e->n_devices; d++)
    if ((e->cap[d] - e->mem[d]) / e->cap[d] < h) h = (e->cap[d] - e->mem[d]) / e->cap[d];
  return h;
}

int cli_load_plan(const cli_opts *o, const char *cmd, hp_problem **prob, hp_plan **plan)
{
  hp_diag d;
  hp_err err;
  int rc;
  *prob = NULL;
  *plan = NULL;
  if (!o->plan) return usage_error(cmd, "missing --plan FILE");
  if ((rc = cli_load_problem(o, cmd, prob))) return rc;
  cli_diag_init(&d);
  if ((err = hp_plan_load(o->plan, *prob, plan, &d)) || (err = hp_plan_validate(*prob, *plan, &d))) {
    hp_problem_destroy(prob);
    hp_plan_destroy(plan);
    return cli_fail(&d, err);
  }
  return EXIT_OK_;
}
