/* launch_megatron.c -- the Megatron-LM export format: its arguments (every name checked
 * against Megatron-LM's argument parser, docs/megatron-args.txt), run by torchrun on
 * every node under its default tp-cp-ep-dp-pp order or --use-tp-pp-dp-mapping, or, where
 * no node order realises the placement, one process per GPU with its rank given. The
 * arguments the user must add (data, tokenizer, learning rate, iterations) are checked
 * by the script. launch_slurm.c runs the same arguments under srun. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "launch.h"

/* Blocks (transformer layers) of stage s, for a model from the generator: layer 0 is the
 * embedding, 1..N the blocks, N+1 the final norm, N+2 the head. */
static int blocks_in(const hp_plan *pl, int s, int N)
{
  int a = pl->first[s], b = hp_stage_last(pl, s), lo = a > 1 ? a : 1, hi = b < N ? b : N;
  return hi >= lo ? hi - lo + 1 : 0;
}

/* Megatron-LM's training command needs these from the user (megatron/training/arguments.py:
 * one data source, validate_args; a tokenizer for the data; --lr, default None; and
 * iteration- or sample-based training, --train-iters or --train-samples). */
const hp_launch_need hp__megatron_needs[] = {
  { "data", { "--data-path", "--mock-data", "--train-data-path", "--data-args-path",
              "--per-split-data-args-path", NULL },
    "--data-path PREFIX (a corpus tokenized by tools/preprocess_data.py), or --mock-data" },
  { "tokenizer", { "--tokenizer-type", NULL },
    "--tokenizer-type TYPE with its files, e.g. --tokenizer-type HuggingFaceTokenizer "
    "--tokenizer-model DIR (NullTokenizer with --mock-data: --vocab-size N)" },
  { "learning-rate", { "--lr", NULL }, "--lr LR (and --min-lr, --lr-decay-style, "
                                       "--lr-warmup-iters as you train)" },
  { "iterations", { "--train-iters", "--train-samples", NULL }, "--train-iters N or --train-samples N" },
  { NULL, { NULL }, NULL } };

/* What Megatron-LM has no argument for in the model itself: said in the header and given
 * to the caller's warn (stderr). */
static void megatron_architecture(hp_launch_ctx *c)
{
  const struct hp_transformer *t = c->prob->model->transformer;
  if (!t) return;
  if (t->geglu)
    hp__launch_warn(c, "GeGLU (the gate's activation is GELU, as Gemma's): Megatron-LM has no "
                    "argument for an exact GELU gate (--swiglu is SiLU); exported: --quick-geglu, "
                    "its gated GELU approximated as x * sigmoid(1.702 x): the same shapes, FLOPs "
                    "and memory, a slightly different activation. For Gemma's tanh GELU set "
                    "TransformerConfig.activation_func in your model provider");
  if (t->post_norms)
    hp__launch_warn(c, "RMSNorms after the attention and after the MLP (Gemma 2's four norms a "
                    "block): Megatron-LM's GPT layer has no argument for them (its layer spec "
                    "leaves them out); the exported model lacks them unless your layer spec adds "
                    "them");
  if (t->attn_softcap)
    hp__launch_warn(c, "soft-capping of the attention scores (Gemma 2): Megatron-LM has no "
                    "argument for it; the exported model does not cap");
  if (t->logit_softcap)
    hp__launch_warn(c, "soft-capping of the output logits (Gemma 2): Megatron-LM has no argument "
                    "for it; the exported model does not cap");
}

/* Sharding made one launchable mode (dp, or zero1 as the distributed optimizer), per-stage
 * recompute and GPipe made uniform; where the plan's stages differ from what Megatron's
 * model code does. */
void hp__megatron_limits(hp_launch_ctx *c)
{
  const hp_plan *pl = c->plan;
  const hp_model *m = c->prob->model;
  hp__launch_one_mode(c, 1u << HP_SHARD_DP | 1u << HP_SHARD_ZERO1, "Megatron-LM",
                      "dp, and zero1 as --use-distributed-optimizer; its distributed optimizer "
                      "shards optimizer states only, no gradients or weights");
  hp__launch_uniform_recompute(c, "Megatron-LM's --recompute-* flags make");
  hp__launch_only_1f1b(c, "Megatron-LM");
  if (c->prob->job.grad_sync == HP_SYNC_OVERLAP && hp__launch_uniform_mode(c->var) == HP_SHARD_ZERO1 &&
      pl->dp > 1)
    hp__launch_note(c, "--overlap-param-gather hides part of the weights' all-gather after the "
                    "step behind the next forward; cost model 1.2 charges it in full, so the run "
                    "may be faster than planned");
  if (m->transformer && pl->pp > 1) {
    int N = m->transformer->layers;
    int s_norm = 0, s_head = pl->pp - 1;
    for (int s = 0; s < pl->pp; s++)
      if (pl->first[s] <= N + 1 && N + 1 <= hp_stage_last(pl, s)) s_norm = s;
    if (s_norm != s_head)
      hp__launch_note(c, "the plan puts the final norm (layer %d) on stage %d; Megatron-LM keeps "
                      "it with the output layer on the last stage (a norm's work: a negligible "
                      "difference)", N + 1, s_norm);
  }
  if (!m->transformer) {
    char name[160];
    hp__launch_note(c, "model %s has explicit layers, not a transformer description: the model "
                    "flags are yours to give; the stage layout below takes layer 0 as the "
                    "embedding and the last layer as the loss",
                    hp__sh_quote_buf(name, sizeof name, m->name));
  }
  megatron_architecture(c);
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

/* One line of the MEGATRON_ARGS array: the flag, and its value quoted where the shell
 * would read it otherwise. */
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
    if (strpbrk(v, "|*() '\"$")) hp__sh_quote(b, v);
    else hp__sb_printf(b, "%s", v);
  }
  hp__sb_printf(b, "\n");
}

