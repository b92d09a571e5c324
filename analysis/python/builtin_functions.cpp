// Python's built-in functions, the methods of built-in types, and the standard-library modules
// model code uses while building modules (math, copy, functools, dataclasses, collections,
// typing, operator, itertools, argparse, ...).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include "ir/split.h"
#include "python/interpreter.h"
#include "python/numbers.h"

namespace shardlens::python {
namespace {

using Args = CallArgs;
const Value kNone;

const Value* first_unknown_arg(const Args& a) {
  for (auto& v : a.positional)
    if (v.is_unknown()) return &v;
  for (auto& kv : a.keywords)
    if (kv.second.is_unknown()) return &kv.second;
  return nullptr;
}

// --- formatting -----------------------------------------------------------------------------

std::string format_with_spec(Interpreter& in, const Value& v, const std::string& spec_in, bool& ok) {
  ok = true;
  std::string spec = spec_in;
  char fill = ' ', align = 0, sign = '-';
  bool zero = false, comma = false;
  int width = -1, precision = -1;
  char type = 0;
  size_t i = 0;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (spec.size() >= 2 && is_align(spec[1])) { fill = spec[0]; align = spec[1]; i = 2; }
  else if (!spec.empty() && is_align(spec[0])) { align = spec[0]; i = 1; }
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) sign = spec[i++];
  if (i < spec.size() && spec[i] == '0') { zero = true; ++i; }
  while (i < spec.size() && isdigit(static_cast<unsigned char>(spec[i]))) width = std::min(std::max(width, 0) * 10 + (spec[i++] - '0'), 100'000'000);  // bounded: no int overflow
  if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) { comma = true; ++i; }
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    precision = 0;
    while (i < spec.size() && isdigit(static_cast<unsigned char>(spec[i]))) precision = precision * 10 + (spec[i++] - '0');
  }
  if (i < spec.size()) type = spec[i++];
  if (i != spec.size()) { ok = false; return {}; }

  std::string body;
  char buf[128];
  if (type == 'd' || type == 'x' || type == 'X' || type == 'o' || type == 'b' || (type == 0 && v.is_int() && v.kind != Value::Kind::Bool)) {
    if (!v.is_int()) { ok = false; return {}; }
    int64_t n = v.as_int();
    if (type == 'x' || type == 'X' || type == 'o') {
      std::snprintf(buf, sizeof buf, type == 'x' ? "%llx" : type == 'X' ? "%llX" : "%llo", static_cast<unsigned long long>(std::llabs(n)));
      body = buf;
    } else if (type == 'b') {
      uint64_t u = static_cast<uint64_t>(std::llabs(n));
      do { body.insert(body.begin(), static_cast<char>('0' + (u & 1))); u >>= 1; } while (u);
    } else {
      body = std::to_string(std::llabs(n));
      if (comma)
        for (int k = static_cast<int>(body.size()) - 3; k > 0; k -= 3) body.insert(static_cast<size_t>(k), ",");
    }
    if (n < 0) body = "-" + body;
    else if (sign == '+') body = "+" + body;
    else if (sign == ' ') body = " " + body;
  } else if (type == 'f' || type == 'F' || type == 'e' || type == 'E' || type == 'g' || type == 'G' || type == '%' ||
             (type == 0 && v.kind == Value::Kind::Float && precision >= 0)) {
    if (!v.is_number()) { ok = false; return {}; }
    double x = v.as_float();
    if (type == '%') x *= 100;
    char t = type == '%' ? 'f' : type == 0 ? 'g' : type;
    std::string fmt = std::string("%") + (sign == '+' ? "+" : sign == ' ' ? " " : "") + "." +
                      std::to_string(precision < 0 ? 6 : precision) + t;
    std::snprintf(buf, sizeof buf, fmt.c_str(), x);
    body = buf;
    if (type == '%') body += "%";
  } else {
    body = in.to_str(v);
    if (precision >= 0 && static_cast<int>(body.size()) > precision) body.resize(static_cast<size_t>(precision));
  }
  if (width > static_cast<int>(body.size())) {
    size_t pad = static_cast<size_t>(width) - body.size();
    if (!align) align = (v.is_number() && type != 's') ? (zero ? '=' : '>') : '<';
    if (zero && align == '=') fill = '0';
    if (align == '<') body += std::string(pad, fill);
    else if (align == '>') body = std::string(pad, fill) + body;
    else if (align == '^') body = std::string(pad / 2, fill) + body + std::string(pad - pad / 2, fill);
    else {
      size_t signs = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
      body.insert(signs, std::string(pad, fill));
    }
  }
  return body;
}

