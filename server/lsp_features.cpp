#include "lsp_features.h"

#include <algorithm>

#include "session/features.h"

namespace shardlens::server {
namespace {

int severity_number(const std::string& s) {
  if (s == "error") return 1;
  if (s == "warning") return 2;
  if (s == "information") return 3;
  return 4;
}

}  // namespace

json range_json(const DocumentAnalysis& a, size_t start, size_t end, protocol::PositionEncoding enc) {
  auto s = protocol::position_at(a.line_starts, a.text, start, enc);
  auto e = protocol::position_at(a.line_starts, a.text, std::max(start, end), enc);
  return {{"start", {{"line", s.line}, {"character", s.character}}}, {"end", {{"line", e.line}, {"character", e.character}}}};
}

json diagnostics_json(const DocumentAnalysis& a, protocol::PositionEncoding enc) {
  json out = json::array();
  for (auto& f : a.findings) {
    size_t end = f.end;
    if (end <= f.start) {
      // Point at something visible: the rest of the line.
      end = a.text.find('\n', f.start);
      if (end == std::string::npos) end = a.text.size();
    }
    out.push_back({{"range", range_json(a, f.start, end, enc)},
                   {"severity", severity_number(f.severity)},
                   {"code", f.code},
                   {"source", "shardlens"},
                   {"message", f.message}});
  }
  return out;
}

json hover_json(const DocumentAnalysis& a, size_t offset, protocol::PositionEncoding enc) {
  auto hover = session::hover_at(a, offset);
  if (!hover) return nullptr;
  return {{"contents", {{"kind", "markdown"}, {"value", hover->markdown}}}, {"range", range_json(a, hover->start, hover->end, enc)}};
}

json code_lenses_json(const DocumentAnalysis& a, const std::string& uri, protocol::PositionEncoding enc) {
  json out = json::array();
  for (auto& lens : session::code_lenses(a))
    out.push_back({{"range", range_json(a, lens.start, lens.end, enc)},
                   {"command", {{"title", lens.title}, {"command", "shardlens.showPlan"}, {"arguments", json::array({uri})}}}});
  return out;
}

json code_actions_json(const DocumentAnalysis& a, const std::string& uri, size_t start, size_t end, const json& context,
                       protocol::PositionEncoding enc) {
  json out = json::array();
  std::vector<std::string> only;
  if (context.is_object() && context.contains("only") && context["only"].is_array())
    for (auto& k : context["only"])
      if (k.is_string()) only.push_back(k);
  auto wanted = [&](const std::string& kind) {
    if (only.empty()) return true;
    for (auto& o : only)
      if (kind == o || (kind.size() > o.size() && kind.compare(0, o.size(), o) == 0 && kind[o.size()] == '.')) return true;
    return false;
  };
  if (wanted("quickfix")) {
    for (auto& f : a.findings) {
      if (!f.fix) continue;
      bool overlaps = f.start <= end && start <= std::max(f.end, f.start);
      if (!overlaps) continue;
      json diagnostic = {{"range", range_json(a, f.start, std::max(f.end, f.start), enc)},
                         {"severity", severity_number(f.severity)},
                         {"code", f.code},
                         {"source", "shardlens"},
                         {"message", f.message}};
      json edit = {{"changes", {{uri, json::array({{{"range", range_json(a, f.fix->start, f.fix->end, enc)}, {"newText", f.fix->text}}})}}}};
      out.push_back({{"title", f.fix_title}, {"kind", "quickfix"}, {"diagnostics", json::array({diagnostic})}, {"isPreferred", true}, {"edit", edit}});
    }
  }
  if (a.plan.ok && !a.plan.meshes.empty()) {
    if (wanted("source.shardlens.insertAnnotations"))
      out.push_back({{"title", "Insert Shardy annotations (tt-xla)"},
                     {"kind", "source.shardlens.insertAnnotations"},
                     {"data", {{"uri", uri}, {"kind", "source.shardlens.insertAnnotations"}, {"version", a.version}}}});
    if (wanted("source.shardlens.generateReport"))
      out.push_back({{"title", "Generate sharding report (sharding_analysis.md)"},
                     {"kind", "source.shardlens.generateReport"},
                     {"command", {{"title", "Generate sharding report"}, {"command", "shardlens.generateReport"}, {"arguments", json::array({uri})}}}});
    if (wanted("source.shardlens.insertLoadShardSpec"))
      out.push_back({{"title", "Insert load_shard_spec()"},
                     {"kind", "source.shardlens.insertLoadShardSpec"},
                     {"data", {{"uri", uri}, {"kind", "source.shardlens.insertLoadShardSpec"}, {"version", a.version}}}});
  }
  return out;
}

std::optional<json> resolve_code_action(const DocumentAnalysis& a, const json& action, protocol::PositionEncoding enc) {
  const json& data = action["data"];
  std::string kind = data.value("kind", "");
  std::string error;
  auto edit = source_action_edit(a, data["uri"].get<std::string>(), kind, enc, error);
  if (!edit) return std::nullopt;
  json resolved = action;
  resolved["edit"] = *edit;
  return resolved;
}

}  // namespace shardlens::server
