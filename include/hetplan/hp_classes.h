/* hp_classes.h -- node classes: nodes grouped so that searches over placements can count
 * TP groups per class instead of naming devices. Nodes are *interchangeable* when they
 * have the same type and GPU count and swapping them (device i for device i) changes no
 * bandwidth or latency; a class of such nodes is exact. Where there would be more classes
 * than a search can use, classes of one type are merged, and a merged class is inexact:
 * its figures are the best any member offers, so a bound built on them stays a bound. */
#ifndef HP_CLASSES_H
#define HP_CLASSES_H

#include "hp_problem.h"

typedef struct hp_node_class {
  int n_nodes;
  int *nodes;          /* its nodes, ascending */
  int exact;           /* every member interchangeable with every other */
  int type;            /* the members' device type (classes never mix types) */
  int gpus_min, gpus_max;   /* GPUs per member node */
  /* links inside one member node (0 and INFINITY when no member has two GPUs) */
  double intra_bw_min, intra_bw_max;   /* bytes/s: weakest and strongest pair */
  double intra_lat_min;                 /* seconds */
} hp_node_class;

typedef struct hp_classes {
  int n;
  hp_node_class *cls;
  int *node_class;     /* [n_nodes] class of each node */
  /* best link between a node of class a and a different node of class b: the strongest
   * device pair and the least latency; 0 and INFINITY where no such pair exists (a class
   * of one node with itself) */
  double *inter_bw;    /* [n * n] */
  double *inter_lat;   /* [n * n] */
} hp_classes;

/* Groups the problem's nodes into classes: exact classes first; if there are more than
 * `max_classes`, classes of the same type are merged (inexact) until at most that many
 * remain or one class is left per type. */
hp_err hp_classes_build(const hp_problem *p, int max_classes, hp_classes *out, hp_diag *d);
void hp_classes_release(hp_classes *c);

/* The best that k GPUs of one node of class c can have among themselves: the largest,
 * over k-subsets of a member node, of the subset's weakest pair's bandwidth, and the
 * least of its largest pair latency (INFINITY and 0 when k < 2; when a node has too
 * many GPUs to enumerate its subsets, the best pair and the least latency, which bound
 * them). A TP group of degree k, or the devices of one replica group inside a node, has
 * no better links. */
void hp_classes_subset_links(const hp_problem *p, const hp_classes *c, int cls, int k,
                             double *bw, double *lat);

/* TP groups of degree tp in class c (sum over its nodes whose GPU count tp divides of
 * gpus / tp: a plan uses no other node). */
int hp_classes_groups(const hp_problem *p, const hp_classes *c, int cls, int tp);

#endif
