/* test_launch.c -- the launch scripts of `hetplan export`, read back: the node order and
 * CUDA_VISIBLE_DEVICES they give (or, where no node order realises the placement and in
 * Slurm's task map, the global rank on each GPU of each node), under the rank order they
 * name, must put every slot (stage, replica, TP rank) on the device the plan chose, in
 * every format of the table. Plans: in Megatron order, its mirror, replicas across nodes,
 * a placement no node order realises, TP ranks out of GPU order, and an sa plan on the
 * heterogeneous AMP cluster. Also the table of formats, the one quoting function, the
 * arguments file, the user's arguments and needs, and every Megatron-LM argument written
 * against docs/megatron-args.txt. tests/cli/test_launch.sh runs the scripts. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "../../src/launch.h"

typedef struct inverted {
  int n;                 /* ranks read */
  int dev[256];          /* device of rank k, -1 unset */
  int order;             /* the rank order the script names */
} inverted;

static int node_by_name(const hp_problem *p, const char *name)
{
  for (int n = 0; n < p->cluster->n_nodes; n++)
    if (!strcmp(p->cluster->nodes[n].name, name)) return n;
  return -1;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Reads a script back into rank -> device: the torchrun case lines ("  0) host='a';
 * gpus=0,1; nproc=2 ;;"), DeepSpeed's hostfile ("printf '%s slots=%d\n' 'a' 2") and
 * --include (whose GPUs DeepSpeed sorts), or the node map of a launch with ranks given
 * ("    0) host='a'; gpus=0,1; ranks=0,3; nproc=2 ;;"), which the per-rank table ("# rank
 * 3: host 'a' GPU 1:") must agree with. Returns 0 on a malformed script. */
static int invert(const hp_problem *p, const char *text, inverted *iv)
{
  const char *line = text;
  int next = 0, nodes = 0, ds_hosts = 0, mapped = 0, tab[256];
  char ds_name[16][80];
  memset(iv, 0, sizeof *iv);
  for (int k = 0; k < 256; k++) iv->dev[k] = tab[k] = -1;
  iv->order = strstr(text, "--use-tp-pp-dp-mapping") ? HP_ORDER_TP_PP_DP : HP_ORDER_TP_DP_PP;
  for (; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    char host[64], gpus[256], ranks[256];
    int nr, nproc, rank, gpu, slots;
    if (sscanf(line, " %d) host='%63[^']'; gpus=%255[0-9,]; ranks=%255[0-9,]; nproc=%d ;;", &nr,
               host, gpus, ranks, &nproc) == 5) {
      int n = node_by_name(p, host), q = 0, g[64], ng = 0;
      if (nr != mapped++ || n < 0) return 0;
      for (char *t = strtok(gpus, ","); t && ng < 64; t = strtok(NULL, ",")) g[ng++] = atoi(t);
      for (char *t = strtok(ranks, ","); t; t = strtok(NULL, ","), q++) {
        int k = atoi(t);
        if (q >= ng || k < 0 || k >= 256 || iv->dev[k] >= 0) return 0;
        iv->dev[k] = p->cluster->nodes[n].first + g[q];
        if (k + 1 > next) next = k + 1;
      }
      if (q != nproc || q != ng) return 0;
    } else if (sscanf(line, " %d) host='%63[^']'; gpus=%255[0-9,]; nproc=%d ;;", &nr, host, gpus, &nproc) == 4) {
      int n = node_by_name(p, host), q = 0;
      if (nr != nodes++ || n < 0) return 0;
      for (char *t = strtok(gpus, ","); t; t = strtok(NULL, ","), q++)
        iv->dev[next + q] = p->cluster->nodes[n].first + atoi(t);
      if (q != nproc) return 0;
      next += nproc;
    } else if (sscanf(line, "# rank %d: host '%63[^']' GPU %d:", &rank, host, &gpu) == 3) {
      int n = node_by_name(p, host);
      if (n < 0 || rank < 0 || rank >= 256 || tab[rank] >= 0) return 0;
      tab[rank] = p->cluster->nodes[n].first + gpu;
    } else if (sscanf(line, "  printf '%%s slots=%%d\\n' '%63[^']' %d", host, &slots) == 2 &&
               node_by_name(p, host) >= 0) {
      snprintf(ds_name[ds_hosts++], sizeof ds_name[0], "%s", host);
    } else if (!strncmp(line, "deepspeed --hostfile hostfile --include '", 41)) {
      /* hosts in hostfile order; each host's included GPUs sorted */
      const char *inc = line + 41;
      for (int h = 0; h < ds_hosts; h++) {
        char key[96];
        const char *at;
        int g[64], ng = 0, n = node_by_name(p, ds_name[h]);
        snprintf(key, sizeof key, "%.79s:", ds_name[h]);
        at = strstr(inc, key);
        if (!at) return 0;
        at += strlen(key);
        while (*at >= '0' && *at <= '9') {
          g[ng++] = atoi(at);
          while (*at >= '0' && *at <= '9') at++;
          if (*at == ',') at++;
        }
        qsort(g, (size_t)ng, sizeof *g, cmp_int);
        for (int q = 0; q < ng; q++) iv->dev[next++] = p->cluster->nodes[n].first + g[q];
      }
    }
  }
  for (int k = 0; k < 256; k++)   /* the table says what the launch does */
    if (tab[k] >= 0 && (mapped ? iv->dev[k] != tab[k] : 0)) return 0;
  if (!mapped && !nodes && !ds_hosts) return 0;   /* no launch at all */
  iv->n = next;
  return 1;
}

/* Every slot's device under the script's order is the plan's; every rank is read once. */
static int inverts_to_plan(const hp_problem *p, const hp_plan *pl, const char *text)
{
  inverted iv;
  int D = p->cluster->n_devices;
  if (!invert(p, text, &iv) || iv.n != D) {
    fprintf(stderr, "  read %d ranks of %d from:\n%s\n", iv.n, D, text);
    return 0;
  }
  for (int s = 0; s < pl->pp; s++)
    for (int r = 0; r < pl->dp; r++)
      for (int j = 0; j < pl->tp; j++) {
        int k = hp_rank_of_slot(pl, (hp_rank_order)iv.order, s, r, j);
        if (iv.dev[k] != pl->dev[HP_SLOT(pl, s, r, j)]) {
          fprintf(stderr, "  slot (%d, %d, %d): rank %d runs on device %d, the plan says %d\n",
                  s, r, j, k, iv.dev[k], pl->dev[HP_SLOT(pl, s, r, j)]);
          return 0;
        }
      }
  return 1;
}

static char *launch(const hp_problem *p, const hp_plan *pl, hp_launch_format f)
{
  char *text = NULL;
  hp_diag d = {0};
  if (hp_launch_write(p, pl, f, NULL, &text, &d)) {
    fprintf(stderr, "launch failed: %s\n", d.msg);
    exit(3);
  }
  return text;
}

/* Every format of the table inverts one plan to it; returns the Megatron script. */
static int all_formats_invert(const hp_problem *p, const hp_plan *pl, char **megatron)
{
  int ok = 1;
  for (int f = 0; hp_launch_format_name(f); f++) {
    char *t = launch(p, pl, (hp_launch_format)f);
    if (!inverts_to_plan(p, pl, t)) {
      fprintf(stderr, "  format %s does not invert\n", hp_launch_format_name(f));
      ok = 0;
    }
    if (f == HP_LAUNCH_MEGATRON && megatron) *megatron = t;
    else free(t);
  }
  return ok;
}

#define TINY_PLAN(stage0, stage1)                                                    \
  "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["                     \
  "  { \"layers\": [0, 1], \"devices\": " stage0 " },"                               \
  "  { \"layers\": [2, 3], \"devices\": " stage1 " } ] }"

TEST(launch_in_order_and_mirrored_plans_invert)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *in_order = fx_plan(p, TINY_PLAN("[[0], [1]]", "[[2], [3]]"));
  hp_plan *mirror = fx_plan(p, TINY_PLAN("[[2], [3]]", "[[0], [1]]"));
  hp_rank_map m;
  hp_diag d = {0};
  char *meg = NULL;
  CHECK(all_formats_invert(p, in_order, &meg));
  CHECK(!strstr(meg, "--use-tp-pp-dp-mapping"));
  CHECK_CONTAINS(meg, "  0) host='a'; gpus=0,1; nproc=2 ;;");
  free(meg);
  /* the mirror: node b runs ranks 0-1 (stage 0), node a ranks 2-3 */
  CHECK(all_formats_invert(p, mirror, &meg));
  CHECK_CONTAINS(meg, "  0) host='b'; gpus=0,1; nproc=2 ;;");
  free(meg);
  CHECK(hp_rank_map_build(p, mirror, HP_ORDER_TP_DP_PP, &m, &d) == HP_OK);
  CHECK(m.contiguous && m.ascending);
  CHECK_INT(m.node[0], 1);
  hp_rank_map_release(&m);
  hp_plan_destroy(&in_order);
  hp_plan_destroy(&mirror);
  hp_problem_destroy(&p);
}

/* Replicas across nodes: stage 0 on GPU 0 of a and b, stage 1 on GPU 1 of each. Megatron's
 * default order splits node a (ranks 0 and 2); its tp-pp-dp order realises it. DeepSpeed
 * has one order: no node order realises it, and the script gives the per-rank table. */
TEST(launch_replicas_across_nodes_need_tp_pp_dp)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, TINY_PLAN("[[0], [2]]", "[[1], [3]]"));
  hp_rank_map m;
  hp_diag d = {0};
  char *meg = NULL, *ds;
  CHECK(hp_rank_map_build(p, pl, HP_ORDER_TP_DP_PP, &m, &d) == HP_OK);
  CHECK(!m.contiguous);
  CHECK_CONTAINS(m.why, "node 'a' holds ranks 0 and 2");
  hp_rank_map_release(&m);
  CHECK(all_formats_invert(p, pl, &meg));
  CHECK_CONTAINS(meg, "  --use-tp-pp-dp-mapping\n");
  free(meg);
  ds = launch(p, pl, HP_LAUNCH_DEEPSPEED);
  CHECK_CONTAINS(ds, "cannot be made with a node order and CUDA_VISIBLE_DEVICES");
  CHECK_CONTAINS(ds, "# rank 1: host 'b' GPU 0: stage 0, replica 1, TP rank 0");
  free(ds);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* No order realises it: node a holds ranks 0 and 3 under both. The table still inverts. */
TEST(launch_unrealisable_placement_gives_the_rank_table)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, TINY_PLAN("[[0], [3]]", "[[2], [1]]"));
  char *meg = NULL;
  CHECK(all_formats_invert(p, pl, &meg));
  CHECK_CONTAINS(meg, "cannot be made with a node order");
  CHECK(!strstr(meg, "torchrun --nnodes"));
  /* each process with its rank given: node a runs ranks 0 and 3 */
  CHECK_CONTAINS(meg, "    0) host='a'; gpus=0,1; ranks=0,3; nproc=2 ;;\n");
  CHECK_CONTAINS(meg, "  RANK=$rank LOCAL_RANK=$q WORLD_SIZE=4 LOCAL_WORLD_SIZE=$nproc");
  CHECK_CONTAINS(meg, "MASTER_ADDR='a' MASTER_PORT=29500 CUDA_VISIBLE_DEVICES=$gpus");
  CHECK_CONTAINS(meg, "\"${PYTHON:-python}\" 'pretrain_gpt.py' \"${MEGATRON_ARGS[@]}\" "
                      "${ARGS[@]+\"${ARGS[@]}\"} &\n");
  /* the placement is no longer among what Megatron-LM cannot express */
  CHECK_CONTAINS(meg, "# Placement: it cannot be made with a node order");
  CHECK(!strstr(meg, "#  - the placement"));
  free(meg);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* TP ranks against GPU order (group [1, 0] on node a): torchrun takes CUDA_VISIBLE_DEVICES
 * in any order; DeepSpeed's --include sorts, so its script falls back to torchrun lines. */
