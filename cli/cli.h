/* cli.h -- shared parts of the hetplan command-line tool: exit codes, the command and
 * flag tables, the prologue every command runs through (cli_prologue.c), errors and
 * output. The commands hold no planning logic. docs/adding-a-command.md. */
#ifndef HP_CLI_H
#define HP_CLI_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "hetplan/hetplan.h"
#include "hetplan/hp_team.h"   /* the MPI team the CLI provides (team.c) */

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

/* --- The flags commands share: the problem (files, job), a search's limits, the output.
 * Each command's table places those it takes (CLI_FLAG_MODEL, ...); a flag not given, or
 * not taken, keeps the value cli_core_init gives. */
typedef struct cli_core {
  const char *model, *cluster, *profile, *job;   /* files */
  const char *plan;         /* a plan file: --plan, or the plain argument */
  const char *schedule;     /* as given (checked); NULL: the job file's or the plan's */
  long gbs;                 /* -1: not given */
  /* the job's 1.2 fields (cost-model.md 1 "Job"): as given (checked), NULL or 0 when not
   * given; the job file's, else the plan file's "inputs", else the defaults fill them */
  int sequence_parallel;    /* --sequence-parallel */
  const char *grad_sync;    /* --grad-sync end|overlap */
  const char *sharding;     /* --sharding LIST */
  int uniform_sharding;     /* --uniform-sharding */
  int idle_devices;         /* --idle-devices */
  const char *max_slices;   /* --max-slices N (a power of two) */
  const char *framework;    /* --framework none|megatron|deepspeed|fsdp (the reserve's default) */
  const char *compute_model; /* --compute-model shape|flops */
  double mem_margin;        /* fraction of memory kept free; < 0: not given */
  int strict_profile;
  int accept_profile_mismatch;   /* a profile of other shapes taken knowingly */
  double time_limit;        /* seconds; 0: the solver's default */
  long seed;                /* hp_limits_init's (1) */
  long max_work;            /* 0: the solver's default */
  double memory_weight;     /* dhondt's alpha in [0, 1]; hp_limits_init's default when
                             * not given */
  const char *out;          /* -o, --out; NULL: stdout */
  int help;                 /* -h, --help */
  char **rest;              /* CLI_REST: the arguments after a bare `--`, as given */
  int n_rest;
} cli_core;

void cli_core_init(cli_core *core);

/* --- A flag, as a command's table declares it: what the parser accepts and checks, what
 * `hetplan flags` lists, what the suggestions for a misspelt flag are drawn from. */
typedef enum cli_kind {
  CLI_SWITCH,   /* no value: its int becomes 1 */
  CLI_TEXT,     /* a string (const char *): a file, a name, a list */
  CLI_CHOICE,   /* a string that `choice` accepts (returns >= 0) */
  CLI_INT,      /* a long in min..max */
  CLI_NUM,      /* a double between lo and hi (each end open or closed: `open`) */
  CLI_ARG       /* a plain argument only (const char *), never --name */
} cli_kind;

enum { CLI_OPEN_LO = 1, CLI_OPEN_HI = 2 };

/* A flag that names a file the command reads or writes (CLI_TEXT, CLI_ARG): the prologue
 * refuses an output that is an input (cli_outputs.c). */
enum { CLI_FILE_IN = 1, CLI_FILE_OUT = 2 };

typedef struct cli_flag {
  const char *name;       /* --name, without the dashes ("out" is also -o) */
  const char *arg;        /* the value as the help writes it ("FILE", "N"); NULL: a switch */
  cli_kind kind;
  int own;                /* 1: a field of the command's own options; 0: of cli_core */
  size_t at;              /* the field's offset there (CLI_AT_) */
  int positional;         /* also taken as the first plain argument (once) */
  long min, max;          /* CLI_INT */
  double lo, hi;          /* CLI_NUM */
  int open;               /* CLI_NUM: CLI_OPEN_LO, CLI_OPEN_HI */
  int (*choice)(const char *s);   /* CLI_CHOICE: >= 0 for a value it takes */
  const char *expect;     /* what a bad value is told it should be ("expected ...");
                           * NULL for CLI_INT: "an integer in MIN..MAX" and `note` */
  const char *note;       /* CLI_INT: after that range, e.g. " (2^40)" */
  const char *def;        /* own flags: the default, as it would be given; NULL: 0 or none */
  int file;               /* CLI_FILE_IN: a file it reads; CLI_FILE_OUT: one it writes */
  const char *help;       /* one line: what it sets */
} cli_flag;

