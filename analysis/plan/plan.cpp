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
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
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
// --strategy tensor: what keeping a weight that must be tensor-parallel replicated costs the search
// (never reported): far above any plan's time difference, so it is a rule, not a trade.
constexpr double kReplicationUs = 1e7;
// Weights below this are "too small to matter" for --strategy tensor (a router: hidden x experts,
// 2048 x 60 in bf16 is 240 KiB; BERT-large's smallest projection is 2 MiB).
constexpr double kTinyWeightBytes = 512.0 * 1024;
const std::string kOutput = "output";

// The cost model's error band, as a fraction of the fastest plan's estimated time: plans this
// close are not told apart by the estimate, so the objective's second and third keys (fewer
// collectives, then fewer bytes) decide among them. Source: tt-metal tech_reports/CCLs/
// CCL_bandwidth.md, whose fitted α-β constants we use (SHARDING.md §4): measured asymptotes spread
// over 84–94% of line rate on lines and 66–83% on rings, and Wormhole rings run 1.5–1.8× a line
// where the model says 2×; ±10% of the bandwidth term is the spread those fits leave.
constexpr double kEstimateErrorBand = 0.10;
// The rows' modes that give them a parallelism of their own (issue 37, item 3).
const char* const kExpertRowsMode = "expert parallel over 'batch' rows, tensor parallel on 'model'";
const char* const kSequenceRowsMode = "sequence parallel over 'batch' rows, tensor parallel on 'model'";

// Why the sequence cannot be split over the rows as the planner models it ("" when it can): the
// sequence must divide them, and every op that mixes positions must be attention the planner
// sees (scaled_dot_product_attention, which gathers keys and values): a hand-written QKᵀ (two
// activations multiplied) or a convolution inside the network (a halo exchange tt-mlir cannot
// lower, #8216) would need more. A patchifying convolution on the model's input is a stem, not
// a mixer.
std::string sequence_rows_obstacle(const ir::ModelIR& model, const ir::Dataflow& flow, const Prepared& prep, int rows, const Workload& w) {
  if (w.seq % rows != 0) return "the sequence (" + std::to_string(w.seq) + ") does not divide the " + std::to_string(rows) + " rows";
  bool attention = false;
  for (const auto& op : flow.ops) {
    attention |= op.kind == OpKind::Attention;
    if (op.kind != OpKind::Contract || op.inputs.size() < 2) continue;
    if (op.is_convolution()) {
      if (prep.producer[op.inputs[0]] >= 0)
        return "a convolution inside the network (" + module_pattern(model.modules[static_cast<size_t>(std::max(0, op.module))].name) +
               ") would need its neighbours' rows (a halo exchange; tt-mlir #8216)";
      continue;
    }
    if (!prep.stored[op.inputs[0]] && !prep.stored[op.inputs[1]] && prep.producer[op.inputs[0]] >= 0 && prep.producer[op.inputs[1]] >= 0)
      return "a product of two activations (" + module_pattern(model.modules[static_cast<size_t>(std::max(0, op.module))].name) +
             ", hand-written attention) would need the other rows' keys, which only scaled_dot_product_attention is modelled to gather";
  }
  if (!attention) return "no attention to split the sequence for";
  return "";
}

// The strategy families compared on the model axis (each a filter of the search's strategy tags).
struct StrategyFamily {
  std::string name;
  uint16_t allowed;
  uint16_t experts;
  bool sharded_norms;
};

const std::vector<StrategyFamily>& strategy_families(bool has_experts) {
  static const std::vector<StrategyFamily> dense = {
      {"replicated", kTagReplicated, kTagAll, false},
      {"tensor parallel (Megatron)", kTagReplicated | kTagTensor | kTagExpertTensor, kTagAll, false},
      {"sequence parallel (Megatron SP)", kTagAll, kTagAll, true},
      {"data parallel", kTagReplicated | kTagBatch, kTagAll, false},
  };
  static const std::vector<StrategyFamily> moe = [] {
    auto all = dense;
    all.push_back({"expert parallel (all-to-all dispatch and combine)", kTagAll, kTagExpertAllToAll, false});
    all.push_back({"expert parallel (replicated tokens, combined by all-reduce)", kTagAll, kTagExpertLocal, false});
    all.push_back({"tensor parallel inside each expert", kTagAll, kTagExpertTensor, false});
    return all;
  }();
  return has_experts ? moe : dense;
}

// Whether the user's --strategy leaves a family among the candidates: `tensor` keeps only tensor
// parallelism (a replicated plan is not what it asks for).
bool strategy_admits(StrategyMode mode, const StrategyFamily& f) {
  if (mode == StrategyMode::Auto) return true;
  return f.allowed == (kTagReplicated | kTagTensor | kTagExpertTensor) && !f.sharded_norms;
}

// Why no plan dispatches tokens to whole experts by all-to-all: the first obstacle that holds.
std::string expert_parallel_obstacle(const ir::ModelIR& model, const ir::Dataflow& flow, const std::vector<int>& sized_ops, int n) {
  for (const int i : sized_ops) {
    const auto& op = flow.ops[static_cast<size_t>(i)];
    if (op.kind != OpKind::Experts || op.sizes.empty()) continue;
    const std::string where = op.module >= 0 ? " (" + model.modules[op.module].name + ")" : "";
    if (op.sizes[0] % n != 0)
      return std::to_string(op.sizes[0]) + " experts" + where + " do not divide the " + std::to_string(n) + " devices of the axis";
    const auto& shape = flow.tensors[op.inputs[0]].shape;
    bool divisible = false;
    std::string dims;
    for (size_t d = 0; d + 1 < shape.size(); ++d) {
      divisible |= shape[d] % n == 0 && shape[d] >= n;
      dims += (dims.empty() ? "" : " x ") + std::to_string(shape[d]);
    }
    if (!divisible)
      return "needs the tokens split over the axis: no token dim of the experts' input" + where + " (" + dims +
             ") divides the " + std::to_string(n) + " devices";
  }
  return "no layout of this kind exists for this model";
}

