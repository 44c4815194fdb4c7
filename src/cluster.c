/* cluster.c -- device numbering and the node-pair bandwidth tables of a cluster
 * (formats.md: devices are numbered node by node in the order of `nodes`). */
#include <stdlib.h>

#include "internal.h"

hp_err hp_cluster_finish(hp_cluster *c, double inter_bw, double inter_lat, hp_diag *d)
{
  int dev = 0, nn = c->n_nodes;
  for (int n = 0; n < nn; n++) {
    c->nodes[n].first = dev;
    dev += c->nodes[n].gpus;
  }
  c->n_devices = dev;
  free(c->dev_node);
  free(c->node_bw);
  free(c->node_lat);
  c->dev_node = hp__calloc((size_t)dev, sizeof *c->dev_node);
  c->node_bw = hp__calloc((size_t)nn * (size_t)nn, sizeof *c->node_bw);
  c->node_lat = hp__calloc((size_t)nn * (size_t)nn, sizeof *c->node_lat);
  if (!c->dev_node || !c->node_bw || !c->node_lat)
    return hp_fail(d, HP_NOMEM, "out of memory for a cluster of %d devices", dev);
  for (int n = 0; n < nn; n++)
    for (int i = 0; i < c->nodes[n].gpus; i++) c->dev_node[c->nodes[n].first + i] = n;
  for (int a = 0; a < nn; a++)
    for (int b = 0; b < nn; b++) {
      size_t ix = (size_t)a * (size_t)nn + (size_t)b;
      if (a == b) {
        c->node_bw[ix] = c->nodes[a].intra_bw;
        c->node_lat[ix] = c->nodes[a].intra_lat;
      } else {
        c->node_bw[ix] = inter_bw > 0 ? inter_bw : 0;
        c->node_lat[ix] = inter_lat;
      }
    }
  return HP_OK;
}
