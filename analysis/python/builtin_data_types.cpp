// dataclasses, collections (OrderedDict, defaultdict, Counter, namedtuple), typing and enum.
#include <algorithm>

#include "python/interpreter.h"
#include "python/native_support.h"
#include "python/numbers.h"

namespace shardlens::python::native {

namespace {

bool is_class_var(const Expr* annotation) {
  if (!annotation) return false;
  const Expr* e = annotation;
  if (e->kind == ExprKind::Subscript) e = e->items[0].get();
  if (e->kind == ExprKind::Name) return e->name == "ClassVar";
  if (e->kind == ExprKind::Attribute) return e->name == "ClassVar";
  if (e->kind == ExprKind::Str) return e->name.rfind("ClassVar", 0) == 0;
  return false;
}

Value dataclass_init(Interpreter& in, const Value&, Args& a, const ir::Span& site) {
  if (a.positional.empty()) return in.raise("TypeError", "__init__ needs self", site);
  Value self = a.positional[0];
  auto* inst = self.as<InstanceObj>();
  if (!inst) return Value::none();
  // An undecorated subclass inherits this __init__ and, as in CPython, the fields of its nearest dataclass base.
  ClassObj* owner = nullptr;
  for (ClassObj* c : inst->cls->mro)
    if (c->is_dataclass) {
      owner = c;
      break;
    }
  if (!owner) return Value::none();
  ClassObj& cls = *owner;
  // field(init=False) fields are not parameters; they take their default (if any) below.
  std::vector<std::string> fields;
  std::vector<std::string> not_init;
  for (auto& f : cls.dataclass_fields) {
    const Value* d = cls.lookup("__dataclass_default_" + f);
    auto* field = d ? d->as<DataclassFieldObj>() : nullptr;
    if (field && !field->init) not_init.push_back(f);
    else fields.push_back(f);
  }
  for (auto& f : not_init) {
    const Value* d = cls.lookup("__dataclass_default_" + f);
    auto* field = d->as<DataclassFieldObj>();
    if (field->default_factory) inst->set_attribute(f, in.call(*field->default_factory, Args{}, site));
    else if (field->default_value) inst->set_attribute(f, *field->default_value);
  }
  if (a.positional.size() - 1 > fields.size())
    return in.raise("TypeError", cls.name + "() takes " + std::to_string(fields.size()) + " positional arguments", site);
  std::vector<bool> set(fields.size(), false);
  for (size_t i = 1; i < a.positional.size(); ++i) {
    inst->set_attribute(fields[i - 1], a.positional[i]);
    set[i - 1] = true;
  }
  for (auto& [k, v] : a.keywords) {
    auto it = std::find(fields.begin(), fields.end(), k);
    if (it == fields.end()) return in.raise("TypeError", cls.name + "() got an unexpected keyword argument '" + k + "'", site);
    size_t idx = static_cast<size_t>(it - fields.begin());
    if (set[idx]) return in.raise("TypeError", cls.name + "() got multiple values for argument '" + k + "'", site);
    inst->set_attribute(k, v);
    set[idx] = true;
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (set[i]) continue;
    const Value* d = cls.lookup("__dataclass_default_" + fields[i]);
    if (!d) return in.raise("TypeError", cls.name + "() missing required argument '" + fields[i] + "'", site);
    if (auto* f = d->as<DataclassFieldObj>()) {
      if (f->default_factory) inst->set_attribute(fields[i], in.call(*f->default_factory, Args{}, site));
      else if (f->default_value) inst->set_attribute(fields[i], *f->default_value);
      else return in.raise("TypeError", cls.name + "() missing required argument '" + fields[i] + "'", site);
    } else {
      inst->set_attribute(fields[i], *d);
    }
  }
  // The generated __init__ ends with __post_init__; a hand-written __init__ does not call it.
  if (inst->cls->lookup("__post_init__")) in.call(in.get_attribute(self, "__post_init__", site), Args{}, site);
  return Value::none();
}

}  // namespace

void install_data_type_modules(Interpreter& in) {
  in.define_native("dataclasses.dataclass", [](Interpreter& in, const Value&, Args& a, const ir::Span&) -> Value {
    if (a.positional.size() == 1 && a.positional[0].as<ClassObj>()) {
      make_dataclass(in, *a.positional[0].as<ClassObj>());
      return a.positional[0];
    }
    // @dataclass(frozen=True, ...): options do not change the fields.
    return in.native("dataclasses.dataclass", [](Interpreter& in, const Value&, Args& b, const ir::Span& site) {
      if (b.positional.size() != 1 || !b.positional[0].as<ClassObj>()) return in.unknown("dataclass() argument", site);
      make_dataclass(in, *b.positional[0].as<ClassObj>());
      return b.positional[0];
    });
  });
  in.define_native("dataclasses.field", [](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    auto f = std::make_shared<DataclassFieldObj>();
    if (const Value* d = a.keyword("default")) f->default_value = *d;
    if (const Value* d = a.keyword("default_factory")) f->default_factory = *d;
    if (const Value* i = a.keyword("init")) f->init = in.truth(*i).value_or(true);
    return Value::object(f);
  });
  in.define_native("dataclasses.asdict", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    auto* inst = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>();
    if (!inst || !inst->cls->is_dataclass) return in.unknown("asdict() of a non-dataclass", site);
    auto d = std::make_shared<DictObj>();
    for (auto& f : inst->cls->dataclass_fields)
      if (Value* v = inst->find_attribute(f)) d->set(Value::str(f), *v);
    return Value::object(d);
  });
  // replace() builds a new instance through __init__ (so __post_init__ runs again), like Python.
  auto replace = [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    auto* inst = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>();
    if (!inst || !inst->cls->is_dataclass) return in.unknown("replace() of a non-dataclass", site);
    Args init;
    for (auto& f : inst->cls->dataclass_fields) {
      const Value* d = inst->cls->lookup("__dataclass_default_" + f);
      if (auto* field = d ? d->as<DataclassFieldObj>() : nullptr; field && !field->init) continue;
      const Value* given = a.keyword(f);
      if (given) init.keywords.emplace_back(f, *given);
      else if (Value* current = inst->find_attribute(f)) init.keywords.emplace_back(f, *current);
    }
    return in.instantiate(inst->cls, std::move(init), site);
  };
  in.define_native("dataclasses.replace", replace);
  in.define_native("dataclasses.__replace_method__", replace);  // namedtuple._replace(self, **changes)
  // fields(class or instance): one Field per field, with its name and default (MISSING modelled as absent).
  auto field_class = in.make_builtin_class("dataclasses.Field", {}, nullptr);
  in.define_native("dataclasses.fields", [field_class](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    ClassObj* cls = a.positional.empty() ? nullptr : a.positional[0].as<ClassObj>();
    if (auto* inst = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>()) cls = inst->cls.get();
    if (!cls || !cls->is_dataclass) return in.raise("TypeError", "must be called with a dataclass type or instance", site);
    std::vector<Value> out;
    for (auto& name : cls->dataclass_fields) {
      Value f = in.instantiate(field_class, Args{}, site);
      auto* field = f.as<InstanceObj>();
      if (!field) return f;
      field->set_attribute("name", Value::str(name));
      for (ClassObj* c : cls->mro)  // the type from the class that declared the field
        if (const Value* notes = c->find("__annotations__"); notes && notes->as<DictObj>())
          if (const Value* type = notes->as<DictObj>()->find_str(name)) {
            field->set_attribute("type", *type);
            break;
          }
      if (const Value* d = cls->lookup("__dataclass_default_" + name)) {
        auto* spec = d->as<DataclassFieldObj>();
        if (!spec) field->set_attribute("default", *d);
        else if (spec->default_value) field->set_attribute("default", *spec->default_value);
      }
      out.push_back(f);
    }
    return make_tuple(std::move(out));
  });
  in.define_native("dataclasses.is_dataclass", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    if (a.positional.empty()) return Value::boolean(false);
    if (auto* c = a.positional[0].as<ClassObj>()) return Value::boolean(c->is_dataclass);
    if (auto* i = a.positional[0].as<InstanceObj>()) return Value::boolean(i->cls->is_dataclass);
    return Value::boolean(false);
  });

  // --- collections ---
  auto ordered_dict = in.make_builtin_class("collections.OrderedDict", {std::static_pointer_cast<ClassObj>(in.builtin("builtins.dict")->obj)}, nullptr);
  ordered_dict->native_new = [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value d = dict_from(in, a, site);
    if (auto* dict = d.as<DictObj>()) dict->ordered = true;
    return d;
  };
  in.define_native("collections.defaultdict", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Args rest{{}, a.keywords};
    if (a.positional.size() > 1) rest.positional.push_back(a.positional[1]);
    Value d = dict_from(in, rest, site);
    if (auto* dict = d.as<DictObj>(); dict && !a.positional.empty() && !a.positional[0].is_none())
      dict->default_factory = std::make_shared<Value>(a.positional[0]);
    return d;
  });
  in.define_native("collections.Counter", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    auto d = std::make_shared<DictObj>();
    d->default_factory = std::make_shared<Value>(*in.builtin("builtins.int"));
    if (!a.positional.empty()) {
      if (auto* src = a.positional[0].as<DictObj>()) {
        for (auto& kv : src->entries) d->set(kv.first, kv.second);
      } else {
        Value why;
        auto items = in.iterate(a.positional[0], site, &why);
        if (!items) return why;
        for (auto& v : *items) {
          const Value* old = d->find(v);
          d->set(v, Value::integer((old ? old->as_int() : 0) + 1));
        }
      }
    }
    for (auto& [k, v] : a.keywords) d->set(Value::str(k), v);
    return Value::object(d);
  });
  in.define_native("collections.namedtuple", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() < 2 || !a.positional[0].is_str()) return in.unknown("namedtuple() arguments", site);
    std::vector<std::string> fields;
    if (a.positional[1].is_str()) {
      std::string s = a.positional[1].s;
      std::replace(s.begin(), s.end(), ',', ' ');
      size_t i = 0;
      while (i < s.size()) {
        while (i < s.size() && s[i] == ' ') ++i;
        size_t j = i;
        while (j < s.size() && s[j] != ' ') ++j;
        if (j > i) fields.push_back(s.substr(i, j - i));
        i = j;
      }
    } else if (auto items = in.iterate(a.positional[1], site)) {
      for (auto& v : *items)
        if (v.is_str()) fields.push_back(v.s);
    }
    auto cls = std::make_shared<ClassObj>();
    in.track(cls);
    cls->name = cls->qualname = a.positional[0].s;
    cls->bases.push_back(in.object_base());
    cls->mro = {cls.get(), in.object_base().get()};
    cls->is_dataclass = true;
    cls->dataclass_fields = fields;
    if (const Value* d = a.keyword("defaults"))
      if (auto items = in.iterate(*d, site))
        for (size_t k = 0; k < items->size() && k < fields.size(); ++k)
          cls->set("__dataclass_default_" + fields[fields.size() - items->size() + k], (*items)[k]);
    cls->set("__init__", in.native(cls->name + ".__init__", dataclass_init));
    cls->set("_replace", *in.builtin("dataclasses.__replace_method__"));
    return Value::object(cls);
  });

  // --- typing ---
  for (const char* n : {"Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Callable", "Type",
                        "Sequence", "Iterable", "Iterator", "Mapping", "MutableMapping", "Literal", "ClassVar", "Final",
                        "Generic", "Protocol", "TypeVar", "Annotated", "NamedTuple", "TypedDict", "Self", "_GenericAlias"})
    in.make_builtin_class(std::string("typing.") + n, {}, nullptr);
  in.define("typing.TYPE_CHECKING", Value::boolean(false));
  for (const char* n : {"Sequence", "MutableSequence", "Mapping", "MutableMapping", "Iterable", "Iterator", "Collection",
                        "Sized", "Container", "Callable"})
    in.make_builtin_class(std::string("collections.abc.") + n, {}, nullptr);
  in.define_native("typing.cast", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return a.positional.size() == 2 ? a.positional[1] : Value::none();
  });
  in.define_native("typing.TypeVar", [](Interpreter& in, const Value&, Args&, const ir::Span& site) { return in.unknown("TypeVar", site); });

  // --- enum: members are made when a subclass of Enum is defined (Interpreter::make_enum) ---
  auto enum_class = in.make_builtin_class("enum.Enum", {}, nullptr);
  in.define("enum.IntEnum", Value::object(in.make_builtin_class("enum.IntEnum", {std::static_pointer_cast<ClassObj>(in.builtin("builtins.int")->obj), enum_class}, nullptr)));
  in.define("enum.StrEnum", Value::object(in.make_builtin_class("enum.StrEnum", {std::static_pointer_cast<ClassObj>(in.builtin("builtins.str")->obj), enum_class}, nullptr)));
  in.define("enum.Flag", Value::object(enum_class));
  in.define_native("enum.auto", [](Interpreter&, const Value&, Args&, const ir::Span&) {
    auto marker = std::make_shared<DtypeObj>();  // replaced by the next integer when the Enum is made
    marker->name = "enum.auto";
    return Value::object(marker);
  });
  in.define_native("enum.unique", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return a.positional.empty() ? Value::none() : a.positional[0];
  });
}

}  // namespace shardlens::python::native

