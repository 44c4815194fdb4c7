/* json_util.h -- typed, path-aware access to cJSON trees for the loaders: every failure
 * names the file, the key path and what was expected. Internal. */
#ifndef HP_JSON_UTIL_H
#define HP_JSON_UTIL_H

#include <cjson/cJSON.h>

#include "internal.h"

typedef struct ju_ctx {
  const char *file;    /* name used in messages */
  hp_diag *d;
} ju_ctx;

/* Parses `text`; a syntax error names the line and column. */
hp_err ju_parse(ju_ctx *c, const char *text, cJSON **out);

/* Writes "path.key" (or "key" at the top) into buf. */
void ju_join(char *buf, size_t n, const char *path, const char *key);
/* Writes "path[i]" into buf. */
void ju_index(char *buf, size_t n, const char *path, int i);

/* Fails with "<file>: <path>: expected <what>, got <found>". */
hp_err ju_expect(ju_ctx *c, const char *path, const char *what, const cJSON *found);

hp_err ju_object(ju_ctx *c, const cJSON *v, const char *path);
/* An array; its length goes to *n. */
hp_err ju_array(ju_ctx *c, const cJSON *v, const char *path, int *n);

/* Member `key` of object `o` as a finite number >= min_incl (or > min when strict).
 * Absent: the default if !required, else an error. */
hp_err ju_num(ju_ctx *c, const cJSON *o, const char *path, const char *key, int required,
              double def, double min, int strict, double *out);
/* Member as an integer in [lo, hi]. */
hp_err ju_int(ju_ctx *c, const cJSON *o, const char *path, const char *key, int required,
              long def, long lo, long hi, long *out);
/* Whether v is a number with an integer value in [lo, hi] (checked on the double, before
 * any conversion: 1e20 or NaN is refused, never cast); the value goes to *out. */
int ju_int_value(const cJSON *v, long lo, long hi, long *out);
hp_err ju_bool(ju_ctx *c, const cJSON *o, const char *path, const char *key, int required,
               int def, int *out);
/* Member as a non-empty string (borrowed from the tree) holding no control character
 * (ju_name); so must the default be when the member is absent. */
hp_err ju_str(ju_ctx *c, const cJSON *o, const char *path, const char *key, int required,
              const char *def, const char **out);

/* Names (of layers, kinds, nodes, device types, models, clusters; anything that may be
 * printed or written into a script) may hold no control character, bytes 0x00-0x1F and
 * 0x7F: HP_PARSE naming the file, the key path and the character, else HP_OK. `s` may
 * be NULL (nothing to check). */
hp_err ju_name(ju_ctx *c, const char *path, const char *s);
/* Writes `s` into buf with control characters as \xNN, cut to what fits. */
void ju_escape(char *buf, size_t n, const char *s);

/* Warns about members of `o` not in the NULL-terminated `known`. */
void ju_unknown_keys(ju_ctx *c, const cJSON *o, const char *path, const char *const *known);

/* Checks an optional "version": 1. */
hp_err ju_version(ju_ctx *c, const cJSON *root);

/* A value as a number for messages: "string \"x\"", "-3", "null", ... */
void ju_describe(const cJSON *v, char *buf, size_t n);

/* A bandwidth matrix object {"gbps": [[...]], "lat_us": [[...]]} at `path`: square, off
 * the diagonal positive; made symmetric (smaller bandwidth, larger latency of the two
 * directions, cost-model.md 7.2). Outputs are malloc'd n x n, bytes/s and seconds. */
hp_err ju_bw_matrix(ju_ctx *c, const cJSON *m, const char *path, int *n, double **bw,
                    double **lat);

/* Checks the names a plan file's "inputs" and "solver" blocks hold (file paths, the
 * solver's name and status) with ju_name (load_plan_info.c). */
hp_err hp__plan_names(ju_ctx *c, const cJSON *root);

/* --- Hugging Face configs (load_hf.c). */
/* Whether a model file's root is an HF config.json rather than a hetplan model. */
int hp__hf_detect(const cJSON *root);
/* Reads an HF config's root (o may be NULL: the defaults). */
hp_err hp__hf_read(ju_ctx *c, const cJSON *root, const hp_hf_opts *o, hp_hf_model *out);
/* Fills `m` (zeroed) from an HF config's root, with the defaults. */
hp_err hp__hf_model(ju_ctx *c, const cJSON *root, hp_model *m);
#endif
