/* test_cost_ring.c -- the ring factors of the cost tables (hp_cost.h): their values, and
 * that the primitives written with them round exactly as the formulas written out did
 * (2 (n-1)/n as twice (n-1)/n; the plans' figures must not move in the last digit). */
#include "harness.h"
#include "fixtures.h"

TEST(ring_factors_are_the_ring_collectives_shares)
{
  CHECK(hp_cost_ring_share(1) == 0);
  CHECK(hp_cost_ring_allreduce(1) == 0);
  CHECK(hp_cost_ring_latency(1, 5e-6) == 0);
  CHECK(hp_cost_ring_share(4) == 0.75);
  CHECK(hp_cost_ring_allreduce(4) == 1.5);
  CHECK(hp_cost_ring_latency(4, 5e-6) == 6 * 5e-6);
  /* reduction of dp 4 over 1e9 B/s, 1 us: all-reduce 2e9 B, reduce-scatter 4e9 B */
  CHECK_NEAR(hp_cost_reduce(2e9, 4e9, 4, 1e9, 1e-6), (1.5 * 2e9 + 0.75 * 4e9) / 1e9 + 6e-6, 1e-15);
  CHECK_NEAR(hp_cost_gather(4e9, 0, 1, 4, 1e9, 1e-6), 6, 1e-15);
  /* two layers in 4 and 2 slices: 3 + 1 extra slices, each 2 (dp-1) latencies */
  CHECK_NEAR(hp_cost_gather(4e9, 4, 1, 4, 1e9, 1e-6), 6 + 2 * 4 * 3 * 1e-6, 1e-15);
  /* per micro-batch scatter: 0.75 x 4e9 / 1e9 + 3 latencies, once per stage */
  CHECK_NEAR(hp_cost_grad_scatter(4e9, 1, 4, 1e9, 1e-6), 3 + 3e-6, 1e-15);
  CHECK(hp_cost_grad_scatter(4e9, 0, 4, 1e9, 1e-6) == 0);
  CHECK(hp_cost_grad_scatter(4e9, 1, 1, 1e9, 1e-6) == 0);
  /* the weights' all-gather after the step carries no latency term */
  CHECK_NEAR(hp_cost_allgather(4e9, 4, 1e9), 3, 1e-15);
}

TEST(ring_primitives_round_as_the_formulas_written_out)
{
  /* bit for bit, for every group size a cluster may have */
  for (int n = 1; n <= 4096; n++) {
    volatile double G = 3.3e8 + n, Gz = 1.7e8 / n, bw = 2.5e10 / n, lat = 3.7e-6 * n;
    double f = (double)(n - 1) / n;
    if (hp_cost_ring_allreduce(n) != 2.0 * (n - 1) / n) { harness_fail(__FILE__, __LINE__, "allreduce(%d)", n); return; }
    if (hp_cost_ring_share(n) != f) { harness_fail(__FILE__, __LINE__, "share(%d)", n); return; }
    if (n > 1 && hp_cost_gather(G, 0, 1, n, bw, lat) != 2.0 * (double)(n - 1) / n * G / bw) {
      harness_fail(__FILE__, __LINE__, "gather(%d)", n);
      return;
    }
    if (n > 1 && hp_cost_reduce(G, Gz, n, bw, lat) != (2.0 * f * G + f * Gz) / bw + 2.0 * (n - 1) * lat) {
      harness_fail(__FILE__, __LINE__, "sync(%d)", n);
      return;
    }
  }
}
