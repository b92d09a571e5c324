#include "torch/graph_json.h"

#include <sstream>

#include <torch/version.h>

namespace shardlens::torchgraph {
namespace {

nlohmann::json span_json(const SourceSpan& s) {
  return {{"line", s.line}, {"column", s.column}, {"end_line", s.end_line}, {"end_column", s.end_column}};
}

std::string shape_text(const ValueRecord& r) {
  if (r.kind != "tensor") {
    if (!r.value.is_null()) return r.value.dump();
    return r.kind;
  }
  if (!r.shape_known) return "?";
  std::string s = "[";
  for (size_t i = 0; i < r.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(r.shape[i]);
  return s + "]";
}

void mark(const ExactGraph& g, std::vector<char>& used, int id) {
  if (id < 0 || id >= static_cast<int>(g.values.size()) || used[id]) return;
  used[id] = 1;
  for (int i : g.values[id].items) mark(g, used, i);
}

}  // namespace

nlohmann::json graph_to_json(const LoadedModel& model, const ExactGraph* graph) {
  nlohmann::json j;
  j["format"] = kGraphFormat;
  j["file"] = model.path;
  j["model"] = model.modules.empty() ? "" : model.modules[0].class_name;
  j["source"] = model.source();
  j["root"] = model.export_info.is_object() ? model.export_info.value("root", "") : "";
  j["method"] = model.method();
  j["torch"] = TORCH_VERSION;
  nlohmann::json modules = nlohmann::json::array();
  for (size_t i = 1; i < model.modules.size(); ++i) {
    const auto& m = model.modules[i];
    modules.push_back({{"name", m.name}, {"class", m.class_name}, {"builtin", m.builtin}, {"span", nullptr}});
  }
  j["modules"] = modules;
  j["root_builtin"] = !model.modules.empty() && model.modules[0].builtin;
  nlohmann::json params = nlohmann::json::array();
  int64_t total = 0;
  for (const auto& p : model.parameters) {
    params.push_back({{"name", p.name}, {"shape", p.tensor.sizes().vec()}, {"dtype", dtype_name(p.tensor.scalar_type())},
                      {"span", nullptr}});
    total += p.tensor.numel();
  }
  j["parameters"] = params;
  nlohmann::json buffers = nlohmann::json::array();
  for (const auto& b : model.buffers)
    buffers.push_back({{"name", b.name}, {"shape", b.tensor.sizes().vec()}, {"dtype", dtype_name(b.tensor.scalar_type())},
                       {"persistent", true}, {"span", nullptr}});
  j["buffers"] = buffers;
  j["total_parameters"] = total;
  j["unresolved"] = nlohmann::json::array();
  nlohmann::json notes = nlohmann::json::array();
  if (model.export_info.is_object() && model.export_info.contains("notes"))
    for (const auto& n : model.export_info["notes"]) notes.push_back(n);
  j["notes"] = notes;
  if (model.export_info.is_object()) {
    nlohmann::json e;
    for (const char* k : {"source_sha256", "source_fnv1a64", "weights", "torch", "example_inputs", "script_error"})
      if (model.export_info.contains(k)) e[k] = model.export_info[k];
    j["export"] = e;
  }
  if (!graph) return j;

  const ExactGraph& g = *graph;
  std::vector<char> used(g.values.size(), 0);
  for (const auto& op : g.ops) {
    for (int i : op.inputs) mark(g, used, i);
    for (int i : op.outputs) mark(g, used, i);
  }
  for (int i : g.input_ids) mark(g, used, i);
  for (int i : g.output_ids) mark(g, used, i);
  nlohmann::json values = nlohmann::json::array();
  for (size_t i = 0; i < g.values.size(); ++i) {
    if (!used[i]) continue;
    const auto& r = g.values[i];
    nlohmann::json v{{"id", i}, {"kind", r.kind}};
    if (r.kind == "tensor") {
      v["shape"] = r.shape_known ? nlohmann::json(r.shape) : nlohmann::json(nullptr);
      if (!r.dtype.empty()) v["dtype"] = r.dtype;
    }
    if (!r.value.is_null()) v["value"] = r.value;
    if (!r.items.empty()) v["items"] = r.items;
    if (r.parameter >= 0) v["parameter"] = model.parameters[r.parameter].name;
    if (r.buffer >= 0) v["buffer"] = model.buffers[r.buffer].name;
    if (r.data_dependent) v["data_dependent"] = true;
    values.push_back(std::move(v));
  }
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : g.ops) {
    nlohmann::json o{{"kind", op.kind}, {"module", model.modules[op.module].name}, {"inputs", op.inputs}, {"outputs", op.outputs}};
    if (!op.method.empty()) o["method"] = op.method;
    if (op.end >= 0) o["end"] = op.end;
    if (op.span.valid()) o["span"] = span_json(op.span);
    if (op.origin.valid()) o["origin"] = op.origin.file + ":" + std::to_string(op.origin.line);
    if (!op.error.empty()) o["error"] = op.error;
    ops.push_back(std::move(o));
  }
  nlohmann::json inputs = nlohmann::json::array();
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const auto& in = g.inputs[i];
    nlohmann::json x{{"name", in.name}, {"why", in.why}};
    if (!in.shape.empty()) {
      x["shape"] = in.shape;
      x["dtype"] = in.dtype;
    }
    if (i < g.input_ids.size()) x["id"] = g.input_ids[i];
    inputs.push_back(std::move(x));
  }
  j["graph"] = {{"inputs", inputs}, {"outputs", g.output_ids}, {"values", values}, {"ops", ops}, {"notes", g.notes}};
  if (!g.error.empty()) j["graph"]["error"] = g.error;
  return j;
}

