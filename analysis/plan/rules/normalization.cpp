// Norms, softmax and reductions: split on a dim they reduce over, they exchange statistics.
#include "plan/rules/rule.h"

#include <algorithm>

namespace shardlens::plan::detail {
namespace {

void norm(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  const size_t nin = op.inputs.size();
  int x = op.inputs[0];
  int r = b.rank(x);
  double flops = kNormFlopsPerElement * b.numel(x);
  std::vector<Spec> base = b.all_inputs(Spec::R());
  b.add(base, {Spec::R()}, flops, false, "replicated");
  std::vector<int> dims = op.dims;
  for (int d = 0; d < r; ++d) {
    if (!b.divisible(x, d)) continue;
    bool normalized = std::find(dims.begin(), dims.end(), d) != dims.end();
    std::vector<Spec> in = base;
    in[0] = Spec::S(d);
    // Weights cover the normalized dims (last ones) or the channel dim (group / batch norm).
    for (size_t i = 1; i < nin; ++i) {
      int wr = b.rank(op.inputs[i]);
      int wd = -1;
      bool channel_weights = wr == 1 && (op.name.find("roup") != std::string::npos || op.name.find("atch") != std::string::npos ||
                                         op.name.find("nstance") != std::string::npos || op.name.find("group") != std::string::npos);
      if (channel_weights) wd = d == 1 ? 0 : -1;
      else wd = d - (r - wr);
      if (wd >= 0 && wd < wr && flow.tensors[op.inputs[i]].shape[wd] == flow.tensors[x].shape[d]) in[i] = Spec::S(wd);
    }
    int extra = 0;
    double extra_bytes = 0;
    if (normalized) {
      bool whole_groups = op.groups > 1 && d == 1 && op.groups % n == 0;
      if (!whole_groups) {
        // Statistics over the sharded dim: one small all-reduce of per-row (mean, var) in fp32.
        double rows = b.numel(x);
        for (int nd : dims) rows /= static_cast<double>(flow.tensors[x].shape[nd]);
        if (op.groups > 1) rows *= static_cast<double>(op.groups);
        extra = 1;
        extra_bytes = rows * kStatisticsBytesPerRow * ctx.activation_scale;
      }
    }
    Strat& s = b.add(in, {Spec::S(d)}, flops, true, normalized ? (extra ? "sharded (statistics all-reduce)" : "sharded (whole groups)") : "sharded", extra, extra_bytes);
    s.rows_split_norm = !normalized;
  }
}

void softmax(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  int x = op.inputs[0];
  int d0 = op.dims.empty() ? b.rank(x) - 1 : op.dims[0];
  b.add({Spec::R()}, {Spec::R()}, kNormFlopsPerElement * b.numel(x), false, "replicated");
  for (int d = 0; d < b.rank(x); ++d) {
    if (!b.divisible(x, d)) continue;
    if (d == d0) {
      double rows = b.numel(x) / static_cast<double>(flow.tensors[x].shape[d]);
      b.add({Spec::S(d)}, {Spec::S(d)}, kNormFlopsPerElement * b.numel(x), true, "sharded (statistics all-reduce)", 1,
          rows * kStatisticsBytesPerRow * ctx.activation_scale);
    } else {
      b.add({Spec::S(d)}, {Spec::S(d)}, kNormFlopsPerElement * b.numel(x), true, "sharded");
    }
  }
}

void reduce(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  int x = op.inputs[0];
  const auto& is = flow.tensors[x].shape;
  const auto& os = flow.tensors[op.outputs[0]].shape;
  bool keep = is.size() == os.size();
  b.add({Spec::R()}, {Spec::R()}, b.numel(x), false, "replicated");
  if (op.linear) b.add({Spec::P()}, {Spec::P()}, b.numel(x), false, "partial");
  for (int d = 0; d < static_cast<int>(is.size()); ++d) {
    if (!b.divisible(x, d)) continue;
    bool reduced = std::find(op.dims.begin(), op.dims.end(), d) != op.dims.end();
    if (reduced) {
      // Reducing over the sharded dim leaves partial results: sums add up (a partial sum the next
      // consumer resolves); max / min / norms need one small all-reduce of the result here.
      if (op.linear) b.add({Spec::S(d)}, {Spec::P()}, b.numel(x), true, "partial statistics");
      else b.add({Spec::S(d)}, {Spec::R()}, b.numel(x), true, "sharded (statistics all-reduce)", 1, tensor_bytes(prep, op.outputs[0], ctx));
    } else {
      int od = d;
      if (!keep)
        for (int rd : op.dims)
          if (rd < d) --od;
      b.add({Spec::S(d)}, {Spec::S(od)}, b.numel(x), true, "sharded");
    }
  }
}

}  // namespace

void register_normalization_rules(RuleTable& table) {
  table.add({{OpKind::Norm, {norm}}, {OpKind::Softmax, {softmax}}, {OpKind::Reduce, {reduce}}});
}

}  // namespace shardlens::plan::detail
