/* test_modules.c -- module trees (formats.md "Model", "modules"): the loader and its
 * refusals, the JSON writer's round trip, the generator's tree, and SageMaker's
 * partitioner over the tree (solvers/solver_dhondt.c) on trees worked by hand, where the
 * flat chain of the same layers gives another split. Layer weights in the partition
 * tests are given directly (hp__dhondt_stages takes them), so each split is worked from
 * small numbers. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "../../solvers/search.h"

/* A layer of the given weight, as model JSON (the partition tests ignore the figures). */
#define LY(name) "{ \"name\": \"" name "\", \"params\": 1, \"act_bytes\": 0, \"out_bytes\": 1, \"flops\": 1 }"

static hp_model *parse(const char *text)
{
  hp_diag d = {0};
  hp_model *m = NULL;
  if (hp_model_parse(text, "m.json", &m, &d)) {
    fprintf(stderr, "  fixture: %s\n", d.msg);
    exit(3);
  }
  return m;
}

/* The stage starts of hp__dhondt_stages as "0 1 3 5 6". */
static const char *stages(const hp_model *m, const double *w, int pp)
{
  static char buf[256];
  int first[64];
  int len = 0;
  if (hp__dhondt_stages(m, w, pp, first) != HP_OK) return "out of memory";
  for (int s = 0; s <= pp; s++)
    len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%d", s ? " " : "", first[s]);
  return buf;
}

#define CHECK_STAGES(m, w, pp, want)                                                  \
  do {                                                                               \
    const char *got_ = stages(m, w, pp);                                             \
    if (strcmp(got_, want)) {                                                        \
      harness_fail(__FILE__, __LINE__, "stages %s, expected %s", got_, want);        \
      return;                                                                        \
    }                                                                                \
  } while (0)

/* --- the loader */

static const char tree_json[] =
  "{ \"name\": \"t\", \"modules\": ["
  "  { \"name\": \"embedding\", \"children\": [ " LY("e") " ] },"
  "  { \"name\": \"decoder\", \"children\": ["
  "    { \"name\": \"b\", \"repeat\": 3, \"params\": 2, \"act_bytes\": 0, \"out_bytes\": 1, \"flops\": 1 },"
  "    { \"name\": \"inner\", \"children\": [ " LY("x") ", { \"name\": \"deep\", \"children\": [ " LY("y") " ] } ] },"
  "    " LY("z") " ] },"
  "  " LY("h") " ] }";

/* Layers in document order: e b.0 b.1 b.2 x y z h (0..7). Modules in pre-order:
 * 0 embedding [0,1) top; 1 decoder [1,7) top; 2 inner [4,6) in decoder; 3 deep [5,6) in
 * inner. The root's items: embedding, decoder, layer h; decoder's: b.0, b.1, b.2, inner,
 * z. */
TEST(modules_load_in_pre_order_with_their_layer_ranges)
{
  hp_model *m = parse(tree_json);
  static const struct { const char *name; int parent, first, last, depth; } want[] = {
    { "embedding", -1, 0, 1, 0 }, { "decoder", -1, 1, 7, 0 }, { "inner", 1, 4, 6, 1 },
    { "deep", 2, 5, 6, 2 } };
  CHECK_INT(m->n_layers, 8);
  CHECK(!strcmp(m->layers[1].name, "b.0") && !strcmp(m->layers[3].name, "b.2"));
  CHECK(!strcmp(m->layers[5].name, "y") && !strcmp(m->layers[7].name, "h"));
  CHECK_INT(m->layers[2].params, 2);
  CHECK_INT(m->n_modules, 4);
  for (int k = 0; k < 4; k++) {
    CHECK(!strcmp(m->modules[k].name, want[k].name));
    CHECK_INT(m->modules[k].parent, want[k].parent);
    CHECK_INT(m->modules[k].first, want[k].first);
    CHECK_INT(m->modules[k].last, want[k].last);
    CHECK_INT(m->modules[k].depth, want[k].depth);
  }
  hp_module_item it[8];
  CHECK_INT(hp_model_items(m, -1, it), 3);
  CHECK(it[0].module == 0 && it[1].module == 1 && it[2].module == -1 && it[2].first == 7);
  CHECK_INT(hp_model_items(m, 1, it), 5);
  CHECK(it[0].module == -1 && it[0].first == 1 && it[2].module == -1 && it[2].first == 3);
  CHECK(it[3].module == 2 && it[3].first == 4 && it[3].last == 6);
  CHECK(it[4].module == -1 && it[4].first == 6 && it[4].last == 7);
  CHECK_INT(hp_model_items(m, 2, it), 2);
  CHECK(it[0].module == -1 && it[0].first == 4 && it[1].module == 3);
  CHECK_INT(hp_model_items(m, 3, it), 1);
  CHECK(it[0].module == -1 && it[0].first == 5);
  hp_model_destroy(&m);
}

