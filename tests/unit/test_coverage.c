/* test_coverage.c -- profile coverage (hp_coverage.h): cells counted by hand on the tiny
 * problem, the space's (tp, mbs) pairs against the solvers' configurations, a plan's
 * cells, the JSON form, and the profiles that match nothing (hp_problem_create). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"
#include "../../solvers/search.h"

/* examples/tiny/profile.json, inline. */
static const char tiny_profile[] =
  "{ \"layer_times\": ["
  "  { \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.2 },"
  "  { \"kind\": \"block\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 4, \"seconds\": 0.7 },"
  "  { \"kind\": \"block\", \"type\": \"slow\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.5 },"
  "  { \"kind\": \"embed\", \"type\": \"fast\", \"tp\": 2, \"mbs\": 2, \"seconds\": 0.01 },"
  "  { \"kind\": \"conv\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 0.01 } ] }";

#define CHECK_COUNT(n, c, m, dv, e)                                                   \
  do { CHECK_INT((n).cells, c); CHECK_INT((n).measured, m); CHECK_INT((n).derived, dv); \
       CHECK_INT((n).estimated, e); } while (0)

static hp_coverage *coverage(const hp_problem *p, hp_cov_scope scope, const hp_plan *plan)
{
  hp_diag d = {0};
  hp_coverage *c = NULL;
  if (hp_coverage_compute(p, scope, plan, &c, &d)) {
    fprintf(stderr, "coverage failed: %s\n", d.msg);
    exit(3);
  }
  return c;
}

static const hp_cov_cell *find_cell(const hp_coverage *c, const char *kind, int type, int tp,
                                    int mbs)
{
  for (int i = 0; i < c->n_cells; i++) {
    const hp_cov_cell *a = &c->cells[i];
    if (!strcmp(c->kinds[a->kind], kind) && a->type == type && a->tp == tp && a->mbs == mbs)
      return a;
  }
  return NULL;
}

TEST(coverage_of_the_tiny_space_counts_each_cell_by_hand)
{
  /* Tiny: 4 devices, nodes of 2, 4 layers, gbs 8. tp 1 or 2 (divides every node).
   * tp 1: (pp, dp) = (1, 4), (2, 2), (4, 1); tp 2: (1, 2), (2, 1). mbs divides 8 / dp:
   * dp 4 -> 1, 2; dp 2 -> 1, 2, 4; dp 1 -> 1, 2, 4, 8. So each tp has mbs 1, 2, 4, 8:
   * 8 (tp, mbs) pairs x 3 kinds x 2 types = 48 cells.
   * (block, fast, 1): measured at 1 and 4, derived at 2 and 8;
   * (block, slow, 1): measured at 1, derived at 2, 4, 8;
   * (embed, fast, 2): measured at 2, derived at 1, 4, 8;
   * the other 9 (kind, type, tp) groups are estimated at all 4 mbs: 36.
   * Totals 4 measured, 8 derived, 36 estimated. */
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, tiny_profile, 8, HP_1F1B);
  hp_coverage *c = coverage(p, HP_COV_SPACE, NULL);
  CHECK_COUNT(c->total, 48, 4, 8, 36);
  CHECK_INT(c->n_cells, 48);
  CHECK_INT(c->n_kinds, 3);
  CHECK(!strcmp(c->kinds[0], "embed") && !strcmp(c->kinds[1], "block") &&
        !strcmp(c->kinds[2], "head"));
  CHECK_INT(c->kind_layers[1], 2);
  CHECK_COUNT(c->by_kind[0], 16, 1, 3, 12);   /* embed: (fast, 2) 1 + 3, rest 12 */
  CHECK_COUNT(c->by_kind[1], 16, 3, 5, 8);    /* block: 2 + 2 on fast tp 1, 1 + 3 on slow tp 1 */
  CHECK_COUNT(c->by_kind[2], 16, 0, 0, 16);
  CHECK_INT(c->n_types, 2);
  CHECK_COUNT(c->by_type[0], 24, 3, 5, 16);   /* fast: block tp 1 (2 + 2), embed tp 2 (1 + 3) */
  CHECK_COUNT(c->by_type[1], 24, 1, 3, 20);   /* slow: block tp 1 (1 + 3) */
  CHECK_INT(c->n_tps, 2);
  CHECK_INT(c->tps[0], 1);
  CHECK_INT(c->tps[1], 2);
  CHECK_COUNT(c->by_tp[0], 24, 3, 5, 16);
  CHECK_COUNT(c->by_tp[1], 24, 1, 3, 20);
  CHECK_INT(c->n_mbs, 4);
  CHECK_INT(c->mbs[3], 8);
  CHECK_COUNT(c->by_mbs[0], 12, 2, 1, 9);     /* mbs 1: block fast, block slow; embed derived */
  CHECK_COUNT(c->by_mbs[1], 12, 1, 2, 9);     /* mbs 2: embed; both blocks derived */
  CHECK_COUNT(c->by_mbs[2], 12, 1, 2, 9);     /* mbs 4: block fast; block slow, embed derived */
  CHECK_COUNT(c->by_mbs[3], 12, 0, 3, 9);
  CHECK_INT(c->profile_entries, 5);
  CHECK_INT(c->unused_entries, 1);             /* "conv" */
  CHECK(find_cell(c, "block", 0, 1, 2)->source == HP_CELL_DERIVED);
  CHECK(find_cell(c, "block", 0, 1, 4)->source == HP_CELL_MEASURED);
  CHECK(find_cell(c, "embed", 0, 2, 2)->source == HP_CELL_MEASURED);
  CHECK(find_cell(c, "embed", 0, 1, 2)->source == HP_CELL_ESTIMATED);
  CHECK(find_cell(c, "head", 1, 2, 8)->source == HP_CELL_ESTIMATED);
  hp_coverage_destroy(&c);
  CHECK(c == NULL);
  hp_problem_destroy(&p);
}

