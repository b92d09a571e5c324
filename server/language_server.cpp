#include "language_server.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <variant>

#include "ir_check_command.h"
#include "emit/report.h"
#include "ir/heap.h"
#include "torch/export_runner.h"
#include "lsp_features.h"
#include "scheduler.h"
#include "plan/plan_output.h"
#include "protocol/framing.h"
#include "protocol/jsonrpc.h"
#include "protocol/position.h"
#include "settings.h"

namespace shardlens::server {
namespace {

using protocol::json;
namespace ec = protocol::error_code;

struct RpcError {
  int code;
  std::string message;
};

struct ParkedRequest {
  json id;
  std::string method;
  json params;
};

struct Document {
  std::string uri, path;
  int version = 0;
  std::string text;
  protocol::LineIndex lines;
  std::vector<ByteEdit> pending_edits;  // since the last job
  bool reset = true;
  int submitted_version = -1;
  Settings wanted_settings;  // what the next answer must be computed with
  std::optional<Clock::time_point> due;
  std::shared_ptr<const DocumentAnalysis> analysis;
  std::vector<ParkedRequest> parked;
  Clock::time_point last_change{};
  std::optional<Clock::time_point> progress_due;  // report $/progress if analysis takes longer
  std::string progress_token;
  bool progress_begun = false;  // the client created the token and saw "begin"
  // shardlens.checkIr's mismatches, shown with the analysis of the version they were checked on.
  json ir_diagnostics = json::array();
  int ir_version = -1;
};

std::string uri_to_path(const std::string& uri) {
  if (uri.rfind("file://", 0) != 0) return "";
  std::string rest = uri.substr(7), out;
  if (!rest.empty() && rest[0] != '/') rest = rest.substr(rest.find('/') == std::string::npos ? rest.size() : rest.find('/'));
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      out += static_cast<char>(std::stoi(rest.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += rest[i];
    }
  }
  return out;
}

std::string path_to_uri(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') out += static_cast<char>(c);
    else out += {'%', hex[c >> 4], hex[c & 15]};
  }
  return out;
}

class Server {
 public:
  Server(protocol::Transport& transport, const ServerOptions& options)
      : transport_(transport), options_(options), queue_(std::make_shared<EventQueue>()), worker_(*queue_) {}

  int run() {
    // The reader blocks in read(2) on stdin and is never joined; it shares the queue so that the
    // queue outlives it whichever ends first.
    std::thread reader([queue = queue_, &transport = transport_] { read_loop(*queue, transport); });
    bool reader_ended = false;
    while (!exit_code_) {
      auto deadline = next_deadline();
      auto event = queue_->pop(deadline);
      if (event) {
        if (auto* m = std::get_if<ReaderMessage>(&*event)) on_body(m->body);
        else if (auto* e = std::get_if<ReaderError>(&*event)) on_framing_error(e->problem);
        else if (std::holds_alternative<ReaderEnd>(*event)) {
          log(1, "client closed the stream");
          reader_ended = true;
          // A session ends with `exit`; a hang-up is an error even after shutdown. Over TCP, a
          // client that never gave the token does not end the server by hanging up.
          exit_code_ = !options_.token.empty() && !initialized_ ? kSessionRefused : 1;
        } else if (auto* d = std::get_if<AnalysisDone>(&*event)) {
          on_analysis(d->uri, d->analysis);
          worker_.handled(d->sequence);
        } else if (auto* t = std::get_if<TaskDone>(&*event)) {
          if (t->finish) t->finish();
        }
      }
      fire_timers();
    }
    // A refused client is hung up on; its reader ends with the stream and must not outlive the
    // transport, which the caller drops to wait for the next client.
    if (*exit_code_ == kSessionRefused) transport_.close();
    if (options_.join_reader || *exit_code_ == kSessionRefused) {
      while (!reader_ended)
        if (auto e = queue_->pop(std::nullopt); e && std::holds_alternative<ReaderEnd>(*e)) reader_ended = true;
      reader.join();
    } else {
      reader.detach();
    }
    return *exit_code_;
  }

 private:
  // ---- transport ----------------------------------------------------------------------------
  static void read_loop(EventQueue& queue, protocol::Transport& transport) {
    use_huge_pages_for_thread_heap();
    protocol::MessageReader reader;
    std::string chunk;
    while (transport.read_some(chunk)) {
      reader.feed(chunk);
      protocol::MessageReader::Event e;
      while (reader.next(e)) {
        if (e.kind == protocol::MessageReader::Event::Message) queue.push(ReaderMessage{std::move(e.text)});
        else queue.push(ReaderError{e.text});
      }
    }
    queue.push(ReaderEnd{});
  }

