// The source actions' edits: the tt-xla annotation block and load_shard_spec(), written by the
// emitters and placed by their insertion rule (replacing an earlier block of the same kind).
#include "emit/insertion.h"
#include "emit/tt_xla.h"
#include "lsp_features.h"

namespace shardlens::server {

std::optional<json> source_action_edit(const DocumentAnalysis& a, const std::string& uri, const std::string& kind,
                                       protocol::PositionEncoding enc, std::string& error) {
  if (!a.plan.ok || a.plan.meshes.empty()) {
    error = a.error.empty() ? "there is no plan for this document" : a.error;
    return std::nullopt;
  }
  // The first configured mesh is the one annotations are written for.
  const plan::MeshPlan& mp = a.plan.meshes[0];
  emit::BlockKind block_kind;
  if (kind == "source.shardlens.insertAnnotations") block_kind = emit::BlockKind::TtXla;
  else if (kind == "source.shardlens.insertLoadShardSpec") block_kind = emit::BlockKind::ShardSpec;
  else {
    error = "unknown source action '" + kind + "'";
    return std::nullopt;
  }
  std::string file = a.model().source.empty() ? "FILE" : a.model().source.substr(a.model().source.find_last_of('/') + 1);
  std::string regenerate = "shardlens plan " + file + " --mesh " + mp.mesh.shape_string() +
                           (block_kind == emit::BlockKind::TtXla ? " --emit tt-xla" : " --emit shard-spec");
  emit::InsertionEdit edit = emit::annotation_edit(a.text, a.model(), mp, block_kind, regenerate);
  if (!edit.ok) {
    error = edit.error;
    return std::nullopt;
  }
  json text_edit = {{"range", range_json(a, edit.start, edit.end, enc)}, {"newText", edit.text}};
  return json{{"changes", {{uri, json::array({text_edit})}}}};
}

}  // namespace shardlens::server