TEST(launch_tp_ranks_out_of_gpu_order)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 2, \"dp\": 1, \"mbs\": 1, \"stages\": ["
                           "  { \"layers\": [0, 1], \"devices\": [[1, 0]] },"
                           "  { \"layers\": [2, 3], \"devices\": [[2, 3]] } ] }");
  char *meg = NULL, *ds;
  CHECK(all_formats_invert(p, pl, &meg));
  CHECK_CONTAINS(meg, "host='a'; gpus=1,0;");
  free(meg);
  ds = launch(p, pl, HP_LAUNCH_DEEPSPEED);
  CHECK_CONTAINS(ds, "--include sorts a node's GPUs");
  CHECK(!strstr(ds, "deepspeed --hostfile"));
  free(ds);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* The sa solver on AMP's heterogeneous cluster (3 x 4 V100 + 4 T4) chooses its own
 * placement; every format inverts to it. */
TEST(launch_sa_plan_on_the_heterogeneous_cluster_inverts)
{
  hp_problem *p = fx_load("models/gpt2-amp.json", "models/amp-hetero.json",
                          "models/gpt2-amp.profile.json", 32);
  hp_limits lim;
  hp_result r;
  hp_diag d = {0};
  char *meg = NULL, *ds;
  int in_order = 1;
  hp_limits_init(&lim);
  lim.seed = 3;
  lim.max_work = 300;
  CHECK(hp_solver_run(hp_solver_find("sa"), p, NULL, &lim, &r, &d) == HP_OK);
  CHECK(r.plan != NULL);
  for (int i = 0; i < p->cluster->n_devices; i++) in_order &= r.plan->dev[i] == i;
  CHECK(!in_order);                      /* sa moved the placement: a real test */
  CHECK(all_formats_invert(p, r.plan, &meg));
  free(meg);
  /* DeepSpeed's config: the plan's micro-batch and accumulation, no ZeRO (no zdp here) */
  {
    hp_launch_opts o = {0};
    o.config_only = 1;
    CHECK(hp_launch_write(p, r.plan, HP_LAUNCH_DEEPSPEED, &o, &ds, &d) == HP_OK);
    CHECK_CONTAINS(ds, "\"train_batch_size\": 32");
    CHECK_CONTAINS(ds, "\"train_micro_batch_size_per_gpu\": 1");
    {
      char want[64];
      snprintf(want, sizeof want, "\"gradient_accumulation_steps\": %ld", r.plan->gas);
      CHECK_CONTAINS(ds, want);
    }
    free(ds);
  }
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

/* Megatron's arguments for a Llama shape: GQA, SwiGLU, RMSNorm, rope, untied head; uneven
 * stages as a layout; partial recompute and ZeRO-3 said, with the figures of the plan as
 * Megatron runs it. */
TEST(launch_megatron_arguments_and_what_it_cannot_express)
{
  static const char llama[] =
    "{ \"transformer\": { \"family\": \"llama\", \"layers\": 4, \"hidden\": 256, \"heads\": 8,"
    "  \"kv_heads\": 2, \"ffn\": 688, \"seq\": 128, \"vocab\": 1000 } }";
  hp_problem *p = fx_problem(llama, fx_tiny_cluster, NULL, 8, HP_1F1B);
  /* layers: 0 embed, 1-4 blocks, 5 final norm, 6 head */
  hp_plan *even = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                             "  { \"layers\": [0, 2], \"devices\": [[0], [1]] },"
                             "  { \"layers\": [3, 6], \"devices\": [[2], [3]] } ] }");
  hp_plan *uneven = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                               "  { \"layers\": [0, 1], \"devices\": [[0], [1]] },"
                               "  { \"layers\": [2, 6], \"recompute\": true, \"devices\": [[2], [3]] } ],"
                               "  \"sharding\": [\"zdp\", \"zdp\", \"dp\", \"dp\", \"dp\", \"dp\", \"dp\"] }");
  char *a = launch(p, even, HP_LAUNCH_MEGATRON), *b = launch(p, uneven, HP_LAUNCH_MEGATRON);
  hp_plan *var = NULL;
  hp_eval ev = {0};
  hp_diag d = {0};
  char want[160];
  static const char *const args[] = {
    "  --tensor-model-parallel-size 1\n", "  --pipeline-model-parallel-size 2\n",
    "  --micro-batch-size 1\n", "  --global-batch-size 8\n", "  --num-layers 4\n",
    "  --hidden-size 256\n", "  --ffn-hidden-size 688\n", "  --num-attention-heads 8\n",
    "  --group-query-attention\n", "  --num-query-groups 2\n", "  --seq-length 128\n",
    "  --position-embedding-type rope\n", "  --swiglu\n", "  --normalization RMSNorm\n",
    "  --disable-bias-linear\n", "  --untie-embeddings-and-output-weights\n", "  --bf16\n", NULL };
  for (int i = 0; args[i]; i++) CHECK_CONTAINS(a, args[i]);
  CHECK(!strstr(a, "--pipeline-model-parallel-layout"));   /* 2 + 2 blocks: the default split */
  CHECK(!strstr(a, "--recompute"));
  CHECK_CONTAINS(a, "Megatron-LM expresses every part of this plan");
  CHECK_CONTAINS(b, "  --pipeline-model-parallel-layout 'Et|t*3L'\n");
  CHECK_CONTAINS(b, "  --recompute-granularity full\n");
  /* ZeRO-3 on two layers, dp on the others: no framework launches a mix; the nearest
   * launchable form, one mode for all layers, is the better of Megatron's dp and zero1
   * (equal here: dp, the first), its time the evaluator's */
  CHECK_CONTAINS(b, "sharding modes mixed per layer (dp on 2-6; zdp on 0-1): no framework "
                 "launches this");
  CHECK(hp_plan_copy(&var, uneven, &d) == HP_OK);
  hp_plan_set_modes(var, HP_SHARD_DP);
  CHECK(hp_evaluate(p, var, &ev, &d) == HP_OK);
  snprintf(want, sizeof want, "Its nearest launchable form, one mode for every layer, is dp "
           "(evaluator: dp %.6f s, zero1 ", ev.iteration_time);
  CHECK_CONTAINS(b, want);
  hp_eval_release(&ev);
  CHECK(!strstr(b, "  --use-distributed-optimizer\n"));
  /* stage 1 alone recomputes: Megatron's flags recompute stage 0 too, and say so */
  CHECK_CONTAINS(b, "recompute on stage 1 only");
  /* the variant's time is the evaluator's: recompute everywhere, one mode */
  memset(var->recompute, 1, (size_t)var->pp);
  CHECK(hp_evaluate(p, var, &ev, &d) == HP_OK);
  snprintf(want, sizeof want, "As Megatron-LM runs it (evaluator): iteration %.6f s", ev.iteration_time);
  CHECK_CONTAINS(b, want);
  hp_eval_release(&ev);
  hp_plan_destroy(&var);
  free(a);
  free(b);
  hp_plan_destroy(&even);
  hp_plan_destroy(&uneven);
  hp_problem_destroy(&p);
}

