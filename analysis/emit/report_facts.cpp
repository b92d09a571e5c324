#include "emit/report_facts.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>

namespace shardlens::emit::detail {

std::string module_pattern(std::string_view name) {
  std::string out;
  size_t i = 0;
  while (i <= name.size()) {
    size_t j = name.find('.', i);
    std::string_view part = name.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    out += digits ? std::string("*") : std::string(part);
    if (j == std::string_view::npos) break;
    out += '.';
    i = j + 1;
  }
  return out;
}

std::string_view owner_of(std::string_view parameter) {
  size_t dot = parameter.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : parameter.substr(0, dot);
}

std::vector<std::string> tensor_roles(const std::string& tensor) {
  std::vector<std::string> roles;
  size_t open = tensor.rfind('(');
  size_t close = tensor.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return roles;
  std::string inner = tensor.substr(open + 1, close - open - 1);
  size_t i = 0;
  while (i <= inner.size()) {
    size_t j = inner.find(',', i);
    std::string part = inner.substr(i, j == std::string::npos ? std::string::npos : j - i);
    part.erase(0, part.find_first_not_of(' '));
    if (auto e = part.find_last_not_of(' '); e != std::string::npos) part.erase(e + 1);
    if (!part.empty()) roles.push_back(part);
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return roles;
}

std::string shorten(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t cut = text.rfind(' ', max_chars);
  if (cut == std::string::npos || cut < max_chars / 2) cut = max_chars;
  // Never cut inside a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out = text.substr(0, cut);
  while (!out.empty() && (out.back() == ',' || out.back() == ';' || out.back() == ' ' || out.back() == ':')) out.pop_back();
  return out + "…";
}

std::string mesh_label(const plan::Mesh& mesh) {
  return mesh.shape_string() + (mesh.preset.empty() ? "" : " (" + mesh.preset + ")");
}

std::vector<int64_t> per_device_shape(const std::vector<int64_t>& shape, const plan::ParameterLayout& layout, const plan::Mesh& mesh) {
  std::vector<int64_t> out = shape;
  if (layout.sharded_dim < 0 || layout.sharded_dim >= static_cast<int>(out.size()) || !layout.axes) return out;
  int64_t divisor = 1;
  for (auto& a : *layout.axes) divisor *= a == "batch" ? mesh.rows : mesh.cols;
  if (divisor > 0) out[layout.sharded_dim] = (out[layout.sharded_dim] + divisor - 1) / divisor;
  return out;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string spec_string(const plan::ParameterLayout& layout) {
  auto spec = layout.spec();
  if (!spec) return "no spec on this weight";
  std::string s = "(";
  for (size_t d = 0; d < spec->size(); ++d) {
    const auto& axes = (*spec)[d];
    if (d) s += ", ";
    if (axes.empty()) s += "None";
    else if (axes.size() == 1) s += "\"" + axes[0] + "\"";
    else {
      s += "(";
      for (size_t k = 0; k < axes.size(); ++k) s += (k ? ", \"" : "\"") + axes[k] + "\"";
      s += ")";
    }
  }
  if (spec->size() == 1) s += ",";
  return s + ")";
}

std::map<std::string_view, const plan::ParameterLayout*> layouts_by_name(const plan::MeshPlan& mesh) {
  std::map<std::string_view, const plan::ParameterLayout*> out;
  for (auto& p : mesh.parameters) out.emplace(p.name, &p);
  return out;
}

std::vector<ComponentGroup> component_groups(const ir::ModelIR& model, const plan::MeshPlan& mesh) {
  std::vector<ComponentGroup> groups;
  std::map<std::string, size_t> by_pattern;
  std::vector<size_t> group_of_row(mesh.components.size());
  for (size_t r = 0; r < mesh.components.size(); ++r) {
    const auto& c = mesh.components[r];
    auto [it, fresh] = by_pattern.emplace(c.module, groups.size());
    if (fresh) groups.push_back({c.module, {}, {}, {}});
    ComponentGroup& g = groups[it->second];
    g.plan_rows.push_back(r);
    if (std::find(g.classes.begin(), g.classes.end(), c.class_name) == g.classes.end()) g.classes.push_back(c.class_name);
    group_of_row[r] = it->second;
  }
  // Instances: the root forward's top-level module calls, in order, as the planner folded them.
  const auto& flow = model.dataflow;
  if (!flow.traced || flow.ops.empty()) return groups;
  size_t begin = 0, end = flow.ops.size();
  if (flow.ops[0].kind == ir::OpKind::Call && flow.ops[0].module == 0 && flow.ops[0].end > 0) {
    begin = 1;
    end = std::min(static_cast<size_t>(flow.ops[0].end), flow.ops.size());
  }
  std::vector<std::vector<int>> per_row(mesh.components.size());
  size_t row = 0;
  int used = 0;
  bool consistent = true;
  for (size_t k = begin; k < end && consistent;) {
    const auto& op = flow.ops[k];
    bool call = op.kind == ir::OpKind::Call || op.kind == ir::OpKind::Experts;
    size_t next = call && op.end > static_cast<int>(k) ? static_cast<size_t>(op.end) : k + 1;
    if ((op.module > 0 || op.kind == ir::OpKind::Call) && op.module >= 0 && op.module < static_cast<int>(model.modules.size())) {
      while (row < mesh.components.size() && used >= mesh.components[row].count) {
        ++row;
        used = 0;
      }
      if (row >= mesh.components.size()) break;
      const std::string& name = model.modules[op.module].name;
      const auto& c = mesh.components[row];
      if (module_pattern(name) != c.module && name != c.module) consistent = false;
      else {
        per_row[row].push_back(op.module);
        ++used;
      }
    }
    k = next;
  }
  if (!consistent) return groups;
  for (size_t r = 0; r < per_row.size(); ++r) {
    auto& inst = groups[group_of_row[r]].instances;
    for (int m : per_row[r])
      if (std::find(inst.begin(), inst.end(), m) == inst.end()) inst.push_back(m);
  }
  return groups;
}

std::string component_of(const std::vector<ComponentGroup>& groups, const std::string& at) {
  const ComponentGroup* best = nullptr;
  for (auto& g : groups) {
    const std::string& p = g.pattern;
    bool match = at == p || (at.size() > p.size() && at.compare(0, p.size(), p) == 0 && at[p.size()] == '.');
    if (match && (!best || p.size() > best->pattern.size())) best = &g;
  }
  if (best) return best->pattern;
  if (at == "output") return std::string(kModelOutput);
  return at;
}

Budget ccl_budget(const std::vector<ComponentGroup>& groups, const plan::MeshPlan& mesh) {
  Budget b;
  std::map<std::tuple<std::string, int, std::string, long long>, size_t> index;
  std::map<std::string, size_t> component_index;
  for (auto& c : mesh.collectives) {
    std::string comp = component_of(groups, c.at);
    auto key = std::make_tuple(comp, static_cast<int>(c.kind), c.axis, std::llround(c.bytes));
    auto it = index.find(key);
    if (it == index.end()) {
      BudgetRow r;
      r.component = comp;
      r.kind = c.kind;
      r.axis = c.axis;
      r.bytes_each = c.bytes;
      it = index.emplace(key, b.rows.size()).first;
      b.rows.push_back(r);
    }
    BudgetRow& r = b.rows[it->second];
    r.count += c.count;
    r.time_us += c.count * c.time_us;
  }
  // Forward order of components; anything not a component (the output gather) last.
  auto rank = [&](const std::string& comp) {
    for (size_t i = 0; i < groups.size(); ++i)
      if (groups[i].pattern == comp) return i;
    return groups.size();
  };
  std::stable_sort(b.rows.begin(), b.rows.end(), [&](const BudgetRow& x, const BudgetRow& y) { return rank(x.component) < rank(y.component); });
  for (auto& r : b.rows) {
    b.collectives += r.count;
    b.bytes += r.total_bytes();
    b.time_us += r.time_us;
    if (r.count == 0) continue;
    auto [it, fresh] = component_index.emplace(r.component, b.components.size());
    if (fresh) b.components.push_back({r.component, 0, 0, 0});
    auto& cb = b.components[it->second];
    cb.collectives += r.count;
    cb.bytes += r.total_bytes();
    cb.time_us += r.time_us;
  }
  return b;
}

std::vector<LayoutPair> folded_pairs(const std::vector<LayoutPair>& pairs) {
  std::vector<LayoutPair> out;
  for (auto& p : pairs) {
    LayoutPair f;
    for (auto& c : p.columns) {
      std::string pc = module_pattern(c);
      if (std::find(f.columns.begin(), f.columns.end(), pc) == f.columns.end()) f.columns.push_back(pc);
    }
    f.row = module_pattern(p.row);
    bool seen = false;
    for (auto& o : out) seen |= o.row == f.row && o.columns == f.columns;
    if (!seen) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace shardlens::emit::detail
