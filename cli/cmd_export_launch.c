/* cmd_export_launch.c -- `hetplan export --format megatron|deepspeed|torchrun|slurm
 * plan.json [-- ARGS...]`: the launch of a plan (src/launch.c), with the training
 * command's own arguments from after `--` and from --args-file. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan export --format megatron|deepspeed|torchrun|slurm [--plan] plan.json\n"
  "                      [--model M --cluster C --gbs N] [--schedule S] [--profile F [--accept-profile-mismatch]]\n"
  "                      [--job J] [--mem-margin F] [--json] [-o FILE]\n"
  "                      [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST] [--uniform-sharding]\n"
  "                      [--idle-devices] [--max-slices N] [--compute-model shape|flops]\n"
  "                      [--args-file FILE] [-- ARGS...]\n"
  "\n"
  "Writes a bash script that launches the plan, to -o or stdout:\n"
  "  megatron   Megatron-LM's arguments: tensor and pipeline sizes, micro and global\n"
  "             batch, the model's shape, uneven stages as Megatron-Core's\n"
  "             --pipeline-model-parallel-layout, recompute flags, precision; then a\n"
  "             torchrun line per node\n"
  "  deepspeed  a DeepSpeed config (ZeRO stage from the sharding, micro-batch, gradient\n"
  "             accumulation), a hostfile and the deepspeed launch (--json: the config alone)\n"
  "  torchrun   a torchrun line per node, for a training script of your own\n"
  "  slurm      an sbatch script running Megatron-LM's arguments as one srun task per\n"
  "             rank, each placed by an explicit task map\n"
  "The script is run on every node with its node rank (bash launch.sh 0, ...; DeepSpeed's\n"
  "launcher once; sbatch launch.sh). Node order and each node's CUDA_VISIBLE_DEVICES\n"
  "realise the placement under the framework's rank order (Megatron: tp-dp-pp by default,\n"
  "tp-pp-dp with --use-tp-pp-dp-mapping when only that realises it; DeepSpeed:\n"
  "pipe-data-model); where no node order does, each process is started with its global\n"
  "rank given (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, CUDA_VISIBLE_DEVICES),\n"
  "so every TP group, stage and replica runs on the GPUs the plan chose; host names are the\n"
  "cluster file's node names. What the framework cannot express (per-layer ZeRO-3,\n"
  "per-stage recompute, GPipe, parts of the model's architecture) is said in the script's\n"
  "header, with the evaluator's figures for the plan as the framework would run it; what\n"
  "the model itself lacks is also said on stderr. See docs/export.md.\n"
  "\n"
  "The training command's own arguments (Megatron-LM: data, tokenizer, learning rate,\n"
  "iterations; the script names those it needs and stops without them) are written into\n"
  "the script, each one word whatever it holds:\n"
  "  -- ARGS...         everything after --\n"
  "  --args-file FILE   the words of FILE, split as a response file: blanks separate\n"
  "                     words, quotes and backslashes keep blanks, nothing is expanded,\n"
  "                     lines starting with # are comments\n"
  "and the script appends the arguments given after its node rank when it runs.\n"
  "\n"
  "The model, cluster and gbs come from the plan file's \"inputs\" (written by 'plan'),\n"
  "or from the flags.\n"
  "\n"
  "exit codes: 0 written, 4 the plan is invalid, 3 an input file is bad, 2 usage.\n";

/* What the framework cannot express of the model itself, on stderr. */
static void warn_stderr(void *ctx, const char *text)
{
  fprintf(stderr, "hetplan: warning: %s cannot express the model as planned: %s\n",
          (const char *)ctx, text);
}

