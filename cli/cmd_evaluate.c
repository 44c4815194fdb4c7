/* cmd_evaluate.c -- `hetplan evaluate`: scores a plan file with the evaluator and prints
 * a readable breakdown (or JSON with --json). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
  "usage: hetplan evaluate --model M --cluster C --plan P --gbs N [--schedule 1f1b|gpipe]\n"
  "                        [--profile F [--accept-profile-mismatch]] [--strict-profile] [--job J] [--mem-margin F]\n"
  "                        [--json] [-o FILE]\n"
  "                        [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST] [--uniform-sharding]\n"
  "                        [--idle-devices] [--max-slices N] [--compute-model shape|flops]\n"
  "                        [--framework F]\n"
  "\n"
  "Scores plan P with the cost model (docs/cost-model.md, version 1.2): per stage and\n"
  "replica the compute, ZeRO-3 gathering Z and gradient scatter Zr, the stage time, the\n"
  "hand-off over its lanes' shared bandwidth and the steady-state period; each replica's\n"
  "pipeline time; per stage the reduction, the all-gather after the step, the step and\n"
  "the memory by part (states, gather, activations, work) with the stage's sharding\n"
  "modes; each device's memory against its capacity, idle devices; the iteration as\n"
  "pipeline + (exposed) sync + step + all-gather; names the bottleneck. --json prints\n"
  "the plan file with iteration_time, throughput, mfu, peak_memory and the breakdown.\n"
  "--job reads gbs, schedule and the job's 1.2 fields from a file (flags win); the\n"
  "job's fields (--sequence-parallel, --grad-sync, --sharding, --uniform-sharding,\n"
  "--idle-devices, --max-slices, --compute-model) default to the plan file's \"inputs\".\n"
  "The bottleneck is the largest of the terms that add up to the iteration time: the\n"
  "slowest stage's compute x gas, pipeline fill and drain, ZeRO traffic per micro-batch,\n"
  "hand-offs, steady-state hand-offs, gradient sync, optimizer step, all-gather.\n"
  "--model may be a Hugging Face config.json (recognised by its keys). A plan file written\n"
  "by 'plan' names its model, cluster and gbs: 'hetplan evaluate plan.json' is enough.\n"
  "--mem-margin F keeps that fraction of every device's memory free.\n"
  "Both forms end with the profile coverage of the plan: which (layer kind, device\n"
  "type, tp, mbs) cells it uses are measured by --profile, derived from measured points\n"
  "at other mbs, or estimated from FLOPs; --strict-profile refuses a plan that uses an\n"
  "estimated cell (exit 3).\n"
  "\n"
  "exit codes: 0 the plan fits, 5 it does not fit in memory (the device, its stage and\n"
  "the overflow are named), 4 the plan is invalid, 3 an input file is bad, 2 usage.\n";

#define GIB 1073741824.0

/* The job's 1.2 fields in one line. */
static void print_job(FILE *out, const hp_problem *prob, const hp_eval *e)
{
  const hp_job *j = &prob->job;
  char modes[64];
  fprintf(out, "job      grad sync %s, sequence parallel %s, modes %s%s, max slices %d, "
          "devices used %d of %d%s\n", hp_grad_sync_name(j->grad_sync),
          j->sequence_parallel ? "on" : "off",
          cli_sharding_text(hp_job_modes(j), modes, sizeof modes),
          j->uniform_sharding ? " (uniform)" : "", hp_job_max_slices(j), e->n_used,
          e->n_devices, j->idle_devices ? " (idle devices allowed)" : "");
}

