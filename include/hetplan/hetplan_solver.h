/* hetplan_solver.h -- what a solver author needs beyond the user's API (hetplan.h): the
 * cost tables that every formula of docs/cost-model.md lives in (hp_cost.h), node classes
 * and stage patterns (hp_classes.h, hp_pattern.h), the solver-neutral MIP (hp_mip.h) and
 * the team a search may be shared with (hp_team.h). A program that plans, evaluates,
 * simulates or exports includes hetplan.h alone; docs/adding-a-solver.md. */
#ifndef HETPLAN_SOLVER_H
#define HETPLAN_SOLVER_H

#include "hetplan.h"
#include "hp_cost.h"
#include "hp_classes.h"
#include "hp_pattern.h"
#include "hp_mip.h"
#include "hp_team.h"

#endif
