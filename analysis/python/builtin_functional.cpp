// functools, operator, itertools and abc, and the decorators model code applies that change
// nothing shardlens reads (lru_cache, torch.jit.script, torch.no_grad, ...).
#include <algorithm>

#include "ir/split.h"
#include "python/interpreter.h"
#include "python/native_support.h"
#include "python/numbers.h"

namespace shardlens::python::native {

namespace {

// One key's item of a target; false, with the error (or unknown) to return in `item`, if it has none.
using GetItem = bool (*)(Interpreter& in, const Value& target, const Value& key, const ir::Span& site, Value& item);

// operator.itemgetter(*keys) / attrgetter(*names): a getter of one item, or of a tuple of several.
NativeFn getter_of(std::string name, GetItem get) {
  return [name, get](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    std::vector<Value> keys = a.positional;
    return in.native(name + ".<getter>", [name, keys, get](Interpreter& in, const Value&, Args& b, const ir::Span& site) -> Value {
      if (b.positional.empty()) return in.raise("TypeError", name.substr(name.rfind('.') + 1) + " expects one argument", site);
      std::vector<Value> out;
      for (auto& k : keys) {
        Value item;
        if (!get(in, b.positional[0], k, site, item)) return item;
        out.push_back(item);
      }
      return keys.size() == 1 ? out[0] : make_tuple(std::move(out));
    });
  };
}

}  // namespace

void install_functional_modules(Interpreter& in) {
  auto partial_class = in.make_builtin_class("functools.partial", {}, nullptr);
  partial_class->native_new = [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "partial() needs a callable", site);
    auto p = std::make_shared<PartialObj>();
    p->function = a.positional[0];
    if (auto* inner = a.positional[0].as<PartialObj>()) {  // partial(partial(f, a), b) is partial(f, a, b)
      p->function = inner->function;
      p->args = inner->args;
    }
    p->args.positional.insert(p->args.positional.end(), a.positional.begin() + 1, a.positional.end());
    for (auto& kv : a.keywords) {
      bool replaced = false;
      for (auto& existing : p->args.keywords)
        if (existing.first == kv.first) { existing.second = kv.second; replaced = true; }
      if (!replaced) p->args.keywords.push_back(kv);
    }
    return Value::object(p);
  };
  in.define_method("@functools.partial", "func", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return self.as<PartialObj>()->function;
  });
  in.define_method("@functools.partial", "args", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return make_tuple(self.as<PartialObj>()->args.positional);
  });
  in.define_method("@functools.partial", "keywords", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    auto d = std::make_shared<DictObj>();
    for (auto& [k, v] : self.as<PartialObj>()->args.keywords) d->set(Value::str(k), v);
    return Value::object(d);
  });
  in.define_native("functools.reduce", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() < 2) return in.raise("TypeError", "reduce() takes at least 2 arguments", site);
    Value why;
    auto items = in.iterate(a.positional[1], site, &why);
    if (!items) return why;
    size_t i = 0;
    Value acc;
    if (a.positional.size() > 2) acc = a.positional[2];
    else if (items->empty()) return in.raise("TypeError", "reduce() of empty sequence with no initial value", site);
    else acc = (*items)[i++];
    for (; i < items->size(); ++i) acc = in.call(a.positional[0], Args{{acc, (*items)[i]}, {}}, site);
    return acc;
  });
  auto identity_decorator = [](Interpreter& in, const Value&, Args& a, const ir::Span&) -> Value {
    // Used bare (@cache) it returns the function; called with options (@lru_cache(maxsize=2)) it
    // returns itself as a decorator.
    if (a.positional.size() == 1 && a.keywords.empty() && a.positional[0].kind == Value::Kind::Obj &&
        a.positional[0].obj->kind != ObjKind::Tuple)
      return a.positional[0];
    return in.native("functools.<decorator>", [](Interpreter&, const Value&, Args& b, const ir::Span&) {
      return b.positional.empty() ? Value::none() : b.positional[0];
    });
  };
  // functools.wraps(f) is always a decorator factory: the decorated wrapper is what remains, with
  // `__wrapped__` pointing at f as Python sets it (the tracer reads forward()'s real signature there).
  in.define_native("functools.wraps", [](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    Value wrapped = a.positional.empty() ? Value::none() : a.positional[0];
    return in.native("functools.wraps.<decorator>", [wrapped](Interpreter&, const Value&, Args& b, const ir::Span&) {
      if (b.positional.empty()) return Value::none();
      if (auto* f = b.positional[0].as<FunctionObj>(); f && wrapped.kind == Value::Kind::Obj) {
        if (!f->attributes) f->attributes = std::make_shared<DictObj>();
        f->attributes->set_str("__wrapped__", wrapped);
      }
      return b.positional[0];
    });
  });
  for (const char* n : {"functools.lru_cache", "functools.cache", "functools.total_ordering",
                        "typing.overload", "typing.final", "torch.jit.script", "torch.jit.ignore", "torch.jit.unused",
                        "torch.jit.export", "torch.fx.wrap", "torch.no_grad", "torch.enable_grad", "torch.inference_mode",
                        "torch.compile", "torch._dynamo.disable", "torch.jit.script_if_tracing"})
    in.define_native(n, identity_decorator);
  in.define_native("functools.cached_property", decorator(ObjKind::Property));

  // --- operator ---
  for (auto& [name, op] : std::vector<std::pair<std::string, std::string>>{
           {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"truediv", "/"}, {"floordiv", "//"}, {"mod", "%"}, {"pow", "**"}}) {
    std::string o = op;
    in.define_native("operator." + name, [o](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      if (a.positional.size() != 2) return in.raise("TypeError", "operator takes 2 arguments", site);
      return in.binary(o, a.positional[0], a.positional[1], site);
    });
  }
  // Version checks pick a comparison from a table ({">=": operator.ge, ...}, diffusers' is_torch_version).
  for (auto& [name, op] : std::vector<std::pair<std::string, std::string>>{
           {"lt", "<"}, {"le", "<="}, {"eq", "=="}, {"ne", "!="}, {"ge", ">="}, {"gt", ">"}, {"contains", "in"}}) {
    std::string o = op;
    const bool swapped = name == "contains";  // contains(a, b) is `b in a`
    in.define_native("operator." + name, [o, swapped](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      if (a.positional.size() != 2) return in.raise("TypeError", "operator takes 2 arguments", site);
      return swapped ? in.compare(o, a.positional[1], a.positional[0], site) : in.compare(o, a.positional[0], a.positional[1], site);
    });
  }
  // --- itertools ---
  in.define_native("itertools.chain", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    std::vector<Value> out;
    for (auto& v : a.positional) {
      Value why;
      auto items = in.iterate(v, site, &why);
      if (!items) return why;
      out.insert(out.end(), items->begin(), items->end());
    }
    return make_list(std::move(out));
  });
  in.define_native("itertools.cycle", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    if (!items) return why;
    Value out = make_list(std::move(*items));
    out.as<ListObj>()->endless = true;
    return out;
  });
  in.define_native("itertools.repeat", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    const Value* times = argument(a, 1, "times");
    if (a.positional.empty() || !times || !times->is_int()) return in.unknown("unbounded itertools.repeat()", site);
    return make_list(std::vector<Value>(static_cast<size_t>(std::max<int64_t>(0, times->as_int())), a.positional[0]));
  });
  in.define_native("itertools.product", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto iterated = items_of_each(in, a.positional, site, &why);
    if (!iterated) return why;
    std::vector<std::vector<Value>> pools = std::move(*iterated);
    if (const Value* r = a.keyword("repeat"); r && r->is_int()) {
      std::vector<std::vector<Value>> repeated;
      for (int64_t k = 0; k < r->as_int(); ++k) repeated.insert(repeated.end(), pools.begin(), pools.end());
      pools = std::move(repeated);
    }
    std::vector<std::vector<Value>> result{{}};
    for (auto& pool : pools) {
      std::vector<std::vector<Value>> next;
      for (auto& prefix : result)
        for (auto& v : pool) {
          auto t = prefix;
          t.push_back(v);
          next.push_back(std::move(t));
        }
      result = std::move(next);
    }
    std::vector<Value> out;
    for (auto& t : result) out.push_back(make_tuple(std::move(t)));
    return make_list(std::move(out));
  });

  // --- abc ---
  in.make_builtin_class("abc.ABC", {}, nullptr);
  in.define_native("abc.abstractmethod", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    if (!a.positional.empty())
      if (auto* f = a.positional[0].as<FunctionObj>()) f->is_abstract = true;
    return a.positional.empty() ? Value::none() : a.positional[0];
  });
  in.define("abc.ABCMeta", in.unknown("metaclasses are not modelled", {}));
  in.define_native("operator.itemgetter", getter_of("operator.itemgetter", [](Interpreter& in, const Value& target, const Value& k,
                                                                             const ir::Span& site, Value& item) {
    if (auto* d = target.as<DictObj>()) {
      const Value* v = d->find(k);
      if (!v) {
        item = in.raise("KeyError", repr(k), site);
        return false;
      }
      item = *v;
      return true;
    }
    if (auto* l = TupleView::of(target); l && k.is_int()) {
      int64_t i = k.as_int() < 0 ? k.as_int() + static_cast<int64_t>(l->items.size()) : k.as_int();
      if (i < 0 || i >= static_cast<int64_t>(l->items.size())) {
        item = in.raise("IndexError", "index out of range", site);
        return false;
      }
      item = l->items[i];
      return true;
    }
    item = in.unknown("itemgetter on " + type_name(target), site);
    return false;
  }));
  in.define_native("operator.attrgetter", getter_of("operator.attrgetter", [](Interpreter& in, const Value& target, const Value& n,
                                                                             const ir::Span& site, Value& item) {
    if (!n.is_str()) {
      item = in.unknown("attrgetter of a non-string", site);
      return false;
    }
    item = target;
    for (const std::string& name : ir::split(n.s, '.')) item = in.get_attribute(item, name, site);  // attrgetter("a.b")
    return true;
  }));
  in.define_native("itertools.groupby", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    if (!items) return why;
    const Value* key = argument(a, 1, "key");
    std::vector<Value> out;
    Value current_key;
    std::vector<Value> group;
    bool open = false;
    for (auto& v : *items) {
      Value k = key && !key->is_none() ? in.call(*key, Args{{v}, {}}, site) : v;
      if (!open || !in.equal(k, current_key).value_or(false)) {
        if (open) out.push_back(make_tuple({current_key, make_list(group)}));
        current_key = k;
        group.clear();
        open = true;
      }
      group.push_back(v);
    }
    if (open) out.push_back(make_tuple({current_key, make_list(group)}));
    return make_list(std::move(out));
  });
  in.define_native("itertools.accumulate", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    if (!items) return why;
    const Value* fn = argument(a, 1, "func");
    const Value* initial = a.keyword("initial");
    std::vector<Value> out;
    Value acc;
    bool have = false;
    if (initial && !initial->is_none()) { acc = *initial; have = true; out.push_back(acc); }
    for (auto& v : *items) {
      acc = !have ? v : (fn && !fn->is_none() ? in.call(*fn, Args{{acc, v}, {}}, site) : in.binary("+", acc, v, site));
      have = true;
      out.push_back(acc);
    }
    return make_list(std::move(out));
  });
  in.define_native("itertools.chain.from_iterable", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto outer = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    if (!outer) return why;
    std::vector<Value> out;
    for (auto& inner : *outer) {
      auto items = in.iterate(inner, site, &why);
      if (!items) return why;
      out.insert(out.end(), items->begin(), items->end());
    }
    return make_list(std::move(out));
  });
  in.define_native("itertools.starmap", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto items = items_after_function(in, a, "starmap() takes a function and an iterable", site, &why);
    if (!items) return why;
    std::vector<Value> out;
    for (auto& t : *items) {
      auto args = in.iterate(t, site, &why);
      if (!args) return why;
      out.push_back(in.call(a.positional[0], Args{*args, {}}, site));
    }
    return make_list(std::move(out));
  });
  in.define_native("itertools.zip_longest", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto iterated = items_of_each(in, a.positional, site, &why);
    if (!iterated) return why;
    std::vector<std::vector<Value>> seqs = std::move(*iterated);
    Value fill = a.keyword("fillvalue") ? *a.keyword("fillvalue") : Value::none();
    size_t n = 0;
    for (auto& q : seqs) n = std::max(n, q.size());
    std::vector<Value> out;
    for (size_t i = 0; i < n; ++i) {
      std::vector<Value> t;
      for (auto& q : seqs) t.push_back(i < q.size() ? q[i] : fill);
      out.push_back(make_tuple(std::move(t)));
    }
    return make_list(std::move(out));
  });
  in.define_native("itertools.islice", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    if (!items) return why;
    int64_t start = 0, stop = static_cast<int64_t>(items->size()), step = 1;
    if (a.positional.size() == 2) { if (a.positional[1].is_int()) stop = a.positional[1].as_int(); }
    else if (a.positional.size() >= 3) {
      if (a.positional[1].is_int()) start = a.positional[1].as_int();
      if (a.positional[2].is_int()) stop = a.positional[2].as_int();
      if (a.positional.size() > 3 && a.positional[3].is_int()) step = std::max<int64_t>(1, a.positional[3].as_int());
    }
    std::vector<Value> out;
    for (int64_t i = start; i < std::min<int64_t>(stop, static_cast<int64_t>(items->size())); i += step) out.push_back((*items)[i]);
    return make_list(std::move(out));
  });
}

}  // namespace shardlens::python::native
