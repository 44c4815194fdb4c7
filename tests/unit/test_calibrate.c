/* test_calibrate.c -- `hetplan calibrate`'s library part on synthetic runs: times and
 * memory made by the evaluator from a known cluster, fitted from a perturbed one; and the
 * framework defaults of the reserve, by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "fixtures.h"

#define GIB 1073741824.0

/* The tiny cluster with the given efficiencies and reserves (< 0: no reserved_gib key). */
static char *cluster_text(double eff_fast, double eff_slow, double res_fast, double res_slow)
{
  static char text[1024];
  char rf[48] = "", rs[48] = "";
  if (res_fast >= 0) snprintf(rf, sizeof rf, "\"reserved_gib\": %.17g, ", res_fast);
  if (res_slow >= 0) snprintf(rs, sizeof rs, "\"reserved_gib\": %.17g, ", res_slow);
  snprintf(text, sizeof text,
    "{ \"name\": \"tiny-2x2\", \"device_types\": {"
    "    \"fast\": { \"mem_gib\": 1, %s\"tflops\": 100, \"efficiency\": %.17g },"
    "    \"slow\": { \"mem_gib\": 1, %s\"tflops\": 40, \"efficiency\": %.17g } },"
    "  \"nodes\": ["
    "    { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
    "    { \"name\": \"b\", \"type\": \"slow\", \"gpus\": 2, \"intra_gbps\": 400, \"intra_lat_us\": 4 } ],"
    "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }", rf, eff_fast, rs, eff_slow);
  return text;
}

/* Plans of the tiny model on the tiny cluster that load both types differently. */
static const char *const plans[] = {
  "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 1], \"devices\": [[0], [1]] }, { \"layers\": [2, 3], \"devices\": [[2], [3]] } ]",
  "{ \"pp\": 4, \"tp\": 1, \"dp\": 1, \"mbs\": 2, \"stages\": ["
  "  { \"layers\": [0, 0], \"devices\": [[2]] }, { \"layers\": [1, 1], \"devices\": [[0]] },"
  "  { \"layers\": [2, 2], \"devices\": [[1]] }, { \"layers\": [3, 3], \"devices\": [[3]] } ]",
  "{ \"pp\": 2, \"tp\": 2, \"dp\": 1, \"mbs\": 1, \"stages\": ["
  "  { \"layers\": [0, 2], \"devices\": [[0, 1]] }, { \"layers\": [3, 3], \"devices\": [[2, 3]] } ]",
  "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 2, \"stages\": ["
  "  { \"layers\": [0, 3], \"devices\": [[0], [1], [2], [3]] } ]",
};
#define N_PLANS 4

static void write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  if (!f) { perror(path); exit(3); }
  fputs(text, f);
  fclose(f);
}

/* Writes model, start cluster, plans and a runs file into a fresh folder; the measured
 * times and memory are the evaluator's under the `truth` cluster, times scaled by
 * noise[i] (NULL: none). Returns the runs file's path (static). */
static const char *make_runs(const char *truth, const char *start, const double *noise,
                             int with_mem)
{
  static char dir[64], runs[128];
  char path[160], text[4096];
  size_t len;
  snprintf(dir, sizeof dir, "/tmp/hp_calib_XXXXXX");
  if (!mkdtemp(dir)) { perror("mkdtemp"); exit(3); }
  snprintf(path, sizeof path, "%s/model.json", dir);
  write_file(path, fx_tiny_model);
  snprintf(path, sizeof path, "%s/start.cluster.json", dir);
  write_file(path, start);
  snprintf(runs, sizeof runs, "%s/runs.json", dir);
  len = (size_t)snprintf(text, sizeof text, "{ \"runs\": [");
  for (int i = 0; i < N_PLANS; i++) {
    char plan[1024];
    hp_problem *p = fx_problem(fx_tiny_model, truth, NULL, 8, HP_1F1B);
    hp_plan *pl;
    hp_eval e = {0};
    hp_diag d = {0};
    double peak = 0;
    snprintf(plan, sizeof plan, "%s }", plans[i]);
    pl = fx_plan(p, plan);
    if (hp_evaluate(p, pl, &e, &d)) { fprintf(stderr, "%s\n", d.msg); exit(3); }
    for (int dv = 0; dv < e.n_devices; dv++) if (e.mem[dv] > peak) peak = e.mem[dv];
    snprintf(plan, sizeof plan, "%s, \"inputs\": { \"model\": \"model.json\", \"cluster\": "
             "\"start.cluster.json\", \"gbs\": 8 } }", plans[i]);
    snprintf(path, sizeof path, "%s/plan%d.json", dir, i);
    write_file(path, plan);
    len += (size_t)snprintf(text + len, sizeof text - len, "%s{ \"plan\": \"plan%d.json\", "
                            "\"iteration_time_s\": %.17g", i ? ", " : "", i,
                            e.iteration_time * (noise ? noise[i] : 1));
    if (with_mem) len += (size_t)snprintf(text + len, sizeof text - len, ", \"peak_mem_gib\": %.17g",
                                          peak / GIB);
    len += (size_t)snprintf(text + len, sizeof text - len, " }");
    hp_eval_release(&e);
    hp_plan_destroy(&pl);
    hp_problem_destroy(&p);
  }
  snprintf(text + len, sizeof text - len, " ] }");
  write_file(runs, text);
  return runs;
}

