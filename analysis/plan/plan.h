// The sharding planner: from the model IR (modules, parameters, traced forward dataflow) and the
// target meshes to a layout per parameter, the collectives it costs, and the reasons.
#pragma once

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/model_ir.h"
#include "plan/ccl_cost.h"
#include "plan/target.h"

namespace shardlens::plan {

enum class StrategyMode : uint8_t { Auto, Tensor };

// Where a planner diagnostic about a value (heads, vocabulary, ...) should point: the config field
// or constant that sets it. Given the role ("n_kv_heads"-like keywords) and the value, returns the
// span of its definition, or `fallback`.
using ValueLocator = std::function<ir::Span(const std::vector<std::string>& keywords, int64_t value, ir::Span fallback)>;

struct PlanOptions {
  std::vector<Mesh> meshes;
  Workload workload;
  const Hardware* hardware = nullptr;  // null: wormhole
  StrategyMode strategy = StrategyMode::Auto;
  ValueLocator locate;
  // Fixed layouts to evaluate instead of search (tests, user annotations): parameter name ->
  // layout ("replicated", "column", "row", "vocab", "hidden", ...); module path -> the layout its
  // output must leave in ("replicated", "sequence"), as DTensor's parallelize_module styles do.
  std::map<std::string, std::string> pinned_parameters;
  std::map<std::string, std::string> pinned_outputs;
  bool evaluate_pins_only = false;  // true: every parameter not pinned stays replicated
  // Per mesh (in `meshes`' order), parameter layouts fixed on that mesh only, in pinned_parameters'
  // form plus "segments:DIM:K": a decoder's prefill takes its decode plan's weight layouts there.
  std::vector<std::map<std::string, std::string>> pinned_parameters_per_mesh;
  // Per mesh, the rows' mode the plan must use ("" or absent: the search chooses): a decoder's
  // prefill keeps its decode plan's, when that mode decides where the weights live (experts spread
  // over the rows, a split over both axes).
  std::vector<std::string> rows_mode_per_mesh;
  bool alternatives = true;
  // true: each mesh is planned on its own, as a pipeline's candidate shapes are compared (no
  // preference for the first mesh's layouts, no note on whether one layout holds on every mesh).
  bool meshes_independent = false;
  // false: plan on the calling thread only. A second thread prepares large models and lists the
  // chosen plans of a multi-mesh request while the search goes on; the results are the same.
  bool second_thread = true;
};

// Names point into the planned ModelIR (valid while it lives); layout and why are static text.
struct ParameterLayout {
  std::string_view name;
  std::string_view layout;  // replicated | column | row | column_segments | vocab | hidden | expert | sequence | batch
  bool writable = true;   // false: the layout cannot be written as a spec on the parameter as it is
  int rank = 0;
  int sharded_dim = -1;   // the dim split over `axes` (-1: none); also set for column_segments (not writable)
  const std::vector<std::string>* axes = nullptr;  // ("model") or ("batch", "model"); owned by the planner
  ir::Span span;
  std::string_view why;   // static text
  int segments = 0;       // column_segments: how many concatenated segments dim `sharded_dim` holds
  int expert = -1;        // expert parallel: this parameter's expert, of `experts` in its list
  int experts = 0;
  // The xs.mark_sharding partition spec: one entry per dim, each a list of mesh axis names (empty =
  // not sharded); nullopt when not writable.
  std::optional<std::vector<std::vector<std::string>>> spec() const {
    if (!writable) return std::nullopt;
    std::vector<std::vector<std::string>> s(static_cast<size_t>(rank));
    if (sharded_dim >= 0 && sharded_dim < rank && axes) s[sharded_dim] = *axes;
    return s;
  }
};

// Which parameters share a layout decision: made once per model and shared by every mesh's
// layouts. A MoE's ~45k parameters fall into a few hundred slots (every expert's k-th parameter
// takes its list's first expert's), so a mesh plan stores a decision per slot, not per parameter.
struct ParameterSlots {
  std::vector<int> slot_of;    // per parameter: its slot
  std::vector<int> expert_of;  // per parameter: its expert's position in its expert list, or -1
};

// A mesh plan's parameter layouts, one per model parameter in named_parameters() order: a decision
// per slot, and a record made when read. Records read here are values: keep an index, not a pointer.
class ParameterLayouts {
 public:
  // What a parameter's layout says beyond its own name, span, rank and expert.
  struct Decision {
    std::string_view layout, why;
    bool writable = true;
    int sharded_dim = -1;
    int segments = 0;
    int experts = 0;  // expert parallel: how many experts the parameter's list holds (0: not expert parallel)
    const std::vector<std::string>* axes = nullptr;
  };
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = ParameterLayout;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = ParameterLayout;
    iterator(const ParameterLayouts* of, size_t at) : of_(of), at_(at) {}
    ParameterLayout operator*() const { return (*of_)[at_]; }
    iterator& operator++() {
      ++at_;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++at_;
      return before;
    }
    bool operator==(const iterator& o) const { return at_ == o.at_; }
    bool operator!=(const iterator& o) const { return at_ != o.at_; }

