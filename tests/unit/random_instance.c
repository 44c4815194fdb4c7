/* random_instance.c -- see random_instance.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "random_instance.h"

static double pick(hp_rng *r, double lo, double hi) { return lo + (hi - lo) * hp__rng_unit(r); }

#define APPEND(...) (len += snprintf(buf + len, sizeof buf - (size_t)len, __VA_ARGS__))

/* The 1.2 fields of an instance, drawn from their own stream (random_instance.h). */
typedef struct ri_v12 {
  hp_job job;
  int ck_first, ck_last;     /* the first / last layer is not checkpointable */
  int update_given;
  double update_bytes;
  double hbm[4];             /* per type, GB/s; 0: not given (ri_problem: 3 types at most) */
  int measured;              /* the profile carries act/work (0: none, 1: act, 2: work, 3: both) */
} ri_v12;

static void draw_v12(hp_rng *r, int types, long gbs, hp_schedule sched, ri_v12 *v)
{
  static const int slices[3] = { 1, 2, 4 };
  int k = hp__rng_int(r, 16);
  memset(v, 0, sizeof *v);
  v->job.gbs = gbs;
  v->job.schedule = sched;
  v->job.sequence_parallel = hp__rng_int(r, 2);
  v->job.grad_sync = hp__rng_int(r, 2) ? HP_SYNC_OVERLAP : HP_SYNC_END;
  v->job.sharding = (unsigned)k;            /* 0: the default, all four modes */
  v->job.uniform_sharding = hp__rng_int(r, 3) == 0;
  v->job.idle_devices = hp__rng_int(r, 3) == 0;
  v->job.max_slices = slices[hp__rng_int(r, 3)];
  v->ck_first = hp__rng_int(r, 2);
  v->ck_last = hp__rng_int(r, 2);
  v->update_given = hp__rng_int(r, 2);
  v->update_bytes = pick(r, 8, 40);
  for (int t = 0; t < types; t++) v->hbm[t] = hp__rng_int(r, 2) ? pick(r, 100, 2000) : 0;
  v->measured = hp__rng_int(r, 4);
}

/* Parses and binds like fx_problem, with a whole job. */
static hp_problem *bind(const char *model, const char *cluster, const char *profile, hp_job job)
{
  hp_diag d = {0};
  hp_model *m = NULL;
  hp_cluster *c = NULL;
  hp_profile *pr = NULL;
  hp_problem *p = NULL;
  if (hp_model_parse(model, "model", &m, &d) || hp_cluster_parse(cluster, "cluster", &c, &d) ||
      (profile && hp_profile_parse(profile, "profile", &pr, &d)) ||
      hp_problem_create(&p, m, c, pr, job, &d)) {
    fprintf(stderr, "random instance does not load: %s\n", d.msg);
    exit(3);
  }
  return p;
}

static const char *modes_text(unsigned mask, char *buf, size_t n)
{
  int len = 0;
  buf[0] = '\0';
  for (int m = 0; m < HP_N_SHARD && mask; m++)
    if (mask >> m & 1u) len += snprintf(buf + len, n - (size_t)len, "%s%s", len ? "," : "", hp_shard_name(m));
  return mask ? buf : "all";
}

