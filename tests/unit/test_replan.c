/* test_replan.c -- re-planning on a changed cluster: the migration's moves against hand
 * computation on tiny plans (a TP change, a dp change under zero1, a lost node with and
 * without a surviving replica), every byte accounted for on the solver's plans, the
 * cluster edits (nodes removed, nodes merged), and the choice: the old plan where it stands
 * once moving costs. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"
#include "../../solvers/search.h"

/* Two layers of 1e6 parameters: per layer 2e6 bytes of weights and 12e6 of optimizer
 * state (state 16 - param 2 - grad 2), gradients never moved. */
static const char model2[] =
  "{ \"layers\": [ { \"name\": \"x\", \"repeat\": 2, \"params\": 1e6, \"act_bytes\": 0,"
  " \"out_bytes\": 1, \"flops\": 1e9 } ] }";

#define W1 2e6    /* a layer's weights */
#define O1 12e6   /* a layer's optimizer state */
/* the tiny cluster: node a (devices 0, 1) at 800 Gbit/s, 2 us inside; node b (2, 3) at
 * 400 Gbit/s, 4 us; 80 Gbit/s, 10 us between */
#define BW_A 1e11
#define LAT_A 2e-6
#define BW_B 5e10
#define LAT_B 4e-6

static hp_problem *tiny(long gbs) { return fx_problem(model2, fx_tiny_cluster, NULL, gbs, HP_1F1B); }

static hp_plan *plan_of(const hp_problem *p, const char *json)
{
  hp_plan *pl = fx_plan(p, json);
  hp_diag d = {0};
  if (hp_plan_validate(p, pl, &d)) {
    fprintf(stderr, "fixture plan invalid: %s\n", d.msg);
    exit(3);
  }
  return pl;
}

static const int identity4[4] = { 0, 1, 2, 3 };

/* The bytes moved to `to` of (layer, kind) from `from` (-1: checkpoint). */
static double moved(const hp_migration *m, int layer, int kind, int from, int to)
{
  double b = 0;
  for (int i = 0; i < m->n_moves; i++)
    if (m->moves[i].layer == layer && m->moves[i].kind == kind && m->moves[i].from == from &&
        m->moves[i].to == to)
      b += m->moves[i].bytes;
  return b;
}

/* need = kept + moved per layer and part, and the totals are the sums. */
static int conserved(const hp_migration *m)
{
  double need = 0, kept = 0, mv = 0, sum_moves = 0;
  for (int i = 0; i < 2 * m->n_layers; i++) {
    if (fabs(m->layer_need[i] - m->layer_kept[i] - m->layer_moved[i]) > 1e-9 * m->layer_need[i] + 1e-6)
      return 0;
    need += m->layer_need[i];
    kept += m->layer_kept[i];
    mv += m->layer_moved[i];
  }
  for (int i = 0; i < m->n_moves; i++) sum_moves += m->moves[i].bytes;
  return fabs(need - m->need_bytes) <= 1e-9 * need && fabs(kept - m->kept_bytes) <= 1e-9 * need + 1e-6 &&
         fabs(mv - m->moved_bytes) <= 1e-9 * need + 1e-6 &&
         fabs(sum_moves - m->moved_bytes) <= 1e-9 * need + 1e-6;
}

/* tp 2 -> 1 on the same devices: each device held half of every layer and needs it
 * whole; the other half comes from its TP partner on its own node (not from the replica
 * on the other node that holds it too). */
