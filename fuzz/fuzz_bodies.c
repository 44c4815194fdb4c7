/* fuzz_bodies.c -- the bodies of the fuzz targets (see fuzz_bodies.h). Plain C against
 * the public API only; no libFuzzer here, so `make test` links it into the replay test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetplan/hetplan.h"
#include "fuzz_bodies.h"

static char *tiny_model, *tiny_cluster, *tiny_plan;

static char *slurp(const char *root, const char *name)
{
  char path[4096];
  char *text = NULL;
  hp_diag d;
  memset(&d, 0, sizeof d);
  snprintf(path, sizeof path, "%s/examples/tiny/%s", root, name);
  return hp_read_file(path, &text, &d) == HP_OK ? text : NULL;
}

int hpfz_init(const char *root)
{
  if (tiny_model) return 0;
  tiny_model = slurp(root, "model.json");
  tiny_cluster = slurp(root, "cluster.json");
  tiny_plan = slurp(root, "plan.json");
  return tiny_model && tiny_cluster && tiny_plan ? 0 : -1;
}

void hpfz_done(void)
{
  free(tiny_model);
  free(tiny_cluster);
  free(tiny_plan);
  tiny_model = tiny_cluster = tiny_plan = NULL;
}

/* The input as a NUL-terminated text, as hp_read_file would give it; NULL for what it
 * refuses before any parsing (a NUL byte, more than HP_MAX_FILE_BYTES). */
static char *as_text(const uint8_t *data, size_t size)
{
  char *t;
  if (size > HP_MAX_FILE_BYTES || memchr(data, 0, size)) return NULL;
  if (!(t = malloc(size + 1))) return NULL;
  memcpy(t, data, size);
  t[size] = '\0';
  return t;
}

/* A refusal must come with a message naming what failed. */
static int refused(const hp_diag *d)
{
  return d->msg[0] ? 0 : -1;
}

/* Evaluates, simulates and writes a valid plan; runs `megatron` (cheap, every rule of
 * the problem exercised) when asked. */
static void use_problem(const hp_problem *p, const hp_plan *pl, int solve)
{
  hp_diag d;
  hp_eval e;
  hp_sim s;
  char *text = NULL;
  memset(&d, 0, sizeof d);
  memset(&e, 0, sizeof e);
  memset(&s, 0, sizeof s);
  if (pl && hp_evaluate(p, pl, &e, &d) == HP_OK) {
    if (hp_plan_to_json(p, pl, &e, NULL, "fuzz", NULL, &text, &d) == HP_OK) free(text);
    text = NULL;
    if (hp_eval_to_json(p, pl, &e, NULL, &text, &d) == HP_OK) free(text);
    if (pl->gas * pl->pp * pl->dp <= 4096 && hp_simulate(p, pl, &s, &d) == HP_OK) hp_sim_release(&s);
  }
  hp_eval_release(&e);
  if (solve) {
    hp_limits lim;
    hp_result r;
    const hp_solver *sv = hp_solver_find("megatron");
    hp_limits_init(&lim);
    lim.time_limit = 1;
    if (sv && hp_solver_run(sv, p, NULL, &lim, &r, &d) == HP_OK) hp_result_release(&r);
    /* a model with a module tree: the one solver that walks it */
    if (p->model->n_modules && hp_solver_run(hp_solver_find("dhondt"), p, NULL, &lim, &r, &d) == HP_OK)
      hp_result_release(&r);
  }
}

/* The plan pp = 1, tp = 1, dp = D, mbs = 1 (valid when gbs is a multiple of D). */
static hp_plan *data_parallel(const hp_problem *p)
{
  hp_plan *pl = NULL;
  hp_diag d;
  memset(&d, 0, sizeof d);
  if (hp_plan_create(&pl, 1, 1, p->cluster->n_devices, p->model->n_layers, &d)) return NULL;
  pl->schedule = p->job.schedule;
  hp_plan_place_in_order(pl);
  hp_plan_split_even(pl);
  if (hp_plan_set_gas(p, pl, &d) || hp_plan_validate(p, pl, &d)) hp_plan_destroy(&pl);
  return pl;
}

/* Takes the model (up to 4,096 layers; a larger one is only freed): binds it to the tiny
 * cluster at gbs 8 and uses its data-parallel plan (use_problem; `solve`: megatron too). */
static void on_tiny_cluster(hp_model *m, int solve)
{
  hp_cluster *c = NULL;
  hp_problem *p = NULL;
  hp_diag d;
  memset(&d, 0, sizeof d);
  if (m && m->n_layers <= 4096 && hp_cluster_parse(tiny_cluster, "tiny", &c, &d) == HP_OK) {
    hp_job job = { .gbs = 8, .schedule = HP_1F1B };
    if (hp_problem_create(&p, m, c, NULL, job, &d) == HP_OK) {   /* takes m and c */
      hp_plan *pl = data_parallel(p);
      use_problem(p, pl, solve);
      hp_plan_destroy(&pl);
      hp_problem_destroy(&p);
    }
    return;
  }
  hp_model_destroy(&m);
}

int hpfz_model(const uint8_t *data, size_t size)
{
  char *text = as_text(data, size), *json = NULL;
  hp_model *m = NULL;
  hp_diag d;
  if (!text) return 0;
  memset(&d, 0, sizeof d);
  if (hp_model_parse(text, "fuzz-model.json", &m, &d) != HP_OK) {
    free(text);
    return refused(&d);
  }
  if (hp_model_to_json(m, &json, &d) == HP_OK) free(json);
  on_tiny_cluster(m, 1);
  free(text);
  return 1;
}

