/* cmd_export_launch.c -- `hetplan export --format megatron|deepspeed|torchrun|slurm
 * plan.json [-- ARGS...]`: the launch of a plan (src/launch.c), with the training
 * command's own arguments from after `--` and from --args-file. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan export --format megatron|deepspeed|torchrun|slurm [--plan] plan.json\n"
  "                      [--model M --cluster C --gbs N ...] [--json] [-o FILE]\n"
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

int cmd_export_launch(int argc, char **argv)
{
  cli_opts o;
  hp_problem *prob = NULL;
  hp_plan *plan = NULL;
  hp_launch_opts lo = {0};
  hp_diag d;
  hp_err err;
  char *text = NULL, **args = NULL, *words = NULL, **av;
  const char *args_file = NULL;
  char fmts[128];
  int f, rc, ac = 0, n_after = 0, n_args = 0;
  /* the training command's arguments: everything after --, and --args-file FILE, taken out
   * before the flags are parsed */
  if (!(av = calloc((size_t)argc + 1, sizeof *av))) return EXIT_USAGE;
  for (int i = 0; i < argc; i++) {
    if (i >= 2 && !strcmp(argv[i], "--")) {
      n_after = argc - i - 1;
      break;
    }
    if (i >= 2 && !strcmp(argv[i], "--args-file")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "hetplan export: --args-file needs a value\n");
        free(av);
        return EXIT_USAGE;
      }
      args_file = argv[++i];
      continue;
    }
    if (i >= 2 && !strncmp(argv[i], "--args-file=", 12)) {
      args_file = argv[i] + 12;
      continue;
    }
    av[ac++] = argv[i];
  }
  rc = cli_parse(ac, av, 2, "export",
                 "format plan model cluster gbs schedule profile job json out mem-margin", &o);
  if (rc) goto done;
  if (o.help) { fputs(help, stdout); goto done; }
  if (!o.format) {
    fprintf(stderr, "hetplan export: missing --format %s\n(see 'hetplan export --help')\n",
            hp_launch_format_list(fmts, sizeof fmts, "|", "|"));
    rc = EXIT_USAGE;
    goto done;
  }
  if ((f = hp_launch_format_parse(o.format)) < 0) {
    fprintf(stderr, "hetplan export: --format: expected %s, got '%s'\n(see 'hetplan export "
            "--help')\n", hp_launch_format_list(fmts, sizeof fmts, ", ", " or "), o.format);
    rc = EXIT_USAGE;
    goto done;
  }
  if (o.json && f != HP_LAUNCH_DEEPSPEED) {
    fprintf(stderr, "hetplan export: --json is for --format deepspeed (its config alone)\n");
    rc = EXIT_USAGE;
    goto done;
  }
  if ((rc = user_args(args_file, argv + argc - n_after, n_after, &args, &n_args, &words))) goto done;
  if ((rc = cli_load_plan(&o, "export", &prob, &plan))) goto done;
  cli_diag_init(&d);
  lo.plan_name = o.plan;
  lo.config_only = o.json;
  lo.args = (const char *const *)args;
  lo.n_args = n_args;
  lo.warn = warn_stderr;
  lo.warn_ctx = (void *)(f == HP_LAUNCH_MEGATRON || f == HP_LAUNCH_SLURM ? "Megatron-LM"
                         : hp_launch_format_name(f));
  if ((err = hp_launch_write(prob, plan, (hp_launch_format)f, &lo, &text, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  rc = cli_write(o.out, text);
  if (!rc && o.out) fprintf(stderr, "hetplan: wrote %s\n", o.out);
done:
  free(av);
  free(args);
  free(words);
  free(text);
  hp_plan_destroy(&plan);
  hp_problem_destroy(&prob);
  return rc;
}
