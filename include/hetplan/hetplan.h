/* hetplan.h -- umbrella header of the hetplan library: planning large-model training
 * on heterogeneous GPU clusters. Examples and the CLI include only this. */
#ifndef HETPLAN_H
#define HETPLAN_H

#include "hp_error.h"
#include "hp_problem.h"
#include "hp_plan.h"
#include "hp_cost.h"
#include "hp_classes.h"
#include "hp_pattern.h"
#include "hp_eval.h"
#include "hp_bottleneck.h"
#include "hp_result.h"
#include "hp_solver.h"
#include "hp_explain.h"
#include "hp_io.h"
#include "hp_transformer.h"
#include "hp_sim.h"
#include "hp_launch.h"
#include "hp_report.h"
#include "hp_coverage.h"
#include "hp_team.h"

#define HETPLAN_VERSION "0.1.0"

#endif
