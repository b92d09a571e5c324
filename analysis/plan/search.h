// The search behind the planner, on one mesh axis: tensor specs, per-op strategies (the op rules
// in rules/) and their transitions (axis_costs.cpp), what it knows of a model (prepare.cpp), and an exact dynamic programme over each module body, memoized by
// (body content, entry specs, context) so that repeated blocks and unchanged classes are solved once.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "ir/hash.h"
#include "ir/model_ir.h"
#include "ir/module_path.h"
#include "plan/ccl_cost.h"
#include "plan/target.h"

namespace shardlens::plan::detail {

// --strategy tensor's rule for a parameter the consensus keeps whole (Context::tensor_required).
inline constexpr int8_t kRequiredReplicated = -2;
// How one tensor lies on one mesh axis.
enum SpecKind : uint8_t { kReplicated = 0, kPartial = 1, kSharded = 2, kSegments = 3 };
struct Spec {
  uint8_t kind = kReplicated;
  int8_t dim = -1;  // kSharded / kSegments
  int8_t seg = 0;   // kSegments: the dim holds `seg` concatenated segments, each sharded evenly
  static Spec R() { return {}; }
  static Spec P() { return {kPartial, -1, 0}; }
  static Spec S(int d) { return {kSharded, static_cast<int8_t>(d), 0}; }
  static Spec Seg(int d, int k) { return {kSegments, static_cast<int8_t>(d), static_cast<int8_t>(k)}; }
  bool operator==(const Spec&) const = default;
  uint32_t code() const { return kind | (static_cast<uint32_t>(static_cast<uint8_t>(dim)) << 8) | (static_cast<uint32_t>(static_cast<uint8_t>(seg)) << 16); }
  bool sharded() const { return kind == kSharded || kind == kSegments; }
};

enum Tag : uint16_t {
  kTagReplicated = 1, kTagTensor = 2, kTagSequence = 4, kTagBatch = 8,
  kTagExpertAllToAll = 16, kTagExpertLocal = 32, kTagExpertTensor = 64,
  // The residual stream (what norms read and residual adds carry) split on its hidden features:
  // row-parallel outputs reduce-scattered, norms exchanging statistics, then gathered again. Not
  // Megatron's layout (which keeps the stream whole, 1 all-reduce per pair), so the Megatron family
  // and --strategy tensor leave it out.
  kTagStreamFeatures = 128,
  kTagAll = 0xff,
};

enum class Role : uint8_t { Other, Batch, Seq, Hidden, Heads, HeadDim, Ffn, Vocab, Experts, Channels, Spatial, Tokens };
const char* role_name(Role r);
// An einsum equation's operands: "bsi,oi->bso" -> {"bsi", "oi"}, with `out` = "bso".
std::vector<std::string> split_equation(const std::string& eq, std::string& out);
// The residual stream's features: a token embedding's hidden dim, or a conv front end's channels.
inline bool stream_feature(Role r) { return r == Role::Hidden || r == Role::Channels; }

struct Filter {
  uint16_t allowed = kTagAll;
  uint16_t experts_allowed = kTagAll;  // for routed-expert layers only
  bool sharded_norms = false;  // norms must run sharded when they can (the sequence-parallel alternative)
  uint64_t hash() const { return (static_cast<uint64_t>(experts_allowed) << 20) + allowed * 31u + sharded_norms; }
};

// One way to run one op on one axis.
struct Strat {
  std::vector<Spec> in, out;
  double compute_us = 0;
  double flops = 0;          // of the whole op, for the parallel fraction
  bool split = false;        // the op's work is divided over the axis
  int extra_count = 0;       // statistics all-reduces the strategy itself needs
  double extra_bytes = 0;
  uint16_t tag = kTagReplicated;
  std::string label;         // column, row, vocab, heads, sequence, ...
  bool rows_split_norm = false;  // a norm split over rows it normalises one by one: no statistics to exchange
  // All-gathers along the mesh rows the strategy needs (sequence parallel over the rows: attention
  // gathers the other rows' keys and values), each of `rows_gather_bytes` (the whole tensor).
  int rows_gathers = 0;
  double rows_gather_bytes = 0;
};

struct Context {
  int n = 1;                         // devices the axis spans (both axes' product for 2-D)
  Topology topology = Topology::Line;
  // 2-D tensor parallelism over ('batch', 'model'): a collective runs along the columns, then the
  // rows (the way CCLs over a 2-D mesh decompose); 0 rows = one axis.
  int rows = 0;
  Topology row_topology = Topology::Line;
  const Hardware* hw = nullptr;
  Workload workload;
  double activation_scale = 1.0;  // rows axis in data parallel: each row sees 1/rows of the batch
  // Routed experts spread over the rows (expert parallel on 'batch', issue 37 item 3): each row
  // holds experts/expert_rows of every expert list, the columns split inside them as the search
  // decides. With `activation_scale` < 1 the rows hold their own tokens and exchange them all-to-all
  // (dispatch, combine); otherwise every row has every token and the rows' outputs are summed by
  // one all-reduce. 0: experts are not spread over the rows.
  int expert_rows = 0;
  // The sequence split over the rows (sequence parallel on 'batch', prefill): activations are
  // 1/sequence_rows of the tokens (`activation_scale`), and attention gathers keys and values
  // along the rows (ctx.row_topology). 0: not split over the rows.
  int sequence_rows = 0;
  Filter filter;
  double memory_lambda = 0;       // µs per byte of parameters kept per device (memory fallback)
  double ccl_penalty_us = 0;      // decision weight per collective (see plan.cpp)
  std::string axis = "model";
  std::unordered_map<int, Spec> pinned_params;   // parameter index -> spec
  std::unordered_map<int, Spec> pinned_outputs;  // module index -> spec its output leaves in
  bool unpinned_replicated = false;
  // Layouts chosen on the meshes planned before: keeping them costs nothing, leaving them costs
  // `preference_us` per parameter (so that one plan holds on every mesh when it is as good).
  std::shared_ptr<const std::unordered_map<int, Spec>> preferred_params;  // shared: contexts are copied often
  double preference_us = 0;
  uint64_t preferred_hash = 0;  // set with preferred_params
  // --strategy tensor: per parameter index, the dim it must be split on (-1: free); any other
  // layout costs `replication_us` in the search only (see plan.cpp).
  std::shared_ptr<const std::vector<int8_t>> tensor_required;  // per parameter (MeshPlanner::tensor_required)
  double replication_us = 0;
  uint64_t tensor_required_hash = 0;  // set with tensor_required
  uint64_t hash() const;
};

// Per tensor: the role of each of its dims, in one flat array (not ~10k small vectors to allocate
// and free per plan of a 126-layer model).
class DimRoles {
 public:
  void reset(const ir::Dataflow& flow) {
    start_.assign(flow.tensors.size() + 1, 0);
    for (size_t t = 0; t < flow.tensors.size(); ++t) start_[t + 1] = start_[t] + static_cast<uint32_t>(flow.tensors[t].shape.size());
    roles_.assign(start_.back(), Role::Other);
  }
  // A view: assigning one tensor's roles to another's is deleted (it would rebind, not copy).
  struct Dims : std::span<Role> {
    explicit Dims(std::span<Role> s) : std::span<Role>(s) {}
    Dims(const Dims&) = default;
    Dims& operator=(const Dims&) = delete;
  };
  Dims operator[](size_t t) { return Dims({roles_.data() + start_[t], start_[t + 1] - start_[t]}); }
  std::span<const Role> operator[](size_t t) const { return {roles_.data() + start_[t], start_[t + 1] - start_[t]}; }

