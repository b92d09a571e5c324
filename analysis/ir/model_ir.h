// The model IR: what a script builds (module tree, parameters, buffers) and where in the source.
// Produced by the front ends (static Python today), read by the planner, the server and emitters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/big_int.h"
#include "ir/dataflow.h"
#include "ir/span.h"

namespace shardlens::ir {

struct Parameter {
  std::string name;            // fully qualified, exactly as named_parameters() gives it
  std::vector<int64_t> shape;
  bool shape_known = true;     // false: see the matching entry in ModelIR::unresolved
  std::string dtype = "float32";
  Span span;                   // where the parameter (or the layer that owns it) is created
  int64_t numel() const;       // saturates at INT64_MAX (costs are doubles anyway); count() is exact
  BigInt count() const;
};

struct Buffer {
  std::string name;
  std::vector<int64_t> shape;
  bool shape_known = true;
  std::string dtype = "float32";
  bool persistent = true;
  Span span;
};

struct Module {
  std::string name;            // "" for the root, else as named_modules() gives it
  std::string class_name;
  std::string extra_repr;      // what PyTorch's extra_repr() prints for built-in layers
  Span span;                   // the expression that constructed it
  std::vector<int> children;   // indices into ModelIR::modules, in registration order
  std::vector<std::string> child_keys;  // the attribute / key each child is registered under
  std::vector<int> parameters; // indices into ModelIR::parameters owned directly (first owner)
  std::vector<int> buffers;
  uint64_t structure_hash = 0; // equal for structurally identical subtrees (class, shapes, children)
};

struct Unresolved {
  std::string what;
  std::string reason;
  Span span;
};

struct ModelIR {
  std::string model;           // root class name
  std::string source;          // path of the script
  std::string root_expression; // how the root was chosen: a variable, --model EXPR, or Class()
  std::vector<Module> modules; // modules[0] is the root; the rest in named_modules() order
  std::vector<Parameter> parameters;  // named_parameters() order, de-duplicated
  std::vector<Buffer> buffers;        // named_buffers() order, de-duplicated
  std::vector<Unresolved> unresolved;
  std::vector<std::string> notes;  // choices the front end made that a user should know about
  Dataflow dataflow;               // forward(), when traced (ExtractOptions::trace_forward)

  BigInt total_parameters() const;  // exact: 10**24 parameters do not wrap
};

}  // namespace shardlens::ir
