// nn.Module's methods, available on every module: registration, traversal, and the methods
// that return the module itself.
#include "ir/module_path.h"
#include "python/interpreter.h"
#include "python/module_tree.h"
#include "python/native_support.h"

namespace shardlens::python::native {

void install_module_methods(Interpreter& in) {
  auto module_method = [&](const std::string& name, NativeFn fn) { in.define_method("module", name, std::move(fn)); };
  module_method("register_buffer", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    Bound b;
    if (!bind_args(in, "register_buffer", {{"name", std::nullopt}, {"tensor", std::nullopt}, {"persistent", Value::boolean(true)}}, a, b, site))
      return Value::none();
    if (!b["name"].is_str()) {
      in.note("buffer with a name that could not be evaluated", b["name"].is_unknown() ? b["name"].unknown->reason : "", site);
      return Value::none();
    }
    const std::string& name = b["name"].s;
    if (auto* inst = instance(self); inst && inst->module && (ModuleData::find(inst->module->parameters, name) || ModuleData::find(inst->module->modules, name)))
      return in.raise("KeyError", "attribute '" + name + "' already exists", site);
    bool persistent = in.truth(b["persistent"]).value_or(true);
    if (b["tensor"].is_none()) {
      register_buffer(self, name, nullptr, persistent);
    } else if (auto* t = b["tensor"].as<TensorObj>()) {
      if (!t->shape) in.note("shape of buffer '" + name + "' could not be resolved", t->why ? t->why->reason : "unknown", site);
      register_buffer(self, name, std::static_pointer_cast<TensorObj>(b["tensor"].obj), persistent);
    } else {
      in.note("buffer '" + name + "' could not be resolved",
              b["tensor"].is_unknown() ? b["tensor"].unknown->reason : "not a tensor: " + type_name(b["tensor"]), site);
    }
    return Value::none();
  });
  module_method("register_parameter", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2 || !a.positional[0].is_str()) return in.unknown("register_parameter() arguments", site);
    if (a.positional[1].is_none()) register_none_param(self, a.positional[0].s);
    else if (auto* t = a.positional[1].as<TensorObj>(); t && t->is_parameter) register_param(in, self, a.positional[0].s, a.positional[1], site);
    else if (a.positional[1].is_unknown()) in.note("parameter '" + a.positional[0].s + "' could not be resolved", a.positional[1].unknown->reason, site);
    else return in.raise("TypeError", "cannot assign '" + type_name(a.positional[1]) + "' as parameter", site);
    return Value::none();
  });
  auto add_module = [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2) return in.raise("TypeError", "add_module() takes 2 arguments", site);
    if (!a.positional[0].is_str()) {
      in.note("submodule with a name that could not be evaluated", a.positional[0].is_unknown() ? a.positional[0].unknown->reason : "", site);
      return Value::none();
    }
    auto* inst = instance(self);
    if (!inst || !inst->module) return Value::none();
    const Value& m = a.positional[1];
    if (m.is_none()) {
      if (auto* slot = ModuleData::find(inst->module->modules, a.positional[0].s)) *slot = nullptr;
      else inst->module->modules.emplace_back(a.positional[0].s, nullptr);
    } else if (auto* child = m.as<InstanceObj>(); child && child->module) {
      in.module_set(*inst, a.positional[0].s, m, site);
    } else if (m.is_unknown()) {
      in.note("submodule '" + a.positional[0].s + "' could not be resolved", m.unknown->reason, site);
    } else {
      return in.raise("TypeError", type_name(m) + " is not a Module subclass", site);
    }
    return Value::none();
  };
  module_method("add_module", add_module);
  module_method("register_module", add_module);
  auto returns_self = [](Interpreter&, const Value& self, Args&, const ir::Span&) { return self; };
  for (const char* n : {"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "eval", "train", "requires_grad_",
                        "share_memory", "type", "to_empty", "apply", "xpu", "ipu"})
    module_method(n, returns_self);
  for (const char* n : {"zero_grad", "register_forward_hook", "register_forward_pre_hook", "register_backward_hook",
                        "register_full_backward_hook", "load_state_dict", "_apply", "register_load_state_dict_post_hook",
                        "_register_load_state_dict_pre_hook", "_register_state_dict_hook"})
    module_method(n, [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::none(); });
  module_method("state_dict", [](Interpreter& in, const Value&, Args&, const ir::Span& site) { return in.unknown("state_dict()", site); });
  module_method("extra_repr", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return Value::str(instance(self)->module->extra_repr);
  });
  auto tensors = [](bool buffers, bool named) {
    return [buffers, named](Interpreter&, const Value& self, Args& a, const ir::Span&) {
      auto* inst = instance(self);
      std::string prefix = !a.positional.empty() && a.positional[0].is_str() ? a.positional[0].s : "";
      if (const Value* p = a.keyword("prefix"); p && p->is_str()) prefix = p->s;
      std::vector<Value> out;
      for (auto& nt : named_tensors(*inst, buffers)) {
        Value t = Value::object(nt.tensor);
        std::string name = prefix.empty() ? nt.name : prefix + "." + nt.name;
        out.push_back(named ? make_tuple({Value::str(name), t}) : t);
      }
      return make_list(std::move(out));
    };
  };
  module_method("parameters", tensors(false, false));
  module_method("named_parameters", tensors(false, true));
  module_method("buffers", tensors(true, false));
  module_method("named_buffers", tensors(true, true));
  auto modules = [](bool named, bool direct) {
    return [named, direct](Interpreter&, const Value& self, Args&, const ir::Span&) {
      auto* inst = instance(self);
      std::vector<Value> out;
      if (direct) {
        std::unordered_set<const InstanceObj*> seen;
        for (auto& [k, m] : inst->module->modules) {
          if (!m || !seen.insert(m.get()).second) continue;
          Value v = Value::object(m);
          out.push_back(named ? make_tuple({Value::str(k), v}) : v);
        }
      } else {
        for (auto& nm : named_modules(*inst)) {
          Value v = Value::object(nm.module->shared_from_this());
          out.push_back(named ? make_tuple({Value::str(nm.name), v}) : v);
        }
      }
      return make_list(std::move(out));
    };
  };
  module_method("modules", modules(false, false));
  module_method("named_modules", modules(true, false));
  module_method("children", modules(false, true));
  module_method("named_children", modules(true, true));
  module_method("get_submodule", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) -> Value {
    if (a.positional.empty() || !a.positional[0].is_str()) return in.unknown("get_submodule() argument", site);
    Value cur = self;
    const std::string& path = a.positional[0].s;
    for (const std::string& part : path.empty() ? std::vector<std::string>{} : ir::split_module_path(path)) {
      auto* inst = instance(cur);
      if (!inst || !inst->module) return in.raise("AttributeError", "no submodule " + part, site);
      auto* child = ModuleData::find(inst->module->modules, part);
      if (!child || !*child) return in.raise("AttributeError", "no submodule " + part, site);
      cur = Value::object(*child);
    }
    return cur;
  });
}

}  // namespace shardlens::python::native
