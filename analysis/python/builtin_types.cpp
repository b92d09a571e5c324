// Python's exceptions, object, and the built-in types (int, float, str, bool, list, tuple, set,
// dict, slice) as classes that convert when called; print, len and range are registered among them.
#include <cmath>

#include "python/interpreter.h"
#include "python/native_support.h"
#include "python/numbers.h"

namespace shardlens::python::native {

namespace {

// int(text, base): Python's literal rules, exact at any size.
Value int_from_text(Interpreter& in, const Value& v, int base, const ir::Span& site) {
  std::string t = v.s;
  t.erase(std::remove(t.begin(), t.end(), '_'), t.end());
  size_t b = t.find_first_not_of(" \t\n"), e = t.find_last_not_of(" \t\n");
  t = b == std::string::npos ? "" : t.substr(b, e - b + 1);
  bool negative = !t.empty() && t[0] == '-';
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.erase(0, 1);
  if (t.size() > 1 && t[0] == '0' && (base == 0 || base == 16 || base == 8 || base == 2)) {
    char k = static_cast<char>(t[1] | 0x20);
    int prefixed = k == 'x' ? 16 : k == 'o' ? 8 : k == 'b' ? 2 : 0;
    if (prefixed && (base == 0 || base == prefixed)) { base = prefixed; t.erase(0, 2); }
  }
  if (base == 0) base = 10;
  auto n = ir::BigInt::parse(t, base);
  if (!n) return in.raise("ValueError", "invalid literal for int() with base " + std::to_string(base) + ": " + repr(v), site);
  if (n->bit_length() > kMaxIntBits) return in.unknown("int() of a number beyond the " + std::to_string(kMaxIntBits) + "-bit limit", site);
  return Value::big_integer(negative ? -*n : *n);
}

std::optional<int64_t> length(Interpreter& in, const Value& v, const ir::Span& site) {
  if (v.is_str()) return static_cast<int64_t>(v.s.size());
  if (auto* l = TupleView::of(v)) return static_cast<int64_t>(l->items.size());
  if (v.kind == Value::Kind::Obj && (v.obj->kind == ObjKind::Dict || v.obj->kind == ObjKind::Set))
    return static_cast<int64_t>(static_cast<DictObj*>(v.obj.get())->entries.size());
  if (auto* r = v.as<RangeObj>()) return r->size();
  if (auto* t = v.as<TensorObj>()) {
    if (t->shape && !t->shape->empty()) return (*t->shape)[0];
    return std::nullopt;
  }
  if (v.as<InstanceObj>()) {
    Value fn = in.get_attribute(v, "__len__", site);
    if (in.exception_pending()) { in.take_exception("AttributeError"); return std::nullopt; }
    Value n = in.call(fn, Args{}, site);
    if (n.is_int()) return n.as_int();
  }
  return std::nullopt;
}

}  // namespace

Value to_int(Interpreter& in, const Value& v, const ir::Span& site) {
  if (v.is_unknown()) return v;
  if (v.is_integral()) return v.kind == Value::Kind::Bool ? Value::integer(v.as_int()) : v;
  if (v.kind == Value::Kind::Float) return in.number_result(int_from_float(v.f), site);
  if (v.is_str()) return int_from_text(in, v, 10, site);
  if (auto* t = v.as<TensorObj>()) {
    if (t->values && t->values->size() == 1) return in.number_result(int_from_float((*t->values)[0]), site);
    return in.unknown("int() of a tensor whose value is not known statically", site);
  }
  return in.raise("TypeError", "int() argument must be a string or a number, not '" + type_name(v) + "'", site);
}

Value to_float(Interpreter& in, const Value& v, const ir::Span& site) {
  if (v.is_unknown()) return v;
  if (v.is_integral()) return in.number_result(float_from_int(v), site);
  if (v.is_number()) return Value::floating(v.as_float());
  if (v.is_str()) {
    std::string t = v.s;
    for (auto& c : t) c = static_cast<char>(tolower(c));
    if (t == "inf" || t == "+inf" || t == "infinity") return Value::floating(INFINITY);
    if (t == "-inf") return Value::floating(-INFINITY);
    if (t == "nan") return Value::floating(NAN);
    char* end = nullptr;
    double d = std::strtod(v.s.c_str(), &end);
    if (v.s.empty() || (end && *end)) return in.raise("ValueError", "could not convert string to float: " + repr(v), site);
    return Value::floating(d);
  }
  if (auto* t = v.as<TensorObj>(); t && t->values && t->values->size() == 1) return Value::floating((*t->values)[0]);
  return in.unknown("float() of " + type_name(v), site);
}

Value dict_from(Interpreter& in, Args& a, const ir::Span& site) {
  auto d = std::make_shared<DictObj>();
  if (!a.positional.empty()) {
    const Value& src = a.positional[0];
    if (src.is_unknown()) return src;
    if (auto* other = src.as<DictObj>()) {
      for (auto& kv : other->entries) d->set(kv.first, kv.second);
    } else if (auto* inst = src.as<InstanceObj>(); inst && !inst->module) {
      // e.g. dict(config) of a mapping-like object: not modelled
      return in.unknown("dict() of a " + inst->cls->name + " object", site);
    } else {
      Value why;
      auto items = in.iterate(src, site, &why);
      if (!items) return why.is_unknown() ? why : in.unknown("dict() argument", site);
      for (auto& item : *items) {
        auto* pair = TupleView::of(item);
        if (!pair || pair->items.size() != 2) return in.raise("ValueError", "dictionary update sequence element has wrong length", site);
        d->set(pair->items[0], pair->items[1]);
      }
    }
  }
  for (auto& [k, v] : a.keywords) d->set(Value::str(k), v);
  return Value::object(d);
}

void install_builtin_types(Interpreter& in) {
  auto def = [&](const std::string& name, NativeFn fn) { in.define_native("builtins." + name, std::move(fn)); };
  // Built-in types are classes (model code subclasses dict, and isinstance needs them); calling
  // one converts, as in Python.
  auto type_def = [&](const std::string& name, NativeFn fn) {
    auto cls = in.make_builtin_class("builtins." + name, {}, nullptr);
    cls->native_new = std::move(fn);
    return cls;
  };

  // Exceptions, with Python's hierarchy so that `except LookupError` catches KeyError.
  auto base_exc = in.make_builtin_class("builtins.BaseException", {}, nullptr);
  base_exc->is_exception = true;
  auto exc = in.make_builtin_class("builtins.Exception", {base_exc}, nullptr);
  auto lookup = in.make_builtin_class("builtins.LookupError", {exc}, nullptr);
  auto arith = in.make_builtin_class("builtins.ArithmeticError", {exc}, nullptr);
  auto runtime = in.make_builtin_class("builtins.RuntimeError", {exc}, nullptr);
  auto import_error = in.make_builtin_class("builtins.ImportError", {exc}, nullptr);
  auto value_error = in.make_builtin_class("builtins.ValueError", {exc}, nullptr);
  for (auto& [name, base] : std::vector<std::pair<std::string, std::shared_ptr<ClassObj>>>{
           {"KeyError", lookup}, {"IndexError", lookup}, {"ZeroDivisionError", arith}, {"OverflowError", arith},
           {"NotImplementedError", runtime}, {"RecursionError", runtime}, {"ModuleNotFoundError", import_error}, {"TypeError", exc},
           {"AttributeError", exc}, {"AssertionError", exc}, {"StopIteration", exc}, {"NameError", exc},
           {"OSError", exc}, {"UnicodeError", value_error}, {"Warning", exc}, {"UserWarning", exc},
           {"DeprecationWarning", exc}, {"KeyboardInterrupt", base_exc}, {"SystemExit", base_exc}})
    in.make_builtin_class("builtins." + name, {base}, nullptr);
  in.define("builtins.object", Value::object(in.object_base()));
  in.make_builtin_class("builtins.type", {}, nullptr);
  in.make_builtin_class("builtins.NoneType", {}, nullptr);
  // object.__init__ / nn.Module.__init__ called explicitly (`nn.Module.__init__(self)`).
  auto no_op_init = [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::none(); };
  in.object_base()->set("__init__", in.native("builtins.object.__init__", no_op_init));
  in.module_base()->set("__init__", in.native("torch.nn.Module.__init__", no_op_init));
  in.object_base()->set("__init_subclass__", in.native("builtins.object.__init_subclass__", no_op_init));
  for (const char* t : {"@int", "@float", "@bool"}) {
    in.define_method(t, "real", [](Interpreter&, const Value& self, Args&, const ir::Span&) { return self; });
    in.define_method(t, "imag", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
      return self.kind == Value::Kind::Float ? Value::floating(0) : Value::integer(0);
    });
  }
  in.define("builtins.NotImplemented", in.unknown("NotImplemented", {}));
  in.define("builtins.Ellipsis", Value::ellipsis());
  in.define("builtins.__debug__", Value::boolean(true));
  in.define("builtins.__file__", Value::str("<script>"));

