#include "ir/ir_text.h"

#include <cstdio>
#include <sstream>

namespace shardlens::ir {
namespace {

bool is_index(const std::string& key) {
  return !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
}

// Consecutive children with integer keys and identical structure, as [first, last).
struct Run {
  size_t first, last;
};

std::vector<Run> runs_of(const ModelIR& model, const Module& m) {
  std::vector<Run> runs;
  for (size_t i = 0; i < m.children.size();) {
    size_t j = i + 1;
    if (is_index(m.child_keys[i]))
      while (j < m.children.size() && is_index(m.child_keys[j]) &&
             model.modules[m.children[j]].structure_hash == model.modules[m.children[i]].structure_hash &&
             std::stoll(m.child_keys[j]) == std::stoll(m.child_keys[j - 1]) + 1)
        ++j;
    runs.push_back({i, j});
    i = j;
  }
  return runs;
}

void print_module(const ModelIR& model, int index, int indent, std::ostringstream& out) {
  const Module& m = model.modules[index];
  if (m.children.empty()) {
    out << m.class_name << "(" << m.extra_repr << ")";
    return;
  }
  std::string pad(static_cast<size_t>(indent + 2), ' ');
  out << m.class_name << "(\n";
  if (!m.extra_repr.empty()) out << pad << m.extra_repr << "\n";
  for (const Run& r : runs_of(model, m)) {
    size_t n = r.last - r.first;
    out << pad << "(" << m.child_keys[r.first];
    if (n > 1) out << "-" << m.child_keys[r.last - 1] << "): " << n << " x ";
    else out << "): ";
    print_module(model, m.children[r.first], indent + 2, out);
    out << "\n";
  }
  out << std::string(static_cast<size_t>(indent), ' ') << ")";
}

std::string shape_text(const std::vector<int64_t>& shape, bool known) {
  if (!known) return "[?]";
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

struct Row {
  std::string name, shape;
  BigInt count;
  int64_t times;
};

void collect_rows(const ModelIR& model, int index, const std::string& prefix, int64_t times, std::vector<Row>& rows) {
  const Module& m = model.modules[index];
  for (int p : m.parameters) {
    const auto& param = model.parameters[p];
    std::string leaf = param.name.substr(param.name.rfind('.') == std::string::npos ? 0 : param.name.rfind('.') + 1);
    rows.push_back({prefix + leaf, shape_text(param.shape, param.shape_known), param.count(), times});
  }
  for (const Run& r : runs_of(model, m)) {
    size_t n = r.last - r.first;
    std::string key = n > 1 ? "{" + m.child_keys[r.first] + "-" + m.child_keys[r.last - 1] + "}" : m.child_keys[r.first];
    for (size_t k = r.first; k < (n > 1 ? r.first + 1 : r.last); ++k)
      collect_rows(model, m.children[k], prefix + key + ".", times * static_cast<int64_t>(n), rows);
  }
}

std::string human(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", bytes, units[u]);
  return buf;
}

}  // namespace

std::string format_count(const BigInt& n) {
  std::string digits = n.abs().to_string(), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n.negative() ? "-" : "") + out;
}

std::string to_text(const ModelIR& model) {
  std::ostringstream out;
  if (model.modules.empty()) return "";
  print_module(model, 0, 0, out);
  out << "\n\n";
  std::vector<Row> rows;
  collect_rows(model, 0, "", 1, rows);
  size_t wname = 9, wshape = 5;
  for (auto& r : rows) {
    wname = std::max(wname, r.name.size());
    wshape = std::max(wshape, r.shape.size());
  }
  char line[1024];
  std::snprintf(line, sizeof line, "%-*s  %-*s  %15s  %s\n", static_cast<int>(wname), "parameter", static_cast<int>(wshape), "shape", "count", "");
  out << line;
  for (auto& r : rows) {
    std::string times = r.times > 1 ? "x " + std::to_string(r.times) : "";
    std::snprintf(line, sizeof line, "%-*s  %-*s  %15s  %s\n", static_cast<int>(wname), r.name.c_str(),
                  static_cast<int>(wshape), r.shape.c_str(), format_count(r.count).c_str(), times.c_str());
    out << line;
  }
  BigInt total = model.total_parameters();
  BigInt buffer_elems;
  for (auto& b : model.buffers) {
    BigInt n(1);
    for (auto d : b.shape) n = n * BigInt(d);
    if (b.shape_known) buffer_elems = buffer_elems + n;
  }
  out << "\nmodel: " << model.model << " (" << model.root_expression << ")\n";
  out << "total parameters: " << format_count(total) << " (" << human(total.to_double() * 2) << " in bf16, "
      << human(total.to_double() * 4) << " in fp32)\n";
  out << "parameter tensors: " << model.parameters.size() << ", modules: " << model.modules.size()
      << ", buffers: " << model.buffers.size() << " (" << format_count(buffer_elems) << " elements)\n";
  for (auto& n : model.notes) out << "note: " << n << "\n";
  if (!model.unresolved.empty()) {
    out << "\nunresolved (" << model.unresolved.size() << "):\n";
    for (auto& u : model.unresolved)  // where it is: the script, or the imported module the span is in
      out << "  " << (u.span.file ? source_file_path(u.span.file) : model.source) << ":" << u.span.line << ":" << u.span.column + 1 << ": "
          << u.what << ": " << u.reason << "\n";
  }
  return out.str();
}

std::string dataflow_to_text(const ModelIR& model) {
  const Dataflow& flow = model.dataflow;
  std::string out;
  if (!flow.error.empty()) out += "error: " + flow.error + "\n";
  for (auto& d : flow.input_descriptions) out += "input " + d + "\n";
  for (auto& n : flow.notes) out += "note: " + n + "\n";
  auto tensor = [&](int id) {
    const TensorInfo& t = flow.tensors[id];
    std::string s = "%" + std::to_string(id);
    if (t.parameter >= 0) s += "(" + model.parameters[t.parameter].name + ")";
    if (t.buffer >= 0) s += "(" + model.buffers[t.buffer].name + ")";
    s += "[";
    if (!t.shape_known) s += "?";
    for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? "," : "") + std::to_string(t.shape[i]);
    return s + "]";
  };
  std::vector<int> ends;
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    while (!ends.empty() && static_cast<int>(i) >= ends.back()) ends.pop_back();
    const Op& op = flow.ops[i];
    std::string line(2 * ends.size(), ' ');
    line += std::to_string(op.span.line) + ": " + op_kind_name(op.kind) + " " + op.name;
    if (!op.equation.empty()) line += " " + op.equation;
    if (!op.dims.empty()) {
      line += " dims=";
      for (size_t k = 0; k < op.dims.size(); ++k) line += (k ? "," : "") + std::to_string(op.dims[k]);
    }
    if (!op.sizes.empty()) {
      line += " sizes=";
      for (size_t k = 0; k < op.sizes.size(); ++k) line += (k ? "," : "") + std::to_string(op.sizes[k]);
    }
    if (op.groups != 1) line += " groups=" + std::to_string(op.groups);
    line += " (";
    for (size_t k = 0; k < op.inputs.size(); ++k) line += (k ? ", " : "") + tensor(op.inputs[k]);
    line += ") -> (";
    for (size_t k = 0; k < op.outputs.size(); ++k) line += (k ? ", " : "") + tensor(op.outputs[k]);
    line += ")";
    if (op.kind == OpKind::Call) line += " @" + model.modules[op.module].name;
    if (!op.detail.empty()) line += "  # " + op.detail;
    out += line + "\n";
    if (op.kind == OpKind::Call || op.kind == OpKind::Experts) ends.push_back(op.end);
  }
  return out;
}

}  // namespace shardlens::ir