static void megatron_args(hp_sb *b, const hp_problem *prob, const hp_plan *pl, const hp_plan *var,
                          const hp_rank_map *map)
{
  const hp_model *m = prob->model;
  const struct hp_transformer *t = m->transformer;
  int distopt = hp__launch_uniform_mode(var) == HP_SHARD_ZERO1;
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
    if (t->head_dim > 0 && (t->hidden % t->heads || t->head_dim != t->hidden / t->heads))
      arg(b, "--kv-channels", "%d", t->head_dim);   /* Megatron's default: hidden / heads */
    if (t->kv_heads > 0 && t->kv_heads != t->heads) {
      arg(b, "--group-query-attention", NULL);
      arg(b, "--num-query-groups", "%d", t->kv_heads);
    }
    arg(b, "--seq-length", "%d", t->seq);
    arg(b, "--max-position-embeddings", "%d", pos);
    if (t->family == HP_TF_LLAMA) {
      arg(b, "--position-embedding-type", "rope");
      arg(b, t->geglu ? "--quick-geglu" : "--swiglu", NULL);
      arg(b, "--normalization", "RMSNorm");
      if (t->qk_norm) arg(b, "--qk-layernorm", NULL);   /* per head, of --normalization's kind */
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
  if (prob->job.sequence_parallel) arg(b, "--sequence-parallel", NULL);   /* no effect at tp 1 */
  if (distopt) arg(b, "--use-distributed-optimizer", NULL);   /* zero1 (cost-model.md 2) */
  if (prob->job.grad_sync == HP_SYNC_OVERLAP) {
    arg(b, "--overlap-grad-reduce", NULL);
    if (distopt) arg(b, "--overlap-param-gather", NULL);
  }
  if (t && t->dtype == HP_DTYPE_FP16) arg(b, "--fp16", NULL);
  else if (!t || t->dtype == HP_DTYPE_BF16) arg(b, "--bf16", NULL);
  hp__sb_printf(b, ")\n");
  if (t) hp__sb_printf(b, "# vocabulary: %d entries, from your tokenizer (Megatron pads it to a "
                       "multiple of --make-vocab-size-divisible-by x tp)\n", t->vocab);
  if (t && t->family == HP_TF_LLAMA)
    hp__sb_printf(b, "# not in hetplan's model (give them where yours differs from Megatron-LM's "
                  "default): --rotary-base\n# (default 10000; the config's rope_theta, e.g. "
                  "Llama-3's 500000), --norm-epsilon (default 1e-5; rms_norm_eps)\n");
}

void hp__megatron_settings(const hp_launch_ctx *c, hp_sb *b)
{
  if (c->plan->tp > 1) hp__sb_printf(b, "export CUDA_DEVICE_MAX_CONNECTIONS=1   # Megatron-LM asks "
                                     "for it with tensor parallelism\n");
  megatron_args(b, c->prob, c->plan, c->var, c->map);
}

static void megatron_emit(const hp_launch_ctx *c, hp_sb *b)
{
  hp__megatron_settings(c, b);
  hp__launch_per_node(c, b, "\"${MEGATRON_ARGS[@]}\"");
}

const hp_launch_fmt hp_launch_fmt_megatron = {
  .name = "megatron",
  .framework = "Megatron-LM",
  .script = "pretrain_gpt.py",
  .order = { [HP_ORDER_TP_DP_PP] = "Megatron's default tp-cp-ep-dp-pp",
             [HP_ORDER_TP_PP_DP] = "Megatron's tp-pp-dp (--use-tp-pp-dp-mapping)" },
  .unrealised = " (nor under Megatron's tp-pp-dp order)",
  .needs = hp__megatron_needs,
  .limits = hp__megatron_limits,
  .emit = megatron_emit,
};
