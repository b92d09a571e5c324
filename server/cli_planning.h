// The flags every planning command shares — `plan`, `plan --graph` and `report`: the model, the
// meshes, the workload, the strategy, the hardware and pins. One parser, so that they accept and
// reject exactly the same values with the same messages.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"
#include "python/forward_trace.h"

namespace shardlens::cli {

struct PlanningArgs {
  std::string model_expr;
  plan::PlanOptions options;
  python::TraceWorkload trace;
};

enum class FlagStatus { NotMine, Taken, Error };

// Reads args[i] (and its value, `--flag value` or `--flag=value`) when it is a planning flag;
// advances i past what it took. On a bad value prints "<command>: ..." to stderr (with `usage`
// for a missing value) and returns Error (the caller exits 2).
FlagStatus take_planning_flag(const char* command, const char* usage, const std::vector<std::string>& args, size_t& i,
                              PlanningArgs& out);

// Fills what the flags left unset (the t3k mesh) and the trace workload from the plan workload.
void finish_planning_args(PlanningArgs& out);

}  // namespace shardlens::cli
