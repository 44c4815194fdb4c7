/* solver_glpk.c -- `glpk`: the certificate of the search driver (search_driver.c) with
 * GLPK's branch and cut solving its programs (formulation/). The only file that includes
 * glpk.h. GLPK's pitfalls (docs/toolchain notes): it does not check a start, so the start
 * is completed by an LP with its integer columns fixed and checked against the MIP here;
 * an LP relaxation the primal simplex calls infeasible is confirmed on the scaled
 * problem by the dual simplex (the primal one called a feasible relaxation infeasible);
 * the presolver is off and the LP relaxation is solved first (a presolved problem
 * misreads a start, and reported a false optimum on a relaxation); the best bound is read
 * inside the callback, the tree being gone after; misuse would abort the process, so
 * glp_error_hook jumps back. No state outlives a call: the jump buffer and the callback's
 * data live on the caller's stack, so two solves may run at once in two threads (GLPK
 * keeps its environment per thread). The thread's environment is freed at the end only
 * if this call created it: a host program that holds GLPK objects of its own keeps them,
 * and its terminal setting (its error hook, which GLPK cannot report, is removed). */
#include <float.h>
#include <math.h>
#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>

#include <glpk.h>

#include "search.h"

typedef struct glpk_cb {
  const double *start;    /* 1-based full start vector, or NULL */
  int start_given;
  double bound;           /* best bound seen */
  double cutoff;          /* stop once the bound reaches it */
  const volatile sig_atomic_t *stop;   /* lim->stop: the caller asks it to stop */
} glpk_cb;

/* Where GLPK's error hook jumps back to: one per call. */
typedef struct glpk_guard { jmp_buf jump; } glpk_guard;
static void on_glpk_error(void *info) { longjmp(((glpk_guard *)info)->jump, 1); }

static void callback(glp_tree *T, void *info)
{
  glpk_cb *cb = info;
  int node;
  if (cb->stop && *cb->stop) {
    glp_ios_terminate(T);
    return;
  }
  switch (glp_ios_reason(T)) {
  case GLP_IHEUR:
    if (cb->start && !cb->start_given) {
      cb->start_given = 1;
      glp_ios_heur_sol(T, cb->start);
    }
    break;
  case GLP_ISELECT: case GLP_IBINGO: case GLP_IROWGEN: case GLP_ICUTGEN:
    if ((node = glp_ios_best_node(T)) != 0) cb->bound = glp_ios_node_bound(T, node);
    if (cb->bound >= cb->cutoff) glp_ios_terminate(T);
    break;
  default:
    break;
  }
}

static glp_prob *load(const hp_mip *m)
{
  glp_prob *P = glp_create_prob();
  int *ind = malloc(((size_t)m->n_cols + 1) * sizeof *ind);
  double *val = malloc(((size_t)m->n_cols + 1) * sizeof *val);
  if (!ind || !val) { free(ind); free(val); glp_delete_prob(P); return NULL; }
  glp_set_obj_dir(P, GLP_MIN);
  glp_add_cols(P, m->n_cols);
  for (int j = 0; j < m->n_cols; j++) {
    const hp_mip_col *c = &m->cols[j];
    glp_set_col_name(P, j + 1, c->name);
    if (c->lb == c->ub) glp_set_col_bnds(P, j + 1, GLP_FX, c->lb, c->ub);
    else if (isinf(c->ub)) glp_set_col_bnds(P, j + 1, GLP_LO, c->lb, 0);
    else glp_set_col_bnds(P, j + 1, GLP_DB, c->lb, c->ub);
    if (c->integer) glp_set_col_kind(P, j + 1, GLP_IV);
    glp_set_obj_coef(P, j + 1, c->obj);
  }
  if (m->n_rows > 0) glp_add_rows(P, m->n_rows);
  for (int i = 0; i < m->n_rows; i++) {
    const hp_mip_row *r = &m->rows[i];
    int type = r->sense == 'L' ? GLP_UP : r->sense == 'G' ? GLP_LO : GLP_FX;
    glp_set_row_name(P, i + 1, r->name);
    glp_set_row_bnds(P, i + 1, type, r->rhs, r->rhs);
    for (int k = 0; k < r->n; k++) {
      ind[k + 1] = m->idx[r->start + k] + 1;
      val[k + 1] = m->val[r->start + k];
    }
    glp_set_mat_row(P, i + 1, r->n, ind, val);
  }
  free(ind);
  free(val);
  return P;
}

