// What every planning command shares — `plan`, `plan --graph` and `report`: the flags (the model,
// the meshes, the workload, the strategy, the hardware and pins), reading and extracting the
// script, and checking the pins against the model. One place, so that they accept and reject
// exactly the same inputs with the same messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/model_ir.h"
#include "plan/plan.h"
#include "python/forward_trace.h"

namespace shardlens::cli {

struct PlanningArgs {
  std::string model_expr;
  std::vector<std::string> python_path;  // --python-path DIR, repeatable
  uint64_t memory_budget_mib = 0;        // --memory-budget MIB; 0: the default
  plan::PlanOptions options;
  python::TraceWorkload trace;
};

enum class FlagStatus { NotMine, Taken, Error };

// Reads args[i] (and its value, `--flag value` or `--flag=value`) when it is a planning flag;
// advances i past what it took. On a bad value prints "<command>: ..." to stderr (with `usage`
// for a missing value) and returns Error (the caller exits 2).
FlagStatus take_planning_flag(const char* command, const char* usage, const std::vector<std::string>& args, size_t& i,
                              PlanningArgs& out);

// `v` as a positive integer; otherwise prints "<command>: FLAG must be a positive integer, not 'v'"
// to stderr and returns nullopt (the caller exits 2).
std::optional<int64_t> positive_int(const char* command, const std::string& flag, const std::string& v);

// Fills what the flags left unset (the t3k mesh) and the trace workload from the plan workload.
void finish_planning_args(PlanningArgs& out);

// The script a planning command reads and the model extracted from it.
struct PlanningSource {
  std::string text;
  ir::ModelIR model;
};

// Reads `file` (refusing one with NUL bytes) and extracts the model `planning.model_expr` names with
// forward() traced under `planning.trace`. On failure prints "<command>: ..." to stderr and returns
// nullopt (the caller exits 1).
std::optional<PlanningSource> extract_for_planning(const char* command, const std::string& file,
                                                   const PlanningArgs& planning);

// True when every --pin names a parameter and every --pin-output a module of `model`; otherwise
// prints "<command>: --pin NAME: the model has no parameter of that name" (or the module message)
// to stderr and returns false (the caller exits 2).
bool check_pins(const char* command, const ir::ModelIR& model, const plan::PlanOptions& options);

}  // namespace shardlens::cli
