/* launch.h -- the export formats as entries: what one format (Megatron-LM, DeepSpeed,
 * torchrun) gives hp_launch_write (src/launch.c), and the pieces every format shares.
 * One file per format (src/launch_<name>.c), one line in src/launch_registry.c. Internal. */
#ifndef HP_LAUNCH_INTERNAL_H
#define HP_LAUNCH_INTERNAL_H

#include "internal.h"

#define HP_LAUNCH_MAX_NOTES 12
#define HP_LAUNCH_ORDERS 2      /* values of hp_rank_order */

/* What a framework cannot express of a plan, one sentence each, in the script's header. */
typedef struct hp_launch_notes {
  int n;
  char text[HP_LAUNCH_MAX_NOTES][400];
} hp_launch_notes;

/* One export, as a format's hooks see it. */
typedef struct hp_launch_ctx {
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
 * the plan as the framework runs it), the stages, the rank order, and the per-rank table
 * when no order realises the placement. */
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
  /* Notes what the framework cannot express of c->plan and makes c->var the plan it runs
   * instead (uniform sharding or recompute, 1F1B for GPipe): launch.c evaluates c->var
   * when it differs. NULL: the framework runs every plan as planned. */
  void (*limits)(hp_launch_ctx *c);
  /* The framework's settings and its launch lines (when c->map->contiguous), after the
   * shared header and "set -eu". */
  void (*emit)(const hp_launch_ctx *c, hp_sb *b);
  /* The config file alone (hp_launch_opts.config_only); NULL: the format has none, and
   * config_only is ignored. */
  void (*config)(const hp_launch_ctx *c, hp_sb *b);
} hp_launch_fmt;

/* The format numbered f (hp_launch_format) in the table of src/launch_registry.c; NULL
 * when there is none. */
const hp_launch_fmt *hp__launch_fmt(int f);

/* Adds a note (at most HP_LAUNCH_MAX_NOTES; more are dropped). */
void hp__launch_note(hp_launch_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The indices i < count with flag[i] set, as "0-3, 7". */
void hp__launch_ranges(char *buf, size_t n, const unsigned char *flag, int count);
/* A shell word in single quotes. */
void hp__launch_quote(hp_sb *b, const char *s);
/* For a framework with one recompute setting for every stage: recompute on some stages
 * only becomes recompute on every stage, noted; `how` names the setting ("X's --flag
 * makes"). */
void hp__launch_uniform_recompute(hp_launch_ctx *c, const char *how);
/* For a framework that runs its pipeline 1F1B: a GPipe plan (pp > 1) becomes 1F1B,
 * noted; `who` names the framework. */
void hp__launch_only_1f1b(hp_launch_ctx *c, const char *who);
/* One torchrun line per node of c->map (which must be contiguous), chosen by the node
 * rank given to the script, running c->script with `args` (may be NULL). */
void hp__launch_torchrun(const hp_launch_ctx *c, hp_sb *b, const char *args);

#endif
