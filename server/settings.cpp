#include "settings.h"

#include <algorithm>
#include <filesystem>

#include "python/forward_trace.h"
#include "session/plan_choices.h"

namespace shardlens::server {

using nlohmann::json;

namespace {

// Reads a list setting's entries, each checked by `valid` (which says why not in `error`); the
// first bad entry is reported as "shardlens.KEY: ..." and ends the reading.
bool read_entries(const json& list, const char* key, const char* entry_example,
                  bool (*valid)(const std::string& entry, std::string& error), std::vector<std::string>& out,
                  std::vector<std::string>& problems) {
  for (auto& entry : list) {
    std::string error;
    if (!entry.is_string() || !valid(entry.get<std::string>(), error)) {
      problems.push_back(std::string("shardlens.") + key + ": " +
                         (entry.is_string() ? error : std::string("entries must be strings like ") + entry_example + ", not " + entry.dump()));
      return false;
    }
    out.push_back(entry.get<std::string>());
  }
  return true;
}

bool mesh_is_valid(const std::string& text, std::string& error) { return plan::parse_mesh(text, error).has_value(); }
bool input_is_valid(const std::string& text, std::string& error) { return static_cast<bool>(python::parse_given_input(text, error)); }

}  // namespace

void Settings::apply(const json& object, std::vector<std::string>& problems, SettingsSource source) {
  if (!object.is_object()) {
    if (!object.is_null()) problems.push_back("settings must be an object");
    return;
  }
  if (source == SettingsSource::Workspace) {
    json analysis_only = object;
    for (const char* key : {"allowExecution", "python", "exactGraph"})
      if (analysis_only.erase(key))
        problems.push_back(std::string(key) + " is ignored in pyproject.toml: only your editor's settings can allow running code");
    if (analysis_only.erase("memoryBudgetMiB"))
      problems.push_back("memoryBudgetMiB is ignored in pyproject.toml: only your editor's settings can change what an analysis may use");
    return apply(analysis_only, problems, SettingsSource::User);
  }
  auto text = [&](const char* key, std::string& field, const std::vector<std::string>& allowed) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return;
    if (!it->is_string() || (allowed.size() && std::find(allowed.begin(), allowed.end(), it->get<std::string>()) == allowed.end())) {
      std::string list;
      for (auto& a : allowed) list += (list.empty() ? "" : "|") + a;
      problems.push_back(std::string("shardlens.") + key + " must be " + (list.empty() ? "a string" : list) + ", not " + it->dump());
      return;
    }
    field = it->get<std::string>();
  };
  auto positive = [&](const char* key, int64_t& field) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return;
    if (!it->is_number_integer() || it->get<int64_t>() <= 0) {
      problems.push_back(std::string("shardlens.") + key + " must be a positive integer, not " + it->dump());
      return;
    }
    field = it->get<int64_t>();
  };
  if (auto it = object.find("meshes"); it != object.end() && !it->is_null()) {
    json list = it->is_string() ? json::array({*it}) : *it;
    std::vector<std::string> meshes;
    bool ok = read_entries(list, "meshes", "\"1x8\" or \"t3k\"", mesh_is_valid, meshes, problems);
    ok = ok && list.is_array() && !list.empty();
    if (ok) this->meshes = meshes;
    else if (list.is_array() && list.empty())
      problems.push_back("shardlens.meshes must not be empty");
  }
  for (const char* key : {"pythonPath", "python-path"}) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) continue;
    json list = it->is_string() ? json::array({*it}) : *it;
    std::vector<std::string> dirs;
    bool ok = list.is_array();
    for (auto& d : list) ok = ok && d.is_string() && (dirs.push_back(d.get<std::string>()), true);
    if (ok) python_path = dirs;
    else problems.push_back(std::string("shardlens.") + key + " must be a list of folders, not " + it->dump());
  }
  text("strategy", strategy, session::choice_names(session::PlanChoice::Strategy));
  positive("batch", batch);
  positive("seq", seq);
  positive("memoryBudgetMiB", memory_budget_mib);
  if (auto it = object.find("seq"); it != object.end() && it->is_number_integer() && it->get<int64_t>() > 0) seq_set = true;
  if (auto it = object.find("inputs"); it != object.end() && !it->is_null()) {
    json list = it->is_string() ? json::array({*it}) : *it;
    std::vector<std::string> specs;
    bool ok = read_entries(list, "inputs", "\"input_ids=1x128:int64\"", input_is_valid, specs, problems);
    ok = ok && list.is_array();
    if (ok) inputs = specs;
    else if (!list.is_array()) problems.push_back("shardlens.inputs must be a list of NAME=SHAPE[:DTYPE] strings, not " + it->dump());
  }
  text("phase", phase, session::choice_names(session::PlanChoice::Phase));
  if (auto it = object.find("phase"); it != object.end() && it->is_string() && it->get<std::string>() == phase) phase_set = true;
  text("dtype", dtype, session::choice_names(session::PlanChoice::Dtype));
  // A built-in chip or a hardware profile's path (`shardlens calibrate`), read now so that a bad one is said.
  if (auto it = object.find("hardware"); it != object.end() && !it->is_null()) {
    std::string error;
    if (it->is_string() && plan::resolve_hardware(it->get<std::string>(), error)) hardware = it->get<std::string>();
    else problems.push_back("shardlens.hardware must be wormhole, blackhole or a hardware profile's path, not " + it->dump() +
                            (error.empty() ? "" : " (" + error + ")"));
  }
  text("model", model, {});
  text("python", python, {});
  auto flag = [&](const char* key, bool& field) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return;
    if (it->is_boolean()) field = it->get<bool>();
    else problems.push_back(std::string("shardlens.") + key + " must be true or false, not " + it->dump());
  };
  flag("allowExecution", allow_execution);
  flag("exactGraph", exact_graph);
}

