#include "plan/rules/rule.h"

#include <algorithm>

namespace shardlens::plan::detail {

double roofline_us(const Context& ctx, double flops, double bytes) {
  double t_compute = flops / (ctx.hw->flops_per_s * ctx.hw->compute_efficiency) * 1e6;
  double t_memory = bytes / (ctx.hw->dram_bytes_per_s * ctx.hw->dram_efficiency) * 1e6;
  return std::max(t_compute, t_memory);
}

bool divisible(const Prepared& prep, int t, int dim, const Context& ctx) {
  const auto& s = prep.model->dataflow.tensors[t].shape;
  if (dim < 0 || static_cast<size_t>(dim) >= s.size()) return false;
  if (static_cast<size_t>(dim) < prep.roles[t].size() && prep.roles[t][dim] == Role::Spatial) return false;
  return s[dim] % ctx.n == 0 && s[dim] >= ctx.n;
}

uint16_t tag_for(const Prepared& prep, const ir::Op& op, const std::vector<Spec>& in, const std::vector<Spec>& out) {
  const auto& flow = prep.model->dataflow;
  auto stream_features = [&](int t, Spec s) {
    if (!s.sharded() || !prep.residual_stream[static_cast<size_t>(t)]) return false;
    auto r = prep.roles[static_cast<size_t>(t)];
    return s.dim >= 0 && static_cast<size_t>(s.dim) < r.size() && stream_feature(r[s.dim]);
  };
  for (size_t i = 0; i < op.inputs.size() && i < in.size(); ++i)
    if (stream_features(op.inputs[i], in[i])) return kTagStreamFeatures;
  // A lookup in a table split on its hidden dim (Llama 2's embedding) is tensor parallel: what
  // reads its output decides whether the stream stays split.
  if (op.kind != OpKind::Embedding)
    for (size_t i = 0; i < op.outputs.size() && i < out.size(); ++i)
      if (stream_features(op.outputs[i], out[i])) return kTagStreamFeatures;
  bool any = false;
  for (size_t i = 0; i < op.inputs.size() && i < in.size(); ++i) {
    if (in[i].kind == kReplicated) continue;
    any = true;
    if (flow.tensors[op.inputs[i]].parameter >= 0 && in[i].sharded()) return kTagTensor;
  }
  for (size_t i = 0; i < op.outputs.size() && i < out.size(); ++i)
    if (out[i].kind != kReplicated) any = true;
  if (!any) return kTagReplicated;
  // Activation sharding: by the role of the sharded dim.
  auto role_of = [&](int t, Spec s) -> Role {
    if (!s.sharded()) return Role::Other;
    auto r = prep.roles[t];
    return s.dim >= 0 && static_cast<size_t>(s.dim) < r.size() ? r[s.dim] : Role::Other;
  };
  for (size_t i = 0; i < op.outputs.size() && i < out.size(); ++i) {
    Role r = role_of(op.outputs[i], out[i]);
    if (r == Role::Batch) return kTagBatch;
    if (r == Role::Seq || r == Role::Tokens) return kTagSequence;
  }
  for (size_t i = 0; i < op.inputs.size() && i < in.size(); ++i) {
    Role r = role_of(op.inputs[i], in[i]);
    if (r == Role::Batch) return kTagBatch;
    if (r == Role::Seq || r == Role::Tokens) return kTagSequence;
  }
  return kTagTensor;
}

namespace {

// Per-device time of an op under given specs: sharded tensors are 1/n per device, replicated and
// partial ones whole; the work divides when the strategy splits it.
double op_time(const Prepared& prep, const ir::Op& op, const std::vector<Spec>& in, const std::vector<Spec>& out,
               double flops, bool split, const Context& ctx) {
  double bytes = 0;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    // A lookup reads the rows it returns, not its whole table.
    if (op.kind == OpKind::Embedding && prep.model->dataflow.tensors[op.inputs[i]].parameter >= 0) continue;
    double b = tensor_bytes(prep, op.inputs[i], ctx);
    bytes += i < in.size() && in[i].sharded() ? b / ctx.n : b;
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    double b = tensor_bytes(prep, op.outputs[i], ctx);
    bytes += i < out.size() && out[i].sharded() ? b / ctx.n : b;
  }
  double f = flops * (prep.model->dataflow.tensors[op.outputs.empty() ? op.inputs[0] : op.outputs[0]].parameter >= 0 ? 1.0 : ctx.activation_scale);
  return roofline_us(ctx, split ? f / ctx.n : f, bytes);
}

const RuleTable& rule_table() {
  static const RuleTable table = [] {
    RuleTable t;
    register_contraction_rules(t);
    register_attention_rules(t);
    register_elementwise_rules(t);
    register_view_rules(t);
    register_normalization_rules(t);
    register_indexing_rules(t);
    return t;
  }();
  return table;
}

}  // namespace

RuleBuilder::RuleBuilder(const Prepared& prep, int op_index, const Context& ctx, std::vector<Strat>& out)
    : prep(prep), flow(prep.model->dataflow), op(flow.ops[op_index]), ctx(ctx), n(ctx.n), out_(out) {}

Strat& RuleBuilder::add(std::vector<Spec> in, std::vector<Spec> out, double flops, bool split, std::string label,
                        int extra_count, double extra_bytes) {
  Strat s;
  s.in = std::move(in);
  s.out = std::move(out);
  s.flops = flops;
  s.split = split;
  s.label = std::move(label);
  s.extra_count = extra_count;
  s.extra_bytes = extra_bytes;
  s.compute_us = op_time(prep, op, s.in, s.out, flops, split, ctx);
  s.tag = tag_for(prep, op, s.in, s.out);
  out_.push_back(std::move(s));
  return out_.back();
}

Strat& RuleBuilder::add_timed(Strat s) {
  s.tag = tag_for(prep, op, s.in, s.out);
  out_.push_back(std::move(s));
  return out_.back();
}

std::vector<Strat> strategies(const Prepared& prep, int index, const Context& ctx) {
  std::vector<Strat> out;
  RuleBuilder b(prep, index, ctx, out);
  const ir::Op& op = b.op;
  // What cannot be seen through stays whole.
  bool shapes_known = true;
  for (int t : op.outputs) shapes_known &= b.flow.tensors[t].shape_known;
  for (int t : op.inputs) shapes_known &= b.flow.tensors[t].shape_known;
  if (!shapes_known || op.kind == OpKind::Unknown) {
    b.add(b.all_inputs(Spec::R()), b.all_outputs(Spec::R()), b.elementwise_flops(), false, "replicated (not analysable)");
    return out;
  }
  if (StrategyRule rule = rule_table()[op.kind].strategies) rule(b);
  else b.add(b.all_inputs(Spec::R()), b.all_outputs(Spec::R()), b.elementwise_flops(), false, "replicated");
  return out;
}

double op_state_bytes(const Prepared& prep, const ir::Op& op, const Context& ctx) {
  StateBytesRule rule = rule_table()[op.kind].state_bytes;
  return rule ? rule(prep, op, ctx) : 0;
}

}  // namespace shardlens::plan::detail