/* The table: the built-in formats at their constants' numbers, names parsed back, every
 * entry complete; an unknown number is refused. */
TEST(launch_formats_table_lists_every_format_once)
{
  char buf[128];
  int n = 0;
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, TINY_PLAN("[[0], [1]]", "[[2], [3]]"));
  hp_diag d = {0};
  char *text = NULL;
  CHECK_INT(hp_launch_format_parse("megatron"), HP_LAUNCH_MEGATRON);
  CHECK_INT(hp_launch_format_parse("deepspeed"), HP_LAUNCH_DEEPSPEED);
  CHECK_INT(hp_launch_format_parse("torchrun"), HP_LAUNCH_TORCHRUN);
  CHECK_INT(hp_launch_format_parse("slurm"), HP_LAUNCH_SLURM);
  CHECK_INT(hp_launch_format_parse("pbs"), -1);
  CHECK_INT(hp_launch_format_parse(NULL), -1);
  CHECK(hp_launch_format_name(-1) == NULL);
  for (int f = 0; hp_launch_format_name(f); f++, n++) {
    const hp_launch_fmt *e = hp__launch_fmt(f);
    CHECK(e != NULL && e->name && e->framework && e->script && e->unrealised && e->emit);
    CHECK(e->order[HP_ORDER_TP_DP_PP] != NULL);   /* the first order is always tried */
    CHECK_INT(hp_launch_format_parse(e->name), f);
    /* the script names the framework and the order it numbers ranks by */
    text = launch(p, pl, (hp_launch_format)f);
    snprintf(buf, sizeof buf, "# %s launch for a plan", e->framework);
    CHECK_CONTAINS(text, buf);
    CHECK_CONTAINS(text, e->order[HP_ORDER_TP_DP_PP]);
    free(text);
  }
  CHECK_INT(n, 4);
  CHECK(hp__launch_fmt(n) == NULL);
  CHECK(!strcmp(hp_launch_format_list(buf, sizeof buf, ", ", " or "),
                "megatron, deepspeed, torchrun or slurm"));
  CHECK(!strcmp(hp_launch_format_list(buf, sizeof buf, "|", "|"), "megatron|deepspeed|torchrun|slurm"));
  CHECK(!strcmp(hp_launch_format_list(buf, 6, "|", "|"), "megat"));
  text = buf;
  CHECK(hp_launch_write(p, pl, (hp_launch_format)n, NULL, &text, &d) == HP_INVAL);
  CHECK(text == NULL);
  CHECK_CONTAINS(d.msg, "unknown launch format 4");
  /* config_only: DeepSpeed's config alone; a format without a config ignores it */
  {
    hp_launch_opts o = {0};
    o.config_only = 1;
    CHECK(hp_launch_write(p, pl, HP_LAUNCH_DEEPSPEED, &o, &text, &d) == HP_OK);
    CHECK(text[0] == '{');
    free(text);
    CHECK(hp__launch_fmt(HP_LAUNCH_TORCHRUN)->config == NULL);
    CHECK(hp_launch_write(p, pl, HP_LAUNCH_TORCHRUN, &o, &text, &d) == HP_OK);
    CHECK_CONTAINS(text, "torchrun --nnodes 2");
    free(text);
  }
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* The one quoting function: plain text in single quotes, a quote closed and reopened,
 * a control character (a line break would end a comment) as $'...' with \xHH. */
