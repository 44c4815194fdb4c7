/* hp_problem.h -- the inputs of a planning problem: model (a chain of layers), cluster
 * (device types, nodes, links), optional profile (measured layer times, bandwidths) and
 * job (global batch, schedule). All figures are in SI units after loading: bytes,
 * seconds, bytes/s, FLOP, FLOP/s (cost-model.md section 1). */
#ifndef HP_PROBLEM_H
#define HP_PROBLEM_H

#include "hp_error.h"
#include "hp_framework.h"
#include "hp_shape.h"

/* One layer of the chain (cost-model.md section 1). */
typedef struct hp_layer {
  char *name;          /* unique, e.g. "block.3" */
  char *kind;          /* key into the profile; identical layers share it */
  double params;       /* P_l, count */
  double act_bytes;    /* A_l, saved for backward, per sample at tp 1 */
  double act_repl;     /* Ar_l, the part of A_l that tensor parallelism does not divide */
  double out_bytes;    /* O_l, sent to the next stage, per sample */
  double flops;        /* F_l, forward+backward per sample */
  double tp_comm;      /* C_l, TP all-reduce payload bytes per sample per fwd+bwd */
  double work_bytes;   /* W_l, transient peak per sample */
  double work_fixed;   /* W0_l, transient peak per micro-batch */
  int splittable;      /* 1 if TP divides P, A, F */
  int no_recompute;    /* 1: full recompute leaves it alone, it keeps its activations
                        * (JSON "checkpointable": false; ck_l = !no_recompute, 1.2) */
} hp_layer;

struct hp_transformer;

/* A module of a model's tree (formats.md "Model", "modules"): a named group of consecutive
 * layers, as a framework nests them (the embedding, the decoder and its blocks, the head).
 * The cost model reads the layers alone; the tree is what SageMaker's partitioner
 * (solvers/solver_dhondt.c) cuts along. */
typedef struct hp_module {
  char *name;
  int parent;          /* index into hp_model.modules; -1: a module at the top level */
  int first, last;     /* its layers, [first, last): never empty */
  int depth;           /* 0 at the top level, at most HP_MAX_MODULE_DEPTH - 1 */
} hp_module;

/* How deep modules may nest (a model file's deeper tree is refused). */
#define HP_MAX_MODULE_DEPTH 64

typedef struct hp_model {
  char *name;
  double param_bytes;  /* bytes per parameter, default 2 */
  double grad_bytes;   /* bytes per gradient element in the DP sync, default 2 */
  double state_bytes;  /* bytes of model state per parameter, default 16 */
  double input_bytes;  /* I_0 per sample, default 0 */
  double update_bytes; /* memory traffic of one optimizer step per parameter (1.2), when
                        * update_given; else hp_model_update_bytes's default */
  int update_given;
  double tied_params;  /* parameters that are copies of another layer's (a head tied to
                        * the embedding): held in memory, not counted in the model's size */
  int n_layers;
  hp_layer *layers;
  /* the module tree in pre-order (a parent before its children, siblings in layer
   * order); none (0, NULL): the flat chain, the root's items are the layers */
  int n_modules;
  hp_module *modules;
  char *path;          /* the file it was loaded from (hp_model_load), else NULL */
  struct hp_transformer *transformer;  /* what the layers were expanded from (hp_transformer.h),
                                          NULL for a model given as explicit layers */
  int gemm_precision;  /* hp_gemm_precision: what its GEMMs run in ("gemm_precision",
                        * bf16 by default; fp8 takes the types' tflops_fp8) */
} hp_model;

typedef struct hp_devtype {
  char *name;
  double mem;          /* usable capacity, bytes: mem_total less the memory margin once the
                        * problem is bound (hp_problem_create); what every solver and the
                        * evaluator test M against */
  double mem_total;    /* the device's whole memory as the cluster file gives it, bytes
                        * (set when the problem binds), for display */
  double reserved;     /* framework and runtime overhead, bytes */
  int reserved_default;/* 1: the cluster file gave no reserved_gib, so binding a problem
                        * sets `reserved` to the job's framework default (hp_framework.h;
                        * 0 under framework "none") */
  double peak;         /* FLOP/s */
  double eff;          /* achievable fraction of peak, (0, 1] */
  double hbm;          /* memory bandwidth, bytes/s (1.2 "hbm_gbs"); 0: not given, no
                        * optimizer-step term for the type */
  double peak_fp8;     /* dense FP8 FLOP/s ("tflops_fp8"); 0: not given, no fp8 model runs
                        * on the type */
  hp_shape shape;      /* the shape model's constants (hp_shape.h); shape.given 0: none */
} hp_devtype;

