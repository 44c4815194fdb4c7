/* probe_bounds.c -- what binds a certificate's bound (make probe-bounds; prints, asserts
 * nothing). For every configuration the certificate bounds (or one, --config), runs the
 * search driver's own phase-2 item (hp__pattern_config: the pattern DP with the cutoff,
 * unsplit kinds first, within a share of seconds) and prints its bound, how it was counted
 * (exact, by ranks or sides and priced, partial, merged), its work and the evaluator's time
 * of the plan decoded from its sequence. With --config it also prints the pattern DP's best
 * sequence (each stage's layers, classes, single-node or spanning, own or shared nodes, and
 * the terms of its value: M, S, Q, U, pattern_dp.c) from a run with the chosen count of
 * groups, and with --descend S the best plan the placement descent finds for that
 * configuration in S seconds: the two sides of the gap that configuration leaves. Run from
 * the repository root; see bench/README.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetplan/hetplan.h"
#include "../solvers/search.h"

static void usage(void)
{
  fprintf(stderr,
          "usage: probe_bounds --model M --cluster C --gbs N [--sharding LIST] [--cutoff S]\n"
          "                    [--share S] [--frontier N]\n"
          "                    [--config PP,TP,DP,MBS [--count auto|ranks|sides|class]\n"
          "                                           [--descend S [--start PLAN]\n"
          "                                                        [--descent-out FILE]]\n"
          "                                           [--plan-out FILE]]\n"
          "  --cutoff S    the incumbent the search would hold (seconds; default none)\n"
          "  --share S     seconds each configuration's DP may take (default 20)\n"
          "  --frontier N  points a frontier keeps before it merges (default the DP's)\n"
          "  --config      one configuration: also its best sequence, from a run that counts\n"
          "                TP groups as --count says (three classes or more), and with\n"
          "                --descend the best plan the placement descent finds in S seconds\n"
          "  --start P     the descent also starts from plan file P (of that configuration)\n"
          "  --descent-out F  write the descent's best plan to F\n"
          "  --plan-out F  with --config, write the plan the best sequence decodes to (a plan\n"
          "                file, for hetplan evaluate)\n"
          "exit codes: 0 done, 1 an input or a configuration failed, 2 usage\n");
  exit(2);
}

/* A number that is the whole argument, finite and at least `least`; else usage. */
static double number(const char *v, double least)
{
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || !isfinite(x) || x < least) usage();
  return x;
}

static const char *count_name(const hp_cfg_bound *b)
{
  if (b->enumerated) return "enumerated";
  if (b->exact) return "exact";
  if (b->sides == 2) return "ranks-priced";
  if (b->sides == 1) return "sides-priced";
  return "priced";
}

/* The classes of a kind's mask, by type name, joined with '+'. */
static void mask_text(const hp_problem *p, const hp_classes *cl, unsigned mask, char *buf, size_t n)
{
  size_t k = 0;
  buf[0] = '\0';
  for (int x = 0; x < cl->n && k < n; x++)
    if (mask >> x & 1)
      k += (size_t)snprintf(buf + k, n - k, "%s%s#%d", k ? "+" : "",
                            p->cluster->types[cl->cls[x].type].name, x);
}

/* Writes plan `pl` of p to `path` as a plan file; 1 (said on stderr) where it cannot. */
static int write_plan(const hp_problem *p, const hp_plan *pl, const char *path, const char *solver)
{
  hp_eval e;
  hp_diag d = {0};
  char *text = NULL;
  FILE *f = NULL;
  memset(&e, 0, sizeof e);
  int bad = hp_evaluate(p, pl, &e, &d) != HP_OK ||
            hp_plan_to_json(p, pl, &e, NULL, solver, NULL, &text, &d) != HP_OK || !(f = fopen(path, "w"));
  if (f) bad |= (fputs(text, f) < 0) | (fclose(f) != 0);
  if (bad) fprintf(stderr, "probe_bounds: cannot write %s%s%s\n", path, d.msg[0] ? ": " : "", d.msg);
  free(text);
  hp_eval_release(&e);
  return bad;
}

/* The pattern DP's best sequence for configuration c (its own run, with the cutoff); 1
 * where its decoded plan was to be written to plan_out and could not be. */
