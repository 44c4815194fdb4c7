/* mip.c -- the solver-neutral MIP: growth, feasibility check, and the CPLEX LP and free
 * MPS writers (both read by glpsol and cbc). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stdio.h>

#include "mip_internal.h"

hp_err hp_mip_create(hp_mip **out, hp_diag *d)
{
  *out = hp__calloc(1, sizeof **out);
  if (!*out) return hp_fail(d, HP_NOMEM, "out of memory for a MIP");
  (*out)->obj_scale = 1;
  return HP_OK;
}

void hp_mip_destroy(hp_mip **pm)
{
  if (!pm || !*pm) return;
  free((*pm)->cols);
  free((*pm)->rows);
  free((*pm)->idx);
  free((*pm)->val);
  free(*pm);
  *pm = NULL;
}

static int grow(void **p, int *cap, int need, size_t sz)
{
  if (need <= *cap) return 0;
  int ncap = *cap ? *cap : 256;
  while (ncap < need) ncap *= 2;
  void *np = realloc(*p, (size_t)ncap * sz);
  if (!np) return -1;
  *p = np;
  *cap = ncap;
  return 0;
}

int hp_mip_add_col(hp_mip *m, const char *name, double lb, double ub, int integer, double obj)
{
  if (m->failed || grow((void **)&m->cols, &m->cap_cols, m->n_cols + 1, sizeof *m->cols)) {
    m->failed = 1;
    return -1;
  }
  hp_mip_col *c = &m->cols[m->n_cols];
  snprintf(c->name, sizeof c->name, "%s", name);
  c->lb = lb;
  c->ub = ub;
  c->integer = integer;
  c->obj = obj;
  return m->n_cols++;
}

/* Room for `need` entries in both entry arrays. */
static int grow_nz(hp_mip *m, int need)
{
  if (need <= m->cap_nz) return 0;
  int ncap = m->cap_nz ? m->cap_nz : 1024;
  while (ncap < need) ncap *= 2;
  int *ni = realloc(m->idx, (size_t)ncap * sizeof *ni);
  if (!ni) return -1;
  m->idx = ni;
  double *nv = realloc(m->val, (size_t)ncap * sizeof *nv);
  if (!nv) return -1;
  m->val = nv;
  m->cap_nz = ncap;
  return 0;
}

int hp_mip_add_row(hp_mip *m, const char *name, int n, const int *idx, const double *val,
                   char sense, double rhs)
{
  if (m->failed || grow((void **)&m->rows, &m->cap_rows, m->n_rows + 1, sizeof *m->rows) ||
      grow_nz(m, m->n_nz + n)) {
    m->failed = 1;
    return -1;
  }
  hp_mip_row *r = &m->rows[m->n_rows];
  snprintf(r->name, sizeof r->name, "%s", name);
  r->sense = sense;
  r->rhs = rhs;
  r->start = m->n_nz;
  r->n = 0;
  for (int k = 0; k < n; k++) {
    int j;
    if (val[k] == 0) continue;
    for (j = r->start; j < r->start + r->n; j++)
      if (m->idx[j] == idx[k]) break;
    if (j < r->start + r->n) {
      m->val[j] += val[k];
    } else {
      m->idx[m->n_nz] = idx[k];
      m->val[m->n_nz] = val[k];
      m->n_nz++;
      r->n++;
    }
  }
  return m->n_rows++;
}

double hp_mip_objective(const hp_mip *m, const double *x)
{
  double v = 0;
  for (int j = 0; j < m->n_cols; j++) v += m->cols[j].obj * x[j];
  return v;
}

