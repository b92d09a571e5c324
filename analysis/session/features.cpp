#include "session/features.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "ir/module_path.h"
#include "plan/ccl_cost.h"
#include "emit/insertion.h"
#include "plan/plan_output.h"

namespace shardlens::session {
namespace {

std::string kind_name(plan::Ccl kind) {
  std::string k = plan::ccl_name(kind);
  std::replace(k.begin(), k.end(), '_', '-');
  return k;
}

std::string code_span(const std::string& s) { return "`" + s + "`"; }

// "h.0.attn.c_attn", "h.1.attn.c_attn" → "h.*.attn.c_attn".
std::string pattern_of(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  if (names.size() == 1) return names[0];
  auto first = ir::split_module_path(names[0]);
  for (size_t i = 1; i < names.size(); ++i) {
    auto other = ir::split_module_path(names[i]);
    if (other.size() != first.size()) return names[0] + " (+" + std::to_string(names.size() - 1) + ")";
    for (size_t k = 0; k < first.size(); ++k)
      if (other[k] != first[k]) first[k] = "*";
  }
  std::string out;
  for (auto& p : first) out += (out.empty() ? "" : ".") + p;
  return out;
}

bool matches_module(const std::string& at, const std::string& pattern) {
  return at == pattern || (at.size() > pattern.size() && at.compare(0, pattern.size(), pattern) == 0 && at[pattern.size()] == '.');
}

// Collectives by kind, e.g. "2 all-reduce + 1 all-gather", with total bytes and time.
struct Tally {
  std::map<std::string, double> count_by_kind;
  double bytes = 0, us = 0;
  int count() const {
    double n = 0;
    for (auto& [k, c] : count_by_kind) n += c;
    return static_cast<int>(std::lround(n));
  }
  std::string kinds() const {
    std::string s;
    for (auto& [k, c] : count_by_kind) {
      long n = std::lround(c);
      if (n == 0) continue;
      s += (s.empty() ? "" : " + ") + std::to_string(n) + " " + k;
    }
    return s.empty() ? "no collectives" : s;
  }
};

Tally tally(const plan::MeshPlan& mp, const std::string& module_pattern, int instances, int line = 0) {
  Tally t;
  for (auto& c : mp.collectives) {
    bool hit = module_pattern.empty() || matches_module(c.at, module_pattern) ||
               (line > 0 && c.span.valid() && c.span.in_document() && static_cast<int>(c.span.line) <= line && line <= static_cast<int>(c.span.end_line));
    if (!hit) continue;
    double per_instance = static_cast<double>(c.count) / std::max(1, instances);
    t.count_by_kind[kind_name(c.kind)] += per_instance;
    t.bytes += per_instance * c.bytes;
    t.us += per_instance * c.time_us;
  }
  return t;
}

std::string line_text(const DocumentAnalysis& a, uint32_t line_1based) {
  size_t start = a.line_offset(line_1based);
  size_t end = a.text.find('\n', start);
  return a.text.substr(start, (end == std::string::npos ? a.text.size() : end) - start);
}

// Where `class Name` is defined: its name's byte range, or npos.
std::pair<size_t, size_t> class_definition(const DocumentAnalysis& a, const std::string& name) {
  size_t pos = 0;
  while ((pos = a.text.find("class " + name, pos)) != std::string::npos) {
    size_t after = pos + 6 + name.size();
    bool line_start = pos == 0 || a.text.find_last_not_of(" \t", pos - 1) == std::string::npos ||
                      a.text[a.text.find_last_not_of(" \t", pos - 1)] == '\n';
    bool word_end = after >= a.text.size() || a.text[after] == '(' || a.text[after] == ':' || a.text[after] == ' ';
    if (line_start && word_end) return {pos + 6, after};
    pos = after;
  }
  return {std::string::npos, std::string::npos};
}

std::string alternatives_markdown(const plan::MeshPlan& mp, size_t limit) {
  std::string md;
  size_t n = 0;
  for (auto& alt : mp.alternatives) {
    if (n++ >= limit) break;
    md += "- " + alt.name + ": " + (alt.feasible ? alt.why_rejected : "impossible — " + alt.why_rejected) + "\n";
  }
  return md;
}

std::string mesh_heading(const plan::MeshPlan& mp) {
  return "**" + mp.mesh.shape_string() + (mp.mesh.preset.empty() ? "" : " (" + mp.mesh.preset + ")") + "**";
}

// Hover on a parameter created directly (`self.weight = nn.Parameter(...)`): every instance of it.
std::optional<std::string> parameter_hover(const DocumentAnalysis& a, uint32_t line) {
  std::vector<const ir::Parameter*> params;
  for (auto& p : a.model().parameters)
    if (p.span.valid() && p.span.in_document() && p.span.line <= line && line <= p.span.end_line) params.push_back(&p);
  if (params.empty()) return std::nullopt;
  std::vector<std::string> names;
  for (auto* p : params) names.push_back(p->name);
  std::string md = "### " + code_span(pattern_of(names)) + " " + plan::shape_string(params[0]->shape) +
                   (params.size() > 1 ? " × " + std::to_string(params.size()) : "") + "\n";
  for (auto& mp : a.plan.meshes) {
    std::optional<plan::ParameterLayout> l;
    for (const plan::ParameterLayout x : mp.parameters)
      if (x.name == params[0]->name) l = x;
    if (!l) continue;
    auto spec = l->spec();
    md += "\n" + mesh_heading(mp) + ": **" + std::string(l->layout) + "**" + (spec ? " " + code_span(python_spec(*spec)) : "") +
          ", per device " + plan::shape_string(plan::per_device_shape(params[0]->shape, *l, mp.mesh)) + "\n\n- why: " + std::string(l->why) + "\n";
  }
  return md;
}

// Hover on a layer: the modules constructed by the expression on this line.
std::optional<std::string> layer_hover(const DocumentAnalysis& a, uint32_t line) {
  const ir::Span* best = nullptr;
  for (auto& m : a.model().modules) {
    if (!m.span.valid() || m.name.empty()) continue;
    if (m.span.in_document() && m.span.line <= line && line <= m.span.end_line) {
      if (!best || (m.span.end_line - m.span.line) < (best->end_line - best->line)) best = &m.span;
    }
  }
  // A call in forward() (`x = self.c_attn(x)`): the module it calls, when no layer is built here.
  // Module calls first; else a layer that owns weights (a Linear's contraction runs as its op).
  for (int pass = 0; pass < 2 && !best; ++pass)
    for (auto& op : a.model().dataflow.ops) {
      if (op.module <= 0 || !op.span.valid() || !op.span.in_document() || op.span.line > line || line > op.span.end_line) continue;
      const ir::Module& m = a.model().modules[op.module];
      bool wanted = pass == 0 ? op.kind == ir::OpKind::Call : !m.parameters.empty();
      if (wanted && m.span.valid()) {
        best = &m.span;
        break;
      }
    }
  std::vector<const ir::Module*> group;
  if (best)
    for (auto& m : a.model().modules)
      if (!m.name.empty() && m.span == *best) group.push_back(&m);
  // A call in forward() that causes collectives also gets a hover.
  bool forward_collectives = false;
  for (auto& mp : a.plan.meshes)
    for (auto& c : mp.collectives)
      if (c.span.valid() && c.span.in_document() && c.span.line <= line && line <= c.span.end_line) forward_collectives = true;
  if (group.empty() && !forward_collectives) return parameter_hover(a, line);

  std::string md;
  std::string pattern;
  int instances = std::max<size_t>(1, group.size());
  if (!group.empty()) {
    std::vector<std::string> names;
    for (auto* m : group) names.push_back(m->name);
    pattern = pattern_of(names);
    md += "### " + code_span(pattern) + " — " + group[0]->class_name + (group.size() > 1 ? " × " + std::to_string(group.size()) : "") + "\n";
  } else {
    md += "### collectives caused here\n";
  }
  // Parameters owned by the first instance (its siblings share the layout).
  std::vector<const ir::Parameter*> params;
  if (!group.empty()) {
    const std::string& prefix = group[0]->name;
    for (auto& p : a.model().parameters)
      if (p.name.size() > prefix.size() && p.name.compare(0, prefix.size(), prefix) == 0 && p.name[prefix.size()] == '.') params.push_back(&p);
  }
  for (auto& mp : a.plan.meshes) {
    md += "\n" + mesh_heading(mp) + "\n\n";
    std::map<std::string_view, size_t> layouts;  // name -> position in mp.parameters
    for (size_t i = 0; i < mp.parameters.size(); ++i) layouts.emplace(mp.parameters[i].name, i);
    size_t shown = 0;
    std::string why;
    for (auto* p : params) {
      if (shown >= 6) {
        md += "- … " + std::to_string(params.size() - shown) + " more parameters\n";
        break;
      }
      auto it = layouts.find(p->name);
      if (it == layouts.end()) continue;
      const plan::ParameterLayout l = mp.parameters[it->second];
      std::string local = p->name.substr(group[0]->name.size() + 1);
      auto spec = l.spec();
      md += "- " + code_span(local) + " " + plan::shape_string(p->shape) + " → **" + std::string(l.layout) + "**" +
            (spec ? " " + code_span(python_spec(*spec)) : "") + ", per device " + plan::shape_string(plan::per_device_shape(p->shape, l, mp.mesh)) + "\n";
      if (why.empty()) why = std::string(l.why);
      ++shown;
    }
    Tally t = tally(mp, pattern, group.empty() ? 1 : instances, group.empty() ? static_cast<int>(line) : 0);
    md += "- collectives" + std::string(group.size() > 1 ? " per instance" : "") + ": " + t.kinds();
    if (t.count() > 0) md += " · " + plan::format_bytes(t.bytes) + " · " + plan::format_us(t.us);
    md += "\n";
    for (auto& c : mp.collectives) {
      bool hit = (!pattern.empty() && matches_module(c.at, pattern)) || (c.span.valid() && c.span.in_document() && c.span.line <= line && line <= c.span.end_line);
      if (hit) md += "  - " + std::to_string(c.count) + " × " + kind_name(c.kind) + " of " + plan::format_bytes(c.bytes) + " " + c.tensor + " at " + code_span(c.at) + ": " + c.why + "\n";
    }
    if (!why.empty()) md += "- why: " + why + "\n";
  }
  if (!a.plan.meshes.empty() && !a.plan.meshes[0].alternatives.empty())
    md += "\nRejected for the model (" + a.plan.meshes[0].mesh.shape_string() + "):\n" + alternatives_markdown(a.plan.meshes[0], 3);
  return md;
}

// The whole model per mesh: totals, collectives by kind, the memory fallback, rejected alternatives.
std::string model_summary(const DocumentAnalysis& a) {
  std::string md;
  for (auto& mp : a.plan.meshes) {
    md += "\n" + mesh_heading(mp) + " — " + mp.mode + "\n\n";
    md += "- " + std::to_string(mp.totals.collectives) + " collectives · " + plan::format_bytes(mp.totals.bytes) + " · " +
          plan::format_us(mp.totals.ccl_us) + " of collectives per forward; estimate " + plan::format_us(mp.totals.est_time_us) +
          " per forward, " + plan::format_bytes(mp.totals.memory_per_device_bytes) + " per device\n";
    md += "- " + tally(mp, "", 1).kinds() + "\n";
    if (mp.memory_fallback) md += "- ⚠ memory fallback: the fastest layout does not fit in device DRAM\n";
    if (!mp.alternatives.empty()) md += "\nRejected:\n" + alternatives_markdown(mp, 4);
  }
  return md;
}

// Hover on the statement that builds the model (`model = GPT(GPTConfig())`).
std::optional<std::string> instance_hover(const DocumentAnalysis& a, uint32_t line) {
  const ir::Module& root = a.model().modules[0];
  if (!root.span.valid() || !root.span.in_document() || line < root.span.line || line > root.span.end_line) return std::nullopt;
  return "### " + code_span(a.model().root_expression.empty() ? root.class_name : a.model().root_expression) + " — " + root.class_name + ", " +
         std::to_string(a.model().parameters.size()) + " parameter tensors\n" + model_summary(a);
}

std::optional<std::string> class_hover(const DocumentAnalysis& a, uint32_t line) {
  std::string text = line_text(a, line);
  static const std::regex class_line(R"(^\s*class\s+([A-Za-z_][A-Za-z0-9_]*))");
  std::smatch m;
  if (!std::regex_search(text, m, class_line)) return std::nullopt;
  std::string name = m[1];
  std::vector<const ir::Module*> instances;
  for (auto& mod : a.model().modules)
    if (mod.class_name == name) instances.push_back(&mod);
  if (instances.empty()) return std::nullopt;
  std::vector<std::string> names;
  for (auto* mod : instances) names.push_back(mod->name.empty() ? "(root)" : mod->name);
  bool root = instances[0]->name.empty();
  std::string pattern = root ? "" : pattern_of(names);
  std::string md = "### " + code_span(name) + " — " + std::to_string(instances.size()) + " instance" +
                   (instances.size() == 1 ? "" : "s") + (root ? " (the model)" : " (" + code_span(pattern) + ")") + "\n";
  if (root) return md + model_summary(a);
  for (auto& mp : a.plan.meshes) {
    md += "\n" + mesh_heading(mp) + "\n\n";
    for (auto& c : mp.components) {
      if (c.class_name != name) continue;
      Tally t = tally(mp, c.module, c.count);
      md += "- " + code_span(c.module) + (c.count > 1 ? " × " + std::to_string(c.count) : "") + ": " + c.layout + "\n";
      md += "  - per instance: " + t.kinds() + (t.count() ? " · " + plan::format_bytes(t.bytes) + " · " + plan::format_us(t.us) : "") +
            "; compute " + plan::format_us(c.compute_us) + "\n";
    }
  }
  return md;
}

// A config field or constant that sets a size the plan divides by the mesh (heads, hidden, ...).
std::optional<std::string> config_hover(const DocumentAnalysis& a, uint32_t line) {
  std::string text = line_text(a, line);
  static const std::regex field(R"(^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*[A-Za-z_][A-Za-z0-9_\[\]., ]*)?=\s*(\d+)\s*,?\s*(#.*)?$)");
  std::smatch m;
  std::string md;
  for (auto& f : a.findings) {
    if (f.code.rfind("divisibility", 0) != 0 && f.code.rfind("memory", 0) != 0) continue;
    size_t s = a.line_offset(line), e = a.line_offset(line + 1);
    if (f.start >= s && f.start < e) md += "- ⚠ " + f.message + "\n";
  }
  if (std::regex_search(text, m, field)) {
    std::string name = m[1];
    int64_t value = std::stoll(m[2]);
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    static const char* sizes[] = {"head", "hidden", "embd", "embed", "dim", "d_model", "vocab", "expert", "intermediate", "ffn", "width", "channels"};
    bool relevant = false;
    for (auto* s : sizes) relevant |= lower.find(s) != std::string::npos;
    if (relevant && value > 0) {
      std::string fits;
      for (auto& mp : a.plan.meshes) {
        int64_t n = mp.mesh.cols;
        fits += "- " + mp.mesh.shape_string() + ": " + std::to_string(value) + (value % n == 0 ? " divides" : " does **not** divide") +
                " into " + std::to_string(n) + " (model axis)" + (value % n == 0 ? " → " + std::to_string(value / n) + " per device" : "") + "\n";
      }
      md = "### " + code_span(name + " = " + std::to_string(value)) + "\n" + md + fits;
    }
  }
  if (md.empty()) return std::nullopt;
  if (md.rfind("###", 0) != 0) md = "### sharding\n" + md;
  return md;
}

}  // namespace

std::optional<Hover> hover_at(const DocumentAnalysis& a, size_t offset) {
  if (!a.plan.ok) return std::nullopt;
  auto it = std::upper_bound(a.line_starts.begin(), a.line_starts.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - a.line_starts.begin());  // 1-based
  std::string text = line_text(a, line);
  if (text.find_first_not_of(" \t\r") == std::string::npos) return std::nullopt;
  std::optional<std::string> md = class_hover(a, line);
  if (!md) md = instance_hover(a, line);
  if (!md) md = layer_hover(a, line);
  if (!md) md = config_hover(a, line);
  if (!md) return std::nullopt;
  size_t start = a.line_offset(line);
  return Hover{*md, start, start + text.size()};
}

std::vector<CodeLens> code_lenses(const DocumentAnalysis& a) {
  std::vector<CodeLens> out;
  if (!a.plan.ok || a.model().modules.empty()) return out;
  // Classes in the order the model uses them; built-in layers have no class in the file.
  std::vector<std::string> classes;
  std::set<std::string> seen;
  for (auto& m : a.model().modules)
    if (seen.insert(m.class_name).second) classes.push_back(m.class_name);
  for (auto& name : classes) {
    auto [start, end] = class_definition(a, name);
    if (start == std::string::npos) continue;
    bool root = a.model().modules[0].class_name == name;
    for (auto& mp : a.plan.meshes) {
      std::string title = mp.mesh.shape_string() + ": ";
      if (root) {
        Tally t = tally(mp, "", 1);
        title += t.kinds() + " · " + plan::format_bytes(mp.totals.bytes) + " · " + plan::format_us(mp.totals.est_time_us) + " per forward";
        if (mp.memory_fallback) title += " · memory fallback";
      } else {
        Tally t;
        int instances = 0;
        for (auto& c : mp.components) {
          if (c.class_name != name) continue;
          Tally one = tally(mp, c.module, c.count);
          for (auto& [k, n] : one.count_by_kind) t.count_by_kind[k] += n;
          t.bytes += one.bytes;
          t.us += one.us;
          instances += c.count;
        }
        if (instances == 0) {
          // A class nested inside components (e.g. the attention of a block).
          std::vector<std::string> names;
          for (auto& m : a.model().modules)
            if (m.class_name == name) names.push_back(m.name);
          if (names.empty()) continue;
          instances = static_cast<int>(names.size());
          t = tally(mp, pattern_of(names), instances);
        }
        title += t.kinds() + (t.count() ? " · " + plan::format_bytes(t.bytes) : "") + " per forward" +
                 (instances > 1 ? " × " + std::to_string(instances) + " blocks" : "");
      }
      out.push_back({start, end, title});
    }
  }
  return out;
}

std::optional<ByteEdit> annotation_block_edit(const DocumentAnalysis& a, emit::BlockKind kind, std::string& error) {
  if (!a.plan.ok || a.plan.meshes.empty()) {
    error = a.error.empty() ? "there is no plan for this document" : a.error;
    return std::nullopt;
  }
  // The first configured mesh is the one annotations are written for.
  const plan::MeshPlan& mp = a.plan.meshes[0];
  std::string file = a.model().source.empty() ? "FILE" : a.model().source.substr(a.model().source.find_last_of('/') + 1);
  std::string regenerate = "shardlens plan " + file + " --mesh " + mp.mesh.shape_string() +
                           (kind == emit::BlockKind::TtXla ? " --emit tt-xla" : " --emit shard-spec");
  emit::InsertionEdit edit = emit::annotation_edit(a.text, a.model(), mp, kind, regenerate);
  if (!edit.ok) {
    error = edit.error;
    return std::nullopt;
  }
  return ByteEdit{edit.start, edit.end, edit.text};
}

}  // namespace shardlens::session
