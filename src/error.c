/* error.c -- error texts, hp_fail and hp_warn. */
#include <stdarg.h>
#include <stdio.h>

#include "hetplan/hp_error.h"

static const char *const texts[] = {
#define HP_ERR_TEXT(name, text) text,
  HP_ERRORS(HP_ERR_TEXT)
#undef HP_ERR_TEXT
};

const char *hp_strerror(hp_err e)
{
  if ((int)e < 0 || e >= HP_ERR_COUNT) return "unknown error";
  return texts[e];
}

hp_err hp_fail(hp_diag *d, hp_err e, const char *fmt, ...)
{
  if (d) {
    va_list ap;
    va_start(ap, fmt);
    d->code = e;
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
  }
  return e;
}

void hp_warn(hp_diag *d, const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  if (!d || !d->warn) return;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  d->warn(d->warn_ctx, buf);
}