TEST(replan_tp_two_to_one_moves_the_other_half_from_the_same_node)
{
  hp_problem *p = tiny(4);
  hp_plan *a = plan_of(p, "{ \"pp\": 1, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                          " { \"layers\": [0, 1], \"devices\": [[0, 1], [2, 3]] } ] }");
  hp_plan *b = plan_of(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 1, \"stages\": ["
                          " { \"layers\": [0, 1], \"devices\": [[0], [1], [2], [3]] } ] }");
  hp_migration m;
  hp_diag d = {0};
  CHECK(hp_migrate(p, a, p, b, identity4, 1e9, &m, &d) == HP_OK);
  CHECK_NEAR(m.need_bytes, 4 * 2 * (W1 + O1), 1e-12);
  CHECK_NEAR(m.kept_bytes, 4 * 2 * (W1 + O1) / 2, 1e-12);
  CHECK_NEAR(m.moved_bytes, 4 * 2 * (W1 + O1) / 2, 1e-12);
  CHECK(m.lost_bytes == 0);
  CHECK_INT(m.n_moves, 16);   /* 4 devices x 2 layers x 2 parts, one sender each */
  for (int l = 0; l < 2; l++) {
    CHECK_NEAR(moved(&m, l, HP_MOVE_WEIGHTS, 1, 0), W1 / 2, 1e-12);
    CHECK_NEAR(moved(&m, l, HP_MOVE_OPTIMIZER, 1, 0), O1 / 2, 1e-12);
    CHECK_NEAR(moved(&m, l, HP_MOVE_WEIGHTS, 0, 1), W1 / 2, 1e-12);
    CHECK_NEAR(moved(&m, l, HP_MOVE_OPTIMIZER, 3, 2), O1 / 2, 1e-12);
    CHECK_NEAR(moved(&m, l, HP_MOVE_WEIGHTS, 2, 3), W1 / 2, 1e-12);
  }
  /* node a: 2 layers x ((1e6 / 1e11 + 2 us) + (6e6 / 1e11 + 2 us)) = 1.48e-4 s each way;
   * node b: 2 x ((1e6 / 5e10 + 4 us) + (6e6 / 5e10 + 4 us)) = 2.96e-4 s */
  CHECK_NEAR(m.recv_seconds[0], 2 * (W1 / 2 / BW_A + LAT_A + O1 / 2 / BW_A + LAT_A), 1e-12);
  CHECK_NEAR(m.send_seconds[0], m.recv_seconds[0], 1e-12);
  CHECK_NEAR(m.seconds, 2 * (W1 / 2 / BW_B + LAT_B + O1 / 2 / BW_B + LAT_B), 1e-12);
  CHECK_NEAR(m.seconds, 2.96e-4, 1e-12);
  CHECK_INT(m.slowest_device, 2);
  CHECK(conserved(&m));
  hp_migration_release(&m);
  hp_plan_destroy(&a);
  hp_plan_destroy(&b);
  hp_problem_destroy(&p);
}

/* dp 2 (two stages) -> dp 4 (one stage) under zero1: the weights are whole on every
 * replica, the optimizer state in dp shards; replica r of the new plan needs the r-th
 * quarter, which the old shard holder of that half of the layer sends. */
TEST(replan_zero1_dp_change_moves_weights_whole_and_optimizer_shards)
{
  hp_problem *p = tiny(4);
  hp_plan *a = plan_of(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                          " { \"layers\": [0, 0], \"devices\": [[0], [2]] },"
                          " { \"layers\": [1, 1], \"devices\": [[1], [3]] } ],"
                          " \"sharding\": [\"zero1\", \"zero1\"] }");
  hp_plan *b = plan_of(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 1, \"stages\": ["
                          " { \"layers\": [0, 1], \"devices\": [[0], [1], [2], [3]] } ],"
                          " \"sharding\": [\"zero1\", \"zero1\"] }");
  hp_migration m;
  hp_diag d = {0};
  CHECK(hp_migrate(p, a, p, b, identity4, 1e9, &m, &d) == HP_OK);
  CHECK_NEAR(m.need_bytes, 4 * 2 * (W1 + O1 / 4), 1e-12);
  CHECK_NEAR(m.kept_bytes, 4 * (W1 + O1 / 4), 1e-12);    /* each its own stage's layer */
  CHECK_NEAR(m.moved_bytes, 4 * (W1 + O1 / 4), 1e-12);
  /* device 0 (new replica 0) gets layer 1 from device 1: weights whole, optimizer [0, 1/4) */
  CHECK_NEAR(moved(&m, 1, HP_MOVE_WEIGHTS, 1, 0), W1, 1e-12);
  CHECK_NEAR(moved(&m, 1, HP_MOVE_OPTIMIZER, 1, 0), O1 / 4, 1e-12);
  /* device 1 (replica 1) gets layer 0 from device 0: its quarter [1/4, 1/2) is in 0's half */
  CHECK_NEAR(moved(&m, 0, HP_MOVE_WEIGHTS, 0, 1), W1, 1e-12);
  CHECK_NEAR(moved(&m, 0, HP_MOVE_OPTIMIZER, 0, 1), O1 / 4, 1e-12);
  /* device 2 (replica 2) gets layer 1 from device 3, [1/2, 3/4) of 3's half; 3 from 2 */
  CHECK_NEAR(moved(&m, 1, HP_MOVE_OPTIMIZER, 3, 2), O1 / 4, 1e-12);
  CHECK_NEAR(moved(&m, 0, HP_MOVE_OPTIMIZER, 2, 3), O1 / 4, 1e-12);
  CHECK_INT(m.n_moves, 8);
  CHECK_NEAR(m.seconds, W1 / BW_B + LAT_B + O1 / 4 / BW_B + LAT_B, 1e-12);
  CHECK(conserved(&m));
  hp_migration_release(&m);
  hp_plan_destroy(&a);
  hp_plan_destroy(&b);
  hp_problem_destroy(&p);
}

/* The tiny cluster without node b: devices 0, 1 stay, 2, 3 are gone. */
static hp_problem *without_b(const hp_problem *p, int *old_to_new)
{
  hp_cluster *c = NULL;
  hp_problem *q = NULL;
  hp_diag d = {0};
  unsigned char gone[2] = { 0, 1 };
  if (hp_cluster_copy(p->cluster, &c, &d) || hp_cluster_remove_nodes(c, gone, old_to_new, &d) ||
      hp_problem_copy_with(p, c, p->job, &q, &d)) {
    fprintf(stderr, "fixture without_b: %s\n", d.msg);
    exit(3);
  }
  return q;
}

/* A lost node whose stages have a replica left: everything comes from the survivors. */
TEST(replan_lost_node_with_a_surviving_replica_loses_nothing)
{
  hp_problem *p = tiny(4), *q;
  int map[4];
  hp_plan *a = plan_of(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                          " { \"layers\": [0, 0], \"devices\": [[0], [2]] },"
                          " { \"layers\": [1, 1], \"devices\": [[1], [3]] } ] }");
  hp_plan *b;
  hp_migration m;
  hp_diag d = {0};
  q = without_b(p, map);
  CHECK_INT(map[0], 0);
  CHECK_INT(map[1], 1);
  CHECK_INT(map[2], -1);
  CHECK_INT(map[3], -1);
  CHECK_INT(q->cluster->n_devices, 2);
  b = plan_of(q, "{ \"pp\": 1, \"tp\": 1, \"dp\": 2, \"mbs\": 2, \"stages\": ["
                 " { \"layers\": [0, 1], \"devices\": [[0], [1]] } ] }");
  CHECK(hp_migrate(p, a, q, b, map, 1e9, &m, &d) == HP_OK);
  CHECK(m.lost_bytes == 0);
  CHECK_NEAR(m.moved_bytes, 2 * (W1 + O1), 1e-12);
  CHECK_NEAR(moved(&m, 1, HP_MOVE_OPTIMIZER, 1, 0), O1, 1e-12);
  CHECK_NEAR(moved(&m, 0, HP_MOVE_WEIGHTS, 0, 1), W1, 1e-12);
  CHECK_NEAR(m.seconds, W1 / BW_A + LAT_A + O1 / BW_A + LAT_A, 1e-12);
  CHECK(conserved(&m));
  hp_migration_release(&m);
  hp_plan_destroy(&b);
  hp_plan_destroy(&a);
  hp_problem_destroy(&q);
  hp_problem_destroy(&p);
}

/* A lost node that held every replica of a stage: that stage's state is read from the
 * checkpoint, timed at the storage bandwidth, no latency. */
TEST(replan_lost_node_without_a_replica_reads_the_checkpoint)
{
  hp_problem *p = tiny(4), *q;
  int map[4];
  hp_plan *a = plan_of(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                          " { \"layers\": [0, 0], \"devices\": [[0], [1]] },"
                          " { \"layers\": [1, 1], \"devices\": [[2], [3]] } ] }");
  hp_plan *b;
  hp_migration m;
  hp_diag d = {0};
  q = without_b(p, map);
  b = plan_of(q, "{ \"pp\": 1, \"tp\": 1, \"dp\": 2, \"mbs\": 2, \"stages\": ["
                 " { \"layers\": [0, 1], \"devices\": [[0], [1]] } ] }");
  CHECK(hp_migrate(p, a, q, b, map, 1e9, &m, &d) == HP_OK);
  CHECK_NEAR(m.lost_bytes, 2 * (W1 + O1), 1e-12);
  CHECK_NEAR(m.moved_bytes, m.lost_bytes, 1e-12);
  CHECK_NEAR(m.kept_bytes, 2 * (W1 + O1), 1e-12);
  CHECK_NEAR(moved(&m, 1, HP_MOVE_WEIGHTS, -1, 0), W1, 1e-12);
  CHECK_NEAR(moved(&m, 1, HP_MOVE_OPTIMIZER, -1, 1), O1, 1e-12);
  CHECK_NEAR(m.seconds, (W1 + O1) / 1e9, 1e-12);
  CHECK(m.send_seconds[0] == 0 && m.send_seconds[1] == 0);
  CHECK(conserved(&m));
  hp_migration_release(&m);
  hp_plan_destroy(&b);
  hp_plan_destroy(&a);
  hp_problem_destroy(&q);
  hp_problem_destroy(&p);
}

/* What a device of plan pl holds of layer l (weights and optimizer), by the memory model
 * (cost-model.md 4) less the gradients: q (param_bytes / (dp if zdp) + opt / (dp if
 * sharded)), q = P / t_l. */
static double held_by_formula(const hp_problem *p, const hp_plan *pl, int l)
{
  const hp_model *m = p->model;
  double q = m->layers[l].params / (m->layers[l].splittable ? pl->tp : 1);
  int mode = hp_plan_mode(pl, l);
  double w = m->param_bytes / (mode == HP_SHARD_ZDP ? pl->dp : 1);
  double o = hp_model_opt_bytes(m) / (mode != HP_SHARD_DP ? pl->dp : 1);
  return q * (w + o);
}

/* Every pair of the solver's best plans on GPT-2 on AMP's cluster: per layer, what the
 * new plan holds (the memory model's figure) = kept + moved, and the move records add up. */
TEST(replan_every_byte_is_accounted_for_between_solver_plans)
{
  hp_problem *p = fx_load("models/gpt2-amp.json", "models/amp-hetero.json", NULL, 32);
  const hp_solver *s = hp_solver_find("dp");
  hp_limits lim;
  hp_result r;
  hp_diag d = {0};
  int map[64], pairs = 0;
  for (int i = 0; i < p->cluster->n_devices; i++) map[i] = i;
  hp_limits_init(&lim);
  lim.top = 6;
  CHECK(hp_solver_run(s, p, NULL, &lim, &r, &d) == HP_OK);
  CHECK(r.n_top >= 3);
  for (int i = 0; i < r.n_top; i++)
    for (int j = 0; j < r.n_top; j++) {
      const hp_plan *a = r.top[i].plan, *b = r.top[j].plan;
      hp_migration m;
      CHECK(hp_migrate(p, a, p, b, map, 1e9, &m, &d) == HP_OK);
      CHECK(conserved(&m));
      for (int l = 0; l < p->model->n_layers; l++) {
        double want = b->tp * b->dp * held_by_formula(p, b, l);
        CHECK_NEAR(m.layer_need[2 * l] + m.layer_need[2 * l + 1], want, 1e-12);
      }
      if (i == j) CHECK(m.moved_bytes == 0 && m.seconds == 0);
      hp_migration_release(&m);
      pairs++;
    }
  CHECK(pairs >= 9);
  hp_result_release(&r);
  hp_problem_destroy(&p);
}

TEST(replan_cluster_edits_renumber_and_refuse_clearly)
{
  hp_problem *p = tiny(4);
  hp_cluster *c = NULL, *add = NULL;
  hp_diag d = {0};
  unsigned char gone_a[2] = { 1, 0 }, all[2] = { 1, 1 };
  int map[4];
  CHECK(hp_cluster_copy(p->cluster, &c, &d) == HP_OK);
  CHECK(hp_cluster_remove_nodes(c, all, NULL, &d) == HP_INVAL);
  CHECK_CONTAINS(d.msg, "without a node");
  CHECK(hp_cluster_remove_nodes(c, gone_a, map, &d) == HP_OK);
  CHECK_INT(c->n_nodes, 1);
  CHECK_INT(c->n_devices, 2);
  CHECK(!strcmp(c->nodes[0].name, "b"));
  CHECK_INT(c->nodes[0].first, 0);
  CHECK_INT(map[0], -1);
  CHECK_INT(map[2], 0);
  CHECK_INT(map[3], 1);
  CHECK(c->node_bw[0] == 400e9 / 8);
  /* node a back, from a file of its own: new links at that file's figure */
  CHECK(hp_cluster_parse("{ \"device_types\": { \"fast\": { \"mem_gib\": 1, \"reserved_gib\": 0.25,"
                         " \"tflops\": 100, \"efficiency\": 0.5 } }, \"nodes\": [ { \"name\": \"a\","
                         " \"type\": \"fast\", \"gpus\": 2, \"intra_gbps\": 800 } ] }", "add.json",
                         &add, &d) == HP_OK);
  CHECK(hp_cluster_merge(c, add, 1e9, 5e-6, &d) == HP_OK);
  CHECK_INT(c->n_nodes, 2);
  CHECK_INT(c->n_devices, 4);
  CHECK_INT(c->n_types, 2);
  CHECK_INT(c->nodes[1].type, 0);     /* "fast", matched by name */
  CHECK_INT(c->dev_node[3], 1);
  CHECK(c->node_bw[1] == 1e9 && c->node_lat[2] == 5e-6);
  {
    int m2[4], kept = hp_device_map(p->cluster, c, m2);
    CHECK_INT(kept, 4);
    CHECK_INT(m2[0], 2);   /* a:0 is now the third device */
    CHECK_INT(m2[2], 0);
  }
  /* a name the cluster has, a type of another shape */
  CHECK(hp_cluster_merge(c, add, 1e9, 0, &d) == HP_INVAL);
  CHECK_CONTAINS(d.msg, "node 'a' is already in cluster");
  hp_cluster_destroy(&add);
  CHECK(hp_cluster_parse("{ \"device_types\": { \"fast\": { \"mem_gib\": 2, \"tflops\": 100 } },"
                         " \"nodes\": [ { \"name\": \"c\", \"type\": \"fast\", \"gpus\": 1 } ] }",
                         "odd.json", &add, &d) == HP_OK);
  CHECK(hp_cluster_merge(c, add, 1e9, 0, &d) == HP_INVAL);
  CHECK_CONTAINS(d.msg, "device type 'fast' differs");
  CHECK_CONTAINS(d.msg, "mem_gib");
  hp_cluster_destroy(&add);
  hp_cluster_destroy(&c);
  hp_problem_destroy(&p);
}

/* Nothing lost, moving weighted: the old plan (slower than the solver's best) is chosen
 * once a second of migration costs a million; with W = 0 the faster plan wins. */
TEST(replan_keeps_the_old_plan_when_moving_costs)
{
  hp_problem *p = fx_load("models/gpt2-amp.json", "models/amp-hetero.json", NULL, 32), *q = NULL;
  hp_plan *old = NULL;
  hp_replan r;
  hp_replan_opts o;
  hp_limits lim;
  hp_diag d = {0};
  hp_config cfg = { 4, 1, 4, 1 };
  CHECK(hp__plan_fixed(p, &cfg, 0, &old, &d) == HP_OK);
  hp_plan_split_even(old);
  CHECK(hp_plan_validate(p, old, &d) == HP_OK);
  CHECK(hp_problem_copy_with(p, NULL, p->job, &q, &d) == HP_OK);
  hp_limits_init(&lim);
  hp_replan_opts_init(&o);
  o.top = 4;
  CHECK(hp_replan_run(p, old, q, &o, &lim, &r, &d) == HP_OK);
  CHECK(r.cands[0].kind == HP_CAND_NO_MOVE && r.cands[0].plan);
  CHECK(r.cands[0].mig.moved_bytes == 0 && r.cands[0].mig.seconds == 0);
  CHECK(r.chosen >= 2);                 /* W = 0: a faster plan of the solver's */
  CHECK(r.cands[r.chosen].time < r.cands[0].time);
  for (int i = 0; i < r.n_cands; i++)
    if (r.cands[i].plan && r.cands[i].allowed) CHECK(r.cands[r.chosen].objective <= r.cands[i].objective);
  hp_replan_release(&r);
  o.move_weight = 1e6;
  CHECK(hp_replan_run(p, old, q, &o, &lim, &r, &d) == HP_OK);
  CHECK_INT(r.chosen, 0);
  CHECK(!r.cands[1].plan);              /* nothing to repair */
  CHECK_CONTAINS(r.cands[1].note, "nothing to repair");
  hp_replan_release(&r);
  /* a cap on the bytes moved leaves the old plan the only one allowed */
  o.move_weight = 0;
  o.max_move_bytes = 0;
  CHECK(hp_replan_run(p, old, q, &o, &lim, &r, &d) == HP_OK);
  CHECK_INT(r.chosen, 0);
  hp_replan_release(&r);
  hp_plan_destroy(&old);
  hp_problem_destroy(&q);
  hp_problem_destroy(&p);
}

/* The old plan on a cluster without one of its nodes: no-move is impossible, the repair
 * puts the lost TP groups on the nodes added in their place, and every candidate's plan is
 * valid there. */
TEST(replan_repair_replaces_a_lost_node_by_an_added_one)
{
  hp_problem *p = fx_load("models/gpt2-amp.json", "models/amp-hetero.json", NULL, 32), *q = NULL;
  hp_cluster *c = NULL, *add = NULL;
  hp_plan *old = NULL;
  hp_replan r;
  hp_replan_opts o;
  hp_limits lim;
  hp_diag d = {0};
  unsigned char gone[4] = { 0, 1, 0, 0 };   /* p3-1: devices 4-7 */
  hp_config cfg = { 4, 2, 2, 1 };
  CHECK(hp__plan_fixed(p, &cfg, 0, &old, &d) == HP_OK);
  hp_plan_split_even(old);
  CHECK(hp_plan_validate(p, old, &d) == HP_OK);
  CHECK(hp_cluster_copy(p->cluster, &c, &d) == HP_OK);
  CHECK(hp_cluster_remove_nodes(c, gone, NULL, &d) == HP_OK);
  CHECK(hp_cluster_parse("{ \"device_types\": { \"V100\": { \"mem_gib\": 16, \"reserved_gib\": 1.0,"
                         " \"tflops\": 125, \"efficiency\": 0.35, \"hbm_gbs\": 900 } }, \"nodes\": ["
                         " { \"name\": \"p3-9\", \"type\": \"V100\", \"gpus\": 4, \"intra_gbps\": 170 } ] }",
                         "add.json", &add, &d) == HP_OK);
  CHECK(hp_cluster_merge(c, add, 10e9 / 8, 30e-6, &d) == HP_OK);
  CHECK(hp_problem_copy_with(p, c, p->job, &q, &d) == HP_OK);
  hp_limits_init(&lim);
  hp_replan_opts_init(&o);
  o.top = 2;
  CHECK(hp_replan_run(p, old, q, &o, &lim, &r, &d) == HP_OK);
  CHECK_INT(r.n_lost, 4);
  CHECK(!r.cands[0].plan);
  CHECK_CONTAINS(r.cands[0].note, "not possible");
  CHECK(r.cands[1].plan != NULL);
  for (int i = 0; i < old->pp * old->dp * old->tp; i++) {
    int dv = old->dev[i], now = r.cands[1].plan->dev[i];
    if (dv >= 4 && dv < 8) CHECK(now >= 12 && now < 16);   /* onto p3-9 */
    else CHECK_INT(now, r.old_to_new[dv]);
  }
  for (int i = 0; i < r.n_cands; i++)
    if (r.cands[i].plan) {
      CHECK(hp_plan_validate(q, r.cands[i].plan, &d) == HP_OK);
      CHECK(conserved(&r.cands[i].mig));
    }
  CHECK(r.chosen >= 0);
  hp_replan_release(&r);
  hp_cluster_destroy(&add);
  hp_plan_destroy(&old);
  hp_problem_destroy(&q);
  hp_problem_destroy(&p);
}

/* The solver's best plan with its stages' device blocks rotated is the old plan: once
 * moving costs, relabelling the solver's plan finds the old placement again (nothing
 * moves), where the plan as the solver gave it moves every layer. */
TEST(replan_relabelling_finds_a_rotated_placement_again)
{
  hp_problem *p = fx_load("models/gpt2-amp.json", "models/amp-hetero.json", NULL, 32), *q = NULL;
  const hp_solver *s = hp_solver_find("dp");
  hp_plan *old = NULL;
  hp_replan r;
  hp_replan_opts o;
  hp_limits lim;
  hp_result res;
  hp_diag d = {0};
  int pp, per;
  hp_limits_init(&lim);
  CHECK(hp_solver_run(s, p, NULL, &lim, &res, &d) == HP_OK && res.plan);
  CHECK(hp_plan_copy(&old, res.plan, &d) == HP_OK);
  pp = old->pp;
  per = old->dp * old->tp;
  CHECK(pp > 1);
  for (int st = 0; st < pp; st++)
    for (int i = 0; i < per; i++)
      old->dev[(size_t)st * per + i] = res.plan->dev[(size_t)((st + 1) % pp) * per + i];
  CHECK(hp_plan_validate(p, old, &d) == HP_OK);
  CHECK(hp_problem_copy_with(p, NULL, p->job, &q, &d) == HP_OK);
  hp_replan_opts_init(&o);
  o.top = 1;
  o.move_weight = 1e6;
  CHECK(hp_replan_run(p, old, q, &o, &lim, &r, &d) == HP_OK);
  CHECK(r.n_cands == 3 && r.cands[2].plan);
  CHECK(r.cands[2].relabelled);
  CHECK(r.cands[2].mig.moved_bytes == 0);
  CHECK(hp_plan_compare(r.cands[2].plan, old) == 0);
  CHECK_INT(r.chosen, 0);     /* the tie with no-move goes to the earlier candidate */
  {
    hp_migration m;
    CHECK(hp_migrate(p, old, q, res.plan, r.old_to_new, 1e9, &m, &d) == HP_OK);
    CHECK(m.moved_bytes > 0.5 * m.need_bytes);   /* unrelabelled, most of it moves */
    hp_migration_release(&m);
  }
  hp_replan_release(&r);
  hp_result_release(&res);
  hp_plan_destroy(&old);
  hp_problem_destroy(&q);
  hp_problem_destroy(&p);
}

/* A stand-in solver for the time-limit test: offers four fixed plans of the tiny problem,
 * then runs out its whole time limit (which replan sets to what is left of its own). */
static hp_err four_plans_then_the_clock(const hp_problem *prob, const hp_plan *start,
                                        const hp_limits *lim, hp_result *out, hp_diag *d)
{
  static const char *const plans[] = {
    "{ \"pp\": 1, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": [ { \"layers\": [0, 1], \"devices\": [[0, 1], [2, 3]] } ] }",
    "{ \"pp\": 1, \"tp\": 1, \"dp\": 4, \"mbs\": 1, \"stages\": [ { \"layers\": [0, 1], \"devices\": [[0], [1], [2], [3]] } ] }",
    "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": [ { \"layers\": [0, 0], \"devices\": [[0], [1]] },"
    " { \"layers\": [1, 1], \"devices\": [[2], [3]] } ] }",
    "{ \"pp\": 2, \"tp\": 2, \"dp\": 1, \"mbs\": 1, \"stages\": [ { \"layers\": [0, 0], \"devices\": [[2, 3]] },"
    " { \"layers\": [1, 1], \"devices\": [[0, 1]] } ] }" };
  double t0 = hp__now();
  (void)start;
  for (size_t i = 0; i < sizeof plans / sizeof *plans; i++) {
    hp_plan *pl = plan_of(prob, plans[i]);
    hp_err err = hp__score_offer(prob, lim, pl, out, d);
    hp_plan_destroy(&pl);
    if (err) return err;
  }
  while (hp__now() < t0 + lim->time_limit) {}
  return HP_OK;
}

/* The time limit bounds the whole re-planning, not only the solver's run: once it has
 * passed, the solver's best plan is scored (never relabelled) and the others are left
 * out and counted. */
TEST(replan_time_limit_bounds_the_candidates_too)
{
  static const hp_solver clock_solver = { "four-then-the-clock", "test", 0, four_plans_then_the_clock };
  hp_problem *p = tiny(4), *q = NULL;
  hp_plan *old = plan_of(p, "{ \"pp\": 1, \"tp\": 2, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                            " { \"layers\": [0, 1], \"devices\": [[0, 1], [2, 3]] } ] }");
  hp_replan r;
  hp_replan_opts o;
  hp_limits lim;
  hp_diag d = {0};
  CHECK(hp_problem_copy_with(p, NULL, p->job, &q, &d) == HP_OK);
  hp_limits_init(&lim);
  hp_replan_opts_init(&o);
  o.solver = &clock_solver;
  o.top = 4;
  CHECK(hp_replan_run(p, old, q, &o, &lim, &r, &d) == HP_OK);   /* no limit: all four */
  CHECK_INT(r.n_cands, 6);
  CHECK_INT(r.n_unscored, 0);
  hp_replan_release(&r);
  lim.time_limit = 0.002;
  CHECK(hp_replan_run(p, old, q, &o, &lim, &r, &d) == HP_OK);
  CHECK_INT(r.n_cands, 3);              /* no-move, repair, the solver's best */
  CHECK_INT(r.n_unscored, 3);
  CHECK(r.cands[2].kind == HP_CAND_SOLVER && r.cands[2].rank == 1 && r.cands[2].plan);
  CHECK(!r.cands[2].relabelled);
  CHECK_CONTAINS(r.cands[2].note, "not relabelled: the time limit");
  CHECK(r.chosen >= 0);
  hp_replan_release(&r);
  hp_plan_destroy(&old);
  hp_problem_destroy(&q);
  hp_problem_destroy(&p);
}
