// Python's built-in functions (abs, zip, sorted, isinstance, getattr, super, property, eval, ...),
// and install_python_builtins, which installs them with the built-in types, their methods and the
// standard-library modules model code uses while building modules, by area (native_support.h).
#include <algorithm>
#include <cmath>
#include <map>

#include "python/interpreter.h"
#include "python/native_support.h"
#include "python/numbers.h"

namespace shardlens::python::native {

namespace {

bool matches_type(Interpreter& in, const Value& v, const Value& type) {
  if (auto* l = TupleView::of(type)) {
    for (auto& t : l->items)
      if (matches_type(in, v, t)) return true;
    return false;
  }
  // `type` is a native function here (type(x) and type(name, bases, dict)); isinstance(C, type)
  // asks whether C is a class (Megatron's build_module tells specs, classes and functions apart so).
  if (auto* n = type.as<NativeObj>(); n && n->name == "builtins.type") return v.as<ClassObj>() != nullptr;
  auto* cls = type.as<ClassObj>();
  if (!cls) return false;
  if (auto* inst = v.as<InstanceObj>()) return inst->cls->derives_from(cls);
  const std::string& q = cls->qualname;
  if (q == "builtins.object") return true;
  if (q == "builtins.int") return v.is_int();
  if (q == "builtins.bool") return v.kind == Value::Kind::Bool;
  if (q == "builtins.float") return v.kind == Value::Kind::Float;
  if (q == "builtins.str") return v.is_str();
  if (q == "builtins.list") return v.as<ListObj>() != nullptr;
  if (q == "builtins.tuple") return v.kind == Value::Kind::Obj && v.obj->kind == ObjKind::Tuple;
  if (q == "builtins.dict") return v.as<DictObj>() != nullptr;
  if (q == "collections.OrderedDict") return v.as<DictObj>() && v.as<DictObj>()->ordered;
  if (q == "builtins.set" || q == "builtins.frozenset") return v.kind == Value::Kind::Obj && v.obj->kind == ObjKind::Set;
  if (q == "builtins.type") return v.as<ClassObj>() != nullptr;
  if (q == "builtins.slice") return v.as<SliceObj>() != nullptr;
  if (q == "builtins.NoneType") return v.is_none();  // isinstance(x, (type(None), Cache)) in transformers
  // An abstract class that Python registers built-in types with (numbers.Integral: int and bool)
  // says so in the library model: `__shardlens_registered__ = ("int", "bool")` (library/numbers.py).
  if (const Value* reg = cls->lookup("__shardlens_registered__"))
    if (auto* names = TupleView::of(*reg)) {
      std::string t = type_name(v);
      for (auto& n : names->items)
        if (n.is_str() && n.s == t) return true;
    }
  // The abstract base classes of collections.abc (and typing's aliases of them).
  bool sequence = v.is_str() || TupleView::of(v) || v.as<RangeObj>();
  bool mapping = v.as<DictObj>() != nullptr;
  bool collection = sequence || mapping || (v.kind == Value::Kind::Obj && v.obj->kind == ObjKind::Set);
  std::string abc = q.substr(q.rfind('.') + 1);
  if (q.rfind("collections.abc.", 0) == 0 || q.rfind("typing.", 0) == 0) {
    if (abc == "Sequence") return sequence;
    if (abc == "MutableSequence") return v.as<ListObj>() != nullptr;
    if (abc == "Mapping" || abc == "MutableMapping") return mapping;
    if (abc == "Iterable" || abc == "Collection" || abc == "Sized" || abc == "Container") return collection || v.as<TensorObj>();
    if (abc == "Callable") return v.kind == Value::Kind::Obj && (v.obj->kind == ObjKind::Function || v.obj->kind == ObjKind::Native ||
                                                                v.obj->kind == ObjKind::Class || v.obj->kind == ObjKind::BoundMethod ||
                                                                v.obj->kind == ObjKind::Partial);
  }
  if (auto* t = v.as<TensorObj>()) return q == "torch.Tensor" || (t->is_parameter && q == "torch.nn.Parameter");
  if (v.as<PartialObj>()) return q == "functools.partial";
  (void)in;
  return false;
}

Value min_max(Interpreter& in, Args& a, const ir::Span& site, bool want_max) {
  std::vector<Value> items;
  // A range's ends, without listing it: max(range(-(2**63), 0)) is -1, not 2**63 items.
  if (auto* r = a.positional.size() == 1 && !a.keyword("key") ? a.positional[0].as<RangeObj>() : nullptr; r && r->size() > 0) {
    // In 128 bits: size() saturates at INT64_MAX, and this range has 2**63 items.
    __int128 span = static_cast<__int128>(r->stop) - r->start + (r->step > 0 ? -1 : 1);
    auto last = static_cast<int64_t>(r->start + span / r->step * r->step);  // within [start, stop)
    return Value::integer(want_max == (r->step > 0) ? last : r->start);
  }
  if (a.positional.size() == 1) {
    Value why;
    auto seq = in.iterate(a.positional[0], site, &why);
    if (!seq) return why.is_unknown() ? why : in.unknown("min/max argument", site);
    items = *seq;
  } else {
    items = a.positional;
  }
  const Value* key = a.keyword("key");
  if (items.empty()) {
    if (const Value* d = a.keyword("default")) return *d;
    return in.raise("ValueError", std::string(want_max ? "max" : "min") + "() arg is an empty sequence", site);
  }
  Value best = items[0];
  Value best_key = key ? in.call(*key, Args{{best}, {}}, site) : best;
  for (size_t i = 1; i < items.size(); ++i) {
    Value k = key ? in.call(*key, Args{{items[i]}, {}}, site) : items[i];
    // Python's own ordering (numbers, strings, tuples); the first of equal items wins.
    auto better = in.truth(in.compare(want_max ? ">" : "<", k, best_key, site));
    if (!better) return k.is_unknown() ? k : best_key.is_unknown() ? best_key : in.unknown("min/max of values that are not comparable", site);
    if (*better) {
      best = items[i];
      best_key = k;
    }
  }
  return best;
}

// type(name, bases, namespace): the class a class statement with that body would make.
Value new_type(Interpreter& in, Args& a, const ir::Span& site) {
  const Value& name = a.positional[0];
  auto* members = a.positional[2].as<DictObj>();
  if (!name.is_str() || !members) return in.raise("TypeError", "type(name, bases, dict) takes a str, a tuple and a dict", site);
  Value why;
  auto bases = in.iterate(a.positional[1], site, &why);
  if (!bases) return why;
  auto cls = in.new_class(name.s, *bases);
  cls->span = site;
  for (auto& [key, member] : members->entries) {
    if (!key.is_str()) return in.raise("TypeError", "type() namespace keys must be strings", site);
    in.set_class_member(*cls, key.s, member);
  }
  in.finish_class(*cls);
  return Value::object(cls);
}

}  // namespace

NativeFn decorator(ObjKind kind) {
  return [kind](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "decorator needs a function", site);
    auto w = std::make_shared<WrapperObj>(kind);
    w->function = a.positional[0];
    return Value::object(w);
  };
}