std::string graph_to_text(const LoadedModel& model, const ExactGraph* graph) {
  std::ostringstream out;
  out << "model: " << (model.modules.empty() ? "" : model.modules[0].class_name);
  if (!model.method().empty()) out << " (" << model.method() << "d from " << model.source() << ")";
  out << "\n\nmodules: " << model.modules.size() - 1 << ", parameters: " << model.parameters.size();
  int64_t total = 0;
  for (const auto& p : model.parameters) total += p.tensor.numel();
  out << " (" << total << " elements)\n";
  for (const auto& p : model.parameters) {
    out << "  " << p.name << " [";
    auto s = p.tensor.sizes();
    for (size_t i = 0; i < s.size(); ++i) out << (i ? ", " : "") << s[i];
    out << "] " << dtype_name(p.tensor.scalar_type()) << "\n";
  }
  if (!graph) return out.str();
  const ExactGraph& g = *graph;
  out << "\ninputs:\n";
  for (const auto& in : g.inputs) {
    out << "  " << in.name << ": [";
    for (size_t i = 0; i < in.shape.size(); ++i) out << (i ? ", " : "") << in.shape[i];
    out << "] " << in.dtype << " (" << in.why << ")\n";
  }
  out << "\nops (" << g.ops.size() << "):\n";
  std::vector<int> ends;
  auto source = model.source();
  auto slash = source.rfind('/');
  std::string base = slash == std::string::npos ? source : source.substr(slash + 1);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    while (!ends.empty() && static_cast<int>(i) >= ends.back()) ends.pop_back();
    const auto& op = g.ops[i];
    out << std::string(2 + 2 * ends.size(), ' ');
    const auto& mod = model.modules[op.module].name;
    out << (mod.empty() ? "<root>" : mod) << "  " << op.kind;
    if (!op.method.empty()) out << " " << op.method;
    out << " (";
    bool first = true;
    for (int id : op.inputs) {
      const auto& r = g.values[id];
      if (r.kind != "tensor" && r.items.empty()) continue;
      out << (first ? "" : ", ");
      first = false;
      if (r.parameter >= 0) out << model.parameters[r.parameter].name;
      else if (r.kind == "tensor") out << shape_text(r);
      else out << r.kind << "[" << r.items.size() << "]";
    }
    out << ") ->";
    for (int id : op.outputs) out << " " << shape_text(g.values[id]);
    if (op.span.valid()) out << "  @" << base << ":" << op.span.line;
    if (!op.error.empty()) out << "  !" << op.error;
    out << "\n";
    if (op.end > static_cast<int>(i) + 1) ends.push_back(op.end);
  }
  for (const auto& n : g.notes) out << "note: " << n << "\n";
  if (!g.error.empty()) out << "error: " << g.error << "\n";
  return out.str();
}

}  // namespace shardlens::torchgraph
