/* hetplan.h -- umbrella header of the hetplan library: planning large-model training
 * on heterogeneous GPU clusters: what a user of the library needs (load, plan, evaluate,
 * simulate, export, report). A solver author includes hetplan_solver.h, which adds the
 * cost tables, node classes and patterns, the MIP and the search team. */
#ifndef HETPLAN_H
#define HETPLAN_H

#include "hp_error.h"
#include "hp_problem.h"
#include "hp_plan.h"
#include "hp_eval.h"
#include "hp_bottleneck.h"
#include "hp_result.h"
#include "hp_solver.h"
#include "hp_explain.h"
#include "hp_migrate.h"
#include "hp_replan.h"
#include "hp_io.h"
#include "hp_transformer.h"
#include "hp_sim.h"
#include "hp_launch.h"
#include "hp_report.h"
#include "hp_coverage.h"
#include "hp_framework.h"
#include "hp_calibrate.h"
#include "hp_shape.h"

#define HETPLAN_VERSION "0.1.0"

#endif
