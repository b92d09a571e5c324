// The helpers natives in several files share (native_support.h).
#include <algorithm>
#include <cmath>
#include <span>

#include "python/native_support.h"

namespace shardlens::python::native {

bool bind_args(Interpreter& in, const std::string& fname, const std::vector<P>& params, const Args& a, Bound& out,
               const ir::Span& site, bool allow_extra_kwargs) {
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

Value new_buffer_tensor(Interpreter& in, std::vector<Value> dims, const ir::Span& site, const std::string& dtype,
                        std::optional<double> fill) {
  Value why;
  auto shape = dims_of(dims, &why);
  auto t = in.new_tensor(shape, site, false);
  if (!dtype.empty()) t->dtype = dtype;
  if (!shape) t->why = why.unknown;
  else if (fill && t->numel() <= kMaxTrackedValues) t->values = TrackedValues::filled(static_cast<size_t>(t->numel()), *fill);
  return Value::object(t);
}

void round_to_dtype(std::vector<double>& values, const std::string& dtype) {
  if (dtype == "float32")
    for (auto& v : values) v = static_cast<double>(static_cast<float>(v));
}

bool is_integral_dtype(const std::string& d) { return d.rfind("int", 0) == 0 || d == "uint8" || d == "bool"; }

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

const Value* first_unknown_arg(const Args& a) {
  for (auto& v : a.positional)
    if (v.is_unknown()) return &v;
  for (auto& kv : a.keywords)
    if (kv.second.is_unknown()) return &kv.second;
  return nullptr;
}

std::optional<std::vector<std::vector<Value>>> items_of_each(Interpreter& in, std::span<const Value> iterables,
                                                             const ir::Span& site, Value* why) {
  std::vector<std::vector<Value>> out;
  // Endless iterators (itertools.cycle) beside finite ones give as many items as the shortest of
  // those; on their own they never end (Interpreter::iterate says so).
  auto endless = [](const Value& v) {
    const auto* l = v.as<ListObj>();
    return l && l->endless;
  };
  const bool all_endless = std::all_of(iterables.begin(), iterables.end(), endless);
  for (const Value& v : iterables) {
    if (endless(v) && !all_endless) {
      out.emplace_back();  // filled once the finite ones are listed
      continue;
    }
    Value item_why;
    auto items = in.iterate(v, site, &item_why);
    if (!items) {
      *why = std::move(item_why);
      return std::nullopt;
    }
    out.push_back(std::move(*items));
  }
  size_t n = SIZE_MAX;
  for (size_t k = 0; k < out.size(); ++k)
    if (!endless(iterables[k])) n = std::min(n, out[k].size());
  for (size_t k = 0; k < out.size(); ++k)
    if (const auto* l = iterables[k].as<ListObj>(); endless(iterables[k]))
      for (size_t i = 0; i < n && !l->items.empty(); ++i) out[k].push_back(l->items[i % l->items.size()]);
  return out;
}

std::optional<std::vector<Value>> items_after_function(Interpreter& in, const Args& a, const std::string& usage,
                                                       const ir::Span& site, Value* why) {
  if (a.positional.size() != 2) {
    *why = in.raise("TypeError", usage, site);
    return std::nullopt;
  }
  return in.iterate(a.positional[1], site, why);
}

}  // namespace shardlens::python::native