/* Completes a start whose integer columns are set: an LP with them fixed. Returns a
 * 1-based full vector checked against the MIP, or NULL if the start is not feasible. */
static double *complete_start(glp_prob *P, const hp_mip *m, const double *start)
{
  glp_smcp sp;
  double *full = NULL;
  char why[160];
  glp_init_smcp(&sp);
  sp.msg_lev = GLP_MSG_OFF;
  for (int j = 0; j < m->n_cols; j++)
    if (m->cols[j].integer) glp_set_col_bnds(P, j + 1, GLP_FX, start[j], start[j]);
  if (glp_simplex(P, &sp) == 0 && glp_get_status(P) == GLP_OPT &&
      (full = calloc((size_t)m->n_cols + 1, sizeof *full))) {
    for (int j = 0; j < m->n_cols; j++) full[j + 1] = glp_get_col_prim(P, j + 1);
    if (!hp_mip_check(m, full + 1, 1e-6, why, sizeof why)) {
      free(full);
      full = NULL;
    }
  }
  for (int j = 0; j < m->n_cols; j++) {   /* restore the integer columns' bounds */
    const hp_mip_col *c = &m->cols[j];
    if (!c->integer) continue;
    if (c->lb == c->ub) glp_set_col_bnds(P, j + 1, GLP_FX, c->lb, c->ub);
    else glp_set_col_bnds(P, j + 1, GLP_DB, c->lb, c->ub);
  }
  return full;
}

/* Hands the thread's GLPK environment back as the call found it: freed if the call
 * created it (with every object in it), else with the host's terminal setting. */
static void leave_env(int ours, int term)
{
  glp_error_hook(NULL, NULL);
  if (ours) glp_free_env();
  else glp_term_out(term);
}

