/* prof_main.c -- hetplan-profile: one MPI rank per GPU. Finds the hosts, measures the
 * bandwidth and latency matrix (MPI), the NCCL collectives and the layer times of a
 * model (CUDA, cuBLAS) where GPUs are, and writes a cluster file and a profile file
 * (docs/profiler.md). Rank 0 prints; any GPU part that cannot run says why. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prof_mpi.h"

#define GIB 1073741824.0
#define MAX_LIST 32

static const char help[] =
  "usage: mpirun [-np N] [--hostfile F] hetplan-profile [--model M] [flags]\n"
  "\n"
  "One rank per GPU. Measures, and writes as hetplan's cluster and profile files\n"
  "(docs/formats.md, docs/profiler.md):\n"
  "  - the bandwidth and latency of every ordered pair of ranks (MPI ping-pong, pairs\n"
  "    scheduled so that no rank and no host network link is shared), and which ranks\n"
  "    share a host: the cluster file, with the matrix as bandwidth_matrix;\n"
  "  - NCCL all-reduce, all-gather, reduce-scatter and send/recv over message sizes\n"
  "    (nccl-tests' bus bandwidth), fitted to latency + size / bandwidth;\n"
  "  - the forward+backward time of each layer kind of --model on each GPU type, at\n"
  "    every tp degree (the per-rank shard, plus its all-reduces timed with NCCL) and\n"
  "    micro-batch sizes 1, 2, 4, ... up to the largest that fits (or --max-mbs).\n"
  "Without a GPU (or with --mpi-only) the GPU parts say they are skipped and why; the\n"
  "matrix still runs.\n"
  "\n"
  "output:   --cluster-out F (profiled.cluster.json)  --profile-out F (profiled.profile.json)\n"
  "          --name NAME (the cluster's name; default: profiled-<first host>)\n"
  "parts:    --mpi-only (the matrix alone)  --no-nccl  --no-layers\n"
  "layers:   --model M  --tp LIST (1,2,4,8)  --mbs LIST (default: doubling from 1)\n"
  "          --max-mbs N (16)  --warmup N (3)  --reps N (10)\n"
  "          --tp-gbps B --tp-lat-us L (the TP all-reduce's ring figures where NCCL\n"
  "          could not time a group of that size: tp above the GPUs of a host)\n"
  "matrix:   --matrix-bytes B (16M)  --matrix-iters N (5)  --lat-iters N (20)\n"
  "nccl:     --nccl-min-bytes B (1K)  --nccl-max-bytes B (256M)  --nccl-iters N (20)\n"
  "devices:  --type NAME  --mem-gib X  --reserved-gib X  --tflops X  --efficiency X\n"
  "          (override what was measured; without a GPU they fill the cluster file's\n"
  "          device type, by default 'unmeasured': 80 GiB, 100 TFLOPS, 0.5)\n"
  "testing:  --simulate-hosts K (spread the ranks round-robin over K made-up hosts)\n"
  "Sizes take K, M, G (powers of 1024).\n"
  "\n"
  "exit codes: 0 done (skipped parts included), 1 a measurement failed, 2 usage,\n"
  "3 the model file is bad.\n";

typedef struct opts {
  const char *model, *cluster_out, *profile_out, *name, *type;
  int mpi_only, no_nccl, no_layers, help;
  int tps[MAX_LIST], n_tps, mbs[MAX_LIST], n_mbs;
  int max_mbs, warmup, reps, matrix_iters, lat_iters, nccl_iters, simulate_hosts;
  long matrix_bytes;
  double nccl_min, nccl_max, tp_gbps, tp_lat_us;
  double mem_gib, reserved_gib, tflops, efficiency;   /* < 0: not given */
} opts;

static int parse_size(const char *s, double *out)
{
  char *end;
  double v;
  errno = 0;
  v = strtod(s, &end);
  if (end == s || errno || !(v >= 0)) return -1;
  if (*end == 'K' || *end == 'k') { v *= 1024; end++; }
  else if (*end == 'M' || *end == 'm') { v *= 1048576; end++; }
  else if (*end == 'G' || *end == 'g') { v *= GIB; end++; }
  if (*end == 'B' || *end == 'b') end++;
  if (*end) return -1;
  *out = v;
  return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

static int parse_list(const char *s, int *v, int *n)
{
  char buf[256], *save = NULL;
  *n = 0;
  snprintf(buf, sizeof buf, "%s", s);
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (*n == MAX_LIST || parse_int(t, 1, 1 << 20, &v[*n])) return -1;
    (*n)++;
  }
  return *n > 0 ? 0 : -1;
}

