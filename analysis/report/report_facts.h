// What the report derives from a model and its plan before writing anything: module patterns,
// components and their instances, the collective budget per component, column→row pairs. Shared by
// the Markdown, the Mermaid diagrams, the SVG chart and the compiler-limit matcher.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/model_ir.h"
#include "ir/module_path.h"
#include "plan/plan.h"
#include "plan/plan_output.h"

namespace shardlens::report::detail {

using ir::module_pattern;  // "layers.3.attention.wq" -> "layers.*.attention.wq"
// The owning module of a parameter: "h.0.attn.qkv.weight" -> "h.0.attn.qkv".
std::string_view owner_of(std::string_view parameter);
// The dim roles of a collective's tensor: "[1, 1, 4096] (batch, seq, hidden)" -> {batch, seq, hidden}.
std::vector<std::string> tensor_roles(const std::string& tensor);
// A long text cut at a word boundary with "…".
std::string shorten(const std::string& text, size_t max_chars);
// "1x8 (t3k)".
std::string mesh_label(const plan::Mesh& mesh);
using plan::per_device_shape;  // plan/plan_output.h
using plan::shape_string;
// `("model", None)` or "not writable as a spec".
std::string spec_string(const plan::ParameterLayout& layout);

// Parameter name -> its layout on a mesh plan.
std::map<std::string_view, plan::ParameterLayout> layouts_by_name(const plan::MeshPlan& mesh);

// A top-level component as the report groups it: one module pattern ("h.*", "wte") and its module
// instances in forward order (several classes when a ModuleList mixes blocks).
struct ComponentGroup {
  std::string pattern;
  std::vector<int> instances;        // indices into ModelIR::modules, in forward order
  std::vector<std::string> classes;  // distinct classes, in order
};
// Components in forward order: the module calls of the root's forward, wrappers called once that
// call further modules (HF's `model`, an `encoder`) opened up to four levels, repeated blocks
// grouped by pattern. Without a traced forward, the plan's component rows (no instances).
std::vector<ComponentGroup> component_groups(const ir::ModelIR& model, const plan::MeshPlan& mesh);

// The component a collective belongs to: the longest group pattern that is `at` or a prefix of it
// at a '.' boundary; "(model output)" for the output gather when no component is called "output".
std::string component_of(const std::vector<ComponentGroup>& groups, const std::string& at);
inline constexpr std::string_view kModelOutput = "(model output)";

struct BudgetRow {
  std::string component;
  plan::Ccl kind = plan::Ccl::AllReduce;
  std::string axis;
  int count = 0;
  double bytes_each = 0;   // logical tensor bytes per occurrence
  double time_us = 0;      // all occurrences
  double total_bytes() const { return bytes_each * count; }
};
struct ComponentBudget {
  std::string component;
  int collectives = 0;
  double bytes = 0;
  double time_us = 0;
};
struct Budget {
  std::vector<BudgetRow> rows;                // per (component, kind, axis, size), forward order
  std::vector<ComponentBudget> components;    // only components with collectives, forward order
  int collectives = 0;                        // sums over rows
  double bytes = 0;
  double time_us = 0;
};
Budget ccl_budget(const std::vector<ComponentGroup>& groups, const plan::MeshPlan& mesh);

// Megatron column→row pairs as the plan has them: a column-parallel weight (column or
// column_segments) whose output reaches a row-parallel weight through ops that hold no other
// weight. Concrete module names; `columns` sorted in forward order.
struct LayoutPair {
  std::vector<std::string> columns;
  std::string row;
};
std::vector<LayoutPair> column_row_pairs(const ir::ModelIR& model, const plan::MeshPlan& mesh);
// The same pairs with repeated blocks folded ("h.*.attn.qkv -> h.*.attn.proj"), de-duplicated,
// numbered in forward order.
std::vector<LayoutPair> folded_pairs(const std::vector<LayoutPair>& pairs);

}  // namespace shardlens::report::detail
