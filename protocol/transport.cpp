#include "transport.h"

#include <sys/socket.h>
#include <unistd.h>

#include <asio.hpp>
#include <mutex>
#include <optional>
#include <type_traits>

namespace shardlens::protocol {
namespace {

template <typename Stream>
class AsioTransport : public Transport {
 public:
  AsioTransport(std::unique_ptr<asio::io_context> context, Stream in, Stream out)
      : context_(std::move(context)), in_(std::move(in)), out_(std::move(out)) {}
  AsioTransport(std::unique_ptr<asio::io_context> context, Stream both)
      : context_(std::move(context)), in_(std::move(both)), shared_(true) {}

  bool read_some(std::string& chunk) override {
    chunk.resize(1 << 16);
    asio::error_code ec;
    size_t n = in_.read_some(asio::buffer(chunk), ec);
    chunk.resize(n);
    return n > 0 || !ec;
  }

  bool write(std::string_view bytes) override {
    std::lock_guard lock(write_mutex_);
    asio::error_code ec;
    asio::write(shared_ ? in_ : *out_, asio::buffer(bytes.data(), bytes.size()), ec);
    return !ec;
  }

  void close() override {
    // shutdown(2) on the descriptor, not through Asio: the reader thread is inside read_some on
    // the same socket object, and shutdown wakes it with end of stream.
    if constexpr (std::is_same_v<Stream, asio::ip::tcp::socket>) {
      std::lock_guard lock(write_mutex_);
      ::shutdown(in_.native_handle(), SHUT_RDWR);
    }
  }

 private:
  std::unique_ptr<asio::io_context> context_;
  Stream in_;
  std::optional<Stream> out_;
  bool shared_ = false;
  std::mutex write_mutex_;
};

}  // namespace

std::unique_ptr<Transport> stdio_transport() {
  auto context = std::make_unique<asio::io_context>();
  int protocol_out = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  asio::posix::stream_descriptor in(*context, ::dup(STDIN_FILENO));
  asio::posix::stream_descriptor out(*context, protocol_out);
  return std::make_unique<AsioTransport<asio::posix::stream_descriptor>>(std::move(context), std::move(in), std::move(out));
}

namespace {

class AsioTcpListener : public TcpListener {
 public:
  AsioTcpListener() : context_(std::make_unique<asio::io_context>()), acceptor_(*context_) {}

  bool listen(const asio::ip::address& ip, unsigned short port, asio::error_code& ec) {
    asio::ip::tcp::endpoint endpoint(ip, port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(1, ec);
    return !ec;
  }

  std::string address() const override {
    asio::error_code ec;
    auto endpoint = acceptor_.local_endpoint(ec);
    auto ip = endpoint.address();
    std::string host = ip.is_v6() ? "[" + ip.to_string() + "]" : ip.to_string();
    return host + ":" + std::to_string(endpoint.port());
  }

  std::unique_ptr<Transport> accept(std::string& error) override {
    asio::error_code ec;
    // Each connection gets an io_context of its own: a refused client's transport may be gone
    // while the listener waits for the next.
    auto context = std::make_unique<asio::io_context>();
    asio::ip::tcp::socket socket(*context);
    acceptor_.accept(socket, ec);
    if (ec) {
      error = "accept failed: " + ec.message();
      return nullptr;
    }
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
    return std::make_unique<AsioTransport<asio::ip::tcp::socket>>(std::move(context), std::move(socket));
  }

 private:
  std::unique_ptr<asio::io_context> context_;
  asio::ip::tcp::acceptor acceptor_;
};

}  // namespace

std::unique_ptr<TcpListener> TcpListener::open(const std::string& address, std::string& error) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    error = "--listen takes HOST:PORT, e.g. 127.0.0.1:7777, not '" + address + "'";
    return nullptr;
  }
  std::string host = address.substr(0, colon), port_text = address.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  asio::error_code ec;
  auto ip = asio::ip::make_address(host, ec);
  if (ec || !ip.is_loopback()) {
    error = "--listen binds to loopback only (127.0.0.1 or ::1), not '" + host + "'";
    return nullptr;
  }
  unsigned long port = 0;
  try {
    size_t used = 0;
    port = std::stoul(port_text, &used);
    if (used != port_text.size() || port > 65535) throw std::out_of_range("port");
  } catch (...) {
    error = "--listen port must be 0..65535, not '" + port_text + "'";
    return nullptr;
  }
  auto listener = std::make_unique<AsioTcpListener>();
  if (!listener->listen(ip, static_cast<unsigned short>(port), ec)) {
    error = "cannot listen on " + address + ": " + ec.message();
    return nullptr;
  }
  return listener;
}

}  // namespace shardlens::protocol
