// Contractions (linear, matmul, bmm, einsum, conv over channels): any letter of the equation can be
// split; where the op's weight holds it, that is Megatron's column (kept in the output) or row
// (contracted: partial sums) split.
#include "plan/rules/rule.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace shardlens::plan::detail {
namespace {

void contract(RuleBuilder& b) {
  auto [prep, flow, op, ctx, n] = b.facts();
  const size_t nin = op.inputs.size();
  const size_t nout = op.outputs.size();
  std::string outl;
  auto ins = split_equation(op.equation, outl);
  // Letter sizes, and whether the op has a bias-like input (letters only from the output).
  std::map<char, int64_t> size;
  for (size_t i = 0; i < ins.size() && i < nin; ++i)
    for (size_t k = 0; k < ins[i].size() && k < flow.tensors[op.inputs[i]].shape.size(); ++k)
      size[ins[i][k]] = std::max(size[ins[i][k]], flow.tensors[op.inputs[i]].shape[k]);
  for (size_t k = 0; k < outl.size() && nout; ++k) size[outl[k]] = std::max(size[outl[k]], flow.tensors[op.outputs[0]].shape[k]);
  double flops = 2;  // a multiply and an add per point of the contraction's index space
  for (auto& [c, s] : size)
    if (c != '1') flops *= static_cast<double>(s);
  std::set<char> activation_letters;
  int activations = 0;
  bool has_bias = false;
  for (size_t i = 0; i < nin; ++i) {
    if (flow.tensors[op.inputs[i]].parameter < 0) {
      ++activations;
      for (char c : ins[i]) activation_letters.insert(c);
    }
    if (i >= 2 && flow.tensors[op.inputs[i]].parameter >= 0) has_bias = true;
  }
  b.add(b.all_inputs(Spec::R()), b.all_outputs(Spec::R()), flops, false, "replicated");
  for (auto& [c, s] : size) {
    if (c == '1' || std::isupper(static_cast<unsigned char>(c))) continue;
    if (s % n != 0 || s < n) continue;
    std::vector<Spec> in;
    bool any_param = false;
    for (size_t i = 0; i < nin; ++i) {
      auto pos = i < ins.size() ? ins[i].find(c) : std::string::npos;
      in.push_back(pos == std::string::npos ? Spec::R() : Spec::S(static_cast<int>(pos)));
      if (pos != std::string::npos && flow.tensors[op.inputs[i]].parameter >= 0) any_param = true;
    }
    auto opos = outl.find(c);
    Spec o = opos == std::string::npos ? Spec::P() : Spec::S(static_cast<int>(opos));
    std::string label;
    bool in_act = activation_letters.count(c) > 0;
    if (!any_param) label = opos == std::string::npos ? "contracted" : "sharded";
    else if (opos == std::string::npos) label = "row";
    else if (!in_act) label = "column";
    else label = "expert";
    b.add(in, {o}, flops, true, label);
    // Per-segment column split: the output is later split into k equal segments (fused QKV).
    if (label == "column" && opos != std::string::npos && nout && opos + 1 == outl.size()) {
      int d = static_cast<int>(opos);
      const std::vector<int>& ks = prep.segments[op.outputs[0]];
      for (int k : ks) {
        if (s % (static_cast<int64_t>(k) * n) != 0) continue;
        std::vector<Spec> sin = in;
        for (size_t i = 0; i < nin; ++i)
          if (sin[i].kind == kSharded) sin[i] = Spec::Seg(sin[i].dim, k);
        b.add(sin, {Spec::Seg(d, k)}, flops, true, "column_segments");
      }
    }
  }
  if (activations == 1 && !has_bias) {
    std::vector<Spec> in = b.all_inputs(Spec::R());
    for (size_t i = 0; i < nin; ++i)
      if (flow.tensors[op.inputs[i]].parameter < 0) in[i] = Spec::P();
    b.add(in, {Spec::P()}, flops, false, "partial");
  }
}

}  // namespace

void register_contraction_rules(RuleTable& table) { table.add({{OpKind::Contract, {contract}}}); }

}  // namespace shardlens::plan::detail