TEST(launch_quoting_makes_one_shell_word_of_anything)
{
  static const struct { const char *in, *out; } cases[] = {
    { "a100-00", "'a100-00'" },
    { "", "''" },
    { "x'; touch pwned; '", "'x'\\''; touch pwned; '\\'''" },
    { "$(touch p) `id` \"q\" \\ # ; EOF", "'$(touch p) `id` \"q\" \\ # ; EOF'" },
    { "evil\ntouch p", "$'evil\\x0atouch p'" },
    { "tab\there 'q' \\", "$'tab\\x09here \\'q\\' \\\\'" },
    { NULL, NULL } };
  char buf[64];
  for (int i = 0; cases[i].in; i++) {
    hp_sb b = {0};
    hp__sh_quote(&b, cases[i].in);
    CHECK(b.s && !strcmp(b.s, cases[i].out));
    if (b.s && strcmp(b.s, cases[i].out)) fprintf(stderr, "  %s -> %s\n", cases[i].in, b.s);
    CHECK(!strchr(b.s, '\n'));
    free(b.s);
  }
  CHECK(!strcmp(hp__sh_quote_buf(buf, sizeof buf, "b'c"), "'b'\\''c'"));
}

/* An arguments file: blanks split, quotes and backslashes keep, # lines are comments,
 * nothing is expanded; an unclosed quote is an error. */
