/* cli_common.c -- what the commands share once the prologue has run: diagnostics and
 * errors, the progress lines, output files written whole, interrupts. */
#define _XOPEN_SOURCE 700   /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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
  if (!path || !strcmp(path, "-")) return EXIT_OK_;
  /* before special_file, which a directory also is (it is no regular file) */
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return write_error(path, EISDIR);
  if (special_file(path)) return EXIT_OK_;
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