 private:
  std::vector<Role> roles_;
  std::vector<uint32_t> start_;  // per tensor, and one past the last
};

// Module -> its pattern ("h.*.attn"; the root module: the model's class name), made once per
// module asked for: few of a MoE's ~60k modules are. Kept by a preparation across re-plans (the
// recycled one's), each entry checked against the module's name; safe from the planner's two
// threads. Node-based and never erased: a string returned stays put as long as the model it was
// asked for (an entry changes only when asked about a module that has since been renamed).
class ModulePatterns {
 public:
  const std::string& of(const ir::ModelIR& model, int module) {
    const std::string& name = model.modules[module].name;
    if (name.empty()) return model.model;
    std::lock_guard lock(mutex_);
    Entry& e = cache_[module];
    if (e.name != name) {  // a new entry, or the module was renamed since
      e.name = name;
      e.pattern = ir::module_pattern(name);
    }
    return e.pattern;
  }

 private:
  struct Entry {
    std::string name, pattern;
  };
  std::mutex mutex_;
  std::unordered_map<int, Entry> cache_;
};

// Per-model preparation, independent of the mesh: bodies, liveness, signatures, dim roles.
struct Prepared {
  const ir::ModelIR* model = nullptr;
  struct Body {
    int op = -1;                 // the Call / Experts op (-1: the root forward)
    std::vector<int> items;      // top-level ops of the body, in order
    std::vector<int> ext;        // tensors used inside but produced (or owned) outside, by first use
    std::vector<int> outputs;    // tensors the body hands back
    // Tensor -> position in items of its last use (items.size(): handed back), flat and sorted by
    // tensor: the search looks it up for every tensor of every state it builds.
    std::vector<std::pair<int, int>> last_use;
    // Per position: the tensors last used there, sorted (flat: dies[dies_start[pos] ..
    // dies_start[pos + 1])).
    std::vector<int> dies, dies_start;
    std::span<const int> dies_at(size_t pos) const { return {dies.data() + dies_start[pos], dies.data() + dies_start[pos + 1]}; }
    int last_use_of(int t) const {
      auto it = std::lower_bound(last_use.begin(), last_use.end(), t, [](const auto& e, int v) { return e.first < v; });
      return it != last_use.end() && it->first == t ? it->second : -1;
    }
    uint64_t signature = 0;
    int same_signature = 1;       // bodies with this signature, this one included
    std::vector<int> parameters;  // parameters read anywhere inside (for pinned plans' memo keys)
    std::vector<int> modules;     // modules whose ops run inside
    // Empty again, keeping the vectors' buffers (a re-plan's preparation reuses the last one's).
    void clear() {
      op = -1;
      signature = 0;
      same_signature = 1;
      for (auto* v : {&items, &ext, &outputs, &dies, &dies_start, &parameters, &modules}) v->clear();
      last_use.clear();
    }
  };
  std::vector<Body> bodies;               // bodies[0] = root
  std::vector<int> body_of_op;            // Call/Experts op -> body index
  DimRoles roles;                         // per tensor
  std::vector<int> param_owner_body;      // per parameter: the body where it is local (used freely)
  // The parameters the forward reads, ascending, and per parameter its position there (-1: not
  // read): a replay keeps a record per parameter read, not per parameter (a MoE reads 1 in 70).
  std::vector<int> used_parameters, param_use_index;
  // Per tensor: its parameter's position in used_parameters (-1: not a parameter), and whether it
  // is stored (is_free): dense arrays the search, the replay and tensor_bytes read instead of each
  // tensor's whole record.
  std::vector<int> tensor_use_index;
  std::vector<char> stored;
  // Per tensor: the ops that read it, consumer_ops[consumer_start[t] .. consumer_start[t + 1]).
  std::vector<int> consumer_start, consumer_ops;
  std::span<const int> consumers(int t) const {
    return {consumer_ops.data() + consumer_start[t], consumer_ops.data() + consumer_start[t + 1]};
  }
  // Per tensor: its elements, and the bytes of one (0: the workload's dtype, a float tensor).
  std::vector<double> numel;
  std::vector<uint8_t> fixed_element_bytes;
  std::vector<int> producer;                // per tensor: the op that made it (-1: none)
  std::vector<uint64_t> op_signature;       // per op: equal for the same op of identical blocks
  std::vector<std::vector<int>> segments;   // per tensor: k of later equal k-way splits of its last dim
  std::vector<char> residual_stream;        // per tensor: on the residual stream (see mark_residual_stream)
  int64_t hidden_size = 0, vocab_size = 0;
  bool single_token = false;  // the inputs' sequence dim is 1 (decode): a size-1 sequence dim is the whole sequence
  std::unique_ptr<ModulePatterns> patterns;  // never null after prepare()
};
// `recycled`: a preparation nobody else holds any more, whose buffers this one reuses (a re-plan
// then allocates next to nothing for it).
std::shared_ptr<Prepared> prepare(const ir::ModelIR& model, bool second_thread = true, std::shared_ptr<Prepared> recycled = nullptr);

using ir::mix64;
// Parameters and buffers: stored, not computed; their layout is chosen at their first use.
inline bool is_free(const ir::Dataflow& flow, int t) { return flow.tensors[t].parameter >= 0 || flow.tensors[t].buffer >= 0; }
using ir::module_pattern;

// Every term the search adds to a path's cost, in steps of 2^-10 µs (about 1 ns): sums of such
// terms are exact in a double (below 2^43 µs), so a path costs exactly the same whatever order
// its terms were added in, and two searches that differ by a constant differ by exactly it.
// Differences under a nanosecond are ties.
inline double search_cost(double us) {
  // From 2^42 µs on, a double's step is 2^-10 µs or more: already on the grid. Below, adding and
  // taking away 1.5 * 2^52 rounds to the nearest whole step (no libm call on the search's hot path).
  if (!(std::abs(us) < 0x1p42)) return us;
  return ((us * 0x1p10 + 0x1.8p52) - 0x1.8p52) * 0x1p-10;
}

// Strategies of a leaf op on an axis (never Call / Experts).
std::vector<Strat> strategies(const Prepared& prep, int op, const Context& ctx);
// Bytes a leaf op keeps per forward beyond its tensors (attention's KV cache in decode), whole.
double op_state_bytes(const Prepared& prep, const ir::Op& op, const Context& ctx);

// A cache in generations: each entry remembers the last generation that used it (lookups only
// stamp: no moves, no allocation). What was not used for two generations in a row is dropped,
// but only while the cache holds more than kKeepEntries, so a long editing session keeps what
// the current model needs and a bounded rest. Age alone is not enough: a re-plan touches only the
// memo entries on its solution's paths, while an edit to an inner class re-solves its callers
// for every entry layout and needs the inner bodies' other entries again (dropping them by age
// made such an edit on the bench LSP model take 2 s after a few other edits, not 0.2 s).
// References stay valid until their entry is dropped.
template <typename V>
class Generational {
 public:
  static constexpr size_t kKeepEntries = 8000;
  explicit Generational(size_t keep_entries = kKeepEntries) : keep_entries_(keep_entries) {}
  V* find(uint64_t key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    it->second.used = generation_;
    return &it->second.value;
  }
  bool in_old(uint64_t key) const {
    auto it = entries_.find(key);
    return it != entries_.end() && it->second.used != generation_;
  }
  V& emplace(uint64_t key, V value) {
    auto it = entries_.try_emplace(key, Slot{std::move(value), generation_}).first;
    it->second.used = generation_;
    return it->second.value;
  }
  V& at(uint64_t key) {
    if (V* v = find(key)) return *v;
    throw std::out_of_range("planner cache: missing entry");
  }
  size_t size() const { return entries_.size(); }
  const V* peek(uint64_t key) const {  // no stamp
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second.value;
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& [key, slot] : entries_) f(key, slot.value);
  }
  void clear() { entries_.clear(); }
  void new_generation() {
    if (entries_.size() > keep_entries_)
      std::erase_if(entries_, [&](const auto& e) { return e.second.used + 2 <= generation_; });
    ++generation_;
  }

