/* cmd_export_launch.c -- `hetplan export --format megatron|deepspeed|torchrun plan.json`:
 * the launch settings of a plan (src/launch.c). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan export --format megatron|deepspeed|torchrun [--plan] plan.json\n"
  "                      [--model M --cluster C --gbs N] [--schedule S] [--profile F]\n"
  "                      [--job J] [--mem-margin F] [--json] [-o FILE]\n"
  "\n"
  "Writes a bash script that launches the plan, to -o or stdout:\n"
  "  megatron   Megatron-LM's arguments: tensor and pipeline sizes, micro and global\n"
  "             batch, the model's shape, uneven stages as Megatron-Core's\n"
  "             --pipeline-model-parallel-layout, recompute flags, precision; then a\n"
  "             torchrun line per node\n"
  "  deepspeed  a DeepSpeed config (ZeRO stage from the sharding, micro-batch, gradient\n"
  "             accumulation), a hostfile and the deepspeed launch (--json: the config alone)\n"
  "  torchrun   a torchrun line per node\n"
  "The script is run on every node with its node rank (bash launch.sh 0, ...). Node order\n"
  "and each node's CUDA_VISIBLE_DEVICES realise the placement under the framework's rank\n"
  "order (Megatron: tp-dp-pp by default, tp-pp-dp with --use-tp-pp-dp-mapping when only\n"
  "that realises it; DeepSpeed: pipe-data-model), so every TP group, stage and replica runs\n"
  "on the GPUs the plan chose; host names are the cluster file's node names. What the\n"
  "framework cannot express (per-layer ZeRO-3, per-stage recompute, GPipe, a placement no\n"
  "node order realises) is said in the script's header, with the evaluator's figures for\n"
  "the plan as the framework would run it. See docs/export.md.\n"
  "\n"
  "The model, cluster and gbs come from the plan file's \"inputs\" (written by 'plan'),\n"
  "or from the flags.\n"
  "\n"
  "exit codes: 0 written, 4 the plan is invalid, 3 an input file is bad, 2 usage.\n";

typedef struct export_opts {
  const char *format;
  int json;
  int f;                 /* the format, checked (hp_launch_format) */
} export_opts;

static const cli_flag flags[] = {
  /* checked by the command, after the parse (it is missing as often as it is wrong) */
  { .name = "format", .arg = "F", CLI_OWN_TEXT(export_opts, format),
    .help = "what to write: megatron, deepspeed or torchrun" },
  CLI_FLAG_PLAN, CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_GBS, CLI_FLAG_SCHEDULE,
  CLI_FLAG_PROFILE, CLI_FLAG_JOB,
  { .name = "json", CLI_OWN_SWITCH(export_opts, json),
    .help = "with --format deepspeed: the DeepSpeed config alone" },
  CLI_FLAG_OUT, CLI_FLAG_MEM_MARGIN,
};

static int check(cli_ctx *c)
{
  export_opts *o = c->opts;
  if (!o->format) return cli_usage_error("export", "missing --format megatron|deepspeed|torchrun");
  if ((o->f = hp_launch_format_parse(o->format)) < 0)
    return cli_usage_error("export", "--format: expected megatron, deepspeed or torchrun, got "
                           "'%s'", o->format);
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
  char *text = NULL;
  int rc;
  cli_diag_init(&d);
  lo.plan_name = c->core.plan;
  lo.config_only = o->json;
  if ((err = hp_launch_write(c->prob, c->plan, (hp_launch_format)o->f, &lo, &text, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  rc = cli_write(out, text);
  if (!rc && out) fprintf(stderr, "hetplan: wrote %s\n", out);
done:
  free(text);
  return rc;
}

const cli_cmd cli_cmd_export = {
  .name = "export",
  .summary = "launch settings for a plan: Megatron-LM arguments, a DeepSpeed config,\n"
             "or torchrun commands, with the hostfile and rank order it needs",
  .help = help,
  CLI_FLAGS(flags),
  .opts_size = sizeof(export_opts),
  .steps = CLI_PLAN,
  .check = check,
  .run = run,
};
