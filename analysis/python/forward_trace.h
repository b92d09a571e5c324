// Traces a model's forward() through the abstract interpreter into the dataflow IR: module calls
// become Call ops with bodies, tensor operations become ops with shapes for one workload.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/dataflow.h"
#include "python/module_tree.h"
#include "python/values.h"

namespace shardlens::python {

class Interpreter;

// A forward() input given explicitly (`--input NAME=SHAPE[:DTYPE]`, the `inputs` setting): traced
// with this shape instead of the one inferred from its first use.
struct GivenInput {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype = "float32";
  bool operator==(const GivenInput&) const = default;
};

// Parses NAME=SHAPE[:DTYPE] (SHAPE: sizes joined by 'x', e.g. input_ids=1x128:int64; DTYPE a torch
// dtype name, float32 by default). On a bad spec, nullopt and `error` says why.
std::optional<GivenInput> parse_given_input(const std::string& spec, std::string& error);

struct TraceWorkload {
  int64_t batch = 1;
  int64_t tokens = 1;        // tokens per sequence in this forward (decode: 1; prefill: seq)
  int64_t context = 0;       // the sequence the caches hold (decode's context); 0: `tokens`
  int64_t spatial[2] = {64, 64};  // H, W of image-like inputs (convs)
  // Whether `tokens` / `spatial` were chosen by the user. When not, the model's own position
  // tables decide where they bound the input (ForwardTracer::input_told_by): token ids no longer
  // than the positions there are, an image or audio input as large as its position table fits.
  bool tokens_given = false;
  bool spatial_given = false;
  std::vector<GivenInput> inputs;
  bool operator==(const TraceWorkload&) const = default;
};

class ForwardTracer {
 public:
  // `index`: of `walk`, as the model IR was built from it. Both must outlive trace(); the
  // destructor reads neither, so a tracer may be freed after them.
  ForwardTracer(Interpreter& interp, ir::ModelIR& model, const std::vector<NamedModule>& walk, const TreeIndex& index);
  ~ForwardTracer();

  // Runs root.forward on inputs whose shapes are inferred from their first use; fills model.dataflow.
  void trace(const std::shared_ptr<InstanceObj>& root, const TraceWorkload& workload);
  void trace_with_retries(const std::shared_ptr<InstanceObj>& root, const TraceWorkload& workload);

  // What a forward input was taken to be: its shape and dtype, and the use that told it.
  struct InputShape {
    std::string name;
    std::vector<int64_t> shape;
    std::string dtype;
    std::string told_by;
    bool operator==(const InputShape&) const = default;
  };
  // Inferring the inputs costs a pass of its own (pass 1 runs forward() up to each input's first
  // informative use: an encoder-decoder's whole encoder). Given what an earlier trace found, trace()
  // runs pass 2 on those inputs straight away and keeps it when its own ops tell the same inputs
  // again; else it runs both passes as usual.
  struct TraceSizes {
    size_t ops = 0, tensors = 0;
  };
  void guess_inputs(std::vector<InputShape> guess, TraceSizes earlier) {
    guess_ = std::move(guess);
    guess_sizes_ = earlier;
  }
  // After trace(): every input, when all were told (empty otherwise), and whether the guess held.
  const std::vector<InputShape>& inputs_found() const { return found_; }
  bool guess_held() const { return guess_held_; }

  // Interpreter hooks while tracing.
  Value native(Interpreter& in, const NativeObj& fn, CallArgs& args, const ir::Span& site);
  Value module_call(Interpreter& in, const Value& callee, CallArgs& args, const ir::Span& site);
  // `super().forward(x)` in a subclass of a built-in layer (nn.LayerNorm, nn.Linear, ...): the
  // built-in layer's own computation on this instance.
  Value builtin_forward(Interpreter& in, InstanceObj& layer, CallArgs& args, const ir::Span& site) {
    return builtin_layer(in, layer, args, site);
  }
  Value binary(Interpreter& in, const std::string& op, const Value& a, const Value& b, const ir::Span& site);
  Value unary(Interpreter& in, const std::string& op, const Value& v, const ir::Span& site);
  Value subscript(Interpreter& in, const Value& target, const Value& index, const ir::Span& site);
  void set_item(Interpreter& in, const Value& target, const Value& index, const Value& value, const ir::Span& site);
  // Iterating a tensor whose shape is unknown: the rows of an input in pass 1, else nullopt.
  std::optional<std::vector<Value>> rows_of_unknown(Interpreter& in, const TensorObj& t, const ir::Span& site);

