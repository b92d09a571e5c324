// libFuzzer target over the server's framing and dispatch: the input is the byte stream a client
// sends after a valid `initialize`, cut into reads at arbitrary points. Everything the server does
// with it (framing, JSON-RPC, lifecycle, document sync, analysis, features) runs; replies are
// dropped. Crashes, sanitizer reports and hangs are findings.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "language_server.h"
#include "protocol/framing.h"

namespace {

class FuzzTransport : public shardlens::protocol::Transport {
 public:
  explicit FuzzTransport(std::string_view input) : input_(input) {}
  bool read_some(std::string& chunk) override {
    if (!sent_initialize_) {
      sent_initialize_ = true;
      chunk = shardlens::protocol::frame(
          R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"general":{"positionEncodings":["utf-16"]}}}})");
      chunk += shardlens::protocol::frame(R"({"jsonrpc":"2.0","method":"initialized","params":{}})");
      return true;
    }
    if (input_.empty()) return false;
    // The first byte of each read chooses its length, so reads split messages anywhere.
    size_t n = 1 + static_cast<unsigned char>(input_[0]) * 8;
    input_.remove_prefix(1);
    n = std::min(n, input_.size());
    chunk.assign(input_.substr(0, n));
    input_.remove_prefix(n);
    return true;
  }
  bool write(std::string_view) override { return true; }

 private:
  std::string_view input_;
  bool sent_initialize_ = false;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzTransport transport(std::string_view(reinterpret_cast<const char*>(data), size));
  shardlens::server::ServerOptions options;
  options.log_level = -1;
  options.join_reader = true;
  shardlens::server::run_language_server(transport, options);
  return 0;
}
