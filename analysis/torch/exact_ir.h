// The exact graph (shardlens-graph's JSON) as the model IR the planner reads: the module tree,
// parameters and buffers as PyTorch built them, and forward()'s aten ops translated into the
// dataflow IR the static front end produces (contractions as einsum equations, norms, attention,
// reshapes, splits, routed experts, ...), so that the same planner plans either. Also: spans from
// the script's static IR, and where the static analysis was blind. No LibTorch here (C++20).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/model_ir.h"

namespace shardlens::torchgraph {

struct ExactIR {
  bool ok = false;
  std::string error;          // the JSON is not a graph this version reads
  ir::ModelIR model;
  std::string method;         // "script" | "trace" | ""
  std::string source;         // the script the TorchScript file was exported from
};

// Modules, parameters and buffers; and the dataflow when the JSON has a "graph".
ExactIR exact_ir_from_json(const nlohmann::json& graph);

// Module and parameter spans by name from the script's static IR (TorchScript does not record
// where modules are built); ops without a source range of their own (traced graphs) take their
// module's span.
void adopt_static_spans(ir::ModelIR& exact, const ir::ModelIR& static_model);

// Where the static front end was blind or wrong: parameters it could not resolve or got wrong,
// modules it did not see, ops it could not follow (unknown ops, an untraced forward), and module
// calls whose contractions / attention it missed. Exact wins; these are reported with code
// `static-blind`.
struct BlindSpot {
  std::string message;
  ir::Span span;
};
std::vector<BlindSpot> compare_with_static(const ir::ModelIR& exact, const ir::ModelIR& static_model);

}  // namespace shardlens::torchgraph