static int parse_num(const char *s, double lo, double *out)
{
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !isfinite(v) || v < lo) return -1;
  *out = v;
  return 0;
}

/* Returns 0, or 2 with the message in err. */
static int parse(int argc, char **argv, opts *o, char *err, size_t n)
{
  memset(o, 0, sizeof *o);
  o->cluster_out = "profiled.cluster.json";
  o->profile_out = "profiled.profile.json";
  o->max_mbs = 16;
  o->warmup = 3;
  o->reps = 10;
  o->matrix_bytes = 16L << 20;
  o->matrix_iters = 5;
  o->lat_iters = 20;
  o->nccl_min = 1024;
  o->nccl_max = 256.0 * 1048576;
  o->nccl_iters = 20;
  o->mem_gib = o->reserved_gib = o->tflops = o->efficiency = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    double x;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { o->help = 1; continue; }
    if (!strcmp(a, "--mpi-only")) { o->mpi_only = 1; continue; }
    if (!strcmp(a, "--no-nccl")) { o->no_nccl = 1; continue; }
    if (!strcmp(a, "--no-layers")) { o->no_layers = 1; continue; }
    if (strncmp(a, "--", 2)) { snprintf(err, n, "unexpected argument '%s'", a); return 2; }
    if (i + 1 >= argc) { snprintf(err, n, "%s needs a value", a); return 2; }
    v = argv[++i];
#define BAD(what) do { snprintf(err, n, "%s: expected %s, got '%s'", a, what, v); return 2; } while (0)
    if (!strcmp(a, "--model")) o->model = v;
    else if (!strcmp(a, "--cluster-out")) o->cluster_out = v;
    else if (!strcmp(a, "--profile-out")) o->profile_out = v;
    else if (!strcmp(a, "--name")) o->name = v;
    else if (!strcmp(a, "--type")) o->type = v;
    else if (!strcmp(a, "--tp")) { if (parse_list(v, o->tps, &o->n_tps)) BAD("a list of positive integers"); }
    else if (!strcmp(a, "--mbs")) { if (parse_list(v, o->mbs, &o->n_mbs)) BAD("a list of positive integers"); }
    else if (!strcmp(a, "--max-mbs")) { if (parse_int(v, 1, 1 << 20, &o->max_mbs)) BAD("a positive integer"); }
    else if (!strcmp(a, "--warmup")) { if (parse_int(v, 0, 1000, &o->warmup)) BAD("an integer in 0..1000"); }
    else if (!strcmp(a, "--reps")) { if (parse_int(v, 1, 10000, &o->reps)) BAD("an integer in 1..10000"); }
    else if (!strcmp(a, "--matrix-iters")) { if (parse_int(v, 1, 10000, &o->matrix_iters)) BAD("an integer in 1..10000"); }
    else if (!strcmp(a, "--lat-iters")) { if (parse_int(v, 1, 100000, &o->lat_iters)) BAD("an integer in 1..100000"); }
    else if (!strcmp(a, "--nccl-iters")) { if (parse_int(v, 1, 10000, &o->nccl_iters)) BAD("an integer in 1..10000"); }
    else if (!strcmp(a, "--simulate-hosts")) { if (parse_int(v, 1, 1 << 20, &o->simulate_hosts)) BAD("a positive integer"); }
    else if (!strcmp(a, "--matrix-bytes")) {
      if (parse_size(v, &x) || x < 1 || x > GIB) BAD("a size from 1 to 1G");
      o->matrix_bytes = (long)x;
    } else if (!strcmp(a, "--nccl-min-bytes")) {
      if (parse_size(v, &o->nccl_min) || o->nccl_min < 4) BAD("a size of at least 4");
    } else if (!strcmp(a, "--nccl-max-bytes")) {
      if (parse_size(v, &o->nccl_max) || o->nccl_max < 4 || o->nccl_max > 16 * GIB) BAD("a size from 4 to 16G");
    }
    else if (!strcmp(a, "--tp-gbps")) { if (parse_num(v, 1e-9, &o->tp_gbps)) BAD("a positive number"); }
    else if (!strcmp(a, "--tp-lat-us")) { if (parse_num(v, 0, &o->tp_lat_us)) BAD("a non-negative number"); }
    else if (!strcmp(a, "--mem-gib")) { if (parse_num(v, 1e-9, &o->mem_gib)) BAD("a positive number"); }
    else if (!strcmp(a, "--reserved-gib")) { if (parse_num(v, 0, &o->reserved_gib)) BAD("a non-negative number"); }
    else if (!strcmp(a, "--tflops")) { if (parse_num(v, 1e-9, &o->tflops)) BAD("a positive number"); }
    else if (!strcmp(a, "--efficiency")) {
      if (parse_num(v, 1e-9, &o->efficiency) || o->efficiency > 1) BAD("a number in (0, 1]");
    } else {
      snprintf(err, n, "unknown flag '%s'", a);
      return 2;
    }
#undef BAD
  }
  if (o->nccl_min > o->nccl_max) { snprintf(err, n, "--nccl-min-bytes is above --nccl-max-bytes"); return 2; }
  if (o->mem_gib > 0 && o->reserved_gib >= o->mem_gib) {
    snprintf(err, n, "--reserved-gib must be below --mem-gib");
    return 2;
  }
  return 0;
}

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

