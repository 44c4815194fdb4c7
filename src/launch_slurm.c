/* launch_slurm.c -- the Slurm export format: an sbatch script that runs Megatron-LM (the
 * arguments of launch_megatron.c) as one srun task per global rank. The task map is
 * explicit, so every placement launches: SLURM_HOSTFILE with --distribution=arbitrary
 * puts task r on the host of its node, and each task sets RANK (its SLURM_PROCID),
 * LOCAL_RANK, CUDA_VISIBLE_DEVICES (the node's GPUs in rank order), WORLD_SIZE and
 * MASTER_* from the map before it starts the training command. */
#include <string.h>

#include "launch.h"

static void slurm_preamble(const hp_launch_ctx *c, hp_sb *b)
{
  const hp_cluster *cl = c->prob->cluster;
  const hp_rank_map *map = c->map;
  int gpus = cl->nodes[map->node[0]].gpus, uniform = 1, plain = 1;
  for (int i = 0; i < map->n_nodes; i++) {
    uniform &= cl->nodes[map->node[i]].gpus == gpus;
    plain &= hp__launch_plain_name(cl->nodes[map->node[i]].name);
  }
  hp__sb_printf(b, "#!/usr/bin/env bash\n#SBATCH --job-name=hetplan\n#SBATCH --nodes=%d\n"
                "#SBATCH --ntasks=%d\n", map->n_nodes, map->n_ranks);
  if (uniform) hp__sb_printf(b, "#SBATCH --gpus-per-node=%d\n", gpus);
  hp__sb_printf(b, "#SBATCH --exclusive\n");
  if (plain) {
    hp__sb_printf(b, "#SBATCH --nodelist=");
    for (int i = 0; i < map->n_nodes; i++)
      hp__sb_printf(b, "%s%s", i ? "," : "", cl->nodes[map->node[i]].name);
    hp__sb_printf(b, "\n");
  }
  if (!uniform)
    hp__sb_printf(b, "# (the nodes have different GPU counts: ask for each node's GPUs yourself, "
                  "e.g. per node with --gres or as a heterogeneous job)\n");
  if (!plain)
    hp__sb_printf(b, "# (node names that sbatch's --nodelist cannot take as they are: give "
                  "--nodelist, or HETPLAN_HOSTS, yourself)\n");
}

