/* registry.c -- the one list of solvers built in, in order of preference: the first is
 * `hetplan plan`'s default (dp: exact layer split, fast at every size measured by make
 * bench); sa refines it on heterogeneous clusters at more cost. */
#include <stdio.h>
#include <string.h>

#include "../src/internal.h"

extern const hp_solver hp_solver_enum;
extern const hp_solver hp_solver_dp;
extern const hp_solver hp_solver_sa;
extern const hp_solver hp_solver_megatron;
extern const hp_solver hp_solver_amp;
extern const hp_solver hp_solver_random;
extern const hp_solver hp_solver_hethub;
extern const hp_solver hp_solver_dhondt;
extern const hp_solver hp_solver_osdp;
extern const hp_solver hp_solver_pipette;
extern const hp_solver hp_solver_megatron_params;

#ifdef HP_HAVE_GLPK
extern const hp_solver hp_solver_glpk;
#endif
#ifdef HP_HAVE_CBC
extern const hp_solver hp_solver_cbc;
#endif

static const hp_solver *const all_solvers[] = {
  &hp_solver_dp,
  &hp_solver_sa,
  &hp_solver_megatron,
  &hp_solver_megatron_params,
  &hp_solver_amp,
  &hp_solver_hethub,
  &hp_solver_dhondt,
  &hp_solver_osdp,
  &hp_solver_pipette,
  &hp_solver_random,
#ifdef HP_HAVE_CBC
  &hp_solver_cbc,
#endif
#ifdef HP_HAVE_GLPK
  &hp_solver_glpk,
#endif
  &hp_solver_enum,
  NULL };

const hp_solver *const *hp_solver_all(void) { return all_solvers; }

/* The optional solvers, whether or not this build has them. */
static const struct { const char *name, *library, *package, *make_flag; int built; } optional[] = {
#ifdef HP_HAVE_GLPK
  { "glpk", "GLPK", "libglpk-dev", "GLPK=1", 1 },
#else
  { "glpk", "GLPK", "libglpk-dev", "GLPK=1", 0 },
#endif
#ifdef HP_HAVE_CBC
  { "cbc", "CBC", "coinor-libcbc-dev", "CBC=1", 1 },
#else
  { "cbc", "CBC", "coinor-libcbc-dev", "CBC=1", 0 },
#endif
};

const char *hp_solver_not_built(const char *name, char *buf, unsigned long n)
{
  for (unsigned i = 0; i < sizeof optional / sizeof optional[0]; i++)
    if (!optional[i].built && !strcmp(optional[i].name, name)) {
      snprintf(buf, n, "this build lacks %s, which solver '%s' needs: install %s and "
               "rebuild (make %s)", optional[i].library, name, optional[i].package,
               optional[i].make_flag);
      return buf;
    }
  return NULL;
}

const hp_solver *hp_solver_find(const char *name)
{
  for (const hp_solver *const *s = all_solvers; *s; s++)
    if (!strcmp((*s)->name, name)) return *s;
  return NULL;
}