/* The solve in this process (what the child of hp__mip_solve_stoppable runs). */
static hp_err solve_here(const hp_mip *m, const double *start, const hp_limits *lim,
                         double seconds, double cutoff, hp_mip_solution *out, hp_diag *d)
{
  glp_prob *volatile P = NULL;
  double *volatile full = NULL;
  glpk_cb cb = { NULL, 0, -INFINITY, cutoff, lim->stop };
  glp_iocp ip;
  glp_smcp sp;
  glpk_guard guard;
  int ret, ours, term;
  switch (glp_init_env()) {          /* 0: created here, 1: the host's (GLPK's codes) */
  case 0: ours = 1; break;
  case 1: ours = 0; break;
  case 2: return hp_fail(d, HP_NOMEM, "out of memory starting GLPK");
  default: return hp_fail(d, HP_BACKEND, "glpk: cannot start its environment");
  }
  term = glp_term_out(GLP_OFF);
  glp_error_hook(on_glpk_error, &guard);
  if (setjmp(guard.jump)) {
    /* GLPK may be left inconsistent: our problem goes with the environment, which a
     * host frees with its own objects */
    leave_env(ours, term);
    free(full);
    return hp_fail(d, HP_BACKEND, "glpk: internal error (the MIP was rejected)");
  }
  if (!(P = load(m))) {
    leave_env(ours, term);
    return hp_fail(d, HP_NOMEM, "out of memory loading the MIP into GLPK");
  }
  if (start) full = complete_start(P, m, start);
  cb.start = full;
  glp_init_smcp(&sp);
  sp.msg_lev = GLP_MSG_OFF;
  glp_init_iocp(&ip);
  ip.msg_lev = GLP_MSG_OFF;
  ip.cb_func = callback;
  ip.cb_info = &cb;
  ip.mip_gap = lim->gap;
  ip.tm_lim = seconds > 0 ? (int)(seconds * 1000 > 2e9 ? 2e9 : seconds * 1000) : INT_MAX;
  /* The presolver stays off: with a start it misreads the start, and on a relaxation
   * it once returned "optimal 1.0016" where the optimum is 0.9192 (glpsol and CBC on the
   * same model agreed on 0.9192). So the LP relaxation comes first. */
  ip.presolve = GLP_OFF;
  sp.tm_lim = ip.tm_lim;
  double t0 = hp__now();
  ret = glp_simplex(P, &sp);
  if (ret == 0 && glp_get_status(P) == GLP_NOFEAS) {
    /* "infeasible" is a claim a certificate may rest on: only where the problem, scaled
     * (as glpsol does by default), is infeasible to the dual simplex from the standard
     * basis too. Unscaled, the primal simplex called the LP relaxation of a feasible
     * pattern program infeasible (GLP_NOFEAS, its objective at the optimum, 894.593 ms;
     * seed 300048 of the tests' generator, pp 4 tp 1 dp 1 mbs 1), and the program was
     * reported infeasible. Scaling every problem would cost more: AMP's 16-GPU row took
     * 5.4 s instead of 3.2 s with it. */
    glp_smcp sd = sp;
    double used_ms = (hp__now() - t0) * 1000;   /* within the same limit: what is left */
    sd.meth = GLP_DUALP;
    sd.tm_lim = used_ms < sp.tm_lim - 1 ? sp.tm_lim - (int)used_ms : 1;
    glp_scale_prob(P, GLP_SF_AUTO);
    glp_std_basis(P);
    ret = glp_simplex(P, &sd);
  }
  if (ret != 0 || glp_get_status(P) == GLP_NOFEAS) {
    out->status = ret == 0 ? HP_SOL_INFEASIBLE : HP_SOL_NONE;
    goto done;
  }
  ret = glp_intopt(P, &ip);
  switch (glp_mip_status(P)) {
  case GLP_OPT:
    out->status = ret == 0 ? HP_SOL_OPTIMAL : HP_SOL_FEASIBLE;   /* ret != 0: stopped on gap */
    break;
  case GLP_FEAS: out->status = HP_SOL_FEASIBLE; break;
  case GLP_NOFEAS: out->status = HP_SOL_INFEASIBLE; break;
  default: out->status = ret == GLP_ENOPFS ? HP_SOL_INFEASIBLE : HP_SOL_NONE; break;
  }
  if (out->status == HP_SOL_OPTIMAL || out->status == HP_SOL_FEASIBLE) {
    out->obj = glp_mip_obj_val(P);
    out->x = calloc((size_t)m->n_cols, sizeof *out->x);
    if (!out->x) {
      glp_delete_prob(P);
      leave_env(ours, term);
      free(full);
      return hp_fail(d, HP_NOMEM, "out of memory");
    }
    for (int j = 0; j < m->n_cols; j++) out->x[j] = glp_mip_col_val(P, j + 1);
    out->bound = out->status == HP_SOL_OPTIMAL ? out->obj : cb.bound;
  } else if (out->status == HP_SOL_NONE) {
    out->bound = cb.bound;           /* stopped before an incumbent: the bound still holds */
  }
done:
  glp_delete_prob(P);
  leave_env(ours, term);   /* nothing of the call outlives it */
  free(full);
  return HP_OK;
}

/* The branch and cut's callback stops on lim->stop, but GLPK's simplex (the LP relaxation
 * solved first, a start completed) has no callback and ran 10 s after a Ctrl-C: with a
 * stop flag, the solve runs in a child process that is killed when the flag is set
 * (mip_child.c), and claims nothing. */
hp_err hp__glpk_solve_mip(const hp_mip *m, const double *start, const hp_limits *lim,
                           double seconds, double cutoff, hp_mip_solution *out, hp_diag *d)
{
  return hp__mip_solve_stoppable(solve_here, "glpk", m, start, lim, seconds, cutoff, out, d);
}

static const hp_search_kind glpk_kind = { "GLPK", hp__glpk_solve_mip };

static hp_err glpk_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                         hp_result *out, hp_diag *d)
{
  (void)start;
  return hp__search(prob, lim, lim->team, &glpk_kind, out, d);
}

const hp_solver hp_solver_glpk = {
  .name = "glpk",
  .desc = "certificate with GLPK: the pattern DP bounds every configuration over all "
          "placements, the pattern program checks it and gives plans (docs/formulation.md)",
  .flags = HP_SOLVER_BOUND | HP_SOLVER_TEAM,
  .solve = glpk_solve,
};