hp_problem *ri_problem(unsigned long seed, char *what, size_t n_what)
{
  static char buf[16384], model[16384], cluster[16384], profile[16384];
  char mtext[64];
  hp_rng r, r12;
  ri_v12 v;
  int len = 0, L, nn, gpus[4], types, D = 0, matrix, prof, grad4, sched, mbig;
  long gbs;
  hp__rng_seed(&r, seed * 7919 + 17);
  hp__rng_seed(&r12, seed * 104729 + 7);
  L = 3 + hp__rng_int(&r, 2);
  {   /* 2 or 4 devices (mostly 4, so that many configurations exist), 1 to 4 nodes */
    static const int shapes[][5] = { { 1, 2 }, { 2, 1, 1 }, { 2, 2, 2 }, { 3, 2, 1, 1 },
                                     { 3, 1, 1, 2 }, { 3, 1, 2, 1 }, { 4, 1, 1, 1, 1 }, { 1, 4 } };
    const int *sh = shapes[hp__rng_int(&r, 8)];
    nn = sh[0];
    for (int n = 0; n < nn; n++) { gpus[n] = sh[n + 1]; D += gpus[n]; }
  }
  types = 1 + hp__rng_int(&r, 3);
  matrix = hp__rng_int(&r, 4) == 0;
  prof = hp__rng_int(&r, 3) == 0;
  grad4 = hp__rng_int(&r, 4);          /* 0: grad_bytes 4; 1: 6 (wider than 2 param_bytes) */
  sched = hp__rng_int(&r, 4) == 0;
  mbig = hp__rng_int(&r, 3);           /* 0: memory binds */
  gbs = (long[]){ 2, 4, 4, 8 }[hp__rng_int(&r, 4)];
  draw_v12(&r12, types, gbs, sched ? HP_GPIPE : HP_1F1B, &v);

  /* the model */
  len = 0;
  APPEND("{ \"input_bytes\": %g, \"grad_bytes\": %d, ", pick(&r, 0, 2e6),
         grad4 == 0 ? 4 : grad4 == 1 ? 6 : 2);
  if (v.update_given) APPEND("\"update_bytes\": %g, ", v.update_bytes);
  APPEND("\"layers\": [");
  for (int l = 0; l < L; l++) {
    APPEND("%s{ \"name\": \"l%d\", \"kind\": \"k%d\", \"params\": %g, \"act_bytes\": %g, "
           "\"act_bytes_replicated\": %g, \"out_bytes\": %g, \"flops\": %g, \"tp_comm_bytes\": %g, "
           "\"work_bytes\": %g, \"splittable\": %s",
           l ? "," : "", l, l % 2, pick(&r, 1e6, 2e7), pick(&r, 2e6, 2e7), pick(&r, 0, 1e6),
           pick(&r, 1e5, 4e6), pick(&r, 1e11, 5e12), hp__rng_int(&r, 3) ? pick(&r, 1e5, 4e6) : 0.0,
           pick(&r, 0, 2e6), hp__rng_int(&r, 5) ? "true" : "false");
    /* what Megatron does not recompute: the embedding, the head */
    if ((l == 0 && v.ck_first) || (l == L - 1 && v.ck_last)) APPEND(", \"checkpointable\": false");
    APPEND(" }");
  }
  APPEND("] }");
  snprintf(model, sizeof model, "%s", buf);

  /* the cluster */
  len = 0;
  /* peaks of 20,000-200,000 TFLOPS at efficiency 0.0003-0.0009 (20-180 TFLOPS achieved):
   * the profile's random times below stay above what the peak allows (problem.c) */
  APPEND("{ \"device_types\": {");
  for (int k = 0; k < types; k++) {
    APPEND("%s \"t%d\": { \"mem_gib\": %g, \"reserved_gib\": %g, \"tflops\": %g, \"efficiency\": %g",
           k ? "," : "", k, mbig ? pick(&r, 0.5, 2) : pick(&r, 0.15, 0.5), pick(&r, 0, 0.05),
           pick(&r, 20, 200) * 1000, pick(&r, 0.3, 0.9) / 1000);
    if (v.hbm[k] > 0) APPEND(", \"hbm_gbs\": %g", v.hbm[k]);
    APPEND(" }");
  }
  APPEND(" }, \"nodes\": [");
  for (int n = 0; n < nn; n++)
    APPEND("%s{ \"name\": \"n%d\", \"type\": \"t%d\", \"gpus\": %d, \"intra_gbps\": %g, \"intra_lat_us\": %g }",
           n ? "," : "", n, hp__rng_int(&r, types), gpus[n], pick(&r, 50, 1000), pick(&r, 0, 10));
  APPEND("], \"inter_gbps\": %g, \"inter_lat_us\": %g", pick(&r, 5, 100), pick(&r, 5, 40));
  if (!matrix && nn >= 3)
    APPEND(", \"links\": [ { \"a\": \"n0\", \"b\": \"n2\", \"gbps\": %g, \"lat_us\": %g } ]",
           pick(&r, 5, 200), pick(&r, 1, 30));
  if (matrix) {
    double bw[6][6];
    for (int a = 0; a < D; a++)
      for (int b = a; b < D; b++) bw[a][b] = bw[b][a] = pick(&r, 10, 900);
    APPEND(", \"bandwidth_matrix\": { \"gbps\": [");
    for (int a = 0; a < D; a++) {
      APPEND("%s[", a ? "," : "");
      for (int b = 0; b < D; b++) APPEND("%s%g", b ? "," : "", bw[a][b]);
      APPEND("]");
    }
    APPEND("] }");
  }
  APPEND(" }");
  snprintf(cluster, sizeof cluster, "%s", buf);

  /* a profile measured at one micro-batch size larger than some plans use; with 1.2,
   * sometimes with measured memory, under the job's sequence_parallel setting */
  len = 0;
  if (prof) {
    int m0 = 2 + 2 * hp__rng_int(&r, 2);
    int first = 1;
    APPEND("{ \"sequence_parallel\": %s, \"layer_times\": [",
           v.job.sequence_parallel ? "true" : "false");
    for (int k = 0; k < types; k++)
      for (int kind = 0; kind < 2; kind++)
        for (int tp = 1; tp <= 2; tp++, first = 0) {
          APPEND("%s{ \"kind\": \"k%d\", \"type\": \"t%d\", \"tp\": %d, \"mbs\": %d, \"seconds\": %g",
                 first ? "" : ",", kind, k, tp, m0, pick(&r, 0.01, 0.2) / tp * (tp == 2 ? 1.3 : 1));
          if (v.measured & 1) APPEND(", \"act_bytes\": %g", m0 * pick(&r12, 1e6, 2.5e7) / tp);
          if (v.measured & 2) APPEND(", \"work_bytes\": %g", m0 * pick(&r12, 0, 3e6) / tp);
          APPEND(" }");
        }
    APPEND("] }");
    snprintf(profile, sizeof profile, "%s", buf);
  }
  snprintf(what, n_what, "seed %lu: %d layers, %d nodes (%d devices), %d types%s%s, gbs %ld%s, %s, "
           "grad_bytes %d; 1.2: modes %s%s%s%s%s, max_slices %d%s%s%s%s%s",
           seed, L, nn, D, types, matrix ? ", matrix" : "", prof ? ", single-point profile" : "",
           gbs, sched ? " gpipe" : "", mbig ? "memory loose" : "memory binds",
           grad4 == 0 ? 4 : grad4 == 1 ? 6 : 2, modes_text(v.job.sharding, mtext, sizeof mtext),
           v.job.uniform_sharding ? " uniform" : "", v.job.idle_devices ? ", idle devices" : "",
           v.job.sequence_parallel ? ", sequence parallel" : "",
           v.job.grad_sync == HP_SYNC_OVERLAP ? ", overlap" : "", v.job.max_slices,
           v.ck_first || v.ck_last ? ", no recompute on first/last" : "",
           v.update_given ? ", update_bytes" : "", v.hbm[0] > 0 || v.hbm[1] > 0 || v.hbm[2] > 0 ? ", hbm" : "",
           prof && (v.measured & 1) ? ", measured act" : "", prof && (v.measured & 2) ? ", measured work" : "");
  return bind(model, cluster, prof ? profile : NULL, v.job);
}