TEST(launch_arguments_file_splits_as_a_response_file)
{
  char **v = NULL;
  int n = -1;
  hp_diag d = {0};
  CHECK(hp_launch_args_split("# data\n--data-path /d/x_text  --lr 3e-4\n"
                             "  # indented comment\n--name 'a b' \"c\\\"d\" e\\ f $(id) #not\n",
                             &v, &n, &d) == HP_OK);
  CHECK_INT(n, 10);
  if (n == 10) {
    CHECK(!strcmp(v[0], "--data-path") && !strcmp(v[1], "/d/x_text") && !strcmp(v[3], "3e-4"));
    CHECK(!strcmp(v[5], "a b") && !strcmp(v[6], "c\"d") && !strcmp(v[7], "e f"));
    CHECK(!strcmp(v[8], "$(id)") && !strcmp(v[9], "#not"));   /* # only starts a line's comment */
    CHECK(v[10] == NULL);
  }
  free(v);
  CHECK(hp_launch_args_split("", &v, &n, &d) == HP_OK);
  CHECK(n == 0 && v && v[0] == NULL);
  free(v);
  CHECK(hp_launch_args_split("--x 'open", &v, &n, &d) == HP_PARSE);
  CHECK(v == NULL);
  CHECK_CONTAINS(d.msg, "single quote is not closed");
}

