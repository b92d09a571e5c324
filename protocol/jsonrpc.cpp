#include "jsonrpc.h"

namespace shardlens::protocol {

bool nested_deeper_than(std::string_view text, size_t limit) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

Incoming classify(const std::string& body, bool& parse_error, std::string& parse_problem) {
  parse_error = false;
  if (nested_deeper_than(body, kMaxJsonDepth)) {
    parse_error = true;
    parse_problem = "arrays and objects nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return {};
  }
  json message = json::parse(body, nullptr, false);
  if (message.is_discarded()) {
    parse_error = true;
    // Say where, without echoing a large body back. Not only syntax: a number too large for a
    // double (1E400) is an out_of_range error.
    try {
      json strict = json::parse(body);
      (void)strict;
    } catch (const json::exception& e) {
      parse_problem = e.what();
    }
    if (parse_problem.size() > 300) parse_problem.resize(300);
    return {};
  }
  return classify(message);
}

Incoming classify(const json& message) {
  Incoming in;
  auto invalid = [&](std::string why) {
    in.kind = Incoming::Invalid;
    in.problem = std::move(why);
    return in;
  };
  if (!message.is_object()) return invalid(message.is_array() ? "batches are not used by the LSP" : "a message must be a JSON object");
  if (auto id = message.find("id"); id != message.end()) {
    if (id->is_string() || id->is_number_integer()) in.id = *id;
    else if (!id->is_null()) return invalid("\"id\" must be an integer or a string");
  }
  auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") return invalid("\"jsonrpc\" must be \"2.0\"");
  auto method = message.find("method");
  if (method != message.end()) {
    if (!method->is_string()) return invalid("\"method\" must be a string");
    in.method = method->get<std::string>();
    if (auto params = message.find("params"); params != message.end() && !params->is_null()) {
      if (!params->is_object() && !params->is_array()) return invalid("\"params\" must be an object or an array");
      in.params = *params;
    }
    in.kind = message.contains("id") ? Incoming::Request : Incoming::Notification;
    if (in.kind == Incoming::Request && in.id.is_null()) return invalid("a request's \"id\" must not be null");
    return in;
  }
  if (auto result = message.find("result"); result != message.end()) {
    in.kind = Incoming::Response;
    in.result = *result;
    return in;
  }
  if (auto error = message.find("error"); error != message.end() && error->is_object()) {
    in.kind = Incoming::Response;
    in.result = *error;
    in.is_error = true;
    return in;
  }
  return invalid("neither a request, a notification nor a response");
}

json make_response(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json make_error(const json& id, int code, const std::string& message, json data) {
  json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

json make_notification(const std::string& method, json params) {
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

json make_request(const json& id, const std::string& method, json params) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

std::string serialize(const json& message) {
  return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace shardlens::protocol
