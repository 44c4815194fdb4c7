/* random_instance.h -- tiny random heterogeneous instances and brute force over every plan,
 * for the tests of bounds: mixed device kinds and nodes, node-level links or a device
 * bandwidth matrix, single-point profiles used below their micro-batch, binding memory,
 * gradients wider than parameters, both schedules. */
#ifndef HP_RANDOM_INSTANCE_H
#define HP_RANDOM_INSTANCE_H

#include "../../solvers/search.h"

/* Instance number `seed` (deterministic); its description (for failure messages) goes
 * to `what`. */
hp_problem *ri_problem(unsigned long seed, char *what, size_t n_what);

/* Minimum evaluator time over every plan of configuration c: every placement (device
 * permutation with TP groups inside nodes), partition, per-stage recompute and per-layer
 * sharding. INFINITY if none fits. */
double ri_brute_config(const hp_problem *p, const hp_config *c);

#endif
