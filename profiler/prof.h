/* prof.h -- the parts of hetplan-profile (docs/profiler.md): the command line, layer op
 * lists, statistics and fits, the pair schedule of the bandwidth matrix, device names,
 * the JSON writers (all plain C, tested without MPI or a GPU), and the interfaces of the
 * MPI, CUDA and NCCL parts. Only prof_main.c prints. */
#ifndef HP_PROF_H
#define HP_PROF_H

#include <stddef.h>

#include "hetplan/hetplan.h"
#include "hetplan/hp_cost.h"   /* the ring collectives' factors, as the planner has them */
#include "prof_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The command line (prof_args.c) -------------------------------------------------- */

#define PROF_GIB 1073741824.0
#define PROF_MAX_LIST 32     /* entries of --tp and --mbs */

typedef struct prof_opts {
  const char *model, *cluster_out, *profile_out, *name, *type;
  int mpi_only, no_nccl, no_layers, help;
  int sequence_parallel;   /* --sequence-parallel: the op lists shard the sequence (1.2) */
  int tps[PROF_MAX_LIST], n_tps, mbs[PROF_MAX_LIST], n_mbs;   /* n 0: not given */
  int max_mbs, warmup, reps, matrix_iters, lat_iters, nccl_iters, simulate_hosts;
  long matrix_bytes;
  double nccl_min, nccl_max, tp_gbps, tp_lat_us;
  double mem_gib, reserved_gib, tflops, efficiency;   /* < 0: not given */
} prof_opts;

/* The usage text of --help. */
extern const char prof_help[];

/* Reads the flags after argv[0] into o, the defaults first (--help sets o->help and the
 * rest is still read). Returns 0, or 2 (the usage exit code) with the message in err. */
int prof_parse_args(int argc, char **argv, prof_opts *o, char *err, size_t n);

/* ---- Layer op lists (prof_ops.c; the types are in prof_ops.h) ----------------------- */

/* Builds layer `l` of model `m` (its kind's op list) at tensor-parallel degree tp and
 * micro-batch size mbs, on one TP rank. A model expanded from a transformer gets the
 * real structure (docs/profiler.md); an explicit layer a synthetic one: GEMMs with its
 * FLOPs over a square weight of its parameters, element-wise passes over its
 * activation bytes. With sequence_parallel and tp > 1 (Megatron's sequence parallelism,
 * Korthikanti et al. 2022) the norms, dropouts and residuals of a transformer run on
 * mbs seq / tp rows and keep that much; the GEMMs read gathered copies of their inputs.
 * Returns 0, or -1 with a message (tp not dividing the heads, say). */
int prof_layer_build(const hp_model *m, int l, int tp, int mbs, int sequence_parallel,
                     prof_layer *out, char *why, size_t n);

/* Lifetimes of a layer's buffers in the order the executor runs its ops (the forward
 * ops in list order, then the backward ones): order[k] is the k-th op run; first[b] and
 * last[b] the positions of buffer b's first and last use (-1: unused); resident[b] is 1
 * for what exists before the layer runs and after it (weights, their gradients, the
 * forward's inputs and output: other layers' memory or the model states), 0 for what
 * the layer allocates at first use and frees after last use. Returns the position of
 * the first backward op (n_ops when there is none). Arrays of PROF_MAX_OPS and
 * PROF_MAX_BUFS entries. */
int prof_layer_lifetimes(const prof_layer *ly, int *order, int *first, int *last, int *resident);
/* What the lifetimes above make of one micro-batch's memory, had every buffer exactly
 * its bytes: `act`, the non-resident bytes alive when the forward pass ends (saved for
 * backward), and `work`, the largest non-resident total alive at any op less act (the
 * transient peak above them; 0 if none). The GPU measurement (prof_gpu_measure_memory)
 * finds these plus its allocator's rounding. */
void prof_layer_live_bytes(const prof_layer *ly, double *act, double *work);

/* Sums over an op list: GEMM FLOPs (2 m n k batch, forward and backward), bytes by role,
 * and the bytes the element-wise kernels read and write. */
double prof_layer_flops(const prof_layer *ly);
double prof_layer_bytes(const prof_layer *ly, int role);
double prof_layer_ew_bytes(const prof_layer *ly);
/* Elements operand `which` (0 in0 / A, 1 in1 / B, 2 out / C, 3 aux) of op i reaches. */
double prof_op_extent(const prof_layer *ly, int i, int which);

/* ---- Statistics and fits (prof_stats.c) ---------------------------------------------- */

