// The server's `shardlens.checkIr` command: the compiler's IR in a folder against the document's
// plan, its mismatches as diagnostics at the script's lines.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace shardlens::server {

struct IrCheckAnswer {
  bool ok = false;
  std::string error;
  nlohmann::json report;       // `check-ir --format json`
  nlohmann::json diagnostics;  // LSP Diagnostic objects (whole lines, so no position encoding is involved)
};

// `plan` is the document's plan JSON; `folder` holds the exported .mlir files (or is one file).
IrCheckAnswer check_ir_folder(const nlohmann::json& plan, const std::string& folder, const std::string& mesh);

}  // namespace shardlens::server
