/* random_instance.h -- tiny random heterogeneous instances and brute force over every plan,
 * for the tests of bounds: mixed device kinds and nodes, node-level links or a device
 * bandwidth matrix, single-point profiles used below their micro-batch, binding memory,
 * gradients wider than parameters, both schedules; and the fields of cost model 1.2
 * (sequence parallelism, overlapped gradient sync, a job's sharding list, uniform
 * sharding, idle devices, slices, non-checkpointable layers, update bytes, memory
 * bandwidth, measured activation and working memory). */
#ifndef HP_RANDOM_INSTANCE_H
#define HP_RANDOM_INSTANCE_H

#include "../../solvers/search.h"

/* Instance number `seed` (deterministic); its description (for failure messages) goes
 * to `what`. At most 4 devices and 4 layers. The base instance of a seed (model,
 * cluster, profile times, gbs, schedule) is drawn from one random stream and the 1.2
 * fields from another, so the figures of seeds drawn before 1.2 are unchanged. */
hp_problem *ri_problem(unsigned long seed, char *what, size_t n_what);

/* Instance number `seed` of another family (its own streams; ri_problem's instances do not
 * change): three or four device types, each its own peak, efficiency, memory and memory
 * bandwidth, on 3 to 6 devices in nodes of 1, 2 or 4 GPUs (three nodes or more, so three
 * kinds or more are present; two node sizes where the count allows), with node figures
 * only, links between some node pairs, or a device bandwidth matrix (a third each,
 * sometimes asymmetric, sometimes with latencies); 2 to 5 layers (fewer on more
 * devices, so that ri_brute_all stays well under 0.2 s); binding memory on a third; both
 * schedules; a profile at one or two micro-batch sizes on a third, else FLOP times; and
 * every 1.2 field as ri_problem draws them, with middle layers sometimes not
 * checkpointable too. */
hp_problem *ri_problem_kinds(unsigned long seed, char *what, size_t n_what);

/* Minimum evaluator time over every plan of configuration c (cost-model.md 5): every
 * placement (an injection of the slots into the devices, TP groups inside one node, tp
 * dividing the GPU count of every node used; with pp * tp * dp < D, which only a job with
 * idle_devices allows, every choice of the devices used), partition, per-stage recompute,
 * per-layer sharding mode from the job's list (one mode for all under
 * uniform_sharding) and, per zdp layer, slices 1, 2, .., max_slices. INFINITY if none
 * fits or the configuration has no plan. */
double ri_brute_config(const hp_problem *p, const hp_config *c);

/* Narrows an instance's job to the space the certificate searches (hp__cert_scope): modes
 * {dp, zdp} ({dp} where the job allowed dp alone), no slices, no idle devices; the other
 * 1.2 fields stay. For the tests of bounds, whose brute force then ranges over the same
 * space. */
void ri_cert_scope(hp_problem *p);

/* The same over every configuration (pp, tp, dp, mbs) of the space, idle devices
 * included where the job allows them: the global optimum, INFINITY if nothing fits.
 * *n_configs (may be NULL) gets the number of configurations tried. */
double ri_brute_all(const hp_problem *p, int *n_configs);

#endif