/* What `hetplan expand` writes reads back to the same tree and writes the same text; a
 * copy (hp_model_copy) keeps the tree too. */
TEST(modules_round_trip_through_the_json_writer_and_the_copy)
{
  hp_model *m = parse(tree_json), *back, *copy = NULL;
  hp_diag d = {0};
  char *a = NULL, *b = NULL, *c = NULL;
  CHECK(hp_model_to_json(m, &a, &d) == HP_OK);
  CHECK(strstr(a, "\"modules\"") && !strstr(a, "\"layers\""));
  back = parse(a);
  CHECK(hp_model_to_json(back, &b, &d) == HP_OK);
  CHECK(!strcmp(a, b));
  CHECK_INT(back->n_modules, 4);
  CHECK_INT(back->modules[3].parent, 2);
  CHECK_INT(back->modules[3].first, 5);
  CHECK(hp_model_copy(m, &copy, &d) == HP_OK);
  CHECK(hp_model_to_json(copy, &c, &d) == HP_OK);
  CHECK(!strcmp(a, c));
  CHECK(copy->modules[0].name != m->modules[0].name);   /* its own strings */
  free(a); free(b); free(c);
  hp_model_destroy(&m);
  hp_model_destroy(&back);
  hp_model_destroy(&copy);
}

/* A "modules" list of layers only is the flat chain: no modules, written as "layers". */
TEST(modules_of_layers_only_are_the_flat_chain)
{
  hp_model *m = parse("{ \"modules\": [ " LY("a") ", " LY("b") " ] }");
  hp_diag d = {0};
  char *a = NULL;
  CHECK_INT(m->n_layers, 2);
  CHECK_INT(m->n_modules, 0);
  CHECK(hp_model_to_json(m, &a, &d) == HP_OK);
  CHECK(strstr(a, "\"layers\"") && !strstr(a, "\"modules\""));
  free(a);
  hp_model_destroy(&m);
}

