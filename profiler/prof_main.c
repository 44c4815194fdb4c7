/* prof_main.c -- hetplan-profile: one MPI rank per GPU. Finds the hosts, measures the
 * bandwidth and latency matrix (MPI), the NCCL collectives and the layer times of a
 * model (CUDA, cuBLAS) where GPUs are, and writes a cluster file and a profile file
 * (docs/profiler.md). Rank 0 prints; any GPU part that cannot run says why. main runs
 * the phases in order (arguments, hosts, GPUs, matrix, collectives, layer timing, then
 * rank 0 describes the devices and the run and writes the files); the flags are read
 * by prof_args.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prof_mpi.h"

/* ---- printing (rank 0) */

static void print_matrix(const char *title, const prof_hosts *h, const double *v, double scale,
                         int decimals)
{
  int n = h->size;
  printf("  %s\n  %6s", title, "dev");
  for (int j = 0; j < n; j++) printf(" %7d", j);
  putchar('\n');
  for (int i = 0; i < n; i++) {
    printf("  %6d", i);
    for (int j = 0; j < n; j++) {
      if (i == j) printf(" %7s", "-");
      else printf(" %7.*f", decimals, v[(size_t)i * n + j] * scale);
    }
    putchar('\n');
  }
}

/* min, median and max of the intra-host and of the inter-host entries */
static void print_matrix_summary(const prof_hosts *h, const double *bw, const double *lat)
{
  int n = h->size;
  for (int inter = 0; inter < 2; inter++) {
    double *b = calloc((size_t)n * n, sizeof *b), *l = calloc((size_t)n * n, sizeof *l);
    int k = 0;
    if (!b || !l) { free(b); free(l); return; }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        int same = h->host_of[h->rank_of[i]] == h->host_of[h->rank_of[j]];
        if (i == j || same == inter) continue;
        b[k] = bw[(size_t)i * n + j];
        l[k++] = lat[(size_t)i * n + j];
      }
    if (k > 0) {
      double bmed, lmed;
      bmed = prof_median(b, k);
      lmed = prof_median(l, k);
      printf("  %s pairs (%d): %.3f / %.3f / %.3f GB/s (min / median / max), latency "
             "%.2f / %.2f / %.2f us\n", inter ? "inter-host" : "intra-host", k, b[0] / 1e9,
             bmed / 1e9, b[k - 1] / 1e9, l[0] * 1e6, lmed * 1e6, l[k - 1] * 1e6);
    }
    free(b);
    free(l);
  }
}

/* ---- the run */