/* The training command's arguments: FILE's words (--args-file), then those after --. */
static int user_args(const char *file, char **after, int n_after, char ***args, int *n, char **words)
{
  char *text = NULL, **fw = NULL;
  int nf = 0;
  hp_diag d;
  hp_err err;
  cli_diag_init(&d);
  *args = NULL;
  *n = 0;
  *words = NULL;
  if (file) {
    if ((err = hp_read_file(file, &text, &d)) || (err = hp_launch_args_split(text, &fw, &nf, &d))) {
      free(text);
      fprintf(stderr, "hetplan export: --args-file '%s':\n", file);
      return cli_fail(&d, err);
    }
    free(text);
  }
  *args = calloc((size_t)(nf + n_after + 1), sizeof **args);
  if (!*args) {
    free(fw);
    return cli_fail(&d, hp_fail(&d, HP_NOMEM, "out of memory"));
  }
  for (int i = 0; i < nf; i++) (*args)[(*n)++] = fw[i];
  for (int i = 0; i < n_after; i++) (*args)[(*n)++] = after[i];
  *words = (char *)fw;   /* the block that holds the file's words */
  return EXIT_OK_;
}

typedef struct export_opts {
  const char *format;
  const char *args_file;
  int json;
  int f;                 /* the format, checked (hp_launch_format) */
} export_opts;

static const cli_flag flags[] = {
  /* checked by the command, after the parse (it is missing as often as it is wrong) */
  { .name = "format", .arg = "F", CLI_OWN_TEXT(export_opts, format),
    .help = "what to write: megatron, deepspeed, torchrun or slurm" },
  CLI_FLAG_PLAN, CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_GBS, CLI_FLAG_SCHEDULE, CLI_FLAGS_JOB_12,
  CLI_FLAG_PROFILE, CLI_FLAG_ACCEPT_PROFILE, CLI_FLAG_JOB,
  { .name = "json", CLI_OWN_SWITCH(export_opts, json),
    .help = "with --format deepspeed: the DeepSpeed config alone" },
  CLI_FLAG_OUT, CLI_FLAG_MEM_MARGIN,
  { .name = "args-file", .arg = "FILE", CLI_OWN_TEXT(export_opts, args_file), .file = CLI_FILE_IN,
    .help = "the training command's arguments, the words of FILE (as a response file)" },
};

static int check(cli_ctx *c)
{
  export_opts *o = c->opts;
  char fmts[128];
  if (!o->format)
    return cli_usage_error("export", "missing --format %s",
                           hp_launch_format_list(fmts, sizeof fmts, "|", "|"));
  if ((o->f = hp_launch_format_parse(o->format)) < 0)
    return cli_usage_error("export", "--format: expected %s, got '%s'",
                           hp_launch_format_list(fmts, sizeof fmts, ", ", " or "), o->format);
  if (o->json && o->f != HP_LAUNCH_DEEPSPEED) {
    fprintf(stderr, "hetplan export: --json is for --format deepspeed (its config alone)\n");
    return EXIT_USAGE;
  }
  return EXIT_OK_;
}

static int run(cli_ctx *c)
{
  const export_opts *o = c->opts;
  const char *out = c->core.out;
  hp_launch_opts lo = {0};
  hp_diag d;
  hp_err err;
  char *text = NULL, **args = NULL, *words = NULL;
  int rc, n_args = 0;
  if ((rc = user_args(o->args_file, c->core.rest, c->core.n_rest, &args, &n_args, &words)))
    goto done;
  cli_diag_init(&d);
  lo.plan_name = c->core.plan;
  lo.config_only = o->json;
  lo.args = (const char *const *)args;
  lo.n_args = n_args;
  lo.warn = warn_stderr;
  lo.warn_ctx = (void *)(o->f == HP_LAUNCH_MEGATRON || o->f == HP_LAUNCH_SLURM ? "Megatron-LM"
                         : hp_launch_format_name(o->f));
  if ((err = hp_launch_write(c->prob, c->plan, (hp_launch_format)o->f, &lo, &text, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  rc = cli_write(out, text);
  if (!rc && out) fprintf(stderr, "hetplan: wrote %s\n", out);
done:
  free(args);
  free(words);
  free(text);
  return rc;
}

const cli_cmd cli_cmd_export = {
  .name = "export",
  .summary = "launch settings for a plan: Megatron-LM arguments, a DeepSpeed config,\n"
             "torchrun commands or a Slurm batch script, with the hostfile and rank order it needs",
  .help = help,
  CLI_FLAGS(flags),
  .opts_size = sizeof(export_opts),
  .steps = CLI_PLAN | CLI_REST,
  .check = check,
  .run = run,
};
