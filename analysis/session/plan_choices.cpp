#include "session/plan_choices.h"

#include <algorithm>

namespace shardlens::session {

const std::vector<std::string>& choice_names(PlanChoice choice) {
  static const std::vector<std::string> strategies{"auto", "tensor"}, phases{"prefill", "decode"},
      dtypes{"bf16", "fp32", "bfp8"}, hardware{"wormhole", "blackhole"};
  switch (choice) {
    case PlanChoice::Strategy: return strategies;
    case PlanChoice::Phase: return phases;
    case PlanChoice::Dtype: return dtypes;
    case PlanChoice::Hardware: return hardware;
  }
  return strategies;
}

bool is_choice(PlanChoice choice, const std::string& value) {
  const auto& names = choice_names(choice);
  return std::find(names.begin(), names.end(), value) != names.end();
}

void apply_choice(plan::PlanOptions& options, PlanChoice choice, const std::string& value) {
  switch (choice) {
    case PlanChoice::Strategy:
      options.strategy = value == "tensor" ? plan::StrategyMode::Tensor : plan::StrategyMode::Auto;
      break;
    case PlanChoice::Phase: options.workload.phase = value == "prefill" ? plan::Phase::Prefill : plan::Phase::Decode; break;
    case PlanChoice::Dtype: options.workload.dtype = value; break;
    case PlanChoice::Hardware: {
      std::string error;
      options.hardware = plan::resolve_hardware(value, error);  // a built-in name or a profile's path
      break;
    }
  }
}

}  // namespace shardlens::session
