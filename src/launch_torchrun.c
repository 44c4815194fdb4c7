/* launch_torchrun.c -- the plain torchrun export format: one torchrun line per node with
 * its CUDA_VISIBLE_DEVICES, or one process per GPU with torchrun's environment and its
 * rank given where no node order realises the placement, for a training script of your
 * own that numbers its groups in the tp-dp-pp order (Megatron's and DeepSpeed's). It
 * expresses every plan. */
#include "launch.h"

static void torchrun_emit(const hp_launch_ctx *c, hp_sb *b)
{
  hp__launch_per_node(c, b, NULL);
}

const hp_launch_fmt hp_launch_fmt_torchrun = {
  .name = "torchrun",
  .framework = "torchrun",
  .script = "train.py",
  .order = { [HP_ORDER_TP_DP_PP] = "tp-dp-pp, Megatron's and DeepSpeed's (your script must "
                                   "number its groups so)" },
  .unrealised = "",
  .emit = torchrun_emit,
};
