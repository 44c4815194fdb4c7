/* json_util.c -- typed, path-aware cJSON access with messages that name the file, the
 * key path and what was expected (formats.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"

static int by_name(const void *a, const void *b)
{
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

/* Finds a key that appears twice in one object anywhere in the tree (cJSON keeps both,
 * and a look-up would silently take the first); writes its path. Each object's keys
 * are sorted, so a large object costs n log n, not n^2. -1 out of memory. */
static int find_duplicate(const cJSON *v, char *path, size_t cap, size_t len)
{
  int n = 0, found = 0;
  const cJSON *it;
  if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) return 0;
  cJSON_ArrayForEach(it, v) n++;
  if (cJSON_IsObject(v) && n > 1) {
    const cJSON **keys = malloc((size_t)n * sizeof *keys);
    int k = 0;
    if (!keys) return -1;
    cJSON_ArrayForEach(it, v) keys[k++] = it;
    qsort(keys, (size_t)n, sizeof *keys, by_name);
    for (k = 1; k < n && !found; k++)
      if (!by_name(&keys[k - 1], &keys[k])) {
        snprintf(path + len, cap - len, "%s%s", len ? "." : "", keys[k]->string);
        found = 1;
      }
    free(keys);
    if (found) return 1;
  }
  n = 0;
  cJSON_ArrayForEach(it, v) {
    size_t l2 = len;
    int r;
    if (!cJSON_IsObject(it) && !cJSON_IsArray(it)) { n++; continue; }
    if (len < cap - 1) {
      if (cJSON_IsArray(v)) snprintf(path + len, cap - len, "[%d]", n);
      else snprintf(path + len, cap - len, "%s%s", len ? "." : "", it->string ? it->string : "");
      l2 = strlen(path);
    }
    if ((r = find_duplicate(it, path, cap, l2))) return r;
    path[len] = '\0';
    n++;
  }
  return 0;
}

/* Where the text escapes a NUL character (\u0000) in a string, which cJSON would take as
 * the string's end (a name silently cut short); NULL if nowhere. A backslash escaped
 * itself ("\\u0000") is no escape. */
static const char *escaped_nul(const char *text)
{
  for (const char *p = strstr(text, "\\u0000"); p; p = strstr(p + 1, "\\u0000")) {
    const char *q = p;
    while (q > text && q[-1] == '\\') q--;
    if ((p - q) % 2 == 0) return p;
  }
  return NULL;
}

static void line_col(const char *text, const char *at, int *line, int *col)
{
  *line = 1;
  *col = 1;
  for (const char *p = text; p < at && *p; p++) {
    if (*p == '\n') { (*line)++; *col = 1; } else (*col)++;
  }
}

hp_err ju_parse(ju_ctx *c, const char *text, cJSON **out)
{
  char dup[256] = "";
  int r;
  const char *end = NULL, *nul;
  if ((nul = escaped_nul(text))) {
    int line, col;
    *out = NULL;
    line_col(text, nul, &line, &col);
    return hp_fail(c->d, HP_PARSE, "%s: line %d, column %d: \\u0000 (a NUL character) in a "
                   "string: names and text may hold no control character", c->file, line, col);
  }
  *out = cJSON_ParseWithOpts(text, &end, 1);
  if (!*out) {
    int line, col;
    if (!end) end = text;
    line_col(text, end, &line, &col);
    if (!*text || strspn(text, " \t\r\n") == strlen(text))
      return hp_fail(c->d, HP_PARSE, "%s: the file is empty: expected a JSON object", c->file);
    return hp_fail(c->d, HP_PARSE, "%s: line %d, column %d: malformed JSON near '%.20s'",
                   c->file, line, col, end);
  }
  if ((r = find_duplicate(*out, dup, sizeof dup, 0))) {
    cJSON_Delete(*out);
    *out = NULL;
    if (r < 0) return hp_fail(c->d, HP_NOMEM, "out of memory reading %s", c->file);
    return hp_fail(c->d, HP_PARSE, "%s: %s: the key appears twice in the same object: keep "
                   "one (JSON readers disagree on which would count)", c->file, dup);
  }
  return HP_OK;
}

void ju_join(char *buf, size_t n, const char *path, const char *key)
{
  if (!path || !*path) snprintf(buf, n, "%s", key);
  else snprintf(buf, n, "%s.%s", path, key);
}

void ju_index(char *buf, size_t n, const char *path, int i)
{
  snprintf(buf, n, "%s[%d]", path && *path ? path : "", i);
}

void ju_describe(const cJSON *v, char *buf, size_t n)
{
  if (!v) snprintf(buf, n, "nothing");
  else if (cJSON_IsNull(v)) snprintf(buf, n, "null");
  else if (cJSON_IsBool(v)) snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
  else if (cJSON_IsNumber(v)) snprintf(buf, n, "%.17g", v->valuedouble);
  else if (cJSON_IsString(v)) snprintf(buf, n, "the string \"%.40s\"", v->valuestring);
  else if (cJSON_IsArray(v)) snprintf(buf, n, "an array");
  else if (cJSON_IsObject(v)) snprintf(buf, n, "an object");
  else snprintf(buf, n, "an unreadable value");
}