typedef struct hp_node {
  char *name;
  int type;            /* index into hp_cluster.types */
  int gpus;
  int first;           /* device id of its GPU 0 */
  double intra_bw;     /* bytes/s between two GPUs of this node */
  double intra_lat;    /* seconds */
} hp_node;

typedef struct hp_cluster {
  char *name;
  int n_types;
  hp_devtype *types;
  int n_nodes;
  hp_node *nodes;
  int n_devices;
  int *dev_node;       /* [n_devices] node of each device */
  double *node_bw;     /* [n_nodes^2] node-pair bandwidth, bytes/s; the diagonal is unused */
  double *node_lat;    /* [n_nodes^2] node-pair latency, seconds */
  double *dev_bw;      /* [n_devices^2] profiled device matrix, NULL if none (symmetric) */
  double *dev_lat;     /* [n_devices^2] */
  double mem_margin;   /* fraction of every device's memory kept free, [0, 1): the file's
                        * "mem_margin" or --mem-margin; applied once, by hp_problem_create */
  char *path;          /* the file it was loaded from (hp_cluster_load), else NULL */
} hp_cluster;

/* One measured point: fwd+bwd time of one micro-batch. */
typedef struct hp_measure {
  char *kind;
  int type;            /* index into the cluster's types, resolved when the problem binds */
  char *type_name;
  int tp, mbs;
  double seconds;
  double act, work;    /* measured memory of one micro-batch on one TP rank (1.2): bytes
                        * saved for backward, transient peak above them; where has_* */
  unsigned char has_act, has_work;
} hp_measure;

/* What a layer kind was measured for (the profile's "kinds", written by hetplan-profile):
 * the shape of the layer it timed. Absent figures are -1 (params, flops) or 0 (the
 * transformer's sizes, dtype_bytes). hp_problem_create compares params and flops with the
 * model's layers of the kind (formats.md "Profile"). */
typedef struct hp_profile_kind {
  char *kind;
  double params;          /* P_l of the layer timed, -1 if not recorded */
  double flops;           /* F_l, forward+backward per sample, -1 if not recorded */
  int hidden, heads, kv_heads, ffn, seq;   /* the transformer's, 0 if not recorded */
  int dtype_bytes;        /* element size it was timed in: 2 (bf16, fp16), 4 (fp32), 0 */
} hp_profile_kind;

typedef struct hp_profile {
  char *name;             /* the file name given to the loader, for messages */
  int n_measures;
  hp_measure *measures;   /* in file order; of duplicates the last wins */
  char *model;            /* the model it was measured for (informative), NULL if unsaid */
  int n_kinds;
  hp_profile_kind *kinds; /* sorted by kind; none in a profile without shape records */
  int n_devices;          /* size of the matrix below, 0 if none */
  double *dev_bw;         /* [n_devices^2] symmetric (min of both directions), bytes/s */
  double *dev_lat;        /* [n_devices^2] symmetric (max of both directions), seconds */
  int n_collectives;      /* parsed and checked, not a cost term (cost-model.md 7.3) */
  int sequence_parallel;  /* the setting its act/work figures were measured under (1.2) */
  char *path;             /* the file it was loaded from (hp_profile_load), else NULL */
} hp_profile;

typedef enum { HP_1F1B = 0, HP_GPIPE = 1 } hp_schedule;

/* Sharding modes of a layer (cost-model.md 2, version 1.2); 0 is replication, so a
 * zeroed array is all `dp`. */
