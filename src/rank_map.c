/* rank_map.c -- which global rank runs on which node and GPU so that a framework's rank
 * order puts every TP group, stage and replica where the plan placed it (hp_launch.h).
 * One rank per slot: a plan that leaves devices idle (cost-model.md 7.19) has a world of
 * pp * dp * tp ranks, and a node none of its slots names is not in the launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

const char *hp_rank_order_name(hp_rank_order o)
{
  return o == HP_ORDER_TP_PP_DP ? "tp-pp-dp" : "tp-dp-pp";
}

void hp_rank_map_release(hp_rank_map *m)
{
  if (!m) return;
  free(m->device);
  free(m->gpu);
  free(m->node);
  free(m->first_rank);
  free(m->count);
  memset(m, 0, sizeof *m);
}

hp_err hp_rank_map_build(const hp_problem *prob, const hp_plan *plan, hp_rank_order order,
                         hp_rank_map *m, hp_diag *d)
{
  const hp_cluster *c = prob->cluster;
  int D = plan->pp * plan->dp * plan->tp, *seen;
  memset(m, 0, sizeof *m);
  m->order = order;
  m->n_ranks = D;
  m->device = hp__calloc((size_t)(D > 0 ? D : 1), sizeof *m->device);
  m->gpu = hp__calloc((size_t)(D > 0 ? D : 1), sizeof *m->gpu);
  m->node = hp__calloc((size_t)c->n_nodes, sizeof *m->node);
  m->first_rank = hp__calloc((size_t)c->n_nodes, sizeof *m->first_rank);
  m->count = hp__calloc((size_t)c->n_nodes, sizeof *m->count);
  seen = hp__calloc((size_t)c->n_nodes, sizeof *seen);
  if (!m->device || !m->gpu || !m->node || !m->first_rank || !m->count || !seen) {
    free(seen);
    hp_rank_map_release(m);
    return hp_fail(d, HP_NOMEM, "out of memory");
  }
  for (int s = 0; s < plan->pp; s++)
    for (int r = 0; r < plan->dp; r++)
      for (int j = 0; j < plan->tp; j++) {
        int k = hp_rank_of_slot(plan, order, s, r, j), dev = plan->dev[HP_SLOT(plan, s, r, j)];
        m->device[k] = dev;
        m->gpu[k] = dev - c->nodes[c->dev_node[dev]].first;
      }
  /* nodes in the order their first rank comes; a node seen again after another is split */
  m->contiguous = m->ascending = 1;
  for (int k = 0; k < D; k++) {
    int n = c->dev_node[m->device[k]];
    if (k > 0 && n == c->dev_node[m->device[k - 1]]) {
      m->count[m->n_nodes - 1]++;
      if (m->gpu[k] < m->gpu[k - 1]) m->ascending = 0;
      continue;
    }
    if (seen[n]) {
      char name[128];
      if (m->contiguous)   /* the name quoted: the text goes into scripts' comments */
        snprintf(m->why, sizeof m->why, "node %s holds ranks %d and %d but not all ranks "
                 "between (under the %s order)", hp__sh_quote_buf(name, sizeof name, c->nodes[n].name),
                 m->first_rank[seen[n] - 1], k, hp_rank_order_name(order));
      m->contiguous = m->ascending = 0;
      continue;
    }
    seen[n] = m->n_nodes + 1;
    m->node[m->n_nodes] = n;
    m->first_rank[m->n_nodes] = k;
    m->count[m->n_nodes] = 1;
    m->n_nodes++;
  }
  free(seen);
  return HP_OK;
}

hp_err hp_rank_map_choose(const hp_problem *prob, const hp_plan *plan, unsigned orders,
                          hp_rank_map *map, hp_diag *d)
{
  hp_err err;
  int first = -1;
  for (int o = HP_ORDER_TP_DP_PP; o <= HP_ORDER_TP_PP_DP; o++) {
    if (!(orders & 1u << o)) continue;
    if (first < 0) first = o;
    if ((err = hp_rank_map_build(prob, plan, (hp_rank_order)o, map, d))) return err;
    if (map->contiguous) return HP_OK;
    hp_rank_map_release(map);
  }
  return hp_rank_map_build(prob, plan, first < 0 ? HP_ORDER_TP_DP_PP : (hp_rank_order)first, map, d);
}
