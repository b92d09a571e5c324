// The exact graph as JSON (what shardlens-graph prints; analysis/torch/graph_client reads it) and
// as text. C++17 (LibTorch).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "torch/graph_evaluator.h"
#include "torch/torchscript_model.h"

namespace shardlens::torchgraph {

// Format version of the JSON; graph_client rejects other versions.
constexpr int kGraphFormat = 1;

// {"format", "file", "model", "source", "root", "method", "torch", "modules", "parameters",
//  "buffers", "total_parameters", "unresolved", "notes", "export", "graph": {...}}; the module and
// parameter keys are those of `shardlens inspect --format json` (spans are null: TorchScript does
// not record where modules were built; the client takes them from the script).
nlohmann::json graph_to_json(const LoadedModel& model, const ExactGraph* graph);

std::string graph_to_text(const LoadedModel& model, const ExactGraph* graph);

}  // namespace shardlens::torchgraph