typedef enum { HP_SHARD_DP = 0, HP_SHARD_ZERO1 = 1, HP_SHARD_ZERO2 = 2, HP_SHARD_ZDP = 3 } hp_shard;
#define HP_N_SHARD 4
#define HP_SHARD_ALL 0xFu   /* the mask of all four modes */
const char *hp_shard_name(int mode);        /* "dp", "zero1", "zero2", "zdp" */
/* Parses a mode's name ("zero3" is zdp's other name); -1 if none. */
int hp_shard_parse(const char *s);

/* Gradient synchronisation (cost-model.md 3): after the last backward, or overlapped
 * with each stage's backward pass. */
typedef enum { HP_SYNC_END = 0, HP_SYNC_OVERLAP = 1 } hp_grad_sync;
const char *hp_grad_sync_name(hp_grad_sync g);
int hp_grad_sync_parse(const char *s);

/* The largest cluster a file may describe: devices in all, and nodes (the node-pair
 * bandwidth and latency tables take 16 bytes per pair of nodes: 256 MiB at 4096). */
#define HP_MAX_DEVICES 65536
#define HP_MAX_NODES 4096
/* The most layers a model may have, `repeat` and `transformer` included. */
#define HP_MAX_LAYERS 1000000L

/* The largest global batch (2^40 samples) and micro-batch (2^30) hetplan accepts: every
 * count derived from them fits its type (docs/limits.md). Micro-batch sizes above
 * HP_MAX_MBS are left out of the search space. */
#define HP_MAX_GBS (1L << 40)
#define HP_MAX_MBS (1 << 30)

typedef struct hp_job {
  long gbs;               /* global batch size, samples, 1..HP_MAX_GBS */
  hp_schedule schedule;
  int accept_profile_mismatch;  /* 1: a profile whose kinds were measured for other layer
                                 * shapes than the model's is used, with a warning, instead
                                 * of refused (the job file's "accept_profile_mismatch") */
  /* 1.2, all optional; a zeroed job is version 1.1's (with every mode allowed) */
  int sequence_parallel;  /* activations of splittable layers divide by tp entirely */
  hp_grad_sync grad_sync;
  unsigned sharding;      /* mask of the modes a plan may use, bit 1 << hp_shard; 0: all */
  int uniform_sharding;   /* 1: every layer of a plan takes the same mode */
  int idle_devices;       /* 1: a plan may leave devices unused */
  int max_slices;         /* most slices of a zdp layer, a power of two; 0 or 1: none */
  int framework;          /* an hp_framework: the default reserve of the types whose
                           * cluster file gives no reserved_gib; 0 (none): no default */
  int compute_model;      /* hp_compute_model: layer times the profile does not measure
                           * come from the shape model (0, default) or FLOPs (1) */
} hp_job;

/* The job's mode mask with the default applied (all four when unset). */
static inline unsigned hp_job_modes(const hp_job *j) { return j->sharding ? j->sharding : HP_SHARD_ALL; }
static inline int hp_job_max_slices(const hp_job *j) { return j->max_slices > 1 ? j->max_slices : 1; }
/* The optimizer's bytes per parameter: state - param - grad (cost-model.md 1). */
static inline double hp_model_opt_bytes(const hp_model *m)
{
  return m->state_bytes - m->param_bytes - m->grad_bytes;
}
/* update_bytes, or its default 2 opt_bytes + grad_bytes + param_bytes. */
static inline double hp_model_update_bytes(const hp_model *m)
{
  return m->update_given ? m->update_bytes
                         : 2 * hp_model_opt_bytes(m) + m->grad_bytes + m->param_bytes;
}

typedef struct hp_series hp_series;  /* measured points of one (kind, type, tp) */

/* A bound problem: model, cluster, profile and job, with the look-up tables the
 * evaluator needs. Owns all of its parts. */
typedef struct hp_problem {
  hp_model *model;
  hp_cluster *cluster;
  hp_profile *profile;    /* NULL if none */
  hp_job job;
  const double *bw;       /* effective device matrix (profile's, else cluster's), or NULL */
  const double *lat;
  int max_tp;             /* largest tp with a series slot: the largest node's GPU count */
  hp_series **series;     /* [n_layers * n_types * (max_tp + 1)], NULL where not measured */
  hp_series *series_store;
  int n_series;
  hp_series *shape_store; /* the shape model's series (job.compute_model shape), where
                           * the profile measures no (kind, type, tp) */
  int n_shape;
  int mem_measured;       /* 1 if some series has measured memory in use (1.2) */
} hp_problem;

