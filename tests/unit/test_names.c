/* test_names.c -- names holding control characters (bytes 0x00-0x1F, 0x7F) are refused
 * on load with the file and the key path (issue 23): a model's and its layers' and kinds',
 * a cluster's, its device types' and nodes', a profile's, a plan's inputs, a job's
 * schedule, a Hugging Face config's _name_or_path and model_type, a name defaulting to
 * the file's; and an escaped NUL, which would cut a string short. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fixtures.h"

TEST(control_characters_in_model_names_are_refused_with_the_key)
{
  CHECK_CONTAINS(fx_model_error("{ \"layers\": [ { \"name\": \"a\\nb\", \"params\": 1,"
                                " \"act_bytes\": 1, \"out_bytes\": 1, \"flops\": 1 } ] }"),
                 "m.json: layers[0].name: \"a\\x0Ab\" holds a control character (0x0A at byte 1)");
  CHECK_CONTAINS(fx_model_error("{ \"layers\": [ { \"name\": \"a\", \"kind\": \"k\\u001b[31m\","
                                " \"params\": 1, \"act_bytes\": 1, \"out_bytes\": 1, \"flops\": 1 } ] }"),
                 "layers[0].kind: \"k\\x1B[31m\" holds a control character (0x1B at byte 1)");
  CHECK_CONTAINS(fx_model_error("{ \"name\": \"x\\u007f\", \"layers\": [ { \"name\": \"a\","
                                " \"params\": 1, \"act_bytes\": 1, \"out_bytes\": 1, \"flops\": 1 } ] }"),
                 "m.json: name: \"x\\x7F\" holds a control character");
  CHECK_CONTAINS(fx_model_error("{ \"name\": \"x\\ty\", \"transformer\": { \"family\": \"gpt\","
                                " \"layers\": 1, \"hidden\": 8, \"heads\": 2, \"seq\": 4, \"vocab\": 10 } }"),
                 "m.json: name: \"x\\x09y\"");
  /* \u0000 would end the string early in cJSON: refused where it stands */
  CHECK_CONTAINS(fx_model_error("{ \"name\": \"x\\u0000y\", \"layers\": [] }"),
                 "m.json: line 1, column 13: \\u0000 (a NUL character) in a string");
  /* an escaped backslash followed by u0000 is plain text */
  CHECK(!strcmp(fx_model_error("{ \"notes\": \"a\\\\u0000\", \"layers\": [ { \"name\": \"a\","
                               " \"params\": 1, \"act_bytes\": 1, \"out_bytes\": 1, \"flops\": 1 } ] }"),
                ""));
}

TEST(a_default_name_from_the_file_name_is_checked_too)
{
  hp_diag d = {0};
  hp_model *m = NULL;
  CHECK(hp_model_parse("{ \"layers\": [ { \"name\": \"a\", \"params\": 1, \"act_bytes\": 1,"
                       " \"out_bytes\": 1, \"flops\": 1 } ] }", "dir/evil\rname.json", &m, &d)
        == HP_PARSE);
  CHECK_CONTAINS(d.msg, "name (absent, so its default): \"evil\\x0Dname.json\" holds a control "
                 "character");
}

TEST(control_characters_in_cluster_names_are_refused_with_the_key)
{
#define CLUSTER                                                                          \
  "{ \"name\": \"%s\", \"device_types\": { \"%s\": { \"mem_gib\": 1, \"tflops\": 1 } },"  \
  "  \"nodes\": [ { \"name\": \"%s\", \"type\": \"%s\", \"gpus\": 1 } ] }"
  char text[512];
  snprintf(text, sizeof text, CLUSTER, "c\\n", "g", "a", "g");
  CHECK_CONTAINS(fx_cluster_error(text), "name: \"c\\x0A\" holds a control character");
  snprintf(text, sizeof text, CLUSTER, "c", "g\\u0007", "a", "g\\u0007");
  CHECK_CONTAINS(fx_cluster_error(text), "device_types: \"g\\x07\" holds a control character");
  snprintf(text, sizeof text, CLUSTER, "c", "g", "a\\r", "g");
  CHECK_CONTAINS(fx_cluster_error(text), "nodes[0].name: \"a\\x0D\" holds a control character");
}

