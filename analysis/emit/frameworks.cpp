#include "emit/frameworks.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "emit/python_code.h"
#include "ir/module_path.h"

namespace shardlens::emit {

namespace {

using ir::split_module_path;

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string join(const std::vector<std::string>& parts, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += (i > from ? "." : "") + parts[i];
  return out;
}

bool is_norm(const std::string& cls) { return cls.find("Norm") != std::string::npos; }

std::string axes_text(const std::vector<std::string>& axes) {
  std::string out;
  for (size_t i = 0; i < axes.size(); ++i) out += (i ? " x " : "") + ("\"" + axes[i] + "\"");
  return out;
}

std::string header(const std::string& what, const plan::MeshPlan& plan, const FrameworkStyles& styles,
                   const FrameworkOptions& options) {
  std::string out = "# >>> shardlens " + what + " >>>\n";
  out += "# shardlens plan for mesh " + plan.mesh.shape_string() + " (axes \"batch\", \"model\"): " +
         std::to_string(plan.parameters.sharded_count()) + " of " + std::to_string(plan.parameters.size()) +
         " parameters sharded, tensor parallelism over " + std::to_string(styles.tp_size) + " devices (" +
         axes_text(styles.tp_axes) + ").\n";
  if (!options.regenerate.empty()) out += "# Regenerate with `" + options.regenerate + "`.\n";
  if (!styles.left_out.empty()) {
    out += "# Left out (no " + what + " style expresses the planned layout; they stay replicated):\n";
    for (auto& l : styles.left_out) out += "#   " + l + "\n";
  }
  return out;
}

std::string footer(const std::string& what) { return "# <<< shardlens " + what + " <<<\n"; }

std::string dtensor_style(const ModuleStyle& m) {
  if (m.style == "sequence_parallel") return "SequenceParallel()";
  if (m.style == "rowwise") return m.embedding ? "RowwiseParallel(input_layouts=Replicate())" : "RowwiseParallel()";
  return m.gather_output ? "ColwiseParallel(output_layouts=Replicate())" : "ColwiseParallel()";
}

std::string hf_style(const ModuleStyle& m) {
  if (m.style == "colwise" && m.gather_output) return "colwise_rep";
  return m.style;
}

// How the snippet reaches a submodule of `root` by its named_modules() path.
std::string submodule(const std::string& root, const std::string& path) {
  if (path.empty()) return root;
  auto parts = split_module_path(path);
  if (std::all_of(parts.begin(), parts.end(), [](auto& p) { return detail::is_identifier(p); })) return root + "." + path;
  return root + ".get_submodule(" + detail::string_literal(path) + ")";
}

std::string plan_dict(const std::vector<std::pair<std::string, std::string>>& entries, int level) {
  std::string pad(static_cast<size_t>(level) * 4, ' ');
  std::string out = "{\n";
  for (auto& [name, style] : entries) out += pad + "    " + detail::string_literal(name) + ": " + style + ",\n";
  return out + pad + "}";
}

}  // namespace

FrameworkStyles framework_styles(const ir::ModelIR& model, const plan::MeshPlan& plan) {
  FrameworkStyles out;
  std::unordered_map<std::string, int> module_index;
  for (size_t i = 0; i < model.modules.size(); ++i) module_index.emplace(model.modules[i].name, static_cast<int>(i));

  for (const plan::ParameterLayout p : plan.parameters) {
    auto spec = p.spec();
    if (spec && std::any_of(spec->begin(), spec->end(), [](auto& a) { return !a.empty(); }) && p.axes) {
      out.tp_axes = *p.axes;
      break;
    }
  }
  if (out.tp_axes.empty()) out.tp_axes = {"model"};
  out.tp_size = 1;
  for (auto& a : out.tp_axes) out.tp_size *= a == "batch" ? plan.mesh.rows : plan.mesh.cols;

  std::set<std::string> said;
  auto leave_out = [&](const std::string& name, const std::string& why) {
    std::string entry = ir::module_pattern(name) + " (" + why + ")";
    if (said.insert(entry).second) out.left_out.push_back(entry);
  };
  std::unordered_map<std::string, size_t> styled;  // module path -> index in out.modules

  for (const plan::ParameterLayout p : plan.parameters) {
    const std::string name(p.name);
    size_t dot = name.rfind('.');
    std::string owner = dot == std::string::npos ? "" : name.substr(0, dot);
    std::string key = dot == std::string::npos ? name : name.substr(dot + 1);
    auto mit = module_index.find(owner);
    std::string cls = mit == module_index.end() ? "" : model.modules[mit->second].class_name;
    auto spec = p.spec();

    if (p.layout == "sequence" && is_norm(cls)) {
      if (!styled.count(owner)) {
        styled.emplace(owner, out.modules.size());
        out.modules.push_back({owner, "sequence_parallel", false, false});
      }
      continue;
    }
    if (!spec) {
      if (p.layout != "replicated") leave_out(name, std::string(p.layout));
      continue;
    }
    bool sharded = std::any_of(spec->begin(), spec->end(), [](auto& a) { return !a.empty(); });
    if (!sharded) continue;
    if (!p.axes || *p.axes != out.tp_axes) {
      leave_out(name, std::string(p.layout) + " over other mesh axes");
      continue;
    }
    auto sit = styled.find(owner);
    if (key == "bias" && sit != styled.end()) {
      // ColwiseParallel shards the bias with the output features; RowwiseParallel keeps it whole.
      const ModuleStyle& m = out.modules[sit->second];
      if (!(m.style == "colwise" && !m.embedding && p.sharded_dim == 0)) leave_out(name, std::string(p.layout) + " bias");
      continue;
    }
    bool linear = cls == "Linear" && key == "weight" && p.rank == 2;
    bool embedding = cls == "Embedding" && key == "weight" && p.rank == 2;
    if ((linear || embedding) && sit == styled.end()) {
      // nn.Linear weight [out, in]: out split = colwise; nn.Embedding [vocab, dim]: vocab split = rowwise.
      bool column = linear ? p.sharded_dim == 0 : p.sharded_dim == 1;
      ModuleStyle m{owner, column ? "colwise" : "rowwise", embedding, false};
      styled.emplace(owner, out.modules.size());
      out.modules.push_back(std::move(m));
      continue;
    }
    leave_out(name, std::string(p.layout) + (cls.empty() ? "" : " on " + cls));
  }

  // A column-parallel output may stay sharded only when every path from it reaches a row-parallel
  // layer through shard-preserving ops (the Megatron pair); anything else (a norm, a layer that is
  // not row-parallel, the model's output) needs the whole tensor: Replicate() output.
  const auto& flow = model.dataflow;
  std::unordered_map<int, std::vector<size_t>> consumers;
  for (size_t i = 0; i < flow.ops.size(); ++i)
    if (flow.ops[i].kind != ir::OpKind::Call)
      for (int t : flow.ops[i].inputs) consumers[t].push_back(i);
  std::set<int> rowwise_modules;
  for (auto& m : out.modules)
    if (m.style == "rowwise" && !m.embedding) rowwise_modules.insert(module_index[m.path]);
  std::set<int> outputs(flow.outputs.begin(), flow.outputs.end());
  auto stays_sharded = [&](int tensor) {
    std::vector<int> work{tensor};
    std::set<int> seen{tensor};
    while (!work.empty()) {
      int t = work.back();
      work.pop_back();
      if (outputs.count(t)) return false;
      for (size_t i : consumers[t]) {
        const auto& op = flow.ops[i];
        switch (op.kind) {
          case ir::OpKind::Contract:
            if (!rowwise_modules.count(op.module) || op.inputs.empty() || op.inputs[0] != t) return false;
            continue;  // reached a row-parallel layer
          case ir::OpKind::Reshape: case ir::OpKind::Permute: case ir::OpKind::Split: case ir::OpKind::Concat:
          case ir::OpKind::Unary: case ir::OpKind::Scale: case ir::OpKind::Add: case ir::OpKind::Mul:
          case ir::OpKind::Softmax: case ir::OpKind::Attention: case ir::OpKind::Repeat:
            for (int o : op.outputs)
              if (seen.insert(o).second) work.push_back(o);
            continue;
          default:
            return false;
        }
      }
    }
    return true;
  };
  for (auto& m : out.modules) {
    if (m.style != "colwise") continue;
    int mi = module_index.count(m.path) ? module_index[m.path] : -1;
    bool found = false;
    for (auto& op : flow.ops)
      if (op.module == mi && (op.kind == ir::OpKind::Contract || op.kind == ir::OpKind::Embedding) && !op.outputs.empty()) {
        found = true;
        if (!stays_sharded(op.outputs[0])) m.gather_output = true;
      }
    if (!found) m.gather_output = false;
  }
  return out;
}

std::string dtensor_block(const ir::ModelIR& model, const plan::MeshPlan& plan, const FrameworkOptions& options) {
  const std::string what = "dtensor tensor parallel";
  auto styles = framework_styles(model, plan);
  std::unordered_map<std::string, int> module_index;
  for (size_t i = 0; i < model.modules.size(); ++i) module_index.emplace(model.modules[i].name, static_cast<int>(i));

  // Root entries, and per repeated block (the first index segment of the path) its relative plan.
  std::vector<std::pair<std::string, std::string>> root_entries;
  std::vector<std::string> containers;  // in order of first appearance
  std::map<std::string, std::vector<std::string>> indices;  // container -> child keys in order
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> block_entries;  // "container\nkey" -> entries
  for (auto& m : styles.modules) {
    auto parts = split_module_path(m.path);
    size_t k = 0;
    while (k < parts.size() && !all_digits(parts[k])) ++k;
    if (k == 0 || k + 1 >= parts.size()) {
      root_entries.emplace_back(m.path, dtensor_style(m));
      continue;
    }
    std::string container = join(parts, 0, k);
    if (!indices.count(container)) containers.push_back(container);
    auto& keys = indices[container];
    if (std::find(keys.begin(), keys.end(), parts[k]) == keys.end()) keys.push_back(parts[k]);
    block_entries[container + "\n" + parts[k]].emplace_back(join(parts, k + 1, parts.size()), dtensor_style(m));
  }

  std::string out = header(what, plan, styles, options);
  out += "# Use: apply_tensor_parallel(model, make_tp_mesh()) once the model is built, in every rank of a\n";
  out += "# torch.distributed job of " + std::to_string(plan.mesh.devices()) + " processes. Attention modules that size their\n";
  out += "# views from the full head count must use the local count (heads // " + std::to_string(styles.tp_size) +
         ") afterwards.\n";
  out += "from torch.distributed.tensor.parallel import (\n";
  out += "    ColwiseParallel,\n    PrepareModuleInput,\n    RowwiseParallel,\n    SequenceParallel,\n    parallelize_module,\n)\n";
  out += "try:\n    from torch.distributed.tensor import Replicate  # torch >= 2.4\n";
  out += "except ImportError:\n    from torch.distributed._tensor import Replicate\n";
  out += "\n\ndef make_tp_mesh(device_type=\"cuda\"):\n";
  out += "    # torch >= 2.2. On torch 2.0 / 2.1 build torch.distributed._tensor.DeviceMesh(device_type,\n";
  if (styles.tp_axes.size() > 1)
    out += "    # torch.arange(" + std::to_string(plan.mesh.devices()) + ")) instead.\n";
  else
    out += "    # torch.arange(" + std::to_string(plan.mesh.devices()) + ").reshape(" + std::to_string(plan.mesh.rows) + ", " +
           std::to_string(plan.mesh.cols) + ")) and pass tp_mesh_dim=1 to parallelize_module instead.\n";
  out += "    from torch.distributed.device_mesh import init_device_mesh\n";
  if (styles.tp_axes.size() > 1) {
    out += "    # The plan splits each sharded parameter over the \"batch\" and \"model\" axes together: one\n";
    out += "    # " + std::to_string(styles.tp_size) + "-way tensor-parallel group over all devices.\n";
    out += "    return init_device_mesh(device_type, (" + std::to_string(styles.tp_size) + ",), mesh_dim_names=(\"tp\",))\n";
  } else {
    if (plan.mesh.rows > 1)
      out += "    # The plan keeps the model whole along the \"batch\" axis (" + std::to_string(plan.mesh.rows) + ", " + plan.mode +
             "):\n    # use it for data parallelism (FSDP / DDP over mesh[\"batch\"]).\n";
    out += "    mesh = init_device_mesh(device_type, (" + std::to_string(plan.mesh.rows) + ", " +
           std::to_string(plan.mesh.cols) + "), mesh_dim_names=(\"batch\", \"model\"))\n";
    out += "    return mesh[\"model\"]\n";
  }
  out += "\n\ndef apply_tensor_parallel(model, tp_mesh):\n";
  for (auto it = root_entries.begin(); it != root_entries.end();)
    if (it->first.empty()) {  // the root itself is the layer: its style, not a plan dict
      out += "    parallelize_module(model, tp_mesh, " + it->second + ")\n";
      it = root_entries.erase(it);
    } else {
      ++it;
    }
  if (!root_entries.empty())
    out += "    parallelize_module(model, tp_mesh, " + plan_dict(root_entries, 1) + ")\n";
  for (auto& container : containers) {
    auto& keys = indices[container];
    auto mit = module_index.find(container);
    const ir::Module* cm = mit == module_index.end() ? nullptr : &model.modules[mit->second];
    auto& first = block_entries[container + "\n" + keys.front()];
    bool same = cm && keys.size() == cm->children.size() && detail::iterable_container(cm->class_name);
    for (auto& key : keys) same = same && block_entries[container + "\n" + key] == first;
    // Every child must be registered at this path (not a module shared from elsewhere).
    if (same)
      for (size_t c = 0; c < cm->children.size(); ++c)
        same = same && model.modules[cm->children[c]].name == container + "." + cm->child_keys[c];
    if (same) {
      std::string range = submodule("model", container);
      if (detail::container_of(cm->class_name) == detail::Container::Dict) range += ".values()";
      out += "    for block in " + range + ":  # " + std::to_string(keys.size()) + " identical blocks\n";
      out += "        parallelize_module(block, tp_mesh, " + plan_dict(first, 2) + ")\n";
      continue;
    }
    // Runs of consecutive list children with the same plan: a loop over a slice.
    bool list = cm && detail::iterable_container(cm->class_name) &&
                detail::container_of(cm->class_name) == detail::Container::List;
    size_t i = 0;
    while (i < keys.size()) {
      auto& entries = block_entries[container + "\n" + keys[i]];
      size_t j = i + 1;
      auto position = [&](size_t at) { return keys[at] == std::to_string(std::stoll(keys[at])) ? std::stoll(keys[at]) : -1; };
      while (list && j < keys.size() && block_entries[container + "\n" + keys[j]] == entries &&
             position(j) == position(j - 1) + 1 && position(j) >= 0)
        ++j;
      bool registered = list;
      for (size_t c = i; registered && c < j; ++c) {
        auto at = static_cast<size_t>(position(c));
        registered = at < cm->children.size() && cm->child_keys[at] == keys[c] &&
                     model.modules[cm->children[at]].name == container + "." + keys[c];
      }
      if (j - i >= 2 && registered) {
        int64_t a = position(i), b = position(j - 1) + 1;
        std::string slice = (a ? std::to_string(a) : "") + ":" +
                            (static_cast<size_t>(b) < cm->children.size() ? std::to_string(b) : "");
        out += "    for block in " + submodule("model", container) + "[" + slice + "]:  # " + std::to_string(j - i) +
               " identical blocks\n";
        out += "        parallelize_module(block, tp_mesh, " + plan_dict(entries, 2) + ")\n";
      } else {
        for (size_t c = i; c < j; ++c)
          out += "    parallelize_module(" + submodule("model", container + "." + keys[c]) + ", tp_mesh, " +
                 plan_dict(block_entries[container + "\n" + keys[c]], 1) + ")\n";
      }
      i = j;
    }
  }
  out += "    return model\n";
  out += footer(what);
  return out;
}

std::string hf_tp_plan_block(const ir::ModelIR& model, const plan::MeshPlan& plan, const FrameworkOptions& options) {
  const std::string what = "hf-tp-plan";
  auto styles = framework_styles(model, plan);
  std::map<std::string, size_t> instances;  // folded module path -> modules of the model with it
  for (auto& m : model.modules) ++instances[ir::module_pattern(m.name)];
  // A pattern stands for its modules when every one of them has the same style.
  std::map<std::string, std::vector<const ModuleStyle*>> by_pattern;
  std::vector<std::string> order;
  for (auto& m : styles.modules) {
    std::string pat = ir::module_pattern(m.path);
    if (!by_pattern.count(pat)) order.push_back(pat);
    by_pattern[pat].push_back(&m);
  }
  // transformers looks a module up by its name with every layer index replaced by "*", so a
  // pattern must hold for all its instances; one that differs between layers is left out.
  std::vector<std::pair<std::string, std::string>> entries;
  std::unordered_map<std::string, int> module_index;
  for (size_t i = 0; i < model.modules.size(); ++i) module_index.emplace(model.modules[i].name, static_cast<int>(i));
  for (auto& pat : order) {
    auto& ms = by_pattern[pat];
    if (pat.empty()) {  // the root itself: a plan names submodules only
      styles.left_out.push_back("weight (" + hf_style(*ms.front()) + " on the root module: a plan names submodules)");
      continue;
    }
    bool uniform = ms.size() == instances[pat] &&
                   std::all_of(ms.begin(), ms.end(), [&](auto* m) { return hf_style(*m) == hf_style(*ms.front()); });
    if (uniform) {
      entries.emplace_back(pat, detail::string_literal(hf_style(*ms.front())));
      continue;
    }
    std::string why = hf_style(*ms.front()) + " in " + std::to_string(ms.size()) + " of " + std::to_string(instances[pat]) +
                      " instances; a transformers plan names every layer alike";
    auto it = module_index.find(ms.front()->path);
    if (it == module_index.end()) continue;
    for (int pi : model.modules[it->second].parameters) {
      const std::string& pname = model.parameters[pi].name;
      if (pname.rfind(ms.front()->path + ".", 0) == 0)
        styles.left_out.push_back(pat + pname.substr(ms.front()->path.size()) + " (" + why + ")");
    }
  }
  std::string out = header(what, plan, styles, options);
  out += "# transformers tensor-parallel plan (PreTrainedModel.base_model_tp_plan, used by\n";
  out += "# from_pretrained(..., tp_plan=\"auto\") with tp_size " + std::to_string(styles.tp_size) +
         "). Names are relative to the model root\n";
  out += "# (" + (model.model.empty() ? std::string("the root") : model.model) +
         "), \"*\" for a layer index; move entries under a base model's prefix into its own plan.\n";
  bool embedding = std::any_of(styles.modules.begin(), styles.modules.end(), [](auto& m) { return m.embedding && m.style == "rowwise"; });
  if (embedding) out += "# \"rowwise\" on an nn.Embedding splits the vocabulary (ids replicated, output all-reduced).\n";
  out += "base_model_tp_plan = " + plan_dict(entries, 0) + "\n";
  out += footer(what);
  return out;
}

std::string colossalai_block(const ir::ModelIR& model, const plan::MeshPlan& plan,
                             const std::vector<plan::Diagnostic>& diagnostics, const FrameworkOptions& options) {
  const std::string what = "colossalai";
  auto styles = framework_styles(model, plan);
  const int tp = styles.tp_size;

  // Model sizes from the IR: heads from the attention ops, hidden and vocab from the embedding
  // (else the most common Linear input width).
  int64_t heads = 0, kv_heads = 0, hidden = 0, vocab = 0;
  const auto& flow = model.dataflow;
  for (auto& op : flow.ops) {
    if (op.kind != ir::OpKind::Attention || op.inputs.size() < 2) continue;
    auto& q = flow.tensors[op.inputs[0]];
    if (!q.shape_known || q.shape.size() < 3) continue;
    size_t hd = q.shape.size() - 3;
    heads = q.shape[hd];
    kv_heads = heads;
    for (auto& pr : flow.ops)  // K produced by a repeat over the heads: the KV heads are before it
      if (pr.kind == ir::OpKind::Repeat && !pr.outputs.empty() && pr.outputs[0] == op.inputs[1] && !pr.inputs.empty()) {
        auto& k = flow.tensors[pr.inputs[0]];
        size_t d = pr.dims.empty() ? hd : static_cast<size_t>(pr.dims[0]);
        if (d < k.shape.size()) kv_heads = k.shape[d];
      }
    break;
  }
  std::unordered_map<std::string, int> module_index;
  for (size_t i = 0; i < model.modules.size(); ++i) module_index.emplace(model.modules[i].name, static_cast<int>(i));
  std::map<int64_t, int> widths;
  for (auto& p : model.parameters) {
    size_t dot = p.name.rfind('.');
    auto it = module_index.find(dot == std::string::npos ? "" : p.name.substr(0, dot));
    if (it == module_index.end() || p.shape.size() != 2 || !p.shape_known) continue;
    const std::string& cls = model.modules[it->second].class_name;
    if (cls == "Embedding" && p.shape[0] > vocab) {
      vocab = p.shape[0];
      hidden = p.shape[1];
    }
    if (cls == "Linear") ++widths[p.shape[1]];
  }
  if (!hidden && !widths.empty())
    hidden = std::max_element(widths.begin(), widths.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;

  auto diagnostic = [&](const std::string& code) -> std::string {
    for (auto& d : diagnostics)
      if (d.code == code && (d.mesh.empty() || d.mesh == plan.mesh.shape_string())) return d.message;
    return "";
  };

  std::string out = header(what, plan, styles, options);
  bool sequence = std::any_of(plan.collectives.begin(), plan.collectives.end(),
                              [](auto& c) { return c.kind == plan::Ccl::ReduceScatter; });
  std::string precision = options.dtype == "fp32" ? "fp32" : "bf16";
  out += "# ColossalAI hybrid parallelism with shardlens' tensor-parallel degree; data parallelism takes\n";
  out += "# the remaining ranks (world_size / (tp_size * pp_size)).\n";
  out += "from colossalai.booster import Booster\n";
  out += "from colossalai.booster.plugin import HybridParallelPlugin\n\n";
  out += "TP_SIZE = " + std::to_string(tp) + "  # devices each sharded parameter is split over on mesh " +
         plan.mesh.shape_string() + "\n";
  out += "# Model sizes (shardlens IR):";
  bool any = false;
  auto size = [&](const char* label, int64_t v) {
    if (!v) return;
    out += std::string(any ? "," : "") + " " + label + " " + std::to_string(v);
    any = true;
  };
  size("heads", heads);
  size("kv_heads", kv_heads != heads ? kv_heads : 0);
  size("hidden", hidden);
  size("vocab", vocab);
  out += any ? "\n" : " none found\n";
  auto check = [&](const std::string& label, int64_t value, const std::string& code, const std::string& why) {
    if (!value) return;
    std::string expr = std::to_string(value) + " % TP_SIZE == 0";
    if (value % tp == 0) {
      out += "assert " + expr + ", " + detail::string_literal(label + " " + std::to_string(value) + " must divide by tp_size: " + why) + "\n";
    } else {
      std::string d = diagnostic(code);
      out += "# NOT satisfied: " + label + " " + std::to_string(value) + " % " + std::to_string(tp) + " != 0 (" + why + ")";
      out += d.empty() ? "\n" : ".\n#   shardlens: " + d + "\n";
    }
  };
  check("heads", heads, "divisibility-heads", "ColossalAI splits attention by heads");
  if (kv_heads != heads)
    check("kv_heads", kv_heads, "divisibility-kv-heads", "ColossalAI requires kv_heads % tp_size == 0");
  check("hidden", hidden, "divisibility-features", "column / row splits of the hidden width");
  if (vocab && vocab % tp != 0)
    out += "# vocab " + std::to_string(vocab) + " % " + std::to_string(tp) +
           " != 0: ColossalAI pads the vocabulary (make_vocab_size_divisible_by) before splitting it\n";
  else
    check("vocab", vocab, "divisibility-vocab", "vocab-parallel embedding and LM head");
  // Pipeline parallelism as the plan costed it: chosen when the mesh's mode is a pipeline, else
  // written as the rejected alternative it was, with its figures, so that switching is one edit.
  const plan::Alternative* pipeline = nullptr;
  for (auto& a : plan.alternatives)
    if (a.stages > 0 && a.feasible) pipeline = &a;
  const bool pipelined = plan.mode.find("pipeline") != std::string::npos && plan.pipeline.stages > 0;
  const plan::Alternative* stages = pipelined ? &plan.pipeline : pipeline;
  if (stages) {
    std::string layers;
    for (size_t i = 0; i < stages->blocks_per_stage.size(); ++i) layers += (i ? ", " : "") + std::to_string(stages->blocks_per_stage[i]);
    char bubble[32];
    std::snprintf(bubble, sizeof bubble, "%.0f%%", 100 * stages->bubble_fraction);
    out += "\n# Pipeline parallelism" + std::string(pipelined ? " (chosen)" : " (costed, not chosen: " + stages->why_rejected + ")") + ":\n";
    out += "# " + std::to_string(stages->stages) + " stages, " + std::to_string(stages->microbatches) + " microbatches, bubble " + bubble +
           " of the step; stages:\n";
    for (size_t i = 0; i < stages->stage_spans.size(); ++i) out += "#   stage " + std::to_string(i) + ": " + stages->stage_spans[i] + "\n";
    out += "PP_SIZE = " + std::to_string(stages->stages) + "\nNUM_MICROBATCHES = " + std::to_string(stages->microbatches) +
           "\nLAYERS_PER_STAGE = [" + layers + "]  # the model's repeated blocks per stage\n";
  }
  out += "\nplugin = HybridParallelPlugin(\n";
  out += "    tp_size=TP_SIZE,\n";
  if (pipelined) out += "    pp_size=PP_SIZE,\n    num_microbatches=NUM_MICROBATCHES,\n    layers_per_stage=LAYERS_PER_STAGE,\n";
  else out += std::string("    pp_size=1,") + (stages ? "  # PP_SIZE, num_microbatches=NUM_MICROBATCHES, layers_per_stage=LAYERS_PER_STAGE to pipeline\n" : "\n");
  if (sequence) {
    out += "    enable_sequence_parallelism=True,  # the plan reduce-scatters activations onto sequence shards\n";
    out += "    sequence_parallelism_mode=\"split_gather\",\n";
  } else {
    out += "    sp_size=1,\n";
  }
  out += "    zero_stage=0,\n";
  out += "    precision=" + detail::string_literal(precision) + ",\n";
  out += ")\nbooster = Booster(plugin=plugin)\n";
  out += "# model, optimizer, *_ = booster.boost(model, optimizer)\n";
  out += footer(what);
  return out;
}

}  // namespace shardlens::emit
