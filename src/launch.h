/* launch.h -- the export formats as entries: what one format (Megatron-LM, DeepSpeed,
 * torchrun, Slurm) gives hp_launch_write (src/launch.c), and the pieces every format
 * shares. One file per format (src/launch_<name>.c), one line in src/launch_registry.c.
 * Every string from an input reaches a script through hp__sh_quote (src/sh_quote.c).
 * Internal. */
#ifndef HP_LAUNCH_INTERNAL_H
#define HP_LAUNCH_INTERNAL_H

#include "internal.h"

#define HP_LAUNCH_MAX_NOTES 16
#define HP_LAUNCH_ORDERS 2      /* values of hp_rank_order */

/* What a framework cannot express of a plan, one sentence each, in the script's header. */
typedef struct hp_launch_notes {
  int n;
  char text[HP_LAUNCH_MAX_NOTES][1024];
} hp_launch_notes;

/* Arguments the training command needs and hetplan cannot choose (data, tokenizer, ...):
 * the script names them in its header and stops, naming those missing, unless one of
 * `flags` (exactly, or as --flag=value) is among the arguments it was given. */
typedef struct hp_launch_need {
  const char *what;           /* "data" */
  const char *flags[6];       /* any one will do; NULL-terminated */
  const char *hint;           /* for the header: "--data-path PREFIX ... or --mock-data" */
} hp_launch_need;

struct hp_launch_fmt;

/* One export, as a format's hooks see it. */
typedef struct hp_launch_ctx {
  const struct hp_launch_fmt *fmt;
  const hp_problem *prob;
  const hp_plan *plan;        /* as planned */
  hp_plan *var;               /* as the framework runs it: a copy of `plan` that the format's
                                 `limits` changes where the framework cannot follow it */
  const hp_rank_map *map;     /* under the first of the format's orders that realises the
                                 placement; if none does, under its first (contiguous = 0) */
  const hp_launch_opts *o;    /* never NULL */
  const char *script;         /* o->script, else the format's default */
  hp_launch_notes notes;
} hp_launch_ctx;

/* An export format: its name, the rank orders its framework numbers ranks by, what it
 * cannot express and its writer. hp_launch_write (launch.c) writes the parts every
 * format shares: the header with the evaluator's figures, the notes (and the figures of
 * the plan as the framework runs it), the stages, the rank order, the arguments to add,
 * and the per-rank table when no order realises the placement. */
typedef struct hp_launch_fmt {
  const char *name;           /* --format NAME */
  const char *framework;      /* in the script's words: "Megatron-LM" */
  const char *script;         /* the training script when hp_launch_opts.script is NULL */
  /* The orders the framework can number ranks by, indexed by hp_rank_order, as the
   * script's "Rank order:" line names them; NULL: not one of its orders. They are tried
   * in that order; at least the first (HP_ORDER_TP_DP_PP) is set. */
  const char *order[HP_LAUNCH_ORDERS];
  /* Appended to the note on a placement that none of its orders realises ("" for none). */
  const char *unrealised;
  /* The arguments its training command needs from the user (NULL: the script is the
   * user's own, its arguments unknown), ended by an entry with what = NULL. */
  const hp_launch_need *needs;
  /* Lines of the script before the header (Slurm's #SBATCH); NULL: none. */
  void (*preamble)(const hp_launch_ctx *c, hp_sb *b);
  /* Notes what the framework cannot express of c->plan and makes c->var the plan it runs
   * instead (uniform sharding or recompute, 1F1B for GPipe): launch.c evaluates c->var
   * when it differs. NULL: the framework runs every plan as planned. */
  void (*limits)(hp_launch_ctx *c);
  /* The framework's settings and its launch, after the shared header, "set -eu" and the
   * USER_ARGS array. */
  void (*emit)(const hp_launch_ctx *c, hp_sb *b);
  /* The config file alone (hp_launch_opts.config_only); NULL: the format has none, and
   * config_only is ignored. */
  void (*config)(const hp_launch_ctx *c, hp_sb *b);
} hp_launch_fmt;

/* The format numbered f (hp_launch_format) in the table of src/launch_registry.c; NULL
 * when there is none. */
const hp_launch_fmt *hp__launch_fmt(int f);

