/* solver_cbc.c -- `cbc`: the certificate of the search driver (search_driver.c) with CBC
 * solving its programs (formulation/). The only file that includes Cbc_C_Interface.h. A
 * fresh model per solve, loaded in one call (a CBC model is not valid for change after
 * Cbc_solve); wall-clock time ("timeMode elapsed"); the gap stop is tested before
 * Cbc_isProvenOptimal, which is also 1 after it; a start gives the integer columns and
 * CBC completes and checks it. */
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <coin/Cbc_C_Interface.h>

#include "search.h"

/* The bound of the guard column (load): not a multiple of 1/4. */
#define CBC_GUARD_UB 0.3

/* Loads the MIP in one call (column-major arrays), not column by column and row by row:
 * large programs would spend seconds in the incremental calls. Names are not passed: a
 * solve has no use for them (export-lp writes its own files).
 *
 * One more column than the program's, the guard: continuous, in no row, of no cost, in
 * [0, CBC_GUARD_UB]. CBC 2.10.8 (CbcModel::analyzeObjective) concludes that the objective
 * moves in steps of 1 where each continuous column of the objective lies in one row with
 * coefficient +-1 and an integral right-hand side, whatever the other continuous columns
 * of that row: the pattern program of a one-stage configuration (T >= tmax, Q, U each in
 * one row) read "Objective coefficients multiple of 1", and once a heuristic found
 * 1215.416 ms, the search cut off at 1214.41 and called that plan optimal where 1214.544
 * exists (GLPK and brute force agree on it). The deduction needs every unfixed column's
 * bounds to be multiples of 1/4: the guard's are not, so it is never made. Its value is
 * not read back. */
static int load(Cbc_Model *cm, const hp_mip *m)
{
  int nc = m->n_cols + 1, nr = m->n_rows;   /* the program's columns, and the guard */
  CoinBigIndex *start = calloc((size_t)nc + 1, sizeof *start);
  int *index = malloc(((size_t)m->n_nz + 1) * sizeof *index), *fill = calloc((size_t)nc + 1, sizeof *fill);
  double *value = malloc(((size_t)m->n_nz + 1) * sizeof *value);
  double *clb = malloc(((size_t)nc + 1) * sizeof *clb), *cub = malloc(((size_t)nc + 1) * sizeof *cub);
  double *obj = malloc(((size_t)nc + 1) * sizeof *obj);
  double *rlb = malloc(((size_t)nr + 1) * sizeof *rlb), *rub = malloc(((size_t)nr + 1) * sizeof *rub);
  int ok = start && index && fill && value && clb && cub && obj && rlb && rub;
  if (ok) {
    for (int i = 0; i < nr; i++)
      for (int k = 0; k < m->rows[i].n; k++) start[m->idx[m->rows[i].start + k] + 1]++;
    for (int j = 0; j < nc; j++) start[j + 1] += start[j];
    for (int i = 0; i < nr; i++) {
      const hp_mip_row *r = &m->rows[i];
      for (int k = 0; k < r->n; k++) {
        int j = m->idx[r->start + k];
        CoinBigIndex at = start[j] + fill[j]++;
        index[at] = i;
        value[at] = m->val[r->start + k];
      }
      rlb[i] = r->sense == 'L' ? -DBL_MAX : r->rhs;
      rub[i] = r->sense == 'G' ? DBL_MAX : r->rhs;
    }
    for (int j = 0; j < m->n_cols; j++) {
      clb[j] = m->cols[j].lb;
      cub[j] = isinf(m->cols[j].ub) ? DBL_MAX : m->cols[j].ub;
      obj[j] = m->cols[j].obj;
    }
    clb[nc - 1] = 0;                   /* the guard (above): its start is start[nc - 1], */
    cub[nc - 1] = CBC_GUARD_UB;        /* where the last program column's entries end */
    obj[nc - 1] = 0;
    Cbc_loadProblem(cm, nc, nr, start, index, value, clb, cub, obj, rlb, rub);
    for (int j = 0; j < m->n_cols; j++)
      if (m->cols[j].integer) Cbc_setInteger(cm, j);
  }
  free(start); free(index); free(fill); free(value); free(clb); free(cub); free(obj);
  free(rlb); free(rub);
  return ok ? 0 : -1;
}

/* The solve in this process (what the child of hp__mip_solve_stoppable runs), with CBC's
 * primal heuristics or without them. */