 private:
  struct Slot {
    V value;
    uint64_t used = 0;
  };
  std::unordered_map<uint64_t, Slot> entries_;
  uint64_t generation_ = 0;
  size_t keep_entries_;
};

// Strategies shared by the same op of identical blocks (keyed by op signature and context).
class StrategyCache {
 public:
  const std::vector<Strat>& get(const Prepared& prep, int op, const Context& ctx, uint64_t ctx_hash);
  size_t size() const { return cache_.size(); }
  void clear() { cache_.clear(); }
  void new_generation() { cache_.new_generation(); }

 private:
  Generational<std::vector<Strat>> cache_;
};
// Time of moving a tensor from one spec to another; kind of collective (or none) through *ccl.
double transition_us(const Prepared& prep, int tensor, Spec from, Spec to, const Context& ctx, int* ccl_kind,
                     double* bytes);
double tensor_bytes(const Prepared& prep, int tensor, const Context& ctx);
// A collective along the rows of a 2-D mesh (ctx.expert_rows or ctx.sequence_rows of them,
// ctx.row_topology).
double rows_collective_us(const Context& ctx, Ccl kind, double bytes);
// Time of one collective of a `bytes` tensor over the context's devices (no decision weight).
double collective_us(const Context& ctx, Ccl kind, double bytes);

