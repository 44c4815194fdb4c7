/* hp_error.h -- error codes and the per-call diagnostic that every fallible hetplan
 * call fills. The library never prints, exits or aborts: it returns an hp_err and
 * leaves a message in the caller's hp_diag. */
#ifndef HP_ERROR_H
#define HP_ERROR_H

#define HP_ERRORS(X)                                   \
  X(OK,       "success")                               \
  X(NOMEM,    "out of memory")                         \
  X(INVAL,    "invalid argument")                      \
  X(IO,       "cannot read or write a file")           \
  X(PARSE,    "malformed input")                       \
  X(PLAN,     "invalid plan")                          \
  X(NOTSUP,   "not supported by this build")           \
  X(LIMIT,    "instance too large for this method")    \
  X(BACKEND,  "solver backend failed")                 \
  X(INTERNAL, "internal error")

typedef enum {
#define HP_ERR_ENUM(name, text) HP_##name,
  HP_ERRORS(HP_ERR_ENUM)
#undef HP_ERR_ENUM
  HP_ERR_COUNT
} hp_err;

/* Receives each warning (an unknown key, say); `ctx` is hp_diag.warn_ctx. */
typedef void (*hp_warn_fn)(void *ctx, const char *msg);

/* A diagnostic, owned by the caller and passed to each call: never global.
 * `msg` holds the first error's message; `warn` (may be NULL: warnings are dropped)
 * receives warnings as they happen. */
typedef struct hp_diag {
  hp_err code;
  char msg[512];
  hp_warn_fn warn;
  void *warn_ctx;
} hp_diag;

/* Static text for an error code; never NULL. */
const char *hp_strerror(hp_err e);

/* Records `e` and a printf-style message in `d` (which may be NULL) and returns `e`.
 * Messages are lowercase, say what failed first and quote the subject. */
hp_err hp_fail(hp_diag *d, hp_err e, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

/* Sends a printf-style warning to d->warn, if any. */
void hp_warn(hp_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Needs a local `hp_err err` and a `done:` label that frees what the function owns. */
#define HP_TRY(expr) do { if ((err = (expr)) != HP_OK) goto done; } while (0)

#endif
