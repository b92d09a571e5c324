// The forward dataflow of a model: the ops its forward() runs on tensors, in execution order,
// with module-call boundaries, as the static front end traced them for one workload.
// Read by the planner; every op keeps the source span that produced it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/small_vector.h"
#include "ir/span.h"

namespace shardlens::ir {

enum class OpKind : uint8_t {
  Contract,   // einsum-like: linear, matmul, bmm, einsum, conv (channels), see `equation`
  Embedding,  // ids -> rows of a [vocab, hidden] table
  Norm,       // layer / RMS / group / batch norm: statistics over `dims`
  Softmax,    // over dims[0]
  Attention,  // scaled dot-product attention core: q, k, v [..., L, E] (heads are batch-like)
  Reshape,    // view / reshape / flatten / unflatten
  Permute,    // transpose / permute: dims = the output's source dim per position
  Split,      // split / chunk / unbind / slicing along dims[0]: sizes = part sizes
  Concat,     // cat along dims[0]; stack (sizes = {1}) makes dims[0] a new dim
  Unary,      // elementwise, nonlinear (activation, exp, pow, ...)
  Scale,      // elementwise, linear in its tensor input (dropout at inference, cast, * const, neg)
  Add,        // elementwise add / sub (broadcasting)
  Mul,        // elementwise mul / div (broadcasting)
  Reduce,     // over dims; linear (sum / mean) or not (max, ...)
  Gather,     // index rows along dims[0] with data-dependent indices (routing)
  Accumulate, // out[idx] += v / index_add_: outputs[0] is the new version of inputs[0]
  TopK,       // routing: top-k / argmax along dims[0]
  Repeat,     // repeat_interleave / expand along dims[0] by sizes[0]
  Create,     // a fresh tensor (zeros, arange, ...) or one whose values are data-dependent indices
  Interpolate,// spatial resampling (upsample): channels and batch pass through
  Call,       // a user module's forward: its body is ops (this, end)
  // Routed experts: inputs [tokens, router weights]; sizes = {experts, top_k, tokens, tokens per
  // expert}; dims[0] = the tensor id of the routed tokens inside the body, which is one expert's
  // forward (this, end); `module` is the expert list.
  Experts,
  Unknown,    // something the front end cannot see through: the planner is conservative here
};

const char* op_kind_name(OpKind k);

using Shape = SmallVector<int64_t, 4>;  // most tensors have at most 4 dims

// Elements of a shape, saturating at INT64_MAX instead of wrapping (BigInt counts exactly).
template <class Dims> int64_t saturating_numel(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  return n;
}

struct TensorInfo {
  Shape shape;
  bool shape_known = false;
  std::string dtype = "float32";
  int parameter = -1;  // index into ModelIR::parameters
  int buffer = -1;     // index into ModelIR::buffers
  bool data_dependent = false;  // a dim's size depends on values (routed tokens): shape is an estimate
  int64_t numel() const { return saturating_numel(shape); }
};

struct Op {
  OpKind kind = OpKind::Unknown;
  std::string name;         // what the script called: "Linear", "F.linear", "view", "+", ...
  SmallVector<int, 4> inputs;  // tensor ids (parameters and buffers included)
  SmallVector<int, 2> outputs;
  // Contract: "bsi,oi->bso"-style letters, one per input and output dim; uppercase letters are
  // spatial dims that must not be sharded (conv halo exchange is not lowerable, tt-mlir #8216).
  std::string equation;
  SmallVector<int, 2> dims;
  SmallVector<int64_t, 2> sizes;
  int64_t groups = 1;       // Norm: GroupNorm groups; Contract (conv): feature groups
  bool linear = false;      // Reduce: sum/mean (partial sums may pass through)
  // Attention: causal (is_causal requested, the calling attention module says so, or keys from a
  // cache longer than the one query token): what a decoder LM's attention is.
  bool causal = false;
  int module = -1;          // index into ModelIR::modules: whose forward ran it (Call: the callee)
  int end = -1;             // Call: one past the last op of its body
  Span span;
  std::string detail;       // Unknown: why

  // A contraction over spatial dims (uppercase letters in `equation`): a convolution.
  bool is_convolution() const {
    if (kind != OpKind::Contract) return false;
    for (char c : equation)
      if (c >= 'A' && c <= 'Z') return true;
    return false;
  }
};

struct Dataflow {
  bool traced = false;
  std::string error;               // why tracing failed (then `ops` holds what was seen)
  std::vector<TensorInfo> tensors;
  std::vector<Op> ops;
  std::vector<int> inputs;         // the root forward's tensor arguments
  std::vector<int> outputs;
  std::vector<std::string> input_descriptions;  // "idx: [1, 1] int64 (token ids, from its use by wte)"
  // The longest token sequence the model's position tables allow its token inputs (a power of two
  // no larger than their positions); 0 when no table bounds them. The planner's sequence length
  // follows it when the user did not choose one.
  int64_t max_tokens = 0;
  std::vector<std::string> notes;
  // Assertions that failed while forward() ran and that tracing went past, as `python -O` runs
  // (a serving limit the loader left at 0 must not cost the whole trace): each becomes a warning.
  std::vector<Span> failed_assertions;
};

}  // namespace shardlens::ir
