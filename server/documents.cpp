// The document store: opening, edits (as byte edits), closing, imported files changing, and the
// scheduling of each document's analysis on the worker, with $/progress when it takes long.
#include "server.h"

#include <chrono>

namespace shardlens::server {

std::string Server::get_string(const json& object, const char* key, const char* what) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string())
    throw RpcError{ec::kInvalidParams, std::string(what) + " needs a string '" + key + "'"};
  return object[key].get<std::string>();
}

Document& Server::document_by_uri(const std::string& uri) {
  auto it = documents_.find(uri);
  if (it == documents_.end()) throw RpcError{ec::kInvalidParams, "document '" + uri + "' is not open"};
  return it->second;
}

Document& Server::document_for(const json& params) {
  if (!params.is_object() || !params.contains("textDocument")) throw RpcError{ec::kInvalidParams, "missing textDocument"};
  return document_by_uri(get_string(params["textDocument"], "uri", "textDocument"));
}

void Server::did_open(const json& params) {
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

void Server::imported_file_changed(const Document& changed, int delay_ms) {
  if (changed.path.empty()) return;
  workspace_modules()->set_overlay(changed.path, changed.text);
  reanalyse_dependents(changed.path, delay_ms);
}

void Server::reanalyse_dependents(const std::string& path, int delay_ms) {
  for (auto& [uri, other] : documents_) {
    if (other.path == path || !other.analysis) continue;
    const auto& deps = other.analysis->dependencies;
    if (std::find(deps.begin(), deps.end(), path) == deps.end()) continue;
    other.submitted_version = -1;
    schedule(other, delay_ms);
  }
}

void Server::did_change_watched_files(const json& params) {
  if (!params.is_object() || !params.contains("changes") || !params["changes"].is_array()) return;
  for (auto& change : params["changes"])
    if (change.is_object() && change.contains("uri") && change["uri"].is_string())
      reanalyse_dependents(uri_to_path(change["uri"].get<std::string>()), 0);
}

void Server::did_change(const json& params) {
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

void Server::did_close(const json& params) {
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

std::pair<size_t, size_t> Server::byte_range(const Document& doc, const json& range) {
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

void Server::schedule(Document& doc, int delay_ms) {
  auto due = Clock::now() + std::chrono::milliseconds(delay_ms);
  if (!doc.due || due > *doc.due || delay_ms == 0) doc.due = due;
}

void Server::submit(Document& doc) {
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

std::optional<Clock::time_point> Server::next_deadline() const {
  std::optional<Clock::time_point> d;
  for (auto& [uri, doc] : documents_) {
    if (doc.due && (!d || *doc.due < *d)) d = doc.due;
    if (doc.progress_due && (!d || *doc.progress_due < *d)) d = doc.progress_due;
  }
  return d;
}

void Server::fire_timers() {
  auto now = Clock::now();
  for (auto& [uri, doc] : documents_) {
    if (doc.due && *doc.due <= now) submit(doc);
    if (doc.progress_due && *doc.progress_due <= now) begin_progress(doc);
  }
}

void Server::begin_progress(Document& doc) {
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

void Server::end_progress(Document& doc) {
  doc.progress_due.reset();
  if (doc.progress_begun) notify("$/progress", {{"token", doc.progress_token}, {"value", {{"kind", "end"}}}});
  doc.progress_begun = false;
  doc.progress_token.clear();
}

void Server::on_analysis(const std::string& uri, std::shared_ptr<const DocumentAnalysis> analysis) {
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
}  // namespace shardlens::server
