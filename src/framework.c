/* framework.c -- the documented defaults of what a training framework holds on a GPU
 * beyond the model (the reserve res_k of cost-model.md 4): one table, its sources beside
 * each figure (docs/memory-margin.md "Framework defaults"). Fixed bytes per device type:
 * the context, NCCL's buffers and the framework's own (hp_framework_reserve), and the
 * caching allocator's reserve as a fraction of the device's memory
 * (hp_framework_allocator); `hetplan calibrate` fits a cluster's own reserve from
 * measured memory (docs/calibrate.md). */
#include <ctype.h>
#include <string.h>

#include "internal.h"

#define MIB 1048576.0
#define GIB 1073741824.0

static const char *const names[HP_N_FRAMEWORK] = { "none", "megatron", "deepspeed", "fsdp" };

const char *hp_framework_name(int fw)
{
  return fw >= 0 && fw < HP_N_FRAMEWORK ? names[fw] : "?";
}

int hp_framework_parse(const char *s)
{
  for (int f = 0; s && f < HP_N_FRAMEWORK; f++)
    if (!strcmp(s, names[f])) return f;
  return -1;
}

/* The CUDA context of a PyTorch process with cuBLAS and cuDNN loaded, by GPU generation,
 * read from the type's name (first match, case-insensitive). NVIDIA documents no figure;
 * it depends on the driver, the CUDA version (lazy loading, CUDA 11.7 and later, loads
 * kernels on first use) and the libraries. Hopper's is measured: hetplan-profile's run on
 * one H100 SXM5 (models/h100-1gpu.cluster.json: 0.6 GiB in use after creating the
 * context). The others are hetplan's estimates, smaller for the older generations whose
 * kernel images are smaller; a user who has measured theirs gives reserved_gib. */
static const struct gpu_gen {
  const char *pattern, *generation;
  double context_gib;
} gens[] = {
  { "gh200", "hopper", 0.6 }, { "h100", "hopper", 0.6 }, { "h200", "hopper", 0.6 },
  { "h800", "hopper", 0.6 }, { "h20", "hopper", 0.6 },
  { "b100", "blackwell", 0.6 }, { "b200", "blackwell", 0.6 },
  { "l40", "ada", 0.5 }, { "l4", "ada", 0.5 }, { "4090", "ada", 0.5 },
  { "a100", "ampere", 0.5 }, { "a800", "ampere", 0.5 }, { "a10", "ampere", 0.5 },
  { "a30", "ampere", 0.5 }, { "a40", "ampere", 0.5 }, { "a6000", "ampere", 0.5 },
  { "3090", "ampere", 0.5 },
  { "t4", "turing", 0.4 }, { "2080", "turing", 0.4 }, { "titan-rtx", "turing", 0.4 },
  { "titan rtx", "turing", 0.4 }, { "titanrtx", "turing", 0.4 },
  { "v100", "volta", 0.4 }, { "titan-v", "volta", 0.4 },
};
/* an unknown name: the largest context above, so that the default does not under-count */
#define UNKNOWN_CONTEXT_GIB 0.6

/* NCCL's buffers, per communicator: for each channel and each peer it receives from, one
 * buffer per protocol: Simple NCCL_BUFFSIZE (documented default 4 MiB: NCCL's "Environment
 * Variables", NCCL_BUFFSIZE), LL128 4.69 MiB and LL 0.5 MiB (NCCL's source defaults,
 * DEFAULT_LL128_BUFFSIZE and DEFAULT_LL_BUFFSIZE). 16 channels (NCCL picks them by topology,
 * up to NCCL_MAX_NCHANNELS; 16 is typical of an NVLink node) and 2 peers (a ring's
 * predecessor, or a tree's parent and child). */
#define NCCL_SIMPLE (4.0 * MIB)
#define NCCL_LL128 4915200.0
#define NCCL_LL (0.5 * MIB)
#define NCCL_CHANNELS 16
#define NCCL_PEERS 2
#define NCCL_PER_COMM (NCCL_CHANNELS * NCCL_PEERS * (NCCL_SIMPLE + NCCL_LL128 + NCCL_LL))