Value str_format(Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
  if (auto* u = first_unknown_arg(a)) return *u;
  const std::string& f = self.s;
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    if (c == '{' && i + 1 < f.size() && f[i + 1] == '{') { out += '{'; ++i; continue; }
    if (c == '}' && i + 1 < f.size() && f[i + 1] == '}') { out += '}'; ++i; continue; }
    if (c != '{') { out += c; continue; }
    size_t close = f.find('}', i);
    if (close == std::string::npos) return in.raise("ValueError", "unmatched '{' in format string", site);
    std::string field = f.substr(i + 1, close - i - 1);
    i = close;
    std::string spec, conversion;
    if (auto colon = field.find(':'); colon != std::string::npos) { spec = field.substr(colon + 1); field = field.substr(0, colon); }
    if (auto bang = field.find('!'); bang != std::string::npos) { conversion = field.substr(bang + 1); field = field.substr(0, bang); }
    // field: "", "0", "name", "name.attr", "name[0]"
    std::string head = field.substr(0, field.find_first_of(".["));
    std::string rest = field.substr(head.size());
    Value v;
    if (head.empty()) {
      if (auto_index >= a.positional.size()) return in.raise("IndexError", "format index out of range", site);
      v = a.positional[auto_index++];
    } else if (isdigit(static_cast<unsigned char>(head[0]))) {
      size_t idx = std::stoul(head);
      if (idx >= a.positional.size()) return in.raise("IndexError", "format index out of range", site);
      v = a.positional[idx];
    } else if (const Value* kw = a.keyword(head)) {
      v = *kw;
    } else {
      return in.raise("KeyError", head, site);
    }
    while (!rest.empty()) {
      if (rest[0] == '.') {
        size_t end = rest.find_first_of(".[", 1);
        v = in.get_attribute(v, rest.substr(1, end == std::string::npos ? std::string::npos : end - 1), site);
        rest = end == std::string::npos ? "" : rest.substr(end);
      } else if (rest[0] == '[') {
        size_t end = rest.find(']');
        std::string key = rest.substr(1, end - 1);
        Value k = !key.empty() && isdigit(static_cast<unsigned char>(key[0])) ? Value::integer(std::stoll(key)) : Value::str(key);
        if (auto* l = TupleView::of(v); l && k.is_int() && k.i < static_cast<int64_t>(l->items.size())) v = l->items[k.i];
        else if (auto* d = v.as<DictObj>(); d && d->find(k)) v = *d->find(k);
        else return in.unknown("format field lookup", site);
        rest = end == std::string::npos ? "" : rest.substr(end + 1);
      } else {
        break;
      }
    }
    if (v.is_unknown()) return v;
    if (conversion == "r") v = Value::str(repr(v));
    else if (conversion == "s") v = Value::str(in.to_str(v));
    bool ok = true;
    out += spec.empty() ? in.to_str(v) : format_with_spec(in, v, spec, ok);
    if (!ok) return in.raise("ValueError", "invalid format specifier '" + spec + "'", site);
  }
  return Value::str(out);
}

Value str_percent(Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
  std::vector<Value> values;
  const Value& arg = a.positional.empty() ? kNone : a.positional[0];
  if (arg.is_unknown()) return arg;
  if (auto* t = TupleView::of(arg); t && arg.obj->kind == ObjKind::Tuple) values = t->items;
  else values.push_back(arg);
  std::string out;
  size_t next = 0;
  const std::string& f = self.s;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') { out += f[i]; continue; }
    if (i + 1 < f.size() && f[i + 1] == '%') { out += '%'; ++i; continue; }
    size_t j = i + 1;
    std::string spec;
    while (j < f.size() && std::string("0123456789.-+ #").find(f[j]) != std::string::npos) spec += f[j++];
    if (j >= f.size()) break;
    char conv = f[j];
    i = j;
    if (next >= values.size()) return in.raise("TypeError", "not enough arguments for format string", site);
    Value v = values[next++];
    if (v.is_unknown()) return v;
    bool ok = true;
    std::string piece;
    if (conv == 's') piece = format_with_spec(in, Value::str(in.to_str(v)), spec, ok);
    else if (conv == 'r') piece = format_with_spec(in, Value::str(repr(v)), spec, ok);
    else if (conv == 'd' || conv == 'i') piece = format_with_spec(in, Value::integer(static_cast<int64_t>(v.as_float())), spec + "d", ok);
    else piece = format_with_spec(in, v, spec + conv, ok);
    if (!ok) return in.raise("ValueError", "unsupported format character", site);
    out += piece;
  }
  return Value::str(out);
}

