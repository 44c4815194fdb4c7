/* fixtures.h -- builds problems and plans from inline JSON for the unit tests. */
#ifndef HP_FIXTURES_H
#define HP_FIXTURES_H

#include "hetplan/hetplan_solver.h"   /* the tests reach the cost tables too */

/* Parses the parts and binds them; profile may be NULL. Aborts the test process with
 * a message on any error (a fixture that does not load is a broken test). */
hp_problem *fx_problem(const char *model, const char *cluster, const char *profile,
                       long gbs, hp_schedule sched);
hp_plan *fx_plan(const hp_problem *p, const char *plan_json);
/* The same from files (paths from the repository root; profile may be NULL). */
hp_problem *fx_load(const char *model, const char *cluster, const char *profile, long gbs);

/* The tiny model and cluster of examples/tiny, inline. */
extern const char fx_tiny_model[];
extern const char fx_tiny_cluster[];

/* Parses text as a model / cluster / profile / plan and returns the error message
 * (empty on success); the message buffer is static. */
const char *fx_model_error(const char *text);
const char *fx_cluster_error(const char *text);
const char *fx_profile_error(const char *text);
const char *fx_plan_error(const hp_problem *p, const char *text);

/* Random draws for the tests' own instance families (splitmix64 on the state *s): uniform
 * in [lo, hi), and log-uniform in [lo, hi). */
double fx_draw(unsigned long long *s, double lo, double hi);
double fx_log(unsigned long long *s, double lo, double hi);
/* a <= b within the relative tolerance tol; INFINITY <= INFINITY. */
int fx_at_most(double a, double b, double tol);

#endif
