/* test_glpk_host.c -- the GLPK adapter (solvers/solver_glpk.c) inside a host program that
 * uses GLPK itself: the host's environment, its problem and its terminal setting outlive
 * the adapter's call; alone, the adapter leaves no environment behind. */
#include <stdlib.h>

#include "harness.h"
#include "../../solvers/search.h"
#ifdef HP_HAVE_GLPK
#include <glpk.h>

/* min x + 2 y, x + y >= 1.5, x and y integers in [0, 3]: 2 at (2, 0). */
static hp_mip *tiny_mip(void)
{
  hp_mip *m = NULL;
  hp_diag d = {0};
  int idx[2] = { 0, 1 };
  double val[2] = { 1, 1 };
  if (hp_mip_create(&m, &d)) return NULL;
  hp_mip_add_col(m, "x", 0, 3, 1, 1);
  hp_mip_add_col(m, "y", 0, 3, 1, 2);
  hp_mip_add_row(m, "cover", 2, idx, val, 'G', 1.5);
  return m;
}

/* The adapter's solve of the tiny MIP; 1 if it found the optimum 2. */
static int adapter_solves(void)
{
  hp_mip *m = tiny_mip();
  hp_mip_solution sol = { HP_SOL_NONE, 0, 0, NULL };
  hp_limits lim;
  hp_diag d = {0};
  int ok;
  hp_limits_init(&lim);
  ok = m && hp__glpk_solve_mip(m, NULL, &lim, 0, INFINITY, &sol, &d) == HP_OK &&
       sol.status == HP_SOL_OPTIMAL && fabs(sol.obj - 2) < 1e-9;
  if (!ok) fprintf(stderr, "  the adapter failed: %s\n", d.msg);
  free(sol.x);
  hp_mip_destroy(&m);
  return ok;
}
#endif

TEST(glpk_adapter_leaves_a_host_its_environment_and_problem)
{
#ifndef HP_HAVE_GLPK
  harness_skip("built without GLPK (GLPK=0): no adapter to test");
#else
  glp_prob *host;
  glp_smcp sp;
  int col[3] = { 0, 1, 2 };
  double one[3] = { 0, 1, 1 };
  /* the host: an environment of its own, terminal output on, and a problem:
   * min a + b, a + b >= 1, a, b in [0, 10] */
  CHECK_INT(glp_init_env(), 0);       /* each test runs in a fresh process */
  glp_term_out(GLP_ON);
  host = glp_create_prob();
  glp_set_prob_name(host, "host");
  glp_add_cols(host, 2);
  glp_add_rows(host, 1);
  for (int j = 1; j <= 2; j++) {
    glp_set_col_bnds(host, j, GLP_DB, 0, 10);
    glp_set_obj_coef(host, j, 1);
  }
  glp_set_row_bnds(host, 1, GLP_LO, 1, 0);
  glp_set_mat_row(host, 1, 2, col, one);
  CHECK(adapter_solves());
  /* the environment is still the host's (glp_init_env finds one), with its setting */
  CHECK_INT(glp_init_env(), 1);
  CHECK_INT(glp_term_out(GLP_OFF), GLP_ON);
  /* and the host's problem is whole and still solves */
  CHECK(!strcmp(glp_get_prob_name(host), "host"));
  CHECK_INT(glp_get_num_cols(host), 2);
  CHECK_INT(glp_get_num_rows(host), 1);
  glp_init_smcp(&sp);
  sp.msg_lev = GLP_MSG_OFF;
  CHECK_INT(glp_simplex(host, &sp), 0);
  CHECK_INT(glp_get_status(host), GLP_OPT);
  CHECK_NEAR(glp_get_obj_val(host), 1, 1e-12);
  /* a second call, the host's problem still there */
  CHECK(adapter_solves());
  CHECK_INT(glp_get_num_cols(host), 2);
  glp_delete_prob(host);
  CHECK_INT(glp_free_env(), 0);
#endif
}

TEST(glpk_adapter_alone_leaves_no_environment)
{
#ifndef HP_HAVE_GLPK
  harness_skip("built without GLPK (GLPK=0): no adapter to test");
#else
  CHECK(adapter_solves());
  /* the environment the call created is gone: glp_init_env makes a new one */
  CHECK_INT(glp_init_env(), 0);
  CHECK_INT(glp_free_env(), 0);
#endif
}
