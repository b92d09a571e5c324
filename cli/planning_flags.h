// What every planning command shares — `plan`, `plan --graph`, `report` and `verify`: the flags
// (the model, the meshes, the workload, the strategy, the hardware and pins) and extracting the
// script. One place, so that they accept and reject exactly the same inputs with the same messages.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flags.h"
#include "ir/model_ir.h"
#include "plan/plan.h"
#include "python/forward_trace.h"

namespace shardlens::cli {

struct PlanningArgs {
  std::string model_expr;
  std::vector<std::string> python_path;  // --python-path DIR, repeatable
  plan::PlanOptions options;
  python::TraceWorkload trace;
  bool seq_given = false;  // --seq: else the model's position tables may shorten the default
};

// Takes the reader's current argument (and its value) when it is a planning flag: true then
// (a bad value ends the reading with a message, as FlagReader does); false when it is not one.
bool take_planning_flag(FlagReader& flags, PlanningArgs& out);

// Fills what the flags left unset (the t3k mesh) and the trace workload from the plan workload.
void finish_planning_args(PlanningArgs& out);

// The script a planning command reads and the model extracted from it.
struct PlanningSource {
  std::string text;
  ir::ModelIR model;
};

// Reads `file` and extracts the model `planning.model_expr` names with forward() traced under
// `planning.trace`. On failure prints "<command>: ..." to stderr and returns nullopt (exit 1).
std::optional<PlanningSource> extract_for_planning(const std::string& command, const std::string& file,
                                                   const PlanningArgs& planning);

// True when every pin names a parameter or module of `model`; otherwise prints
// "<command>: --pin NAME: the model has no parameter of that name" to stderr (exit 2).
bool check_pins(const std::string& command, const ir::ModelIR& model, const plan::PlanOptions& options);

// `plan` and `report`: extract, check the pins, plan into `out` (which stays put: the plan's names
// point into its model). 0, or the exit status after the message is printed (1; 2 for a bad pin).
struct PlannedScript {
  PlanningSource source;
  plan::PlanResult result;
  plan::PlanOptions options;  // as planned: the flags' options, the sequence fitted to the model
};
int plan_script(const std::string& command, const std::string& file, const PlanningArgs& planning, PlannedScript& out);

}  // namespace shardlens::cli
