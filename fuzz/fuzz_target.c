/* fuzz_target.c -- the libFuzzer entry points of every target: `make fuzz` builds one
 * binary per target from this file, fuzz-T with HPFZ_BODY = hpfz_T, the body that parses
 * the input with T's loader and uses what it loads (fuzz_bodies.c): model, cluster,
 * profile, plan, job, hf. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_bodies.h"

#ifndef HPFZ_BODY
#error "build with -DHPFZ_BODY=hpfz_<target> (make fuzz does)"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  if (hpfz_init(HPFZ_ROOT) != 0) abort();   /* examples/tiny is part of the checkout */
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (HPFZ_BODY(data, size) < 0) abort();   /* a refusal without a message is a bug */
  return 0;
}
