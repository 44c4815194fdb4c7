/* bench_search.c -- planning-time benchmark (make bench): prints tables, asserts
 * nothing. (1) the layer DP alone: 160 layers into 24 stages; (2) the full `dp` search
 * against cluster size with AMP's GPT-2 (2x2 .. 16x16 GPUs, gbs 32, as AMP's table 2);
 * (3) 768 and 4096 GPUs against layer count (30, 80, 160). Run from the repository root. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetplan/hetplan.h"
#include "../src/internal.h"
#include "../solvers/search.h"

static void die(const char *what, const hp_diag *d)
{
  fprintf(stderr, "bench: %s: %s\n", what, d->msg);
  exit(1);
}

/* A homogeneous cluster of `nodes` x `gpus` devices of one type (named as the profile
 * names it: T4, A100), with its memory bandwidth (datasheet: T4 320, A100 80 GB 2039 GB/s). */
static hp_cluster *make_cluster(const char *type, int nodes, int gpus, double mem_gib,
                                double tflops, double hbm_gbs, double intra, double inter)
{
  size_t cap = 256 + (size_t)nodes * 120;
  char *buf = malloc(cap);
  size_t n = 0;
  hp_cluster *c = NULL;
  hp_diag d = {0};
  n += (size_t)snprintf(buf + n, cap - n,
                        "{ \"name\": \"%dx%d\", \"device_types\": { \"%s\": { \"mem_gib\": %g, "
                        "\"reserved_gib\": 1, \"tflops\": %g, \"efficiency\": 0.4, \"hbm_gbs\": %g } },"
                        " \"nodes\": [", nodes, gpus, type, mem_gib, tflops, hbm_gbs);
  for (int i = 0; i < nodes; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s{ \"name\": \"n%d\", \"type\": \"%s\", \"gpus\": %d, "
                          "\"intra_gbps\": %g, \"intra_lat_us\": 5 }", i ? "," : "", i, type, gpus, intra);
  snprintf(buf + n, cap - n, "], \"inter_gbps\": %g, \"inter_lat_us\": 10 }", inter);
  if (hp_cluster_parse(buf, "bench-cluster", &c, &d)) die("cluster", &d);
  free(buf);
  return c;
}

/* bench/mixed_cluster.sh's cluster: `nodes` 8-GPU nodes alternating A100 80 GB and V100
 * 32 GB, NVLink inside, 100 Gbit/s between nodes. */
static hp_cluster *make_mixed(int nodes)
{
  size_t cap = 512 + (size_t)nodes * 120;
  char *buf = malloc(cap);
  size_t n = 0;
  hp_cluster *c = NULL;
  hp_diag d = {0};
  n += (size_t)snprintf(buf + n, cap - n,
                        "{ \"name\": \"mixed-%d\", \"device_types\": {"
                        " \"A100\": { \"mem_gib\": 80, \"reserved_gib\": 1.5, \"tflops\": 312,"
                        " \"efficiency\": 0.45, \"hbm_gbs\": 2039 },"
                        " \"V100\": { \"mem_gib\": 32, \"reserved_gib\": 1, \"tflops\": 125,"
                        " \"efficiency\": 0.4, \"hbm_gbs\": 900 } }, \"nodes\": [", nodes * 8);
  for (int i = 0; i < nodes; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s{ \"name\": \"n%d\", \"type\": \"%s\", \"gpus\": 8, "
                          "\"intra_gbps\": %d, \"intra_lat_us\": 5 }", i ? "," : "", i,
                          i % 2 ? "V100" : "A100", i % 2 ? 2400 : 4800);
  snprintf(buf + n, cap - n, "], \"inter_gbps\": 100, \"inter_lat_us\": 10 }");
  if (hp_cluster_parse(buf, "bench-mixed", &c, &d)) die("cluster", &d);
  free(buf);
  return c;
}

static hp_model *load_model(const char *path)
{
  hp_model *m = NULL;
  hp_diag d = {0};
  if (hp_model_load(path, &m, &d)) die(path, &d);
  return m;
}

static hp_model *gpt_blocks(int blocks, int hidden, int seq)
{
  hp_model *m = calloc(1, sizeof *m);
  hp_transformer t = { .family = HP_TF_GPT, .layers = blocks, .hidden = hidden, .heads = 16, .seq = seq, .vocab = 51200 };
  hp_diag d = {0};
  m->name = hp__strdup("gpt-bench");
  m->param_bytes = m->grad_bytes = 2;
  m->state_bytes = 16;
  if (hp_transformer_expand(&t, m, &d)) die("transformer", &d);
  return m;
}

/* `modes`: the job's sharding list (0: the default, all four of cost model 1.2). */
static hp_problem *problem_job(hp_model *m, hp_cluster *c, const char *profile, long gbs,
                               unsigned modes)
{
  hp_problem *p = NULL;
  hp_profile *pr = NULL;
  hp_diag d = {0};
  if (profile && hp_profile_load(profile, &pr, &d)) die(profile, &d);
  if (hp_problem_create(&p, m, c, pr, (hp_job){ .gbs = gbs, .schedule = HP_1F1B, .sharding = modes },
                        &d))
    die("problem", &d);
  return p;
}

static hp_problem *problem(hp_model *m, hp_cluster *c, const char *profile, long gbs)
{
  return problem_job(m, c, profile, gbs, 0);
}

static void bench_dp_alone(void)
{
  hp_problem *p = problem(gpt_blocks(157, 2048, 1024), make_cluster("A100", 3, 8, 80, 312, 2039, 2400, 200),
                          NULL, 96);
  hp_plan *pl = NULL;
  hp_diag d = {0};
  hp_dp_opts o;
  int found = 0, reps = 5;
  long work = 0;
  double obj = 0, best = INFINITY;
  hp__dp_opts_init(&o);
  hp_plan_create(&pl, 24, 1, 1, p->model->n_layers, &d);
  pl->mbs = 1;
  hp_plan_set_gas(p, pl, &d);
  hp_plan_place_in_order(pl);
  for (int i = 0; i < reps; i++) {
    double t0 = hp__now();
    work = 0;
    if (hp__dp_split(p, pl, &o, &found, &obj, &work, &d)) die("dp", &d);
    double t = hp__now() - t0;
    if (t < best) best = t;
  }
  printf("layer DP: %d layers into %d stages (24 A100s, gas 96): %.1f ms (best of %d), "
         "%ld frontier points, plan %s\n\n", p->model->n_layers, pl->pp, best * 1e3, reps, work,
         found ? "found" : "none fits");
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

static void bench_row(const char *label, hp_problem *p, const char *solver)
{
  hp_limits lim;
  hp_result r;
  hp_diag d = {0};
  hp_config *cfg = NULL;
  int nc = hp__configs(p, &cfg);
  free(cfg);
  hp_limits_init(&lim);
  if (hp_solver_run(hp_solver_find(solver), p, NULL, &lim, &r, &d)) die(solver, &d);
  printf("%-34s %-4s %6d %6d %8d %10.3f  %12.6f  %s\n", label, solver, p->cluster->n_devices,
         p->model->n_layers, nc, r.seconds, r.plan ? r.objective : NAN,
         r.plan ? "" : "(no plan fits)");
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

int main(void)
{
  static const int sizes[][2] = { { 2, 2 }, { 4, 4 }, { 8, 8 }, { 16, 16 } };
  char label[96];
  bench_dp_alone();
  printf("%-34s %-4s %6s %6s %8s %10s  %12s\n", "full search", "by", "GPUs", "layers",
         "configs", "seconds", "iteration s");
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    snprintf(label, sizeof label, "GPT-2 (AMP), %dx%d T4, gbs 32", sizes[i][0], sizes[i][1]);
    for (int k = 0; k < 2; k++)
      bench_row(label, problem(load_model("models/gpt2-amp.json"),
                               make_cluster("T4", sizes[i][0], sizes[i][1], 16, 65, 320, 50, 50),
                               "models/gpt2-amp.profile.json", 32), k ? "sa" : "dp");
  }
  {
    static const struct { int nodes; long gbs; } big[] = { { 96, 1536 }, { 512, 8192 } };
    static const char *models[] = { "models/gpt2-amp.json", "models/llama2-70b.json",
                                    "models/llama2-140b.json" };
    for (int b = 0; b < 2; b++)
      for (int k = 0; k < 3; k++) {
        for (int v = 0; v < 2; v++) {
          hp_model *m = load_model(models[k]);
          snprintf(label, sizeof label, "%s, %dx8 A100, gbs %ld", m->name, big[b].nodes, big[b].gbs);
          bench_row(label, problem(m, make_cluster("A100", big[b].nodes, 8, 80, 312, 2039, 4800, 200),
                                   NULL, big[b].gbs), v ? "sa" : "dp");
        }
      }
  }
  /* 1.2's larger space: the default job (four sharding modes) against the modes of 1.1
   * (dp, zdp) and dp alone, on 768 mixed GPUs */
  {
    static const struct { unsigned modes; const char *name; } jobs[] = {
      { 0, "all modes" }, { 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP, "dp,zdp" },
      { 1u << HP_SHARD_DP, "dp" } };
    static const char *models[] = { "models/llama2-70b.json", "models/llama2-140b.json" };
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < 3; j++) {
        hp_model *m = load_model(models[k]);
        snprintf(label, sizeof label, "%s, 768 mixed, %s", m->name, jobs[j].name);
        bench_row(label, problem_job(m, make_mixed(96), NULL, 1536, jobs[j].modes), "dp");
      }
  }
  return 0;
}