static hp_err solve_cbc(const hp_mip *m, const double *start, const hp_limits *lim,
                        double seconds, double cutoff, int heuristics, hp_mip_solution *out,
                        hp_diag *d)
{
  Cbc_Model *cm = Cbc_newModel();
  char buf[32];
  int *ints = NULL, n_int = 0;
  double *vals = NULL;
  if (!cm) return hp_fail(d, HP_BACKEND, "cbc: cannot create a model");
  if (load(cm, m)) { Cbc_deleteModel(cm); return hp_fail(d, HP_NOMEM, "out of memory loading the MIP into CBC"); }
  Cbc_setObjSense(cm, 1);
  Cbc_setLogLevel(cm, 0);
  Cbc_setParameter(cm, "timeMode", "elapsed");
  if (seconds > 0) Cbc_setMaximumSeconds(cm, seconds);
  Cbc_setAllowableFractionGap(cm, lim->gap);
  /* CBC prunes a node within its cutoff increment (absolute, 1e-5 by default) of the
   * cutoff: the margin keeps "nothing below the cutoff" true of the caller's cutoff */
  if (isfinite(cutoff)) Cbc_setCutoff(cm, cutoff + 1e-4 * fabs(cutoff) + 1e-4);
  /* Preprocessing stays off: CBC 2.10.8 crashed in its clean-up
   * (CglPreProcess::postProcess) on relaxations with a cutoff, and called a feasible
   * exact MIP infeasible when rows mixed bytes ~1e9 with seconds ~1e-3 */
  Cbc_setParameter(cm, "preprocess", "off");
  if (!heuristics) Cbc_setParameter(cm, "heuristicsOnOff", "off");
  /* One thread is CBC's serial search, "threads 0": "threads 1" is its threaded search
   * with one worker, whose hand-back CBC 2.10.8 sometimes missed until a 10-s timed wait
   * ran out (CbcThread::waitThread; seen on 64-row programs given 1.5 s: a few solves
   * in a thousand stalled 10.0 s each, and the certificate ran past its time limit) */
  snprintf(buf, sizeof buf, "%d", lim->threads > 1 ? lim->threads : 0);
  Cbc_setParameter(cm, "threads", buf);
  if (start) {
    ints = calloc((size_t)m->n_cols, sizeof *ints);
    vals = calloc((size_t)m->n_cols, sizeof *vals);
    if (!ints || !vals) { free(ints); free(vals); Cbc_deleteModel(cm); return hp_fail(d, HP_NOMEM, "out of memory"); }
    for (int j = 0; j < m->n_cols; j++)
      if (m->cols[j].integer) { ints[n_int] = j; vals[n_int++] = start[j]; }
    Cbc_setMIPStartI(cm, n_int, ints, vals);
  }
  /* CBC installs its own SIGINT handler when it solves and leaves it there; through the C
   * interface that handler stops nothing, so a Ctrl-C would be lost. SIGINT is held
   * back while CBC runs and the caller's handler put back (a caller with a stop flag has
   * this run in a child process, which it kills on a stop: hp__cbc_solve_mip). */
  struct sigaction saved;
  sigset_t hold, before;
  int have_saved = sigaction(SIGINT, NULL, &saved) == 0;
  sigemptyset(&hold);
  sigaddset(&hold, SIGINT);
  sigprocmask(SIG_BLOCK, &hold, &before);
  Cbc_solve(cm);
  if (have_saved) sigaction(SIGINT, &saved, NULL);
  sigprocmask(SIG_SETMASK, &before, NULL);
  int sec = Cbc_secondaryStatus(cm);
  const double *x = Cbc_getColSolution(cm);
  int has = Cbc_numberSavedSolutions(cm) > 0 && x;
  if ((Cbc_isProvenInfeasible(cm) || Cbc_isProvenOptimal(cm)) && !has && isfinite(cutoff)) {
    out->status = HP_SOL_NONE;       /* nothing below the cutoff */
    out->bound = cutoff;
  }
  else if (Cbc_isProvenInfeasible(cm) && !has) out->status = HP_SOL_INFEASIBLE;
  else if (sec == 2 && has) out->status = HP_SOL_FEASIBLE;          /* stopped on the gap */
  else if (Cbc_isProvenOptimal(cm) && has) out->status = HP_SOL_OPTIMAL;
  else if (has) out->status = HP_SOL_FEASIBLE;
  else out->status = HP_SOL_NONE;
  if (has) {
    char why[160];
    out->obj = Cbc_getObjValue(cm);
    out->x = calloc((size_t)m->n_cols, sizeof *out->x);
    if (out->x) for (int j = 0; j < m->n_cols; j++) out->x[j] = x[j];
    /* CBC 2.10 can hand back an unfinished polishing iterate when the clock ran out
     * (coin-or/Cbc#353): a point that fails the rows is no solution */
    if (out->x && !hp_mip_check(m, out->x, 1e-6, why, sizeof why)) {
      free(out->x);
      out->x = NULL;
      has = 0;
      out->status = HP_SOL_NONE;
    }
    out->bound = out->status == HP_SOL_OPTIMAL ? out->obj : Cbc_getBestPossibleObjValue(cm);
    if (!isfinite(out->bound) || out->bound > out->obj) out->bound = -INFINITY;
  } else if (out->status == HP_SOL_NONE && !(out->bound >= cutoff)) {
    double b = Cbc_getBestPossibleObjValue(cm);  /* stopped before an incumbent */
    out->bound = isfinite(b) && fabs(b) < 1e30 ? b : -INFINITY;
  }
  Cbc_deleteModel(cm);
  free(ints);
  free(vals);
  if (has && !out->x) return hp_fail(d, HP_NOMEM, "out of memory");
  return HP_OK;
}

