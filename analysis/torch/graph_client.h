// The exact graph without LibTorch in this process: runs `shardlens-graph` as a child process,
// caches its JSON by the TorchScript file's content (plus the workload and the tool's build), and
// hands back the JSON. `shardlens graph`, `shardlens plan --graph` and the language server share it;
// exact_ir.h turns the JSON into the model IR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardlens::torchgraph {

struct GraphRequest {
  std::string file;                 // the TorchScript file (.pt)
  int64_t batch = 1;
  int64_t tokens = 1;               // tokens per sequence in this forward (decode: 1; prefill: seq)
  int64_t spatial[2] = {64, 64};
  std::vector<std::string> inputs;  // "NAME=D0,D1,...[:DTYPE]" overrides
  bool graph = true;                // false: modules and parameters only
};

struct GraphClientOptions {
  std::string executable;           // "" -> $SHARDLENS_GRAPH, next to this program, then PATH
  std::string cache_dir;            // "" -> $SHARDLENS_CACHE_DIR, $XDG_CACHE_HOME/shardlens, ~/.cache/shardlens
  bool use_cache = true;
  int timeout_s = 600;
};

struct GraphResponse {
  bool ok = false;
  std::string error;                // a message for the user (the tool's own stderr when it failed)
  int exit_code = 0;                // shardlens-graph's exit status (0 when cached)
  nlohmann::json json;              // the graph (graph_json.h schema)
  bool from_cache = false;
  std::string cache_file;           // where the answer is (or would be) cached
  double ms = 0;                    // wall time of this call
};

GraphResponse fetch_graph(const GraphRequest& request, const GraphClientOptions& options = {});

// Where shardlens-graph is; "" with `error` set when it cannot be found.
std::string find_graph_executable(const std::string& configured, std::string& error);
std::string default_cache_dir();

// 64-bit FNV-1a of a file's bytes; false when unreadable.
bool hash_file(const std::string& path, uint64_t& hash, std::string& error);
std::string hex64(uint64_t v);

}  // namespace shardlens::torchgraph
