/* cmd_export_lp.c -- `hetplan export-lp` and `hetplan decode`: a MIP as a file for external
 * solvers (the pattern program of a configuration, the exact MIP of its Megatron-order
 * placement, or the exact MIP of a plan's placement), and an external solution back into
 * a plan that the evaluator scores. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hetplan/hp_mip.h"

static const char export_help[] =
  "usage: hetplan export-lp --model M --cluster C --gbs N --config pp=P,tp=T,dp=D,mbs=B\n"
  "                         [--fixed] [--schedule S] [--profile F] [--job J] [--mps] [-o FILE]\n"
  "                         [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST] [--uniform-sharding]\n"
  "                         [--idle-devices] [--max-slices N] [--compute-model shape|flops]\n"
  "       hetplan export-lp --model M --cluster C --gbs N --plan P [...]\n"
  "\n"
  "Writes a MIP as CPLEX LP, or free MPS with --mps, to FILE or stdout (docs/formulation.md;\n"
  "times in milliseconds, memory in GiB):\n"
  "  --config C         the pattern program of configuration C: placement inside it, as\n"
  "                     counts of TP groups per node class; its optimum bounds every plan\n"
  "                     of C (the program the glpk and cbc solvers solve);\n"
  "  --config C --fixed the exact MIP of C with the Megatron-order placement (TP ranks on\n"
  "                     consecutive GPUs, then replicas, then stages);\n"
  "  --plan P           the exact MIP of P's configuration and placement (its stages,\n"
  "                     recompute and sharding are the MIP's to choose).\n"
  "glpsol and cbc read both formats:\n"
  "  glpsol --lp f.lp -o f.txt        cbc f.lp -solve -solu f.sol -quit\n"
  "and 'hetplan decode' with the same flags turns either solution file into a plan.\n";

static const char decode_help[] =
  "usage: hetplan decode --model M --cluster C --gbs N (--config C [--fixed] | --plan P)\n"
  "                      --solution FILE [--schedule S] [--profile F] [--job J] [-o plan.json]\n"
  "                      [--sequence-parallel] [--grad-sync end|overlap] [--sharding LIST] [--uniform-sharding]\n"
  "                      [--idle-devices] [--max-slices N] [--compute-model shape|flops]\n"
  "\n"
  "Reads a solution of the MIP that 'hetplan export-lp' wrote with the same flags (a cbc\n"
  "-solu file or a glpsol -o report: each line that names a column gives its value;\n"
  "columns not named are 0) and writes the plan it decodes to, with the evaluator's\n"
  "figures. A pattern program's solution gives each stage's kind and TP-group counts: the\n"
  "plan takes groups of those classes (one node per single-node stage, whole nodes first)\n"
  "and the best of the solution's own split and the layer DP's for that placement.\n";

typedef struct lp_opts {
  const char *config;    /* "pp=..,tp=..,dp=..,mbs=.." */
  int fixed;             /* the exact MIP of the Megatron-order placement */
  int mps;               /* export-lp: free MPS */
  const char *solution;  /* decode: a solver's solution file */
  int pp, tp, dp, mbs;   /* --config, read by check */
} lp_opts;

#define FLAG_CONFIG { .name = "config", .arg = "pp=P,tp=T,dp=D,mbs=B", \
  CLI_OWN_TEXT(lp_opts, config), .help = "the configuration whose program to write" }
#define FLAG_FIXED { .name = "fixed", CLI_OWN_SWITCH(lp_opts, fixed), \
  .help = "with --config: the exact MIP of the Megatron-order placement" }

static const cli_flag export_flags[] = {
  CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_GBS, FLAG_CONFIG, FLAG_FIXED, CLI_FLAG_PLAN,
  CLI_FLAG_SCHEDULE, CLI_FLAGS_JOB_12, CLI_FLAG_PROFILE, CLI_FLAG_JOB,
  { .name = "mps", CLI_OWN_SWITCH(lp_opts, mps), .help = "free MPS instead of CPLEX LP" },
  CLI_FLAG_OUT,
};

static const cli_flag decode_flags[] = {
  CLI_FLAG_MODEL, CLI_FLAG_CLUSTER, CLI_FLAG_GBS, FLAG_CONFIG, FLAG_FIXED, CLI_FLAG_PLAN,
  { .name = "solution", .arg = "FILE", CLI_OWN_TEXT(lp_opts, solution), .file = CLI_FILE_IN,
    .help = "a cbc -solu file or a glpsol -o report of the same program" },
  CLI_FLAG_SCHEDULE, CLI_FLAGS_JOB_12, CLI_FLAG_PROFILE, CLI_FLAG_JOB, CLI_FLAG_OUT,
};

