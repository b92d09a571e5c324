// The language server's insides, shared by its files: the documents it holds and the Server class.
// language_server.cpp runs the main loop and holds the method tables; lifecycle.cpp initialize and
// settings; documents.cpp the document store and the scheduling of analyses; requests.cpp the
// requests answered from an analysis; commands.cpp workspace/executeCommand. What the rest of
// shardlens sees of the server is language_server.h.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "language_server.h"
#include "lsp_features.h"
#include "protocol/jsonrpc.h"
#include "protocol/position.h"
#include "protocol/transport.h"
#include "scheduler.h"
#include "settings.h"
#include "session/pipeline_shape.h"

namespace shardlens::server {

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

// file:// URIs and paths, percent-encoded both ways.
std::string uri_to_path(const std::string& uri);
std::string path_to_uri(const std::string& path);

class Server {
 public:
  Server(protocol::Transport& transport, const ServerOptions& options)
      : transport_(transport), options_(options), queue_(std::make_shared<EventQueue>()), worker_(*queue_) {}

  int run();

 private:
  // ---- transport ----------------------------------------------------------------------------
  static void read_loop(EventQueue& queue, protocol::Transport& transport);

  void send(const json& message);
  void reply(const json& id, json result) { send(protocol::make_response(id, std::move(result))); }
  void reply_error(const json& id, int code, const std::string& message);
  void notify(const std::string& method, json params) { send(protocol::make_notification(method, std::move(params))); }
  void request(const std::string& method, json params, std::function<void(const json&, bool)> on_reply);
  void log(int level, const std::string& text);
  void show_message(int type, const std::string& text) { notify("window/showMessage", {{"type", type}, {"message", text}}); }

  // ---- dispatch -----------------------------------------------------------------------------
  void on_framing_error(const std::string& problem);

  void on_body(const std::string& body);

  // The methods, by name. Requests get exactly one reply; unknown notifications (and `$/` ones)
  // are ignored. `initialize` and `exit` are answered before the tables: they hold in any state.
  using Handler = std::function<void(Server&, const protocol::Incoming&)>;
  static const std::map<std::string, Handler, std::less<>>& requests();
  static const std::map<std::string, Handler, std::less<>>& notifications();

  void on_request(const protocol::Incoming& in);

  void on_notification(const protocol::Incoming& in);

  void shutdown(const protocol::Incoming& in);

  // Requests on one document wait for its analysis (answer_or_park).
  void document_request(const protocol::Incoming& in);

  void resolve_request(const protocol::Incoming& in);

  // ---- lifecycle ----------------------------------------------------------------------------
  void initialize(const protocol::Incoming& in);

  // initializationOptions.token or .shardlens.token equals the server's, compared in constant time.
  bool token_matches(const json& params) const;

  void add_workspace_root(const std::string& uri);

  void did_change_workspace_folders(const json& params);

  void on_initialized();

  void pull_configuration();

  void did_change_configuration(const json& params);

  void rebuild_base_settings();

  // The user's own layers, in order: initializationOptions, then pushed, pulled and command
  // settings; each bad value is shown once and ignored.
  void apply_user_settings(Settings& s);

  // Requests after this point are answered with the new settings (they wait for the re-plan).
  void settings_changed();

  bool current(const Document& doc) const;
  // Requests wait for the completed analysis (hovers list the rejected alternatives).
  bool answerable(const Document& doc) const { return current(doc) && doc.analysis->complete; }

  // pyproject.toml below the client's settings, per document directory (cached by path + mtime).
  Settings effective_settings(const Document& doc);

  Settings settings_from_files(const Document& doc);

  // ---- documents ----------------------------------------------------------------------------
  static std::string get_string(const json& object, const char* key, const char* what);

  Document& document_by_uri(const std::string& uri);

  Document& document_for(const json& params);

  void did_open(const json& params);

  // An open buffer is what another document's imports read of that file; the documents that
  // import it are analysed again, and no other.
  void imported_file_changed(const Document& changed, int delay_ms = 0);

  void reanalyse_dependents(const std::string& path, int delay_ms);

  // workspace/didChangeWatchedFiles: a file changed on disk (the loader notices by its time and
  // size; the documents that import it are analysed again).
  void did_change_watched_files(const json& params);

  void did_change(const json& params);

  void did_close(const json& params);

  std::pair<size_t, size_t> byte_range(const Document& doc, const json& range);

  void schedule(Document& doc, int delay_ms);

  void submit(Document& doc);

  std::optional<Clock::time_point> next_deadline() const;

  void fire_timers();

  // Long analyses (a cold start on a big model) show as $/progress in clients that support it.
  void begin_progress(Document& doc);

  void end_progress(Document& doc);

  void on_analysis(const std::string& uri, std::shared_ptr<const DocumentAnalysis> analysis);

  // ---- requests on analysed documents ---------------------------------------------------------
  void answer_or_park(Document& doc, ParkedRequest request);

  // A request on an analysed document, answered from its analysis (lsp_features.h converts).
  using Answer = std::function<void(Server&, Document&, const ParkedRequest&)>;
  static const std::map<std::string, Answer, std::less<>>& answers();

  void answer(Document& doc, const ParkedRequest& r);

  void cancel(const json& params);

  // ---- commands -------------------------------------------------------------------------------
  void execute_command(const protocol::Incoming& in);

  void run_command(Document& doc, const ParkedRequest& r);

  // sharding_analysis.md (and its chart) beside the script, or where the second argument says; the
  // per-component re-plans run on the worker.
  void generate_report(Document& doc, const ParkedRequest& r);

  // The compiled IR in a folder ([uri, folder] or [uri, {"folder", "mesh"}]) against the plan: the
  // report as the answer, the mismatches as diagnostics at the script's lines until the next edit.
  void check_ir(Document& doc, const ParkedRequest& r);

  // Runs the user's script (TorchScript export on the meta device) only when `allowExecution` is
  // set; the export lands beside the script and the next analysis uses the exact graph.
  void export_graph(Document& doc, const ParkedRequest& r);

  static std::string read_disk(const std::string& path);

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
  // Per pyproject.toml declaring a pipeline: the shape its models share, and what it was worked out
  // from (the file's and every member's modification times, the device count), so that it is
  // worked out again only when one of them changes on disk.
  struct PipelineShapeCache {
    std::string fingerprint;
    session::SharedShape shape;
  };
  std::map<std::string, PipelineShapeCache> pipeline_cache_;
  // The pipeline's shared shape, when `doc` is one of the models its pyproject.toml declares.
  void apply_pipeline(const Document& doc, const std::string& toml_path, const json& pyproject, Settings& s);
  std::vector<std::string> workspace_roots_;  // paths of the client's workspace folders
  std::set<std::string> exported_;  // scripts whose export the user ran: planned on the exact graph
  std::map<std::string, Document> documents_;
  std::map<std::string, std::function<void(const json&, bool)>> pending_client_requests_;
  uint64_t outgoing_id_ = 0, progress_id_ = 0;
};

}  // namespace shardlens::server
