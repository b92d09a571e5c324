// Finds the sharding annotations a script already has and checks them against the plan:
// `xs.mark_sharding(tensor, mesh, spec)` calls (also inside `for layer in model.h:` loops and
// `def apply_sharding(model, mesh)`), and `load_shard_spec` entries (`specs[tensor] = spec`,
// `{tensor: spec}`).
#include <tree_sitter/api.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "session/document_analysis.h"
#include "plan/plan_output.h"

namespace shardlens::session {
namespace {

using Paths = std::vector<std::string>;  // module / parameter paths; "" is the root

struct Walker {
  DocumentAnalysis& a;
  const std::string& text;
  std::unordered_map<std::string, int> module_index;
  std::unordered_map<std::string, int> parameter_index;
  std::set<std::string> root_names;

  explicit Walker(DocumentAnalysis& analysis) : a(analysis), text(analysis.text) {
    for (size_t i = 0; i < a.model().modules.size(); ++i) module_index[a.model().modules[i].name] = static_cast<int>(i);
    for (size_t i = 0; i < a.model().parameters.size(); ++i) parameter_index[a.model().parameters[i].name] = static_cast<int>(i);
    root_names.insert("model");
    const std::string& root = a.model().root_expression;
    bool identifier = !root.empty() && std::all_of(root.begin(), root.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (identifier) root_names.insert(root);
  }

  std::string node_text(TSNode n) const { return text.substr(ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n)); }
  std::string type(TSNode n) const { return ts_node_is_null(n) ? "" : ts_node_type(n); }
  TSNode field(TSNode n, const char* name) const { return ts_node_child_by_field_name(n, name, static_cast<uint32_t>(strlen(name))); }
  // A call of `name` or of `anything.name`.
  bool calls(TSNode call, std::string_view name) const {
    if (type(call) != "call") return false;
    std::string fn = node_text(field(call, "function"));
    return fn == name || (fn.size() > name.size() && fn.compare(fn.size() - name.size(), name.size(), name) == 0 &&
                          fn[fn.size() - name.size() - 1] == '.');
  }
  // A call's argument given by one of `keywords` (the last one written wins), else the
  // `position`-th positional one; a null node when neither is there.
  TSNode argument(TSNode call, size_t position, std::initializer_list<std::string_view> keywords) const {
    TSNode args = field(call, "arguments"), by_keyword{}, by_position{};
    size_t positional = 0;
    for (uint32_t i = 0; i < ts_node_named_child_count(args); ++i) {
      TSNode arg = ts_node_named_child(args, i);
      if (type(arg) == "keyword_argument") {
        std::string key = node_text(field(arg, "name"));
        for (auto k : keywords)
          if (key == k) by_keyword = field(arg, "value");
      } else if (type(arg) != "comment" && positional++ == position) {
        by_position = arg;
      }
    }
    return ts_node_is_null(by_keyword) ? by_position : by_keyword;
  }

  static std::string join(const std::string& base, const std::string& key) { return base.empty() ? key : base + "." + key; }

  std::optional<std::string> string_value(TSNode n) const {
    if (type(n) != "string") return std::nullopt;
    std::string s = node_text(n);
    size_t q = s.find_first_of("\"'");
    if (q == std::string::npos || q > 2) return std::nullopt;  // prefixes like b, r, f
    if (s.find_first_of("fF") < q) return std::nullopt;
    size_t quote_len = s.compare(q, 3, std::string(3, s[q])) == 0 ? 3 : 1;
    if (s.size() < q + 2 * quote_len) return std::nullopt;
    return s.substr(q + quote_len, s.size() - q - 2 * quote_len);
  }

  std::optional<int64_t> int_value(TSNode n) const {
    std::string t = type(n);
    if (t == "unary_operator") {
      auto v = int_value(ts_node_named_child(n, 0));
      if (v && node_text(n).find('-') == 0) return -*v;
      return v;
    }
    if (t != "integer") return std::nullopt;
    try {
      return std::stoll(node_text(n), nullptr, 0);
    } catch (...) {
      return std::nullopt;
    }
  }

