// Mermaid flowcharts of a block's layout: one node per weighted layer (and attention core, routed
// experts) of one traced instance, coloured by layout, edges along the dataflow, column→row pair
// edges drawn thick, each node with the collectives the plan places at it.
#pragma once

#include <string>
#include <vector>

#include "report/report_facts.h"
#include "ir/model_ir.h"
#include "plan/plan.h"

namespace shardlens::report::detail {

struct BlockDiagram {
  std::string title;    // "h.* — Block (24 instances)"
  std::string mermaid;  // the flowchart source, without the ``` fence
  int nodes = 0;        // weighted layers / cores drawn
  bool truncated = false;
  std::string note;     // said under the diagram (instances that differ from the one drawn)
};

// Diagrams for the blocks worth drawing on `mesh`: per component group, one per distinct class of
// its instances whose forward holds at least two weighted layers; at most `max_diagrams`, repeated
// and sharded blocks first. When no block qualifies, one diagram of the whole model's forward.
std::vector<BlockDiagram> block_diagrams(const ir::ModelIR& model, const plan::MeshPlan& mesh, const std::vector<ComponentGroup>& groups,
                                         const std::vector<LayoutPair>& pairs, size_t max_diagrams = 4);

}  // namespace shardlens::report::detail
