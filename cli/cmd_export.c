/* cmd_export.c -- `hetplan export-lp` and `hetplan decode`: the MIP of one configuration
 * (Megatron-order placement) as a file for external solvers, and an external solution
 * back into a plan that the evaluator scores. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hetplan/hp_mip.h"

static const char export_help[] =
  "usage: hetplan export-lp --model M --cluster C --gbs N --config pp=P,tp=T,dp=D,mbs=B\n"
  "                         [--schedule S] [--profile F] [--job J] [--mps] [-o FILE]\n"
  "\n"
  "Writes the exact MIP of one configuration with the Megatron-order placement (TP ranks\n"
  "on consecutive GPUs, then replicas, then stages; docs/formulation.md) as CPLEX LP, or\n"
  "free MPS with --mps, to FILE or stdout. glpsol and cbc read both:\n"
  "  glpsol --lp f.lp -o f.txt        cbc f.lp -solve -solu f.sol -quit\n"
  "and 'hetplan decode' turns either solution file into a plan.\n";

static const char decode_help[] =
  "usage: hetplan decode --model M --cluster C --gbs N --config pp=P,tp=T,dp=D,mbs=B\n"
  "                      --solution FILE [--schedule S] [--profile F] [--job J] [-o plan.json]\n"
  "\n"
  "Reads a solution of the MIP that 'hetplan export-lp' wrote for the same instance and\n"
  "configuration (a cbc -solu file or a glpsol -o report: each line that names a column\n"
  "gives its value; columns not named are 0), decodes the stages, recompute flags and\n"
  "sharding, and writes the plan file with the evaluator's figures.\n";

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

/* The plan template of --config, and its MIP. */
static int build(const cli_opts *o, const char *cmd, hp_problem **prob, hp_plan **pl,
                 hp_mip **m, hp_mip_map *map)
{
  int pp, tp, dp, mbs, rc;
  hp_diag d;
  hp_err err;
  *pl = NULL;
  *m = NULL;
  if (!o->config || parse_config(o->config, &pp, &tp, &dp, &mbs)) {
    fprintf(stderr, "hetplan %s: --config: expected pp=P,tp=T,dp=D,mbs=B (all positive), got "
            "'%s'\n", cmd, o->config ? o->config : "nothing");
    return EXIT_USAGE;
  }
  if ((rc = cli_load_problem(o, cmd, prob))) return rc;
  cli_diag_init(&d);
  if ((long)pp * tp * dp != (*prob)->cluster->n_devices) {   /* before allocating the plan */
    fprintf(stderr, "hetplan %s: --config %s is not a configuration of this instance:\n", cmd,
            o->config);
    return cli_fail(&d, hp_fail(&d, HP_PLAN, "plan: pp * tp * dp = %d * %d * %d = %ld but "
                                "cluster '%s' has %d devices", pp, tp, dp, (long)pp * tp * dp,
                                (*prob)->cluster->name, (*prob)->cluster->n_devices));
  }
  if ((err = hp_plan_create(pl, pp, tp, dp, (*prob)->model->n_layers, &d))) return cli_fail(&d, err);
  (*pl)->mbs = mbs;
  (*pl)->schedule = (*prob)->job.schedule;
  hp_plan_place_in_order(*pl);
  if (pp <= (*pl)->n_layers) hp_plan_split_even(*pl);
  if ((err = hp_plan_set_gas(*prob, *pl, &d)) || (err = hp_plan_validate(*prob, *pl, &d)) ||
      (err = hp_mip_build(*prob, *pl, 1, m, map, &d))) {
    fprintf(stderr, "hetplan %s: --config %s is not a configuration of this instance:\n", cmd,
            o->config);
    return cli_fail(&d, err);
  }
  return EXIT_OK_;
}

int cmd_export_lp(int argc, char **argv)
{
  cli_opts o;
  hp_problem *prob = NULL;
  hp_plan *pl = NULL;
  hp_mip *m = NULL;
  hp_mip_map map = {0};
  hp_diag d;
  hp_err err;
  char *text = NULL;
  int rc = cli_parse(argc, argv, 2, "export-lp",
                     "model cluster gbs config schedule profile job mps out", &o);
  if (rc) return rc;
  if (o.help) { fputs(export_help, stdout); return EXIT_OK_; }
  if (!(rc = build(&o, "export-lp", &prob, &pl, &m, &map))) {
    cli_diag_init(&d);
    err = o.mps ? hp_mip_write_mps(m, &text, &d) : hp_mip_write_lp(m, &text, &d);
    rc = err ? cli_fail(&d, err) : cli_write(o.out, text);
    if (!rc && o.out) {
      int n_int = 0;
      for (int j = 0; j < m->n_cols; j++) n_int += m->cols[j].integer;
      fprintf(stderr, "hetplan: wrote %s: %d columns (%d integer), %d rows\n", o.out, m->n_cols,
              n_int, m->n_rows);
    }
  }
  free(text);
  hp_mip_destroy(&m);
  hp_mip_map_release(&map);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&prob);
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

int cmd_decode(int argc, char **argv)
{
  cli_opts o;
  hp_problem *prob = NULL;
  hp_plan *pl = NULL;
  hp_mip *m = NULL;
  hp_mip_map map = {0};
  hp_eval e = {0};
  hp_diag d;
  hp_err err;
  char *text = NULL;
  double *x = NULL;
  int rc = cli_parse(argc, argv, 2, "decode",
                     "model cluster gbs config solution schedule profile job out", &o);
  if (rc) return rc;
  if (o.help) { fputs(decode_help, stdout); return EXIT_OK_; }
  if (!o.solution) {
    fprintf(stderr, "hetplan decode: missing --solution FILE\n(see 'hetplan decode --help')\n");
    return EXIT_USAGE;
  }
  if ((rc = build(&o, "decode", &prob, &pl, &m, &map))) goto done;
  cli_diag_init(&d);
  x = calloc((size_t)m->n_cols, sizeof *x);
  int n = x ? read_solution(o.solution, m, x) : -1;
  if (n <= 0) {
    fprintf(stderr, "hetplan: error: %s: %s\n", o.solution,
            n < 0 ? "cannot read the solution file" : "names none of the MIP's columns: is it a "
            "solution of the MIP 'hetplan export-lp' wrote for this --config?");
    rc = EXIT_INPUT;
    goto done;
  }
  hp_mip_decode(&map, x, pl);
  if ((err = hp_evaluate(prob, pl, &e, &d)) || (err = hp_plan_to_json(prob, pl, &e, NULL, NULL, &text, &d))) {
    fprintf(stderr, "hetplan decode: the solution does not decode to a valid plan:\n");
    rc = cli_fail(&d, err);
    goto done;
  }
  fprintf(stderr, "hetplan: decoded %d values: iteration %.6f s by the evaluator (MIP objective "
          "at the file's values %.6f)%s\n", n, e.iteration_time, hp_mip_objective(m, x) * m->obj_scale,
          e.feasible ? "" : "; the plan does not fit in memory");
  rc = cli_write(o.out, text);
  if (!rc && !e.feasible) rc = EXIT_OOM;
done:
  free(x);
  free(text);
  hp_eval_release(&e);
  hp_mip_destroy(&m);
  hp_mip_map_release(&map);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&prob);
  return rc;
}