int hp_mip_check(const hp_mip *m, const double *x, double tol, char *why, size_t n_why)
{
  for (int j = 0; j < m->n_cols; j++) {
    const hp_mip_col *c = &m->cols[j];
    if (x[j] < c->lb - tol || x[j] > c->ub + tol) {
      snprintf(why, n_why, "column %s = %g outside [%g, %g]", c->name, x[j], c->lb, c->ub);
      return 0;
    }
    if (c->integer && fabs(x[j] - round(x[j])) > tol) {
      snprintf(why, n_why, "column %s = %g is not integral", c->name, x[j]);
      return 0;
    }
  }
  for (int i = 0; i < m->n_rows; i++) {
    const hp_mip_row *r = &m->rows[i];
    double act = 0, scale = fabs(r->rhs);
    for (int k = r->start; k < r->start + r->n; k++) {
      double t = m->val[k] * x[m->idx[k]];
      act += t;
      if (fabs(t) > scale) scale = fabs(t);
    }
    double lim = tol * (1 + scale);
    if ((r->sense == 'L' && act > r->rhs + lim) || (r->sense == 'G' && act < r->rhs - lim) ||
        (r->sense == 'E' && fabs(act - r->rhs) > lim)) {
      snprintf(why, n_why, "row %s: %.10g %s %.10g", r->name, act,
               r->sense == 'L' ? "<=" : r->sense == 'G' ? ">=" : "=", r->rhs);
      return 0;
    }
  }
  return 1;
}

static hp_err finish(hp_sb *b, char **out, hp_diag *d)
{
  if (b->failed) {
    free(b->s);
    return hp_fail(d, HP_NOMEM, "out of memory writing the MIP");
  }
  *out = b->s;
  return HP_OK;
}

/* CPLEX LP: long lines are wrapped (glpsol reads lines of at most 255 characters). */
hp_err hp_mip_write_lp(const hp_mip *m, char **out, hp_diag *d)
{
  hp_sb b = {0};
  int col = 0;
  hp__sb_printf(&b, "\\ hetplan MIP: %d columns, %d rows\nMinimize\n obj:", m->n_cols, m->n_rows);
  for (int j = 0; j < m->n_cols; j++)
    if (m->cols[j].obj != 0) {
      hp__sb_printf(&b, " %+.17g %s", m->cols[j].obj, m->cols[j].name);
      if (++col % 4 == 0) hp__sb_printf(&b, "\n ");
    }
  if (col == 0) hp__sb_printf(&b, " 0 %s", m->n_cols ? m->cols[0].name : "x");
  hp__sb_printf(&b, "\nSubject To\n");
  for (int i = 0; i < m->n_rows; i++) {
    const hp_mip_row *r = &m->rows[i];
    hp__sb_printf(&b, " %s:", r->name);
    for (int k = 0; k < r->n; k++) {
      hp__sb_printf(&b, " %+.17g %s", m->val[r->start + k], m->cols[m->idx[r->start + k]].name);
      if ((k + 1) % 4 == 0) hp__sb_printf(&b, "\n ");
    }
    if (r->n == 0) hp__sb_printf(&b, " 0 %s", m->cols[0].name);
    hp__sb_printf(&b, " %s %.17g\n", r->sense == 'L' ? "<=" : r->sense == 'G' ? ">=" : "=", r->rhs);
  }
  hp__sb_printf(&b, "Bounds\n");
  for (int j = 0; j < m->n_cols; j++) {
    const hp_mip_col *c = &m->cols[j];
    if (isinf(c->ub)) hp__sb_printf(&b, " %s >= %.17g\n", c->name, c->lb);
    else hp__sb_printf(&b, " %.17g <= %s <= %.17g\n", c->lb, c->name, c->ub);
  }
  hp__sb_printf(&b, "General\n");
  for (int j = 0, k = 0; j < m->n_cols; j++)
    if (m->cols[j].integer) hp__sb_printf(&b, " %s%s", m->cols[j].name, ++k % 8 == 0 ? "\n" : "");
  hp__sb_printf(&b, "\nEnd\n");
  return finish(&b, out, d);
}