  Paths children_of(const std::string& path) const {
    Paths out;
    auto it = module_index.find(path);
    if (it == module_index.end()) return out;
    for (int c : a.model().modules[it->second].children) out.push_back(a.model().modules[c].name);
    return out;
  }

  // Resolves an expression to module / parameter paths under the bindings in `env`.
  std::optional<Paths> resolve(TSNode n, const std::map<std::string, Paths>& env) const {
    std::string t = type(n);
    if (t == "identifier") {
      auto it = env.find(node_text(n));
      if (it != env.end()) return it->second;
      return std::nullopt;
    }
    if (t == "parenthesized_expression") return resolve(ts_node_named_child(n, 0), env);
    if (t == "attribute") {
      auto base = resolve(field(n, "object"), env);
      if (!base) return std::nullopt;
      std::string attr = node_text(field(n, "attribute"));
      Paths out;
      for (auto& p : *base) out.push_back(join(p, attr));
      return out;
    }
    if (t == "subscript") {
      auto base = resolve(field(n, "value"), env);
      TSNode key = field(n, "subscript");
      if (!base) return std::nullopt;
      Paths out;
      for (auto& p : *base) {
        if (auto s = string_value(key)) {
          out.push_back(join(p, *s));
        } else if (auto i = int_value(key)) {
          Paths kids = children_of(p);
          int64_t k = *i < 0 ? *i + static_cast<int64_t>(kids.size()) : *i;
          if (k >= 0 && k < static_cast<int64_t>(kids.size())) out.push_back(kids[k]);
          else out.push_back(join(p, std::to_string(*i)));
        } else {
          return std::nullopt;
        }
      }
      return out;
    }
    if (t == "call") {
      std::string fn = node_text(field(n, "function"));
      TSNode args = field(n, "arguments");
      if (fn == "getattr" && ts_node_named_child_count(args) >= 2) {
        auto base = resolve(ts_node_named_child(args, 0), env);
        auto key = string_value(ts_node_named_child(args, 1));
        if (!base || !key) return std::nullopt;
        Paths out;
        for (auto& p : *base) out.push_back(join(p, *key));
        return out;
      }
      if ((fn == "enumerate" || fn == "list" || fn == "iter") && ts_node_named_child_count(args) >= 1)
        return resolve(ts_node_named_child(args, 0), env);
    }
    return std::nullopt;
  }

  // One spec argument: a tuple/list of None, "axis", mesh-axis index, or tuples of those.
  std::optional<std::vector<std::vector<std::string>>> spec_of(TSNode n, const std::vector<std::string>& axis_names) const {
    std::string t = type(n);
    if (t == "parenthesized_expression") return spec_of(ts_node_named_child(n, 0), axis_names);
    if (t != "tuple" && t != "list") return std::nullopt;
    std::vector<std::vector<std::string>> out;
    auto axis = [&](TSNode e) -> std::optional<std::string> {
      if (auto s = string_value(e)) return *s;
      if (auto i = int_value(e)) {
        if (*i >= 0 && *i < static_cast<int64_t>(axis_names.size())) return axis_names[*i];
        return "#" + std::to_string(*i);
      }
      return std::nullopt;
    };
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
      TSNode e = ts_node_named_child(n, i);
      std::string et = type(e);
      if (et == "comment") continue;
      if (et == "none") {
        out.emplace_back();
      } else if (et == "tuple" || et == "parenthesized_expression") {
        TSNode inner = et == "tuple" ? e : ts_node_named_child(e, 0);
        std::vector<std::string> names;
        if (type(inner) == "tuple") {
          for (uint32_t j = 0; j < ts_node_named_child_count(inner); ++j) {
            auto x = axis(ts_node_named_child(inner, j));
            if (!x) return std::nullopt;
            names.push_back(*x);
          }
        } else {
          auto x = axis(inner);
          if (!x) return std::nullopt;
          names.push_back(*x);
        }
        out.push_back(names);
      } else {
        auto x = axis(e);
        if (!x) return std::nullopt;
        out.push_back({*x});
      }
    }
    return out;
  }