/* Rank 0 out of memory while the others wait on it: nothing sensible is left to do. */
static void oom_abort(const char *what)
{
  fprintf(stderr, "hetplan-profile: error: out of memory for %s\n", what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

typedef struct gpu_share {     /* what each rank tells rank 0 about its GPU */
  prof_gpu gpu;
  char type[64];
  double gemm_rate;            /* FLOP/s, measured where the data sheet has no peak */
} gpu_share;

/* Where rank 0 learns why the first rank without a GPU has none. */
static void first_failure(MPI_Comm comm, int rank, int size, int ok, const char *why, char *out,
                          size_t n)
{
  int first = ok ? size : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  if (first == 0) {
    if (rank == 0) snprintf(out, n, "%s", why);
    return;
  }
  if (rank == first) {
    char buf[640];
    snprintf(buf, sizeof buf, "rank %d: %s", rank, why);
    MPI_Send(buf, (int)sizeof buf, MPI_CHAR, 0, 41, comm);
  } else if (rank == 0) {
    char buf[640];
    MPI_Recv(buf, (int)sizeof buf, MPI_CHAR, first, 41, comm, MPI_STATUS_IGNORE);
    snprintf(out, n, "%.400s", buf);
  }
}

/* The TP all-reduce time of a layer: NCCL's fit for groups of tp, else --tp-gbps. */
static int tp_comm_time(const prof_opts *o, const prof_coll *c, int nc, const prof_layer *ly,
                        double *t)
{
  prof_coll_fit f;
  *t = 0;
  if (ly->tp <= 1 || ly->n_allreduce == 0) return 0;
  if (prof_fit_collective(c, nc, "allreduce", ly->tp, &f) == 0) {
    *t = ly->n_allreduce * (f.lat + ly->allreduce_bytes * prof_bus_factor("allreduce", ly->tp) / f.bus_bw);
    return 0;
  }
  if (o->tp_gbps > 0) {
    int t_ = ly->tp;
    *t = ly->n_allreduce * (hp_cost_ring_allreduce(t_) * ly->allreduce_bytes / (o->tp_gbps * 1e9 / 8)
                            + hp_cost_ring_latency(t_, o->tp_lat_us) * 1e-6);
    return 0;
  }
  return -1;
}

typedef struct layer_job {
  const prof_opts *o;
  const hp_model *m;
  const prof_gpu *gpu;
  int type;                    /* index of this GPU's type */
  const prof_coll *colls;      /* this rank's NCCL results (its TP groups') */
  int n_colls;
  int verbose;                 /* rank 0 prints as it goes */
} layer_job;

static int add_point(prof_point **pts, int *n, int *cap, const prof_point *p)
{
  if (*n == *cap) {
    int c = *cap ? 2 * *cap : 64;
    prof_point *q = realloc(*pts, (size_t)c * sizeof *q);
    if (!q) return -1;
    *pts = q;
    *cap = c;
  }
  (*pts)[(*n)++] = *p;
  return 0;
}

/* Times every kind x tp x mbs on this rank's GPU. Returns 0 or -1 with why. */
static int time_layers(const layer_job *j, prof_point **pts, int *n_pts, char *why, size_t n)
{
  static const int default_tps[] = { 1, 2, 4, 8 };
  const prof_opts *o = j->o;
  const hp_model *m = j->m;
  const int *tps = o->n_tps ? o->tps : default_tps;
  int n_tps = o->n_tps ? o->n_tps : 4, cap = 0;
  prof_layer *ly = calloc(1, sizeof *ly);
  if (!ly) { snprintf(why, n, "out of memory"); return -1; }
  for (int l = 0; l < m->n_layers; l++) {
    int seen = 0;
    for (int q = 0; q < l && !seen; q++) seen = !strcmp(m->layers[q].kind, m->layers[l].kind);
    if (seen) continue;                               /* one representative per kind */
    for (int ti = 0; ti < n_tps; ti++) {
      int largest = 0, n_m = o->n_mbs ? o->n_mbs : 64;
      char note[320] = "";
      if (j->verbose) {
        printf("  %-16.16s tp %-2d", m->layers[l].kind, tps[ti]);
        fflush(stdout);
      }
      for (int mi = 0; mi < n_m; mi++) {
        int mbs = o->n_mbs ? o->mbs[mi] : 1 << mi;
        prof_layer_time t;
        prof_point p;
        char w[256];
        double comm;
        int rc;
        if (!o->n_mbs && mbs > o->max_mbs) {
          snprintf(note, sizeof note, "--max-mbs %d reached: larger ones may fit", o->max_mbs);
          break;
        }
        if (prof_layer_build(m, l, tps[ti], mbs, o->sequence_parallel, ly, w, sizeof w)) {
          snprintf(note, sizeof note, "skipped: %s", w);
          break;
        }
        if (tp_comm_time(o, j->colls, j->n_colls, ly, &comm)) {
          snprintf(note, sizeof note, "skipped: NCCL timed no group of %d GPUs (a host has "
                   "fewer) and no --tp-gbps was given", tps[ti]);
          break;
        }
        rc = prof_gpu_time_layer(j->gpu, ly, o->warmup, o->reps, &t, w, sizeof w);
        if (rc < 0) {
          snprintf(why, n, "layer '%s' at tp %d, mbs %d: %s", m->layers[l].kind, tps[ti], mbs, w);
          free(ly);
          return -1;
        }
        if (rc == 1) {
          snprintf(note, sizeof note, "mbs %d does not fit in %.1f GiB free", mbs,
                   j->gpu->free_bytes / PROF_GIB);
          if (o->n_mbs) continue;
          break;
        }
        memset(&p, 0, sizeof p);
        snprintf(p.kind, sizeof p.kind, "%s", m->layers[l].kind);
        p.type = j->type;
        p.tp = tps[ti];
        p.mbs = mbs;
        p.compute_seconds = t.seconds;
        p.tp_comm_seconds = comm;
        p.seconds = t.seconds + comm;
        p.peak_bytes = t.peak_bytes > t.alloc_bytes ? t.peak_bytes : t.alloc_bytes;
        /* memory, measured apart from the timing (whose buffers all exist at once): only
         * for the layers whose structure the op list rebuilds; a synthetic layer's
         * buffers are no figure of the real one's memory, and nothing is written for it
         * (formats.md "Profile": act_bytes and work_bytes are cost terms) */
        if (!ly->synthetic) {
          rc = prof_gpu_measure_memory(j->gpu, ly, &p.act_bytes, &p.work_bytes, w, sizeof w);
          if (rc < 0) {
            snprintf(why, n, "layer '%s' at tp %d, mbs %d: memory: %s", m->layers[l].kind,
                     tps[ti], mbs, w);
            free(ly);
            return -1;
          }
          p.mem_measured = rc == 0;
        }
        if (add_point(pts, n_pts, &cap, &p)) { snprintf(why, n, "out of memory"); free(ly); return -1; }
        largest = mbs;
        if (j->verbose) {
          printf("  mbs %d %.3f ms", mbs, p.seconds * 1e3);
          if (p.mem_measured) printf(" %.2f+%.2f GiB", p.act_bytes / PROF_GIB, p.work_bytes / PROF_GIB);
          fflush(stdout);
        }
      }
      if (j->verbose) {
        if (largest) printf("  (largest mbs timed %d%s%s)", largest, note[0] ? "; " : "", note);
        else printf("  %s", note);
        putchar('\n');
      }
    }
  }
  free(ly);
  return 0;
}

/* Checks a written text with hetplan's own loader; 0 or -1 with why. */
static int check_loads(const char *text, const char *path, int cluster, char *why, size_t n)
{
  hp_diag d = {0};
  hp_err e;
  if (cluster) {
    hp_cluster *c = NULL;
    e = hp_cluster_parse(text, path, &c, &d);
    hp_cluster_destroy(&c);
  } else {
    hp_profile *p = NULL;
    e = hp_profile_parse(text, path, &p, &d);
    hp_profile_destroy(&p);
  }
  if (e) snprintf(why, n, "the file written does not load: %.400s", d.msg);
  return e ? -1 : 0;
}

static int write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  if (f && fclose(f)) ok = 0;
  return ok ? 0 : -1;
}

/* ---- the run, phase by phase: each returns GO_ON, or the exit code that ends it */

#define GO_ON -1

/* What the phases share. */
typedef struct run_ctx {
  prof_opts o;
  int rank, size;
  char stamp[64];              /* when the run started (UTC), for the files' source */
  hp_model *model;             /* --model, where layers are timed */
  prof_hosts h;
  prof_schedule sch;
  prof_gpu gpu;                /* this rank's (zero without one) */
  int all_gpu;                 /* every rank has a GPU */
  char gpu_why[512];           /* why not: rank 0 has the first rank's reason */
  double *bw, *lat;            /* the matrix: rank order, device order on rank 0 once measured */
  prof_coll *colls, *tp_colls; /* NCCL over all ranks, and over the TP groups */
  int n_colls, n_tp_colls;
  gpu_share *shares;           /* [size] every rank's GPU and type */
  prof_point *points;          /* layer times: the measuring ranks' own, all of them on rank 0 */
  int n_points;
  prof_run run;                /* what rank 0 writes */
} run_ctx;

/* The flags, --help and the model. Ends the run (before anything started) with the
 * usage exit code 2, 0 after --help, or 3 for a model that does not load. */
static int arguments(run_ctx *c, int argc, char **argv)
{
  char err[512] = "";
  int rc, ok;
  if ((rc = prof_parse_args(argc, argv, &c->o, err, sizeof err))) {
    if (c->rank == 0) fprintf(stderr, "hetplan-profile: %s\n(see 'hetplan-profile --help')\n", err);
    return rc;
  }
  if (c->o.help) {
    if (c->rank == 0) fputs(prof_help, stdout);
    return 0;
  }
  if (c->o.model && !c->o.mpi_only && !c->o.no_layers) {
    hp_diag d = {0};
    ok = hp_model_load(c->o.model, &c->model, &d) == HP_OK;
    if (!ok && c->rank == 0) fprintf(stderr, "hetplan-profile: error: %s\n", d.msg);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) return 3;
  }
  return GO_ON;
}

