/* cmd_simulate.c -- `hetplan simulate` and `hetplan draw`: the discrete-event
 * simulation of a plan beside the formula, and the pictures. */
#include <stdlib.h>

#include "cli.h"

static const char sim_help[] =
  "usage: hetplan simulate --model M --cluster C --plan P --gbs N [--schedule 1f1b|gpipe]\n"
  "                        [--profile F [--accept-profile-mismatch]] [--job J] [--json] [--svg gantt.svg] [-o FILE]\n"
  "                        [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST] [--uniform-sharding]\n"
  "                        [--idle-devices] [--max-slices N] [--compute-model shape|flops]\n"
  "\n"
  "Simulates one iteration of plan P event by event (docs/simulator.md): every stage's\n"
  "forwards and backwards in 1F1B or GPipe order, transfers on the links between slots\n"
  "(the sender waits for its transfer), each stage's gradient reduction after its last\n"
  "backward (or during it, grad_sync overlap), then the optimizer step and the weights'\n"
  "all-gather. Prints the simulated iteration time beside the formula's, term by term,\n"
  "each device's busy and idle time,\n"
  "the bubble fraction and each stage's peak in-flight micro-batches beside the count\n"
  "the memory model assumes. --svg writes a Gantt chart; --json prints the figures and\n"
  "every event. -o writes the text (or JSON) to FILE instead of stdout.\n";

static const char draw_help[] =
  "usage: hetplan draw [--plan] P --model M --cluster C --gbs N --svg placement.svg\n"
  "                    [--schedule S] [--profile F [--accept-profile-mismatch]] [--job J]\n"
  "                    [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST] [--uniform-sharding]\n"
  "                    [--idle-devices] [--max-slices N] [--compute-model shape|flops]\n"
  "\n"
  "Draws the cluster's nodes and devices, each device coloured by its stage and labelled\n"
  "with its replica (and TP rank), and the hand-off links of every replica.\n";

static const char *kind_name(hp_ev_kind k)
{
  static const char *const n[] = { "forward", "backward", "send-activation", "send-gradient",
                                   "all-reduce", "step", "all-gather" };
  return n[k];
}

static int write_svg(const char *path, const char *svg)
{
  if (cli_write(path, svg)) return EXIT_ERROR;
  fprintf(stderr, "hetplan: wrote %s\n", path);
  return EXIT_OK_;
}

typedef struct simulate_opts {
  int json;
  const char *svg;       /* where to write the picture */
} simulate_opts;

static const cli_flag sim_flags[] = {
  CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_PLAN, CLI_FLAG_GBS, CLI_FLAG_SCHEDULE, CLI_FLAGS_JOB_12,
  CLI_FLAG_PROFILE, CLI_FLAG_ACCEPT_PROFILE, CLI_FLAG_JOB,
  { .name = "json", CLI_OWN_SWITCH(simulate_opts, json),
    .help = "print the figures and every event as JSON" },
  { .name = "svg", .arg = "FILE", CLI_OWN_TEXT(simulate_opts, svg), .file = CLI_FILE_OUT,
    .help = "write a Gantt chart of the iteration" },
  CLI_FLAG_OUT,
};

static const cli_flag draw_flags[] = {
  CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_PLAN, CLI_FLAG_GBS, CLI_FLAG_SCHEDULE, CLI_FLAGS_JOB_12,
  CLI_FLAG_PROFILE, CLI_FLAG_ACCEPT_PROFILE, CLI_FLAG_JOB,
  { .name = "svg", .arg = "FILE", CLI_OWN_TEXT(simulate_opts, svg), .file = CLI_FILE_OUT,
    .help = "where to write the picture of the placement" },
};

