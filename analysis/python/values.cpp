#include "python/values.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>

namespace shardlens::python {

namespace {
std::atomic<uint64_t> object_serials{1};
}  // namespace

uint64_t Object::next_serial() { return object_serials.fetch_add(1, std::memory_order_relaxed); }
uint64_t Object::serials_issued() { return object_serials.load(std::memory_order_relaxed); }

namespace {
// Whether two keys are one dict key (key_of(a) == key_of(b)), without making the strings where
// the kinds tell: most keys are attribute names.
bool same_key(const Value& a, const Value& b) {
  if (a.kind == Value::Kind::Str || b.kind == Value::Kind::Str) return a.kind == b.kind && a.s == b.s;
  if (a.kind == Value::Kind::Int && b.kind == Value::Kind::Int) return a.i == b.i;
  return key_of(a) == key_of(b);
}

bool is_property(const Value& v) { return v.kind == Value::Kind::Obj && v.obj->kind == ObjKind::Property; }
}  // namespace

// Small dicts (an instance's few attributes, a native's keywords) are searched in order and get an
// index only once they grow past kUnindexed entries: building one cost more than the searches.
size_t DictObj::position(const Value& key) const {
  if (index.empty()) {
    for (size_t i = 0; i < entries.size(); ++i)
      if (same_key(entries[i].first, key)) return i;
    return npos;
  }
  auto it = index.find(key_of(key));
  return it == index.end() ? npos : it->second;
}

size_t DictObj::position_of_str(std::string_view name) const {
  if (index.empty()) {
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].first.kind == Value::Kind::Str && entries[i].first.s == name) return i;
    return npos;
  }
  // key_of(Value::str(name)), built in a buffer that is reused.
  thread_local std::string key;
  key.assign(1, 's');
  key.append(name);
  auto it = index.find(key);
  return it == index.end() ? npos : it->second;
}

void DictObj::reindex() {
  index.clear();
  if (entries.size() > kUnindexed)
    for (size_t i = 0; i < entries.size(); ++i) index.emplace(key_of(entries[i].first), i);
}

void DictObj::append(Value key, Value value) {
  entries.emplace_back(std::move(key), std::move(value));
  if (!index.empty()) index.emplace(key_of(entries.back().first), entries.size() - 1);
  else if (entries.size() > kUnindexed) reindex();
}

const Value* DictObj::find(const Value& key) const {
  size_t i = position(key);
  return i == npos ? nullptr : &entries[i].second;
}

const Value* DictObj::find_str(std::string_view name) const {
  size_t i = position_of_str(name);
  return i == npos ? nullptr : &entries[i].second;
}

void DictObj::set_str(std::string_view name, Value value) {
  if (size_t i = position_of_str(name); i != npos) {
    entries[i].second = std::move(value);
    return;
  }
  append(Value::str(std::string(name)), std::move(value));
}

void DictObj::set(const Value& key, Value value) {
  if (size_t i = position(key); i != npos) {
    entries[i].second = std::move(value);
    return;
  }
  append(key, std::move(value));
}

bool DictObj::erase(const Value& key) {
  size_t i = position(key);
  if (i == npos) return false;
  entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i));
  reindex();
  return true;
}

int64_t RangeObj::size() const {
  // In 128 bits: range(-(2**63), 0) spans more than int64 holds. Saturates (len() would raise).
  __int128 n = 0;
  if (step > 0 && stop > start) n = (static_cast<__int128>(stop) - start + step - 1) / step;
  if (step < 0 && stop < start) n = (static_cast<__int128>(start) - stop - step - 1) / -static_cast<__int128>(step);
  return n > INT64_MAX ? INT64_MAX : static_cast<int64_t>(n);
}

Value Value::big_integer(ir::BigInt v) {
  if (auto small = v.to_int64()) return integer(*small);
  Value x;
  x.kind = Kind::BigInt;
  x.obj = std::make_shared<BigIntObj>(std::move(v));
  return x;
}

ir::BigInt Value::as_big() const {
  if (kind == Kind::BigInt) return static_cast<const BigIntObj*>(obj.get())->value;
  return ir::BigInt(as_int());
}

double Value::as_float() const {
  if (kind == Kind::Float) return f;
  if (kind == Kind::BigInt) return static_cast<const BigIntObj*>(obj.get())->value.to_double();
  return static_cast<double>(as_int());
}

const Value* ClassObj::find(const std::string& attr) const {
  for (auto& kv : attributes)
    if (kv.first == attr) return &kv.second;
  return nullptr;
}