/* Which ranks share a host, printed with the devices each host's ranks get. */
static int hosts(run_ctx *c)
{
  const prof_hosts *h = &c->h;
  char err[512] = "";
  int size = c->size;
  if (prof_hosts_discover(MPI_COMM_WORLD, c->o.simulate_hosts, &c->h, err, sizeof err)) {
    if (c->rank == 0) fprintf(stderr, "hetplan-profile: error: %s\n", err);
    return 1;
  }
  if (c->rank == 0) {
    printf("hetplan-profile %s: %d rank%s on %d host%s%s\n", HETPLAN_VERSION, size,
           size == 1 ? "" : "s", h->n_hosts, h->n_hosts == 1 ? "" : "s",
           h->simulated ? " (simulated: --simulate-hosts)" : "");
    for (int k = 0; k < h->n_hosts; k++) {
      int first = -1;
      for (int r = 0; r < size; r++)
        if (h->host_of[r] == k && (first < 0 || h->device_of[r] < first)) first = h->device_of[r];
      printf("  host %-24s %d rank%s, devices %d-%d\n", h->names[k], h->host_size[k],
             h->host_size[k] == 1 ? "" : "s", first, first + h->host_size[k] - 1);
    }
    if (!h->shared_agrees && !h->simulated)
      printf("  note: MPI_Comm_split_type(SHARED) groups the ranks otherwise than their "
             "processor names; the names were used\n");
    fflush(stdout);
  }
  return GO_ON;
}

