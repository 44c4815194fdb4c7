/* harness.h -- a small test runner: TEST(name) registers a test; each runs in a child
 * process with a time limit; the run ends with the line "unit: N passed, N failed"
 * (skipped tests are listed and counted apart). */
#ifndef HP_HARNESS_H
#define HP_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef void (*test_fn)(void);
void harness_register(const char *name, test_fn fn);
void harness_fail(const char *file, int line, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
/* Ends the running test as skipped, with the reason (counted apart, never as a pass). */
void harness_skip(const char *why) __attribute__((noreturn));

/* How many random instances a brute-force test runs: n, or a tenth of n (at least 2)
 * under HARNESS_LIGHT=1, which make check-valgrind sets (valgrind is ~50 times slower). */
int harness_count(int n);

/* Skips the test unless the condition holds, e.g. SKIP_UNLESS(have_glpk, "built without GLPK"). */
#define SKIP_UNLESS(cond, why) do { if (!(cond)) harness_skip(why); } while (0)

#define TEST(name)                                                                   \
  static void name(void);                                                            \
  __attribute__((constructor)) static void register_##name(void)                     \
  { harness_register(#name, name); }                                                 \
  static void name(void)

#define CHECK(cond)                                                                  \
  do { if (!(cond)) { harness_fail(__FILE__, __LINE__, "%s", #cond); return; } } while (0)

/* |a - b| <= rel * max(|a|, |b|) + 1e-15 */
#define CHECK_NEAR(a, b, rel)                                                        \
  do {                                                                               \
    double a_ = (a), b_ = (b);                                                       \
    double m_ = fabs(a_) > fabs(b_) ? fabs(a_) : fabs(b_);                           \
    if (!(fabs(a_ - b_) <= (rel) * m_ + 1e-15)) {                                    \
      harness_fail(__FILE__, __LINE__, "%s = %.17g, expected %s = %.17g", #a, a_, #b, b_); \
      return;                                                                        \
    }                                                                                \
  } while (0)

#define CHECK_INT(a, b)                                                              \
  do {                                                                               \
    long a_ = (long)(a), b_ = (long)(b);                                             \
    if (a_ != b_) {                                                                  \
      harness_fail(__FILE__, __LINE__, "%s = %ld, expected %ld", #a, a_, b_);        \
      return;                                                                        \
    }                                                                                \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                                  \
  do {                                                                               \
    const char *h_ = (hay), *n_ = (needle);                                          \
    if (!h_ || !strstr(h_, n_)) {                                                    \
      harness_fail(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_); \
      return;                                                                        \
    }                                                                                \
  } while (0)

#endif
