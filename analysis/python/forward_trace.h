// Traces a model's forward() through the abstract interpreter into the dataflow IR: module calls
// become Call ops with bodies, tensor operations become ops with shapes for one workload.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/dataflow.h"
#include "python/module_tree.h"
#include "python/values.h"

namespace shardlens::python {

class Interpreter;

struct TraceWorkload {
  int64_t batch = 1;
  int64_t tokens = 1;        // tokens per sequence in this forward (decode: 1; prefill: seq)
  int64_t spatial[2] = {64, 64};  // H, W of image-like inputs (convs)
  bool operator==(const TraceWorkload&) const = default;
};

class ForwardTracer {
 public:
  ForwardTracer(Interpreter& interp, ir::ModelIR& model, const std::vector<NamedModule>& walk);

  // Runs root.forward on inputs whose shapes are inferred from their first use; fills model.dataflow.
  void trace(const std::shared_ptr<InstanceObj>& root, const TraceWorkload& workload);

  // Interpreter hooks while tracing.
  Value native(Interpreter& in, const NativeObj& fn, CallArgs& args, const ir::Span& site);
  Value module_call(Interpreter& in, const Value& callee, CallArgs& args, const ir::Span& site);
  Value binary(Interpreter& in, const std::string& op, const Value& a, const Value& b, const ir::Span& site);
  Value unary(Interpreter& in, const std::string& op, const Value& v, const ir::Span& site);
  Value subscript(Interpreter& in, const Value& target, const Value& index, const ir::Span& site);
  void set_item(Interpreter& in, const Value& target, const Value& index, const Value& value, const ir::Span& site);

 private:
  struct Placeholder {
    std::string name;
    std::shared_ptr<TensorObj> tensor;
    int id = -1;
  };
  int id_of(const std::shared_ptr<TensorObj>& t);
  int new_version(const std::shared_ptr<TensorObj>& t);
  ir::Op& record(ir::OpKind kind, std::string name, const std::vector<Value>& inputs, const Value& result,
                 const ir::Span& site);
  std::shared_ptr<TensorObj> make(Interpreter& in, std::vector<int64_t> shape, const std::string& dtype,
                                  const ir::Span& site);
  Value record_unknown(Interpreter& in, const std::string& name, const std::vector<Value>& inputs,
                       const std::string& why, const ir::Span& site);
  Value routed_experts(Interpreter& in, InstanceObj& moe, int index, CallArgs& args, const ir::Span& site);
  Value resync(Interpreter& in, const std::string& name, const Value& x, std::vector<int64_t> shape,
               const std::vector<Value>& weights, const ir::Span& site);
  Value builtin_layer(Interpreter& in, InstanceObj& layer, CallArgs& args, const ir::Span& site);
  Value contract(Interpreter& in, const std::string& name, const std::string& equation, const std::vector<Value>& inputs,
                 const ir::Span& site);
  Value linear(Interpreter& in, const std::string& name, const Value& x, const Value& weight, const Value& bias,
               bool weight_out_in, const ir::Span& site);
  Value matmul(Interpreter& in, const std::string& name, const Value& a, const Value& b, const ir::Span& site);
  Value conv(Interpreter& in, const std::string& name, const Value& x, const Value& weight, const Value& bias,
             const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
             const std::vector<int64_t>& dilation, int64_t groups, const ir::Span& site);
  Value attention(Interpreter& in, const std::string& name, const Value& q, const Value& k, const Value& v,
                  const ir::Span& site);
  Value mha(Interpreter& in, InstanceObj& layer, CallArgs& args, const ir::Span& site);
  Value same_shape(Interpreter& in, ir::OpKind kind, const std::string& name, const Value& x,
                   const std::vector<Value>& extra, const ir::Span& site);
  std::string infer_input(const Placeholder& p, std::vector<int64_t>& shape, std::string& dtype) const;
  void run(const std::shared_ptr<InstanceObj>& root, std::vector<Placeholder>& inputs);

  Interpreter& interp_;
  ir::ModelIR& model_;
  TraceWorkload workload_;
  std::unordered_map<const InstanceObj*, int> module_index_;
  std::unordered_map<const TensorObj*, int> parameter_index_, buffer_index_;
  std::unordered_map<const TensorObj*, int> version_;         // current value id of a tensor object
  std::vector<std::shared_ptr<TensorObj>> keep_alive_;        // so that object addresses stay unique
  std::unordered_map<int, double> true_fraction_;             // bool masks: expected share of true
  std::unordered_map<int, int64_t> index_range_;              // index tensors: values lie in [0, n)
  std::vector<int> module_stack_;
  ir::Dataflow* flow_ = nullptr;
  int depth_ = 0;
};

}  // namespace shardlens::python
