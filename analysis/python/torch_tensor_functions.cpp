// torch.* functions on tensors: factories (zeros, arange, tensor, ...), cat/stack, reductions,
// einsum, arithmetic and elementwise maths, with shapes and, where known, values; and
// nn.functional, whose results are unknown while modules are built.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "ir/contract_equations.h"
#include "ir/split.h"
#include "python/interpreter.h"
#include "python/native_support.h"

namespace shardlens::python::native {

namespace {

Value tensor_with_values(Interpreter& in, std::vector<int64_t> shape, std::vector<double> values, const std::string& dtype,
                         const ir::Span& site) {
  auto t = in.new_tensor(std::move(shape), site, false);
  t->dtype = dtype;
  round_to_dtype(values, dtype);
  if (static_cast<int64_t>(values.size()) <= kMaxTrackedValues) t->values = std::move(values);
  return Value::object(t);
}

}  // namespace

void install_tensor_functions(Interpreter& in) {
  auto module = in.module_base();
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
  in.define_native("torch.concatenate", concat(false));  // the NumPy-style name (HF Zamba2)
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
    // Ellipses and an implicit output made explicit, as the tracer records the contraction.
    std::vector<const ir::Shape*> operand_shapes;
    for (auto& o : operands) {
      auto* t = o.as<TensorObj>();
      operand_shapes.push_back(t && t->shape ? &*t->shape : nullptr);
    }
    std::string eq = ir::einsum_equation(a.positional[0].s, operand_shapes);
    auto arrow = eq.find("->");
    if (arrow == std::string::npos || operands.empty()) return tensor_like(in, TensorObj(), std::nullopt, site);
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
      {"relu", [](double v) { return v > 0 ? v : 0.0; }}, {"sign", [](double v) { return double((v > 0) - (v < 0)); }},
      {"expm1", [](double v) { return std::expm1(v); }}, {"exp2", [](double v) { return std::exp2(v); }},
      {"log10", [](double v) { return std::log10(v); }}, {"trunc", [](double v) { return std::trunc(v); }},
      {"atan", [](double v) { return std::atan(v); }},   {"sinh", [](double v) { return std::sinh(v); }},
      {"cosh", [](double v) { return std::cosh(v); }}};
  // torch.f(tensor, ...) that keep the first argument's shape.
  for (const char* n : {"exp", "log", "sin", "cos", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "abs", "triu", "tril",
                        "clone", "clamp", "reciprocal", "erf", "neg", "square", "polar", "masked_fill", "where",
                        "log1p", "log2", "softmax", "gelu", "silu", "flip", "roll", "cumsum", "sign", "round", "floor", "ceil",
                        "expm1", "exp2", "log10", "trunc", "atan", "sinh", "cosh"}) {
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
}

// nn.functional: values usable as activations; calling them yields a tensor of unknown shape.
void install_nn_functional(Interpreter& in) {
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
                        "kl_div", "pairwise_distance", "pixel_unshuffle", "affine_grid", "avg_pool3d", "max_pool3d",
                        "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"}) {
    std::string name = std::string("torch.nn.functional.") + n;
    in.define_native(name, [name](Interpreter& in, const Value&, Args&, const ir::Span& site) {
      auto t = in.new_tensor(std::nullopt, site);
      t->why = std::make_shared<UnknownInfo>(UnknownInfo{name + "() output (forward computations are not run during module extraction)", site, false});
      return Value::object(t);
    });
  }
}

}  // namespace shardlens::python::native