/* Node shapes of ri_problem_kinds by device count 3 to 6: {number of shapes, then each
 * as {nodes, GPUs of each}}. Three nodes or more, so that three kinds can be present;
 * two node sizes wherever the count allows it, but for {1, 1, 1, 1} (four kinds on four
 * devices) and {2, 2, 2} (tp 2 divides every node: TP groups). */
static const int kinds_shapes[4][6][6] = {
  { { 1 }, { 3, 1, 1, 1 } },
  { { 4 }, { 3, 2, 1, 1 }, { 3, 1, 2, 1 }, { 3, 1, 1, 2 }, { 4, 1, 1, 1, 1 } },
  { { 4 }, { 3, 2, 2, 1 }, { 3, 2, 1, 2 }, { 4, 1, 2, 1, 1 }, { 4, 2, 1, 1, 1 } },
  { { 5 }, { 3, 4, 1, 1 }, { 3, 1, 4, 1 }, { 4, 2, 2, 1, 1 }, { 4, 1, 2, 1, 2 }, { 3, 2, 2, 2 } } };

hp_problem *ri_problem_kinds(unsigned long seed, char *what, size_t n_what)
{
  static char buf[16384], model[16384], cluster[16384], profile[16384];
  static const char *const net_names[3] = { "node figures", "links", "matrix" };
  char mtext[64];
  hp_rng r, r12;
  ri_v12 v;
  int len = 0, L, nn, gpus[5], node_type[5], types, D = 0, net, prof, two_points, grad4, sched,
      mbig, max_L, no_ck_mid = 0;
  long gbs;
  /* streams of their own, apart from ri_problem's */
  hp__rng_seed(&r, seed * 7907 + 29);
  hp__rng_seed(&r12, seed * 104723 + 11);
  {
    const int (*of_d)[6] = kinds_shapes[hp__rng_int(&r, 4)];
    const int *sh = of_d[1 + hp__rng_int(&r, of_d[0][0])];
    nn = sh[0];
    for (int n = 0; n < nn; n++) { gpus[n] = sh[n + 1]; D += gpus[n]; }
  }
  /* the brute force walks D! placements of every split: fewer layers on more devices */
  max_L = D <= 4 ? 5 : D == 5 ? 3 : 2;
  L = 2 + hp__rng_int(&r, max_L - 1);
  types = nn >= 4 ? 3 + hp__rng_int(&r, 2) : 3;
  {   /* every type on some node (nn >= types), from a random first one; the rest at random */
    int first = hp__rng_int(&r, types);
    for (int n = 0; n < nn; n++) node_type[n] = n < types ? (first + n) % types : hp__rng_int(&r, types);
  }
  net = hp__rng_int(&r, 3);            /* 0: node figures; 1: links between nodes; 2: a matrix */
  prof = hp__rng_int(&r, 3) == 0;
  two_points = hp__rng_int(&r, 2);     /* the profile also measures mbs 1 */
  grad4 = hp__rng_int(&r, 4);
  sched = hp__rng_int(&r, 3) == 0;
  mbig = hp__rng_int(&r, 3);           /* 0: memory binds */
  /* a multiple of D, so that dp = D / pp divides it wherever pp can (5 and 6 devices
   * split over 2 or 3 layers leave few configurations otherwise); D alone on 6 devices
   * and on 4 with 5 layers, for the brute force's time */
  gbs = D * (1L << hp__rng_int(&r, D == 6 || D * L > 16 ? 1 : 2));
  draw_v12(&r12, types, gbs, sched ? HP_GPIPE : HP_1F1B, &v);
  for (int l = 1; l < L - 1; l++) no_ck_mid |= (hp__rng_int(&r12, 5) == 0) << l;

  /* the model */
  len = 0;
  APPEND("{ \"input_bytes\": %g, \"grad_bytes\": %d, ", pick(&r, 0, 2e6),
         grad4 == 0 ? 4 : grad4 == 1 ? 6 : 2);
  if (v.update_given) APPEND("\"update_bytes\": %g, ", v.update_bytes);
  APPEND("\"layers\": [");
  for (int l = 0; l < L; l++) {
    APPEND("%s{ \"name\": \"l%d\", \"kind\": \"k%d\", \"params\": %g, \"act_bytes\": %g, "
           "\"act_bytes_replicated\": %g, \"out_bytes\": %g, \"flops\": %g, \"tp_comm_bytes\": %g, "
           "\"work_bytes\": %g, \"splittable\": %s",
           l ? "," : "", l, l % 2, pick(&r, 1e6, 2e7), pick(&r, 2e6, 2e7), pick(&r, 0, 1e6),
           pick(&r, 1e5, 4e6), pick(&r, 1e11, 5e12), hp__rng_int(&r, 3) ? pick(&r, 1e5, 4e6) : 0.0,
           pick(&r, 0, 2e6), hp__rng_int(&r, 5) ? "true" : "false");
    if ((l == 0 && v.ck_first) || (l == L - 1 && v.ck_last) || (no_ck_mid >> l & 1))
      APPEND(", \"checkpointable\": false");
    APPEND(" }");
  }
  APPEND("] }");
  snprintf(model, sizeof model, "%s", buf);

  /* the cluster: each type its own peak, efficiency, memory and memory bandwidth (peaks
   * as in ri_problem, above what the profile's times allow) */
  len = 0;
  APPEND("{ \"device_types\": {");
  for (int k = 0; k < types; k++) {
    APPEND("%s \"t%d\": { \"mem_gib\": %g, \"reserved_gib\": %g, \"tflops\": %g, \"efficiency\": %g",
           k ? "," : "", k, mbig ? pick(&r, 0.5, 2) : pick(&r, 0.15, 0.5), pick(&r, 0, 0.05),
           pick(&r, 20, 200) * 1000, pick(&r, 0.3, 0.9) / 1000);
    if (v.hbm[k] > 0) APPEND(", \"hbm_gbs\": %g", v.hbm[k]);
    APPEND(" }");
  }
  APPEND(" }, \"nodes\": [");
  for (int n = 0; n < nn; n++)
    APPEND("%s{ \"name\": \"n%d\", \"type\": \"t%d\", \"gpus\": %d, \"intra_gbps\": %g, \"intra_lat_us\": %g }",
           n ? "," : "", n, node_type[n], gpus[n], pick(&r, 50, 1000), pick(&r, 0, 10));
  APPEND("], \"inter_gbps\": %g, \"inter_lat_us\": %g", pick(&r, 5, 100), pick(&r, 5, 40));
  if (net == 1) {     /* some node pairs (at least one) with figures of their own */
    int any = 0;
    APPEND(", \"links\": [");
    for (int a = 0; a < nn; a++)
      for (int b = a + 1; b < nn; b++)
        if (hp__rng_int(&r, 2) || (!any && a == nn - 2)) {
          APPEND("%s{ \"a\": \"n%d\", \"b\": \"n%d\", \"gbps\": %g, \"lat_us\": %g }", any ? "," : "",
                 a, b, pick(&r, 5, 200), pick(&r, 0, 30));
          any = 1;
        }
    APPEND("]");
  }
  if (net == 2) {     /* per device pair; sometimes asymmetric (the loader takes the worse) */
    int asym = hp__rng_int(&r, 3) == 0, lat = hp__rng_int(&r, 2);
    double bw[6][6], lt[6][6];
    for (int a = 0; a < D; a++)
      for (int b = a; b < D; b++) {
        bw[a][b] = bw[b][a] = pick(&r, 10, 900);
        lt[a][b] = lt[b][a] = pick(&r, 0, 20);
        if (asym) { bw[b][a] = pick(&r, 10, 900); lt[b][a] = pick(&r, 0, 20); }
      }
    for (int which = 0; which < 1 + lat; which++) {
      APPEND("%s\"%s\": [", which ? ", " : ", \"bandwidth_matrix\": { ", which ? "lat_us" : "gbps");
      for (int a = 0; a < D; a++) {
        APPEND("%s[", a ? "," : "");
        for (int b = 0; b < D; b++) APPEND("%s%g", b ? "," : "", which ? lt[a][b] : bw[a][b]);
        APPEND("]");
      }
      APPEND("]");
    }
    APPEND(" }");
  }
  APPEND(" }");
  snprintf(cluster, sizeof cluster, "%s", buf);

  /* a profile at one micro-batch size (sometimes mbs 1 too), as in ri_problem */
  len = 0;
  if (prof) {
    int m0 = 2 + 2 * hp__rng_int(&r, 2), first = 1;
    APPEND("{ \"sequence_parallel\": %s, \"layer_times\": [",
           v.job.sequence_parallel ? "true" : "false");
    for (int k = 0; k < types; k++)
      for (int kind = 0; kind < 2; kind++)
        for (int tp = 1; tp <= 2; tp++)
          for (int pt = 0; pt < 1 + two_points; pt++, first = 0) {
            int mbs = pt ? 1 : m0;
            double t = pick(&r, 0.01, 0.2) / tp * (tp == 2 ? 1.3 : 1) * (pt ? 0.5 : 1);
            APPEND("%s{ \"kind\": \"k%d\", \"type\": \"t%d\", \"tp\": %d, \"mbs\": %d, \"seconds\": %g",
                   first ? "" : ",", kind, k, tp, mbs, t);
            if (v.measured & 1) APPEND(", \"act_bytes\": %g", mbs * pick(&r12, 1e6, 2.5e7) / tp);
            if (v.measured & 2) APPEND(", \"work_bytes\": %g", mbs * pick(&r12, 0, 3e6) / tp);
            APPEND(" }");
          }
    APPEND("] }");
    snprintf(profile, sizeof profile, "%s", buf);
  }
  len = snprintf(what, n_what, "kinds seed %lu: %d layers, %d types, nodes", seed, L, types);
  for (int n = 0; n < nn && len < (int)n_what; n++)
    len += snprintf(what + len, n_what - (size_t)len, " %dxt%d", gpus[n], node_type[n]);
  if (len < (int)n_what)
    snprintf(what + len, n_what - (size_t)len,
             ", %s%s, gbs %ld%s, %s, grad_bytes %d; 1.2: modes %s%s%s%s%s, max_slices %d%s%s%s%s%s",
             net_names[net], prof ? two_points ? ", two-point profile" : ", single-point profile" : "",
             gbs, sched ? " gpipe" : "", mbig ? "memory loose" : "memory binds",
             grad4 == 0 ? 4 : grad4 == 1 ? 6 : 2, modes_text(v.job.sharding, mtext, sizeof mtext),
             v.job.uniform_sharding ? " uniform" : "", v.job.idle_devices ? ", idle devices" : "",
             v.job.sequence_parallel ? ", sequence parallel" : "",
             v.job.grad_sync == HP_SYNC_OVERLAP ? ", overlap" : "", v.job.max_slices,
             v.ck_first || v.ck_last || no_ck_mid ? ", not checkpointable" : "",
             v.update_given ? ", update_bytes" : "",
             v.hbm[0] > 0 || v.hbm[1] > 0 || v.hbm[2] > 0 || v.hbm[3] > 0 ? ", hbm" : "",
             prof && (v.measured & 1) ? ", measured act" : "", prof && (v.measured & 2) ? ", measured work" : "");
  return bind(model, cluster, prof ? profile : NULL, v.job);
}