int hpfz_cluster(const uint8_t *data, size_t size)
{
  char *text = as_text(data, size);
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_problem *p = NULL;
  hp_diag d;
  if (!text) return 0;
  memset(&d, 0, sizeof d);
  if (hp_cluster_parse(text, "fuzz-cluster.json", &c, &d) != HP_OK) {
    free(text);
    return refused(&d);
  }
  if (c->n_devices <= 256 && hp_model_parse(tiny_model, "tiny", &m, &d) == HP_OK) {
    hp_job job = { .gbs = 2L * c->n_devices, .schedule = HP_1F1B };
    if (hp_problem_create(&p, m, c, NULL, job, &d) == HP_OK) {
      hp_plan *pl = data_parallel(p);
      use_problem(p, pl, c->n_devices <= 64);
      hp_plan_destroy(&pl);
      hp_problem_destroy(&p);
    }
    c = NULL;
  }
  hp_cluster_destroy(&c);
  free(text);
  return 1;
}

/* The tiny problem with an optional profile and job; NULL if it does not bind. */
static hp_problem *tiny_problem(hp_profile *pr, hp_job job)
{
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_problem *p = NULL;
  hp_diag d;
  memset(&d, 0, sizeof d);
  if (hp_model_parse(tiny_model, "tiny", &m, &d) || hp_cluster_parse(tiny_cluster, "tiny", &c, &d)) {
    hp_model_destroy(&m);
    hp_cluster_destroy(&c);
    hp_profile_destroy(&pr);
    return NULL;
  }
  if (hp_problem_create(&p, m, c, pr, job, &d) != HP_OK) return NULL;
  return p;
}

int hpfz_profile(const uint8_t *data, size_t size)
{
  char *text = as_text(data, size);
  hp_profile *pr = NULL;
  hp_problem *p;
  hp_diag d;
  if (!text) return 0;
  memset(&d, 0, sizeof d);
  if (hp_profile_parse(text, "fuzz-profile.json", &pr, &d) != HP_OK) {
    free(text);
    return refused(&d);
  }
  if ((p = tiny_problem(pr, (hp_job){ .gbs = 8, .schedule = HP_1F1B }))) {
    hp_plan *pl = NULL;
    if (hp_plan_parse(tiny_plan, "tiny-plan", p, &pl, &d) == HP_OK) use_problem(p, pl, 1);
    hp_plan_destroy(&pl);
    hp_problem_destroy(&p);
  }
  free(text);
  return 1;
}

int hpfz_plan(const uint8_t *data, size_t size)
{
  char *text = as_text(data, size);
  hp_problem *p;
  hp_plan *pl = NULL;
  hp_diag d;
  int rc = 0;
  if (!text) return 0;
  memset(&d, 0, sizeof d);
  if (!(p = tiny_problem(NULL, (hp_job){ .gbs = 8, .schedule = HP_1F1B }))) { free(text); return 0; }
  if (hp_plan_parse(text, "fuzz-plan.json", p, &pl, &d) != HP_OK) rc = refused(&d);
  else {
    rc = 1;
    if (hp_plan_validate(p, pl, &d) == HP_OK) use_problem(p, pl, 0);
    else if (!d.msg[0]) rc = -1;
  }
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
  free(text);
  return rc;
}

int hpfz_job(const uint8_t *data, size_t size)
{
  char *text = as_text(data, size);
  hp_job job = { .gbs = 8, .schedule = HP_1F1B };
  hp_problem *p;
  hp_diag d;
  if (!text) return 0;
  memset(&d, 0, sizeof d);
  if (hp_job_parse(text, "fuzz-job.json", &job, &d) != HP_OK) {
    free(text);
    return refused(&d);
  }
  if ((p = tiny_problem(NULL, job))) {   /* the search space of that batch: its configurations */
    hp_limits lim;
    hp_result r;
    const hp_solver *sv = hp_solver_find("amp");
    hp_limits_init(&lim);
    lim.time_limit = 1;
    if (sv && hp_solver_run(sv, p, NULL, &lim, &r, &d) == HP_OK) hp_result_release(&r);
    hp_problem_destroy(&p);
  }
  free(text);
  return 1;
}

/* A Hugging Face config.json: parsed (hp_hf_parse), expanded into a model when it loads
 * (up to 4,096 blocks), and written as the model file import-hf writes; the model bound
 * to the tiny cluster and its data-parallel plan used as for the model target. */
int hpfz_hf(const uint8_t *data, size_t size)
{
  char *text = as_text(data, size), *json = NULL;
  hp_hf_model h;
  hp_model *m = NULL;
  hp_diag d;
  if (!text) return 0;
  memset(&d, 0, sizeof d);
  memset(&h, 0, sizeof h);
  if (hp_hf_parse(text, "fuzz-config.json", NULL, &h, &d) != HP_OK) {
    free(text);
    return refused(&d);
  }
  if (hp_hf_model_to_json(&h, "fuzz-config.json", &json, &d) == HP_OK) free(json);
  if (h.tf.layers <= 4096 && hp_hf_expand(&h, &m, &d) == HP_OK) on_tiny_cluster(m, 0);
  free(text);
  return 1;
}
