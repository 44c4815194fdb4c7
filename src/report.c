/* report.c -- the one-page report on a plan (hp_report.h): Markdown, or HTML with the
 * placement and the simulated Gantt chart embedded as SVG. Every figure is the
 * evaluator's (or the simulator's, for the picture). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GIB 1073741824.0

/* --- A small writer for both formats: headings, paragraphs, tables. */
typedef struct doc { hp_sb b; int html; } doc;

static void text(doc *o, const char *s)
{
  if (o->html) hp__sb_xml(&o->b, s);
  else hp__sb_printf(&o->b, "%s", s);
}

static void textf(doc *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void textf(doc *o, const char *fmt, ...)
{
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  text(o, buf);
}

static void heading(doc *o, int level, const char *s)
{
  if (o->html) {
    hp__sb_printf(&o->b, "<h%d>", level);
    text(o, s);
    hp__sb_printf(&o->b, "</h%d>\n", level);
  } else {
    hp__sb_printf(&o->b, "\n%.*s %s\n\n", level, "####", s);
  }
}

static void para_begin(doc *o) { hp__sb_printf(&o->b, o->html ? "<p>" : ""); }
static void para_end(doc *o) { hp__sb_printf(&o->b, o->html ? "</p>\n" : "\n\n"); }

static void table_begin(doc *o, int n, const char *const *head)
{
  if (o->html) {
    hp__sb_printf(&o->b, "<table>\n<tr>");
    for (int i = 0; i < n; i++) {
      hp__sb_printf(&o->b, "<th>");
      text(o, head[i]);
      hp__sb_printf(&o->b, "</th>");
    }
    hp__sb_printf(&o->b, "</tr>\n");
  } else {
    hp__sb_printf(&o->b, "|");
    for (int i = 0; i < n; i++) hp__sb_printf(&o->b, " %s |", head[i]);
    hp__sb_printf(&o->b, "\n|");
    for (int i = 0; i < n; i++) hp__sb_printf(&o->b, "---|");
    hp__sb_printf(&o->b, "\n");
  }
}

/* A row of cells given as one string with cells separated by '\t'. */
static void rowf(doc *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rowf(doc *o, const char *fmt, ...)
{
  char buf[4096], *save = NULL;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  hp__sb_printf(&o->b, o->html ? "<tr>" : "|");
  for (char *c = strtok_r(buf, "\t", &save); c; c = strtok_r(NULL, "\t", &save)) {
    if (o->html) {
      hp__sb_printf(&o->b, "<td>");
      text(o, c);
      hp__sb_printf(&o->b, "</td>");
    } else {
      for (char *q = c; *q; q++) if (*q == '|') *q = '/';   /* a cell must not end the row */
      hp__sb_printf(&o->b, " %s |", c);
    }
  }
  hp__sb_printf(&o->b, o->html ? "</tr>\n" : "\n");
}

static void table_end(doc *o) { hp__sb_printf(&o->b, o->html ? "</table>\n" : "\n"); }

/* Device ids as ranges: "0-3, 8". */
static void dev_ranges(char *buf, size_t n, const int *ids, int count)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < count && len < n; i++) {
    int j = i;
    while (j + 1 < count && ids[j + 1] == ids[j] + 1) j++;
    len += (size_t)snprintf(buf + len, n - len, "%s%d", i ? ", " : "", ids[i]);
    if (j > i && len < n) len += (size_t)snprintf(buf + len, n - len, "-%d", ids[j]);
    i = j;
  }
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void section_throughput(doc *o, const hp_problem *prob, const hp_plan *pl, const hp_eval *e)
{
  static const char *const h[] = { "figure", "value" };
  const hp_model *m = prob->model;
  int D = prob->cluster->n_devices;
  heading(o, 2, "Throughput");
  table_begin(o, 2, h);
  rowf(o, "iteration time\t%.6f s", e->iteration_time);
  rowf(o, "samples per second\t%.4f", e->throughput);
  if (m->transformer) {
    rowf(o, "tokens per second\t%.0f (%d tokens a sample)", e->throughput * m->transformer->seq, m->transformer->seq);
    rowf(o, "tokens per GPU per second\t%.1f (%d GPUs%s)", e->throughput * m->transformer->seq / e->n_used,
         e->n_used, e->n_used < D ? " used; idle devices excluded" : "");
  } else {
    rowf(o, "tokens per second\tnot known: the model gives explicit layers, no sequence length");
  }
  rowf(o, "MFU\t%.2f %% (model FLOPs %.4g per sample, against the summed peaks)", 100 * e->mfu,
       hp_model_total_flops(m));
  rowf(o, "pipeline / gradient sync%s / optimizer step / all-gather\t%.6f s / %.6f s / %.6f s / %.6f s",
       prob->job.grad_sync == HP_SYNC_OVERLAP ? " (exposed)" : "", e->pipeline_time, e->sync_time,
       e->step_time, e->gat_time);
  rowf(o, "job\tgrad sync %s, sequence parallel %s (cost model %s)", hp_grad_sync_name(prob->job.grad_sync),
       prob->job.sequence_parallel ? "on" : "off", HP_COST_MODEL_VERSION);
  rowf(o, "micro-batches per iteration (gas)\t%ld", pl->gas);
  table_end(o);
}

static void section_stages(doc *o, const hp_problem *prob, const hp_plan *pl, const hp_eval *e)
{
  static const char *const h[] = { "stage", "layers", "devices (per replica)", "type",
                                   "recompute", "sharding", "ms per micro-batch",
                                   "memory per device (less reserve)" };
  const hp_cluster *c = prob->cluster;
  const hp_model *m = prob->model;
  heading(o, 2, "Stages");
  table_begin(o, 8, h);
  for (int s = 0; s < pl->pp; s++) {
    char devs[512], type[128] = "", modes[96];
    size_t len = 0;
    double tmax = 0;
    devs[0] = '\0';
    for (int r = 0; r < pl->dp && len < 400; r++) {
      char one[128];
      dev_ranges(one, sizeof one, &pl->dev[HP_SLOT(pl, s, r, 0)], pl->tp);
      len += (size_t)snprintf(devs + len, sizeof devs - len, "%s[%s]", r ? " " : "", one);
      if (e->stage_time[(size_t)s * pl->dp + r] > tmax) tmax = e->stage_time[(size_t)s * pl->dp + r];
    }
    if (len >= 400) snprintf(devs + 396, sizeof devs - 396, " ...");
    for (int r = 0; r < pl->dp; r++) {
      const char *t = c->types[hp_device_type(prob, pl->dev[HP_SLOT(pl, s, r, 0)])].name;
      if (!strstr(type, t) && strlen(type) + strlen(t) + 3 < sizeof type)
        snprintf(type + strlen(type), sizeof type - strlen(type), "%s%s", type[0] ? ", " : "", t);
    }
    rowf(o, "%d\t%d-%d (%s .. %s)\t%s\t%s\t%s\t%s\t%.3f\t%.3f GiB", s, pl->first[s],
         hp_stage_last(pl, s), m->layers[pl->first[s]].name, m->layers[hp_stage_last(pl, s)].name,
         devs, type, pl->recompute[s] ? "yes" : "no", hp_stage_modes(pl, s, modes, sizeof modes),
         tmax * 1e3, e->stage_mem[s] / GIB);
  }
  table_end(o);
}

static void section_memory(doc *o, const hp_problem *prob, const hp_plan *pl, const hp_eval *e)
{
  static const char *const h[] = { "stage", "type", "devices", "uses", "capacity", "use", "fits" };
  const hp_cluster *c = prob->cluster;
  int *ids = hp__calloc((size_t)c->n_devices, sizeof *ids), tight = 0;
  heading(o, 2, "Memory");
  if (!ids) { o->b.failed = 1; return; }
  table_begin(o, 7, h);
  /* devices of one stage and one type hold the same bytes against the same capacity */
  for (int s = 0; s < pl->pp; s++)
    for (int k = 0; k < c->n_types; k++) {
      int n = 0;
      char list[256];
      for (int i = 0; i < pl->dp * pl->tp; i++) {
        int dv = pl->dev[(size_t)s * pl->dp * pl->tp + i];
        if (hp_device_type(prob, dv) == k) ids[n++] = dv;
      }
      if (!n) continue;
      qsort(ids, (size_t)n, sizeof *ids, cmp_int);
      dev_ranges(list, sizeof list, ids, n);
      rowf(o, "%d\t%s\t%s\t%.3f GiB\t%.3f GiB\t%.1f %%\t%s", s, c->types[k].name, list,
           e->mem[ids[0]] / GIB, e->cap[ids[0]] / GIB, 100 * e->mem[ids[0]] / e->cap[ids[0]],
           e->mem[ids[0]] > e->cap[ids[0]] ? "OVER" : "yes");
    }
  table_end(o);
  free(ids);
  tight = -1;
  for (int dv = 0; dv < e->n_devices; dv++)
    if (!e->idle[dv] && (tight < 0 || e->mem[dv] / e->cap[dv] > e->mem[tight] / e->cap[tight]))
      tight = dv;
  if (tight < 0) tight = 0;
  para_begin(o);
  if (e->n_used < e->n_devices && (ids = hp__calloc((size_t)e->n_devices, sizeof *ids)) != NULL) {
    char list[256];
    int n = 0;
    for (int dv = 0; dv < e->n_devices; dv++)
      if (e->idle[dv]) ids[n++] = dv;
    dev_ranges(list, sizeof list, ids, n);
    free(ids);
    textf(o, "Idle devices (the plan leaves them unused; they hold nothing and take no step): "
          "%d of %d, %s. ", n, e->n_devices, list);
  }
  if (e->feasible)
    textf(o, "Every device fits; the tightest is device %d at %.1f %% of its capacity.", tight,
          100 * e->mem[tight] / e->cap[tight]);
  else
    textf(o, "Does NOT fit: device %d (stage %d) needs %.3f GiB of %.3f GiB, over by %.3f GiB.",
          e->oom_device, e->oom_stage, e->mem[e->oom_device] / GIB, e->cap[e->oom_device] / GIB,
          e->oom_bytes / GIB);
  if (c->mem_margin > 0)
    textf(o, " Capacities are %g %% of each device's memory (a %g %% memory margin; e.g. %s: "
          "%.3f of %.3f GiB).", 100 * (1 - c->mem_margin), 100 * c->mem_margin, c->types[0].name,
          c->types[0].mem / GIB, c->types[0].mem_total / GIB);
  else
    textf(o, " Capacities are the devices' whole memory (no memory margin; --mem-margin keeps "
          "some free).");
  textf(o, " Memory counts model states (sharded as each layer's mode says), ZeRO-3 gather "
        "buffers, saved activations, working memory "
        "and each type's reserve (docs/cost-model.md, section 4).");
  para_end(o);
}

static void section_bottleneck(doc *o, const hp_plan *pl, const hp_eval *e)
{
  static const char *const h[] = { "term", "seconds", "share" };
  hp_bottleneck bn;
  char why[400];
  hp_bottleneck_find(pl, e, &bn);
  heading(o, 2, "Bottleneck");
  para_begin(o);
  textf(o, "The %s: %s.", hp_bn_name(bn.kind), hp_bottleneck_describe(&bn, e, why, sizeof why));
  para_end(o);
  table_begin(o, 3, h);
  for (int k = 0; k < HP_BN_COUNT; k++)
    rowf(o, "%s%s\t%.6f\t%.1f %%", hp_bn_name((hp_bn_kind)k),
         k == HP_BN_STAGE ? " (x gas)" : "", bn.term[k], 100 * bn.term[k] / e->iteration_time);
  rowf(o, "iteration\t%.6f\t100 %%", e->iteration_time);
  table_end(o);
}

static void section_coverage(doc *o, const hp_problem *prob, const hp_coverage *cv)
{
  heading(o, 2, "Profile coverage");
  para_begin(o);
  if (!prob->profile && cv->total.shape > 0) {
    textf(o, "No profile: of the %d (layer kind, device type, tp, mbs) cells this plan uses, "
          "%d are estimated by the shape model (the layers' GEMM and attention shapes, "
          "docs/cost-model.md) and %d from FLOPs / (peak x efficiency). Measured times "
          "(hetplan-profile, docs/profiler.md) make the figures above firmer.",
          cv->total.cells, cv->total.shape, cv->total.estimated);
  } else if (!prob->profile) {
    textf(o, "No profile: every layer time is estimated (FLOPs / (peak x efficiency), plus the "
          "tensor-parallel all-reduce). Measured times (hetplan-profile, docs/profiler.md) make "
          "the figures above firmer.");
  } else {
    textf(o, "Of the %d (layer kind, device type, tp, mbs) cells this plan uses, %d are "
          "measured by the profile, %d derived from its points at other micro-batch sizes and "
          "%d estimated from FLOPs.", cv->total.cells, cv->total.measured, cv->total.derived,
          cv->total.estimated);
    if (cv->total.shape > 0)
      textf(o, " The other %d are the shape model's estimates (docs/cost-model.md).",
            cv->total.shape);
    if (cv->total.estimated > 0) {
      int shown = 0;
      textf(o, " Estimated:");
      for (int k = 0; k < cv->n_kinds && shown < 8; k++)
        if (cv->by_kind[k].estimated > 0)
          textf(o, "%s %s (%d of %d cells)", shown++ ? "," : "", cv->kinds[k],
                cv->by_kind[k].estimated, cv->by_kind[k].cells);
      textf(o, ".");
    }
  }
  para_end(o);
}

static void section_baselines(doc *o, const hp_eval *e, const hp_report_in *in)
{
  static const char *const h[] = { "solver", "status", "iteration s", "vs this plan", "configuration" };
  char cfg[400];
  heading(o, 2, "Compared with the baselines");
  if (in->n_rows == 0) {
    para_begin(o);
    textf(o, "No baseline was run.");
    para_end(o);
  } else {
    table_begin(o, 5, h);
    rowf(o, "this plan\t%s\t%.6f\t-\t-", e->feasible ? "fits" : "does not fit", e->iteration_time);
    for (int i = 0; i < in->n_rows; i++) {
      const hp_report_row *r = &in->rows[i];
      if (!r->plan) {
        rowf(o, "%s\tno plan\t-\t-\t%s", r->name, r->why ? r->why : "");
        continue;
      }
      hp_plan_describe(r->plan, cfg, sizeof cfg);
      if (r->fits)
        rowf(o, "%s\tfits\t%.6f\t%+.2f %%\t%s", r->name, r->time,
             100 * (r->time / e->iteration_time - 1), cfg);
      else
        rowf(o, "%s\tdoes not fit\t%.6f\tnot ranked\t%s", r->name, r->time, cfg);
    }
    table_end(o);
    para_begin(o);
    textf(o, "'vs this plan': how much longer (+) or shorter (-) each baseline's iteration is, "
          "by the same evaluator; plans that do not fit are never ranked.");
    para_end(o);
  }
  heading(o, 2, "Bound");
  para_begin(o);
  if (in->info && in->info->has_solver && isfinite(in->info->lower_bound) &&
      !strcmp(in->info->space, "full")) {
    double gap = (e->iteration_time - in->info->lower_bound) / e->iteration_time;
    textf(o, "Proven lower bound %.6f s over the whole search space (solver %s, status %s): "
          "this plan is within %.2f %% of the optimum.", in->info->lower_bound, in->info->solver,
          in->info->status, 100 * (gap > 0 ? gap : 0));
  } else if (in->info && in->info->has_solver) {
    textf(o, "No bound over the whole space is known: solver %s (status %s) searched %s "
          "space. 'hetplan plan --solver cbc' (or glpk) proves one when the search completes, "
          "over the space it covers: sharding modes dp and zdp, no slices, every device "
          "used ('--sharding dp,zdp').",
          in->info->solver, in->info->status[0] ? in->info->status : "unknown",
          !strcmp(in->info->space, "full") ? "the whole" : "a restricted");
  } else {
    textf(o, "No bound is known: the plan file has no solver block.");
  }
  para_end(o);
}

static void pictures(doc *o, const hp_problem *prob, const hp_plan *pl, const hp_eval *e,
                     hp_diag *d)
{
  char *svg = NULL;
  hp_sim sim = {0};
  heading(o, 2, "Placement");
  para_begin(o);
  textf(o, "The nodes by class, each GPU coloured by its stage; then the pipeline in stage "
        "order with the hand-off links: the slowest lane's bandwidth and the bytes each "
        "micro-batch sends on a TP lane, each way.");
  para_end(o);
  if (hp_plan_svg(prob, pl, &svg, d) == HP_OK) {
    hp__sb_printf(&o->b, "<div class=\"figure\">\n%s</div>\n", svg);
    free(svg);
    svg = NULL;
  }
  heading(o, 2, "One iteration, simulated");
  if (hp_simulate(prob, pl, &sim, d) == HP_OK && hp_sim_svg(prob, pl, &sim, &svg, d) == HP_OK) {
    para_begin(o);
    textf(o, "The discrete-event simulation of one iteration (docs/simulator.md): %.6f s "
          "against the formula's %.6f s. One row per stage in pipeline order, its replicas "
          "folded into the one that finishes last; forwards and backwards numbered with their "
          "micro-batch, transfers under them, the stage's all-reduce at the end.",
          sim.iteration_time, e->iteration_time);
    para_end(o);
    hp__sb_printf(&o->b, "<div class=\"figure\">\n%s</div>\n", svg);
  }
  free(svg);
  hp_sim_release(&sim);
}

hp_err hp_report_write(const hp_problem *prob, const hp_plan *pl, const hp_report_in *in,
                       char **out, hp_diag *d)
{
  const hp_model *m = prob->model;
  const hp_cluster *c = prob->cluster;
  doc o = { {0}, in->html };
  hp_eval own = {0};
  const hp_eval *e = in->eval;
  hp_coverage *cv = NULL;
  char cfg[512], title[512];
  hp_err err;
  *out = NULL;
  if (!e) {
    if ((err = hp_evaluate(prob, pl, &own, d))) return err;
    e = &own;
  }
  if ((err = hp_coverage_compute(prob, HP_COV_PLAN, pl, &cv, d))) goto done;
  snprintf(title, sizeof title, "Plan report%s%s", in->title ? ": " : "", in->title ? in->title : "");
  if (o.html) {
    hp__sb_printf(&o.b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<title>");
    text(&o, title);
    hp__sb_printf(&o.b, "</title>\n<style>\nbody { font-family: sans-serif; max-width: 70em; "
                  "margin: 2em auto; }\ntable { border-collapse: collapse; margin: 1em 0; }\n"
                  "th, td { border: 1px solid #bbb; padding: 0.2em 0.6em; text-align: left; }\n"
                  "th { background: #eee; }\n.figure { overflow-x: auto; }\n"
                  ".figure svg { max-width: 100%%; height: auto; }\n</style>\n</head>\n"
                  "<body>\n");
    heading(&o, 1, title);
  } else {
    hp__sb_printf(&o.b, "# %s\n", title);
  }
  para_begin(&o);
  textf(&o, "Model %s (%d layers, %.4g B parameters) on cluster %s (%d GPUs on %d nodes), "
        "global batch %ld, %s schedule. Figures from the evaluator, cost model %s (hetplan %s).",
        m->name, m->n_layers, hp_model_unique_params(m) / 1e9, c->name, c->n_devices, c->n_nodes,
        prob->job.gbs, hp_schedule_name(prob->job.schedule), HP_COST_MODEL_VERSION, HETPLAN_VERSION);
  para_end(&o);

  heading(&o, 2, "Configuration");
  para_begin(&o);
  textf(&o, "%s.", hp_plan_describe(pl, cfg, sizeof cfg));
  if (in->info && in->info->has_solver)
    textf(&o, " Found by solver %s (status %s, space %s).", in->info->solver,
          in->info->status[0] ? in->info->status : "?", in->info->space[0] ? in->info->space : "?");
  para_end(&o);

  section_throughput(&o, prob, pl, e);
  section_stages(&o, prob, pl, e);
  section_memory(&o, prob, pl, e);
  section_bottleneck(&o, pl, e);
  section_coverage(&o, prob, cv);
  section_baselines(&o, e, in);
  if (o.html) {
    pictures(&o, prob, pl, e, d);
    hp__sb_printf(&o.b, "</body>\n</html>\n");
  }
  if (o.b.failed) {
    err = hp_fail(d, HP_NOMEM, "out of memory writing the report");
    goto done;
  }
  *out = o.b.s;
  o.b.s = NULL;
done:
  free(o.b.s);
  hp_coverage_destroy(&cv);
  hp_eval_release(&own);
  return err;
}