TEST(coverage_cells_agree_with_the_layer_time_look_up)
{
  /* estimated exactly where hp_layer_time falls back to FLOPs; the cells are those of
   * the first test, counted here from the configurations: every (tp, mbs) pair of the
   * space x 3 kinds x 2 types, 12 of them with a measured (kind, type, tp) */
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, tiny_profile, 8, HP_1F1B);
  hp_coverage *c = coverage(p, HP_COV_SPACE, NULL);
  hp_config *cfg = NULL;
  int n = hp__configs(p, &cfg), pairs = 0, profiled = 0;
  for (int i = 0; i < n; i++) {
    int first = 1;
    for (int j = 0; j < i && first; j++) first = cfg[j].tp != cfg[i].tp || cfg[j].mbs != cfg[i].mbs;
    pairs += first;
  }
  free(cfg);
  CHECK_INT(pairs, 8);
  for (int i = 0; i < c->n_cells; i++) {
    const hp_cov_cell *a = &c->cells[i];
    int l = a->kind == 0 ? 0 : a->kind == 1 ? 1 : 3;
    CHECK_INT(a->source != HP_CELL_ESTIMATED, hp_layer_time_profiled(p, l, a->type, a->tp));
    profiled += hp_layer_time_profiled(p, l, a->type, a->tp);
  }
  CHECK_INT(c->n_cells, pairs * 3 * 2);
  CHECK_INT(profiled, 12);
  hp_coverage_destroy(&c);
  hp_problem_destroy(&p);
}

TEST(coverage_groups_leave_out_mbs)
{
  /* 3 kinds x 2 types x tp {1, 2}: measured (block, fast, 1), (block, slow, 1), (embed, fast, 2) */
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, tiny_profile, 1, HP_1F1B);
  hp_coverage *c = coverage(p, HP_COV_GROUPS, NULL);
  CHECK_COUNT(c->total, 12, 3, 0, 9);
  CHECK_INT(c->n_mbs, 0);
  CHECK(find_cell(c, "embed", 0, 2, 0)->source == HP_CELL_MEASURED);
  hp_coverage_destroy(&c);
  hp_problem_destroy(&p);
}

TEST(coverage_without_a_profile_is_all_estimated)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_coverage *c = coverage(p, HP_COV_SPACE, NULL);
  CHECK_COUNT(c->total, 48, 0, 0, 48);
  CHECK(c->profile == NULL);
  hp_coverage_destroy(&c);
  hp_problem_destroy(&p);
}

