// Elementwise ops: every tensor aligned to the output from the right, so a shard of the output is
// the same shard of each input that has the dim; linear ones also pass partial sums through.
#include "plan/rules/rule.h"

namespace shardlens::plan::detail {
namespace {

// The input dim that lines up with output dim `out_dim` under broadcasting (-1: none, or broadcast).
int aligned_dim(const RuleBuilder& b, int t, int out_dim, int out_rank) {
  int r = b.rank(t);
  int d = out_dim - (out_rank - r);
  if (d < 0 || d >= r) return -1;
  if (b.shape(t)[d] == 1 && b.shape(b.op.outputs[0])[out_dim] != 1) return -1;
  return d;
}

// `allow_partial`: the op is linear in its inputs; `partial_needs_all`: in all of them together
// (add), not in each one alone (mul).
void elementwise(RuleBuilder& b, bool allow_partial, bool partial_needs_all) {
  const ir::Op& op = b.op;
  const double flops = b.elementwise_flops();
  const size_t nin = op.inputs.size();
  b.add(b.all_inputs(Spec::R()), b.all_outputs(Spec::R()), flops, false, "replicated");
  int orank = b.rank(op.outputs[0]);
  for (int d = 0; d < orank; ++d) {
    if (!b.divisible(op.outputs[0], d)) continue;
    std::vector<Spec> in;
    for (int t : op.inputs) {
      int a = aligned_dim(b, t, d, orank);
      in.push_back(a >= 0 ? Spec::S(a) : Spec::R());
    }
    b.add(in, b.all_outputs(Spec::S(d)), flops, true, "sharded");
  }
  // Segmented tensors pass through elementwise ops on their last dim; an input broadcast along it
  // is whole, one of lower rank that has it is segmented the same way (HF Conv1D's bias after a
  // fused q/k/v: x @ W + b).
  if (nin >= 1 && orank >= 1) {
    int d = orank - 1;
    for (int k : {2, 3}) {
      int64_t size = b.shape(op.outputs[0])[d];
      if (size % (k * b.n) != 0 || !b.divisible(op.outputs[0], d)) continue;
      std::vector<Spec> in;
      for (int t : op.inputs) {
        const int a = aligned_dim(b, t, d, orank);
        in.push_back(a >= 0 ? Spec::Seg(a, k) : Spec::R());
      }
      b.add(in, b.all_outputs(Spec::Seg(d, k)), flops, true, "segments");
    }
  }
  if (allow_partial) {
    if (partial_needs_all) {
      b.add(b.all_inputs(Spec::P()), b.all_outputs(Spec::P()), flops, false, "partial");
    } else {
      for (size_t i = 0; i < nin; ++i) {
        std::vector<Spec> in = b.all_inputs(Spec::R());
        in[i] = Spec::P();
        b.add(in, b.all_outputs(Spec::P()), flops, false, "partial");
      }
    }
  }
}

void unary(RuleBuilder& b) { elementwise(b, false, false); }
void scale(RuleBuilder& b) { elementwise(b, true, true); }
void add(RuleBuilder& b) { elementwise(b, true, true); }
void mul(RuleBuilder& b) { elementwise(b, true, false); }

// Spatial resampling: batch and channels pass through.
void interpolate(RuleBuilder& b) {
  const double flops = b.elementwise_flops();
  int x = b.op.inputs[0];
  b.add({Spec::R()}, {Spec::R()}, flops, false, "replicated");
  b.add({Spec::P()}, {Spec::P()}, flops, false, "partial");
  for (int d = 0; d < 2 && d < b.rank(x); ++d)
    if (b.divisible(x, d)) b.add({Spec::S(d)}, {Spec::S(d)}, flops, true, "sharded");
}

void create(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  const size_t nin = op.inputs.size(), nout = op.outputs.size();
  b.add(b.all_inputs(Spec::R()), b.all_outputs(Spec::R()), 0, false, "replicated");
  // empty_like(x) and its kin read only x's shape: each device makes its own block of a
  // tensor laid out as x is (diffusers' rotary fills one so), with no collective.
  if (nin >= 1 && nout == 1 && b.rank(op.inputs[0]) == b.rank(op.outputs[0])) {
    std::vector<Spec> in = b.all_inputs(Spec::R());
    in[0] = Spec::P();
    b.add(in, {Spec::R()}, 0, false, "replicated");
    for (int d = 0; d < b.rank(op.outputs[0]); ++d) {
      if (!b.divisible(op.outputs[0], d)) continue;
      in[0] = Spec::S(d);
      b.add(in, {Spec::S(d)}, 0, true, "sharded");
    }
  }
}

}  // namespace

void register_elementwise_rules(RuleTable& table) {
  table.add({{OpKind::Unary, {unary}}, {OpKind::Scale, {scale}}, {OpKind::Add, {add}}, {OpKind::Mul, {mul}},
             {OpKind::Interpolate, {interpolate}}, {OpKind::Create, {create}}});
}

}  // namespace shardlens::plan::detail
