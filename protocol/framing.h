// JSON-RPC over a byte stream: `Content-Length` framed messages (LSP base protocol).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace shardlens::protocol {

// Incremental parser of the base protocol. Feed it bytes as they arrive; take events in order.
// A bad header block is reported and skipped up to the next `Content-Length:` so that one bad
// message never loses the ones after it; a body over the size limit is skipped without buffering.
class MessageReader {
 public:
  struct Event {
    enum Kind { Message, Error } kind = Message;
    std::string text;  // the body (Message) or what was wrong (Error)
  };

  explicit MessageReader(size_t max_body_bytes = kDefaultMaxBody) : max_body_(max_body_bytes) {}
  void feed(std::string_view bytes);
  bool next(Event& out);

  static constexpr size_t kDefaultMaxBody = 64u << 20;
  static constexpr size_t kMaxHeaderBytes = 8192;

 private:
  bool parse_one(Event& out);
  bool resync(size_t from);
  void compact();

  std::string buffer_;
  size_t consumed_ = 0;
  size_t max_body_;
  size_t body_length_ = 0;  // of the message whose headers were read
  bool in_body_ = false;
  size_t skip_ = 0;  // bytes of an oversized body still to drop
};

// "Content-Length: N\r\n\r\n" + body.
std::string frame(std::string_view body);

}  // namespace shardlens::protocol