   private:
    const ParameterLayouts* of_;
    size_t at_;
  };

  size_t size() const { return records_.empty() && slots_ ? slots_->slot_of.size() : records_.size(); }
  bool empty() const { return size() == 0; }
  ParameterLayout operator[](size_t i) const {
    if (!records_.empty()) return records_[i];
    const Decision& d = decision_of(i);
    const ir::Parameter& p = (*parameters_)[i];
    ParameterLayout l;
    l.name = p.name;
    l.layout = d.layout;
    l.writable = d.writable;
    l.rank = static_cast<int>(p.shape.size());
    l.sharded_dim = d.sharded_dim;
    l.axes = d.axes;
    l.span = p.span;
    l.why = d.why;
    l.segments = d.segments;
    l.expert = d.experts > 0 ? slots_->expert_of[i] : -1;
    l.experts = d.experts;
    return l;
  }
  // Without making the record (comparing the layouts of two meshes).
  std::string_view layout(size_t i) const { return records_.empty() ? decision_of(i).layout : records_[i].layout; }
  // Sets differs[i] for each parameter whose layout differs from `other`'s (the same model's).
  void mark_differing(const ParameterLayouts& other, std::vector<char>& differs) const {
    size_t n = std::min(std::min(size(), other.size()), differs.size());
    if (!records_.empty() || !other.records_.empty() || slots_ != other.slots_) {
      for (size_t i = 0; i < n; ++i) differs[i] |= layout(i) != other.layout(i);
      return;
    }
    // The same slots: compare per slot, then mark each parameter by its slot.
    std::vector<char> slot_differs(decisions_.size(), 0);
    for (size_t k = 0; k < slot_differs.size() && k < other.decisions_.size(); ++k)
      slot_differs[k] = decisions_[k].layout != other.decisions_[k].layout;
    for (size_t i = 0; i < n; ++i) differs[i] |= slot_differs[static_cast<size_t>(slots_->slot_of[i])];
  }
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, size()); }
  // How many parameters some dim of which is split over a mesh axis.
  size_t sharded_count() const {
    size_t n = 0;
    for (const ParameterLayout p : *this)
      if (auto spec = p.spec()) n += std::any_of(spec->begin(), spec->end(), [](auto& axes) { return !axes.empty(); });
    return n;
  }

  // The planner's way in: `parameters` is the planned model's list (it must outlive this); then one
  // add_decision per slot, in slot order.
  void assign(const std::vector<ir::Parameter>* parameters, std::shared_ptr<const ParameterSlots> slots) {
    parameters_ = parameters;
    slots_ = std::move(slots);
    decisions_.clear();
    records_.clear();
  }
  void add_decision(const Decision& d) { decisions_.push_back(d); }
  // Whole records, for plans made by hand (tests, fixed layouts); not mixed with add_decision().
  void push_back(const ParameterLayout& record) { records_.push_back(record); }

 private:
  const Decision& decision_of(size_t i) const { return decisions_[static_cast<size_t>(slots_->slot_of[i])]; }
  const std::vector<ir::Parameter>* parameters_ = nullptr;
  std::shared_ptr<const ParameterSlots> slots_;
  std::vector<Decision> decisions_;
  std::vector<ParameterLayout> records_;
};

struct Collective {
  Ccl kind = Ccl::AllReduce;
  std::string axis = "model";
  int count = 0;            // per forward
  double bytes = 0;         // logical tensor bytes per occurrence
  double time_us = 0;       // per occurrence
  std::string at;           // module path, repeated blocks as "h.*.attn.c_proj"
  std::string why;
  std::string tensor;       // the tensor's dims, e.g. "[1, 1, 4096] (batch, seq, hidden)"
  ir::Span span;
  // What it does, precisely enough to run it (`shardlens verify`): the tensor's layout before and
  // after ("replicated" | "partial" | "sharded", with the dim and, for concatenated segments each
  // sharded evenly, their count), and where: the output of the op at `span` in a module matching
  // `at`, input `input` of that op, or the model's output.
  struct Layout {
    std::string kind = "replicated";
    int dim = -1;
    int segments = 0;
  };
  Layout from, to;
  std::string applies_to = "output";  // output | input | model_output
  int input = -1;                      // which activation input (weights and buffers not counted)
  // The modules (not the pattern) where it occurs, in order; "*" stands for every expert of a list.
  std::vector<std::string> instances;
};