void install_builtin_functions(Interpreter& in) {
  auto def = [&](const std::string& name, NativeFn fn) { in.define_native("builtins." + name, std::move(fn)); };
  def("abs", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "abs() takes one argument", site);
    const Value& v = a.positional[0];
    if (auto r = number_abs(v)) return in.number_result(*r, site);
    return v.is_unknown() ? v : in.unknown("abs() of " + type_name(v), site);
  });
  def("round", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "round() takes at least one argument", site);
    const Value& v = a.positional[0];
    if (v.is_unknown()) return v;
    const Value* nd = argument(a, 1, "ndigits");
    if (!nd || nd->is_none()) {
      if (v.is_integral()) return to_int(in, v, site);
      return in.number_result(int_from_float(std::nearbyint(v.as_float())), site);  // banker's rounding
    }
    if (!nd->is_int() || !v.is_number()) return in.unknown("round() with these arguments", site);
    double scale = std::pow(10.0, static_cast<double>(nd->as_int()));
    return Value::floating(std::nearbyint(v.as_float() * scale) / scale);
  });
  def("min", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) { return min_max(in, a, site, false); });
  def("max", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) { return min_max(in, a, site, true); });
  def("sum", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "sum() takes at least one argument", site);
    Value why;
    auto items = in.iterate(a.positional[0], site, &why);
    if (!items) return why;
    Value total = a.positional.size() > 1 ? a.positional[1] : Value::integer(0);
    if (const Value* s = a.keyword("start")) total = *s;
    for (auto& v : *items) total = in.binary("+", total, v, site);
    return total;
  });
  def("divmod", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2) return in.raise("TypeError", "divmod expected 2 arguments", site);
    return make_tuple({in.binary("//", a.positional[0], a.positional[1], site), in.binary("%", a.positional[0], a.positional[1], site)});
  });
  def("pow", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() < 2) return in.raise("TypeError", "pow expected 2 arguments", site);
    return in.binary("**", a.positional[0], a.positional[1], site);
  });
  def("enumerate", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "enumerate() missing iterable", site);
    Value why;
    auto items = in.iterate(a.positional[0], site, &why);
    if (!items) return why;
    const Value* start_v = argument(a, 1, "start");
    int64_t start = start_v && start_v->is_int() ? start_v->as_int() : 0;
    std::vector<Value> out;
    for (size_t i = 0; i < items->size(); ++i) out.push_back(make_tuple({Value::integer(start + static_cast<int64_t>(i)), (*items)[i]}));
    return make_list(std::move(out));
  });
  def("zip", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto iterated = items_of_each(in, a.positional, site, &why);
    if (!iterated) return why;
    std::vector<std::vector<Value>> seqs = std::move(*iterated);
    std::vector<Value> out;
    size_t n = seqs.empty() ? 0 : SIZE_MAX;
    for (auto& s : seqs) n = std::min(n, s.size());
    for (size_t i = 0; i < n; ++i) {
      std::vector<Value> t;
      for (auto& s : seqs) t.push_back(s[i]);
      out.push_back(make_tuple(std::move(t)));
    }
    return make_list(std::move(out));
  });
  def("map", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() < 2) return in.raise("TypeError", "map() needs a function and an iterable", site);
    Value why;
    auto iterated = items_of_each(in, std::span<const Value>(a.positional).subspan(1), site, &why);
    if (!iterated) return why;
    std::vector<std::vector<Value>> seqs = std::move(*iterated);
    size_t n = SIZE_MAX;
    for (auto& s : seqs) n = std::min(n, s.size());
    std::vector<Value> out;
    for (size_t i = 0; i < n; ++i) {
      Args call_args;
      for (auto& s : seqs) call_args.positional.push_back(s[i]);
      out.push_back(in.call(a.positional[0], std::move(call_args), site));
    }
    return make_list(std::move(out));
  });
  def("filter", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto items = items_after_function(in, a, "filter() needs a function and an iterable", site, &why);
    if (!items) return why;
    std::vector<Value> out;
    for (auto& v : *items) {
      Value keep = a.positional[0].is_none() ? v : in.call(a.positional[0], Args{{v}, {}}, site);
      auto t = in.truth(keep);
      if (!t) return in.unknown("filter predicate could not be evaluated", site);
      if (*t) out.push_back(v);
    }
    return make_list(std::move(out));
  });
  def("reversed", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "reversed() takes one argument", site);
    Value why;
    auto items = in.iterate(a.positional[0], site, &why);
    if (!items) return why;
    std::reverse(items->begin(), items->end());
    return make_list(std::move(*items));
  });
  def("sorted", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "sorted() takes one argument", site);
    Value why;
    auto items = in.iterate(a.positional[0], site, &why);
    if (!items) return why;
    const Value* key = a.keyword("key");
    const Value* rev = a.keyword("reverse");
    std::vector<std::pair<Value, Value>> keyed;
    for (auto& v : *items) keyed.emplace_back(key && !key->is_none() ? in.call(*key, Args{{v}, {}}, site) : v, v);
    bool comparable = true;
    std::stable_sort(keyed.begin(), keyed.end(), [&](auto& x, auto& y) {
      auto less = in.truth(in.compare("<", x.first, y.first, site));
      if (!less) comparable = false;
      return less.value_or(false);
    });
    if (!comparable) return in.unknown("sorted() of values that are not modelled as comparable", site);
    std::vector<Value> out;
    for (auto& kv : keyed) out.push_back(kv.second);
    if (rev && in.truth(*rev).value_or(false)) std::reverse(out.begin(), out.end());
    return make_list(std::move(out));
  });
  // any() stops at the first true item, all() at the first false one.
  for (bool want : {true, false}) {
    std::string name = want ? "any" : "all";
    def(name, [want, name](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value why;
      auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
      if (!items) return why;
      for (auto& v : *items) {
        auto t = in.truth(v);
        if (!t) return in.unknown(name + "() over unknown values", site);
        if (*t == want) return Value::boolean(want);
      }
      return Value::boolean(!want);
    });
  }
  def("isinstance", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2) return in.raise("TypeError", "isinstance expected 2 arguments", site);
    if (a.positional[0].is_unknown()) return a.positional[0];
    if (a.positional[1].is_unknown()) return a.positional[1];
    return Value::boolean(matches_type(in, a.positional[0], a.positional[1]));
  });
  def("issubclass", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2) return in.raise("TypeError", "issubclass expected 2 arguments", site);
    auto* c = a.positional[0].as<ClassObj>();
    if (!c) return in.unknown("issubclass() of a non-class", site);
    std::vector<Value> types;
    if (auto* l = TupleView::of(a.positional[1])) types = l->items; else types.push_back(a.positional[1]);
    for (auto& t : types)
      if (auto* tc = t.as<ClassObj>(); tc && c->derives_from(tc)) return Value::boolean(true);
    return Value::boolean(false);
  });
  def("callable", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    if (a.positional.empty()) return Value::boolean(false);
    const Value& v = a.positional[0];
    if (v.is_unknown()) return v;
    if (v.kind != Value::Kind::Obj) return Value::boolean(false);
    switch (v.obj->kind) {
      case ObjKind::Function: case ObjKind::BoundMethod: case ObjKind::Native: case ObjKind::Class: case ObjKind::Partial:
        return Value::boolean(true);
      case ObjKind::Instance: return Value::boolean(static_cast<InstanceObj*>(v.obj.get())->module != nullptr ||
                                                    static_cast<InstanceObj*>(v.obj.get())->cls->lookup("__call__") != nullptr);
      default: return Value::boolean(false);
    }
  });
  def("getattr", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() < 2) return in.raise("TypeError", "getattr expected at least 2 arguments", site);
    if (!a.positional[1].is_str()) return a.positional[1].is_unknown() ? a.positional[1] : in.raise("TypeError", "attribute name must be string", site);
    Value v = in.get_attribute(a.positional[0], a.positional[1].s, site);
    if (a.positional.size() > 2 && in.take_exception("AttributeError")) return a.positional[2];
    // getattr(nn, "QuickGELU", fallback): torch.nn's classes are all modelled, so a name it
    // does not have takes the fallback, as under the torch this was checked against.
    if (auto* ns = a.positional[0].as<NamespaceObj>(); ns && a.positional.size() > 2 && v.is_unknown() &&
                                                       (ns->qualname == "torch.nn" || ns->qualname == "torch.nn.functional"))
      return a.positional[2];
    return v;
  });
  def("hasattr", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2 || !a.positional[1].is_str()) return in.unknown("hasattr() arguments", site);
    if (a.positional[0].is_unknown()) return a.positional[0];
    Value v = in.get_attribute(a.positional[0], a.positional[1].s, site);
    if (in.take_exception("AttributeError")) return Value::boolean(false);
    if (v.is_unknown()) return v;
    return Value::boolean(true);
  });
  def("setattr", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 3) return in.raise("TypeError", "setattr expected 3 arguments", site);
    if (!a.positional[1].is_str()) return in.unknown("setattr() with an unknown name", site);
    in.set_attribute(a.positional[0], a.positional[1].s, a.positional[2], site);
    return Value::none();
  });
  def("delattr", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() == 2 && a.positional[1].is_str()) in.delete_attribute(a.positional[0], a.positional[1].s, site);
    return Value::none();
  });
  def("type", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() == 3) return new_type(in, a, site);
    if (a.positional.size() != 1) return in.raise("TypeError", "type() takes 1 or 3 arguments", site);
    const Value& v = a.positional[0];
    if (auto* inst = v.as<InstanceObj>()) return Value::object(inst->cls);
    if (v.is_unknown()) return v;
    static const std::map<std::string, std::string> names = {
        {"int", "builtins.int"}, {"bool", "builtins.bool"}, {"float", "builtins.float"}, {"str", "builtins.str"},
        {"list", "builtins.list"}, {"tuple", "builtins.tuple"}, {"dict", "builtins.dict"}, {"set", "builtins.set"},
        {"functools.partial", "functools.partial"}, {"type", "builtins.type"}, {"NoneType", "builtins.NoneType"}, {"slice", "builtins.slice"},
        {"Tensor", "torch.Tensor"}, {"Parameter", "torch.nn.Parameter"}};
    auto it = names.find(type_name(v));
    if (it != names.end())
      if (const Value* t = in.builtin(it->second)) return *t;
    return in.unknown("type() of " + type_name(v), site);
  });
  def("id", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty() || a.positional[0].kind != Value::Kind::Obj) return in.unknown("id()", site);
    return Value::integer(static_cast<int64_t>(reinterpret_cast<uintptr_t>(a.positional[0].obj.get())));
  });
  def("hash", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.unknown("hash()", site);
    return Value::integer(static_cast<int64_t>(std::hash<std::string>()(key_of(a.positional[0])) & 0x7fffffffffffLL));
  });
  def("iter", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    return items ? make_list(std::move(*items)) : why;
  });
  def("next", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "next() takes an iterator", site);
    if (auto* l = a.positional[0].as<ListObj>()) {
      if (l->items.empty()) return a.positional.size() > 1 ? a.positional[1] : in.raise("StopIteration", "", site);
      Value v = l->items.front();
      l->items.erase(l->items.begin());
      if (l->endless) l->items.push_back(v);
      return v;
    }
    return in.unknown("next() of " + type_name(a.positional[0]), site);
  });
  def("vars", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.unknown("vars() without argument", site);
    return in.get_attribute(a.positional[0], "__dict__", site);
  });
  def("format", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "format() takes at least one argument", site);
    std::string spec = a.positional.size() > 1 && a.positional[1].is_str() ? a.positional[1].s : "";
    bool ok = true;
    std::string s = spec.empty() ? in.to_str(a.positional[0]) : format_with_spec(in, a.positional[0], spec, ok);
    return ok ? Value::str(s) : in.raise("ValueError", "invalid format spec", site);
  });
  def("super", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    // super(Class, obj); the zero-argument form is handled by the interpreter.
    if (a.positional.size() != 2) return in.unknown("super() form not modelled", site);
    auto* c = a.positional[0].as<ClassObj>();
    if (!c) return in.unknown("super() of an unknown class", site);
    auto sup = std::make_shared<SuperObj>();
    sup->after = c;
    sup->self = a.positional[1];
    return Value::object(sup);
  });
  def("property", decorator(ObjKind::Property));
  def("staticmethod", decorator(ObjKind::StaticMethod));
  def("classmethod", decorator(ObjKind::ClassMethod));
  def("open", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    return in.unknown("files are not read during static analysis", site);
  });
  def("globals", [](Interpreter& in, const Value&, Args&, const ir::Span&) {
    // A snapshot: reading through it works; writing through it does not reach the module.
    auto d = std::make_shared<DictObj>();
    for (const auto& name : in.global_order()) {
      auto it = in.globals().vars.find(name);
      if (it != in.globals().vars.end()) d->set(Value::str(name), it->second);
    }
    return Value::object(d);
  });
  def("eval", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    // eval("nn.Conv2d") / eval("nc") in config-driven builders (YOLO's parse_model): a literal
    // expression is evaluated in the caller's scope; explicit globals/locals are not modelled.
    if (a.positional.size() != 1 || !a.positional[0].is_str())
      return in.unknown("eval() with explicit namespaces or a non-string is not evaluated statically", site, true);
    return in.evaluate_source(a.positional[0].s, site);
  });
  for (const char* name : {"exec", "compile", "__import__", "input", "locals"}) {
    std::string n = name;
    def(n, [n](Interpreter& in, const Value&, Args&, const ir::Span& site) {
      return in.unknown(n + "() is not evaluated statically", site, true);
    });
  }
}

}  // namespace shardlens::python::native

namespace shardlens::python {

void install_python_builtins(Interpreter& in) {
  for (auto* install : {native::install_builtin_types, native::install_builtin_functions, native::install_str_methods,
                        native::install_container_methods, native::install_math, native::install_copy,
                        native::install_functional_modules, native::install_data_type_modules,
                        native::install_script_environment})
    install(in);
}

}  // namespace shardlens::python
