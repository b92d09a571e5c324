// Byte transports for the protocol: stdio, or one TCP client on loopback. Both on Asio.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace shardlens::protocol {

class Transport {
 public:
  virtual ~Transport() = default;
  // Blocks until some bytes arrive; false at end of stream or on error.
  virtual bool read_some(std::string& chunk) = 0;
  // Thread-safe; writes the whole buffer or gives up when the peer is gone.
  virtual bool write(std::string_view bytes) = 0;
};

// Takes over stdin/stdout. stdout is moved to a private descriptor and fd 1 is pointed at stderr,
// so that nothing printed by accident can corrupt the protocol stream.
std::unique_ptr<Transport> stdio_transport();

// Listens on `address` ("127.0.0.1:PORT", "localhost:PORT" or "[::1]:PORT"; PORT 0 picks a free
// port), tells `on_listening` the port, and serves the first client that connects. Non-loopback
// addresses are refused: the server runs user-facing analysis and must not be reachable from
// the network.
std::unique_ptr<Transport> tcp_transport(const std::string& address, std::string& error,
                                         const std::function<void(unsigned short)>& on_listening);

}  // namespace shardlens::protocol
