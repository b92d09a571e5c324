// The source actions' edits (session::annotation_block_edit) as LSP WorkspaceEdits.
#include "lsp_features.h"
#include "session/features.h"

namespace shardlens::server {

std::optional<json> source_action_edit(const DocumentAnalysis& a, const std::string& uri, const std::string& kind,
                                       protocol::PositionEncoding enc, std::string& error) {
  emit::BlockKind block_kind;
  if (kind == "source.shardlens.insertAnnotations") block_kind = emit::BlockKind::TtXla;
  else if (kind == "source.shardlens.insertLoadShardSpec") block_kind = emit::BlockKind::ShardSpec;
  else {
    error = "unknown source action '" + kind + "'";
    return std::nullopt;
  }
  auto edit = session::annotation_block_edit(a, block_kind, error);
  if (!edit) return std::nullopt;
  json text_edit = {{"range", range_json(a, edit->start, edit->end, enc)}, {"newText", edit->text}};
  return json{{"changes", {{uri, json::array({text_edit})}}}};
}

}  // namespace shardlens::server
