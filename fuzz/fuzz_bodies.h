/* fuzz_bodies.h -- what the fuzz targets do with one input, shared by the libFuzzer
 * targets (fuzz/fuzz_target.c, one binary per body) and the replay test of `make test`
 * (tests/unit/test_fuzz_replay.c), so that an input kept as a regression runs exactly as the fuzzer ran it. Each body parses
 * the bytes with the normal loader and, when they load, uses the result the way the
 * command does (bind a problem, evaluate, simulate, write JSON, a cheap solver). Each
 * returns 1 when the input loaded, 0 when the loader refused it, -1 when a loader refused
 * it without a message (a bug: every refusal must say why). */
#ifndef HP_FUZZ_BODIES_H
#define HP_FUZZ_BODIES_H

#include <stddef.h>
#include <stdint.h>

/* Loads the fixed tiny model, cluster and plan (examples/tiny under `root`, the
 * repository root) that the plan, profile and job targets need; 0 on success. */
int hpfz_init(const char *root);
void hpfz_done(void);

int hpfz_model(const uint8_t *data, size_t size);
int hpfz_cluster(const uint8_t *data, size_t size);
int hpfz_profile(const uint8_t *data, size_t size);
int hpfz_plan(const uint8_t *data, size_t size);
int hpfz_job(const uint8_t *data, size_t size);
int hpfz_hf(const uint8_t *data, size_t size);

#endif