// Per-op decisions of a solved plan (indexes into the op's strategy list; Experts ops: their own
// strategy kind and the body's decisions).
struct Decision {
  int strategy = -1;                   // leaf ops
  std::vector<Spec> free_specs;        // Call: specs chosen for free ext tensors at entry
  int experts_mode = -1;               // Experts: 0 replicated, 1 tensor, 2 expert-local, 3 expert all-to-all
  Spec experts_tokens;                 // Experts: the spec its tokens (and the result) take
};

// What a solved plan adds up to, without listing every collective (cheap: per solved body, memoized).
struct Aggregate {
  double compute_us = 0, ccl_us = 0, bytes = 0, flops = 0, parallel_flops = 0, kv_cache_bytes = 0;
  int collectives = 0;
  double parameter_bytes = 0;  // per device, parameters first used in this body
  // The strategy tags the plan uses, checked against a filter: leaf ops' (here and in called
  // bodies) and routed-expert layers' modes (their inner bodies run under contexts of their own).
  uint16_t leaf_tags = 0, experts_tags = 0;
  // Whether a search under `f` may choose every strategy this plan uses.
  bool admitted_by(const Filter& f) const {
    return (leaf_tags & ~f.allowed) == 0 && (experts_tags & ~(f.allowed & f.experts_allowed)) == 0;
  }
  void add(const Aggregate& o, double times, double parameter_times) {
    compute_us += o.compute_us * times;
    ccl_us += o.ccl_us * times;
    bytes += o.bytes * times;
    flops += o.flops * times;
    parallel_flops += o.parallel_flops * times;
    kv_cache_bytes += o.kv_cache_bytes * times;
    collectives += static_cast<int>(std::lround(o.collectives * times));
    parameter_bytes += o.parameter_bytes * parameter_times;
  }
};
struct AxisSolution {
  bool feasible = false;
  Aggregate totals;                    // of the whole plan (see Aggregate)
  double cost = 0;                     // the search objective (time + decision weights)
  std::vector<Decision> decisions;     // per op (filled by AxisSolver::expand_decisions)
  // Per leaf op: its chosen strategy, looked up with the decisions so that replaying the plan
  // needs no cache (and can run on another thread while the solver goes on).
  std::vector<const Strat*> strategy_of;
  // Per Call / Experts op: its body's solution, (memo key, exit) hashed (0: none). Two calls with
  // the same one run the same decisions on the same content: a replay may copy the first.
  std::vector<uint64_t> body_solution;
  uint64_t root_key = 0;
  int root_exit = -1;
};

