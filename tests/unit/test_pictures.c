/* test_pictures.c -- the report's pictures: the simulated iteration drawn per stage in
 * pipeline order with numbered micro-batches, the placement per node class with its
 * hand-offs labelled, and both (and the HTML report) small and page-wide at 768 GPUs. */
#include <stdlib.h>

#include "harness.h"
#include "fixtures.h"

/* Occurrences of `needle` in `hay`. */
static int count(const char *hay, const char *needle)
{
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* The smallest font-size="N" in an SVG (99 if none is given). */
static double smallest_font(const char *svg)
{
  double m = 99;
  for (const char *p = strstr(svg, "font-size=\""); p; p = strstr(p + 1, "font-size=\"")) {
    double f = atof(p + 11);
    if (f < m) m = f;
  }
  return m;
}

TEST(gantt_draws_one_row_per_stage_in_pipeline_order_with_numbered_boxes)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "  { \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                           "  { \"layers\": [2, 3], \"devices\": [[1], [3]] } ] }");
  hp_sim s = {0};
  hp_diag d = {0};
  char *svg = NULL;
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  CHECK(hp_sim_svg(p, pl, &s, &svg, &d) == HP_OK);
  CHECK(strstr(svg, ">stage 0 (2 x 1)<") != NULL);
  CHECK(strstr(svg, ">stage 1 (2 x 1)<") > strstr(svg, ">stage 0 (2 x 1)<"));
  CHECK_INT(count(svg, ">stage "), 2);
  CHECK(strstr(svg, ">device 0") == NULL);            /* no row per device any more */
  CHECK_CONTAINS(svg, "In each box its micro-batch");
  CHECK_INT(count(svg, ">3</text>"), 4);              /* micro-batch 3: F and B on two rows */
  CHECK_CONTAINS(svg, "width=\"1000\"");
  CHECK(smallest_font(svg) >= 9);
  free(svg);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

TEST(placement_groups_nodes_by_class_and_labels_each_hand_off)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl = fx_plan(p, "{ \"pp\": 2, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                           "  { \"layers\": [0, 1], \"devices\": [[0], [2]] },"
                           "  { \"layers\": [2, 3], \"devices\": [[1], [3]] } ] }");
  hp_diag d = {0};
  char *svg = NULL;
  CHECK(hp_plan_svg(p, pl, &svg, &d) == HP_OK);
  CHECK_CONTAINS(svg, ">1 x 2 fast<");
  CHECK_CONTAINS(svg, ">1 x 2 slow<");
  CHECK_CONTAINS(svg, "stage 0: layers 0-1");
  CHECK_CONTAINS(svg, "1 x 1 fast + 1 x 1 slow on 2 nodes: a, b");
  CHECK_CONTAINS(svg, "Gbit/s");
  CHECK_INT(count(svg, "each way<"), 1);               /* one hand-off for two stages */
  CHECK(smallest_font(svg) >= 9);
  free(svg);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* 96 nodes of 8 GPUs alternating A100 and V100 (bench/mixed_cluster.sh), 64 layers, and a
 * plan of pp 64, tp 4, dp 3 in device order with gas 128. */
static hp_problem *cluster_768(void)
{
  size_t n = 20000, len = 0;
  char *c = malloc(n);
  hp_problem *p;
  if (!c) abort();
  len += (size_t)snprintf(c + len, n - len,
    "{ \"name\": \"mixed-96x8\", \"device_types\": {"
    "  \"A100\": { \"mem_gib\": 40, \"reserved_gib\": 1, \"tflops\": 312, \"efficiency\": 0.35 },"
    "  \"V100\": { \"mem_gib\": 32, \"reserved_gib\": 1, \"tflops\": 125, \"efficiency\": 0.35 } },"
    "  \"nodes\": [");
  for (int i = 0; i < 96; i++)
    len += (size_t)snprintf(c + len, n - len, "%s{ \"name\": \"n%d\", \"type\": \"%s\", \"gpus\": 8, "
                            "\"intra_gbps\": %d }", i ? ", " : "", i, i % 2 ? "V100" : "A100",
                            i % 2 ? 2400 : 4800);
  snprintf(c + len, n - len, "], \"inter_gbps\": 100 }");
  p = fx_problem("{ \"name\": \"deep\", \"layers\": [ { \"name\": \"block\", \"repeat\": 64, "
                 "\"params\": 1e8, \"act_bytes\": 1e6, \"out_bytes\": 6.7e7, \"flops\": 1e13 } ] }",
                 c, NULL, 384, HP_1F1B);
  free(c);
  return p;
}

static hp_plan *plan_pp64(const hp_problem *p)
{
  size_t n = 40000, len = 0;
  char *t = malloc(n);
  hp_plan *pl;
  if (!t) abort();
  len += (size_t)snprintf(t + len, n - len, "{ \"pp\": 64, \"tp\": 4, \"dp\": 3, \"mbs\": 1, \"stages\": [");
  for (int s = 0; s < 64; s++) {
    len += (size_t)snprintf(t + len, n - len, "%s{ \"layers\": [%d, %d], \"devices\": [", s ? ", " : "", s, s);
    for (int r = 0; r < 3; r++) {
      int d0 = (s * 3 + r) * 4;
      len += (size_t)snprintf(t + len, n - len, "%s[%d, %d, %d, %d]", r ? ", " : "", d0, d0 + 1, d0 + 2, d0 + 3);
    }
    len += (size_t)snprintf(t + len, n - len, "] }");
  }
  snprintf(t + len, n - len, "] }");
  pl = fx_plan(p, t);
  free(t);
  return pl;
}

TEST(pictures_and_report_stay_small_and_page_wide_at_768_gpus_and_pp_64)
{
  hp_problem *p = cluster_768();
  hp_plan *pl = plan_pp64(p);
  hp_sim s = {0};
  hp_diag d = {0};
  hp_report_in in = {0};
  char *gantt = NULL, *place = NULL, *html = NULL, row[64];
  CHECK(hp_simulate(p, pl, &s, &d) == HP_OK);
  CHECK(hp_sim_svg(p, pl, &s, &gantt, &d) == HP_OK);
  CHECK(hp_plan_svg(p, pl, &place, &d) == HP_OK);
  CHECK(strlen(gantt) < 250000);
  CHECK(strlen(place) < 100000);
  for (int st = 0; st < 64; st++) {                  /* every stage, in order */
    snprintf(row, sizeof row, ">stage %d (3 x 4)<", st);
    CHECK(strstr(gantt, row) != NULL);
  }
  CHECK_CONTAINS(gantt, "Numbers: every ");
  CHECK_CONTAINS(gantt, "width=\"1000\"");
  CHECK_CONTAINS(place, "width=\"1000\"");
  CHECK(smallest_font(gantt) >= 9);
  CHECK(smallest_font(place) >= 9);
  CHECK_CONTAINS(place, ">48 x 8 A100<");
  CHECK_CONTAINS(place, ">48 x 8 V100<");
  CHECK_INT(count(place, "each way<"), 63);
  /* 6.7e7 / 4 bytes a lane; each boundary's 12 lanes (stage s on devices 12 s .. 12 s + 11,
   * stage s + 1 on the next 12) cross nodes, 8 of them at every node they touch: under cost
   * model 1.2 they share its 100 Gbit/s link, H_s(n) = 8, so a lane sees 12.5 Gbit/s */
  CHECK_CONTAINS(place, "12.5 Gbit/s between nodes (100 / 8 lanes); 16 MiB each way");
  in.html = 1;
  CHECK(hp_report_write(p, pl, &in, &html, &d) == HP_OK);
  CHECK(strlen(html) < 500000);
  CHECK_INT(count(html, "<svg "), 2);
  free(html);
  free(gantt);
  free(place);
  hp_sim_release(&s);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}

/* Idle devices are drawn grey and counted in the title; a stage's modes are named. The
 * tiny cluster under a job with idle devices: pp 1, dp 2 on devices 0 and 2, zero1. */
TEST(placement_shows_idle_devices_and_modes)
{
  hp_problem *p = fx_problem(fx_tiny_model, fx_tiny_cluster, NULL, 8, HP_1F1B);
  hp_plan *pl;
  hp_diag d = {0};
  char *svg = NULL, *md = NULL;
  hp_report_in in = {0};
  p->job.idle_devices = 1;
  pl = fx_plan(p, "{ \"pp\": 1, \"tp\": 1, \"dp\": 2, \"mbs\": 1, \"stages\": ["
                  "  { \"layers\": [0, 3], \"devices\": [[0], [2]] } ],"
                  "  \"sharding\": [\"zero1\", \"zero1\", \"zero1\", \"zero1\"] }");
  CHECK(hp_plan_svg(p, pl, &svg, &d) == HP_OK);
  CHECK_CONTAINS(svg, "on 4 GPUs in 2 nodes, 2 idle<");
  CHECK_CONTAINS(svg, "fill=\"#d9d9d9\"");
  CHECK_CONTAINS(svg, ">s0, idle<");                 /* under each node of the two */
  CHECK_CONTAINS(svg, "stage 0: layers 0-3, zero1<");
  CHECK(hp_report_write(p, pl, &in, &md, &d) == HP_OK);
  CHECK_CONTAINS(md, "| zero1 |");
  CHECK_CONTAINS(md, "Idle devices (the plan leaves them unused; they hold nothing and take no "
                 "step): 2 of 4, 1, 3.");
  free(md);
  free(svg);
  hp_plan_destroy(&pl);
  hp_problem_destroy(&p);
}