static void print_breakdown(FILE *out, const hp_problem *prob, const hp_plan *pl, const hp_eval *e)
{
  const hp_model *m = prob->model;
  const hp_cluster *c = prob->cluster;
  int dp = pl->dp;

  fprintf(out, "model    %s: %d layers, %.4g B parameters\n", m->name, m->n_layers,
         hp_model_unique_params(m) / 1e9);
  fprintf(out, "cluster  %s: %d devices on %d nodes\n", c->name, c->n_devices, c->n_nodes);
  fprintf(out, "plan     pp %d, tp %d, dp %d, mbs %d, gas %ld, %s, gbs %ld (cost model %s)\n",
         pl->pp, pl->tp, dp, pl->mbs, pl->gas, hp_schedule_name(pl->schedule),
         prob->job.gbs, HP_COST_MODEL_VERSION);
  print_job(out, prob, e);
  fputc('\n', out);

  /* per slot: Z gathering, Zr scatter, t = compute + Z + Zr, the hand-off to the next
   * stage over its lanes' shared bandwidth, the period c = t + half of each hand-off */
  fprintf(out, "stage  layers     rec  replica  devices            compute ms       Z ms      Zr ms"
         "   stage ms  hand-off ms  lane GB/s   period ms\n");
  for (int s = 0; s < pl->pp; s++) {
    char span[32];
    snprintf(span, sizeof span, "%d-%d", pl->first[s], hp_stage_last(pl, s));
    for (int r = 0; r < dp; r++) {
      char devs[64] = "";
      size_t ix = (size_t)s * dp + r;
      for (int j = 0, len = 0; j < pl->tp && len < 48; j++)
        len += snprintf(devs + len, sizeof devs - (size_t)len, "%s%d", j ? "," : "",
                        pl->dev[HP_SLOT(pl, s, r, j)]);
      if (r == 0)
        fprintf(out, "%5d  %-9s  %-3s  ", s, span, pl->recompute[s] ? "yes" : "no");
      else
        fprintf(out, "%5s  %-9s  %-3s  ", "", "", "");
      fprintf(out, "%7d  %-17s  %10.3f  %9.3f  %9.3f  %9.3f  %11.3f  %9.3f  %10.3f\n", r, devs,
             e->compute[ix] * 1e3, e->gather[s] * 1e3, e->scatter[s] * 1e3,
             e->stage_time[ix] * 1e3, e->handoff[ix] * 1e3,
             s + 1 < pl->pp ? e->handoff_bw[ix] / 1e9 : 0.0, e->period[ix] * 1e3);
    }
  }

  fprintf(out, "\nreplica  pipeline time s\n");
  for (int r = 0; r < dp; r++)
    fprintf(out, "%7d  %15.6f%s\n", r, e->replica_time[r],
           r == e->slowest_replica ? "  (slowest)" : "");

  /* per stage: the reduction before the step, the all-gather after it, the step, and
   * memory by part (per device, without the reserve) */
  fprintf(out, "\nstage     red ms     gat ms    step ms  group GB/s  states GiB  gather GiB"
         "  act GiB  work GiB  memory GiB  modes\n");
  for (int s = 0; s < pl->pp; s++) {
    char modes[96];
    fprintf(out, "%5d  %9.3f  %9.3f  %9.3f  %10.3f  %10.3f  %10.3f  %7.3f  %8.3f  %10.3f  %s\n", s,
           e->sync[s] * 1e3, e->gat[s] * 1e3, e->step[s] * 1e3, e->bdp[s] / 1e9,
           e->mem_states[s] / GIB, e->mem_gather[s] / GIB, e->mem_act[s] / GIB,
           e->mem_work[s] / GIB, e->stage_mem[s] / GIB, hp_stage_modes(pl, s, modes, sizeof modes));
  }

  fprintf(out, "\ndevice  node          type        stage  memory GiB  capacity GiB  use\n");
  for (int s = 0; s < pl->pp; s++)
    for (int i = 0; i < dp * pl->tp; i++) {
      int dv = pl->dev[(size_t)s * dp * pl->tp + i];
      const hp_node *nd = &c->nodes[c->dev_node[dv]];
      fprintf(out, "%6d  %-12.12s  %-10.10s  %5d  %10.3f  %12.3f  %5.1f%%%s\n", dv, nd->name,
             c->types[nd->type].name, s, e->mem[dv] / GIB, e->cap[dv] / GIB,
             100.0 * e->mem[dv] / e->cap[dv], e->mem[dv] > e->cap[dv] ? "  OVER" : "");
    }
  for (int dv = 0; dv < e->n_devices; dv++)
    if (e->idle[dv]) {
      const hp_node *nd = &c->nodes[c->dev_node[dv]];
      fprintf(out, "%6d  %-12.12s  %-10.10s  %5s  %10s  %12.3f  idle\n", dv, nd->name,
              c->types[nd->type].name, "-", "-", e->cap[dv] / GIB);
    }

  if (c->mem_margin > 0)
    fprintf(out, "(memory margin %g %%: a device's capacity is %g %% of its memory, e.g. %s %.3f of "
           "%.3f GiB)\n", 100 * c->mem_margin, 100 * (1 - c->mem_margin), c->types[0].name,
           c->types[0].mem / GIB, c->types[0].mem_total / GIB);

  fprintf(out, "\niteration time  %.6f s = pipeline %.6f s (replica %d) + %s %.6f s (stage %d) + "
         "step %.6f s + all-gather %.6f s\n", e->iteration_time, e->pipeline_time,
         e->slowest_replica, prob->job.grad_sync == HP_SYNC_OVERLAP ? "exposed sync" : "sync",
         e->sync_time, e->sync_stage, e->step_time, e->gat_time);
  fprintf(out, "throughput      %.4f samples/s\n", e->throughput);
  fprintf(out, "MFU             %.2f %%%s\n", 100.0 * e->mfu,
          e->n_used < e->n_devices ? " (of the devices used)" : "");
  {
    hp_bottleneck b;
    char why[400];
    hp_bottleneck_find(pl, e, &b);
    fprintf(out, "bottleneck      %s\n", hp_bottleneck_describe(&b, e, why, sizeof why));
    fprintf(out, "                (iteration = slowest stage x gas %.6f + fill and drain %.6f + "
           "ZeRO per micro-batch %.6f + hand-offs %.6f + steady-state hand-offs %.6f + sync "
           "%.6f + step %.6f + all-gather %.6f s)\n", b.term[HP_BN_STAGE], b.term[HP_BN_FILL],
           b.term[HP_BN_ZERO], b.term[HP_BN_HANDOFF], b.term[HP_BN_PERIOD], b.term[HP_BN_SYNC],
           b.term[HP_BN_STEP], b.term[HP_BN_ALLGATHER]);
  }
  if (e->feasible) {
    int tight = -1;
    for (int dv = 0; dv < e->n_devices; dv++)
      if (!e->idle[dv] && (tight < 0 || e->mem[dv] / e->cap[dv] > e->mem[tight] / e->cap[tight]))
        tight = dv;
    fprintf(out, "memory          fits; tightest device %d: %.3f of %.3f GiB (%.1f %%)\n", tight,
           e->mem[tight] / GIB, e->cap[tight] / GIB, 100.0 * e->mem[tight] / e->cap[tight]);
  }
}

