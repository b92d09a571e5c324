// The module containers: Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict,
// with PyTorch's child names and the list and dict methods model code calls on them.
#include <algorithm>

#include "python/interpreter.h"
#include "python/native_support.h"

namespace shardlens::python::native {

void install_nn_containers(Interpreter& in) {
  auto module = in.module_base();
  auto container = [&](const std::string& name, NativeFn init) { return in.make_builtin_class("torch.nn." + name, {module}, std::move(init)); };
  auto append_module = [](Interpreter& in, InstanceObj& self, const Value& m, const ir::Span& site) {
    std::string key = std::to_string(self.module->modules.size());
    if (m.is_none()) {  // add_module accepts None: the slot exists, named_modules skips it
      self.module->modules.emplace_back(key, nullptr);
      return;
    }
    if (m.is_unknown()) {
      in.note("module " + key + " of " + self.cls->name + " could not be resolved", m.unknown->reason, site);
      self.module->modules.emplace_back(key, nullptr);
      return;
    }
    auto* child = m.as<InstanceObj>();
    if (!child || !child->module) {
      in.raise("TypeError", type_name(m) + " is not a Module subclass", site);
      return;
    }
    self.module->modules.emplace_back(key, std::static_pointer_cast<InstanceObj>(m.obj));
  };
  auto extend_modules = [append_module](Interpreter& in, InstanceObj& self, const Value& iterable, const ir::Span& site) {
    Value why;
    auto items = in.iterate(iterable, site, &why);
    if (!items) {
      in.note("modules of " + self.cls->name + " could not be resolved", why.is_unknown() ? why.unknown->reason : "not iterable", site);
      return;
    }
    for (auto& m : *items) {
      append_module(in, self, m, site);
      if (in.exception_pending()) return;
    }
  };
  auto sequential = container("Sequential", [append_module](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    auto* inst = instance(self);
    if (a.positional.size() == 1)
      if (auto* d = a.positional[0].as<DictObj>()) {
        for (auto& [k, m] : d->entries) {
          if (!k.is_str()) continue;
          if (auto* child = m.as<InstanceObj>(); child && child->module) in.module_set(*inst, k.s, m, site);
          else if (m.is_unknown()) in.note("module '" + k.s + "' of Sequential could not be resolved", m.unknown->reason, site);
        }
        return Value::none();
      }
    for (auto& m : a.positional) {
      append_module(in, *inst, m, site);
      if (in.exception_pending()) break;
    }
    return Value::none();
  });
  auto module_list = container("ModuleList", [extend_modules](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    const Value* modules = argument(a, 0, "modules");
    if (modules && !modules->is_none()) extend_modules(in, *instance(self), *modules, site);
    return Value::none();
  });
  auto module_dict = container("ModuleDict", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    const Value* modules = argument(a, 0, "modules");
    if (!modules || modules->is_none()) return Value::none();
    std::vector<std::pair<Value, Value>> entries;
    if (auto* d = modules->as<DictObj>()) entries = d->entries;
    else if (auto items = in.iterate(*modules, site)) {
      for (auto& it : *items)
        if (auto* t = TupleView::of(it); t && t->items.size() == 2) entries.emplace_back(t->items[0], t->items[1]);
    } else {
      in.note("modules of ModuleDict could not be resolved", modules->is_unknown() ? modules->unknown->reason : "", site);
    }
    for (auto& [k, m] : entries) {
      if (!k.is_str()) continue;
      if (auto* child = m.as<InstanceObj>(); child && child->module) in.module_set(*instance(self), k.s, m, site);
      else if (m.is_unknown()) in.note("module '" + k.s + "' of ModuleDict could not be resolved", m.unknown->reason, site);
    }
    return Value::none();
  });
  auto param_list = container("ParameterList", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    const Value* values = argument(a, 0, "values");
    if (values && !values->is_none())
      if (auto items = in.iterate(*values, site))
        for (auto& p : *items)
          register_param(in, self, std::to_string(instance(self)->module->parameters.size()), p, site);
    return Value::none();
  });
  auto param_dict = container("ParameterDict", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    const Value* values = argument(a, 0, "parameters");
    if (values && !values->is_none())
      if (auto* d = values->as<DictObj>()) {
        // torch 1.13 keeps an OrderedDict's order but sorts a plain dict's keys.
        auto entries = d->entries;
        if (!d->ordered)
          std::stable_sort(entries.begin(), entries.end(), [](auto& x, auto& y) { return key_of(x.first) < key_of(y.first); });
        for (auto& [k, p] : entries)
          if (k.is_str()) register_param(in, self, k.s, p, site);
      }
    return Value::none();
  });
  auto children_of = [](const Value& self) {
    std::vector<Value> out;
    for (auto& [k, m] : instance(self)->module->modules) out.push_back(m ? Value::object(m) : Value::none());
    return out;
  };
  auto params_of = [](const Value& self) {
    std::vector<Value> out;
    for (auto& [k, p] : instance(self)->module->parameters)
      if (p) out.push_back(Value::object(p));
    return out;
  };
  auto index_into = [](Interpreter& in, std::vector<Value> items, const Value& index, const ir::Span& site) -> Value {
    if (!index.is_int()) return in.unknown("container index", site);
    int64_t n = static_cast<int64_t>(items.size()), i = index.as_int();
    if (i < 0) i += n;
    if (i < 0 || i >= n) return in.raise("IndexError", "index " + std::to_string(index.as_int()) + " is out of range", site);
    return items[i];
  };
  auto set_method = [&](const std::shared_ptr<ClassObj>& cls, const std::string& name, NativeFn fn) {
    cls->set(name, in.native(cls->qualname + "." + name, std::move(fn)));
  };
  for (auto& cls : {sequential, module_list}) {
    set_method(cls, "__len__", [children_of](Interpreter&, const Value&, Args& a, const ir::Span&) {
      return Value::integer(static_cast<int64_t>(children_of(a.positional[0]).size()));
    });
    set_method(cls, "__iter__", [children_of](Interpreter&, const Value&, Args& a, const ir::Span&) {
      return make_list(children_of(a.positional[0]));
    });
    set_method(cls, "append", [append_module](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      append_module(in, *instance(self), a.positional.empty() ? Value() : a.positional[0], site);
      return self;
    });
    set_method(cls, "extend", [extend_modules](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      extend_modules(in, *instance(self), a.positional.empty() ? Value() : a.positional[0], site);
      return self;
    });
    set_method(cls, "insert", [children_of](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      if (a.positional.size() != 2 || !a.positional[0].is_int()) return in.unknown("insert() arguments", site);
      auto items = children_of(self);
      int64_t n = static_cast<int64_t>(items.size()), i = a.positional[0].as_int();
      if (i < 0) i = std::max<int64_t>(0, i + n);
      items.insert(items.begin() + std::min(i, n), a.positional[1]);
      auto& mods = instance(self)->module->modules;
      mods.clear();
      for (size_t k = 0; k < items.size(); ++k)
        mods.emplace_back(std::to_string(k), items[k].is_none() ? nullptr : std::static_pointer_cast<InstanceObj>(items[k].obj));
      return Value::none();
    });
  }
  std::weak_ptr<ClassObj> module_list_ref = module_list;  // the class holds this closure: no cycle
  // Positions a ModuleList / Sequential index or slice selects (torch's _get_item_by_idx).
  auto positions = [](Interpreter& in, size_t n, const Value& index, const ir::Span& site, bool& is_slice) {
    std::vector<int64_t> out;
    is_slice = false;
    if (auto* sl = index.as<SliceObj>()) {
      is_slice = true;
      bool ok = true;
      out = slice_indices(*sl, static_cast<int64_t>(n), ok);
      if (!ok) in.note("container slice with bounds that could not be evaluated", "unknown slice bounds", site);
      return out;
    }
    if (!index.is_int()) {
      in.note("container index that could not be evaluated", index.is_unknown() ? index.unknown->reason : type_name(index), site);
      return out;
    }
    int64_t i = index.as_int() < 0 ? index.as_int() + static_cast<int64_t>(n) : index.as_int();
    if (i < 0 || i >= static_cast<int64_t>(n)) in.raise("IndexError", "index " + std::to_string(index.as_int()) + " is out of range", site);
    else out.push_back(i);
    return out;
  };
  // Removing entries renumbers the rest "0".."n-1", as torch 1.13 does for both containers.
  auto remove_and_renumber = [](InstanceObj& self, const std::vector<int64_t>& drop) {
    auto& mods = self.module->modules;
    std::vector<std::pair<std::string, std::shared_ptr<InstanceObj>>> kept;
    for (size_t k = 0; k < mods.size(); ++k)
      if (std::find(drop.begin(), drop.end(), static_cast<int64_t>(k)) == drop.end()) kept.push_back(mods[k]);
    for (size_t k = 0; k < kept.size(); ++k) kept[k].first = std::to_string(k);
    mods = std::move(kept);
  };
  std::weak_ptr<ClassObj> sequential_ref = sequential;
  for (auto& cls : {sequential, module_list}) {
    bool is_sequential = cls == sequential;
    set_method(cls, "__getitem__", [positions, module_list_ref, sequential_ref, is_sequential](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
      Value self = self_of(a);
      auto& mods = instance(self)->module->modules;
      bool is_slice = false;
      auto picked = positions(in, mods.size(), a.positional.empty() ? Value() : a.positional[0], site, is_slice);
      if (in.exception_pending()) return Value::none();
      if (!is_slice) {
        if (picked.empty()) return in.unknown("container item", site);
        auto& m = mods[static_cast<size_t>(picked[0])].second;
        return m ? Value::object(m) : Value::none();
      }
      if (is_sequential) {  // Sequential slices keep their keys
        auto d = std::make_shared<DictObj>();
        d->ordered = true;
        for (int64_t k : picked) {
          auto& [key, m] = mods[static_cast<size_t>(k)];
          d->set(Value::str(key), m ? Value::object(m) : Value::none());
        }
        return in.instantiate(sequential_ref.lock(), Args{{Value::object(d)}, {}}, site);
      }
      std::vector<Value> chosen;
      for (int64_t k : picked) {
        auto& m = mods[static_cast<size_t>(k)].second;
        chosen.push_back(m ? Value::object(m) : Value::none());
      }
      return in.instantiate(module_list_ref.lock(), Args{{make_list(chosen)}, {}}, site);
    });
    set_method(cls, "__delitem__", [positions, remove_and_renumber](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      bool is_slice = false;
      auto picked = positions(in, instance(self)->module->modules.size(), a.positional.empty() ? Value() : a.positional[0], site, is_slice);
      if (!in.exception_pending()) remove_and_renumber(*instance(self), picked);
      return Value::none();
    });
    set_method(cls, "pop", [positions, remove_and_renumber](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
      Value self = self_of(a);
      auto& mods = instance(self)->module->modules;
      bool is_slice = false;
      auto picked = positions(in, mods.size(), a.positional.empty() ? Value::integer(-1) : a.positional[0], site, is_slice);
      if (in.exception_pending() || picked.empty()) return Value::none();
      auto m = mods[static_cast<size_t>(picked[0])].second;
      remove_and_renumber(*instance(self), picked);
      return m ? Value::object(m) : Value::none();
    });
    set_method(cls, "__setitem__", [positions](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      if (a.positional.size() != 2) return in.raise("TypeError", "__setitem__ takes an index and a module", site);
      auto& mods = instance(self)->module->modules;
      bool is_slice = false;
      auto picked = positions(in, mods.size(), a.positional[0], site, is_slice);
      if (in.exception_pending() || picked.size() != 1 || is_slice) return Value::none();
      in.module_set(*instance(self), mods[static_cast<size_t>(picked[0])].first, a.positional[1], site);
      return Value::none();
    });
  }
  set_method(module_list, "__add__", [children_of, module_list_ref](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2) return in.raise("TypeError", "__add__ takes one operand", site);
    auto items = children_of(a.positional[0]);
    Value why;
    auto more = in.iterate(a.positional[1], site, &why);
    if (!more) return why.is_unknown() ? why : in.unknown("ModuleList + non-iterable", site);
    items.insert(items.end(), more->begin(), more->end());
    return in.instantiate(module_list_ref.lock(), Args{{make_list(items)}, {}}, site);
  });
  // d[key] on a ModuleDict (modules) or a ParameterDict (parameters).
  auto registry_item = [](auto list_of) {
    return [list_of](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
      Value self = self_of(a);
      if (a.positional.empty() || !a.positional[0].is_str()) return in.unknown("ModuleDict / ParameterDict key", site);
      auto* entry = ModuleData::find(list_of(*instance(self)->module), a.positional[0].s);
      if (!entry) return in.raise("KeyError", a.positional[0].s, site);
      return *entry ? Value::object(*entry) : Value::none();
    };
  };
  set_method(module_dict, "__getitem__", registry_item([](ModuleData& m) -> auto& { return m.modules; }));
  set_method(module_dict, "__setitem__", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    if (a.positional.size() != 2 || !a.positional[0].is_str()) return in.unknown("ModuleDict key", site);
    in.module_set(*instance(self), a.positional[0].s, a.positional[1], site);
    return Value::none();
  });
  auto dict_remove = [](Interpreter& in, const Value& self, const Value& key, const ir::Span& site) -> Value {
    auto& mods = instance(self)->module->modules;
    if (key.is_str())
      for (auto it = mods.begin(); it != mods.end(); ++it)
        if (it->first == key.s) {
          Value m = it->second ? Value::object(it->second) : Value::none();
          mods.erase(it);
          return m;
        }
    return in.raise("KeyError", repr(key), site);
  };
  set_method(module_dict, "pop", [dict_remove](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    return dict_remove(in, self, a.positional.empty() ? Value() : a.positional[0], site);
  });
  set_method(module_dict, "__delitem__", [dict_remove](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    dict_remove(in, self, a.positional.empty() ? Value() : a.positional[0], site);
    return Value::none();
  });
  set_method(module_dict, "__contains__", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    Value self = self_of(a);
    return Value::boolean(!a.positional.empty() && a.positional[0].is_str() &&
                          ModuleData::find(instance(self)->module->modules, a.positional[0].s) != nullptr);
  });
  set_method(module_dict, "__len__", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return Value::integer(static_cast<int64_t>(instance(a.positional[0])->module->modules.size()));
  });
  auto dict_view = [](int what) {
    return [what](Interpreter&, const Value&, Args& a, const ir::Span&) {
      std::vector<Value> out;
      for (auto& [k, m] : instance(a.positional[0])->module->modules) {
        Value v = m ? Value::object(m) : Value::none();
        out.push_back(what == 0 ? Value::str(k) : what == 1 ? v : make_tuple({Value::str(k), v}));
      }
      return make_list(std::move(out));
    };
  };
  set_method(module_dict, "__iter__", dict_view(0));
  set_method(module_dict, "keys", dict_view(0));
  set_method(module_dict, "values", dict_view(1));
  set_method(module_dict, "items", dict_view(2));
  set_method(module_dict, "update", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    if (auto* d = a.positional.empty() ? nullptr : a.positional[0].as<DictObj>())
      for (auto& [k, m] : d->entries)
        if (k.is_str()) in.module_set(*instance(self), k.s, m, site);
    return Value::none();
  });
  set_method(param_list, "__len__", [params_of](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return Value::integer(static_cast<int64_t>(params_of(a.positional[0]).size()));
  });
  set_method(param_list, "__iter__", [params_of](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return make_list(params_of(a.positional[0]));
  });
  set_method(param_list, "__getitem__", [params_of, index_into](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    return index_into(in, params_of(self), a.positional.empty() ? Value() : a.positional[0], site);
  });
  set_method(param_list, "append", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    if (!a.positional.empty())
      register_param(in, self, std::to_string(instance(self)->module->parameters.size()), a.positional[0], site);
    return self;
  });
  set_method(param_list, "extend", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    if (!a.positional.empty())
      if (auto items = in.iterate(a.positional[0], site))
        for (auto& p : *items) register_param(in, self, std::to_string(instance(self)->module->parameters.size()), p, site);
    return self;
  });
  set_method(param_dict, "__getitem__", registry_item([](ModuleData& m) -> auto& { return m.parameters; }));
  set_method(param_dict, "__setitem__", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    if (a.positional.size() == 2 && a.positional[0].is_str()) register_param(in, self, a.positional[0].s, a.positional[1], site);
    return Value::none();
  });
  set_method(param_dict, "keys", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    std::vector<Value> out;
    for (auto& [k, p] : instance(a.positional[0])->module->parameters) out.push_back(Value::str(k));
    return make_list(std::move(out));
  });
  // What torch.nn.utils.parametrize registers per reparametrised tensor (torch_nn_parameters.cpp).
  in.define("torch.nn.utils.parametrize.ParametrizationList",
            Value::object(in.make_builtin_class("torch.nn.utils.parametrize.ParametrizationList", {module_list}, nullptr)));
}

}  // namespace shardlens::python::native
