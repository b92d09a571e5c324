// The numeric check of a sharding plan (`shardlens verify`): every device of the mesh runs the
// model's forward() as the plan has it — its slices of the weights, the ops on global shapes with
// what the device does not hold as zeros, and the plan's collectives where the plan puts them —
// and each component's result is compared with the unsharded forward on the same random inputs.
// C++17 (LibTorch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "torch/graph_evaluator.h"
#include "torch/torchscript_model.h"

namespace shardlens::torchgraph {

struct CheckOptions {
  int64_t rows = 1, cols = 2;       // the mesh (must be one of the plan's)
  double tolerance = 1e-4;          // max |device - reference| / max |reference| per component
  uint64_t seed = 0;
  EvalOptions eval;                 // batch, tokens, input shapes
  double max_weight_bytes = 12.0 * (1ull << 30);  // all devices' weight copies together
};

struct ComponentCheck {
  std::string module;               // "h.*", or "(model output)"
  int instances = 0;                // instances compared
  double max_abs = 0, max_rel = 0;
  std::string status;               // ok | mismatch | not-checked
  std::string note;                 // why not checked; what it was checked together with
};

struct CheckReport {
  bool ok = false;                  // every checked component within tolerance
  std::string error;                // the check could not run (then nothing else is meaningful)
  int error_kind = 0;               // 1: the model cannot be run; 5: the plan does not fit this model;
                                    // 6: the plan contradicts itself (a collective's kind vs its layouts)
  std::vector<ComponentCheck> components;
  std::vector<std::string> not_checked;  // what the method cannot check, and why
  std::vector<std::string> notes;
  std::vector<std::string> inputs;  // "idx: [2, 8] int64"
  int devices = 0;
  int sharded_parameters = 0;       // parameters some device holds only a share of
  int collectives_run = 0;          // the plan's collectives as the devices ran them (the model output's too)
  int slices_run = 0;               // replicated values cut into the devices' blocks
  double seconds = 0;
  int unchecked = 0;                // components and collectives the check could not run
  // Reported as verified only when nothing was left unchecked: a check that ran nothing passes nothing.
  bool verified() const { return ok && error.empty() && unchecked == 0; }
};

CheckReport check_plan(LoadedModel& model, const nlohmann::json& plan, const CheckOptions& options);
nlohmann::json check_to_json(const CheckReport& report, const CheckOptions& options);
std::string check_to_text(const CheckReport& report, const CheckOptions& options);

}  // namespace shardlens::torchgraph