static int run_simulate(cli_ctx *c)
{
  const simulate_opts *o = c->opts;
  const char *outp = c->core.out;
  const hp_problem *prob = c->prob;
  const hp_plan *pl = c->plan;
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d;
  hp_err err;
  FILE *out = stdout;
  char *text = NULL;
  size_t len = 0;
  int rc = EXIT_OK_;
  cli_diag_init(&d);
  if ((err = hp_simulate(prob, pl, &s, &d)) || (err = hp_evaluate(prob, pl, &e, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  if (outp && !(out = open_memstream(&text, &len))) {
    rc = cli_fail(&d, hp_fail(&d, HP_NOMEM, "out of memory"));
    goto done;
  }
  if (o->json) {
    fprintf(out, "{ \"iteration_time\": %.17g, \"analytic_time\": %.17g, \"bubble\": %.6f,\n",
           s.iteration_time, e.iteration_time, s.bubble);
    fprintf(out, "  \"pipeline_time\": %.17g, \"sync_time\": %.17g, \"step_time\": %.17g, "
           "\"gat_time\": %.17g,\n", s.pipeline_time, s.sync_time, s.step_time, s.gat_time);
    fprintf(out, "  \"peak_inflight\": [");
    for (int st = 0; st < pl->pp; st++) fprintf(out, "%s%d", st ? ", " : "", s.peak_inflight[st]);
    fprintf(out, "],\n  \"busy\": [");
    for (int dv = 0; dv < s.n_devices; dv++) fprintf(out, "%s%.9g", dv ? ", " : "", s.busy[dv]);
    fprintf(out, "],\n  \"events\": [\n");
    for (int i = 0; i < s.n_events; i++) {
      const hp_sim_event *v = &s.events[i];
      fprintf(out, "    { \"kind\": \"%s\", \"stage\": %d, \"replica\": %d, \"micro\": %d, "
             "\"start\": %.9g, \"end\": %.9g }%s\n", kind_name(v->kind), v->stage, v->replica,
             v->micro, v->start, v->end, i + 1 < s.n_events ? "," : "");
    }
    fprintf(out, "  ] }\n");
  } else {
    double diff = 100 * (s.iteration_time - e.iteration_time) / e.iteration_time;
    fprintf(out, "plan     pp %d, tp %d, dp %d, mbs %d, gas %ld, %s, gbs %ld\n", pl->pp, pl->tp,
           pl->dp, pl->mbs, pl->gas, hp_schedule_name(pl->schedule), prob->job.gbs);
    fprintf(out, "iteration time  simulated %.6f s, formula %.6f s (%+.2f %%)\n", s.iteration_time,
           e.iteration_time, diff);
    fprintf(out, "  pipeline      simulated %.6f s, formula %.6f s\n", s.pipeline_time,
           e.pipeline_time);
    fprintf(out, "  reduction     simulated %.6f s, formula %.6f s (beyond the pipeline)\n",
           s.sync_time, e.sync_time);
    fprintf(out, "  step          simulated %.6f s, formula %.6f s\n", s.step_time, e.step_time);
    fprintf(out, "  all-gather    simulated %.6f s, formula %.6f s\n", s.gat_time, e.gat_time);
    fprintf(out, "bubble          %.2f %% of the used devices' time idle\n", 100 * s.bubble);
    fprintf(out, "events          %d\n\nstage  peak in flight  memory model\n", s.n_events);
    for (int st = 0; st < pl->pp; st++) {
      long model = hp_inflight(pl, st);
      fprintf(out, "%5d  %14d  %12ld%s\n", st, s.peak_inflight[st], model,
             s.peak_inflight[st] == model ? "" : "  (differs)");
    }
    fprintf(out, "\ndevice  busy s      idle s      busy\n");
    for (int dv = 0; dv < s.n_devices; dv++)
      if (e.idle[dv]) fprintf(out, "%6d  unused\n", dv);
      else fprintf(out, "%6d  %10.6f  %10.6f  %5.1f%%\n", dv, s.busy[dv],
                   s.iteration_time - s.busy[dv], 100 * s.busy[dv] / s.iteration_time);
  }
  if (outp) {                  /* -o: the text or JSON goes to the file, not stdout */
    fclose(out);
    out = NULL;
    if ((rc = cli_write(outp, text))) goto done;
  }
  if (o->svg) {
    char *svg = NULL;
    if ((err = hp_sim_svg(prob, pl, &s, &svg, &d))) rc = cli_fail(&d, err);
    else rc = write_svg(o->svg, svg);
    free(svg);
  }
done:
  if (out && out != stdout) fclose(out);
  free(text);
  hp_eval_release(&e);
  hp_sim_release(&s);
  return rc;
}

static int check_draw(cli_ctx *c)
{
  const simulate_opts *o = c->opts;
  return o->svg ? EXIT_OK_ : cli_usage_error("draw", "missing --svg FILE");
}

static int run_draw(cli_ctx *c)
{
  const simulate_opts *o = c->opts;
  hp_diag d;
  hp_err err;
  char *svg = NULL;
  int rc;
  cli_diag_init(&d);
  if ((err = hp_plan_svg(c->prob, c->plan, &svg, &d))) rc = cli_fail(&d, err);
  else rc = write_svg(o->svg, svg);
  free(svg);
  return rc;
}

const cli_cmd cli_cmd_simulate = {
  .name = "simulate",
  .summary = "simulate a plan's iteration event by event (--svg: a Gantt chart)",
  .help = sim_help,
  CLI_FLAGS(sim_flags),
  .opts_size = sizeof(simulate_opts),
  .steps = CLI_PLAN,
  .run = run_simulate,
};

const cli_cmd cli_cmd_draw = {
  .name = "draw",
  .summary = "draw a plan's placement on the cluster as SVG",
  .help = draw_help,
  CLI_FLAGS(draw_flags),
  .opts_size = sizeof(simulate_opts),
  .steps = CLI_PLAN,
  .check = check_draw,
  .run = run_draw,
};
