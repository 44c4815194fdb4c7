/* model.c -- model, cluster and profile lifetimes and small model sums. */
#define _XOPEN_SOURCE 700   /* realpath */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

void *hp__calloc(size_t n, size_t sz)
{
  if (n == 0) n = 1;
  if (sz && n > (size_t)-1 / sz) return NULL;
  return calloc(n, sz);
}

char *hp__strdup(const char *s)
{
  char *r;
  size_t n;
  if (!s) return NULL;
  n = strlen(s) + 1;
  r = malloc(n);
  if (r) memcpy(r, s, n);
  return r;
}

char *hp__abs_path(const char *path)
{
  struct stat st;
  char *r;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return hp__strdup(path);
  r = realpath(path, NULL);
  return r ? r : hp__strdup(path);
}

const char *hp_schedule_name(hp_schedule s) { return s == HP_GPIPE ? "gpipe" : "1f1b"; }

int hp_schedule_parse(const char *s)
{
  if (!s) return -1;
  if (!strcmp(s, "1f1b")) return HP_1F1B;
  if (!strcmp(s, "gpipe")) return HP_GPIPE;
  return -1;
}

void hp_model_destroy(hp_model **pm)
{
  hp_model *m;
  if (!pm || !*pm) return;
  m = *pm;
  for (int l = 0; l < m->n_layers; l++) {
    free(m->layers[l].name);
    free(m->layers[l].kind);
  }
  free(m->layers);
  for (int k = 0; k < m->n_modules; k++) free(m->modules[k].name);
  free(m->modules);
  free(m->transformer);
  free(m->name);
  free(m->path);
  free(m);
  *pm = NULL;
}

double hp_model_total_params(const hp_model *m)
{
  double s = 0;
  for (int l = 0; l < m->n_layers; l++) s += m->layers[l].params;
  return s;
}

double hp_model_unique_params(const hp_model *m)
{
  return hp_model_total_params(m) - m->tied_params;
}

double hp_model_total_flops(const hp_model *m)
{
  double s = 0;
  for (int l = 0; l < m->n_layers; l++) s += m->layers[l].flops;
  return s;
}

void hp_cluster_destroy(hp_cluster **pc)
{
  hp_cluster *c;
  if (!pc || !*pc) return;
  c = *pc;
  for (int k = 0; k < c->n_types; k++) free(c->types[k].name);
  for (int n = 0; n < c->n_nodes; n++) free(c->nodes[n].name);
  free(c->types);
  free(c->nodes);
  free(c->dev_node);
  free(c->node_bw);
  free(c->node_lat);
  free(c->dev_bw);
  free(c->path);
  free(c->dev_lat);
  free(c->name);
  free(c);
  *pc = NULL;
}

void hp_profile_destroy(hp_profile **pp)
{
  hp_profile *p;
  if (!pp || !*pp) return;
  p = *pp;
  for (int i = 0; i < p->n_measures; i++) {
    free(p->measures[i].kind);
    free(p->measures[i].type_name);
  }
  free(p->measures);
  for (int i = 0; i < p->n_kinds; i++) free(p->kinds[i].kind);
  free(p->kinds);
  free(p->model);
  free(p->dev_bw);
  free(p->dev_lat);
  free(p->path);
  free(p->name);
  free(p);
  *pp = NULL;
}
