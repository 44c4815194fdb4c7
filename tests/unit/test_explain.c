/* test_explain.c -- explained infeasibility: the nearest miss against hand computation,
 * each remedy re-checked here with the evaluator on its changed problem, and the
 * proved / not-proved wording of every "nothing fits". */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

#define GIB 1073741824.0

/* Four layers of P parameters, no activations: a device holding n layers at TP degree t
 * (no sharding) holds 16 n P / t bytes of states. */
static char *layers_of(double params)
{
  static char text[256];
  snprintf(text, sizeof text, "{ \"layers\": [ { \"name\": \"x\", \"repeat\": 4, \"params\": %g,"
           " \"act_bytes\": 0, \"out_bytes\": 1, \"flops\": 1e9 } ] }", params);
  return text;
}

static hp_problem *with_margin(const char *model, double margin, long gbs, hp_schedule s)
{
  char cl[1024];
  snprintf(cl, sizeof cl, "%.*s, \"mem_margin\": %g }",
           (int)(strrchr(fx_tiny_cluster, '}') - fx_tiny_cluster), fx_tiny_cluster, margin);
  return fx_problem(model, cl, NULL, gbs, s);
}

/* A remedy's plan fits its changed problem and takes the time it claims. */
static int remedy_checks(const hp_remedy *m)
{
  hp_eval e = {0};
  hp_diag d = {0};
  int ok = m->fits && m->plan && m->prob && hp_evaluate(m->prob, m->plan, &e, &d) == HP_OK &&
           e.feasible && e.iteration_time == m->time;
  hp_eval_release(&e);
  return ok;
}

static const hp_remedy *find_remedy(const hp_explain *x, hp_fix_kind k)
{
  for (int i = 0; i < x->n_remedies; i++)
    if (x->remedies[i].kind == k) return &x->remedies[i];
  return NULL;
}

/* 1e9 parameters (tests/cases/too-big.json) on the tiny cluster: every arrangement puts
 * at least one layer's 4e9 bytes of states on each device, or more (sharding adds the
 * gathered layer); the fast devices have 1 GiB less a 0.25 GiB reserve. The nearest miss
 * is a fast device short by 4e9 + 0.25 GiB - 1 GiB. */
TEST(explain_too_big_names_the_device_and_the_shortfall)
{
  hp_problem *p = fx_problem(layers_of(2.5e8), fx_tiny_cluster, NULL, 4, HP_1F1B);
  hp_limits lim;
  hp_explain x;
  hp_diag d = {0};
  const hp_remedy *m;
  hp_limits_init(&lim);
  CHECK(hp_explain_infeasible(p, &lim, &x, &d) == HP_OK);
  CHECK(x.have_miss);
  CHECK_NEAR(x.short_bytes, 4e9 - 0.75 * GIB, 1e-12);
  CHECK_NEAR(x.need, 4e9 + 0.25 * GIB, 1e-12);
  CHECK_NEAR(x.cap, GIB, 0);
  CHECK_INT(x.device, 0);                     /* the lowest of the fast devices */
  CHECK_INT(x.n_short, 4);
  CHECK(x.stage >= 0 && x.stage < x.miss->pp);
  /* larger GPUs: fast needs 3.975 GiB, slow 3.725 GiB: both 4 GiB */
  m = find_remedy(&x, HP_FIX_LARGER_GPUS);
  CHECK(m != NULL);
  CHECK(remedy_checks(m));
  CHECK_NEAR(m->prob->cluster->types[0].mem_total, 4 * GIB, 0);
  CHECK_NEAR(m->prob->cluster->types[1].mem_total, 4 * GIB, 0);
  CHECK_CONTAINS(m->what, "fast GPUs with 4 GiB instead of 1");
  /* two more nodes are not enough (4 devices per layer's states are needed) */
  CHECK(find_remedy(&x, HP_FIX_MORE_GPUS) == NULL);
  CHECK(x.n_tried >= 1);
  CHECK_CONTAINS(x.tried[0], "more GPUs: up to 2 more nodes like 'a'");
  hp_explain_release(&x);
  hp_problem_destroy(&p);
}

/* One layer TP cannot split, 4e8 parameters, on four devices: pp 1, and dp 4 holds the
 * least. Per device, in bytes: dp 6.4e9; zero1 (2 + 2 + 12/4) x 4e8 = 2.8e9; zero2
 * (2 + 14/4) x 4e8 = 2.2e9; zdp 16 x 4e8 / 4 + the gathered 2 x 4e8 = 2.4e9. The nearest
 * miss takes the least-memory mode among the job's: zero2 of all four, zero1 of dp and
 * zero1, zdp of dp and zdp; a fast device is short by that less 0.75 GiB. */
