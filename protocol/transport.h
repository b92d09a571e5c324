// Byte transports for the protocol: stdio, or one TCP client on loopback. Both on Asio.
#pragma once

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
  // Hangs up on the peer (what was written has been sent): a read_some blocked on another thread
  // returns false. Only TCP connections, which a server refuses, do something.
  virtual void close() {}
};

// Takes over stdin/stdout. stdout is moved to a private descriptor and fd 1 is pointed at stderr,
// so that nothing printed by accident can corrupt the protocol stream.
std::unique_ptr<Transport> stdio_transport();

// Listens on `address` ("127.0.0.1:PORT", "localhost:PORT" or "[::1]:PORT"; PORT 0 picks a free
// port) and hands out the clients that connect, one at a time. Non-loopback addresses are refused:
// the server runs user-facing analysis and must not be reachable from the network.
class TcpListener {
 public:
  // Null with `error` set when the address is not loopback or cannot be bound.
  static std::unique_ptr<TcpListener> open(const std::string& address, std::string& error);
  virtual ~TcpListener() = default;
  // Where it listens, as bound: "127.0.0.1:PORT" or "[::1]:PORT".
  virtual std::string address() const = 0;
  // Blocks until a client connects; null with `error` set on failure.
  virtual std::unique_ptr<Transport> accept(std::string& error) = 0;
};

}  // namespace shardlens::protocol
