/* hp_pattern.h -- stage patterns: what a search that leaves the placement open needs to
 * know about one configuration (pp, tp, dp, mbs). A stage's dp TP groups either sit on
 * one node of a class ("single") or span nodes, with TP groups of one class ("multi") or
 * of several ("mixed"); a stage's *kind* is that choice and the set of classes present.
 * For each kind these tables give figures that no placement of that kind beats: the least
 * layer time of each class over the links its TP groups can have, the smallest capacity
 * present, an upper bound on the replica-group bandwidth and a lower bound on its latency,
 * and, per pair of consecutive kinds, the best hand-off link. Where classes are exact and
 * a stage's replicas are alike (one node each, or one class), the figures are the
 * evaluator's own, so bounds built on them are tight there. The pattern DP
 * (solvers/pattern_dp.c) and the pattern MIP (formulation/mip_pattern.c) read them. */
#ifndef HP_PATTERN_H
#define HP_PATTERN_H

#include "hp_classes.h"
#include "hp_cost.h"

/* Classes a pattern search distinguishes; more are merged by type (hp_classes_build). */
#define HP_PATTERN_MAX_CLASSES 6
/* Classes the certificate's searches build: kinds grow as 2^C and a DP run as their square
 * (6 classes of one type, Pipette's measured 16 x 8 matrix: 69 kinds and no bound in 300 s),
 * so past 4 the classes of one type are merged (inexact: their best figures, still a bound).
 * Types are never merged: five types stay five classes. */
#define HP_PATTERN_SEARCH_CLASSES 4

typedef struct hp_stage_kind {
  unsigned mask;       /* the classes present, bit c for class c */
  int single;          /* every TP group of the stage on one node (one class) */
  /* A spanning kind is split in two where that tightens its figures: 1, every node the
   * stage uses holds its groups only (all of them, no device being idle), so every lane of
   * its boundaries leaves its node (H_s(n) >= its groups there x tp); -1, some node it uses
   * also holds another stage's groups (where every stage must span nodes, that node's R(n)
   * >= 2 tp). 0: not split. */
  int own;
  double cap;          /* least capacity less reserve among the classes present, bytes */
  double bdp, latdp;   /* Bdp <= bdp and latdp >= latdp for every placement of the kind
                        * (0 when dp = 1) */
  double bdp_chain;    /* a spanning kind of one class (own 0 or -1), dp > 1: Bdp <= this
                        * where every replica keeps both hand-offs of the stage inside a node
                        * (then the stages before and after span nodes too, and a node holding
                        * a replica's three groups has 3 tp replica groups crossing: R(n) >=
                        * 3 tp); 0 where no such figure is below bdp (pattern_dp.c: a stage
                        * either has a replica that crosses, or its sync at this figure) */
  double hbm;          /* least memory bandwidth among the classes present that have one,
                        * bytes/s: every class of the mask has a device in the stage, so its
                        * optimizer step is no faster than at this figure (0: none has one,
                        * no step; cost-model.md 3) */
} hp_stage_kind;