static const hp_calib_value *value(const hp_calib *c, const char *type, const char *param)
{
  for (int v = 0; v < c->n_values; v++)
    if (!strcmp(c->cluster->types[c->values[v].type].name, type) && !strcmp(c->values[v].param, param))
      return &c->values[v];
  return NULL;
}

TEST(calibrate_recovers_efficiencies_and_reserve_from_a_perturbed_start)
{
  char truth[1024];
  hp_calib *c = NULL;
  hp_diag d = {0};
  const hp_calib_value *v;
  snprintf(truth, sizeof truth, "%s", cluster_text(0.3, 0.2, 0.4, 0.1));
  const char *runs = make_runs(truth, cluster_text(0.7, 0.6, 0.25, 0.1), NULL, 1);
  CHECK(hp_calib_load(runs, NULL, -1, &c, &d) == HP_OK);
  CHECK(hp_calib_fit(c, &d) == HP_OK);
  CHECK((v = value(c, "fast", "efficiency")) && v->fitted);
  CHECK_NEAR(v->before, 0.7, 1e-12);
  CHECK_NEAR(v->after, 0.3, 1e-6);
  CHECK((v = value(c, "slow", "efficiency")) && v->fitted);
  CHECK_NEAR(v->after, 0.2, 1e-6);
  /* every run's peak is on a fast device (the heavier stages): its reserve is recovered */
  CHECK((v = value(c, "fast", "reserved_gib")) && v->fitted);
  CHECK_NEAR(v->after, 0.4, 1e-9);
  /* noise-free: each run predicted exactly, also without it */
  CHECK(c->loo_time_worst < 1e-6);
  CHECK(c->loo_mem_worst < 1e-9);
  for (int i = 0; i < c->n_runs; i++) CHECK_NEAR(c->runs[i].time_after, c->runs[i].time, 1e-7);
  hp_calib_destroy(&c);
}

TEST(calibrate_leave_one_out_error_is_positive_with_noise)
{
  static const double noise[N_PLANS] = { 1.1, 1, 0.95, 1 };
  char truth[1024];
  hp_calib *c = NULL;
  hp_diag d = {0};
  snprintf(truth, sizeof truth, "%s", cluster_text(0.3, 0.2, 0.4, 0.1));
  const char *runs = make_runs(truth, cluster_text(0.5, 0.5, 0.25, 0.1), noise, 0);
  CHECK(hp_calib_load(runs, NULL, -1, &c, &d) == HP_OK);
  CHECK(hp_calib_fit(c, &d) == HP_OK);
  CHECK(c->loo_time_mae > 0.005);
  CHECK(c->loo_time_worst >= c->loo_time_mae);
  CHECK(c->n_mem == 0);
  /* no memory given: the reserves stay, and say why */
  CHECK(!value(c, "fast", "reserved_gib")->fitted);
  CHECK_NEAR(value(c, "fast", "reserved_gib")->after, 0.25, 1e-12);
  hp_calib_destroy(&c);
}

TEST(calibrate_writes_the_cluster_with_its_other_keys_and_a_calibrated_block)
{
  char truth[1024], *text = NULL;
  hp_calib *c = NULL;
  hp_diag d = {0};
  hp_cluster *cl = NULL;
  snprintf(truth, sizeof truth, "%s", cluster_text(0.3, 0.2, 0.4, 0.1));
  const char *runs = make_runs(truth, cluster_text(0.7, 0.6, 0.25, 0.1), NULL, 1);
  CHECK(hp_calib_load(runs, NULL, -1, &c, &d) == HP_OK);
  CHECK(hp_calib_fit(c, &d) == HP_OK);
  CHECK(hp_calib_cluster_json(c, "runs.json", "2026-01-01T00:00:00Z", &text, &d) == HP_OK);
  CHECK_CONTAINS(text, "\"calibrated\"");
  CHECK_CONTAINS(text, "\"intra_lat_us\":\t4");
  CHECK(hp_cluster_parse(text, "out.json", &cl, &d) == HP_OK);
  CHECK_NEAR(cl->types[0].eff, 0.3, 1e-6);
  CHECK_NEAR(cl->types[0].reserved, 0.4 * GIB, 1e-9);
  hp_cluster_destroy(&cl);
  free(text);
  hp_calib_destroy(&c);
}

