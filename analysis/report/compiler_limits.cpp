#include "report/compiler_limits.h"

#include <algorithm>
#include <map>
#include <set>

#include "report/report_facts.h"
#include "plan/plan_output.h"

namespace shardlens::report {
namespace detail {
extern const char kCompilerLimitsJson[];  // generated from compiler_limits.json (embed_text.cmake)
}  // namespace detail

namespace {

const std::set<std::string>& condition_kinds() {
  static const std::set<std::string> kinds{"diagnostic", "collective", "layout", "op", "alternative"};
  return kinds;
}

std::vector<std::string> strings(const nlohmann::json& j) {
  std::vector<std::string> out;
  if (j.is_string()) out.push_back(j.get<std::string>());
  else if (j.is_array())
    for (auto& x : j)
      if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// At most `limit` lines, then "… and N more".
void add_capped(std::vector<std::string>& evidence, std::vector<std::string> lines, size_t limit = 3) {
  size_t n = lines.size();
  if (n > limit) {
    lines.resize(limit);
    lines.push_back("… and " + std::to_string(n - limit) + " more");
  }
  for (auto& l : lines) evidence.push_back(std::move(l));
}

struct Evidence {
  bool hit = false;
  std::vector<std::string> lines;
};

Evidence match_condition(const nlohmann::json& cond, const ir::ModelIR& model, const plan::PlanResult& result) {
  Evidence ev;
  if (cond.contains("diagnostic")) {
    auto codes = strings(cond["diagnostic"]);
    std::vector<std::string> lines;
    for (auto& d : result.diagnostics)
      if (contains(codes, d.code))
        lines.push_back((d.mesh.empty() ? "" : d.mesh + ": ") + d.code + " (line " + std::to_string(d.span.line) + "): " + detail::shorten(d.message, 220));
    ev.hit = !lines.empty();
    add_capped(ev.lines, lines);
  } else if (cond.contains("collective")) {
    const auto& c = cond["collective"];
    auto kinds = c.contains("kinds") ? strings(c["kinds"]) : std::vector<std::string>{};
    auto roles = c.contains("tensor_roles") ? strings(c["tensor_roles"]) : std::vector<std::string>{};
    auto at = c.contains("at_contains") ? strings(c["at_contains"]) : std::vector<std::string>{};
    std::vector<std::string> lines;
    for (auto& mp : result.meshes)
      for (auto& col : mp.collectives) {
        if (!kinds.empty() && !contains(kinds, plan::ccl_name(col.kind))) continue;
        auto have = detail::tensor_roles(col.tensor);
        bool all_roles = std::all_of(roles.begin(), roles.end(), [&](const std::string& r) { return contains(have, r); });
        if (!all_roles) continue;
        if (!at.empty() && std::none_of(at.begin(), at.end(), [&](const std::string& s) { return col.at.find(s) != std::string::npos; }))
          continue;
        lines.push_back(mp.mesh.shape_string() + ": " + std::to_string(col.count) + " × " + plan::ccl_name(col.kind) + " of " +
                        plan::format_bytes(col.bytes) + " " + col.tensor + " at " + col.at);
      }
    ev.hit = !lines.empty();
    add_capped(ev.lines, lines);
  } else if (cond.contains("layout")) {
    auto layouts = strings(cond["layout"]);
    std::vector<std::string> lines;
    for (auto& mp : result.meshes) {
      std::set<std::string> seen;
      for (const plan::ParameterLayout p : mp.parameters) {
        if (!contains(layouts, std::string(p.layout))) continue;
        std::string where = detail::module_pattern(detail::owner_of(p.name));
        if (seen.insert(where + "|" + std::string(p.layout)).second)
          lines.push_back(mp.mesh.shape_string() + ": " + where + " is " + std::string(p.layout));
      }
    }
    ev.hit = !lines.empty();
    add_capped(ev.lines, lines);
  } else if (cond.contains("op")) {
    const auto& o = cond["op"];
    std::string kind = o.value("kind", "");
    bool spatial = o.value("spatial", false);
    std::vector<std::string> where;
    int n = 0;
    for (auto& op : model.dataflow.ops) {
      if (!kind.empty() && kind != ir::op_kind_name(op.kind)) continue;
      if (spatial && std::none_of(op.equation.begin(), op.equation.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; })) continue;
      ++n;
      std::string name = op.module >= 0 && op.module < static_cast<int>(model.modules.size()) ? model.modules[op.module].name : "";
      std::string pattern = name.empty() ? model.model : detail::module_pattern(name);
      if (std::find(where.begin(), where.end(), pattern) == where.end()) where.push_back(pattern);
    }
    if (n > 0) {
      std::string line = std::to_string(n) + " " + kind + (spatial ? " op(s) over spatial dims" : " op(s)") + " in the traced forward (";
      for (size_t i = 0; i < where.size() && i < 4; ++i) line += (i ? ", " : "") + where[i];
      if (where.size() > 4) line += ", …";
      ev.lines.push_back(line + ")");
    }
  } else if (cond.contains("alternative")) {
    std::string needle = cond["alternative"].value("name_contains", "");
    for (auto& mp : result.meshes)
      for (auto& a : mp.alternatives)
        if (a.feasible && a.name.find(needle) != std::string::npos)
          ev.lines.push_back(mp.mesh.shape_string() + ": rejected alternative '" + a.name + "' (" + a.why_rejected + ")");
  }
  return ev;
}

}  // namespace

std::vector<CompilerLimit> parse_compiler_limits(const std::string& json_text, std::string& error) {
  error.clear();
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("limits") || !j["limits"].is_array()) {
    error = "the knowledge base is not a JSON object with a \"limits\" array";
    return {};
  }
  std::vector<CompilerLimit> out;
  std::set<std::string> ids;
  for (auto& e : j["limits"]) {
    CompilerLimit l;
    auto text = [&](const char* key) { return e.contains(key) && e[key].is_string() ? e[key].get<std::string>() : std::string(); };
    l.id = text("id");
    std::string where = "limit '" + (l.id.empty() ? std::string("?") : l.id) + "'";
    l.title = text("title");
    l.symptom = text("symptom");
    l.workaround = text("workaround");
    l.origin = text("origin");
    l.checked = text("checked");
    if (l.id.empty() || l.title.empty() || l.symptom.empty() || l.workaround.empty()) {
      error = where + ": needs id, title, symptom and workaround";
      return {};
    }
    if (!ids.insert(l.id).second) {
      error = where + ": duplicate id";
      return {};
    }
    if (!e.contains("when") || !e["when"].is_array() || e["when"].empty()) {
      error = where + ": \"when\" must be a non-empty array of conditions";
      return {};
    }
    for (auto& c : e["when"]) {
      if (!c.is_object() || c.size() != 1 || !condition_kinds().count(c.begin().key())) {
        error = where + ": each condition is an object with one of diagnostic, collective, layout, op, alternative";
        return {};
      }
    }
    l.when = e["when"];
    if (e.contains("tracking") && e["tracking"].is_array())
      for (auto& t : e["tracking"])
        if (t.is_object()) l.tracking.push_back({t.value("name", ""), t.value("title", ""), t.value("url", "")});
    if (l.tracking.empty() || std::any_of(l.tracking.begin(), l.tracking.end(), [](const IssueLink& t) {
          return t.name.empty() || t.url.rfind("https://", 0) != 0;
        })) {
      error = where + ": needs at least one tracking link with a name and an https URL";
      return {};
    }
    out.push_back(std::move(l));
  }
  return out;
}

const std::vector<CompilerLimit>& builtin_compiler_limits() {
  static const std::vector<CompilerLimit> limits = [] {
    std::string error;
    auto l = parse_compiler_limits(detail::kCompilerLimitsJson, error);
    return l;  // a broken file is caught by the unit tests (the build embeds it as is)
  }();
  return limits;
}

std::vector<LimitMatch> match_compiler_limits(const std::vector<CompilerLimit>& limits, const ir::ModelIR& model,
                                              const plan::PlanResult& result) {
  std::vector<LimitMatch> out;
  for (auto& l : limits) {
    LimitMatch m;
    m.limit = &l;
    for (auto& cond : l.when) {
      Evidence ev = match_condition(cond, model, result);
      m.hit |= ev.hit;
      for (auto& line : ev.lines) m.evidence.push_back(std::move(line));
    }
    if (!m.evidence.empty()) out.push_back(std::move(m));
  }
  return out;
}

}  // namespace shardlens::report