static hp_err solve_here(const hp_mip *m, const double *start, const hp_limits *lim,
                         double seconds, double cutoff, hp_mip_solution *out, hp_diag *d)
{
  return solve_cbc(m, start, lim, seconds, cutoff, 1, out, d);
}

static hp_err solve_here_plain(const hp_mip *m, const double *start, const hp_limits *lim,
                               double seconds, double cutoff, hp_mip_solution *out, hp_diag *d)
{
  return solve_cbc(m, start, lim, seconds, cutoff, 0, out, d);
}

/* A Ctrl-C must end a CBC solve at once, and CBC has no way in to stop it (its cut
 * callback is not called in the root LP or the root heuristics, where a solve spent 10 s
 * after one): with a stop flag, the solve runs in a child process that is killed when the
 * flag is set (mip_child.c), and claims nothing. A solve whose process fails inside CBC
 * is run once more, in what is left of its time, without CBC's primal heuristics: CBC
 * 2.10.8 (Clp 1.17.6) aborts on an assertion in ClpSimplexDual::dualColumn0 inside its
 * RINS heuristic's small branch and bound on some programs (a 4-GPU pattern program with
 * idle devices, found by a campaign over fresh seeds of test_certificate_idle.c: seed
 * 970141, pp 3 tp 1 dp 1 mbs 2), which it solves with the heuristics off. */
hp_err hp__cbc_solve_mip(const hp_mip *m, const double *start, const hp_limits *lim,
                          double seconds, double cutoff, hp_mip_solution *out, hp_diag *d)
{
  double t0 = hp__now(), left;
  hp_err err = hp__mip_solve_stoppable(solve_here, "cbc", m, start, lim, seconds, cutoff, out, d);
  if (err != HP_BACKEND || (lim->stop && *lim->stop)) return err;
  left = seconds > 0 ? seconds - (hp__now() - t0) : seconds;
  if (seconds > 0 && left < 0.05) return err;
  hp_warn(d, "%s; solved again without CBC's heuristics", d && d->msg[0] ? d->msg : "cbc failed");
  return hp__mip_solve_stoppable(solve_here_plain, "cbc", m, start, lim, left, cutoff, out, d);
}

static const hp_search_kind cbc_kind = { "CBC", hp__cbc_solve_mip };

static hp_err cbc_solve(const hp_problem *prob, const hp_plan *start, const hp_limits *lim,
                        hp_result *out, hp_diag *d)
{
  (void)start;
  return hp__search(prob, lim, lim->team, &cbc_kind, out, d);
}

const hp_solver hp_solver_cbc = {
  .name = "cbc",
  .desc = "certificate with CBC: the pattern DP bounds every configuration over all "
          "placements, the pattern program checks it and gives plans (docs/formulation.md)",
  .flags = HP_SOLVER_BOUND | HP_SOLVER_TEAM,
  .solve = cbc_solve,
};
