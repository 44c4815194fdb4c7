/* test_plan.c -- what makes a plan invalid (cost-model.md sections 2 and 7.8), each with
 * the message a user sees. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

static hp_problem *tiny(void)
{
  return fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
}

#define STAGES2 "\"stages\": [ { \"layers\": [0, 1], \"devices\": [[0], [2]] }," \
                "{ \"layers\": [2, 3], \"devices\": [[1], [3]] } ]"

TEST(plan_valid_one_passes)
{
  hp_problem *p = tiny();
  CHECK_INT(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 2, \"gas\": 2, " STAGES2 " }")[0], 0);
  hp_problem_destroy(&p);
}

TEST(plan_degrees_must_multiply_to_the_device_count)
{
  hp_problem *p = tiny();
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 1, \"mbs\": 1, " STAGES2 " }"),
                 "pp * tp * dp = 2 * 1 * 1 = 2 but cluster 'tiny-2x2' has 4 devices");
  hp_problem_destroy(&p);
}

TEST(plan_gas_must_be_an_integer_and_match)
{
  hp_problem *p = tiny();
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 3, " STAGES2 " }"),
                 "gbs 8 is not a multiple of dp * mbs = 2 * 3");
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"gas\": 8, " STAGES2 " }"),
                 "gas: 8 but gbs / (dp * mbs) = 8 / (2 * 1) = 4");
  hp_problem_destroy(&p);
}

TEST(plan_stages_must_be_contiguous_in_order_and_cover_the_model)
{
  hp_problem *p = tiny();
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                  "{ \"layers\": [0, 0], \"devices\": [[0], [2]] },"
                                  "{ \"layers\": [2, 3], \"devices\": [[1], [3]] } ] }"),
                 "stages[1].layers: starts at layer 2 but stages[0] ends at layer 0");
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                  "{ \"layers\": [1, 1], \"devices\": [[0], [2]] },"
                                  "{ \"layers\": [2, 3], \"devices\": [[1], [3]] } ] }"),
                 "stages[0].layers: starts at layer 1: the first stage must start at layer 0");
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                  "{ \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                                  "{ \"layers\": [2, 2], \"devices\": [[1], [3]] } ] }"),
                 "stages[1].layers: ends at layer 2 but the model's last layer is 3");
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                  "{ \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                                  "{ \"layers\": [3, 2], \"devices\": [[1], [3]] } ] }"),
                 "stages[1].layers: [3, 2] is empty");
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                  "{ \"layers\": [0, 1], \"devices\": [[0], [2]] } ] }"),
                 "stages: expected pp = 2 stages, got 1");
  hp_problem_destroy(&p);
}

TEST(plan_placement_must_be_a_bijection_with_tp_groups_in_a_node)
{
  hp_problem *p = tiny();
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                  "{ \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                                  "{ \"layers\": [2, 3], \"devices\": [[2], [3]] } ] }"),
                 "device 2 serves both stages[0].devices[1][0] and stages[1].devices[0][0]");
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                  "{ \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                                  "{ \"layers\": [2, 3], \"devices\": [[1], [7]] } ] }"),
                 "stages[1].devices[1][0]: expected a device id in 0..3, got 7");
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 1, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                  "{ \"layers\": [0, 3], \"devices\": [[0, 2], [1, 3]] } ] }"),
                 "stages[0].devices[0]: the TP group spans nodes 'a' and 'b'");
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 1, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                                  "{ \"layers\": [0, 3], \"devices\": [[0, 1], [2]] } ] }"),
                 "stages[0].devices[1]: expected tp = 2 device ids, got 1");
  hp_problem_destroy(&p);
}

TEST(plan_schedule_must_be_the_jobs_and_sharding_one_mode_per_layer)
{
  hp_problem *p = tiny();
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"schedule\": \"gpipe\", " STAGES2 " }"),
                 "schedule 'gpipe' but the job's is '1f1b'");
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, " STAGES2
                                  ", \"sharding\": [\"dp\", \"zero4\", \"dp\", \"dp\"] }"),
                 "sharding[1]: expected \"dp\", \"zero1\", \"zero2\" or \"zdp\" (\"zero3\"), got the string \"zero4\"");
  CHECK_CONTAINS(fx_plan_error(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, " STAGES2
                                  ", \"sharding\": [\"dp\"] }"),
                 "sharding: expected one mode per layer (4), got 1");
  hp_problem_destroy(&p);
}

TEST(plan_json_round_trips_through_the_writer)
{
  hp_problem *p = tiny();
  hp_plan *a = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 2, " STAGES2
                          ", \"sharding\": [\"dp\", \"zdp\", \"dp\", \"zdp\"] }");
  hp_eval e = {0};
  hp_diag d = {0};
  char *text = NULL;
  a->recompute[1] = 1;
  CHECK(hp_evaluate(p, a, &e, &d) == HP_OK);
  CHECK(hp_plan_to_json(p, a, &e, NULL, NULL, NULL, &text, &d) == HP_OK);
  hp_plan *b = fx_plan(p, text);
  CHECK_INT(b->mbs, 2);
  CHECK_INT(b->gas, 2);
  CHECK_INT(b->first[1], 2);
  CHECK_INT(b->recompute[1], 1);
  CHECK_INT(b->mode[3], HP_SHARD_ZDP);
  CHECK_INT(b->dev[HP_SLOT(b, 1, 1, 0)], 3);
  CHECK_CONTAINS(text, "\"iteration_time\":");
  CHECK_CONTAINS(text, "\"peak_memory\":");
  free(text);
  hp_eval_release(&e);
  hp_plan_destroy(&a);
  hp_plan_destroy(&b);
  hp_problem_destroy(&p);
}

/* Plans travel between the processes of a team as integers (plan_pack.c): the round trip
 * gives an equal plan (hp_plan_compare 0, and field by field), and a message cut short,
 * padded, or of another model's layer count is refused with a message, not read. */
