/* internal.h -- helpers shared by the library's modules; never installed. */
#ifndef HP_INTERNAL_H
#define HP_INTERNAL_H

#include <stddef.h>

#include "hetplan/hetplan.h"

/* calloc of n elements of size sz; NULL on overflow or failure. */
void *hp__calloc(size_t n, size_t sz);
/* strdup that accepts NULL (returns NULL). */
char *hp__strdup(const char *s);

/* A growing string for writers (SVG): printf-style appends; `failed` records running
 * out of memory once, after which appends do nothing. */
typedef struct hp_sb { char *s; size_t len, cap; int failed; } hp_sb;
void hp__sb_printf(hp_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends text with XML's special characters escaped. */
void hp__sb_xml(hp_sb *b, const char *text);

/* --- Pieces of the cost model (evaluate.c), shared with the search so that each formula
 * has one implementation. */

/* Per-stage aggregates from which a device's memory follows (cost-model.md 4). */
typedef struct hp_mem_terms {
  double states_dp;    /* sum of state_bytes P / t_l over replicated layers */
  double states_z;     /* the same over ZeRO-3 layers (divided by dp in the total) */
  double gather;       /* max param_bytes P / t_l over ZeRO-3 layers */
  double act_sum;      /* sum of a_l(tp) */
  double act_max;      /* max of a_l(tp) */
  double inputs;       /* sum of I_l / t_l */
  double work;         /* max of (mbs W + W0) / t_l */
} hp_mem_terms;

/* Adds layer l to the terms (zdp: as a ZeRO-3 layer; the caller passes 0 when dp = 1). */
void hp__mem_add(const hp_problem *p, int l, int tp, int mbs, int zdp, hp_mem_terms *m);
/* M without the reserve for a stage with these terms. */
double hp__mem_total(const hp_mem_terms *m, long inflight, int mbs, int dp, int recompute);

/* Smallest bandwidth and largest latency inside slot (s, r)'s TP group (INFINITY and 0
 * when tp = 1), and on the hand-off lanes from (s, r) to (s + 1, r). */
void hp__tp_link(const hp_problem *p, const hp_plan *plan, int s, int r, double *bw,
                 double *lat);
void hp__handoff_link(const hp_problem *p, const hp_plan *plan, int s, int r, double *bw,
                      double *lat);
/* Bdp[s] and latdp[s] of every stage (0 when dp = 1); needs the placement only. */
hp_err hp__replica_links(const hp_problem *p, const hp_plan *plan, double *bdp, double *latdp);

/* Time of layer l on slot (s, r): the slowest type of the TP group, before recompute. */
double hp__slot_layer_time(const hp_problem *p, const hp_plan *plan, int s, int r, int l,
                           double btp, double lattp);
double hp__handoff_time(double out_bytes, int mbs, int tp, double bw, double lat);
/* Z: ZeRO-3 gathering per micro-batch for `zbytes` = sum param_bytes P / t_l. */
double hp__gather_time(double zbytes, int dp, double bdp);
/* Gradient sync for G (replicated) and Gz (ZeRO-3) gradient bytes. */
double hp__sync_time(double G, double Gz, int dp, double bdp, double latdp);

/* The measured points of one (kind, type, tp), sorted by mbs, duplicates resolved. */
struct hp_series {
  int n;
  int *mbs;
  double *seconds;
};

static inline size_t hp__series_index(const hp_problem *p, int l, int k, int tp)
{
  return ((size_t)l * (size_t)p->cluster->n_types + (size_t)k) * (size_t)(p->max_tp + 1)
         + (size_t)tp;
}

#endif
