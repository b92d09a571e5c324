// Scaled dot-product attention: split over heads (or batch) it needs no collective; split over the
// query sequence in prefill, keys and values are gathered.
#include "plan/rules/rule.h"

#include <algorithm>

namespace shardlens::plan::detail {
namespace {

void attention(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  int q = op.inputs[0], k = op.inputs[1], v = op.inputs[2];
  const auto& qs = flow.tensors[q].shape;
  int r = static_cast<int>(qs.size());
  double batch = 1;
  for (int d = 0; d < r - 2; ++d) batch *= static_cast<double>(qs[d]);
  double L = static_cast<double>(qs[r - 2]), E = static_cast<double>(qs[r - 1]);
  double S = static_cast<double>(flow.tensors[k].shape[r - 2]);
  // Decode: one query per sequence against the KV cache of the context.
  double kv_len = ctx.workload.phase == Phase::Decode ? static_cast<double>(ctx.workload.seq) : S;
  // Q·Kᵀ and P·V: two matmuls of L x S x E, 2 FLOPs per multiply-add.
  double flops = 4 * batch * L * kv_len * E * ctx.activation_scale;
  double kv_bytes = ctx.workload.phase == Phase::Decode
                        ? 2 * batch * kv_len * E * ctx.workload.dtype_bytes() * ctx.activation_scale
                        : 0;
  auto attention_strat = [&](std::vector<Spec> in, Spec o, bool split, std::string label) {
    Strat s;
    s.in = in;
    s.out = {o};
    s.flops = flops;
    s.split = split;
    s.label = label;
    double bytes = kv_bytes / (split ? n : 1);
    for (size_t i = 0; i < 3; ++i) {
      double input_bytes = tensor_bytes(prep, op.inputs[i], ctx);
      bytes += in[i].sharded() ? input_bytes / n : input_bytes;
    }
    s.compute_us = roofline_us(ctx, split ? flops / n : flops, bytes);
    if (ctx.sequence_rows > 1) {
      // The rows hold consecutive pieces of the sequence: each gathers the others' keys and
      // values (SHARDING.md §3, "self-attention over a sequence-sharded activation").
      s.rows_gathers = 2;
      for (size_t i = 1; i < 3; ++i)
        s.rows_gather_bytes = std::max(s.rows_gather_bytes, tensor_bytes(prep, op.inputs[i], ctx) / ctx.activation_scale / (in[i].sharded() ? n : 1));
    }
    b.add_timed(std::move(s));
  };
  attention_strat({Spec::R(), Spec::R(), Spec::R()}, Spec::R(), false, "replicated");
  for (int d = 0; d < r - 2; ++d)
    if (b.divisible(q, d) && b.divisible(k, d) && b.divisible(v, d))
      attention_strat({Spec::S(d), Spec::S(d), Spec::S(d)}, Spec::S(d), true,
                      prep.roles[q].size() > static_cast<size_t>(d) && prep.roles[q][d] == Role::Heads ? "heads" : "sharded");
  if (b.divisible(q, r - 2) && ctx.workload.phase == Phase::Prefill)
    attention_strat({Spec::S(r - 2), Spec::R(), Spec::R()}, Spec::S(r - 2), true, "sequence (K, V gathered)");
}

// Bytes of the KV cache an attention op keeps in decode: keys and values before any GQA repeat.
double kv_cache_bytes(const Prepared& prep, const ir::Op& op, const Context& ctx) {
  if (ctx.workload.phase != Phase::Decode) return 0;
  const auto& flow = prep.model->dataflow;
  double cache = 0;
  for (int i = 1; i <= 2 && i < static_cast<int>(op.inputs.size()); ++i) {
    int t = op.inputs[i];
    for (int hops = 0; hops < 4; ++hops) {
      int k = prep.producer[t];
      if (k < 0 || flow.ops[k].kind != OpKind::Repeat) break;
      t = flow.ops[k].inputs[0];
    }
    cache += tensor_bytes(prep, t, ctx) * static_cast<double>(ctx.workload.seq);
  }
  return cache;
}

}  // namespace

void register_attention_rules(RuleTable& table) { table.add({{OpKind::Attention, {attention, kv_cache_bytes}}}); }

}  // namespace shardlens::plan::detail
