#include "report/block_diagram.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "plan/plan_output.h"

namespace shardlens::report::detail {
namespace {

constexpr size_t kMaxNodes = 40;
constexpr size_t kMaxSources = 6;

enum class Shape { Layer, Attention, Experts };

struct Node {
  std::string key;
  std::string module;  // concrete module name
  Shape shape = Shape::Layer;
  std::string name;    // shown: relative to the block
  std::string detail;  // class and weight shape
  std::string layout;
  std::vector<std::string> collectives;
};

int weight_param(const ir::ModelIR& model, const ir::Op& op, size_t min_rank) {
  for (int t : op.inputs) {
    if (t < 0 || t >= static_cast<int>(model.dataflow.tensors.size())) continue;
    const auto& info = model.dataflow.tensors[t];
    if (info.parameter >= 0 && info.shape.size() >= min_rank) return info.parameter;
  }
  return -1;
}

std::string mermaid_text(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '"') out += "#quot;";
    else if (c == '<') out += "#lt;";
    else if (c == '>') out += "#gt;";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

// Escaped for a quoted Mermaid label, keeping the <br/> line breaks the report puts in.
std::string label_text(const std::string& label) {
  std::string esc = mermaid_text(label);
  for (size_t p = esc.find("#lt;br/#gt;"); p != std::string::npos; p = esc.find("#lt;br/#gt;", p)) esc.replace(p, 11, "<br/>");
  return esc;
}

std::string class_of_layout(std::string_view layout) {
  if (layout == "column" || layout == "column_segments") return "column";
  if (layout == "row") return "row";
  if (layout.empty() || layout == "replicated") return "replicated";
  return "sharded";
}

struct Drawer {
  const ir::ModelIR& model;
  const plan::MeshPlan& mesh;
  std::map<std::string_view, plan::ParameterLayout> layouts;
  std::unordered_map<std::string, int> module_index;
  std::set<std::pair<std::string, std::string>> pair_edges;

  Drawer(const ir::ModelIR& m, const plan::MeshPlan& mp, const std::vector<LayoutPair>& pairs)
      : model(m), mesh(mp), layouts(layouts_by_name(mp)) {
    for (size_t i = 0; i < m.modules.size(); ++i) module_index.emplace(m.modules[i].name, static_cast<int>(i));
    for (auto& p : pairs)
      for (auto& c : p.columns) pair_edges.emplace(c, p.row);
  }

  std::string layout_of(int param) const {
    if (param < 0) return "";
    auto it = layouts.find(model.parameters[param].name);
    return it == layouts.end() ? "" : std::string(it->second.layout);
  }
  std::string class_of(const std::string& module) const {
    auto it = module_index.find(module);
    return it == module_index.end() ? "" : model.modules[it->second].class_name;
  }
  static std::string relative(const std::string& name, const std::string& prefix) {
    if (!prefix.empty() && name.rfind(prefix, 0) == 0 && name.size() > prefix.size()) return name.substr(prefix.size());
    return name;
  }

  // The node an op is, if any (key empty otherwise).
  Node node_of(const ir::Op& op, const std::string& prefix) const {
    Node n;
    if (op.kind == ir::OpKind::Contract || op.kind == ir::OpKind::Embedding) {
      int w = weight_param(model, op, 2);
      if (w < 0) return n;
      n.module = std::string(owner_of(model.parameters[w].name));
      n.key = "w:" + n.module;
      n.layout = layout_of(w);
      n.detail = class_of(n.module) + " " + shape_string(model.parameters[w].shape);
    } else if (op.kind == ir::OpKind::Norm) {
      int w = weight_param(model, op, 1);
      if (w < 0) return n;
      n.module = std::string(owner_of(model.parameters[w].name));
      n.key = "w:" + n.module;
      n.layout = layout_of(w);
      n.detail = class_of(n.module);
    } else if (op.kind == ir::OpKind::Attention) {
      n.module = op.module >= 0 ? model.modules[op.module].name : "";
      n.key = "a:" + n.module;
      n.shape = Shape::Attention;
      n.detail = "attention core";
    } else if (op.kind == ir::OpKind::Experts) {
      n.module = op.module >= 0 ? model.modules[op.module].name : "";
      n.key = "e:" + n.module;
      n.shape = Shape::Experts;
      std::string what = "routed experts";
      if (op.sizes.size() >= 2) what += " (" + std::to_string(op.sizes[0]) + ", top-" + std::to_string(op.sizes[1]) + ")";
      n.detail = what;
      // Layouts of the experts' weights by relative name: "w1 column, w2 row".
      std::map<std::string, std::string> by_leaf;
      std::string list_prefix = n.module + ".";
      for (const plan::ParameterLayout p : mesh.parameters) {
        if (p.name.rfind(list_prefix, 0) != 0) continue;
        std::string rest(p.name.substr(list_prefix.size()));
        size_t dot = rest.find('.');
        if (dot != std::string::npos) rest = rest.substr(dot + 1);  // drop the expert index
        std::string leaf(owner_of(rest));
        if (leaf.empty() || rest.size() < 7 || rest.compare(rest.size() - 7, 7, ".weight") != 0) continue;
        by_leaf.emplace(leaf, std::string(p.layout));
      }
      std::string summary;
      std::set<std::string> kinds;
      for (auto& [leaf, l] : by_leaf) {
        summary += (summary.empty() ? "" : ", ") + leaf + " " + l;
        kinds.insert(l);
      }
      n.layout = kinds.size() == 1 ? *kinds.begin() : (kinds.count("expert") ? "expert" : (kinds.empty() ? "replicated" : "mixed"));
      if (!summary.empty()) n.detail += ": " + summary;
    }
    if (!n.key.empty()) n.name = relative(n.module, prefix);
    return n;
  }