/* The user's arguments reach the script as words; Megatron's needs are named in the
 * header and checked; torchrun's script leaves them to the user's own program. */
TEST(launch_user_arguments_and_needs)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, TINY_PLAN("[[0], [1]]", "[[2], [3]]"));
  static const char *const args[] = { "--data-path", "my data", "it's", "line\nbreak" };
  hp_launch_opts o = {0};
  hp_diag d = {0};
  char *meg = NULL, *tr = NULL;
  o.args = args;
  o.n_args = 4;
  CHECK(hp_launch_write(p, pl, HP_LAUNCH_MEGATRON, &o, &meg, &d) == HP_OK);
  CHECK(hp_launch_write(p, pl, HP_LAUNCH_TORCHRUN, &o, &tr, &d) == HP_OK);
  CHECK_CONTAINS(meg, "USER_ARGS=('--data-path' 'my data' 'it'\\''s' $'line\\x0abreak')\n");
  CHECK_CONTAINS(tr, "USER_ARGS=('--data-path' 'my data' 'it'\\''s' $'line\\x0abreak')\n");
  CHECK_CONTAINS(meg, "#   data           --data-path PREFIX");
  CHECK_CONTAINS(meg, "need 'data' --data-path --mock-data --train-data-path");
  CHECK_CONTAINS(meg, "need 'iterations' --train-iters --train-samples\n");
  CHECK_CONTAINS(meg, "'pretrain_gpt.py' \"${MEGATRON_ARGS[@]}\" ${ARGS[@]+\"${ARGS[@]}\"}\n");
  CHECK(!strstr(tr, "need '"));
  CHECK_CONTAINS(tr, "# To add: the training script ('train.py') is yours.");
  free(meg);
  free(tr);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* The Slurm format: sbatch's resources, srun with the task map, whatever the placement. */
