/* test_calibrate.c -- `hetplan calibrate`'s library part on synthetic runs: times and
 * memory made by the evaluator from a known cluster, fitted from a perturbed one; and the
 * framework defaults of the reserve, by hand. */
#include <dirent.h>
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

/* The folders make_runs_prof made, removed (with the files in them) when the test exits. */
static char made_dirs[64][64];
static int n_made_dirs;

static void remove_made_dirs(void)
{
  for (int i = 0; i < n_made_dirs; i++) {
    DIR *dir = opendir(made_dirs[i]);
    struct dirent *e;
    if (!dir) continue;
    while ((e = readdir(dir)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlinkat(dirfd(dir), e->d_name, 0);
    closedir(dir);
    rmdir(made_dirs[i]);
  }
  n_made_dirs = 0;
}

/* One run to make: the model (text) and the plan (its JSON without the closing brace). */
typedef struct run_spec { const char *model, *plan; } run_spec;

/* Writes the models, the start cluster (and start profile), the plans and a runs file into
 * a fresh folder; the measured times and memory are the evaluator's under the `truth`
 * cluster (with the `truth_prof` profile text; NULL: none) (gbs 8), times scaled by
 * noise[i] (NULL: none). Returns the runs file's path (static). */
static const char *make_runs_prof(const run_spec *rs, int n, const char *truth,
                                  const char *start, const double *noise, int with_mem,
                                  const char *truth_prof, const char *start_prof)
{
  static char dir[64], runs[128];
  char path[160], text[8192];
  size_t len;
  if (n_made_dirs == (int)(sizeof made_dirs / sizeof made_dirs[0])) {
    fprintf(stderr, "test_calibrate: more than %d run folders\n", n_made_dirs);
    exit(3);
  }
  snprintf(dir, sizeof dir, "/tmp/hp_calib_XXXXXX");
  if (!mkdtemp(dir)) { perror("mkdtemp"); exit(3); }
  if (!n_made_dirs) atexit(remove_made_dirs);
  snprintf(made_dirs[n_made_dirs++], sizeof made_dirs[0], "%s", dir);
  snprintf(path, sizeof path, "%s/start.cluster.json", dir);
  write_file(path, start);
  if (start_prof) {
    snprintf(path, sizeof path, "%s/start.profile.json", dir);
    write_file(path, start_prof);
  }
  snprintf(runs, sizeof runs, "%s/runs.json", dir);
  len = (size_t)snprintf(text, sizeof text, "{ \"runs\": [");
  for (int i = 0; i < n; i++) {
    char plan[1024];
    hp_problem *p = fx_problem(rs[i].model, truth, truth_prof, 8, HP_1F1B);
    hp_plan *pl;
    hp_eval e = {0};
    hp_diag d = {0};
    double peak = 0;
    snprintf(path, sizeof path, "%s/model%d.json", dir, i);
    write_file(path, rs[i].model);
    snprintf(plan, sizeof plan, "%s }", rs[i].plan);
    pl = fx_plan(p, plan);
    if (hp_evaluate(p, pl, &e, &d)) { fprintf(stderr, "%s\n", d.msg); exit(3); }
    for (int dv = 0; dv < e.n_devices; dv++) if (e.mem[dv] > peak) peak = e.mem[dv];
    snprintf(plan, sizeof plan, "%s, \"inputs\": { \"model\": \"model%d.json\", \"cluster\": "
             "\"start.cluster.json\", %s\"gbs\": 8 } }", rs[i].plan, i,
             start_prof ? "\"profile\": \"start.profile.json\", " : "");
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

static const char *make_runs_of(const run_spec *rs, int n, const char *truth, const char *start,
                                const double *noise, int with_mem)
{
  return make_runs_prof(rs, n, truth, start, noise, with_mem, NULL, NULL);
}

/* The tiny model's plans on the tiny cluster. */
static const char *make_runs(const char *truth, const char *start, const double *noise,
                             int with_mem)
{
  run_spec rs[N_PLANS];
  for (int i = 0; i < N_PLANS; i++) rs[i] = (run_spec){ fx_tiny_model, plans[i] };
  return make_runs_of(rs, N_PLANS, truth, start, noise, with_mem);
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

/* "allocated" memory under a framework (max_memory_allocated: the tensors alone): the
 * CUDA context, NCCL's buffers and the caching allocator's reserve are added before the
 * reserve is fitted, so the fitted reserve is those three (no DeepSpeed bucket: the runs'
 * tensors hold none). Types "fast" and "slow" of 8 GiB: an unknown name's context 0.6 GiB,
 * three communicators of 294 MiB, 10 % of 8 GiB. */
TEST(calibrate_allocated_memory_adds_what_the_framework_holds_outside_the_tensors)
{
  char truth[1024], start[1024], *text = NULL, *at;
  hp_calib *c = NULL;
  hp_diag d = {0};
  const hp_calib_value *v;
  const double outside = 0.6 * GIB + 924844032.0 + 0.8 * GIB;
  snprintf(truth, sizeof truth, "%s", cluster_text(0.3, 0.2, -1, -1));
  while ((at = strstr(truth, "\"mem_gib\": 1,"))) at[11] = '8';   /* 8 GiB a device */
  snprintf(start, sizeof start, "%s", truth);
  const char *runs = make_runs(truth, start, NULL, 1);   /* peaks: the tensors alone */
  /* every run's memory is max_memory_allocated's */
  CHECK(hp_read_file(runs, &text, &d) == HP_OK);
  {
    char out[8192];
    size_t len = 0;
    for (const char *p = text; *p; p++) {
      if (!strncmp(p, "\"peak_mem_gib\"", 14))
        len += (size_t)snprintf(out + len, sizeof out - len, "\"memory_kind\": \"allocated\", ");
      out[len++] = *p;
    }
    out[len] = 0;
    write_file(runs, out);
  }
  free(text);
  CHECK(hp_calib_load(runs, NULL, HP_FW_DEEPSPEED, &c, &d) == HP_OK);
  CHECK(hp_calib_fit(c, &d) == HP_OK);
  for (int i = 0; i < c->n_runs; i++) CHECK_NEAR(c->runs[i].mem_outside, outside, 1e-12);
  CHECK((v = value(c, "fast", "reserved_gib")) && v->fitted);
  CHECK_NEAR(v->after * GIB, outside, 1e-9);
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

/* --- The shape model's constants. A GPT of 2 blocks, hidden h (256: aligned to the
 * default 128 elements; 320: not), 2 heads, on one node of 4 GPUs of a type with "shape"
 * (4 SMs, its own gemm_eff and align_eff); the GEMMs compute-bound at 20 TFLOPS and
 * 2000 GB/s. */
static char *shape_gpt(int hidden, const char *extra)
{
  static char buf[4][512];
  static int next;
  char *b = buf[next++ % 4];
  snprintf(b, sizeof buf[0], "{ \"name\": \"gpt-h%d\", \"transformer\": { \"family\": \"gpt\", "
           "\"layers\": 2, \"hidden\": %d, \"heads\": 2, \"seq\": 256, \"vocab\": 512%s } }",
           hidden, hidden, extra);
  return b;
}

static char *shape_cluster(double gemm_eff, double align_eff, double attn_eff)
{
  static char text[2][1024];
  static int next;
  char *t = text[next++ % 2];
  snprintf(t, sizeof text[0],
    "{ \"name\": \"shape-4\", \"device_types\": {"
    "    \"A\": { \"mem_gib\": 80, \"tflops\": 20, \"efficiency\": 0.5, \"hbm_gbs\": 2000,"
    "      \"shape\": { \"sms\": 4, \"gemm_eff\": %.17g, \"align_eff\": %.17g, \"attn_eff\": %.17g,"
    "                   \"source\": \"a test's\" } } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"A\", \"gpus\": 4, \"intra_gbps\": 800, \"intra_lat_us\": 2 } ],"
    "  \"inter_gbps\": 100 }", gemm_eff, align_eff, attn_eff);
  return t;
}

/* Plans of the 2-block GPT (5 layers) on the 4-GPU node: dp 4; tp 2 dp 2; two stages. */
static const char *const shape_plans[] = {
  "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 2, \"stages\": [ { \"layers\": [0, 4], "
  "  \"devices\": [[0], [1], [2], [3]] } ]",
  "{ \"pp\": 1, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": [ { \"layers\": [0, 4], "
  "  \"devices\": [[0, 1], [2, 3]] } ]",
  "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": [ { \"layers\": [0, 2], \"devices\": [[0], [1]] },"
  "  { \"layers\": [3, 4], \"devices\": [[2], [3]] } ]",
};

TEST(shape_refresh_gives_a_freshly_bound_problems_times)
{
  hp_problem *p = fx_problem(shape_gpt(320, ""), shape_cluster(0.6, 0.75, 0.53), NULL, 8, HP_1F1B);
  hp_problem *q = fx_problem(shape_gpt(320, ""), shape_cluster(0.45, 0.5, 0.53), NULL, 8, HP_1F1B);
  const hp_shape_param *g = hp_shape_param_find("gemm_eff"), *a = hp_shape_param_find("align_eff");
  double before = hp_layer_time(p, 1, 0, 2, 4, 1e11, 0);
  /* the constants alone change nothing: the evaluator reads the series bound at creation */
  hp_shape_set(&p->cluster->types[0].shape, g, 0.45);
  hp_shape_set(&p->cluster->types[0].shape, a, 0.5);
  CHECK(hp_layer_time(p, 1, 0, 2, 4, 1e11, 0) == before);
  /* refreshed at tp 2 only: tp 2 is q's, tp 1 still the old */
  hp_problem_refresh_shape(p, 2);
  CHECK_NEAR(hp_layer_time(p, 1, 0, 2, 4, 1e11, 0), hp_layer_time(q, 1, 0, 2, 4, 1e11, 0), 1e-15);
  CHECK(fabs(hp_layer_time(p, 1, 0, 1, 4, 1e11, 0) / hp_layer_time(q, 1, 0, 1, 4, 1e11, 0) - 1) > 0.1);
  /* every layer, tp and mbs after a whole refresh; the gemm_eff and align_eff of 0.45 x 0.5
   * against 0.6 x 0.75 make the blocks about twice as slow */
  hp_problem_refresh_shape(p, 0);
  for (int l = 0; l < 5; l++)
    for (int tp = 1; tp <= 4; tp *= 2)
      for (int mbs = 1; mbs <= 8; mbs *= 2)
        CHECK_NEAR(hp_layer_time(p, l, 0, tp, mbs, 1e11, 0), hp_layer_time(q, l, 0, tp, mbs, 1e11, 0),
                   1e-15);
  CHECK(hp_layer_time(p, 1, 0, 2, 4, 1e11, 0) > 1.5 * before);
  hp_problem_destroy(&p);
  hp_problem_destroy(&q);
}

/* Runs of the aligned (h 256) and misaligned (h 320) GPT: gemm_eff is what both share,
 * align_eff what tells them apart. */
static const char *shape_runs(const char *truth, const char *start, const char *extra)
{
  run_spec rs[5] = {
    { shape_gpt(256, extra), shape_plans[0] }, { shape_gpt(256, extra), shape_plans[1] },
    { shape_gpt(320, extra), shape_plans[0] }, { shape_gpt(320, extra), shape_plans[2] },
    { shape_gpt(256, extra), shape_plans[2] },
  };
  return make_runs_of(rs, 5, truth, start, NULL, 0);
}

TEST(calibrate_recovers_gemm_eff_and_align_eff_from_a_perturbed_start)
{
  char truth[1024];
  hp_calib *c = NULL;
  hp_diag d = {0};
  const hp_calib_value *v;
  snprintf(truth, sizeof truth, "%s", shape_cluster(0.55, 0.7, 0.53));
  const char *runs = shape_runs(truth, shape_cluster(0.8, 0.95, 0.53), "");
  CHECK(hp_calib_load(runs, NULL, -1, &c, &d) == HP_OK);
  CHECK(hp_calib_fit(c, &d) == HP_OK);
  CHECK((v = value(c, "A", "gemm_eff")) && v->fitted && v->in_shape);
  CHECK_NEAR(v->before, 0.8, 1e-15);
  CHECK_NEAR(v->after, 0.55, 1e-6);
  CHECK((v = value(c, "A", "align_eff")) && v->fitted && v->in_shape);
  CHECK_NEAR(v->after, 0.7, 1e-6);
  /* the efficiency moves nothing the shape model times, and says so */
  CHECK((v = value(c, "A", "efficiency")) && !v->fitted && !v->in_shape);
  CHECK_CONTAINS(v->why, "no run's time depends on it");
  CHECK(!value(c, "A", "attn_eff"));   /* not asked for by default */
  for (int i = 0; i < c->n_runs; i++) {
    CHECK_NEAR(c->runs[i].time_after, c->runs[i].time, 1e-7);
    CHECK(c->runs[i].time_before < 0.9 * c->runs[i].time);   /* the start was off */
  }
  CHECK(c->loo_time_worst < 1e-6);
  CHECK(c->sweeps == 1 && c->iterations >= 1 && c->iterations < HP_CALIB_MAX_ITER);
  hp_calib_destroy(&c);
}

TEST(calibrate_leaves_attn_eff_alone_under_eager_attention)
{
  char truth[1024];
  hp_calib *c = NULL;
  hp_diag d = {0};
  const hp_calib_value *v;
  snprintf(truth, sizeof truth, "%s", shape_cluster(0.55, 0.7, 0.53));
  const char *runs = shape_runs(truth, shape_cluster(0.8, 0.7, 0.3), ", \"attention\": \"eager\"");
  CHECK(hp_calib_load(runs, NULL, -1, &c, &d) == HP_OK);
  CHECK(hp_calib_parse_params("gemm_eff,attn_eff", c->fit, &d) == HP_OK);
  CHECK(hp_calib_fit(c, &d) == HP_OK);
  CHECK((v = value(c, "A", "attn_eff")) && !v->fitted);
  CHECK_CONTAINS(v->why, "no run's time depends on it");
  CHECK_NEAR(v->after, 0.3, 1e-15);
  CHECK((v = value(c, "A", "gemm_eff")) && v->fitted);
  CHECK_NEAR(v->after, 0.55, 1e-6);
  CHECK(!value(c, "A", "align_eff"));   /* not named */
  hp_calib_destroy(&c);
  /* with FlashAttention the same constant moves the blocks: fitted, and recovered */
  runs = shape_runs(truth, shape_cluster(0.8, 0.7, 0.3), "");
  CHECK(hp_calib_load(runs, NULL, -1, &c, &d) == HP_OK);
  CHECK(hp_calib_parse_params("gemm_eff,attn_eff", c->fit, &d) == HP_OK);
  CHECK(hp_calib_fit(c, &d) == HP_OK);
  CHECK((v = value(c, "A", "attn_eff")) && v->fitted);
  CHECK_NEAR(v->after, 0.53, 1e-6);
  CHECK_NEAR(value(c, "A", "gemm_eff")->after, 0.55, 1e-6);
  hp_calib_destroy(&c);
}

TEST(calibrate_does_not_fit_what_the_runs_cannot_tell_apart)
{
  /* every run misaligned: each GEMM pays align_eff, so it scales every time as gemm_eff
   * does; fitting both would leave their split arbitrary */
  char truth[1024];
  hp_calib *c = NULL;
  hp_diag d = {0};
  const hp_calib_value *v;
  run_spec rs[3] = { { shape_gpt(320, ""), shape_plans[0] }, { shape_gpt(320, ""), shape_plans[1] },
                     { shape_gpt(320, ""), shape_plans[2] } };
  snprintf(truth, sizeof truth, "%s", shape_cluster(0.55, 0.7, 0.53));
  const char *runs = make_runs_of(rs, 3, truth, shape_cluster(0.8, 0.95, 0.53), NULL, 0);
  CHECK(hp_calib_load(runs, NULL, -1, &c, &d) == HP_OK);
  CHECK(hp_calib_fit(c, &d) == HP_OK);
  CHECK((v = value(c, "A", "align_eff")) && !v->fitted);
  CHECK_CONTAINS(v->why, "cannot tell it from A's gemm_eff");
  CHECK_NEAR(v->after, 0.95, 1e-15);
  /* gemm_eff alone takes up the product: 0.55 x 0.7 / 0.95 */
  CHECK_NEAR(value(c, "A", "gemm_eff")->after, 0.55 * 0.7 / 0.95, 1e-6);
  hp_calib_destroy(&c);
}

TEST(calibrate_writes_shape_constants_into_the_types_shape)
{
  char truth[1024], *text = NULL;
  hp_calib *c = NULL;
  hp_diag d = {0};
  hp_cluster *cl = NULL;
  hp_problem *p;
  hp_plan *pl;
  hp_eval e = {0};
  snprintf(truth, sizeof truth, "%s", shape_cluster(0.55, 0.7, 0.53));
  const char *runs = shape_runs(truth, shape_cluster(0.8, 0.95, 0.53), "");
  CHECK(hp_calib_load(runs, NULL, -1, &c, &d) == HP_OK);
  CHECK(hp_calib_fit(c, &d) == HP_OK);
  CHECK(hp_calib_cluster_json(c, "runs.json", "2026-01-01T00:00:00Z", &text, &d) == HP_OK);
  CHECK_CONTAINS(text, "\"source\":\t\"a test's\"");        /* the shape's other keys kept */
  CHECK_CONTAINS(text, "\"name\":\t\"gemm_eff\",\n\t\t\t\t\"in\":\t\"shape\"");
  CHECK_CONTAINS(text, "\"efficiency\":\t0.5,");           /* not fitted: as it was */
  CHECK(hp_cluster_parse(text, "out.json", &cl, &d) == HP_OK);
  CHECK(cl->types[0].shape.gemm_eff == value(c, "A", "gemm_eff")->after);
  CHECK(cl->types[0].shape.align_eff == value(c, "A", "align_eff")->after);
  CHECK(cl->types[0].shape.sms == 4);
  CHECK_NEAR(cl->types[0].shape.gemm_eff, 0.55, 1e-6);
  /* bound afresh from the written file, a run's plan predicts what the fit left */
  p = fx_problem(shape_gpt(320, ""), text, NULL, 8, HP_1F1B);
  {
    char plan[1024];
    snprintf(plan, sizeof plan, "%s }", shape_plans[2]);
    pl = fx_plan(p, plan);
  }
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, c->runs[3].time_after, 1e-15);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
  hp_cluster_destroy(&cl);
  free(text);
  hp_calib_destroy(&c);
}

TEST(calibrate_params_list_by_name)
{
  hp_fit_param t[HP_CALIB_MAX_PARAMS];
  unsigned char fit[HP_CALIB_MAX_PARAMS];
  hp_diag d = {0};
  int n = hp_calib_params(t);
  /* the order: the two overall scales, align_eff, then the shape table's other fittable
   * constants; log-space ranges start above 0 */
  CHECK_INT(n, 8);
  CHECK(!strcmp(t[0].name, "gemm_eff") && t[0].shape && t[0].by_default);
  CHECK(!strcmp(t[1].name, "efficiency") && !t[1].shape && t[1].by_default);
  CHECK(!strcmp(t[2].name, "align_eff") && t[2].by_default);
  CHECK(!strcmp(t[3].name, "attn_eff") && !t[3].by_default);
  CHECK(!strcmp(t[6].name, "launch_us") && t[6].lo > 0 && t[6].hi == 1000);
  CHECK(!strcmp(t[7].name, "profile_scale") && t[7].measured && t[7].by_default);
  CHECK(t[7].lo == 0.25 && t[7].hi == 4 && !t[7].shape);
  CHECK(hp_calib_parse_params(NULL, fit, &d) == HP_OK);
  /* 2: by default (a default profile_scale over two profiles is left out, not refused) */
  CHECK(fit[0] == 2 && fit[1] == 2 && fit[2] == 2 && !fit[3] && !fit[6] && fit[7] == 2);
  CHECK(hp_calib_parse_params("all", fit, &d) == HP_OK);
  for (int i = 0; i < n; i++) CHECK(fit[i]);
  CHECK(hp_calib_parse_params(" mem_eff,launch_us ", fit, &d) == HP_OK);
  CHECK(!fit[0] && !fit[1] && fit[5] == 1 && fit[6] == 1 && !fit[7]);
  CHECK(hp_calib_parse_params("gemm_eff,sms", fit, &d) == HP_INVAL);
  CHECK_CONTAINS(d.msg, "sms is a datasheet or kernel-design figure");
  CHECK(hp_calib_parse_params("gemm", fit, &d) == HP_INVAL);
  CHECK_CONTAINS(d.msg, "'gemm' is not a parameter calibrate fits: expected a comma-separated "
                        "list of: gemm_eff, efficiency, align_eff, attn_eff");
}

/* A profile of the tiny model's kinds on the fast type only, every seconds times `scale`:
 * at tp 1 embed 0.02, block 0.1, head 0.05 s a sample, at tp 2 0.012, 0.06, 0.03. Embed's
 * 1e12 FLOP a sample take 0.01 s at fast's 100 TFLOPS: the least scale is 0.01 / 0.02 =
 * 0.5 (block: 0.04 / 0.1, 0.02 / 0.06; head: 0.02 / 0.05, 0.01 / 0.03; all below). */
static char *tiny_profile(double scale)
{
  static const char *const kinds[] = { "embed", "block", "head" };
  static const double per[2][3] = { { 0.02, 0.1, 0.05 }, { 0.012, 0.06, 0.03 } };
  static char text[4096];
  size_t len = (size_t)snprintf(text, sizeof text, "{ \"version\": 1, \"notes\": \"kept\", "
                                "\"layer_times\": [");
  int first = 1;
  for (int tp = 1; tp <= 2; tp++)
    for (int k = 0; k < 3; k++)
      for (int mbs = 1; mbs <= 2; mbs++) {
        len += (size_t)snprintf(text + len, sizeof text - len, "%s{ \"kind\": \"%s\", \"type\": "
                                "\"fast\", \"tp\": %d, \"mbs\": %d, \"seconds\": %.17g }",
                                first ? "" : ", ", kinds[k], tp, mbs,
                                per[tp - 1][k] * mbs * scale);
        first = 0;
      }
  snprintf(text + len, sizeof text - len, " ] }");
  return text;
}

static const char *make_profiled_runs(double truth_scale, const double *noise)
{
  char truth_prof[4096], start_prof[4096];
  run_spec rs[N_PLANS];
  snprintf(truth_prof, sizeof truth_prof, "%s", tiny_profile(truth_scale));
  snprintf(start_prof, sizeof start_prof, "%s", tiny_profile(1));
  for (int i = 0; i < N_PLANS; i++) rs[i] = (run_spec){ fx_tiny_model, plans[i] };
  return make_runs_prof(rs, N_PLANS, fx_tiny_cluster, fx_tiny_cluster, noise, 0, truth_prof,
                        start_prof);
}

TEST(calibrate_recovers_a_profile_scale_and_writes_the_profile)
{
  hp_calib *c = NULL;
  hp_diag d = {0};
  const hp_calib_value *v;
  char *text = NULL, path[256];
  hp_problem *p;
  hp_plan *pl;
  hp_eval e = {0};
  const char *runs = make_profiled_runs(1.08, NULL);
  CHECK(hp_calib_load(runs, NULL, -1, &c, &d) == HP_OK);
  CHECK_NEAR(c->scale_lo[0], 0.5, 1e-12);   /* fast: embed at tp 1 */
  CHECK(c->scale_lo[1] == -1);              /* slow: nothing measured */
  CHECK(hp_calib_fit(c, &d) == HP_OK);      /* the default parameters */
  CHECK((v = value(c, "fast", "profile_scale")) && v->fitted);
  CHECK_NEAR(v->before, 1, 0);
  CHECK_NEAR(v->after, 1.08, 1e-6);
  CHECK(!value(c, "slow", "profile_scale"));   /* no measured time: not listed */
  CHECK((v = value(c, "slow", "efficiency")) && v->fitted);
  CHECK_NEAR(v->after, 0.5, 1e-6);
  CHECK(c->loo_time_worst < 1e-6);
  CHECK(hp_calib_profile_fitted(c));
  /* the written profile, with the start cluster, gives time_after */
  CHECK(hp_calib_profile_json(c, "runs.json", "2024-01-01", &text, &d) == HP_OK);
  CHECK_CONTAINS(text, "\"notes\":\t\"kept\"");
  CHECK_CONTAINS(text, "\"calibrated\"");
  CHECK_CONTAINS(text, "\"profile_scale\"");
  snprintf(path, sizeof path, "%s.out.profile.json", runs);
  write_file(path, text);
  {
    char *loaded = NULL;
    CHECK(hp_read_file(path, &loaded, &d) == HP_OK);
    p = fx_problem(fx_tiny_model, fx_tiny_cluster, loaded, 8, HP_1F1B);
    free(loaded);
  }
  {
    char plan[1024];
    snprintf(plan, sizeof plan, "%s }", plans[2]);
    pl = fx_plan(p, plan);
  }
  CHECK(hp_evaluate(p, pl, &e, &d) == HP_OK);
  CHECK_NEAR(e.iteration_time, c->runs[2].time_after, 1e-12 * e.iteration_time);
  CHECK_NEAR(e.iteration_time, c->runs[2].time, 1e-6 * e.iteration_time);
  hp_eval_release(&e);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
  free(text);
  hp_calib_destroy(&c);
}

TEST(calibrate_profile_scale_stops_at_the_peak_rule)
{
  /* runs at 0.45 of the profile's times: the fit wants 0.45, the peak allows 0.5 */
  const double noise[N_PLANS] = { 0.45, 0.45, 0.45, 0.45 };
  hp_calib *c = NULL;
  hp_diag d = {0};
  const hp_calib_value *v;
  char *text = NULL, path[256];
  hp_profile *pr = NULL;
  hp_problem *p = NULL;
  hp_model *m = NULL;
  hp_cluster *cl = NULL;
  const char *runs = make_profiled_runs(1, noise);
  CHECK(hp_calib_load(runs, NULL, -1, &c, &d) == HP_OK);
  CHECK(hp_calib_parse_params("profile_scale", c->fit, &d) == HP_OK);
  CHECK(hp_calib_fit(c, &d) == HP_OK);
  CHECK((v = value(c, "fast", "profile_scale")) && v->fitted);
  CHECK_NEAR(v->after, 0.5, 1e-12);
  /* written, it passes the peak check (hp_problem_create refuses a time below it) */
  CHECK(hp_calib_profile_json(c, "runs.json", "", &text, &d) == HP_OK);
  snprintf(path, sizeof path, "%s.floor.profile.json", runs);
  write_file(path, text);
  CHECK(hp_profile_load(path, &pr, &d) == HP_OK);
  {
    char mpath[256], cpath[256];
    snprintf(mpath, sizeof mpath, "%s.m.json", runs);
    snprintf(cpath, sizeof cpath, "%s.c.json", runs);
    write_file(mpath, fx_tiny_model);
    write_file(cpath, fx_tiny_cluster);
    CHECK(hp_model_load(mpath, &m, &d) == HP_OK);
    CHECK(hp_cluster_load(cpath, &cl, &d) == HP_OK);
  }
  CHECK(hp_problem_create(&p, m, cl, pr, (hp_job){ .gbs = 8 }, &d) == HP_OK);
  /* embed at tp 1 now takes exactly its FLOPs at peak: no lower scale left */
  CHECK_NEAR(hp_problem_profile_scale_floor(p, 0), 1.0, 1e-12);
  hp_problem_destroy(&p);
  free(text);
  hp_calib_destroy(&c);
}

TEST(problem_scale_profile_does_not_compound)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, tiny_profile(1), 8, HP_1F1B);
  double t1, t2;
  CHECK(hp_layer_time_profiled(p, 0, 0, 1));
  t1 = hp_layer_time(p, 0, 0, 1, 2, 0, 0);
  CHECK_NEAR(t1, 0.04, 1e-15);
  hp_problem_scale_profile(p, 0, 1.5);
  hp_problem_scale_profile(p, 0, 1.5);
  t2 = hp_layer_time(p, 0, 0, 1, 2, 0, 0);
  CHECK_NEAR(t2, 0.06, 1e-15);
  hp_problem_scale_profile(p, 1, 3);   /* slow: nothing measured, nothing moves */
  CHECK_NEAR(hp_layer_time(p, 0, 1, 1, 2, 0, 0), 2e12 / (40e12 * 0.5), 1e-15);
  hp_problem_scale_profile(p, 0, 1);
  CHECK_NEAR(hp_layer_time(p, 0, 0, 1, 2, 0, 0), 0.04, 1e-15);
  hp_problem_destroy(&p);
}