hp_err ju_expect(ju_ctx *c, const char *path, const char *what, const cJSON *found)
{
  char got[96];
  ju_describe(found, got, sizeof got);
  return hp_fail(c->d, HP_PARSE, "%s: %s: expected %s, got %s", c->file,
                 path && *path ? path : "(top level)", what, got);
}

hp_err ju_object(ju_ctx *c, const cJSON *v, const char *path)
{
  return cJSON_IsObject(v) ? HP_OK : ju_expect(c, path, "an object", v);
}

hp_err ju_array(ju_ctx *c, const cJSON *v, const char *path, int *n)
{
  if (!cJSON_IsArray(v)) return ju_expect(c, path, "an array", v);
  *n = cJSON_GetArraySize(v);
  return HP_OK;
}

static const cJSON *member(const cJSON *o, const char *key)
{
  return cJSON_GetObjectItemCaseSensitive(o, key);
}

static hp_err missing(ju_ctx *c, const char *path, const char *what)
{
  return hp_fail(c->d, HP_PARSE, "%s: %s: missing: expected %s", c->file, path, what);
}

hp_err ju_num(ju_ctx *c, const cJSON *o, const char *path, const char *key, int required,
              double def, double min, int strict, double *out)
{
  char p[256], what[64];
  const cJSON *v = member(o, key);
  ju_join(p, sizeof p, path, key);
  if (min == 0) snprintf(what, sizeof what, strict ? "a positive number" : "a non-negative number");
  else snprintf(what, sizeof what, "a number %s %g", strict ? ">" : ">=", min);
  if (!v) {
    if (required) return missing(c, p, what);
    *out = def;
    return HP_OK;
  }
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
      (strict ? v->valuedouble <= min : v->valuedouble < min))
    return ju_expect(c, p, what, v);
  *out = v->valuedouble;
  return HP_OK;
}

int ju_int_value(const cJSON *v, long lo, long hi, long *out)
{
  double x;
  if (!cJSON_IsNumber(v)) return 0;
  x = v->valuedouble;
  if (!isfinite(x) || x != floor(x) || x < (double)lo || x > (double)hi) return 0;
  *out = (long)x;
  return 1;
}

hp_err ju_int(ju_ctx *c, const cJSON *o, const char *path, const char *key, int required,
              long def, long lo, long hi, long *out)
{
  char p[256], what[80];
  const cJSON *v = member(o, key);
  ju_join(p, sizeof p, path, key);
  snprintf(what, sizeof what, "an integer in %ld..%ld", lo, hi);
  if (!v) {
    if (required) return missing(c, p, what);
    *out = def;
    return HP_OK;
  }
  if (!ju_int_value(v, lo, hi, out)) return ju_expect(c, p, what, v);
  return HP_OK;
}

hp_err ju_bool(ju_ctx *c, const cJSON *o, const char *path, const char *key, int required,
               int def, int *out)
{
  char p[256];
  const cJSON *v = member(o, key);
  ju_join(p, sizeof p, path, key);
  if (!v) {
    if (required) return missing(c, p, "true or false");
    *out = def;
    return HP_OK;
  }
  if (!cJSON_IsBool(v)) return ju_expect(c, p, "true or false", v);
  *out = cJSON_IsTrue(v);
  return HP_OK;
}

hp_err ju_str(ju_ctx *c, const cJSON *o, const char *path, const char *key, int required,
              const char *def, const char **out)
{
  char p[256];
  const cJSON *v = member(o, key);
  ju_join(p, sizeof p, path, key);
  if (!v) {
    if (required) return missing(c, p, "a non-empty string");
    char q[288];   /* a default is a file's or a layer's name: checked all the same */
    *out = def;
    snprintf(q, sizeof q, "%s (absent, so its default)", p);
    return ju_name(c, q, def);
  }
  if (!cJSON_IsString(v) || !v->valuestring || !*v->valuestring)
    return ju_expect(c, p, "a non-empty string", v);
  *out = v->valuestring;
  return ju_name(c, p, v->valuestring);
}

void ju_escape(char *buf, size_t n, const char *s)
{
  size_t len = 0;
  if (n == 0) return;
  buf[0] = '\0';
  for (; s && *s && len + 5 < n; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch < 0x20 || ch == 0x7f) len += (size_t)snprintf(buf + len, n - len, "\\x%02X", ch);
    else buf[len++] = (char)ch;
  }
  buf[len] = '\0';
}

hp_err ju_name(ju_ctx *c, const char *path, const char *s)
{
  char shown[80];
  size_t i;
  if (!s) return HP_OK;
  for (i = 0; s[i]; i++)
    if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f) break;
  if (!s[i]) return HP_OK;
  ju_escape(shown, sizeof shown, s);
  return hp_fail(c->d, HP_PARSE, "%s: %s: \"%s\" holds a control character (0x%02X at byte "
                 "%zu): names may hold none (bytes 0x00-0x1F and 0x7F), since they are printed "
                 "and written into scripts: rename it", c->file, path && *path ? path : "(top level)",
                 shown, (unsigned)(unsigned char)s[i], i);
}

