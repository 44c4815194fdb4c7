/* strbuf.c -- a growing string with printf-style appends, for the SVG writers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

void hp__sb_printf(hp_sb *b, const char *fmt, ...)
{
  va_list ap;
  int n;
  if (b->failed) return;
  for (;;) {
    size_t room = b->cap - b->len;
    va_start(ap, fmt);
    n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) { b->failed = 1; return; }
    if (b->s && (size_t)n < room) { b->len += (size_t)n; return; }
    size_t ncap = (b->cap ? b->cap * 2 : 4096) + (size_t)n + 1;
    char *ns = realloc(b->s, ncap);
    if (!ns) { b->failed = 1; return; }
    b->s = ns;
    b->cap = ncap;
  }
}

void hp__sb_xml(hp_sb *b, const char *text)
{
  for (const char *c = text; *c; c++)
    switch (*c) {
    case '&': hp__sb_printf(b, "&amp;"); break;
    case '<': hp__sb_printf(b, "&lt;"); break;
    case '>': hp__sb_printf(b, "&gt;"); break;
    case '"': hp__sb_printf(b, "&quot;"); break;
    default: hp__sb_printf(b, "%c", *c);
    }
}
