#include "torch/torchscript_model.h"

#include <unordered_set>

namespace shardlens::torchgraph {

std::string python_class_name(const std::string& qualified) {
  auto dot = qualified.rfind('.');
  return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

std::string dtype_name(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Float: return "float32";
    case c10::ScalarType::Double: return "float64";
    case c10::ScalarType::Half: return "float16";
    case c10::ScalarType::BFloat16: return "bfloat16";
    case c10::ScalarType::Long: return "int64";
    case c10::ScalarType::Int: return "int32";
    case c10::ScalarType::Short: return "int16";
    case c10::ScalarType::Char: return "int8";
    case c10::ScalarType::Byte: return "uint8";
    case c10::ScalarType::Bool: return "bool";
    case c10::ScalarType::ComplexFloat: return "complex64";
    case c10::ScalarType::ComplexDouble: return "complex128";
    default: return c10::toString(t);
  }
}

std::string LoadedModel::source() const {
  if (export_info.is_object() && export_info.contains("source") && export_info["source"].is_string())
    return export_info["source"].get<std::string>();
  return "";
}

std::string LoadedModel::method() const {
  if (export_info.is_object() && export_info.contains("method") && export_info["method"].is_string())
    return export_info["method"].get<std::string>();
  return "";
}

namespace {

// named_modules(): pre-order, children in registration order, a module reachable twice once.
void walk(LoadedModel& m, const torch::jit::Module& mod, const std::string& name,
          std::unordered_set<const c10::ivalue::Object*>& seen) {
  const c10::ivalue::Object* obj = mod._ivalue().get();
  if (!seen.insert(obj).second) return;
  ModuleEntry e;
  e.name = name;
  e.qualified_class = mod.type()->name() ? mod.type()->name()->qualifiedName() : std::string("Module");
  e.class_name = python_class_name(e.qualified_class);
  e.builtin = e.qualified_class.rfind("__torch__.torch.nn.", 0) == 0;
  e.module = mod;
  int index = static_cast<int>(m.modules.size());
  m.module_index[obj] = index;
  m.modules.push_back(e);
  for (const auto& child : mod.named_children())
    walk(m, child.value, name.empty() ? child.name : name + "." + child.name, seen);
}

}  // namespace

std::optional<LoadedModel> load_torchscript(const std::string& path, std::string& error) {
  LoadedModel m;
  m.path = path;
  torch::jit::ExtraFilesMap extra{{"shardlens.json", ""}};
  try {
    m.root = torch::jit::load(path, c10::Device(c10::kCPU), extra);
  } catch (const std::exception& e) {
    std::string what = e.what();
    auto nl = what.find('\n');
    error = "cannot load '" + path + "' as TorchScript: " + (nl == std::string::npos ? what : what.substr(0, nl));
    return std::nullopt;
  }
  if (!extra["shardlens.json"].empty()) {
    m.export_info = nlohmann::json::parse(extra["shardlens.json"], nullptr, false);
    if (m.export_info.is_discarded()) m.export_info = nullptr;
  }
  m.root.eval();
  std::unordered_set<const c10::ivalue::Object*> seen;
  walk(m, m.root, "", seen);
  // A module the script registers under several names is one object in Python (named_modules()
  // lists it once) but one copy per name in TorchScript (its tensors stay shared). The export's
  // named_modules() list says which names PyTorch keeps; the other copies stand for the kept one.
  if (m.export_info.is_object() && m.export_info.contains("modules") && m.export_info["modules"].is_array() &&
      m.export_info["modules"].size() < m.modules.size()) {
    std::unordered_set<std::string> keep;
    for (const auto& e : m.export_info["modules"]) keep.insert(e.value("name", std::string("?")));
    auto tensors_of = [](const torch::jit::Module& mod) {
      std::vector<const c10::TensorImpl*> out;
      for (const auto& p : mod.named_parameters(/*recurse=*/true)) out.push_back(p.value.unsafeGetTensorImpl());
      return out;
    };
    std::vector<ModuleEntry> kept;
    std::vector<std::pair<const c10::ivalue::Object*, size_t>> dropped;  // object, old index
    for (size_t i = 0; i < m.modules.size(); ++i) {
      if (keep.count(m.modules[i].name)) kept.push_back(m.modules[i]);
      else dropped.emplace_back(m.modules[i].module._ivalue().get(), i);
    }
    if (kept.size() == m.export_info["modules"].size()) {
      std::unordered_map<const c10::ivalue::Object*, int> index;
      for (size_t i = 0; i < kept.size(); ++i) index[kept[i].module._ivalue().get()] = static_cast<int>(i);
      for (auto& [obj, old] : dropped) {
        const auto& d = m.modules[old];
        auto dt = tensors_of(d.module);
        int alias = 0;
        for (size_t i = 0; i < kept.size(); ++i) {
          if (kept[i].qualified_class != d.qualified_class && kept[i].class_name != d.class_name) continue;
          if (tensors_of(kept[i].module) == dt) {
            alias = static_cast<int>(i);
            break;
          }
        }
        index[obj] = alias;
      }
      m.modules = std::move(kept);
      m.module_index = std::move(index);
    }
  }
  // Python class names as the script spells them (TorchScript mangles redefinitions and classes
  // defined inside functions): the export's own list of named_modules() classes, when it matches.
  if (m.export_info.is_object() && m.export_info.contains("modules") && m.export_info["modules"].is_array() &&
      m.export_info["modules"].size() == m.modules.size()) {
    const auto& mods = m.export_info["modules"];
    bool same = true;
    for (size_t i = 0; i < mods.size() && same; ++i) same = mods[i].value("name", std::string("?")) == m.modules[i].name;
    if (same)
      for (size_t i = 0; i < mods.size(); ++i) m.modules[i].class_name = mods[i].value("class", m.modules[i].class_name);
  }
  // named_parameters() / named_buffers(): per module in named_modules() order, its own tensors
  // in registration order, each tensor once (tied weights keep their first name).
  for (size_t i = 0; i < m.modules.size(); ++i) {
    const auto& mod = m.modules[i].module;
    std::string prefix = m.modules[i].name.empty() ? "" : m.modules[i].name + ".";
    for (const auto& p : mod.named_parameters(/*recurse=*/false)) {
      const c10::TensorImpl* impl = p.value.unsafeGetTensorImpl();
      if (m.parameter_index.count(impl)) continue;
      m.parameter_index[impl] = static_cast<int>(m.parameters.size());
      m.parameters.push_back({prefix + p.name, p.value, static_cast<int>(i)});
    }
    for (const auto& b : mod.named_buffers(/*recurse=*/false)) {
      if (!b.value.defined()) continue;
      const c10::TensorImpl* impl = b.value.unsafeGetTensorImpl();
      if (m.buffer_index.count(impl)) continue;
      m.buffer_index[impl] = static_cast<int>(m.buffers.size());
      m.buffers.push_back({prefix + b.name, b.value, static_cast<int>(i)});
    }
  }
  return m;
}

}  // namespace shardlens::torchgraph