/* Each refusal names the file and the key path. */
TEST(modules_refusals_name_the_key)
{
  static const struct { const char *text, *want; } bad[] = {
    { "{ \"layers\": [ " LY("a") " ], \"modules\": [ " LY("b") " ] }",
      "m.json: modules: give either \"modules\" or \"layers\", not both" },
    { "{ \"transformer\": { \"family\": \"gpt\", \"layers\": 1, \"hidden\": 8, \"heads\": 2,"
      " \"seq\": 4, \"vocab\": 16 }, \"modules\": [ " LY("b") " ] }",
      "m.json: modules: give either \"modules\" or \"transformer\", not both" },
    { "{ \"modules\": [] }", "m.json: modules: the array is empty" },
    { "{ \"modules\": [ " LY("a") ", { \"name\": \"m\", \"children\": [ { \"name\": \"n\","
      " \"children\": [] } ] } ] }", "m.json: modules[1].children[0].children: the array is empty" },
    { "{ \"modules\": [ " LY("a") ", { \"children\": [ " LY("b") " ] } ] }",
      "m.json: modules[1].name: missing" },
    { "{ \"modules\": [ { \"name\": \"\", \"children\": [ " LY("b") " ] } ] }",
      "modules[0].name" },
    { "{ \"modules\": [ { \"name\": \"dec\\u001b[2J\", \"children\": [ " LY("b") " ] } ] }",
      "m.json: modules[0].name: \"dec\\x1B[2J\" holds a control character" },
    { "{ \"modules\": [ { \"name\": \"m\", \"children\": { \"a\": 1 } } ] }",
      "m.json: modules[0].children: expected an array" },
    { "{ \"modules\": [ { \"name\": \"m\", \"children\": [ { \"name\": \"x\", \"params\": -1,"
      " \"act_bytes\": 0, \"out_bytes\": 1, \"flops\": 1 } ] } ] }",
      "m.json: modules[0].children[0].params: expected a non-negative number" },
    { "{ \"modules\": [ 7 ] }", "m.json: modules[0]: expected an object" },
    /* a layer's key on a module: `repeat` would be ignored and the blocks lost */
    { "{ \"modules\": [ " LY("a") ", { \"name\": \"block\", \"repeat\": 3, \"children\": [ "
      LY("b") " ] } ] }", "m.json: modules[1].repeat: a module (a node with \"children\") has no "
      "\"repeat\": write the module once per copy" },
    { "{ \"modules\": [ { \"name\": \"m\", \"params\": 5, \"children\": [ " LY("b") " ] } ] }",
      "m.json: modules[0].params: a module (a node with \"children\") has no \"params\"" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *msg = fx_model_error(bad[i].text);
    if (!strstr(msg, bad[i].want)) fprintf(stderr, "  case %zu: got \"%s\"\n", i, msg);
    CHECK(strstr(msg, bad[i].want) != NULL);
  }
}

/* Modules nest at most HP_MAX_MODULE_DEPTH (64) deep: 64 load, 65 are refused at the
 * 65th module's key. */
TEST(modules_nest_at_most_64_deep)
{
  for (int depth = 64; depth <= 65; depth++) {
    char *text = malloc(64 * 1024), want[2048];
    int len = snprintf(text, 64 * 1024, "{ \"modules\": [");
    for (int k = 0; k < depth; k++) len += sprintf(text + len, "{ \"name\": \"m%d\", \"children\": [", k);
    len += sprintf(text + len, LY("a"));
    for (int k = 0; k < depth; k++) len += sprintf(text + len, "] }");
    sprintf(text + len, "] }");
    const char *msg = fx_model_error(text);
    if (depth == 64) {
      hp_model *m = parse(text);
      CHECK(!msg[0]);
      CHECK_INT(m->n_modules, 64);
      CHECK_INT(m->modules[63].depth, 63);
      CHECK_INT(m->modules[63].parent, 62);
      hp_model_destroy(&m);
    } else {
      /* the 65th module's key path, 777 characters: its first and last 60 are named */
      char path[1024];
      int pl = snprintf(path, sizeof path, "modules[0]");
      for (int k = 1; k < 65; k++) pl += snprintf(path + pl, sizeof path - (size_t)pl, ".children[0]");
      snprintf(want, sizeof want, "m.json: %.60s ... %s: modules nest more than 64 deep",
               path, path + pl - 60);
      if (!strstr(msg, want)) fprintf(stderr, "  got \"%s\"\n", msg);
      CHECK(strstr(msg, want) != NULL);
    }
    free(text);
  }
}

/* --- the generator: embedding, decoder (the blocks), head (final norm and head) */
TEST(modules_the_generator_gives_the_natural_tree)
{
  hp_model *m = parse("{ \"transformer\": { \"family\": \"llama\", \"layers\": 4, \"hidden\": 64,"
                      " \"heads\": 4, \"seq\": 16, \"vocab\": 100 } }");
  static const struct { const char *name; int first, last; } want[] = {
    { "embedding", 0, 1 }, { "decoder", 1, 5 }, { "head", 5, 7 } };
  CHECK_INT(m->n_layers, 7);
  CHECK_INT(m->n_modules, 3);
  for (int k = 0; k < 3; k++) {
    CHECK(!strcmp(m->modules[k].name, want[k].name));
    CHECK_INT(m->modules[k].parent, -1);
    CHECK_INT(m->modules[k].first, want[k].first);
    CHECK_INT(m->modules[k].last, want[k].last);
  }
  CHECK(!strcmp(m->layers[5].name, "final_norm") && !strcmp(m->layers[6].name, "head"));
  hp_model_destroy(&m);
  /* a Hugging Face config goes through the generator: the same tree */
  m = parse("{ \"model_type\": \"llama\", \"num_hidden_layers\": 3, \"hidden_size\": 64,"
            " \"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100,"
            " \"max_position_embeddings\": 32 }");
  CHECK_INT(m->n_modules, 3);
  CHECK_INT(m->modules[1].first, 1);
  CHECK_INT(m->modules[1].last, 4);
  CHECK_INT(m->modules[2].last, 6);
  hp_model_destroy(&m);
}

/* --- the partitioner */

/* The same six layers e, b0..b3, h, as a tree (embedding {e}, decoder {b0..b3},
 * head {h}) and as the flat chain; weights 3, 1, 1, 1, 1, 1.
 * pp 2, tree: the root's items cost embedding 3, decoder 4, head 1; 3 items >= 2 stages,
 *   so 2 segments by the least largest cost: {3} | {4, 1} (5) beats {3, 4} (7) | {1}:
 *   stages [e] [b0..b3 h], starts 0 1 6.
 * pp 2, flat: {3, 1} | {1, 1, 1, 1} (4, 4) beats {3} | 5 and {3, 1, 1} | 3 (5): 0 2 6.
 * pp 4, tree: 3 items < 4 stages: one stage each, the fourth by D'Hondt: quotients
 *   3/2 = 1.5 (embedding, one layer: may take no more), 4/2 = 2 (decoder), 1/2 (head, one
 *   layer): the decoder's, cut along its items 1, 1, 1, 1 into {b0 b1} | {b2 b3} (2, 2;
 *   {b0} | 3 is worse): starts 0 1 3 5 6. */
TEST(dhondt_tree_and_flat_chain_give_different_splits)
{
  hp_model *tree = parse("{ \"modules\": [ { \"name\": \"embedding\", \"children\": [ " LY("e") " ] },"
                         " { \"name\": \"decoder\", \"children\": [ " LY("b0") ", " LY("b1") ", "
                         LY("b2") ", " LY("b3") " ] }, { \"name\": \"head\", \"children\": [ "
                         LY("h") " ] } ] }");
  hp_model *flat = parse("{ \"layers\": [ " LY("e") ", " LY("b0") ", " LY("b1") ", " LY("b2")
                         ", " LY("b3") ", " LY("h") " ] }");
  const double w[6] = { 3, 1, 1, 1, 1, 1 };
  CHECK_STAGES(tree, w, 2, "0 1 6");
  CHECK_STAGES(flat, w, 2, "0 2 6");
  CHECK_STAGES(tree, w, 4, "0 1 3 5 6");
  CHECK_STAGES(tree, w, 1, "0 6");
  CHECK_STAGES(tree, w, 6, "0 1 2 3 4 5 6");
  hp_model_destroy(&tree);
  hp_model_destroy(&flat);
}

/* The recursion through a module with one child: e (1), decoder { stack { s0..s3 (2
 * each) } }, h (1); pp 4.
 * Tree: the root's items e 1, decoder 8, h 1: one stage each, the fourth to the decoder
 *   (8/2 = 4; e and h have one layer). The decoder's one item, stack, takes both stages
 *   (one item < 2 stages; stack has 4 layers), and stack's items 2, 2, 2, 2 are cut
 *   {s0 s1} | {s2 s3}: stages [e] [s0 s1] [s2 s3] [h], starts 0 1 3 5 6, largest 4.
 * Flat over 1 2 2 2 2 1: largest 3 is reachable only as {1 2} {2} {2} {2 1} (no two 2s
 *   together; each 1 joins its neighbour): starts 0 2 3 4 6. */
TEST(dhondt_recurses_into_a_segment_given_several_stages)
{
  hp_model *tree = parse("{ \"modules\": [ " LY("e") ", { \"name\": \"decoder\", \"children\": ["
                         " { \"name\": \"stack\", \"children\": [ " LY("s0") ", " LY("s1") ", "
                         LY("s2") ", " LY("s3") " ] } ] }, " LY("h") " ] }");
  hp_model *flat = parse("{ \"layers\": [ " LY("e") ", " LY("s0") ", " LY("s1") ", " LY("s2")
                         ", " LY("s3") ", " LY("h") " ] }");
  const double w[6] = { 1, 2, 2, 2, 2, 1 };
  CHECK_STAGES(tree, w, 4, "0 1 3 5 6");
  CHECK_STAGES(flat, w, 4, "0 2 3 4 6");
  hp_model_destroy(&tree);
  hp_model_destroy(&flat);
}

/* D'Hondt's quotients, and the cap of a segment at its layer count. The root's items:
 * p { p0 } costing 5, a { a0..a3 } costing 1 + 1 + 1 + 1.5 = 4.5, b { b0..b5 } costing 6;
 * pp 6: one stage each, then three more:
 *   1st: a 4.5/2 = 2.25, b 6/2 = 3 (p's 5/2 = 2.5 would not win either)   -> b (2)
 *   2nd: a 2.25, b 6/3 = 2; p's 2.5 would win, but p has one layer         -> a (2)
 *   3rd: a 4.5/3 = 1.5, b 2                                                 -> b (3)
 * a's 2 stages over 1, 1, 1, 1.5: {a0 a1} | {a2 a3} (2.5; {a0 a1 a2} | 1.5 is 3);
 * b's 3 over six 1s: pairs. Starts 0 1 3 5 7 9 11. */
TEST(dhondt_allots_stages_by_quotient_within_each_segments_layers)
{
  hp_model *m = parse("{ \"modules\": [ { \"name\": \"p\", \"children\": [ " LY("p0") " ] },"
                      " { \"name\": \"a\", \"children\": [ { \"name\": \"a\", \"repeat\": 4, \"params\": 1,"
                      " \"act_bytes\": 0, \"out_bytes\": 1, \"flops\": 1 } ] },"
                      " { \"name\": \"b\", \"children\": [ { \"name\": \"b\", \"repeat\": 6, \"params\": 1,"
                      " \"act_bytes\": 0, \"out_bytes\": 1, \"flops\": 1 } ] } ] }");
  const double w[11] = { 5, 1, 1, 1, 1.5, 1, 1, 1, 1, 1, 1 };
  CHECK_STAGES(m, w, 6, "0 1 3 5 7 9 11");
  hp_model_destroy(&m);
}

/* Without a tree the partition is the min-max split of the layers, the split this solver
 * made before it read trees (hp__split_minmax), on 300 random chains. */
TEST(dhondt_without_a_tree_is_the_min_max_split)
{
  unsigned seed = 777;
  char text[40 * 120];
  for (int t = 0; t < harness_count(300); t++) {
    seed = seed * 1103515245u + 12345u;
    int L = 1 + (int)(seed >> 16) % 30;
    seed = seed * 1103515245u + 12345u;
    int pp = 1 + (int)(seed >> 16) % L, len = snprintf(text, sizeof text, "{ \"layers\": [");
    double w[30];
    for (int l = 0; l < L; l++) {
      seed = seed * 1103515245u + 12345u;
      int v = (int)(seed >> 16) % 8;
      w[l] = v < 2 ? 0 : v < 4 ? 1 : (double)((seed >> 8) % 1000) / 7.0;
      len += snprintf(text + len, sizeof text - (size_t)len, "%s{ \"name\": \"l%d\", \"params\": 1,"
                      " \"act_bytes\": 0, \"out_bytes\": 1, \"flops\": 1 }", l ? "," : "", l);
    }
    snprintf(text + len, sizeof text - (size_t)len, "] }");
    hp_model *m = parse(text);
    hp_plan *pl = NULL;
    int first[31];
    CHECK(hp_plan_create(&pl, pp, 1, 1, L, NULL) == HP_OK);
    hp__split_minmax(pl, w);
    CHECK(hp__dhondt_stages(m, w, pp, first) == HP_OK);
    for (int s = 0; s <= pp; s++) CHECK_INT(first[s], pl->first[s]);
    hp_plan_destroy(&pl);
    hp_model_destroy(&m);
  }
}

/* alpha, SageMaker's memory_weight: A, B, C with 2e6, 1e6, 1e6 parameters (16 B of
 * states each: memory shares 0.5, 0.25, 0.25) and 1, 1, 2 TFLOP (compute shares 0.25,
 * 0.25, 0.5).
 *   alpha 1:   0.5, 0.25, 0.25   -> pp 2: {A} | {B C} (0.5; {A B} is 0.75)
 *   alpha 0.8: 0.45, 0.25, 0.3   -> {A} | {B C} (0.55; {A B} is 0.7)
 *   alpha 0.2: 0.3, 0.25, 0.45   -> {A B} | {C} (0.55; {B C} is 0.7)
 *   alpha 0:   0.25, 0.25, 0.5   -> {A B} | {C} (0.5; {B C} is 0.75)
 * In a tree whose one module holds all three the root passes both stages down, so the
 * same splits. The default is 0.8; a weight outside [0, 1] is the default. */
TEST(dhondt_memory_weight_moves_the_split)
{
  static const char model[] =
    "{ \"modules\": [ { \"name\": \"all\", \"children\": ["
    "  { \"name\": \"A\", \"params\": 2e6, \"act_bytes\": 0, \"out_bytes\": 1e3, \"flops\": 1e12 },"
    "  { \"name\": \"B\", \"params\": 1e6, \"act_bytes\": 0, \"out_bytes\": 1e3, \"flops\": 1e12 },"
    "  { \"name\": \"C\", \"params\": 1e6, \"act_bytes\": 0, \"out_bytes\": 1e3, \"flops\": 2e12 } ] } ] }";
  static const struct { double alpha, w0, w1, w2; const char *split; } cases[] = {
    { 1, 0.5, 0.25, 0.25, "0 1 3" }, { 0.8, 0.45, 0.25, 0.3, "0 1 3" },
    { 0.2, 0.3, 0.25, 0.45, "0 2 3" }, { 0, 0.25, 0.25, 0.5, "0 2 3" } };
  hp_model *m = parse(model);
  hp_limits lim;
  double w[3];
  hp_limits_init(&lim);
  CHECK_NEAR(hp__dhondt_alpha(&lim), 0.8, 0);
  lim.memory_weight = 0.2;
  CHECK_NEAR(hp__dhondt_alpha(&lim), 0.2, 0);
  lim.memory_weight = 1.5;
  CHECK_NEAR(hp__dhondt_alpha(&lim), 0.8, 0);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    hp__dhondt_weights(m, cases[i].alpha, w);
    CHECK_NEAR(w[0], cases[i].w0, 1e-12);
    CHECK_NEAR(w[1], cases[i].w1, 1e-12);
    CHECK_NEAR(w[2], cases[i].w2, 1e-12);
    CHECK_STAGES(m, w, 2, cases[i].split);
  }
  hp_model_destroy(&m);
}