TEST(launch_slurm_script_carries_the_task_map)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, TINY_PLAN("[[0], [3]]", "[[2], [1]]"));
  char *s = launch(p, pl, HP_LAUNCH_SLURM);
  CHECK(!strncmp(s, "#!/usr/bin/env bash\n#SBATCH --job-name=hetplan\n#SBATCH --nodes=2\n"
                    "#SBATCH --ntasks=4\n#SBATCH --gpus-per-node=2\n#SBATCH --exclusive\n"
                    "#SBATCH --nodelist=a,b\n# Megatron-LM under Slurm launch for a plan", 165));
  CHECK_CONTAINS(s, "planned=('a' 'b')\n");
  CHECK_CONTAINS(s, "srun --nodes=2 --ntasks=4 --distribution=arbitrary");
  CHECK_CONTAINS(s, "    0) host='a'; gpus=0,1; ranks=0,3; nproc=2 ;;\n");
  free(s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

static void count_warning(void *ctx, const char *text)
{
  (void)text;
  (*(int *)ctx)++;
}

/* Every argument a Megatron-LM script writes (MEGATRON_ARGS) or checks (need ...) is one
 * Megatron-LM's parser has (docs/megatron-args.txt, read from its sources), over models
 * that take every branch: GPT, Llama with GQA, Qwen2's biases, Qwen3's Q/K norms and
 * head width, Gemma 2's GeGLU, norms and capping; uneven stages, recompute, ZeRO, fp16,
 * the tp-pp-dp mapping. Gemma's architecture is said, and given to the warn callback. */
TEST(launch_megatron_arguments_are_megatrons)
{
  static const char *const models[] = {
    "{ \"transformer\": { \"family\": \"gpt\", \"layers\": 4, \"hidden\": 256, \"heads\": 8,"
    "  \"seq\": 128, \"vocab\": 1000, \"tied\": true, \"dtype\": \"fp16\" } }",
    "{ \"transformer\": { \"family\": \"llama\", \"layers\": 4, \"hidden\": 256, \"heads\": 8,"
    "  \"kv_heads\": 2, \"seq\": 128, \"vocab\": 1000, \"qkv_bias\": true } }",
    "{ \"transformer\": { \"family\": \"llama\", \"layers\": 4, \"hidden\": 256, \"heads\": 8,"
    "  \"kv_heads\": 2, \"head_dim\": 64, \"qk_norm\": true, \"seq\": 128, \"vocab\": 1000 } }",
    "{ \"transformer\": { \"family\": \"llama\", \"layers\": 4, \"hidden\": 256, \"heads\": 8,"
    "  \"head_dim\": 64, \"mlp\": \"geglu\", \"post_norms\": true, \"attn_softcap\": true,"
    "  \"logit_softcap\": true, \"seq\": 128, \"vocab\": 1000, \"tied\": true } }",
    NULL };
  static const char *const plans[] = {
    "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
    "  { \"layers\": [0, 1], \"devices\": [[0], [2]] },"
    "  { \"layers\": [2, 6], \"recompute\": true, \"devices\": [[1], [3]] } ],"
    "  \"sharding\": [\"zdp\", \"zdp\", \"dp\", \"dp\", \"dp\", \"dp\", \"dp\"] }",
    "{ \"pp\": 1, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": ["
    "  { \"layers\": [0, 6], \"recompute\": true, \"devices\": [[0, 1], [2, 3]] } ] }",
    NULL };
  char *list = NULL, *text = NULL;
  hp_diag d = {0};
  int warnings = 0, checked = 0;
  CHECK(hp_read_file("docs/megatron-args.txt", &list, &d) == HP_OK);
  for (int mi = 0; models[mi] && list; mi++)
    for (int pi = 0; plans[pi]; pi++) {
      hp_problem *p = fx_problem(models[mi], fx_tiny_cluster, NULL, 8, HP_1F1B);
      hp_plan *pl = fx_plan(p, plans[pi]);
      hp_launch_opts o = {0};
      int in_args = 0;
      o.warn = count_warning;
      o.warn_ctx = &warnings;
      CHECK(hp_launch_write(p, pl, HP_LAUNCH_MEGATRON, &o, &text, &d) == HP_OK);
      for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char flag[80], want[96];
        in_args = !strncmp(line, "MEGATRON_ARGS=(", 15) ? 1 : !strncmp(line, ")", 1) ? 0 : in_args;
        if (in_args && sscanf(line, "  %79[-a-z0-9]", flag) == 1 && !strncmp(flag, "--", 2)) {
          snprintf(want, sizeof want, "\n%s\n", flag);
          if (!strstr(list, want)) fprintf(stderr, "  %s is not in docs/megatron-args.txt\n", flag);
          CHECK(strstr(list, want) != NULL);
          checked++;
        }
      }
      if (mi == 2) {
        CHECK_CONTAINS(text, "  --kv-channels 64\n");
        CHECK_CONTAINS(text, "  --qk-layernorm\n");
      }
      if (mi == 3) {
        CHECK_CONTAINS(text, "  --quick-geglu\n");
        CHECK(!strstr(text, "  --swiglu\n"));
        CHECK_CONTAINS(text, "#  - GeGLU (the gate's activation is GELU, as Gemma's)");
        CHECK_CONTAINS(text, "#  - soft-capping of the output logits");
      }
      if (mi == 1) CHECK(!strstr(text, "--kv-channels"));
      if (pi == 0) CHECK_CONTAINS(text, "  --use-tp-pp-dp-mapping\n");
      free(text);
      hp_plan_destroy(&pl);
      hp_problem_destroy(&p);
    }
  /* the needs the scripts check */
  for (const hp_launch_need *n = hp__megatron_needs; n->what && list; n++)
    for (int k = 0; k < 6 && n->flags[k]; k++) {
      char want[96];
      snprintf(want, sizeof want, "\n%s\n", n->flags[k]);
      CHECK(strstr(list, want) != NULL);
      checked++;
    }
  CHECK(checked > 100);
  CHECK_INT(warnings, 2 * 4);   /* Gemma's four, for each of its two plans */
  free(list);
}

/* Cost model 1.2's job and modes in the exports: a zero1 plan is Megatron's distributed
 * optimizer; the job's sequence parallelism and overlapped reduction are its flags; under
 * overlap the distributed optimizer also overlaps its all-gather. */
TEST(launch_megatron_follows_the_plans_modes_and_the_job)
{
  static const char llama[] =
    "{ \"transformer\": { \"family\": \"llama\", \"layers\": 4, \"hidden\": 256, \"heads\": 8,"
    "  \"kv_heads\": 2, \"ffn\": 688, \"seq\": 128, \"vocab\": 1000 } }";
  static const char *const zero1 =
    "{ \"pp\": 1, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": ["
    "  { \"layers\": [0, 6], \"devices\": [[0, 1], [2, 3]] } ],"
    "  \"sharding\": [\"zero1\", \"zero1\", \"zero1\", \"zero1\", \"zero1\", \"zero1\", \"zero1\"] }";
  for (int k = 0; k < 2; k++) {
    hp_problem *p = fx_problem(llama, fx_tiny_cluster, NULL, 8, HP_1F1B);
    hp_plan *pl;
    char *a;
    if (k) {
      p->job.sequence_parallel = 1;
      p->job.grad_sync = HP_SYNC_OVERLAP;
    }
    pl = fx_plan(p, zero1);
    a = launch(p, pl, HP_LAUNCH_MEGATRON);
    CHECK_CONTAINS(a, "  --use-distributed-optimizer\n");
    if (k) {
      /* the one part the run does otherwise: Megatron overlaps the all-gather 1.2 charges */
      CHECK_CONTAINS(a, "--overlap-param-gather hides part of the weights' all-gather");
      CHECK_CONTAINS(a, "  --sequence-parallel\n");
      CHECK_CONTAINS(a, "  --overlap-grad-reduce\n");
      CHECK_CONTAINS(a, "  --overlap-param-gather\n");
    } else {
      CHECK_CONTAINS(a, "Megatron-LM expresses every part of this plan");
      CHECK(!strstr(a, "--sequence-parallel"));
      CHECK(!strstr(a, "--overlap-"));
    }
    free(a);
    /* dp everywhere: no distributed optimizer, the reduction overlapped still */
    hp_plan_set_modes(pl, HP_SHARD_DP);
    a = launch(p, pl, HP_LAUNCH_MEGATRON);
    CHECK(!strstr(a, "  --use-distributed-optimizer\n"));
    CHECK(!strstr(a, "--overlap-param-gather"));
    if (k) CHECK_CONTAINS(a, "  --overlap-grad-reduce\n");
    free(a);
    hp_plan_destroy(&pl);
    hp_problem_destroy(&p);
  }
}

/* DeepSpeed's ZeRO stage is the plan's one mode: dp 0, zero1 1, zero2 2, zdp 3 (pp 1);
 * overlap_comm under grad_sync overlap. Under a pipeline ZeRO-2/3 are refused: the
 * nearest of stages 0 and 1 is exported, with the figures; zdp slices have no
 * equivalent in either framework, said. */
TEST(launch_deepspeed_stage_is_the_plans_mode)
{
  static const char *const modes[] = { "dp", "zero1", "zero2", "zdp" };
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_diag d = {0};
  p->job.grad_sync = HP_SYNC_OVERLAP;
  p->job.max_slices = 2;
  for (int m = 0; m < 4; m++) {
    char text[400], want[64], *ds = NULL;
    hp_launch_opts o = {0};
    hp_plan *pl;
    snprintf(text, sizeof text, "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 1, \"stages\": ["
             "  { \"layers\": [0, 3], \"devices\": [[0], [1], [2], [3]] } ],"
             "  \"sharding\": [\"%s\", \"%s\", \"%s\", \"%s\"] }", modes[m], modes[m], modes[m], modes[m]);
    pl = fx_plan(p, text);
    o.config_only = 1;
    CHECK(hp_launch_write(p, pl, HP_LAUNCH_DEEPSPEED, &o, &ds, &d) == HP_OK);
    snprintf(want, sizeof want, "\"zero_optimization\": { \"stage\": %d, \"overlap_comm\": true }", m);
    CHECK_CONTAINS(ds, want);
    free(ds);
    if (m == 0) {                 /* stage 0 does not overlap: the launch says so */
      char *sh = launch(p, pl, HP_LAUNCH_DEEPSPEED);
      CHECK_CONTAINS(sh, "overlap_comm is a ZeRO setting, and at stage 0 DeepSpeed all-reduces");
      free(sh);
    }
    if (m == 3) {                                   /* slices: no framework has them */
      char *sh, *meg;
      pl->slices[1] = 1;
      sh = launch(p, pl, HP_LAUNCH_DEEPSPEED);
      meg = launch(p, pl, HP_LAUNCH_MEGATRON);
      CHECK_CONTAINS(sh, "ZeRO-3 gathered in slices (OSDP's operator splitting) on layer 1: "
                     "DeepSpeed has no equivalent");
      CHECK_CONTAINS(sh, "\"stage\": 3");
      CHECK_CONTAINS(meg, "zdp on every layer: Megatron-LM has no such mode");
      free(sh);
      free(meg);
    }
    hp_plan_destroy(&pl);
  }
  {
    /* pp 2, zero2 everywhere: the pipeline engine takes stages 0-1 only */
    hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                             "  { \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                             "  { \"layers\": [2, 3], \"devices\": [[1], [3]] } ],"
                             "  \"sharding\": [\"zero2\", \"zero2\", \"zero2\", \"zero2\"] }");
    char *sh = launch(p, pl, HP_LAUNCH_DEEPSPEED);
    CHECK_CONTAINS(sh, "zero2 on every layer: DeepSpeed has no such mode (it launches dp and zero1 "
                   "under a pipeline");
    CHECK(strstr(sh, "\"stage\": 0") || strstr(sh, "\"stage\": 1"));
    CHECK_CONTAINS(sh, "As DeepSpeed runs it (evaluator): iteration");
    free(sh);
    hp_plan_destroy(&pl);
  }
  hp_problem_destroy(&p);
}
