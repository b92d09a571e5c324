// Annotation code from a plan: the tt-xla block (torch_xla SPMD marks that tt-xla lowers to
// Shardy) and the tt-forge-models load_shard_spec() convention. Each block is self-contained and
// delimited by marker comments so that inserting it again replaces it (see insertion.h).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "ir/model_ir.h"
#include "plan/plan.h"

namespace shardlens::emit {

enum class BlockKind : uint8_t { TtXla, ShardSpec };

// "# >>> shardlens tt-xla sharding >>>" / "# <<< shardlens tt-xla sharding <<<", and the
// load_shard_spec pair.
std::string_view begin_marker(BlockKind kind);
std::string_view end_marker(BlockKind kind);

struct EmitOptions {
  // tt-xla instance form: the expression naming the built model where the block goes ("model",
  // "pipe.unet"), usually instance_expression(model). Empty: the function form, which defines
  // make_mesh() and apply_sharding(model, mesh). load_shard_spec blocks are always functions.
  std::string model_expression;
  // Names the script uses at module level (script_names() in insertion.h): the instance form's
  // own variables (mesh, loop variables) avoid them so the script's globals are not clobbered.
  std::set<std::string> reserved_names;
  // Shown in the header so a reader knows how to regenerate the block; empty: not shown.
  std::string regenerate;
};
using TtXlaOptions = EmitOptions;

// The root expression when it names an instance the script binds ("model", "pipe.unet"); empty
// when the root is a constructor call the front end chose (then only the function form applies).
std::string instance_expression(const ir::ModelIR& model);

// Imports, CONVERT_SHLO_TO_SHARDY=1, xr.use_spmd(), the ("batch", "model") Mesh of plan.mesh, the
// model moved to the XLA device, and one xs.mark_sharding per parameter the plan shards (repeated
// blocks as loops). Replicated parameters get no call (unmarked = replicated); layouts no spec can
// express are listed in a comment.
std::string tt_xla_block(const ir::ModelIR& model, const plan::MeshPlan& plan, const EmitOptions& options);

// get_mesh_config(num_devices) -> ((rows, cols), ("batch", "model")) for the planned device count,
// and load_shard_spec(model) -> {parameter tensor: spec}.
std::string load_shard_spec_block(const ir::ModelIR& model, const plan::MeshPlan& plan, const EmitOptions& options = {});

}  // namespace shardlens::emit