  // A call of a module whose forward() already ran on equal inputs, with the same attribute values
  // where the first run read them and nothing changed in between, is replayed from the first run's
  // ops instead of being executed again: identical blocks are traced once (forward_trace_memo.cpp).
  // The interpreter reports, while tracing, what such a replay must respect:
  void mutated(const Object* object);  // an object's state changes (attribute, item, in place)
  // An assert in forward() is false. Only when tracing past failed assertions (the last resort once
  // forward() still raised AssertionError): noted, and true: forward() goes on, as under `python -O`.
  bool assertion_failed(const ir::Span& site);
  // Ops recorded so far, and whether any since `from` ran a module's forward (a Call) or a
  // contraction: a loop over the sequence's positions that records elementwise ops only is cut
  // short (interpreter.cpp); one over experts or blocks that multiply weights is not.
  size_t op_count() const { return flow_ ? flow_->ops.size() : 0; }
  bool calls_or_contractions_since(size_t from) const;
  void note(const std::string& text) {  // once per text (a loop in every layer is said once)
    if (flow_ && std::find(flow_->notes.begin(), flow_->notes.end(), text) == flow_->notes.end()) flow_->notes.push_back(text);
  }
  void untracked_state();              // a change or read the memo cannot follow (a global, __dict__)
  void attribute_read(const InstanceObj& instance, const std::string& name);
  void closure_read(uint64_t scope_serial);  // a name found in an enclosing function's scope
  void native_called(const NativeObj& fn, const CallArgs& args);
  void set_replay(bool on) { replay_ = on; }
  size_t calls_replayed() const { return calls_replayed_; }
  // Whether forward() changed an object that existed before its call (then tracing it again on
  // the same objects could see other values).
  bool changed_prior_state() const { return changed_prior_state_; }

 private:
  struct Subtree;
  struct MemoEntry;
  // Runs kept per call key: further runs with the same key differ in some attribute they read (a
  // layer index, a per-layer window), and keeping each would copy every block's ops for nothing.
  static constexpr size_t kMaxRunsPerKey = 4;
  struct CallFrame {
    uint64_t first_serial = 0;  // objects with this serial or later were made during the call
    size_t first_read = 0;      // its reads in reads_
    bool pure = true;           // changed nothing that existed before the call
    int depth = 0;              // the interpreter's call depth when it began
    int outer_deepest = 0;      // the deepest call seen before it, restored after it
  };
  struct Read {
    const InstanceObj* target = nullptr;
    std::string name;
    uint64_t hash = 0;                      // of the value found (identity for objects)
    const Object* value_object = nullptr;   // the value, when it is an object
  };
  // Whether the calls in progress depend on a read of `instance` (see log_read).
  bool keeps_read(const InstanceObj& instance) const;
  static Read read_of(const InstanceObj& instance, const std::string& name, bool present, const Value& value);
  uint64_t call_key(const InstanceObj& inst, int index, const CallArgs& args, std::vector<const TensorObj*>& arg_tensors,
                    bool& usable) const;
  void log_read(const InstanceObj& instance, const std::string& name);
  bool replay_call(uint64_t key, const InstanceObj& inst, const std::vector<const TensorObj*>& arg_tensors, Value& result);
  void remember_call(uint64_t key, const InstanceObj& inst, const CallFrame& frame, int depth_used, size_t first_op,
                     size_t first_tensor, size_t first_note, const std::vector<const TensorObj*>& arg_tensors, const Value& result);
  void reset_memo();
  std::shared_ptr<MemoEntry> make_entry(const InstanceObj& inst, const CallFrame& frame, size_t first_op, size_t first_tensor,
                                        size_t first_note, const std::vector<const TensorObj*>& arg_tensors, const Value& result);
  bool replay(const MemoEntry& entry, const Subtree& sub, const std::vector<const TensorObj*>& arg_tensors, Value& result);