static void miss_under(unsigned sharding, double *short_bytes, int *mode, char *levers, size_t n)
{
  hp_problem *p = fx_problem("{ \"layers\": [ { \"name\": \"x\", \"params\": 4e8, \"act_bytes\": 0,"
                             " \"out_bytes\": 1, \"flops\": 1e9, \"splittable\": false } ] }",
                             fx_tiny_cluster, NULL, 4, HP_1F1B);
  hp_limits lim;
  hp_explain x;
  hp_diag d = {0};
  p->job.sharding = sharding;
  hp_limits_init(&lim);
  lim.time_limit = 20;
  *short_bytes = NAN;
  *mode = -1;
  if (hp_explain_infeasible(p, &lim, &x, &d) == HP_OK && x.have_miss) {
    *short_bytes = x.short_bytes;
    *mode = x.miss->dp == 4 ? x.miss->mode[0] : -1;
    snprintf(levers, n, "%s", x.levers);
  }
  hp_explain_release(&x);
  hp_problem_destroy(&p);
}

TEST(explain_nearest_miss_takes_the_least_memory_mode_of_the_job)
{
  double sb;
  int mode;
  char lv[400] = "";
  miss_under(0, &sb, &mode, lv, sizeof lv);
  CHECK_NEAR(sb, 2.2e9 - 0.75 * GIB, 1e-12);
  CHECK_INT(mode, HP_SHARD_ZERO2);
  CHECK_CONTAINS(lv, "sharding on 1 of 1 layers (zero2 1)");
  miss_under(1u << HP_SHARD_DP | 1u << HP_SHARD_ZERO1, &sb, &mode, lv, sizeof lv);
  CHECK_NEAR(sb, 2.8e9 - 0.75 * GIB, 1e-12);
  CHECK_INT(mode, HP_SHARD_ZERO1);
  miss_under(1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP, &sb, &mode, lv, sizeof lv);
  CHECK_NEAR(sb, 2.4e9 - 0.75 * GIB, 1e-12);
  CHECK_INT(mode, HP_SHARD_ZDP);
}

/* 6e7 parameters a layer, gbs 12: the least a fast device can hold on four devices is two
 * layers at tp 2, 16 x 2 x 6e7 / 2 = 9.6e8 bytes, short by 9.6e8 + 0.25 GiB - 1 GiB. One
 * more node of two fast GPUs fits pp 3, tp 2 (a slow device of 1 GiB, no reserve, holds
 * the two-layer stage). */
TEST(explain_near_miss_more_gpus_fit)
{
  hp_problem *p = fx_problem(layers_of(6e7), fx_tiny_cluster, NULL, 12, HP_1F1B);
  hp_limits lim;
  hp_explain x;
  hp_diag d = {0};
  const hp_remedy *m;
  hp_limits_init(&lim);
  CHECK(hp_explain_infeasible(p, &lim, &x, &d) == HP_OK);
  CHECK_NEAR(x.short_bytes, 9.6e8 - 0.75 * GIB, 1e-12);
  m = find_remedy(&x, HP_FIX_MORE_GPUS);
  CHECK(m != NULL);
  CHECK(remedy_checks(m));
  CHECK_INT(m->prob->cluster->n_devices, 6);
  CHECK_CONTAINS(m->what, "1 more node like 'a'");
  m = find_remedy(&x, HP_FIX_LARGER_GPUS);
  CHECK(m != NULL && remedy_checks(m));
  CHECK_NEAR(m->prob->cluster->types[0].mem_total, 2 * GIB, 0);   /* 1.144 GiB: 2 */
  hp_explain_release(&x);
  hp_problem_destroy(&p);
}

/* 4e7 a layer fits (6.4e8 bytes on a fast device, 0.75 GiB free) but not under a 20 %
 * margin (0.55 GiB free): dropping the margin is a remedy. */
TEST(explain_margin_remedy)
{
  hp_problem *p = with_margin(layers_of(4e7), 0.2, 4, HP_1F1B);
  hp_limits lim;
  hp_explain x;
  hp_diag d = {0};
  const hp_remedy *m;
  hp_limits_init(&lim);
  CHECK(hp_explain_infeasible(p, &lim, &x, &d) == HP_OK);
  CHECK_NEAR(x.short_bytes, 6.4e8 + 0.25 * GIB - 0.8 * GIB, 1e-12);
  m = find_remedy(&x, HP_FIX_MARGIN);
  CHECK(m != NULL && remedy_checks(m));
  CHECK_NEAR(m->prob->cluster->mem_margin, 0, 0);
  CHECK_CONTAINS(m->what, "no memory margin (it is 20 %)");
  hp_explain_release(&x);
  hp_problem_destroy(&p);
}

