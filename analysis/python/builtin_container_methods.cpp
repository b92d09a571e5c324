// The methods of list, tuple, dict and set (also on instances of user subclasses of dict), of
// int and float, object's attribute protocol, and the copy module.
#include <algorithm>
#include <cmath>
#include <optional>

#include "python/interpreter.h"
#include "python/native_support.h"
#include "python/numbers.h"

namespace shardlens::python::native {

namespace {

Value deep_copy(Interpreter& in, const Value& v, std::unordered_map<const Object*, Value>& memo, const ir::Span& site) {
  if (v.kind != Value::Kind::Obj) return v;
  auto it = memo.find(v.obj.get());
  if (it != memo.end()) return it->second;
  switch (v.obj->kind) {
    case ObjKind::List:
    case ObjKind::Tuple: {
      auto* l = static_cast<ListObj*>(v.obj.get());
      auto copy = std::make_shared<ListObj>(v.obj->kind == ObjKind::Tuple);
      Value result = Value::object(copy);
      memo[v.obj.get()] = result;
      for (auto& item : l->items) copy->items.push_back(deep_copy(in, item, memo, site));
      return result;
    }
    case ObjKind::Dict:
    case ObjKind::Set: {
      auto* d = static_cast<DictObj*>(v.obj.get());
      auto copy = std::make_shared<DictObj>(v.obj->kind == ObjKind::Set);
      copy->ordered = d->ordered;
      Value result = Value::object(copy);
      memo[v.obj.get()] = result;
      for (auto& kv : d->entries) copy->set(kv.first, deep_copy(in, kv.second, memo, site));
      return result;
    }
    case ObjKind::Tensor: {
      auto* t = static_cast<TensorObj*>(v.obj.get());
      auto copy = in.new_tensor(t->shape, t->span, t->is_parameter);
      copy->dtype = t->dtype;
      copy->why = t->why;
      copy->requires_grad = t->requires_grad;
      Value result = Value::object(copy);
      memo[v.obj.get()] = result;
      return result;
    }
    case ObjKind::Instance: {
      auto* inst = static_cast<InstanceObj*>(v.obj.get());
      auto copy = std::make_shared<InstanceObj>();
      copy->cls = inst->cls;
      copy->id = in.next_id();
      in.track(copy);
      Value result = Value::object(copy);
      memo[v.obj.get()] = result;
      for (auto& [k, val] : inst->dict->entries) copy->dict->set(k, deep_copy(in, val, memo, site));
      if (inst->dict_items) copy->dict_items = std::static_pointer_cast<DictObj>(deep_copy(in, Value::object(inst->dict_items), memo, site).obj);
      if (inst->module) {
        copy->module = std::make_unique<ModuleData>();
        copy->module->span = inst->module->span;
        copy->module->extra_repr = inst->module->extra_repr;
        copy->module->buffer_persistent = inst->module->buffer_persistent;
        auto copy_tensor = [&](const std::shared_ptr<TensorObj>& t) -> std::shared_ptr<TensorObj> {
          if (!t) return nullptr;
          return std::static_pointer_cast<TensorObj>(deep_copy(in, Value::object(t), memo, site).obj);
        };
        for (auto& [k, t] : inst->module->parameters) copy->module->parameters.emplace_back(k, copy_tensor(t));
        for (auto& [k, t] : inst->module->buffers) copy->module->buffers.emplace_back(k, copy_tensor(t));
        for (auto& [k, m] : inst->module->modules) {
          if (!m) { copy->module->modules.emplace_back(k, nullptr); continue; }
          Value c = deep_copy(in, Value::object(m), memo, site);
          copy->module->modules.emplace_back(k, std::static_pointer_cast<InstanceObj>(c.obj));
        }
      }
      return result;
    }
    default: return v;  // functions, classes, namespaces and natives are shared, as in Python
  }
}

Value shallow_copy(Interpreter& in, const Value& v) {
  if (auto* l = TupleView::of(v)) return make_list(l->items, v.obj->kind == ObjKind::Tuple);
  if (v.kind == Value::Kind::Obj && (v.obj->kind == ObjKind::Dict || v.obj->kind == ObjKind::Set)) {
    auto* d = static_cast<DictObj*>(v.obj.get());
    auto copy = std::make_shared<DictObj>(v.obj->kind == ObjKind::Set);
    copy->entries = d->entries;
    copy->index = d->index;
    copy->ordered = d->ordered;
    return Value::object(copy);
  }
  if (auto* inst = v.as<InstanceObj>(); inst && !inst->module) {
    auto copy = std::make_shared<InstanceObj>();
    copy->cls = inst->cls;
    copy->id = in.next_id();
    in.track(copy);
    copy->dict->entries = inst->dict->entries;
    copy->dict->index = inst->dict->index;
    if (inst->dict_items) copy->dict_items = std::static_pointer_cast<DictObj>(shallow_copy(in, Value::object(inst->dict_items)).obj);
    return Value::object(copy);
  }
  return v;
}

}  // namespace

void install_container_methods(Interpreter& in) {
  auto list_method = [&](const std::string& name, NativeFn fn) { in.define_method("list", name, std::move(fn)); };
  list_method("append", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (!in.charge_memory(sizeof(Value))) return in.unknown("analysis memory budget exhausted", site);
    self.as<ListObj>()->items.push_back(a.positional.empty() ? Value() : a.positional[0]);
    return Value::none();
  });
  list_method("extend", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    Value why;
    auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    if (!items) {
      in.note("list.extend() with a value that could not be evaluated", why.is_unknown() ? why.unknown->reason : "", site);
      return Value::none();
    }
    if (!in.charge_memory(items->size() * sizeof(Value))) return in.unknown("analysis memory budget exhausted", site);
    auto& l = self.as<ListObj>()->items;
    l.insert(l.end(), items->begin(), items->end());
    return Value::none();
  });
  list_method("insert", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2 || !a.positional[0].is_int()) return in.unknown("list.insert() arguments", site);
    auto& l = self.as<ListObj>()->items;
    int64_t i = a.positional[0].as_int(), n = static_cast<int64_t>(l.size());
    if (i < 0) i = std::max<int64_t>(0, i + n);
    l.insert(l.begin() + std::min(i, n), a.positional[1]);
    return Value::none();
  });
  list_method("pop", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    auto& l = self.as<ListObj>()->items;
    if (l.empty()) return in.raise("IndexError", "pop from empty list", site);
    int64_t i = a.positional.empty() ? -1 : a.positional[0].as_int();
    int64_t n = static_cast<int64_t>(l.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) return in.raise("IndexError", "pop index out of range", site);
    Value v = l[i];
    l.erase(l.begin() + i);
    return v;
  });
  list_method("remove", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    auto& l = self.as<ListObj>()->items;
    for (auto it = l.begin(); it != l.end(); ++it)
      if (in.equal(*it, a.positional.empty() ? Value() : a.positional[0]).value_or(false)) {
        l.erase(it);
        return Value::none();
      }
    return in.raise("ValueError", "list.remove(x): x not in list", site);
  });
  list_method("clear", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    self.as<ListObj>()->items.clear();
    return Value::none();
  });
  list_method("reverse", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    auto& l = self.as<ListObj>()->items;
    std::reverse(l.begin(), l.end());
    return Value::none();
  });
  list_method("copy", [](Interpreter& in, const Value& self, Args&, const ir::Span&) { return shallow_copy(in, self); });
  list_method("sort", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    Args sort_args{{self}, a.keywords};
    Value sorted = in.call(*in.builtin("builtins.sorted"), sort_args, site);
    if (auto* s = sorted.as<ListObj>()) self.as<ListObj>()->items = s->items;
    return Value::none();
  });
  auto seq_index = [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    auto& l = TupleView::of(self)->items;
    for (size_t i = 0; i < l.size(); ++i)
      if (in.equal(l[i], a.positional.empty() ? Value() : a.positional[0]).value_or(false)) return Value::integer(static_cast<int64_t>(i));
    return in.raise("ValueError", "value is not in sequence", site);
  };
  auto seq_count = [](Interpreter& in, const Value& self, Args& a, const ir::Span&) {
    int64_t n = 0;
    for (auto& v : TupleView::of(self)->items)
      if (in.equal(v, a.positional.empty() ? Value() : a.positional[0]).value_or(false)) ++n;
    return Value::integer(n);
  };
  list_method("index", seq_index);
  list_method("count", seq_count);
  in.define_method("tuple", "index", seq_index);
  in.define_method("tuple", "count", seq_count);

  // --- methods of dict / set ---
  auto dict_method = [&](const std::string& name, NativeFn fn) { in.define_method("dict", name, std::move(fn)); };
  dict_method("get", [](Interpreter&, const Value& self, Args& a, const ir::Span&) {
    if (a.positional.empty()) return Value::none();
    if (a.positional[0].is_unknown()) return a.positional[0];
    const Value* v = self.as<DictObj>()->find(a.positional[0]);
    return v ? *v : (a.positional.size() > 1 ? a.positional[1] : Value::none());
  });
  dict_method("keys", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    std::vector<Value> out;
    for (auto& kv : self.as<DictObj>()->entries) out.push_back(kv.first);
    return make_list(std::move(out));
  });
  dict_method("values", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    std::vector<Value> out;
    for (auto& kv : self.as<DictObj>()->entries) out.push_back(kv.second);
    return make_list(std::move(out));
  });
  dict_method("items", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    std::vector<Value> out;
    for (auto& kv : self.as<DictObj>()->entries) out.push_back(make_tuple({kv.first, kv.second}));
    return make_list(std::move(out));
  });
  dict_method("update", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    Value src = dict_from(in, a, site);
    if (auto* d = src.as<DictObj>()) {
      for (auto& kv : d->entries) self.as<DictObj>()->set(kv.first, kv.second);
    } else {
      in.note("dict.update() with a value that could not be evaluated", src.is_unknown() ? src.unknown->reason : "", site);
    }
    return Value::none();
  });
  dict_method("pop", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "pop expected at least 1 argument", site);
    auto* d = self.as<DictObj>();
    if (const Value* v = d->find(a.positional[0])) {
      Value out = *v;
      d->erase(a.positional[0]);
      return out;
    }
    if (a.positional.size() > 1) return a.positional[1];
    return in.raise("KeyError", repr(a.positional[0]), site);
  });
  dict_method("setdefault", [](Interpreter&, const Value& self, Args& a, const ir::Span&) {
    if (a.positional.empty()) return Value::none();
    auto* d = self.as<DictObj>();
    if (const Value* v = d->find(a.positional[0])) return *v;
    Value dflt = a.positional.size() > 1 ? a.positional[1] : Value::none();
    d->set(a.positional[0], dflt);
    return dflt;
  });
  dict_method("copy", [](Interpreter& in, const Value& self, Args&, const ir::Span&) { return shallow_copy(in, self); });
  // A dict's or a set's items gone (both are DictObjs; as<DictObj>() sees dicts only).
  auto clear_items = [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    auto* d = static_cast<DictObj*>(self.obj.get());
    d->entries.clear();
    d->index.clear();
    return Value::none();
  };
  dict_method("clear", clear_items);
  auto set_add = [](Interpreter&, const Value& self, Args& a, const ir::Span&) {
    static_cast<DictObj*>(self.obj.get())->set(a.positional.empty() ? Value() : a.positional[0], Value::none());
    return Value::none();
  };
  in.define_method("set", "add", set_add);
  in.define_method("set", "discard", [](Interpreter&, const Value& self, Args& a, const ir::Span&) {
    if (!a.positional.empty()) static_cast<DictObj*>(self.obj.get())->erase(a.positional[0]);
    return Value::none();
  });
  in.define_method("set", "update", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    for (auto& src : a.positional)
      if (auto items = in.iterate(src, site))
        for (auto& v : *items) static_cast<DictObj*>(self.obj.get())->set(v, Value::none());
    return Value::none();
  });
  // Set algebra with any iterables as arguments, as CPython's methods take them (the operators
  // take sets only: Interpreter::binary).
  auto as_set = [](Interpreter& in, const Value& v, const ir::Span& site) -> std::optional<Value> {
    if (is_set(v)) return v;
    auto items = in.iterate(v, site);
    if (!items) return std::nullopt;
    auto s = std::make_shared<DictObj>(true);
    for (auto& item : *items) s->set(item, Value::none());
    return Value::object(s);
  };
  struct SetMethod {
    const char *name, *op;
    bool update;  // in place (returns None)
  };
  static const SetMethod kSetMethods[] = {{"union", "|", false},
                                          {"intersection", "&", false},
                                          {"difference", "-", false},
                                          {"symmetric_difference", "^", false},
                                          {"intersection_update", "&", true},
                                          {"difference_update", "-", true},
                                          {"symmetric_difference_update", "^", true}};
  for (const SetMethod& m : kSetMethods) {
    const char* name = m.name;
    std::string o = m.op;
    const bool update = m.update;
    in.define_method("set", name, [o, update, as_set, clear_items](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
      Value result = a.positional.empty() ? shallow_copy(in, self) : self;
      for (auto& other : a.positional) {
        auto s = as_set(in, other, site);
        if (!s) return in.unknown("set." + o + " with an argument that could not be evaluated", site);
        result = set_algebra(o, static_cast<const DictObj&>(*result.obj), static_cast<const DictObj&>(*s->obj));
      }
      if (!update) return result;
      Args none;
      clear_items(in, self, none, site);
      for (auto& kv : static_cast<const DictObj&>(*result.obj).entries) static_cast<DictObj*>(self.obj.get())->set(kv.first, Value::none());
      return Value::none();
    });
  }
  for (const bool sub : {true, false}) {
    in.define_method("set", sub ? "issubset" : "issuperset", [sub, as_set](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
      auto other = a.positional.empty() ? std::nullopt : as_set(in, a.positional[0], site);
      if (!other) return in.unknown("set comparison with an argument that could not be evaluated", site);
      return in.compare(sub ? "<=" : ">=", self, *other, site);
    });
  }
  in.define_method("set", "isdisjoint", [as_set](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    auto other = a.positional.empty() ? std::nullopt : as_set(in, a.positional[0], site);
    if (!other) return in.unknown("set.isdisjoint with an argument that could not be evaluated", site);
    Value common = set_algebra("&", static_cast<const DictObj&>(*self.obj), static_cast<const DictObj&>(*other->obj));
    return Value::boolean(static_cast<const DictObj&>(*common.obj).entries.empty());
  });
  in.define_method("set", "remove", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "remove() takes exactly one argument", site);
    if (!static_cast<DictObj*>(self.obj.get())->erase(a.positional[0])) return in.raise("KeyError", repr(a.positional[0]), site);
    return Value::none();
  });
  in.define_method("set", "pop", [](Interpreter& in, const Value& self, Args&, const ir::Span& site) {
    auto* d = static_cast<DictObj*>(self.obj.get());
    if (d->entries.empty()) return in.raise("KeyError", "'pop from an empty set'", site);
    Value item = d->entries.front().first;
    d->erase(item);
    return item;
  });
  in.define_method("set", "copy", [](Interpreter& in, const Value& self, Args&, const ir::Span&) { return shallow_copy(in, self); });
  in.define_method("set", "clear", clear_items);
  in.define_method("float", "is_integer", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return Value::boolean(std::floor(self.f) == self.f);
  });
  in.define_method("int", "bit_length", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return Value::integer(static_cast<int64_t>(self.as_big().bit_length()));
  });

  // Instances of user subclasses of dict keep their items in dict_items; the dict class's
  // methods (reached through super() or inheritance) work on that storage.
  auto dict_class = in.builtin("builtins.dict")->as<ClassObj>();
  auto storage = [](const Value& self) -> Value {
    auto* inst = self.as<InstanceObj>();
    if (!inst) return self;
    if (!inst->dict_items) inst->dict_items = std::make_shared<DictObj>();
    return Value::object(inst->dict_items);
  };
  dict_class->set("__init__", in.native("builtins.dict.__init__", [storage](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = a.positional.empty() ? Value() : a.positional[0];
    Args rest{{a.positional.begin() + (a.positional.empty() ? 0 : 1), a.positional.end()}, a.keywords};
    Value items = dict_from(in, rest, site);
    if (auto* d = items.as<DictObj>()) {
      auto* target = storage(self).as<DictObj>();
      for (auto& kv : d->entries) target->set(kv.first, kv.second);
    }
    return Value::none();
  }));
  dict_class->set("fromkeys", in.native("builtins.dict.fromkeys", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty() || a.positional.size() > 2) return in.raise("TypeError", "fromkeys expected 1 or 2 arguments", site);
    Value why;
    auto keys = in.iterate(a.positional[0], site, &why);
    if (!keys) return why;
    auto d = std::make_shared<DictObj>();
    for (auto& k : *keys) d->set(k, a.positional.size() > 1 ? a.positional[1] : Value::none());
    return Value::object(d);
  }));
  for (const char* m : {"get", "keys", "values", "items", "update", "pop", "setdefault", "copy", "clear"}) {
    std::string name = m;
    dict_class->set(name, in.native("builtins.dict." + name, [name, storage](Interpreter& interp, const Value&, Args& a, const ir::Span& site) {
      Value self = a.positional.empty() ? Value() : a.positional[0];
      Args rest{{a.positional.begin() + (a.positional.empty() ? 0 : 1), a.positional.end()}, a.keywords};
      return (*interp.method("dict", name))(interp, storage(self), rest, site);
    }));
  }
  dict_class->set("__getitem__", in.native("builtins.dict.__getitem__", [storage](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2) return in.raise("TypeError", "__getitem__ takes a key", site);
    const Value* v = storage(a.positional[0]).as<DictObj>()->find(a.positional[1]);
    return v ? *v : in.raise("KeyError", repr(a.positional[1]), site);
  }));
  dict_class->set("__setitem__", in.native("builtins.dict.__setitem__", [storage](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 3) return in.raise("TypeError", "__setitem__ takes a key and a value", site);
    storage(a.positional[0]).as<DictObj>()->set(a.positional[1], a.positional[2]);
    return Value::none();
  }));
  dict_class->set("__delitem__", in.native("builtins.dict.__delitem__", [storage](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2) return in.raise("TypeError", "__delitem__ takes a key", site);
    if (!storage(a.positional[0]).as<DictObj>()->erase(a.positional[1])) return in.raise("KeyError", repr(a.positional[1]), site);
    return Value::none();
  }));
  dict_class->set("__contains__", in.native("builtins.dict.__contains__", [storage](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return Value::boolean(a.positional.size() == 2 && storage(a.positional[0]).as<DictObj>()->find(a.positional[1]) != nullptr);
  }));
  dict_class->set("__len__", in.native("builtins.dict.__len__", [storage](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return Value::integer(static_cast<int64_t>(storage(a.positional[0]).as<DictObj>()->entries.size()));
  }));
  dict_class->set("__iter__", in.native("builtins.dict.__iter__", [storage](Interpreter&, const Value&, Args& a, const ir::Span&) {
    std::vector<Value> keys;
    for (auto& kv : storage(a.positional[0]).as<DictObj>()->entries) keys.push_back(kv.first);
    return make_list(std::move(keys));
  }));
  // object's attribute protocol, reached by super().__getattribute__ / super().__setattr__.
  in.object_base()->set("__getattribute__", in.native("builtins.object.__getattribute__", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2 || !a.positional[1].is_str()) return in.unknown("__getattribute__ arguments", site);
    return in.generic_get_attribute(a.positional[0], a.positional[1].s, site);
  }));
  in.object_base()->set("__setattr__", in.native("builtins.object.__setattr__", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 3 || !a.positional[1].is_str()) return in.unknown("__setattr__ arguments", site);
    in.generic_set_attribute(a.positional[0], a.positional[1].s, a.positional[2], site);
    return Value::none();
  }));
}

void install_copy(Interpreter& in) {
  in.define_native("copy.deepcopy", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "deepcopy() takes an argument", site);
    std::unordered_map<const Object*, Value> memo;
    Value c = deep_copy(in, a.positional[0], memo, site);
    // The copy of a module is created here: give it (and its children) this call's span.
    return c;
  });
  in.define_native("copy.copy", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "copy() takes an argument", site);
    return shallow_copy(in, a.positional[0]);
  });
}

}  // namespace shardlens::python::native