struct Totals {
  // Per forward: the collectives, their bytes, and the estimated time with its two parts.
  int collectives = 0;
  double bytes = 0;
  double est_time_us = 0, compute_us = 0, ccl_us = 0;
  double compute_parallel_fraction = 0;  // of the FLOPs, the share split over the devices
  // Per device: parameters plus the KV cache.
  double memory_per_device_bytes = 0, parameter_bytes_per_device = 0, kv_cache_bytes_per_device = 0;
};

struct Alternative {
  std::string name;
  bool feasible = true;
  Totals totals;
  std::string why_rejected;
  // Pipeline parallelism (name contains "pipeline"): contiguous stages of the model's top-level
  // components, `microbatches` flowing through them; the bubble is the idle share of the step,
  // (p-1)/(m+p-1) (GPipe; Narayanan et al. 2021). Stages list their first and last components.
  int stages = 0, microbatches = 0;
  double bubble_fraction = 0;
  std::vector<std::string> stage_spans;
  std::vector<int> blocks_per_stage;  // the repeated blocks (the model's layers) each stage runs
};

// One row of the per-component table: a module (repeated blocks folded) and what it costs.
struct ComponentPlan {
  std::string module;       // "h.*" for repeated blocks
  std::string class_name;
  int count = 1;            // how many identical instances
  std::string layout;       // short summary: "qkv column_segments, proj row"
  int collectives = 0;      // per instance (rounded average)
  int collectives_total = 0;  // over all instances
  double bytes = 0;         // per instance (average)
  double ccl_us = 0;        // per instance (average)
  double compute_us = 0;    // per instance (average)
  ir::Span span;
};

struct Diagnostic {
  std::string code;      // divisibility-heads, divisibility-kv-heads, memory-fallback, unknown-op, ...
  std::string severity;  // error | warning | information
  std::string message;
  ir::Span span;
  std::string mesh;      // "1x32" when raised for one mesh, "" for the whole model
};

struct MeshPlan {
  Mesh mesh;
  std::string mode;  // how the rows axis is used: "replicated", "data parallel", "2-D tensor parallel"
  ParameterLayouts parameters;
  std::vector<Collective> collectives;
  // Where a replicated tensor is cut into the devices' blocks with no collective (sequence and data
  // parallel inputs, a column layer's input taken sharded): what `shardlens verify` reproduces.
  std::vector<Collective> slices;
  Totals totals;
  std::vector<Alternative> alternatives;
  std::vector<ComponentPlan> components;
  std::vector<std::string> notes;
  bool memory_fallback = false;
  // Why the model cannot run under this mesh shape as a tensor-parallel model (attention heads that
  // do not divide the model axis); a pipeline's shape choice reads them (plan/pipeline.h).
  std::vector<std::string> blockers;
  // When the mode is a pipeline (stages > 0): its stages, microbatches and bubble.
  Alternative pipeline;
};

struct PlanResult {
  bool ok = false;
  std::string error;
  std::vector<MeshPlan> meshes;
  std::vector<Diagnostic> diagnostics;
  std::vector<std::string> notes;
  double plan_ms = 0;
};

// Thrown out of Planner::plan when its cancel check answers true (an editor has a newer version
// waiting). The memo keeps every body solved before, so the next plan goes on from there.
struct PlanCancelled : std::runtime_error {
  PlanCancelled() : std::runtime_error("planning cancelled") {}
};

namespace detail {
class AxisSolver;
struct ParameterIndex;
struct Prepared;
}

// Keeps solved module bodies between calls (keyed by body content, entry layouts, mesh axis and
// workload), so that re-planning after an edit solves only the classes whose content changed.
class Planner {
 public:
  Planner();
  ~Planner();
  PlanResult plan(const ir::ModelIR& model, const PlanOptions& options);
  size_t memo_entries() const;
  // Starts a new generation of the memo: solved bodies unused for two generations are dropped. An
  // editor calls it once per document version, so memory follows the model.
  void new_generation();
  // Asked between the bodies a plan solves; true cancels it (PlanCancelled). Empty: never.
  void set_cancel_check(std::function<bool()> cancelled);

 private:
  std::unique_ptr<detail::AxisSolver> solver_;
  std::unique_ptr<detail::ParameterIndex> parameters_;  // kept while the module tree is unchanged
  std::map<std::string, int> memory_steps_;  // per mesh: the memory weight's grid step last chosen
  std::shared_ptr<detail::Prepared> spent_;  // the last plan's preparation: the next one reuses its buffers
};

// One-shot planning (no memo kept).
PlanResult plan_model(const ir::ModelIR& model, const PlanOptions& options);

}  // namespace shardlens::plan
