// torch.Tensor's methods and attributes: indexing, operators, reductions, views and casts, with
// shapes and, where known, values.
#include <algorithm>
#include <numeric>
#include <cmath>
#include <map>
#include <set>

#include "python/interpreter.h"
#include "python/native_support.h"

namespace shardlens::python::native {

namespace {

Value scalar_of(const TensorObj& t, double v) {
  if (t.dtype == "bool") return Value::boolean(v != 0);
  if (is_integral_dtype(t.dtype)) return Value::integer(static_cast<int64_t>(v));
  return Value::floating(v);
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
  // Known values follow basic indexing (ints, slices, None, ...): each source dim keeps the indices
  // its item picks, in order (Mochi's attention_mask[idx][None, :] before nonzero()).
  if (t.values && static_cast<int64_t>(t.values->size()) == t.numel() && lists == 0) {
    std::vector<std::vector<int64_t>> picks;
    size_t src = 0;
    auto whole_dim = [&] {
      picks.emplace_back(static_cast<size_t>(shape[src++]));
      std::iota(picks.back().begin(), picks.back().end(), int64_t{0});
    };
    for (auto& it : items) {
      if (it.is_none()) continue;
      if (it.kind == Value::Kind::Ellipsis) {
        for (size_t k = shape.size() >= consumed ? shape.size() - consumed : 0; k > 0; --k) whole_dim();
        continue;
      }
      const int64_t n = shape[src++];
      if (it.is_int()) {
        int64_t i = it.as_int() < 0 ? it.as_int() + n : it.as_int();
        if (i < 0 || i >= n) return in.raise("IndexError", "index out of range", site);
        picks.push_back({i});
      } else if (auto* sl = it.as<SliceObj>()) {
        bool ok = true;  // bounds and step were checked above, where the shape was found
        picks.push_back(slice_indices(*sl, n, ok));
      }
    }
    while (src < shape.size()) whole_dim();
    std::vector<double> vals;
    std::vector<size_t> at(picks.size(), 0);
    const bool empty = std::any_of(picks.begin(), picks.end(), [](const auto& p) { return p.empty(); });
    while (!empty) {
      int64_t flat = 0;
      for (size_t d = 0; d < picks.size(); ++d) flat = flat * shape[d] + picks[d][at[d]];
      vals.push_back((*t.values)[static_cast<size_t>(flat)]);
      size_t d = picks.size();
      while (d > 0 && ++at[d - 1] == picks[d - 1].size()) at[--d] = 0;
      if (d == 0) break;
    }
    result.as<TensorObj>()->values = std::move(vals);
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
    if (t->values && shape && static_cast<int64_t>(t->values->size()) == t->numel()) {
      if (shape->empty()) return scalar_of(*t, (*t->values)[0]);
      // Nested lists, one level per dim (Wan's `for f, h, w in grid_sizes.tolist()` over [B, 3]).
      size_t at = 0;
      auto nest = [&](auto& self, size_t dim) -> Value {
        std::vector<Value> out;
        for (int64_t i = 0; i < (*shape)[dim]; ++i)
          out.push_back(dim + 1 == shape->size() ? scalar_of(*t, (*t->values)[at++]) : self(self, dim + 1));
        return make_list(std::move(out));
      };
      return nest(nest, 0);
    }
    return in.unknown("tensor values are not known statically", site);
  }
  if (name == "nonzero") {
    // The indices of a tensor of known values (Mochi keeps a prompt's real tokens by its mask's).
    bool as_tuple = false;
    if (const Value* k = a.keyword("as_tuple"); k && k->kind == Value::Kind::Bool) as_tuple = k->b;
    if (!shape || !t->values || static_cast<int64_t>(t->values->size()) != t->numel())
      return as_tuple ? in.unknown("nonzero() of unknown values", site) : unknown_shape();
    const size_t rank = shape->size();
    std::vector<std::vector<double>> coords(rank);
    int64_t count = 0;
    for (size_t flat = 0; flat < t->values->size(); ++flat) {
      if ((*t->values)[flat] == 0) continue;
      ++count;
      size_t rest = flat;
      for (size_t d = rank; d-- > 0;) {
        coords[d].push_back(static_cast<double>(rest % static_cast<size_t>((*shape)[d])));
        rest /= static_cast<size_t>((*shape)[d]);
      }
    }
    auto indices = [&](std::vector<int64_t> dims, std::vector<double> values) {
      Value r = tensor_like(in, *t, std::move(dims), site);
      auto* rt = r.as<TensorObj>();
      rt->dtype = "int64";
      rt->values = std::move(values);
      return r;
    };
    if (as_tuple) {
      std::vector<Value> out;
      for (auto& c : coords) out.push_back(indices({count}, c));
      return make_tuple(std::move(out));
    }
    std::vector<double> rows;
    rows.reserve(static_cast<size_t>(count) * rank);
    for (int64_t i = 0; i < count; ++i)
      for (size_t d = 0; d < rank; ++d) rows.push_back(coords[d][static_cast<size_t>(i)]);
    return indices({count, static_cast<int64_t>(rank)}, std::move(rows));
  }
  if (name == "view" || name == "reshape") {
    if (!shape) return unknown_shape();
    if (!a.positional.empty() && a.positional[0].as<DtypeObj>()) return unknown_shape();
    // x.reshape(shape=(...)) (DiT's unpatchify) names the one argument.
    std::vector<Value> spec = a.positional;
    if (const Value* k = a.keyword(name == "reshape" ? "shape" : "size"); k && spec.empty()) spec.push_back(*k);
    auto to = dims_of(spec, nullptr);
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
    const int64_t rank = static_cast<int64_t>(shape->size());
    if (start < 0 || end < 0 || start >= rank || end >= rank)
      return in.raise("IndexError", "Dimension out of range (expected to be in range of [" + std::to_string(-rank) + ", " +
                                        std::to_string(rank - 1) + "])", site);
    if (start > end) return in.raise("RuntimeError", "flatten() has invalid args: start_dim cannot come after end_dim", site);
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

void install_tensor_methods(Interpreter& in) {
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
      "expand", "repeat", "transpose", "swapaxes", "t", "permute", "flatten", "chunk", "split", "unbind", "repeat_interleave", "unflatten",
      "nonzero"};
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
  // x.T and x.H reverse the dims, x.mT and x.mH swap the last two (H: the conjugate, the same on real
  // tensors). While tracing, the interpreter records them as permutes instead.
  for (const char* name : {"T", "H", "mT", "mH"}) {
    const bool all = name[0] != 'm';
    in.define_method("@tensor", name, [all](Interpreter& in, const Value& self, Args&, const ir::Span& site) {
      auto* t = self.as<TensorObj>();
      if (!t->shape) return tensor_like(in, *t, std::nullopt, site);
      auto s = *t->shape;
      if (all) std::reverse(s.begin(), s.end());
      else if (s.size() >= 2) std::swap(s[s.size() - 2], s.back());
      else return in.raise("RuntimeError", "tensor.mT is only supported on matrices or batches of matrices", site);
      return tensor_like(in, *t, s, site);
    });
  }
  in.define_method("@tensor", "data", [](Interpreter&, const Value& self, Args&, const ir::Span&) { return self; });
  in.define_method("@tensor", "dtype", [](Interpreter& in, const Value& self, Args&, const ir::Span& site) {
    const Value* d = in.builtin("torch." + self.as<TensorObj>()->dtype);
    return d ? *d : in.unknown("dtype", site);
  });
  in.define_method("@tensor", "requires_grad", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return Value::boolean(self.as<TensorObj>()->requires_grad);
  });
  in.define_method("@tensor", "device", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    const Value* device = in.builtin("torch.device");
    if (!device) return in.unknown("device", site);
    return in.call(*device, CallArgs{{Value::str("cpu")}, {}}, site);
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
}

}  // namespace shardlens::python::native
