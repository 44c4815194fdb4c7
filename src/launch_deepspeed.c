/* launch_deepspeed.c -- the DeepSpeed export format: ds_config.json (ZeRO stage from the
 * sharding, micro-batch, accumulation), a hostfile and the deepspeed launch; under
 * torchrun when --include's sorting of a node's GPUs would break the placement, and one
 * process per GPU with its rank given (deepspeed.init_distributed reads RANK, LOCAL_RANK,
 * WORLD_SIZE, MASTER_*) when no node order realises it. Its one rank order is the
 * pipe-data-model topology (docs/export.md). */
#include <stdlib.h>
#include <string.h>

#include "launch.h"

/* Sharding made one launchable mode (ZeRO stages 0-3; 0-1 under a pipeline), per-stage
 * recompute and GPipe made uniform; the stage boundaries, tensor and sequence parallelism
 * that the model's code must give. */
static void deepspeed_limits(hp_launch_ctx *c)
{
  const hp_plan *pl = c->plan;
  if (pl->pp > 1)
    hp__launch_one_mode(c, 1u << HP_SHARD_DP | 1u << HP_SHARD_ZERO1, "DeepSpeed",
                        "dp and zero1 under a pipeline: its pipeline engine refuses ZeRO-2 and "
                        "ZeRO-3 (\"incompatible with pipeline parallelism\")");
  else
    hp__launch_one_mode(c, HP_SHARD_ALL, "DeepSpeed",
                        "dp, zero1, zero2 and zdp as zero_optimization.stage 0, 1, 2, 3");
  if (c->prob->job.sequence_parallel && pl->tp > 1)
    hp__launch_note(c, "sequence parallelism: DeepSpeed takes it from the model's own code "
                    "(e.g. Megatron-DeepSpeed's --sequence-parallel), not from its config");
  if (c->prob->job.grad_sync == HP_SYNC_OVERLAP && hp__launch_uniform_mode(c->var) == HP_SHARD_DP &&
      pl->dp > 1)
    hp__launch_note(c, "grad_sync overlap: overlap_comm is a ZeRO setting, and at stage 0 DeepSpeed "
                    "all-reduces the gradients after the backward pass; the run may be slower "
                    "than planned (plan with --grad-sync end to score it as it runs)");
  hp__launch_uniform_recompute(c, "DeepSpeed's PipelineModule(activation_checkpoint_interval) takes");
  hp__launch_only_1f1b(c, "DeepSpeed (its synchronous TrainSchedule)");
  if (pl->pp > 1)
    hp__launch_note(c, "stage boundaries: DeepSpeed's PipelineModule partitions by 'parameters', "
                    "'uniform' or 'type:REGEX' only; to get the plan's boundaries (listed below) "
                    "set the module's parts in your code");
  if (pl->tp > 1)
    hp__launch_note(c, "tensor parallelism (tp %d): DeepSpeed takes it from the model's own code "
                    "(e.g. Megatron-DeepSpeed's mpu); DeepSpeed's topology then orders ranks pipe, "
                    "data, model as here", pl->tp);
  if (c->map->contiguous && !c->map->ascending)
    hp__launch_note(c, "DeepSpeed's --include sorts a node's GPUs, and this placement needs them "
                    "out of order on some node: the launch below runs the DeepSpeed program under "
                    "torchrun with CUDA_VISIBLE_DEVICES instead (deepspeed.init_distributed reads "
                    "torchrun's RANK)");
}

/* ds_config.json: the ZeRO stage of the variant's one mode (dp 0, zero1 1, zero2 2, zdp 3),
 * overlap_comm under grad_sync overlap. */
static void deepspeed_config(const hp_launch_ctx *c, hp_sb *b)
{
  const hp_plan *pl = c->plan, *var = c->var;
  const struct hp_transformer *t = c->prob->model->transformer;
  int mode = hp__launch_uniform_mode(var);
  int stage = mode == HP_SHARD_ZERO1 ? 1 : mode == HP_SHARD_ZERO2 ? 2 : mode == HP_SHARD_ZDP ? 3 : 0;
  hp__sb_printf(b, "{\n  \"train_batch_size\": %ld,\n  \"train_micro_batch_size_per_gpu\": %d,\n"
                "  \"gradient_accumulation_steps\": %ld,\n", c->prob->job.gbs, pl->mbs, pl->gas);
  if (t && t->dtype == HP_DTYPE_FP16) hp__sb_printf(b, "  \"fp16\": { \"enabled\": true },\n");
  else if (!t || t->dtype == HP_DTYPE_BF16) hp__sb_printf(b, "  \"bf16\": { \"enabled\": true },\n");
  hp__sb_printf(b, "  \"zero_optimization\": { \"stage\": %d", stage);
  if (c->prob->job.grad_sync == HP_SYNC_OVERLAP) hp__sb_printf(b, ", \"overlap_comm\": true");
  hp__sb_printf(b, " }");
  if (var->recompute[0])
    hp__sb_printf(b, ",\n  \"activation_checkpointing\": { \"partition_activations\": false, "
                  "\"contiguous_memory_optimization\": false }");
  hp__sb_printf(b, "\n}\n");
}

