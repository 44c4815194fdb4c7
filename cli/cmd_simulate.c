/* cmd_simulate.c -- `hetplan simulate` and `hetplan draw`: the discrete-event
 * simulation of a plan beside the formula, and the pictures. */
#include <stdlib.h>

#include "cli.h"

static const char sim_help[] =
  "usage: hetplan simulate --model M --cluster C --plan P --gbs N [--schedule 1f1b|gpipe]\n"
  "                        [--profile F] [--job J] [--json] [--svg gantt.svg] [-o FILE]\n"
  "\n"
  "Simulates one iteration of plan P event by event (docs/simulator.md): every stage's\n"
  "forwards and backwards in 1F1B or GPipe order, transfers on the links between slots\n"
  "(one per direction at a time), all-reduces after each stage's last backward. Prints\n"
  "the simulated iteration time beside the formula's, each device's busy and idle time,\n"
  "the bubble fraction and each stage's peak in-flight micro-batches beside the count\n"
  "the memory model assumes. --svg writes a Gantt chart; --json prints the figures and\n"
  "every event. -o writes the text (or JSON) to FILE instead of stdout.\n";

static const char draw_help[] =
  "usage: hetplan draw [--plan] P --model M --cluster C --gbs N --svg placement.svg\n"
  "\n"
  "Draws the cluster's nodes and devices, each device coloured by its stage and labelled\n"
  "with its replica (and TP rank), and the hand-off links of every replica.\n";

static const char *kind_name(hp_ev_kind k)
{
  static const char *const n[] = { "forward", "backward", "send-activation", "send-gradient",
                                   "all-reduce" };
  return n[k];
}

static int write_svg(const char *path, const char *svg)
{
  if (cli_write(path, svg)) return EXIT_ERROR;
  fprintf(stderr, "hetplan: wrote %s\n", path);
  return EXIT_OK_;
}

int cmd_simulate(int argc, char **argv)
{
  cli_opts o;
  hp_problem *prob = NULL;
  hp_plan *pl = NULL;
  hp_sim s = {0};
  hp_eval e = {0};
  hp_diag d;
  hp_err err;
  FILE *out = stdout;
  char *text = NULL;
  size_t len = 0;
  int rc = cli_parse(argc, argv, 2, "simulate",
                     "model cluster plan gbs schedule profile job json svg out", &o);
  if (rc) return rc;
  if (o.help) { fputs(sim_help, stdout); return EXIT_OK_; }
  if ((rc = cli_load_plan(&o, "simulate", &prob, &pl))) return rc;
  cli_diag_init(&d);
  if ((err = hp_simulate(prob, pl, &s, &d)) || (err = hp_evaluate(prob, pl, &e, &d))) {
    rc = cli_fail(&d, err);
    goto done;
  }
  if (o.out && !(out = open_memstream(&text, &len))) {
    rc = cli_fail(&d, hp_fail(&d, HP_NOMEM, "out of memory"));
    goto done;
  }
  if (o.json) {
    fprintf(out, "{ \"iteration_time\": %.17g, \"analytic_time\": %.17g, \"bubble\": %.6f,\n",
           s.iteration_time, e.iteration_time, s.bubble);
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
    fprintf(out, "bubble          %.2f %% of device time idle\n", 100 * s.bubble);
    fprintf(out, "events          %d\n\nstage  peak in flight  memory model\n", s.n_events);
    for (int st = 0; st < pl->pp; st++) {
      long model = hp_inflight(pl, st);
      fprintf(out, "%5d  %14d  %12ld%s\n", st, s.peak_inflight[st], model,
             s.peak_inflight[st] == model ? "" : "  (differs)");
    }
    fprintf(out, "\ndevice  busy s      idle s      busy\n");
    for (int dv = 0; dv < s.n_devices; dv++)
      fprintf(out, "%6d  %10.6f  %10.6f  %5.1f%%\n", dv, s.busy[dv], s.iteration_time - s.busy[dv],
             100 * s.busy[dv] / s.iteration_time);
  }
  if (o.out) {                 /* -o: the text or JSON goes to the file, not stdout */
    fclose(out);
    out = NULL;
    if ((rc = cli_write(o.out, text))) goto done;
  }
  if (o.svg) {
    char *svg = NULL;
    if ((err = hp_sim_svg(prob, pl, &s, &svg, &d))) rc = cli_fail(&d, err);
    else rc = write_svg(o.svg, svg);
    free(svg);
  }
done:
  if (out && out != stdout) fclose(out);
  free(text);
  hp_eval_release(&e);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&prob);
  return rc;
}

int cmd_draw(int argc, char **argv)
{
  cli_opts o;
  hp_problem *prob = NULL;
  hp_plan *pl = NULL;
  hp_diag d;
  hp_err err;
  char *svg = NULL;
  int rc = cli_parse(argc, argv, 2, "draw", "model cluster plan gbs schedule profile job svg", &o);
  if (rc) return rc;
  if (o.help) { fputs(draw_help, stdout); return EXIT_OK_; }
  if (!o.svg) {
    fprintf(stderr, "hetplan draw: missing --svg FILE\n(see 'hetplan draw --help')\n");
    return EXIT_USAGE;
  }
  if ((rc = cli_load_plan(&o, "draw", &prob, &pl))) return rc;
  cli_diag_init(&d);
  if ((err = hp_plan_svg(prob, pl, &svg, &d))) rc = cli_fail(&d, err);
  else rc = write_svg(o.svg, svg);
  free(svg);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&prob);
  return rc;
}