// --- conversions -----------------------------------------------------------------------------

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

// --- copy ---------------------------------------------------------------------------------------

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

// --- dataclasses -----------------------------------------------------------------------------

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
  ClassObj& cls = *inst->cls;
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
  return Value::none();
}

}  // namespace

void make_dataclass(Interpreter& in, ClassObj& cls, bool) {
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
  if (cls.def) {
    for (const auto& stmt : cls.def->body) {
      if (!stmt || stmt->kind != StmtKind::AnnAssign || stmt->targets.empty()) continue;
      if (stmt->targets[0]->kind != ExprKind::Name || is_class_var(stmt->annotation.get())) continue;
      const std::string& name = stmt->targets[0]->name;
      if (std::find(cls.dataclass_fields.begin(), cls.dataclass_fields.end(), name) == cls.dataclass_fields.end())
        cls.dataclass_fields.push_back(name);
      if (const Value* v = cls.find(name)) {
        Value d = *v;
        cls.set("__dataclass_default_" + name, d);
        if (auto* f = d.as<DataclassFieldObj>()) {
          if (f->default_value) cls.set(name, *f->default_value);
        }
      }
    }
  }
  if (!cls.find("__init__")) cls.set("__init__", in.native(cls.name + ".__init__", dataclass_init));
  bool named_tuple = false;
  for (ClassObj* c : cls.mro) named_tuple |= c->qualname == "typing.NamedTuple";
  if (named_tuple) cls.set("_replace", *in.builtin("dataclasses.__replace_method__"));
}