  struct Placeholder {
    std::string name;
    std::shared_ptr<TensorObj> tensor;
    int id = -1;
    bool by_keyword = false;  // an optional parameter chosen as an input: passed by name
    const GivenInput* given = nullptr;  // its shape was given (TraceWorkload::inputs)
  };
  // forward()'s inputs: required parameters, and optional ones by their conventional names
  // (`with_index_inputs`: position indices too).
  // `self`: the module whose forward() it is, `interp` the interpreter that built it (the
  // submodules and functions it calls are looked into; either may be null).
  static std::vector<std::pair<std::string, bool>> forward_inputs(const FunctionObj& forward, bool with_index_inputs,
                                                                  const InstanceObj* self = nullptr, const Interpreter* interp = nullptr);
  bool with_index_inputs_ = false;
  bool past_assertions_ = false;  // assertion_failed() lets forward() go on
  // Optional parameters (default None) given as inputs because forward() raised naming them
  // (Flux: "Didn't get guidance strength for guidance distilled model").
  std::vector<std::string> named_by_error_;
  // forward()'s int parameters that say where the tokens start (passed by name, see run()).
  std::vector<std::string> start_positions_;
  static bool int_position_param(const FunctionObj& forward, const std::string& name);
  // forward()'s packed-sequence lengths parameter (mistral-inference's `seqlens: List[int]` beside
  // token ids flattened over the batch), "" when none: given as a list, one length per sequence.
  std::string packed_lengths_;
  // forward()'s int parameters that say how long a sequence it makes (passed by name, see run()),
  // and the length given (0: the workload's tokens).
  std::vector<std::string> sequence_lengths_;
  int64_t sequence_length_ = 0;
  static bool sequence_length_param(const FunctionObj& forward, const std::string& name);
  int64_t longest_sequence() const;
  void trace_once(const std::shared_ptr<InstanceObj>& root, const TraceWorkload& workload);
  int id_of(const std::shared_ptr<TensorObj>& t);
  int new_version(const std::shared_ptr<TensorObj>& t);
  ir::Op& record(ir::OpKind kind, std::string name, const std::vector<Value>& inputs, const Value& result,
                 const ir::Span& site);
  std::shared_ptr<TensorObj> make(Interpreter& in, ir::Shape shape, const std::string& dtype,
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
                  const ir::Span& site, bool causal_requested = false);
  Value mha(Interpreter& in, InstanceObj& layer, CallArgs& args, const ir::Span& site);
  // nn.TransformerEncoderLayer / DecoderLayer / Encoder / Decoder: their submodules called as
  // PyTorch's forward calls them.
  Value transformer_layer(Interpreter& in, InstanceObj& layer, bool decoder, CallArgs& args, const ir::Span& site);
  Value transformer_stack(Interpreter& in, InstanceObj& layer, bool decoder, CallArgs& args, const ir::Span& site);
  Value same_shape(Interpreter& in, ir::OpKind kind, const std::string& name, const Value& x,
                   const std::vector<Value>& extra, const ir::Span& site);
  std::string infer_input(const Placeholder& p, std::vector<int64_t>& shape, std::string& dtype) const;
  std::string mask_told_by(const Placeholder& mask, const std::vector<Placeholder>& inputs,
                           const std::function<const std::vector<int64_t>*(const Placeholder&)>& shape_of_input,
                           std::vector<int64_t>& shape, std::string& dtype) const;
  std::shared_ptr<TensorObj> input_tensor(const std::string& name, const std::vector<int64_t>& shape, const std::string& dtype);
  std::string latent_by_unpacking(const Placeholder& p, std::vector<int64_t>& shape, std::string what) const;
  std::string first_use(const Placeholder& p, std::vector<int64_t>& shape, std::string& dtype, const ir::Op** at = nullptr) const;
  std::string input_told_by(const ir::Op& op, std::vector<char>& reached, std::vector<int64_t>& shape, std::string& dtype) const;
  // Position tables (learned or fixed position embeddings) of the model, found once per trace: the
  // module that owns each, and how many positions it has.
  struct PositionTable {
    std::string owner;  // module name ("" for the root)
    std::string name;   // the parameter, buffer or Embedding module
    int64_t positions = 0;
  };
  void find_position_tables();
  // The tables nearest to `module`: under its parent, else under the grandparent, ... up to the root.
  // `scope` gets the module they were found under. Empty when the model has none.
  std::vector<const PositionTable*> position_tables_near(const std::string& module, bool for_tokens, std::string& scope) const;
  // The image size the module or one of its ancestors was built for (its image_size / img_size,
  // or its config's), innermost first; the name of where it was read in `from`.
  std::optional<std::pair<int64_t, int64_t>> image_size_near(int module, std::string& from) const;
  // The number of axes a multi-axis rotary embedding rotates over (Flux's pos_embed.axes_dim = [16, 56, 56]).
  std::optional<int64_t> rotary_axes(std::string& from) const;
  std::vector<PositionTable> position_tables_;
  mutable int64_t max_tokens_seen_ = 0;  // Dataflow::max_tokens, as input_told_by finds it
  void probe_inputs();
  bool trace_with_guess(const std::shared_ptr<InstanceObj>& root, std::vector<Placeholder>& inputs);
  void run(const std::shared_ptr<InstanceObj>& root, std::vector<Placeholder>& inputs);

