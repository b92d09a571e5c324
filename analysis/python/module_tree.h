// Walks an nn.Module instance the way PyTorch's named_modules / named_parameters /
// named_buffers do: depth-first in registration order, each module and tensor once, under the
// first name that reaches it.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
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

inline void walk_modules(InstanceObj* m, const std::string& prefix, InstanceObj* parent, const std::string& key,
                         std::unordered_set<const InstanceObj*>& seen, std::vector<NamedModule>& out) {
  if (!m || !seen.insert(m).second) return;
  out.push_back({prefix, m, parent, key});
  if (!m->module) return;
  for (auto& [k, child] : m->module->modules)
    if (child) walk_modules(child.get(), prefix.empty() ? k : prefix + "." + k, m, k, seen, out);
}

inline std::vector<NamedModule> named_modules(InstanceObj& root) {
  std::vector<NamedModule> out;
  std::unordered_set<const InstanceObj*> seen;
  walk_modules(&root, "", nullptr, "", seen, out);
  return out;
}

// Visits the parameters (or buffers) of `modules` in named_parameters() order, each tensor once:
// visit(module, key, tensor, persistent). For callers that need the order, not the names.
template <typename Visit>
void for_each_tensor(const std::vector<NamedModule>& modules, bool buffers, Visit&& visit) {
  std::unordered_set<const TensorObj*> seen;
  for (auto& nm : modules) {
    if (!nm.module->module) continue;
    auto& md = *nm.module->module;
    auto& list = buffers ? md.buffers : md.parameters;
    for (size_t i = 0; i < list.size(); ++i) {
      auto& [k, t] = list[i];
      if (!t || !seen.insert(t.get()).second) continue;
      visit(nm, k, t, buffers && i < md.buffer_persistent.size() ? static_cast<bool>(md.buffer_persistent[i]) : true);
    }
  }
}

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
