/* read_file.c -- reads a whole input file into memory for the JSON loaders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

hp_err hp_read_file(const char *path, char **out, hp_diag *d)
{
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t cap = 0, len = 0;
  *out = NULL;
  if (!f) return hp_fail(d, HP_IO, "cannot open '%s': no such file or not readable", path);
  for (;;) {
    size_t got;
    if (len + 4096 + 1 > cap) {
      size_t ncap = cap ? cap * 2 : 65536;
      char *nb = realloc(buf, ncap);
      if (!nb) { free(buf); fclose(f); return hp_fail(d, HP_NOMEM, "out of memory reading '%s'", path); }
      buf = nb;
      cap = ncap;
    }
    got = fread(buf + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    free(buf);
    fclose(f);
    return hp_fail(d, HP_IO, "cannot read '%s'", path);
  }
  fclose(f);
  buf[len] = '\0';
  if (strlen(buf) != len) {
    free(buf);
    return hp_fail(d, HP_PARSE, "%s: contains a NUL byte: expected a JSON text file", path);
  }
  *out = buf;
  return HP_OK;
}