TEST(coverage_of_a_plan_counts_the_cells_its_slots_run)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, tiny_profile, 8, HP_1F1B);
  /* examples/tiny/plan.json: tp 1, mbs 1; stage 0 (embed, block) on devices 0 (fast) and
   * 2 (slow), stage 1 (block, head) on 1 (fast) and 3 (slow): every kind on both types,
   * 6 cells; block measured at mbs 1 on both, embed and head estimated. */
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "{ \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                           "{ \"layers\": [2, 3], \"devices\": [[1], [3]] } ] }");
  hp_coverage *c = coverage(p, HP_COV_PLAN, pl);
  CHECK_COUNT(c->total, 6, 2, 0, 4);
  CHECK_COUNT(c->by_kind[1], 2, 2, 0, 0);
  hp_coverage_destroy(&c);
  hp_plan_destroy(&pl);
  /* tp 2, mbs 2: stage 0 (embed, block) on the fast node, stage 1 (block, head) on the
   * slow one: (embed, fast) measured at tp 2 mbs 2; (block, fast), (block, slow),
   * (head, slow) have no tp-2 point: 4 cells, 1 measured, 3 estimated. */
  pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 2, \"dp\": 1, \"mbs\": 2, \"stages\": ["
                  "{ \"layers\": [0, 1], \"devices\": [[0, 1]] },"
                  "{ \"layers\": [2, 3], \"devices\": [[2, 3]] } ] }");
  c = coverage(p, HP_COV_PLAN, pl);
  CHECK_COUNT(c->total, 4, 1, 0, 3);
  CHECK_INT(c->n_types, 2);
  CHECK_COUNT(c->by_type[0], 2, 1, 0, 1);
  CHECK_COUNT(c->by_type[1], 2, 0, 0, 2);
  CHECK(find_cell(c, "head", 0, 2, 2) == NULL);   /* head never runs on fast */
  hp_coverage_destroy(&c);
  hp_plan_destroy(&pl);
  /* mbs 4 on tp 1 (dp 2, pp 2): block on fast measured at 4, block on slow derived */
  pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 4, \"stages\": ["
                  "{ \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                  "{ \"layers\": [2, 3], \"devices\": [[1], [3]] } ] }");
  c = coverage(p, HP_COV_PLAN, pl);
  CHECK_COUNT(c->total, 6, 1, 1, 4);
  hp_coverage_destroy(&c);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(coverage_space_pairs_are_the_solvers_configurations)
{
  /* The (tp, mbs) pairs of the tiny space, by hand: tp 1 with dp 4, 2, 1 and tp 2 with
   * dp 2, 1; mbs divides gbs / dp. gbs 1: dp 1 only, mbs 1 -> 2 pairs; gbs 6: dp 2, 1,
   * mbs 1, 3 (dp 2) and 1, 2, 3, 6 -> 4 per tp, 8; gbs 8: 1, 2, 4, 8 per tp, 8;
   * gbs 12: dp 4 -> 1, 3; dp 2 -> 1, 2, 3, 6; dp 1 -> 1, 2, 3, 4, 6, 12: 6 per tp, 12;
   * gbs 30: dp 2 -> 1, 3, 5, 15; dp 1 -> 1, 2, 3, 5, 6, 10, 15, 30: 8 per tp, 16. */
  static const long gbs[] = { 1, 6, 8, 12, 30 };
  static const int want[] = { 2, 8, 8, 12, 16 };
  for (size_t g = 0; g < sizeof gbs / sizeof *gbs; g++) {
    hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, gbs[g], HP_1F1B);
    hp_coverage *c = coverage(p, HP_COV_SPACE, NULL);
    hp_config *cfg = NULL;
    int n = hp__configs(p, &cfg), pairs = 0;
    CHECK(n > 0);
    /* every configuration's (tp, mbs) is a cell of every (kind, type) ... */
    for (int i = 0; i < n; i++) {
      int first = 1;
      CHECK(find_cell(c, "head", 1, cfg[i].tp, cfg[i].mbs) != NULL);
      for (int j = 0; j < i && first; j++) first = cfg[j].tp != cfg[i].tp || cfg[j].mbs != cfg[i].mbs;
      pairs += first;
    }
    CHECK_INT(pairs, want[g]);
    /* ... and every cell's (tp, mbs) is some configuration's: pairs x 3 kinds x 2 types */
    for (int i = 0; i < c->n_cells; i++) {
      int found = 0;
      for (int j = 0; j < n && !found; j++)
        found = cfg[j].tp == c->cells[i].tp && cfg[j].mbs == c->cells[i].mbs;
      CHECK(found);
    }
    CHECK_INT(c->n_cells, pairs * 3 * 2);
    free(cfg);
    hp_coverage_destroy(&c);
    hp_problem_destroy(&p);
  }
}

TEST(coverage_json_lists_estimated_cells_and_reads_back_as_a_plan)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, tiny_profile, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "{ \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                           "{ \"layers\": [2, 3], \"devices\": [[1], [3]] } ] }");
  hp_coverage *c = coverage(p, HP_COV_PLAN, pl);
  hp_plan *back = NULL;
  hp_diag d = {0};
  char *text = NULL;
  CHECK(hp_plan_to_json(p, pl, NULL, NULL, NULL, c, &text, &d) == HP_OK);
  CHECK_CONTAINS(text, "\"profile_coverage\":");
  CHECK_CONTAINS(text, "\"scope\":\t\"plan\"");
  CHECK_CONTAINS(text, "\"estimated\":\t4");
  CHECK_CONTAINS(text, "\"kind\":\t\"head\",\n\t\t\t\t\"type\":\t\"slow\"");
  CHECK(hp_plan_parse(text, "back.json", p, &back, &d) == HP_OK);
  CHECK_INT(back->mbs, 1);
  free(text);
  hp_plan_destroy(&back);
  hp_coverage_destroy(&c);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* hp_problem_create's message for a profile, "" if it binds. */
