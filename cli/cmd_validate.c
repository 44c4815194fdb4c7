/* cmd_validate.c -- `hetplan validate`: the formula against the simulation on many plans
 * of one set-up. */
#include <math.h>
#include <stdlib.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan validate --model M --cluster C --gbs N [--schedule S] [--profile F]\n"
  "                        [--job J] [--samples K] [--seed N] [--json]\n"
  "                        [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST] [--uniform-sharding]\n"
  "                        [--idle-devices] [--max-slices N] [--compute-model shape|flops]\n"
  "\n"
  "Scores K random plans of the search space (default 200; seeded) and the dp solver's\n"
  "10 best plans both by the cost-model formula and by the discrete-event simulation,\n"
  "and prints the mean absolute percentage error of the formula against the simulation\n"
  "and Spearman's rank correlation between the two (docs/simulator.md says where they\n"
  "differ and why). Memory is not considered.\n";

typedef struct validate_opts {
  long samples;
  int json;
} validate_opts;

static const cli_flag flags[] = {
  CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_GBS, CLI_FLAG_SCHEDULE, CLI_FLAGS_JOB_12, CLI_FLAG_PROFILE,
  CLI_FLAG_JOB,
  { .name = "samples", .arg = "K", CLI_OWN_INT(validate_opts, samples, 1, 100000), .def = "200",
    .help = "random plans of the search space to score" },
  CLI_FLAG_SEED,
  { .name = "json", CLI_OWN_SWITCH(validate_opts, json),
    .help = "print the figures and every plan's two times as JSON" },
};

static int run(cli_ctx *ctx)
{
  const validate_opts *o = ctx->opts;
  const hp_problem *prob = ctx->prob;
  unsigned long seed = (unsigned long)ctx->core.seed;
  hp_crosscheck c;
  hp_diag d;
  hp_err err;
  cli_diag_init(&d);
  if ((err = hp_crosscheck_run(prob, o->samples, seed, &c, &d))) return cli_fail(&d, err);
  if (o->json) {
    printf("{ \"plans\": %d, \"mape\": %.6f, \"spearman\": %.6f, \"samples\": [\n", c.n, c.mape,
           c.spearman);
    for (int i = 0; i < c.n; i++)
      printf("  { \"pp\": %d, \"tp\": %d, \"dp\": %d, \"mbs\": %d, \"analytic\": %.9g, "
             "\"simulated\": %.9g }%s\n", c.plans[i]->pp, c.plans[i]->tp, c.plans[i]->dp,
             c.plans[i]->mbs, c.analytic[i], c.simulated[i], i + 1 < c.n ? "," : "");
    printf("] }\n");
  } else {
    const hp_plan *w = c.plans[c.worst];
    printf("model %s on %s, gbs %ld, %s: %d plans (%ld random, seed %lu, and dp's best)\n",
           prob->model->name, prob->cluster->name, prob->job.gbs,
           hp_schedule_name(prob->job.schedule), c.n, o->samples, seed);
    printf("mean absolute percentage error of the formula   %.2f %%\n", 100 * c.mape);
    printf("Spearman rank correlation                       %.4f\n", c.spearman);
    printf("largest error: pp %d tp %d dp %d mbs %d gas %ld: formula %.6f s, simulated %.6f s\n",
           w->pp, w->tp, w->dp, w->mbs, w->gas, c.analytic[c.worst], c.simulated[c.worst]);
  }
  hp_crosscheck_release(&c);
  return EXIT_OK_;
}

const cli_cmd cli_cmd_validate = {
  .name = "validate",
  .summary = "score many plans by the formula and by simulation; compare the two",
  .help = help,
  CLI_FLAGS(flags),
  .opts_size = sizeof(validate_opts),
  .steps = CLI_PROBLEM,
  .run = run,
};