  def("print", [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::none(); });
  def("len", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 1) return in.raise("TypeError", "len() takes exactly one argument", site);
    if (a.positional[0].is_unknown()) return a.positional[0];
    if (auto n = length(in, a.positional[0], site)) return Value::integer(*n);
    return in.unknown("len() of " + type_name(a.positional[0]), site);
  });
  def("range", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (auto* u = first_unknown_arg(a)) return *u;
    for (auto& v : a.positional)
      if (v.kind == Value::Kind::BigInt) return in.unknown("a range with bounds beyond 64 bits", site);
    for (auto& v : a.positional)
      if (!v.is_int()) return in.raise("TypeError", "'" + type_name(v) + "' object cannot be interpreted as an integer", site);
    auto r = std::make_shared<RangeObj>();
    if (a.positional.size() == 1) r->stop = a.positional[0].as_int();
    else if (a.positional.size() >= 2) {
      r->start = a.positional[0].as_int();
      r->stop = a.positional[1].as_int();
      if (a.positional.size() == 3) r->step = a.positional[2].as_int();
      if (r->step == 0) return in.raise("ValueError", "range() arg 3 must not be zero", site);
    }
    return Value::object(r);
  });
  // slice(stop) / slice(start, stop[, step]): what `a[start:stop:step]` builds (HF's
  // `hidden_states[:, slice(-logits_to_keep, None), :]`).
  type_def("slice", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty() || a.positional.size() > 3 || !a.keywords.empty())
      return in.raise("TypeError", "slice expected 1 to 3 arguments", site);
    auto s = std::make_shared<SliceObj>();
    if (a.positional.size() == 1) s->upper = a.positional[0];
    else {
      s->lower = a.positional[0];
      s->upper = a.positional[1];
      if (a.positional.size() == 3) s->step = a.positional[2];
    }
    return Value::object(s);
  });
  type_def("int", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return Value::integer(0);
    if (a.positional.size() == 2 && a.positional[0].is_str() && a.positional[1].is_int()) {
      int64_t base = a.positional[1].as_int();
      if (base != 0 && base != 2 && base != 8 && base != 10 && base != 16) return in.unknown("int() with base " + std::to_string(base), site);
      return int_from_text(in, a.positional[0], static_cast<int>(base), site);
    }
    return to_int(in, a.positional[0], site);
  });
  type_def("float", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    return a.positional.empty() ? Value::floating(0) : to_float(in, a.positional[0], site);
  });
  type_def("str", [](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    if (a.positional.empty()) return Value::str("");
    if (a.positional[0].is_unknown()) return a.positional[0];
    return Value::str(in.to_str(a.positional[0]));
  });
  def("repr", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return a.positional.empty() ? Value::str("") : a.positional[0].is_unknown() ? a.positional[0] : Value::str(repr(a.positional[0]));
  });
  type_def("bool", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return Value::boolean(false);
    auto t = in.truth(a.positional[0]);
    return t ? Value::boolean(*t) : in.unknown("truth value not known", site);
  });
  type_def("list", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return make_list({});
    Value why;
    auto items = in.iterate(a.positional[0], site, &why);
    return items ? make_list(std::move(*items)) : why;
  });
  type_def("tuple", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return make_tuple({});
    Value why;
    auto items = in.iterate(a.positional[0], site, &why);
    return items ? make_tuple(std::move(*items)) : why;
  });
  auto make_set = [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    auto s = std::make_shared<DictObj>(true);
    if (!a.positional.empty()) {
      Value why;
      auto items = in.iterate(a.positional[0], site, &why);
      if (!items) return why;
      for (auto& v : *items) s->set(v, Value::none());
    }
    return Value::object(s);
  };
  type_def("set", make_set);
  type_def("frozenset", make_set);
  type_def("dict", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) { return dict_from(in, a, site); });
}

}  // namespace shardlens::python::native
