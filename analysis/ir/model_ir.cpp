#include "ir/model_ir.h"

namespace shardlens::ir {

int64_t Parameter::numel() const { return saturating_numel(shape); }

BigInt Parameter::count() const {
  BigInt n(1);
  for (int64_t d : shape) n = n * BigInt(d);
  return n;
}

BigInt ModelIR::total_parameters() const {
  BigInt total;
  for (const auto& p : parameters) total = total + p.count();
  return total;
}

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::Contract: return "contract";
    case OpKind::Embedding: return "embedding";
    case OpKind::Norm: return "norm";
    case OpKind::Softmax: return "softmax";
    case OpKind::Attention: return "attention";
    case OpKind::Reshape: return "reshape";
    case OpKind::Permute: return "permute";
    case OpKind::Split: return "split";
    case OpKind::Concat: return "concat";
    case OpKind::Unary: return "elementwise";
    case OpKind::Scale: return "scale";
    case OpKind::Add: return "add";
    case OpKind::Mul: return "mul";
    case OpKind::Reduce: return "reduce";
    case OpKind::Gather: return "gather";
    case OpKind::Accumulate: return "accumulate";
    case OpKind::TopK: return "topk";
    case OpKind::Repeat: return "repeat";
    case OpKind::Create: return "create";
    case OpKind::Interpolate: return "interpolate";
    case OpKind::Call: return "call";
    case OpKind::Experts: return "experts";
    case OpKind::Unknown: return "unknown";
  }
  return "unknown";
}

}  // namespace shardlens::ir