/* s (NULL: "") as one bash word (sh_quote.c): '...' with ' as '\'', or $'...' with \xHH
 * escapes when s holds a control character; safe in a command and in a comment. */
void hp__sh_quote(hp_sb *b, const char *s);
/* The same into buf (truncated to n - 1 characters: for comments and notes only). */
char *hp__sh_quote_buf(char *buf, size_t n, const char *s);

/* Adds a note (at most HP_LAUNCH_MAX_NOTES; more are dropped). Input strings in it go
 * through hp__sh_quote_buf. */
void hp__launch_note(hp_launch_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A note on the model's architecture: also given to o->warn. */
void hp__launch_warn(hp_launch_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The indices i < count with flag[i] set, as "0-3, 7". */
void hp__launch_ranges(char *buf, size_t n, const unsigned char *flag, int count);
/* For a framework with one recompute setting for every stage: recompute on some stages
 * only becomes recompute on every stage, noted; `how` names the setting ("X's --flag
 * makes"). */
void hp__launch_uniform_recompute(hp_launch_ctx *c, const char *how);
/* For a framework that takes one sharding mode for every layer, from `launchable` (a mask
 * of 1 << hp_shard; modes as the cost model applies them, dp at dp = 1): a plan whose
 * layers mix modes, which no framework launches, or whose one mode the framework lacks,
 * becomes its nearest launchable form: one mode for every layer, the launchable mode
 * whose evaluation is best (fitting first), noted with the evaluator's figures of each;
 * zdp slices (OSDP), which no framework has, become 1, noted. `who` names the framework,
 * `how` what it launches ("dp, and zero1 with --use-distributed-optimizer"). Returns the
 * mode c->var runs. */
int hp__launch_one_mode(hp_launch_ctx *c, unsigned launchable, const char *who, const char *how);
/* The mode every layer of `pl` takes as the cost model applies it, -1 if they differ. */
int hp__launch_uniform_mode(const hp_plan *pl);

/* For a framework that runs its pipeline 1F1B: a GPipe plan (pp > 1) becomes 1F1B,
 * noted; `who` names the framework. */
void hp__launch_only_1f1b(hp_launch_ctx *c, const char *who);

/* A host name that launchers' lists take as it is (sbatch --nodelist, DeepSpeed's hostfile
 * and --include): letters, digits, '.', '_', '-'; none of the blanks, '@', ':', ',' they
 * split on. */
int hp__launch_plain_name(const char *s);

/* The node-rank launch of a script run on every node (bash launch.sh NODE_RANK
 * [ARGS...]): the node rank read and checked, each node's host and GPUs (and, where no
 * node order realises the placement, the global rank on each GPU), ARGS (the exported
 * USER_ARGS, then the run's own), the check of the format's needs, then either one
 * torchrun line (c->map->contiguous) or one process per GPU with its rank given (RANK,
 * LOCAL_RANK, ... : see hp__launch_rank_env). `prog_args` (may be NULL) is shell text
 * put between c->script and ARGS, e.g. "\"${MEGATRON_ARGS[@]}\"". */
void hp__launch_per_node(const hp_launch_ctx *c, hp_sb *b, const char *prog_args);
/* ARGS from USER_ARGS and the script's arguments "$@", then the format's needs checked. */
void hp__launch_args_checked(const hp_launch_ctx *c, hp_sb *b);
/* The shell function `node_map N` that sets host, gpus, ranks and nproc of node rank N:
 * the node's GPUs in the order of the global ranks it runs (ranks ascending, aligned
 * with gpus); exits 2 on a node rank out of range. Nodes in the order of their first
 * rank (node rank 0 runs rank 0). */
void hp__launch_node_map(const hp_launch_ctx *c, hp_sb *b);
/* The host that rank 0's node is known by: o->master, else the cluster's name for it,
 * quoted. */
void hp__launch_master(const hp_launch_ctx *c, hp_sb *b);

/* Megatron-LM's part, shared by the megatron and slurm formats (launch_megatron.c): what
 * the user must give, what it cannot express (limits), and its settings
 * (CUDA_DEVICE_MAX_CONNECTIONS and the MEGATRON_ARGS array). */
extern const hp_launch_need hp__megatron_needs[];
void hp__megatron_limits(hp_launch_ctx *c);
void hp__megatron_settings(const hp_launch_ctx *c, hp_sb *b);

#endif
