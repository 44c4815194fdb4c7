/* hp_launch.h -- from a plan to a launch: the rank order that realises its placement
 * (which global rank runs on which node and GPU) and the settings of Megatron-LM,
 * DeepSpeed and torchrun (docs/export.md, with the sources of every argument name and
 * rank order). Writers return strings; nothing here prints. */
#ifndef HP_LAUNCH_H
#define HP_LAUNCH_H

#include "hp_plan.h"

/* The order in which a framework numbers the slots of a plan (stage s, replica r, TP
 * rank j). Megatron-LM's default "tp-cp-ep-dp-pp" and DeepSpeed's pipe/data/model
 * topology: rank = j + tp (r + dp s); Megatron's --use-tp-pp-dp-mapping:
 * rank = j + tp (s + pp r). */
typedef enum { HP_ORDER_TP_DP_PP = 0, HP_ORDER_TP_PP_DP = 1 } hp_rank_order;

const char *hp_rank_order_name(hp_rank_order o);   /* "tp-dp-pp", "tp-pp-dp" */

static inline int hp_rank_of_slot(const hp_plan *p, hp_rank_order o, int s, int r, int j)
{
  return o == HP_ORDER_TP_DP_PP ? j + p->tp * (r + p->dp * s) : j + p->tp * (s + p->pp * r);
}

/* The launch that realises a plan under an order: a launcher (torchrun, DeepSpeed's)
 * gives node i of its list the global ranks [first_rank[i], first_rank[i] + count[i]),
 * and local rank q on it the q-th GPU of its CUDA_VISIBLE_DEVICES. That realises the
 * placement iff every node's ranks are contiguous ("contiguous"); DeepSpeed's --include
 * also sorts a node's GPUs, so it needs them ascending with the rank ("ascending").
 * Only the devices the plan uses get a rank: with idle devices the world is smaller
 * than the cluster, and the list holds only the nodes that run a rank. */
typedef struct hp_rank_map {
  hp_rank_order order;
  int n_ranks;          /* the world size: pp * dp * tp */
  int *device;          /* [n_ranks] device of global rank k (plan->dev of its slot) */
  int *gpu;             /* [n_ranks] that device's GPU index on its node */
  int contiguous, ascending;
  int n_nodes;          /* in launch order: */
  int *node;            /* [n_nodes] cluster node index */
  int *first_rank;      /* [n_nodes] */
  int *count;           /* [n_nodes] */
  char why[256];        /* when not contiguous: the node whose ranks are split */
} hp_rank_map;

hp_err hp_rank_map_build(const hp_problem *prob, const hp_plan *plan, hp_rank_order order,
                         hp_rank_map *map, hp_diag *d);
/* The first order of the set `orders` (bits 1u << hp_rank_order, tried default first)
 * whose map is contiguous; if none is, the map of the set's first order (contiguous = 0),
 * and of the default order if the set is empty. */
hp_err hp_rank_map_choose(const hp_problem *prob, const hp_plan *plan, unsigned orders,
                          hp_rank_map *map, hp_diag *d);
void hp_rank_map_release(hp_rank_map *map);

/* An export format is its number in the table of formats (src/launch_registry.c, one
 * entry per framework); the constants name the built-in ones. */
typedef enum { HP_LAUNCH_MEGATRON = 0, HP_LAUNCH_DEEPSPEED, HP_LAUNCH_TORCHRUN,
               HP_LAUNCH_SLURM } hp_launch_format;

/* The number of the format named `s` ("megatron", "deepspeed", "torchrun", "slurm"); -1 if none
 * is (or s is NULL). */
int hp_launch_format_parse(const char *s);
/* The name of format f; NULL past the last, so `for (f = 0; hp_launch_format_name(f); f++)`
 * visits them all. The string is static. */
const char *hp_launch_format_name(int f);
/* The formats' names in table order, joined by `sep` and the last two by `last`
 * ("megatron, deepspeed, torchrun or slurm" with ", " and " or "), into buf (truncated to n - 1
 * characters). Returns buf. */
char *hp_launch_format_list(char *buf, unsigned long n, const char *sep, const char *last);

typedef struct hp_launch_opts {
  /* The evaluator's figures for the plan when the caller has them (a result's `eval`);
   * NULL: the plan is evaluated here. Borrowed. */
  const hp_eval *eval;
  const char *script;    /* the training script; NULL: pretrain_gpt.py (megatron, slurm),
                            train.py */
  const char *master;    /* the rendezvous host; NULL: the host of node rank 0 */
  int port;              /* 0: 29500 */
  const char *plan_name; /* for the header, may be NULL */
  int config_only;       /* deepspeed: the JSON config alone */
  /* The training command's own arguments (data, tokenizer, learning rate, ...), written
   * into the script, each one shell word whatever it holds; the script appends those
   * given when it runs. n_args 0: none (args may be NULL). Borrowed. */
  const char *const *args;
  int n_args;
  /* Called once for each thing the framework cannot express of the model itself (an
   * architecture it has no argument for), with the sentence the header says; NULL: not
   * called. The library prints nothing: this lets a caller say it on stderr. */
  void (*warn)(void *ctx, const char *text);
  void *warn_ctx;
} hp_launch_opts;

/* An arguments file's words (export --args-file): split at blanks and line ends as a
 * response file is (gcc's @file): single or double quotes keep blanks in a word, a
 * backslash keeps the next character; nothing is expanded. A line whose first
 * non-blank is # is a comment. *argv (NULL-terminated, *argc words) is one malloc'd
 * block the caller frees. HP_PARSE for an unclosed quote. */
hp_err hp_launch_args_split(const char *text, char ***argv, int *argc, hp_diag *d);

/* The launch as a shell script (or, with config_only, DeepSpeed's JSON): the plan's
 * configuration, what the framework cannot express of it with the evaluator's figures for
 * the plan as the framework would run it, the arguments the user must add, the
 * framework's settings, and the launch: one launcher line per node in node-rank order
 * with its CUDA_VISIBLE_DEVICES where a node order realises the placement; otherwise one
 * process per GPU started with its global rank given (RANK, LOCAL_RANK, WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT, CUDA_VISIBLE_DEVICES); Slurm's srun tasks always so. Every
 * string from an input is quoted as one shell word. `o` may be NULL. *out is malloc'd
 * (the caller frees it). HP_INVAL for a format number not in the table. */
hp_err hp_launch_write(const hp_problem *prob, const hp_plan *plan, hp_launch_format f,
                       const hp_launch_opts *o, char **out, hp_diag *d);

#endif