namespace shardlens::python {

void make_dataclass(Interpreter& in, ClassObj& cls, bool) {
  using native::is_class_var, native::dataclass_init;
  cls.is_dataclass = true;
  cls.dataclass_fields.clear();
  for (auto it = cls.mro.rbegin(); it != cls.mro.rend(); ++it) {
    ClassObj* base = *it;
    if (base == &cls) continue;
    if (base->is_dataclass)
      for (auto& f : base->dataclass_fields)
        if (std::find(cls.dataclass_fields.begin(), cls.dataclass_fields.end(), f) == cls.dataclass_fields.end())
          cls.dataclass_fields.push_back(f);
  }
  auto declare = [&cls](const std::string& name) {
    if (std::find(cls.dataclass_fields.begin(), cls.dataclass_fields.end(), name) == cls.dataclass_fields.end())
      cls.dataclass_fields.push_back(name);
    if (const Value* v = cls.find(name)) {
      Value d = *v;
      cls.set("__dataclass_default_" + name, d);
      if (auto* f = d.as<DataclassFieldObj>()) {
        if (f->default_value) cls.set(name, *f->default_value);
      }
    }
  };
  if (cls.def) {
    for (const auto& stmt : cls.def->body) {
      if (!stmt || stmt->kind != StmtKind::AnnAssign || stmt->targets.empty()) continue;
      if (stmt->targets[0]->kind != ExprKind::Name || is_class_var(stmt->annotation.get())) continue;
      declare(stmt->targets[0]->name);
    }
  } else if (const Value* annotations = cls.find("__annotations__"); annotations && annotations->as<DictObj>()) {
    // A class made by type(name, bases, {"__annotations__": {...}, ...}): the fields are the dict's keys.
    for (auto& entry : annotations->as<DictObj>()->entries)
      if (entry.first.is_str()) declare(entry.first.s);
  }
  if (!cls.find("__init__")) cls.set("__init__", in.native(cls.name + ".__init__", dataclass_init));
  bool named_tuple = false;
  for (ClassObj* c : cls.mro) named_tuple |= c->qualname == "typing.NamedTuple";
  if (named_tuple) cls.set("_replace", *in.builtin("dataclasses.__replace_method__"));
}

}  // namespace shardlens::python