/* --- Brute force (random_instance.h). A plain walk over every plan of section 5,
 * sharing nothing with the solvers but the evaluator, which scores every plan. */

typedef struct brute {
  const hp_problem *p;
  hp_plan *pl;
  int n_slots;
  unsigned char *taken;      /* [D] the device serves a slot already */
  int *node_used;            /* [n_nodes] slots on each node */
  int opts;                  /* per-layer (mode, slices) choices: */
  unsigned char opt_mode[HP_N_SHARD + 8], opt_slices[HP_N_SHARD + 8];
  double best;
} brute;

/* The (mode, log2 slices) choices of one layer: every mode of the job's list, and a zdp
 * layer with each slice count 1, 2, .., max_slices. With one replica every mode and
 * slice count costs what dp costs (cost-model.md 7.1, 7.22: nothing to shard), so there
 * the first mode of the list stands for all of them. */
static void layer_options(brute *b)
{
  unsigned modes = hp_job_modes(&b->p->job);
  int maxg = hp_job_max_slices(&b->p->job);
  b->opts = 0;
  for (int m = 0; m < HP_N_SHARD && (b->pl->dp > 1 || b->opts == 0); m++) {
    if (!(modes >> m & 1u)) continue;
    if (b->pl->dp == 1) maxg = 1;
    for (int g = 0; (1 << g) <= (m == HP_SHARD_ZDP ? maxg : 1); g++) {
      b->opt_mode[b->opts] = (unsigned char)m;
      b->opt_slices[b->opts++] = (unsigned char)g;
    }
  }
}

