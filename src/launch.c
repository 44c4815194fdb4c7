/* launch.c -- a plan as a launch script for Megatron-LM, DeepSpeed or plain torchrun
 * (hp_launch.h). Argument names and rank orders as docs/export.md cites them from
 * Megatron-LM's and DeepSpeed's sources. What a framework cannot express is said in
 * words, with the evaluator's figures for the plan as the framework would run it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GIB 1073741824.0
#define MAX_NOTES 12

int hp_launch_format_parse(const char *s)
{
  if (!s) return -1;
  if (!strcmp(s, "megatron")) return HP_LAUNCH_MEGATRON;
  if (!strcmp(s, "deepspeed")) return HP_LAUNCH_DEEPSPEED;
  if (!strcmp(s, "torchrun")) return HP_LAUNCH_TORCHRUN;
  return -1;
}

/* A shell word in single quotes. */
static void sh_quote(hp_sb *b, const char *s)
{
  hp__sb_printf(b, "'");
  for (; *s; s++) {
    if (*s == '\'') hp__sb_printf(b, "'\\''");
    else hp__sb_printf(b, "%c", *s);
  }
  hp__sb_printf(b, "'");
}

typedef struct notes {
  int n;
  char text[MAX_NOTES][400];
} notes;

static void note(notes *ns, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(notes *ns, const char *fmt, ...)
{
  va_list ap;
  if (ns->n >= MAX_NOTES) return;
  va_start(ap, fmt);
  vsnprintf(ns->text[ns->n++], sizeof ns->text[0], fmt, ap);
  va_end(ap);
}

/* Indices with flag set, as "0-3, 7". */
static void ranges(char *buf, size_t n, const unsigned char *flag, int count, int dp_gate)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < count && len < n; i++) {
    int j = i;
    if (!flag[i] || !dp_gate) continue;
    while (j + 1 < count && flag[j + 1]) j++;
    len += (size_t)snprintf(buf + len, n - len, len ? ", %d" : "%d", i);
    if (j > i && len < n) len += (size_t)snprintf(buf + len, n - len, "-%d", j);
    i = j;
  }
}

/* Blocks (transformer layers) of stage s, for a model from the generator: layer 0 is the
 * embedding, 1..N the blocks, N+1 the final norm, N+2 the head. */
static int blocks_in(const hp_plan *pl, int s, int N)
{
  int a = pl->first[s], b = hp_stage_last(pl, s), lo = a > 1 ? a : 1, hi = b < N ? b : N;
  return hi >= lo ? hi - lo + 1 : 0;
}

/* The plan as the framework runs it (flags it cannot set per stage or per layer made
 * uniform, 1F1B for GPipe), with notes on each difference. *vprob is a new problem only
 * when the schedule changes. */
