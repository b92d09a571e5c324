#include "report/report_facts.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>

#include "ir/split.h"

namespace shardlens::report::detail {

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
  for (std::string part : ir::split(inner, ',')) {
    part.erase(0, part.find_first_not_of(' '));
    if (auto e = part.find_last_not_of(' '); e != std::string::npos) part.erase(e + 1);
    if (!part.empty()) roles.push_back(part);
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

std::map<std::string_view, plan::ParameterLayout> layouts_by_name(const plan::MeshPlan& mesh) {
  std::map<std::string_view, plan::ParameterLayout> out;
  for (const plan::ParameterLayout p : mesh.parameters) out.emplace(p.name, p);
  return out;
}

namespace {

// The top-level items of a module call's body [begin, end): module calls and leaf-module ops.
std::vector<size_t> body_items(const ir::ModelIR& model, size_t begin, size_t end) {
  const auto& ops = model.dataflow.ops;
  std::vector<size_t> items;
  for (size_t k = begin; k < end && k < ops.size();) {
    const auto& op = ops[k];
    bool nested = op.kind == ir::OpKind::Call || op.kind == ir::OpKind::Experts;
    size_t next = nested && op.end > static_cast<int>(k) ? static_cast<size_t>(op.end) : k + 1;
    if ((op.module > 0 || op.kind == ir::OpKind::Call) && op.module >= 0 && op.module < static_cast<int>(model.modules.size())) items.push_back(k);
    k = next;
  }
  return items;
}

}  // namespace

std::vector<ComponentGroup> component_groups(const ir::ModelIR& model, const plan::MeshPlan& mesh) {
  std::vector<ComponentGroup> groups;
  std::map<std::string, size_t> by_pattern;
  auto add = [&](const std::string& pattern, int module, const std::string& cls) {
    auto [it, fresh] = by_pattern.emplace(pattern, groups.size());
    if (fresh) groups.push_back({pattern, {}, {}});
    ComponentGroup& g = groups[it->second];
    if (module >= 0 && std::find(g.instances.begin(), g.instances.end(), module) == g.instances.end()) g.instances.push_back(module);
    if (std::find(g.classes.begin(), g.classes.end(), cls) == g.classes.end()) g.classes.push_back(cls);
  };
  const auto& flow = model.dataflow;
  if (flow.ops.empty()) {
    // No traced forward: the planner's component rows, without instances.
    for (auto& c : mesh.components) add(c.module, -1, c.class_name);
    return groups;
  }
  size_t begin = 0, end = flow.ops.size();
  if (flow.ops[0].kind == ir::OpKind::Call && flow.ops[0].module == 0 && flow.ops[0].end > 0) {
    begin = 1;
    end = std::min(static_cast<size_t>(flow.ops[0].end), flow.ops.size());
  }
  // The root forward's items; a wrapper called once whose body calls further modules (HF's
  // `model`, an `encoder`) is opened so that its blocks become components.
  std::vector<size_t> items = body_items(model, begin, end);
  for (int depth = 0; depth < 4; ++depth) {
    std::map<std::string, int> uses;
    for (size_t k : items) uses[module_pattern(model.modules[flow.ops[k].module].name)]++;
    std::vector<size_t> opened;
    bool changed = false;
    for (size_t k : items) {
      const auto& op = flow.ops[k];
      const std::string& name = model.modules[op.module].name;
      if (op.kind == ir::OpKind::Call && uses[module_pattern(name)] == 1 && module_pattern(name) == name && op.end > static_cast<int>(k)) {
        auto inner = body_items(model, k + 1, static_cast<size_t>(op.end));
        bool calls = std::any_of(inner.begin(), inner.end(), [&](size_t i) { return flow.ops[i].kind == ir::OpKind::Call; });
        if (calls) {
          opened.insert(opened.end(), inner.begin(), inner.end());
          changed = true;
          continue;
        }
      }
      opened.push_back(k);
    }
    items = std::move(opened);
    if (!changed) break;
  }
  for (size_t k : items) {
    const auto& op = flow.ops[k];
    const auto& mod = model.modules[op.module];
    add(module_pattern(mod.name), op.module, mod.class_name);
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

}  // namespace shardlens::report::detail