/* The offset of field F of struct T, which must be of type V (a compile-time check: the
 * comparison of distinct pointer types warns). */
#define CLI_AT_(T, F, V) (offsetof(T, F) + 0 * sizeof(&((T *)0)->F == (V *)0))

/* The value's field and its kind, for a flag of the command's own options struct T. */
#define CLI_OWN_TEXT(T, F)   .kind = CLI_TEXT, .own = 1, .at = CLI_AT_(T, F, const char *)
#define CLI_OWN_ARG(T, F)    .kind = CLI_ARG, .own = 1, .at = CLI_AT_(T, F, const char *)
#define CLI_OWN_SWITCH(T, F) .kind = CLI_SWITCH, .own = 1, .at = CLI_AT_(T, F, int)
#define CLI_OWN_CHOICE(T, F, FN) \
  .kind = CLI_CHOICE, .own = 1, .at = CLI_AT_(T, F, const char *), .choice = (FN)
#define CLI_OWN_INT(T, F, MIN, MAX) \
  .kind = CLI_INT, .own = 1, .at = CLI_AT_(T, F, long), .min = (MIN), .max = (MAX)

/* The shared flags, defined once; a command's table places those it takes. */
#define CLI_FLAG_MODEL { .name = "model", .arg = "FILE", .kind = CLI_TEXT, .file = CLI_FILE_IN, \
  .at = CLI_AT_(cli_core, model, const char *), \
  .help = "the model file (docs/formats.md), or a Hugging Face config.json" }
#define CLI_FLAG_CLUSTER { .name = "cluster", .arg = "FILE", .kind = CLI_TEXT, .file = CLI_FILE_IN, \
  .at = CLI_AT_(cli_core, cluster, const char *), .help = "the cluster file (docs/formats.md)" }
#define CLI_FLAG_PROFILE { .name = "profile", .arg = "FILE", .kind = CLI_TEXT, .file = CLI_FILE_IN, \
  .at = CLI_AT_(cli_core, profile, const char *), \
  .help = "measured layer times and bandwidths (docs/formats.md)" }
#define CLI_FLAG_JOB { .name = "job", .arg = "FILE", .kind = CLI_TEXT, .file = CLI_FILE_IN, \
  .at = CLI_AT_(cli_core, job, const char *), \
  .help = "a job file with gbs and schedule (the flags win)" }
#define CLI_FLAG_PLAN { .name = "plan", .arg = "FILE", .kind = CLI_TEXT, .positional = 1, \
  .file = CLI_FILE_IN, \
  .at = CLI_AT_(cli_core, plan, const char *), \
  .help = "a plan file; its \"inputs\" give the flags of the problem not given" }
#define CLI_FLAG_GBS { .name = "gbs", .arg = "N", .kind = CLI_INT, \
  .at = CLI_AT_(cli_core, gbs, long), .min = 1, .max = HP_MAX_GBS, .note = " (2^40)", \
  .help = "the global batch size, in samples" }
#define CLI_FLAG_SCHEDULE { .name = "schedule", .arg = "S", .kind = CLI_CHOICE, \
  .at = CLI_AT_(cli_core, schedule, const char *), .choice = hp_schedule_parse, \
  .expect = "1f1b or gpipe", .help = "the pipeline schedule" }
/* The job's 1.2 fields (cost-model.md 1), placed wherever --gbs and --schedule are:
 * CLI_FLAGS_JOB_12 is all seven, in this order. */
#define CLI_FLAG_SEQUENCE_PARALLEL { .name = "sequence-parallel", .kind = CLI_SWITCH, \
  .at = CLI_AT_(cli_core, sequence_parallel, int), \
  .help = "sequence parallelism: activations divide by tp entirely (Megatron's --sequence-parallel)" }