  void send(const json& message) {
    std::string body = protocol::serialize(message);
    if (!transport_.write(protocol::frame(body))) log(0, "cannot write to the client");
  }
  void reply(const json& id, json result) { send(protocol::make_response(id, std::move(result))); }
  void reply_error(const json& id, int code, const std::string& message) {
    log(1, "error " + std::to_string(code) + ": " + message);
    send(protocol::make_error(id, code, message));
  }
  void notify(const std::string& method, json params) { send(protocol::make_notification(method, std::move(params))); }
  void request(const std::string& method, json params, std::function<void(const json&, bool)> on_reply) {
    std::string id = "shardlens-" + std::to_string(++outgoing_id_);
    pending_client_requests_[id] = std::move(on_reply);
    send(protocol::make_request(id, method, std::move(params)));
  }
  void log(int level, const std::string& text) {
    if (level <= options_.log_level) std::fprintf(stderr, "shardlens: %s\n", text.c_str());
  }
  void show_message(int type, const std::string& text) { notify("window/showMessage", {{"type", type}, {"message", text}}); }

  // ---- dispatch -----------------------------------------------------------------------------
  void on_framing_error(const std::string& problem) {
    log(0, "framing: " + problem);
    // The id is unknown: JSON-RPC answers such failures with id null.
    send(protocol::make_error(nullptr, ec::kInvalidRequest, "bad message framing: " + problem));
  }

  void on_body(const std::string& body) {
    bool parse_error = false;
    std::string problem;
    protocol::Incoming in = protocol::classify(body, parse_error, problem);
    if (parse_error) {
      send(protocol::make_error(nullptr, ec::kParseError, "parse error: " + problem));
      return;
    }
    if (in.kind == protocol::Incoming::Invalid) {
      send(protocol::make_error(in.id, ec::kInvalidRequest, "invalid request: " + in.problem));
      return;
    }
    if (in.kind == protocol::Incoming::Response) {
      std::string key = in.id.is_string() ? in.id.get<std::string>() : in.id.dump();
      auto it = pending_client_requests_.find(key);
      if (it == pending_client_requests_.end()) return;
      auto callback = std::move(it->second);
      pending_client_requests_.erase(it);
      callback(in.result, in.is_error);
      return;
    }
    bool is_request = in.kind == protocol::Incoming::Request;
    try {
      if (is_request) on_request(in);
      else on_notification(in);
    } catch (const RpcError& e) {
      if (is_request) reply_error(in.id, e.code, e.message);
      else log(0, in.method + ": " + e.message);
    } catch (const std::exception& e) {
      if (is_request) reply_error(in.id, ec::kInternalError, std::string("internal error: ") + e.what());
      else log(0, in.method + ": internal error: " + e.what());
    }
  }

  // The methods, by name. Requests get exactly one reply; unknown notifications (and `$/` ones)
  // are ignored. `initialize` and `exit` are answered before the tables: they hold in any state.
  using Handler = std::function<void(Server&, const protocol::Incoming&)>;
  static const std::map<std::string, Handler, std::less<>>& requests() {
    static const std::map<std::string, Handler, std::less<>> table = {
        {"shutdown", [](Server& s, const protocol::Incoming& in) { s.shutdown(in); }},
        {"textDocument/hover", [](Server& s, const protocol::Incoming& in) { s.document_request(in); }},
        {"textDocument/codeLens", [](Server& s, const protocol::Incoming& in) { s.document_request(in); }},
        {"textDocument/codeAction", [](Server& s, const protocol::Incoming& in) { s.document_request(in); }},
        {"codeAction/resolve", [](Server& s, const protocol::Incoming& in) { s.resolve_request(in); }},
        {"workspace/executeCommand", [](Server& s, const protocol::Incoming& in) { s.execute_command(in); }},
    };
    return table;
  }
  static const std::map<std::string, Handler, std::less<>>& notifications() {
    static const std::map<std::string, Handler, std::less<>> table = {
        {"initialized", [](Server& s, const protocol::Incoming&) { s.on_initialized(); }},
        {"textDocument/didOpen", [](Server& s, const protocol::Incoming& in) { s.did_open(in.params); }},
        {"textDocument/didChange", [](Server& s, const protocol::Incoming& in) { s.did_change(in.params); }},
        {"textDocument/didClose", [](Server& s, const protocol::Incoming& in) { s.did_close(in.params); }},
        {"textDocument/didSave", [](Server&, const protocol::Incoming&) {}},
        {"workspace/didChangeConfiguration", [](Server& s, const protocol::Incoming& in) { s.did_change_configuration(in.params); }},
        {"workspace/didChangeWorkspaceFolders", [](Server& s, const protocol::Incoming& in) { s.did_change_workspace_folders(in.params); }},
        {"workspace/didChangeWatchedFiles", [](Server& s, const protocol::Incoming& in) { s.did_change_watched_files(in.params); }},
        {"$/cancelRequest", [](Server& s, const protocol::Incoming& in) { s.cancel(in.params); }},
    };
    return table;
  }

