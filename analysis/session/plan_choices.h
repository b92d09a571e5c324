// The named choices of a plan's target and workload (strategy, phase, dtype, hardware): one list
// of accepted names and one conversion, for the CLI's flags and the server's settings alike.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace shardlens::session {

enum class PlanChoice { Strategy, Phase, Dtype, Hardware };

// The accepted names, e.g. {"prefill", "decode"}.
const std::vector<std::string>& choice_names(PlanChoice choice);
bool is_choice(PlanChoice choice, const std::string& value);
// Sets the option `value` names (one of choice_names(choice)) in `options`.
void apply_choice(plan::PlanOptions& options, PlanChoice choice, const std::string& value);

}  // namespace shardlens::session