/* Each rank's GPU, and whether every rank has one (else rank 0 says why not). */
static void gpus(run_ctx *c)
{
  int has_gpu = 0;
  if (c->o.mpi_only) snprintf(c->gpu_why, sizeof c->gpu_why, "--mpi-only");
  else has_gpu = prof_gpu_open(c->h.local_rank, &c->gpu, c->gpu_why, sizeof c->gpu_why);
  if (!has_gpu) memset(&c->gpu, 0, sizeof c->gpu);
  c->all_gpu = has_gpu;
  MPI_Allreduce(MPI_IN_PLACE, &c->all_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!c->o.mpi_only) {
    char first[512] = "";
    first_failure(MPI_COMM_WORLD, c->rank, c->size, has_gpu, c->gpu_why, first, sizeof first);
    if (c->rank == 0 && !c->all_gpu) snprintf(c->gpu_why, sizeof c->gpu_why, "%s", first);
  }
  if (c->rank == 0) {
    const prof_gpu *g = &c->gpu;
    if (c->all_gpu) printf("gpu: rank 0 uses device %d of %d, %s (compute %d.%d, %.1f GiB, %s)\n",
                           g->device, g->count, g->name, g->cc_major, g->cc_minor,
                           g->mem_bytes / PROF_GIB, g->bf16 ? "bf16" : "fp16");
    else printf("gpu: skipped: %s\n", c->gpu_why);
    fflush(stdout);
  }
}

/* The bandwidth and latency matrix (MPI), in device order on rank 0, printed. */
static int matrix(run_ctx *c)
{
  prof_matrix_opts mo;
  char err[512] = "";
  int size = c->size, ok;
  mo.bytes = c->o.matrix_bytes;
  mo.iters = c->o.matrix_iters;
  mo.lat_iters = c->o.lat_iters;
  c->bw = calloc((size_t)size * size, sizeof *c->bw);
  c->lat = calloc((size_t)size * size, sizeof *c->lat);
  ok = c->bw && c->lat && prof_schedule_build(size, c->h.host_of, &c->sch) == 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok || prof_matrix_measure(MPI_COMM_WORLD, &c->sch, &mo, c->bw, c->lat, err, sizeof err)) {
    if (c->rank == 0) fprintf(stderr, "hetplan-profile: error: matrix: %s\n", ok ? err : "out of memory");
    return 1;
  }
  if (c->rank == 0) {
    const prof_hosts *h = &c->h;
    /* into device order */
    double *dbw = calloc((size_t)size * size, sizeof *dbw), *dlat = calloc((size_t)size * size, sizeof *dlat);
    if (!dbw || !dlat) oom_abort("the matrix");
    for (int a = 0; a < size; a++)
      for (int b = 0; b < size; b++) {
        dbw[(size_t)h->device_of[a] * size + h->device_of[b]] = c->bw[(size_t)a * size + b];
        dlat[(size_t)h->device_of[a] * size + h->device_of[b]] = c->lat[(size_t)a * size + b];
      }
    free(c->bw);
    free(c->lat);
    c->bw = dbw;
    c->lat = dlat;
    printf("bandwidth matrix: every ordered pair of %d ranks, %ld-byte messages x %d "
           "(median), latency 8 bytes x %d; %d slot%s of pairs\n", size, c->o.matrix_bytes,
           c->o.matrix_iters, c->o.lat_iters, c->sch.n_slots, c->sch.n_slots == 1 ? "" : "s");
    if (size <= 16 && size > 1) {
      print_matrix("GB/s (row sends to column), by device", h, c->bw, 1e-9, 3);
      print_matrix("latency us", h, c->lat, 1e6, 2);
    }
    print_matrix_summary(h, c->bw, c->lat);
    fflush(stdout);
  }
  return GO_ON;
}

/* NCCL: the collectives over every rank, then the all-reduce of the TP groups inside
 * each host at every tp degree of the layer timing; printed, or why they were skipped. */