json Settings::to_json() const {
  return {{"meshes", meshes}, {"strategy", strategy}, {"batch", batch}, {"seq", seq}, {"phase", phase},
          {"dtype", dtype},   {"hardware", hardware}, {"model", model}, {"allowExecution", allow_execution}, {"python", python},
          {"exactGraph", exact_graph}, {"pythonPath", python_path}, {"memoryBudgetMiB", memory_budget_mib}, {"inputs", inputs}};
}


namespace {

std::string strip_comment(const std::string& line) {
  bool in_string = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) in_string = false;
    } else if (c == '"' || c == '\'') {
      in_string = true;
      quote = c;
    } else if (c == '#') {
      return line.substr(0, i);
    }
  }
  return line;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// One TOML value of the kinds settings use; discarded json on anything else.
json toml_value(const std::string& text) {
  std::string v = trim(text);
  if (v.empty()) return json(json::value_t::discarded);
  if (v == "true") return true;
  if (v == "false") return false;
  if ((v.front() == '"' && v.back() == '"' && v.size() >= 2) || (v.front() == '\'' && v.back() == '\'' && v.size() >= 2))
    return v.substr(1, v.size() - 2);
  if (v.front() == '[' && v.back() == ']') {
    json list = json::array();
    std::string inner = v.substr(1, v.size() - 2), item;
    bool in_string = false;
    char quote = 0;
    for (char c : inner) {
      if (in_string) {
        item += c;
        if (c == quote) in_string = false;
      } else if (c == '"' || c == '\'') {
        in_string = true;
        quote = c;
        item += c;
      } else if (c == ',') {
        if (!trim(item).empty()) list.push_back(toml_value(item));
        item.clear();
      } else {
        item += c;
      }
    }
    if (!trim(item).empty()) list.push_back(toml_value(item));
    for (auto& e : list)
      if (e.is_discarded()) return json(json::value_t::discarded);
    return list;
  }
  std::string digits = v;
  digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
  try {
    size_t used = 0;
    long long n = std::stoll(digits, &used);
    if (used == digits.size()) return n;
  } catch (...) {
  }
  return json(json::value_t::discarded);
}

}  // namespace

json read_pyproject_settings(const std::string& toml_text, std::vector<std::string>& problems) {
  json out = json::object();
  bool in_table = false;
  json* entry = nullptr;  // the [[tool.shardlens.pipeline]] entry being read
  std::string pending_key, pending_value;  // a multi-line array
  size_t start = 0;
  int line_number = 0;
  while (start <= toml_text.size()) {
    size_t end = toml_text.find('\n', start);
    std::string line = trim(strip_comment(toml_text.substr(start, end == std::string::npos ? std::string::npos : end - start)));
    start = end == std::string::npos ? toml_text.size() + 1 : end + 1;
    ++line_number;
    if (!pending_key.empty()) {
      pending_value += " " + line;
      if (line.find(']') == std::string::npos) continue;
      line = pending_key + " = " + pending_value;
      pending_key.clear();
      pending_value.clear();
    }
    if (line.empty()) continue;
    if (line.front() == '[') {
      std::string header = line;
      header.erase(std::remove(header.begin(), header.end(), ' '), header.end());
      in_table = header == "[tool.shardlens]";
      entry = nullptr;
      if (header == "[[tool.shardlens.pipeline]]") {
        if (!out["pipeline"].is_array()) out["pipeline"] = json::array();
        out["pipeline"].push_back(json::object());
        entry = &out["pipeline"].back();
      }
      continue;
    }
    if (!in_table && !entry) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) {
      problems.push_back("pyproject.toml line " + std::to_string(line_number) + ": expected key = value");
      continue;
    }
    std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'')) key = key.substr(1, key.size() - 2);
    if (!value.empty() && value.front() == '[' && value.find(']') == std::string::npos) {
      pending_key = key;
      pending_value = value;
      continue;
    }
    json v = toml_value(value);
    if (v.is_discarded()) {
      problems.push_back("pyproject.toml line " + std::to_string(line_number) + ": cannot read the value of " + key);
      continue;
    }
    (entry ? *entry : out)[key] = v;
  }
  return out;
}

std::string find_pyproject(const std::string& directory, const std::vector<std::string>& workspace_roots) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(directory, ec).lexically_normal();
  if (!dir.empty() && !dir.has_filename()) dir = dir.parent_path();  // "a/b/" -> "a/b"
  // The deepest workspace folder holding the document bounds the walk up.
  fs::path top = dir;
  size_t best = 0;
  for (auto& r : workspace_roots) {
    fs::path root = fs::absolute(r, ec).lexically_normal();
    if (!root.empty() && !root.has_filename()) root = root.parent_path();
    auto rel = dir.lexically_relative(root);
    bool inside = !rel.empty() && *rel.begin() != "..";
    if (inside && root.native().size() >= best) {
      best = root.native().size();
      top = root;
    }
  }
  for (int depth = 0; depth < 64 && !dir.empty(); ++depth) {
    fs::path candidate = dir / "pyproject.toml";
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
    if (dir == top || dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return "";
}

}  // namespace shardlens::server