class AxisSolver {
 public:
  AxisSolver() = default;
  AxisSolution solve(const Prepared& prep, const Context& ctx);
  // Per-op decisions of a solution (needed to list its collectives; totals need none).
  void expand_decisions(const Prepared& prep, const Context& ctx, AxisSolution& solution);
  size_t memo_size() const { return memo_.size(); }
  void clear() {
    memo_.clear();
    derivations_.clear();
    aggregates_.clear();
    strategies_.clear();
  }
  // Entries not used between this call and the next are dropped then (see Generational).
  void new_generation() {
    if (derivations_.size() > 4096) derivations_.clear();  // a heuristic's record: bounded, not kept
    memo_.new_generation();
    aggregates_.new_generation();
    strategies_.new_generation();
  }
  void set_cancel_check(std::function<bool()> cancelled) { cancelled_ = std::move(cancelled); }
  // Whether some body had more live-layout states than the search keeps (then it kept the cheapest).
  bool truncated() const { return truncated_; }
  // Whether some call's weights stored before it (a module called more than once) had more layout
  // combinations than kMaxFreeCombinations, so they were chosen one weight at a time.
  bool greedy_free_layouts_used() const { return greedy_free_; }
  static constexpr size_t kMaxFreeCombinations = 256;
  static constexpr int kGreedyPasses = 3;
  static constexpr size_t kMaxStates = 4096;
  // How a body is searched: the dynamic programme over its ops in order while its live layouts
  // stay few (kEliminateAbove), else variable elimination over its ops (exact too, and its cost
  // does not multiply with the tensors alive at once); the programme with its state cap only where
  // elimination would need a table over kMaxTable entries. Tests force either method.
  enum class BodyMethod { Auto, Programme, Elimination };
  void set_body_method(BodyMethod m) { method_ = m; }
  // Auto, unless SHARDLENS_PLAN_BODY=programme|elimination (to compare plans and times).
  static BodyMethod default_body_method();
  static constexpr size_t kEliminateAbove = 256;
  static constexpr size_t kMaxTable = size_t{1} << 21;
  // presolve_entries: from this many entries not yet solved (fewer: one search each is as
  // cheap), up to this many combinations (more: most of them would never be asked for).
  static constexpr size_t kPresolveEntriesFrom = 4;
  static constexpr size_t kPresolveEntriesUpTo = 256;
  // ... and when searching them one by one would do at least this much work (states, entries).
  static constexpr size_t kPresolveWork = 20000;
  // Bodies solved by elimination, and the largest table one needed (for benchmarks).
  size_t eliminated() const { return eliminated_; }
  size_t largest_table() const { return largest_table_; }

