// torch as far as module construction needs it: nn layers with PyTorch's exact parameter and
// buffer names, shapes and registration order (checked against torch 1.13 by the test suite),
// the containers, nn.Module's methods, nn.init, dtypes, and tensor factories with shapes.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <span>

#include "ir/module_path.h"
#include "python/interpreter.h"
#include "python/module_tree.h"

namespace shardlens::python {
namespace {

using Args = CallArgs;
// A native's arguments bound to its parameter names: a handful, so a flat list (nn.Linear's
// construction was a sixth of a re-extraction's instructions, much of it in a std::map here).
class Bound {
 public:
  Bound() { items_.reserve(8); }
  Value& operator[](std::string_view name) {
    for (auto& [key, value] : items_)
      if (key == name) return value;
    return items_.emplace_back(std::string(name), Value()).second;
  }
  const Value* find(std::string_view name) const {
    for (auto& [key, value] : items_)
      if (key == name) return &value;
    return nullptr;
  }
  size_t count(std::string_view name) const { return find(name) ? 1 : 0; }

 private:
  std::vector<std::pair<std::string, Value>> items_;
};
struct P {
  const char* name;
  std::optional<Value> fallback;  // nullopt: required
};

// Binds a native's arguments (self already removed) to named parameters, like Python does.
bool bind_args(Interpreter& in, const std::string& fname, const std::vector<P>& params, const Args& a, Bound& out,
          const ir::Span& site, bool allow_extra_kwargs = false) {
  if (a.positional.size() > params.size()) {
    in.raise("TypeError", fname + "() takes " + std::to_string(params.size()) + " positional arguments but " +
                              std::to_string(a.positional.size()) + " were given", site);
    return false;
  }
  for (size_t i = 0; i < a.positional.size(); ++i) out[params[i].name] = a.positional[i];
  for (auto& keyword : a.keywords) {
    const auto& k = keyword.first;  // not a structured binding: the lambda captures it (clang before 16 refuses)
    const auto& v = keyword.second;
    bool known = std::any_of(params.begin(), params.end(), [&](const P& p) { return k == p.name; });
    if (!known) {
      if (allow_extra_kwargs) continue;
      in.raise("TypeError", fname + "() got an unexpected keyword argument '" + k + "'", site);
      return false;
    }
    if (out.count(k)) {
      in.raise("TypeError", fname + "() got multiple values for argument '" + k + "'", site);
      return false;
    }
    out[k] = v;
  }
  for (auto& p : params) {
    if (out.count(p.name)) continue;
    if (!p.fallback) {
      in.raise("TypeError", fname + "() missing required argument '" + p.name + "'", site);
      return false;
    }
    out[p.name] = *p.fallback;
  }
  return true;
}

Value self_of(Args& a) {
  if (a.positional.empty()) return {};
  Value self = a.positional.front();
  a.positional.erase(a.positional.begin());
  return self;
}

// Shape dims from a list of values: ints, or one tuple/list/torch.Size of ints.
std::optional<std::vector<int64_t>> dims_of(const std::vector<Value>& values, Value* why) {
  std::vector<Value> flat = values;
  if (flat.size() == 1)
    if (auto* l = TupleView::of(flat[0])) flat = l->items;
  std::vector<int64_t> out;
  for (auto& v : flat) {
    if (v.is_unknown()) {
      if (why) *why = v;
      return std::nullopt;
    }
    if (v.kind == Value::Kind::BigInt) {  // PyTorch sizes are int64: no tensor has this dim
      if (why) *why = Value::make_unknown("size " + repr(v) + " is beyond 64 bits");
      return std::nullopt;
    }
    if (!v.is_int()) {
      if (why) *why = Value::make_unknown("size " + repr(v) + " is not an integer");
      return std::nullopt;
    }
    out.push_back(v.as_int());
  }
  return out;
}

std::string dtype_name(const Value& v) {
  if (auto* d = v.as<DtypeObj>()) return d->name;
  return "";
}

Value new_param(Interpreter& in, std::vector<Value> dims, const ir::Span& site, const std::string& dtype,
                const std::string& what) {
  Value why;
  auto shape = dims_of(dims, &why);
  auto t = in.new_tensor(shape, site, true);
  if (!dtype.empty()) t->dtype = dtype;
  if (!shape) {
    t->why = why.unknown ? why.unknown : std::make_shared<UnknownInfo>(UnknownInfo{"shape not known", site, false});
    in.note("shape of parameter '" + what + "' could not be resolved", t->why->reason, site);
  } else {
    for (int64_t d : *shape)
      if (d < 0) {
        in.raise("RuntimeError", "parameter '" + what + "' would have a negative dimension", site);
        break;
      }
  }
  return Value::object(t);
}

constexpr int64_t kMaxTrackedValues = 65536;

Value new_buffer_tensor(Interpreter& in, std::vector<Value> dims, const ir::Span& site, const std::string& dtype,
                        std::optional<double> fill = std::nullopt) {
  Value why;
  auto shape = dims_of(dims, &why);
  auto t = in.new_tensor(shape, site, false);
  if (!dtype.empty()) t->dtype = dtype;
  if (!shape) t->why = why.unknown;
  else if (fill && t->numel() <= kMaxTrackedValues) t->values = TrackedValues::filled(static_cast<size_t>(t->numel()), *fill);
  return Value::object(t);
}

// Known values are kept at the tensor's precision, so .item() answers as PyTorch would.
void round_to_dtype(std::vector<double>& values, const std::string& dtype) {
  if (dtype == "float32")
    for (auto& v : values) v = static_cast<double>(static_cast<float>(v));
}

Value tensor_with_values(Interpreter& in, std::vector<int64_t> shape, std::vector<double> values, const std::string& dtype,
                         const ir::Span& site) {
  auto t = in.new_tensor(std::move(shape), site, false);
  t->dtype = dtype;
  round_to_dtype(values, dtype);
  if (static_cast<int64_t>(values.size()) <= kMaxTrackedValues) t->values = std::move(values);
  return Value::object(t);
}

bool is_integral_dtype(const std::string& d) { return d.rfind("int", 0) == 0 || d == "uint8" || d == "bool"; }

Value scalar_of(const TensorObj& t, double v) {
  if (t.dtype == "bool") return Value::boolean(v != 0);
  if (is_integral_dtype(t.dtype)) return Value::integer(static_cast<int64_t>(v));
  return Value::floating(v);
}

// The n-tuple a conv's kernel_size / stride / padding argument means.
std::vector<Value> n_tuple(const Value& v, size_t n) {
  if (auto* l = TupleView::of(v)) return l->items;
  return std::vector<Value>(n, v);
}

std::string args_repr(Interpreter& in, const Args& a) {
  std::string s;
  for (auto& v : a.positional) s += (s.empty() ? "" : ", ") + repr(v);
  for (auto& [k, v] : a.keywords) s += (s.empty() ? "" : ", ") + k + "=" + repr(v);
  (void)in;
  return s;
}

std::string tuple_repr(const std::vector<Value>& items) {
  std::string s = "(";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + repr(items[i]);
  if (items.size() == 1) s += ",";
  return s + ")";
}

InstanceObj* instance(const Value& v) { return v.as<InstanceObj>(); }

void register_param(Interpreter& in, const Value& self, const std::string& name, Value param, const ir::Span& site) {
  if (auto* m = instance(self); m && m->module) in.module_set(*m, name, std::move(param), site);
}

void register_none_param(const Value& self, const std::string& name) {
  if (auto* m = instance(self); m && m->module) {
    if (auto* slot = ModuleData::find(m->module->parameters, name)) *slot = nullptr;
    else m->module->parameters.emplace_back(name, nullptr);
  }
}

void register_buffer(const Value& self, const std::string& name, std::shared_ptr<TensorObj> t, bool persistent) {
  auto* m = instance(self);
  if (!m || !m->module) return;
  auto& md = *m->module;
  m->erase_attribute(name);
  for (size_t i = 0; i < md.buffers.size(); ++i)
    if (md.buffers[i].first == name) {
      md.buffers[i].second = std::move(t);
      md.buffer_persistent[i] = persistent;
      return;
    }
  md.buffers.emplace_back(name, std::move(t));
  md.buffer_persistent.push_back(persistent);
}

void set_attrs(const Value& self, const Bound& b, std::initializer_list<const char*> names) {
  if (auto* m = instance(self))
    for (const char* n : names) {
      if (const Value* v = b.find(n)) m->set_attribute(n, *v);
    }
}

void set_repr(const Value& self, std::string r) {
  if (auto* m = instance(self); m && m->module) m->module->extra_repr = std::move(r);
}

bool is_true(Interpreter& in, const Value& v) { return in.truth(v).value_or(false); }

// --- tensor shapes -----------------------------------------------------------------------------

std::optional<std::vector<int64_t>> broadcast(std::span<const int64_t> a, std::span<const int64_t> b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

Value tensor_like(Interpreter& in, const TensorObj& t, std::optional<std::vector<int64_t>> shape, const ir::Span& site) {
  auto r = in.new_tensor(std::move(shape), site);
  r->dtype = t.dtype;
  r->why = t.why;
  if (!r->shape && !r->why) r->why = std::make_shared<UnknownInfo>(UnknownInfo{"tensor shape not modelled", site, false});
  return Value::object(r);
}

int64_t norm_dim(int64_t d, size_t rank) { return d < 0 ? d + static_cast<int64_t>(rank) : d; }

std::optional<std::vector<int64_t>> reshape(std::span<const int64_t> from, std::vector<int64_t> to) {
  int64_t total = 1;
  for (auto d : from) total *= d;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(i);
    } else {
      known *= to[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || total % known) return std::nullopt;
    to[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return to;
}

Value tensor_index(Interpreter& in, const TensorObj& t, const Value& index, const ir::Span& site) {
  if (!t.shape) return tensor_like(in, t, std::nullopt, site);
  std::vector<Value> items;
  if (index.kind == Value::Kind::Obj && index.obj->kind == ObjKind::Tuple) items = TupleView::of(index)->items;
  else items.push_back(index);
  const auto& shape = *t.shape;
  size_t consumed = 0;
  for (auto& it : items)
    if (!it.is_none() && it.kind != Value::Kind::Ellipsis) ++consumed;
  size_t lists = 0;  // several lists broadcast together: not modelled
  for (auto& it : items) lists += int_list_length(it) >= 0;
  std::vector<int64_t> out;
  size_t dim = 0;
  for (auto& it : items) {
    if (it.is_unknown()) return tensor_like(in, t, std::nullopt, site);  // an index we cannot see: the shape is unknown, not an error
    if (it.is_none()) { out.push_back(1); continue; }
    if (it.kind == Value::Kind::Ellipsis) {
      size_t keep = shape.size() >= consumed ? shape.size() - consumed : 0;
      for (size_t k = 0; k < keep && dim < shape.size(); ++k) out.push_back(shape[dim++]);
      continue;
    }
    if (dim >= shape.size()) return in.raise("IndexError", "too many indices for tensor", site);
    if (it.is_int()) { ++dim; continue; }
    if (auto* s = it.as<SliceObj>()) {
      int64_t n = shape[dim++];
      int64_t step = s->step.is_int() ? s->step.as_int() : 1;
      if ((!s->lower.is_none() && !s->lower.is_int()) || (!s->upper.is_none() && !s->upper.is_int()) || step <= 0)
        return tensor_like(in, t, std::nullopt, site);
      int64_t lo = s->lower.is_none() ? 0 : std::clamp(norm_dim(s->lower.as_int(), static_cast<size_t>(n)), int64_t{0}, n);
      int64_t hi = s->upper.is_none() ? n : std::clamp(norm_dim(s->upper.as_int(), static_cast<size_t>(n)), int64_t{0}, n);
      out.push_back(hi > lo ? (hi - lo + step - 1) / step : 0);
      continue;
    }
    if (const int64_t picked = int_list_length(it); picked >= 0 && lists == 1) {
      // One list of ints (`x[:, [-1], :]`): that many entries of the dim, in place.
      for (const Value& k : it.as<ListObj>()->items) {
        const int64_t i = k.as_int() < 0 ? k.as_int() + shape[dim] : k.as_int();
        if (i < 0 || i >= shape[dim]) return in.raise("IndexError", "index out of range", site);
      }
      out.push_back(picked);
      ++dim;
      continue;
    }
    return tensor_like(in, t, std::nullopt, site);  // advanced indexing: shape depends on values
  }
  while (dim < shape.size()) out.push_back(shape[dim++]);
  Value result = tensor_like(in, t, out, site);
  if (auto* sl = items.size() == 1 ? items[0].as<SliceObj>() : nullptr; sl && t.values && !shape.empty() && !out.empty()) {
    int64_t n = shape[0];
    int64_t row = n ? static_cast<int64_t>(t.values->size()) / n : 0;
    int64_t step = sl->step.is_int() ? sl->step.as_int() : 1;
    int64_t lo = sl->lower.is_none() ? 0 : std::clamp(norm_dim(sl->lower.as_int(), static_cast<size_t>(n)), int64_t{0}, n);
    std::vector<double> vals;
    for (int64_t k = 0; k < out[0]; ++k)
      vals.insert(vals.end(), t.values->begin() + (lo + k * step) * row, t.values->begin() + (lo + k * step + 1) * row);
    result.as<TensorObj>()->values = std::move(vals);
  }
  if (t.values && items.size() == 1 && items[0].is_int() && !shape.empty()) {
    int64_t n = shape[0], i = items[0].as_int();
    if (i < 0) i += n;
    if (i < 0 || i >= n) return in.raise("IndexError", "index out of range", site);
    int64_t row = n ? static_cast<int64_t>(t.values->size()) / n : 0;
    result.as<TensorObj>()->values = std::vector<double>(t.values->begin() + i * row, t.values->begin() + (i + 1) * row);
  }
  return result;
}

// Tensor methods that keep the shape (in-place initialisers, casts, elementwise maths).
const char* kShapePreserving[] = {
    "normal_", "uniform_", "zero_", "fill_", "copy_", "clamp_", "clamp", "mul_", "add_", "div_", "sub_", "exp_",
    "log_", "clone", "detach", "detach_", "contiguous", "float", "half", "bfloat16", "double", "int", "long",
    "bool", "byte", "cpu", "cuda", "to", "type", "requires_grad_", "triu", "tril", "triu_", "tril_", "exp", "log",
    "sin", "cos", "sqrt", "rsqrt", "abs", "neg", "sigmoid", "tanh", "relu", "masked_fill", "masked_fill_",
    "fill_diagonal_", "erfinv_", "trunc_normal_", "pow", "reciprocal", "square", "float_power", "mul", "add", "div",
    "sub", "round", "floor", "ceil", "type_as", "pin_memory", "share_memory_", "log1p", "expm1", "clamp_min",
    "clamp_max", "sign", "bernoulli_", "random_", "exponential_", "geometric_", "cauchy_", "log_normal_", "set_",
    "softmax", "log_softmax", "cumsum", "cumprod", "flip", "roll", "requires_grad", "to_sparse",
    "to_dense", "coalesce", "nan_to_num", "abs_", "neg_", "sqrt_", "pow_", "reciprocal_", "sigmoid_", "tanh_"};

// Reductions (sum, mean, max, ...) over all dims or some, with keepdim; values when known.
Value reduce(Interpreter& in, const std::string& name, const TensorObj& t, const Value* dim_arg, bool keepdim,
             const ir::Span& site) {
  if (!t.shape) return tensor_like(in, t, std::nullopt, site);
  const auto& shape = *t.shape;
  std::vector<bool> reduced(shape.size(), dim_arg == nullptr || dim_arg->is_none());
  if (dim_arg && !dim_arg->is_none()) {
    std::vector<Value> dims;
    if (auto* l = TupleView::of(*dim_arg)) dims = l->items; else dims.push_back(*dim_arg);
    for (auto& d : dims) {
      if (!d.is_int()) return tensor_like(in, t, std::nullopt, site);
      int64_t k = norm_dim(d.as_int(), shape.size());
      if (k < 0 || k >= static_cast<int64_t>(shape.size())) return in.raise("IndexError", "dimension out of range", site);
      reduced[k] = true;
    }
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!reduced[i]) out.push_back(shape[i]);
    else if (keepdim) out.push_back(1);
  Value r = tensor_like(in, t, out, site);
  auto* rt = r.as<TensorObj>();
  if (name == "argmax" || name == "argmin") rt->dtype = "int64";
  if (name == "any" || name == "all") rt->dtype = "bool";
  if (name == "mean" && is_integral_dtype(rt->dtype)) rt->dtype = "float32";
  if (!t.values) return r;
  // Fold values: each input element goes to the output cell of its kept coordinates.
  size_t n_out = 1;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!reduced[i]) n_out *= static_cast<size_t>(shape[i]);
  std::vector<std::vector<double>> groups(n_out);
  std::vector<int64_t> idx(shape.size(), 0);
  for (double v : *t.values) {
    size_t o = 0;
    for (size_t i = 0; i < shape.size(); ++i)
      if (!reduced[i]) o = o * static_cast<size_t>(shape[i]) + static_cast<size_t>(idx[i]);
    groups[o].push_back(v);
    for (size_t i = shape.size(); i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  std::vector<double> values;
  for (auto& g : groups) {
    double acc = 0;
    if (name == "sum") for (double v : g) acc += v;
    else if (name == "mean") { for (double v : g) acc += v; acc = g.empty() ? NAN : acc / static_cast<double>(g.size()); }
    else if (name == "prod") { acc = 1; for (double v : g) acc *= v; }
    else if (name == "max" || name == "amax") acc = g.empty() ? NAN : *std::max_element(g.begin(), g.end());
    else if (name == "min" || name == "amin") acc = g.empty() ? NAN : *std::min_element(g.begin(), g.end());
    else if (name == "argmax") acc = static_cast<double>(std::max_element(g.begin(), g.end()) - g.begin());
    else if (name == "argmin") acc = static_cast<double>(std::min_element(g.begin(), g.end()) - g.begin());
    else if (name == "any") acc = std::any_of(g.begin(), g.end(), [](double v) { return v != 0; });
    else if (name == "all") acc = std::all_of(g.begin(), g.end(), [](double v) { return v != 0; });
    else if (name == "norm") { for (double v : g) acc += v * v; acc = std::sqrt(acc); }
    else return r;
    values.push_back(acc);
  }
  rt->values = std::move(values);
  return r;
}

Value tensor_method(Interpreter& in, const std::string& name, const Value& self, Args& a, const ir::Span& site) {
  auto* t = self.as<TensorObj>();
  const auto& shape = t->shape;
  auto unknown_shape = [&] { return tensor_like(in, *t, std::nullopt, site); };
  if (name == "size") {
    if (!shape) return in.unknown("size of a tensor whose shape is unknown", site);
    if (a.positional.empty()) {
      std::vector<Value> dims;
      for (auto d : *shape) dims.push_back(Value::integer(d));
      return make_tuple(std::move(dims));
    }
    if (!a.positional[0].is_int()) return in.unknown("size() argument", site);
    int64_t d = norm_dim(a.positional[0].as_int(), shape->size());
    if (d < 0 || d >= static_cast<int64_t>(shape->size())) return in.raise("IndexError", "dimension out of range", site);
    return Value::integer((*shape)[d]);
  }
  if (name == "dim" || name == "ndimension") {
    if (!shape) return in.unknown("rank of a tensor whose shape is unknown", site);
    return Value::integer(static_cast<int64_t>(shape->size()));
  }
  if (name == "numel" || name == "nelement") {
    if (!shape) return in.unknown("numel of a tensor whose shape is unknown", site);
    int64_t n = 1;
    for (auto d : *shape) n *= d;
    return Value::integer(n);
  }
  if (name == "element_size") {
    static const std::map<std::string, int64_t> sizes = {{"float64", 8}, {"int64", 8}, {"complex64", 8}, {"float32", 4},
                                                         {"int32", 4}, {"float16", 2}, {"bfloat16", 2}, {"int16", 2},
                                                         {"complex128", 16}};
    auto it = sizes.find(t->dtype);
    return Value::integer(it == sizes.end() ? 1 : it->second);
  }
  if (name == "item") {
    if (t->values && t->values->size() == 1) return scalar_of(*t, (*t->values)[0]);
    return in.unknown("tensor values are not known statically", site);
  }
  if (name == "tolist") {
    if (t->values && shape && shape->size() <= 1) {
      if (shape->empty()) return scalar_of(*t, (*t->values)[0]);
      std::vector<Value> out;
      for (double v : *t->values) out.push_back(scalar_of(*t, v));
      return make_list(std::move(out));
    }
    return in.unknown("tensor values are not known statically", site);
  }
  if (name == "view" || name == "reshape") {
    if (!shape) return unknown_shape();
    if (!a.positional.empty() && a.positional[0].as<DtypeObj>()) return unknown_shape();
    auto to = dims_of(a.positional, nullptr);
    if (!to) return unknown_shape();
    auto r = reshape(*shape, *to);
    if (!r) return in.raise("RuntimeError", "shape is invalid for input of this size", site);
    Value out = tensor_like(in, *t, r, site);
    out.as<TensorObj>()->values = t->values;  // same elements, same order
    return out;
  }
  if (name == "unsqueeze" || name == "squeeze") {
    if (!shape) return unknown_shape();
    auto s = *shape;
    if (name == "unsqueeze") {
      if (a.positional.empty() || !a.positional[0].is_int()) return unknown_shape();
      int64_t d = a.positional[0].as_int();
      if (d < 0) d += static_cast<int64_t>(s.size()) + 1;
      if (d < 0 || d > static_cast<int64_t>(s.size())) return in.raise("IndexError", "dimension out of range", site);
      s.insert(s.begin() + d, 1);
    } else if (a.positional.empty()) {
      s.erase(std::remove(s.begin(), s.end(), 1), s.end());
    } else if (a.positional[0].is_int()) {
      int64_t d = norm_dim(a.positional[0].as_int(), s.size());
      if (d >= 0 && d < static_cast<int64_t>(s.size()) && s[d] == 1) s.erase(s.begin() + d);
    }
    Value out = tensor_like(in, *t, s, site);
    out.as<TensorObj>()->values = t->values;
    return out;
  }
  if (name == "expand") {
    if (!shape) return unknown_shape();
    auto to = dims_of(a.positional, nullptr);
    if (!to || to->size() < shape->size()) return unknown_shape();
    auto s = *to;
    size_t offset = s.size() - shape->size();
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == -1) s[i] = i >= offset ? (*shape)[i - offset] : 1;
    return tensor_like(in, *t, s, site);
  }
  if (name == "repeat") {
    if (!shape) return unknown_shape();
    auto reps = dims_of(a.positional, nullptr);
    if (!reps || reps->size() < shape->size()) return unknown_shape();
    std::vector<int64_t> s(reps->size());
    size_t offset = reps->size() - shape->size();
    for (size_t i = 0; i < s.size(); ++i) s[i] = (*reps)[i] * (i >= offset ? (*shape)[i - offset] : 1);
    return tensor_like(in, *t, s, site);
  }
  if (name == "transpose" || name == "swapaxes") {
    if (!shape || a.positional.size() != 2 || !a.positional[0].is_int() || !a.positional[1].is_int()) return unknown_shape();
    auto s = *shape;
    int64_t x = norm_dim(a.positional[0].as_int(), s.size()), y = norm_dim(a.positional[1].as_int(), s.size());
    if (x < 0 || y < 0 || x >= static_cast<int64_t>(s.size()) || y >= static_cast<int64_t>(s.size()))
      return in.raise("IndexError", "dimension out of range", site);
    std::swap(s[x], s[y]);
    return tensor_like(in, *t, s, site);
  }
  if (name == "t") {
    if (!shape) return unknown_shape();
    auto s = *shape;
    if (s.size() == 2) std::swap(s[0], s[1]);
    return tensor_like(in, *t, s, site);
  }
  if (name == "permute") {
    if (!shape) return unknown_shape();
    auto order = dims_of(a.positional, nullptr);
    if (!order || order->size() != shape->size()) return unknown_shape();
    std::vector<int64_t> s;
    for (auto d : *order) s.push_back((*shape)[norm_dim(d, shape->size())]);
    return tensor_like(in, *t, s, site);
  }
  if (name == "unflatten") {
    // x.unflatten(dim, sizes): one dim split into several, one of them -1 (what is left).
    const Value* dim = argument(a, 0, "dim");
    const Value* sizes = argument(a, 1, "sizes");
    if (!shape || !dim || !dim->is_int() || !sizes) return unknown_shape();
    const int64_t d = norm_dim(dim->as_int(), shape->size());
    auto parts = dims_of({*sizes}, nullptr);
    if (d < 0 || d >= static_cast<int64_t>(shape->size()) || !parts || parts->empty()) return unknown_shape();
    int64_t known = 1, free_at = -1;
    for (size_t i = 0; i < parts->size(); ++i) {
      if ((*parts)[i] == -1 && free_at < 0) free_at = static_cast<int64_t>(i);
      else if ((*parts)[i] <= 0) return unknown_shape();
      else known *= (*parts)[i];
    }
    const int64_t whole = (*shape)[d];
    if (free_at >= 0) {
      if (whole % known != 0) return in.raise("RuntimeError", "unflatten: sizes do not divide the dim", site);
      (*parts)[free_at] = whole / known;
    } else if (known != whole) {
      return in.raise("RuntimeError", "unflatten: sizes do not multiply to the dim", site);
    }
    std::vector<int64_t> s(shape->begin(), shape->begin() + d);
    s.insert(s.end(), parts->begin(), parts->end());
    s.insert(s.end(), shape->begin() + d + 1, shape->end());
    return tensor_like(in, *t, s, site);
  }
  if (name == "repeat_interleave") {
    // x.repeat_interleave(n, dim): each element n times along dim (flattened when dim is None);
    // a tensor of per-element repeats has data-dependent sizes.
    const Value* repeats = argument(a, 0, "repeats");
    const Value* dim = argument(a, 1, "dim");
    if (!shape || !repeats || !repeats->is_int() || (dim && !dim->is_none() && !dim->is_int())) return unknown_shape();
    std::vector<int64_t> s;
    if (!dim || dim->is_none()) {
      int64_t n = 1;
      for (auto d : *shape) n *= d;
      s = {n * repeats->as_int()};
    } else {
      s.assign(shape->begin(), shape->end());
      const int64_t d = norm_dim(dim->as_int(), s.size());
      if (d < 0 || d >= static_cast<int64_t>(s.size())) return unknown_shape();
      s[d] *= repeats->as_int();
    }
    return tensor_like(in, *t, s, site);
  }
  if (name == "flatten") {
    if (!shape) return unknown_shape();
    const Value* start_dim = argument(a, 0, "start_dim");
    const Value* end_dim = argument(a, 1, "end_dim");
    if ((start_dim && !start_dim->is_int()) || (end_dim && !end_dim->is_int())) return unknown_shape();
    int64_t start = start_dim ? start_dim->as_int() : 0;
    int64_t end = end_dim ? end_dim->as_int() : -1;
    if (shape->empty()) return tensor_like(in, *t, std::vector<int64_t>{1}, site);
    start = norm_dim(start, shape->size());
    end = norm_dim(end, shape->size());
    std::vector<int64_t> s(shape->begin(), shape->begin() + start);
    int64_t merged = 1;
    for (int64_t i = start; i <= end; ++i) merged *= (*shape)[i];
    s.push_back(merged);
    s.insert(s.end(), shape->begin() + end + 1, shape->end());
    Value out = tensor_like(in, *t, s, site);
    out.as<TensorObj>()->values = t->values;
    return out;
  }
  if (name == "cos" || name == "sin") return tensor_like(in, *t, shape, site);
  static const std::set<std::string> reductions = {"sum", "mean", "prod", "max", "min", "amax", "amin", "argmax",
                                                   "argmin", "any", "all", "norm", "std", "var", "logsumexp", "nansum"};
  if (reductions.count(name)) {
    const Value* keep = a.keyword("keepdim");
    const Value* dim = argument(a, name == "norm" ? 1 : 0, "dim");
    if (name == "norm" && !a.positional.empty() && !a.keyword("dim")) dim = a.positional.size() > 1 ? &a.positional[1] : nullptr;
    Value r = reduce(in, name, *t, dim, keep && in.truth(*keep).value_or(false), site);
    // max(dim=...) / min(dim=...) return (values, indices).
    if ((name == "max" || name == "min") && dim && !dim->is_none() && !dim->as<TensorObj>()) {
      Value idx = reduce(in, name == "max" ? "argmax" : "argmin", *t, dim, keep && in.truth(*keep).value_or(false), site);
      return make_tuple({r, idx});
    }
    return r;
  }
  if (name == "new_tensor") {
    Args data{{a.positional.empty() ? Value() : a.positional[0]}, a.keywords};
    Value r = in.call(*in.builtin("torch.tensor"), data, site);
    if (auto* rt = r.as<TensorObj>(); rt && !a.keyword("dtype")) rt->dtype = t->dtype;
    return r;
  }
  if (name == "new_zeros" || name == "new_ones" || name == "new_empty" || name == "new_full") {
    Value size = a.positional.empty() ? Value() : a.positional[0];
    std::optional<double> fill;
    if (name == "new_zeros") fill = 0.0;
    if (name == "new_ones") fill = 1.0;
    if (name == "new_full" && a.positional.size() > 1 && a.positional[1].is_number()) fill = a.positional[1].as_float();
    const Value* d = a.keyword("dtype");
    std::vector<Value> dims = name == "new_full" || a.positional.size() <= 1 ? std::vector<Value>{size} : a.positional;
    return new_buffer_tensor(in, dims, site, d ? dtype_name(*d) : t->dtype, fill);
  }
  if (name == "chunk" || name == "split" || name == "unbind")
    return in.unknown("tensor splitting is analysed by the dataflow front end", site);
  for (const char* keep : kShapePreserving)
    if (name == keep) {
      if (name == "requires_grad_") return self;
      if (name.back() == '_') {  // in place: the same tensor, its values now unknown
        t->values.reset();
        return self;
      }
      Value r = tensor_like(in, *t, shape, site);
      static const std::set<std::string> casts = {"clone", "detach", "contiguous", "float", "half", "bfloat16",
                                                  "double", "int", "long", "bool", "cpu", "cuda", "to", "type",
                                                  "pin_memory", "type_as"};
      if (casts.count(name) && t->values) {
        std::vector<double> v = *t->values;
        const std::string& d = r.as<TensorObj>()->dtype;
        if (d.rfind("int", 0) == 0 || d == "uint8")
          for (auto& x : v) x = std::trunc(x);
        if (d == "bool")
          for (auto& x : v) x = x != 0;
        r.as<TensorObj>()->values = std::move(v);
      }
      if (name == "int") r.as<TensorObj>()->dtype = "int32";
      const Value* dtype = a.positional.empty() ? a.keyword("dtype") : &a.positional[0];
      if (dtype && dtype->as<DtypeObj>()) r.as<TensorObj>()->dtype = dtype->as<DtypeObj>()->name;
      if (name == "float") r.as<TensorObj>()->dtype = "float32";
      if (name == "half") r.as<TensorObj>()->dtype = "float16";
      if (name == "bfloat16") r.as<TensorObj>()->dtype = "bfloat16";
      if (name == "long") r.as<TensorObj>()->dtype = "int64";
      if (name == "bool") r.as<TensorObj>()->dtype = "bool";
      return r;
    }
  return in.unknown("Tensor." + name + "() is not modelled", site);
}

}  // namespace

void install_torch(Interpreter& in) {
  auto module = in.module_base();
  in.define("torch.nn.modules.module.Module", Value::object(module));

  // --- dtypes ---
  for (auto& [alias, name] : std::vector<std::pair<std::string, std::string>>{
           {"float32", "float32"}, {"float", "float32"}, {"float16", "float16"}, {"half", "float16"},
           {"bfloat16", "bfloat16"}, {"float64", "float64"}, {"double", "float64"}, {"int64", "int64"},
           {"long", "int64"}, {"int32", "int32"}, {"int", "int32"}, {"int16", "int16"}, {"short", "int16"},
           {"int8", "int8"}, {"uint8", "uint8"}, {"bool", "bool"}, {"complex64", "complex64"},
           {"cfloat", "complex64"}, {"complex128", "complex128"}, {"float8_e4m3fn", "float8_e4m3fn"}}) {
    auto d = std::make_shared<DtypeObj>();
    d->name = name;
    in.define("torch." + alias, Value::object(d));
  }
  in.define_native("torch.get_default_dtype", [](Interpreter& in, const Value&, Args&, const ir::Span&) {
    return *in.builtin("torch.float32");
  });
  for (const char* n : {"torch.set_default_dtype", "torch.manual_seed", "torch.set_grad_enabled",
                        "torch.set_float32_matmul_precision", "torch.set_num_threads", "torch.use_deterministic_algorithms"})
    in.define_native(n, [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::none(); });
  // The planner plans inference: the forward it reads runs without autograd (torch.no_grad /
  // inference_mode), so `if torch.is_grad_enabled() and self.gradient_checkpointing:` (diffusers)
  // takes the plain path.
  in.define_native("torch.is_grad_enabled", [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::boolean(false); });
  in.define_native("torch.is_inference_mode_enabled", [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::boolean(true); });
  for (const char* n : {"torch.cuda.is_available", "torch.cuda.device_count", "torch.backends.mps.is_available",
                        "torch.cuda.is_bf16_supported"}) {
    std::string name = n;
    in.define_native(name, [name](Interpreter& in, const Value&, Args&, const ir::Span& site) {
      return in.unknown(name + "() depends on the machine the script runs on", site);
    });
  }
  // The model is read as one process that never joined a process group sees it: the logical,
  // unsharded model, which is what the planner shards. `world_size = dist.get_world_size() if
  // dist.is_initialized() else 1` (DeepSeek-V3, many inference scripts) gives full shapes.
  in.define_native("torch.distributed.is_available", [](Interpreter&, const Value&, Args&, const ir::Span&) {
    return Value::boolean(true);
  });
  in.define_native("torch.distributed.is_initialized", [](Interpreter&, const Value&, Args&, const ir::Span&) {
    return Value::boolean(false);
  });
  in.define_native("torch.distributed.get_world_size", [](Interpreter&, const Value&, Args&, const ir::Span&) {
    return Value::integer(1);
  });
  in.define_native("torch.distributed.get_rank", [](Interpreter&, const Value&, Args&, const ir::Span&) {
    return Value::integer(0);
  });
  // The torch API shardlens models (scaled_dot_product_attention, ...) is that of torch 2.x; code
  // that compares versions (`version.parse(torch.__version__) >= version.parse("2.0")`) takes that path.
  in.define("torch.__version__", Value::str("2.4.0"));
  in.define_native("torch.Size", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return make_tuple({});
    Value why;
    auto items = in.iterate(a.positional[0], site, &why);
    return items ? make_tuple(std::move(*items)) : why;
  });
  in.define_native("torch.device", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    return a.positional.empty() ? in.unknown("device", site) : a.positional[0];
  });
  in.define_native("torch.finfo", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    return in.unknown("torch.finfo values are not modelled", site);
  });