/* Median of n values (sorts v in place); NaN when n = 0. */
double prof_median(double *v, int n);

/* y = a + b x fitted with relative weights (minimises sum ((a + b x - y) / y)^2), then
 * a clamped at 0 (refitted through the origin). Returns 0, or -1 with fewer than two
 * distinct x or a slope that is not positive. */
int prof_fit_line(const double *x, const double *y, int n, double *a, double *b);

/* nccl-tests' bus-bandwidth factor for `op` on n ranks: all-reduce 2(n-1)/n,
 * all-gather and reduce-scatter (n-1)/n, send/recv 1; 0 for an unknown op. */
double prof_bus_factor(const char *op, int n);

/* ---- The pair schedule of the bandwidth matrix (prof_schedule.c) ---------------------- */

typedef struct prof_pair { int a, b; } prof_pair;
typedef struct prof_schedule {
  int n_slots;
  int *slot_start;     /* [n_slots + 1]: slot s holds pairs[slot_start[s] .. slot_start[s+1]) */
  int n_pairs;         /* n (n - 1) / 2: every unordered pair once; both directions are
                          measured when its turn comes */
  prof_pair *pairs;
} prof_schedule;

/* A round-robin tournament (circle method) over n ranks, each round split further so
 * that no host takes part in two inter-host pairs at once (its network link is not
 * shared); host_of[r] names rank r's host (NULL: all distinct). No rank is in two pairs
 * of a slot. Returns 0 or -1 (out of memory). */
int prof_schedule_build(int n, const int *host_of, prof_schedule *out);
void prof_schedule_free(prof_schedule *s);

/* Device numbering (prof_schedule.c): hosts in order of their first rank, ranks in
 * order within a host, as formats.md numbers a cluster's devices node by node.
 * host_of[r] must number hosts by first appearance (0, then 1, ...). Fills
 * device_of[n], rank_of[n] and host_size[n_hosts]; returns n_hosts. */
int prof_device_order(int n, const int *host_of, int *device_of, int *rank_of, int *host_size);

/* ---- Device names (prof_device.c) ----------------------------------------------------- */

/* A device type name for the files from the CUDA device name: "NVIDIA H100 80GB HBM3"
 * -> "H100"; unknown names are kept with spaces turned into '-'. */
void prof_type_name(const char *device_name, char *out, size_t n);
/* Dense fp16/bf16 tensor peak (TFLOPS) from the data sheet for a CUDA device name; 0 if
 * unknown. */
double prof_peak_tflops(const char *device_name);

/* ---- What a run measured, for the writers (prof_write.c) ------------------------------ */

typedef struct prof_type_spec {
  char name[64];
  double mem_gib, reserved_gib, tflops, efficiency;
  char gpu[256];       /* the CUDA device name that measured it, "" if none did */
  int bf16;            /* its op lists' 16-bit type: 1 bf16, 0 fp16 (prof_gpu.bf16) */
} prof_type_spec;

typedef struct prof_host {
  char name[128];
  int gpus;            /* ranks (one per GPU) on the host */
  int type;            /* index into prof_run.types */
} prof_host;

typedef struct prof_point {  /* one measured (kind, type, tp, mbs) */
  char kind[64];
  int type, tp, mbs;
  double seconds, compute_seconds, tp_comm_seconds;
  double peak_bytes;           /* informative: the timing run's footprint (prof_layer_time) */
  int mem_measured;            /* 1: act_bytes and work_bytes were measured on the GPU
                                  (prof_gpu_measure_memory); 0: not measured, not written */
  double act_bytes, work_bytes;/* one micro-batch on one TP rank: saved for backward, and
                                  the transient peak above them (formats.md "Profile") */
} prof_point;

typedef struct prof_line_fit {  /* fixed + per-sample cost of one (kind, type, tp) */
  char kind[64];
  int type, tp, points;
  double fixed, per_sample;     /* seconds */
} prof_line_fit;

typedef struct prof_coll {      /* one NCCL measurement */
  char op[16];
  int ranks;
  double bytes, seconds;
} prof_coll;

typedef struct prof_coll_fit {
  char op[16];
  int ranks, points;
  double lat, bus_bw;           /* seconds, bytes/s */
} prof_coll_fit;