  Interpreter& interp_;
  ir::ModelIR& model_;
  TraceWorkload workload_;
  const FunctionObj* root_forward_ = nullptr;  // the traced root's forward() and the root, while trace_once runs
  InstanceObj* root_instance_ = nullptr;
  const std::vector<NamedModule>& walk_;  // module_index_ inverted: walk_[i].module
  const std::unordered_map<const InstanceObj*, int>& module_index_;
  const std::unordered_map<const TensorObj*, int>& parameter_index_;
  const std::unordered_map<const TensorObj*, int>& buffer_index_;
  std::unordered_map<const TensorObj*, int> version_;         // current value id of a tensor object
  std::vector<std::shared_ptr<TensorObj>> keep_alive_;        // so that object addresses stay unique
  std::vector<const TensorObj*> object_of_id_;               // per tensor id: the object it is a version of
  std::unordered_map<int, double> true_fraction_;             // bool masks: expected share of true
  std::unordered_map<int, int64_t> index_range_;              // index tensors: values lie in [0, n)
  std::vector<int> module_stack_;
  ir::Dataflow* flow_ = nullptr;
  int depth_ = 0;
  // Memo of module calls.
  bool replay_ = true;
  std::vector<CallFrame> frames_;
  std::vector<Read> reads_;
  uint64_t epoch_ = 0;  // advances whenever something that existed before the innermost call changes
  std::unordered_map<uint64_t, std::vector<std::shared_ptr<const MemoEntry>>> memo_;  // shared: the type is complete only in forward_trace_memo.cpp
  std::unordered_set<uint64_t> seen_once_;  // call keys run once, not kept yet
  size_t calls_replayed_ = 0;
  bool changed_prior_state_ = false;
  // Pass 1's watch on its inputs (probe_inputs): per input, the tensors computed from it so far.
  const std::vector<Placeholder>* probe_inputs_ = nullptr;
  std::vector<std::vector<char>> probe_reached_;
  std::vector<bool> probe_decided_;
  size_t probe_next_op_ = 0;
  std::vector<InputShape> guess_, found_;
  TraceSizes guess_sizes_;
  bool guess_held_ = false;
};

}  // namespace shardlens::python
