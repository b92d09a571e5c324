// Runs the Python export helper (analysis/torch/export_helper.py) with the user's interpreter:
// the script is imported (not run as __main__), its root module built on the meta device and saved
// as TorchScript. Used by `shardlens export` (and by the server when the user asks for an export).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardlens::torchgraph {

struct ExportRequest {
  std::string script;
  std::string output;                    // the .pt file to write
  std::string model_expression;          // --model EXPR
  std::vector<std::string> root_hints;   // the static front end's root (tried after module-level instances)
  std::string python;                    // "" -> first python3 on PATH that can import torch, else /usr/bin/python3
  std::string weights = "meta";          // meta | random
  std::string method = "auto";           // auto | script | trace
  int64_t batch = 1, seq = 8;            // the trace's example input
  int timeout_s = 900;
};

// Exit codes of the helper, and of `shardlens export` (README).
enum class ExportFailure {
  None = 0,
  Usage = 2,
  NoTorch = 3,
  ScriptRaised = 4,
  NoModule = 5,
  ExportFailed = 6,
  WriteFailed = 7,
  HelperMissing = 8,
};

struct ExportResult {
  bool ok = false;
  ExportFailure failure = ExportFailure::None;
  std::string kind;       // the helper's failure kind: no-torch, script-raised, no-module, export-failed, ...
  std::string message;    // for the user
  nlohmann::json result;  // the helper's JSON answer on success (method, model, root, notes, ...)
  std::string python;     // the interpreter that ran it
  std::string helper;     // the helper's path
  double ms = 0;
};

ExportResult run_export(const ExportRequest& request);

// The helper's path: $SHARDLENS_EXPORT_HELPER, next to this program (installed or in the build
// tree), then the source tree. "" with `error` when none exists.
std::string find_export_helper(std::string& error);

// Interpreters to try, in order: `configured` alone when given; else every python3 on PATH
// (distinct files), then /usr/bin/python3.
std::vector<std::string> python_candidates(const std::string& configured);

}  // namespace shardlens::torchgraph
