/* prof_args.c -- hetplan-profile's command line: the usage text, the flags with their
 * defaults and checks (sizes with K, M, G; lists of positive integers), and the messages
 * of a bad one. Plain C: it prints nothing (prof_main.c prints the usage and errors). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"

const char prof_help[] =
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
  "          --sequence-parallel (Megatron's: norms, dropouts and residuals on seq/tp\n"
  "          rows; the profile records the setting its memory was measured under)\n"
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


static int parse_size(const char *s, double *out)
{
  char *end;
  double v;
  errno = 0;
  v = strtod(s, &end);
  if (end == s || errno || !(v >= 0)) return -1;
  if (*end == 'K' || *end == 'k') { v *= 1024; end++; }
  else if (*end == 'M' || *end == 'm') { v *= 1048576; end++; }
  else if (*end == 'G' || *end == 'g') { v *= PROF_GIB; end++; }
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
    if (*n == PROF_MAX_LIST || parse_int(t, 1, 1 << 20, &v[*n])) return -1;
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

int prof_parse_args(int argc, char **argv, prof_opts *o, char *err, size_t n)
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
    if (!strcmp(a, "--sequence-parallel")) { o->sequence_parallel = 1; continue; }
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
      if (parse_size(v, &x) || x < 1 || x > PROF_GIB) BAD("a size from 1 to 1G");
      o->matrix_bytes = (long)x;
    } else if (!strcmp(a, "--nccl-min-bytes")) {
      if (parse_size(v, &o->nccl_min) || o->nccl_min < 4) BAD("a size of at least 4");
    } else if (!strcmp(a, "--nccl-max-bytes")) {
      if (parse_size(v, &o->nccl_max) || o->nccl_max < 4 || o->nccl_max > 16 * PROF_GIB) BAD("a size from 4 to 16G");
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