static hp_err framework_variant(const hp_problem *prob, const hp_plan *pl, hp_launch_format f,
                                const hp_rank_map *map, hp_plan **var, hp_problem **vprob,
                                notes *ns, hp_diag *d)
{
  const hp_model *m = prob->model;
  int nr = 0, nz = 0, L = pl->n_layers;
  char buf[256];
  hp_err err;
  *vprob = NULL;
  if ((err = hp_plan_copy(var, pl, d))) return err;
  for (int s = 0; s < pl->pp; s++) nr += pl->recompute[s] != 0;
  for (int l = 0; l < L; l++) nz += pl->zdp[l] && pl->dp > 1;
  if (f == HP_LAUNCH_TORCHRUN) goto placement;

  if (nz > 0) {
    ranges(buf, sizeof buf, pl->zdp, L, 1);
    if (f == HP_LAUNCH_MEGATRON) {
      note(ns, "ZeRO-3 on layer%s %s: Megatron-LM shards no layer's parameters; the exported "
           "--use-distributed-optimizer shards optimizer states of every layer (ZeRO-1). The "
           "figures below count those layers replicated (an upper bound on their memory)",
           nz > 1 ? "s" : "", buf);
      memset((*var)->zdp, 0, (size_t)L);
    } else if (pl->pp > 1) {
      note(ns, "ZeRO-3 on layer%s %s: DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3 "
           "(\"incompatible with pipeline parallelism\"); exported: ZeRO stage 1. The figures "
           "below count those layers replicated", nz > 1 ? "s" : "", buf);
      memset((*var)->zdp, 0, (size_t)L);
    } else if (nz < L) {
      note(ns, "ZeRO-3 on layers %s only: DeepSpeed's stage 3 shards every layer (its "
           "stage3_param_persistence_threshold keeps only small tensors whole); the figures "
           "below shard every layer", buf);
      memset((*var)->zdp, 1, (size_t)L);
    }
  }
  if (nr > 0 && nr < pl->pp) {
    ranges(buf, sizeof buf, pl->recompute, pl->pp, 1);
    note(ns, "recompute on stage%s %s only: %s one recompute setting for every stage; "
         "exported: recompute on every stage (less memory, more time)", nr > 1 ? "s" : "", buf,
         f == HP_LAUNCH_MEGATRON ? "Megatron-LM's --recompute-* flags make" :
         "DeepSpeed's PipelineModule(activation_checkpoint_interval) takes");
    memset((*var)->recompute, 1, (size_t)pl->pp);
  }
  if (pl->schedule == HP_GPIPE && pl->pp > 1) {
    hp_job job = prob->job;
    note(ns, "GPipe: %s runs its pipeline 1F1B (at most pp - s micro-batches in flight on stage "
         "s, less memory); the figures below are for 1F1B",
         f == HP_LAUNCH_MEGATRON ? "Megatron-LM" : "DeepSpeed (its synchronous TrainSchedule)");
    job.schedule = HP_1F1B;
    (*var)->schedule = HP_1F1B;
    if ((err = hp_problem_copy_with(prob, NULL, job, vprob, d))) {
      hp_plan_destroy(var);
      return err;
    }
  }
  if (f == HP_LAUNCH_MEGATRON && m->transformer && pl->pp > 1) {
    int N = m->transformer->layers;
    int s_norm = 0, s_head = pl->pp - 1;
    for (int s = 0; s < pl->pp; s++)
      if (pl->first[s] <= N + 1 && N + 1 <= hp_stage_last(pl, s)) s_norm = s;
    if (s_norm != s_head)
      note(ns, "the plan puts the final norm (layer %d) on stage %d; Megatron-LM keeps it with "
           "the output layer on the last stage (a norm's work: a negligible difference)", N + 1,
           s_norm);
  }
  if (!m->transformer && f == HP_LAUNCH_MEGATRON)
    note(ns, "model '%s' has explicit layers, not a transformer description: the model flags "
         "are yours to give; the stage layout below takes layer 0 as the embedding and the "
         "last layer as the loss", m->name);
  if (f == HP_LAUNCH_DEEPSPEED && pl->pp > 1)
    note(ns, "stage boundaries: DeepSpeed's PipelineModule partitions by 'parameters', "
         "'uniform' or 'type:REGEX' only; to get the plan's boundaries (listed below) set the "
         "module's parts in your code");
  if (f == HP_LAUNCH_DEEPSPEED && pl->tp > 1)
    note(ns, "tensor parallelism (tp %d): DeepSpeed takes it from the model's own code (e.g. "
         "Megatron-DeepSpeed's mpu); DeepSpeed's topology then orders ranks pipe, data, model "
         "as here", pl->tp);
placement:
  if (!map->contiguous)
    note(ns, "the placement cannot be made with a node order and CUDA_VISIBLE_DEVICES: %s"
         "%s; the per-rank table below is for a launcher that places each rank itself (an MPI "
         "rankfile, srun with a task map)", map->why, f == HP_LAUNCH_MEGATRON
         ? " (nor under Megatron's tp-pp-dp order)" : "");
  else if (f == HP_LAUNCH_DEEPSPEED && !map->ascending)
    note(ns, "DeepSpeed's --include sorts a node's GPUs, and this placement needs them out of "
         "order on some node: the launch below runs the DeepSpeed program under torchrun with "
         "CUDA_VISIBLE_DEVICES instead (deepspeed.init_distributed reads torchrun's RANK)");
  return HP_OK;
}

