#include "emit/mark_loops.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "emit/python_code.h"
#include "ir/module_path.h"

namespace shardlens::emit::detail {

namespace {

class Writer {
 public:
  Writer(const ir::ModelIR& model, const plan::MeshPlan& plan, const MarkStyle& style) : model_(model), style_(style) {
    for (const plan::ParameterLayout p : plan.parameters) layouts_.emplace(p.name, p);
  }

  struct Body {
    std::string code;
    size_t parameters = 0;
  };

  Body module(int m, const std::string& expr, int level, std::vector<std::string>& vars) {
    Body out;
    const ir::Module& mod = model_.modules[m];
    const std::string prefix = mod.name.empty() ? "" : mod.name + ".";
    for (size_t i = 0; i < mod.parameters.size(); ++i) {
      const ir::Parameter& param = model_.parameters[mod.parameters[i]];
      if (param.name.compare(0, prefix.size(), prefix) != 0) continue;  // not reached through this module
      std::string_view key = std::string_view(param.name).substr(prefix.size());
      auto it = layouts_.find(param.name);
      if (it == layouts_.end()) continue;
      const plan::ParameterLayout& layout = it->second;
      auto spec = layout.spec();
      if (!spec) {
        note_unwritable(param.name, layout.layout);
        continue;
      }
      if (std::all_of(spec->begin(), spec->end(), [](auto& axes) { return axes.empty(); })) continue;
      std::string tensor = member_access(expr, mod.class_name, key, i);
      out.code += indent(level) + style_.statement(tensor, spec_literal(*spec)) + "\n";
      ++out.parameters;
    }

    const size_t n = mod.children.size();
    std::vector<bool> canonical(n);
    for (size_t c = 0; c < n; ++c)
      canonical[c] = model_.modules[mod.children[c]].name == prefix + mod.child_keys[c];
    auto child_expr = [&](size_t c) { return member_access(expr, mod.class_name, mod.child_keys[c], c); };

    if (!iterable_container(mod.class_name) || n < 2) {
      for (size_t c = 0; c < n; ++c)
        if (canonical[c]) append(out, module(mod.children[c], child_expr(c), level, vars));
      return out;
    }

    // Each child written against a loop variable; equal texts over equal structure form a loop.
    std::string var = loop_variable(last_key(mod.name), vars);
    vars.push_back(var);
    std::vector<Body> as_var(n);
    for (size_t c = 0; c < n; ++c)
      if (canonical[c]) as_var[c] = module(mod.children[c], var, level + 1, vars);
    vars.pop_back();

    bool list = container_of(mod.class_name) == Container::List;
    size_t i = 0;
    while (i < n) {
      if (!canonical[i] || as_var[i].code.empty()) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < n && canonical[j] && as_var[j].code == as_var[i].code &&
             model_.modules[mod.children[j]].structure_hash == model_.modules[mod.children[i]].structure_hash)
        ++j;
      std::string range;
      if (j - i >= 2) {
        if (i == 0 && j == n) range = list ? expr : expr + ".values()";
        else if (list) range = expr + "[" + (i ? std::to_string(i) : "") + ":" + (j < n ? std::to_string(j) : "") + "]";
      }
      if (!range.empty()) {
        out.code += indent(level) + "for " + var + " in " + range + ":\n" + as_var[i].code;
        out.parameters += (j - i) * as_var[i].parameters;
      } else {
        for (size_t c = i; c < j; ++c) append(out, module(mod.children[c], child_expr(c), level, vars));
      }
      i = j;
    }
    return out;
  }

  std::vector<std::string> unwritable;

 private:
  static std::string indent(int level) { return std::string(static_cast<size_t>(level) * 4, ' '); }

  static void append(Body& to, const Body& from) {
    to.code += from.code;
    to.parameters += from.parameters;
  }

  static std::string last_key(const std::string& name) {
    size_t dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
  }

  // "layers" -> "layer", "experts" -> "expert"; otherwise "layer". Never a name in scope.
  std::string loop_variable(const std::string& container_key, const std::vector<std::string>& vars) const {
    std::string base = "layer";
    if (is_identifier(container_key) && container_key.size() > 2 && container_key.back() == 's' &&
        container_key[container_key.size() - 2] != 's') {
      std::string singular = container_key.substr(0, container_key.size() - 1);
      if (is_identifier(singular)) base = singular;
    }
    std::string name = base;
    for (int k = 2; style_.taken.count(name) || std::find(vars.begin(), vars.end(), name) != vars.end(); ++k)
      name = base + std::to_string(k);
    return name;
  }

  void note_unwritable(const std::string& name, std::string_view layout) {
    std::string entry = ir::module_pattern(name) + " (" + std::string(layout) + ")";
    if (seen_unwritable_.insert(entry).second) unwritable.push_back(entry);
  }

  const ir::ModelIR& model_;
  const MarkStyle& style_;
  std::unordered_map<std::string_view, plan::ParameterLayout> layouts_;
  std::unordered_set<std::string> seen_unwritable_;
};

}  // namespace

Marks write_marks(const ir::ModelIR& model, const plan::MeshPlan& plan, const std::string& root, int level,
                  const MarkStyle& style) {
  Marks marks;
  if (model.modules.empty()) return marks;
  Writer writer(model, plan, style);
  std::vector<std::string> vars;
  auto body = writer.module(0, root, level, vars);
  marks.code = std::move(body.code);
  marks.parameters = body.parameters;
  marks.unwritable = std::move(writer.unwritable);
  return marks;
}

}  // namespace shardlens::emit::detail
