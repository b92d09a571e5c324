// Op rules, one file per op family and registered by op kind, as PyTorch DTensor's _ops/ do: for
// one op on one mesh axis, the input specs it accepts, the output specs it yields and what running
// it so costs. The search (search.cpp) reaches them through strategies() and op_state_bytes() and
// knows no leaf op (only the module calls and expert blocks it walks). Megatron column/row pairs,
// head-sharded attention, vocab-parallel embeddings, sequence and data parallelism are not written
// down anywhere here: they are what the search finds among these rules.
#pragma once

#include <array>
#include <initializer_list>
#include <utility>
#include <span>
#include <string>
#include <vector>

#include "plan/search.h"

namespace shardlens::plan::detail {

using ir::OpKind;

// Norms and softmax: max / mean, variance (or sum of exps), normalise, scale, shift: about five
// elementwise operations per element; memory traffic dominates them anyway.
constexpr double kNormFlopsPerElement = 5;
// Statistics exchanged per normalised row when its dim is sharded: a mean and a variance (or a
// max and a sum) in fp32, as tt-xla's sharded norms reduce them (tt-xla skill video_vae.md).
constexpr double kStatisticsBytesPerRow = 2 * 4;

double roofline_us(const Context& ctx, double flops, double bytes);
// Whether a dim can be sharded evenly. Spatial dims of image activations never are: convs would
// need halo exchanges, which tt-mlir cannot lower (tt-mlir #8216; SHARDING.md §6).
bool divisible(const Prepared& prep, int tensor, int dim, const Context& ctx);
// Which kind of parallelism a strategy is (tensor, sequence, batch, ...), for the strategy filters.
uint16_t tag_for(const Prepared& prep, const ir::Op& op, const std::vector<Spec>& in, const std::vector<Spec>& out);

// What a rule writes its strategies into, with the op's facts at hand.
class RuleBuilder {
 public:
  RuleBuilder(const Prepared& prep, int op_index, const Context& ctx, std::vector<Strat>& out);

  // A strategy timed by the roofline of what it reads and writes per device: sharded tensors are
  // 1/n per device, replicated and partial ones whole; the work divides when `split`.
  Strat& add(std::vector<Spec> in, std::vector<Spec> out, double flops, bool split, std::string label,
             int extra_count = 0, double extra_bytes = 0);
  // A strategy the rule timed itself.
  Strat& add_timed(Strat s);

  std::vector<Spec> all_inputs(Spec s) const { return std::vector<Spec>(op.inputs.size(), s); }
  std::vector<Spec> all_outputs(Spec s) const { return std::vector<Spec>(op.outputs.size(), s); }
  int rank(int tensor) const { return static_cast<int>(flow.tensors[tensor].shape.size()); }
  double numel(int tensor) const { return static_cast<double>(flow.tensors[tensor].numel()); }
  const ir::Shape& shape(int tensor) const { return flow.tensors[tensor].shape; }
  bool is_parameter(int tensor) const { return flow.tensors[tensor].parameter >= 0; }
  bool divisible(int tensor, int dim) const { return detail::divisible(prep, tensor, dim, ctx); }
  // What a rule reads, bound in one line: `auto [prep, flow, op, ctx, n] = b.facts();`.
  struct Facts {
    const Prepared& prep;
    const ir::Dataflow& flow;
    const ir::Op& op;
    const Context& ctx;
    int n;
  };
  Facts facts() const { return {prep, flow, op, ctx, n}; }
  // One elementwise operation per output element.
  double elementwise_flops() const { return op.outputs.empty() ? 0 : numel(op.outputs[0]); }

  const Prepared& prep;
  const ir::Dataflow& flow;
  const ir::Op& op;
  const Context& ctx;
  const int n;  // devices on the axis

 private:
  std::vector<Strat>& out_;
};

using StrategyRule = void (*)(RuleBuilder&);
// Bytes an op keeps per forward beyond its tensors (attention's KV cache in decode), whole.
using StateBytesRule = double (*)(const Prepared&, const ir::Op&, const Context&);

struct OpRule {
  StrategyRule strategies = nullptr;
  StateBytesRule state_bytes = nullptr;
};

class RuleTable {
 public:
  void add(std::initializer_list<std::pair<OpKind, OpRule>> rules) {
    for (auto& [kind, rule] : rules) rules_[static_cast<size_t>(kind)] = rule;
  }
  const OpRule& operator[](OpKind kind) const { return rules_[static_cast<size_t>(kind)]; }

 private:
  std::array<OpRule, static_cast<size_t>(OpKind::Unknown) + 1> rules_{};
};

// Each op family's file registers its rules.
void register_contraction_rules(RuleTable& table);   // Contract
void register_attention_rules(RuleTable& table);     // Attention
void register_elementwise_rules(RuleTable& table);   // Unary, Scale, Add, Mul, Interpolate, Create
void register_view_rules(RuleTable& table);          // Reshape, Permute, Split, Concat, Repeat
void register_normalization_rules(RuleTable& table); // Norm, Softmax, Reduce
void register_indexing_rules(RuleTable& table);      // Embedding, Gather, Accumulate, TopK

}  // namespace shardlens::plan::detail