  BlockDiagram draw(size_t begin, size_t end, const std::vector<int>& outputs, const std::string& prefix, const std::string& in_label,
                    const std::string& out_label, bool label_collectives) const {
    const auto& flow = model.dataflow;
    std::vector<Node> nodes;
    std::map<std::string, size_t> node_index;
    std::set<std::pair<int, int>> edges;  // node indices; -1 = input, -2 = output
    std::unordered_map<int, std::vector<int>> src;
    auto sources_of = [&](int t) -> std::vector<int> {
      auto it = src.find(t);
      if (it != src.end()) return it->second;
      const auto& info = flow.tensors[t];
      if (info.parameter >= 0 || info.buffer >= 0) return {};
      return {-1};
    };
    auto union_sources = [&](const ir::Op& op) {
      std::vector<int> s;
      for (int t : op.inputs) {
        if (t < 0 || t >= static_cast<int>(flow.tensors.size())) continue;
        for (int x : sources_of(t))
          if (std::find(s.begin(), s.end(), x) == s.end() && s.size() < kMaxSources) s.push_back(x);
      }
      return s;
    };
    for (size_t k = begin; k < end && k < flow.ops.size();) {
      const auto& op = flow.ops[k];
      size_t next = k + 1;
      if (op.kind == ir::OpKind::Experts && op.end > static_cast<int>(k)) next = static_cast<size_t>(op.end);
      if (op.kind == ir::OpKind::Call) {  // its body follows inline
        k = next;
        continue;
      }
      Node n = node_of(op, prefix);
      auto in = union_sources(op);
      if (!n.key.empty()) {
        auto [it, fresh] = node_index.emplace(n.key, nodes.size());
        if (fresh) nodes.push_back(n);
        int id = static_cast<int>(it->second);
        for (int s : in)
          if (s != id) edges.emplace(s, id);
        for (int o : op.outputs) src[o] = {id};
      } else {
        for (int o : op.outputs) src[o] = in;
      }
      k = next;
    }
    for (int t : outputs)
      if (t >= 0 && t < static_cast<int>(flow.tensors.size()))
        for (int s : sources_of(t)) edges.emplace(s, -2);
    // Collectives placed at the nodes (by module pattern); the rest of the block's at the output.
    std::string block_pattern = prefix.empty() ? "" : module_pattern(prefix.substr(0, prefix.size() - 1));
    std::vector<std::string> at_output;
    for (auto& c : mesh.collectives) {
      if (!label_collectives) break;
      bool inside = block_pattern.empty() || c.at == block_pattern || c.at.rfind(block_pattern + ".", 0) == 0;
      if (!inside) continue;
      std::string what = std::string(plan::ccl_name(c.kind)) + " " + plan::format_bytes(c.bytes);
      Node* target = nullptr;
      for (auto& n : nodes)
        if (n.shape == Shape::Layer && module_pattern(n.module) == c.at) target = &n;
      if (!target)
        for (auto& n : nodes)
          if (n.shape != Shape::Layer && module_pattern(n.module) == c.at) target = &n;
      auto& list = target ? target->collectives : at_output;
      if (std::find(list.begin(), list.end(), what) == list.end()) list.push_back(what);
    }
    // Attention cores are head-sharded when a column layer feeds them.
    for (auto& [from, to] : edges)
      if (from >= 0 && to >= 0 && nodes[to].shape == Shape::Attention && class_of_layout(nodes[from].layout) == "column")
        nodes[to].layout = "heads split";
    BlockDiagram d;
    d.truncated = nodes.size() > kMaxNodes;
    size_t shown = std::min(nodes.size(), kMaxNodes);
    d.nodes = static_cast<int>(shown);
    std::string m = "flowchart TD\n";
    m += "  in([\"" + label_text(in_label) + "\"])\n";
    std::map<std::string, std::vector<std::string>> by_class;
    for (size_t i = 0; i < shown; ++i) {
      const Node& n = nodes[i];
      std::string label = n.name.empty() ? n.detail : n.name + " · " + n.detail;
      std::string layout = n.layout.empty() ? "replicated" : n.layout;
      label += "<br/>" + layout;
      for (auto& c : n.collectives) label += "<br/>⇒ " + c;
      std::string id = "n" + std::to_string(i);
      std::string text = "\"" + label_text(label) + "\"";
      if (n.shape == Shape::Attention) m += "  " + id + "{{" + text + "}}\n";
      else if (n.shape == Shape::Experts) m += "  " + id + "[[" + text + "]]\n";
      else m += "  " + id + "[" + text + "]\n";
      std::string cls = n.shape == Shape::Attention ? (n.layout == "heads split" ? "sharded" : "replicated") : class_of_layout(n.layout);
      by_class[cls].push_back(id);
    }
    std::string out_text = out_label;
    for (auto& c : at_output) out_text += "<br/>⇒ " + c;
    m += "  out([\"" + label_text(out_text) + "\"])\n";
    auto id_of = [&](int x) { return x == -1 ? std::string("in") : x == -2 ? std::string("out") : "n" + std::to_string(x); };
    // Column→row edges, also through a head-split attention core between them (q/k/v → core → out).
    auto on_pair = [&](int from, int to) {
      if (from < 0 || to < 0) return false;
      if (pair_edges.count({nodes[from].module, nodes[to].module})) return true;
      auto pairs_through = [&](int column, int core) {
        for (auto& [a, b] : edges)
          if (a == core && b >= 0 && pair_edges.count({nodes[column].module, nodes[b].module})) return true;
        return false;
      };
      auto feeds_pair = [&](int core, int row) {
        for (auto& [a, b] : edges)
          if (b == core && a >= 0 && pair_edges.count({nodes[a].module, nodes[row].module})) return true;
        return false;
      };
      if (nodes[to].shape == Shape::Attention && nodes[to].layout == "heads split") return pairs_through(from, to);
      if (nodes[from].shape == Shape::Attention && nodes[from].layout == "heads split") return feeds_pair(from, to);
      return false;
    };
    for (auto& [from, to] : edges) {
      if ((from >= 0 && static_cast<size_t>(from) >= shown) || (to >= 0 && static_cast<size_t>(to) >= shown)) continue;
      bool pair = on_pair(from, to);
      m += "  " + id_of(from) + (pair ? " ==>|column→row, stays sharded| " : " --> ") + id_of(to) + "\n";
    }
    m += "  classDef column fill:#dbeafe,stroke:#1d4ed8,color:#111827\n";
    m += "  classDef row fill:#fef3c7,stroke:#b45309,color:#111827\n";
    m += "  classDef sharded fill:#dcfce7,stroke:#15803d,color:#111827\n";
    m += "  classDef replicated fill:#f3f4f6,stroke:#6b7280,color:#111827\n";
    for (auto& [cls, ids] : by_class) {
      m += "  class ";
      for (size_t i = 0; i < ids.size(); ++i) m += (i ? "," : "") + ids[i];
      m += " " + cls + "\n";
    }
    d.mermaid = m;
    return d;
  }

