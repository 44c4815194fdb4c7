/* solver_dp.c -- `dp`, the default: phases 1 and 2 of the search driver
 * (search_driver.c). For every configuration (pp, tp, dp, mbs) of the space, the exact
 * layer DP of layer_dp.c (stage boundaries, per-stage recompute and sharding under the
 * memory limit) under the two fixed placements (Megatron order and its stage mirror); the
 * baselines' plans; then the pattern DP of every configuration (pattern_dp.c), whose best
 * pattern sequences decode into placements that mix device kinds stage by stage, each
 * split by the layer DP again. Every plan is scored by the evaluator; the best fitting
 * one wins. Its pattern bounds are not claimed: a search stopped by its time limit, or a
 * cutoff, leaves them partial (glpk and cbc claim them). It does not share its search:
 * it runs in the solo team whatever lim->team is (sa runs it inside the certificate's
 * annealing, on one member of the team alone). */
#include "search.h"

static const hp_search_kind dp_kind = { "DP", NULL };

static hp_err dp_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                       hp_result *out, hp_diag *d)
{
  (void)start;
  return hp__search(prob, lim, NULL, &dp_kind, out, d);
}

const hp_solver hp_solver_dp = {
  .name = "dp",
  .desc = "exact layer DP per configuration under fixed placements, the baselines' plans, and "
          "pattern-DP placements that mix device kinds per stage",
  .flags = 0,
  .solve = dp_solve,
};