  void on_request(const protocol::Incoming& in) {
    const std::string& m = in.method;
    if (shutdown_) throw RpcError{ec::kInvalidRequest, "the server is shutting down; only 'exit' is accepted"};
    if (m == "initialize") return initialize(in);
    if (!initialized_) throw RpcError{ec::kServerNotInitialized, "the server has not been initialized"};
    auto handler = requests().find(m);
    if (handler == requests().end()) throw RpcError{ec::kMethodNotFound, "unknown method '" + m + "'"};
    handler->second(*this, in);
  }

  void on_notification(const protocol::Incoming& in) {
    if (in.method == "exit") {
      // Over TCP, only the client that gave the token may end the server.
      exit_code_ = !options_.token.empty() && !initialized_ ? kSessionRefused : shutdown_ ? 0 : 1;
      return;
    }
    if (!initialized_ || shutdown_) return;  // dropped, as the spec says
    if (auto handler = notifications().find(in.method); handler != notifications().end()) handler->second(*this, in);
  }

  void shutdown(const protocol::Incoming& in) {
    shutdown_ = true;
    for (auto& [uri, doc] : documents_)
      for (auto& p : doc.parked) reply_error(p.id, ec::kRequestFailed, "the server is shutting down");
    for (auto& [uri, doc] : documents_) doc.parked.clear();
    reply(in.id, nullptr);
  }

  // Requests on one document wait for its analysis (answer_or_park).
  void document_request(const protocol::Incoming& in) {
    Document& doc = document_for(in.params);
    answer_or_park(doc, {in.id, in.method, in.params});
  }

  void resolve_request(const protocol::Incoming& in) {
    if (!in.params.is_object()) throw RpcError{ec::kInvalidParams, "codeAction/resolve takes a CodeAction"};
    auto data = in.params.find("data");
    if (data == in.params.end() || !data->is_object() || !data->contains("uri") || !(*data)["uri"].is_string())
      return reply(in.id, in.params);  // nothing to resolve
    Document& doc = document_by_uri((*data)["uri"].get<std::string>());
    answer_or_park(doc, {in.id, in.method, in.params});
  }