/* The hostfile in node-rank order and deepspeed --include with each node's GPUs, run
 * once (the launcher reaches the other hosts itself). */
static void deepspeed_launcher(const hp_launch_ctx *c, hp_sb *b)
{
  const hp_cluster *cl = c->prob->cluster;
  const hp_rank_map *map = c->map;
  hp_sb inc = {0};
  hp__sb_printf(b, "\n# Run once, on a host that reaches the others (DeepSpeed's launcher starts "
                "every node):\n# bash this-script.sh [ARGS...]\n");
  hp__sb_printf(b, "# hostfile: the nodes that run a rank, in node-rank order (DeepSpeed numbers "
                "ranks in\n# hostfile order); slots: each node's GPUs, of which --include "
                "names those the plan uses\n{\n");
  for (int i = 0; i < map->n_nodes; i++) {
    hp__sb_printf(b, "  printf '%%s slots=%%d\\n' ");
    hp__sh_quote(b, cl->nodes[map->node[i]].name);
    hp__sb_printf(b, " %d\n", cl->nodes[map->node[i]].gpus);
  }
  hp__sb_printf(b, "} > hostfile\n");
  hp__launch_args_checked(c, b);
  hp__sb_printf(b, "# --include: each node's GPUs (DeepSpeed sets CUDA_VISIBLE_DEVICES "
                "to them, sorted)\ndeepspeed --hostfile hostfile --include ");
  for (int i = 0; i < map->n_nodes; i++) {
    hp__sb_printf(&inc, "%s%s:", i ? "@" : "", cl->nodes[map->node[i]].name);
    for (int q = 0; q < map->count[i]; q++)
      hp__sb_printf(&inc, "%s%d", q ? "," : "", map->gpu[map->first_rank[i] + q]);
  }
  if (inc.failed) b->failed = 1;
  else hp__sh_quote(b, inc.s);
  free(inc.s);
  hp__sb_printf(b, " --master_addr ");
  hp__launch_master(c, b);
  hp__sb_printf(b, " --master_port %d ", c->o->port > 0 ? c->o->port : 29500);
  hp__sh_quote(b, c->script);
  hp__sb_printf(b, " --deepspeed --deepspeed_config ds_config.json ${ARGS[@]+\"${ARGS[@]}\"}\n");
}

static void deepspeed_emit(const hp_launch_ctx *c, hp_sb *b)
{
  hp__sb_printf(b, "cat > ds_config.json <<'EOF'\n");
  deepspeed_config(c, b);
  hp__sb_printf(b, "EOF\n");
  if (c->var->recompute[0])
    hp__sb_printf(b, "# recompute: the config's activation_checkpointing section sets how; "
                  "the model asks for it: PipelineModule(..., activation_checkpoint_interval=1) "
                  "or deepspeed.checkpointing.checkpoint around each layer\n");
  int plain = 1;
  for (int i = 0; i < c->map->n_nodes; i++)
    plain &= hp__launch_plain_name(c->prob->cluster->nodes[c->map->node[i]].name);
  if (c->map->contiguous && c->map->ascending && plain) {
    deepspeed_launcher(c, b);
    return;
  }
  if (c->map->contiguous && c->map->ascending)
    hp__sb_printf(b, "# A node name holds a character DeepSpeed's hostfile or --include splits "
                  "on (a blank, '@', ':', ','): each node is started by this script instead.\n");
  hp__launch_per_node(c, b, "--deepspeed --deepspeed_config ds_config.json");
}

const hp_launch_fmt hp_launch_fmt_deepspeed = {
  .name = "deepspeed",
  .framework = "DeepSpeed",
  .script = "train.py",
  .order = { [HP_ORDER_TP_DP_PP] = "DeepSpeed's pipe-data-model topology" },
  .unrealised = "",
  .limits = deepspeed_limits,
  .emit = deepspeed_emit,
  .config = deepspeed_config,
};