void ju_unknown_keys(ju_ctx *c, const cJSON *o, const char *path, const char *const *known)
{
  const cJSON *it;
  cJSON_ArrayForEach(it, o) {
    int ok = 0;
    char p[256];
    for (const char *const *k = known; *k; k++)
      if (it->string && !strcmp(it->string, *k)) { ok = 1; break; }
    if (ok) continue;
    ju_join(p, sizeof p, path, it->string ? it->string : "?");
    hp_warn(c->d, "%s: %s: unknown key, ignored", c->file, p);
  }
}

hp_err ju_version(ju_ctx *c, const cJSON *root)
{
  long v;
  hp_err err = ju_int(c, root, "", "version", 0, 1, 0, 1000000, &v);
  if (err) return err;
  if (v != 1)
    return hp_fail(c->d, HP_PARSE, "%s: version: this hetplan reads version 1 files, got %ld",
                   c->file, v);
  return HP_OK;
}

static hp_err read_square(ju_ctx *c, const cJSON *a, const char *path, int n, double *out,
                          int is_bw)
{
  char p[256];
  int rows = 0, cols = 0;
  hp_err err;
  if ((err = ju_array(c, a, path, &rows))) return err;
  if (rows != n)
    return hp_fail(c->d, HP_PARSE, "%s: %s: expected %d rows (a square matrix), got %d",
                   c->file, path, n, rows);
  const cJSON *row = a->child;   /* walked, not indexed: cJSON's look-up is linear */
  for (int i = 0; i < n; i++, row = row->next) {
    const cJSON *v;
    ju_index(p, sizeof p, path, i);
    if ((err = ju_array(c, row, p, &cols))) return err;
    if (cols != n)
      return hp_fail(c->d, HP_PARSE, "%s: %s: expected %d entries, got %d", c->file, p, n, cols);
    v = row->child;
    for (int j = 0; j < n; j++, v = v->next) {
      char q[288];
      snprintf(q, sizeof q, "%s[%d]", p, j);
      if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return ju_expect(c, q, "a non-negative number", v);
      if (is_bw && i != j && v->valuedouble == 0)
        return hp_fail(c->d, HP_PARSE, "%s: %s: a zero bandwidth between devices %d and %d: "
                       "give the measured figure (Gbit/s)", c->file, q, i, j);
      out[(size_t)i * (size_t)n + (size_t)j] = v->valuedouble;
    }
  }
  return HP_OK;
}

hp_err ju_bw_matrix(ju_ctx *c, const cJSON *m, const char *path, int *n, double **bw,
                    double **lat)
{
  static const char *const known[] = { "gbps", "lat_us", NULL };
  char p[256];
  const cJSON *g, *l;
  double *B = NULL, *T = NULL;
  hp_err err;
  int rows = 0;
  *bw = *lat = NULL;
  if ((err = ju_object(c, m, path))) return err;
  ju_unknown_keys(c, m, path, known);
  g = cJSON_GetObjectItemCaseSensitive(m, "gbps");
  l = cJSON_GetObjectItemCaseSensitive(m, "lat_us");
  ju_join(p, sizeof p, path, "gbps");
  if (!g) return hp_fail(c->d, HP_PARSE, "%s: %s: missing: expected a square array of Gbit/s",
                         c->file, p);
  if ((err = ju_array(c, g, p, &rows))) return err;
  if (rows < 1 || rows > 65536)
    return hp_fail(c->d, HP_PARSE, "%s: %s: expected 1..65536 rows, got %d", c->file, p, rows);
  B = hp__calloc((size_t)rows * (size_t)rows, sizeof *B);
  T = hp__calloc((size_t)rows * (size_t)rows, sizeof *T);
  if (!B || !T) { err = hp_fail(c->d, HP_NOMEM, "out of memory for a %d x %d matrix", rows, rows); goto fail; }
  if ((err = read_square(c, g, p, rows, B, 1))) goto fail;
  if (l) {
    ju_join(p, sizeof p, path, "lat_us");
    if ((err = read_square(c, l, p, rows, T, 0))) goto fail;
  }
  for (int i = 0; i < rows; i++)
    for (int j = i + 1; j < rows; j++) {
      size_t ij = (size_t)i * (size_t)rows + (size_t)j, ji = (size_t)j * (size_t)rows + (size_t)i;
      double b = (B[ij] < B[ji] ? B[ij] : B[ji]) * 1e9 / 8.0;
      double t = (T[ij] > T[ji] ? T[ij] : T[ji]) * 1e-6;
      B[ij] = B[ji] = b;
      T[ij] = T[ji] = t;
    }
  for (int i = 0; i < rows; i++) {
    B[(size_t)i * (size_t)rows + (size_t)i] = INFINITY;  /* the diagonal is ignored */
    T[(size_t)i * (size_t)rows + (size_t)i] = 0;
  }
  *n = rows;
  *bw = B;
  *lat = T;
  return HP_OK;
fail:
  free(B);
  free(T);
  return err;
}