const Value* ClassObj::lookup(const std::string& attr) const {
  for (const ClassObj* c : mro)
    if (const Value* v = c->find(attr)) return v;
  return nullptr;
}

const Value* ClassObj::lookup_property(const std::string& attr) const {
  if (std::none_of(mro.begin(), mro.end(), [](const ClassObj* c) { return c->holds_property_; })) return nullptr;
  const Value* v = lookup(attr);
  return v && is_property(*v) ? v : nullptr;
}

void ClassObj::set(const std::string& attr, Value v) {
  ++attribute_writes;
  const bool property = is_property(v);
  for (auto& kv : attributes)
    if (kv.first == attr) {
      const bool replaced_property = is_property(kv.second);
      kv.second = std::move(v);
      if (property) holds_property_ = true;
      else if (replaced_property) namespace_replaced();
      return;
    }
  attributes.emplace_back(attr, std::move(v));
  holds_property_ |= property;
}

void ClassObj::namespace_replaced() {
  holds_property_ = std::any_of(attributes.begin(), attributes.end(), [](const auto& kv) { return is_property(kv.second); });
}

bool ClassObj::derives_from(const ClassObj* other) const {
  for (const ClassObj* c : mro)
    if (c == other) return true;
  return false;
}

std::string key_of(const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: return "N";
    // Python: 1 == 1.0 == True hash alike.
    case Value::Kind::Bool: return "i" + std::to_string(v.b ? 1 : 0);
    case Value::Kind::Int: return "i" + std::to_string(v.i);
    case Value::Kind::BigInt: return "i" + v.as_big().to_string();
    case Value::Kind::Float:
      if (std::floor(v.f) == v.f && std::fabs(v.f) < 9e15) return "i" + std::to_string(static_cast<int64_t>(v.f));
      return "f" + std::to_string(v.f);
    case Value::Kind::Str: return "s" + v.s;
    case Value::Kind::Ellipsis: return "E";
    case Value::Kind::Unknown: return "?";
    case Value::Kind::Obj: {
      if (auto* l = TupleView::of(v)) {
        std::string k = "(";
        for (auto& item : l->items) k += key_of(item) + ",";
        return k + ")";
      }
      if (auto* d = v.as<DtypeObj>()) return "d" + d->name;
      char buf[32];
      std::snprintf(buf, sizeof buf, "o%p", static_cast<const void*>(v.obj.get()));
      return buf;
    }
  }
  return "?";
}

