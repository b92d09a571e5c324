// Internal to the natives (builtin_*.cpp, torch_*.cpp): the helpers more than one of their files
// needs, and the registration functions by library area that install_python_builtins and
// install_torch call. Not part of the python library's interface.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "python/interpreter.h"

namespace shardlens::python::native {

using Args = CallArgs;

// --- arguments -------------------------------------------------------------------------------

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
               const ir::Span& site, bool allow_extra_kwargs = false);
// Removes and returns a method's receiver (none if there are no arguments).
Value self_of(Args& a);
const Value* first_unknown_arg(const Args& a);
// The items of each iterable (zip, map, itertools.product, ...); nullopt, and why, at the first
// one that cannot be iterated.
std::optional<std::vector<std::vector<Value>>> items_of_each(Interpreter& in, std::span<const Value> iterables,
                                                             const ir::Span& site, Value* why);
// The items of f(function, iterable)'s iterable (filter, itertools.starmap); nullopt, and in *why
// the TypeError (usage) or why it cannot be iterated, otherwise.
std::optional<std::vector<Value>> items_after_function(Interpreter& in, const Args& a, const std::string& usage,
                                                       const ir::Span& site, Value* why);

// --- Python values (defined in builtin_types.cpp, builtin_str_methods.cpp, builtin_functions.cpp) ---

Value to_int(Interpreter& in, const Value& v, const ir::Span& site);
Value to_float(Interpreter& in, const Value& v, const ir::Span& site);
Value dict_from(Interpreter& in, Args& a, const ir::Span& site);
std::string format_with_spec(Interpreter& in, const Value& v, const std::string& spec_in, bool& ok);
// property / staticmethod / classmethod (and functools.cached_property): wrap the decorated function.
NativeFn decorator(ObjKind kind);

// --- modules and tensors -----------------------------------------------------------------------

InstanceObj* instance(const Value& v);
void register_param(Interpreter& in, const Value& self, const std::string& name, Value param, const ir::Span& site);
void register_none_param(const Value& self, const std::string& name);
void register_buffer(const Value& self, const std::string& name, std::shared_ptr<TensorObj> t, bool persistent);

// Values are tracked for tensors up to this many elements.
constexpr int64_t kMaxTrackedValues = 65536;
// Shape dims from a list of values: ints, or one tuple/list/torch.Size of ints.
std::optional<std::vector<int64_t>> dims_of(const std::vector<Value>& values, Value* why);
std::string dtype_name(const Value& v);
bool is_integral_dtype(const std::string& d);
// Known values are kept at the tensor's precision, so .item() answers as PyTorch would.
void round_to_dtype(std::vector<double>& values, const std::string& dtype);
Value new_buffer_tensor(Interpreter& in, std::vector<Value> dims, const ir::Span& site, const std::string& dtype,
                        std::optional<double> fill = std::nullopt);
std::optional<std::vector<int64_t>> broadcast(std::span<const int64_t> a, std::span<const int64_t> b);
Value tensor_like(Interpreter& in, const TensorObj& t, std::optional<std::vector<int64_t>> shape, const ir::Span& site);
int64_t norm_dim(int64_t d, size_t rank);
std::optional<std::vector<int64_t>> reshape(std::span<const int64_t> from, std::vector<int64_t> to);

// --- registration by library area, in the order install_python_builtins calls them ----------------

void install_builtin_types(Interpreter& in);        // builtin_types.cpp: exceptions, object, int/str/list/dict/...
void install_builtin_functions(Interpreter& in);    // builtin_functions.cpp: abs, zip, sorted, isinstance, getattr, ...
void install_str_methods(Interpreter& in);          // builtin_str_methods.cpp
void install_container_methods(Interpreter& in);    // builtin_container_methods.cpp: list, tuple, dict, set, int, float
void install_math(Interpreter& in);                 // builtin_math.cpp
void install_copy(Interpreter& in);                 // builtin_container_methods.cpp
void install_functional_modules(Interpreter& in);   // builtin_functional.cpp: functools, operator, itertools, abc
void install_data_type_modules(Interpreter& in);    // builtin_data_types.cpp: dataclasses, collections, typing, enum
void install_script_environment(Interpreter& in);   // builtin_script_environment.cpp: types, argparse, os, sys, ...

// --- registration by library area, in the order install_torch calls them -------------------------

void install_torch_environment(Interpreter& in);    // torch_environment.cpp: dtypes, devices, distributed, version
void install_tensor_functions(Interpreter& in);     // torch_tensor_functions.cpp: factories, torch.cat, torch.einsum, ...
void install_tensor_methods(Interpreter& in);       // torch_tensor_methods.cpp: Tensor's methods and attributes
void install_nn_parameters(Interpreter& in);        // torch_nn_parameters.cpp: nn.Parameter, nn.init, nn.utils
void install_nn_functional(Interpreter& in);        // torch_tensor_functions.cpp
void install_module_methods(Interpreter& in);       // torch_nn_module.cpp: nn.Module's methods
void install_nn_containers(Interpreter& in);        // torch_nn_containers.cpp: Sequential, ModuleList, ModuleDict, ...
void install_nn_layers(Interpreter& in);            // torch_nn_layers.cpp: Linear, Embedding, norms, convs, RNNs, ...

}  // namespace shardlens::python::native
