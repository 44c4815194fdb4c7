/* mip_child.c -- a MIP backend's solve that a stop request ends at once: the solve runs
 * in a child process and sends its solution back through a pipe, while the caller polls
 * lim->stop and kills the child once it is set. CBC offers no way in to stop it between
 * its own checks (its root LP and root heuristics ran on for 10 s after a Ctrl-C; its cut
 * callback is never called there), nor does GLPK's simplex; a process can always be
 * killed. So is a solve still running a little past the seconds it was given. A killed
 * solve claims nothing: status NONE, no point, bound -INFINITY. The
 * child computes exactly what the solve computes in the caller's process. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "search.h"

/* How often the caller looks at lim->stop while the child solves: the stop's latency. */
#define POLL_MS 20

/* What the child sends first; then the point (n_cols doubles) if has_x. */
typedef struct child_msg {
  int err;                /* hp_err of the solve */
  int status;             /* hp_sol_status */
  int has_x;
  double obj, bound;
  char msg[sizeof ((hp_diag *)0)->msg];
} child_msg;

static int write_all(int fd, const void *buf, size_t n)
{
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The child: solves with no stop flag (its copy would never change), writes the result
 * and ends without running the caller's exit handlers or flushing its stdio buffers. */
static void child(int fd, pid_t parent, hp_mip_backend solve, const hp_mip *m,
                  const double *start, const hp_limits *lim, double seconds, double cutoff)
{
  hp_mip_solution sol = { HP_SOL_NONE, INFINITY, -INFINITY, NULL };
  hp_limits l = *lim;
  hp_diag d;
  child_msg msg;
  sigset_t hold;
  int ok;
  /* a Ctrl-C reaches the terminal's whole process group: the caller acts on it (and
   * kills this process), so the child keeps it pending and never sees it */
  sigemptyset(&hold);
  sigaddset(&hold, SIGINT);
  sigaddset(&hold, SIGTERM);
  sigprocmask(SIG_BLOCK, &hold, NULL);
#ifdef __linux__
  /* the caller killed outright (a second Ctrl-C) takes the solve with it */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  if (getppid() != parent) _exit(1);
  memset(&d, 0, sizeof d);
  memset(&msg, 0, sizeof msg);
  l.stop = NULL;
  l.progress = NULL;
  l.team = NULL;
  msg.err = (int)solve(m, start, &l, seconds, cutoff, &sol, &d);
  msg.status = (int)sol.status;
  msg.obj = sol.obj;
  msg.bound = sol.bound;
  msg.has_x = sol.x != NULL;
  memcpy(msg.msg, d.msg, sizeof msg.msg);
  ok = write_all(fd, &msg, sizeof msg) == 0 &&
       (!sol.x || write_all(fd, sol.x, (size_t)m->n_cols * sizeof *sol.x) == 0);
  free(sol.x);
  close(fd);
  _exit(ok ? 0 : 1);
}

/* Reads what the child sends into buf (n bytes) while polling the stop flag and the
 * clock: 1 read in full, 0 the child ended first, -1 stopped or past `until`. */
static int read_polling(int fd, void *buf, size_t n, const volatile sig_atomic_t *stop,
                        double until)
{
  char *p = buf;
  while (n > 0) {
    struct pollfd pf = { fd, POLLIN, 0 };
    ssize_t r;
    if (*stop || hp__now() > until) return -1;
    if (poll(&pf, 1, POLL_MS) <= 0) continue;    /* nothing yet, or a signal: look again */
    r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    p += r;
    n -= (size_t)r;
  }
  return 1;
}

static void claim_nothing(hp_mip_solution *out)
{
  out->status = HP_SOL_NONE;
  out->obj = INFINITY;
  out->bound = -INFINITY;
  out->x = NULL;
}

hp_err hp__mip_solve_stoppable(hp_mip_backend solve, const char *name, const hp_mip *m,
                               const double *start, const hp_limits *lim, double seconds,
                               double cutoff, hp_mip_solution *out, hp_diag *d)
{
  child_msg msg;
  pid_t pid, parent = getpid();
  int fds[2], got, wst = 0;
  /* the time the solve was given, and a little: a backend phase that never looks at its
   * clock (GLPK's simplex ran 10-30 % past a plan's --time-limit on 120 A100s) is killed
   * there, as a stop would, and claims nothing */
  double until = seconds > 0 ? hp__now() + seconds + fmax(0.25, 0.05 * seconds) : INFINITY;
  if (!lim->stop) return solve(m, start, lim, seconds, cutoff, out, d);
  if (*lim->stop) {                    /* asked to stop before it started */
    claim_nothing(out);
    return HP_OK;
  }
  if (pipe(fds) != 0) return hp_fail(d, HP_BACKEND, "%s: cannot create a pipe to its solve: %s",
                                     name, strerror(errno));
  if ((pid = fork()) < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return hp_fail(d, HP_BACKEND, "%s: cannot start the process of its solve: %s", name,
                   strerror(e));
  }
  if (pid == 0) {
    close(fds[0]);
    child(fds[1], parent, solve, m, start, lim, seconds, cutoff);
  }
  close(fds[1]);
  claim_nothing(out);
  got = read_polling(fds[0], &msg, sizeof msg, lim->stop, until);
  if (got > 0 && msg.has_x) {
    if (!(out->x = malloc((size_t)m->n_cols * sizeof *out->x))) got = -2;
    else if ((got = read_polling(fds[0], out->x, (size_t)m->n_cols * sizeof *out->x, lim->stop,
                                 until)) <= 0) {
      free(out->x);
      out->x = NULL;
    }
  }
  if (got <= 0) kill(pid, SIGKILL);    /* stopped (or out of memory): the solve is dropped */
  close(fds[0]);
  while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {}
  if (got == -1) return HP_OK;          /* stopped: nothing claimed */
  if (got == -2) return hp_fail(d, HP_NOMEM, "out of memory");
  if (got == 0) {
    if (WIFSIGNALED(wst))
      return hp_fail(d, HP_BACKEND, "%s: its solve ended on signal %d", name, WTERMSIG(wst));
    return hp_fail(d, HP_BACKEND, "%s: its solve ended without a result", name);
  }
  if (msg.err != HP_OK) return hp_fail(d, (hp_err)msg.err, "%s", msg.msg);
  out->status = (hp_sol_status)msg.status;
  out->obj = msg.obj;
  out->bound = msg.bound;
  return HP_OK;
}