  // The values of a literal tuple or list, each read by `value`; empty when one cannot be read.
  template <class Read>
  auto literal_items(TSNode node, Read value) const {
    std::vector<typename decltype(value(node))::value_type> out;
    if (type(node) != "tuple" && type(node) != "list") return out;
    for (uint32_t i = 0; i < ts_node_named_child_count(node); ++i) {
      auto v = value(ts_node_named_child(node, i));
      if (!v) return decltype(out)();
      out.push_back(*v);
    }
    return out;
  }

  void find_mesh(TSNode n) {
    if (a.script_mesh.found) return;
    if (calls(n, "Mesh")) {
      TSNode shape_node = argument(n, 1, {"mesh_shape"}), names_node = argument(n, 2, {"axis_names"});
      ScriptMesh mesh;
      mesh.shape = literal_items(shape_node, [&](TSNode item) { return int_value(item); });
      mesh.axis_names = literal_items(names_node, [&](TSNode item) { return string_value(item); });
      mesh.found = true;
      a.script_mesh = mesh;
      return;
    }
    for (uint32_t i = 0; i < ts_node_child_count(n); ++i) find_mesh(ts_node_child(n, i));
  }

  std::vector<std::string> axis_names() const {
    if (!a.script_mesh.axis_names.empty()) return a.script_mesh.axis_names;
    return {"batch", "model"};
  }

  void record(AnnotationSite::Kind kind, TSNode site, TSNode tensor, TSNode spec, const std::map<std::string, Paths>& env) {
    AnnotationSite s;
    s.kind = kind;
    s.start = ts_node_start_byte(site);
    s.end = ts_node_end_byte(site);
    s.spec_start = ts_node_start_byte(spec);
    s.spec_end = ts_node_end_byte(spec);
    s.tensor_text = node_text(tensor);
    // The statement's whole line(s) including the newline, for a quick fix that removes it.
    TSNode statement = site;
    while (!ts_node_is_null(ts_node_parent(statement)) && type(ts_node_parent(statement)) != "block" &&
           type(ts_node_parent(statement)) != "module")
      statement = ts_node_parent(statement);
    s.line_start = text.rfind('\n', ts_node_start_byte(statement) == 0 ? 0 : ts_node_start_byte(statement) - 1);
    s.line_start = s.line_start == std::string::npos ? 0 : s.line_start + 1;
    s.line_end = text.find('\n', ts_node_end_byte(statement));
    s.line_end = s.line_end == std::string::npos ? text.size() : s.line_end + 1;
    if (auto paths = resolve(tensor, env)) {
      s.resolved = true;
      s.parameters = *paths;
    }
    s.spec = spec_of(spec, axis_names());
    a.annotations.push_back(std::move(s));
  }

