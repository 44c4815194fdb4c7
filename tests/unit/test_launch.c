/* test_launch.c -- the launch scripts of `hetplan export`, read back: the node order and
 * CUDA_VISIBLE_DEVICES they give (or the per-rank table), under the rank order they name,
 * must put every slot (stage, replica, TP rank) on the device the plan chose, in every
 * format of the table. Plans: in Megatron order, its mirror, replicas across nodes, a
 * placement no node order realises, TP ranks out of GPU order, and an sa plan on the
 * heterogeneous AMP cluster. Also the table of formats itself. */
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
 * gpus=0,1; nproc=2 ;;"), DeepSpeed's hostfile and --include (whose GPUs DeepSpeed sorts),
 * or the per-rank table ("# rank 3: host 'a' GPU 1:"). Returns 0 on a malformed script. */
static int invert(const hp_problem *p, const char *text, inverted *iv)
{
  const char *line = text;
  int next = 0, nodes = 0, ds_hosts = 0;
  char ds_name[16][80];
  memset(iv, 0, sizeof *iv);
  for (int k = 0; k < 256; k++) iv->dev[k] = -1;
  iv->order = strstr(text, "--use-tp-pp-dp-mapping") ? HP_ORDER_TP_PP_DP : HP_ORDER_TP_DP_PP;
  for (; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    char host[64], gpus[256];
    int nr, nproc, rank, gpu, slots;
    if (sscanf(line, " %d) host='%63[^']'; gpus=%255[0-9,]; nproc=%d ;;", &nr, host, gpus, &nproc) == 4) {
      int n = node_by_name(p, host), q = 0;
      if (nr != nodes++ || n < 0) return 0;
      for (char *t = strtok(gpus, ","); t; t = strtok(NULL, ","), q++)
        iv->dev[next + q] = p->cluster->nodes[n].first + atoi(t);
      if (q != nproc) return 0;
      next += nproc;
    } else if (sscanf(line, "# rank %d: host '%63[^']' GPU %d:", &rank, host, &gpu) == 3) {
      int n = node_by_name(p, host);
      if (n < 0 || rank < 0 || rank >= 256 || iv->dev[rank] >= 0) return 0;
      iv->dev[rank] = p->cluster->nodes[n].first + gpu;
      if (rank + 1 > next) next = rank + 1;
    } else if (sscanf(line, "%63s slots=%d", host, &slots) == 2 && node_by_name(p, host) >= 0) {
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
  CHECK_CONTAINS(b, "  --use-distributed-optimizer\n");
  CHECK_CONTAINS(b, "ZeRO-3 on layers 0-1: Megatron-LM shards no layer's parameters");
  /* stage 1 alone recomputes: Megatron's flags recompute stage 0 too, and say so */
  CHECK_CONTAINS(b, "recompute on stage 1 only");
  /* the variant's time is the evaluator's: recompute everywhere, no ZeRO-3 */
  CHECK(hp_plan_copy(&var, uneven, &d) == HP_OK);
  memset(var->zdp, 0, (size_t)var->n_layers);
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
  CHECK_INT(hp_launch_format_parse("slurm"), -1);
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
  CHECK_INT(n, 3);
  CHECK(hp__launch_fmt(n) == NULL);
  CHECK(!strcmp(hp_launch_format_list(buf, sizeof buf, ", ", " or "), "megatron, deepspeed or torchrun"));
  CHECK(!strcmp(hp_launch_format_list(buf, sizeof buf, "|", "|"), "megatron|deepspeed|torchrun"));
  CHECK(!strcmp(hp_launch_format_list(buf, 6, "|", "|"), "megat"));
  text = buf;
  CHECK(hp_launch_write(p, pl, (hp_launch_format)n, NULL, &text, &d) == HP_INVAL);
  CHECK(text == NULL);
  CHECK_CONTAINS(d.msg, "unknown launch format 3");
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
