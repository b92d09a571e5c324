// The LSP features over one document's analysis (session/): diagnostics, hover, code lenses, code
// actions as JSON. Byte offsets become LSP positions here, at the protocol boundary.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "protocol/position.h"
#include "session/document_analysis.h"

namespace shardlens::server {

using nlohmann::json;
using session::ByteEdit;
using session::DocumentAnalysis;
using session::DocumentAnalyzer;
using session::export_path_for;
using session::workspace_modules;

json diagnostics_json(const DocumentAnalysis& a, protocol::PositionEncoding enc);
json hover_json(const DocumentAnalysis& a, size_t offset, protocol::PositionEncoding enc);
json code_lenses_json(const DocumentAnalysis& a, const std::string& uri, protocol::PositionEncoding enc);
// Code actions for a range (byte offsets) and the client's `context` (diagnostics, only).
json code_actions_json(const DocumentAnalysis& a, const std::string& uri, size_t start, size_t end, const json& context,
                       protocol::PositionEncoding enc);
// Fills `edit` of a source action returned without one; nullopt when it no longer applies.
std::optional<json> resolve_code_action(const DocumentAnalysis& a, const json& action, protocol::PositionEncoding enc);
// The WorkspaceEdit of a source action kind ("source.shardlens.insertAnnotations", ...).
std::optional<json> source_action_edit(const DocumentAnalysis& a, const std::string& uri, const std::string& kind,
                                       protocol::PositionEncoding enc, std::string& error);

json range_json(const DocumentAnalysis& a, size_t start, size_t end, protocol::PositionEncoding enc);

}  // namespace shardlens::server