static std::string float_repr(double f) {
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  if (std::isnan(f)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", f);
  // Shortest form that round-trips, like Python's repr.
  for (int precision = 1; precision <= 17; ++precision) {
    char shorter[64];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, f);
    if (std::strtod(shorter, nullptr) == f) {
      std::snprintf(buf, sizeof buf, "%s", shorter);
      break;
    }
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string repr(const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return v.b ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v.i);
    case Value::Kind::BigInt: return v.as_big().to_string();
    case Value::Kind::Float: return float_repr(v.f);
    case Value::Kind::Str: {
      // Python's choice of quotes and escapes.
      char q = v.s.find('\'') != std::string::npos && v.s.find('"') == std::string::npos ? '"' : '\'';
      std::string out(1, q);
      for (char c : v.s) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\r') out += "\\r";
        else if (c == q) out += std::string("\\") + q;
        else out += c;
      }
      return out + q;
    }
    case Value::Kind::Ellipsis: return "Ellipsis";
    case Value::Kind::Unknown: return "<unknown>";
    case Value::Kind::Obj: break;
  }
  if (auto* l = TupleView::of(v)) {
    bool tuple = v.obj->kind == ObjKind::Tuple;
    std::string s = tuple ? "(" : "[";
    for (size_t i = 0; i < l->items.size(); ++i) s += (i ? ", " : "") + repr(l->items[i]);
    if (tuple && l->items.size() == 1) s += ",";
    return s + (tuple ? ")" : "]");
  }
  if (is_set(v)) {
    const auto& d = static_cast<const DictObj&>(*v.obj);
    if (d.entries.empty()) return "set()";
    std::string s = "{";
    for (size_t i = 0; i < d.entries.size(); ++i) s += (i ? ", " : "") + repr(d.entries[i].first);
    return s + "}";
  }
  if (auto* d = v.as<DictObj>()) {
    std::string s = "{";
    for (size_t i = 0; i < d->entries.size(); ++i)
      s += (i ? ", " : "") + repr(d->entries[i].first) + ": " + repr(d->entries[i].second);
    return s + "}";
  }
  if (auto* d = v.as<DtypeObj>()) return "torch." + d->name;
  if (auto* c = v.as<ClassObj>()) return "<class '" + c->name + "'>";
  if (auto* t = v.as<TensorObj>()) {
    std::string s = t->is_parameter ? "Parameter(shape=[" : "Tensor(shape=[";
    if (t->shape)
      for (size_t i = 0; i < t->shape->size(); ++i) s += (i ? ", " : "") + std::to_string((*t->shape)[i]);
    return s + "])";
  }
  if (auto* f = v.as<FunctionObj>()) return "<function " + f->qualname + ">";
  if (auto* n = v.as<NativeObj>()) return "<built-in " + n->name + ">";
  if (auto* ns = v.as<NamespaceObj>()) return "<module '" + ns->qualname + "'>";
  if (auto* inst = v.as<InstanceObj>()) return "<" + inst->cls->name + " object>";
  return "<" + type_name(v) + ">";
}

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: return "NoneType";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int:
    case Value::Kind::BigInt: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::Str: return "str";
    case Value::Kind::Ellipsis: return "ellipsis";
    case Value::Kind::Unknown: return "unknown";
    case Value::Kind::Obj: break;
  }
  switch (v.obj->kind) {
    case ObjKind::List: return "list";
    case ObjKind::Tuple: return "tuple";
    case ObjKind::Dict: return "dict";
    case ObjKind::Set: return "set";
    case ObjKind::Range: return "range";
    case ObjKind::Slice: return "slice";
    case ObjKind::Function: return "function";
    case ObjKind::BoundMethod: return "method";
    case ObjKind::Native: return "builtin_function_or_method";
    case ObjKind::Class: return "type";
    case ObjKind::Instance: return static_cast<InstanceObj*>(v.obj.get())->cls->name;
    case ObjKind::Namespace: return "module";
    case ObjKind::Tensor: return static_cast<TensorObj*>(v.obj.get())->is_parameter ? "Parameter" : "Tensor";
    case ObjKind::Partial: return "functools.partial";  // also the receiver name of its attributes
    case ObjKind::Super: return "super";
    case ObjKind::Dtype: return "torch.dtype";
    case ObjKind::Property: return "property";
    case ObjKind::StaticMethod: return "staticmethod";
    case ObjKind::ClassMethod: return "classmethod";
    case ObjKind::DataclassField: return "Field";
    case ObjKind::BigInt: return "int";  // a Value of Kind::BigInt answered above
  }
  return "object";
}

static int64_t normalise_index(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

std::vector<int64_t> slice_indices(const SliceObj& s, int64_t n, bool& ok) {
  ok = true;
  int64_t step = s.step.is_int() ? s.step.as_int() : 1;
  if (step == 0 || (!s.step.is_none() && !s.step.is_int()) || (!s.lower.is_none() && !s.lower.is_int()) ||
      (!s.upper.is_none() && !s.upper.is_int())) {
    ok = false;
    return {};
  }
  int64_t lo, hi;
  if (step > 0) {
    lo = s.lower.is_none() ? 0 : std::clamp(normalise_index(s.lower.as_int(), n), int64_t{0}, n);
    hi = s.upper.is_none() ? n : std::clamp(normalise_index(s.upper.as_int(), n), int64_t{0}, n);
  } else {
    lo = s.lower.is_none() ? n - 1 : std::clamp(normalise_index(s.lower.as_int(), n), int64_t{-1}, n - 1);
    hi = s.upper.is_none() ? -1 : std::clamp(normalise_index(s.upper.as_int(), n), int64_t{-1}, n - 1);
  }
  std::vector<int64_t> out;
  for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) out.push_back(i);
  return out;
}

Value make_list(std::vector<Value> items, bool tuple) {
  auto l = std::make_shared<ListObj>(tuple);
  l->items = std::move(items);
  return Value::object(std::move(l));
}

Value make_tuple(std::vector<Value> items) { return make_list(std::move(items), true); }

Value set_algebra(std::string_view op, const DictObj& a, const DictObj& b) {
  auto out = std::make_shared<DictObj>(true);
  for (auto& kv : a.entries) {
    const bool in_b = b.find(kv.first) != nullptr;
    if (op == "|" || (op == "&" && in_b) || ((op == "-" || op == "^") && !in_b)) out->set(kv.first, Value::none());
  }
  if (op == "|" || op == "^")
    for (auto& kv : b.entries)
      if (!a.find(kv.first)) out->set(kv.first, Value::none());
  return Value::object(out);
}

}  // namespace shardlens::python