/* Fits the all-reduce (or any op's) points of `ranks` ranks: lat and bus bandwidth. */
static int fit_coll(const prof_coll *c, int nc, const char *op, int ranks, prof_coll_fit *f)
{
  double x[64], y[64], a, b;
  int k = 0;
  for (int i = 0; i < nc && k < 64; i++)
    if (!strcmp(c[i].op, op) && c[i].ranks == ranks) {
      x[k] = c[i].bytes;
      y[k++] = c[i].seconds;
    }
  if (prof_fit_line(x, y, k, &a, &b)) return -1;
  memset(f, 0, sizeof *f);
  snprintf(f->op, sizeof f->op, "%s", op);
  f->ranks = ranks;
  f->points = k;
  f->lat = a;
  f->bus_bw = prof_bus_factor(op, ranks) / b;
  return 0;
}

/* The TP all-reduce time of a layer: NCCL's fit for groups of tp, else --tp-gbps. */
static int tp_comm_time(const opts *o, const prof_coll *c, int nc, const prof_layer *ly,
                        double *t)
{
  prof_coll_fit f;
  *t = 0;
  if (ly->tp <= 1 || ly->n_allreduce == 0) return 0;
  if (fit_coll(c, nc, "allreduce", ly->tp, &f) == 0) {
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
  const opts *o;
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
  const opts *o = j->o;
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
        if (prof_layer_build(m, l, tps[ti], mbs, ly, w, sizeof w)) {
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
                   j->gpu->free_bytes / GIB);
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
        p.act_bytes = prof_layer_bytes(ly, PROF_SAVED);
        p.peak_bytes = t.peak_bytes > t.alloc_bytes ? t.peak_bytes : t.alloc_bytes;
        if (add_point(pts, n_pts, &cap, &p)) { snprintf(why, n, "out of memory"); free(ly); return -1; }
        largest = mbs;
        if (j->verbose) {
          printf("  mbs %d %.3f ms", mbs, p.seconds * 1e3);
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

/* Fixed + per-sample fits of each (kind, type, tp) with two or more mbs points. */
static int layer_fits(prof_run *r)
{
  r->fits = calloc((size_t)(r->n_points + 1), sizeof *r->fits);
  if (!r->fits) return -1;
  for (int i = 0; i < r->n_points; i++) {
    const prof_point *p = &r->points[i];
    double x[MAX_LIST * 2], y[MAX_LIST * 2], a, b;
    int k = 0, first = 1;
    for (int q = 0; q < i && first; q++)
      first = !(r->points[q].type == p->type && r->points[q].tp == p->tp &&
                !strcmp(r->points[q].kind, p->kind));
    if (!first) continue;
    for (int q = i; q < r->n_points && k < MAX_LIST * 2; q++)
      if (r->points[q].type == p->type && r->points[q].tp == p->tp &&
          !strcmp(r->points[q].kind, p->kind)) {
        x[k] = r->points[q].mbs;
        y[k++] = r->points[q].seconds;
      }
    if (prof_fit_line(x, y, k, &a, &b)) continue;
    {
      prof_line_fit *f = &r->fits[r->n_fits++];
      snprintf(f->kind, sizeof f->kind, "%s", p->kind);
      f->type = p->type;
      f->tp = p->tp;
      f->points = k;
      f->fixed = a;
      f->per_sample = b;
    }
  }
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

int main(int argc, char **argv)
{
  opts o;
  prof_hosts h;
  prof_schedule sch = { 0, NULL, 0, NULL };
  prof_matrix_opts mo;
  prof_gpu gpu;
  prof_run run;
  hp_model *model = NULL;
  prof_coll *colls = NULL, *tp_colls = NULL;
  prof_point *points = NULL;
  gpu_share *shares = NULL;
  double *bw = NULL, *lat = NULL;
  char err[512] = "", gpu_why[512] = "", coll_why[512] = "", layer_why[512] = "";
  int rank, size, rc, has_gpu = 0, all_gpu, n_colls = 0, n_tp_colls = 0, n_points = 0;
  int exit_code = 0, ok;
  time_t now = time(NULL);
  char stamp[64];

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  memset(&run, 0, sizeof run);
  strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));

  if ((rc = parse(argc, argv, &o, err, sizeof err))) {
    if (rank == 0) fprintf(stderr, "hetplan-profile: %s\n(see 'hetplan-profile --help')\n", err);
    MPI_Finalize();
    return rc;
  }
  if (o.help) {
    if (rank == 0) fputs(help, stdout);
    MPI_Finalize();
    return 0;
  }
  if (o.model && !o.mpi_only && !o.no_layers) {
    hp_diag d = {0};
    ok = hp_model_load(o.model, &model, &d) == HP_OK;
    if (!ok && rank == 0) fprintf(stderr, "hetplan-profile: error: %s\n", d.msg);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) { hp_model_destroy(&model); MPI_Finalize(); return 3; }
  }

  /* hosts */
  if (prof_hosts_discover(MPI_COMM_WORLD, o.simulate_hosts, &h, err, sizeof err)) {
    if (rank == 0) fprintf(stderr, "hetplan-profile: error: %s\n", err);
    hp_model_destroy(&model);
    MPI_Finalize();
    return 1;
  }
  if (rank == 0) {
    printf("hetplan-profile %s: %d rank%s on %d host%s%s\n", HETPLAN_VERSION, size,
           size == 1 ? "" : "s", h.n_hosts, h.n_hosts == 1 ? "" : "s",
           h.simulated ? " (simulated: --simulate-hosts)" : "");
    for (int k = 0; k < h.n_hosts; k++) {
      int first = -1;
      for (int r = 0; r < size; r++)
        if (h.host_of[r] == k && (first < 0 || h.device_of[r] < first)) first = h.device_of[r];
      printf("  host %-24s %d rank%s, devices %d-%d\n", h.names[k], h.host_size[k],
             h.host_size[k] == 1 ? "" : "s", first, first + h.host_size[k] - 1);
    }
    if (!h.shared_agrees && !h.simulated)
      printf("  note: MPI_Comm_split_type(SHARED) groups the ranks otherwise than their "
             "processor names; the names were used\n");
    fflush(stdout);
  }

  /* the GPU of each rank */
  if (o.mpi_only) snprintf(gpu_why, sizeof gpu_why, "--mpi-only");
  else has_gpu = prof_gpu_open(h.local_rank, &gpu, gpu_why, sizeof gpu_why);
  if (!has_gpu) memset(&gpu, 0, sizeof gpu);
  all_gpu = has_gpu;
  MPI_Allreduce(MPI_IN_PLACE, &all_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!o.mpi_only) {
    char first[512] = "";
    first_failure(MPI_COMM_WORLD, rank, size, has_gpu, gpu_why, first, sizeof first);
    if (rank == 0 && !all_gpu) snprintf(gpu_why, sizeof gpu_why, "%s", first);
  }
  if (rank == 0) {
    if (all_gpu) printf("gpu: rank 0 uses device %d of %d, %s (compute %d.%d, %.1f GiB, %s)\n",
                        gpu.device, gpu.count, gpu.name, gpu.cc_major, gpu.cc_minor,
                        gpu.mem_bytes / GIB, gpu.bf16 ? "bf16" : "fp16");
    else printf("gpu: skipped: %s\n", gpu_why);
    fflush(stdout);
  }

  /* the bandwidth and latency matrix */
  mo.bytes = o.matrix_bytes;
  mo.iters = o.matrix_iters;
  mo.lat_iters = o.lat_iters;
  bw = calloc((size_t)size * size, sizeof *bw);
  lat = calloc((size_t)size * size, sizeof *lat);
  ok = bw && lat && prof_schedule_build(size, h.host_of, &sch) == 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok || prof_matrix_measure(MPI_COMM_WORLD, &sch, &mo, bw, lat, err, sizeof err)) {
    if (rank == 0) fprintf(stderr, "hetplan-profile: error: matrix: %s\n", ok ? err : "out of memory");
    exit_code = 1;
    goto finish;
  }
  if (rank == 0) {
    /* into device order */
    double *dbw = calloc((size_t)size * size, sizeof *dbw), *dlat = calloc((size_t)size * size, sizeof *dlat);
    if (!dbw || !dlat) oom_abort("the matrix");
    for (int a = 0; a < size; a++)
      for (int b = 0; b < size; b++) {
        dbw[(size_t)h.device_of[a] * size + h.device_of[b]] = bw[(size_t)a * size + b];
        dlat[(size_t)h.device_of[a] * size + h.device_of[b]] = lat[(size_t)a * size + b];
      }
    free(bw);
    free(lat);
    bw = dbw;
    lat = dlat;
    printf("bandwidth matrix: every ordered pair of %d ranks, %ld-byte messages x %d "
           "(median), latency 8 bytes x %d; %d slot%s of pairs\n", size, o.matrix_bytes,
           o.matrix_iters, o.lat_iters, sch.n_slots, sch.n_slots == 1 ? "" : "s");
    if (size <= 16 && size > 1) {
      print_matrix("GB/s (row sends to column), by device", &h, bw, 1e-9, 3);
      print_matrix("latency us", &h, lat, 1e6, 2);
    }
    print_matrix_summary(&h, bw, lat);
    fflush(stdout);
  }

  /* NCCL: the world, then the TP groups inside each host */
  if (o.mpi_only) snprintf(coll_why, sizeof coll_why, "--mpi-only");
  else if (!all_gpu) snprintf(coll_why, sizeof coll_why, "no GPU (see 'gpu' above)");
  else if (o.no_nccl) snprintf(coll_why, sizeof coll_why, "--no-nccl");
  else if (size < 2) snprintf(coll_why, sizeof coll_why, "one rank: nothing to communicate");
  else {
    prof_nccl_opts no = { o.nccl_min, o.nccl_max, 5, o.nccl_iters };
    static const char *const ar[] = { "allreduce" };
    int failed = prof_nccl_run(MPI_COMM_WORLD, &gpu, NULL, 0, &no, &colls, &n_colls, coll_why,
                               sizeof coll_why) != 0;
    static const int default_tps[] = { 1, 2, 4, 8 };
    const int *tps = o.n_tps ? o.tps : default_tps;
    int n_tps = o.n_tps ? o.n_tps : 4;
    /* every tp degree of the layer timing: its groups of t consecutive ranks of a host
     * all-reduce at once, as TP groups do in training */
    for (int ti = 0; !failed && ti < n_tps; ti++) {
      MPI_Comm sub;
      int t = tps[ti], group = h.local_rank / t;
      int full = t > 1 && (group + 1) * t <= h.host_size[h.host_of[rank]], any_full = full;
      MPI_Allreduce(MPI_IN_PLACE, &any_full, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (!any_full) continue;
      MPI_Comm_split(MPI_COMM_WORLD, full ? h.host_of[rank] * (size + 1) + group : MPI_UNDEFINED,
                     rank, &sub);
      if (sub != MPI_COMM_NULL) {
        failed = prof_nccl_run(sub, &gpu, ar, 1, &no, &tp_colls, &n_tp_colls, coll_why,
                               sizeof coll_why) != 0;
        MPI_Comm_free(&sub);
      }
      MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    if (failed) {
      char first[512] = "";
      first_failure(MPI_COMM_WORLD, rank, size, coll_why[0] == '\0', coll_why, first, sizeof first);
      if (rank == 0) fprintf(stderr, "hetplan-profile: error: collectives: %s\n", first[0] ? first : coll_why);
      exit_code = 1;
      goto finish;
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
        const prof_coll *c = pass ? tp_colls : colls;
        for (int i = 0; i < (pass ? n_tp_colls : n_colls); i++)
          printf("  %-14s %6d %14.0f %12.2f %12.3f %12.3f\n", c[i].op, c[i].ranks, c[i].bytes,
                 c[i].seconds * 1e6, c[i].bytes / c[i].seconds / 1e9,
                 c[i].bytes / c[i].seconds * prof_bus_factor(c[i].op, c[i].ranks) / 1e9);
      }
    }
    fflush(stdout);
  }

  /* layer times: the lowest rank of each GPU type measures */
  if (o.mpi_only) snprintf(layer_why, sizeof layer_why, "--mpi-only");
  else if (!all_gpu) snprintf(layer_why, sizeof layer_why, "no GPU (see 'gpu' above)");
  else if (o.no_layers) snprintf(layer_why, sizeof layer_why, "--no-layers");
  else if (!model) snprintf(layer_why, sizeof layer_why, "no --model given");
  {
    gpu_share mine;
    int measurer = 0, type = 0;
    memset(&mine, 0, sizeof mine);
    mine.gpu = gpu;
    if (o.type) snprintf(mine.type, sizeof mine.type, "%s", o.type);
    else if (all_gpu) prof_type_name(gpu.name, mine.type, sizeof mine.type);
    else snprintf(mine.type, sizeof mine.type, "unmeasured");
    shares = calloc((size_t)size, sizeof *shares);
    ok = shares != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) { exit_code = 1; goto finish; }
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, shares, (int)sizeof mine, MPI_BYTE,
                  MPI_COMM_WORLD);
    /* types in order of first rank */
    for (int r = 0; r < size; r++) {
      int k, first = 1;
      for (k = 0; k < run.n_types; k++)
        if (!strcmp(run.types[k].name, shares[r].type)) { first = 0; break; }
      if (first) {
        if (run.n_types == 16) continue;
        snprintf(run.types[run.n_types++].name, sizeof run.types[0].name, "%s", shares[r].type);
        if (r == rank) measurer = 1;
      }
      if (r == rank) type = k < run.n_types ? k : 0;
    }
    if (all_gpu && measurer && prof_peak_tflops(gpu.name) == 0 && o.tflops < 0)
      mine.gemm_rate = prof_gpu_gemm_rate(&gpu, 8192, 10);
    {
      double rate = mine.gemm_rate, *rates = rank == 0 ? calloc((size_t)size, sizeof *rates) : NULL;
      MPI_Gather(&rate, 1, MPI_DOUBLE, rates, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (rates) {
        for (int r = 0; r < size; r++) shares[r].gemm_rate = rates[r];
        free(rates);
      }
    }
    if (!layer_why[0]) {
      layer_job j = { &o, model, &gpu, type, tp_colls, n_tp_colls, rank == 0 };
      int failed = 0;
      char w[512] = "";
      if (rank == 0)
        printf("layer timing (forward + backward, median of %d after %d warm-up; tp "
               "communication from NCCL):\n", o.reps, o.warmup);
      /* every measuring rank in turn, so that rank 0 can print its own as it goes */
      if (measurer) failed = time_layers(&j, &points, &n_points, w, sizeof w) != 0;
      first_failure(MPI_COMM_WORLD, rank, size, !failed, w, layer_why, sizeof layer_why);
      ok = !failed;
      MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (!ok) {
        if (rank == 0) fprintf(stderr, "hetplan-profile: error: layer timing: %s\n", layer_why);
        exit_code = 1;
        goto finish;
      }
      /* the others' points to rank 0 */
      for (int r = 1; r < size; r++) {
        int cnt = rank == r ? n_points : 0;
        if (rank == r && measurer) {
          MPI_Send(&cnt, 1, MPI_INT, 0, 42, MPI_COMM_WORLD);
          if (cnt) MPI_Send(points, cnt * (int)sizeof *points, MPI_BYTE, 0, 43, MPI_COMM_WORLD);
        } else if (rank == 0) {
          int is_measurer = 0;
          for (int k = 0; k < run.n_types; k++) {
            int first_r = 0;
            while (first_r < size && strcmp(shares[first_r].type, run.types[k].name)) first_r++;
            if (first_r == r) is_measurer = 1;
          }
          if (!is_measurer) continue;
          MPI_Recv(&cnt, 1, MPI_INT, r, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          if (cnt > 0) {
            prof_point *grown = realloc(points, (size_t)(n_points + cnt) * sizeof *points);
            if (!grown) oom_abort("the layer times");
            points = grown;
            MPI_Recv(points + n_points, cnt * (int)sizeof *points, MPI_BYTE, r, 43,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            n_points += cnt;
          }
        }
      }
    }
  }
  if (rank == 0 && layer_why[0]) printf("layer timing: skipped: %s\n", layer_why);

  /* rank 0: the files */
  if (rank == 0) {
    char *text;
    int any_gpu_part = n_points > 0 || n_colls > 0;
    run.n_hosts = h.n_hosts;
    run.hosts = calloc((size_t)h.n_hosts, sizeof *run.hosts);
    if (!run.hosts) oom_abort("the hosts");
    for (int r = 0; r < size; r++) {
      prof_host *ho = &run.hosts[h.host_of[r]];
      int k = 0;
      while (k < run.n_types && strcmp(run.types[k].name, shares[r].type)) k++;
      if (ho->gpus == 0) {
        snprintf(ho->name, sizeof ho->name, "%s", h.names[h.host_of[r]]);
        ho->type = k < run.n_types ? k : 0;
      } else if (ho->type != k) {
        printf("note: rank %d on host %s has a %s, the host is described as %s\n", r,
               ho->name, shares[r].type, run.types[ho->type].name);
      }
      ho->gpus++;
    }
    for (int k = 0; k < run.n_types; k++) {
      prof_type_spec *t = &run.types[k];
      int r = 0;
      double peak;
      while (r < size && strcmp(shares[r].type, t->name)) r++;
      if (all_gpu) {
        const prof_gpu *g = &shares[r].gpu;
        peak = prof_peak_tflops(g->name);
        t->mem_gib = g->mem_bytes / GIB;
        t->reserved_gib = ceil((g->mem_bytes - g->free_bytes) / GIB * 10) / 10;
        t->tflops = peak > 0 ? peak : shares[r].gemm_rate / 1e12;
        t->efficiency = peak > 0 ? 0.5 : 1;
        /* efficiency: the kind with the most FLOPs at tp 1 and its largest mbs */
        if (peak > 0 && model) {
          double best_f = 0, best_t = 0;
          for (int i = 0; i < n_points; i++) {
            const prof_point *p = &points[i];
            int l = 0;
            double f;
            if (p->type != k || p->tp != 1) continue;
            while (l < model->n_layers && strcmp(model->layers[l].kind, p->kind)) l++;
            if (l == model->n_layers) continue;
            f = model->layers[l].flops * p->mbs;
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
      if (o.mem_gib > 0) t->mem_gib = o.mem_gib;
      if (o.reserved_gib >= 0) t->reserved_gib = o.reserved_gib;
      if (o.tflops > 0) t->tflops = o.tflops;
      if (o.efficiency > 0) t->efficiency = o.efficiency;
      if (t->reserved_gib >= t->mem_gib) t->reserved_gib = 0;
    }
    snprintf(run.name, sizeof run.name, "%s", o.name ? o.name : "");
    if (!o.name) snprintf(run.name, sizeof run.name, "profiled-%s", h.names[0]);
    snprintf(run.source, sizeof run.source,
             "hetplan-profile %s, %s: %d ranks on %d host%s%s; MPI ping-pong %ld B x %d, "
             "latency 8 B x %d%s%s", HETPLAN_VERSION, stamp, size, h.n_hosts,
             h.n_hosts == 1 ? "" : "s",
             h.simulated ? " (simulated hosts)" : "", o.matrix_bytes, o.matrix_iters,
             o.lat_iters, n_colls ? "; NCCL collectives" : "",
             n_points ? "; layer times with CUDA events" : "");
    if (!all_gpu)
      snprintf(run.notes, sizeof run.notes, "no GPU was measured (%s): the device type's "
               "figures are placeholders (--type, --mem-gib, --reserved-gib, --tflops, "
               "--efficiency set them)", gpu_why);
    else
      snprintf(run.notes, sizeof run.notes, "tflops: the data sheet's dense 16-bit peak "
               "(or the measured GEMM rate where unknown); efficiency: the measured rate of "
               "the model's largest layer at tp 1 over that peak; reserved_gib: the CUDA "
               "context only");
    run.n_devices = size;
    run.bw = bw;
    run.lat = lat;
    run.points = points;
    run.n_points = n_points;
    run.colls = colls;
    run.n_colls = n_colls;
    if (n_tp_colls > 0) {
      prof_coll *all = realloc(colls, (size_t)(n_colls + n_tp_colls) * sizeof *all);
      if (all) {
        memcpy(all + n_colls, tp_colls, (size_t)n_tp_colls * sizeof *all);
        colls = run.colls = all;
        run.n_colls = n_colls + n_tp_colls;
      }
    }
    if (run.n_colls > 0) {
      run.coll_fits = calloc((size_t)run.n_colls, sizeof *run.coll_fits);
      for (int i = 0; run.coll_fits && i < run.n_colls; i++) {
        int seen = 0;
        for (int q = 0; q < i && !seen; q++)
          seen = !strcmp(run.colls[q].op, run.colls[i].op) && run.colls[q].ranks == run.colls[i].ranks;
        if (!seen && fit_coll(run.colls, run.n_colls, run.colls[i].op, run.colls[i].ranks,
                              &run.coll_fits[run.n_coll_fits]) == 0)
          run.n_coll_fits++;
      }
      for (int i = 0; i < run.n_coll_fits; i++)
        printf("  fit %-14s %3d ranks: latency %.2f us, bus bandwidth %.3f GB/s (%d sizes)\n",
               run.coll_fits[i].op, run.coll_fits[i].ranks, run.coll_fits[i].lat * 1e6,
               run.coll_fits[i].bus_bw / 1e9, run.coll_fits[i].points);
    }
    if (n_points > 0 && layer_fits(&run) == 0)
      for (int i = 0; i < run.n_fits; i++)
        printf("  fit %-16s %-10s tp %-2d: %.4f ms + %.4f ms per sample (%d sizes)\n",
               run.fits[i].kind, run.types[run.fits[i].type].name, run.fits[i].tp,
               run.fits[i].fixed * 1e3, run.fits[i].per_sample * 1e3, run.fits[i].points);

    text = prof_cluster_json(&run);
    if (!text || check_loads(text, o.cluster_out, 1, err, sizeof err) ||
        write_file(o.cluster_out, text)) {
      fprintf(stderr, "hetplan-profile: error: cluster file '%s': %s\n", o.cluster_out,
              !text ? "out of memory" : err[0] ? err : "cannot write");
      exit_code = 1;
    } else {
      printf("wrote %s: %d devices on %d node%s, device type%s", o.cluster_out, size,
             h.n_hosts, h.n_hosts == 1 ? "" : "s", run.n_types == 1 ? "" : "s");
      for (int k = 0; k < run.n_types; k++) printf("%s '%s'", k ? "," : "", run.types[k].name);
      printf("%s\n", all_gpu ? "" : " (placeholder figures: no GPU was measured)");
    }
    free(text);
    if (any_gpu_part) {
      text = prof_profile_json(&run);
      if (!text || check_loads(text, o.profile_out, 0, err, sizeof err) ||
          write_file(o.profile_out, text)) {
        fprintf(stderr, "hetplan-profile: error: profile '%s': %s\n", o.profile_out,
                !text ? "out of memory" : err[0] ? err : "cannot write");
        exit_code = 1;
      } else {
        printf("wrote %s: %d layer times, %d collective timings\n", o.profile_out, n_points,
               run.n_colls);
      }
      free(text);
    } else {
      printf("profile: not written: nothing was measured on a GPU\n");
    }
  }

finish:
  MPI_Bcast(&exit_code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(run.hosts);
  free(run.fits);
  free(run.coll_fits);
  free(colls);
  free(tp_colls);
  free(points);
  free(shares);
  free(bw);
  free(lat);
  prof_schedule_free(&sch);
  prof_hosts_free(&h);
  hp_model_destroy(&model);
  MPI_Finalize();
  return exit_code;
}
