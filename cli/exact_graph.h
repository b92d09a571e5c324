// What the exact-graph commands share (export, graph, plan --graph, verify): the exact IR of a
// shardlens-graph answer with spans from the script it came from, and planning on it.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "planning_flags.h"
#include "python/extractor.h"
#include "torch/exact_ir.h"
#include "torch/graph_client.h"

namespace shardlens::cli {

// The text `s` covers in `text` ("" when it does not fit).
std::string span_text(const std::string& text, const ir::Span& s);
bool file_exists(const std::string& path);

// The exact IR of a graph answer with spans from `script_text` (when given).
struct ExactModel {
  torchgraph::ExactIR exact;
  python::ExtractResult statics;
  bool have_static = false;
  std::vector<torchgraph::BlindSpot> blind;
  std::vector<std::string> notes;
};
ExactModel exact_model(const nlohmann::json& graph, const std::string& script_file, const std::string& script_text,
                       const python::ExtractOptions& extract);

// `plan --graph` after its flags: the exact model of `graph_file`, its plan, printed as `format`
// to `out`; the exit status.
int plan_on_graph(const char* prog, const std::string& file, const std::string& graph_file, PlanningArgs& planning,
                  const torchgraph::GraphClientOptions& client, const std::string& format, std::ostream& out);

}  // namespace shardlens::cli