static const char *bind_error(const char *model, const char *cluster, const char *profile)
{
  static char msg[600];
  hp_diag d = {0};
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *pr = NULL;
  hp_problem *p = NULL;
  hp_job job = { .gbs = 8, .schedule = HP_1F1B };
  msg[0] = '\0';
  if (hp_model_parse(model, "m.json", &m, &d) || hp_cluster_parse(cluster, "c.json", &c, &d) ||
      hp_profile_parse(profile, "p.json", &pr, &d))
    snprintf(msg, sizeof msg, "fixture: %s", d.msg);
  else if (hp_problem_create(&p, m, c, pr, job, &d))
    snprintf(msg, sizeof msg, "%s", d.msg);
  hp_problem_destroy(&p);
  return msg;
}

TEST(profile_that_matches_no_layer_kind_is_an_error_naming_file_and_fix)
{
  const char *e = bind_error(fx_tiny_model, fx_tiny_cluster,
    "{ \"layer_times\": [ { \"kind\": \"conv\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 1 } ] }");
  CHECK_CONTAINS(e, "profile 'p.json' matches none of the layer kinds of model 'tiny-4'");
  CHECK_CONTAINS(e, "its layer_times are for kinds 'conv', the model's kinds are 'embed', 'block', 'head'");
  CHECK_CONTAINS(e, "profile this model (hetplan-profile --model)");
}

TEST(profile_that_matches_no_device_type_is_an_error)
{
  const char *e = bind_error(fx_tiny_model, fx_tiny_cluster,
    "{ \"layer_times\": [ { \"kind\": \"block\", \"type\": \"H100\", \"tp\": 1, \"mbs\": 1, \"seconds\": 1 } ] }");
  CHECK_CONTAINS(e, "profile 'p.json' matches none of the device types of cluster 'tiny-2x2': "
                    "its layer_times are for 'H100', the cluster has 'fast', 'slow'");
}

TEST(profile_whose_kinds_and_types_never_meet_is_an_error)
{
  const char *e = bind_error(fx_tiny_model, fx_tiny_cluster,
    "{ \"layer_times\": [ { \"kind\": \"block\", \"type\": \"H100\", \"tp\": 1, \"mbs\": 1, \"seconds\": 1 },"
    "                     { \"kind\": \"conv\", \"type\": \"fast\", \"tp\": 1, \"mbs\": 1, \"seconds\": 1 } ] }");
  CHECK_CONTAINS(e, "no layer_times entry for a layer kind of model 'tiny-4' on a device type "
                    "of cluster 'tiny-2x2' (1 entries match a kind, 1 a type, none both)");
  e = bind_error(fx_tiny_model, fx_tiny_cluster,
    "{ \"layer_times\": [ { \"kind\": \"block\", \"type\": \"fast\", \"tp\": 4, \"mbs\": 1, \"seconds\": 1 } ] }");
  CHECK_CONTAINS(e, "are all at tp above 2, the most GPUs of any node");
  /* a profile without layer times (a bandwidth matrix only) binds */
  e = bind_error(fx_tiny_model, fx_tiny_cluster, "{ \"collectives\": [] }");
  CHECK(!strcmp(e, ""));
}

TEST(gpt2_with_transgans_profile_is_refused)
{
  /* the case: this pairing used to plan at 0.19 s on FLOPs alone, silently */
  hp_diag d = {0};
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *pr = NULL;
  hp_problem *p = NULL;
  hp_job job = { .gbs = 32, .schedule = HP_1F1B };
  CHECK(hp_model_load("models/gpt2-amp.json", &m, &d) == HP_OK);
  CHECK(hp_cluster_load("models/amp-hetero.json", &c, &d) == HP_OK);
  CHECK(hp_profile_load("models/transgan-amp.profile.json", &pr, &d) == HP_OK);
  CHECK(hp_problem_create(&p, m, c, pr, job, &d) == HP_INVAL);
  CHECK(p == NULL);
  CHECK_CONTAINS(d.msg, "profile 'models/transgan-amp.profile.json' matches none of the layer "
                        "kinds of model 'gpt2-amp'");
}
