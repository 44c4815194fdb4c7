/* read_file.c -- reads a whole input file into memory for the JSON loaders, at most
 * HP_MAX_FILE_BYTES: a larger file (or an endless one such as /dev/zero) is refused with
 * a message, never read to the end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

hp_err hp_read_file(const char *path, char **out, hp_diag *d)
{
  FILE *f;
  struct stat st;
  char *buf = NULL;
  size_t cap = 0, len = 0;
  *out = NULL;
  if (!(f = fopen(path, "rb")))
    return hp_fail(d, HP_IO, "cannot open '%s': %s", path, strerror(errno));
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return hp_fail(d, HP_IO, "cannot read '%s': it is a directory, expected a JSON file", path);
  }
  for (;;) {
    size_t got, want;
    if (len + 4096 + 1 > cap) {
      size_t ncap = cap ? cap * 2 : 65536;
      char *nb;
      if (ncap > HP_MAX_FILE_BYTES + 2) ncap = HP_MAX_FILE_BYTES + 2;
      if (!(nb = realloc(buf, ncap))) {
        free(buf);
        fclose(f);
        return hp_fail(d, HP_NOMEM, "out of memory reading '%s'", path);
      }
      buf = nb;
      cap = ncap;
    }
    want = cap - len - 1;
    got = fread(buf + len, 1, want, f);
    if (memchr(buf + len, '\0', got)) {   /* binary data (or /dev/zero): stop at once */
      free(buf);
      fclose(f);
      return hp_fail(d, HP_PARSE, "%s: contains a NUL byte: expected a JSON text file", path);
    }
    len += got;
    if (len > HP_MAX_FILE_BYTES) {
      free(buf);
      fclose(f);
      return hp_fail(d, HP_IO, "%s: larger than %d MiB, the most hetplan reads from an input "
                     "file: is it the right file?", path, HP_MAX_FILE_BYTES >> 20);
    }
    if (got == 0) break;
  }
  if (ferror(f)) {
    int e = errno;
    free(buf);
    fclose(f);
    return hp_fail(d, HP_IO, "cannot read '%s': %s", path, strerror(e));
  }
  fclose(f);
  buf[len] = '\0';
  *out = buf;
  return HP_OK;
}
