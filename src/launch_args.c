/* launch_args.c -- an arguments file's words for the exported launch (export --args-file):
 * split as a response file is (gcc's @file): blanks and line ends separate words, single
 * or double quotes keep blanks in one, a backslash keeps the next character; nothing is
 * expanded (no $, no `...`); a line whose first non-blank is # is a comment. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

hp_err hp_launch_args_split(const char *text, char ***argv, int *argc, hp_diag *d)
{
  size_t len = strlen(text), words = 0;
  const char *p = text;
  char **v, *w;
  int line_start = 1;
  *argv = NULL;
  *argc = 0;
  /* at most one word per two characters; the pointers, then the words' characters */
  v = malloc((len / 2 + 2) * sizeof *v + len + 1);
  if (!v) return hp_fail(d, HP_NOMEM, "out of memory");
  w = (char *)(v + len / 2 + 2);
  while (*p) {
    char quote = 0;
    if (blank(*p)) {
      line_start |= *p == '\n';
      p++;
      continue;
    }
    if (line_start && *p == '#') {
      while (*p && *p != '\n') p++;
      continue;
    }
    line_start = 0;
    v[words++] = w;
    for (; *p && (quote || !blank(*p)); p++) {
      if (quote && *p == quote) quote = 0;
      else if (!quote && (*p == '\'' || *p == '"')) quote = *p;
      else if (*p == '\\' && p[1] && quote != '\'') *w++ = *++p;
      else *w++ = *p;
    }
    *w++ = '\0';
    if (quote) {
      free(v);
      return hp_fail(d, HP_PARSE, "arguments file: a %s quote is not closed",
                     quote == '\'' ? "single" : "double");
    }
  }
  v[words] = NULL;
  *argv = v;
  *argc = (int)words;
  return HP_OK;
}
