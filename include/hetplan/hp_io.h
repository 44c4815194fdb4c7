/* hp_io.h -- reading and writing the JSON files of formats.md (model, cluster, profile,
 * job, plan). Every error names the file, the key path (e.g. "layers[3].params") and
 * what was expected; unknown keys are reported through hp_diag.warn. Returned strings
 * are malloc'd and owned by the caller (free). */
#ifndef HP_IO_H
#define HP_IO_H

#include "hp_coverage.h"
#include "hp_solver.h"
#include "hp_transformer.h"

hp_err hp_model_load(const char *path, hp_model **out, hp_diag *d);
hp_err hp_cluster_load(const char *path, hp_cluster **out, hp_diag *d);
hp_err hp_profile_load(const char *path, hp_profile **out, hp_diag *d);
/* The default figures between nodes a cluster file gives (inter_gbps, inter_lat_us), in
 * bytes/s and seconds; *bw is 0 when the file gives none (what `replan --with` links the
 * file's nodes to the others by). */
hp_err hp_cluster_inter_default(const char *path, double *bw, double *lat, hp_diag *d);

/* Reads {"gbs": N, "schedule": "1f1b"|"gpipe", "accept_profile_mismatch": true|false,
 * and the 1.2 keys sequence_parallel, grad_sync, sharding, uniform_sharding, idle_devices,
 * max_slices, and compute_model} into `job` (formats.md "Job"); keys absent from the
 * file leave `job` as it was. */
hp_err hp_job_load(const char *path, hp_job *job, hp_diag *d);

/* Reads a plan for `prob` (shape and ranges checked here, the rest by
 * hp_plan_validate). Output figures in the file (iteration_time, ...) are ignored. */
hp_err hp_plan_load(const char *path, const hp_problem *prob, hp_plan **out, hp_diag *d);

/* What a plan file says besides the plan (load_plan_info.c): its "inputs" block, which
 * hp_plan_to_json writes from the problem (file paths as they were given, gbs, schedule,
 * margin, the job's 1.2 fields that differ from their defaults), and its "solver" block.
 * Absent parts: NULL, 0, -1 (schedule, mem_margin, the job's 1.2 fields, framework), 0 (sharding),
 * NAN (lower_bound), has_solver 0. A value out of its range counts as absent. Release
 * with hp_plan_info_release. */
typedef struct hp_plan_info {
  char *model, *cluster, *profile;
  long gbs;
  int schedule;
  double mem_margin;
  int has_inputs;          /* the file has an "inputs" block: its absent 1.2 fields are
                            * the defaults (false, end, all modes, 1) */
  int sequence_parallel;   /* 0, 1; -1 absent */
  int grad_sync;           /* an hp_grad_sync; -1 absent */
  unsigned sharding;       /* mask of the modes listed (1 << hp_shard); 0 absent */
  int uniform_sharding;    /* 0, 1; -1 absent */
  int idle_devices;        /* 0, 1; -1 absent */
  int max_slices;          /* a power of two; -1 absent */
  int framework;           /* an hp_framework; -1 absent */
  int compute_model;       /* an hp_compute_model; -1 absent */
  int has_solver;
  char solver[32], status[16], space[16];
  double lower_bound;
} hp_plan_info;

hp_err hp_plan_info_load(const char *path, hp_plan_info *info, hp_diag *d);
hp_err hp_plan_info_parse(const char *text, const char *name, hp_plan_info *info, hp_diag *d);
void hp_plan_info_release(hp_plan_info *info);

/* Parses from memory; `name` stands for the file name in messages. */
hp_err hp_model_parse(const char *text, const char *name, hp_model **out, hp_diag *d);
hp_err hp_cluster_parse(const char *text, const char *name, hp_cluster **out, hp_diag *d);
hp_err hp_profile_parse(const char *text, const char *name, hp_profile **out, hp_diag *d);
hp_err hp_job_parse(const char *text, const char *name, hp_job *job, hp_diag *d);
hp_err hp_plan_parse(const char *text, const char *name, const hp_problem *prob,
                     hp_plan **out, hp_diag *d);

