/* cli_common.c -- option parsing, problem loading, errors and output for the commands. */
#define _XOPEN_SOURCE 700   /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
  /* past 2 s the first bound is shown when it comes, whatever the throttle: the moment
   * the certificate is complete */
  int first_bound = isfinite(p->bound) && !st->had_bound;
  if (first_bound) st->had_bound = 1;
  if (p->elapsed < 2 && !(last && st->printed)) return;
  if (!last && !first_bound && st->printed && p->elapsed - st->last < 1) return;
  st->printed = 1;
  st->last = p->elapsed;
  fprintf(stderr, "%s: %5.1f s  %s %d/%d  incumbent ", p->solver, p->elapsed, p->phase,
          p->done, p->total);
  if (isfinite(p->incumbent)) fprintf(stderr, "%.6f", p->incumbent);
  else fprintf(stderr, "none");
  if (isnan(p->bound))                       /* a solver that claims no bound */
    fputc('\n', stderr);
  else if (isfinite(p->bound) && isfinite(p->incumbent))
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

/* "unknown flag '--modle' (did you mean '--model'?)", or without the hint when no
 * allowed flag is close. */
static int unknown_flag(const char *cmd, const char *allowed, const char *name)
{
  char best[64] = "", tok[64];
  int bd = 99;
  for (const char *p = allowed; *p;) {
    size_t n = strcspn(p, " ");
    if (n > 0 && n < sizeof tok) {
      int dd;
      memcpy(tok, p, n);
      tok[n] = '\0';
      dd = distance(name, tok);
      if (!strncmp(tok, name, strlen(name)) && strlen(name) >= 2) dd = dd < 2 ? dd : 2;
      if (dd < bd) { bd = dd; snprintf(best, sizeof best, "%s", tok); }
    }
    p += n;
    while (*p == ' ') p++;
  }
  if (best[0] && bd <= 2 && bd < (int)strlen(name))
    return usage_error(cmd, "unknown flag '--%s' (did you mean '--%s'?)", name, best);
  return usage_error(cmd, "unknown flag '--%s'", name);
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
    if (!allowed_flag(allowed, name)) return unknown_flag(cmd, allowed, name);
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
      if (parse_long(val, 1, 100000, &o->samples))
        return usage_error(cmd, "--samples: expected an integer in 1..100000, got '%s'", val);
    }
    else if (!strcmp(name, "top")) {
      long k;
      if (parse_long(val, 1, 1000, &k))
        return usage_error(cmd, "--top: expected an integer in 1..1000, got '%s'", val);
      o->top = (int)k;
    }
    else if (!strcmp(name, "schedule")) {
      if (hp_schedule_parse(val) < 0)
        return usage_error(cmd, "--schedule: expected 1f1b or gpipe, got '%s'", val);
      o->schedule = val;
    } else if (!strcmp(name, "gbs")) {
      if (parse_long(val, 1, HP_MAX_GBS, &o->gbs))
        return usage_error(cmd, "--gbs: expected an integer in 1..%ld (2^40), got '%s'",
                           HP_MAX_GBS, val);
    } else if (!strcmp(name, "seed")) {
      long s;
      if (parse_long(val, 0, LONG_MAX, &s))
        return usage_error(cmd, "--seed: expected an integer in 0..%ld, got '%s'", LONG_MAX, val);
      o->seed = (unsigned long)s;
    } else if (!strcmp(name, "max-work")) {
      if (parse_long(val, 1, LONG_MAX, &o->max_work))
        return usage_error(cmd, "--max-work: expected an integer in 1..%ld, got '%s'", LONG_MAX,
                           val);
    } else if (!strcmp(name, "time-limit")) {
      char *end;
      o->time_limit = strtod(val, &end);
      if (end == val || *end || !isfinite(o->time_limit) || o->time_limit <= 0 ||
          o->time_limit > 1e9)
        return usage_error(cmd, "--time-limit: expected a number of seconds in (0, 1e9], got "
                           "'%s'", val);
    } else if (!strcmp(name, "seq")) {
      if (parse_long(val, 1, 10000000, &o->seq))
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
      return unknown_flag(cmd, allowed, name);
    }
  }
  return EXIT_OK_;
}

/* Whether the schedule of the last problem loaded was chosen by --schedule or the job
 * file; if not, a plan file's own schedule is taken (cli_adopt_plan_schedule). */
static int schedule_chosen;

void cli_adopt_plan_schedule(hp_problem *prob, const hp_plan *plan)
{
  if (!schedule_chosen) prob->job.schedule = plan->schedule;
}