/* Free MPS. Integer columns sit between MARKER lines; every bound is written. */
hp_err hp_mip_write_mps(const hp_mip *m, char **out, hp_diag *d)
{
  hp_sb b = {0};
  int *cnt = hp__calloc((size_t)m->n_cols + 1, sizeof *cnt), *pos = NULL, *rowof = NULL;
  double *cv = NULL;
  if (!cnt) return hp_fail(d, HP_NOMEM, "out of memory writing the MIP");
  /* the matrix by columns */
  for (int k = 0; k < m->n_nz; k++) cnt[m->idx[k] + 1]++;
  for (int j = 0; j < m->n_cols; j++) cnt[j + 1] += cnt[j];
  pos = hp__calloc((size_t)m->n_cols + 1, sizeof *pos);
  rowof = hp__calloc((size_t)m->n_nz + 1, sizeof *rowof);
  cv = hp__calloc((size_t)m->n_nz + 1, sizeof *cv);
  if (!pos || !rowof || !cv) {
    free(cnt); free(pos); free(rowof); free(cv);
    return hp_fail(d, HP_NOMEM, "out of memory writing the MIP");
  }
  memcpy(pos, cnt, ((size_t)m->n_cols + 1) * sizeof *pos);
  for (int i = 0; i < m->n_rows; i++)
    for (int k = m->rows[i].start; k < m->rows[i].start + m->rows[i].n; k++) {
      int at = pos[m->idx[k]]++;
      rowof[at] = i;
      cv[at] = m->val[k];
    }
  hp__sb_printf(&b, "NAME hetplan\nROWS\n N obj\n");
  for (int i = 0; i < m->n_rows; i++) hp__sb_printf(&b, " %c %s\n", m->rows[i].sense, m->rows[i].name);
  hp__sb_printf(&b, "COLUMNS\n");
  int in_int = 0;
  for (int j = 0; j < m->n_cols; j++) {
    const hp_mip_col *c = &m->cols[j];
    if (c->integer != in_int) {
      hp__sb_printf(&b, " M%d 'MARKER' '%s'\n", j, c->integer ? "INTORG" : "INTEND");
      in_int = c->integer;
    }
    if (c->obj != 0) hp__sb_printf(&b, " %s obj %.17g\n", c->name, c->obj);
    for (int k = cnt[j]; k < cnt[j + 1]; k++)
      hp__sb_printf(&b, " %s %s %.17g\n", c->name, m->rows[rowof[k]].name, cv[k]);
    if (c->obj == 0 && cnt[j] == cnt[j + 1]) hp__sb_printf(&b, " %s obj 0\n", c->name);
  }
  if (in_int) hp__sb_printf(&b, " M%d 'MARKER' 'INTEND'\n", m->n_cols);
  hp__sb_printf(&b, "RHS\n");
  for (int i = 0; i < m->n_rows; i++)
    if (m->rows[i].rhs != 0) hp__sb_printf(&b, " RHS %s %.17g\n", m->rows[i].name, m->rows[i].rhs);
  hp__sb_printf(&b, "BOUNDS\n");
  for (int j = 0; j < m->n_cols; j++) {
    const hp_mip_col *c = &m->cols[j];
    if (c->lb == c->ub) {
      hp__sb_printf(&b, " FX BND %s %.17g\n", c->name, c->lb);
      continue;
    }
    hp__sb_printf(&b, " LO BND %s %.17g\n", c->name, c->lb);
    if (isinf(c->ub)) hp__sb_printf(&b, " PL BND %s\n", c->name);
    else hp__sb_printf(&b, " UP BND %s %.17g\n", c->name, c->ub);
  }
  hp__sb_printf(&b, "ENDATA\n");
  free(cnt);
  free(pos);
  free(rowof);
  free(cv);
  return finish(&b, out, d);
}

void hp__rb_add(rowb *r, int c, double v)
{
  if (c < 0 || v == 0) return;
  if (r->n == r->cap) {
    int ncap = r->cap ? r->cap * 2 : 64;
    int *ni = realloc(r->idx, (size_t)ncap * sizeof *ni);
    double *nv = ni ? realloc(r->val, (size_t)ncap * sizeof *nv) : NULL;
    if (!ni || !nv) { if (ni) r->idx = ni; r->failed = 1; return; }
    r->idx = ni;
    r->val = nv;
    r->cap = ncap;
  }
  r->idx[r->n] = c;
  r->val[r->n++] = v;
}

void hp__rb_emit(hp_mip *m, rowb *r, char sense, double rhs, const char *fmt, ...)
{
  char name[32];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  if (r->failed) m->failed = 1;
  else hp_mip_add_row(m, name, r->n, r->idx, r->val, sense, rhs);
  r->n = 0;
}

int hp__mip_col(hp_mip *m, double lb, double ub, int integer, double obj, const char *fmt, ...)
{
  char name[32];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  return hp_mip_add_col(m, name, lb, ub, integer, obj);
}