const char *hp_schedule_name(hp_schedule s);
/* Parses "1f1b" or "gpipe"; returns -1 otherwise. */
int hp_schedule_parse(const char *s);

void hp_model_destroy(hp_model **m);
void hp_cluster_destroy(hp_cluster **c);
void hp_profile_destroy(hp_profile **p);

/* Sums over the model: parameters and forward+backward FLOPs per sample. The parameter
 * sum counts every layer's (what memory holds, a tied head's copy included). */
double hp_model_total_params(const hp_model *m);
/* The model's size as published: the sum less tied copies (tied_params). */
double hp_model_unique_params(const hp_model *m);
double hp_model_total_flops(const hp_model *m);

/* One item of a node of the module tree: a child module, or a layer that no child module
 * holds. */
typedef struct hp_module_item {
  int module;          /* index into m->modules; -1: the layer `first` */
  int first, last;     /* its layers, [first, last) */
} hp_module_item;
/* The items of `node` (an index into m->modules, or -1: the root, whose layers are all of
 * the model's) in layer order, into `items` (room for the node's layer count suffices);
 * returns their count. Without a tree the root's items are the layers. */
int hp_model_items(const hp_model *m, int node, hp_module_item *items);

/* Fills the node-pair tables and device numbering of a cluster whose types and nodes
 * are set. `inter_bw`/`inter_lat` are the default between nodes (inter_bw <= 0: none,
 * then every node pair must be set by the caller afterwards). */
hp_err hp_cluster_finish(hp_cluster *c, double inter_bw, double inter_lat, hp_diag *d);

/* Binds the parts into a problem and takes ownership of model, cluster and profile
 * (profile may be NULL), also on failure. Checks the profile against the cluster
 * (matrix size; unknown device types warn and are ignored) and against the model: a
 * profile with layer_times none of which is for one of the model's layer kinds on one
 * of the cluster's device types is an error (HP_INVAL) that names the file and says
 * what does not match. So is a profile whose shape record of a kind (params, FLOPs,
 * element size) differs from the model's layers of that kind, unless
 * job.accept_profile_mismatch (then a warning through d->warn), and a measured layer
 * time below what the layer's FLOPs take at the device type's peak (F mbs / (t_l peak)).
 * How much of the problem the profile covers: hp_coverage.h.
 * Unless job.compute_model is flops, adds the shape model's series (hp_shape.h) for every
 * (layer kind, device type with "shape", tp) of a transformer model the profile does not
 * measure. A model with gemm_precision fp8 on a type without tflops_fp8 is HP_INVAL.
 * Applies the cluster's memory margin: each type's usable capacity `mem` becomes
 * mem_total * (1 - mem_margin), the one place the margin enters, so that the evaluator
 * and every solver see it alike. */
hp_err hp_problem_create(hp_problem **out, hp_model *model, hp_cluster *cluster,
                         hp_profile *profile, hp_job job, hp_diag *d);
void hp_problem_destroy(hp_problem **p);
/* Recomputes the shape model's series of a bound problem in place (the same micro-batch
 * sizes, the seconds afresh) from its device types' shape constants as they are now:
 * what a fit that sets them (hetplan calibrate) calls after each change, since the
 * evaluator reads the series, not the constants. Only the series bound at creation are
 * recomputed: a type that gains a "shape" afterwards keeps its FLOPs estimate, and one
 * whose shape.given is cleared keeps the series it has. only_tp > 0: only the series at
 * that tp (all a fit over plans of one tp needs); 0: every tp. Cheap: types x tp x 4
 * series of up to 64 micro-batch sizes, hp_shape_layer_time at each. */
void hp_problem_refresh_shape(hp_problem *p, int only_tp);
/* Sets the measured layer times of device type `type` (the series built from the profile,
 * never the shape model's) to `scale` times the profile's seconds, in place: what a fit of
 * the profile's scale per type (hetplan calibrate's profile_scale) calls. The profile's
 * entries are left as loaded, so each call scales from them (scale 1 restores them). */
