#include "emit/tt_xla.h"

#include <algorithm>

#include "emit/mark_loops.h"
#include "emit/python_code.h"

namespace shardlens::emit {

namespace {

// The import names are fixed (SHARDING.md §5); the block's variables must not shadow them.
const std::set<std::string> kBlockNames = {"np", "os", "xm", "xr", "xs", "model", "mesh", "shard_specs"};

std::string unused_name(const std::string& base, const std::set<std::string>& reserved) {
  std::string name = base;
  for (int k = 2; reserved.count(name); ++k) name = base + std::to_string(k);
  return name;
}

std::string header(BlockKind kind, const plan::MeshPlan& plan, const EmitOptions& options,
                   const std::vector<std::string>& unwritable) {
  std::string out = std::string(begin_marker(kind)) + "\n";
  out += "# shardlens plan for mesh " + plan.mesh.shape_string() + " (axes \"batch\", \"model\"): " +
         std::to_string(plan.parameters.sharded_count()) + " of " + std::to_string(plan.parameters.size()) +
         " parameters sharded, " + std::to_string(plan.totals.collectives) + " collectives per forward.\n";
  if (!options.regenerate.empty())
    out += "# Regenerate with `" + options.regenerate + "`: the block between the markers is replaced.\n";
  if (!unwritable.empty()) {
    out += "# Left replicated (no single spec expresses the planned layout):";
    for (size_t i = 0; i < unwritable.size(); ++i) out += (i ? ", " : " ") + unwritable[i];
    out += "\n";
  }
  return out;
}

std::string mesh_expression(const plan::Mesh& mesh) {
  return "xs.Mesh(np.array(range(" + std::to_string(mesh.devices()) + ")), (" + std::to_string(mesh.rows) + ", " +
         std::to_string(mesh.cols) + "), (\"batch\", \"model\"))";
}

const char* kImports =
    "import numpy as np\n"
    "import os\n"
    "import torch_xla.core.xla_model as xm\n"
    "import torch_xla.runtime as xr\n"
    "import torch_xla.distributed.spmd as xs\n";

const char* kToDevice = ".to(xm.xla_device())  # mark_sharding annotates tensors on the XLA device\n";

// The inputs' shardings a plan needs beyond its weights: when the rows hold their own share of the
// batch (data parallel on 'batch', or experts over the rows with the batch split), every batched
// input is marked on dim 0 (SHARDING.md §5: xs.mark_sharding(x, mesh, ("batch", None))). A
// function the caller applies to the inputs it passes to forward(); "" when the plan needs none.
// The sequence split over the rows is a constraint on activations after the model's stem, not on
// its inputs: said in a comment.
std::string input_sharding(const ir::ModelIR& model, const plan::MeshPlan& plan, const std::string& indent) {
  const bool batch_rows = plan.mesh.rows > 1 && (plan.mode.rfind("data parallel on 'batch'", 0) == 0 ||
                                                  (plan.mode.rfind("expert parallel over 'batch' rows", 0) == 0 &&
                                                   std::any_of(plan.notes.begin(), plan.notes.end(), [](const std::string& n) {
                                                     return n.find("each row takes its share of the batch") != std::string::npos;
                                                   })));
  if (plan.mesh.rows > 1 && plan.mode.rfind("sequence parallel over 'batch' rows", 0) == 0)
    return indent + "# The rows split the sequence: constrain the first [batch, sequence, ...] activation after the model's stem to\n" +
           indent + "# (None, \"batch\", ...) with tt_torch.sharding.sharding_constraint_tensor, replicated first, then sharded\n" +
           indent + "# (SHARDING.md §5); shardlens does not write that constraint yet.\n";
  if (!batch_rows) return "";
  const auto& flow = model.dataflow;
  std::vector<std::pair<std::string, size_t>> inputs;  // name, rank
  for (size_t i = 0; i < flow.inputs.size() && i < flow.input_descriptions.size(); ++i) {
    const std::string& d = flow.input_descriptions[i];
    const std::string name = d.substr(0, d.find(':'));
    const auto& t = flow.tensors[static_cast<size_t>(flow.inputs[i])];
    if (!detail::is_dotted_name(name) || name.find('.') != std::string::npos || t.shape.empty() || t.shape[0] % plan.mesh.rows != 0) continue;
    inputs.emplace_back(name, t.shape.size());
  }
  if (inputs.empty()) return "";
  std::string params, marks, names;
  for (auto& [name, rank] : inputs) {
    std::string spec = "(\"batch\"";
    for (size_t d = 1; d < rank; ++d) spec += ", None";
    spec += rank == 1 ? ",)" : ")";
    params += ", " + name;
    names += (names.empty() ? "" : ", ") + name;
    marks += indent + "    xs.mark_sharding(" + name + ", mesh, " + spec + ")\n";
  }
  return "\n" + indent + "def shard_inputs(mesh" + params + "):\n" + indent +
         "    \"\"\"The rows hold their own share of the batch: mark each input (on the XLA device) before forward().\"\"\"\n" + marks +
         indent + "    return " + names + "\n";
}

}  // namespace

std::string_view begin_marker(BlockKind kind) {
  return kind == BlockKind::TtXla ? "# >>> shardlens tt-xla sharding >>>" : "# >>> shardlens load_shard_spec >>>";
}

std::string_view end_marker(BlockKind kind) {
  return kind == BlockKind::TtXla ? "# <<< shardlens tt-xla sharding <<<" : "# <<< shardlens load_shard_spec <<<";
}

std::string instance_expression(const ir::ModelIR& model) {
  return detail::is_dotted_name(model.root_expression) ? model.root_expression : "";
}

std::string tt_xla_block(const ir::ModelIR& model, const plan::MeshPlan& plan, const EmitOptions& options) {
  detail::MarkStyle style;
  bool instance = !options.model_expression.empty();
  std::string mesh = "mesh";
  style.taken = kBlockNames;
  if (instance) {
    style.taken.insert(options.reserved_names.begin(), options.reserved_names.end());
    style.taken.erase("mesh");
    mesh = unused_name("mesh", options.reserved_names);
    style.taken.insert(mesh);
    style.taken.insert(options.model_expression.substr(0, options.model_expression.find('.')));
  }
  style.statement = [&mesh](const std::string& tensor, const std::string& spec) {
    return "xs.mark_sharding(" + tensor + ", " + mesh + ", " + spec + ")";
  };
  std::string root = instance ? options.model_expression : "model";
  auto marks = detail::write_marks(model, plan, root, instance ? 0 : 1, style);

  std::string out = header(BlockKind::TtXla, plan, options, marks.unwritable);
  if (instance) {
    out += kImports;
    out += "\nos.environ[\"CONVERT_SHLO_TO_SHARDY\"] = \"1\"\n";
    out += "xr.use_spmd()\n";
    out += mesh + " = " + mesh_expression(plan.mesh) + "\n";
    out += root + kToDevice;
    out += marks.code;
    out += input_sharding(model, plan, "");
  } else {
    out += "# Use: apply_sharding(model, make_mesh()) once the model is built.\n";
    out += kImports;
    out += "\n\ndef make_mesh():\n";
    out += "    os.environ[\"CONVERT_SHLO_TO_SHARDY\"] = \"1\"\n";
    out += "    xr.use_spmd()\n";
    out += "    return " + mesh_expression(plan.mesh) + "\n";
    out += "\n\ndef apply_sharding(model, mesh):\n";
    out += std::string("    model") + kToDevice;
    out += marks.code;
    out += "    return model\n";
    out += input_sharding(model, plan, "");
  }
  out += std::string(end_marker(BlockKind::TtXla)) + "\n";
  return out;
}

std::string load_shard_spec_block(const ir::ModelIR& model, const plan::MeshPlan& plan, const EmitOptions& options) {
  detail::MarkStyle style;
  style.taken = kBlockNames;
  style.statement = [](const std::string& tensor, const std::string& spec) {
    return "shard_specs[" + tensor + "] = " + spec;
  };
  auto marks = detail::write_marks(model, plan, "model", 1, style);
  const std::string devices = std::to_string(plan.mesh.devices());
  std::string out = header(BlockKind::ShardSpec, plan, options, marks.unwritable);
  out += "def get_mesh_config(num_devices):\n";
  out += "    if num_devices != " + devices + ":\n";
  out += "        raise ValueError(\"shardlens planned this sharding for " + devices + " devices (mesh " +
         plan.mesh.shape_string() + "), not %d\" % num_devices)\n";
  out += "    return (" + std::to_string(plan.mesh.rows) + ", " + std::to_string(plan.mesh.cols) +
         "), (\"batch\", \"model\")\n";
  out += "\n\ndef load_shard_spec(model):\n";
  out += "    shard_specs = {}\n";
  out += marks.code;
  out += "    return shard_specs\n";
  out += std::string(end_marker(BlockKind::ShardSpec)) + "\n";
  return out;
}

}  // namespace shardlens::emit
