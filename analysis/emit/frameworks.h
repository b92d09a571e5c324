// The plan written for other frameworks' tensor parallelism: PyTorch DTensor
// (parallelize_module with ColwiseParallel / RowwiseParallel), a Hugging Face transformers
// base_model_tp_plan dict, and a ColossalAI HybridParallelPlugin configuration. Each is
// self-contained Python for the first mesh of a plan; layouts a framework cannot express are
// listed in a comment and left out.
#pragma once

#include <string>
#include <vector>

#include "ir/model_ir.h"
#include "plan/plan.h"

namespace shardlens::emit {

struct FrameworkOptions {
  std::string regenerate;  // shown in the header when not empty
  std::string dtype = "bf16";  // the workload's dtype (ColossalAI precision)
};

// One module the plan shards as a framework style sees it.
struct ModuleStyle {
  std::string path;        // named_modules() path, "layers.3.attention.wq"
  std::string style;       // "colwise" | "rowwise" | "sequence_parallel"
  bool embedding = false;  // nn.Embedding (rowwise = vocab-parallel: input ids replicated)
  bool gather_output = false;  // the plan all-gathers the output right after (colwise: Replicate() output)
};

struct FrameworkStyles {
  std::vector<ModuleStyle> modules;  // module-tree order
  std::vector<std::string> left_out;  // "h.*.attn.qkv.weight (column_segments)", folded, once each
  int tp_size = 1;                    // devices a sharded parameter is split over
  std::vector<std::string> tp_axes;   // ("model") or ("batch", "model")
};

// Maps the plan's parameter layouts to per-module column / row styles (nn.Linear, nn.Embedding;
// norms on sequence shards when the plan puts them there).
FrameworkStyles framework_styles(const ir::ModelIR& model, const plan::MeshPlan& plan);

// make_tp_mesh() (init_device_mesh) and apply_tensor_parallel(model, tp_mesh): parallelize_module
// on the root and once per repeated block (a loop when every block has the same plan).
std::string dtensor_block(const ir::ModelIR& model, const plan::MeshPlan& plan, const FrameworkOptions& options = {});

// base_model_tp_plan = {"layers.*.self_attn.q_proj": "colwise", ...} relative to the model root.
std::string hf_tp_plan_block(const ir::ModelIR& model, const plan::MeshPlan& plan, const FrameworkOptions& options = {});

// HybridParallelPlugin(tp_size=..., pp_size=1, ...) with the divisibility checks tp_size implies
// (heads, KV heads, hidden, vocab) as asserts when they hold and as comments saying why when not.
std::string colossalai_block(const ir::ModelIR& model, const plan::MeshPlan& plan,
                             const std::vector<plan::Diagnostic>& diagnostics, const FrameworkOptions& options = {});

}  // namespace shardlens::emit