#define CLI_FLAG_GRAD_SYNC { .name = "grad-sync", .arg = "WHEN", .kind = CLI_CHOICE, \
  .at = CLI_AT_(cli_core, grad_sync, const char *), .choice = hp_grad_sync_parse, \
  .expect = "end or overlap", \
  .help = "gradient reduction after the last backward (end) or overlapped with it (overlap)" }
#define CLI_FLAG_SHARDING { .name = "sharding", .arg = "LIST", .kind = CLI_CHOICE, \
  .at = CLI_AT_(cli_core, sharding, const char *), .choice = cli_sharding_parse, \
  .expect = "a comma-separated list of dp, zero1, zero2, zdp (zero3), e.g. dp,zero1", \
  .help = "the sharding modes a plan may use (default all four)" }
#define CLI_FLAG_UNIFORM_SHARDING { .name = "uniform-sharding", .kind = CLI_SWITCH, \
  .at = CLI_AT_(cli_core, uniform_sharding, int), \
  .help = "one sharding mode for every layer (what Megatron-LM and DeepSpeed launch)" }
#define CLI_FLAG_IDLE_DEVICES { .name = "idle-devices", .kind = CLI_SWITCH, \
  .at = CLI_AT_(cli_core, idle_devices, int), \
  .help = "a plan may leave devices unused" }
#define CLI_FLAG_MAX_SLICES { .name = "max-slices", .arg = "N", .kind = CLI_CHOICE, \
  .at = CLI_AT_(cli_core, max_slices, const char *), .choice = cli_slices_parse, \
  .expect = "a power of two in 1..1048576 (1, 2, 4, ...)", \
  .help = "the most slices a ZeRO-3 layer's weights are gathered in (OSDP; default 1)" }
/* The job's framework: the default reserve of types without reserved_gib (hp_framework.h) */
#define CLI_FLAG_FRAMEWORK { .name = "framework", .arg = "F", .kind = CLI_CHOICE, \
  .at = CLI_AT_(cli_core, framework, const char *), .choice = hp_framework_parse, \
  .expect = "none, megatron, deepspeed or fsdp", \
  .help = "the framework whose default reserve types without reserved_gib take (default none)" }
#define CLI_FLAG_COMPUTE_MODEL { .name = "compute-model", .arg = "M", .kind = CLI_CHOICE, \
  .at = CLI_AT_(cli_core, compute_model, const char *), .choice = hp_compute_model_parse, \
  .expect = "shape or flops", \
  .help = "layer times no profile measures: from GEMM and attention shapes (shape, default) or FLOPs / (peak x efficiency) (flops)" }
#define CLI_FLAGS_JOB_12 CLI_FLAG_SEQUENCE_PARALLEL, CLI_FLAG_GRAD_SYNC, CLI_FLAG_SHARDING, \
  CLI_FLAG_UNIFORM_SHARDING, CLI_FLAG_IDLE_DEVICES, CLI_FLAG_MAX_SLICES, CLI_FLAG_COMPUTE_MODEL
/* --sharding's value: the mask of the modes (1 << hp_shard) it lists, -1 if a word is
 * not a mode (or the list is empty). --max-slices's: the power of two, -1 otherwise. */
int cli_sharding_parse(const char *s);
int cli_slices_parse(const char *s);
/* The mask as --sharding would take it ("dp,zero1"), into buf. */
char *cli_sharding_text(unsigned mask, char *buf, size_t n);

#define CLI_FLAG_MEM_MARGIN { .name = "mem-margin", .arg = "F", .kind = CLI_NUM, \
  .at = CLI_AT_(cli_core, mem_margin, double), .lo = 0, .hi = 1, .open = CLI_OPEN_HI, \
  .expect = "the fraction of memory to keep free, in [0, 1) (0.1 keeps 10 %)", \
  .help = "memory kept free on every device (docs/memory-margin.md)" }
