/* fixtures.c -- inline problems for the unit tests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixtures.h"

const char fx_tiny_model[] =
  "{ \"name\": \"tiny-4\", \"input_bytes\": 1000, \"layers\": ["
  "  { \"name\": \"embed\", \"params\": 1e6, \"act_bytes\": 2e6, \"out_bytes\": 1e6, \"flops\": 1e12 },"
  "  { \"name\": \"block\", \"repeat\": 2, \"params\": 4e6, \"act_bytes\": 8e6, \"out_bytes\": 1e6,"
  "    \"flops\": 4e12, \"tp_comm_bytes\": 2e6 },"
  "  { \"name\": \"head\", \"params\": 2e6, \"act_bytes\": 4e6, \"out_bytes\": 4, \"flops\": 2e12 } ] }";

const char fx_tiny_cluster[] =
  "{ \"name\": \"tiny-2x2\", \"device_types\": {"
  "    \"fast\": { \"mem_gib\": 1, \"reserved_gib\": 0.25, \"tflops\": 100, \"efficiency\": 0.5 },"
  "    \"slow\": { \"mem_gib\": 1, \"tflops\": 40, \"efficiency\": 0.5 } },"
  "  \"nodes\": ["
  "    { \"name\": \"a\", \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800, \"intra_lat_us\": 2 },"
  "    { \"name\": \"b\", \"type\": \"slow\", \"gpus\": 2, \"intra_gbps\": 400, \"intra_lat_us\": 4 } ],"
  "  \"inter_gbps\": 80, \"inter_lat_us\": 10 }";

static void die(const char *what, const hp_diag *d)
{
  fprintf(stderr, "fixture %s failed: %s\n", what, d->msg);
  exit(3);
}

hp_problem *fx_problem(const char *model, const char *cluster, const char *profile,
                       long gbs, hp_schedule sched)
{
  hp_diag d = {0};
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *pr = NULL;
  hp_problem *p = NULL;
  hp_job job = { .gbs = gbs, .schedule = sched };
  if (hp_model_parse(model, "model", &m, &d)) die("model", &d);
  if (hp_cluster_parse(cluster, "cluster", &c, &d)) die("cluster", &d);
  if (profile && hp_profile_parse(profile, "profile", &pr, &d)) die("profile", &d);
  if (hp_problem_create(&p, m, c, pr, job, &d)) die("problem", &d);
  return p;
}

hp_problem *fx_load(const char *model, const char *cluster, const char *profile, long gbs)
{
  hp_diag d = {0};
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *pr = NULL;
  hp_problem *p = NULL;
  hp_job job = { .gbs = gbs, .schedule = HP_1F1B };
  if (hp_model_load(model, &m, &d)) die("model", &d);
  if (hp_cluster_load(cluster, &c, &d)) die("cluster", &d);
  if (profile && hp_profile_load(profile, &pr, &d)) die("profile", &d);
  if (hp_problem_create(&p, m, c, pr, job, &d)) die("problem", &d);
  return p;
}

hp_plan *fx_plan(const hp_problem *p, const char *plan_json)
{
  hp_diag d = {0};
  hp_plan *pl = NULL;
  if (hp_plan_parse(plan_json, "plan", p, &pl, &d)) die("plan", &d);
  return pl;
}

static char msg[512];

const char *fx_model_error(const char *text)
{
  hp_diag d = {0};
  hp_model *m = NULL;
  msg[0] = '\0';
  if (hp_model_parse(text, "m.json", &m, &d)) snprintf(msg, sizeof msg, "%s", d.msg);
  hp_model_destroy(&m);
  return msg;
}

const char *fx_cluster_error(const char *text)
{
  hp_diag d = {0};
  hp_cluster *c = NULL;
  msg[0] = '\0';
  if (hp_cluster_parse(text, "c.json", &c, &d)) snprintf(msg, sizeof msg, "%s", d.msg);
  hp_cluster_destroy(&c);
  return msg;
}

const char *fx_profile_error(const char *text)
{
  hp_diag d = {0};
  hp_profile *p = NULL;
  msg[0] = '\0';
  if (hp_profile_parse(text, "p.json", &p, &d)) snprintf(msg, sizeof msg, "%s", d.msg);
  hp_profile_destroy(&p);
  return msg;
}

const char *fx_plan_error(const hp_problem *p, const char *text)
{
  hp_diag d = {0};
  hp_plan *pl = NULL;
  hp_err err;
  msg[0] = '\0';
  err = hp_plan_parse(text, "plan.json", p, &pl, &d);
  if (!err) err = hp_plan_validate(p, pl, &d);
  if (err) snprintf(msg, sizeof msg, "%s", d.msg);
  hp_plan_destroy(&pl);
  return msg;
}

double fx_draw(unsigned long long *s, double lo, double hi)
{
  unsigned long long z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

double fx_log(unsigned long long *s, double lo, double hi)
{
  return exp(fx_draw(s, log(lo), log(hi)));
}

int fx_at_most(double a, double b, double tol)
{
  return a <= b || a <= b + tol * fabs(b);
}