  struct Exit {
    std::vector<Spec> out;
    double cost = 0;
    std::vector<Decision> decisions;   // per item position in the body
    std::vector<std::pair<uint64_t, int>> nested;  // per item: (memo key, exit) of Calls / Experts bodies
  };
  struct MemoEntry {
    std::vector<Spec> entry;
    std::vector<Exit> exits;
    // Of a base entry (every passed-through tensor replicated), per call step that is handed a
    // tensor the body only passes on: the callee's entries there, one per distinct state. Other
    // entries' results are derived from these (derive_by_shift).
    struct CallUse {
      int pos = -1;
      std::vector<std::vector<Spec>> entries;
    };
    std::vector<CallUse> uses;
  };
  // Whether a body's result may be derived from another entry's (derive_by_shift; on unless a
  // test compares it with searching every entry).
  void set_derive(bool on) { derive_ = on; }
  // Whether a callee's many entries may be solved by one elimination (presolve_entries; on unless
  // a test compares it with solving each entry alone). Entries presolved, for benchmarks and tests.
  void set_presolve(bool on) { presolve_ = on; }
  size_t presolved() const { return presolved_; }
  // Derivations that stood in for searches, and those tried that did not hold (for benchmarks).
  size_t derived() const { return derived_; }
  size_t derivations_refused() const { return refused_; }
  // The memo, read only (for tests that compare two solvers' results entry by entry).
  template <typename F>
  void for_each_memo_entry(F&& f) const { memo_.for_each(f); }
  const MemoEntry* memo_entry(uint64_t key) const { return memo_.peek(key); }

