// The exact graph of a loaded TorchScript module's forward(): its methods and functions are walked
// call by call (so every op knows the module instance that ran it and the call sites that led to
// it) and every node is evaluated on meta tensors for one workload, which gives each value its
// shape without memory or arithmetic. Ops without a meta kernel get their shape from a formula
// where one is known, else stay unknown. C++17 (LibTorch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "torch/torchscript_model.h"

namespace shardlens::torchgraph {

struct InputSpec {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype = "float32";
  std::string why;  // how the shape was chosen
};

struct EvalOptions {
  int64_t batch = 1;
  int64_t tokens = 1;               // tokens per sequence in this forward (decode: 1)
  int64_t spatial[2] = {64, 64};    // H, W of image-like inputs
  std::vector<InputSpec> inputs;    // explicit shapes (by position); empty: inferred from first use
  int64_t max_ops = 2000000;        // evaluation budget (loops over data)
};

struct SourceSpan {
  std::string file;
  uint32_t line = 0, column = 0, end_line = 0, end_column = 0;  // 1-based lines, 0-based byte columns
  bool valid() const { return line > 0; }
};

struct ValueRecord {
  std::string kind;                 // tensor | int | float | bool | str | none | list | tuple | device | dtype | object | unknown
  std::vector<int64_t> shape;       // tensors
  bool shape_known = false;
  std::string dtype;                // tensors
  nlohmann::json value;             // scalars and lists of scalars when known
  std::vector<int> items;           // list / tuple elements (value ids)
  int parameter = -1;               // index into LoadedModel::parameters
  int buffer = -1;
  bool data_dependent = false;      // a size only the data decides (routed tokens): an estimate
};

struct OpRecord {
  std::string kind;                 // "aten::linear", ...; "prim::CallMethod" / "prim::CallFunction" open a body
  std::string method;               // CallMethod: the method name; CallFunction: the function's qualified name
  int module = 0;                   // index into LoadedModel::modules: whose method ran it (CallMethod: the callee)
  std::vector<int> inputs, outputs; // value ids
  int end = -1;                     // calls: one past the last op of the body
  SourceSpan span;                  // where in the exported script (the op itself, else its nearest call site there)
  SourceSpan origin;                // the op's own source range when that lies outside the script (torch's code)
  std::string error;                // why the output shapes are unknown
};

struct ExactGraph {
  std::vector<InputSpec> inputs;
  std::vector<int> input_ids, output_ids;
  std::vector<ValueRecord> values;
  std::vector<OpRecord> ops;
  std::vector<std::string> notes;
  std::string error;                // evaluation stopped early (the ops seen so far are kept)
};

ExactGraph evaluate_forward(LoadedModel& model, const EvalOptions& options);

// Numeric runs (`shardlens verify`): the same walk over forward() on real tensors, with a say at
// every step: which tensor stands for each parameter and buffer, and the values going into and
// coming out of every op and module call.
struct Step {
  const torch::jit::Node* node = nullptr;
  int module = 0;        // the module whose code runs the node
  int callee = -1;       // prim::CallMethod: the module called
  SourceSpan span;       // as OpRecord::span
};

class NumericHooks {
 public:
  virtual ~NumericHooks() = default;
  // The tensor this run reads for a stored parameter (`parameter` >= 0) or buffer.
  virtual at::Tensor weight(const at::Tensor& stored, int parameter, int buffer) = 0;
  // Inputs exclude a method's `self`.
  virtual void before(const Step&, std::vector<c10::IValue>& inputs) { (void)inputs; }
  virtual void after(const Step&, std::vector<c10::IValue>& outputs) { (void)outputs; }
};

// Runs forward(inputs) and returns its outputs; throws std::runtime_error (with the op and its
// place in the script) when a step fails or the forward assigns module attributes.
std::vector<c10::IValue> run_numeric(LoadedModel& model, const std::vector<c10::IValue>& inputs, NumericHooks& hooks);

}  // namespace shardlens::torchgraph