TEST(plan_pack_round_trips_and_refuses_foreign_messages)
{
  hp_problem *p = tiny();
  hp_plan *a = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 2, " STAGES2
                          ", \"sharding\": [\"dp\", \"zdp\", \"dp\", \"zdp\"] }");
  hp_plan *b = NULL;
  hp_diag d = {0};
  long n = hp_plan_packed_words(a);
  long long *w = calloc((size_t)n + 1, sizeof *w);
  CHECK(w != NULL);
  a->recompute[1] = 1;
  /* 7 header words, pp + 1 stage starts, pp dp tp devices, pp flags, 4 layer flags */
  CHECK_INT(n, 7 + 3 + 4 + 2 + 4);
  hp_plan_pack(a, w);
  CHECK(hp_plan_unpack(w, n, 4, &b, &d) == HP_OK);
  CHECK_INT(hp_plan_compare(a, b), 0);
  CHECK_INT(b->gas, a->gas);
  CHECK_INT(b->recompute[1], 1);
  CHECK_INT(b->mode[3], HP_SHARD_ZDP);
  CHECK_INT(b->dev[HP_SLOT(b, 1, 1, 0)], 3);
  hp_plan_destroy(&b);
  CHECK(hp_plan_unpack(w, n - 1, 4, &b, &d) == HP_PLAN);
  CHECK_CONTAINS(d.msg, "plan message: 19 words where its header asks for 20");
  CHECK(hp_plan_unpack(w, n, 5, &b, &d) == HP_PLAN);
  CHECK(b == NULL);
  w[0] = 1000000;
  CHECK(hp_plan_unpack(w, n, 4, &b, &d) == HP_PLAN);
  free(w);
  hp_plan_destroy(&a);
  hp_problem_destroy(&p);
}

/* Two plans of equal time: whichever order they are offered in, the result keeps the
 * lesser in hp_plan_compare's order, as its plan and first in its ranking; so a team's
 * members, which meet the plans in different orders, end with the same. The two plans
 * here are mirror placements of the same stages on identical devices (equal time). */
TEST(result_keeps_the_same_plan_of_equal_time_whatever_the_order)
{
  hp_problem *p = tiny();
  hp_plan *a = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 2, "
                          "\"stages\": [ { \"layers\": [0, 1], \"devices\": [[0], [1]] },"
                          "{ \"layers\": [2, 3], \"devices\": [[2], [3]] } ] }");
  hp_plan *b = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 2, "
                          "\"stages\": [ { \"layers\": [0, 1], \"devices\": [[1], [0]] },"
                          "{ \"layers\": [2, 3], \"devices\": [[3], [2]] } ] }");
  hp_eval ea = {0}, eb = {0};
  hp_diag d = {0};
  hp_limits lim;
  hp_result r1, r2;
  hp_limits_init(&lim);
  lim.top = 2;
  CHECK(hp_evaluate(p, a, &ea, &d) == HP_OK);
  CHECK(hp_evaluate(p, b, &eb, &d) == HP_OK);
  CHECK(ea.iteration_time == eb.iteration_time);   /* the premise: a true tie */
  CHECK(hp_plan_compare(a, b) < 0);                 /* device 0 before device 1 */
  hp_result_init(&r1);
  hp_result_init(&r2);
  CHECK(hp_result_offer(&r1, &lim, a, &ea, &d) == HP_OK);
  CHECK(hp_result_offer(&r1, &lim, b, &eb, &d) == HP_OK);
  CHECK(hp_result_offer(&r2, &lim, b, &eb, &d) == HP_OK);
  CHECK(hp_result_offer(&r2, &lim, a, &ea, &d) == HP_OK);
  CHECK_INT(hp_plan_compare(r1.plan, a), 0);
  CHECK_INT(hp_plan_compare(r2.plan, a), 0);
  CHECK_INT(r2.n_top, 2);
  CHECK_INT(hp_plan_compare(r2.top[0].plan, a), 0);
  CHECK_INT(hp_plan_compare(r2.top[1].plan, b), 0);
  hp_result_release(&r1);
  hp_result_release(&r2);
  hp_eval_release(&ea);
  hp_eval_release(&eb);
  hp_plan_destroy(&a);
  hp_plan_destroy(&b);
  hp_problem_destroy(&p);
}