/* Per framework: the communicators that carry traffic in a step (NCCL connects a
 * communicator's buffers on its first collective), and the framework's own buffers. */
static const struct fw_row { int comms; double buffers; } fws[HP_N_FRAMEWORK] = {
  [HP_FW_NONE] = { 0, 0 },
  /* Megatron-LM: the tensor-, data- and pipeline-parallel groups. Its gradient buckets
   * (DistributedDataParallel's bucket_size) are views into the contiguous gradient
   * buffer, which the model's grad_bytes and state_bytes already hold: nothing more. */
  [HP_FW_MEGATRON] = { 3, 0 },
  /* DeepSpeed (as Megatron-DeepSpeed launches it: the same three groups). ZeRO-1/2 keep a
   * reduction bucket of reduce_bucket_size elements, default 5e8 ("zero_optimization",
   * DeepSpeed's configuration JSON docs), allocated whole with contiguous_gradients
   * (default true): 5e8 x 2 bytes in bf16/fp16. allgather_bucket_size (default 5e8) is a
   * transient of the step, not held. */
  [HP_FW_DEEPSPEED] = { 3, 5e8 * 2 },
  /* FSDP: one process group (the world). Its gathered parameters are the cost model's
   * `gather` term; it keeps no bucket of its own. */
  [HP_FW_FSDP] = { 1, 0 },
};

/* The caching allocator's reserve, a fraction of the device's memory, for the frameworks
 * that allocate through PyTorch's caching allocator (all three). The allocator keeps
 * freed blocks cached; a block split for one size serves a larger request only when it
 * is free and whole, so the memory a process holds (nvidia-smi, torch's max_reserved)
 * stays above what its tensors take at their peak (max_allocated), and a run fails when a
 * request finds no fitting block though the sum of free memory would suffice (PyTorch's
 * "CUDA semantics: memory management" and its `expandable_segments` note). The figure is
 * measured, not derived: BigScience's A100-80GB runs (../shared/data/measured: 94 rows with
 * nvidia-smi's maximum, Megatron-DeepSpeed) hold 7-17 GiB (median 12) above the tensors,
 * context, NCCL buffers and bucket included in that; the data set's README gives 10-15 GiB
 * on A100-80GB. 10 % of the memory (8 GiB of 80) is the lower part of that range, kept
 * proportional so that a 24 GiB card is not charged 8 GiB; `hetplan calibrate` fits a
 * cluster's own figure (the reserve) from measured memory. */
#define ALLOCATOR_FRACTION 0.10

double hp_framework_allocator(int fw, double mem_bytes)
{
  if (fw <= HP_FW_NONE || fw >= HP_N_FRAMEWORK || !(mem_bytes > 0)) return 0;
  return ALLOCATOR_FRACTION * mem_bytes;
}

/* Whether `pattern` occurs in `s`, ignoring case. */
static int contains(const char *s, const char *pattern)
{
  size_t n = strlen(pattern);
  for (; *s; s++) {
    size_t i = 0;
    while (i < n && s[i] && tolower((unsigned char)s[i]) == pattern[i]) i++;
    if (i == n) return 1;
  }
  return 0;
}

double hp_framework_reserve(int fw, const char *type_name, hp_fw_reserve *parts)
{
  hp_fw_reserve r = { 0, 0, 0, "unknown" };
  double ctx = UNKNOWN_CONTEXT_GIB;
  if (fw <= HP_FW_NONE || fw >= HP_N_FRAMEWORK) {
    if (parts) *parts = (hp_fw_reserve){ 0, 0, 0, "none" };
    return 0;
  }
  for (size_t g = 0; type_name && g < sizeof gens / sizeof *gens; g++)
    if (contains(type_name, gens[g].pattern)) {
      ctx = gens[g].context_gib;
      r.generation = gens[g].generation;
      break;
    }
  r.context = ctx * GIB;
  r.nccl = fws[fw].comms * NCCL_PER_COMM;
  r.buffers = fws[fw].buffers;
  if (parts) *parts = r;
  return r.context + r.nccl + r.buffers;
}
