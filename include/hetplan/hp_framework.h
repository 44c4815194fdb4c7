/* hp_framework.h -- the memory a training framework holds beyond the model's (cost-model.md
 * 4's reserve res_k): the CUDA context, NCCL's communication buffers and the framework's own
 * buffers, as documented defaults per framework and GPU generation (src/framework.c,
 * docs/memory-margin.md "Framework defaults"). */
#ifndef HP_FRAMEWORK_H
#define HP_FRAMEWORK_H

/* The framework a job runs under (the job's "framework", --framework). HP_FW_NONE: no
 * default reserve, a type keeps its cluster file's reserved_gib (or 0): version 1.2's
 * behaviour. */
typedef enum { HP_FW_NONE = 0, HP_FW_MEGATRON = 1, HP_FW_DEEPSPEED = 2, HP_FW_FSDP = 3 } hp_framework;
#define HP_N_FRAMEWORK 4

const char *hp_framework_name(int fw);      /* "none", "megatron", "deepspeed", "fsdp" */
/* Parses a framework's name; -1 if none. */
int hp_framework_parse(const char *s);

/* The parts of a framework's default reserve on one device, bytes. context and nccl live
 * outside PyTorch's caching allocator (nvidia-smi shows them, max_memory_allocated does
 * not); buffers are tensors the framework allocates through it. */
typedef struct hp_fw_reserve {
  double context;      /* the CUDA context with cuBLAS/cuDNN loaded, by GPU generation */
  double nccl;         /* NCCL's buffers of the framework's communicators */
  double buffers;      /* the framework's own (DeepSpeed's gradient bucket) */
  const char *generation;   /* the GPU generation the type's name was read as */
} hp_fw_reserve;

/* The default reserve of framework `fw` on a device type named `type_name` (its GPU
 * generation is read from the name: "H100", "A100-80GB", "V100", "T4", ...; an unknown name
 * takes the largest context of the table). Returns the sum of the parts, 0 for HP_FW_NONE;
 * `parts` (may be NULL) gets them. */
double hp_framework_reserve(int fw, const char *type_name, hp_fw_reserve *parts);

/* The caching allocator's reserve under framework `fw` on a device of `mem_bytes`: what
 * the process holds beyond its tensors' peak (cached, fragmented blocks; nvidia-smi and
 * max_reserved show it, max_allocated does not): 10 % of the memory, 0 for HP_FW_NONE
 * (src/framework.c says where the figure comes from). A type without reserved_gib takes
 * hp_framework_reserve + this. */
double hp_framework_allocator(int fw, double mem_bytes);

#endif