static void print_oom(const hp_problem *prob, const hp_eval *e)
{
  const hp_cluster *c = prob->cluster;
  const hp_node *nd = &c->nodes[c->dev_node[e->oom_device]];
  fprintf(stderr, "hetplan: out of memory: device %d (stage %d, node '%s', %s) needs %.3f GiB "
          "of %.3f GiB: over by %.3f GiB\n", e->oom_device, e->oom_stage, nd->name,
          c->types[nd->type].name, e->mem[e->oom_device] / GIB, e->cap[e->oom_device] / GIB,
          e->oom_bytes / GIB);
}

typedef struct evaluate_opts { int json; } evaluate_opts;

static const cli_flag flags[] = {
  CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_PLAN, CLI_FLAG_GBS, CLI_FLAG_SCHEDULE, CLI_FLAGS_JOB_12, CLI_FLAG_FRAMEWORK,
  CLI_FLAG_PROFILE, CLI_FLAG_ACCEPT_PROFILE, CLI_FLAG_STRICT_PROFILE, CLI_FLAG_JOB,
  { .name = "json", CLI_OWN_SWITCH(evaluate_opts, json),
    .help = "print the plan file with its figures and breakdown as JSON" },
  CLI_FLAG_OUT, CLI_FLAG_MEM_MARGIN,
};

static int run(cli_ctx *c)
{
  const evaluate_opts *o = c->opts;
  const char *outp = c->core.out;
  const hp_problem *prob = c->prob;
  const hp_plan *plan = c->plan;
  const hp_coverage *cov = c->cov;
  hp_eval e = {0};
  hp_diag d;
  hp_err err;
  int rc = EXIT_OK_;
  cli_diag_init(&d);
  if ((err = hp_evaluate(prob, plan, &e, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  if (o->json) {
    char *text = NULL;
    if ((err = hp_eval_to_json(prob, plan, &e, cov, &text, &d))) {
      free(text);
      rc = cli_fail(&d, err);
      goto done;
    }
    rc = cli_write(outp, text);
    free(text);
  } else {
    char *text = NULL;
    size_t len = 0;
    FILE *out = outp ? open_memstream(&text, &len) : stdout;   /* -o gets the text too */
    if (!out) { rc = cli_fail(&d, hp_fail(&d, HP_NOMEM, "out of memory")); goto done; }
    print_breakdown(out, prob, plan, &e);
    fputc('\n', out);
    cli_print_coverage(out, prob, cov);
    if (outp) {
      fclose(out);
      rc = cli_write(outp, text);
      free(text);
    }
  }
  if (!rc && !e.feasible) {
    print_oom(prob, &e);
    rc = EXIT_OOM;
  }
done:
  hp_eval_release(&e);
  return rc;
}

const cli_cmd cli_cmd_evaluate = {
  .name = "evaluate",
  .summary = "score a plan: per-stage and per-replica times, sync, memory",
  .help = help,
  CLI_FLAGS(flags),
  .opts_size = sizeof(evaluate_opts),
  .steps = CLI_PLAN | CLI_COVER_PLAN,
  .run = run,
};
