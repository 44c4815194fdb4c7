/* test_fuzz_replay.c -- every input kept in tests/fuzz/TARGET/ (crashes, hangs and
 * hand-made hostile inputs: see docs/fuzzing.md) replayed through the same body as the
 * fuzz target TARGET (fuzz/fuzz_bodies.c): the normal loader, then what the commands do
 * with what it loads. Each must load or be refused with a message, within the time
 * limit, without a sanitizer report under make check-asan. */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "../../fuzz/fuzz_bodies.h"

typedef int (*body_fn)(const uint8_t *, size_t);

static unsigned char *read_all(const char *path, size_t *n)
{
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  size_t cap = 0;
  *n = 0;
  if (!f) return NULL;
  for (;;) {
    if (*n == cap) {
      unsigned char *nb = realloc(buf, cap = cap ? 2 * cap : 4096);
      if (!nb) { free(buf); fclose(f); return NULL; }
      buf = nb;
    }
    size_t got = fread(buf + *n, 1, cap - *n, f);
    if (got == 0) break;
    *n += got;
  }
  fclose(f);
  return buf ? buf : malloc(1);
}

/* Replays every file of tests/fuzz/<dir>; returns how many files ran, -1 on the first failure. */
static int replay(const char *dir, body_fn body)
{
  char path[512];
  DIR *dp;
  struct dirent *de;
  int n = 0;
  snprintf(path, sizeof path, "tests/fuzz/%s", dir);
  if (!(dp = opendir(path))) return 0;
  while ((de = readdir(dp)) != NULL) {
    size_t size;
    unsigned char *data;
    int rc;
    if (de->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "tests/fuzz/%s/%s", dir, de->d_name);
    if (!(data = read_all(path, &size))) continue;
    rc = body(data, size);
    free(data);
    if (rc < 0) {
      fprintf(stderr, "  %s: refused without a message\n", path);
      closedir(dp);
      return -1;
    }
    n++;
  }
  closedir(dp);
  return n;
}

#define REPLAY(name, body)                                                          \
  TEST(fuzz_regressions_##name##_load_or_are_refused_with_a_message)                \
  {                                                                                 \
    int n;                                                                          \
    CHECK(hpfz_init(".") == 0);                                                     \
    n = replay(#name, body);                                                        \
    hpfz_done();                                                                    \
    CHECK(n >= 1);                                                                  \
  }

REPLAY(model, hpfz_model)
REPLAY(cluster, hpfz_cluster)
REPLAY(profile, hpfz_profile)
REPLAY(plan, hpfz_plan)
REPLAY(job, hpfz_job)
REPLAY(hf, hpfz_hf)

/* The bodies tell a loaded input from a refused one: a replay that passed everything
 * would prove nothing. */
TEST(fuzz_bodies_load_the_examples_and_refuse_garbage_with_a_message)
{
  static const char model[] = "{\"layers\": [{\"name\": \"x\", \"params\": 1, \"act_bytes\": 1, "
                              "\"out_bytes\": 1, \"flops\": 1}]}";
  static const char plan[] = "{\"pp\": 1e20, \"tp\": 1, \"dp\": 1, \"mbs\": 1}";
  static const char job[] = "{\"gbs\": 1e300}";
  static const char hf[] = "{\"n_layer\": 2, \"n_embd\": 64, \"n_head\": 4, \"vocab_size\": 100, "
                           "\"n_positions\": 32}";
  static const char hf_bad[] = "{\"model_type\": \"llama\"}";
  CHECK(hpfz_init(".") == 0);
  CHECK_INT(hpfz_model((const uint8_t *)model, strlen(model)), 1);
  CHECK_INT(hpfz_model((const uint8_t *)"{\"layers\": [", 12), 0);
  CHECK_INT(hpfz_plan((const uint8_t *)plan, strlen(plan)), 0);
  CHECK_INT(hpfz_job((const uint8_t *)job, strlen(job)), 0);
  CHECK_INT(hpfz_job((const uint8_t *)"{\"gbs\": 16}", 11), 1);
  CHECK_INT(hpfz_cluster((const uint8_t *)"[]", 2), 0);
  CHECK_INT(hpfz_profile((const uint8_t *)"{}", 2), 1);
  CHECK_INT(hpfz_hf((const uint8_t *)hf, strlen(hf)), 1);
  CHECK_INT(hpfz_hf((const uint8_t *)hf_bad, strlen(hf_bad)), 0);
  hpfz_done();
}
