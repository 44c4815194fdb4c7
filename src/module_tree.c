/* module_tree.c -- a model's module tree (hp_problem.h, hp_module): the items of a node,
 * what the tree's readers (the JSON writer, SageMaker's partitioner) walk it by. */
#include "internal.h"

int hp_model_items(const hp_model *m, int node, hp_module_item *items)
{
  int first = node < 0 ? 0 : m->modules[node].first;
  int last = node < 0 ? m->n_layers : m->modules[node].last;
  int n = 0, next = node + 1;   /* pre-order: the node's descendants follow it */
  for (int l = first; l < last;) {
    /* the next child module of the node, in pre-order: the first descendant whose parent
     * is the node; the children are disjoint and in layer order */
    while (next < m->n_modules && m->modules[next].parent != node &&
           m->modules[next].first < last)
      next++;
    if (next < m->n_modules && m->modules[next].parent == node && m->modules[next].first == l) {
      items[n++] = (hp_module_item){ next, l, m->modules[next].last };
      l = m->modules[next].last;
      next++;
    } else {
      items[n++] = (hp_module_item){ -1, l, l + 1 };
      l++;
    }
  }
  return n;
}
