// Lookups and routing: embeddings, gathers by index, scatter-adds, top-k.
#include "plan/rules/rule.h"

#include <algorithm>

namespace shardlens::plan::detail {
namespace {

void embedding(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  int ids = op.inputs[0];
  int orank = b.rank(op.outputs[0]);
  b.add({Spec::R(), Spec::R()}, {Spec::R()}, 0, false, "replicated");
  if (b.divisible(op.inputs[1], 0)) b.add({Spec::R(), Spec::S(0)}, {Spec::P()}, 0, true, "vocab");
  if (b.divisible(op.inputs[1], 1)) b.add({Spec::R(), Spec::S(1)}, {Spec::S(orank - 1)}, 0, true, "hidden");
  for (int d = 0; d < b.rank(ids); ++d)
    if (b.divisible(ids, d)) b.add({Spec::S(d), Spec::R()}, {Spec::S(d)}, 0, true, "sharded");
}

void gather(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  int x = op.inputs[0];
  int gd = op.dims.empty() ? 0 : op.dims[0];
  b.add(b.all_inputs(Spec::R()), b.all_outputs(Spec::R()), 0, false, "replicated");
  std::vector<Spec> pin = b.all_inputs(Spec::R());
  pin[0] = Spec::P();
  b.add(pin, b.all_outputs(Spec::P()), 0, false, "partial");
  int xr = b.rank(x), orank = b.rank(op.outputs[0]);
  // Dims before the gathered one that a whole-dim slice passes through (op.sizes: their place in the
  // output): each device gathers from its own slice of them.
  if (static_cast<int>(op.sizes.size()) == gd)
    for (int d = 0; d < gd; ++d) {
      if (op.sizes[d] < 0 || !b.divisible(x, d)) continue;
      std::vector<Spec> in = b.all_inputs(Spec::R());
      in[0] = Spec::S(d);
      b.add(in, {Spec::S(static_cast<int>(op.sizes[d]))}, 0, true, "sharded");
    }
  for (int d = gd + 1; d < xr; ++d) {
    if (!b.divisible(x, d)) continue;
    std::vector<Spec> in = b.all_inputs(Spec::R());
    in[0] = Spec::S(d);
    b.add(in, {Spec::S(orank - (xr - d))}, 0, true, "sharded");
  }
}

void accumulate(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  const size_t nin = op.inputs.size();
  const double elem_flops = b.elementwise_flops();
  int x = op.inputs[0];
  b.add(b.all_inputs(Spec::R()), b.all_outputs(Spec::R()), elem_flops, false, "replicated");
  if (op.linear) {
    std::vector<Spec> in = b.all_inputs(Spec::R());
    in[0] = Spec::P();
    if (nin > 1) in.back() = Spec::P();
    b.add(in, b.all_outputs(Spec::P()), elem_flops, false, "partial");
  }
  int xr = b.rank(x);
  for (int d = 1; d < xr; ++d) {
    if (!b.divisible(x, d)) continue;
    std::vector<Spec> in = b.all_inputs(Spec::R());
    in[0] = Spec::S(d);
    if (nin > 1 && b.rank(op.inputs.back()) >= xr - d) in.back() = Spec::S(b.rank(op.inputs.back()) - (xr - d));
    b.add(in, b.all_outputs(Spec::S(d)), elem_flops, true, "sharded");
  }
}

void top_k(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  int x = op.inputs[0];
  int kd = op.dims.empty() ? b.rank(x) - 1 : op.dims[0];
  b.add({Spec::R()}, b.all_outputs(Spec::R()), b.numel(x), false, "replicated");
  for (int d = 0; d < b.rank(x); ++d)
    if (d != kd && b.divisible(x, d)) b.add({Spec::S(d)}, b.all_outputs(Spec::S(d)), b.numel(x), true, "sharded");
}

}  // namespace

void register_indexing_rules(RuleTable& table) {
  table.add({{OpKind::Embedding, {embedding}}, {OpKind::Gather, {gather}},
             {OpKind::Accumulate, {accumulate}}, {OpKind::TopK, {top_k}}});
}

}  // namespace shardlens::plan::detail