TEST(calibrate_refuses_one_run_and_a_non_positive_time)
{
  hp_calib *c = NULL;
  hp_diag d = {0};
  char truth[1024], path[256], dir[160];
  snprintf(truth, sizeof truth, "%s", cluster_text(0.3, 0.2, 0.4, 0.1));
  const char *runs = make_runs(truth, truth, NULL, 0);
  snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(runs, '/') - runs), runs);
  snprintf(path, sizeof path, "%s/one.json", dir);
  write_file(path, "{ \"runs\": [ { \"plan\": \"plan0.json\", \"iteration_time_s\": 1 } ] }");
  CHECK(hp_calib_load(path, NULL, -1, &c, &d) == HP_PARSE);
  CHECK_CONTAINS(d.msg, "at least 2");
  snprintf(path, sizeof path, "%s/zero.json", dir);
  write_file(path, "{ \"runs\": [ { \"plan\": \"plan0.json\", \"iteration_time_s\": 1 },"
                   " { \"plan\": \"plan1.json\", \"iteration_time_s\": 0 } ] }");
  CHECK(hp_calib_load(path, NULL, -1, &c, &d) == HP_PARSE);
  CHECK_CONTAINS(d.msg, "runs[1].iteration_time_s");
  CHECK(c == NULL);
}

TEST(framework_default_reserves_by_hand)
{
  hp_fw_reserve r;
  /* NCCL per communicator: 16 channels x 2 peers x (4 MiB + 4,915,200 + 0.5 MiB) =
   * 32 x 9,633,792 = 308,281,344 B; three communicators 924,844,032 B */
  CHECK_NEAR(hp_framework_reserve(HP_FW_MEGATRON, "H100", &r), 0.6 * GIB + 924844032.0, 1e-15);
  CHECK_NEAR(r.context, 644245094.4, 1e-15);
  CHECK(!strcmp(r.generation, "hopper"));
  CHECK_NEAR(hp_framework_reserve(HP_FW_DEEPSPEED, "A100-80GB", &r), 536870912.0 + 924844032.0 + 1e9,
             1e-15);
  CHECK(!strcmp(r.generation, "ampere"));
  CHECK_NEAR(hp_framework_reserve(HP_FW_FSDP, "V100", NULL), 0.4 * GIB + 308281344.0, 1e-15);
  CHECK(hp_framework_reserve(HP_FW_NONE, "H100", NULL) == 0);
  CHECK(hp_framework_parse("deepspeed") == HP_FW_DEEPSPEED && hp_framework_parse("ds") < 0);
}

TEST(framework_default_applies_only_where_the_file_gives_no_reserve)
{
  static const char big[] =
    "{ \"name\": \"two\", \"device_types\": {"
    "    \"H100\": { \"mem_gib\": 80, \"tflops\": 989 },"
    "    \"A100\": { \"mem_gib\": 80, \"reserved_gib\": 3, \"tflops\": 312 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"H100\", \"gpus\": 1 },"
    "               { \"name\": \"b\", \"type\": \"A100\", \"gpus\": 1 } ], \"inter_gbps\": 100 }";
  hp_model *m = NULL;
  hp_cluster *cl = NULL;
  hp_problem *p = NULL;
  hp_diag d = {0};
  hp_job job = { .gbs = 8, .framework = HP_FW_MEGATRON };
  CHECK(hp_model_parse(fx_tiny_model, "m", &m, &d) == HP_OK);
  CHECK(hp_cluster_parse(big, "c", &cl, &d) == HP_OK);
  CHECK(hp_problem_create(&p, m, cl, NULL, job, &d) == HP_OK);
  /* context, NCCL's three communicators, and the allocator's 10 % of 80 GiB */
  CHECK_NEAR(p->cluster->types[0].reserved, 0.6 * GIB + 924844032.0 + 8 * GIB, 1e-15);
  CHECK_NEAR(p->cluster->types[1].reserved, 3 * GIB, 1e-15);
  CHECK_NEAR(hp_framework_allocator(HP_FW_DEEPSPEED, 24 * GIB), 2.4 * GIB, 1e-15);
  CHECK(hp_framework_allocator(HP_FW_NONE, 80 * GIB) == 0);
  /* rebound under "none": the default goes, the file's figure stays */
  {
    hp_problem *q = NULL;
    job.framework = HP_FW_NONE;
    CHECK(hp_problem_copy_with(p, NULL, job, &q, &d) == HP_OK);
    CHECK(q->cluster->types[0].reserved == 0);
    CHECK_NEAR(q->cluster->types[1].reserved, 3 * GIB, 1e-15);
    hp_problem_destroy(&q);
  }
  hp_problem_destroy(&p);
}
