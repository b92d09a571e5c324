// initialize, the workspace folders, and settings: the client's layers over pyproject.toml.
#include "server.h"

#include <fstream>
#include <sstream>

#include "ir/heap.h"

namespace shardlens::server {

void Server::initialize(const protocol::Incoming& in) {
  if (initialized_) throw RpcError{ec::kInvalidRequest, "initialize was already called"};
  log(1, "shardlens " SHARDLENS_VERSION " on " + heap_allocator());
  if (!options_.token.empty() && !token_matches(in.params)) {
    log(0, "refused a client without the token");
    reply_error(in.id, ec::kInvalidRequest,
                "this server needs the token it printed at start (shardlens: token ...) as initializationOptions.token");
    exit_code_ = kSessionRefused;
    return;
  }
  if (!in.params.is_object()) throw RpcError{ec::kInvalidParams, "initialize takes an InitializeParams object"};
  const json& p = in.params;
  json caps = p.value("capabilities", json::object());
  if (!caps.is_object()) throw RpcError{ec::kInvalidParams, "capabilities must be an object"};
  auto flag = [&](std::initializer_list<const char*> path) {
    const json* node = &caps;
    for (auto* key : path) {
      if (!node->is_object() || !node->contains(key)) return json();
      node = &(*node)[key];
    }
    return *node;
  };
  json encodings = flag({"general", "positionEncodings"});
  if (encodings.is_array())
    for (auto& e : encodings)
      if (e == "utf-8") encoding_ = protocol::PositionEncoding::Utf8;
  client_configuration_ = flag({"workspace", "configuration"}) == true;
  client_progress_ = flag({"window", "workDoneProgress"}) == true;
  client_apply_edit_ = flag({"workspace", "applyEdit"}) != false;
  // The workspace bounds where pyproject.toml is looked for.
  if (auto folders = p.find("workspaceFolders"); folders != p.end() && folders->is_array()) {
    for (auto& f : *folders)
      if (f.is_object() && f.contains("uri") && f["uri"].is_string()) add_workspace_root(f["uri"].get<std::string>());
  } else if (p.contains("rootUri") && p["rootUri"].is_string()) {
    add_workspace_root(p["rootUri"].get<std::string>());
  } else if (p.contains("rootPath") && p["rootPath"].is_string()) {
    workspace_roots_.push_back(p["rootPath"].get<std::string>());
  }
  if (p.contains("initializationOptions") && p["initializationOptions"].is_object()) {
    const json& o = p["initializationOptions"];
    initialization_options_ = o.contains("shardlens") && o["shardlens"].is_object() ? o["shardlens"] : o;
    initialization_options_.erase("token");
  }
  rebuild_base_settings();
  initialized_ = true;
  json capabilities = {
      {"positionEncoding", protocol::encoding_name(encoding_)},
      {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
      {"hoverProvider", true},
      {"workspace", {{"workspaceFolders", {{"supported", true}, {"changeNotifications", true}}}}},
      {"codeLensProvider", {{"resolveProvider", false}}},
      {"codeActionProvider",
       {{"codeActionKinds", {"quickfix", "source.shardlens.insertAnnotations", "source.shardlens.insertLoadShardSpec",
                             "source.shardlens.generateReport"}},
        {"resolveProvider", true}}},
      {"executeCommandProvider",
       {{"commands", {"shardlens.insertAnnotations", "shardlens.insertLoadShardSpec", "shardlens.showPlan", "shardlens.setMeshes",
                     "shardlens.generateReport", "shardlens.exportGraph", "shardlens.checkIr"}}}},
  };
  reply(in.id, {{"capabilities", capabilities}, {"serverInfo", {{"name", "shardlens"}, {"version", SHARDLENS_VERSION}}}});
}

bool Server::token_matches(const json& params) const {
  const json* o = params.is_object() ? &params : nullptr;
  if (o && o->contains("initializationOptions")) o = &(*o)["initializationOptions"];
  else o = nullptr;
  const json* given = nullptr;
  if (o && o->is_object()) {
    if (o->contains("token")) given = &(*o)["token"];
    else if (o->contains("shardlens") && (*o)["shardlens"].is_object() && (*o)["shardlens"].contains("token"))
      given = &(*o)["shardlens"]["token"];
  }
  if (!given || !given->is_string()) return false;
  const std::string& a = given->get_ref<const std::string&>();
  const std::string& b = options_.token;
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

void Server::add_workspace_root(const std::string& uri) {
  std::string path = uri_to_path(uri);
  if (!path.empty()) workspace_roots_.push_back(path);
}

void Server::did_change_workspace_folders(const json& params) {
  const json event = params.is_object() ? params.value("event", json::object()) : json::object();
  if (!event.is_object()) return;
  if (auto removed = event.find("removed"); removed != event.end() && removed->is_array())
    for (auto& f : *removed)
      if (f.is_object() && f.contains("uri") && f["uri"].is_string())
        std::erase(workspace_roots_, uri_to_path(f["uri"].get<std::string>()));
  if (auto added = event.find("added"); added != event.end() && added->is_array())
    for (auto& f : *added)
      if (f.is_object() && f.contains("uri") && f["uri"].is_string()) add_workspace_root(f["uri"].get<std::string>());
  settings_changed();
}

void Server::on_initialized() {
  if (client_configuration_) pull_configuration();
}

void Server::pull_configuration() {
  request("workspace/configuration", {{"items", json::array({{{"section", "shardlens"}}})}}, [this](const json& result, bool error) {
    if (error || !result.is_array() || result.empty() || !result[0].is_object()) return;
    pulled_settings_ = result[0];
    settings_changed();
  });
}

void Server::did_change_configuration(const json& params) {
  if (params.is_object() && params.contains("settings") && params["settings"].is_object()) {
    const json& s = params["settings"];
    if (s.contains("shardlens") && s["shardlens"].is_object()) pushed_settings_ = s["shardlens"];
  }
  if (client_configuration_) pull_configuration();
  settings_changed();
}

void Server::rebuild_base_settings() {
  Settings s;
  apply_user_settings(s);
  base_settings_ = s;
}

void Server::apply_user_settings(Settings& s) {
  std::vector<std::string> problems;
  s.apply(initialization_options_, problems);
  s.apply(pushed_settings_, problems);
  s.apply(pulled_settings_, problems);
  s.apply(command_settings_, problems);
  for (auto& p : problems)
    if (reported_problems_.insert(p).second) show_message(2, "shardlens: " + p + " (ignored)");
}

void Server::settings_changed() {
  rebuild_base_settings();
  for (auto& [uri, doc] : documents_) {
    Settings now = effective_settings(doc);
    if (now == doc.wanted_settings) continue;
    doc.wanted_settings = now;
    doc.submitted_version = -1;
    schedule(doc, 0);
  }
}

bool Server::current(const Document& doc) const {
  return doc.analysis && doc.analysis->version == doc.version && doc.analysis->settings == doc.wanted_settings;
}

Settings Server::effective_settings(const Document& doc) {
  Settings s = settings_from_files(doc);
  // The user ran shardlens.exportGraph on this script: its export is what they want planned.
  if (exported_.count(doc.path)) s.exact_graph = true;
  return s;
}

Settings Server::settings_from_files(const Document& doc) {
  if (doc.path.empty()) return base_settings_;
  std::string dir = std::filesystem::path(doc.path).parent_path().string();
  std::string toml_path = find_pyproject(dir, workspace_roots_);
  if (toml_path.empty()) return base_settings_;
  std::error_code err;
  auto mtime = std::filesystem::last_write_time(toml_path, err);
  auto& cached = pyproject_cache_[toml_path];
  if (cached.first != mtime || cached.second.is_null()) {
    std::ifstream in(toml_path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<std::string> problems;
    cached = {mtime, read_pyproject_settings(ss.str(), problems)};
    for (auto& p : problems)
      if (reported_problems_.insert(toml_path + p).second) show_message(2, "shardlens: " + toml_path + ": " + p);
  }
  Settings s;
  std::vector<std::string> problems;
  s.apply(cached.second, problems, SettingsSource::Workspace);
  for (auto& p : problems)
    if (reported_problems_.insert(toml_path + p).second) show_message(2, "shardlens: " + toml_path + ": " + p);
  apply_user_settings(s);
  if (cached.second.contains("pipeline")) apply_pipeline(doc, toml_path, cached.second, s);
  return s;
}

void Server::apply_pipeline(const Document& doc, const std::string& toml_path, const json& pyproject, Settings& s) {
  namespace fs = std::filesystem;
  std::vector<session::PipelineMember> members;
  std::string error;
  if (!session::pipeline_members(pyproject, fs::path(toml_path).parent_path().string(), members, error)) {
    if (reported_problems_.insert(toml_path + error).second) show_message(2, "shardlens: " + toml_path + ": " + error);
    return;
  }
  std::error_code ec;
  const fs::path here = fs::weakly_canonical(doc.path, ec);
  std::string mine;  // the document as the pipeline names it
  for (auto& m : members)
    if (fs::weakly_canonical(m.file, ec) == here) mine = m.file;
  if (mine.empty()) return;
  // The device count of the first mesh the settings name: its shapes are the candidates.
  int devices = 8;
  std::string mesh_error;
  if (!s.meshes.empty())
    if (auto mesh = plan::parse_mesh(s.meshes.front(), mesh_error)) devices = mesh->devices();
  std::string fingerprint = std::to_string(devices);
  auto stamp = [&](const std::string& path) {
    auto t = fs::last_write_time(path, ec);
    fingerprint += "|" + path + "@" + (ec ? std::string("?") : std::to_string(t.time_since_epoch().count()));
  };
  stamp(toml_path);
  for (auto& m : members) stamp(m.file);
  auto& cache = pipeline_cache_[toml_path];
  if (cache.fingerprint != fingerprint) {
    // Each model is analysed once per change on disk (open buffers of the other models are not
    // read: their saved text is what the pipeline runs).
    Settings base = s;
    base.pipeline_note.clear();
    cache = {fingerprint, session::plan_shared_shape(members, base, devices)};
    if (!cache.shape.ok && reported_problems_.insert(toml_path + cache.shape.error).second)
      show_message(2, "shardlens: " + toml_path + ": the pipeline's shape could not be chosen: " + cache.shape.error);
  }
  if (!cache.shape.ok) return;
  s.meshes = {cache.shape.shape()};
  s.pipeline_note = cache.shape.note_for(mine);
}
}  // namespace shardlens::server
