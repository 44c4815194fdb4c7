/* fuzz_model.c -- libFuzzer target: the model loader (hp_model_parse) and what uses its result
 * (fuzz_bodies.c). Built and run by `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_bodies.h"

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
  if (hpfz_model(data, size) < 0) abort();   /* a refusal without a message is a bug */
  return 0;
}