typedef struct prof_run {
  char name[128];               /* the cluster's name */
  char source[512];             /* what ran, when, with which settings */
  char notes[2048];
  int n_types;
  prof_type_spec types[16];
  int n_hosts;
  prof_host *hosts;             /* in device order */
  int n_devices;
  double *bw;                   /* [n_devices^2] bytes/s, device order, row = sender */
  double *lat;                  /* [n_devices^2] seconds */
  int n_points, n_fits, n_colls, n_coll_fits;
  prof_point *points;
  prof_line_fit *fits;
  prof_coll *colls;
  prof_coll_fit *coll_fits;
  const hp_model *model;        /* the model whose layers were timed (borrowed), or NULL */
  int sequence_parallel;        /* the setting the op lists were built under (--sequence-parallel) */
} prof_run;

/* The fit of the points of `op` on `ranks` ranks among c[0..nc-1] (the first 64):
 * latency and nccl-tests' bus bandwidth (prof_stats.c). Returns 0, or -1 if they do not
 * fit (prof_fit_line). */
int prof_fit_collective(const prof_coll *c, int nc, const char *op, int ranks, prof_coll_fit *f);
/* Fixed + per-sample fits of each (kind, type, tp) of r's points with two or more mbs,
 * in the order of their first point, into r->fits (malloc'd) and r->n_fits
 * (prof_stats.c). Returns 0, or -1 out of memory. */
int prof_fit_layers(prof_run *r);

/* The cluster file (docs/formats.md): device types, one node per host, the default
 * intra-node figure (slowest pair inside the host) and inter-node figure (slowest pair
 * between hosts), and the measured bandwidth_matrix. malloc'd text or NULL. */
char *prof_cluster_json(const prof_run *r);
/* The profile file: what was measured for (model, the shape of each kind timed: its
 * first layer's params and FLOPs, a transformer's sizes, the element type; gpus: the
 * CUDA name of each type; sequence_parallel), device_types, layer_times (with the
 * informative compute_seconds, tp_comm_seconds, peak_bytes, and act_bytes and
 * work_bytes where measured: cost terms since 1.2), layer_fits, collectives,
 * collective_fits. */
char *prof_profile_json(const prof_run *r);

/* ---- The GPU (prof_gpu.c with the CUDA toolkit, prof_gpu_stub.c without) ------------ */

typedef struct prof_gpu {
  int device;          /* CUDA ordinal this rank uses */
  int count;           /* devices it sees */
  char name[256];
  double mem_bytes;    /* total */
  double free_bytes;   /* free once the context exists */
  int cc_major, cc_minor;
  int bf16;            /* the 16-bit type of the op lists: 1 bf16 (cc >= 8.0), 0 fp16 */
} prof_gpu;

/* 1 if the toolkit was there at build time. */
int prof_gpu_built(void);
/* Opens this rank's GPU (local_rank modulo the devices it sees) and makes it current.
 * Returns 1, or 0 with why: built without CUDA, no driver, no device. */
int prof_gpu_open(int local_rank, prof_gpu *g, char *why, size_t n);

typedef struct prof_layer_time {
  double seconds;        /* median forward + backward (CUDA events), s */
  double fwd_seconds;    /* median forward alone */
  double spread;         /* (max - min) / median over the repetitions */
  double alloc_bytes;    /* buffers and cuBLAS workspace allocated for it */
  double peak_bytes;     /* device memory in use above the baseline after the runs */
} prof_layer_time;
/* (Timing allocates every buffer at once, so its footprint is no activation figure;
 * prof_gpu_measure_memory measures those.) */

/* Times one op list: `warmup` unmeasured runs, then `reps` timed runs of forward and
 * backward. Returns 0, 1 if its buffers do not fit in free memory (nothing run), or -1
 * with why. */
int prof_gpu_time_layer(const prof_gpu *g, const prof_layer *ly, int warmup, int reps,
                        prof_layer_time *out, char *why, size_t n);
/* Measures one micro-batch's memory: runs the op list once, forward then backward, with
 * each non-resident buffer (prof_layer_lifetimes) allocated from a private CUDA memory
 * pool before its first use and freed after its last, and reads the pool's counters:
 * act, the bytes in use when the forward pass ends, and work, the high-water mark of
 * both passes above them. Returns 0, 1 if it does not fit in free memory (nothing
 * measured), or -1 with why. */
int prof_gpu_measure_memory(const prof_gpu *g, const prof_layer *ly, double *act,
                            double *work, char *why, size_t n);
/* FLOP/s of an n x n x n 16-bit cuBLAS GEMM, median of reps; 0 on failure. */
double prof_gpu_gemm_rate(const prof_gpu *g, int n, int reps);

#ifdef __cplusplus
}
#endif

#endif
