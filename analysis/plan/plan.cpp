#include "plan/plan.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>
#include <set>
#include <sstream>
#include <thread>

#include "plan/plan_output.h"
#include "plan/search.h"

namespace shardlens::plan {

namespace detail {
// Which parameters share a layout (every expert of a list shares expert 0's) and which the forward
// never reads: a function of the module tree and the traced experts, cached across plans.
struct ParameterIndex {
  uint64_t key = 0;
  double untraced_elements = 0;     // parameters the forward never reads (kept whole)
  // Slots: one per (representative, expert list); every mesh decides once per slot. Also holds
  // each parameter's expert position.
  std::shared_ptr<ParameterSlots> slots;
  std::vector<int> slot_representative;  // per slot: the parameter whose layout its parameters share
  std::vector<int> slot_list;            // per slot: the expert list module, or -1
};
}  // namespace detail

using namespace detail;
using ir::OpKind;

namespace {

// Decision weight per collective, added to the search objective only (never to reported times).
// SHARDING.md §1 asks for the fewest collectives as well as the fastest plan: a layout that saves
// less than this per extra collective is within the residuals of the fitted α-β formulas
// (tt-metal CCL_bandwidth.md fits; SHARDING.md §4) and loses to the one with fewer collectives.
constexpr double kCclDecisionWeightUs = 10.0;
// Device memory kept free for activations, program binaries and the runtime: plans must fit in
// this share of DRAM. A planning margin, not a measured figure: tt-metal reserves DRAM for kernel
// binaries, trace buffers and CCL scratch, and activations are not counted in the estimate.
constexpr double kUsableDramFraction = 0.9;
// One plan across meshes: each mesh after the first prefers the layouts chosen before it; leaving
// one costs this much in the objective per parameter tensor (a tie-break well inside the
// formulas' error: a 126-layer model has ~900 weight tensors, < 0.5 ms against plans of 100+ ms).
constexpr double kPreferenceUsPerParameter = 0.5;
const std::string kOutput = "output";

struct Solved {
  std::string name;
  Context ctx;
  AxisSolution sol;
  Evaluation ev;
  Totals totals;
  std::vector<std::string> axes;  // mesh axes the sharded dims use
  bool feasible = false;
  std::string infeasible_why;
};

// Replaying a chosen plan and listing its parameters and collectives reads only that plan and the
// model: it runs on a second thread while the solver goes on to the next mesh, and the planning
// thread takes what is left once it has no search to do. Each task writes its own mesh's results.
class MeshTails {
 public:
  MeshTails() = default;
  MeshTails(const MeshTails&) = delete;
  MeshTails& operator=(const MeshTails&) = delete;
  // Unwinding (a cancelled plan): queued tasks are dropped, a running one is waited for.
  ~MeshTails() {
    {
      std::lock_guard lock(mutex_);
      queue_.clear();
      closing_ = true;
    }
    wake_.notify_all();
    if (helper_.joinable()) helper_.join();
  }
  void submit(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
    }
    if (!helper_.joinable()) helper_ = std::thread([this] { work(); });
    wake_.notify_one();
  }
  // Runs what is still queued on this thread, waits for the helper, rethrows a task's exception.
  void finish() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    wake_.notify_all();
    while (auto task = next(false)) run(task);
    if (helper_.joinable()) helper_.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::function<void()> next(bool wait) {
    std::unique_lock lock(mutex_);
    if (wait) wake_.wait(lock, [&] { return closing_ || !queue_.empty(); });
    if (queue_.empty()) return {};
    auto task = std::move(queue_.front());
    queue_.pop_front();
    return task;
  }
  void run(const std::function<void()>& task) {
    try {
      task();
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
  void work() {
    while (auto task = next(true)) run(task);
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool closing_ = false;
  std::exception_ptr error_;
  std::thread helper_;  // last: started after the rest exists
};

class MeshPlanner {
 public:
  MeshPlanner(const ir::ModelIR& model, const Prepared& prep, const PlanOptions& opt, AxisSolver& solver)
      : model_(model), prep_(prep), opt_(opt), solver_(solver) {}

  Context base_context(const Mesh& mesh) const {
    Context c;
    c.n = mesh.cols;
    c.topology = mesh.col_topology;
    c.hw = opt_.hardware;
    c.workload = opt_.workload;
    c.ccl_penalty_us = kCclDecisionWeightUs;
    if (opt_.strategy == StrategyMode::Tensor) c.filter.allowed = kTagReplicated | kTagTensor | kTagExpertTensor;
    c.unpinned_replicated = opt_.evaluate_pins_only;
    if (!opt_.pinned_parameters.empty()) {
      // By name through an index: a report pins thousands of parameters of a large model.
      std::unordered_map<std::string_view, int> index;
      for (size_t i = 0; i < model_.parameters.size(); ++i) index.emplace(model_.parameters[i].name, static_cast<int>(i));
      for (auto& [name, layout] : opt_.pinned_parameters)
        if (auto it = index.find(name); it != index.end()) c.pinned_params[it->second] = parse_layout(layout);
    }
    if (!opt_.pinned_outputs.empty()) {
      std::unordered_map<std::string_view, int> index;
      for (size_t i = 0; i < model_.modules.size(); ++i) index.emplace(model_.modules[i].name, static_cast<int>(i));
      for (auto& [name, layout] : opt_.pinned_outputs)
        if (auto it = index.find(name); it != index.end()) c.pinned_outputs[it->second] = parse_layout(layout);
    }
    return c;
  }

  static Spec parse_layout(const std::string& s) {
    if (s.rfind("shard:", 0) == 0) return Spec::S(std::stoi(s.substr(6)));
    if (s == "partial") return Spec::P();
    return Spec::R();
  }

  // Solves; totals come from the solver's per-body aggregates. `detail()` then lists every
  // collective (needed only for the plan that is reported).
  Solved run(const std::string& name, const Context& ctx, std::vector<std::string> axes) {
    Solved s;
    s.name = name;
    s.ctx = ctx;
    s.axes = std::move(axes);
    s.sol = solver_.solve(prep_, ctx);
    s.feasible = s.sol.feasible;
    if (!s.feasible) {
      s.infeasible_why = "no layout satisfies the constraints";
      return s;
    }
    const Aggregate& a = s.sol.totals;
    Totals& t = s.totals;
    t.collectives = a.collectives;
    t.bytes = a.bytes;
    t.ccl_us = a.ccl_us;
    t.compute_us = a.compute_us;
    t.est_time_us = a.ccl_us + a.compute_us;
    t.compute_parallel_fraction = a.flops > 0 ? a.parallel_flops / a.flops : 0;
    t.parameter_bytes_per_device = a.parameter_bytes + untraced_parameter_bytes(ctx);
    t.kv_cache_bytes_per_device = a.kv_cache_bytes;
    t.memory_per_device_bytes = t.parameter_bytes_per_device + t.kv_cache_bytes_per_device;
    return s;
  }

  // The chosen plan's per-op decisions (the solver's memo: on the planning thread); replaying
  // them (`evaluate`) needs nothing else.
  void expand(Solved& s) {
    if (s.feasible) solver_.expand_decisions(prep_, s.ctx, s.sol);
  }

  // Parameters the traced forward never reads (kept whole), except other experts of a list,
  // which the experts' aggregate already counts.
  double untraced_parameter_bytes(const Context& ctx) const { return index_->untraced_elements * ctx.workload.dtype_bytes(); }

  // Expert lists whose experts are spread over devices (expert parallel), by module index.
  // Per module: whether it is an expert list whose experts are spread over devices (expert parallel).
  std::vector<char> expert_parallel_lists(const Solved& s) const {
    std::vector<char> out(model_.modules.size(), 0);
    const auto& flow = model_.dataflow;
    for (size_t i = 0; i < flow.ops.size(); ++i)
      if (flow.ops[i].kind == OpKind::Experts && s.sol.decisions[i].experts_mode >= 2) out[flow.ops[i].module] = 1;
    return out;
  }

  const ParameterIndex& parameter_index() const { return *index_; }

  void index_parameters(std::unique_ptr<ParameterIndex>& cache) {
    const auto& flow = model_.dataflow;
    uint64_t key = model_.modules.empty() ? 0 : model_.modules[0].structure_hash;
    for (auto& op : flow.ops)
      if (op.kind == OpKind::Experts) key = (key ^ static_cast<uint64_t>(op.module + 1)) * 1099511628211ULL;
    for (auto& t : flow.tensors)
      if (t.parameter >= 0) key = (key ^ static_cast<uint64_t>(t.parameter + 7)) * 1099511628211ULL;
    if (!cache || cache->key != key || cache->slots->slot_of.size() != model_.parameters.size()) {
      cache = std::make_unique<ParameterIndex>();
      cache->key = key;
      build_index(*cache);
    }
    index_ = cache.get();
  }

  void build_index(ParameterIndex& index) const {
    // Identical experts list their parameters in the same order (named_parameters order of the
    // subtree): the k-th parameter of every expert shares the layout of expert 0's k-th.
    const auto& flow = model_.dataflow;
    std::vector<int> representative(model_.parameters.size());  // per parameter: whose layout it shares
    for (size_t i = 0; i < representative.size(); ++i) representative[i] = static_cast<int>(i);
    std::vector<int> expert_list_of(model_.parameters.size(), -1);  // per parameter: its expert list, or -1
    auto slots = std::make_shared<ParameterSlots>();
    slots->expert_of.assign(model_.parameters.size(), -1);
    std::vector<char> traced(model_.parameters.size(), 0);
    for (auto& t : flow.tensors)
      if (t.parameter >= 0) traced[t.parameter] = 1;
    std::function<void(int, std::vector<int>&)> collect = [&](int m, std::vector<int>& out) {
      const auto& mod = model_.modules[m];
      out.insert(out.end(), mod.parameters.begin(), mod.parameters.end());
      for (int c : mod.children) collect(c, out);
    };
    for (auto& op : flow.ops) {
      if (op.kind != OpKind::Experts || op.module < 0) continue;
      const auto& list = model_.modules[op.module];
      if (list.children.empty()) continue;
      std::vector<int> first, other;
      // A parameter found under expert c is most likely that expert's; its name decides (a module
      // shared with one outside the list is named there).
      auto note_expert = [&](int p, size_t c) {
        expert_list_of[p] = op.module;
        slots->expert_of[p] = expert_position(list, model_.parameters[p].name, static_cast<int>(c));
      };
      collect(list.children[0], first);
      for (int p : first) note_expert(p, 0);
      for (size_t c = 1; c < list.children.size(); ++c) {
        other.clear();
        collect(list.children[c], other);
        for (size_t k = 0; k < other.size(); ++k) {
          note_expert(other[k], c);
          if (k < first.size()) representative[other[k]] = first[k];
        }
      }
    }
    for (size_t i = 0; i < model_.parameters.size(); ++i)
      if (!traced[i] && expert_list_of[i] < 0 && model_.parameters[i].shape_known)
        index.untraced_elements += static_cast<double>(model_.parameters[i].numel());
    // A parameter and its representative sit in the same list, so a slot per representative
    // nearly always does; a weight shared across lists gets a slot per list.
    slots->slot_of.resize(model_.parameters.size());
    std::vector<int> slot_of_representative(model_.parameters.size(), -1);
    std::map<std::pair<int, int>, int> other_lists;  // (representative, list) -> slot
    auto new_slot = [&](int r, int list) {
      index.slot_representative.push_back(r);
      index.slot_list.push_back(list);
      return static_cast<int>(index.slot_list.size()) - 1;
    };
    for (size_t i = 0; i < model_.parameters.size(); ++i) {
      int r = representative[i], list = expert_list_of[i];
      int& first = slot_of_representative[static_cast<size_t>(r)];
      int slot = first;
      if (first < 0) {
        slot = first = new_slot(r, list);
      } else if (index.slot_list[static_cast<size_t>(first)] != list) {
        auto [it, added] = other_lists.try_emplace({r, list}, -1);
        if (added) it->second = new_slot(r, list);
        slot = it->second;
      }
      slots->slot_of[i] = slot;
    }
    index.slots = std::move(slots);
  }

  // "layers.0.moe.experts.3.w1.weight" in the list "layers.0.moe.experts": expert 3 (the
  // expert `likely` when its key matches; a ModuleList's keys are its indices; anything else is
  // looked up). -1: not under the list.
  static int expert_position(const ir::Module& list, std::string_view name, int likely) {
    const std::string& prefix = list.name;
    if (name.size() <= prefix.size() + 1 || name.compare(0, prefix.size(), prefix) != 0 || name[prefix.size()] != '.') return -1;
    size_t start = prefix.size() + 1, end = name.find('.', start);
    std::string_view key = name.substr(start, (end == std::string_view::npos ? name.size() : end) - start);
    if (likely >= 0 && static_cast<size_t>(likely) < list.child_keys.size() && list.child_keys[static_cast<size_t>(likely)] == key)
      return likely;
    int index = -1;
    auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), index);
    if (ec == std::errc() && ptr == key.data() + key.size() && index >= 0 && index < static_cast<int>(list.child_keys.size()) &&
        list.child_keys[index] == key)
      return index;
    for (size_t k = 0; k < list.child_keys.size(); ++k)
      if (list.child_keys[k] == key) return static_cast<int>(k);
    return -1;
  }

  const ir::ModelIR& model_;
  const Prepared& prep_;
  const PlanOptions& opt_;
  AxisSolver& solver_;
  const ParameterIndex* index_ = nullptr;
};

std::string_view layout_of(std::string_view label, Spec spec, bool expert_parallel) {
  if (expert_parallel) return "expert";
  if (!spec.sharded()) return "replicated";
  if (spec.kind == kSegments || label == "column_segments") return "column_segments";
  for (std::string_view named : {"column", "row", "vocab", "hidden", "expert"})
    if (label == named) return named;
  return "hidden";  // norm weights and other per-feature vectors sharded with their activation
}

std::string layout_why_text(const std::string& layout);

// Per parameter slot of every mesh: a short table scanned by view, no string made per lookup.
const std::string& layout_why(std::string_view layout, std::string_view kind_of_op) {
  static const std::vector<std::pair<std::string, std::string>> texts = [] {
    std::vector<std::pair<std::string, std::string>> t;
    for (const char* l : {"column", "row", "column_segments", "vocab", "hidden", "hidden-norm", "expert", "expert-modules",
                          "replicated", "replicated-unused", "replicated-conv", ""})
      t.emplace_back(l, layout_why_text(l));
    return t;
  }();
  const std::string_view key = layout == "hidden" && kind_of_op == "norm" ? "hidden-norm" : layout;
  for (const auto& [name, text] : texts)
    if (name == key) return text;
  return texts.back().second;  // ""
}

std::string layout_why_text(const std::string& layout) {
  if (layout == "column")
    return "column-parallel: output features split over 'model'; its output stays sharded for the row-parallel layer "
           "after it (Megatron-LM §3, arXiv:1909.08053)";
  if (layout == "row")
    return "row-parallel: consumes the sharded activation without gathering it; 1 all-reduce of the partial output "
           "(Megatron-LM §3)";
  if (layout == "column_segments")
    return "q, k and v are concatenated in this weight and split after the matmul: each device needs its share of "
           "every segment. Not expressible as a spec on the fused weight: split the projection into q/k/v, or permute "
           "its rows at load time so that a contiguous split is per segment";
  if (layout == "vocab")
    return "vocab-parallel: each device holds a slice of the vocabulary; masked lookup + 1 all-reduce (Megatron "
           "tensor_parallel/layers.py)";
  if (layout == "hidden-norm")
    return "sharded with the activation it scales (its statistics need a small all-reduce unless whole groups stay on "
           "a device)";
  if (layout == "hidden") return "sharded along the hidden dim; the activation stays sharded";
  if (layout == "expert" || layout == "expert-modules")
    return std::string("expert parallel: whole experts per device (torchtitan expert_parallel.py; Megatron "
                       "token_dispatcher.py)") +
           (layout == "expert-modules" ? "; separate per-expert modules cannot carry a partition spec: stack the experts' "
                                         "weights into [experts, ...] tensors to annotate them"
                                       : "");
  if (layout == "replicated-unused") return "not used by the traced forward: left replicated";
  if (layout == "replicated-conv")
    return "replicated: splitting this conv's channels costs more than it saves here; spatial sharding is not "
           "lowerable (tt-mlir #8216)";
  if (layout == "replicated") return "replicated: splitting it would cost more in collectives than it saves in compute";
  return "";
}

}  // namespace

Planner::Planner() : solver_(std::make_unique<AxisSolver>()) {}
Planner::~Planner() = default;
size_t Planner::memo_entries() const { return solver_->memo_size(); }
void Planner::new_generation() { solver_->new_generation(); }
void Planner::set_cancel_check(std::function<bool()> cancelled) { solver_->set_cancel_check(std::move(cancelled)); }

PlanResult plan_model(const ir::ModelIR& model, const PlanOptions& options) {
  Planner planner;
  return planner.plan(model, options);
}

PlanResult Planner::plan(const ir::ModelIR& model, const PlanOptions& options_in) {
  auto t0 = std::chrono::steady_clock::now();
  PlanResult result;
  PlanOptions options = options_in;
  if (!options.hardware) options.hardware = find_hardware("wormhole");
  if (options.meshes.empty()) options.meshes.push_back(*parse_mesh("t3k", result.error));
  const auto& flow = model.dataflow;
  if (flow.ops.empty()) {
    result.error = "the model's forward() could not be traced" + (flow.error.empty() ? std::string() : ": " + flow.error);
    return result;
  }
  // SHARDLENS_PLAN_TIMING=1: time per planning phase on stderr (for the benchmark's breakdown).
  static const bool timing = std::getenv("SHARDLENS_PLAN_TIMING") != nullptr;
  std::map<std::string, double> phase_ms;
  auto tick = std::chrono::steady_clock::now();
  auto phase = [&](const char* name) {
    if (!timing) return;
    auto now = std::chrono::steady_clock::now();
    phase_ms[name] += std::chrono::duration<double, std::milli>(now - tick).count();
    tick = now;
  };
  auto prep = prepare(model, options.second_thread, std::move(spent_));
  phase("prepare");
  // Bounded memory: a long editing session must not grow the memo without limit.
  if (solver_->memo_size() > 200000) solver_->clear();
  AxisSolver& solver = *solver_;
  MeshPlanner planner(model, *prep, options, solver);
  planner.index_parameters(parameters_);
  phase("index experts");
  for (auto& n : flow.notes) result.notes.push_back(n);
  if (!flow.error.empty())
    result.diagnostics.push_back({"trace-incomplete", "warning",
                                  "forward() was only partly traced (" + flow.error + "): the plan covers what was seen", model.modules[0].span, ""});
  // Unknown ops: the planner keeps tensors whole around them.
  std::set<std::string> unknown_seen;
  std::vector<int> sized_ops;  // the ops whose sizes the divisibility checks read, found in the same pass
  for (const auto& op : flow.ops) {
    if (op.kind == OpKind::Attention || op.kind == OpKind::Contract || op.kind == OpKind::Embedding || op.kind == OpKind::Experts)
      sized_ops.push_back(static_cast<int>(&op - flow.ops.data()));
    if (op.kind == OpKind::Unknown && unknown_seen.insert(op.name + std::to_string(op.span.line)).second)
      result.diagnostics.push_back({"unknown-op", "information",
                                    "'" + op.name + "' is not understood by the planner (" + op.detail +
                                        "): tensors stay replicated through it, which may cost gathers",
                                    op.span, ""});
  }
  phase("diagnostics (unknown ops)");
  const Hardware& hw = *options.hardware;
  auto preferred = std::make_shared<std::unordered_map<int, Spec>>();  // layouts chosen on the first mesh
  uint64_t preferred_hash = 0;
  // Diagnostics raised while planning one mesh carry its shape (messages stay unambiguous when
  // several meshes are planned).
  size_t tagged = result.diagnostics.size();
  std::string current_mesh;
  auto tag_mesh = [&]() {
    for (; tagged < result.diagnostics.size(); ++tagged)
      if (result.diagnostics[tagged].mesh.empty()) result.diagnostics[tagged].mesh = current_mesh;
  };
  // What listing a plan needs of the model alone, the same for every mesh (the tasks only read it).
  // An expert's body is traced once, for the list's first expert: what happens there happens
  // in every expert.
  std::vector<int> experts_around;  // op -> the Experts op whose body holds it (-1: none)
  for (const int i : sized_ops)
    if (flow.ops[static_cast<size_t>(i)].kind == OpKind::Experts) {
      if (experts_around.empty()) experts_around.assign(flow.ops.size(), -1);
      for (int k = i + 1; k < flow.ops[static_cast<size_t>(i)].end && k < static_cast<int>(flow.ops.size()); ++k) experts_around[k] = i;
    }
  // The root module's own forward is the one Call at the top: its body holds the components.
  int root_body = 0;
  if (prep->bodies[0].items.size() == 1 && flow.ops[prep->bodies[0].items[0]].kind == OpKind::Call)
    root_body = prep->body_of_op[prep->bodies[0].items[0]];
  const auto& root = prep->bodies[root_body];
  auto end_of = [&](int i) { return flow.ops[i].kind == OpKind::Call || flow.ops[i].kind == OpKind::Experts ? flow.ops[i].end : i + 1; };
  std::vector<int> item_of_op(flow.ops.size(), -1);  // op -> the root item whose ops hold it
  for (size_t pos = 0; pos < root.items.size(); ++pos)
    std::fill(item_of_op.begin() + root.items[pos], item_of_op.begin() + end_of(root.items[pos]), static_cast<int>(pos));
  // A chosen plan's parameters, collectives and components (see MeshTails: may run on another
  // thread, so it reads only the model, the preparation, the above and `chosen`, and writes only `mp`).
  auto describe_mesh = [&](Solved& chosen, MeshPlan& mp) {
    if (chosen.ev.op_label.empty() && chosen.feasible) chosen.ev = evaluate(*prep, chosen.ctx, chosen.sol);
    auto ep = planner.expert_parallel_lists(chosen);
    static const std::vector<std::string> kModel{"model"}, kBoth{"batch", "model"};
    const std::vector<std::string>* axes = chosen.axes.size() > 1 ? &kBoth : &kModel;
    // Layout and reason per slot: a representative parameter (every expert shares expert 0's) in
    // its expert list.
    auto decide = [&](int r, bool expert_parallel, int experts) {
      ParameterLayouts::Decision d;
      const Evaluation::ParameterUse& use = chosen.ev.use_of(*prep, r);
      Spec spec = use.spec;
      int op = use.op;
      d.layout = layout_of(use.label, spec, expert_parallel);
      d.writable = !(expert_parallel || spec.kind == kSegments);
      if (spec.kind == kSharded || spec.kind == kSegments) d.sharded_dim = spec.dim;  // segments: for per-device shapes
      if (spec.kind == kSegments) d.segments = spec.seg;
      d.experts = expert_parallel ? experts : 0;
      d.axes = axes;
      std::string_view why_key = d.layout;
      if (d.layout == "replicated") {
        if (op < 0) why_key = "replicated-unused";
        else if (flow.ops[op].kind == OpKind::Contract && flow.ops[op].equation.find('H') != std::string::npos) why_key = "replicated-conv";
      }
      if (expert_parallel) why_key = "expert-modules";
      d.why = layout_why(why_key, op >= 0 ? ir::op_kind_name(flow.ops[op].kind) : "");
      return d;
    };
    const ParameterIndex& index = planner.parameter_index();
    ParameterLayouts& layouts = mp.parameters;
    layouts.assign(&model.parameters, index.slots);
    for (size_t k = 0; k < index.slot_list.size(); ++k) {
      int list = index.slot_list[k];
      bool expert_parallel = list >= 0 && ep[list];
      int experts = expert_parallel ? static_cast<int>(model.modules[list].children.size()) : 0;
      layouts.add_decision(decide(index.slot_representative[k], expert_parallel, experts));
    }
    // Collectives, folded over repeated blocks; the free slices the same way.
    auto add_instances = [&](Collective& c, int at_op, int module) {
      const std::string& name = model.modules[module].name;
      int around = at_op >= 0 && !experts_around.empty() ? experts_around[at_op] : -1;
      const ir::Module* list = around >= 0 && flow.ops[around].module >= 0 ? &model.modules[flow.ops[around].module] : nullptr;
      std::string first = list && !list->child_keys.empty() ? list->name + "." + list->child_keys[0] : "";
      if (list && (name == first || name.rfind(first + ".", 0) == 0)) {
        std::string every = list->name + ".*" + name.substr(first.size());  // "layers.3.moe.experts.*.w2"
        if (c.instances.empty() || c.instances.back() != every) c.instances.push_back(std::move(every));
      } else if (c.instances.empty() || c.instances.back() != name) {
        c.instances.push_back(name);
      }
    };
    // Events fold into one collective by (kind, where, bytes, why) and, for slices, layout, input
    // and source position. The key views the event's strings: no string is built per event.
    struct FoldKey {
      int kind;
      const std::string* at;
      long long bytes;
      const std::string* why;
      uint64_t to = 0, where = 0;  // slices only
      int input = 0;
      bool operator==(const FoldKey& o) const {
        return kind == o.kind && bytes == o.bytes && to == o.to && where == o.where && input == o.input && *at == *o.at && *why == *o.why;
      }
    };
    struct FoldHash {
      size_t operator()(const FoldKey& k) const {
        uint64_t h = ir::mix64(ir::mix64(static_cast<uint64_t>(k.kind), static_cast<uint64_t>(k.bytes)), k.to);
        h = ir::mix64(ir::mix64(h, k.where), static_cast<uint64_t>(k.input));
        return ir::mix64(ir::mix64(h, std::hash<std::string>()(*k.at)), std::hash<std::string>()(*k.why));
      }
    };
    auto fold = [&](const std::vector<CclEvent>& events, std::vector<Collective>& out, bool slices) {
      std::unordered_map<FoldKey, size_t, FoldHash> index;  // -> collective
      for (auto& e : events) {
        int at_op = e.origin >= 0 ? e.origin : e.op;
        int module = at_op >= 0 ? flow.ops[at_op].module : -1;
        const std::string& at = module >= 0 ? prep->patterns->of(model, module) : kOutput;
        FoldKey key{static_cast<int>(e.kind), &at, std::llround(e.bytes), &e.why};
        if (slices) {
          key.to = static_cast<uint64_t>(e.to.code());
          key.input = e.input;
          key.where = at_op >= 0 ? static_cast<uint64_t>(flow.ops[at_op].span.line) * 4096 + static_cast<uint64_t>(flow.ops[at_op].span.column) : 0;
        }
        auto it = index.find(key);
        if (it == index.end()) {
          Collective c;
          c.kind = e.kind;
          c.axis = chosen.axes.size() > 1 ? "batch,model" : "model";
          c.bytes = e.bytes;
          c.time_us = e.time_us;
          c.at = at;
          c.why = slices ? "each device keeps its block of a replicated value: no collective" : e.why;
          const auto& info = flow.tensors[e.tensor];
          std::string dims, roles;
          for (size_t d = 0; d < info.shape.size(); ++d) {
            dims += (d ? ", " : "") + std::to_string(info.shape[d]);
            roles += std::string(d ? ", " : "") + role_name(prep->roles[e.tensor][d]);
          }
          c.tensor = "[" + dims + "] (" + roles + ")";
          c.span = at_op >= 0 ? flow.ops[at_op].span : ir::Span{};
          auto layout = [](Spec sp) {
            Collective::Layout l;
            l.kind = sp.kind == kPartial ? "partial" : sp.sharded() ? "sharded" : "replicated";
            l.dim = sp.sharded() ? sp.dim : -1;
            l.segments = sp.kind == kSegments ? sp.seg : 0;
            return l;
          };
          c.from = layout(e.from);
          c.to = layout(e.to);
          if (at_op < 0) c.applies_to = "model_output";
          else if (e.from.kind == kPartial && e.origin >= 0 && e.origin != e.op) c.applies_to = "output";
          else if (e.input >= 0) {
            // Counted over the op's activations (weights and buffers skipped): what a module's
            // call receives, and what a numeric check can find among an op's arguments.
            c.applies_to = "input";
            c.input = 0;
            for (int j = 0; j < e.input; ++j) c.input += !prep->stored[flow.ops[e.op].inputs[j]];
          }
          it = index.emplace(key, out.size()).first;
          out.push_back(std::move(c));
        }
        Collective& c = out[it->second];
        c.count++;
        if (module >= 0) add_instances(c, at_op, module);
      }
    };
    fold(chosen.ev.events, mp.collectives, false);
    fold(chosen.ev.slices, mp.slices, true);
    mp.totals = chosen.totals;
    // Components: the root's top-level items, identical consecutive blocks folded.
    // Each collective counts for the root item whose ops hold it: one pass, in the events' order.
    struct ItemCollectives {
      double count = 0, bytes = 0, us = 0;
    };
    std::vector<ItemCollectives> item_collectives(root.items.size());
    for (auto& e : chosen.ev.events)
      if (e.op >= 0 && item_of_op[e.op] >= 0) {
        auto& c = item_collectives[static_cast<size_t>(item_of_op[e.op])];
        c.count += 1;
        c.bytes += e.bytes;
        c.us += e.time_us;
      }
    uint64_t last_signature = 0;
    for (size_t pos = 0; pos < root.items.size(); ++pos) {
      int i = root.items[pos];
      const auto& op = flow.ops[i];
      if (op.module <= 0 && op.kind != OpKind::Call) continue;
      int end = end_of(i);
      const std::string& name = model.modules[op.module].name;
      std::string module = op.kind == OpKind::Call ? module_pattern(name) : name;
      uint64_t sig = prep->body_of_op[i] >= 0 ? prep->bodies[prep->body_of_op[i]].signature : std::hash<std::string>()(name);
      // Per-instance figures are averages over the folded instances (their plans may differ at the
      // edges: the first block receives the embedding's layout).
      auto add_costs = [&](ComponentPlan& cp, int n_before) {
        const auto& [ccls, bytes, ccl_us] = item_collectives[pos];
        double compute = 0;
        for (int k = i; k < end; ++k) compute += chosen.ev.op_compute_us[k];
        double n = n_before + 1;
        cp.bytes = (cp.bytes * n_before + bytes) / n;
        cp.ccl_us = (cp.ccl_us * n_before + ccl_us) / n;
        cp.compute_us = (cp.compute_us * n_before + compute) / n;
        cp.collectives_total += static_cast<int>(ccls);
        cp.collectives = static_cast<int>(std::lround(cp.collectives_total / n));
      };
      if (!mp.components.empty() && op.kind == OpKind::Call && last_signature == sig && mp.components.back().module == module) {
        add_costs(mp.components.back(), mp.components.back().count);
        mp.components.back().count++;
        continue;
      }
      ComponentPlan cp;
      cp.module = std::move(module);
      cp.class_name = model.modules[op.module].class_name;
      cp.span = op.kind == OpKind::Call ? model.modules[op.module].span : op.span;
      add_costs(cp, 0);
      // Layout summary: the weights this component's ops read (tied ones included), by layout.
      std::map<std::string, std::vector<std::string>> by_layout;
      std::set<int> listed;
      std::string prefix = name.empty() ? "" : name + ".";
      for (int k = i; k < end; ++k)
        for (int t : flow.ops[k].inputs) {
          int param = flow.tensors[t].parameter;
          if (param < 0 || !listed.insert(param).second) continue;
          const ParameterLayout pl = mp.parameters[param];
          std::string rel = pl.name.rfind(prefix, 0) == 0 ? std::string(pl.name.substr(prefix.size())) : std::string(pl.name) + " (shared)";
          if (rel.size() > 7 && rel.compare(rel.size() - 7, 7, ".weight") == 0) rel = rel.substr(0, rel.size() - 7);
          else if (rel == "weight") rel = name.substr(name.rfind('.') + 1);
          else if (rel.find("weight") == std::string::npos) continue;  // biases follow their weights
          if (pl.layout != "replicated") by_layout[std::string(pl.layout)].push_back(rel);
        }
      for (auto& [layout, names] : by_layout) {
        std::string list;
        for (size_t k = 0; k < names.size() && k < 6; ++k) list += (k ? ", " : "") + names[k];
        if (names.size() > 6) list += ", ...";
        cp.layout += (cp.layout.empty() ? "" : "; ") + layout + ": " + list;
      }
      if (cp.layout.empty()) cp.layout = "replicated";
      last_signature = sig;
      mp.components.push_back(cp);
    }
  };
  result.meshes.reserve(options.meshes.size());  // tails write into their mesh's slot
  MeshTails tails;  // after everything its tasks refer to: unwinding waits for them first
  for (const Mesh& mesh : options.meshes) {
    tag_mesh();
    current_mesh = mesh.shape_string();
    phase("other");
    MeshPlan mp;
    mp.mesh = mesh;
    Context base = planner.base_context(mesh);
    if (!preferred->empty()) {
      base.preferred_params = preferred;
      base.preferred_hash = preferred_hash;
      base.preference_us = kPreferenceUsPerParameter;
    }
    std::vector<Solved> modes;
    modes.push_back(planner.run(mesh.rows > 1 ? "rows replicated" : "model axis", base, {"model"}));
    if (mesh.rows > 1) {
      if (options.workload.batch % mesh.rows == 0) {
        Context dp = base;
        dp.activation_scale = 1.0 / mesh.rows;
        modes.push_back(planner.run("data parallel on 'batch'", dp, {"model"}));
      } else {
        Solved s;
        s.name = "data parallel on 'batch'";
        s.infeasible_why = "batch " + std::to_string(options.workload.batch) + " does not divide the " +
                           std::to_string(mesh.rows) + " rows";
        modes.push_back(s);
      }
      Context two = base;
      two.n = mesh.rows * mesh.cols;
      two.rows = mesh.rows;
      two.row_topology = mesh.row_topology;
      modes.push_back(planner.run("2-D tensor parallel over ('batch', 'model')", two, {"batch", "model"}));
    }
    int best = -1;
    for (int i = 0; i < static_cast<int>(modes.size()); ++i)
      if (modes[i].feasible && (best < 0 || modes[i].sol.cost < modes[best].sol.cost)) best = i;
    if (best < 0) {
      result.diagnostics.push_back({"infeasible", "error", "no layout satisfies the constraints on mesh " + mesh.shape_string(), {}, ""});
      result.meshes.push_back(mp);
      continue;
    }
    Solved chosen = modes[best];
    // Memory: the fastest layout must fit; otherwise trade speed for memory, loudly.
    double dram = hw.dram_bytes * kUsableDramFraction;
    if (chosen.totals.memory_per_device_bytes > dram) {
      Solved fast = chosen;
      // The smallest-memory plan first (a heavy weight on bytes kept per device); if even that does
      // not fit, say so. Otherwise search the weight (log scale) for the fastest plan that fits.
      double base = chosen.totals.est_time_us / std::max(1.0, chosen.totals.parameter_bytes_per_device);
      // The weight lives on a fixed grid (quarter powers of two around a power-of-two base), so a
      // re-plan after an edit asks for the same weights again and the solver's memo answers for
      // every unchanged body; the grid step of the last search is tried first.
      double grid_base = std::exp2(std::round(std::log2(std::max(base, 1e-30))));
      auto lambda_at = [&](int k) { return grid_base * std::exp2(k / 4.0); };
      auto solve_with = [&](int k) {
        Context c = chosen.ctx;
        c.memory_lambda = lambda_at(k);
        return planner.run(chosen.name, c, chosen.axes);
      };
      auto fits_in = [&](const Solved& s) { return s.feasible && s.totals.memory_per_device_bytes <= dram; };
      int k_lo = -40, k_hi = 54;  // about base * 1e-3 .. base * 1e4
      std::string cache_key = mesh.shape_string() + "|" + chosen.name + "|" + std::to_string(grid_base);
      bool fits = false;
      Solved smallest;
      auto cached = memory_steps_.find(cache_key);
      if (cached != memory_steps_.end()) {
        Solved at = solve_with(cached->second);
        if (fits_in(at)) {
          Solved below = solve_with(cached->second - 1);
          if (!fits_in(below)) {
            chosen = at;
            fits = true;
          } else {
            k_hi = cached->second - 1;
          }
        } else {
          k_lo = cached->second;
        }
      }
      if (!fits) {
        smallest = solve_with(k_hi);
        fits = fits_in(smallest);
        if (fits) {
          chosen = smallest;
          int best_k = k_hi;
          while (k_hi - k_lo > 1) {
            int mid = (k_lo + k_hi) / 2;
            Solved s = solve_with(mid);
            if (fits_in(s)) {
              k_hi = mid;
              if (s.totals.est_time_us < chosen.totals.est_time_us) {
                chosen = s;
                best_k = mid;
              }
            } else {
              k_lo = mid;
            }
          }
          memory_steps_[cache_key] = best_k;
        } else if (smallest.feasible) {
          chosen.totals.memory_per_device_bytes = std::min(chosen.totals.memory_per_device_bytes, smallest.totals.memory_per_device_bytes);
        }
      }
      if (fits) {
        mp.memory_fallback = true;
        double slower = chosen.totals.est_time_us - fast.totals.est_time_us;
        std::string msg = "the fastest layout needs " + format_bytes(fast.totals.memory_per_device_bytes) + " per device on " +
                          mesh.shape_string() + " (" + format_bytes(hw.dram_bytes) + " DRAM): falling back to a memory-saving layout (" +
                          format_bytes(chosen.totals.memory_per_device_bytes) + " per device) that is " + format_us(slower) +
                          " slower per forward (" + std::to_string(chosen.totals.collectives) + " collectives instead of " +
                          std::to_string(fast.totals.collectives) + ")";
        result.diagnostics.push_back({"memory-fallback", "warning", msg, model.modules[0].span, ""});
        mp.notes.push_back(msg);
      } else {
        result.diagnostics.push_back({"memory-does-not-fit", "error",
                                      "no layout on " + mesh.shape_string() + " fits in " + format_bytes(dram) +
                                          " per device (the smallest layout needs " + format_bytes(chosen.totals.memory_per_device_bytes) +
                                          "); use more devices or a smaller dtype",
                                      model.modules[0].span, ""});
      }
    }
    mp.mode = mesh.rows > 1 ? chosen.name : "tensor / sequence / data choices on 'model'";
    if (mesh.rows > 1 && chosen.name.rfind("data", 0) == 0)
      mp.notes.push_back("rows run data parallel: shard the inputs' batch dim over 'batch' (xs.mark_sharding(input, mesh, (\"batch\", None)))");
    for (int i = 0; i < static_cast<int>(modes.size()); ++i) {
      if (i == best) continue;
      Alternative a;
      a.name = modes[i].name;
      a.feasible = modes[i].feasible;
      if (a.feasible) {
        a.totals = modes[i].totals;
        a.why_rejected = format_us(modes[i].totals.est_time_us - chosen.totals.est_time_us) + " slower per forward";
      } else {
        a.why_rejected = modes[i].infeasible_why;
      }
      mp.alternatives.push_back(a);
    }
    phase("modes + memory");
    // Alternatives on the model axis: what the other strategy families would cost.
    if (options.alternatives && mesh.cols > 1) {
      struct Alt {
        std::string name;
        uint16_t allowed;
        uint16_t experts;
        bool sharded_norms;
      };
      const bool has_experts = !experts_around.empty();
      std::vector<Alt> alts = {
          {"replicated", kTagReplicated, kTagAll, false},
          {"tensor parallel (Megatron)", kTagReplicated | kTagTensor | kTagExpertTensor, kTagAll, false},
          {"sequence parallel (Megatron SP)", kTagAll, kTagAll, true},
          {"data parallel", kTagReplicated | kTagBatch, kTagAll, false},
      };
      if (has_experts) {
        alts.push_back({"expert parallel (all-to-all dispatch and combine)", kTagAll, kTagExpertAllToAll, false});
        alts.push_back({"expert parallel (replicated tokens, combined by all-reduce)", kTagAll, kTagExpertLocal, false});
        alts.push_back({"tensor parallel inside each expert", kTagAll, kTagExpertTensor, false});
      }
      for (auto& alt : alts) {
        if (alt.name == "data parallel" && options.workload.batch % chosen.ctx.n != 0) {
          Alternative a;
          a.name = alt.name;
          a.feasible = false;
          a.why_rejected = "batch " + std::to_string(options.workload.batch) + " does not divide the " + std::to_string(chosen.ctx.n) +
                           " devices of the axis";
          mp.alternatives.push_back(a);
          continue;
        }
        if (alt.sharded_norms && options.workload.phase == Phase::Decode) {
          Alternative a;
          a.name = alt.name;
          a.feasible = false;
          a.why_rejected = "decode runs 1 token per sequence: there is no sequence to split";
          mp.alternatives.push_back(a);
          continue;
        }
        // A family that admits the chosen plan and nothing outside the chosen filter has the chosen
        // plan as its best (the search is exact): it is no alternative, and needs no search.
        const Filter& f = chosen.ctx.filter;
        const Filter family{alt.allowed, alt.experts, alt.sharded_norms};
        if (!family.sharded_norms && !f.sharded_norms && (family.allowed & ~f.allowed) == 0 &&
            (family.experts_allowed & ~f.experts_allowed) == 0 && chosen.sol.totals.admitted_by(family))
          continue;
        Context c = chosen.ctx;
        c.filter = family;
        if (c.hash() == chosen.ctx.hash()) continue;
        Solved s = planner.run(alt.name, c, chosen.axes);
        Alternative a;
        a.name = alt.name;
        a.feasible = s.feasible;
        if (!s.feasible) {
          a.why_rejected = options.pinned_parameters.empty() && options.pinned_outputs.empty() ? "no layout of this kind exists for this model"
                                                                                                 : "not possible under the pinned layouts";
          if (alt.experts == kTagExpertAllToAll)
            a.why_rejected = "needs the tokens split over the axis: " + std::to_string(options.workload.batch * options.workload.tokens_per_forward()) +
                             " token(s) per forward cannot be divided over " + std::to_string(chosen.ctx.n) + " devices";
          if (alt.sharded_norms && options.workload.phase == Phase::Decode)
            a.why_rejected = "decode runs 1 token per sequence: there is no sequence to split";

          mp.alternatives.push_back(a);
          continue;
        }
        a.totals = s.totals;
        // Same plan as the chosen one: not an alternative.
        bool same = s.totals.collectives == chosen.totals.collectives && std::abs(s.totals.est_time_us - chosen.totals.est_time_us) < 1e-6;
        if (same) continue;
        double dt = s.totals.est_time_us - chosen.totals.est_time_us;
        std::ostringstream why;
        if (dt >= 0) why << format_us(dt) << " slower per forward (" << format_us(s.totals.est_time_us) << " vs " << format_us(chosen.totals.est_time_us) << ")";
        else why << format_us(-dt) << " faster by the estimate but " << s.totals.collectives << " collectives instead of " << chosen.totals.collectives << " (fewer collectives win within the formulas' error)";
        if (dt >= 0 && s.totals.collectives != chosen.totals.collectives)
          why << "; " << s.totals.collectives << " collectives instead of " << chosen.totals.collectives;
        if (s.totals.memory_per_device_bytes > dram) why << "; does not fit in DRAM";
        a.why_rejected = why.str();
        mp.alternatives.push_back(a);
      }
    }
    phase("alternatives");
    const int tp_degree = chosen.ctx.n;  // for the divisibility diagnostics, once `chosen` has moved on
    const bool two_d = chosen.axes.size() > 1;
    planner.expand(chosen);
    const size_t at = result.meshes.size();
    result.meshes.push_back(std::move(mp));
    if (preferred->empty() && chosen.feasible) {
      // The meshes after this one prefer its layouts: its replay comes before their search.
      chosen.ev = evaluate(*prep, chosen.ctx, chosen.sol);
      for (size_t k = 0; k < prep->used_parameters.size(); ++k)
        if (const auto& use = chosen.ev.param_uses[k]; use.op >= 0) {
          const int i = prep->used_parameters[k];
          (*preferred)[i] = use.spec;
          preferred_hash = preferred_hash * 1099511628211ULL + (static_cast<uint64_t>(i) << 24) + use.spec.code();
        }
    }
    phase("detail");
    auto describe = [&describe_mesh, &result, at, chosen = std::move(chosen)]() mutable { describe_mesh(chosen, result.meshes[at]); };
    if (options.second_thread && options.meshes.size() > 1) tails.submit(std::move(describe));
    else describe();
    phase("describe meshes");
    // Divisibility diagnostics against this mesh's model axis.
    // The degree tensor parallelism uses on this mesh: the columns, or all devices in 2-D mode.
    const int n = tp_degree;
    const std::string axis = two_d ? "('batch', 'model') axes" : "'model' axis";
    if (n <= 1) continue;
    auto locate = [&](std::vector<std::string> keys, int64_t value, ir::Span fallback) {
      return options.locate ? options.locate(keys, value, fallback) : fallback;
    };
    std::set<std::string> said;
    auto diag = [&](const std::string& code, const std::string& severity, const std::string& msg, ir::Span span) {
      if (said.insert(code + msg).second) result.diagnostics.push_back({code, severity, msg, span, ""});
    };
    for (const int i : sized_ops) {
      const auto& op = flow.ops[static_cast<size_t>(i)];
      if (op.kind == OpKind::Attention) {
        int q = op.inputs[0];
        for (size_t d = 0; d < prep->roles[q].size(); ++d) {
          if (prep->roles[q][d] != Role::Heads) continue;
          int64_t heads = flow.tensors[q].shape[d];
          if (heads % n != 0)
            diag("divisibility-heads", "warning",
                 std::to_string(heads) + " attention heads do not divide the " + axis + " (" + std::to_string(n) + ") of mesh " + mesh.shape_string() +
                     ": attention cannot be head-sharded evenly (tt-mlir has no uneven sharding); pad the heads to " +
                     std::to_string((heads + n - 1) / n * n) + " as tt-xla does (tt-xla #4881, #5017) or use a mesh whose 'model' axis divides " + std::to_string(heads),
                 locate({"n_head", "num_heads", "n_heads", "num_attention_heads", "heads"}, heads, model.modules[op.module].span));
        }
        // GQA / MQA: the key / value heads before their repeat.
        int k = op.inputs[1];
        int pr = prep->producer[k];
        if (pr >= 0 && flow.ops[pr].kind == OpKind::Repeat) {
          int kv_t = flow.ops[pr].inputs[0];
          int hd = flow.ops[pr].dims.empty() ? 1 : flow.ops[pr].dims[0];
          int64_t kv = flow.tensors[kv_t].shape[hd];
          int64_t heads = flow.tensors[q].shape[hd];
          if (kv % n != 0 && heads % n == 0) {
            std::string what = n % kv == 0
                                   ? "the KV projections are replicated so that each device has the KV head of its query group "
                                     "(Megatron accepts tp % kv_heads == 0; ColossalAI requires kv_heads % tp == 0); this costs "
                                     "their compute and memory on every device"
                                   : "neither divides the other: the KV projections are replicated";
            diag("divisibility-kv-heads", "warning",
                 std::to_string(kv) + " key/value heads do not divide the " + axis + " (" + std::to_string(n) + ") of mesh " +
                     mesh.shape_string() + ": " + what + "; alternatively cap tensor parallelism at " + std::to_string(kv) +
                     " and use the remaining devices for data or sequence parallelism",
                 locate({"n_kv_heads", "num_key_value_heads", "kv_heads", "n_kv", "kv"}, kv, model.modules[op.module].span));
          }
        }
      }
      if (op.kind == OpKind::Contract && op.inputs.size() >= 2) {
        int w = op.inputs[1];
        int param = flow.tensors[w].parameter;
        if (param < 0) continue;
        const auto& shape = flow.tensors[w].shape;
        double bytes = static_cast<double>(flow.tensors[w].numel()) * options.workload.dtype_bytes();
        if (bytes < 8.0 * 1024 * 1024) continue;  // small weights: replicating them is fine anyway
        bool any = false;
        for (size_t d = 0; d < shape.size(); ++d) any |= shape[d] % n == 0 && shape[d] >= n && d < 2;
        if (!any && shape.size() >= 2) {
          bool conv = op.equation.find('H') != std::string::npos;
          diag(conv ? "divisibility-channels" : "divisibility-features", "warning",
               model.parameters[param].name + " " + (conv ? "channels" : "features") + " (" + std::to_string(shape[0]) + " x " +
                   std::to_string(shape[1]) + ") do not divide the " + axis + " (" + std::to_string(n) + ") of mesh " +
                   mesh.shape_string() + ": it stays replicated; pad it to a multiple of " + std::to_string(n) + " to shard it",
               locate({"dim", "hidden", "ffn", "intermediate", "embd", "d_model", "channels", "ch", "width"}, shape[0] % n ? shape[0] : shape[1],
                      model.parameters[param].span));
        }
      }
      if (op.kind == OpKind::Embedding) {
        int w = op.inputs[1];
        const auto& shape = flow.tensors[w].shape;
        if (shape.size() == 2 && shape[0] % n != 0 && shape[1] % n != 0 && flow.tensors[w].parameter >= 0)
          diag("divisibility-vocab", "warning",
               "vocabulary " + std::to_string(shape[0]) + " does not divide the " + axis + " (" + std::to_string(n) + ") of mesh " +
                   mesh.shape_string() + ": the embedding stays replicated; pad the vocabulary to " + std::to_string((shape[0] + n - 1) / n * n),
               locate({"vocab"}, shape[0], model.parameters[flow.tensors[w].parameter].span));
      }
      if (op.kind == OpKind::Experts && op.sizes[0] % n != 0)
        diag("divisibility-experts", "information",
             std::to_string(op.sizes[0]) + " experts do not divide the " + axis + " (" + std::to_string(n) + ") of mesh " + mesh.shape_string() +
                 ": expert parallelism is not possible; experts are tensor-parallel inside or replicated",
             locate({"expert"}, op.sizes[0], model.modules[op.module].span));
    }
  }
  tag_mesh();
  phase("divisibility diagnostics");
  tails.finish();
  phase("describe meshes");
  // One layout for every mesh when possible.
  if (result.meshes.size() > 1) {
    size_t differing = 0;
    std::vector<std::string> examples;  // a few, as patterns
    const auto& first = result.meshes.front().parameters;
    std::vector<char> differs(first.size(), 0);
    for (size_t m = 1; m < result.meshes.size(); ++m) result.meshes[m].parameters.mark_differing(first, differs);
    for (size_t i = 0; i < differs.size(); ++i)
      if (differs[i]) {
        ++differing;
        if (examples.size() < 5 && differing < 256) {
          std::string pattern = module_pattern(model.parameters[i].name);
          if (std::find(examples.begin(), examples.end(), pattern) == examples.end()) examples.push_back(pattern);
        }
      }
    if (differing == 0) {
      result.notes.push_back("the same layout holds on every requested mesh");
    } else {
      std::string list;
      for (size_t k = 0; k < examples.size() && k < 4; ++k) list += (list.empty() ? "" : ", ") + examples[k];
      if (examples.size() > 4) list += ", ...";
      result.notes.push_back("no single layout is best on every requested mesh: " + std::to_string(differing) +
                             " parameters differ (" + list + "); each mesh uses its own plan");
    }
  }
  if (solver.truncated())
    result.notes.push_back("some module keeps many tensors alive at once; the search kept the " +
                           std::to_string(AxisSolver::kMaxStates) + " cheapest layouts there, so that part of the plan is not proven optimal");
  phase("other");
  if (timing) {
    for (auto& [name, ms] : phase_ms) std::fprintf(stderr, "plan phase %-26s %8.2f ms\n", name.c_str(), ms);
    std::fprintf(stderr, "plan search: %zu body results derived by shift, %zu derivations refused (counts since the planner was made)\n",
                 solver.derived(), solver.derivations_refused());
  }
  result.ok = true;
  spent_ = std::move(prep);
  result.plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace shardlens::plan