void install_python_builtins(Interpreter& in) {
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
    std::vector<std::vector<Value>> seqs;
    for (auto& v : a.positional) {
      Value why;
      auto items = in.iterate(v, site, &why);
      if (!items) return why;
      seqs.push_back(std::move(*items));
    }
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
    std::vector<std::vector<Value>> seqs;
    for (size_t k = 1; k < a.positional.size(); ++k) {
      Value why;
      auto items = in.iterate(a.positional[k], site, &why);
      if (!items) return why;
      seqs.push_back(std::move(*items));
    }
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
    if (a.positional.size() != 2) return in.raise("TypeError", "filter() needs a function and an iterable", site);
    Value why;
    auto items = in.iterate(a.positional[1], site, &why);
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
    if (a.positional.size() != 1) return in.unknown("type() with three arguments is not modelled", site);
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
  auto wrapper = [](ObjKind kind) {
    return [kind](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      if (a.positional.empty()) return in.raise("TypeError", "decorator needs a function", site);
      auto w = std::make_shared<WrapperObj>(kind);
      w->function = a.positional[0];
      return Value::object(w);
    };
  };
  def("property", wrapper(ObjKind::Property));
  def("staticmethod", wrapper(ObjKind::StaticMethod));
  def("classmethod", wrapper(ObjKind::ClassMethod));
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

  // --- methods of str ---
  auto str_method = [&](const std::string& name, NativeFn fn) { in.define_method("str", name, std::move(fn)); };
  str_method("format", str_format);
  str_method("__mod__", str_percent);
  str_method("join", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    Value why;
    auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    if (!items) return why;
    std::string out;
    for (size_t i = 0; i < items->size(); ++i) {
      if ((*items)[i].is_unknown()) return (*items)[i];
      if (!(*items)[i].is_str()) return in.raise("TypeError", "sequence item: expected str instance", site);
      out += (i ? self.s : "") + (*items)[i].s;
    }
    return Value::str(out);
  });
  auto split = [](bool from_right) {
    return [from_right](Interpreter&, const Value& self, Args& a, const ir::Span&) {
      const Value* sep = argument(a, 0, "sep");
      const Value* maxsplit_v = argument(a, 1, "maxsplit");
      int64_t maxsplit = maxsplit_v && maxsplit_v->is_int() ? maxsplit_v->as_int() : -1;
      std::vector<Value> parts;
      const std::string& s = self.s;
      if (!sep || sep->is_none()) {
        std::vector<std::string> words;
        size_t i = 0;
        while (i < s.size()) {
          while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) ++i;
          if (i >= s.size()) break;
          size_t j = i;
          while (j < s.size() && !isspace(static_cast<unsigned char>(s[j]))) ++j;
          words.push_back(s.substr(i, j - i));
          i = j;
        }
        for (auto& w : words) parts.push_back(Value::str(w));
        return make_list(std::move(parts));
      }
      std::vector<std::string> pieces;
      if (!from_right) {
        size_t start = 0, pos;
        while ((maxsplit < 0 || static_cast<int64_t>(pieces.size()) < maxsplit) && !sep->s.empty() &&
               (pos = s.find(sep->s, start)) != std::string::npos) {
          pieces.push_back(s.substr(start, pos - start));
          start = pos + sep->s.size();
        }
        pieces.push_back(s.substr(start));
      } else {
        size_t end = s.size();
        std::vector<std::string> rev;
        while ((maxsplit < 0 || static_cast<int64_t>(rev.size()) < maxsplit) && !sep->s.empty()) {
          size_t pos = end >= sep->s.size() ? s.rfind(sep->s, end - sep->s.size()) : std::string::npos;
          if (pos == std::string::npos) break;
          rev.push_back(s.substr(pos + sep->s.size(), end - pos - sep->s.size()));
          end = pos;
        }
        pieces.push_back(s.substr(0, end));
        for (auto it = rev.rbegin(); it != rev.rend(); ++it) pieces.push_back(*it);
      }
      for (auto& p : pieces) parts.push_back(Value::str(p));
      return make_list(std::move(parts));
    };
  };
  str_method("split", split(false));
  str_method("rsplit", split(true));
  auto affix = [](bool prefix) {
    return [prefix](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
      if (a.positional.empty()) return in.raise("TypeError", "startswith/endswith need an argument", site);
      std::vector<Value> options;
      if (auto* l = TupleView::of(a.positional[0])) options = l->items; else options.push_back(a.positional[0]);
      for (auto& o : options) {
        if (o.is_unknown()) return o;
        if (!o.is_str()) continue;
        const std::string& s = self.s;
        bool hit = prefix ? s.rfind(o.s, 0) == 0 : (s.size() >= o.s.size() && s.compare(s.size() - o.s.size(), o.s.size(), o.s) == 0);
        if (hit) return Value::boolean(true);
      }
      return Value::boolean(false);
    };
  };
  str_method("startswith", affix(true));
  str_method("endswith", affix(false));
  str_method("replace", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.size() < 2 || !a.positional[0].is_str() || !a.positional[1].is_str())
      return in.unknown("str.replace() arguments", site);
    std::string s = self.s;
    const std::string &from = a.positional[0].s, &to = a.positional[1].s;
    if (from.empty()) return Value::str(s);
    size_t pos = 0;
    while ((pos = s.find(from, pos)) != std::string::npos) {
      s.replace(pos, from.size(), to);
      pos += to.size();
    }
    return Value::str(s);
  });
  auto case_map = [](int mode) {
    return [mode](Interpreter&, const Value& self, Args&, const ir::Span&) {
      std::string s = self.s;
      for (size_t i = 0; i < s.size(); ++i) {
        if (mode == 0) s[i] = static_cast<char>(tolower(s[i]));
        else if (mode == 1) s[i] = static_cast<char>(toupper(s[i]));
        else if (mode == 2) s[i] = static_cast<char>(i == 0 ? toupper(s[i]) : tolower(s[i]));
      }
      return Value::str(s);
    };
  };
  str_method("lower", case_map(0));
  str_method("upper", case_map(1));
  str_method("capitalize", case_map(2));
  auto strip = [](int sides) {
    return [sides](Interpreter&, const Value& self, Args& a, const ir::Span&) {
      std::string chars = a.positional.empty() || !a.positional[0].is_str() ? std::string(" \t\n\r\f\v") : a.positional[0].s;
      std::string s = self.s;
      if (sides & 1) s.erase(0, s.find_first_not_of(chars) == std::string::npos ? s.size() : s.find_first_not_of(chars));
      if (sides & 2) {
        size_t end = s.find_last_not_of(chars);
        s = end == std::string::npos ? "" : s.substr(0, end + 1);
      }
      return Value::str(s);
    };
  };
  str_method("strip", strip(3));
  str_method("lstrip", strip(1));
  str_method("rstrip", strip(2));
  str_method("isdigit", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return Value::boolean(!self.s.empty() && std::all_of(self.s.begin(), self.s.end(), [](char c) { return isdigit(static_cast<unsigned char>(c)); }));
  });
  in.define_method("str", "isnumeric", *in.method("str", "isdigit"));
  str_method("isalpha", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return Value::boolean(!self.s.empty() && std::all_of(self.s.begin(), self.s.end(), [](char c) { return isalpha(static_cast<unsigned char>(c)); }));
  });
  str_method("find", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.empty() || !a.positional[0].is_str()) return in.unknown("str.find() argument", site);
    size_t p = self.s.find(a.positional[0].s);
    return Value::integer(p == std::string::npos ? -1 : static_cast<int64_t>(p));
  });
  str_method("count", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.empty() || !a.positional[0].is_str() || a.positional[0].s.empty()) return in.unknown("str.count() argument", site);
    int64_t n = 0;
    for (size_t p = self.s.find(a.positional[0].s); p != std::string::npos; p = self.s.find(a.positional[0].s, p + a.positional[0].s.size())) ++n;
    return Value::integer(n);
  });
  str_method("zfill", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    int64_t w = a.positional.empty() ? 0 : a.positional[0].as_int();
    if (!in.fits_memory(w, 1)) return in.unknown("analysis memory budget exhausted", site);
    std::string s = self.s;
    if (static_cast<int64_t>(s.size()) < w) s.insert(0, static_cast<size_t>(w) - s.size(), '0');
    return Value::str(s);
  });
  str_method("title", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    std::string s = self.s;
    bool start = true;
    for (auto& c : s) {
      c = static_cast<char>(start ? toupper(c) : tolower(c));
      start = !isalpha(static_cast<unsigned char>(c));
    }
    return Value::str(s);
  });

  // --- methods of list / tuple ---
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
  dict_method("clear", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    self.as<DictObj>()->entries.clear();
    self.as<DictObj>()->index.clear();
    return Value::none();
  });
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

  // --- math ---
  auto math1 = [&](const std::string& name, double (*f)(double), bool integral) {
    in.define_native("math." + name, [f, integral, name](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      if (a.positional.empty()) return in.raise("TypeError", "math." + name + "() takes an argument", site);
      const Value& v = a.positional[0];
      if (v.is_unknown()) return v;
      // floor/ceil/trunc of an int is the int itself, at any size.
      if (integral && v.is_integral()) return to_int(in, v, site);
      if (!v.is_number() && !v.is_integral()) return in.unknown("math." + name + "() of " + type_name(v), site);
      Value x = to_float(in, v, site);
      if (x.kind != Value::Kind::Float) return x;
      double r = f(x.f);
      if (std::isnan(r) && !std::isnan(x.f)) return in.raise("ValueError", "math domain error", site);
      return integral ? in.number_result(int_from_float(r), site) : Value::floating(r);
    });
  };
  math1("sqrt", static_cast<double (*)(double)>(std::sqrt), false);
  math1("ceil", static_cast<double (*)(double)>(std::ceil), true);
  math1("floor", static_cast<double (*)(double)>(std::floor), true);
  math1("trunc", static_cast<double (*)(double)>(std::trunc), true);
  math1("exp", static_cast<double (*)(double)>(std::exp), false);
  math1("log2", static_cast<double (*)(double)>(std::log2), false);
  math1("log10", static_cast<double (*)(double)>(std::log10), false);
  math1("fabs", static_cast<double (*)(double)>(std::fabs), false);
  math1("sin", static_cast<double (*)(double)>(std::sin), false);
  math1("cos", static_cast<double (*)(double)>(std::cos), false);
  math1("tan", static_cast<double (*)(double)>(std::tan), false);
  math1("atan", static_cast<double (*)(double)>(std::atan), false);
  math1("tanh", static_cast<double (*)(double)>(std::tanh), false);
  in.define_native("math.log", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "math.log() takes an argument", site);
    if (auto* u = first_unknown_arg(a)) return *u;
    double x = a.positional[0].as_float();
    if (x <= 0) return in.raise("ValueError", "math domain error", site);
    double r = std::log(x);
    if (a.positional.size() > 1) r /= std::log(a.positional[1].as_float());
    return Value::floating(r);
  });
  in.define_native("math.pow", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2) return in.raise("TypeError", "math.pow() takes 2 arguments", site);
    if (auto* u = first_unknown_arg(a)) return *u;
    return Value::floating(std::pow(a.positional[0].as_float(), a.positional[1].as_float()));
  });
  in.define_native("math.isqrt", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty() || !a.positional[0].is_int()) return in.unknown("math.isqrt() argument", site);
    return Value::integer(static_cast<int64_t>(std::floor(std::sqrt(static_cast<double>(a.positional[0].as_int())))));
  });
  for (auto& [name, fold] : std::vector<std::pair<std::string, int64_t (*)(int64_t, int64_t)>>{
           {"gcd", [](int64_t x, int64_t y) { return std::gcd(x, y); }},
           {"lcm", [](int64_t x, int64_t y) { return std::lcm(x, y); }}}) {
    std::string n = name;
    auto f = fold;
    in.define_native("math." + n, [n, f](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      int64_t acc = n == "gcd" ? 0 : 1;
      for (auto& v : a.positional) {
        if (!v.is_int()) return in.unknown("math." + n + "() argument", site);
        acc = f(acc, v.as_int());
      }
      return Value::integer(acc);
    });
  }
  in.define_native("math.prod", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    if (!items) return why;
    Value p = a.keyword("start") ? *a.keyword("start") : Value::integer(1);
    for (auto& v : *items) p = in.binary("*", p, v, site);
    return p;
  });
  in.define_native("math.factorial", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty() || !a.positional[0].is_int()) return in.unknown("math.factorial() argument", site);
    if (a.positional[0].as_int() < 0) return in.raise("ValueError", "factorial() not defined for negative values", site);
    Value r = Value::integer(1);  // exact at any size: the product moves to a big int past int64
    for (int64_t k = 2; k <= a.positional[0].as_int() && !r.is_unknown(); ++k) r = in.binary("*", r, Value::integer(k), site);
    return r;
  });
  in.define_native("math.isclose", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() < 2) return in.raise("TypeError", "isclose() takes 2 arguments", site);
    if (auto* u = first_unknown_arg(a)) return *u;
    double x = a.positional[0].as_float(), y = a.positional[1].as_float();
    return Value::boolean(std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)));
  });
  in.define("math.pi", Value::floating(M_PI));
  in.define("math.e", Value::floating(M_E));
  in.define("math.inf", Value::floating(INFINITY));
  in.define("math.nan", Value::floating(NAN));
  in.define("math.tau", Value::floating(2 * M_PI));

  // --- copy ---
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

  // --- functools ---
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
  in.define_native("functools.cached_property", wrapper(ObjKind::Property));

  // --- operator ---
  for (auto& [name, op] : std::vector<std::pair<std::string, std::string>>{
           {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"truediv", "/"}, {"floordiv", "//"}, {"mod", "%"}, {"pow", "**"}}) {
    std::string o = op;
    in.define_native("operator." + name, [o](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      if (a.positional.size() != 2) return in.raise("TypeError", "operator takes 2 arguments", site);
      return in.binary(o, a.positional[0], a.positional[1], site);
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
  in.define_native("itertools.repeat", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    const Value* times = argument(a, 1, "times");
    if (a.positional.empty() || !times || !times->is_int()) return in.unknown("unbounded itertools.repeat()", site);
    return make_list(std::vector<Value>(static_cast<size_t>(std::max<int64_t>(0, times->as_int())), a.positional[0]));
  });
  in.define_native("itertools.product", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    std::vector<std::vector<Value>> pools;
    for (auto& v : a.positional) {
      Value why;
      auto items = in.iterate(v, site, &why);
      if (!items) return why;
      pools.push_back(std::move(*items));
    }
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
  in.define_native("operator.itemgetter", [](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    std::vector<Value> keys = a.positional;
    return in.native("operator.itemgetter.<getter>", [keys](Interpreter& in, const Value&, Args& b, const ir::Span& site) -> Value {
      if (b.positional.empty()) return in.raise("TypeError", "itemgetter expects one argument", site);
      std::vector<Value> out;
      for (auto& k : keys) {
        Args key{{k}, {}};
        Value target = b.positional[0];
        if (auto* d = target.as<DictObj>()) {
          const Value* v = d->find(k);
          if (!v) return in.raise("KeyError", repr(k), site);
          out.push_back(*v);
        } else if (auto* l = TupleView::of(target); l && k.is_int()) {
          int64_t i = k.as_int() < 0 ? k.as_int() + static_cast<int64_t>(l->items.size()) : k.as_int();
          if (i < 0 || i >= static_cast<int64_t>(l->items.size())) return in.raise("IndexError", "index out of range", site);
          out.push_back(l->items[i]);
        } else {
          return in.unknown("itemgetter on " + type_name(target), site);
        }
      }
      return keys.size() == 1 ? out[0] : make_tuple(std::move(out));
    });
  });
  in.define_native("operator.attrgetter", [](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    std::vector<Value> names = a.positional;
    return in.native("operator.attrgetter.<getter>", [names](Interpreter& in, const Value&, Args& b, const ir::Span& site) -> Value {
      if (b.positional.empty()) return in.raise("TypeError", "attrgetter expects one argument", site);
      std::vector<Value> out;
      for (auto& n : names) {
        if (!n.is_str()) return in.unknown("attrgetter of a non-string", site);
        Value v = b.positional[0];
        for (const std::string& name : ir::split(n.s, '.')) v = in.get_attribute(v, name, site);  // attrgetter("a.b")
        out.push_back(v);
      }
      return names.size() == 1 ? out[0] : make_tuple(std::move(out));
    });
  });
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
    if (a.positional.size() != 2) return in.raise("TypeError", "starmap() takes a function and an iterable", site);
    Value why;
    auto items = in.iterate(a.positional[1], site, &why);
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
    std::vector<std::vector<Value>> seqs;
    for (auto& v : a.positional) {
      Value why;
      auto items = in.iterate(v, site, &why);
      if (!items) return why;
      seqs.push_back(std::move(*items));
    }
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

  // --- dataclasses ---
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
                        "Generic", "Protocol", "TypeVar", "Annotated", "NamedTuple", "TypedDict", "Self"})
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

  // --- types / argparse: namespaces of attributes ---
  auto namespace_class = in.make_builtin_class("types.SimpleNamespace", {}, [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    if (a.positional.empty()) return Value::none();
    if (auto* inst = a.positional[0].as<InstanceObj>())
      for (auto& [k, v] : a.keywords) inst->set_attribute(k, v);
    return Value::none();
  });
  in.define("argparse.Namespace", Value::object(namespace_class));
  auto parser_class = in.make_builtin_class("argparse.ArgumentParser", {}, [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    if (auto* inst = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>())
      inst->set_attribute("__arguments__", make_list({}));
    return Value::none();
  });
  // Each argument is kept as (dest, default, flags, type, action, const) on the parser.
  parser_class->set("add_argument", in.native("argparse.ArgumentParser.add_argument", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    auto* inst = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>();
    if (!inst) return Value::none();
    std::string dest;
    std::vector<Value> flags;
    for (size_t k = 1; k < a.positional.size(); ++k) {
      if (!a.positional[k].is_str()) continue;
      std::string flag = a.positional[k].s;
      flags.push_back(a.positional[k]);
      if (flag.rfind("--", 0) == 0 && (dest.empty() || dest.size() == 1)) dest = flag.substr(2);
      else if (flag.rfind("-", 0) != 0 && dest.empty()) dest = flag;
      else if (flag.rfind("-", 0) == 0 && dest.empty()) dest = flag.substr(1);
    }
    if (const Value* d = a.keyword("dest"); d && d->is_str()) dest = d->s;
    std::replace(dest.begin(), dest.end(), '-', '_');
    std::string action = "store";
    if (const Value* act = a.keyword("action"); act && act->is_str()) action = act->s;
    Value dflt = Value::none();
    if (const Value* d = a.keyword("default")) dflt = *d;
    else if (action == "store_true") dflt = Value::boolean(false);
    else if (action == "store_false") dflt = Value::boolean(true);
    const Value* type = a.keyword("type");
    const Value* konst = a.keyword("const");
    if (Value* list = inst->find_attribute("__arguments__"))
      list->as<ListObj>()->items.push_back(make_tuple({Value::str(dest), dflt, make_list(flags), type ? *type : Value::none(),
                                                       Value::str(action), konst ? *konst : Value::none()}));
    return Value::none();
  }));
  auto parse_args = [namespace_class](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    // Without an explicit argv there is no command line statically: every argument takes its
    // default. With parse_args([...]) the given strings are parsed as argparse would.
    auto* inst = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>();
    Value ns = in.instantiate(namespace_class, Args{}, site);
    auto* out = ns.as<InstanceObj>();
    std::vector<std::vector<Value>> arguments;
    if (inst)
      if (Value* list = inst->find_attribute("__arguments__"))
        for (auto& item : list->as<ListObj>()->items) {
          arguments.push_back(TupleView::of(item)->items);
          out->set_attribute(arguments.back()[0].s, arguments.back()[1]);
        }
    const Value* argv = argument(a, 1, "args");
    if (!argv || argv->is_none()) return ns;
    Value why;
    auto words = in.iterate(*argv, site, &why);
    if (!words) return why;
    size_t positional_index = 0;
    for (size_t i = 0; i < words->size(); ++i) {
      const Value& w = (*words)[i];
      if (!w.is_str()) return in.unknown("parse_args() of a non-string argument", site);
      std::string word = w.s, inline_value;
      bool has_inline = false;
      if (word.rfind("-", 0) == 0)
        if (auto eq = word.find('='); eq != std::string::npos) {
          inline_value = word.substr(eq + 1);
          word = word.substr(0, eq);
          has_inline = true;
        }
      const std::vector<Value>* match = nullptr;
      for (auto& arg : arguments) {
        for (auto& f : TupleView::of(arg[2])->items)
          if (f.s == word && word.rfind("-", 0) == 0) match = &arg;
      }
      if (!match && word.rfind("-", 0) != 0) {
        // The next positional argument.
        size_t seen = 0;
        for (auto& arg : arguments) {
          auto& fl = TupleView::of(arg[2])->items;
          if (!fl.empty() && fl[0].s.rfind("-", 0) != 0 && seen++ == positional_index) {
            match = &arg;
            break;
          }
        }
        if (!match) return in.raise("SystemExit", "unrecognized arguments: " + word, site);
        ++positional_index;
        Value v = match->at(3).is_none() ? Value::str(word) : in.call(match->at(3), Args{{Value::str(word)}, {}}, site);
        out->set_attribute(match->at(0).s, v);
        continue;
      }
      if (!match) return in.raise("SystemExit", "unrecognized arguments: " + word, site);
      const std::string& action = match->at(4).s;
      if (action == "store_true" || action == "store_false") {
        out->set_attribute(match->at(0).s, Value::boolean(action == "store_true"));
        continue;
      }
      if (action == "store_const") {
        out->set_attribute(match->at(0).s, match->at(5));
        continue;
      }
      std::string text;
      if (has_inline) text = inline_value;
      else if (i + 1 < words->size() && (*words)[i + 1].is_str()) text = (*words)[++i].s;
      else return in.raise("SystemExit", "argument " + word + ": expected one argument", site);
      Value v = match->at(3).is_none() ? Value::str(text) : in.call(match->at(3), Args{{Value::str(text)}, {}}, site);
      out->set_attribute(match->at(0).s, v);
    }
    return ns;
  };
  parser_class->set("parse_args", in.native("argparse.ArgumentParser.parse_args", parse_args));
  parser_class->set("parse_known_args", in.native("argparse.ArgumentParser.parse_known_args", [parse_args](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    return make_tuple({parse_args(in, self, a, site), make_list({})});
  }));
  parser_class->set("add_argument_group", in.native("argparse.ArgumentParser.add_argument_group", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return a.positional.empty() ? Value::none() : a.positional[0];
  }));

  // --- os / sys / warnings / logging: values that depend on the environment stay unknown ---
  in.define("sys.argv", make_list({Value::str("script.py")}));
  in.define("sys.version_info", make_tuple({Value::integer(3), Value::integer(11), Value::integer(0)}));
  in.define("sys.maxsize", Value::integer(INT64_MAX));
  in.define_native("warnings.warn", [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::none(); });
  in.define_native("os.getenv", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    return in.unknown("environment variables are not known statically", site);
  });
  in.define("os.environ", in.unknown("environment variables are not known statically", {}));
  in.define("os.path", in.namespace_value("os.path"));
  in.define("logging.INFO", Value::integer(20));
}

}  // namespace shardlens::python
