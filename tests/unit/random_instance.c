/* random_instance.c -- see random_instance.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "random_instance.h"

static double pick(hp_rng *r, double lo, double hi) { return lo + (hi - lo) * hp__rng_unit(r); }

#define APPEND(...) (len += snprintf(buf + len, sizeof buf - (size_t)len, __VA_ARGS__))

hp_problem *ri_problem(unsigned long seed, char *what, size_t n_what)
{
  static char buf[16384], model[16384], cluster[16384], profile[16384];
  hp_rng r;
  int len = 0, L, nn, gpus[4], types, D = 0, matrix, prof, grad4, sched, mbig;
  long gbs;
  hp__rng_seed(&r, seed * 7919 + 17);
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

  /* the model */
  len = 0;
  APPEND("{ \"input_bytes\": %g, \"grad_bytes\": %d, \"layers\": [", pick(&r, 0, 2e6),
         grad4 == 0 ? 4 : grad4 == 1 ? 6 : 2);
  for (int l = 0; l < L; l++)
    APPEND("%s{ \"name\": \"l%d\", \"kind\": \"k%d\", \"params\": %g, \"act_bytes\": %g, "
           "\"act_bytes_replicated\": %g, \"out_bytes\": %g, \"flops\": %g, \"tp_comm_bytes\": %g, "
           "\"work_bytes\": %g, \"splittable\": %s }",
           l ? "," : "", l, l % 2, pick(&r, 1e6, 2e7), pick(&r, 2e6, 2e7), pick(&r, 0, 1e6),
           pick(&r, 1e5, 4e6), pick(&r, 1e11, 5e12), hp__rng_int(&r, 3) ? pick(&r, 1e5, 4e6) : 0.0,
           pick(&r, 0, 2e6), hp__rng_int(&r, 5) ? "true" : "false");
  APPEND("] }");
  snprintf(model, sizeof model, "%s", buf);

  /* the cluster */
  len = 0;
  /* peaks of 20,000-200,000 TFLOPS at efficiency 0.0003-0.0009 (20-180 TFLOPS achieved):
   * the profile's random times below stay above what the peak allows (problem.c) */
  APPEND("{ \"device_types\": {");
  for (int k = 0; k < types; k++)
    APPEND("%s \"t%d\": { \"mem_gib\": %g, \"reserved_gib\": %g, \"tflops\": %g, \"efficiency\": %g }",
           k ? "," : "", k, mbig ? pick(&r, 0.5, 2) : pick(&r, 0.15, 0.5), pick(&r, 0, 0.05),
           pick(&r, 20, 200) * 1000, pick(&r, 0.3, 0.9) / 1000);
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

  /* a profile measured at one micro-batch size larger than some plans use */
  len = 0;
  if (prof) {
    int m0 = 2 + 2 * hp__rng_int(&r, 2);
    int first = 1;
    APPEND("{ \"layer_times\": [");
    for (int k = 0; k < types; k++)
      for (int kind = 0; kind < 2; kind++)
        for (int tp = 1; tp <= 2; tp++, first = 0)
          APPEND("%s{ \"kind\": \"k%d\", \"type\": \"t%d\", \"tp\": %d, \"mbs\": %d, \"seconds\": %g }",
                 first ? "" : ",", kind, k, tp, m0, pick(&r, 0.01, 0.2) / tp * (tp == 2 ? 1.3 : 1));
    APPEND("] }");
    snprintf(profile, sizeof profile, "%s", buf);
  }
  snprintf(what, n_what, "seed %lu: %d layers, %d nodes (%d devices), %d types%s%s, gbs %ld%s, %s, grad_bytes %d",
           seed, L, nn, D, types, matrix ? ", matrix" : "", prof ? ", single-point profile" : "",
           gbs, sched ? " gpipe" : "", mbig ? "memory loose" : "memory binds",
           grad4 == 0 ? 4 : grad4 == 1 ? 6 : 2);
  return fx_problem(model, cluster, prof ? profile : NULL, gbs, sched ? HP_GPIPE : HP_1F1B);
}

/* Minimum over partitions x per-stage recompute x per-layer sharding of a placed plan. */
static double best_of_placed(const hp_problem *p, hp_plan *pl)
{
  int L = pl->n_layers, nz = pl->dp > 1 ? L : 0;
  double best = INFINITY;
  for (int s = 0; s < pl->pp; s++) pl->first[s] = s;
  pl->first[pl->pp] = L;
  do {
    for (long rm = 0; rm < (1L << pl->pp); rm++)
      for (long zm = 0; zm < (1L << nz); zm++) {
        hp_eval e = {0};
        for (int s = 0; s < pl->pp; s++) pl->recompute[s] = (rm >> s) & 1;
        for (int l = 0; l < L; l++) pl->mode[l] = nz && (zm >> l) & 1 ? HP_SHARD_ZDP : HP_SHARD_DP;
        if (hp_evaluate(p, pl, &e, NULL) == HP_OK && e.feasible && e.iteration_time < best)
          best = e.iteration_time;
        hp_eval_release(&e);
      }
  } while (hp__next_cuts(pl->first, pl->pp, L));
  return best;
}

double ri_brute_config(const hp_problem *p, const hp_config *c)
{
  int D = p->cluster->n_devices, perm[8];
  hp_plan *pl = NULL;
  hp_diag d = {0};
  double best = INFINITY;
  if (hp__plan_for(p, c, &pl, &d)) return NAN;
  for (int i = 0; i < D; i++) perm[i] = i;
  do {
    int ok = 1;
    for (int g = 0; g < D && ok; g += c->tp)
      for (int j = 1; j < c->tp && ok; j++)
        ok = p->cluster->dev_node[perm[g + j]] == p->cluster->dev_node[perm[g]];
    if (!ok) continue;
    memcpy(pl->dev, perm, (size_t)D * sizeof *perm);
    double b = best_of_placed(p, pl);
    if (b < best) best = b;
  } while (hp__next_perm(perm, D));
  hp_plan_destroy(&pl);
  return best;
}