/* Through the solver: two single-GPU nodes and gbs 1 leave one configuration (pp 2, tp 1,
 * dp 1), so the plan's split is the partition's: {A} | {B C} at the default weight, {A B}
 * | {C} at 0.2 (the weights above); the space note says the weight and the tree. */
TEST(dhondt_solver_plans_along_the_tree_with_the_memory_weight)
{
  static const char model[] =
    "{ \"modules\": [ { \"name\": \"all\", \"children\": ["
    "  { \"name\": \"A\", \"params\": 2e6, \"act_bytes\": 0, \"out_bytes\": 1e3, \"flops\": 1e12 },"
    "  { \"name\": \"B\", \"params\": 1e6, \"act_bytes\": 0, \"out_bytes\": 1e3, \"flops\": 1e12 },"
    "  { \"name\": \"C\", \"params\": 1e6, \"act_bytes\": 0, \"out_bytes\": 1e3, \"flops\": 2e12 } ] } ] }";
  static const char cluster[] =
    "{ \"device_types\": { \"g\": { \"mem_gib\": 80, \"tflops\": 100 } },"
    "  \"nodes\": [ { \"name\": \"a\", \"type\": \"g\", \"gpus\": 1 },"
    "             { \"name\": \"b\", \"type\": \"g\", \"gpus\": 1 } ], \"inter_gbps\": 100 }";
  hp_problem *p = fx_problem(model, cluster, NULL, 1, HP_1F1B);
  hp_limits lim;
  hp_result r;
  hp_diag d = {0};
  hp_limits_init(&lim);
  CHECK(hp_solver_run(hp_solver_find("dhondt"), p, NULL, &lim, &r, &d) == HP_OK);
  CHECK(r.plan && r.plan->pp == 2);
  CHECK_INT(r.plan->first[1], 1);
  CHECK(strstr(r.space_note, "module tree, memory weight 0.8") != NULL);
  hp_result_release(&r);
  lim.memory_weight = 0.2;
  CHECK(hp_solver_run(hp_solver_find("dhondt"), p, NULL, &lim, &r, &d) == HP_OK);
  CHECK(r.plan && r.plan->pp == 2);
  CHECK_INT(r.plan->first[1], 2);
  CHECK(strstr(r.space_note, "module tree, memory weight 0.2") != NULL);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}
