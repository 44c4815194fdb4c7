/* harness.c -- runs the registered tests, each in a child process with a time limit, and
 * prints "ok"/"not ok" lines and "unit: N passed, N failed" (with ", N skipped" when a
 * test skipped itself: a skip is never a pass). An argument filters tests by substring; a
 * filter that matches nothing is an error, never a pass. Children end with exit(), so
 * LeakSanitizer and valgrind check each test for leaks. Environment:
 * HARNESS_TIMEOUT_SCALE multiplies the time limit (valgrind); HARNESS_PLANT_LEAK=1 leaks
 * memory in every child, to prove that the leak checker in use catches a leak. */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define MAX_TESTS 512
#define TEST_TIMEOUT_S 120
#ifndef HARNESS_NAME
#define HARNESS_NAME "unit"   /* the name of the closing line; tests/profiler builds another */
#endif
#define EXIT_SKIP 77        /* a child that skipped itself */

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

void harness_skip(const char *why)
{
  fprintf(stderr, "  skipped: %s\n", why);
  fflush(stdout);
  fflush(stderr);
  exit(EXIT_SKIP);
}

/* Allocations no pointer reaches once this returns: a leak any checker must report. */
__attribute__((noinline)) static void plant_leak(void)
{
  for (int i = 0; i < 16; i++) {
    char *volatile p = malloc(100 + (size_t)i);
    if (p) p[0] = (char)i;
  }
}

static int cmp_name(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int harness_count(int n)
{
  const char *light = getenv("HARNESS_LIGHT");
  if (!light || atoi(light) != 1) return n;
  return n / 10 > 2 ? n / 10 : 2;
}

int main(int argc, char **argv)
{
  const char *filter = argc > 1 ? argv[1] : NULL;
  const char *scale = getenv("HARNESS_TIMEOUT_SCALE");
  int passed = 0, failed = 0, skipped = 0, ran = 0;
  unsigned timeout = TEST_TIMEOUT_S * (scale && atoi(scale) > 0 ? (unsigned)atoi(scale) : 1u);
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
      alarm(timeout);
      tests[i].fn();
      if (getenv("HARNESS_PLANT_LEAK")) plant_leak();
      fflush(stdout);
      exit(failed_in_child ? 1 : 0);
    }
    if (pid < 0 || waitpid(pid, &status, 0) < 0) {
      printf("not ok %d %s: cannot fork\n", ran, tests[i].name);
      failed++;
      continue;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SKIP) {
      printf("ok %d %s # skip\n", ran, tests[i].name);
      skipped++;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
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
  if (skipped) printf(HARNESS_NAME ": %d skipped\n", skipped);
  printf(HARNESS_NAME ": %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