int cli_load_problem(const cli_opts *o, const char *cmd, hp_problem **out)
{
  hp_diag d;
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *p = NULL;
  hp_job job = { .gbs = 0, .schedule = HP_1F1B };
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
  schedule_chosen = o->schedule != NULL;
  if (o->job) {
    hp_job other = { .gbs = 0, .schedule = HP_GPIPE };   /* keys a job file lacks leave a job as it was */
    if ((err = hp_job_load(o->job, &job, &d))) return cli_fail(&d, err);
    if (hp_job_load(o->job, &other, &d) == HP_OK && other.schedule == job.schedule)
      schedule_chosen = 1;
  }
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

/* Where a file for `path` is written: beside the file a symbolic link names, so that the
 * rename replaces the target, not the link. */
static void target_path(const char *path, char *buf, size_t n)
{
  char *real = realpath(path, NULL);
  snprintf(buf, n, "%s", real ? real : path);
  free(real);
}

/* A new temporary file beside `target` (its name in tmp); -1 with errno on failure. */
static int open_temp(const char *target, char *tmp, size_t n)
{
  int fd;
  if ((size_t)snprintf(tmp, n, "%s.tmp.XXXXXX", target) >= n) { errno = ENAMETOOLONG; return -1; }
  if ((fd = mkstemp(tmp)) >= 0) {
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);   /* what fopen would have given a new file */
  }
  return fd;
}

/* Whether `path` names something other than a regular file (a device such as /dev/null,
 * a pipe): written in place, never replaced. */
static int special_file(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

static int write_error(const char *path, int e)
{
  fprintf(stderr, "hetplan: error: cannot write '%s': %s\n", path, strerror(e));
  return EXIT_IO;
}

static int temp_error(const char *path, const char *tmp, int e)
{
  fprintf(stderr, "hetplan: error: cannot write '%s': cannot create the file '%s' to write it "
          "to first: %s\n", path, tmp, strerror(e));
  return EXIT_IO;
}

int cli_check_output(const char *path)
{
  char target[4096], tmp[4160];
  int fd;
  struct stat st;
  if (!path || !strcmp(path, "-") || special_file(path)) return EXIT_OK_;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return write_error(path, EISDIR);
  target_path(path, target, sizeof target);
  if ((fd = open_temp(target, tmp, sizeof tmp)) < 0) return temp_error(path, tmp, errno);
  close(fd);
  unlink(tmp);
  return EXIT_OK_;
}

static int write_all(int fd, const char *text, size_t len)
{
  while (len > 0) {
    ssize_t w = write(fd, text, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    text += w;
    len -= (size_t)w;
  }
  return 0;
}

int cli_write(const char *path, const char *text)
{
  char target[4096], tmp[4160];
  size_t len = strlen(text);
  int fd, e, nl = len == 0 || text[len - 1] != '\n';
  if (!path || !strcmp(path, "-")) {
    fputs(text, stdout);
    if (nl) fputc('\n', stdout);
    if (fflush(stdout) != 0) return write_error("(standard output)", errno);
    return EXIT_OK_;
  }
  if (special_file(path)) {     /* /dev/null, /dev/stdout, a pipe: in place */
    if ((fd = open(path, O_WRONLY)) < 0) return write_error(path, errno);
    if (write_all(fd, text, len) || (nl && write_all(fd, "\n", 1))) {
      e = errno;
      close(fd);
      return write_error(path, e);
    }
    close(fd);
    return EXIT_OK_;
  }
  /* A regular file: written whole to a temporary file beside it, then renamed over it,
   * so that a reader (or an interrupted run) never sees half a file. */
  target_path(path, target, sizeof target);
  if ((fd = open_temp(target, tmp, sizeof tmp)) < 0) return temp_error(path, tmp, errno);
  if (write_all(fd, text, len) || (nl && write_all(fd, "\n", 1)) || fsync(fd) != 0) {
    e = errno;
    close(fd);
    unlink(tmp);
    return write_error(path, e);
  }
  if (close(fd) != 0 || rename(tmp, target) != 0) {
    e = errno;
    unlink(tmp);
    return write_error(path, e);
  }
  return EXIT_OK_;
}

/* --- Interrupts: the first SIGINT or SIGTERM asks the search to stop (it returns its
 * best plan so far); a second one ends the process at once, as the default action. */
static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
  static const char msg[] = "\nhetplan: interrupted: stopping the search and writing the best "
                            "plan so far (interrupt again to quit at once)\n";
  if (stop_flag) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  stop_flag = sig;
  if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
}

void cli_interrupt_attach(hp_limits *lim)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  lim->stop = &stop_flag;
}

int cli_interrupted(void) { return stop_flag; }

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
  if (!(err = hp_plan_load(o->plan, *prob, plan, &d))) cli_adopt_plan_schedule(*prob, *plan);
  if (err || (err = hp_plan_validate(*prob, *plan, &d))) {
    hp_problem_destroy(prob);
    hp_plan_destroy(plan);
    return cli_fail(&d, err);
  }
  return EXIT_OK_;
}