typedef struct hp_patterns {
  const hp_classes *cls;  /* borrowed */
  int n_cls;
  hp_costs tab;        /* the configuration's tables; tab.time holds each class's least
                        * layer times (class c at row c), before recompute */
  int *groups;         /* [n_cls] TP groups of each class */
  int *per_node;       /* [n_cls] most TP groups one node of the class holds */
  int n_kind;
  hp_stage_kind *kind;
  int n_split;         /* spanning kinds split into two kinds (own 1 and -1): the kinds
                        * the split added; 0 when built unsplit */
  double *hbw, *hlat;  /* [n_kind * n_kind] best hand-off link from a stage of kind a to
                        * the next of kind b: no pairing of their replicas does better */
  double *ibw, *ilat;  /* [n_kind * n_kind] the same for a replica whose two TP groups share
                        * a node (0 bw: none can) ... */
  double *xbw, *xlat;  /* ... and for one whose groups lie on two nodes (0 bw: none can);
                        * hbw is the larger of the two, hlat the smaller */
  unsigned char *chain;  /* [n_kind * n_kind] 1 if one node can hold a replica's TP groups
                        * of a stage of kind a, of the next (kind b) and of the one after
                        * (some kind): only then may both hand-offs of a stage of kind b
                        * that follows one of kind a stay inside a node for that replica */
  /* The worst replica (a stage of one class, whose replicas are all as slow, pays its
   * worst replica's hand-offs in its period; pattern_dp.c, mip_pattern.c): */
  unsigned char *crowd;  /* [n_kind * n_kind] 1 where not all dp replicas can chain after a
                        * stage of kind a through one of kind b: a node of class x holds at
                        * most per_node(x) / 3 replicas' groups of three consecutive stages,
                        * and the classes a and b share hold fewer than dp such triples */
  double *wbw;         /* [n_kind * n_kind] where no replica's hand-off from kind a to kind b
                        * can stay inside a node: the best link the replica on the most
                        * crowded node gets (some node holds ceil(dp / nodes) of a stage's
                        * groups, all crossing, their lanes sharing its interface: 7.11);
                        * 0 where that does not hold */
} hp_patterns;

/* The patterns of `shape`'s configuration (pp, tp, dp, mbs, gas, schedule). */
hp_err hp_patterns_build(const hp_problem *p, const hp_classes *cls, const hp_plan *shape,
                         hp_patterns *out, hp_diag *d);
/* The same with `split` 0: no spanning kind split into own and shared nodes (every own 0).
 * Fewer kinds, so a DP over them runs far faster (a run costs the square of the kinds:
 * Llama-2 140B on 768 GPUs, pp 32 tp 4 dp 6, 3 kinds against 6, 1.1 s against 30 s), and
 * every figure still a bound, only a looser one: the certificate tries it first
 * (pattern_pass.c). */
hp_err hp_patterns_build_split(const hp_problem *p, const hp_classes *cls, const hp_plan *shape,
                               int split, hp_patterns *out, hp_diag *d);
void hp_patterns_release(hp_patterns *pt);

/* A lower bound on e[s, r] for every replica r when stage s of kind a ends with layer
 * `last` and stage s + 1 has kind b (INFINITY where no placement has that pair). */
double hp_patterns_handoff(const hp_patterns *pt, int a, int b, int last);
/* The same bound split by where the replica's two TP groups lie: on one node (*intra) or
 * on two (*inter); INFINITY where no placement of the pair has that case. */
void hp_patterns_handoff_split(const hp_patterns *pt, int a, int b, int last, double *intra,
                               double *inter);
/* The hand-off of the replica on the most crowded node (hp_patterns.wbw) from a stage of
 * kind a ending with layer `last` to one of kind b: no larger than what that replica pays;
 * 0 where wbw is 0. */
double hp_patterns_handoff_worst(const hp_patterns *pt, int a, int b, int last);
/* Whether kind k holds one class (its replicas all as slow: their worst pays). */
int hp_patterns_one_class(const hp_patterns *pt, int k);

/* The slowest class of kind k's mask over the whole model (the sum of its layer times, in
 * layer order; of two alike, the higher index): the rank the count of ranks gives a stage
 * of the kind where no ranks merge (pattern_dp.c), and the class of the slot that the
 * slow replica holds there (the pattern DP and the pattern MIP). */
int hp_patterns_top_class(const hp_patterns *pt, int k);

/* Saved activations and working memory of layer l per micro-batch, the least over every
 * device type of the cluster (measured where the profile has them, else the formula:
 * hp_costs_layer_act/work). A device of any type holds at least this much, so memory
 * checked with them never over-counts: sound for a bound whatever the placement
 * (cost-model.md 1, 7.20). */
double hp_patterns_least_act(const hp_costs *tab, int l);
double hp_patterns_least_work(const hp_costs *tab, int l);

/* The first kind with that class mask and single flag, or -1 (a split spanning kind has
 * two: its own nodes, then a shared one; hp_stage_kind.own tells them apart). */
int hp_patterns_find(const hp_patterns *pt, unsigned mask, int single);

#endif
