// JSON-RPC 2.0 messages as the LSP uses them: classification, replies and the error codes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace shardlens::protocol {

using json = nlohmann::json;

namespace error_code {
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kServerNotInitialized = -32002;
constexpr int kRequestFailed = -32803;
constexpr int kServerCancelled = -32802;
constexpr int kContentModified = -32801;
constexpr int kRequestCancelled = -32800;
}  // namespace error_code

struct Incoming {
  enum Kind { Request, Notification, Response, Invalid } kind = Invalid;
  json id;  // string or integer (Request, Response); null when unknown
  std::string method;
  json params;  // object, array or null
  json result;  // Response: the result, or the error object when `is_error`
  bool is_error = false;
  std::string problem;  // Invalid: why
};

// Arrays and objects nested deeper than this are a parse error: copying, comparing and printing a
// JSON value recurse once per level, and 90,000 levels overflowed the stack. The LSP nests a few
// levels (a workspace edit about 8).
constexpr size_t kMaxJsonDepth = 512;

// Whether a JSON text opens more than `limit` arrays or objects inside one another (strings are
// skipped; the text need not be valid).
bool nested_deeper_than(std::string_view text, size_t limit);

// Parses one message body. Bad JSON (including invalid UTF-8, and nesting deeper than
// kMaxJsonDepth) yields `parse_error`; a value that is not a JSON-RPC 2.0 message yields
// Kind::Invalid with the reason. `"params": null` is taken as no params (some clients send it with
// shutdown and exit).
Incoming classify(const std::string& body, bool& parse_error, std::string& parse_problem);
Incoming classify(const json& message);

json make_response(const json& id, json result);
json make_error(const json& id, int code, const std::string& message, json data = nullptr);
json make_notification(const std::string& method, json params);
json make_request(const json& id, const std::string& method, json params);

// Serialises for the wire; strings holding invalid UTF-8 are repaired (U+FFFD), never thrown on.
std::string serialize(const json& message);

}  // namespace shardlens::protocol