static int sequence(const hp_problem *p, const hp_classes *cl, const hp_config *c, double cutoff,
                     double share, int count, int frontier, const char *plan_out)
{
  hp_plan *pl = NULL, *dec = NULL;
  hp_patterns pt;
  hp_pat_opts o;
  hp_pat_result r;
  hp_diag d = {0};
  int found = 0, bad = 0, wrote = 0;
  double t0 = hp__now();
  memset(&pt, 0, sizeof pt);
  memset(&r, 0, sizeof r);
  if (hp__plan_for(p, c, &pl, &d) || hp_patterns_build(p, cl, pl, &pt, &d)) {
    printf("  sequence: %s\n", d.msg);
    hp_plan_destroy(&pl);
    if (plan_out) fprintf(stderr, "probe_bounds: no plan decoded: %s not written\n", plan_out);
    return plan_out != NULL;
  }
  printf("  classes:");
  for (int x = 0; x < pt.n_cls; x++)
    printf(" %s#%d (%d groups, %d a node)", p->cluster->types[cl->cls[x].type].name, x,
           pt.groups[x], pt.per_node[x]);
  printf("; kinds %d\n", pt.n_kind);
  hp__pat_opts_init(&o);
  o.exact = -1;
  o.count = count;
  o.cutoff = cutoff;
  o.frontier = frontier;
  o.deadline = t0 + share;
  if (hp__pattern_bound(p, &pt, &o, &r, &d) != HP_OK || !r.done) {
    printf("  sequence: not done in %.1f s%s%s\n", hp__now() - t0, d.msg[0] ? ": " : "", d.msg);
    goto end;
  }
  printf("  sequence run: bound %.6f %s%s%s in %.1f s\n", r.bound, r.exact ? "exact" : "priced",
         r.partial ? " partial" : "", r.merged ? " merged" : "", hp__now() - t0);
  if (!r.found) {
    printf("  no sequence below the cutoff\n");
    goto end;
  }
  printf("  best sequence: DP value %.6f = M %.6f + S %.6f + Q %.6f + U %.6f\n", r.value, r.fig[0],
         r.fig[1], r.fig[2], r.fig[3]);
  for (int s = 0; s < pt.tab.pp; s++) {
    const hp_stage_kind *k = &pt.kind[r.kind[s]];
    char m[256];
    mask_text(p, cl, k->mask, m, sizeof m);
    printf("    stage %2d  layers %2d-%-2d  %-24s %s%s%s\n", s, r.first[s], r.first[s + 1] - 1, m,
           k->single ? "single node" : "spanning",
           k->single ? "" : k->own == 1 ? ", own nodes" : k->own == -1 ? ", shared nodes" : "",
           r.rec[s] ? ", recompute" : "");
  }
  if (!hp__plan_for(p, c, &dec, &d) &&
      hp__pattern_plan(p, &pt, &r, INFINITY, NULL, dec, &found, &d) == HP_OK && found) {
    hp_eval e;
    memset(&e, 0, sizeof e);
    if (hp_evaluate(p, dec, &e, &d) == HP_OK)
      printf("  decoded plan: %.6f s (pipeline %.6f, sync %.6f, step %.6f)%s\n", e.iteration_time,
             e.pipeline_time, e.sync_time, e.step_time, e.feasible ? "" : ", does not fit");
    hp_eval_release(&e);
    if (plan_out) {
      bad = write_plan(p, dec, plan_out, "pattern-decode");
      wrote = 1;
    }
  }
end:
  if (plan_out && !wrote) {
    fprintf(stderr, "probe_bounds: no plan decoded: %s not written\n", plan_out);
    bad = 1;
  }
  hp_plan_destroy(&dec);
  hp__pat_result_release(&r);
  hp_patterns_release(&pt);
  hp_plan_destroy(&pl);
  return bad;
}

