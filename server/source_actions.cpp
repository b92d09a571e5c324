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
  emit::EmitOptions options;
  options.reserved_names = emit::script_names(a.text);
  std::string file = a.model.source.empty() ? "FILE" : a.model.source.substr(a.model.source.find_last_of('/') + 1);
  options.regenerate = "shardlens plan " + file + " --mesh " + mp.mesh.shape_string() +
                       (kind == "source.shardlens.insertAnnotations" ? " --emit tt-xla" : " --emit shard-spec");
  emit::BlockKind block_kind;
  std::string block, anchor;
  if (kind == "source.shardlens.insertAnnotations") {
    block_kind = emit::BlockKind::TtXla;
    options.model_expression = emit::instance_expression(a.model);
    anchor = options.model_expression.empty() ? "" : emit::anchor_of(options.model_expression);
    block = emit::tt_xla_block(a.model, mp, options);
  } else if (kind == "source.shardlens.insertLoadShardSpec") {
    block_kind = emit::BlockKind::ShardSpec;
    block = emit::load_shard_spec_block(a.model, mp, options);
  } else {
    error = "unknown source action '" + kind + "'";
    return std::nullopt;
  }
  emit::InsertionEdit edit = emit::plan_insertion(a.text, block, block_kind, anchor);
  if (!edit.ok) {
    error = edit.error;
    return std::nullopt;
  }
  json text_edit = {{"range", range_json(a, edit.start, edit.end, enc)}, {"newText", edit.text}};
  return json{{"changes", {{uri, json::array({text_edit})}}}};
}

}  // namespace shardlens::server
