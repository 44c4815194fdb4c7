/* hp_migrate.h -- what moving from one plan to another costs when the cluster changes
 * (src/migrate.c, docs/replan.md): which layers' weights and optimizer states each
 * device of the new plan must receive, from which device of the old plan (or from a
 * checkpoint when no surviving device holds them), and how long the transfers take at
 * the new problem's bandwidths. Core: it needs no solver. */
#ifndef HP_MIGRATE_H
#define HP_MIGRATE_H

#include "hp_plan.h"

/* Which part of a layer's persistent training state a move carries. Gradients are
 * transient (made again by the next backward pass) and never move. */
typedef enum {
  HP_MOVE_WEIGHTS = 0,    /* param_bytes per parameter */
  HP_MOVE_OPTIMIZER = 1   /* opt_bytes = state_bytes - param_bytes - grad_bytes per parameter */
} hp_move_kind;

const char *hp_move_kind_name(int kind);   /* "weights", "optimizer" */

/* One transfer: a contiguous part of one layer's weights or optimizer state, from one
 * device to another. */
typedef struct hp_move {
  int layer;
  int kind;               /* hp_move_kind */
  int from;               /* the sender, a device of the new problem (a device that survives
                           * from the old cluster); -1: read from a checkpoint */
  int to;                 /* the receiver, a device of the new problem */
  double bytes;
  double seconds;         /* bytes / bw + lat between from and to in the new problem; a
                           * checkpoint read: bytes / storage_bw */
} hp_move;

/* The migration from an old plan to a new one. Arrays are owned; release with
 * hp_migration_release. */
typedef struct hp_migration {
  int n_moves;
  hp_move *moves;         /* by receiver, then layer, then kind, in interval order */
  int n_layers, n_devices;   /* the model's layers, the new problem's devices */
  double moved_bytes;     /* every byte received, the checkpoint's included */
  double lost_bytes;      /* of those, the bytes no surviving device held (checkpoint) */
  double kept_bytes;      /* bytes the new plan needs that its device already held */
  double need_bytes;      /* the new plan's weights and optimizer state, all devices:
                           * kept_bytes + moved_bytes */
  double seconds;         /* the migration: the largest send or receive time of a device */
  int slowest_device;     /* whose send or receive time that is, -1 when nothing moves */
  double *send_seconds;   /* [n_devices] sum of the device's transfers out */
  double *recv_seconds;   /* [n_devices] sum of its transfers in (checkpoint reads too) */
  double *layer_need;     /* [n_layers * 2] per layer and kind (HP_MOVE_*): bytes needed */
  double *layer_kept;     /* [n_layers * 2] bytes already in place */
  double *layer_moved;    /* [n_layers * 2] bytes received */
} hp_migration;

void hp_migration_release(hp_migration *m);

/* The identity of devices across two clusters: (node name, GPU index within the node).
 * Fills old_to_new[d] ([old->n_devices]) with the device of `now` with the same node
 * name and GPU index, -1 when `now` has no such device. Returns how many survive. */
int hp_device_map(const hp_cluster *old, const hp_cluster *now, int *old_to_new);

/* The migration from `old_plan` (a plan for `old`) to `new_plan` (a plan for `now`, the
 * same model). A layer's state is cut as the interval [0, 1): TP rank j of a splittable
 * layer holds [j/tp, (j+1)/tp) (a layer TP does not divide: every rank holds [0, 1));
 * a sharded part (zero1, zero2: the optimizer state; zdp: weights and optimizer state;
 * dp > 1) is held by replica r as the r-th of dp equal parts of its rank's piece, an
 * unsharded part whole. Each device of the new plan receives what it needs less what the
 * same device (old_to_new) held in the old plan, every missing part from a surviving
 * holder (one on the receiver's node first, then the highest bandwidth to it, then the
 * lowest device id) or, when no surviving device holds it, from a checkpoint read at
 * `storage_bw` bytes/s (> 0). Intervals are exact integers over a common denominator, so
 * per layer and kind, need = kept + moved exactly up to the rounding of the products.
 * Time: each transfer (a move record) costs bytes / bw + lat between its devices; a
 * device sends one transfer at a time and receives one at a time, on full-duplex links,
 * so the migration takes the largest per-device sum of either. `m` is overwritten. */
hp_err hp_migrate(const hp_problem *old, const hp_plan *old_plan, const hp_problem *now,
                  const hp_plan *new_plan, const int *old_to_new, double storage_bw,
                  hp_migration *m, hp_diag *d);

/* The old plan's slot of every device of the old problem: slot_of[d] ([n_devices]) is
 * the index HP_SLOT(plan, s, r, j) of the slot that names d, -1 for an idle device. */
void hp_plan_slot_index(const hp_plan *plan, int n_devices, int *slot_of);

/* The bytes of slot (s, r, j) of new_plan that `old_dev` (a device of the old problem, -1:
 * none) held in old_plan (slot_of: hp_plan_slot_index of it): what hp_migrate counts as
 * kept when that device takes the slot. What solvers/replan.c relabels plans by. */
double hp_migrate_kept_on(const hp_problem *old, const hp_plan *old_plan, const int *slot_of,
                          const hp_plan *new_plan, int s, int r, int j, int old_dev);

#endif