// Why `alt` lost to `chosen`: every clause is true of it (the choice rule is the one above).
std::string rejection_reason(const Totals& alt, const Totals& chosen, const std::string& excluded, bool fits, double band_us,
                             double fastest_us) {
  std::ostringstream why;
  if (!excluded.empty()) why << excluded << "; ";
  const double dt = alt.est_time_us - chosen.est_time_us;
  if (dt > 0) why << format_us(dt) << " slower per forward (" << format_us(alt.est_time_us) << " vs " << format_us(chosen.est_time_us) << ")";
  else if (dt < 0) why << format_us(-dt) << " faster by the estimate (" << format_us(alt.est_time_us) << " vs " << format_us(chosen.est_time_us) << ")";
  else why << "as fast by the estimate";
  if (alt.collectives != chosen.collectives) {
    why << (dt < 0 && alt.collectives > chosen.collectives ? " but " : "; ") << alt.collectives << " collectives instead of " << chosen.collectives;
  } else if (std::llround(alt.bytes) != std::llround(chosen.bytes)) {
    why << (dt < 0 && alt.bytes > chosen.bytes ? " but " : "; ") << "the same " << alt.collectives << " collectives moving " << format_bytes(alt.bytes)
        << " instead of " << format_bytes(chosen.bytes);
  }
  const bool fewer = alt.collectives < chosen.collectives || (alt.collectives == chosen.collectives && alt.bytes < chosen.bytes);
  if (!fits) why << "; does not fit in DRAM (" << format_bytes(alt.memory_per_device_bytes) << " per device)";
  else if (excluded.empty() && dt <= 0)
    why << " — within the cost model's ±" << static_cast<int>(kEstimateErrorBand * 100) << "% error band (" << format_us(band_us)
        << " of the fastest plan's " << format_us(fastest_us) << "), where fewer collectives, then fewer bytes, win (SHARDING.md §1)";
  else if (excluded.empty() && fewer)
    why << " — more than the error band (" << format_us(band_us) << ") slower than the fastest plan (" << format_us(fastest_us)
        << "): time decides there";
  return why.str();
}

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

  Context base_context(const Mesh& mesh, size_t mesh_index) const {
    Context c;
    c.n = mesh.cols;
    c.topology = mesh.col_topology;
    c.hw = opt_.hardware;
    c.workload = opt_.workload;
    c.ccl_penalty_us = kCclDecisionWeightUs;
    if (opt_.strategy == StrategyMode::Tensor) {
      c.filter.allowed = kTagReplicated | kTagTensor | kTagExpertTensor;
      megatron_rule(c, mesh.cols);
    }
    c.unpinned_replicated = opt_.evaluate_pins_only;
    const auto* mesh_pins = mesh_index < opt_.pinned_parameters_per_mesh.size() ? &opt_.pinned_parameters_per_mesh[mesh_index] : nullptr;
    if (!opt_.pinned_parameters.empty() || (mesh_pins && !mesh_pins->empty())) {
      // By name through an index: a report pins thousands of parameters of a large model.
      std::unordered_map<std::string_view, int> index;
      for (size_t i = 0; i < model_.parameters.size(); ++i) index.emplace(model_.parameters[i].name, static_cast<int>(i));
      for (const auto* pins : {&opt_.pinned_parameters, mesh_pins})
        if (pins)
          for (auto& [name, layout] : *pins)
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

  // --strategy tensor (issue 3's definition): every linear layer on the token stream whose weight
  // splits evenly over the axis is tensor-parallel. Left to the cost model: tiny weights (routers),
  // layers on a per-sample vector (timestep and conditioning MLPs, adaLN), convolutions, and
  // embeddings (vocab-parallel only where it pays): the consensus shards none of them by rule
  // (SHARDING.md §7). A conv front end that makes the token stream is kept whole, as the consensus
  // keeps it: split, its channels are gathered again before the first norm.
  // --strategy tensor's rule on a context: the layers it names must take their Megatron layout.
  void megatron_rule(Context& c, int n) const {
    c.tensor_required = tensor_required(n);
    c.replication_us = kReplicationUs;
    c.tensor_required_hash = 0;
    for (size_t i = 0; i < c.tensor_required->size(); ++i)
      if ((*c.tensor_required)[i] != -1) c.tensor_required_hash = ir::mix64(c.tensor_required_hash + 1, i * 256 + static_cast<uint8_t>((*c.tensor_required)[i]));
  }

  // Per parameter: the dim --strategy tensor shards it on (-1: left to the cost model;
  // kRequiredReplicated: kept whole as the consensus keeps it; +64: as
  // concatenated segments, a fused q/k/v whose output is split after the matmul). Megatron's
  // pairing: a layer reading the residual stream (hidden features) is column-parallel (its output
  // features split); a layer reading what a column layer or attention produced (FFN features,
  // merged heads) is row-parallel (its input features split), so each pair costs one all-reduce.
  std::shared_ptr<const std::vector<int8_t>> tensor_required(int n) const {
    auto out = std::make_shared<std::vector<int8_t>>(model_.parameters.size(), -1);
    const auto& flow = model_.dataflow;
    std::set<int64_t> vocabularies;  // an LM head (a contraction over an embedding's rows) is vocab-parallel only where it pays
    for (const auto& op : flow.ops)
      if (op.kind == OpKind::Embedding && op.inputs.size() > 1 && !flow.tensors[op.inputs[1]].shape.empty() &&
          std::find(flow.inputs.begin(), flow.inputs.end(), op.inputs[0]) != flow.inputs.end())  // token ids, not positions
        vocabularies.insert(flow.tensors[op.inputs[1]].shape[0]);
    // The heads an attention core splits its input into: the heads dim of its first input (the
    // query, or the probabilities a hand-written softmax(QKᵀ)V multiplies); 0 when none is named.
    auto heads_of = [&](int op_index) -> int64_t {
      const auto& op = flow.ops[static_cast<size_t>(op_index)];
      if (op.inputs.empty()) return 0;
      const auto roles = prep_.roles[static_cast<size_t>(op.inputs[0])];
      for (size_t d = 0; d < roles.size(); ++d)
        if (roles[d] == Role::Heads) return flow.tensors[op.inputs[0]].shape[d];
      return 0;
    };
    // The attention core an activation comes from (through reshapes and transposes: merged heads),
    // or -1.
    auto attention_before = [&](int t) {
      for (int hops = 0; hops < 8 && t >= 0; ++hops) {
        const int p = prep_.producer[t];
        if (p < 0) return -1;
        const auto& pop = flow.ops[static_cast<size_t>(p)];
        if (pop.kind == OpKind::Attention) return p;
        if (pop.kind == OpKind::Contract && pop.inputs.size() >= 2 && flow.tensors[pop.inputs[1]].parameter < 0) {
          // softmax(QKᵀ) @ V written out, the probabilities cast or dropped out on the way
          int w = pop.inputs[0];
          for (int steps = 0; steps < 3 && prep_.producer[w] >= 0 && flow.ops[static_cast<size_t>(prep_.producer[w])].kind == OpKind::Scale; ++steps)
            w = flow.ops[static_cast<size_t>(prep_.producer[w])].inputs[0];
          if (prep_.producer[w] >= 0 && flow.ops[static_cast<size_t>(prep_.producer[w])].kind == OpKind::Softmax) return p;
        }
        if (pop.kind != OpKind::Reshape && pop.kind != OpKind::Permute && pop.kind != OpKind::Scale) return -1;
        t = pop.inputs.empty() ? -1 : pop.inputs[0];
      }
      return -1;
    };
    // The heads of the attention core a projection's output feeds (through head splits, rotary
    // embeddings and a fused q/k/v's split): the ones its own view makes (GQA's key / value heads,
    // before their repeat), else the core's; 0 when it feeds none. Forward over shape-moving and
    // elementwise ops only, so an FFN (which reaches the next layer through a weight) never gets there.
    auto heads_after = [&](int t) -> int64_t {
      std::vector<int> frontier{t};
      std::vector<int> seen;  // few: a linear search beats a tree here (this runs per projection)
      int64_t own = 0;
      while (!frontier.empty() && seen.size() < 64) {
        const int at = frontier.back();
        frontier.pop_back();
        for (const int c : prep_.consumers(at)) {
          if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
          seen.push_back(c);
          const auto& cop = flow.ops[static_cast<size_t>(c)];
          if (cop.kind == OpKind::Attention) return own ? own : heads_of(c);
          if (cop.kind == OpKind::Contract) {
            const bool weights = std::any_of(cop.inputs.begin(), cop.inputs.end(), [&](int in) { return flow.tensors[in].parameter >= 0; });
            if (!weights) return own ? own : heads_of(c);  // QKᵀ written out
            continue;
          }
          if (cop.kind == OpKind::Reshape && !own && !cop.outputs.empty()) {
            const auto roles = prep_.roles[static_cast<size_t>(cop.outputs[0])];
            for (size_t d = 0; d < roles.size() && !own; ++d)
              if (roles[d] == Role::Heads) own = flow.tensors[cop.outputs[0]].shape[d];
          }
          // (a q/k norm over the projection's features too: Wan, Qwen3)
          if (cop.kind == OpKind::Reshape || cop.kind == OpKind::Permute || cop.kind == OpKind::Split || cop.kind == OpKind::Scale ||
              cop.kind == OpKind::Add || cop.kind == OpKind::Mul || cop.kind == OpKind::Concat || cop.kind == OpKind::Repeat ||
              cop.kind == OpKind::Norm)
            for (const int o : cop.outputs)
              if (!prep_.residual_stream[static_cast<size_t>(o)]) frontier.push_back(o);  // back on the stream: no head of its own
        }
      }
      return 0;
    };
    // What a view that only merges or splits leading dims (the features last, unchanged) was made
    // of, through any number of such views.
    auto unflattened = [&](int t) {
      for (int hops = 0; hops < 4; ++hops) {
        const int p = prep_.producer[static_cast<size_t>(t)];
        if (p < 0) break;
        const auto& pop = flow.ops[static_cast<size_t>(p)];
        if (pop.kind != OpKind::Reshape || pop.inputs.empty()) break;
        const auto &from = flow.tensors[pop.inputs[0]].shape, &to = flow.tensors[t].shape;
        if (from.empty() || to.empty() || from.back() != to.back()) break;
        t = pop.inputs[0];
      }
      return t;
    };
    // A conv front end: convolutions whose output, channels moved last (a permute on the way),
    // becomes the residual stream's tokens (ViT's patch embedding, Whisper's two convs). The
    // consensus keeps them whole; a VAE's convs, read by norms channels-first, are not one.
    auto makes_token_stream = [&](const ir::Op& conv) {
      if (conv.outputs.empty() || flow.tensors[conv.outputs[0]].shape.size() < 3) return false;
      const int64_t channels = flow.tensors[conv.outputs[0]].shape[1];
      std::vector<std::pair<int, bool>> frontier{{conv.outputs[0], false}};  // (tensor, a permute on the way)
      for (int hops = 0; hops < 8 && !frontier.empty(); ++hops) {
        std::vector<std::pair<int, bool>> next;
        for (const auto& [t, permuted] : frontier) {
          const auto& shape = flow.tensors[t].shape;
          if (permuted && prep_.residual_stream[static_cast<size_t>(t)] && !shape.empty() && shape.back() == channels) return true;
          for (const int c : prep_.consumers(t)) {
            const auto& cop = flow.ops[static_cast<size_t>(c)];
            const bool passes = cop.kind == OpKind::Unary || cop.kind == OpKind::Reshape || cop.kind == OpKind::Permute ||
                                cop.kind == OpKind::Add || cop.kind == OpKind::Scale || cop.kind == OpKind::Concat ||
                                (cop.kind == OpKind::Contract && cop.is_convolution());
            if (!passes || next.size() > 16) continue;
            for (const int o : cop.outputs) next.push_back({o, permuted || cop.kind == OpKind::Permute});
          }
        }
        frontier = std::move(next);
      }
      return false;
    };
    const bool stream_known = std::any_of(prep_.residual_stream.begin(), prep_.residual_stream.end(), [](char c) { return c != 0; });
    std::vector<int> split_of(flow.tensors.size(), -1);  // tensor -> a Split op that reads it
    for (size_t i = 0; i < flow.ops.size(); ++i)
      if (flow.ops[i].kind == OpKind::Split && !flow.ops[i].inputs.empty()) split_of[static_cast<size_t>(flow.ops[i].inputs[0])] = static_cast<int>(i);
    for (size_t i = flow.ops.size(); i-- > 0;)  // through a bias add (HF Conv1D: x @ W + b, then split)
      if (const auto& a = flow.ops[i]; a.kind == OpKind::Add && !a.outputs.empty() && !a.inputs.empty() && split_of[static_cast<size_t>(a.outputs[0])] >= 0)
        split_of[static_cast<size_t>(a.inputs[0])] = split_of[static_cast<size_t>(a.outputs[0])];
    for (const auto& op : flow.ops) {
      if (op.kind != OpKind::Contract || op.inputs.size() < 2) continue;
      const std::string& eq = op.equation;
      if (op.is_convolution()) {
        if (const int w = op.inputs[1]; flow.tensors[w].parameter >= 0 && makes_token_stream(op))
          (*out)[static_cast<size_t>(flow.tensors[w].parameter)] = kRequiredReplicated;
        continue;
      }
      const auto& w = flow.tensors[op.inputs[1]];
      if (w.parameter < 0 || w.shape.size() < 2) continue;
      if (std::any_of(w.shape.begin(), w.shape.end(), [&](int64_t d) { return vocabularies.count(d) > 0; })) continue;
      if (static_cast<double>(w.numel()) * opt_.workload.dtype_bytes() < kTinyWeightBytes) continue;
      const size_t comma = eq.find(','), arrow = eq.find("->");
      if (comma == std::string::npos || arrow == std::string::npos) continue;
      const std::string x_letters = eq.substr(0, comma);
      const size_t w_end = eq.find(',', comma + 1) < arrow ? eq.find(',', comma + 1) : arrow;
      const std::string w_letters = eq.substr(comma + 1, w_end - comma - 1), out_letters = eq.substr(arrow + 2);
      const auto x_roles = prep_.roles[op.inputs[0]];
      // The activation carries a sequence (tokens, or the patches and frames a conv front end
      // makes: ViT's flattened grid, Whisper's frames), not one vector per sample. Asked of what the
      // layer's input was before a flattening view (HF Conv1D's x.view(-1, d): in decode that view
      // makes [1, d] of [1, 1, d], which no longer shows its token dim). A size-1 sequence dim is
      // one token picked out (BERT's pooler reads hidden_states[:, 0]), except in decode, where it
      // is the whole sequence.
      const int x_source = unflattened(op.inputs[0]);
      const auto& x_shape = flow.tensors[x_source].shape;
      const auto source_roles = prep_.roles[static_cast<size_t>(x_source)];
      bool stream = false;
      for (size_t d = 0; d < source_roles.size() && d < x_shape.size(); ++d) {
        const Role r = source_roles[d];
        stream |= r == Role::Spatial || ((r == Role::Seq || r == Role::Tokens) && (x_shape[d] > 1 || prep_.single_token));
      }
      for (size_t d = 1; !stream && d + 1 < x_shape.size(); ++d) stream = x_shape[d] > 1;
      if (!stream || w_letters.size() != w.shape.size()) continue;
      int column = -1, row = -1;
      Role contracted = Role::Other;
      for (size_t d = 0; d < w_letters.size(); ++d) {
        const char l = w_letters[d];
        const size_t in_x = x_letters.find(l);
        if (out_letters.find(l) != std::string::npos && in_x == std::string::npos) column = static_cast<int>(d);
        else if (in_x != std::string::npos && out_letters.find(l) == std::string::npos) {
          row = static_cast<int>(d);
          if (in_x < x_roles.size()) contracted = x_roles[in_x];
        }
      }
      // Where the residual stream is known (norms read it), a layer reads the stream when its input
      // is on it; otherwise by role: a conv front end's channels are the stream's features as the
      // hidden dim is a token embedding's.
      const int core_before = attention_before(op.inputs[0]);  // merged heads: what a row layer reads
      // A projection into an attention's heads from elsewhere (cross-attention's keys and values
      // from a text encoder's states) is column-parallel like q.
      const bool reads_stream = (stream_known ? prep_.residual_stream[static_cast<size_t>(x_source)] != 0
                                              : stream_feature(contracted) && core_before < 0) ||
                                (core_before < 0 && !op.outputs.empty() && heads_after(op.outputs[0]) > 0);
      const int dim = reads_stream ? column : row;
      if (dim < 0 || w.shape[static_cast<size_t>(dim)] % n != 0) continue;
      // Attention's projections split by heads: where the heads do not divide the axis, a split of
      // the features cuts heads apart, and the consensus keeps such attention whole (or pads it).
      if (!op.outputs.empty()) {
        const int64_t heads = reads_stream ? heads_after(op.outputs[0]) : core_before >= 0 ? heads_of(core_before) : 0;
        if (heads > 0 && heads % n != 0) continue;
      }
      // q, k and v concatenated on the output features and split after the matmul (into equal parts
      // on that last dim): each device needs its share of every segment.
      bool segments = false;
      if (reads_stream && !op.outputs.empty())
        if (const int sp = split_of[static_cast<size_t>(op.outputs[0])]; sp >= 0) {
          const auto& split = flow.ops[static_cast<size_t>(sp)];
          const int rank = static_cast<int>(flow.tensors[op.outputs[0]].shape.size());
          segments = split.sizes.size() > 1 && !split.dims.empty() && (split.dims[0] == rank - 1 || split.dims[0] == -1);
        }
      (*out)[static_cast<size_t>(w.parameter)] = static_cast<int8_t>(dim + (segments ? 64 : 0));
    }
    return out;
  }

  static Spec parse_layout(const std::string& s) {
    if (s.rfind("shard:", 0) == 0) return Spec::S(std::stoi(s.substr(6)));
    if (s.rfind("segments:", 0) == 0) {
      const size_t colon = s.find(':', 9);
      return Spec::Seg(std::stoi(s.substr(9)), colon == std::string::npos ? 1 : std::stoi(s.substr(colon + 1)));
    }
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
  for (const auto& site : flow.failed_assertions)
    result.diagnostics.push_back({"assertion-failed", "warning",
                                  "this assertion is false for the model as built, on the planned workload: the model would raise "
                                  "AssertionError here; the trace went on past it (as `python -O` runs), so check the value it tests "
                                  "(often a serving limit such as a maximum batch size that the loader left at its default)",
                                  site, ""});
  // Unknown ops: the planner keeps tensors whole around them.
  std::set<std::string> unknown_seen;
  std::vector<int> sized_ops;  // the ops whose sizes the divisibility checks read, found in the same pass
  for (const auto& op : flow.ops) {
    if (op.kind == OpKind::Attention || op.kind == OpKind::Softmax || op.kind == OpKind::Contract || op.kind == OpKind::Embedding ||
        op.kind == OpKind::Experts)
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
          c.axis = e.rows_axis ? "batch" : chosen.axes.size() > 1 ? "batch,model" : "model";
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
  // Per attention op (SDPA, or the softmax a hand-written softmax(QKᵀ)V normalises): its heads
  // (the query's dims with the heads role) and, for GQA / MQA, its key/value heads before their
  // repeat beside the query's heads on that dim. Model-only: every mesh's blockers and
  // divisibility diagnostics read it.
  struct AttentionHeads {
    std::vector<int64_t> heads;
    int64_t kv = 0, query_heads = 0;
  };
  std::unordered_map<int, AttentionHeads> attention_heads;
  for (const int i : sized_ops) {
    const auto& op = flow.ops[static_cast<size_t>(i)];
    if (op.kind != OpKind::Attention && op.kind != OpKind::Softmax) continue;
    AttentionHeads h;
    const int q = op.inputs[0];
    for (size_t d = 0; d < prep->roles[q].size(); ++d)
      if (prep->roles[q][d] == Role::Heads) h.heads.push_back(flow.tensors[q].shape[d]);
    if (op.kind == OpKind::Attention)
      if (const int pr = prep->producer[op.inputs[1]]; pr >= 0 && flow.ops[pr].kind == OpKind::Repeat) {
        const int hd = flow.ops[pr].dims.empty() ? 1 : flow.ops[pr].dims[0];
        h.kv = flow.tensors[flow.ops[pr].inputs[0]].shape[hd];
        h.query_heads = flow.tensors[q].shape[hd];
      }
    attention_heads.emplace(i, std::move(h));
  }
  // Routed experts as stacked weights ([experts, in, out], indexed per expert in a loop: HF
  // Mixtral / Qwen2-MoE): the experts a router's top-k picks among are the stacked weights' dim 0.
  // Per count of experts, where the first such weight is made. Model-only: every mesh's
  // divisibility diagnostics read it.
  std::map<int64_t, ir::Span> stacked_experts;
  std::set<int64_t> router_widths;
  for (const auto& op : flow.ops) {
    if (op.kind != OpKind::TopK || op.inputs.empty()) continue;
    for (int t = op.inputs[0], hops = 0; hops < 4 && t >= 0 && prep->producer[static_cast<size_t>(t)] >= 0; ++hops) {
      const auto& pop = flow.ops[static_cast<size_t>(prep->producer[static_cast<size_t>(t)])];
      if (pop.kind == OpKind::Contract && pop.inputs.size() >= 2 && flow.tensors[pop.inputs[1]].parameter >= 0) {
        const auto& router = flow.tensors[pop.inputs[1]].shape;
        if (!router.empty() && router[0] > 1) router_widths.insert(router[0]);
        break;
      }
      if (pop.kind != OpKind::Softmax && pop.kind != OpKind::Unary && pop.kind != OpKind::Scale) break;
      t = pop.inputs.empty() ? -1 : pop.inputs[0];
    }
  }
  if (!router_widths.empty())
    for (const auto& param : model.parameters)
      if (param.shape.size() == 3 && router_widths.count(param.shape[0])) stacked_experts.try_emplace(param.shape[0], param.span);
  // Pipeline parallelism (issue 37, item 2; SHARDING.md §3): contiguous stages of the root's
  // items over the rows, tensor parallel inside each stage over the columns, or on one axis over
  // its devices, one device per stage; the workload's batch flows through as microbatches. A
  // stage's time is its items' time for one microbatch (the axis solved with 1/m of the
  // activations, as data parallel rows are); activations cross each boundary point-to-point,
  // costed as a 2-device gather of the same α-β fits; GPipe's schedule takes (m + p - 1) stage
  // steps, so (p - 1) / (m + p - 1) of the step is bubble.
  // The units pipeline stages are cut from: the root's items, a call that runs a stack of blocks
  // (three or more calls of one body: a LlamaModel holding its layers, not a layer's two norms)
  // opened into its own items, so that stages end between blocks; the blocks are the units that
  // call the body most units call. Model-only: found once, at the first mesh that asks.
  struct PipelineUnits {
    std::vector<int> units;           // root-level op of each unit
    std::vector<int> unit_of_op;      // op -> its unit (-1: none)
    std::vector<char> is_block;       // per unit
  };
  std::optional<PipelineUnits> pipeline_units;
  auto find_pipeline_units = [&]() {
    PipelineUnits pu;
    auto callee_of = [&](int op) { return flow.ops[static_cast<size_t>(op)].kind == OpKind::Call ? prep->body_of_op[static_cast<size_t>(op)] : -1; };
    std::function<void(int, int)> open = [&](int body, int depth) {
      for (const int item : prep->bodies[static_cast<size_t>(body)].items) {
        const int callee = callee_of(item);
        bool repeats = false;
        if (callee >= 0 && depth < 4) {
          std::map<uint64_t, int> seen;
          for (const int inner : prep->bodies[static_cast<size_t>(callee)].items)
            if (const int b = callee_of(inner); b >= 0) repeats |= ++seen[prep->bodies[static_cast<size_t>(b)].signature] >= 3;
        }
        if (repeats) open(callee, depth + 1);
        else pu.units.push_back(item);
      }
    };
    open(root_body, 0);
    pu.unit_of_op.assign(flow.ops.size(), -1);
    std::map<uint64_t, int> calls;
    std::vector<uint64_t> signature(pu.units.size(), 0);
    for (size_t u = 0; u < pu.units.size(); ++u) {
      std::fill(pu.unit_of_op.begin() + pu.units[u], pu.unit_of_op.begin() + end_of(pu.units[u]), static_cast<int>(u));
      if (const int b = callee_of(pu.units[u]); b >= 0) ++calls[signature[u] = prep->bodies[static_cast<size_t>(b)].signature];
    }
    const uint64_t block = calls.empty() ? 0 : std::max_element(calls.begin(), calls.end(), [](auto& x, auto& y) { return x.second < y.second; })->first;
    pu.is_block.resize(pu.units.size());
    for (size_t u = 0; u < pu.units.size(); ++u) pu.is_block[u] = block != 0 && signature[u] == block;
    return pu;
  };
  auto pipeline_alternative = [&](const Mesh& mesh, const Context& base, const Solved* one_microbatch) -> std::optional<Alternative> {
    const bool over_rows = mesh.rows > 1;
    const int p = over_rows ? mesh.rows : mesh.cols;
    if (p < 2 || root.items.empty()) return std::nullopt;
    if (!pipeline_units) pipeline_units = find_pipeline_units();
    const std::vector<int>& units = pipeline_units->units;
    const std::vector<int>& unit_of_op = pipeline_units->unit_of_op;
    Alternative a;
    a.name = over_rows ? "pipeline parallel (" + std::to_string(p) + " stages over the 'batch' rows, tensor parallel inside each stage)"
                       : "pipeline parallel (" + std::to_string(p) + " stages over the devices of 'model', one device each)";
    a.stages = p;
    const size_t k = units.size();
    if (k < static_cast<size_t>(p)) {
      a.feasible = false;
      a.why_rejected = "the model has " + std::to_string(k) + " components to cut between: too few for " + std::to_string(p) + " stages";
      return a;
    }
    const int64_t batch = std::max<int64_t>(1, options.workload.batch);
    std::vector<int64_t> microbatch_counts;
    for (int64_t m = batch; m >= 1 && microbatch_counts.size() < 4; --m)
      if (batch % m == 0) microbatch_counts.push_back(m);
    bool have = false;
    for (const int64_t m : microbatch_counts) {
      Context c = base;
      if (!over_rows) {
        // One device per stage: nothing is split inside it, whatever other meshes pinned. (The
        // axis's replicated-only search costs exactly that, and is the replicated family's own
        // search when nothing is pinned: the memo answers it.)
        c.filter = Filter{kTagReplicated, kTagAll, false};
        c.pinned_params.clear();
        c.pinned_outputs.clear();
        c.preferred_params.reset();
        c.preferred_hash = 0;
        c.preference_us = 0;
        c.tensor_required.reset();
        c.tensor_required_hash = 0;
        c.replication_us = 0;
      }
      c.activation_scale = 1.0 / static_cast<double>(m);
      // One microbatch is the whole batch: a stage runs as the plan already searched for the
      // rows replicated (or, one device per stage, for everything replicated) does.
      Solved s = m == 1 && one_microbatch && one_microbatch->feasible ? *one_microbatch : planner.run(a.name, c, {"model"});
      if (!s.feasible) continue;
      planner.expand(s);
      const Evaluation ev = evaluate(*prep, s.ctx, s.sol);
      std::vector<double> item_us(k, 0), item_ccl_us(k, 0);
      for (size_t pos = 0; pos < k; ++pos)
        for (int op = units[pos]; op < end_of(units[pos]); ++op) item_us[pos] += ev.op_compute_us[static_cast<size_t>(op)];
      for (const auto& e : ev.events) {
        const size_t pos = e.op >= 0 && unit_of_op[static_cast<size_t>(e.op)] >= 0 ? static_cast<size_t>(unit_of_op[static_cast<size_t>(e.op)]) : k - 1;
        item_us[pos] += e.time_us;
        item_ccl_us[pos] += e.time_us;
      }
      // Contiguous stages with the smallest largest stage time: the least bound B whose greedy
      // cut (a new stage whenever the next unit would pass B) needs at most p stages, found by
      // bisection on B (linear in the units per probe, where a table over units x stages grows
      // with their square), then stages with more than one unit split until there are p.
      const double total_us = std::accumulate(item_us.begin(), item_us.end(), 0.0);
      auto greedy = [&](double bound, std::vector<size_t>* out) {
        size_t stages = 1;
        double in_stage = 0;
        if (out) out->assign(1, 0);
        for (size_t i = 0; i < k; ++i) {
          if (i > 0 && in_stage + item_us[i] > bound) {
            ++stages;
            in_stage = 0;
            if (out) out->push_back(i);
          }
          in_stage += item_us[i];
        }
        return stages;
      };
      double lo = *std::max_element(item_us.begin(), item_us.end()), hi = std::max(lo, total_us);
      for (int probe = 0; probe < 64 && hi - lo > 1e-9 * std::max(1.0, hi); ++probe) {
        const double mid = (lo + hi) / 2;
        if (greedy(mid, nullptr) <= static_cast<size_t>(p)) hi = mid;
        else lo = mid;
      }
      std::vector<size_t> starts;
      greedy(hi, &starts);
      while (starts.size() < static_cast<size_t>(p)) {  // k >= p: some stage has two units or more
        for (size_t g = starts.size(); g-- > 0;) {
          const size_t end = g + 1 < starts.size() ? starts[g + 1] : k;
          if (end - starts[g] >= 2) {
            starts.insert(starts.begin() + static_cast<std::ptrdiff_t>(g) + 1, end - 1);
            break;
          }
        }
      }
      double stage_us = 0, send_us = 0, send_bytes = 0, stage_ccl_us = 0;
      for (size_t g = 0; g < starts.size(); ++g) {
        const size_t end = g + 1 < starts.size() ? starts[g + 1] : k;
        double time = 0, ccl = 0;
        for (size_t i = starts[g]; i < end; ++i) {
          time += item_us[i];
          ccl += item_ccl_us[i];
        }
        stage_us = std::max(stage_us, time);
        stage_ccl_us = std::max(stage_ccl_us, ccl);
        if (g + 1 == starts.size()) continue;
        const auto& outputs = flow.ops[static_cast<size_t>(units[end - 1])].outputs;
        const double bytes = outputs.empty() ? 0 : tensor_bytes(*prep, outputs[0], c);
        send_bytes += bytes;
        send_us = std::max(send_us, ccl_time_us(hw, Ccl::AllGather, 2, Topology::Line, 2 * bytes));
      }
      const double steps = static_cast<double>(m + p - 1);
      Totals t;
      t.est_time_us = steps * (stage_us + send_us);
      t.ccl_us = steps * (stage_ccl_us + send_us);
      t.compute_us = t.est_time_us - t.ccl_us;
      t.collectives = s.totals.collectives * static_cast<int>(m) + (p - 1) * static_cast<int>(m);
      t.bytes = (s.totals.bytes + send_bytes) * static_cast<double>(m);
      t.compute_parallel_fraction = s.totals.compute_parallel_fraction;
      // Each stage keeps its own components' weights (about 1/p of them) and every microbatch's cache.
      t.parameter_bytes_per_device = s.totals.parameter_bytes_per_device / p;
      t.kv_cache_bytes_per_device = s.totals.kv_cache_bytes_per_device * static_cast<double>(m) / p;
      t.memory_per_device_bytes = t.parameter_bytes_per_device + t.kv_cache_bytes_per_device;
      if (have && t.est_time_us >= a.totals.est_time_us) continue;
      have = true;
      a.totals = t;
      a.microbatches = static_cast<int>(m);
      a.bubble_fraction = static_cast<double>(p - 1) / steps;
      a.stage_spans.clear();
      auto item_name = [&](size_t pos) {
        const auto& op = flow.ops[static_cast<size_t>(units[pos])];
        return op.module > 0 ? model.modules[static_cast<size_t>(op.module)].name : op.name;
      };
      a.blocks_per_stage.clear();
      for (size_t g = 0; g < starts.size(); ++g) {
        const size_t end = g + 1 < starts.size() ? starts[g + 1] : k;
        a.stage_spans.push_back(end - starts[g] == 1 ? item_name(starts[g]) : item_name(starts[g]) + " .. " + item_name(end - 1));
        int blocks = 0;
        for (size_t pos = starts[g]; pos < end; ++pos) blocks += pipeline_units->is_block[pos];
        a.blocks_per_stage.push_back(blocks);
      }
    }
    if (!have) {
      a.feasible = false;
      a.why_rejected = "no layout satisfies the constraints inside a stage";
      return a;
    }
    char bubble[64];
    std::snprintf(bubble, sizeof bubble, "%.0f%%", 100 * a.bubble_fraction);
    a.why_rejected = std::to_string(a.microbatches) + " microbatch" + (a.microbatches == 1 ? "" : "es") + " through " + std::to_string(p) +
                     " stages leave " + bubble + " of the step idle (bubble (p-1)/(m+p-1), GPipe)";
    if (a.microbatches == 1)
      a.why_rejected += ": a batch of 1 is one microbatch, so each stage waits for the one before it and the stages never overlap";
    return a;
  };
  result.meshes.reserve(options.meshes.size());  // tails write into their mesh's slot
  MeshTails tails;  // after everything its tasks refer to: unwinding waits for them first
  for (const Mesh& mesh : options.meshes) {
    tag_mesh();
    current_mesh = mesh.shape_string();
    phase("other");
    MeshPlan mp;
    mp.mesh = mesh;
    Context base = planner.base_context(mesh, static_cast<size_t>(&mesh - options.meshes.data()));
    if (!preferred->empty() && !options.meshes_independent) {
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
      if (!experts_around.empty()) {
        // Expert parallel over the rows, the columns split inside each expert as the search decides
        // (SHARDING.md §7: "tensor-parallel inside each expert, or expert-parallel" — here both, one
        // per axis). The rows hold their own share of the batch when it divides them (dispatch
        // and combine all-to-all), else every row has every token (one all-reduce combines).
        Context ep = base;
        ep.expert_rows = mesh.rows;
        ep.row_topology = mesh.row_topology;
        if (options.workload.batch % mesh.rows == 0) ep.activation_scale = 1.0 / mesh.rows;
        Solved s = planner.run(kExpertRowsMode, ep, {"model"});
        if (!s.feasible) s.infeasible_why = "the experts of a list do not divide the " + std::to_string(mesh.rows) + " rows";
        modes.push_back(std::move(s));
      }
      if (options.workload.phase == Phase::Prefill) {
        // Sequence parallel over the rows, tensor parallel over the columns (the Wan 2.2 DiT's TP4 x
        // SP on Galaxy, SHARDING.md §7): each row holds a consecutive piece of every sequence, and
        // attention gathers the other rows' keys and values.
        Solved s;
        s.name = kSequenceRowsMode;
        const std::string obstacle = sequence_rows_obstacle(model, flow, *prep, mesh.rows, options.workload);
        if (obstacle.empty()) {
          Context sp = base;
          sp.sequence_rows = mesh.rows;
          sp.row_topology = mesh.row_topology;
          sp.activation_scale = 1.0 / mesh.rows;
          s = planner.run(kSequenceRowsMode, sp, {"model"});
        } else {
          s.infeasible_why = obstacle;
        }
        modes.push_back(std::move(s));
      }
      Context two = base;
      two.n = mesh.rows * mesh.cols;
      two.rows = mesh.rows;
      two.row_topology = mesh.row_topology;
      modes.push_back(planner.run("2-D tensor parallel over ('batch', 'model')", two, {"batch", "model"}));
    }
    const size_t mesh_index = static_cast<size_t>(&mesh - options.meshes.data());
    if (mesh_index < options.rows_mode_per_mesh.size() && !options.rows_mode_per_mesh[mesh_index].empty()) {
      const std::string& kept = options.rows_mode_per_mesh[mesh_index];
      for (auto& m : modes)
        if (m.name != kept && m.feasible) {
          m.feasible = false;
          m.infeasible_why = "the weights live as the decode plan's rows mode (" + kept + ") places them";
        }
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
    std::optional<Totals> fast_totals;  // set when memory forces a slower layout: the fastest one's figures
    // Memory: the fastest layout must fit; otherwise trade speed for memory, loudly.
    double dram = hw.dram_bytes * kUsableDramFraction;
    // The fastest plan of a mode that fits, trading speed for memory (false: none of its layouts fits;
    // `out` then says how little the smallest needs).
    auto fit_in_mode = [&](const Solved& start, Solved& out, bool& fits) {
      out = start;
      // The smallest-memory plan first (a heavy weight on bytes kept per device); if even that does
      // not fit, say so. Otherwise search the weight (log scale) for the fastest plan that fits.
      double base = out.totals.est_time_us / std::max(1.0, out.totals.parameter_bytes_per_device);
      // The weight lives on a fixed grid (quarter powers of two around a power-of-two base), so a
      // re-plan after an edit asks for the same weights again and the solver's memo answers for
      // every unchanged body; the grid step of the last search is tried first.
      double grid_base = std::exp2(std::round(std::log2(std::max(base, 1e-30))));
      auto lambda_at = [&](int k) { return grid_base * std::exp2(k / 4.0); };
      auto solve_with = [&](int k) {
        Context c = out.ctx;
        c.memory_lambda = lambda_at(k);
        return planner.run(out.name, c, out.axes);
      };
      auto fits_in = [&](const Solved& s) { return s.feasible && s.totals.memory_per_device_bytes <= dram; };
      int k_lo = -40, k_hi = 54;  // about base * 1e-3 .. base * 1e4
      std::string cache_key = mesh.shape_string() + "|" + out.name + "|" + std::to_string(grid_base);
      fits = false;
      Solved smallest;
      auto cached = memory_steps_.find(cache_key);
      if (cached != memory_steps_.end()) {
        Solved at = solve_with(cached->second);
        if (fits_in(at)) {
          Solved below = solve_with(cached->second - 1);
          if (!fits_in(below)) {
            out = at;
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
          out = smallest;
          int best_k = k_hi;
          // The smallest grid step whose plan fits (memory falls as the weight grows). Each plan
          // at weight λ minimises time + λ·memory, so the plans are vertices of the lower convex
          // hull of (memory, time) and the next vertex between a plan that does not fit and one
          // that does is optimal from the weight where their sums are equal: probe the grid
          // there (usually 2-3 searches, where bisection of the grid takes 7). A probe that
          // finds a plan off the hull segment it aimed at and does not halve the interval is
          // followed by a bisection, so it never takes more than twice bisection's count.
          struct Point {
            double memory = 0, time = 0;  // the search's memory term and its cost without it
          };
          auto point = [](const Solved& s, double lambda) {
            return Point{s.sol.totals.parameter_bytes, s.sol.cost - lambda * s.sol.totals.parameter_bytes};
          };
          auto same = [](const Point& a, const Point& b) {
            return std::abs(a.memory - b.memory) < 1 && std::abs(a.time - b.time) <= 1e-9 * std::max(1.0, std::abs(a.time));
          };
          Point below = point(start, 0), above = point(smallest, lambda_at(k_hi));
          bool bisect = false;
          while (k_hi - k_lo > 1) {
            int probe = (k_lo + k_hi) / 2;
            if (!bisect && start.feasible && below.memory > above.memory && above.time > below.time) {
              const double k_star = 4.0 * std::log2((above.time - below.time) / (below.memory - above.memory) / grid_base);
              if (std::isfinite(k_star)) probe = static_cast<int>(std::clamp<double>(std::floor(k_star), k_lo + 1, k_hi - 1));
            }
            const int width = k_hi - k_lo;
            Solved s = solve_with(probe);
            const Point at = point(s, lambda_at(probe));
            bool on_segment = false;
            if (fits_in(s)) {
              k_hi = probe;
              on_segment = same(at, above);
              above = at;
              if (s.totals.est_time_us < out.totals.est_time_us) {
                out = s;
                best_k = probe;
              }
            } else {
              k_lo = probe;
              on_segment = same(at, below);
              below = at;
            }
            bisect = !bisect && !on_segment && 2 * (k_hi - k_lo) > width;
          }
          memory_steps_[cache_key] = best_k;
        } else if (smallest.feasible) {
          out.totals.memory_per_device_bytes = std::min(out.totals.memory_per_device_bytes, smallest.totals.memory_per_device_bytes);
        }
      }
    };
    if (chosen.totals.memory_per_device_bytes > dram) {
      Solved fast = chosen;
      bool fits = false;
      Solved fitted;
      fit_in_mode(chosen, fitted, fits);
      // None of the chosen mode's layouts fits: the rows' mode decides how far the weights can be
      // split (over the columns only, or over both axes), so the other modes are tried, fastest
      // first, and the first that has a layout that fits is taken.
      if (!fits && modes.size() > 1) {
        std::vector<int> order;
        for (int i = 0; i < static_cast<int>(modes.size()); ++i)
          if (i != best && modes[i].feasible) order.push_back(i);
        std::sort(order.begin(), order.end(), [&](int a, int b) { return modes[a].sol.cost < modes[b].sol.cost; });
        for (const int i : order) {
          Solved other;
          bool other_fits = false;
          fit_in_mode(modes[i], other, other_fits);
          if (other_fits) {
            fits = true;
            fitted = std::move(other);
            best = i;
            break;
          }
          if (other.totals.memory_per_device_bytes < fitted.totals.memory_per_device_bytes) fitted.totals.memory_per_device_bytes = other.totals.memory_per_device_bytes;
        }
      }
      chosen = std::move(fitted);
      if (fits) {
        mp.memory_fallback = true;
        fast_totals = fast.totals;
      } else {
        result.diagnostics.push_back({"memory-does-not-fit", "error",
                                      "no layout on " + mesh.shape_string() + " fits in " + format_bytes(dram) +
                                          " per device (the smallest layout needs " + format_bytes(chosen.totals.memory_per_device_bytes) +
                                          "); use more devices or a smaller dtype",
                                      model.modules[0].span, ""});
      }
    }
    phase("modes + memory");
    // The candidates the objective chooses among: the other modes of the rows, and on the model
    // axis each strategy family's best plan. They are searched whether or not alternatives are
    // listed, so that the choice never depends on that (an editor lists them later).
    struct Candidate {
      Solved s;
      std::string mode;      // the rows' mode it runs in
      std::string excluded;  // why the user's --strategy leaves it out ("" when it is a candidate)
      std::string infeasible_why;
      bool listed = true;    // false: the same plan as another candidate, not listed twice
    };
    std::vector<Candidate> candidates;
    for (int i = 0; i < static_cast<int>(modes.size()); ++i)
      if (i != best) candidates.push_back({modes[i], modes[i].name, "", modes[i].feasible ? "" : modes[i].infeasible_why});
    if (mesh.cols > 1) {
      for (const StrategyFamily& alt : strategy_families(!experts_around.empty())) {
        Candidate cand;
        cand.mode = modes[best].name;
        cand.s.name = alt.name;
        if (!strategy_admits(options.strategy, alt))
          cand.excluded = "excluded by --strategy tensor (every component that splits evenly is tensor-parallel)";
        if (!cand.excluded.empty() && !options.alternatives) continue;  // neither a candidate nor listed
        if (alt.name == "data parallel" && options.workload.batch % chosen.ctx.n != 0) {
          cand.infeasible_why = "batch " + std::to_string(options.workload.batch) + " does not divide the " + std::to_string(chosen.ctx.n) +
                                " devices of the axis";
          candidates.push_back(std::move(cand));
          continue;
        }
        if (alt.sharded_norms && options.workload.phase == Phase::Decode) {
          cand.infeasible_why = "decode runs 1 token per sequence: there is no sequence to split";
          candidates.push_back(std::move(cand));
          continue;
        }
        // A family that admits the chosen plan and nothing outside the chosen filter has the chosen
        // plan as its best (the search is exact): it is the chosen plan, and needs no search.
        const Filter& f = chosen.ctx.filter;
        const Filter family{alt.allowed, alt.experts, alt.sharded_norms};
        // The Megatron family also follows --strategy tensor's pairing rule (planner.megatron_rule):
        // it is the consensus plan, costed, whatever the search chose.
        const bool megatron = alt.allowed == (kTagReplicated | kTagTensor | kTagExpertTensor);
        if (!family.sharded_norms && !f.sharded_norms && (family.allowed & ~f.allowed) == 0 &&
            (family.experts_allowed & ~f.experts_allowed) == 0 && chosen.sol.totals.admitted_by(family) &&
            (!megatron || chosen.ctx.replication_us > 0))
          continue;
        Context c = chosen.ctx;
        c.filter = family;
        if (megatron) planner.megatron_rule(c, chosen.ctx.n);
        if (c.hash() == chosen.ctx.hash()) continue;
        cand.s = planner.run(alt.name, c, chosen.axes);
        cand.s.name = alt.name;
        if (!cand.s.feasible) {
          const bool pinned = !options.pinned_parameters.empty() || !options.pinned_outputs.empty() ||
                              std::any_of(options.pinned_parameters_per_mesh.begin(), options.pinned_parameters_per_mesh.end(),
                                          [](const auto& pins) { return !pins.empty(); });
          cand.infeasible_why = pinned ? "not possible under the pinned layouts" : "no layout of this kind exists for this model";
          if (alt.experts == kTagExpertAllToAll && !pinned) cand.infeasible_why = expert_parallel_obstacle(model, flow, sized_ops, chosen.ctx.n);
        }
        candidates.push_back(std::move(cand));
      }
    }
    // The objective (SHARDING.md §1) applied to the choice: among the plans that fit whose
    // estimated time is within the cost model's error band of the fastest, fewer collectives win,
    // then fewer bytes; outside the band, time wins.
    auto fits_dram = [&](const Totals& t) { return t.memory_per_device_bytes <= dram; };
    std::vector<std::pair<const Solved*, const std::string*>> pool;  // (plan, its mode)
    const std::string chosen_mode = modes[best].name;
    pool.push_back({&chosen, &chosen_mode});
    for (auto& cand : candidates)
      if (cand.s.feasible && cand.excluded.empty()) pool.push_back({&cand.s, &cand.mode});
    double fastest = -1;
    for (auto& [s, m] : pool)
      if (fits_dram(s->totals) && (fastest < 0 || s->totals.est_time_us < fastest)) fastest = s->totals.est_time_us;
    size_t pick = 0;
    const double band_us = fastest * kEstimateErrorBand;
    if (fastest >= 0) {
      bool have = false;
      for (size_t k = 0; k < pool.size(); ++k) {
        const Totals& t = pool[k].first->totals;
        if (!fits_dram(t) || t.est_time_us > fastest + band_us) continue;
        const Totals& b = pool[pick].first->totals;
        if (!have || t.collectives < b.collectives || (t.collectives == b.collectives && t.bytes < b.bytes) ||
            (t.collectives == b.collectives && t.bytes == b.bytes && t.est_time_us < b.est_time_us)) {
          pick = k;
          have = true;
        }
      }
    }
    std::string mode_name = chosen_mode;
    if (pick != 0) {
      // The search's own optimum becomes a candidate that lost, listed with the others.
      Candidate previous{std::move(chosen), chosen_mode, "", ""};
      previous.s.name = "mixed layouts (the search's fastest, " + chosen_mode + ")";
      const Solved* picked = pool[pick].first;
      for (auto& cand : candidates)
        if (&cand.s == picked) {
          chosen = std::move(cand.s);
          mode_name = cand.mode;
          cand.listed = false;
          cand.s.feasible = false;  // moved from
        }
      candidates.push_back(std::move(previous));
    }
    if (mp.memory_fallback && fast_totals) {
      double slower = chosen.totals.est_time_us - fast_totals->est_time_us;
      std::string msg = "the fastest layout needs " + format_bytes(fast_totals->memory_per_device_bytes) + " per device on " +
                        mesh.shape_string() + " (" + format_bytes(hw.dram_bytes) + " DRAM): falling back to a memory-saving layout (" +
                        format_bytes(chosen.totals.memory_per_device_bytes) + " per device) that is " + format_us(slower) +
                        " slower per forward (" + std::to_string(chosen.totals.collectives) + " collectives instead of " +
                        std::to_string(fast_totals->collectives) + ")";
      result.diagnostics.push_back({"memory-fallback", "warning", msg, model.modules[0].span, ""});
      mp.notes.push_back(msg);
    }
    mp.mode = mesh.rows > 1 ? mode_name : "tensor / sequence / data choices on 'model'";
    if (mode_name == kExpertRowsMode) {
      int experts = 0;
      for (const int i : sized_ops)
        if (flow.ops[static_cast<size_t>(i)].kind == OpKind::Experts && !flow.ops[static_cast<size_t>(i)].sizes.empty())
          experts = static_cast<int>(flow.ops[static_cast<size_t>(i)].sizes[0]);
      if (experts > 0)
        mp.notes.push_back("experts spread over the 'batch' rows: row r holds experts " + std::to_string(experts / mesh.rows) + "·r .. " +
                           std::to_string(experts / mesh.rows) + "·r + " + std::to_string(experts / mesh.rows - 1) + " of each expert list (" +
                           std::to_string(experts / mesh.rows) + " of " + std::to_string(experts) +
                           " per row); the layouts listed split each expert over 'model'" +
                           (options.workload.batch % mesh.rows == 0 ? "; each row takes its share of the batch (xs.mark_sharding(input, mesh, (\"batch\", None)))" : ""));
    }
    if (mesh.rows > 1 && mode_name.rfind("data", 0) == 0)
      mp.notes.push_back("rows run data parallel: shard the inputs' batch dim over 'batch' (xs.mark_sharding(input, mesh, (\"batch\", None)))");
    if (options.alternatives) {
      for (auto& cand : candidates) {
        if (!cand.listed) continue;
        Alternative a;
        a.name = cand.s.name;
        a.feasible = cand.s.feasible && cand.infeasible_why.empty();
        if (!a.feasible) {
          a.why_rejected = cand.infeasible_why.empty() ? cand.s.infeasible_why : cand.infeasible_why;
          if (!cand.excluded.empty()) a.why_rejected = cand.excluded + "; " + a.why_rejected;
          mp.alternatives.push_back(a);
          continue;
        }
        a.totals = cand.s.totals;
        // Same plan as the chosen one: not an alternative.
        if (a.totals.collectives == chosen.totals.collectives && std::abs(a.totals.est_time_us - chosen.totals.est_time_us) < 1e-6 &&
            std::abs(a.totals.bytes - chosen.totals.bytes) < 0.5)
          continue;
        a.why_rejected = rejection_reason(a.totals, chosen.totals, cand.excluded, fits_dram(a.totals), band_us, fastest);
        mp.alternatives.push_back(a);
      }
      const Solved* one_microbatch = nullptr;
      if (mesh.rows > 1) {
        for (const auto& m : modes)
          if (m.name == "rows replicated") one_microbatch = &m;
      } else {
        for (const auto& cand : candidates)
          if (cand.s.name == "replicated" && cand.s.feasible && cand.s.ctx.pinned_params.empty() && cand.s.ctx.pinned_outputs.empty())
            one_microbatch = &cand.s;
      }
      if (auto pipeline = pipeline_alternative(mesh, base, one_microbatch)) {
        Alternative& a = *pipeline;
        if (a.feasible) {
          a.why_rejected = rejection_reason(a.totals, chosen.totals, "", fits_dram(a.totals), band_us, fastest) + "; " + a.why_rejected;
        }
        mp.alternatives.push_back(std::move(a));
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
    // What stops attention from being split over this shape's model axis at all (whatever mode
    // the rows took): heads that do not divide the columns, or key / value heads that neither
    // divide them nor are divided by them (Megatron's GQA rule, SHARDING.md §7).
    if (mesh.cols > 1) {
      std::set<std::string> blocked;
      for (const auto& [i, h] : attention_heads) {
        const std::string who = module_pattern(model.modules[flow.ops[static_cast<size_t>(i)].module].name);
        for (const int64_t heads : h.heads)
          if (heads % mesh.cols != 0)
            blocked.insert(std::to_string(heads) + " attention heads (" + who + ") do not divide the model axis (" + std::to_string(mesh.cols) + ")");
        if (h.kv > 0 && h.kv % mesh.cols != 0 && mesh.cols % h.kv != 0)
          blocked.insert(std::to_string(h.kv) + " key/value heads (" + who + ") neither divide the model axis (" + std::to_string(mesh.cols) +
                         ") nor are divided by it");
      }
      result.meshes[at].blockers.assign(blocked.begin(), blocked.end());
    }
    // Divisibility diagnostics against this mesh's model axis.
    // The degree tensor parallelism uses on this mesh: the columns, or all devices in 2-D mode.
    const int n = tp_degree;
    const std::string axis = two_d ? "('batch', 'model') axes" : "'model' axis";
    if (n <= 1) continue;
    auto locate = [&](std::vector<std::string> keys, int64_t value, ir::Span fallback) {
      return options.locate ? options.locate(keys, value, fallback) : fallback;
    };
    // Said once per code, message and place: modules that differ only in their names (torchvision
    // names its layers encoder_layer_0, _1, ... rather than listing them) fold into one, naming
    // the first and counting the rest. `who` stands where kWho is in the message.
    static const std::string kWho = "\x01";
    struct Said {
      size_t at;  // in result.diagnostics
      std::string message, who;
      std::set<std::string> others;
    };
    std::map<std::string, Said> said;
    auto diag = [&](const std::string& code, const std::string& severity, const std::string& who, const std::string& msg, ir::Span span) {
      const std::string key = code + msg + "@" + std::to_string(span.file) + ":" + std::to_string(span.line) + ":" + std::to_string(span.column);
      auto [it, fresh] = said.try_emplace(key, Said{result.diagnostics.size(), msg, who});
      if (fresh) result.diagnostics.push_back({code, severity, "", span, ""});
      else if (it->second.who != who) it->second.others.insert(who);
    };
    // What the usual fixes for an uneven count cost (SHARDING.md §6: tt-mlir has no uneven sharding).
    auto fixes = [&](int64_t count, const std::string& what) {
      const int64_t padded = (count + n - 1) / n * n;
      const int64_t degree = std::gcd(count, static_cast<int64_t>(n));
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.2f%%", 100.0 * static_cast<double>(padded - count) / static_cast<double>(count));
      // The shape of the same devices whose model axis it divides (issue 37, item 3: say what
      // the alternative shape gives).
      std::string shape;
      const int devices = mesh.devices();
      if (degree > 1 && devices % degree == 0)
        shape = " (mesh " + std::to_string(devices / degree) + "x" + std::to_string(degree) + ": its 'model' axis of " + std::to_string(degree) +
                " divides " + std::to_string(count) + "; its " + std::to_string(devices / degree) +
                " rows run data, sequence or expert parallelism; shardlens plan --mesh " + std::to_string(devices / degree) + "x" + std::to_string(degree) +
                ", or --devices " + std::to_string(devices) + " to compare every shape)";
      return "usual fixes: pad the " + what + " to " + std::to_string(padded) + " (+" + pct + " of its weights and compute, as tt-xla pads heads: tt-xla #4881, #5017); " +
             "keep it replicated (its weights and compute on every device); or split it over " + std::to_string(degree) +
             (degree == 1 ? " device (no split)" : " devices") + " on a 2-D mesh and use the rest for data or sequence parallelism" + shape;
    };
    auto experts_diag = [&](int64_t experts, ir::Span span) {
      diag("divisibility-experts", "information", "",
           std::to_string(experts) + " experts do not divide the " + axis + " (" + std::to_string(n) + ") of mesh " + mesh.shape_string() +
               ": expert parallelism is not possible; experts are tensor-parallel inside or replicated",
           locate({"expert"}, experts, span));
    };
    for (const int i : sized_ops) {
      const auto& op = flow.ops[static_cast<size_t>(i)];
      if (auto it = attention_heads.find(i); it != attention_heads.end()) {
        const AttentionHeads& h = it->second;
        for (const int64_t heads : h.heads)
          if (heads % n != 0)
            diag("divisibility-heads", "warning", module_pattern(model.modules[op.module].name),
                 std::to_string(heads) + " attention heads (" + kWho + ") do not divide the " + axis +
                     " (" + std::to_string(n) + ") of mesh " + mesh.shape_string() +
                     ": attention cannot be head-sharded evenly, so the planner keeps its heads whole (its projections replicated or "
                     "split on another dim); " + fixes(heads, "heads"),
                 locate({"n_head", "num_heads", "n_heads", "num_attention_heads", "heads"}, heads, model.modules[op.module].span));
        // GQA / MQA: the key / value heads before their repeat.
        const int64_t kv = h.kv;
        if (kv > 0 && kv % n != 0 && h.query_heads % n == 0) {
          std::string what = n % kv == 0
                                 ? "the KV projections are replicated so that each device has the KV head of its query group "
                                   "(Megatron accepts tp % kv_heads == 0; ColossalAI requires kv_heads % tp == 0); this costs "
                                   "their compute and memory on every device"
                                 : "neither divides the other: the KV projections are replicated";
          diag("divisibility-kv-heads", "warning", "",
               std::to_string(kv) + " key/value heads do not divide the " + axis + " (" + std::to_string(n) + ") of mesh " +
                   mesh.shape_string() + ": " + what + "; alternatively cap tensor parallelism at " + std::to_string(kv) +
                   " and use the remaining devices for data or sequence parallelism",
               locate({"n_kv_heads", "num_key_value_heads", "kv_heads", "n_kv", "kv"}, kv, model.modules[op.module].span));
        }
      }
      if (op.kind == OpKind::Contract && op.inputs.size() >= 2) {
        int w = op.inputs[1];
        int param = flow.tensors[w].parameter;
        if (param < 0) continue;
        const auto& shape = flow.tensors[w].shape;
        double bytes = static_cast<double>(flow.tensors[w].numel()) * options.workload.dtype_bytes();
        if (bytes < 8.0 * 1024 * 1024 || shape.size() < 2) continue;  // small weights: replicating them is fine anyway
        // Column- and row-parallel layouts each split one of the two feature dims: say which one
        // cannot be split, whatever the other does.
        const bool conv = op.equation.find('H') != std::string::npos;
        for (size_t d = 0; d < 2; ++d) {
          if (shape[d] % n == 0 || shape[d] < n) continue;
          // Orientation from the op (SHARDING.md §5): the weight dim the output keeps is the column one.
          const std::string& eq = op.equation;
          const size_t comma = eq.find(','), arrow = eq.find("->");
          const std::string wl = comma != std::string::npos && arrow != std::string::npos ? eq.substr(comma + 1, eq.find(',', comma + 1) < arrow ? eq.find(',', comma + 1) - comma - 1 : arrow - comma - 1) : "";
          const bool column = d < wl.size() && eq.find(wl[d], arrow) != std::string::npos;
          const std::string layouts = std::string(column ? "column" : "row") + "-parallel layout (" + (column ? "output" : "input") + " " +
                                      (conv ? "channels" : "features") + " split)";
          diag(conv ? "divisibility-channels" : "divisibility-features", "warning", module_pattern(model.parameters[param].name),
               kWho + " " + (conv ? "channels" : "features") + " " + std::to_string(shape[d]) + " (of " +
                   std::to_string(shape[0]) + " x " + std::to_string(shape[1]) + ") do not divide the " + axis + " (" + std::to_string(n) +
                   ") of mesh " + mesh.shape_string() + ": its " + layouts + " is impossible, so the planner splits it on the other dim or keeps it replicated; " +
                   fixes(shape[d], conv ? "channels" : "features"),
               locate({"dim", "hidden", "ffn", "intermediate", "embd", "d_model", "channels", "ch", "width"}, shape[d], model.parameters[param].span));
        }
      }
      if (op.kind == OpKind::Embedding) {
        int w = op.inputs[1];
        const auto& shape = flow.tensors[w].shape;
        if (shape.size() == 2 && shape[0] % n != 0 && shape[0] >= 1000 && flow.tensors[w].parameter >= 0)
          diag("divisibility-vocab", "warning", "",
               "vocabulary " + std::to_string(shape[0]) + " does not divide the " + axis + " (" + std::to_string(n) + ") of mesh " +
                   mesh.shape_string() + ": the embedding cannot be vocab-parallel (nor an LM head tied to it column-parallel on the vocabulary), "
                   "so the planner shards it on the hidden dim or keeps it replicated; " + fixes(shape[0], "vocabulary"),
               locate({"vocab"}, shape[0], model.parameters[flow.tensors[w].parameter].span));
      }
      if (op.kind == OpKind::Experts && op.sizes[0] % n != 0) experts_diag(op.sizes[0], model.modules[op.module].span);
    }
    for (const auto& [experts, span] : stacked_experts)
      if (experts % n != 0) experts_diag(experts, span);
    for (auto& [key, one] : said) {
      const size_t more = one.others.size();
      std::string who = one.who;
      if (more > 0 && more <= 2)
        for (const std::string& other : one.others) who += ", " + other;
      else if (more > 2)
        who += ", " + *one.others.begin() + " and " + std::to_string(more - 1) + " more modules like them";
      std::string& message = result.diagnostics[one.at].message;
      message = one.message;
      if (size_t at = message.find(kWho); at != std::string::npos) message.replace(at, kWho.size(), who);
    }
  }
  tag_mesh();
  phase("divisibility diagnostics");
  tails.finish();
  phase("describe meshes");
  // One layout for every mesh when possible.
  if (result.meshes.size() > 1 && !options.meshes_independent) {
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
  if (solver.greedy_free_layouts_used())
    result.notes.push_back("a module called more than once reads more weights than the search can lay out jointly (over " +
                           std::to_string(AxisSolver::kMaxFreeCombinations) +
                           " combinations); they were laid out one weight at a time, so that part of the plan is not proven optimal");
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
