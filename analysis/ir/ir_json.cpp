#include "ir/ir_json.h"

namespace shardlens::ir {

nlohmann::json span_to_json(const Span& s) {
  nlohmann::json j = {{"line", s.line}, {"column", s.column}, {"end_line", s.end_line}, {"end_column", s.end_column}};
  if (s.file) j["file"] = source_file_path(s.file);  // a span in an imported module
  return j;
}

static nlohmann::json shape_json(const std::vector<int64_t>& shape, bool known) {
  if (!known) return nullptr;
  return shape;
}

nlohmann::json to_json(const ModelIR& model) {
  nlohmann::json j;
  j["model"] = model.model;
  j["source"] = model.source;
  j["root"] = model.root_expression;
  auto& modules = j["modules"] = nlohmann::json::array();
  for (size_t i = 1; i < model.modules.size(); ++i) {
    const auto& m = model.modules[i];
    modules.push_back({{"name", m.name}, {"class", m.class_name}, {"span", span_to_json(m.span)}});
  }
  auto& params = j["parameters"] = nlohmann::json::array();
  for (const auto& p : model.parameters)
    params.push_back({{"name", p.name}, {"shape", shape_json(p.shape, p.shape_known)}, {"dtype", p.dtype}, {"span", span_to_json(p.span)}});
  auto& buffers = j["buffers"] = nlohmann::json::array();
  for (const auto& b : model.buffers)
    buffers.push_back({{"name", b.name}, {"shape", shape_json(b.shape, b.shape_known)}, {"dtype", b.dtype},
                       {"persistent", b.persistent}, {"span", span_to_json(b.span)}});
  // A number while it fits in int64; beyond, its exact decimal digits as a string (README).
  BigInt total = model.total_parameters();
  if (auto small = total.to_int64()) j["total_parameters"] = *small;
  else j["total_parameters"] = total.to_string();
  auto& unresolved = j["unresolved"] = nlohmann::json::array();
  for (const auto& u : model.unresolved)
    unresolved.push_back({{"what", u.what}, {"reason", u.reason}, {"span", span_to_json(u.span)}});
  j["notes"] = model.notes;
  return j;
}

}  // namespace shardlens::ir