static void offer(brute *b)
{
  hp_eval e = {0};
  if (hp_evaluate(b->p, b->pl, &e, NULL) == HP_OK && e.feasible && e.iteration_time < b->best)
    b->best = e.iteration_time;
  hp_eval_release(&e);
}

/* Every sharding of the placed, split plan with its recompute flags: a choice per layer
 * (an odometer over layer_options), or under uniform_sharding one mode for all layers
 * with a slice count per zdp layer. */
static void walk_sharding(brute *b)
{
  hp_plan *pl = b->pl;
  int L = pl->n_layers, at[64] = {0};
  for (;;) {
    int ok = 1, l;
    for (l = 0; l < L; l++) {
      pl->mode[l] = b->opt_mode[at[l]];
      pl->slices[l] = b->opt_slices[at[l]];
      if (b->p->job.uniform_sharding && pl->mode[l] != pl->mode[0]) ok = 0;
    }
    if (ok) offer(b);
    for (l = 0; l < L && ++at[l] == b->opts; l++) at[l] = 0;
    if (l == L) return;
  }
}

static void walk_splits(brute *b)
{
  hp_plan *pl = b->pl;
  for (int s = 0; s < pl->pp; s++) pl->first[s] = s;
  pl->first[pl->pp] = pl->n_layers;
  do {
    for (long rm = 0; rm < (1L << pl->pp); rm++) {
      for (int s = 0; s < pl->pp; s++) pl->recompute[s] = (rm >> s) & 1;
      walk_sharding(b);
    }
  } while (hp__next_cuts(pl->first, pl->pp, pl->n_layers));
}