/* Activations under GPipe: gas micro-batches in flight; 1F1B keeps at most pp - s. */
TEST(explain_gpipe_remedy)
{
  hp_problem *p = fx_problem("{ \"input_bytes\": 5e7, \"layers\": [ { \"name\": \"x\", \"repeat\": 4,"
                             " \"params\": 1e6, \"act_bytes\": 1e8, \"out_bytes\": 5e7, \"flops\": 1e9 } ] }",
                             fx_tiny_cluster, NULL, 64, HP_GPIPE);
  hp_limits lim;
  hp_explain x;
  hp_diag d = {0};
  const hp_remedy *m;
  hp_limits_init(&lim);
  CHECK(hp_explain_infeasible(p, &lim, &x, &d) == HP_OK);
  CHECK(x.short_bytes > 0);
  m = find_remedy(&x, HP_FIX_SCHEDULE);
  CHECK(m != NULL && remedy_checks(m));
  CHECK_INT(m->prob->job.schedule, HP_1F1B);
  hp_explain_release(&x);
  hp_problem_destroy(&p);
}

/* When a plan fits, the explanation says so and gives the dp solver's plan. */
TEST(explain_when_a_plan_fits_gives_it)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_limits lim;
  hp_explain x;
  hp_result r;
  hp_diag d = {0};
  hp_limits_init(&lim);
  CHECK(hp_explain_infeasible(p, &lim, &x, &d) == HP_OK);
  CHECK(x.short_bytes <= 0);
  CHECK_INT(x.n_remedies, 1);
  CHECK_INT(x.remedies[0].kind, HP_FIX_SOLVER);
  CHECK(remedy_checks(&x.remedies[0]));
  CHECK(hp_solver_run(hp_solver_find("dp"), p, NULL, &lim, &r, &d) == HP_OK);
  CHECK_NEAR(x.remedies[0].time, r.objective, 0);
  hp_result_release(&r);
  hp_explain_release(&x);
  hp_problem_destroy(&p);
}

/* Only INFEASIBLE over the full space is "proved". */
TEST(no_plan_text_says_proved_only_for_the_full_space)
{
  hp_result r;
  char t[400];
  hp_result_init(&r);
  r.status = HP_SOL_INFEASIBLE;
  r.space = HP_SPACE_FULL;
  CHECK(hp_result_proves_none_fits(&r));
  CHECK_CONTAINS(hp_result_no_plan_text(&r, t, sizeof t), "fits in memory (proved)");
  r.space = HP_SPACE_RESTRICTED;
  snprintf(r.space_note, sizeof r.space_note, "Megatron rules");
  CHECK(!hp_result_proves_none_fits(&r));
  CHECK_CONTAINS(hp_result_no_plan_text(&r, t, sizeof t), "(Megatron rules); not proved for the whole space");
  r.status = HP_SOL_NONE;
  CHECK_CONTAINS(hp_result_no_plan_text(&r, t, sizeof t), "none found in the part of the space "
                 "this solver searches (Megatron rules); not proved that none fits");
  r.space = HP_SPACE_INCOMPLETE;
  r.stopped = HP_STOP_TIME;
  CHECK_CONTAINS(hp_result_no_plan_text(&r, t, sizeof t), "none found before the search stopped "
                 "(time-limit); not proved");
  /* every solver on an instance where nothing fits: the text says "proved" exactly when
   * the solver covered the whole space. The instance is tiny (4 layers, 4 devices):
   * every solver of the build takes it, none may fail; enum (always built) proves it,
   * and so do the MIP backends the build has. */
  {
    hp_problem *p = fx_problem(layers_of(2.5e8), fx_tiny_cluster, NULL, 4, HP_1F1B);
    int ran = 0, proved = 0, provers = 0, enum_proved = 0;
    /* modes dp and zdp: the certificate's space (hp__cert_scope); with the default four
     * it says "restricted" and proves nothing */
    p->job.sharding = 1u << HP_SHARD_DP | 1u << HP_SHARD_ZDP;
    for (const hp_solver *const *s = hp_solver_all(); *s; s++) {
      hp_result q;
      hp_limits lim;
      hp_diag d = {0};
      hp_err e;
      hp_limits_init(&lim);
      lim.time_limit = 10;
      if ((e = hp_solver_run(*s, p, NULL, &lim, &q, &d)) != HP_OK) {
        harness_fail(__FILE__, __LINE__, "solver '%s' failed (%s): %s", (*s)->name,
                     hp_strerror(e), d.msg);
        return;
      }
      ran++;
      CHECK(!q.plan || !q.fits);
      hp_result_no_plan_text(&q, t, sizeof t);
      if (q.space == HP_SPACE_FULL && q.status == HP_SOL_INFEASIBLE) {
        CHECK_CONTAINS(t, "(proved)");
        proved++;
        enum_proved |= !strcmp((*s)->name, "enum");
      } else {
        CHECK_CONTAINS(t, "not proved");
      }
      provers += !strcmp((*s)->name, "enum") || !strcmp((*s)->name, "glpk") ||
                 !strcmp((*s)->name, "cbc");
      hp_result_release(&q);
    }
    CHECK(ran >= 11);                   /* dp, sa, 8 baselines, enum, and the backends built */
    CHECK(enum_proved);
    CHECK_INT(proved, provers);
    hp_problem_destroy(&p);
  }
}
