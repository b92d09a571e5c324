// Ops that move data without computing: a shard follows the dim it was on, when that dim survives.
#include "plan/rules/rule.h"

#include <algorithm>
#include <span>

namespace shardlens::plan::detail {
namespace {

// For a reshape: which output dim an input dim's sharding lands on (-1: it cannot stay sharded).
// Splits keep the shard on the first (outermost) sub-dim when it divides; merges keep it when the
// sharded dim is the outermost of the merged group.
int reshape_target(std::span<const int64_t> is, std::span<const int64_t> os, int d, int n, int segments,
                   int* out_segments) {
  *out_segments = 0;
  size_t i = 0, o = 0;
  while (i < is.size() || o < os.size()) {
    if (i < is.size() && o < os.size() && is[i] == os[o]) {
      if (static_cast<int>(i) == d) {
        if (segments) *out_segments = segments;
        return static_cast<int>(o);
      }
      ++i;
      ++o;
      continue;
    }
    if (i < is.size() && is[i] == 1) { if (static_cast<int>(i) == d) return -1; ++i; continue; }
    if (o < os.size() && os[o] == 1) { ++o; continue; }
    if (i >= is.size() || o >= os.size()) return -1;
    if (is[i] > os[o]) {
      size_t start = o;
      int64_t prod = 1;
      while (o < os.size() && prod < is[i]) prod *= os[o++];
      if (prod != is[i]) return -1;
      if (static_cast<int>(i) == d) {
        size_t target = start;
        if (segments) {
          // [.., k*m] as segments of m: a leading sub-dim of size k separates them; the shard
          // then lands on the next sub-dim.
          if (os[start] != segments || o - start < 2) return -1;
          target = start + 1;
        }
        while (target < o && os[target] == 1) ++target;
        return target < o && os[target] % n == 0 ? static_cast<int>(target) : -1;
      }
      ++i;
    } else {
      size_t start = i;
      int64_t prod = 1;
      while (i < is.size() && prod < os[o]) prod *= is[i++];
      if (prod != os[o]) return -1;
      size_t first = start;
      while (first < i && is[first] == 1) ++first;
      if (d >= static_cast<int>(start) && d < static_cast<int>(i)) {
        if (segments) return -1;
        return static_cast<int>(first) == d ? static_cast<int>(o) : -1;
      }
      ++o;
    }
  }
  return -1;
}

void reshape(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  int x = op.inputs[0];
  const auto& is = flow.tensors[x].shape;
  const auto& os = flow.tensors[op.outputs[0]].shape;
  b.add({Spec::R()}, {Spec::R()}, 0, false, "replicated");
  b.add({Spec::P()}, {Spec::P()}, 0, false, "partial");
  for (int d = 0; d < static_cast<int>(is.size()); ++d) {
    if (!b.divisible(x, d)) continue;
    int seg = 0;
    int t = reshape_target(is, os, d, n, 0, &seg);
    if (t >= 0 && os[t] % n == 0) b.add({Spec::S(d)}, {Spec::S(t)}, 0, true, "sharded");
    for (int k : {2, 3}) {
      if (is[d] % (k * n) != 0) continue;
      int ts = reshape_target(is, os, d, n, k, &seg);
      if (ts >= 0) b.add({Spec::Seg(d, k)}, {seg ? Spec::Seg(ts, k) : Spec::S(ts)}, 0, true, "segments");
    }
  }
}

void permute(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  int x = op.inputs[0];
  b.add({Spec::R()}, {Spec::R()}, 0, false, "replicated");
  b.add({Spec::P()}, {Spec::P()}, 0, false, "partial");
  for (int o = 0; o < static_cast<int>(op.dims.size()); ++o) {
    int d = op.dims[o];
    if (!b.divisible(x, d)) continue;
    b.add({Spec::S(d)}, {Spec::S(o)}, 0, true, "sharded");
    for (int k : {2, 3})
      if (flow.tensors[x].shape[d] % (k * n) == 0) b.add({Spec::Seg(d, k)}, {Spec::Seg(o, k)}, 0, true, "segments");
  }
}

void split(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  const size_t nout = op.outputs.size();
  int x = op.inputs[0];
  int sd = op.dims.empty() ? 0 : op.dims[0];
  bool unbind = op.linear;
  b.add({Spec::R()}, b.all_outputs(Spec::R()), 0, false, "replicated");
  b.add({Spec::P()}, b.all_outputs(Spec::P()), 0, false, "partial");
  for (int d = 0; d < b.rank(x); ++d) {
    if (d == sd || !b.divisible(x, d)) continue;
    int od = unbind && d > sd ? d - 1 : d;
    b.add({Spec::S(d)}, b.all_outputs(Spec::S(od)), 0, true, "sharded");
  }
  // Segments line up with the parts: each part stays sharded without moving data.
  int k = static_cast<int>(op.sizes.size());
  bool equal = k >= 2 && std::all_of(op.sizes.begin(), op.sizes.end(), [&](int64_t v) { return v == op.sizes[0]; });
  if (equal && !unbind && op.sizes[0] % n == 0 && static_cast<int>(nout) == k)
    b.add({Spec::Seg(sd, k)}, b.all_outputs(Spec::S(sd)), 0, true, "segments");
}

void concat(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  const size_t nin = op.inputs.size();
  int cd = op.dims.empty() ? 0 : op.dims[0];
  b.add(b.all_inputs(Spec::R()), {Spec::R()}, 0, false, "replicated");
  b.add(b.all_inputs(Spec::P()), {Spec::P()}, 0, false, "partial");
  int orank = b.rank(op.outputs[0]);
  bool stack = !op.sizes.empty();
  for (int d = 0; d < orank; ++d) {
    if (d == cd || !b.divisible(op.outputs[0], d)) continue;
    int id = stack && d > cd ? d - 1 : d;
    b.add(b.all_inputs(Spec::S(id)), {Spec::S(d)}, 0, true, "sharded");
  }
  // Concatenated equal parts, each sharded on the concat dim, are segments of the result.
  if (!stack && nin >= 2) {
    bool equal = true;
    for (int t : op.inputs) equal &= flow.tensors[t].shape == flow.tensors[op.inputs[0]].shape;
    if (equal && b.divisible(op.inputs[0], cd))
      b.add(b.all_inputs(Spec::S(cd)), {Spec::Seg(cd, static_cast<int>(nin))}, 0, true, "segments");
  }
}

void repeat(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  int x = op.inputs[0];
  b.add({Spec::R()}, {Spec::R()}, 0, false, "replicated");
  b.add({Spec::P()}, {Spec::P()}, 0, false, "partial");
  int r = b.rank(x), orank = b.rank(op.outputs[0]);
  for (int d = 0; d < r; ++d) {
    if (!b.divisible(x, d)) continue;
    int od = d + (orank - r);
    bool repeated = std::find(op.dims.begin(), op.dims.end(), od) != op.dims.end();
    // repeat_interleave keeps contiguous shards contiguous; expand / repeat tile them.
    if (repeated && op.name != "repeat_interleave") continue;
    b.add({Spec::S(d)}, {Spec::S(od)}, 0, true, repeated ? "sharded (groups kept together)" : "sharded");
  }
}

}  // namespace

void register_view_rules(RuleTable& table) {
  table.add({{OpKind::Reshape, {reshape}}, {OpKind::Permute, {permute}}, {OpKind::Split, {split}},
             {OpKind::Concat, {concat}}, {OpKind::Repeat, {repeat}}});
}

}  // namespace shardlens::plan::detail
