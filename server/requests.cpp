// Requests answered from a document's analysis (hover, code lenses, code actions): they wait
// for the analysis of the current version; lsp_features.h converts its results to JSON.
#include "server.h"

#include <exception>

namespace shardlens::server {

void Server::answer_or_park(Document& doc, ParkedRequest request) {
  if (answerable(doc)) return answer(doc, request);
  doc.parked.push_back(std::move(request));
  if (doc.submitted_version != doc.version) schedule(doc, 0);
}

const std::map<std::string, Server::Answer, std::less<>>& Server::answers() {
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

void Server::answer(Document& doc, const ParkedRequest& r) {
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

void Server::cancel(const json& params) {
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
}  // namespace shardlens::server