#define CLI_FLAG_STRICT_PROFILE { .name = "strict-profile", .kind = CLI_SWITCH, \
  .at = CLI_AT_(cli_core, strict_profile, int), \
  .help = "refuse (exit 3) when a layer time would be estimated, not measured" }
#define CLI_FLAG_ACCEPT_PROFILE { .name = "accept-profile-mismatch", .kind = CLI_SWITCH, \
  .at = CLI_AT_(cli_core, accept_profile_mismatch, int), \
  .help = "take a profile measured for other layer shapes (a warning names the difference)" }
#define CLI_FLAG_TIME_LIMIT { .name = "time-limit", .arg = "S", .kind = CLI_NUM, \
  .at = CLI_AT_(cli_core, time_limit, double), .lo = 0, .hi = 1e9, .open = CLI_OPEN_LO, \
  .expect = "a number of seconds in (0, 1e9]", .help = "the wall-clock limit of a search" }
#define CLI_FLAG_SEED { .name = "seed", .arg = "N", .kind = CLI_INT, \
  .at = CLI_AT_(cli_core, seed, long), .min = 0, .max = LONG_MAX, \
  .help = "the seed of what is random (default 1)" }
#define CLI_FLAG_MAX_WORK { .name = "max-work", .arg = "N", .kind = CLI_INT, \
  .at = CLI_AT_(cli_core, max_work, long), .min = 1, .max = LONG_MAX, \
  .help = "a cap on the solver's work: plans, moves or nodes (docs/cli.md)" }
/* SageMaker's memory_weight, which only the dhondt solver reads (docs/search.md) */
#define CLI_FLAG_MEMORY_WEIGHT { .name = "memory-weight", .arg = "W", .kind = CLI_NUM, \
  .at = CLI_AT_(cli_core, memory_weight, double), .lo = 0, .hi = 1, \
  .expect = "a fraction in [0, 1]", \
  .help = "dhondt: the share of memory in a layer's cost, against compute (default 0.8, SageMaker's)" }
#define CLI_FLAG_OUT { .name = "out", .arg = "FILE", .kind = CLI_TEXT, .file = CLI_FILE_OUT, \
  .at = CLI_AT_(cli_core, out, const char *), \
  .help = "write the output to FILE instead of stdout" }

/* --- A command: its table, and what the prologue does before its run, in this order:
 * parse the flags (then --help), its `check`, the outputs against the inputs (always),
 * -o, the problem (and plan), coverage, limits (always), progress, interrupts. */
enum {
  CLI_ANY_ARGS = 1 << 0,     /* no flags parsed, arguments ignored (version) */
  CLI_CHECK_OUT = 1 << 1,    /* -o checked writable before the work (a long search) */
  CLI_PROBLEM = 1 << 2,      /* the problem loaded (a plan file's "inputs" fill the flags) */
  CLI_PLAN = 1 << 3,         /* also --plan, required, loaded and validated */
  CLI_PLAN_IF_GIVEN = 1 << 4,/* --plan loaded as CLI_PLAN when given, else the problem */
  CLI_COVER_SPACE = 1 << 5,  /* the search space's profile coverage printed on stderr,
                              * and --strict-profile applied to it */
  CLI_COVER_PLAN = 1 << 6,   /* the plan's coverage kept in c->cov, --strict-profile */
  CLI_PROGRESS = 1 << 7,     /* the stderr progress observer in c->lim */
  CLI_INTERRUPT = 1 << 8,    /* SIGINT and SIGTERM stop the search (c->lim.stop) */
  CLI_REST = 1 << 9          /* a bare `--` ends the flags: what follows is the command's
                              * (core.rest, core.n_rest), never parsed */
};

/* The state of the progress lines a search prints on stderr. */
typedef struct cli_progress { int printed, had_bound; double last; } cli_progress;

typedef struct cli_ctx cli_ctx;