/* Parses "pp=2,tp=1,dp=2,mbs=1". */
static int parse_config(const char *s, int *pp, int *tp, int *dp, int *mbs)
{
  char buf[128], *save = NULL;
  *pp = *tp = *dp = *mbs = 0;
  snprintf(buf, sizeof buf, "%s", s);
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '='), *end;
    long v;
    if (!eq) return -1;
    *eq = '\0';
    v = strtol(eq + 1, &end, 10);
    if (*end || v < 1 || v > 1000000) return -1;
    if (!strcmp(t, "pp")) *pp = (int)v;
    else if (!strcmp(t, "tp")) *tp = (int)v;
    else if (!strcmp(t, "dp")) *dp = (int)v;
    else if (!strcmp(t, "mbs")) *mbs = (int)v;
    else return -1;
  }
  return *pp && *tp && *dp && *mbs ? 0 : -1;
}

/* The MIP of the flags: the pattern program of --config, the exact MIP of --config with
 * the Megatron-order placement (--fixed), or the exact MIP of --plan's placement. */
typedef struct program {
  hp_problem *prob;
  hp_plan *pl;          /* the configuration (and placement, for an exact MIP) */
  hp_mip *m;
  int pattern;          /* the pattern program: pmap and pt hold its maps */
  hp_mip_map map;
  hp_mip_pmap pmap;
  hp_classes cl;
  hp_patterns pt;
} program;

static void program_release(program *g)
{
  hp_mip_destroy(&g->m);
  hp_mip_map_release(&g->map);
  hp_mip_pmap_release(&g->pmap);
  hp_patterns_release(&g->pt);
  hp_classes_release(&g->cl);
  hp_plan_destroy(&g->pl);
  hp_problem_destroy(&g->prob);
}

/* The flags of the program, before any file is read: --plan, or --config read. */
static int check_program(cli_ctx *c)
{
  lp_opts *o = c->opts;
  const char *cmd = c->cmd->name;
  if (c->core.plan) {
    if (o->config || o->fixed) {
      fprintf(stderr, "hetplan %s: --plan gives the configuration and placement: leave out "
              "--config and --fixed\n", cmd);
      return EXIT_USAGE;
    }
    return EXIT_OK_;
  }
  if (!o->config || parse_config(o->config, &o->pp, &o->tp, &o->dp, &o->mbs)) {
    fprintf(stderr, "hetplan %s: --config: expected pp=P,tp=T,dp=D,mbs=B (all positive), got "
            "'%s' (or give --plan P)\n", cmd, o->config ? o->config : "nothing");
    return EXIT_USAGE;
  }
  return EXIT_OK_;
}

/* The program of the problem (and plan) the prologue loaded, which g takes over. */
static int build(cli_ctx *c, program *g)
{
  const lp_opts *o = c->opts;
  const char *cmd = c->cmd->name;
  int pp = o->pp, tp = o->tp, dp = o->dp, mbs = o->mbs;
  hp_diag d;
  hp_err err;
  memset(g, 0, sizeof *g);
  cli_diag_init(&d);
  g->prob = c->prob;
  g->pl = c->plan;
  c->prob = NULL;
  c->plan = NULL;
  if (g->pl) {   /* --plan */
    if ((err = hp_mip_build(g->prob, g->pl, 1, &g->m, &g->map, &d))) return cli_fail(&d, err);
    return EXIT_OK_;
  }
  if ((long)pp * tp * dp != g->prob->cluster->n_devices) {   /* before allocating the plan */
    fprintf(stderr, "hetplan %s: --config %s is not a configuration of this instance:\n", cmd,
            o->config);
    return cli_fail(&d, hp_fail(&d, HP_PLAN, "plan: pp * tp * dp = %d * %d * %d = %ld but "
                                "cluster '%s' has %d devices", pp, tp, dp, (long)pp * tp * dp,
                                g->prob->cluster->name, g->prob->cluster->n_devices));
  }
  if ((err = hp_plan_create(&g->pl, pp, tp, dp, g->prob->model->n_layers, &d))) return cli_fail(&d, err);
  g->pl->mbs = mbs;
  g->pl->schedule = g->prob->job.schedule;
  hp_plan_place_in_order(g->pl);
  if (pp <= g->pl->n_layers) hp_plan_split_even(g->pl);
  if ((err = hp_plan_set_gas(g->prob, g->pl, &d)) || (err = hp_plan_validate(g->prob, g->pl, &d))) {
    fprintf(stderr, "hetplan %s: --config %s is not a configuration of this instance:\n", cmd,
            o->config);
    return cli_fail(&d, err);
  }
  if (o->fixed) err = hp_mip_build(g->prob, g->pl, 1, &g->m, &g->map, &d);
  else {
    g->pattern = 1;
    if (!(err = hp_classes_build(g->prob, HP_PATTERN_MAX_CLASSES, &g->cl, &d)) &&
        !(err = hp_patterns_build(g->prob, &g->cl, g->pl, &g->pt, &d)))
      err = hp_mip_build_pattern(g->prob, &g->pt, &g->m, &g->pmap, &d);
  }
  return err ? cli_fail(&d, err) : EXIT_OK_;
}

