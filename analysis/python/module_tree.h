// Walks an nn.Module instance the way PyTorch's named_modules / named_parameters /
// named_buffers do: depth-first in registration order, each module and tensor once, under the
// first name that reaches it.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "python/values.h"

namespace shardlens::python {

struct NamedModule {
  std::string name;
  InstanceObj* module;
  InstanceObj* parent;  // null for the root
  std::string key;      // the key under which the parent registered it
};

struct NamedTensor {
  std::string name;
  std::shared_ptr<TensorObj> tensor;
  InstanceObj* owner;
  bool persistent = true;
};

// `path` is the module's name; it is extended for the children and restored (one string for the
// whole walk rather than one per level). `positions` gets each module's place in `out`.
inline void walk_modules(InstanceObj* m, std::string& path, InstanceObj* parent, const std::string& key,
                         std::unordered_map<const InstanceObj*, int>& positions, std::vector<NamedModule>& out) {
  if (!m || !positions.emplace(m, static_cast<int>(out.size())).second) return;
  out.push_back({path, m, parent, key});
  if (!m->module) return;
  const size_t length = path.size();
  for (auto& [k, child] : m->module->modules) {
    if (!child) continue;
    if (length) path += '.';
    path += k;
    walk_modules(child.get(), path, m, k, positions, out);
    path.resize(length);
  }
}

inline std::vector<NamedModule> named_modules(InstanceObj& root, std::unordered_map<const InstanceObj*, int>& positions) {
  std::vector<NamedModule> out;
  std::string path;
  walk_modules(&root, path, nullptr, "", positions, out);
  return out;
}
inline std::vector<NamedModule> named_modules(InstanceObj& root) {
  std::unordered_map<const InstanceObj*, int> positions;
  return named_modules(root, positions);
}

// Visits the parameters (or buffers) of `modules` in named_parameters() order, each tensor once:
// visit(module, key, tensor, persistent). `positions` gets each visited tensor's place in that order.
template <typename Visit>
void for_each_tensor(const std::vector<NamedModule>& modules, bool buffers, std::unordered_map<const TensorObj*, int>& positions,
                     Visit&& visit) {
  for (auto& nm : modules) {
    if (!nm.module->module) continue;
    auto& md = *nm.module->module;
    auto& list = buffers ? md.buffers : md.parameters;
    for (size_t i = 0; i < list.size(); ++i) {
      auto& [k, t] = list[i];
      if (!t || !positions.emplace(t.get(), static_cast<int>(positions.size())).second) continue;
      visit(nm, k, t, buffers && i < md.buffer_persistent.size() ? static_cast<bool>(md.buffer_persistent[i]) : true);
    }
  }
}
template <typename Visit>
void for_each_tensor(const std::vector<NamedModule>& modules, bool buffers, Visit&& visit) {
  std::unordered_map<const TensorObj*, int> positions;
  for_each_tensor(modules, buffers, positions, std::forward<Visit>(visit));
}

// Where a walk's modules and tensors sit in the model IR built from it: modules in walk order
// (named_modules fills it), parameters and buffers in for_each_tensor order (IrBuilder). Made once
// per construction and read by every trace on it.
struct TreeIndex {
  std::unordered_map<const InstanceObj*, int> module;
  std::unordered_map<const TensorObj*, int> parameter, buffer;
};

inline std::vector<NamedTensor> named_tensors(const std::vector<NamedModule>& modules, bool buffers) {
  std::vector<NamedTensor> out;
  for_each_tensor(modules, buffers, [&](const NamedModule& nm, const std::string& k, const std::shared_ptr<TensorObj>& t, bool persistent) {
    out.push_back({nm.name.empty() ? k : nm.name + "." + k, t, nm.module, persistent});
  });
  return out;
}

inline std::vector<NamedTensor> named_tensors(InstanceObj& root, bool buffers) {
  return named_tensors(named_modules(root), buffers);
}

}  // namespace shardlens::python