static int collectives(run_ctx *c)
{
  const prof_opts *o = &c->o;
  const prof_hosts *h = &c->h;
  char coll_why[512] = "";
  int rank = c->rank, size = c->size;
  if (o->mpi_only) snprintf(coll_why, sizeof coll_why, "--mpi-only");
  else if (!c->all_gpu) snprintf(coll_why, sizeof coll_why, "no GPU (see 'gpu' above)");
  else if (o->no_nccl) snprintf(coll_why, sizeof coll_why, "--no-nccl");
  else if (size < 2) snprintf(coll_why, sizeof coll_why, "one rank: nothing to communicate");
  else {
    prof_nccl_opts no = { o->nccl_min, o->nccl_max, 5, o->nccl_iters };
    static const char *const ar[] = { "allreduce" };
    int failed = prof_nccl_run(MPI_COMM_WORLD, &c->gpu, NULL, 0, &no, &c->colls, &c->n_colls,
                               coll_why, sizeof coll_why) != 0;
    static const int default_tps[] = { 1, 2, 4, 8 };
    const int *tps = o->n_tps ? o->tps : default_tps;
    int n_tps = o->n_tps ? o->n_tps : 4;
    /* every tp degree of the layer timing: its groups of t consecutive ranks of a host
     * all-reduce at once, as TP groups do in training */
    for (int ti = 0; !failed && ti < n_tps; ti++) {
      MPI_Comm sub;
      int t = tps[ti], group = h->local_rank / t;
      int full = t > 1 && (group + 1) * t <= h->host_size[h->host_of[rank]], any_full = full;
      MPI_Allreduce(MPI_IN_PLACE, &any_full, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (!any_full) continue;
      MPI_Comm_split(MPI_COMM_WORLD, full ? h->host_of[rank] * (size + 1) + group : MPI_UNDEFINED,
                     rank, &sub);
      if (sub != MPI_COMM_NULL) {
        failed = prof_nccl_run(sub, &c->gpu, ar, 1, &no, &c->tp_colls, &c->n_tp_colls, coll_why,
                               sizeof coll_why) != 0;
        MPI_Comm_free(&sub);
      }
      MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    if (failed) {
      char first[512] = "";
      first_failure(MPI_COMM_WORLD, rank, size, coll_why[0] == '\0', coll_why, first, sizeof first);
      if (rank == 0) fprintf(stderr, "hetplan-profile: error: collectives: %s\n", first[0] ? first : coll_why);
      return 1;
    }
    coll_why[0] = '\0';
  }
  if (rank == 0) {
    if (coll_why[0]) printf("collectives: skipped: %s\n", coll_why);
    else {
      printf("collectives (NCCL, float, nccl-tests' sizes and bus bandwidth):\n");
      printf("  %-14s %6s %14s %12s %12s %12s\n", "op", "ranks", "bytes", "time us", "algbw GB/s",
             "busbw GB/s");
      for (int pass = 0; pass < 2; pass++) {
        const prof_coll *k = pass ? c->tp_colls : c->colls;
        for (int i = 0; i < (pass ? c->n_tp_colls : c->n_colls); i++)
          printf("  %-14s %6d %14.0f %12.2f %12.3f %12.3f\n", k[i].op, k[i].ranks, k[i].bytes,
                 k[i].seconds * 1e6, k[i].bytes / k[i].seconds / 1e9,
                 k[i].bytes / k[i].seconds * prof_bus_factor(k[i].op, k[i].ranks) / 1e9);
      }
    }
    fflush(stdout);
  }
  return GO_ON;
}

/* Every rank's GPU and type name to every rank (c->shares); the device types in order
 * of their first rank (c->run.types), of which that rank measures; a GEMM rate where
 * the data sheet has no peak, gathered on rank 0. */
static int share_gpus(run_ctx *c, int *measurer, int *type)
{
  gpu_share mine;
  int rank = c->rank, size = c->size, ok;
  prof_run *run = &c->run;
  *measurer = *type = 0;
  memset(&mine, 0, sizeof mine);
  mine.gpu = c->gpu;
  if (c->o.type) snprintf(mine.type, sizeof mine.type, "%s", c->o.type);
  else if (c->all_gpu) prof_type_name(c->gpu.name, mine.type, sizeof mine.type);
  else snprintf(mine.type, sizeof mine.type, "unmeasured");
  c->shares = calloc((size_t)size, sizeof *c->shares);
  ok = c->shares != NULL;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) return 1;
  MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, c->shares, (int)sizeof mine, MPI_BYTE,
                MPI_COMM_WORLD);
  /* types in order of first rank */
  for (int r = 0; r < size; r++) {
    int k, first = 1;
    for (k = 0; k < run->n_types; k++)
      if (!strcmp(run->types[k].name, c->shares[r].type)) { first = 0; break; }
    if (first) {
      if (run->n_types == 16) continue;
      snprintf(run->types[run->n_types++].name, sizeof run->types[0].name, "%s", c->shares[r].type);
      if (r == rank) *measurer = 1;
    }
    if (r == rank) *type = k < run->n_types ? k : 0;
  }
  if (c->all_gpu && *measurer && prof_peak_tflops(c->gpu.name) == 0 && c->o.tflops < 0)
    mine.gemm_rate = prof_gpu_gemm_rate(&c->gpu, 8192, 10);
  {
    double rate = mine.gemm_rate, *rates = rank == 0 ? calloc((size_t)size, sizeof *rates) : NULL;
    MPI_Gather(&rate, 1, MPI_DOUBLE, rates, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rates) {
      for (int r = 0; r < size; r++) c->shares[r].gemm_rate = rates[r];
      free(rates);
    }
  }
  return GO_ON;
}

