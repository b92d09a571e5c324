// `shardlens serve [--stdio] [--listen 127.0.0.1:PORT] [--log-level error|info|debug]`
// Over TCP, a random token printed on stderr must come back in initialize (server/README.md).
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "flags.h"
#include "language_server.h"
#include "protocol/transport.h"

namespace shardlens::cli {
namespace {

// 128 bits from the kernel's random source, in hex.
std::string random_token(std::string& error) {
  unsigned char bytes[16];
  FILE* f = std::fopen("/dev/urandom", "rb");
  bool ok = f && std::fread(bytes, 1, sizeof(bytes), f) == sizeof(bytes);
  if (f) std::fclose(f);
  if (!ok) {
    error = "cannot read /dev/urandom for the connection token";
    return "";
  }
  std::string out;
  static const char* hex = "0123456789abcdef";
  for (unsigned char b : bytes) out += {hex[b >> 4], hex[b & 15]};
  return out;
}

}  // namespace

int run_serve(const std::vector<std::string>& args) {
  static const char* kUsage =
      "usage: shardlens serve [--stdio] [--listen 127.0.0.1:PORT] [--log-level error|info|debug] [--progress-after-ms N]\n"
      "  the language server: LSP over stdio, or over TCP on loopback (the client sends the token it prints)\n";
  server::ServerOptions options;
  std::string listen;
  FlagReader flags("shardlens serve", kUsage, args);
  while (flags.next()) {
    if (flags.is("--stdio")) continue;
    if (flags.is("--listen")) {
      if (auto v = flags.value()) listen = *v;
    } else if (flags.is("--log-level")) {
      if (auto v = flags.choice({"error", "info", "debug"})) options.log_level = *v == "error" ? 0 : *v == "info" ? 1 : 2;
    } else if (flags.is("--progress-after-ms")) {
      // How long an analysis runs before it shows as $/progress (default 300; tests use 0).
      auto v = flags.value();
      if (!v) continue;
      try {
        options.progress_after_ms = std::stoi(*v);
      } catch (...) {
        options.progress_after_ms = -1;
      }
      if (options.progress_after_ms < 0) flags.fail("--progress-after-ms takes a number of milliseconds, not '" + *v + "'");
    } else if (flags.is("--clientProcessId")) {
      flags.value();  // passed by vscode-languageclient; the client's lifetime ends the stream anyway
    } else {
      flags.unknown();
    }
  }
  if (auto code = flags.exit_code()) return *code;
  std::unique_ptr<protocol::Transport> transport;
  std::unique_ptr<protocol::TcpListener> listener;
  if (listen.empty()) {
    transport = protocol::stdio_transport();
  } else {
    std::string error;
    // Any local process can connect to a loopback port: only the one that was told the token
    // (on this process's stderr) gets a session.
    options.token = random_token(error);
    if (options.token.empty()) {
      std::fprintf(stderr, "shardlens serve: %s\n", error.c_str());
      return 2;
    }
    listener = protocol::TcpListener::open(listen, error);
    if (!listener) {
      std::fprintf(stderr, "shardlens serve: %s\n", error.c_str());
      return 2;
    }
    // The token first: a client that has seen the address has seen the token.
    std::fprintf(stderr, "shardlens: token %s\nshardlens: listening on %s\n", options.token.c_str(), listener->address().c_str());
    std::fflush(stderr);
  }
  for (;;) {
    if (listener) {
      std::string error;
      transport = listener->accept(error);
      if (!transport) {
        std::fprintf(stderr, "shardlens serve: %s\n", error.c_str());
        return 2;
      }
    }
    int code = server::run_language_server(*transport, options);
    if (code == server::kSessionRefused) continue;  // wait for the client that has the token
    std::fflush(stderr);
    // The stdin reader thread may still be blocked in read(2); end the process without unwinding it.
    ::_exit(code);
  }
}

}  // namespace shardlens::cli
