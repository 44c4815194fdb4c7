/* sh_quote.c -- the one way a string from an input (a name, a path, a host, a user's
 * argument) reaches a shell script that hetplan writes: as one bash word that stands for
 * itself wherever bash reads it, in a command or in a comment. Single quotes make every
 * character literal ($, `, ", \, ;, #, spaces, a heredoc's end word); a quote inside is
 * closed, escaped and reopened ('\''); a control character (a newline would end a
 * comment early) turns the word into ANSI-C quoting, $'...', with \xHH escapes, so no
 * line break ever reaches the script raw. */
#include <stdio.h>
#include <stdlib.h>

#include "launch.h"

static int has_control(const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) return 1;
  return 0;
}

void hp__sh_quote(hp_sb *b, const char *s)
{
  if (!s) s = "";
  if (!has_control(s)) {
    hp__sb_printf(b, "'");
    for (; *s; s++) {
      if (*s == '\'') hp__sb_printf(b, "'\\''");
      else hp__sb_printf(b, "%c", *s);
    }
    hp__sb_printf(b, "'");
    return;
  }
  hp__sb_printf(b, "$'");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\'' || c == '\\') hp__sb_printf(b, "\\%c", c);
    else if (c < 0x20 || c == 0x7f) hp__sb_printf(b, "\\x%02x", c);
    else hp__sb_printf(b, "%c", c);
  }
  hp__sb_printf(b, "'");
}

char *hp__sh_quote_buf(char *buf, size_t n, const char *s)
{
  hp_sb b = {0};
  hp__sh_quote(&b, s);
  snprintf(buf, n, "%s", b.failed || !b.s ? "'?'" : b.s);
  free(b.s);
  return buf;
}