/* The other measuring ranks' layer times to rank 0, one rank after another. */
static void gather_points(run_ctx *c, int measurer)
{
  int rank = c->rank, size = c->size;
  const prof_run *run = &c->run;
  for (int r = 1; r < size; r++) {
    int cnt = rank == r ? c->n_points : 0;
    if (rank == r && measurer) {
      MPI_Send(&cnt, 1, MPI_INT, 0, 42, MPI_COMM_WORLD);
      if (cnt) MPI_Send(c->points, cnt * (int)sizeof *c->points, MPI_BYTE, 0, 43, MPI_COMM_WORLD);
    } else if (rank == 0) {
      int is_measurer = 0;
      for (int k = 0; k < run->n_types; k++) {
        int first_r = 0;
        while (first_r < size && strcmp(c->shares[first_r].type, run->types[k].name)) first_r++;
        if (first_r == r) is_measurer = 1;
      }
      if (!is_measurer) continue;
      MPI_Recv(&cnt, 1, MPI_INT, r, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (cnt > 0) {
        prof_point *grown = realloc(c->points, (size_t)(c->n_points + cnt) * sizeof *c->points);
        if (!grown) oom_abort("the layer times");
        c->points = grown;
        MPI_Recv(c->points + c->n_points, cnt * (int)sizeof *c->points, MPI_BYTE, r, 43,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        c->n_points += cnt;
      }
    }
  }
}

/* Layer timing: the lowest rank of each GPU type times every kind of the model, or rank
 * 0 says why nothing was timed. The GPUs are shared (share_gpus) either way. */
static int layers(run_ctx *c)
{
  const prof_opts *o = &c->o;
  char layer_why[512] = "";
  int rank = c->rank, size = c->size, measurer, type, rc;
  if (o->mpi_only) snprintf(layer_why, sizeof layer_why, "--mpi-only");
  else if (!c->all_gpu) snprintf(layer_why, sizeof layer_why, "no GPU (see 'gpu' above)");
  else if (o->no_layers) snprintf(layer_why, sizeof layer_why, "--no-layers");
  else if (!c->model) snprintf(layer_why, sizeof layer_why, "no --model given");
  if ((rc = share_gpus(c, &measurer, &type)) != GO_ON) return rc;
  if (!layer_why[0]) {
    layer_job j = { o, c->model, &c->gpu, type, c->tp_colls, c->n_tp_colls, rank == 0 };
    int failed = 0, ok;
    char w[512] = "";
    if (rank == 0)
      printf("layer timing (forward + backward, median of %d after %d warm-up; tp "
             "communication from NCCL; memory saved + transient peak of one micro-batch%s):\n",
             o->reps, o->warmup, o->sequence_parallel ? "; sequence parallel" : "");
    /* every measuring rank in turn, so that rank 0 can print its own as it goes */
    if (measurer) failed = time_layers(&j, &c->points, &c->n_points, w, sizeof w) != 0;
    first_failure(MPI_COMM_WORLD, rank, size, !failed, w, layer_why, sizeof layer_why);
    ok = !failed;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
      if (rank == 0) fprintf(stderr, "hetplan-profile: error: layer timing: %s\n", layer_why);
      return 1;
    }
    gather_points(c, measurer);
  }
  if (rank == 0 && layer_why[0]) printf("layer timing: skipped: %s\n", layer_why);
  return GO_ON;
}

/* Rank 0: the device type of each host, and each type's figures: measured (memory, the
 * CUDA context's reserve, the data sheet's peak or the GEMM rate, the efficiency of the
 * model's largest layer at tp 1), placeholders without a GPU, or the flags'. */
static void describe_devices(run_ctx *c)
{
  const prof_opts *o = &c->o;
  const prof_hosts *h = &c->h;
  prof_run *run = &c->run;
  int size = c->size;
  run->n_hosts = h->n_hosts;
  run->hosts = calloc((size_t)h->n_hosts, sizeof *run->hosts);
  if (!run->hosts) oom_abort("the hosts");
  for (int r = 0; r < size; r++) {
    prof_host *ho = &run->hosts[h->host_of[r]];
    int k = 0;
    while (k < run->n_types && strcmp(run->types[k].name, c->shares[r].type)) k++;
    if (ho->gpus == 0) {
      snprintf(ho->name, sizeof ho->name, "%s", h->names[h->host_of[r]]);
      ho->type = k < run->n_types ? k : 0;
    } else if (ho->type != k) {
      printf("note: rank %d on host %s has a %s, the host is described as %s\n", r,
             ho->name, c->shares[r].type, run->types[ho->type].name);
    }
    ho->gpus++;
  }
  for (int k = 0; k < run->n_types; k++) {
    prof_type_spec *t = &run->types[k];
    int r = 0;
    double peak;
    while (r < size && strcmp(c->shares[r].type, t->name)) r++;
    if (c->all_gpu) {
      const prof_gpu *g = &c->shares[r].gpu;
      snprintf(t->gpu, sizeof t->gpu, "%s", g->name);
      t->bf16 = g->bf16;
      peak = prof_peak_tflops(g->name);
      t->mem_gib = g->mem_bytes / PROF_GIB;
      t->reserved_gib = ceil((g->mem_bytes - g->free_bytes) / PROF_GIB * 10) / 10;
      t->tflops = peak > 0 ? peak : c->shares[r].gemm_rate / 1e12;
      t->efficiency = peak > 0 ? 0.5 : 1;
      /* efficiency: the kind with the most FLOPs at tp 1 and its largest mbs */
      if (peak > 0 && c->model) {
        double best_f = 0, best_t = 0;
        for (int i = 0; i < c->n_points; i++) {
          const prof_point *p = &c->points[i];
          int l = 0;
          double f;
          if (p->type != k || p->tp != 1) continue;
          while (l < c->model->n_layers && strcmp(c->model->layers[l].kind, p->kind)) l++;
          if (l == c->model->n_layers) continue;
          f = c->model->layers[l].flops * p->mbs;
          if (f > best_f || (f == best_f && p->compute_seconds < best_t)) {
            best_f = f;
            best_t = p->compute_seconds;
          }
        }
        if (best_f > 0 && best_t > 0) {
          t->efficiency = best_f / best_t / (peak * 1e12);
          if (t->efficiency > 1) t->efficiency = 1;
        }
      }
    } else {
      t->mem_gib = 80;
      t->reserved_gib = 1;
      t->tflops = 100;
      t->efficiency = 0.5;
    }
    if (o->mem_gib > 0) t->mem_gib = o->mem_gib;
    if (o->reserved_gib >= 0) t->reserved_gib = o->reserved_gib;
    if (o->tflops > 0) t->tflops = o->tflops;
    if (o->efficiency > 0) t->efficiency = o->efficiency;
    if (t->reserved_gib >= t->mem_gib) t->reserved_gib = 0;
  }
}

/* Rank 0: the run's name, source and notes, its measurements, and the fits of the
 * collectives and the layer times, printed. */
static void describe_run(run_ctx *c)
{
  const prof_opts *o = &c->o;
  const prof_hosts *h = &c->h;
  prof_run *run = &c->run;
  int size = c->size;
  snprintf(run->name, sizeof run->name, "%s", o->name ? o->name : "");
  if (!o->name) snprintf(run->name, sizeof run->name, "profiled-%s", h->names[0]);
  snprintf(run->source, sizeof run->source,
           "hetplan-profile %s, %s: %d ranks on %d host%s%s; MPI ping-pong %ld B x %d, "
           "latency 8 B x %d%s%s%s", HETPLAN_VERSION, c->stamp, size, h->n_hosts,
           h->n_hosts == 1 ? "" : "s",
           h->simulated ? " (simulated hosts)" : "", o->matrix_bytes, o->matrix_iters,
           o->lat_iters, c->n_colls ? "; NCCL collectives" : "",
           c->n_points ? "; layer times with CUDA events, memory from a CUDA memory pool" : "",
           c->n_points && o->sequence_parallel ? "; sequence parallel" : "");
  if (!c->all_gpu)
    snprintf(run->notes, sizeof run->notes, "no GPU was measured (%s): the device type's "
             "figures are placeholders (--type, --mem-gib, --reserved-gib, --tflops, "
             "--efficiency set them)", c->gpu_why);
  else
    snprintf(run->notes, sizeof run->notes, "tflops: the data sheet's dense 16-bit peak "
             "(or the measured GEMM rate where unknown); efficiency: the measured rate of "
             "the model's largest layer at tp 1 over that peak; reserved_gib: the CUDA "
             "context only");
  run->model = c->model;
  run->sequence_parallel = o->sequence_parallel;
  run->n_devices = size;
  run->bw = c->bw;
  run->lat = c->lat;
  run->points = c->points;
  run->n_points = c->n_points;
  run->colls = c->colls;
  run->n_colls = c->n_colls;
  if (c->n_tp_colls > 0) {
    prof_coll *all = realloc(c->colls, (size_t)(c->n_colls + c->n_tp_colls) * sizeof *all);
    if (all) {
      memcpy(all + c->n_colls, c->tp_colls, (size_t)c->n_tp_colls * sizeof *all);
      c->colls = run->colls = all;
      run->n_colls = c->n_colls + c->n_tp_colls;
    }
  }
  if (run->n_colls > 0) {
    run->coll_fits = calloc((size_t)run->n_colls, sizeof *run->coll_fits);
    for (int i = 0; run->coll_fits && i < run->n_colls; i++) {
      int seen = 0;
      for (int q = 0; q < i && !seen; q++)
        seen = !strcmp(run->colls[q].op, run->colls[i].op) && run->colls[q].ranks == run->colls[i].ranks;
      if (!seen && prof_fit_collective(run->colls, run->n_colls, run->colls[i].op, run->colls[i].ranks,
                            &run->coll_fits[run->n_coll_fits]) == 0)
        run->n_coll_fits++;
    }
    for (int i = 0; i < run->n_coll_fits; i++)
      printf("  fit %-14s %3d ranks: latency %.2f us, bus bandwidth %.3f GB/s (%d sizes)\n",
             run->coll_fits[i].op, run->coll_fits[i].ranks, run->coll_fits[i].lat * 1e6,
             run->coll_fits[i].bus_bw / 1e9, run->coll_fits[i].points);
  }
  if (c->n_points > 0 && prof_fit_layers(run) == 0)
    for (int i = 0; i < run->n_fits; i++)
      printf("  fit %-16s %-10s tp %-2d: %.4f ms + %.4f ms per sample (%d sizes)\n",
             run->fits[i].kind, run->types[run->fits[i].type].name, run->fits[i].tp,
             run->fits[i].fixed * 1e3, run->fits[i].per_sample * 1e3, run->fits[i].points);
}

/* Rank 0: the cluster file, and the profile file where a GPU part measured anything,
 * each checked with hetplan's own loader first. 0, or 1 if one was not written. */
static int write_files(run_ctx *c)
{
  const prof_opts *o = &c->o;
  const prof_run *run = &c->run;
  char err[512] = "", *text;
  int code = 0, any_gpu_part = c->n_points > 0 || c->n_colls > 0;
  text = prof_cluster_json(run);
  if (!text || check_loads(text, o->cluster_out, 1, err, sizeof err) ||
      write_file(o->cluster_out, text)) {
    fprintf(stderr, "hetplan-profile: error: cluster file '%s': %s\n", o->cluster_out,
            !text ? "out of memory" : err[0] ? err : "cannot write");
    code = 1;
  } else {
    printf("wrote %s: %d devices on %d node%s, device type%s", o->cluster_out, c->size,
           c->h.n_hosts, c->h.n_hosts == 1 ? "" : "s", run->n_types == 1 ? "" : "s");
    for (int k = 0; k < run->n_types; k++) printf("%s '%s'", k ? "," : "", run->types[k].name);
    printf("%s\n", c->all_gpu ? "" : " (placeholder figures: no GPU was measured)");
  }
  free(text);
  if (any_gpu_part) {
    text = prof_profile_json(run);
    if (!text || check_loads(text, o->profile_out, 0, err, sizeof err) ||
        write_file(o->profile_out, text)) {
      fprintf(stderr, "hetplan-profile: error: profile '%s': %s\n", o->profile_out,
              !text ? "out of memory" : err[0] ? err : "cannot write");
      code = 1;
    } else {
      printf("wrote %s: %d layer times, %d collective timings\n", o->profile_out, c->n_points,
             run->n_colls);
    }
    free(text);
  } else {
    printf("profile: not written: nothing was measured on a GPU\n");
  }
  return code;
}

/* Every rank ends with rank 0's exit code, its memory freed. */
static int finish(run_ctx *c, int exit_code)
{
  MPI_Bcast(&exit_code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(c->run.hosts);
  free(c->run.fits);
  free(c->run.coll_fits);
  free(c->colls);
  free(c->tp_colls);
  free(c->points);
  free(c->shares);
  free(c->bw);
  free(c->lat);
  prof_schedule_free(&c->sch);
  prof_hosts_free(&c->h);
  hp_model_destroy(&c->model);
  MPI_Finalize();
  return exit_code;
}

int main(int argc, char **argv)
{
  static run_ctx c;            /* zero: nothing measured, nothing allocated */
  time_t now = time(NULL);
  int rc;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  strftime(c.stamp, sizeof c.stamp, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
  if ((rc = arguments(&c, argc, argv)) != GO_ON || (rc = hosts(&c)) != GO_ON) {
    hp_model_destroy(&c.model);
    MPI_Finalize();
    return rc;
  }
  gpus(&c);
  if ((rc = matrix(&c)) == GO_ON && (rc = collectives(&c)) == GO_ON && (rc = layers(&c)) == GO_ON) {
    rc = 0;
    if (c.rank == 0) {
      describe_devices(&c);
      describe_run(&c);
      rc = write_files(&c);
    }
  }
  return finish(&c, rc);
}
