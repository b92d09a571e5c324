// What every planning command shares — `plan`, `plan --graph`, `report` and `verify`: the flags
// (the model, the meshes, the workload, the strategy, the hardware and pins) and extracting the
// script. One place, so that they accept and reject exactly the same inputs with the same messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flags.h"
#include "ir/model_ir.h"
#include "plan/model_kind.h"
#include "plan/plan.h"
#include "python/extractor.h"
#include "python/forward_trace.h"

namespace shardlens::cli {

// What every command that reads a script shares — `inspect` and the planning commands: which
// model, where imports are searched, and how much memory the analysis may use.
struct ScriptArgs {
  std::string model_expr;                // --model EXPR
  std::vector<std::string> python_path;  // --python-path DIR, repeatable
  uint64_t memory_budget_mib = 0;        // --memory-budget MIB; 0: the default (python::ExtractOptions)
  // --python PATH: an interpreter whose site-packages are searched last (session::interpreter_site_packages).
  std::string python;
};

// The extraction options every script-reading command shares, from its ScriptArgs; a --python that
// does not answer is said on stderr (the analysis goes on without its site-packages).
python::ExtractOptions script_extract_options(const ScriptArgs& script, const char* command);

// Takes the reader's current argument when it is one of ScriptArgs' flags: true then (a bad value
// ends the reading with a message); false when it is not one.
bool take_script_flag(FlagReader& flags, ScriptArgs& out);

struct PlanningArgs : ScriptArgs {
  plan::PlanOptions options;
  python::TraceWorkload trace;
  bool phase_given = false, seq_given = false;  // --phase / --seq: the workload is the user's, not the kind's
  // --prefill-weights own: a decoder's prefill lays its weights out for itself (prefill served on
  // devices of its own); shared (the default): as its decode plan does.
  bool prefill_weights_own = false;
};

// Takes the reader's current argument (and its value) when it is a planning flag (ScriptArgs'
// included): true then
// (a bad value ends the reading with a message, as FlagReader does); false when it is not one.
bool take_planning_flag(FlagReader& flags, PlanningArgs& out);

// Fills what the flags left unset (the t3k mesh) and the trace workload from the plan workload.
void finish_planning_args(PlanningArgs& out);

// The workload per model kind when --phase is not given (issue 36): decode with prefill beside it
// for decoders, one full forward of the natural length for encoders, DiTs and conv nets. Sets the
// phase (and the sequence unless --seq was given) in `planning`; the caller re-traces when
// `retrace` says the tokens per forward changed.
struct WorkloadChoice {
  plan::DefaultWorkload kind;
  bool assumed = false;  // false: --phase was given
  bool retrace = false;
  std::string why;       // one sentence for the output
  std::string phase_name() const;
};
WorkloadChoice choose_workload(const ir::ModelIR& model, PlanningArgs& planning);

// The choice in `plan --format json` (keys "model_kind" and "workload.assumed/why") and as the
// text output's first line.
void describe_workload(const WorkloadChoice& choice, nlohmann::json& plan_json);
std::string workload_line(const WorkloadChoice& choice);

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

// `report`: extract, choose the workload, check the pins, plan into `out` (which stays put: the plan's names
// point into its model). 0, or the exit status after the message is printed (1; 2 for a bad pin).
struct PlannedScript {
  PlanningSource source;
  WorkloadChoice workload;
  plan::PlanResult result;
  plan::PlanOptions options;  // as planned: the flags' options, the sequence fitted to the model
  // A decoder's prefill planned with its decode plan's weight layouts (one copy of the weights
  // serves prompts and generation): JSON "workload.weights_from": "decode".
  bool weights_from_decode = false;
};
int plan_script(const std::string& command, const std::string& file, PlanningArgs& planning, PlannedScript& out);

}  // namespace shardlens::cli