  void walk(TSNode n, std::map<std::string, Paths> env, bool in_spec_function) {
    std::string t = type(n);
    if (t == "function_definition") {
      std::string name = node_text(field(n, "name"));
      TSNode params = field(n, "parameters");
      auto inner = env;
      if (ts_node_named_child_count(params) > 0) {
        TSNode first = ts_node_named_child(params, 0);
        if (type(first) == "typed_parameter" || type(first) == "default_parameter") first = ts_node_named_child(first, 0);
        std::string pname = node_text(first);
        if (pname == "self" && ts_node_named_child_count(params) > 1) {
          // A method: its model argument is rarely the root; leave it unbound.
        } else if (root_names.count(pname) || pname == "module" || name.find("shard") != std::string::npos) {
          inner[pname] = {""};
        }
      }
      bool spec_function = name == "load_shard_spec" || name.find("shard_spec") != std::string::npos;
      walk(field(n, "body"), inner, spec_function);
      return;
    }
    if (t == "for_statement") {
      TSNode left = field(n, "left"), right = field(n, "right");
      auto inner = env;
      auto container = resolve(right, env);
      std::string fn = type(right) == "call" ? node_text(field(right, "function")) : "";
      if (container) {
        Paths items;
        for (auto& p : *container)
          for (auto& c : children_of(p)) items.push_back(c);
        std::string lt = type(left);
        if (fn == "enumerate" && (lt == "pattern_list" || lt == "tuple_pattern") && ts_node_named_child_count(left) == 2)
          inner[node_text(ts_node_named_child(left, 1))] = items;
        else if (lt == "identifier")
          inner[node_text(left)] = items;
      }
      for (uint32_t i = 0; i < ts_node_child_count(n); ++i) {
        TSNode c = ts_node_child(n, i);
        if (type(c) == "block") walk(c, inner, in_spec_function);
        else if (!ts_node_eq(c, left) && !ts_node_eq(c, right)) walk(c, env, in_spec_function);
      }
      return;
    }
    if (calls(n, "mark_sharding")) {
      TSNode tensor = argument(n, 0, {"t", "tensor"}), spec = argument(n, 2, {"partition_spec"});
      if (!ts_node_is_null(tensor) && !ts_node_is_null(spec)) record(AnnotationSite::MarkSharding, n, tensor, spec, env);
    }
    if (in_spec_function && t == "assignment") {
      TSNode left = field(n, "left"), right = field(n, "right");
      if (type(left) == "subscript" && !ts_node_is_null(right) && (type(right) == "tuple" || type(right) == "parenthesized_expression"))
        record(AnnotationSite::ShardSpecEntry, n, field(left, "subscript"), right, env);
    }
    if (in_spec_function && t == "pair") {
      TSNode key = field(n, "key"), value = field(n, "value");
      if (!ts_node_is_null(value) && (type(value) == "tuple" || type(value) == "parenthesized_expression") && resolve(key, env))
        record(AnnotationSite::ShardSpecEntry, n, key, value, env);
    }
    for (uint32_t i = 0; i < ts_node_child_count(n); ++i) walk(ts_node_child(n, i), env, in_spec_function);
  }
};

std::string join_axes(const std::vector<std::string>& axes) {
  std::string s;
  for (auto& x : axes) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::string python_spec(const std::vector<std::vector<std::string>>& spec) {
  std::string out = "(";
  for (size_t i = 0; i < spec.size(); ++i) {
    if (i) out += ", ";
    if (spec[i].empty()) out += "None";
    else if (spec[i].size() == 1) out += "\"" + spec[i][0] + "\"";
    else {
      out += "(";
      for (size_t j = 0; j < spec[i].size(); ++j) out += (j ? ", \"" : "\"") + spec[i][j] + "\"";
      out += ")";
    }
  }
  if (spec.size() == 1) out += ",";
  return out + ")";
}

void find_annotations(DocumentAnalysis& analysis, const std::vector<TSNode>& roots) {
  // Most scripts have no annotations: skip the tree walk unless the text could hold one.
  const std::string& t = analysis.text;
  if (t.find("mark_sharding") == std::string::npos && t.find("shard_spec") == std::string::npos) return;
  Walker w(analysis);
  for (TSNode root : roots) w.find_mesh(root);
  std::map<std::string, Paths> env;
  for (auto& name : w.root_names) env[name] = {""};
  // Top-level statements do not bind names for the walk, so each parse piece starts afresh.
  for (TSNode root : roots) w.walk(root, env, false);
}

void check_annotations(DocumentAnalysis& a, DocumentAnalyzer& analyzer) {
  if (a.annotations.empty() || a.plan.meshes.empty()) return;
  // The plan for the mesh the script builds, when it says; else the first configured mesh.
  const plan::MeshPlan* mp = &a.plan.meshes[0];
  const auto& sm = a.script_mesh;
  int64_t script_devices = 1;
  for (auto d : sm.shape) script_devices *= d;
  for (auto& m : a.plan.meshes) {
    bool same = sm.shape.size() == 2 ? (m.mesh.rows == sm.shape[0] && m.mesh.cols == sm.shape[1])
                                     : (sm.shape.size() == 1 && m.mesh.devices() == script_devices);
    if (same) {
      mp = &m;
      break;
    }
  }
  // User axis names → planner axes ("batch" rows, "model" columns) and sizes.
  std::vector<std::string> user_axes = sm.axis_names.empty() ? std::vector<std::string>{"batch", "model"} : sm.axis_names;
  std::map<std::string, std::string> to_planner;
  std::map<std::string, int64_t> size;
  if (user_axes.size() == 1) {
    to_planner[user_axes[0]] = "model";
    size[user_axes[0]] = sm.shape.size() == 1 ? sm.shape[0] : mp->mesh.devices();
  } else if (user_axes.size() >= 2) {
    to_planner[user_axes[0]] = "batch";
    to_planner[user_axes[1]] = "model";
    size[user_axes[0]] = sm.shape.size() == 2 ? sm.shape[0] : mp->mesh.rows;
    size[user_axes[1]] = sm.shape.size() == 2 ? sm.shape[1] : mp->mesh.cols;
  }
  std::string mesh_prefix = a.plan.meshes.size() > 1 ? "[" + mp->mesh.shape_string() + "] " : "";
  std::unordered_map<std::string_view, size_t> layouts;  // name -> position in mp->parameters
  for (size_t i = 0; i < mp->parameters.size(); ++i) layouts.emplace(mp->parameters[i].name, i);
  std::unordered_map<std::string, const ir::Parameter*> params;
  for (auto& p : a.model().parameters) params[p.name] = &p;
  std::set<std::string> module_names;
  for (auto& m : a.model().modules) module_names.insert(m.name);

  // Planner-axis spec → the user's names, for fixes written in the script's vocabulary.
  auto to_user = [&](const std::vector<std::vector<std::string>>& spec) {
    std::vector<std::vector<std::string>> out = spec;
    for (auto& dim : out)
      for (auto& ax : dim)
        for (auto& [user, planner] : to_planner)
          if (planner == ax) {
            ax = user;
            break;
          }
    return out;
  };
  int costed = 0;
  for (auto& site : a.annotations) {
    if (!site.resolved || !site.spec) continue;
    auto finding = [&](const char* code, const char* severity, std::string message) {
      Finding f;
      f.code = code;
      f.severity = severity;
      f.message = mesh_prefix + message;
      f.start = site.start;
      f.end = site.end;
      return f;
    };
    std::vector<const ir::Parameter*> targets;
    std::vector<std::string> missing;
    for (auto& name : site.parameters) {
      auto it = params.find(name);
      if (it != params.end()) targets.push_back(it->second);
      else missing.push_back(name);
    }
    if (targets.empty()) {
      bool is_module = !missing.empty() && module_names.count(missing[0]);
      Finding f = finding("annotation-unknown-tensor", "warning",
                          "`" + site.tensor_text + "` is " + (is_module ? "a module, not a parameter" : "not a parameter of " + a.model().model) +
                              (missing.empty() ? "" : " (resolved to '" + missing[0] + "')") + "; the annotation has no effect on the plan");
      f.fix = ByteEdit{site.line_start, site.line_end, ""};
      f.fix_title = "Remove this annotation";
      a.findings.push_back(std::move(f));
      continue;
    }
    const auto& spec = *site.spec;
    const ir::Parameter& first = *targets[0];
    std::string shown = site.parameters.size() > 1 ? first.name + " (and " + std::to_string(targets.size() - 1) + " more)" : first.name;
    auto found = layouts.find(first.name);
    std::optional<plan::ParameterLayout> planned;
    if (found != layouts.end()) planned = mp->parameters[found->second];
    auto plan_spec = planned ? planned->spec() : std::nullopt;
    auto replace_with_plan = [&](Finding& f) {
      if (!plan_spec) return;
      f.fix = ByteEdit{site.spec_start, site.spec_end, python_spec(to_user(*plan_spec))};
      f.fix_title = "Use the plan's spec " + python_spec(to_user(*plan_spec));
    };
    // Axis names the mesh does not have.
    std::string unknown_axis;
    for (auto& dim : spec)
      for (auto& ax : dim)
        if (!to_planner.count(ax) && unknown_axis.empty()) unknown_axis = ax;
    if (!unknown_axis.empty()) {
      Finding f = finding("annotation-unknown-axis", "error",
                          "axis '" + unknown_axis + "' is not an axis of the mesh (" + join_axes(user_axes) + ")");
      replace_with_plan(f);
      a.findings.push_back(std::move(f));
      continue;
    }
    if (first.shape_known && spec.size() != first.shape.size()) {
      Finding f = finding("annotation-rank", "error",
                          "the spec has " + std::to_string(spec.size()) + " entries but " + shown + " has " +
                              std::to_string(first.shape.size()) + " dims");
      replace_with_plan(f);
      a.findings.push_back(std::move(f));
      continue;
    }
    bool indivisible = false;
    for (size_t d = 0; d < spec.size() && first.shape_known && !indivisible; ++d) {
      int64_t ways = 1;
      for (auto& ax : spec[d]) ways *= std::max<int64_t>(1, size[ax]);
      if (ways > 1 && first.shape[d] % ways != 0) {
        Finding f = finding("annotation-indivisible", "error",
                            "dim " + std::to_string(d) + " of " + shown + " has size " + std::to_string(first.shape[d]) +
                                ", which does not divide into " + std::to_string(ways) + " shards over " + join_axes(spec[d]));
        replace_with_plan(f);
        a.findings.push_back(std::move(f));
        indivisible = true;
      }
    }
    if (indivisible || !plan_spec) continue;
    // In planner axis names, compare with the plan.
    std::vector<std::vector<std::string>> normalized = spec;
    for (auto& dim : normalized)
      for (auto& ax : dim) ax = to_planner[ax];
    if (normalized == *plan_spec) continue;
    std::string message = "`" + site.tensor_text + "` is marked " + python_spec(spec) + " but the plan " +
                          (planned->layout == "replicated" ? "keeps it replicated" : "uses " + std::string(planned->layout)) + " " +
                          python_spec(to_user(*plan_spec));
    // What it costs: re-plan with the annotation's layout pinned on the model axis.
    int sharded_dim = -1, model_dims = 0;
    bool expressible = true;
    for (size_t d = 0; d < normalized.size(); ++d) {
      for (auto& ax : normalized[d])
        if (ax == "model") {
          sharded_dim = static_cast<int>(d);
          ++model_dims;
        } else if (ax == "batch" && mp->mesh.rows > 1) {
          expressible = false;
        }
    }
    if (model_dims > 1) expressible = false;
    if (expressible && costed < 16) {
      ++costed;
      std::map<std::string, std::string> pins;
      for (auto* p : targets) pins[p->name] = sharded_dim < 0 ? "replicated" : "shard:" + std::to_string(sharded_dim);
      if (auto pinned = analyzer.plan_with_pins(a, pins)) {
        const plan::MeshPlan* pm = nullptr;
        for (auto& m : pinned->meshes)
          if (m.mesh.shape_string() == mp->mesh.shape_string()) pm = &m;
        if (pm) {
          std::map<std::string, int> kinds_before, kinds_after;
          for (auto& c : mp->collectives) kinds_before[plan::ccl_name(c.kind)] += c.count;
          for (auto& c : pm->collectives) kinds_after[plan::ccl_name(c.kind)] += c.count;
          std::string extra;
          for (auto& [kind, n] : kinds_after) {
            int more = n - kinds_before[kind];
            if (more > 0) {
              std::string k = kind;
              std::replace(k.begin(), k.end(), '_', '-');
              extra += (extra.empty() ? "" : ", ") + ("+" + std::to_string(more) + " " + k);
            }
          }
          double bytes = pm->totals.bytes - mp->totals.bytes;
          double us = pm->totals.est_time_us - mp->totals.est_time_us;
          message += "; per forward this costs " + (extra.empty() ? std::string("no extra collectives") : extra) +
                     (bytes > 0 ? ", +" + plan::format_bytes(bytes) : "") +
                     (us > 0.05 ? ", +" + plan::format_us(us) : us < -0.05 ? ", " + plan::format_us(-us) + " faster" : "");
          if (!extra.empty()) message += " (it forces extra collectives)";
        }
      }
    }
    Finding f = finding("annotation-disagrees", "warning", message);
    replace_with_plan(f);
    a.findings.push_back(std::move(f));
  }
}

}  // namespace shardlens::session
