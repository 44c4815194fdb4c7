/* bound_probe.h -- the certificate's two bounds of one configuration, for the tests that
 * hold them against brute force: the pattern DP's and the pattern MIP's (with the plan its
 * solution decodes to). */
#ifndef HP_BOUND_PROBE_H
#define HP_BOUND_PROBE_H

#include "../../solvers/search.h"

/* The pattern DP's bound of configuration c with `exact` (1, 0 or -1, hp_pat_opts),
 * `frontier` points per frontier (0: the default) and `seconds` (INFINITY: none); NAN
 * when it did not run to the end. *partial (may be NULL) gets whether its price search
 * was cut short. */
double bp_dp_bound(const hp_problem *p, const hp_classes *cl, const hp_config *c, int exact,
                   int frontier, double seconds, int *partial);
/* The same, with *counted (may be NULL) set where the bound counted groups exactly (with
 * three classes or more: the count per class, pattern_dp.c). */
double bp_dp_bound_counted(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                           int exact, int frontier, double seconds, int *partial, int *counted);
/* The default bound (exact -1) with the count of groups `count` forced (HP_PAT_COUNT_*,
 * three classes or more); *sides gets hp_pat_result.sides (1 two sides, 2 ranks), or -1
 * where the count per class (exact) bound it. */
double bp_dp_bound_count(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                         int count, int *sides);
/* The default bound without the chained figures (every kind's bdp_chain 0, hp_pattern.h):
 * what the DP gave before it knew that a stage whose replicas all keep both hand-offs
 * inside a node has slower replica groups. */
double bp_dp_bound_unchained(const hp_problem *p, const hp_classes *cl, const hp_config *c);
/* The default bound without the couples (hp_pat_opts.no_couples, pattern_dp.c): what the
 * DP gave before it counted the stages that span a class of two groups a node; *counted
 * (may be NULL) as bp_dp_bound_counted's. */
double bp_dp_bound_no_couples(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                              int *counted);

/* bp_dp_bound_count's bound without the slow replica (hp_pat_opts.no_slow, pattern_dp.c):
 * what the count of ranks gave before it knew that some replica may hold the slowest
 * class of every stage. */
double bp_dp_bound_count_no_slow(const hp_problem *p, const hp_classes *cl, const hp_config *c,
                                 int count, int *sides);

/* The pattern MIP of configuration c solved by `be` to the end, in this process: its
 * optimum (INFINITY if it has no point; NAN if the backend did not finish or failed), and
 * in *decoded the evaluator's time of the plan its solution decodes to (INFINITY if it
 * decodes to none that fits). */
double bp_mip_optimum(hp_mip_backend be, const hp_problem *p, const hp_classes *cl,
                      const hp_config *c, double *decoded);
/* The same, solved in a child process, as under the command line's stop flag
 * (mip_child.c): a backend that aborts is the solve's error (NAN), not the test's end. Not
 * the tests' default: a fork per solve took the 200-instance MIP test past its limit under
 * AddressSanitizer. */
double bp_mip_optimum_in_child(hp_mip_backend be, const hp_problem *p, const hp_classes *cl,
                               const hp_config *c, double *decoded);

/* Runs the certificate solver `name` ("glpk", "cbc") on p within `seconds`: 1 with its
 * result in *r (release it) and the evaluator's time of its plan in *plan_time (INFINITY:
 * no plan that fits); 0 when this build lacks it (nothing to release), -1 when it failed
 * (the message printed with `what`). */
int bp_certify(const char *name, const hp_problem *p, double seconds, const char *what,
               hp_result *r, double *plan_time);

#endif
