/* cli.h -- shared parts of the hetplan command-line tool: exit codes, option parsing,
 * loading a problem from the common flags. The commands hold no planning logic. */
#ifndef HP_CLI_H
#define HP_CLI_H

#include <stdio.h>

#include "hetplan/hetplan.h"

/* Exit codes, documented in docs/cli.md and `hetplan --help`. */
enum {
  EXIT_OK_ = 0,
  EXIT_ERROR = 1,        /* internal error, out of memory */
  EXIT_USAGE = 2,        /* unknown command or flag, missing value */
  EXIT_INPUT = 3,        /* an input file is missing, malformed or inconsistent */
  EXIT_BAD_PLAN = 4,     /* the plan breaks the rules of a plan */
  EXIT_OOM = 5,          /* the plan does not fit in memory */
  EXIT_NO_PLAN = 6,      /* the solver found no plan (or proved none fits) */
  EXIT_INTERRUPTED = 7,  /* SIGINT or SIGTERM stopped the search: the plan written, if
                          * any, is the best found so far (its file says "interrupted") */
  EXIT_IO = 8            /* an output file cannot be written (the OS's reason is given) */
};

typedef struct cli_opts {
  const char *model, *cluster, *profile, *job, *plan, *out, *solver, *schedule;
  long gbs;
  int json, help, show_rejected, strict_profile;
  int top;
  const char *solvers;   /* compare: comma-separated names */
  const char *svg;       /* simulate, draw: where to write the picture */
  long samples;          /* validate: random plans to score */
  const char *config;    /* export-lp, decode: "pp=..,tp=..,dp=..,mbs=.." */
  const char *solution;  /* decode: a solver's solution file */
  int mps;
  int fixed;             /* export-lp, decode: the exact MIP of the Megatron-order placement */
  double time_limit;
  unsigned long seed;
  long max_work;
  /* issue 12: import-hf, export, report, --mem-margin */
  const char *input;     /* import-hf: the config file, given as a plain argument */
  long seq;              /* import-hf: sequence length, 0: the config's */
  const char *dtype;     /* import-hf: bf16, fp16, fp32 */
  const char *format;    /* export: megatron, deepspeed, torchrun */
  int html;              /* report: HTML instead of Markdown */
  double mem_margin;     /* --mem-margin, fraction kept free; < 0: not given */
} cli_opts;

/* Parses argv[first..] against the flags allowed by `allowed` (a space-separated list
 * such as "model cluster gbs json"). Prints the problem and returns EXIT_USAGE on error. */
int cli_parse(int argc, char **argv, int first, const char *cmd, const char *allowed,
              cli_opts *o);

/* Fills the flags a plan file's "inputs" block gives (--model, --cluster, --profile,
 * --gbs, --schedule, --mem-margin) where they are missing and o->plan is set; flags win.
 * Returns 1 if the plan file had such a block (cli_inputs.c). */
int cli_plan_inputs(cli_opts *o);

/* Loads model, cluster, optional profile and job from the flags into a problem. */
int cli_load_problem(const cli_opts *o, const char *cmd, hp_problem **out);

/* Prints "hetplan: error: <msg>" and maps the error to an exit code. */
int cli_fail(const hp_diag *d, hp_err err);

/* The state of the progress lines a search prints on stderr. */
typedef struct cli_progress { int printed, had_bound; double last; } cli_progress;
/* Installs the stderr progress observer in `lim`; `st` must outlive the search. */
void cli_progress_attach(hp_limits *lim, cli_progress *st);

/* A diagnostic whose warnings go to stderr. */
void cli_diag_init(hp_diag *d);

/* Writes text (and a final newline if it lacks one) to path ("-" or NULL: stdout). A
 * regular file is written to a temporary file beside it and renamed over it, so no one
 * ever sees half a file; a device or pipe (/dev/null) is written in place. Prints the
 * OS's reason and returns EXIT_IO on failure. */
int cli_write(const char *path, const char *text);

/* Before a long run: whether a file can be created where `path` would be written (0,
 * or EXIT_IO with the reason printed). */
int cli_check_output(const char *path);

/* Installs the SIGINT and SIGTERM handlers and points lim->stop at their flag: the first
 * signal asks the search to stop and return its best so far, a second one kills the
 * process. cli_interrupted() is the signal received, 0 if none. */
void cli_interrupt_attach(hp_limits *lim);
int cli_interrupted(void);

int cmd_evaluate(int argc, char **argv);
int cmd_expand(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_solvers(int argc, char **argv);
int cmd_describe(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_draw(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_export_lp(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_import_hf(int argc, char **argv);
int cmd_export_launch(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* A plan file read for a problem whose schedule neither --schedule nor the job file
 * chose sets it: a GPipe plan needs no --schedule gpipe. */
void cli_adopt_plan_schedule(hp_problem *prob, const hp_plan *plan);

/* Loads the problem and the plan of --plan (whose schedule it adopts, as above); prints
 * errors; 0 or an exit code. */
int cli_load_plan(const cli_opts *o, const char *cmd, hp_problem **prob, hp_plan **plan);

/* Profile coverage: computes it (prints errors; 0 or an exit code), prints it as a
 * summary line and, when anything is derived or estimated, a table by kind, type, tp
 * and mbs; under --strict-profile refuses estimated cells (EXIT_INPUT, with the
 * (kind, type, tp) groups named). */
int cli_coverage(const hp_problem *p, hp_cov_scope scope, const hp_plan *plan,
                 hp_coverage **out);
void cli_print_coverage(FILE *f, const hp_problem *p, const hp_coverage *c);
int cli_strict_profile(const hp_problem *p, const hp_coverage *c);

/* The team of processes under mpirun (team.c, docs/distributed.md). cli_team_start joins
 * it when mpirun started this process with others (0; -1 MPI failed; -2 this build has no
 * MPI); cli_team is then the team, else NULL (a plain run, exactly as without MPI);
 * cli_team_end leaves it. */
int cli_team_start(int *argc, char ***argv);
const hp_team *cli_team(void);
void cli_team_end(void);

/* Lowest free fraction of any device's memory, (capacity - M) / capacity. */
double cli_headroom(const hp_eval *e);

#endif