  // The layouts of a module's parameters, relative to it: equal for instances drawn alike.
  std::string layout_signature(int module) const {
    std::string prefix = model.modules[module].name + ".";
    std::string sig;
    for (const plan::ParameterLayout p : mesh.parameters)
      if (p.name.rfind(prefix, 0) == 0) sig += std::string(p.name.substr(prefix.size())) + "=" + std::string(p.layout) + ";";
    return sig;
  }

  // Weighted layers in a Call's body (distinct modules), to decide whether it is worth a diagram.
  size_t weighted_layers(size_t begin, size_t end) const {
    std::set<std::string> seen;
    for (size_t k = begin; k < end && k < model.dataflow.ops.size(); ++k) {
      Node n = node_of(model.dataflow.ops[k], "");
      if (!n.key.empty() && n.shape == Shape::Layer) seen.insert(n.key);
    }
    return seen.size();
  }
};

}  // namespace

std::vector<BlockDiagram> block_diagrams(const ir::ModelIR& model, const plan::MeshPlan& mesh, const std::vector<ComponentGroup>& groups,
                                         const std::vector<LayoutPair>& pairs, size_t max_diagrams) {
  std::vector<BlockDiagram> out;
  const auto& flow = model.dataflow;
  if (flow.ops.empty()) return out;
  Drawer drawer(model, mesh, pairs);
  // The first Call of each module.
  std::unordered_map<int, size_t> call_of;
  for (size_t k = 0; k < flow.ops.size(); ++k)
    if (flow.ops[k].kind == ir::OpKind::Call && flow.ops[k].module >= 0) call_of.emplace(flow.ops[k].module, k);
  struct Candidate {
    size_t order;
    bool sharded;
    size_t instances;
    size_t variants;  // distinct layouts among those instances
    int module;
    size_t call;
    std::string group;
  };
  std::vector<Candidate> candidates;
  for (auto& g : groups) {
    std::set<std::string> classes_done;
    for (int first : g.instances) {
      const std::string& cls = model.modules[first].class_name;
      if (!classes_done.insert(cls).second) continue;
      // Draw the instance whose layout most instances of this class share.
      size_t same = 0;
      std::map<std::string, std::pair<size_t, int>> variants;  // signature -> (instances, first instance)
      for (int x : g.instances)
        if (model.modules[x].class_name == cls) {
          ++same;
          auto [it, fresh] = variants.emplace(drawer.layout_signature(x), std::make_pair(size_t{0}, x));
          it->second.first++;
        }
      int m = first;
      size_t best = 0;
      for (auto& [sig, v] : variants)
        if (v.first > best || (v.first == best && v.second < m)) {
          best = v.first;
          m = v.second;
        }
      const auto& mod = model.modules[m];
      auto it = call_of.find(m);
      if (it == call_of.end()) continue;
      size_t k = it->second;
      size_t end = static_cast<size_t>(std::max(flow.ops[k].end, static_cast<int>(k) + 1));
      if (drawer.weighted_layers(k + 1, end) < 2) continue;
      bool sharded = false;
      std::string prefix = mod.name + ".";
      for (const plan::ParameterLayout p : mesh.parameters)
        if (p.name.rfind(prefix, 0) == 0 && p.layout != "replicated") sharded = true;
      candidates.push_back({candidates.size(), sharded, same, variants.size(), m, k, g.pattern});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.sharded != b.sharded) return a.sharded;
    return a.instances > b.instances;
  });
  if (candidates.size() > max_diagrams) candidates.resize(max_diagrams);
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) { return a.order < b.order; });
  for (auto& c : candidates) {
    const auto& mod = model.modules[c.module];
    const auto& call = flow.ops[c.call];
    bool uniform = c.variants <= 1;
    BlockDiagram d = drawer.draw(c.call + 1, static_cast<size_t>(call.end), call.outputs, mod.name + ".", mod.name + " input", mod.name + " output",
                                 uniform);
    d.title = c.group + " — " + mod.class_name + (c.instances > 1 ? ", " + std::to_string(c.instances) + " instances (" + mod.name + " drawn)" : "");
    if (!uniform)
      d.note = "The " + std::to_string(c.instances) + " " + mod.class_name + " instances have " + std::to_string(c.variants) +
               " different layouts; the diagram shows " + mod.name + "'s. The plan reports collectives per module path (shared by "
               "all instances), so they are listed in §4 rather than on the nodes.";
    out.push_back(std::move(d));
  }
  if (out.empty()) {
    size_t begin = 0, end = flow.ops.size();
    if (flow.ops[0].kind == ir::OpKind::Call && flow.ops[0].module == 0 && flow.ops[0].end > 0) {
      begin = 1;
      end = static_cast<size_t>(flow.ops[0].end);
    }
    BlockDiagram d = drawer.draw(begin, end, flow.outputs, "", "model input", "model output", true);
    d.title = "whole model — " + model.model;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace shardlens::report::detail