int main(int argc, char **argv)
{
  const char *model = NULL, *cluster = NULL, *sharding = NULL, *only = NULL, *plan_out = NULL;
  const char *start = NULL, *descent_out = NULL;
  hp_plan *start_plan = NULL;
  double cutoff = INFINITY, share = 20, descend = 0;
  int count = HP_PAT_COUNT_AUTO, counted = 0, frontier = 0, one[4] = {0}, failed = 0;
  long gbs = 0;
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_problem *p = NULL;
  hp_diag d = {0};
  hp_job job;
  hp_classes cl;
  hp_config *cfg = NULL;
  int n, shown = 0;
  memset(&job, 0, sizeof job);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) usage();
    if (!strcmp(a, "--model")) model = v;
    else if (!strcmp(a, "--cluster")) cluster = v;
    else if (!strcmp(a, "--gbs")) gbs = (long)number(v, 1);
    else if (!strcmp(a, "--sharding")) sharding = v;
    else if (!strcmp(a, "--cutoff")) cutoff = number(v, 0);
    else if (!strcmp(a, "--share")) share = number(v, 0);
    else if (!strcmp(a, "--descend")) descend = number(v, 0);
    else if (!strcmp(a, "--frontier")) frontier = (int)number(v, 0);
    else if (!strcmp(a, "--plan-out")) plan_out = v;
    else if (!strcmp(a, "--start")) start = v;
    else if (!strcmp(a, "--descent-out")) descent_out = v;
    else if (!strcmp(a, "--config")) {
      char tail;
      only = v;
      if (sscanf(v, "%d,%d,%d,%d%c", &one[0], &one[1], &one[2], &one[3], &tail) != 4) usage();
    } else if (!strcmp(a, "--count")) {
      counted = 1;
      if (!strcmp(v, "auto")) count = HP_PAT_COUNT_AUTO;
      else if (!strcmp(v, "ranks")) count = HP_PAT_COUNT_RANKS;
      else if (!strcmp(v, "sides")) count = HP_PAT_COUNT_SIDES;
      else if (!strcmp(v, "class")) count = HP_PAT_COUNT_CLASS;
      else usage();
    } else usage();
    i++;
  }
  if (!model || !cluster || gbs <= 0 || !(share > 0)) usage();
  if (!only && (counted || descend > 0 || plan_out)) usage();   /* they belong to --config */
  if ((start || descent_out) && !(descend > 0)) usage();         /* and these to --descend */
  job.gbs = gbs;
  job.schedule = HP_1F1B;
  if (sharding) {
    char word[16];
    for (const char *q = sharding; *q;) {
      size_t k = strcspn(q, ",");
      int mode;
      if (k == 0 || k >= sizeof word) usage();
      memcpy(word, q, k);
      word[k] = '\0';
      if ((mode = hp_shard_parse(word)) < 0) usage();
      job.sharding |= 1u << mode;
      q += k + (q[k] == ',');
    }
  }
  if (hp_model_load(model, &m, &d) || hp_cluster_load(cluster, &c, &d) ||
      hp_problem_create(&p, m, c, NULL, job, &d)) {   /* the problem owns m and c once made */
    fprintf(stderr, "probe_bounds: %s\n", d.msg);
    if (!p) { hp_model_destroy(&m); hp_cluster_destroy(&c); }
    hp_problem_destroy(&p);
    return 1;
  }
  if (start && hp_plan_load(start, p, &start_plan, &d)) {
    fprintf(stderr, "probe_bounds: %s\n", d.msg);
    hp_problem_destroy(&p);
    return 1;
  }
  if (hp_classes_build(p, HP_PATTERN_SEARCH_CLASSES, &cl, &d)) {
    fprintf(stderr, "probe_bounds: %s\n", d.msg);
    hp_plan_destroy(&start_plan);
    hp_problem_destroy(&p);
    return 1;
  }
  if ((n = hp__configs_cert(p, &cfg)) < 0) {
    fprintf(stderr, "probe_bounds: out of memory\n");
    hp_plan_destroy(&start_plan);
    hp_classes_release(&cl);
    hp_problem_destroy(&p);
    return 1;
  }
  printf("# %s on %s, gbs %ld, cutoff %g s, share %g s a configuration\n", model, cluster, gbs,
         cutoff, share);
  for (int i = 0; i < n; i++) {
    hp_limits lim;
    hp_result out;
    hp_cfg_bound b;
    double t0 = hp__now();
    hp_err e;
    if (only && !(cfg[i].pp == one[0] && cfg[i].tp == one[1] && cfg[i].dp == one[2] &&
                  cfg[i].mbs == one[3]))
      continue;
    shown++;
    hp_limits_init(&lim);
    lim.time_limit = INFINITY;
    memset(&b, 0, sizeof b);
    hp_result_init(&out);
    d.msg[0] = '\0';
    e = hp__pattern_config(p, &cl, &cfg[i], &lim, cutoff, t0 + share, share, frontier, 0, NULL,
                           &out, &b, &d);
    printf("pp %2d tp %d dp %2d mbs %3d  ", cfg[i].pp, cfg[i].tp, cfg[i].dp, cfg[i].mbs);
    if (e) {
      printf("error: %s\n", d.msg);
      failed = 1;
    } else if (!b.done) printf("no bound in %.1f s\n", hp__now() - t0);
    else
      printf("bound %.6f%s  %s%s%s  work %ld  %.1f s  decoded %.6f\n", b.bound,
             isfinite(cutoff) && b.bound >= cutoff ? " (pruned)" : "", count_name(&b),
             b.partial ? " partial" : "", b.merged ? " merged" : "", b.work, hp__now() - t0,
             out.plan ? out.objective : NAN);
    fflush(stdout);
    hp_result_release(&out);
    if (only) {
      failed |= sequence(p, &cl, &cfg[i], cutoff, share, count, frontier, plan_out);
      if (descend > 0) {
        hp_result best;
        long evals = 0;
        hp_result_init(&best);
        d.msg[0] = '\0';
        t0 = hp__now();
        if (hp__descend_config(p, &cfg[i], start_plan, &lim, t0 + descend, &best, &evals, &d) == HP_OK &&
            best.plan) {
          printf("  placement descent: %.6f s (%ld layer DPs, %.1f s)\n", best.objective, evals,
                 hp__now() - t0);
          if (descent_out) failed |= write_plan(p, best.plan, descent_out, "placement-descent");
        } else
          printf("  placement descent: no plan%s%s\n", d.msg[0] ? ": " : "", d.msg);
        hp_result_release(&best);
      }
    }
  }
  if (only && !shown)
    fprintf(stderr, "probe_bounds: %s is not a configuration of this problem\n", only);
  free(cfg);
  hp_plan_destroy(&start_plan);
  hp_classes_release(&cl);
  hp_problem_destroy(&p);
  return (only && !shown) || failed ? 1 : 0;
}