TEST(control_characters_in_profile_names_are_refused_with_the_key)
{
  CHECK_CONTAINS(fx_profile_error("{ \"layer_times\": [ { \"kind\": \"b\\n\", \"type\": \"g\","
                                  " \"tp\": 1, \"mbs\": 1, \"seconds\": 1 } ] }"),
                 "p.json: layer_times[0].kind: \"b\\x0A\" holds a control character");
  CHECK_CONTAINS(fx_profile_error("{ \"layer_times\": [ { \"kind\": \"b\", \"type\": \"g\\u0001\","
                                  " \"tp\": 1, \"mbs\": 1, \"seconds\": 1 } ] }"),
                 "layer_times[0].type: \"g\\x01\" holds a control character");
  CHECK_CONTAINS(fx_profile_error("{ \"device_types\": [ \"ok\", \"g\\u001f\" ] }"),
                 "device_types[1]: \"g\\x1F\" holds a control character");
  CHECK_CONTAINS(fx_profile_error("{ \"kinds\": { \"b\\u0002\": { \"params\": 1 } } }"),
                 "kinds: \"b\\x02\" holds a control character");
  CHECK_CONTAINS(fx_profile_error("{ \"model\": \"m\\n\" }"), "model: \"m\\x0A\"");
  CHECK_CONTAINS(fx_profile_error("{ \"gpus\": { \"H100\": { \"name\": \"NVIDIA\\n\" } } }"),
                 "gpus.H100.name: \"NVIDIA\\x0A\"");
}

TEST(control_characters_in_plan_and_job_names_are_refused_with_the_key)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  static const char plan[] =
    "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 1, \"stages\": [ { \"layers\": [0, 3],"
    "  \"devices\": [[0], [1], [2], [3]] } ], \"inputs\": { \"model\": \"m.json\\n;rm -rf x\" } }";
  hp_plan_info in;
  hp_job job = { .gbs = 8, .schedule = HP_1F1B };
  hp_diag d = {0};
  CHECK_CONTAINS(fx_plan_error(p, plan),
                 "inputs.model: \"m.json\\x0A;rm -rf x\" holds a control character");
  CHECK(hp_plan_info_parse(plan, "plan.json", &in, &d) == HP_PARSE);
  CHECK_CONTAINS(d.msg, "plan.json: inputs.model: \"m.json\\x0A;rm -rf x\"");
  CHECK(hp_plan_info_parse("{ \"solver\": { \"name\": \"dp\\u001b\" } }", "plan.json", &in, &d)
        == HP_PARSE);
  CHECK_CONTAINS(d.msg, "solver.name: \"dp\\x1B\"");
  CHECK(hp_job_parse("{ \"schedule\": \"1f1b\\n\" }", "job.json", &job, &d) == HP_PARSE);
  CHECK_CONTAINS(d.msg, "job.json: schedule: \"1f1b\\x0A\" holds a control character");
  hp_problem_destroy(&p);
}

TEST(control_characters_in_a_hugging_face_config_are_refused_with_the_key)
{
  static const char base[] =
    "{ %s \"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4,"
    "  \"intermediate_size\": 128, \"vocab_size\": 100, \"max_position_embeddings\": 32 }";
  char text[512];
  hp_diag d = {0};
  hp_hf_model h;
  hp_model *m = NULL;
  snprintf(text, sizeof text, base, "\"model_type\": \"llama\", \"_name_or_path\": \"org/x\\ny\",");
  CHECK(hp_hf_parse(text, "config.json", NULL, &h, &d) == HP_PARSE);
  CHECK_CONTAINS(d.msg, "config.json: _name_or_path: \"org/x\\x0Ay\" holds a control character");
  CHECK(hp_model_parse(text, "config.json", &m, &d) == HP_PARSE);
  CHECK_CONTAINS(d.msg, "_name_or_path: \"org/x\\x0Ay\"");
  snprintf(text, sizeof text, base, "\"model_type\": \"lla\\u001bma\",");
  CHECK(hp_hf_parse(text, "config.json", NULL, &h, &d) == HP_PARSE);
  CHECK_CONTAINS(d.msg, "model_type: \"lla\\x1Bma\"");
  /* a name taken from the folder */
  snprintf(text, sizeof text, base, "\"model_type\": \"llama\",");
  CHECK(hp_hf_parse(text, "dir/Lla\tma/config.json", NULL, &h, &d) == HP_PARSE);
  CHECK_CONTAINS(d.msg, "name (taken from the file's path): \"Lla\\x09ma\"");
  CHECK(hp_hf_parse(text, "dir/Llama/config.json", NULL, &h, &d) == HP_OK);
  CHECK(!strcmp(h.name, "Llama"));
}