static void slurm_emit(const hp_launch_ctx *c, hp_sb *b)
{
  const hp_cluster *cl = c->prob->cluster;
  const hp_rank_map *map = c->map;
  int N = map->n_nodes, D = map->n_ranks;
  hp__megatron_settings(c, b);
  hp__sb_printf(b, "\n# Submit: sbatch this-script.sh [ARGS...] (or, inside an allocation, "
                "bash this-script.sh [ARGS...])\n");
  hp__launch_node_map(c, b);
  hp__launch_args_checked(c, b);
  hp__sb_printf(b, "# Hosts by node rank: the plan's node names when the allocation has them "
                "all; else\n# HETPLAN_HOSTS (the hosts in node-rank order); else the "
                "allocation's order, said.\nplanned=(");
  for (int i = 0; i < N; i++) {
    hp__sb_printf(b, i ? " " : "");
    hp__sh_quote(b, cl->nodes[map->node[i]].name);
  }
  hp__sb_printf(b, ")\n"
                "if [ -n \"${HETPLAN_HOSTS:-}\" ]; then\n"
                "  read -r -a hosts <<<\"$HETPLAN_HOSTS\"\n"
                "else\n"
                "  mapfile -t alloc < <(scontrol show hostnames \"${SLURM_JOB_NODELIST:?run it "
                "with sbatch, or inside an allocation}\")\n"
                "  hosts=(\"${planned[@]}\")\n"
                "  for h in \"${planned[@]}\"; do\n"
                "    found=0\n"
                "    for a in \"${alloc[@]}\"; do [ \"$a\" != \"$h\" ] || found=1; done\n"
                "    if [ \"$found\" = 0 ]; then\n"
                "      echo \"note: the allocation lacks host $h of the plan: node rank i runs on "
                "the i-th allocated host (set HETPLAN_HOSTS to choose)\" >&2\n"
                "      hosts=(\"${alloc[@]}\")\n"
                "      break\n"
                "    fi\n"
                "  done\n"
                "fi\n"
                "if [ \"${#hosts[@]}\" -lt %d ]; then\n"
                "  echo \"$0: the launch needs %d hosts, it has ${#hosts[@]}\" >&2\n  exit 2\nfi\n",
                N, N);
  hp__sb_printf(b, "# The task map: task r (global rank r) runs on the host of its node as that "
                "node's\n# process q; SLURM_HOSTFILE lists the tasks' hosts in order "
                "(--distribution=arbitrary).\n"
                "task_node=()\ntask_local=()\ntask_gpus=()\ntask_nproc=()\n"
                "for ((i = 0; i < %d; i++)); do\n"
                "  node_map \"$i\"\n  q=0\n"
                "  for r in ${ranks//,/ }; do\n"
                "    task_node[r]=$i\n    task_local[r]=$q\n    task_gpus[r]=$gpus\n"
                "    task_nproc[r]=$nproc\n    q=$((q + 1))\n  done\ndone\n"
                "hostfile=$(mktemp \"${TMPDIR:-/tmp}/hetplan-tasks.XXXXXX\")\n"
                "trap 'rm -f \"$hostfile\"' EXIT\n"
                "for ((r = 0; r < %d; r++)); do printf '%%s\\n' \"${hosts[${task_node[r]}]}\"; done "
                "> \"$hostfile\"\n"
                "export SLURM_HOSTFILE=$hostfile HETPLAN_TASK_NODE=\"${task_node[*]}\" "
                "HETPLAN_TASK_LOCAL=\"${task_local[*]}\" \\\n"
                "  HETPLAN_TASK_GPUS=\"${task_gpus[*]}\" HETPLAN_TASK_NPROC=\"${task_nproc[*]}\"\n",
                N, D);
  hp__sb_printf(b, "export WORLD_SIZE=%d MASTER_PORT=%d MASTER_ADDR=", D,
                c->o->port > 0 ? c->o->port : 29500);
  if (c->o->master) hp__sh_quote(b, c->o->master);
  else hp__sb_printf(b, "\"${hosts[0]}\"");
  hp__sb_printf(b, "\n# Each task: its rank from SLURM_PROCID, the rest from the map; process q "
                "of a node\n# sees the node's GPUs in rank order, so cuda:LOCAL_RANK is its "
                "plan's GPU.\n"
                "srun --nodes=%d --ntasks=%d --distribution=arbitrary --kill-on-bad-exit=1 \\\n"
                "  bash -c 'r=$SLURM_PROCID\n"
                "    t_node=($HETPLAN_TASK_NODE)\n    t_local=($HETPLAN_TASK_LOCAL)\n"
                "    t_gpus=($HETPLAN_TASK_GPUS)\n    t_nproc=($HETPLAN_TASK_NPROC)\n"
                "    export RANK=$r LOCAL_RANK=${t_local[r]} LOCAL_WORLD_SIZE=${t_nproc[r]} "
                "GROUP_RANK=${t_node[r]} CUDA_VISIBLE_DEVICES=${t_gpus[r]}\n"
                "    exec \"$@\"' hetplan-task \"${PYTHON:-python}\" ", N, D);
  hp__sh_quote(b, c->script);
  hp__sb_printf(b, " \"${MEGATRON_ARGS[@]}\" ${ARGS[@]+\"${ARGS[@]}\"}\n");
}

const hp_launch_fmt hp_launch_fmt_slurm = {
  .name = "slurm",
  .framework = "Megatron-LM under Slurm",
  .script = "pretrain_gpt.py",
  .order = { [HP_ORDER_TP_DP_PP] = "Megatron's default tp-cp-ep-dp-pp",
             [HP_ORDER_TP_PP_DP] = "Megatron's tp-pp-dp (--use-tp-pp-dp-mapping)" },
  .unrealised = " (nor under Megatron's tp-pp-dp order)",
  .needs = hp__megatron_needs,
  .preamble = slurm_preamble,
  .limits = hp__megatron_limits,
  .emit = slurm_emit,
};
