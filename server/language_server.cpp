// The server's main loop, its transport, and the method tables that dispatch requests and
// notifications to their handlers.
#include "server.h"

#include <cstdio>
#include <exception>
#include <thread>
#include <variant>

#include "ir/heap.h"
#include "protocol/framing.h"

namespace shardlens::server {

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

int Server::run() {
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

void Server::read_loop(EventQueue& queue, protocol::Transport& transport) {
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

void Server::send(const json& message) {
  std::string body = protocol::serialize(message);
  if (!transport_.write(protocol::frame(body))) log(0, "cannot write to the client");
}

void Server::reply_error(const json& id, int code, const std::string& message) {
  log(1, "error " + std::to_string(code) + ": " + message);
  send(protocol::make_error(id, code, message));
}

void Server::request(const std::string& method, json params, std::function<void(const json&, bool)> on_reply) {
  std::string id = "shardlens-" + std::to_string(++outgoing_id_);
  pending_client_requests_[id] = std::move(on_reply);
  send(protocol::make_request(id, method, std::move(params)));
}

void Server::log(int level, const std::string& text) {
  if (level <= options_.log_level) std::fprintf(stderr, "shardlens: %s\n", text.c_str());
}

void Server::on_framing_error(const std::string& problem) {
  log(0, "framing: " + problem);
  // The id is unknown: JSON-RPC answers such failures with id null.
  send(protocol::make_error(nullptr, ec::kInvalidRequest, "bad message framing: " + problem));
}

void Server::on_body(const std::string& body) {
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

const std::map<std::string, Server::Handler, std::less<>>& Server::requests() {
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

const std::map<std::string, Server::Handler, std::less<>>& Server::notifications() {
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

void Server::on_request(const protocol::Incoming& in) {
  const std::string& m = in.method;
  if (shutdown_) throw RpcError{ec::kInvalidRequest, "the server is shutting down; only 'exit' is accepted"};
  if (m == "initialize") return initialize(in);
  if (!initialized_) throw RpcError{ec::kServerNotInitialized, "the server has not been initialized"};
  auto handler = requests().find(m);
  if (handler == requests().end()) throw RpcError{ec::kMethodNotFound, "unknown method '" + m + "'"};
  handler->second(*this, in);
}

void Server::on_notification(const protocol::Incoming& in) {
  if (in.method == "exit") {
    // Over TCP, only the client that gave the token may end the server.
    exit_code_ = !options_.token.empty() && !initialized_ ? kSessionRefused : shutdown_ ? 0 : 1;
    return;
  }
  if (!initialized_ || shutdown_) return;  // dropped, as the spec says
  if (auto handler = notifications().find(in.method); handler != notifications().end()) handler->second(*this, in);
}

void Server::shutdown(const protocol::Incoming& in) {
  shutdown_ = true;
  for (auto& [uri, doc] : documents_)
    for (auto& p : doc.parked) reply_error(p.id, ec::kRequestFailed, "the server is shutting down");
  for (auto& [uri, doc] : documents_) doc.parked.clear();
  reply(in.id, nullptr);
}

void Server::document_request(const protocol::Incoming& in) {
  Document& doc = document_for(in.params);
  answer_or_park(doc, {in.id, in.method, in.params});
}

void Server::resolve_request(const protocol::Incoming& in) {
  if (!in.params.is_object()) throw RpcError{ec::kInvalidParams, "codeAction/resolve takes a CodeAction"};
  auto data = in.params.find("data");
  if (data == in.params.end() || !data->is_object() || !data->contains("uri") || !(*data)["uri"].is_string())
    return reply(in.id, in.params);  // nothing to resolve
  Document& doc = document_by_uri((*data)["uri"].get<std::string>());
  answer_or_park(doc, {in.id, in.method, in.params});
}

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