static int plan_differs(const hp_plan *a, const hp_plan *b)
{
  return a->schedule != b->schedule || memcmp(a->zdp, b->zdp, (size_t)a->n_layers) ||
         memcmp(a->recompute, b->recompute, (size_t)a->pp);
}

static void header(hp_sb *b, const hp_problem *prob, const hp_plan *pl, const hp_eval *e,
                   const char *what, const hp_launch_opts *o)
{
  const hp_model *m = prob->model;
  char desc[512];
  hp__sb_printf(b, "#!/usr/bin/env bash\n# %s launch for %s%s, written by hetplan %s (cost "
                "model %s)\n", what, o->plan_name ? "plan " : "a plan",
                o->plan_name ? o->plan_name : "", HETPLAN_VERSION, HP_COST_MODEL_VERSION);
  hp__sb_printf(b, "# model %s on cluster %s (%d GPUs on %d nodes), gbs %ld\n", m->name,
                prob->cluster->name, prob->cluster->n_devices, prob->cluster->n_nodes, prob->job.gbs);
  hp__sb_printf(b, "# plan: %s, %s\n", hp_plan_describe(pl, desc, sizeof desc),
                hp_schedule_name(pl->schedule));
  hp__sb_printf(b, "# predicted (evaluator): iteration %.6f s, %.4f samples/s", e->iteration_time,
                e->throughput);
  if (m->transformer) hp__sb_printf(b, ", %.0f tokens/s", e->throughput * m->transformer->seq);
  hp__sb_printf(b, ", MFU %.1f %%, %s\n", 100 * e->mfu, e->feasible ? "fits in memory"
                : "DOES NOT FIT in memory");
}

static void notes_block(hp_sb *b, const hp_problem *prob, const char *fw, const notes *ns,
                        const hp_plan *var, const hp_problem *vprob, int differs)
{
  if (ns->n == 0) {
    hp__sb_printf(b, "#\n# %s expresses every part of this plan.\n", fw);
    return;
  }
  hp__sb_printf(b, "#\n# What the plan needs that %s cannot express as planned:\n", fw);
  for (int i = 0; i < ns->n; i++) hp__sb_printf(b, "#  - %s\n", ns->text[i]);
  if (differs) {
    hp_eval ev = {0};
    const hp_problem *p = vprob ? vprob : prob;
    if (hp_evaluate(p, var, &ev, NULL) == HP_OK) {
      hp__sb_printf(b, "# As %s runs it (evaluator): iteration %.6f s, %.4f samples/s, ", fw,
                    ev.iteration_time, ev.throughput);
      if (ev.feasible) hp__sb_printf(b, "fits in memory\n");
      else
        hp__sb_printf(b, "does NOT fit: device %d needs %.3f GiB of %.3f GiB\n", ev.oom_device,
                      ev.mem[ev.oom_device] / GIB, ev.cap[ev.oom_device] / GIB);
    }
    hp_eval_release(&ev);
  }
}

/* The stage layout in Megatron-Core's --pipeline-model-parallel-layout syntax, and
 * whether Megatron's default even split gives the same stages. */
static int megatron_layout(const hp_plan *pl, int N, char *buf, size_t n)
{
  size_t len = 0;
  int even = N % pl->pp == 0;
  buf[0] = '\0';
  for (int s = 0; s < pl->pp && len < n; s++) {
    int k = blocks_in(pl, s, N);
    if (k != N / pl->pp) even = 0;
    len += (size_t)snprintf(buf + len, n - len, "%s%s", s ? "|" : "", pl->first[s] == 0 ? "E" : "");
    if (len < n && k == 1) len += (size_t)snprintf(buf + len, n - len, "t");
    else if (len < n && k > 1) len += (size_t)snprintf(buf + len, n - len, "t*%d", k);
    if (len < n && s == pl->pp - 1) len += (size_t)snprintf(buf + len, n - len, "L");
  }
  return even;
}

