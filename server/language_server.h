// The language server: lifecycle, document store, scheduling of analysis on a worker thread,
// debounced diagnostics, cancellation, settings, and dispatch to the feature handlers.
#pragma once

#include <memory>
#include <string>

#include "protocol/transport.h"

namespace shardlens::server {

struct ServerOptions {
  int log_level = 0;  // -1 silent, 0 errors, 1 info, 2 debug (stderr)
  // Wait for the transport's end of stream before returning (tests, fuzzing). Off for stdio,
  // whose reader may stay blocked after `exit` and is left to the process's end.
  bool join_reader = false;
  int progress_after_ms = 300;  // analyses longer than this show as $/progress (tests set 0)
  // Non-empty (TCP): `initialize` must carry it as initializationOptions.token (or
  // .shardlens.token); a client that does not is answered with an error and hung up on.
  std::string token;
};

// What run_language_server returns for a session refused for lack of the token (the transport is
// closed; the caller may wait for another client).
constexpr int kSessionRefused = -1;

// Runs a whole session over `transport`; returns the process exit code (0 after shutdown+exit), or
// kSessionRefused.
int run_language_server(protocol::Transport& transport, const ServerOptions& options);

}  // namespace shardlens::server