  // --- tensors ---
  auto tensor_class = in.make_builtin_class("torch.Tensor", {}, nullptr);
  auto factory = [](bool like, std::optional<double> fill = std::nullopt) {
    return [like, fill](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
      std::vector<Value> dims = a.positional;
      std::string dtype;
      if (const Value* d = a.keyword("dtype")) dtype = dtype_name(*d);
      if (const Value* s = a.keyword("size")) dims = {*s};
      if (like) {
        if (a.positional.empty()) return in.raise("TypeError", "*_like() needs a tensor", site);
        auto* t = a.positional[0].as<TensorObj>();
        if (!t) return in.unknown("*_like() of a non-tensor", site);
        Value r = tensor_like(in, *t, t->shape, site);
        if (!dtype.empty()) r.as<TensorObj>()->dtype = dtype;
        return r;
      }
      return new_buffer_tensor(in, dims, site, dtype, fill);
    };
  };
  in.define_native("torch.zeros", factory(false, 0.0));
  in.define_native("torch.ones", factory(false, 1.0));
  for (const char* n : {"empty", "randn", "rand"}) in.define_native(std::string("torch.") + n, factory(false));
  for (const char* n : {"zeros_like", "ones_like", "empty_like", "randn_like", "rand_like", "full_like"})
    in.define_native(std::string("torch.") + n, factory(true));
  tensor_class->native_new = [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() == 1 && TupleView::of(a.positional[0])) {
      auto* l = TupleView::of(a.positional[0]);
      return new_buffer_tensor(in, {Value::integer(static_cast<int64_t>(l->items.size()))}, site, "");
    }
    return new_buffer_tensor(in, a.positional, site, "");
  };
  in.define("torch.FloatTensor", Value::object(tensor_class));
  in.define_native("torch.full", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    const Value* size = argument(a, 0, "size");
    if (!size) return in.raise("TypeError", "full() missing size", site);
    const Value* d = a.keyword("dtype");
    const Value* v = argument(a, 1, "fill_value");
    std::optional<double> fill;
    if (v && v->is_number()) fill = v->as_float();
    return new_buffer_tensor(in, {*size}, site, d ? dtype_name(*d) : "", fill);
  });
  in.define_native("torch.randint", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    const Value* size = a.keyword("size");
    if (!size && !a.positional.empty()) size = &a.positional.back();
    if (!size) return in.raise("TypeError", "randint() missing size", site);
    return new_buffer_tensor(in, {*size}, site, "int64");
  });
  in.define_native("torch.arange", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    double start = 0, end = 0, step = 1;
    for (auto& v : a.positional)
      if (v.is_unknown()) return new_buffer_tensor(in, {v}, site, "");
    if (a.positional.size() == 1) end = a.positional[0].as_float();
    else if (a.positional.size() >= 2) {
      start = a.positional[0].as_float();
      end = a.positional[1].as_float();
      if (a.positional.size() >= 3) step = a.positional[2].as_float();
    }
    if (const Value* e = a.keyword("end")) end = e->as_float();
    if (const Value* s = a.keyword("start")) start = s->as_float();
    if (const Value* s = a.keyword("step")) step = s->as_float();
    if (step == 0) return in.raise("RuntimeError", "step must be nonzero", site);
    // PyTorch's own checks, before the count becomes an int64 (10**24 elements would not).
    const double count = std::ceil((end - start) / step);
    if (!std::isfinite(count)) return in.raise("RuntimeError", "arange: unsupported range (not finite)", site);
    if (count < 0) return in.raise("RuntimeError", "upper bound and larger bound inconsistent with step sign", site);
    if (count > 9.0e15) return in.raise("RuntimeError", "arange: too many elements to allocate", site);
    int64_t n = static_cast<int64_t>(count);
    bool floating = false;
    for (auto& v : a.positional) floating |= v.kind == Value::Kind::Float;
    const Value* d = a.keyword("dtype");
    std::vector<double> values;
    if (n <= kMaxTrackedValues)
      for (int64_t i = 0; i < n; ++i) values.push_back(start + static_cast<double>(i) * step);
    return tensor_with_values(in, {n}, std::move(values), d ? dtype_name(*d) : floating ? "float32" : "int64", site);
  });
  in.define_native("torch.linspace", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    const Value* start = argument(a, 0, "start");
    const Value* end = argument(a, 1, "end");
    const Value* steps = argument(a, 2, "steps");
    if (!steps) return in.raise("TypeError", "linspace() missing steps", site);
    if (!steps->is_int() || !start || !end || !start->is_number() || !end->is_number())
      return new_buffer_tensor(in, {*steps}, site, "");
    int64_t n = steps->as_int();
    std::vector<double> values;
    for (int64_t i = 0; i < n && n <= kMaxTrackedValues; ++i)
      values.push_back(n == 1 ? start->as_float() : start->as_float() + (end->as_float() - start->as_float()) * static_cast<double>(i) / static_cast<double>(n - 1));
    return tensor_with_values(in, {n}, std::move(values), "float32", site);
  });
  in.define("torch.logspace", *in.builtin("torch.linspace"));
  in.define_native("torch.eye", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "eye() missing n", site);
    Value m = a.positional.size() > 1 ? a.positional[1] : a.positional[0];
    return new_buffer_tensor(in, {a.positional[0], m}, site, "");
  });
  auto from_data = [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    if (a.positional.empty()) return in.raise("TypeError", "tensor() missing data", site);
    std::vector<Value> dims;
    Value v = a.positional[0];
    const Value* d = a.keyword("dtype");
    if (auto* t = v.as<TensorObj>()) {
      Value r = tensor_like(in, *t, t->shape, site);
      r.as<TensorObj>()->values = t->values;
      return r;
    }
    while (auto* l = TupleView::of(v)) {
      dims.push_back(Value::integer(static_cast<int64_t>(l->items.size())));
      if (l->items.empty()) break;
      v = l->items[0];
    }
    if (v.is_unknown()) return new_buffer_tensor(in, {v}, site, "");
    // Flatten the (nested) list of numbers or 0-d tensors to know the values.
    std::vector<double> values;
    bool known = true, floating = v.kind == Value::Kind::Float || (v.as<TensorObj>() && !is_integral_dtype(v.as<TensorObj>()->dtype));
    std::function<void(const Value&)> flatten = [&](const Value& x) {
      if (auto* l = TupleView::of(x)) { for (auto& item : l->items) flatten(item); return; }
      if (x.is_number()) { values.push_back(x.as_float()); floating |= x.kind == Value::Kind::Float; return; }
      if (auto* t = x.as<TensorObj>(); t && t->values && t->values->size() == 1) { values.push_back((*t->values)[0]); return; }
      known = false;
    };
    flatten(a.positional[0]);
    Value r = new_buffer_tensor(in, dims, site, d ? dtype_name(*d) : floating ? "float32" : "int64");
    if (known && r.as<TensorObj>()->shape && static_cast<int64_t>(values.size()) == r.as<TensorObj>()->numel())
      r.as<TensorObj>()->values = std::move(values);
    return r;
  };
  in.define_native("torch.tensor", from_data);
  in.define_native("torch.as_tensor", from_data);
  in.define_native("torch.from_numpy", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    return in.unknown("numpy arrays are not modelled", site);
  });
  auto concat = [](bool stack) {
    return [stack](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
      if (a.positional.empty()) return in.raise("TypeError", "cat() missing tensors", site);
      Value why;
      auto items = in.iterate(a.positional[0], site, &why);
      if (!items || items->empty()) return in.unknown("cat/stack of unknown tensors", site);
      const Value* dim_v = argument(a, 1, "dim");
      int64_t dim = dim_v && dim_v->is_int() ? dim_v->as_int() : 0;
      std::optional<std::vector<int64_t>> shape;
      int64_t total = 0;
      for (auto& v : *items) {
        auto* t = v.as<TensorObj>();
        if (!t || !t->shape) return in.unknown("cat/stack of tensors whose shape is unknown", site);
        if (!shape) shape = t->shape;
        if (!stack) {
          int64_t d = norm_dim(dim, t->shape->size());
          if (d < 0 || d >= static_cast<int64_t>(t->shape->size())) return in.raise("IndexError", "dimension out of range", site);
          total += (*t->shape)[d];
        }
      }
      auto s = *shape;
      if (stack) {
        int64_t d = dim < 0 ? dim + static_cast<int64_t>(s.size()) + 1 : dim;
        s.insert(s.begin() + d, static_cast<int64_t>(items->size()));
      } else {
        s[norm_dim(dim, s.size())] = total;
      }
      return tensor_like(in, *(*items)[0].as<TensorObj>(), s, site);
    };
  };
  in.define_native("torch.cat", concat(false));
  in.define_native("torch.concat", concat(false));
  in.define_native("torch.stack", concat(true));
  for (const char* n : {"sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "any", "all", "norm",
                        "std", "var", "logsumexp", "nansum"}) {
    std::string name = n;
    in.define_native("torch." + name, [name](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
      if (a.positional.empty() || !a.positional[0].as<TensorObj>()) return in.unknown("torch." + name + "() of a non-tensor", site);
      Value self = a.positional[0];
      a.positional.erase(a.positional.begin());
      if ((name == "max" || name == "min") && !a.positional.empty() && a.positional[0].as<TensorObj>())
        return in.binary(name == "max" ? ">" : "<", self, a.positional[0], site);  // elementwise form: shape only
      return (*in.method("tensor", name))(in, self, a, site);
    });
  }
  in.define_native("torch.meshgrid", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    std::vector<Value> inputs = a.positional;
    if (inputs.size() == 1 && TupleView::of(inputs[0])) inputs = TupleView::of(inputs[0])->items;
    std::vector<int64_t> shape;
    for (auto& v : inputs) {
      auto* t = v.as<TensorObj>();
      if (!t || !t->shape || t->shape->size() > 1) return in.unknown("meshgrid of tensors whose shape is unknown", site);
      shape.push_back(t->shape->empty() ? 1 : (*t->shape)[0]);
    }
    bool xy = false;
    if (const Value* ix = a.keyword("indexing"); ix && ix->is_str()) xy = ix->s == "xy";
    std::vector<int64_t> out_shape = shape;
    if (xy && out_shape.size() >= 2) std::swap(out_shape[0], out_shape[1]);
    std::vector<Value> outputs;
    int64_t total = 1;
    for (auto d : out_shape) total *= d;
    for (size_t k = 0; k < inputs.size(); ++k) {
      auto* t = inputs[k].as<TensorObj>();
      Value r = tensor_like(in, *t, out_shape, site);
      if (t->values && total <= kMaxTrackedValues) {
        // Output k varies along its own axis (axes 0 and 1 swap under "xy").
        size_t axis = k;
        if (xy && inputs.size() >= 2 && k < 2) axis = 1 - k;
        std::vector<double> v(static_cast<size_t>(total));
        std::vector<int64_t> idx(out_shape.size(), 0);
        for (int64_t i = 0; i < total; ++i) {
          v[static_cast<size_t>(i)] = (*t->values)[static_cast<size_t>(idx[axis])];
          for (size_t j = out_shape.size(); j-- > 0;) {
            if (++idx[j] < out_shape[j]) break;
            idx[j] = 0;
          }
        }
        r.as<TensorObj>()->values = std::move(v);
      }
      outputs.push_back(r);
    }
    return make_tuple(std::move(outputs));
  });
  in.define_native("torch.diff", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    auto* t = a.positional.empty() ? nullptr : a.positional[0].as<TensorObj>();
    if (!t || !t->shape || t->shape->empty()) return in.unknown("torch.diff() of a tensor whose shape is unknown", site);
    const Value* n_arg = argument(a, 1, "n");
    int64_t n = n_arg && n_arg->is_int() ? n_arg->as_int() : 1;
    const Value* dim_arg = argument(a, 2, "dim");
    int64_t dim = norm_dim(dim_arg && dim_arg->is_int() ? dim_arg->as_int() : -1, t->shape->size());
    auto shape = *t->shape;
    shape[dim] = std::max<int64_t>(0, shape[dim] - n);
    Value r = tensor_like(in, *t, shape, site);
    if (t->values && t->shape->size() == 1) {
      std::vector<double> v = *t->values;
      for (int64_t k = 0; k < n && !v.empty(); ++k) {
        for (size_t i = 0; i + 1 < v.size(); ++i) v[i] = v[i + 1] - v[i];
        v.pop_back();
      }
      r.as<TensorObj>()->values = std::move(v);
    }
    return r;
  });
  in.define_native("torch.einsum", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    // Shapes from the subscripts: "bhqd,bhkd->bhqk".
    if (a.positional.empty() || !a.positional[0].is_str()) return in.unknown("einsum equation is not a string", site);
    std::vector<Value> operands(a.positional.begin() + 1, a.positional.end());
    if (operands.size() == 1 && TupleView::of(operands[0])) operands = TupleView::of(operands[0])->items;
    std::string eq;
    for (char c : a.positional[0].s)
      if (c != ' ') eq += c;
    auto arrow = eq.find("->");
    if (arrow == std::string::npos || eq.find("...") != std::string::npos || operands.empty())
      return tensor_like(in, TensorObj(), std::nullopt, site);
    std::vector<std::string> inputs = ir::split(std::string_view(eq).substr(0, arrow), ',');
    std::map<char, int64_t> sizes;
    const TensorObj* first = nullptr;
    for (size_t k = 0; k < inputs.size() && k < operands.size(); ++k) {
      auto* t = operands[k].as<TensorObj>();
      if (!t || !t->shape || t->shape->size() != inputs[k].size()) return in.unknown("einsum operand shapes are not known", site);
      if (!first) first = t;
      for (size_t d = 0; d < inputs[k].size(); ++d) sizes[inputs[k][d]] = std::max(sizes[inputs[k][d]], (*t->shape)[d]);
    }
    std::vector<int64_t> shape;
    for (char c : eq.substr(arrow + 2)) {
      if (!sizes.count(c)) return in.raise("RuntimeError", std::string("einsum output subscript ") + c + " does not appear in the inputs", site);
      shape.push_back(sizes[c]);
    }
    return tensor_like(in, *first, shape, site);
  });
  in.define_native("torch.outer", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2) return in.raise("TypeError", "outer() takes 2 tensors", site);
    auto* x = a.positional[0].as<TensorObj>();
    auto* y = a.positional[1].as<TensorObj>();
    if (!x || !y || !x->shape || !y->shape || x->shape->size() != 1 || y->shape->size() != 1)
      return in.unknown("outer() of tensors whose shape is unknown", site);
    return tensor_like(in, *y, std::vector<int64_t>{(*x->shape)[0], (*y->shape)[0]}, site);
  });
  in.define("torch.ger", *in.builtin("torch.outer"));
  // Binary arithmetic as functions: the operators' shapes and values.
  for (auto& [n, op] : std::vector<std::pair<std::string, std::string>>{
           {"add", "+"}, {"sub", "-"}, {"subtract", "-"}, {"mul", "*"}, {"multiply", "*"}, {"div", "/"},
           {"divide", "/"}, {"true_divide", "/"}, {"floor_divide", "//"}, {"pow", "**"}, {"remainder", "%"},
           {"fmod", "%"}, {"eq", "=="}, {"ne", "!="}, {"lt", "<"}, {"le", "<="}, {"gt", ">"}, {"ge", ">="}}) {
    std::string o = op;
    in.define_native("torch." + n, [o](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
      const Value* x = argument(a, 0, "input");
      const Value* y = argument(a, 1, "other");
      if (!y) y = a.keyword("exponent");
      if (!x || !y) return in.raise("TypeError", "binary torch function needs two operands", site);
      std::string op = o;
      if (const Value* mode = a.keyword("rounding_mode"); mode && mode->is_str() && mode->s == "floor") op = "//";
      Value r = in.binary(op, *x, *y, site);
      if (const Value* mode = a.keyword("rounding_mode"); mode && mode->is_str() && mode->s == "trunc")
        if (auto* t = r.as<TensorObj>(); t && t->values)
          for (auto& v : *t->values) v = std::trunc(v);
      return r;
    });
  }
  // Elementwise functions with values where they are known.
  static const std::map<std::string, double (*)(double)> unary_values = {
      {"exp", [](double v) { return std::exp(v); }},     {"log", [](double v) { return std::log(v); }},
      {"sin", [](double v) { return std::sin(v); }},     {"cos", [](double v) { return std::cos(v); }},
      {"sqrt", [](double v) { return std::sqrt(v); }},   {"rsqrt", [](double v) { return 1 / std::sqrt(v); }},
      {"tanh", [](double v) { return std::tanh(v); }},   {"abs", [](double v) { return std::fabs(v); }},
      {"neg", [](double v) { return -v; }},               {"square", [](double v) { return v * v; }},
      {"reciprocal", [](double v) { return 1 / v; }},     {"floor", [](double v) { return std::floor(v); }},
      {"ceil", [](double v) { return std::ceil(v); }},   {"round", [](double v) { return std::nearbyint(v); }},
      {"log2", [](double v) { return std::log2(v); }},   {"log1p", [](double v) { return std::log1p(v); }},
      {"sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"relu", [](double v) { return v > 0 ? v : 0.0; }}, {"sign", [](double v) { return double((v > 0) - (v < 0)); }}};
  // torch.f(tensor, ...) that keep the first argument's shape.
  for (const char* n : {"exp", "log", "sin", "cos", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "abs", "triu", "tril",
                        "clone", "clamp", "reciprocal", "erf", "neg", "square", "polar", "masked_fill", "where",
                        "log1p", "log2", "softmax", "gelu", "silu", "flip", "roll", "cumsum", "sign", "round", "floor", "ceil"}) {
    std::string name = n;
    in.define_native("torch." + name, [name](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      if (name == "where" && a.positional.size() == 3) {
        // where(cond, x, y): the broadcast shape, and values when all three are known.
        std::optional<std::vector<int64_t>> shape = std::vector<int64_t>{};
        std::vector<const std::vector<double>*> vals;
        std::vector<double> scalars(3);
        const TensorObj* any = nullptr;
        for (size_t k = 0; k < 3; ++k) {
          const Value& v = a.positional[k];
          if (auto* t = v.as<TensorObj>()) {
            if (k > 0 && !any) any = t;
            if (!t->shape || !shape) { shape.reset(); continue; }
            shape = broadcast(*shape, *t->shape);
            vals.push_back(t->values ? &*t->values : nullptr);
          } else if (v.is_number()) {
            scalars[k] = v.as_float();
            vals.push_back(nullptr);
          } else {
            shape.reset();
          }
        }
        if (!any) any = a.positional[0].as<TensorObj>();
        if (!any) return in.unknown("torch.where of unknown values", site);
        Value r = tensor_like(in, *any, shape, site);
        auto* rt = r.as<TensorObj>();
        if (rt->shape && vals.size() == 3) {
          size_t n = static_cast<size_t>(rt->numel());
          std::vector<double> out(n);
          bool ok = true;
          for (size_t i = 0; i < n && ok; ++i) {
            double parts[3];
            for (size_t k = 0; k < 3; ++k) {
              if (a.positional[k].as<TensorObj>()) {
                if (!vals[k] || (vals[k]->size() != n && vals[k]->size() != 1)) { ok = false; break; }
                parts[k] = (*vals[k])[vals[k]->size() == 1 ? 0 : i];
              } else {
                parts[k] = scalars[k];
              }
            }
            if (ok) out[i] = parts[0] != 0 ? parts[1] : parts[2];
          }
          if (ok) rt->values = std::move(out);
        }
        return r;
      }
      if (!a.positional.empty())
        if (auto* t = a.positional[0].as<TensorObj>()) {
          Value r = tensor_like(in, *t, t->shape, site);
          auto f = unary_values.find(name);
          if (t->values && f != unary_values.end()) {
            std::vector<double> v = *t->values;
            for (auto& x : v) x = f->second(x);
            r.as<TensorObj>()->values = std::move(v);
          } else if (t->values && name == "clone") {
            r.as<TensorObj>()->values = t->values;
          }
          return r;
        }
      for (auto& v : a.positional)
        if (auto* t = v.as<TensorObj>()) return tensor_like(in, *t, t->shape, site);
      if (!a.positional.empty() && a.positional[0].is_number()) return in.unknown("torch." + name + "() of a number", site);
      return in.unknown("torch." + name + "() of unknown values", site);
    });
  }
  for (const char* n : {"matmul", "bmm", "mm", "softmax", "topk", "sort", "gather", "scatter", "index_select", "repeat_interleave", "nonzero", "multinomial",
                        "zeros_like", "chunk", "split", "unbind", "baddbmm", "addmm", "norm", "one_hot", "bucketize",
                        "searchsorted", "view_as_complex", "view_as_real", "meshgrid", "diag", "flatten", "reshape",
                        "transpose", "permute", "unsqueeze", "squeeze", "narrow", "isin", "any", "all", "var", "std",
                        "rand_like", "normal", "bernoulli", "allclose", "equal", "is_tensor", "numel", "prod",
                        "cumprod", "maximum", "minimum", "logsumexp", "rsqrt", "cdist", "fft", "atan2", "lerp",
                        "einsum", "tensordot", "kron", "block_diag", "broadcast_to", "expand_copy", "tile",
                        "is_floating_point", "compile", "clip"}) {
    std::string name = std::string("torch.") + n;
    if (in.builtin(name)) continue;
    std::string method = name.substr(6);
    in.define_native(name, [name, method](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      // torch.f(t, ...) is t.f(...) where the tensor method is modelled.
      if (!a.positional.empty() && a.positional[0].as<TensorObj>())
        if (const NativeFn* m = in.method("tensor", method)) {
          Value self = a.positional[0];
          Args rest{{a.positional.begin() + 1, a.positional.end()}, a.keywords};
          return (*m)(in, self, rest, site);
        }
      auto t = in.new_tensor(std::nullopt, site);
      t->why = std::make_shared<UnknownInfo>(UnknownInfo{name + "() results are not modelled during module extraction", site, false});
      return Value::object(t);
    });
  }

  // Complex views (Meta's Llama reference, DeepSeek-V3 and mistral-inference apply rotary
  // embeddings so): pairs of the last dim as complex numbers, and back.
  in.define_method("tensor", "view_as_complex", [](Interpreter& in, const Value& self, Args&, const ir::Span& site) -> Value {
    const TensorObj& t = *self.as<TensorObj>();
    if (!t.shape) return tensor_like(in, t, std::nullopt, site);
    if (t.shape->empty() || t.shape->back() != 2) return in.raise("RuntimeError", "Tensor must have a last dimension of size 2", site);
    Value r = tensor_like(in, t, std::vector<int64_t>(t.shape->begin(), t.shape->end() - 1), site);
    r.as<TensorObj>()->dtype = t.dtype == "float64" ? "complex128" : "complex64";
    return r;
  });
  in.define_method("tensor", "view_as_real", [](Interpreter& in, const Value& self, Args&, const ir::Span& site) -> Value {
    const TensorObj& t = *self.as<TensorObj>();
    if (!t.shape) return tensor_like(in, t, std::nullopt, site);
    std::vector<int64_t> shape = *t.shape;
    shape.push_back(2);
    Value r = tensor_like(in, t, shape, site);
    r.as<TensorObj>()->dtype = t.dtype == "complex128" ? "float64" : "float32";
    return r;
  });
  in.define_native("torch.polar", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    auto* magnitude = a.positional.size() >= 2 ? a.positional[0].as<TensorObj>() : nullptr;
    auto* angle = a.positional.size() >= 2 ? a.positional[1].as<TensorObj>() : nullptr;
    if (!magnitude || !angle) return in.raise("TypeError", "polar() takes two tensors", site);
    std::optional<std::vector<int64_t>> shape;
    if (magnitude->shape && angle->shape) {
      shape = broadcast(*magnitude->shape, *angle->shape);
      if (!shape) return in.raise("RuntimeError", "shapes cannot be broadcast", site);
    }
    Value r = tensor_like(in, *magnitude, shape, site);
    r.as<TensorObj>()->dtype = magnitude->dtype == "float64" ? "complex128" : "complex64";
    r.as<TensorObj>()->values.reset();
    return r;
  });

  // Tensor methods and attributes.
  in.define_method("tensor", "__getitem__", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    return tensor_index(in, *self.as<TensorObj>(), a.positional.empty() ? Value() : a.positional[0], site);
  });
  in.define_method("tensor", "__binary__", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    const Value &x = a.positional[0], &y = a.positional[1];
    const std::string& op = a.positional[2].s;
    auto* tx = x.as<TensorObj>();
    auto* ty = y.as<TensorObj>();
    const TensorObj& base = tx ? *tx : *ty;
    if (op == "@") return tensor_like(in, base, std::nullopt, site);
    std::optional<std::vector<int64_t>> shape;
    if (tx && ty) {
      if (!tx->shape || !ty->shape) return tensor_like(in, base, std::nullopt, site);
      shape = broadcast(*tx->shape, *ty->shape);
      if (!shape) return in.raise("RuntimeError", "shapes cannot be broadcast", site);
    } else {
      const Value& other = tx ? y : x;
      if (!other.is_number() && !other.is_unknown())
        return in.raise("TypeError", "unsupported operand for tensor " + op + ": '" + type_name(other) + "'", site);
      shape = base.shape;
    }
    Value result = tensor_like(in, base, shape, site);
    auto* r = result.as<TensorObj>();
    static const std::set<std::string> comparisons = {"<", "<=", ">", ">=", "==", "!="};
    bool compare = comparisons.count(op) > 0;
    if (compare) r->dtype = "bool";
    else if (op == "/" && is_integral_dtype(r->dtype)) r->dtype = "float32";
    else if ((tx && !ty && y.kind == Value::Kind::Float) || (ty && !tx && x.kind == Value::Kind::Float))
      if (is_integral_dtype(r->dtype)) r->dtype = "float32";
    // Elementwise values when both sides are known and one of them is a scalar or they match.
    auto values_of = [](const Value& v, const TensorObj* t) -> std::optional<std::vector<double>> {
      if (t) return t->values;
      if (v.is_number()) return std::vector<double>{v.as_float()};
      return std::nullopt;
    };
    auto xv = values_of(x, tx), yv = values_of(y, ty);
    if (r->shape && xv && yv) {
      size_t n = static_cast<size_t>(r->numel());
      if ((xv->size() == n || xv->size() == 1) && (yv->size() == n || yv->size() == 1)) {
        std::vector<double> out(n);
        bool integral = is_integral_dtype(r->dtype) && !compare;
        for (size_t i = 0; i < n; ++i) {
          double p = (*xv)[xv->size() == 1 ? 0 : i], q = (*yv)[yv->size() == 1 ? 0 : i], v = 0;
          if (op == "+") v = p + q;
          else if (op == "-") v = p - q;
          else if (op == "*") v = p * q;
          else if (op == "/") v = p / q;
          else if (op == "//") v = std::floor(p / q);
          else if (op == "%") v = p - std::floor(p / q) * q;
          else if (op == "**") v = std::pow(p, q);
          else if (op == "<") v = p < q;
          else if (op == "<=") v = p <= q;
          else if (op == ">") v = p > q;
          else if (op == ">=") v = p >= q;
          else if (op == "==") v = p == q;
          else if (op == "!=") v = p != q;
          else if (op == "&") v = (p != 0) && (q != 0);
          else if (op == "|") v = (p != 0) || (q != 0);
          else { out.clear(); break; }
          out[i] = integral ? std::trunc(v) : v;
        }
        round_to_dtype(out, r->dtype);
        if (!out.empty()) r->values = std::move(out);
      }
    }
    return result;
  });
  in.define_method("tensor", "__unary__", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    auto* t = self.as<TensorObj>();
    Value r = tensor_like(in, *t, t->shape, site);
    const std::string& op = a.positional[1].s;
    if (t->values) {
      std::vector<double> v = *t->values;
      for (auto& x : v) x = op == "-" ? -x : op == "~" ? (t->dtype == "bool" ? (x == 0) : -x - 1) : x;
      r.as<TensorObj>()->values = std::move(v);
    }
    return r;
  });
  static const char* kMethods[] = {
      "size", "dim", "ndimension", "numel", "nelement", "item", "tolist", "element_size", "sum", "mean", "prod",
      "max", "min", "amax", "amin", "argmax", "argmin", "any", "all", "norm", "std", "var", "logsumexp", "nansum",
      "new_tensor", "new_zeros", "new_ones", "new_empty", "new_full", "view", "reshape", "unsqueeze", "squeeze",
      "expand", "repeat", "transpose", "swapaxes", "t", "permute", "flatten", "chunk", "split", "unbind", "repeat_interleave", "unflatten"};
  for (const char* m : kMethods) {
    std::string name = m;
    in.define_method("tensor", name, [name](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
      return tensor_method(in, name, self, a, site);
    });
  }
  for (const char* m : kShapePreserving) {
    std::string name = m;
    if (name == "requires_grad") continue;
    in.define_method("tensor", name, [name](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
      return tensor_method(in, name, self, a, site);
    });
  }
  in.define_method("@tensor", "shape", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    return tensor_method(in, "size", self, a, site);
  });
  in.define_method("@tensor", "ndim", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    return tensor_method(in, "dim", self, a, site);
  });
  in.define_method("@tensor", "T", [](Interpreter& in, const Value& self, Args&, const ir::Span& site) {
    auto* t = self.as<TensorObj>();
    if (!t->shape) return tensor_like(in, *t, std::nullopt, site);
    auto s = *t->shape;
    std::reverse(s.begin(), s.end());
    return tensor_like(in, *t, s, site);
  });
  in.define_method("@tensor", "data", [](Interpreter&, const Value& self, Args&, const ir::Span&) { return self; });
  in.define_method("@tensor", "dtype", [](Interpreter& in, const Value& self, Args&, const ir::Span& site) {
    const Value* d = in.builtin("torch." + self.as<TensorObj>()->dtype);
    return d ? *d : in.unknown("dtype", site);
  });
  in.define_method("@tensor", "requires_grad", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return Value::boolean(self.as<TensorObj>()->requires_grad);
  });
  in.define_method("@tensor", "device", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    return in.unknown("device", site);
  });
  in.define_method("@torch.dtype", "is_floating_point", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    const std::string& n = self.as<DtypeObj>()->name;
    return Value::boolean(n.rfind("float", 0) == 0 || n == "bfloat16");
  });
  in.define_method("@torch.dtype", "itemsize", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    const std::string& n = self.as<DtypeObj>()->name;
    int64_t bytes = n == "float64" || n == "int64" || n == "complex64" ? 8 : n == "float32" || n == "int32" ? 4
                  : n == "float16" || n == "bfloat16" || n == "int16" ? 2 : n == "complex128" ? 16 : 1;
    return Value::integer(bytes);
  });

  // --- nn.Parameter ---
  auto parameter_class = in.make_builtin_class("torch.nn.Parameter", {tensor_class}, nullptr);
  parameter_class->native_new = [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    const Value* data = argument(a, 0, "data");
    auto p = in.new_tensor(std::vector<int64_t>{0}, site, true);
    if (data && !data->is_none()) {
      if (auto* t = data->as<TensorObj>()) {
        p->shape = t->shape;
        p->dtype = t->dtype;
        p->why = t->why;
      } else {
        p->shape.reset();
        p->why = data->is_unknown() ? data->unknown
                                    : std::make_shared<UnknownInfo>(UnknownInfo{"nn.Parameter of a " + type_name(*data), site, false});
      }
    }
    if (const Value* rg = argument(a, 1, "requires_grad")) p->requires_grad = in.truth(*rg).value_or(true);
    if (!p->shape) in.note("shape of a parameter could not be resolved", p->why ? p->why->reason : "unknown data", site);
    return Value::object(p);
  };
  in.define("torch.nn.parameter.Parameter", Value::object(parameter_class));
  in.define("torch.nn.parameter", in.namespace_value("torch.nn.parameter"));

  // --- nn.init: initialisers change values, never shapes ---
  for (const char* n : {"uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_", "xavier_uniform_",
                        "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_", "orthogonal_",
                        "sparse_", "uniform", "normal", "constant", "xavier_uniform", "xavier_normal",
                        "kaiming_uniform", "kaiming_normal", "orthogonal"})
    in.define_native(std::string("torch.nn.init.") + n, [](Interpreter&, const Value&, Args& a, const ir::Span&) {
      return a.positional.empty() ? Value::none() : a.positional[0];
    });
  in.define_native("torch.nn.init.calculate_gain", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    return in.unknown("init gain", site);
  });
  in.define_native("torch.nn.init._calculate_fan_in_and_fan_out", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    auto* t = a.positional.empty() ? nullptr : a.positional[0].as<TensorObj>();
    if (!t || !t->shape || t->shape->size() < 2) return in.unknown("fan in/out", site);
    int64_t field = 1;
    for (size_t i = 2; i < t->shape->size(); ++i) field *= (*t->shape)[i];
    return make_tuple({Value::integer((*t->shape)[1] * field), Value::integer((*t->shape)[0] * field)});
  });

  // Optimisers and schedulers do not change a model's structure.
  for (const char* n : {"torch.optim.Adam", "torch.optim.AdamW", "torch.optim.SGD", "torch.optim.RMSprop",
                        "torch.optim.Adagrad", "torch.optim.Adafactor", "torch.optim.lr_scheduler.LambdaLR",
                        "torch.optim.lr_scheduler.CosineAnnealingLR", "torch.optim.lr_scheduler.StepLR",
                        "torch.optim.lr_scheduler.OneCycleLR", "torch.cuda.amp.GradScaler"}) {
    std::string name = n;
    in.define_native(name, [name](Interpreter& in, const Value&, Args&, const ir::Span& site) {
      return in.unknown(name + " (optimisation state is not part of the model)", site);
    });
  }

  // --- torch.nn.utils reparametrisations that rename parameters ---
  // Unregisters a module's parameter (they re-register it under new names), or raises.
  auto take_parameter = [](Interpreter& in, InstanceObj& m, const std::string& name, const ir::Span& site) {
    auto* slot = ModuleData::find(m.module->parameters, name);
    if (!slot || !*slot) {
      in.raise("AttributeError", "module has no parameter '" + name + "'", site);
      return std::shared_ptr<TensorObj>();
    }
    auto weight = *slot;
    auto& params = m.module->parameters;
    params.erase(std::remove_if(params.begin(), params.end(), [&](auto& kv) { return kv.first == name; }), params.end());
    return weight;
  };
  in.define_native("torch.nn.utils.weight_norm", [take_parameter](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    Bound b;
    if (!bind_args(in, "weight_norm", {{"module", std::nullopt}, {"name", Value::str("weight")}, {"dim", Value::integer(0)}}, a, b, site))
      return Value::none();
    auto* m = instance(b["module"]);
    if (!m || !m->module || !b["name"].is_str()) return b["module"];
    const std::string name = b["name"].s;
    auto weight = take_parameter(in, *m, name, site);
    if (!weight) return Value::none();
    auto& params = m->module->parameters;
    std::optional<std::vector<int64_t>> g_shape;
    if (weight->shape) {
      g_shape = std::vector<int64_t>(weight->shape->size(), 1);
      if (b["dim"].is_none()) g_shape = std::vector<int64_t>{};
      else if (b["dim"].is_int()) {
        int64_t d = norm_dim(b["dim"].as_int(), weight->shape->size());
        if (d >= 0 && d < static_cast<int64_t>(weight->shape->size())) (*g_shape)[d] = (*weight->shape)[d];
      }
    }
    auto g = in.new_tensor(g_shape, weight->span, true);
    auto v = in.new_tensor(weight->shape, weight->span, true);
    g->dtype = v->dtype = weight->dtype;
    params.emplace_back(name + "_g", g);
    params.emplace_back(name + "_v", v);
    return b["module"];
  });
  in.define_native("torch.nn.utils.spectral_norm", [take_parameter](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    Bound b;
    if (!bind_args(in, "spectral_norm", {{"module", std::nullopt}, {"name", Value::str("weight")}, {"n_power_iterations", Value::integer(1)},
                                         {"eps", Value::floating(1e-12)}, {"dim", Value::none()}}, a, b, site))
      return Value::none();
    auto* m = instance(b["module"]);
    if (!m || !m->module || !b["name"].is_str()) return b["module"];
    const std::string name = b["name"].s;
    auto weight = take_parameter(in, *m, name, site);
    if (!weight) return Value::none();
    auto& params = m->module->parameters;
    params.emplace_back(name + "_orig", weight);
    m->set_attribute(name, Value::object(weight));
    int64_t dim = b["dim"].is_int() ? b["dim"].as_int()
                  : (m->cls->name.rfind("ConvTranspose", 0) == 0 ? 1 : 0);
    std::optional<std::vector<int64_t>> u_shape, v_shape;
    if (weight->shape && !weight->shape->empty()) {
      int64_t h = (*weight->shape)[norm_dim(dim, weight->shape->size())];
      u_shape = std::vector<int64_t>{h};
      v_shape = std::vector<int64_t>{h ? weight->numel() / h : 0};
    }
    register_buffer(b["module"], name + "_u", in.new_tensor(u_shape, weight->span), true);
    register_buffer(b["module"], name + "_v", in.new_tensor(v_shape, weight->span), true);
    return b["module"];
  });
  in.define("torch.nn.utils.parametrizations", in.namespace_value("torch.nn.utils.parametrizations"));

  // --- nn.functional: values usable as activations; calling them yields a tensor of unknown shape ---
  for (const char* n : {"relu", "relu_", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax", "dropout",
                        "layer_norm", "linear", "scaled_dot_product_attention", "pad", "interpolate", "embedding",
                        "conv1d", "conv2d", "conv3d", "conv_transpose2d", "group_norm", "normalize", "mish",
                        "leaky_relu", "elu", "softplus", "glu", "cross_entropy", "avg_pool2d", "max_pool2d",
                        "adaptive_avg_pool1d", "adaptive_avg_pool2d", "one_hot", "rms_norm", "hardswish",
                        "hardsigmoid", "relu6", "selu", "celu", "gumbel_softmax", "unfold", "fold", "pixel_shuffle",
                        "grid_sample", "mse_loss", "l1_loss", "batch_norm", "instance_norm", "logsigmoid",
                        "softsign", "tanhshrink", "threshold", "cosine_similarity", "multi_head_attention_forward",
                        "avg_pool1d", "max_pool1d", "upsample", "nll_loss", "binary_cross_entropy_with_logits",
                        "softmin", "hardtanh", "prelu", "rrelu", "dropout2d", "alpha_dropout", "smooth_l1_loss",
                        "kl_div", "pairwise_distance", "pixel_unshuffle", "affine_grid"}) {
    std::string name = std::string("torch.nn.functional.") + n;
    in.define_native(name, [name](Interpreter& in, const Value&, Args&, const ir::Span& site) {
      auto t = in.new_tensor(std::nullopt, site);
      t->why = std::make_shared<UnknownInfo>(UnknownInfo{name + "() output (forward computations are not run during module extraction)", site, false});
      return Value::object(t);
    });
  }

  // --- nn.Module methods (available on every module) ---
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

  // --- containers ---
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

  // --- layers with parameters ---
  auto none = Value::none();
  auto T = Value::boolean(true);
  auto F = Value::boolean(false);
  auto layer = [&](const std::string& name, NativeFn init, std::shared_ptr<ClassObj> base = nullptr) {
    return in.make_builtin_class("torch.nn." + name, {base ? base : module}, std::move(init));
  };
  auto linear = layer("Linear", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    static const std::vector<P> kParams = {{"in_features", std::nullopt}, {"out_features", std::nullopt}, {"bias", T}, {"device", none}, {"dtype", none}};
    if (!bind_args(in, "Linear", kParams, a, b, site)) return Value::none();
    std::string dt = dtype_name(b["dtype"]);
    set_attrs(self, b, {"in_features", "out_features"});
    register_param(in, self, "weight", new_param(in, {b["out_features"], b["in_features"]}, instance(self)->module->span, dt, "weight"), site);
    if (is_true(in, b["bias"])) register_param(in, self, "bias", new_param(in, {b["out_features"]}, instance(self)->module->span, dt, "bias"), site);
    else register_none_param(self, "bias");
    set_repr(self, "in_features=" + repr(b["in_features"]) + ", out_features=" + repr(b["out_features"]) + ", bias=" + (is_true(in, b["bias"]) ? "True" : "False"));
    return Value::none();
  });
  in.make_builtin_class("torch.nn.modules.linear.NonDynamicallyQuantizableLinear", {linear}, nullptr);
  layer("LazyLinear", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    in.note("nn.LazyLinear infers its input size from the first forward pass", "shapes of lazy modules are not known statically", site);
    return Value::none();
  });
  layer("Bilinear", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "Bilinear", {{"in1_features", std::nullopt}, {"in2_features", std::nullopt}, {"out_features", std::nullopt}, {"bias", T}, {"device", none}, {"dtype", none}}, a, b, site)) return Value::none();
    auto span = instance(self)->module->span;
    register_param(in, self, "weight", new_param(in, {b["out_features"], b["in1_features"], b["in2_features"]}, span, dtype_name(b["dtype"]), "weight"), site);
    if (is_true(in, b["bias"])) register_param(in, self, "bias", new_param(in, {b["out_features"]}, span, dtype_name(b["dtype"]), "bias"), site);
    else register_none_param(self, "bias");
    return Value::none();
  });
  auto embedding_init = [=](const std::string& cls) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      if (!bind_args(in, cls, {{"num_embeddings", std::nullopt}, {"embedding_dim", std::nullopt}, {"padding_idx", none}, {"max_norm", none},
                          {"norm_type", Value::floating(2.0)}, {"scale_grad_by_freq", F}, {cls == "EmbeddingBag" ? "mode" : "sparse", cls == "EmbeddingBag" ? Value::str("mean") : F},
                          {cls == "EmbeddingBag" ? "sparse" : "_weight", cls == "EmbeddingBag" ? F : none},
                          {cls == "EmbeddingBag" ? "_weight" : "_freeze", cls == "EmbeddingBag" ? none : F},
                          {"include_last_offset", F}, {"device", none}, {"dtype", none}}, a, b, site, true))
        return Value::none();
      set_attrs(self, b, {"num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse"});
      auto span = instance(self)->module->span;
      if (auto* w = b["_weight"].as<TensorObj>()) {
        auto p = in.new_tensor(w->shape, span, true);
        register_param(in, self, "weight", Value::object(p), site);
      } else {
        register_param(in, self, "weight", new_param(in, {b["num_embeddings"], b["embedding_dim"]}, span, dtype_name(b["dtype"]), "weight"), site);
      }
      std::string r = repr(b["num_embeddings"]) + ", " + repr(b["embedding_dim"]);
      if (!b["padding_idx"].is_none()) r += ", padding_idx=" + repr(b["padding_idx"]);
      set_repr(self, r);
      return Value::none();
    };
  };
  layer("Embedding", embedding_init("Embedding"));
  layer("EmbeddingBag", embedding_init("EmbeddingBag"));
  auto shape_list = [](const Value& v) {
    if (auto* l = TupleView::of(v)) return l->items;
    return std::vector<Value>{v};
  };
  layer("LayerNorm", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "LayerNorm", {{"normalized_shape", std::nullopt}, {"eps", Value::floating(1e-5)}, {"elementwise_affine", T}, {"bias", T}, {"device", none}, {"dtype", none}}, a, b, site)) return Value::none();
    auto dims = shape_list(b["normalized_shape"]);
    auto span = instance(self)->module->span;
    bool affine = is_true(in, b["elementwise_affine"]);
    if (affine) {
      register_param(in, self, "weight", new_param(in, dims, span, dtype_name(b["dtype"]), "weight"), site);
      if (is_true(in, b["bias"])) register_param(in, self, "bias", new_param(in, dims, span, dtype_name(b["dtype"]), "bias"), site);
      else register_none_param(self, "bias");
    } else {
      register_none_param(self, "weight");
      register_none_param(self, "bias");
    }
    if (auto* m = instance(self)) {
      m->set_attribute("normalized_shape", make_tuple(dims));
      m->set_attribute("eps", b["eps"]);
      m->set_attribute("elementwise_affine", b["elementwise_affine"]);
    }
    set_repr(self, tuple_repr(dims) + ", eps=" + repr(b["eps"]) + ", elementwise_affine=" + (affine ? "True" : "False"));
    return Value::none();
  });
  layer("RMSNorm", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "RMSNorm", {{"normalized_shape", std::nullopt}, {"eps", none}, {"elementwise_affine", T}, {"device", none}, {"dtype", none}}, a, b, site)) return Value::none();
    auto dims = shape_list(b["normalized_shape"]);
    bool affine = is_true(in, b["elementwise_affine"]);
    if (affine) register_param(in, self, "weight", new_param(in, dims, instance(self)->module->span, dtype_name(b["dtype"]), "weight"), site);
    else register_none_param(self, "weight");
    set_repr(self, tuple_repr(dims) + ", eps=" + repr(b["eps"]) + ", elementwise_affine=" + (affine ? "True" : "False"));
    return Value::none();
  });
  layer("GroupNorm", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "GroupNorm", {{"num_groups", std::nullopt}, {"num_channels", std::nullopt}, {"eps", Value::floating(1e-5)}, {"affine", T}, {"device", none}, {"dtype", none}}, a, b, site)) return Value::none();
    if (b["num_groups"].is_int() && b["num_channels"].is_int() && b["num_groups"].as_int() != 0 &&
        b["num_channels"].as_int() % b["num_groups"].as_int() != 0)
      return in.raise("ValueError", "num_channels must be divisible by num_groups", site);
    set_attrs(self, b, {"num_groups", "num_channels", "eps", "affine"});
    auto span = instance(self)->module->span;
    bool affine = is_true(in, b["affine"]);
    if (affine) {
      register_param(in, self, "weight", new_param(in, {b["num_channels"]}, span, dtype_name(b["dtype"]), "weight"), site);
      register_param(in, self, "bias", new_param(in, {b["num_channels"]}, span, dtype_name(b["dtype"]), "bias"), site);
    } else {
      register_none_param(self, "weight");
      register_none_param(self, "bias");
    }
    set_repr(self, repr(b["num_groups"]) + ", " + repr(b["num_channels"]) + ", eps=" + repr(b["eps"]) + ", affine=" + (affine ? "True" : "False"));
    return Value::none();
  });
  auto norm_base = [=](const std::string& cls, bool affine_default, bool track_default) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      if (!bind_args(in, cls, {{"num_features", std::nullopt}, {"eps", Value::floating(1e-5)}, {"momentum", Value::floating(0.1)},
                          {"affine", Value::boolean(affine_default)}, {"track_running_stats", Value::boolean(track_default)},
                          {cls == "SyncBatchNorm" ? "process_group" : "device", none}, {cls == "SyncBatchNorm" ? "device" : "dtype", none}, {"dtype", none}},
                a, b, site))
        return Value::none();
      set_attrs(self, b, {"num_features", "eps", "momentum", "affine", "track_running_stats"});
      auto span = instance(self)->module->span;
      bool affine = is_true(in, b["affine"]);
      bool track = is_true(in, b["track_running_stats"]);
      if (affine) {
        register_param(in, self, "weight", new_param(in, {b["num_features"]}, span, "", "weight"), site);
        register_param(in, self, "bias", new_param(in, {b["num_features"]}, span, "", "bias"), site);
      } else {
        register_none_param(self, "weight");
        register_none_param(self, "bias");
      }
      if (track) {
        auto stat = [&](std::vector<Value> dims, const char* dtype) {
          return std::static_pointer_cast<TensorObj>(new_buffer_tensor(in, std::move(dims), span, dtype).obj);
        };
        register_buffer(self, "running_mean", stat({b["num_features"]}, ""), true);
        register_buffer(self, "running_var", stat({b["num_features"]}, ""), true);
        register_buffer(self, "num_batches_tracked", stat({make_tuple({})}, "int64"), true);
      } else {
        register_buffer(self, "running_mean", nullptr, true);
        register_buffer(self, "running_var", nullptr, true);
        register_buffer(self, "num_batches_tracked", nullptr, true);
      }
      set_repr(self, repr(b["num_features"]) + ", eps=" + repr(b["eps"]) + ", momentum=" + repr(b["momentum"]) +
                         ", affine=" + (affine ? "True" : "False") + ", track_running_stats=" + (track ? "True" : "False"));
      return Value::none();
    };
  };
  for (const char* n : {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"}) layer(n, norm_base(n, true, true));
  for (const char* n : {"InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"}) layer(n, norm_base(n, false, false));

  auto conv = [=](const std::string& cls, size_t n, bool transposed) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      std::vector<P> params = {{"in_channels", std::nullopt}, {"out_channels", std::nullopt}, {"kernel_size", std::nullopt},
                               {"stride", Value::integer(1)}, {"padding", Value::integer(0)}};
      if (transposed) {
        params.push_back({"output_padding", Value::integer(0)});
        params.push_back({"groups", Value::integer(1)});
        params.push_back({"bias", T});
        params.push_back({"dilation", Value::integer(1)});
      } else {
        params.push_back({"dilation", Value::integer(1)});
        params.push_back({"groups", Value::integer(1)});
        params.push_back({"bias", T});
      }
      params.push_back({"padding_mode", Value::str("zeros")});
      params.push_back({"device", none});
      params.push_back({"dtype", none});
      if (!bind_args(in, cls, params, a, b, site)) return Value::none();
      const Value &cin = b["in_channels"], &cout = b["out_channels"], &groups = b["groups"];
      if (cin.is_int() && cout.is_int() && groups.is_int() && groups.as_int() > 0) {
        if (cin.as_int() % groups.as_int()) return in.raise("ValueError", "in_channels must be divisible by groups", site);
        if (cout.as_int() % groups.as_int()) return in.raise("ValueError", "out_channels must be divisible by groups", site);
      }
      auto kernel = n_tuple(b["kernel_size"], n);
      std::vector<Value> dims;
      if (transposed) dims = {cin, in.binary("//", cout, groups, site)};
      else dims = {cout, in.binary("//", cin, groups, site)};
      dims.insert(dims.end(), kernel.begin(), kernel.end());
      auto span = instance(self)->module->span;
      set_attrs(self, b, {"in_channels", "out_channels", "groups", "padding_mode"});
      if (auto* m = instance(self)) {
        m->set_attribute("stride", make_tuple(n_tuple(b["stride"], n)));
        m->set_attribute("padding", b["padding"].is_str() ? b["padding"] : make_tuple(n_tuple(b["padding"], n)));
        m->set_attribute("dilation", make_tuple(n_tuple(b["dilation"], n)));
      }
      if (auto* m = instance(self)) m->set_attribute("kernel_size", make_tuple(kernel));
      register_param(in, self, "weight", new_param(in, dims, span, dtype_name(b["dtype"]), "weight"), site);
      if (is_true(in, b["bias"])) register_param(in, self, "bias", new_param(in, {cout}, span, dtype_name(b["dtype"]), "bias"), site);
      else register_none_param(self, "bias");
      std::string r = repr(cin) + ", " + repr(cout) + ", kernel_size=" + tuple_repr(kernel) + ", stride=" + tuple_repr(n_tuple(b["stride"], n));
      if (!(b["padding"].is_int() && b["padding"].as_int() == 0))
        r += ", padding=" + (b["padding"].is_str() ? repr(b["padding"]) : tuple_repr(n_tuple(b["padding"], n)));
      if (!(groups.is_int() && groups.as_int() == 1)) r += ", groups=" + repr(groups);
      if (!is_true(in, b["bias"])) r += ", bias=False";
      set_repr(self, r);
      return Value::none();
    };
  };
  layer("Conv1d", conv("Conv1d", 1, false));
  layer("Conv2d", conv("Conv2d", 2, false));
  layer("Conv3d", conv("Conv3d", 3, false));
  layer("ConvTranspose1d", conv("ConvTranspose1d", 1, true));
  layer("ConvTranspose2d", conv("ConvTranspose2d", 2, true));
  layer("ConvTranspose3d", conv("ConvTranspose3d", 3, true));

  layer("PReLU", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "PReLU", {{"num_parameters", Value::integer(1)}, {"init", Value::floating(0.25)}, {"device", none}, {"dtype", none}}, a, b, site)) return Value::none();
    register_param(in, self, "weight", new_param(in, {b["num_parameters"]}, instance(self)->module->span, "", "weight"), site);
    set_repr(self, "num_parameters=" + repr(b["num_parameters"]));
    return Value::none();
  });

  auto mha = layer("MultiheadAttention", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "MultiheadAttention", {{"embed_dim", std::nullopt}, {"num_heads", std::nullopt}, {"dropout", Value::floating(0.0)}, {"bias", T},
                                         {"add_bias_kv", F}, {"add_zero_attn", F}, {"kdim", none}, {"vdim", none}, {"batch_first", F}, {"device", none}, {"dtype", none}},
              a, b, site))
      return Value::none();
    Value e = b["embed_dim"];
    Value kdim = b["kdim"].is_none() ? e : b["kdim"];
    Value vdim = b["vdim"].is_none() ? e : b["vdim"];
    if (e.is_int() && b["num_heads"].is_int() && b["num_heads"].as_int() > 0 && e.as_int() % b["num_heads"].as_int())
      return in.raise("AssertionError", "embed_dim must be divisible by num_heads", site);
    auto span = instance(self)->module->span;
    std::string dt = dtype_name(b["dtype"]);
    bool same = in.equal(kdim, e).value_or(false) && in.equal(vdim, e).value_or(false);
    if (!same) {
      register_param(in, self, "q_proj_weight", new_param(in, {e, e}, span, dt, "q_proj_weight"), site);
      register_param(in, self, "k_proj_weight", new_param(in, {e, kdim}, span, dt, "k_proj_weight"), site);
      register_param(in, self, "v_proj_weight", new_param(in, {e, vdim}, span, dt, "v_proj_weight"), site);
      register_none_param(self, "in_proj_weight");
    } else {
      register_param(in, self, "in_proj_weight", new_param(in, {in.binary("*", Value::integer(3), e, site), e}, span, dt, "in_proj_weight"), site);
      register_none_param(self, "q_proj_weight");
      register_none_param(self, "k_proj_weight");
      register_none_param(self, "v_proj_weight");
    }
    if (is_true(in, b["bias"])) register_param(in, self, "in_proj_bias", new_param(in, {in.binary("*", Value::integer(3), e, site)}, span, dt, "in_proj_bias"), site);
    else register_none_param(self, "in_proj_bias");
    Value out_cls = *in.builtin("torch.nn.modules.linear.NonDynamicallyQuantizableLinear");
    Value out_proj = in.call(out_cls, Args{{e, e}, {{"bias", b["bias"]}}}, span);
    in.module_set(*instance(self), "out_proj", out_proj, site);
    if (is_true(in, b["add_bias_kv"])) {
      register_param(in, self, "bias_k", new_param(in, {Value::integer(1), Value::integer(1), e}, span, dt, "bias_k"), site);
      register_param(in, self, "bias_v", new_param(in, {Value::integer(1), Value::integer(1), e}, span, dt, "bias_v"), site);
    } else {
      instance(self)->set_attribute("bias_k", none);
      instance(self)->set_attribute("bias_v", none);
    }
    set_attrs(self, b, {"embed_dim", "num_heads", "batch_first", "dropout"});
    if (auto* m = instance(self)) {
      m->set_attribute("kdim", kdim);
      m->set_attribute("vdim", vdim);
      m->set_attribute("_qkv_same_embed_dim", Value::boolean(same));
      m->set_attribute("head_dim", in.binary("//", e, b["num_heads"], site));
    }
    return Value::none();
  });

  // Recurrent layers: PyTorch's RNNBase parameter naming.
  auto rnn = [=](const std::string& cls, int gates) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      std::vector<P> params = {{"input_size", std::nullopt}, {"hidden_size", std::nullopt}, {"num_layers", Value::integer(1)}};
      if (cls == "RNN") params.push_back({"nonlinearity", Value::str("tanh")});
      for (P p : std::vector<P>{{"bias", T}, {"batch_first", F}, {"dropout", Value::floating(0)}, {"bidirectional", F}, {"proj_size", Value::integer(0)}, {"device", none}, {"dtype", none}})
        params.push_back(p);
      if (!bind_args(in, cls, params, a, b, site)) return Value::none();
      if (!b["num_layers"].is_int() || !b["hidden_size"].is_int() || !b["input_size"].is_int() || !b["proj_size"].is_int()) {
        in.note(cls + " sizes could not be evaluated", "unknown sizes", site);
        return Value::none();
      }
      int64_t layers = b["num_layers"].as_int(), hidden = b["hidden_size"].as_int(), proj = b["proj_size"].as_int();
      int dirs = is_true(in, b["bidirectional"]) ? 2 : 1;
      bool bias = is_true(in, b["bias"]);
      int64_t real_hidden = proj > 0 ? proj : hidden;
      auto span = instance(self)->module->span;
      for (int64_t l = 0; l < layers; ++l)
        for (int d = 0; d < dirs; ++d) {
          int64_t layer_in = l == 0 ? b["input_size"].as_int() : real_hidden * dirs;
          std::string sfx = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
          auto I = [](int64_t v) { return Value::integer(v); };
          register_param(in, self, "weight_ih" + sfx, new_param(in, {I(gates * hidden), I(layer_in)}, span, "", "weight_ih" + sfx), site);
          register_param(in, self, "weight_hh" + sfx, new_param(in, {I(gates * hidden), I(real_hidden)}, span, "", "weight_hh" + sfx), site);
          if (bias) {
            register_param(in, self, "bias_ih" + sfx, new_param(in, {I(gates * hidden)}, span, "", "bias_ih" + sfx), site);
            register_param(in, self, "bias_hh" + sfx, new_param(in, {I(gates * hidden)}, span, "", "bias_hh" + sfx), site);
          }
          if (proj > 0) register_param(in, self, "weight_hr" + sfx, new_param(in, {I(proj), I(hidden)}, span, "", "weight_hr" + sfx), site);
        }
      set_repr(self, repr(b["input_size"]) + ", " + repr(b["hidden_size"]) + (layers != 1 ? ", num_layers=" + std::to_string(layers) : ""));
      return Value::none();
    };
  };
  layer("LSTM", rnn("LSTM", 4));
  layer("GRU", rnn("GRU", 3));
  layer("RNN", rnn("RNN", 1));
  auto cell = [=](const std::string& cls, int gates) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      std::vector<P> params = {{"input_size", std::nullopt}, {"hidden_size", std::nullopt}, {"bias", T}};
      if (cls == "RNNCell") params.push_back({"nonlinearity", Value::str("tanh")});
      params.push_back({"device", none});
      params.push_back({"dtype", none});
      if (!bind_args(in, cls, params, a, b, site)) return Value::none();
      Value g = in.binary("*", Value::integer(gates), b["hidden_size"], site);
      auto span = instance(self)->module->span;
      register_param(in, self, "weight_ih", new_param(in, {g, b["input_size"]}, span, "", "weight_ih"), site);
      register_param(in, self, "weight_hh", new_param(in, {g, b["hidden_size"]}, span, "", "weight_hh"), site);
      if (is_true(in, b["bias"])) {
        register_param(in, self, "bias_ih", new_param(in, {g}, span, "", "bias_ih"), site);
        register_param(in, self, "bias_hh", new_param(in, {g}, span, "", "bias_hh"), site);
      } else {
        register_none_param(self, "bias_ih");
        register_none_param(self, "bias_hh");
      }
      return Value::none();
    };
  };
  layer("LSTMCell", cell("LSTMCell", 4));
  layer("GRUCell", cell("GRUCell", 3));
  layer("RNNCell", cell("RNNCell", 1));

  // Transformer layers (torch 1.13 registration order).
  auto sub = [](Interpreter& in, const Value& self, const std::string& name, const std::string& cls, Args args, const ir::Span& site) {
    Value m = in.call(*in.builtin("torch.nn." + cls), std::move(args), instance(self)->module->span);
    if (!in.exception_pending()) in.module_set(*instance(self), name, m, site);
  };
  auto encoder_layer = [=](bool decoder) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      std::string cls = decoder ? "TransformerDecoderLayer" : "TransformerEncoderLayer";
      if (!bind_args(in, cls, {{"d_model", std::nullopt}, {"nhead", std::nullopt}, {"dim_feedforward", Value::integer(2048)}, {"dropout", Value::floating(0.1)},
                          {"activation", Value::str("relu")}, {"layer_norm_eps", Value::floating(1e-5)}, {"batch_first", F}, {"norm_first", F},
                          {"bias", T}, {"device", none}, {"dtype", none}}, a, b, site))
        return Value::none();
      Value d = b["d_model"], ff = b["dim_feedforward"], eps = b["layer_norm_eps"];
      sub(in, self, "self_attn", "MultiheadAttention", Args{{d, b["nhead"]}, {{"dropout", b["dropout"]}, {"batch_first", b["batch_first"]}}}, site);
      if (decoder) sub(in, self, "multihead_attn", "MultiheadAttention", Args{{d, b["nhead"]}, {{"dropout", b["dropout"]}, {"batch_first", b["batch_first"]}}}, site);
      sub(in, self, "linear1", "Linear", Args{{d, ff}, {}}, site);
      sub(in, self, "dropout", "Dropout", Args{{b["dropout"]}, {}}, site);
      sub(in, self, "linear2", "Linear", Args{{ff, d}, {}}, site);
      instance(self)->set_attribute("norm_first", b["norm_first"]);
      sub(in, self, "norm1", "LayerNorm", Args{{d}, {{"eps", eps}}}, site);
      sub(in, self, "norm2", "LayerNorm", Args{{d}, {{"eps", eps}}}, site);
      if (decoder) sub(in, self, "norm3", "LayerNorm", Args{{d}, {{"eps", eps}}}, site);
      sub(in, self, "dropout1", "Dropout", Args{{b["dropout"]}, {}}, site);
      sub(in, self, "dropout2", "Dropout", Args{{b["dropout"]}, {}}, site);
      if (decoder) sub(in, self, "dropout3", "Dropout", Args{{b["dropout"]}, {}}, site);
      if (auto* act = b["activation"].as<InstanceObj>(); act && act->module) in.module_set(*instance(self), "activation", b["activation"], site);
      else instance(self)->set_attribute("activation", b["activation"]);
      return Value::none();
    };
  };
  layer("TransformerEncoderLayer", encoder_layer(false));
  layer("TransformerDecoderLayer", encoder_layer(true));
  auto stack = [=](const std::string& cls, const std::string& layer_arg) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      if (!bind_args(in, cls, {{layer_arg.c_str(), std::nullopt}, {"num_layers", std::nullopt}, {"norm", none}, {"enable_nested_tensor", T}, {"mask_check", T}}, a, b, site))
        return Value::none();
      auto* proto = b[layer_arg].as<InstanceObj>();
      if (!proto || !b["num_layers"].is_int()) {
        in.note(cls + " layers could not be resolved", "the layer or num_layers is not known", site);
        return Value::none();
      }
      std::vector<Value> copies;
      for (int64_t i = 0; i < b["num_layers"].as_int(); ++i)
        copies.push_back(in.call(*in.builtin("copy.deepcopy"), Args{{b[layer_arg]}, {}}, site));
      Value layers = in.call(*in.builtin("torch.nn.ModuleList"), Args{{make_list(copies)}, {}}, instance(self)->module->span);
      in.module_set(*instance(self), "layers", layers, site);
      instance(self)->set_attribute("num_layers", b["num_layers"]);
      in.module_set(*instance(self), "norm", b["norm"], site);
      return Value::none();
    };
  };
  layer("TransformerEncoder", stack("TransformerEncoder", "encoder_layer"));
  layer("TransformerDecoder", stack("TransformerDecoder", "decoder_layer"));
  layer("Transformer", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "Transformer", {{"d_model", Value::integer(512)}, {"nhead", Value::integer(8)}, {"num_encoder_layers", Value::integer(6)},
                                  {"num_decoder_layers", Value::integer(6)}, {"dim_feedforward", Value::integer(2048)}, {"dropout", Value::floating(0.1)},
                                  {"activation", Value::str("relu")}, {"custom_encoder", none}, {"custom_decoder", none},
                                  {"layer_norm_eps", Value::floating(1e-5)}, {"batch_first", F}, {"norm_first", F}, {"bias", T}, {"device", none}, {"dtype", none}},
              a, b, site))
      return Value::none();
    auto span = instance(self)->module->span;
    Args layer_args{{b["d_model"], b["nhead"], b["dim_feedforward"], b["dropout"], b["activation"], b["layer_norm_eps"], b["batch_first"], b["norm_first"]}, {}};
    auto build = [&](const std::string& name, const std::string& layer_cls, const std::string& stack_cls, const char* n) {
      Value l = in.call(*in.builtin("torch.nn." + layer_cls), layer_args, span);
      Value norm = in.call(*in.builtin("torch.nn.LayerNorm"), Args{{b["d_model"]}, {{"eps", b["layer_norm_eps"]}}}, span);
      Value s = in.call(*in.builtin("torch.nn." + stack_cls), Args{{l, b[n], norm}, {}}, span);
      in.module_set(*instance(self), name, s, site);
    };
    if (!b["custom_encoder"].is_none()) in.module_set(*instance(self), "encoder", b["custom_encoder"], site);
    else build("encoder", "TransformerEncoderLayer", "TransformerEncoder", "num_encoder_layers");
    if (!b["custom_decoder"].is_none()) in.module_set(*instance(self), "decoder", b["custom_decoder"], site);
    else build("decoder", "TransformerDecoderLayer", "TransformerDecoder", "num_decoder_layers");
    return Value::none();
  });

  // --- layers without parameters: keep their arguments for the printed tree ---
  auto plain = [](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    Value self = self_of(a);
    if (auto* m = instance(self); m && m->module) {
      m->module->extra_repr = args_repr(in, a);
      for (auto& [k, v] : a.keywords) m->set_attribute(k, v);
    }
    return Value::none();
  };
  for (const char* n : {"Identity", "ReLU", "ReLU6", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid", "Hardtanh", "Hardswish",
                        "Hardsigmoid", "LeakyReLU", "ELU", "SELU", "CELU", "GLU", "Softplus", "Softsign", "Tanhshrink",
                        "Threshold", "LogSigmoid", "Softmax", "Softmax2d", "LogSoftmax", "Softmin", "Dropout", "Dropout1d",
                        "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Flatten", "Unflatten",
                        "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
                        "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
                        "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "Upsample",
                        "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
                        "ChannelShuffle", "CrossEntropyLoss", "MSELoss", "L1Loss", "NLLLoss", "BCELoss",
                        "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CosineSimilarity",
                        "PairwiseDistance", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
                        "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
                        "ReplicationPad2d", "ReplicationPad3d", "Fold", "Unfold", "LocalResponseNorm", "Hardshrink",
                        "Softshrink", "RReLU", "CTCLoss", "TripletMarginLoss", "MarginRankingLoss"})
    layer(n, plain);
  // einops (functions and layers) is a library model, library/einops: read as Python, so that its
  // shapes are computed while the model is built as well as while forward() is traced.
  (void)mha;

  // Aliases that model code imports from torch.nn.modules.* paths.
  for (const char* n : {"Linear", "Embedding", "LayerNorm", "Conv1d", "Conv2d", "Dropout", "ModuleList", "Sequential", "ModuleDict"}) {
    std::string name = n;
    in.define("torch.nn.modules." + name, *in.builtin("torch.nn." + name));
  }
  in.define("torch.nn.Module", Value::object(module));
}

}  // namespace shardlens::python