typedef struct cli_cmd {
  const char *name;
  const char *summary;       /* its entry in `hetplan --help` (lines after the first are
                              * indented there); NULL: not listed */
  const char *help;          /* `hetplan NAME --help` */
  const cli_flag *flags;     /* in the order --help lists them and suggestions try them */
  int n_flags;
  size_t opts_size;          /* its own options' struct (zeroed, then the defaults), or 0 */
  unsigned steps;            /* CLI_* above */
  /* may be NULL: checks of the flags before any file is read (0, an exit code, or
   * CLI_DONE to end with exit 0) */
  int (*check)(cli_ctx *c);
  int (*run)(cli_ctx *c);    /* the command's work; its exit code */
} cli_cmd;

#define CLI_FLAGS(table) .flags = (table), .n_flags = (int)(sizeof (table) / sizeof *(table))
#define CLI_DONE (-1)

/* What a command's check and run receive. The prologue owns prob, plan and cov (freed
 * after run; a command may take one and set the field to NULL). */
struct cli_ctx {
  const cli_cmd *cmd;
  cli_core core;
  void *opts;                /* the command's own options, NULL if it has none */
  hp_problem *prob;          /* CLI_PROBLEM, CLI_PLAN */
  hp_plan *plan;             /* CLI_PLAN: validated, its schedule adopted */
  hp_coverage *cov;          /* CLI_COVER_PLAN */
  hp_limits lim;             /* time limit, seed and max work from the flags */
  cli_progress progress;     /* CLI_PROGRESS: the observer's state */
};

/* Every command, in the order of `hetplan --help` (cli_commands.c); NULL-terminated. */
extern const cli_cmd *const cli_commands[];
const cli_cmd *cli_command_find(const char *name);
/* `hetplan --help`: the commands' summaries between the fixed text. */
void cli_usage_print(FILE *f);

/* Runs a command: the prologue its table configures, its run, the cleanup (cli_prologue.c). */
int cli_command_run(const cli_cmd *cmd, int argc, char **argv);

/* Parses argv[first..] against cmd's table into core and opts (own flags' defaults first).
 * Prints the problem and returns EXIT_USAGE on error (cli_parse.c). */
int cli_parse(const cli_cmd *cmd, int argc, char **argv, int first, cli_core *core, void *opts);

/* Prints "hetplan CMD: <msg>\n(see 'hetplan CMD --help')" and returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* `hetplan flags`: the flags of cmd, one a line of tab-separated columns: `prefix` (if not
 * NULL), the flag as typed (--gbs; a plain argument's placeholder), its value ("-" for a
 * switch or a plain argument), what it sets with the values it takes and its default. */
void cli_flags_print(FILE *f, const cli_cmd *cmd, const char *prefix);

/* Fills the flags a plan file's "inputs" block gives (--model, --cluster, --profile,
 * --gbs, --schedule, --mem-margin, the job's fields, --framework) where they are missing and o->plan is set; flags win.
 * Returns 1 if the plan file had such a block, 0 if not, and minus an exit code (the
 * reason printed) when the file's blocks are refused and the files were not given
 * (cli_inputs.c). */
int cli_plan_inputs(cli_core *o);

/* Prints "hetplan: error: <msg>" and maps the error to an exit code. */
int cli_fail(const hp_diag *d, hp_err err);

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
 * or EXIT_IO with the reason printed: an existing directory among them). */
int cli_check_output(const char *path);

/* Before anything runs: every file the command would write (its CLI_FILE_OUT flags given)
 * against every file it reads (its CLI_FILE_IN flags, and the files a plan file's
 * "inputs" name where they fill the flags): an output that is an input (the same file:
 * st_dev and st_ino, so a hard or symbolic link to one too) or another output is refused
 * (EXIT_USAGE, both named); an output that is an existing directory too (EXIT_IO). A path
 * that does not exist yet, or names a device or pipe (/dev/null), is fine. 0 or the exit
 * code, the message printed (cli_outputs.c). */
int cli_check_outputs(const cli_ctx *c);

/* Installs the SIGINT and SIGTERM handlers and points lim->stop at their flag: the first
 * signal asks the search to stop and return its best so far, a second one kills the
 * process. cli_interrupted() is the signal received, 0 if none. */
void cli_interrupt_attach(hp_limits *lim);
int cli_interrupted(void);

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