/* Slot i (in HP_SLOT order) and the rest: every device not taken, TP groups inside one
 * node, and no device on a node whose GPU count tp does not divide. */
static void walk_slots(brute *b, int i)
{
  const hp_cluster *c = b->p->cluster;
  hp_plan *pl = b->pl;
  if (i == b->n_slots) {
    walk_splits(b);
    return;
  }
  for (int dv = 0; dv < c->n_devices; dv++) {
    int n = c->dev_node[dv];
    if (b->taken[dv] || c->nodes[n].gpus % pl->tp) continue;
    if (i % pl->tp && n != c->dev_node[pl->dev[i - i % pl->tp]]) continue;
    b->taken[dv] = 1;
    pl->dev[i] = dv;
    walk_slots(b, i + 1);
    b->taken[dv] = 0;
  }
}

void ri_cert_scope(hp_problem *p)
{
  const unsigned dp = 1u << HP_SHARD_DP;
  p->job.sharding = hp_job_modes(&p->job) == dp ? dp : dp | 1u << HP_SHARD_ZDP;
  p->job.max_slices = 1;
  p->job.idle_devices = 0;
}

double ri_brute_config(const hp_problem *p, const hp_config *c)
{
  int D = p->cluster->n_devices, used = c->pp * c->tp * c->dp;
  brute b = { .p = p, .best = INFINITY };
  hp_diag d = {0};
  if (used > D || (used < D && !p->job.idle_devices) || c->pp > p->model->n_layers ||
      p->model->n_layers > 64 || p->job.gbs % ((long)c->dp * c->mbs))
    return INFINITY;
  if (hp__plan_for(p, c, &b.pl, &d)) return NAN;
  b.n_slots = used;
  b.taken = calloc((size_t)D, 1);
  if (!b.taken) abort();
  layer_options(&b);
  walk_slots(&b, 0);
  free(b.taken);
  hp_plan_destroy(&b.pl);
  return b.best;
}

double ri_brute_all(const hp_problem *p, int *n_configs)
{
  int D = p->cluster->n_devices, L = p->model->n_layers, n = 0;
  double best = INFINITY;
  for (int pp = 1; pp <= L && pp <= D; pp++)
    for (int tp = 1; pp * tp <= D; tp++)
      for (int dp = 1; pp * tp * dp <= D; dp++) {
        int mbs[64], nm;
        if (pp * tp * dp < D && !p->job.idle_devices) continue;
        if (p->job.gbs % dp) continue;
        nm = hp_mbs_divisors(p->job.gbs / dp, mbs, 64);
        for (int k = 0; k < nm && k < 64; k++) {
          hp_config c = { pp, tp, dp, mbs[k] };
          double v = ri_brute_config(p, &c);
          n++;
          if (v < best) best = v;
        }
      }
  if (n_configs) *n_configs = n;
  return best;
}
