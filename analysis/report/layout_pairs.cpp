// Megatron column→row pairs read off the traced forward and the plan's layouts: from the output of
// every column-parallel weight, follow the dataflow through ops that hold no other weight (norm
// scales and biases are not "other weights") to the first weighted contraction; a row-parallel one
// closes a pair (Megatron-LM §3: the activation between stays sharded, 1 all-reduce after the row).
#include <algorithm>
#include <map>
#include <set>

#include "report/report_facts.h"

namespace shardlens::report::detail {
namespace {

// The weight of a contraction or embedding: its first input that is a parameter of rank >= 2.
int weight_of(const ir::ModelIR& model, const ir::Op& op) {
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    int t = op.inputs[k];
    if (t < 0 || t >= static_cast<int>(model.dataflow.tensors.size())) continue;
    const auto& info = model.dataflow.tensors[t];
    if (info.parameter >= 0 && info.shape.size() >= 2) return info.parameter;
  }
  return -1;
}

}  // namespace

std::vector<LayoutPair> column_row_pairs(const ir::ModelIR& model, const plan::MeshPlan& mesh) {
  const auto& flow = model.dataflow;
  std::vector<LayoutPair> pairs;
  if (flow.ops.empty()) return pairs;
  auto layouts = layouts_by_name(mesh);
  auto layout_of = [&](int param) -> std::string_view {
    if (param < 0 || param >= static_cast<int>(model.parameters.size())) return {};
    auto it = layouts.find(model.parameters[param].name);
    return it == layouts.end() ? std::string_view() : it->second.layout;
  };
  // Consumers of every tensor (module calls are boundaries, not consumers: their bodies read the
  // same tensor ids).
  std::vector<std::vector<int>> consumers(flow.tensors.size());
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    const auto& op = flow.ops[i];
    if (op.kind == ir::OpKind::Call) continue;
    for (int t : op.inputs)
      if (t >= 0 && t < static_cast<int>(consumers.size())) consumers[t].push_back(static_cast<int>(i));
  }
  std::map<std::string, std::vector<std::string>> columns_of_row;  // row module -> column modules
  std::map<std::string, size_t> first_seen;                         // module -> op index (forward order)
  std::vector<std::string> row_order;
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    const auto& op = flow.ops[i];
    if (op.kind != ir::OpKind::Contract) continue;
    int w = weight_of(model, op);
    std::string_view l = layout_of(w);
    if (l != "column" && l != "column_segments") continue;
    std::string column(owner_of(model.parameters[w].name));
    first_seen.emplace(column, i);
    // Breadth-first through weightless ops.
    std::vector<int> queue(op.outputs.begin(), op.outputs.end());
    std::set<int> seen_tensors(queue.begin(), queue.end());
    std::set<int> seen_ops;
    for (size_t q = 0; q < queue.size() && seen_ops.size() < 4096; ++q) {
      int t = queue[q];
      if (t < 0 || t >= static_cast<int>(consumers.size())) continue;
      for (int c : consumers[t]) {
        if (!seen_ops.insert(c).second) continue;
        const auto& next = flow.ops[c];
        if (next.kind == ir::OpKind::Embedding || next.kind == ir::OpKind::Experts || next.kind == ir::OpKind::Unknown) continue;
        if (next.kind == ir::OpKind::Contract) {
          int w2 = weight_of(model, next);
          if (w2 >= 0) {
            if (layout_of(w2) == "row") {
              std::string row(owner_of(model.parameters[w2].name));
              auto& cols = columns_of_row[row];
              if (cols.empty()) row_order.push_back(row);
              if (std::find(cols.begin(), cols.end(), column) == cols.end()) cols.push_back(column);
              first_seen.emplace(row, c);
            }
            continue;  // another weight: the chain ends here either way
          }
        }
        for (int o : next.outputs)
          if (seen_tensors.insert(o).second) queue.push_back(o);
      }
    }
  }
  for (auto& row : row_order) {
    LayoutPair p;
    p.row = row;
    p.columns = columns_of_row[row];
    std::stable_sort(p.columns.begin(), p.columns.end(), [&](const std::string& a, const std::string& b) { return first_seen[a] < first_seen[b]; });
    pairs.push_back(std::move(p));
  }
  std::stable_sort(pairs.begin(), pairs.end(), [&](const LayoutPair& a, const LayoutPair& b) {
    return first_seen[a.columns.front()] < first_seen[b.columns.front()];
  });
  return pairs;
}

}  // namespace shardlens::report::detail
