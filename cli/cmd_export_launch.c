/* cmd_export_launch.c -- `hetplan export --format megatron|deepspeed|torchrun plan.json`:
 * the launch settings of a plan (src/launch.c). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan export --format megatron|deepspeed|torchrun [--plan] plan.json\n"
  "                      [--model M --cluster C --gbs N ...] [--json] [-o FILE]\n"
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

int cmd_export_launch(int argc, char **argv)
{
  cli_opts o;
  hp_problem *prob = NULL;
  hp_plan *plan = NULL;
  hp_launch_opts lo = {0};
  hp_diag d;
  hp_err err;
  char *text = NULL;
  int f, rc = cli_parse(argc, argv, 2, "export",
                        "format plan model cluster gbs schedule profile job json out mem-margin", &o);
  if (rc) return rc;
  if (o.help) { fputs(help, stdout); return EXIT_OK_; }
  if (!o.format) {
    fprintf(stderr, "hetplan export: missing --format megatron|deepspeed|torchrun\n"
            "(see 'hetplan export --help')\n");
    return EXIT_USAGE;
  }
  if ((f = hp_launch_format_parse(o.format)) < 0) {
    fprintf(stderr, "hetplan export: --format: expected megatron, deepspeed or torchrun, got "
            "'%s'\n(see 'hetplan export --help')\n", o.format);
    return EXIT_USAGE;
  }
  if (o.json && f != HP_LAUNCH_DEEPSPEED) {
    fprintf(stderr, "hetplan export: --json is for --format deepspeed (its config alone)\n");
    return EXIT_USAGE;
  }
  if ((rc = cli_load_plan(&o, "export", &prob, &plan))) return rc;
  cli_diag_init(&d);
  lo.plan_name = o.plan;
  lo.config_only = o.json;
  if ((err = hp_launch_write(prob, plan, (hp_launch_format)f, &lo, &text, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  rc = cli_write(o.out, text);
  if (!rc && o.out) fprintf(stderr, "hetplan: wrote %s\n", o.out);
done:
  free(text);
  hp_plan_destroy(&plan);
  hp_problem_destroy(&prob);
  return rc;
}