static void arg(hp_sb *b, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void arg(hp_sb *b, const char *name, const char *fmt, ...)
{
  char v[512];
  va_list ap;
  hp__sb_printf(b, "  %s", name);
  if (fmt) {
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    hp__sb_printf(b, " ");
    if (strpbrk(v, "|*() '\"$")) sh_quote(b, v);
    else hp__sb_printf(b, "%s", v);
  }
  hp__sb_printf(b, "\n");
}

static void megatron_args(hp_sb *b, const hp_problem *prob, const hp_plan *pl, const hp_plan *var,
                          const hp_rank_map *map)
{
  const hp_model *m = prob->model;
  const struct hp_transformer *t = m->transformer;
  int nz = 0;
  for (int l = 0; l < pl->n_layers; l++) nz += pl->zdp[l] && pl->dp > 1;
  hp__sb_printf(b, "MEGATRON_ARGS=(\n");
  arg(b, "--tensor-model-parallel-size", "%d", pl->tp);
  arg(b, "--pipeline-model-parallel-size", "%d", pl->pp);
  arg(b, "--micro-batch-size", "%d", pl->mbs);
  arg(b, "--global-batch-size", "%ld", prob->job.gbs);
  if (map->order == HP_ORDER_TP_PP_DP) arg(b, "--use-tp-pp-dp-mapping", NULL);
  if (t) {
    int pos = t->positions > 0 ? t->positions : t->seq;
    arg(b, "--num-layers", "%d", t->layers);
    arg(b, "--hidden-size", "%d", t->hidden);
    arg(b, "--ffn-hidden-size", "%d", t->ffn > 0 ? t->ffn : t->family == HP_TF_GPT ? 4 * t->hidden
        : 256 * ((8 * t->hidden / 3 + 255) / 256));
    arg(b, "--num-attention-heads", "%d", t->heads);
    if (t->kv_heads > 0 && t->kv_heads != t->heads) {
      arg(b, "--group-query-attention", NULL);
      arg(b, "--num-query-groups", "%d", t->kv_heads);
    }
    arg(b, "--seq-length", "%d", t->seq);
    arg(b, "--max-position-embeddings", "%d", pos);
    if (t->family == HP_TF_LLAMA) {
      arg(b, "--position-embedding-type", "rope");
      arg(b, "--swiglu", NULL);
      arg(b, "--normalization", "RMSNorm");
      if (!t->out_bias && !t->mlp_bias) {
        arg(b, "--disable-bias-linear", NULL);
        if (t->qkv_bias) arg(b, "--add-qkv-bias", NULL);
      }
    } else if (t->positions < 0) {
      arg(b, "--position-embedding-type", "rope");
    }
    if (!t->tied) arg(b, "--untie-embeddings-and-output-weights", NULL);
  }
  if (pl->pp > 1) {
    char lay[2048];
    int N = t ? t->layers : pl->n_layers - 2;
    if (!megatron_layout(pl, N, lay, sizeof lay)) arg(b, "--pipeline-model-parallel-layout", "%s", lay);
  }
  if (var->recompute[0]) {   /* the variant recomputes every stage or none */
    arg(b, "--recompute-granularity", "full");
    arg(b, "--recompute-method", "uniform");
    arg(b, "--recompute-num-layers", "1");
  }
  if (nz > 0) arg(b, "--use-distributed-optimizer", NULL);
  if (t && t->dtype == HP_DTYPE_FP16) arg(b, "--fp16", NULL);
  else if (!t || t->dtype == HP_DTYPE_BF16) arg(b, "--bf16", NULL);
  hp__sb_printf(b, ")\n");
  if (t) hp__sb_printf(b, "# vocabulary: %d entries, from your tokenizer (Megatron pads it to a "
                       "multiple of --make-vocab-size-divisible-by x tp)\n", t->vocab);
}

/* One torchrun line per node, chosen by the node rank given to the script. */
static void torchrun_block(hp_sb *b, const hp_problem *prob, const hp_rank_map *map,
                           const hp_launch_opts *o, const char *script, const char *args)
{
  const hp_cluster *c = prob->cluster;
  const char *master = o->master ? o->master : c->nodes[map->node[0]].name;
  int port = o->port > 0 ? o->port : 29500;
  hp__sb_printf(b, "\n# Run on every node with its node rank: bash %s NODE_RANK\n",
                "this-script.sh");
  hp__sb_printf(b, "# node rank, host (the cluster file's node name), its GPUs in local-rank "
                "order, processes:\n");
  hp__sb_printf(b, "node_rank=${1:?usage: $0 NODE_RANK (0..%d)}\n", map->n_nodes - 1);
  hp__sb_printf(b, "case \"$node_rank\" in\n");
  for (int i = 0; i < map->n_nodes; i++) {
    hp__sb_printf(b, "  %d) host=", i);
    sh_quote(b, c->nodes[map->node[i]].name);
    hp__sb_printf(b, "; gpus=");
    for (int q = 0; q < map->count[i]; q++)
      hp__sb_printf(b, "%s%d", q ? "," : "", map->gpu[map->first_rank[i] + q]);
    hp__sb_printf(b, "; nproc=%d ;;   # ranks %d-%d\n", map->count[i], map->first_rank[i],
                  map->first_rank[i] + map->count[i] - 1);
  }
  hp__sb_printf(b, "  *) echo \"node rank $node_rank: expected 0..%d\" >&2; exit 2 ;;\nesac\n",
                map->n_nodes - 1);
  hp__sb_printf(b, "[ \"$(hostname)\" = \"$host\" ] || echo \"note: node rank $node_rank is "
                "planned for host $host\" >&2\n");
  hp__sb_printf(b, "CUDA_VISIBLE_DEVICES=$gpus exec torchrun --nnodes %d --node-rank \"$node_rank\" "
                "--nproc-per-node \"$nproc\" --master-addr ", map->n_nodes);
  sh_quote(b, master);
  hp__sb_printf(b, " --master-port %d %s%s%s\n", port, script, args ? " " : "", args ? args : "");
}

static void rank_table(hp_sb *b, const hp_problem *prob, const hp_plan *pl, const hp_rank_map *map)
{
  const hp_cluster *c = prob->cluster;
  hp__sb_printf(b, "\n# Per-rank placement (%s order): rank, host, GPU, stage, replica, TP rank\n",
                hp_rank_order_name(map->order));
  for (int k = 0; k < map->n_ranks; k++) {
    int dev = map->device[k], s = 0, r = 0, j = 0;
    for (int q = 0; q < pl->pp * pl->dp * pl->tp; q++)
      if (pl->dev[q] == dev) { s = q / (pl->dp * pl->tp); r = q / pl->tp % pl->dp; j = q % pl->tp; }
    hp__sb_printf(b, "# rank %d: host '%s' GPU %d: stage %d, replica %d, TP rank %d\n", k,
                  c->nodes[c->dev_node[dev]].name, map->gpu[k], s, r, j);
  }
}

static void stage_list(hp_sb *b, const hp_problem *prob, const hp_plan *pl)
{
  const hp_model *m = prob->model;
  hp__sb_printf(b, "# Stages (layers of the hetplan model, inclusive):");
  for (int s = 0; s < pl->pp; s++)
    hp__sb_printf(b, "%s %d: %d-%d (%s..%s)", s ? "," : "", s, pl->first[s], hp_stage_last(pl, s),
                  m->layers[pl->first[s]].name, m->layers[hp_stage_last(pl, s)].name);
  hp__sb_printf(b, "\n");
}

static void ds_config(hp_sb *b, const hp_problem *prob, const hp_plan *pl, const hp_plan *var)
{
  const struct hp_transformer *t = prob->model->transformer;
  int nz = 0, stage;
  for (int l = 0; l < pl->n_layers; l++) nz += var->zdp[l] && pl->dp > 1;
  stage = nz > 0 ? 3 : 0;
  for (int l = 0; l < pl->n_layers && pl->pp > 1; l++)
    if (pl->zdp[l] && pl->dp > 1) stage = 1;   /* the pipeline engine's most */
  hp__sb_printf(b, "{\n  \"train_batch_size\": %ld,\n  \"train_micro_batch_size_per_gpu\": %d,\n"
                "  \"gradient_accumulation_steps\": %ld,\n", prob->job.gbs, pl->mbs, pl->gas);
  if (t && t->dtype == HP_DTYPE_FP16) hp__sb_printf(b, "  \"fp16\": { \"enabled\": true },\n");
  else if (!t || t->dtype == HP_DTYPE_BF16) hp__sb_printf(b, "  \"bf16\": { \"enabled\": true },\n");
  hp__sb_printf(b, "  \"zero_optimization\": { \"stage\": %d }", stage);
  if (var->recompute[0])
    hp__sb_printf(b, ",\n  \"activation_checkpointing\": { \"partition_activations\": false, "
                  "\"contiguous_memory_optimization\": false }");
  hp__sb_printf(b, "\n}\n");
}

hp_err hp_launch_write(const hp_problem *prob, const hp_plan *pl, hp_launch_format f,
                       const hp_launch_opts *opts, char **out, hp_diag *d)
{
  hp_launch_opts o0 = {0};
  const hp_launch_opts *o = opts ? opts : &o0;
  const char *fw = f == HP_LAUNCH_MEGATRON ? "Megatron-LM" : f == HP_LAUNCH_DEEPSPEED ? "DeepSpeed"
                 : "torchrun";
  hp_rank_map map = {0};
  hp_plan *var = NULL;
  hp_problem *vprob = NULL;
  hp_eval e = {0};
  notes ns = {0};
  hp_sb b = {0};
  hp_err err;
  int differs;
  *out = NULL;
  if ((err = hp_evaluate(prob, pl, &e, d))) return err;
  if ((err = hp_rank_map_choose(prob, pl, f == HP_LAUNCH_DEEPSPEED, &map, d))) goto done;
  if (f == HP_LAUNCH_DEEPSPEED && map.contiguous && !map.ascending && map.order != HP_ORDER_TP_DP_PP) {
    /* DeepSpeed has one order: use it, under torchrun */
    hp_rank_map_release(&map);
    if ((err = hp_rank_map_build(prob, pl, HP_ORDER_TP_DP_PP, &map, d))) goto done;
  }
  if (f != HP_LAUNCH_MEGATRON && map.order != HP_ORDER_TP_DP_PP) {   /* one order: tp-dp-pp */
    hp_rank_map_release(&map);
    if ((err = hp_rank_map_build(prob, pl, HP_ORDER_TP_DP_PP, &map, d))) goto done;
  }
  if ((err = framework_variant(prob, pl, f, &map, &var, &vprob, &ns, d))) goto done;
  differs = plan_differs(pl, var);

  if (f == HP_LAUNCH_DEEPSPEED && o->config_only) {
    ds_config(&b, prob, pl, var);
    goto finish;
  }
  header(&b, prob, pl, &e, fw, o);
  notes_block(&b, prob, fw, &ns, var, vprob, differs);
  if (pl->pp > 1) stage_list(&b, prob, pl);
  hp__sb_printf(&b, "# Rank order: %s (rank = tp_rank + tp * (%s)); node ranks "
                "below follow it.\n", f == HP_LAUNCH_MEGATRON && map.order == HP_ORDER_TP_PP_DP
                ? "Megatron's tp-pp-dp (--use-tp-pp-dp-mapping)"
                : f == HP_LAUNCH_DEEPSPEED ? "DeepSpeed's pipe-data-model topology"
                : f == HP_LAUNCH_MEGATRON ? "Megatron's default tp-cp-ep-dp-pp"
                : "tp-dp-pp, Megatron's and DeepSpeed's (your script must number its groups so)",
                map.order == HP_ORDER_TP_PP_DP ? "stage + pp * replica" : "replica + dp * stage");
  hp__sb_printf(&b, "set -eu\n");
  if (f == HP_LAUNCH_MEGATRON) {
    if (pl->tp > 1) hp__sb_printf(&b, "export CUDA_DEVICE_MAX_CONNECTIONS=1   # Megatron-LM asks "
                                  "for it with tensor parallelism\n");
    megatron_args(&b, prob, pl, var, &map);
    if (map.contiguous)
      torchrun_block(&b, prob, &map, o, o->script ? o->script : "pretrain_gpt.py",
                     "\"${MEGATRON_ARGS[@]}\"");
  } else if (f == HP_LAUNCH_DEEPSPEED) {
    const hp_cluster *c = prob->cluster;
    const char *script = o->script ? o->script : "train.py";
    hp__sb_printf(&b, "cat > ds_config.json <<'EOF'\n");
    ds_config(&b, prob, pl, var);
    hp__sb_printf(&b, "EOF\n");
    if (var->recompute[0])
      hp__sb_printf(&b, "# recompute: the config's activation_checkpointing section sets how; "
                    "the model asks for it: PipelineModule(..., activation_checkpoint_interval=1) "
                    "or deepspeed.checkpointing.checkpoint around each layer\n");
    if (map.contiguous && map.ascending) {
      hp__sb_printf(&b, "# hostfile: nodes in node-rank order (DeepSpeed numbers ranks in "
                    "hostfile order)\ncat > hostfile <<'EOF'\n");
      for (int i = 0; i < map.n_nodes; i++)
        hp__sb_printf(&b, "%s slots=%d\n", c->nodes[map.node[i]].name, c->nodes[map.node[i]].gpus);
      hp__sb_printf(&b, "EOF\n# --include: each node's GPUs (DeepSpeed sets CUDA_VISIBLE_DEVICES "
                    "to them, sorted)\ndeepspeed --hostfile hostfile --include ");
      {
        hp_sb inc = {0};
        for (int i = 0; i < map.n_nodes; i++) {
          hp__sb_printf(&inc, "%s%s:", i ? "@" : "", c->nodes[map.node[i]].name);
          for (int q = 0; q < map.count[i]; q++)
            hp__sb_printf(&inc, "%s%d", q ? "," : "", map.gpu[map.first_rank[i] + q]);
        }
        if (inc.failed) b.failed = 1;
        else sh_quote(&b, inc.s);
        free(inc.s);
      }
      hp__sb_printf(&b, " --master_addr ");
      sh_quote(&b, o->master ? o->master : c->nodes[map.node[0]].name);
      hp__sb_printf(&b, " --master_port %d %s --deepspeed --deepspeed_config ds_config.json\n",
                    o->port > 0 ? o->port : 29500, script);
    } else if (map.contiguous) {
      torchrun_block(&b, prob, &map, o, script, "--deepspeed --deepspeed_config ds_config.json");
    }
  } else if (map.contiguous) {
    torchrun_block(&b, prob, &map, o, o->script ? o->script : "train.py", NULL);
  }
  if (!map.contiguous) rank_table(&b, prob, pl, &map);
finish:
  if (b.failed) {
    free(b.s);
    err = hp_fail(d, HP_NOMEM, "out of memory writing the launch");
    goto done;
  }
  *out = b.s;
  b.s = NULL;
done:
  free(b.s);
  hp_eval_release(&e);
  hp_rank_map_release(&map);
  hp_plan_destroy(&var);
  hp_problem_destroy(&vprob);
  return err;
}