  // ---- lifecycle ----------------------------------------------------------------------------
  void initialize(const protocol::Incoming& in) {
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

  // initializationOptions.token or .shardlens.token equals the server's, compared in constant time.
  bool token_matches(const json& params) const {
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

  void add_workspace_root(const std::string& uri) {
    std::string path = uri_to_path(uri);
    if (!path.empty()) workspace_roots_.push_back(path);
  }

  void did_change_workspace_folders(const json& params) {
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

  void on_initialized() {
    if (client_configuration_) pull_configuration();
  }

  void pull_configuration() {
    request("workspace/configuration", {{"items", json::array({{{"section", "shardlens"}}})}}, [this](const json& result, bool error) {
      if (error || !result.is_array() || result.empty() || !result[0].is_object()) return;
      pulled_settings_ = result[0];
      settings_changed();
    });
  }

  void did_change_configuration(const json& params) {
    if (params.is_object() && params.contains("settings") && params["settings"].is_object()) {
      const json& s = params["settings"];
      if (s.contains("shardlens") && s["shardlens"].is_object()) pushed_settings_ = s["shardlens"];
    }
    if (client_configuration_) pull_configuration();
    settings_changed();
  }

  void rebuild_base_settings() {
    Settings s;
    std::vector<std::string> problems;
    s.apply(initialization_options_, problems);
    s.apply(pushed_settings_, problems);
    s.apply(pulled_settings_, problems);
    s.apply(command_settings_, problems);
    for (auto& p : problems)
      if (reported_problems_.insert(p).second) show_message(2, "shardlens: " + p + " (ignored)");
    base_settings_ = s;
  }

  // Requests after this point are answered with the new settings (they wait for the re-plan).
  void settings_changed() {
    rebuild_base_settings();
    for (auto& [uri, doc] : documents_) {
      Settings now = effective_settings(doc);
      if (now == doc.wanted_settings) continue;
      doc.wanted_settings = now;
      doc.submitted_version = -1;
      schedule(doc, 0);
    }
  }

  bool current(const Document& doc) const {
    return doc.analysis && doc.analysis->version == doc.version && doc.analysis->settings == doc.wanted_settings;
  }
  // Requests wait for the completed analysis (hovers list the rejected alternatives).
  bool answerable(const Document& doc) const { return current(doc) && doc.analysis->complete; }

  // pyproject.toml below the client's settings, per document directory (cached by path + mtime).
  Settings effective_settings(const Document& doc) {
    Settings s = settings_from_files(doc);
    // The user ran shardlens.exportGraph on this script: its export is what they want planned.
    if (exported_.count(doc.path)) s.exact_graph = true;
    return s;
  }

  Settings settings_from_files(const Document& doc) {
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
    problems.clear();
    s.apply(initialization_options_, problems);
    s.apply(pushed_settings_, problems);
    s.apply(pulled_settings_, problems);
    s.apply(command_settings_, problems);
    for (auto& p : problems)
      if (reported_problems_.insert(p).second) show_message(2, "shardlens: " + p + " (ignored)");
    return s;
  }

  // ---- documents ----------------------------------------------------------------------------
  static std::string get_string(const json& object, const char* key, const char* what) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_string())
      throw RpcError{ec::kInvalidParams, std::string(what) + " needs a string '" + key + "'"};
    return object[key].get<std::string>();
  }

  Document& document_by_uri(const std::string& uri) {
    auto it = documents_.find(uri);
    if (it == documents_.end()) throw RpcError{ec::kInvalidParams, "document '" + uri + "' is not open"};
    return it->second;
  }

  Document& document_for(const json& params) {
    if (!params.is_object() || !params.contains("textDocument")) throw RpcError{ec::kInvalidParams, "missing textDocument"};
    return document_by_uri(get_string(params["textDocument"], "uri", "textDocument"));
  }

  void did_open(const json& params) {
    if (!params.is_object() || !params.contains("textDocument")) throw RpcError{ec::kInvalidParams, "didOpen needs textDocument"};
    const json& td = params["textDocument"];
    std::string uri = get_string(td, "uri", "textDocument");
    std::string text = get_string(td, "text", "textDocument");
    Document& doc = documents_[uri];
    doc = Document{};
    doc.uri = uri;
    doc.path = uri_to_path(uri);
    doc.version = td.contains("version") && td["version"].is_number_integer() ? td["version"].get<int>() : 0;
    doc.text = std::move(text);
    doc.lines = protocol::LineIndex(doc.text);
    doc.reset = true;
    schedule(doc, 0);
    imported_file_changed(doc);
  }

  // An open buffer is what another document's imports read of that file; the documents that
  // import it are analysed again, and no other.
  void imported_file_changed(const Document& changed, int delay_ms = 0) {
    if (changed.path.empty()) return;
    workspace_modules()->set_overlay(changed.path, changed.text);
    reanalyse_dependents(changed.path, delay_ms);
  }

  void reanalyse_dependents(const std::string& path, int delay_ms) {
    for (auto& [uri, other] : documents_) {
      if (other.path == path || !other.analysis) continue;
      const auto& deps = other.analysis->dependencies;
      if (std::find(deps.begin(), deps.end(), path) == deps.end()) continue;
      other.submitted_version = -1;
      schedule(other, delay_ms);
    }
  }

  // workspace/didChangeWatchedFiles: a file changed on disk (the loader notices by its time and
  // size; the documents that import it are analysed again).
  void did_change_watched_files(const json& params) {
    if (!params.is_object() || !params.contains("changes") || !params["changes"].is_array()) return;
    for (auto& change : params["changes"])
      if (change.is_object() && change.contains("uri") && change["uri"].is_string())
        reanalyse_dependents(uri_to_path(change["uri"].get<std::string>()), 0);
  }

  void did_change(const json& params) {
    Document& doc = document_for(params);
    const json& td = params["textDocument"];
    int version = td.contains("version") && td["version"].is_number_integer() ? td["version"].get<int>() : doc.version + 1;
    if (version <= doc.version) {
      log(0, "didChange for " + doc.uri + " has version " + std::to_string(version) + ", not newer than " +
                 std::to_string(doc.version) + "; ignored");
      return;
    }
    if (!params.contains("contentChanges") || !params["contentChanges"].is_array())
      throw RpcError{ec::kInvalidParams, "didChange needs contentChanges"};
    for (auto& change : params["contentChanges"]) {
      std::string text = get_string(change, "text", "a content change");
      if (change.contains("range")) {
        auto [start, end] = byte_range(doc, change["range"]);
        doc.text.replace(start, end - start, text);
        doc.pending_edits.push_back({start, end, text});
      } else {
        doc.text = text;
        doc.pending_edits.clear();
        doc.reset = true;
      }
      doc.lines = protocol::LineIndex(doc.text);
    }
    doc.version = version;
    // Typing in bursts: wait a little longer so that one analysis serves the whole burst.
    auto now = Clock::now();
    int debounce_ms = now - doc.last_change < std::chrono::milliseconds(150) ? 40 : 10;
    doc.last_change = now;
    schedule(doc, debounce_ms);
    imported_file_changed(doc, debounce_ms);
  }

  void did_close(const json& params) {
    Document& doc = document_for(params);
    for (auto& p : doc.parked) reply_error(p.id, ec::kRequestFailed, "the document was closed");
    std::string uri = doc.uri;
    Job job;
    job.close = true;
    worker_.submit(uri, std::move(job));
    notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
    std::string path = doc.path;
    documents_.erase(uri);
    if (!path.empty()) {
      workspace_modules()->clear_overlay(path);  // importers read the disk's text again
      reanalyse_dependents(path, 0);
    }
  }

  std::pair<size_t, size_t> byte_range(const Document& doc, const json& range) {
    auto pos = [&](const char* key) {
      if (!range.is_object() || !range.contains(key) || !range[key].is_object()) throw RpcError{ec::kInvalidParams, "bad range"};
      const json& p = range[key];
      if (!p.contains("line") || !p["line"].is_number_integer() || !p.contains("character") || !p["character"].is_number_integer() ||
          p["line"].get<int64_t>() < 0 || p["character"].get<int64_t>() < 0)
        throw RpcError{ec::kInvalidParams, "a position needs non-negative integer line and character"};
      protocol::Position position{static_cast<uint32_t>(std::min<int64_t>(p["line"].get<int64_t>(), UINT32_MAX)),
                                  static_cast<uint32_t>(std::min<int64_t>(p["character"].get<int64_t>(), UINT32_MAX))};
      return doc.lines.offset(doc.text, position, encoding_);
    };
    size_t a = pos("start"), b = pos("end");
    if (b < a) std::swap(a, b);
    return {a, b};
  }

  void schedule(Document& doc, int delay_ms) {
    auto due = Clock::now() + std::chrono::milliseconds(delay_ms);
    if (!doc.due || due > *doc.due || delay_ms == 0) doc.due = due;
  }

  void submit(Document& doc) {
    doc.due.reset();
    Job job;
    job.version = doc.version;
    job.path = doc.path.empty() ? doc.uri : doc.path;
    job.text = doc.text;
    job.edits = std::move(doc.pending_edits);
    job.reset = doc.reset;
    job.settings = effective_settings(doc);
    doc.wanted_settings = job.settings;
    doc.pending_edits.clear();
    doc.reset = false;
    doc.submitted_version = doc.version;
    if (client_progress_ && doc.progress_token.empty())
      doc.progress_due = Clock::now() + std::chrono::milliseconds(options_.progress_after_ms);
    worker_.submit(doc.uri, std::move(job));
  }

  std::optional<Clock::time_point> next_deadline() const {
    std::optional<Clock::time_point> d;
    for (auto& [uri, doc] : documents_) {
      if (doc.due && (!d || *doc.due < *d)) d = doc.due;
      if (doc.progress_due && (!d || *doc.progress_due < *d)) d = doc.progress_due;
    }
    return d;
  }

  void fire_timers() {
    auto now = Clock::now();
    for (auto& [uri, doc] : documents_) {
      if (doc.due && *doc.due <= now) submit(doc);
      if (doc.progress_due && *doc.progress_due <= now) begin_progress(doc);
    }
  }

  // Long analyses (a cold start on a big model) show as $/progress in clients that support it.
  void begin_progress(Document& doc) {
    doc.progress_due.reset();
    doc.progress_token = "shardlens-progress-" + std::to_string(++progress_id_);
    std::string token = doc.progress_token, uri = doc.uri;
    std::string name = std::filesystem::path(doc.path.empty() ? doc.uri : doc.path).filename().string();
    // The token may be used only once the client has created it; if the analysis ended meanwhile,
    // begin and end still pair up.
    request("window/workDoneProgress/create", {{"token", token}}, [this, token, uri, name](const json&, bool error) {
      auto it = documents_.find(uri);
      if (error || it == documents_.end() || it->second.progress_token != token) return;  // done already
      notify("$/progress", {{"token", token}, {"value", {{"kind", "begin"}, {"title", "shardlens"}, {"message", "planning " + name}, {"cancellable", false}}}});
      it->second.progress_begun = true;
    });
  }

  void end_progress(Document& doc) {
    doc.progress_due.reset();
    if (doc.progress_begun) notify("$/progress", {{"token", doc.progress_token}, {"value", {{"kind", "end"}}}});
    doc.progress_begun = false;
    doc.progress_token.clear();
  }

  void on_analysis(const std::string& uri, std::shared_ptr<const DocumentAnalysis> analysis) {
    auto it = documents_.find(uri);
    if (it == documents_.end()) return;
    Document& doc = it->second;
    // The previous analysis is released after publishing: freeing a large model takes milliseconds
    // that should not delay the diagnostics.
    std::shared_ptr<const DocumentAnalysis> previous;
    if (!doc.analysis || analysis->version >= doc.analysis->version) {
      previous = std::move(doc.analysis);
      doc.analysis = analysis;
    }
    if (!current(doc)) return;  // stale: a newer job is coming
    // The completion of an analysis already published: its diagnostics are the same.
    bool completion = previous && previous->version == analysis->version && !previous->complete && analysis->complete &&
                      previous->settings == analysis->settings;
    if (!completion) {
      if (doc.submitted_version == doc.version && !doc.due) end_progress(doc);
      log(1, "analysed " + uri + " v" + std::to_string(analysis->version) + " in " + std::to_string(analysis->analysis_ms) + " ms (" +
                 analysis->path_taken + "; extract " + std::to_string(analysis->extract_ms) + " [script " +
                 std::to_string(analysis->extract_stats.script_run_ms()) + ", trace " +
                 std::to_string(analysis->extract_stats.trace_ms) +
                 (analysis->extract_stats.input_shapes_reused ? " in 1 pass" : "") + "], plan " + std::to_string(analysis->plan_ms) + ")");
      json params = {{"uri", uri}, {"diagnostics", diagnostics_json(*analysis, encoding_)}};
      if (doc.ir_version == analysis->version)
        for (auto& d : doc.ir_diagnostics) params["diagnostics"].push_back(d);
      params["version"] = analysis->version;
      notify("textDocument/publishDiagnostics", params);
    }
    if (analysis->complete) {
      auto parked = std::move(doc.parked);
      doc.parked.clear();
      for (auto& p : parked) answer(doc, p);
    }
    if (previous) worker_.submit_task([old = std::move(previous)]() mutable -> std::function<void()> {
        old.reset();
        return {};
      });
  }

  // ---- requests on analysed documents ---------------------------------------------------------
  void answer_or_park(Document& doc, ParkedRequest request) {
    if (answerable(doc)) return answer(doc, request);
    doc.parked.push_back(std::move(request));
    if (doc.submitted_version != doc.version) schedule(doc, 0);
  }

  // A request on an analysed document, answered from its analysis (lsp_features.h converts).
  using Answer = std::function<void(Server&, Document&, const ParkedRequest&)>;
  static const std::map<std::string, Answer, std::less<>>& answers() {
    static const std::map<std::string, Answer, std::less<>> table = {
        {"textDocument/hover",
         [](Server& s, Document& doc, const ParkedRequest& r) {
           if (!r.params.contains("position")) throw RpcError{ec::kInvalidParams, "hover needs a position"};
           json range = {{"start", r.params["position"]}, {"end", r.params["position"]}};
           s.reply(r.id, hover_json(*doc.analysis, s.byte_range(doc, range).first, s.encoding_));
         }},
        {"textDocument/codeLens",
         [](Server& s, Document& doc, const ParkedRequest& r) { s.reply(r.id, code_lenses_json(*doc.analysis, doc.uri, s.encoding_)); }},
        {"textDocument/codeAction",
         [](Server& s, Document& doc, const ParkedRequest& r) {
           auto [start, end] = s.byte_range(doc, r.params.value("range", json()));
           s.reply(r.id, code_actions_json(*doc.analysis, doc.uri, start, end, r.params.value("context", json::object()), s.encoding_));
         }},
        {"codeAction/resolve",
         [](Server& s, Document& doc, const ParkedRequest& r) {
           auto resolved = resolve_code_action(*doc.analysis, r.params, s.encoding_);
           if (!resolved) throw RpcError{ec::kRequestFailed, "the code action no longer applies"};
           s.reply(r.id, *resolved);
         }},
        {"workspace/executeCommand", [](Server& s, Document& doc, const ParkedRequest& r) { s.run_command(doc, r); }},
    };
    return table;
  }

  void answer(Document& doc, const ParkedRequest& r) {
    try {
      auto handler = answers().find(r.method);
      if (handler == answers().end()) throw RpcError{ec::kMethodNotFound, "unknown method '" + r.method + "'"};
      handler->second(*this, doc, r);
    } catch (const RpcError& e) {
      reply_error(r.id, e.code, e.message);
    } catch (const std::exception& e) {
      reply_error(r.id, ec::kInternalError, std::string("internal error: ") + e.what());
    }
  }

  void cancel(const json& params) {
    if (!params.is_object() || !params.contains("id")) return;
    const json& id = params["id"];
    for (auto& [uri, doc] : documents_) {
      for (auto it = doc.parked.begin(); it != doc.parked.end(); ++it) {
        if (it->id == id) {
          json rid = it->id;
          doc.parked.erase(it);
          reply_error(rid, ec::kRequestCancelled, "cancelled");
          return;
        }
      }
    }
    // Already answered (requests are answered in order on this thread): nothing to do.
  }

  // ---- commands -------------------------------------------------------------------------------
  void execute_command(const protocol::Incoming& in) {
    std::string command = get_string(in.params, "command", "executeCommand");
    json args = in.params.value("arguments", json::array());
    if (!args.is_array()) throw RpcError{ec::kInvalidParams, "arguments must be an array"};
    if (command == "shardlens.setMeshes") {
      if (args.empty()) throw RpcError{ec::kInvalidParams, "shardlens.setMeshes takes [[\"1x8\", ...]]"};
      json meshes = args[0].is_string() ? json::array({args[0]}) : args[0];
      Settings probe;
      std::vector<std::string> problems;
      probe.apply({{"meshes", meshes}}, problems);
      if (!problems.empty()) throw RpcError{ec::kInvalidParams, problems[0]};
      command_settings_["meshes"] = meshes;
      settings_changed();
      return reply(in.id, {{"meshes", meshes}});
    }
    if (command == "shardlens.insertAnnotations" || command == "shardlens.insertLoadShardSpec" || command == "shardlens.showPlan" ||
        command == "shardlens.generateReport" || command == "shardlens.exportGraph" || command == "shardlens.checkIr") {
      if (args.empty() || !(args[0].is_string() || (args[0].is_object() && args[0].contains("uri"))))
        throw RpcError{ec::kInvalidParams, command + " takes [uri]"};
      std::string uri = args[0].is_string() ? args[0].get<std::string>() : args[0]["uri"].get<std::string>();
      Document& doc = document_by_uri(uri);
      return answer_or_park(doc, {in.id, "workspace/executeCommand", in.params});
    }
    throw RpcError{ec::kInvalidParams, "unknown command '" + command + "'"};
  }

  void run_command(Document& doc, const ParkedRequest& r) {
    std::string command = r.params["command"].get<std::string>();
    const DocumentAnalysis& a = *doc.analysis;
    if (command == "shardlens.showPlan") {
      if (!a.plan.ok) throw RpcError{ec::kRequestFailed, a.error.empty() ? "no plan for this document" : a.error};
      return reply(r.id, plan::to_json(a.plan, a.model(), a.options));
    }
    if (command == "shardlens.generateReport") return generate_report(doc, r);
    if (command == "shardlens.exportGraph") return export_graph(doc, r);
    if (command == "shardlens.checkIr") return check_ir(doc, r);
    std::string kind = command == "shardlens.insertAnnotations" ? "source.shardlens.insertAnnotations" : "source.shardlens.insertLoadShardSpec";
    std::string error;
    auto edit = source_action_edit(a, doc.uri, kind, encoding_, error);
    if (!edit) throw RpcError{ec::kRequestFailed, error};
    if (!client_apply_edit_) throw RpcError{ec::kRequestFailed, "the client does not support workspace/applyEdit"};
    json id = r.id;
    request("workspace/applyEdit", {{"label", command == "shardlens.insertAnnotations" ? "Insert Shardy annotations (tt-xla)" : "Insert load_shard_spec()"},
                                    {"edit", *edit}},
            [this, id](const json& result, bool error) {
              bool applied = !error && result.is_object() && result.value("applied", false);
              reply(id, {{"applied", applied}});
            });
  }

  // sharding_analysis.md (and its chart) beside the script, or where the second argument says; the
  // per-component re-plans run on the worker.
  void generate_report(Document& doc, const ParkedRequest& r) {
    std::shared_ptr<const DocumentAnalysis> a = doc.analysis;
    if (!a->plan.ok) throw RpcError{ec::kRequestFailed, a->error.empty() ? "no plan for this document" : a->error};
    const json& args = r.params["arguments"];
    std::string output;
    if (args.size() > 1 && args[1].is_string()) output = args[1].get<std::string>();
    else if (args.size() > 1 && args[1].is_object() && args[1].contains("output") && args[1]["output"].is_string())
      output = args[1]["output"].get<std::string>();
    std::string script = doc.path;
    if (output.empty()) {
      if (script.empty()) throw RpcError{ec::kInvalidParams, "the document has no file path: give an output path as the second argument"};
      output = (std::filesystem::path(script).parent_path() / "sharding_analysis.md").string();
    }
    json id = r.id;
    worker_.submit_task([this, a, script, output, id]() -> std::function<void()> {
      auto files = emit::write_report(a->model(), a->plan, a->options, script.empty() ? a->model().source : script, output);
      return [this, files, id]() {
        if (!files.ok) return reply_error(id, ec::kRequestFailed, "could not write the report: " + files.error);
        std::error_code err;
        std::string path = std::filesystem::absolute(files.markdown_path, err).string();
        reply(id, {{"path", path}, {"uri", path_to_uri(path)}, {"chart", files.chart_path}});
      };
    });
  }

  // The compiled IR in a folder ([uri, folder] or [uri, {"folder", "mesh"}]) against the plan: the
  // report as the answer, the mismatches as diagnostics at the script's lines until the next edit.
  void check_ir(Document& doc, const ParkedRequest& r) {
    std::shared_ptr<const DocumentAnalysis> a = doc.analysis;
    if (!a->plan.ok) throw RpcError{ec::kRequestFailed, a->error.empty() ? "no plan for this document" : a->error};
    const json& args = r.params["arguments"];
    std::string folder, mesh;
    if (args.size() > 1 && args[1].is_string()) folder = args[1].get<std::string>();
    else if (args.size() > 1 && args[1].is_object()) {
      folder = args[1].value("folder", "");
      mesh = args[1].value("mesh", "");
    }
    if (folder.empty()) throw RpcError{ec::kInvalidParams, "shardlens.checkIr takes [uri, folder] (the folder of the exported .mlir files)"};
    if (std::filesystem::path(folder).is_relative() && !doc.path.empty())
      folder = (std::filesystem::path(doc.path).parent_path() / folder).string();
    json id = r.id;
    std::string uri = doc.uri;
    int version = a->version;
    worker_.submit_task([this, a, folder, mesh, id, uri, version]() -> std::function<void()> {
      auto answer = server::check_ir_folder(plan::to_json(a->plan, a->model(), a->options), folder, mesh);
      return [this, answer, id, uri, version, a]() {
        if (!answer.ok) return reply_error(id, ec::kRequestFailed, "check-ir: " + answer.error);
        auto it = documents_.find(uri);
        if (it != documents_.end()) {
          it->second.ir_diagnostics = answer.diagnostics;
          it->second.ir_version = version;
          if (it->second.analysis == a) {
            json params = {{"uri", uri}, {"diagnostics", diagnostics_json(*a, encoding_)}, {"version", version}};
            for (auto& d : answer.diagnostics) params["diagnostics"].push_back(d);
            notify("textDocument/publishDiagnostics", params);
          }
        }
        json result = answer.report;
        result["diagnostics"] = answer.diagnostics;
        reply(id, result);
      };
    });
  }

  // Runs the user's script (TorchScript export on the meta device) only when `allowExecution` is
  // set; the export lands beside the script and the next analysis uses the exact graph.
  void export_graph(Document& doc, const ParkedRequest& r) {
    Settings settings = effective_settings(doc);
    if (!settings.allow_execution)
      throw RpcError{ec::kRequestFailed,
                     "exporting runs your script with Python; set shardlens.allowExecution to true to allow it"};
    if (doc.path.empty()) throw RpcError{ec::kInvalidParams, "the document is not a file on disk"};
    torchgraph::ExportRequest request;
    request.script = doc.path;
    request.output = export_path_for(doc.path);
    request.model_expression = settings.model;
    request.python = settings.python;
    if (doc.analysis && !doc.analysis->model().root_expression.empty()) request.root_hints.push_back(doc.analysis->model().root_expression);
    json id = r.id;
    std::string uri = doc.uri;
    bool unsaved = doc.analysis && doc.analysis->text != read_disk(doc.path);
    worker_.submit_task([this, request, id, uri, unsaved]() -> std::function<void()> {
      auto result = torchgraph::run_export(request);
      return [this, result, request, id, uri, unsaved]() {
        if (!result.ok) return reply_error(id, ec::kRequestFailed, "export failed: " + result.message);
        json answer = {{"path", request.output}, {"method", result.result.value("method", "")}, {"python", result.python}};
        if (unsaved) answer["note"] = "the document has unsaved changes: the export is of the file on disk and is used once it is saved";
        reply(id, answer);
        exported_.insert(request.script);
        if (auto it = documents_.find(uri); it != documents_.end()) {
          it->second.submitted_version = -1;
          it->second.reset = true;
          schedule(it->second, 0);
        }
      };
    });
  }

  static std::string read_disk(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  protocol::Transport& transport_;
  ServerOptions options_;
  std::shared_ptr<EventQueue> queue_;
  Worker worker_;
  std::optional<int> exit_code_;
  bool initialized_ = false, shutdown_ = false;
  protocol::PositionEncoding encoding_ = protocol::PositionEncoding::Utf16;
  bool client_configuration_ = false, client_progress_ = false, client_apply_edit_ = true;
  json initialization_options_ = json::object(), pushed_settings_ = json::object(), pulled_settings_ = json::object(),
       command_settings_ = json::object();
  Settings base_settings_;
  std::set<std::string> reported_problems_;
  std::map<std::string, std::pair<std::filesystem::file_time_type, json>> pyproject_cache_;
  std::vector<std::string> workspace_roots_;  // paths of the client's workspace folders
  std::set<std::string> exported_;  // scripts whose export the user ran: planned on the exact graph
  std::map<std::string, Document> documents_;
  std::map<std::string, std::function<void(const json&, bool)>> pending_client_requests_;
  uint64_t outgoing_id_ = 0, progress_id_ = 0;
};

}  // namespace

int run_language_server(protocol::Transport& transport, const ServerOptions& options) {
  // The main loop runs on a thread of its own: a thread's heap, unlike the main thread's, can be
  // given huge pages (ir/heap.h), and hovers, like analyses, come after pauses.
  int code = 1;
  std::exception_ptr failure;
  std::thread loop([&] {
    use_huge_pages_for_thread_heap();
    try {
      Server server(transport, options);
      code = server.run();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  loop.join();
  if (failure) std::rethrow_exception(failure);
  return code;
}

}  // namespace shardlens::server