 private:
  // `unkeyed`: the key before the entry specs were mixed in (0: never derive this body's result).
  const MemoEntry& solve_body(const Prepared& prep, int body, const std::vector<Spec>& entry, const Context& ctx,
                              uint64_t key, uint64_t unkeyed = 0);
  // Over kMaxFreeCombinations layouts of the weights a call stores first: picks one combination
  // (`digit`, per ext position) one weight at a time and returns true; else false.
  bool greedy_free_layouts(const Prepared& prep, int nb, const std::vector<char>& stored_first, const Spec* const* options,
                           const size_t* option_count, size_t* digit, const Context& ctx, uint64_t callee_key);
  struct ExpertsOption {
    Spec xs, out;  // the tokens' layout (and the routing weights'), the combined result's
    double extra = 0;
    int mode = 0;  // Decision::experts_mode
    std::pair<uint64_t, int> nested;
  };
  std::vector<ExpertsOption> experts_options(const Prepared& prep, int op, const Context& ctx);
  // The body's result by variable elimination (search.cpp); nullopt if a table would outgrow kMaxTable.
  std::optional<MemoEntry> eliminate_body(const Prepared& prep, int body, const std::vector<Spec>& entry, const Context& ctx);
  // The same for every entry whose ext tensors take the layouts listed per position (every
  // combination, row-major, the last fastest), by one elimination in which the layouts of the
  // tensors that arrive in several are variables kept to the end.
  std::optional<std::vector<MemoEntry>> eliminate_entries(const Prepared& prep, int body, const std::vector<std::vector<Spec>>& options,
                                                          const Context& ctx);
  // Before a call step runs a callee with many entries (an attention body handed the hidden
  // states, cos and sin, each in several layouts): solves them all at once into the memo.
  void presolve_entries(const Prepared& prep, int body, const std::vector<std::vector<Spec>>& options, const Context& ctx,
                        uint64_t callee_key);
  BodyMethod method_ = default_body_method();
  size_t eliminated_ = 0, largest_table_ = 0;
  // Work done by the searches (states made, table entries filled), and per body signature the
  // work of searching one entry (presolve_entries).
  size_t work_ = 0;
  bool presolve_ = true;
  size_t presolved_ = 0;
  std::unordered_map<uint64_t, size_t> entry_work_;
  std::optional<MemoEntry> derive_by_shift(const Prepared& prep, int body, const std::vector<Spec>& entry, const Context& ctx,
                                           uint64_t unkeyed);
  // Per body of the preparation being solved: whether each ext position is passed through (only
  // handed on to calls; see search.cpp), found when first asked.
  const std::vector<char>& passed_through(const Prepared& prep, int body);
  std::vector<std::optional<std::vector<char>>> passed_;
  bool derive_ = true;
  size_t derived_ = 0, refused_ = 0;
  // Per callee key without entry specs: (results derived, derivations refused).
  std::unordered_map<uint64_t, std::pair<int, int>> derivations_;
  void expand(const Prepared& prep, int body, uint64_t key, int exit, AxisSolution& out);
  const Aggregate& aggregate(const Prepared& prep, int body, uint64_t key, int exit, const Context& ctx, uint64_t ctx_hash);
  const MemoEntry* find_memo(uint64_t key);  // promotes the entries it refers to with it
  Generational<MemoEntry> memo_;
  Generational<Aggregate> aggregates_;  // by (memo key, exit)
  bool truncated_ = false;
  bool greedy_free_ = false;
  StrategyCache strategies_;
  std::function<bool()> cancelled_;
};

// Replays a solution: every transition and statistics reduction with its op and tensor.
struct CclEvent {
  bool rows_axis = false;  // runs along the 'batch' rows (expert parallel over the rows), not the planned axis
  int op = -1;
  int origin = -1;  // for reductions: the op that made the partial sums (row-parallel layer, ...)
  int tensor = -1;
  Ccl kind = Ccl::AllReduce;
  double bytes = 0;
  double time_us = 0;
  std::string why;
  // What it does to the tensor (for `shardlens verify`): from one layout to another, applied to the
  // output of `origin` (reductions), to input `input` of `op`, or to the model's output (op -1).
  Spec from, to;
  int input = -1;
};
struct Evaluation {
  std::vector<CclEvent> events;
  std::vector<CclEvent> slices;       // replicated -> sharded without a collective (each device cuts its block)
  double compute_us = 0;
  double ccl_us = 0;
  double flops = 0, parallel_flops = 0;
  std::vector<double> op_compute_us;  // per op
  // Labels view the strategy cache's strings or static text (valid while the solver lives).
  std::vector<std::string_view> op_label;  // per op: the strategy label
  struct ParameterUse {
    Spec spec = Spec::R();    // as stored (its first use)
    std::string_view label;   // the label of the strategy that first used it
    int op = -1;              // the op that first used it (-1: unused)
  };
  std::vector<ParameterUse> param_uses;  // per parameter the forward reads (Prepared::used_parameters)
  double kv_cache_bytes = 0;          // per device, decode
  size_t calls_copied = 0;            // calls replayed from the record of an identical one
  const ParameterUse& use_of(const Prepared& prep, int param) const {
    static const ParameterUse unused;
    int k = prep.param_use_index[static_cast<size_t>(param)];
    return k < 0 ? unused : param_uses[static_cast<size_t>(k)];
  }
};
// Reads only its arguments: safe on another thread while the solver goes on.
// `copy_identical_calls`: a call that runs the same solution as an earlier one from the same
// state copies that one's record instead of walking its ops (false: walk every op, for tests).
Evaluation evaluate(const Prepared& prep, const Context& ctx, const AxisSolution& solution, bool copy_identical_calls = true);

}  // namespace shardlens::plan::detail