static int run_export(cli_ctx *c)
{
  const lp_opts *o = c->opts;
  const char *out = c->core.out;
  program g;
  hp_diag d;
  hp_err err;
  char *text = NULL;
  int rc;
  if (!(rc = build(c, &g))) {
    cli_diag_init(&d);
    err = o->mps ? hp_mip_write_mps(g.m, &text, &d) : hp_mip_write_lp(g.m, &text, &d);
    rc = err ? cli_fail(&d, err) : cli_write(out, text);
    if (!rc && out) {
      int n_int = 0;
      for (int j = 0; j < g.m->n_cols; j++) n_int += g.m->cols[j].integer;
      fprintf(stderr, "hetplan: wrote %s (%s): %d columns (%d integer), %d rows; objective in "
              "milliseconds\n", out, g.pattern ? "pattern program, placement free" :
              "exact MIP, placement fixed", g.m->n_cols, n_int, g.m->n_rows);
    }
  }
  free(text);
  program_release(&g);
  return rc;
}

/* Reads "name ... value" lines: the first number after a column's name is its value. */
static int read_solution(const char *path, const hp_mip *m, double *x)
{
  FILE *f = fopen(path, "r");
  char line[1024];
  int found = 0;
  if (!f) return -1;
  memset(x, 0, (size_t)m->n_cols * sizeof *x);
  while (fgets(line, sizeof line, f)) {
    char *save = NULL, *tok;
    int col = -1;
    for (tok = strtok_r(line, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
      if (col < 0) {
        for (int j = 0; j < m->n_cols; j++)
          if (!strcmp(tok, m->cols[j].name)) { col = j; break; }
      } else {
        char *end;
        double v = strtod(tok, &end);
        if (*end == '\0' && end != tok) { x[col] = v; found++; break; }
      }
    }
  }
  fclose(f);
  return found;
}

static int check_decode(cli_ctx *c)
{
  const lp_opts *o = c->opts;
  if (!o->solution) return cli_usage_error("decode", "missing --solution FILE");
  return check_program(c);
}

static int run_decode(cli_ctx *c)
{
  const lp_opts *o = c->opts;
  program g;
  hp_eval e = {0};
  hp_diag d;
  hp_err err;
  char *text = NULL;
  double *x = NULL;
  int rc;
  if ((rc = build(c, &g))) goto done;
  cli_diag_init(&d);
  x = calloc((size_t)g.m->n_cols, sizeof *x);
  int n = x ? read_solution(o->solution, g.m, x) : -1;
  if (n <= 0) {
    fprintf(stderr, "hetplan: error: %s: %s\n", o->solution,
            n < 0 ? "cannot read the solution file" : "names none of the MIP's columns: is it a "
            "solution of the MIP 'hetplan export-lp' wrote with these flags?");
    rc = EXIT_INPUT;
    goto done;
  }
  if (g.pattern) {
    int found = 0;
    err = hp_mip_decode_pattern_plan(g.prob, &g.pt, &g.pmap, x, INFINITY, g.pl, &found, &d);
    if (!err && !found) err = hp_fail(&d, HP_PLAN, "no split of the decoded placement fits in memory");
  } else { hp_mip_decode(&g.map, x, g.pl); err = HP_OK; }
  if (err || (err = hp_evaluate(g.prob, g.pl, &e, &d)) ||
      (err = hp_plan_to_json(g.prob, g.pl, &e, NULL, NULL, NULL, &text, &d))) {
    fprintf(stderr, "hetplan decode: the solution does not decode to a valid plan:\n");
    rc = cli_fail(&d, err);
    goto done;
  }
  fprintf(stderr, "hetplan: decoded %d values: iteration %.6f s by the evaluator (MIP objective "
          "at the file's values %.6f%s)%s\n", n, e.iteration_time,
          hp_mip_objective(g.m, x) * g.m->obj_scale, g.pattern ? ", a bound" : "",
          e.feasible ? "" : "; the plan does not fit in memory");
  rc = cli_write(c->core.out, text);
  if (!rc && !e.feasible) rc = EXIT_OOM;
done:
  free(x);
  free(text);
  hp_eval_release(&e);
  program_release(&g);
  return rc;
}

const cli_cmd cli_cmd_export_lp = {
  .name = "export-lp",
  .summary = "write the MIP of one configuration as CPLEX LP or free MPS",
  .help = export_help,
  CLI_FLAGS(export_flags),
  .opts_size = sizeof(lp_opts),
  .steps = CLI_PLAN_IF_GIVEN,
  .check = check_program,
  .run = run_export,
};

const cli_cmd cli_cmd_decode = {
  .name = "decode",
  .summary = "turn an external solver's solution of that MIP into a plan",
  .help = decode_help,
  CLI_FLAGS(decode_flags),
  .opts_size = sizeof(lp_opts),
  .steps = CLI_PLAN_IF_GIVEN,
  .check = check_decode,
  .run = run_decode,
};
