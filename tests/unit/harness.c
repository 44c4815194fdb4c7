/* harness.c -- runs the registered tests, each in a child process with a time limit, and
 * prints "ok"/"not ok" lines and "unit: N passed, N failed". An argument filters tests
 * by substring; a filter that matches nothing is an error, never a pass. */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define MAX_TESTS 512
#define TEST_TIMEOUT_S 120

static struct { const char *name; test_fn fn; } tests[MAX_TESTS];
static int n_tests;
static int failed_in_child;

void harness_register(const char *name, test_fn fn)
{
  if (n_tests < MAX_TESTS) {
    tests[n_tests].name = name;
    tests[n_tests].fn = fn;
    n_tests++;
  }
}

void harness_fail(const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "  %s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  failed_in_child = 1;
}

static int cmp_name(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(int argc, char **argv)
{
  const char *filter = argc > 1 ? argv[1] : NULL;
  int passed = 0, failed = 0, ran = 0;
  if (n_tests >= MAX_TESTS) {
    fprintf(stderr, "harness: more than %d tests; raise MAX_TESTS\n", MAX_TESTS);
    return 2;
  }
  qsort(tests, (size_t)n_tests, sizeof tests[0], cmp_name);
  for (int i = 0; i < n_tests; i++) {
    pid_t pid;
    int status = 0;
    if (filter && !strstr(tests[i].name, filter)) continue;
    ran++;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
      alarm(TEST_TIMEOUT_S);
      tests[i].fn();
      fflush(stdout);
      _exit(failed_in_child ? 1 : 0);
    }
    if (pid < 0 || waitpid(pid, &status, 0) < 0) {
      printf("not ok %d %s: cannot fork\n", ran, tests[i].name);
      failed++;
      continue;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      printf("ok %d %s\n", ran, tests[i].name);
      passed++;
    } else {
      if (WIFSIGNALED(status))
        printf("not ok %d %s: killed by signal %d%s\n", ran, tests[i].name, WTERMSIG(status),
               WTERMSIG(status) == SIGALRM ? " (time limit)" : "");
      else
        printf("not ok %d %s\n", ran, tests[i].name);
      failed++;
    }
  }
  if (ran == 0) {
    printf("harness: no test matched '%s'\n", filter ? filter : "");
    return 2;
  }
  printf("unit: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
