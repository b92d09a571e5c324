// A TorchScript file loaded with LibTorch: the module tree, parameters and buffers exactly as
// PyTorch's named_modules() / named_parameters() / named_buffers() give them, and the metadata
// `shardlens export` stored beside the code. C++17: only LibTorch-facing code includes this.
// Shared by shardlens-graph (the exact graph) and the numeric plan check.
#pragma once

#include <torch/script.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardlens::torchgraph {

struct ModuleEntry {
  std::string name;             // "" for the root, else as named_modules() gives it
  std::string class_name;       // the Python class name ("Linear", "Block")
  std::string qualified_class;  // TorchScript's ("__torch__.torch.nn.modules.linear.Linear")
  bool builtin = false;         // a torch.nn class (its forward is PyTorch's, not the script's)
  torch::jit::Module module;
};

struct TensorEntry {
  std::string name;             // fully qualified
  at::Tensor tensor;
  int module = 0;               // index of the owning module (first owner)
};

struct LoadedModel {
  std::string path;
  torch::jit::Module root;
  nlohmann::json export_info;   // the archive's shardlens.json, or null for a file shardlens did not write
  std::vector<ModuleEntry> modules;       // named_modules() order, shared modules once
  std::vector<TensorEntry> parameters;    // named_parameters() order, tied tensors once
  std::vector<TensorEntry> buffers;       // named_buffers() order
  std::unordered_map<const c10::ivalue::Object*, int> module_index;
  std::unordered_map<const c10::TensorImpl*, int> parameter_index, buffer_index;

  std::string source() const;   // the script the file was exported from ("" when unknown)
  std::string method() const;   // "script" | "trace" | "" (unknown)
};

// Loads on the CPU (meta tensors stay meta). On failure returns nullopt and sets `error`.
std::optional<LoadedModel> load_torchscript(const std::string& path, std::string& error);

// "__torch__.torch.nn.modules.linear.___torch_mangle_3.Linear" -> "Linear".
std::string python_class_name(const std::string& qualified);

std::string dtype_name(c10::ScalarType t);

}  // namespace shardlens::torchgraph