/* The explicit layer list of a model as a model file (what `hetplan expand` prints),
 * nested in its modules ("modules") when it has a tree. */
hp_err hp_model_to_json(const hp_model *m, char **out, hp_diag *d);

/* A plan file as formats.md: the plan, the evaluator's figures from `e`, the solver
 * block from `res` (may be NULL) and "profile_coverage" from `cov` (may be NULL: none),
 * built as one tree and printed once. */
hp_err hp_plan_to_json(const hp_problem *prob, const hp_plan *plan, const hp_eval *e,
                       const hp_result *res, const char *solver_name,
                       const hp_coverage *cov, char **out, hp_diag *d);

/* The evaluator's breakdown as JSON (what `hetplan evaluate --json` prints), with
 * "profile_coverage" from `cov` (may be NULL: none). */
hp_err hp_eval_to_json(const hp_problem *prob, const hp_plan *plan, const hp_eval *e,
                       const hp_coverage *cov, char **out, hp_diag *d);

/* --- Hugging Face configs (load_hf.c, docs/import-hf.md). A model file that is an HF
 * config.json (no "layers" or "transformer"; one of model_type, architectures,
 * num_hidden_layers, n_layer) is read by hp_model_load through these, with the defaults. */

typedef struct hp_hf_opts {
  int seq;              /* sequence length; 0: max_position_embeddings, at most 4096 */
  hp_dtype dtype;       /* bf16 (the default), fp16 or fp32 */
} hp_hf_opts;

typedef struct hp_hf_model {
  char name[256];       /* _name_or_path's last part, else the config's folder, else the file */
  char style[16];       /* the architecture read: llama, mistral, qwen2, qwen3, gemma,
                         * gemma2, gpt2, gpt_neox */
  hp_transformer tf;    /* what the generator expands */
  double param_bytes, grad_bytes, state_bytes;
} hp_hf_model;

/* Reads a config: Llama, Mistral, Qwen2, Qwen3, Gemma, Gemma 2, GPT-2 and GPT-NeoX keys
 * (hidden_size or n_embd, num_hidden_layers or n_layer, intermediate_size or n_inner,
 * num_attention_heads or n_head, num_key_value_heads, head_dim, vocab_size,
 * max_position_embeddings or n_positions, tie_word_embeddings, attention_bias, mlp_bias;
 * Gemma's hidden_activation, Gemma 2's soft-capping and sliding_window); `o` may be NULL
 * (the defaults). Other keys are ignored silently; mixture-of-experts configs, other Gemma
 * variants and a head_dim GPT-2's or GPT-NeoX's code would not read are refused. */
hp_err hp_hf_parse(const char *text, const char *file, const hp_hf_opts *o, hp_hf_model *out,
                   hp_diag *d);
hp_err hp_hf_load(const char *path, const hp_hf_opts *o, hp_hf_model *out, hp_diag *d);
/* The model of an imported config (expanded; hp_model_destroy). */
hp_err hp_hf_expand(const hp_hf_model *h, hp_model **out, hp_diag *d);
/* The model file `hetplan import-hf` writes: name, bytes per parameter, a "transformer"
 * block, and a source line naming `source` and the parameter count. */
hp_err hp_hf_model_to_json(const hp_hf_model *h, const char *source, char **out, hp_diag *d);

/* The largest input file read, bytes (64 MiB): a larger one, or one that never ends
 * (/dev/zero), is refused with HP_IO before it is read to the end. docs/limits.md gives
 * what a file of that size may cost in memory. */
#define HP_MAX_FILE_BYTES (64 << 20)

/* Reads a whole file into a NUL-terminated malloc'd buffer: HP_IO if it cannot be read,
 * is a directory or is larger than HP_MAX_FILE_BYTES; HP_PARSE if it holds a NUL byte. */
hp_err hp_read_file(const char *path, char **out, hp_diag *d);

#endif
