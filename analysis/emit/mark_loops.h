// One statement per parameter the plan shards, in module-tree order, with runs of structurally
// identical siblings in a ModuleList / Sequential / ModuleDict written once as a loop.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ir/model_ir.h"
#include "plan/plan.h"

namespace shardlens::emit::detail {

struct MarkStyle {
  // The statement that marks `tensor` with `spec` (both Python expressions).
  std::function<std::string(const std::string& tensor, const std::string& spec)> statement;
  std::set<std::string> taken;  // names loop variables must not shadow
};

struct Marks {
  std::string code;       // lines indented by 4 * level spaces
  size_t parameters = 0;  // parameters marked, loops counted per iteration
  std::vector<std::string> unwritable;  // layouts a spec cannot express: "h.*.attn.qkv.weight (column_segments)"
};

Marks write_marks(const ir::ModelIR& model, const plan::MeshPlan& plan, const std::string& root, int level,
                  const MarkStyle& style);

}  // namespace shardlens::emit::detail