void hp_problem_scale_profile(hp_problem *p, int type, double scale);
/* The least scale of type `type`'s measured times that keeps each at or above what its
 * layers' FLOPs take at the type's peak (cost-model.md 7.4, checked when binding; at most
 * 1 for a problem that bound); -1 where the type has no measured time in use. */
double hp_problem_profile_scale_floor(const hp_problem *p, int type);

/* --- Copies and "what if" edits (copy.c): what re-planning on a changed cluster needs.
 * Each returns a deep copy owned by the caller. */
hp_err hp_model_copy(const hp_model *src, hp_model **out, hp_diag *d);
hp_err hp_cluster_copy(const hp_cluster *src, hp_cluster **out, hp_diag *d);
hp_err hp_profile_copy(const hp_profile *src, hp_profile **out, hp_diag *d);
/* A problem bound from copies of src's model and profile, with `cluster` (taken over,
 * also on failure; NULL: a copy of src's) and `job`. A copied cluster keeps each type's
 * mem_total, so binding applies its (possibly changed) margin afresh. */
hp_err hp_problem_copy_with(const hp_problem *src, hp_cluster *cluster, hp_job job,
                            hp_problem **out, hp_diag *d);
/* Appends `count` nodes like node `like` (type, GPUs, inside links), named
 * "<like>+1", ...: linked to the old nodes as `like` is, and to `like` and to each other
 * by `bw` (bytes/s) and `lat` (s). HP_NOTSUP for a cluster with a device matrix. */
hp_err hp_cluster_add_nodes(hp_cluster *c, int like, int count, double bw, double lat,
                            hp_diag *d);
/* Removes the nodes n with gone[n] ([n_nodes]) set: the others keep their order, their
 * devices are numbered afresh, and the node-pair tables and a device matrix keep the rows
 * of what stays. old_to_new ([the old n_devices], may be NULL) gets each old device's new
 * id, -1 for a removed one. HP_INVAL if no node would be left. */
hp_err hp_cluster_remove_nodes(hp_cluster *c, const unsigned char *gone, int *old_to_new,
                               hp_diag *d);
/* Keeps the rows and columns of a profile's device matrix that old_to_new ([n_old]) maps
 * to 0..n_new-1 (-1: dropped). Nothing to do for a profile without a matrix; HP_INVAL
 * when its matrix is not n_old x n_old. */
hp_err hp_profile_keep_devices(hp_profile *p, const int *old_to_new, int n_old, int n_new,
                               hp_diag *d);
/* Appends the nodes of `add` (a cluster as loaded, or bound) to c, after c's: their links
 * among themselves as `add` gives them, to c's nodes by `bw` (bytes/s, > 0) and `lat` (s).
 * Device types are matched by name: one that c has must have the same figures (memory,
 * reserve, peak, efficiency, memory bandwidth), else HP_INVAL naming the figure; a new
 * one is added. A node name c already has is HP_INVAL; a device matrix on either side
 * HP_NOTSUP (it does not say how the two sets of devices connect). */
hp_err hp_cluster_merge(hp_cluster *c, const hp_cluster *add, double bw, double lat,
                        hp_diag *d);

/* Bandwidth (bytes/s) and latency (s) between two distinct devices
 * (cost-model.md section 1: profiled matrix, else intra-node, else link figures). */
double hp_problem_bw(const hp_problem *p, int a, int b);
double hp_problem_lat(const hp_problem *p, int a, int b);

static inline int hp_device_type(const hp_problem *p, int dev)
{
  return p->cluster->nodes[p->cluster->dev_node[dev]].type;
}

/* Forward+backward time (s) of one micro-batch of `mbs` samples of layer `l` on device
 * type `k` at TP degree `tp`, before recompute. `btp` and `lattp` are the smallest
 * bandwidth and largest latency inside the TP group (ignored when tp = 1). Profiled
 * where the profile has the (kind, type, tp), analytic otherwise (cost-model.md 3, 7.4). */
double hp_layer_time(const hp_problem *p, int l, int k, int tp, int mbs,
                     double btp, double lattp);

/* Whether the time above comes from the profile's measurements (not from the shape
 * model's series, nor from FLOPs). */
int hp_layer_time_profiled(const hp_problem *p, int l, int k, int tp);

#endif
