// Exact search on one mesh axis. Within a module body: dynamic programming over its ops in order,
// the state being the spec of every live tensor (exhaustive over strategies, merging equal states).
// A nested module call is one step whose outcomes come from solving the callee's body once per
// entry specs; results are memoized by (body content hash, entry specs, context), so identical
// repeated blocks — and, across edits, unchanged classes — are solved once. Entries that differ
// only in tensors the body hands on to its own calls are derived from one search where the
// callees' results differ by a constant (derive_by_shift).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_set>

#include "plan/elimination.h"
#include "plan/search.h"
#include "plan/plan.h"

namespace shardlens::plan::detail {

using ir::OpKind;

namespace {

using StateEntry = std::pair<int, Spec>;
using State = std::vector<StateEntry>;  // sorted by tensor id
using StateView = std::span<const StateEntry>;

const Spec* find(StateView s, int t) {
  auto it = std::lower_bound(s.begin(), s.end(), t, [](const auto& e, int v) { return e.first < v; });
  return it != s.end() && it->first == t ? &it->second : nullptr;
}
void put(State& s, int t, Spec spec) {
  auto it = std::lower_bound(s.begin(), s.end(), t, [](const auto& e, int v) { return e.first < v; });
  if (it != s.end() && it->first == t) it->second = spec;
  else s.insert(it, {t, spec});
}
// A state's hash is the sum of its entries' (splitmix64 finalizer): changing one entry changes the
// hash by a difference, which the dominance pruning uses to probe without rebuilding the state.
uint64_t entry_hash(int t, Spec spec) {
  uint64_t x = ((static_cast<uint64_t>(static_cast<uint32_t>(t)) << 24) | spec.code()) + 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
uint64_t hash_of(StateView s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (auto& [t, spec] : s) h += entry_hash(t, spec);
  return h;
}


// Pins name parameters and modules, which the body's content hash does not: identical blocks with
// different pins must not share a solution.
uint64_t pins_key(const Prepared& prep, int body, const Context& ctx) {
  if (ctx.pinned_params.empty() && ctx.pinned_outputs.empty() && !ctx.preferred_params) return 0;
  uint64_t h = 0x5157;
  const auto& b = prep.bodies[body];
  for (size_t k = 0; k < b.parameters.size(); ++k) {
    if (auto it = ctx.pinned_params.find(b.parameters[k]); it != ctx.pinned_params.end()) h = mix64(h, k * 131 + it->second.code());
    if (ctx.preferred_params)
      if (auto it = ctx.preferred_params->find(b.parameters[k]); it != ctx.preferred_params->end()) h = mix64(h, k * 139 + it->second.code());
  }
  for (size_t k = 0; k < b.modules.size(); ++k)
    if (auto it = ctx.pinned_outputs.find(b.modules[k]); it != ctx.pinned_outputs.end()) h = mix64(h, k * 137 + it->second.code());
  return h;
}

// Specs a free tensor (a parameter used first inside a callee) may be stored in.
std::vector<Spec> free_options(const Prepared& prep, int t, const Context& ctx) {
  const auto& info = prep.model->dataflow.tensors[t];
  if (info.parameter >= 0) {
    if (auto it = ctx.pinned_params.find(info.parameter); it != ctx.pinned_params.end()) return {it->second};
    if (ctx.unpinned_replicated) return {Spec::R()};
  }
  std::vector<Spec> out{Spec::R()};
  if (info.parameter < 0) return out;
  for (size_t d = 0; d < info.shape.size(); ++d)
    if (info.shape[d] % ctx.n == 0 && info.shape[d] >= ctx.n) out.push_back(Spec::S(static_cast<int>(d)));
  return out;
}

// What storing a parameter in `s` costs the search beyond time: memory (fallback) and leaving the
// layout preferred by the meshes planned before.
double storage_cost(const Prepared& prep, int t, Spec s, const Context& ctx) {
  int param = prep.model->dataflow.tensors[t].parameter;
  if (param < 0) return 0;
  double extra = 0;
  if (ctx.preference_us > 0 && ctx.preferred_params)
    if (auto it = ctx.preferred_params->find(param); it != ctx.preferred_params->end() && !(it->second == s)) extra = ctx.preference_us;
  if (ctx.replication_us > 0 && ctx.tensor_required && static_cast<size_t>(param) < ctx.tensor_required->size())
    if (const int req = (*ctx.tensor_required)[static_cast<size_t>(param)]; req >= 0) {
      const bool segments = req >= 64;  // see MeshPlanner::tensor_required
      if (!(s.sharded() && s.dim == req % 64 && (!segments || s.kind == kSegments))) extra += ctx.replication_us;
    } else if (req == kRequiredReplicated && s.sharded()) {
      extra += ctx.replication_us;
    }
  if (ctx.memory_lambda <= 0) return extra;
  double b = tensor_bytes(prep, t, ctx);
  return extra + ctx.memory_lambda * (s.sharded() ? b / ctx.n : b);
}

// What a step adds by storing a stored tensor (a parameter first used there) in `to`; nullopt
// where it may not: a pin or a replicated-only plan says otherwise, or `to` is partial sums.
std::optional<double> first_store_cost(const Prepared& prep, int t, Spec to, const Context& ctx) {
  if (int param = prep.model->dataflow.tensors[t].parameter; param >= 0) {
    if (auto it = ctx.pinned_params.find(param); it != ctx.pinned_params.end() && !(it->second == to)) return std::nullopt;
    if (ctx.unpinned_replicated && !ctx.pinned_params.count(param) && !(to == Spec::R())) return std::nullopt;
  }
  if (to.kind == kPartial) return std::nullopt;
  return search_cost(storage_cost(prep, t, to, ctx));
}

// The strategies of a leaf op the context admits, each with what it costs beyond its compute (its
// statistics all-reduces): the same for every state.
void usable_strategies(const ir::Op& op, const std::vector<Strat>& strats, const Context& ctx, std::vector<std::pair<int, double>>& out) {
  out.clear();
  bool has_sharded_norm = false;
  if (ctx.filter.sharded_norms)
    for (auto& s : strats) has_sharded_norm |= s.rows_split_norm;
  for (int si = 0; si < static_cast<int>(strats.size()); ++si) {
    const Strat& st = strats[si];
    if (!(ctx.filter.allowed & st.tag)) continue;
    if (has_sharded_norm && !st.rows_split_norm) continue;
    double extra = st.extra_count ? st.extra_count * (collective_us(ctx, Ccl::AllReduce, st.extra_bytes) + ctx.ccl_penalty_us) : 0.0;
    if (st.rows_gathers) extra += st.rows_gathers * (rows_collective_us(ctx, Ccl::AllGather, st.rows_gather_bytes) + ctx.ccl_penalty_us);
    out.push_back({si, extra});
  }
}

struct Node {
  uint32_t state_at = 0, state_size = 0;  // the state's entries in its step's StatePool
  uint64_t hash = 0;  // of state
  double cost = 0;
  int prev = -1;
  Decision decision;
  std::pair<uint64_t, int> nested{0, -1};
};

// The states of one step, back to back in one buffer: a state costs no allocation of its own
// (the search builds and drops hundreds of thousands per plan).
class StatePool {
 public:
  StateView view(const Node& n) const { return {entries_.data() + n.state_at, n.state_size}; }
  void store(Node& n, const State& s) {
    n.state_at = static_cast<uint32_t>(entries_.size());
    n.state_size = static_cast<uint32_t>(s.size());
    entries_.insert(entries_.end(), s.begin(), s.end());
  }
  void clear() { entries_.clear(); }
  size_t capacity_bytes() const { return entries_.capacity() * sizeof(StateEntry); }

 private:
  std::vector<StateEntry> entries_;
};

// The states of one step, merged by equality: open addressing over node indices (the search
// builds millions of candidate states; most are duplicates and must cost no allocation).
class StateTable {
 public:
  void reset(size_t expected) {
    size_t want = 16;
    while (want < 2 * expected) want <<= 1;
    if (slots_.size() < want) slots_.resize(want);
    std::fill(slots_.begin(), slots_.begin() + static_cast<long>(want), -1);
    mask_ = want - 1;
    size_ = 0;
  }
  // The node holding `state`, or -1.
  int find(const std::vector<Node>& nodes, const StatePool& pool, uint64_t hash, const State& state) const {
    return find_if(nodes, pool, hash, [&](StateView s) { return std::equal(s.begin(), s.end(), state.begin(), state.end()); });
  }
  // The node with this hash whose state satisfies `equal`, or -1.
  template <typename Equal>
  int find_if(const std::vector<Node>& nodes, const StatePool& pool, uint64_t hash, const Equal& equal) const {
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      int n = slots_[i];
      if (n < 0) return -1;
      if (nodes[n].hash == hash && equal(pool.view(nodes[n]))) return n;
    }
  }
  // `node` is the newest of `nodes`; all before it are in the table.
  void insert(const std::vector<Node>& nodes, int node) {
    if (2 * (size_ + 1) > mask_ + 1) grow(nodes, node);
    place(nodes[node].hash, node);
    ++size_;
  }
  size_t capacity_bytes() const { return slots_.capacity() * sizeof(int); }

 private:
  void place(uint64_t hash, int node) {
    size_t i = hash & mask_;
    while (slots_[i] >= 0) i = (i + 1) & mask_;
    slots_[i] = node;
  }
  void grow(const std::vector<Node>& nodes, int held) {
    size_t count = size_;
    reset(2 * (count + 1));
    for (int n = 0; n < held; ++n) place(nodes[n].hash, n);
    size_ = count;
  }
  std::vector<int> slots_;
  size_t mask_ = 0, size_ = 0;
};

// What one body's search allocates, kept on its thread for the next search: a re-plan solves
// hundreds of bodies, and allocating their steps afresh was a good part of the search's time.
struct Workspace {
  std::vector<std::vector<Node>> layers;  // per step of the body; emptied, capacity kept
  std::vector<std::vector<Node>> spare;   // step vectors of earlier searches
  StatePool pools[2];
  StateTable table;
  State scratch;
  // A call step's list of (state, callee entry specs, memo key), ext count specs per call.
  std::vector<int> call_node;
  std::vector<uint64_t> call_key;
  std::vector<Spec> call_entries;
  size_t capacity_bytes() const {
    size_t b = layers.capacity() * sizeof(layers[0]) + spare.capacity() * sizeof(spare[0]) + pools[0].capacity_bytes() +
               pools[1].capacity_bytes() + table.capacity_bytes() + scratch.capacity() * sizeof(StateEntry) +
               call_node.capacity() * sizeof(int) + call_key.capacity() * sizeof(uint64_t) + call_entries.capacity() * sizeof(Spec);
    for (auto& v : spare) b += v.capacity() * sizeof(Node);
    return b;
  }
};
// Searches nest (a call's body is solved inside its caller's step), so each takes its own
// workspace. Bounded: a workspace that grew large (a cold plan of a wide body) is let go.
class Workspaces {
 public:
  std::unique_ptr<Workspace> take() {
    if (free_.empty()) return std::make_unique<Workspace>();
    auto w = std::move(free_.back());
    free_.pop_back();
    return w;
  }
  void give(std::unique_ptr<Workspace> w) {
    for (auto& step : w->layers) {
      step.clear();
      w->spare.push_back(std::move(step));
    }
    w->layers.clear();
    if (free_.size() < kKeep && w->capacity_bytes() <= kMaxBytes) free_.push_back(std::move(w));
  }

 private:
  static constexpr size_t kKeep = 12, kMaxBytes = 512 * 1024;
  std::vector<std::unique_ptr<Workspace>> free_;
};
thread_local Workspaces workspaces;

// How much work routed experts do on an axis (balanced routing): experts that receive tokens at
// all, the most any device runs when experts are spread over the axis, and the bytes each
// all-to-all moves (every token's top-k copies).
struct ExpertsLoad {
  int64_t experts = 1;
  double active = 1, per_device = 1, dispatch_bytes = 0;
  // Spread over the rows (ctx.expert_rows): the experts a device runs (its row's share of those that
  // receive tokens, each on every row's tokens for it), and the rows' collectives: dispatch and
  // combine all-to-all when the rows hold their own tokens, else one all-reduce of the output.
  double per_row = 1, rows_bytes = 0;
  Ccl rows_kind = Ccl::AllReduce;
  int rows_count = 0;
};
ExpertsLoad experts_load(const ir::Dataflow& flow, const ir::Op& op, const Context& ctx) {
  ExpertsLoad l;
  l.experts = op.sizes.size() > 0 ? op.sizes[0] : 1;
  const double k = op.sizes.size() > 1 ? static_cast<double>(op.sizes[1]) : 1;
  const double t = op.sizes.size() > 2 ? static_cast<double>(op.sizes[2]) : 1;
  l.active = std::min(static_cast<double>(l.experts), std::max(1.0, t * ctx.activation_scale) * k);
  l.per_device = std::ceil(l.active / ctx.n);
  l.dispatch_bytes = t * k * static_cast<double>(flow.tensors[op.inputs[0]].shape.back()) * ctx.workload.dtype_bytes() *
                     ctx.activation_scale;
  if (ctx.expert_rows > 1) {
    const double hidden = static_cast<double>(flow.tensors[op.inputs[0]].shape.back()) * ctx.workload.dtype_bytes();
    l.per_row = std::ceil(std::min(static_cast<double>(l.experts), std::max(1.0, t) * k) / ctx.expert_rows);
    const bool own_tokens = ctx.activation_scale < 1.0;
    l.rows_kind = own_tokens ? Ccl::AllToAll : Ccl::AllReduce;
    l.rows_count = own_tokens ? 2 : 1;
    l.rows_bytes = own_tokens ? t * k * hidden : t * hidden;
  }
  return l;
}

// The context an expert body is solved in when the experts are spread over the rows: each expert
// sees every row's tokens routed to it, and nothing inside it is spread over the rows again.
Context expert_body_context(const Context& ctx) {
  Context inner = ctx;
  if (ctx.expert_rows > 1) {
    inner.activation_scale = 1.0;
    inner.expert_rows = 0;
  }
  return inner;
}

// An expert's output spec, as the combined [tokens..., features] result takes it: sharded on the
// features (its last dim), or as it is. Sharded on the routed tokens: no combined spec (-1 dim).
Spec combined_spec(const ir::Dataflow& flow, const ir::Op& op, Spec expert_out) {
  if (expert_out.kind != kSharded) return expert_out;
  if (expert_out.dim == 0) return Spec::S(-1);
  return Spec::S(static_cast<int>(flow.tensors[op.inputs[0]].shape.size()) - 1);
}

}  // namespace

const AxisSolver::MemoEntry* AxisSolver::find_memo(uint64_t key) {
  bool was_old = memo_.in_old(key);
  const MemoEntry* entry = memo_.find(key);
  if (entry && was_old)
    for (const Exit& exit : entry->exits)
      for (auto& [nested, nested_exit] : exit.nested)
        if (nested_exit >= 0 && memo_.in_old(nested)) find_memo(nested);
  return entry;
}

namespace {

uint64_t entry_key(uint64_t unkeyed, const std::vector<Spec>& entry) {
  uint64_t k = unkeyed;
  for (auto& s : entry) k = mix64(k, s.code());
  return k;
}

// The callee's memo key for a call in a body, before its entry specs are mixed in.
uint64_t callee_unkeyed(const Prepared& prep, int callee, const Context& ctx, uint64_t ctx_hash) {
  return mix64(mix64(mix64(prep.bodies[callee].signature, ctx_hash), 0x77), pins_key(prep, callee, ctx));
}

// Per ext position of a body: whether its tensor is only handed on to calls. The search then
// never moves it or reads its spec except as a callee's entry spec (a call's step leaves it as it
// is): not read by a leaf op or routed experts, not handed back, not stored (a parameter's layout
// is chosen at its first use).
std::vector<char> find_passed_through(const Prepared& prep, int b) {
  const auto& flow = prep.model->dataflow;
  const auto& body = prep.bodies[b];
  std::vector<char> out(body.ext.size(), 0);
  for (size_t i = 0; i < body.ext.size(); ++i) {
    const int t = body.ext[i];
    if (prep.stored[t] || body.last_use_of(t) < 0) continue;
    if (std::find(body.outputs.begin(), body.outputs.end(), t) != body.outputs.end()) continue;
    bool only_calls = true;
    for (int item : body.items) {
      const ir::Op& op = flow.ops[item];
      if (op.kind == OpKind::Call) continue;
      bool reads = std::find(op.inputs.begin(), op.inputs.end(), t) != op.inputs.end();
      if (op.kind == OpKind::Experts && prep.body_of_op[item] >= 0) {
        const auto& ext = prep.bodies[prep.body_of_op[item]].ext;
        reads = reads || std::find(ext.begin(), ext.end(), t) != ext.end();
      }
      if (reads) {
        only_calls = false;
        break;
      }
    }
    out[i] = only_calls;
  }
  return out;
}

// Whether one choice per item (count(item) choices each) makes over kMaxFreeCombinations
// combinations of the weights a call stores first (counted up to the bound, never overflowing).
template <typename Items, typename Count>
bool over_free_combinations(const Items& items, Count count) {
  size_t product = 1;
  for (const auto& item : items)
    product = std::min(product * std::max<size_t>(count(item), 1), AxisSolver::kMaxFreeCombinations + 1);
  return product > AxisSolver::kMaxFreeCombinations;
}

// The next combination of one choice per list (row-major, the last list fastest) in `digit`;
// false after the last one.
template <typename Lists>
bool next_combination(std::vector<size_t>& digit, const Lists& lists) {
  for (size_t i = digit.size(); i-- > 0;) {
    if (++digit[i] < lists[i].size()) return true;
    digit[i] = 0;
  }
  return false;
}

// An entry's base: the same with every passed-through tensor replicated (derive_by_shift).
std::vector<Spec> base_entry(const std::vector<char>& passed, const std::vector<Spec>& entry) {
  std::vector<Spec> base = entry;
  for (size_t i = 0; i < base.size() && i < passed.size(); ++i)
    if (passed[i]) base[i] = Spec::R();
  return base;
}

}  // namespace

const std::vector<char>& AxisSolver::passed_through(const Prepared& prep, int b) {
  if (passed_.size() != prep.bodies.size()) passed_.assign(prep.bodies.size(), std::nullopt);
  auto& known = passed_[static_cast<size_t>(b)];
  if (!known) known = find_passed_through(prep, b);
  return *known;
}

// A body's search from an entry that differs from another (its base: the same with every
// passed-through tensor replicated) only in passed-through tensors runs exactly as the base's
// does, step for step, if at every call that is handed one of them the callee's results for the
// entry's specs are the base's (the same exits, in the same order) each dearer by one constant:
// until such a call those tensors are only carried along, a call step leaves them be, and costs
// that all differ by one constant compare as before (search_cost makes the sums exact). The
// entry's result is then the base's with the constants added and the calls' memo keys renamed.
// Checked here, at every such call for every callee entry the base's search used; nothing is
// derived where any of it does not hold.
std::optional<AxisSolver::MemoEntry> AxisSolver::derive_by_shift(const Prepared& prep, int b, const std::vector<Spec>& entry,
                                                                 const Context& ctx, uint64_t unkeyed) {
  const auto& body = prep.bodies[b];
  const std::vector<char>& pass = passed_through(prep, b);
  const std::vector<Spec> base = base_entry(pass, entry);
  if (base == entry) return std::nullopt;
  // A callee that keeps refusing (its results move by different amounts for different states: a
  // prefill's cross-attention, say) is searched without trying: each try costs a base search.
  auto& record = derivations_[unkeyed];
  if (record.second > 2 * record.first + 4) return std::nullopt;
  const MemoEntry& from = solve_body(prep, b, base, ctx, entry_key(unkeyed, base));  // a search: the base has no base
  if (from.exits.empty()) return std::nullopt;
  const uint64_t ctx_hash = ctx.hash();
  auto refuse = [&] {
    ++refused_;
    ++derivations_[unkeyed].second;
    return std::nullopt;
  };
  double shift = 0;
  std::vector<std::unordered_map<uint64_t, uint64_t>> renamed(from.uses.size());
  for (size_t u = 0; u < from.uses.size(); ++u) {
    const auto& use = from.uses[u];
    const int nb = prep.body_of_op[body.items[static_cast<size_t>(use.pos)]];
    const auto& nbody = prep.bodies[nb];
    const uint64_t callee = callee_unkeyed(prep, nb, ctx, ctx_hash);
    // Callee ext position -> this entry's spec, for the passed-through tensors it is handed.
    std::vector<std::pair<size_t, Spec>> handed;
    for (size_t j = 0; j < nbody.ext.size(); ++j)
      for (size_t i = 0; i < body.ext.size() && i < entry.size(); ++i)
        if (pass[i] && body.ext[i] == nbody.ext[j]) handed.push_back({j, entry[i]});
    bool first = true;
    double step_shift = 0;
    for (const auto& callee_base : use.entries) {
      std::vector<Spec> callee_entry = callee_base;
      for (auto& [j, spec] : handed) callee_entry[j] = spec;
      const uint64_t kb = entry_key(callee, callee_base), ke = entry_key(callee, callee_entry);
      const MemoEntry& mb = solve_body(prep, nb, callee_base, ctx, kb, callee);
      const MemoEntry& me = solve_body(prep, nb, callee_entry, ctx, ke, callee);
      if (me.exits.size() != mb.exits.size()) return refuse();
      for (size_t x = 0; x < me.exits.size(); ++x) {
        const double d = me.exits[x].cost - mb.exits[x].cost;
        if (me.exits[x].out != mb.exits[x].out || (!first && d != step_shift)) return refuse();
        step_shift = d;
        first = false;
      }
      renamed[u].emplace(kb, ke);
    }
    shift += step_shift;
  }
  MemoEntry out;
  out.entry = entry;
  out.exits = from.exits;
  for (Exit& ex : out.exits) {
    ex.cost += shift;
    for (size_t u = 0; u < from.uses.size(); ++u) {
      auto& [key, exit] = ex.nested[static_cast<size_t>(from.uses[u].pos)];
      auto it = renamed[u].find(key);
      if (exit < 0 || it == renamed[u].end()) return std::nullopt;  // not on record: search instead
      key = it->second;
    }
  }
  ++derived_;
  ++derivations_[unkeyed].first;
  return out;
}

// Routed experts' ways to run on an axis, in the order the search tries them (none depends on the
// layouts of the tensors alive around it): replicated, experts spread over the axis with the
// tokens replicated or dispatched all-to-all, or tensor-parallel inside each expert.
std::vector<AxisSolver::ExpertsOption> AxisSolver::experts_options(const Prepared& prep, int index, const Context& ctx) {
  const auto& flow = prep.model->dataflow;
  const ir::Op& op = flow.ops[index];
  const int nb = prep.body_of_op[index];
  const auto& nbody = prep.bodies[nb];
  const ExpertsLoad load = experts_load(flow, op, ctx);
  const bool over_rows = ctx.expert_rows > 1;
  if (over_rows && load.experts % ctx.expert_rows != 0) return {};  // the experts do not divide over the rows
  Context rctx = expert_body_context(ctx);
  rctx.filter.allowed = kTagReplicated;
  rctx.filter.sharded_norms = false;
  Context tctx = expert_body_context(ctx);
  tctx.filter.allowed = static_cast<uint16_t>((ctx.filter.allowed & (kTagReplicated | kTagTensor | kTagExpertTensor)) | kTagReplicated);
  if (ctx.filter.allowed & kTagExpertTensor) tctx.filter.allowed |= kTagTensor;
  tctx.filter.sharded_norms = false;
  const std::vector<Spec> entry(nbody.ext.size(), Spec::R());
  auto solve_with = [&](const Context& c) -> std::pair<uint64_t, const MemoEntry*> {
    const uint64_t k = entry_key(mix64(mix64(mix64(nbody.signature, c.hash()), 0x99), pins_key(prep, nb, c)), entry);
    return {k, &solve_body(prep, nb, entry, c, k)};
  };
  std::vector<ExpertsOption> out;
  auto add = [&](Spec xs, double extra, Spec result, int mode, std::pair<uint64_t, int> nested, uint16_t tag) {
    if ((ctx.filter.allowed & tag) && (ctx.filter.experts_allowed & tag)) out.push_back({xs, result, extra, mode, nested});
  };
  auto [rkey, rmemo] = solve_with(rctx);
  int rbest = -1;
  for (int x = 0; x < static_cast<int>(rmemo->exits.size()); ++x)
    if (rbest < 0 || rmemo->exits[x].cost < rmemo->exits[rbest].cost) rbest = x;
  const int x_tensor = op.inputs[0];
  const int x_rank = static_cast<int>(flow.tensors[x_tensor].shape.size());
  // Over the rows, each row runs its share of the experts (whole on each of its devices, or split
  // over the columns inside each expert) and the rows exchange tokens (or sum outputs) either way.
  const double body_times = over_rows ? load.per_row : load.active;
  const double rows_us = over_rows ? load.rows_count * (rows_collective_us(ctx, load.rows_kind, load.rows_bytes) + ctx.ccl_penalty_us) : 0;
  if (rbest >= 0) {
    add(Spec::R(), rmemo->exits[rbest].cost * body_times + rows_us, Spec::R(), 0, {rkey, rbest}, kTagReplicated);
    if (!over_rows && load.experts % ctx.n == 0 && ctx.n > 1) {
      add(Spec::R(), rmemo->exits[rbest].cost * load.per_device, Spec::P(), 2, {rkey, rbest}, kTagExpertLocal);
      for (int d = 0; d + 1 < x_rank; ++d) {
        if (!(flow.tensors[x_tensor].shape[d] % ctx.n == 0 && flow.tensors[x_tensor].shape[d] >= ctx.n)) continue;
        const double a2a = 2 * (collective_us(ctx, Ccl::AllToAll, load.dispatch_bytes) + ctx.ccl_penalty_us);
        add(Spec::S(d), rmemo->exits[rbest].cost * load.per_device + a2a, Spec::S(d), 3, {rkey, rbest}, kTagExpertAllToAll);
      }
    }
  }
  if (ctx.n > 1) {
    auto [tkey, tmemo] = solve_with(tctx);
    for (int x = 0; x < static_cast<int>(tmemo->exits.size()); ++x) {
      const Exit& ex = tmemo->exits[x];
      if (ex.out.empty()) continue;
      const Spec o = combined_spec(flow, op, ex.out[0]);
      if ((o.kind == kSharded && o.dim < 0) || o.kind == kSegments) continue;
      add(Spec::R(), ex.cost * body_times + rows_us, o, 1, {tkey, x}, kTagExpertTensor);
    }
  }
  return out;
}

const AxisSolver::MemoEntry& AxisSolver::solve_body(const Prepared& prep, int b, const std::vector<Spec>& entry,
                                                    const Context& ctx, uint64_t key, uint64_t unkeyed) {
  if (const MemoEntry* found = find_memo(key)) return *found;
  if (unkeyed != 0 && derive_)
    if (auto derived = derive_by_shift(prep, b, entry, ctx, unkeyed)) return memo_.emplace(key, std::move(*derived));
  // Only here, before any work on the body: what was solved so far is all in the memo.
  if (cancelled_ && cancelled_()) throw PlanCancelled();
  if (method_ == BodyMethod::Elimination)
    if (auto eliminated = eliminate_body(prep, b, entry, ctx)) return memo_.emplace(key, std::move(*eliminated));
  bool elimination_tried = method_ == BodyMethod::Elimination;
  const auto& flow = prep.model->dataflow;
  const uint64_t ctx_hash = ctx.hash();
  const auto& body = prep.bodies[b];
  struct Lease {
    std::unique_ptr<Workspace> ws = workspaces.take();
    ~Lease() { workspaces.give(std::move(ws)); }
  } lease;
  Workspace& ws = *lease.ws;
  auto& layers = ws.layers;
  layers.reserve(body.items.size() + 1);
  auto new_step = [&]() {
    std::vector<Node> step;
    if (!ws.spare.empty()) {
      step = std::move(ws.spare.back());
      ws.spare.pop_back();
    }
    return step;
  };
  // The states of the step being extended and of the step being built.
  StatePool& cur_pool = ws.pools[0];
  StatePool& next_pool = ws.pools[1];
  cur_pool.clear();
  {
    Node start;
    State state;
    for (size_t i = 0; i < body.ext.size() && i < entry.size(); ++i)
      if (body.last_use_of(body.ext[i]) >= 0) put(state, body.ext[i], entry[i]);
    start.hash = hash_of(state);
    cur_pool.store(start, state);
    layers.push_back(new_step());
    layers.back().push_back(std::move(start));
  }
  auto live_after = [&](int t, int pos) { return body.last_use_of(t) > pos; };
  // A state holds only live tensors, so after step `pos` exactly those last used there leave it.
  auto prune_dead = [&](State& s, int pos) {
    const auto dying = body.dies_at(static_cast<size_t>(pos));
    if (dying.empty()) return;
    auto d = dying.begin();
    s.erase(std::remove_if(s.begin(), s.end(),
                           [&](auto& e) {
                             while (d != dying.end() && *d < e.first) ++d;
                             return d != dying.end() && *d == e.first;
                           }),
            s.end());
  };
  size_t work = 0;  // states made over the steps: the programme's cost (presolve_entries)
  StateTable& table = ws.table;
  State& scratch = ws.scratch;  // the candidate state being built (reused: duplicates cost no allocation)
  std::vector<std::pair<int, double>> usable;  // per leaf op: (strategy, its collectives' cost)
  MemoEntry entry_result;
  // The tensors this body only hands on to calls, and whether a callee is handed one of them:
  // recorded for a base entry only (the others' records are never read).
  std::vector<int> passed;
  {
    const std::vector<char>& pass = passed_through(prep, b);
    if (base_entry(pass, entry) == entry)
      for (size_t i = 0; i < pass.size(); ++i)
        if (pass[i]) passed.push_back(body.ext[i]);
  }
  auto hands_on_passed = [&](const Prepared::Body& callee) {
    for (int t : passed)
      if (std::find(callee.ext.begin(), callee.ext.end(), t) != callee.ext.end()) return true;
    return false;
  };
  auto output_pin = [&](const ir::Op& op) -> const Spec* {
    if (ctx.pinned_outputs.empty() || op.module < 0) return nullptr;
    auto it = ctx.pinned_outputs.find(op.module);
    return it == ctx.pinned_outputs.end() ? nullptr : &it->second;
  };

  for (size_t pos = 0; pos < body.items.size(); ++pos) {
    const int index = body.items[pos];
    const ir::Op& op = flow.ops[index];
    const int p = static_cast<int>(pos);
    std::vector<Node> next = new_step();
    const auto& cur = layers.back();
    table.reset(cur.size());
    next_pool.clear();
    // Merges the candidate in `scratch` (with `n`'s cost and back-pointers) into the step's states.
    auto relax = [&](Node&& n) {
      prune_dead(scratch, p);
      uint64_t k = hash_of(scratch);
      int found = table.find(next, next_pool, k, scratch);
      if (found >= 0) {
        Node& other = next[found];
        if (n.cost < other.cost - 1e-9) {
          other.cost = n.cost;
          other.prev = n.prev;
          other.decision = std::move(n.decision);
          other.nested = n.nested;
        }
        return;
      }
      next_pool.store(n, scratch);
      n.hash = k;
      next.push_back(std::move(n));
      table.insert(next, static_cast<int>(next.size()) - 1);
    };
    // Transition of a tensor to `to`, first uses of free tensors included.
    auto move = [&](StateView s, int t, Spec to, double& cost, State& ns) -> bool {
      const Spec* have = find(s, t);
      Spec from = have ? *have : Spec::R();
      if (!have && prep.stored[t]) {
        const std::optional<double> stored = first_store_cost(prep, t, to, ctx);
        if (!stored) return false;
        cost += *stored;
        if (live_after(t, p)) put(ns, t, to);
        return true;
      }
      int kind;
      double bytes;
      cost += search_cost(transition_us(prep, t, from, to, ctx, &kind, &bytes));
      if (live_after(t, p)) put(ns, t, to);
      return true;
    };

    if (op.kind == OpKind::Call || op.kind == OpKind::Experts) {
      const int nb = prep.body_of_op[index];
      const auto& nbody = prep.bodies[nb];
      if (op.kind == OpKind::Call) {
        // The callee's memo key without its entry specs: the same for every state.
        const uint64_t callee_key = callee_unkeyed(prep, nb, ctx, ctx_hash);
        const size_t ext_count = nbody.ext.size();
        std::vector<std::vector<Spec>> storage_options(ext_count);  // per free ext tensor, made once per step
        std::vector<const Spec*> options(ext_count);
        std::vector<size_t> option_count(ext_count), digit(ext_count);
        std::vector<char> stored_first(ext_count);  // per ext tensor: a weight stored first at this call
        const Spec replicated = Spec::R();
        std::vector<Spec> e(ext_count);
        // Every (state, entry specs) the step runs the callee with, in order: listed, then merged.
        auto& call_node = ws.call_node;
        auto& call_key = ws.call_key;
        auto& call_entries = ws.call_entries;  // ext_count per call
        call_node.clear();
        call_key.clear();
        call_entries.clear();
        for (int ni = 0; ni < static_cast<int>(cur.size()); ++ni) {
          const StateView state = cur_pool.view(cur[ni]);
          // Entry specs: from the state; free tensors enumerate their storage layouts, every
          // combination, the last tensor's fastest.
          bool any = true;
          stored_first.assign(ext_count, 0);
          for (size_t i = 0; i < ext_count; ++i) {
            const int t = nbody.ext[i];
            if (const Spec* have = find(state, t)) {
              options[i] = have;
              option_count[i] = 1;
            } else if (prep.stored[t]) {
              stored_first[i] = 1;
              if (storage_options[i].empty()) storage_options[i] = free_options(prep, t, ctx);
              options[i] = storage_options[i].data();
              option_count[i] = storage_options[i].size();
            } else {
              options[i] = &replicated;
              option_count[i] = 1;
            }
            any = any && option_count[i] > 0;
            digit[i] = 0;
          }
          if (any && greedy_free_layouts(prep, nb, stored_first, options.data(), option_count.data(), digit.data(), ctx, callee_key)) {
            // One combination per state: the one the greedy walk settled on.
            for (size_t i = 0; i < ext_count; ++i) e[i] = options[i][digit[i]];
            call_node.push_back(ni);
            call_key.push_back(entry_key(callee_key, e));
            call_entries.insert(call_entries.end(), e.begin(), e.end());
            continue;
          }
          for (bool more = any; more;) {
            for (size_t i = 0; i < ext_count; ++i) e[i] = options[i][digit[i]];
            more = false;
            for (size_t i = ext_count; i-- > 0;) {
              if (++digit[i] < option_count[i]) {
                more = true;
                break;
              }
              digit[i] = 0;
            }
            call_node.push_back(ni);
            call_key.push_back(entry_key(callee_key, e));
            call_entries.insert(call_entries.end(), e.begin(), e.end());
          }
        }
        {
          // The layouts each ext position meets over the states: one elimination for all of
          // their combinations when there are several (presolve_entries).
          std::vector<std::vector<Spec>> seen_at(ext_count);
          for (size_t c = 0; c < call_key.size(); ++c)
            for (size_t i = 0; i < ext_count; ++i) {
              const Spec& sp = call_entries[c * ext_count + i];
              if (std::find(seen_at[i].begin(), seen_at[i].end(), sp) == seen_at[i].end()) seen_at[i].push_back(sp);
            }
          if (!call_key.empty()) presolve_entries(prep, nb, seen_at, ctx, callee_key);
        }
        if (hands_on_passed(nbody)) {
          MemoEntry::CallUse use;
          use.pos = p;
          std::unordered_set<uint64_t> seen;
          for (size_t c = 0; c < call_key.size(); ++c)
            if (seen.insert(call_key[c]).second)
              use.entries.emplace_back(call_entries.begin() + static_cast<long>(c * ext_count),
                                       call_entries.begin() + static_cast<long>((c + 1) * ext_count));
          entry_result.uses.push_back(std::move(use));
        }
        for (size_t c = 0; c < call_node.size(); ++c) {
          const int ni = call_node[c];
          const Node& node = cur[ni];
          const StateView state = cur_pool.view(node);
          const uint64_t k = call_key[c];
          std::copy_n(call_entries.begin() + static_cast<long>(c * ext_count), ext_count, e.begin());
          {
            const MemoEntry& me = solve_body(prep, nb, e, ctx, k, callee_key);
            for (int x = 0; x < static_cast<int>(me.exits.size()); ++x) {
              const Exit& ex = me.exits[x];
              Node n;
              scratch.assign(state.begin(), state.end());
              n.cost = node.cost + ex.cost;
              n.prev = ni;
              for (size_t i = 0; i < nbody.ext.size(); ++i) {
                int t = nbody.ext[i];
                if (!find(state, t) && prep.stored[t]) {
                  n.decision.free_specs.push_back(e[i]);
                  n.cost += search_cost(storage_cost(prep, t, e[i], ctx));
                  if (live_after(t, p)) put(scratch, t, e[i]);
                }
              }
              for (size_t o = 0; o < op.outputs.size() && o < ex.out.size(); ++o) {
                Spec s = ex.out[o];
                if (const Spec* pin = output_pin(op)) {
                  int kind;
                  double bytes;
                  n.cost += search_cost(transition_us(prep, op.outputs[o], s, *pin, ctx, &kind, &bytes));
                  s = *pin;
                }
                if (live_after(op.outputs[o], p)) put(scratch, op.outputs[o], s);
              }
              n.nested = {k, x};
              relax(std::move(n));
            }
          }
        }
      } else {
        // Routed experts: replicated, tensor-parallel inside each expert, or expert-parallel.
        const std::vector<ExpertsOption> options = experts_options(prep, index, ctx);
        for (int ni = 0; ni < static_cast<int>(cur.size()); ++ni) {
          const Node& node = cur[ni];
          const StateView state = cur_pool.view(node);
          for (const ExpertsOption& o : options) {
            Node n;
            scratch.assign(state.begin(), state.end());
            n.cost = node.cost + search_cost(o.extra);
            n.prev = ni;
            if (!move(state, op.inputs[0], o.xs, n.cost, scratch)) continue;
            if (op.inputs.size() > 1 && !move(state, op.inputs[1], o.xs, n.cost, scratch)) continue;
            if (live_after(op.outputs[0], p)) put(scratch, op.outputs[0], o.out);
            n.decision.experts_mode = o.mode;
            n.decision.experts_tokens = o.xs;
            n.nested = o.nested;
            relax(std::move(n));
          }
        }
      }
    } else {
      const std::vector<Strat>& strats = strategies_.get(prep, index, ctx, ctx_hash);
      const Spec* pin = output_pin(op);
      usable_strategies(op, strats, ctx, usable);
      for (int ni = 0; ni < static_cast<int>(cur.size()); ++ni) {
        const Node& node = cur[ni];
        const StateView state = cur_pool.view(node);
        for (const auto& [si, extra_us] : usable) {
          const Strat& st = strats[si];
          Node n;
          scratch.assign(state.begin(), state.end());
          n.cost = node.cost + search_cost(st.compute_us);
          n.cost += search_cost(extra_us);
          bool ok = true;
          for (size_t i = 0; i < op.inputs.size() && ok; ++i) {
            // An input used twice by one op (x * x) takes the first requirement.
            bool repeated = false;
            for (size_t j = 0; j < i; ++j) repeated |= op.inputs[j] == op.inputs[i];
            if (repeated) continue;
            ok = move(state, op.inputs[i], st.in[i], n.cost, scratch);
          }
          if (!ok) continue;
          for (size_t o = 0; o < op.outputs.size() && o < st.out.size(); ++o) {
            Spec s = st.out[o];
            if (pin) {
              int kind;
              double bytes;
              n.cost += search_cost(transition_us(prep, op.outputs[o], s, *pin, ctx, &kind, &bytes));
              s = *pin;
            }
            if (live_after(op.outputs[o], p)) put(scratch, op.outputs[o], s);
          }
          n.prev = ni;
          n.decision.strategy = si;
          relax(std::move(n));
        }
      }
    }
    if (next.empty()) break;  // no strategy fits (pins contradict): the body is infeasible
    if (next.size() > 1) {
      // Exact pruning: moving a replicated tensor to any layout costs nothing (transition_us),
      // and what follows depends on a state only through such moves, so a state that differs
      // from another only by R where the other is sharded or partial, at no higher cost, is at
      // least as good. One tensor at a time finds most of them. (Run at every step, it keeps
      // the states few: the bench LSP model plans 2.8x faster than pruning only over the cap.)
      std::vector<char> dominated(next.size(), 0);
      for (size_t k = 0; k < next.size(); ++k) {
        const Node& n = next[k];
        const StateView state = next_pool.view(n);
        for (size_t e = 0; e < state.size() && !dominated[k]; ++e) {
          // Not a structured binding: the lambda below captures t, which clang before 16 refuses.
          const auto& t = state[e].first;
          const auto& spec = state[e].second;
          if (spec.kind == kReplicated) continue;
          // The state with entry e replicated, probed by its hash.
          uint64_t h = n.hash - entry_hash(t, spec) + entry_hash(t, Spec::R());
          int other = table.find_if(next, next_pool, h, [&](StateView s) {
            if (s.size() != state.size()) return false;
            for (size_t i = 0; i < s.size(); ++i)
              if (i == e ? !(s[i].first == t && s[i].second == Spec::R()) : !(s[i] == state[i])) return false;
            return true;
          });
          if (other >= 0 && next[other].cost <= n.cost) dominated[k] = 1;
        }
      }
      size_t kept = 0;
      for (size_t k = 0; k < next.size(); ++k)
        if (!dominated[k]) {
          if (kept != k) next[kept] = std::move(next[k]);
          ++kept;
        }
      next.resize(kept);
    }
    if (method_ == BodyMethod::Auto && !elimination_tried && next.size() > kEliminateAbove) {
      // Many layouts alive at once: elimination's cost does not multiply with them.
      elimination_tried = true;
      work_ += work;
      work = 0;
      if (auto eliminated = eliminate_body(prep, b, entry, ctx)) return memo_.emplace(key, std::move(*eliminated));
    }
    if (next.size() > kMaxStates) {
      // Many tensors live at once (a forward that keeps every intermediate result): the number of
      // layouts grows as their product. Keep the cheapest states — exact no longer, and said so.
      std::nth_element(next.begin(), next.begin() + kMaxStates, next.end(),
                       [](const Node& a, const Node& b) { return a.cost < b.cost; });
      next.resize(kMaxStates);
      truncated_ = true;
      // SHARDLENS_PLAN_DEBUG=1: which body (and where in it) the live layouts outgrow the cap.
      static const bool debug = std::getenv("SHARDLENS_PLAN_DEBUG") != nullptr;
      if (debug)
        std::fprintf(stderr, "truncated: body %d (module %s) at item %zu/%zu (%s), %zu live tensors, ext %zu\n", b,
                     body.op >= 0 && flow.ops[body.op].module >= 0 ? prep.model->modules[flow.ops[body.op].module].name.c_str() : "(root)",
                     pos, body.items.size(), op.name.c_str(), static_cast<size_t>(next[0].state_size), body.ext.size());
    }
    work += next.size() + 1;
    layers.push_back(std::move(next));
    // Walking back needs only the back-pointers of earlier steps: their states may go.
    std::swap(cur_pool, next_pool);
  }

  work_ += work;
  entry_result.entry = entry;
  if (layers.size() == body.items.size() + 1) {
    std::map<std::vector<uint32_t>, int> best;  // out specs -> exit index
    const auto& last = layers.back();
    for (int ni = 0; ni < static_cast<int>(last.size()); ++ni) {
      const Node& node = last[ni];
      std::vector<Spec> outs;
      double cost = node.cost;
      for (int t : body.outputs) {
        const Spec* s = find(cur_pool.view(node), t);
        Spec spec = s ? *s : Spec::R();
        if (b == 0 && !(spec == Spec::R())) {
          // The model's outputs leave replicated (logits gathered for sampling).
          int kind;
          double bytes;
          cost += search_cost(transition_us(prep, t, spec, Spec::R(), ctx, &kind, &bytes));
          spec = Spec::R();
        }
        outs.push_back(spec);
      }
      std::vector<uint32_t> codes;
      for (auto& s : outs) codes.push_back(s.code());
      auto it = best.find(codes);
      if (it != best.end() && entry_result.exits[it->second].cost <= cost) continue;
      // Walk back to collect the decisions.
      Exit ex;
      ex.out = outs;
      ex.cost = cost;
      ex.decisions.resize(body.items.size());
      ex.nested.assign(body.items.size(), {0, -1});
      int at = ni;
      for (size_t l = layers.size() - 1; l >= 1; --l) {
        const Node& nd = layers[l][at];
        ex.decisions[l - 1] = nd.decision;
        ex.nested[l - 1] = nd.nested;
        at = nd.prev;
      }
      if (it == best.end()) {
        best[codes] = static_cast<int>(entry_result.exits.size());
        entry_result.exits.push_back(std::move(ex));
      } else {
        entry_result.exits[it->second] = std::move(ex);
      }
    }
  }
  return memo_.emplace(key, std::move(entry_result));
}

bool AxisSolver::greedy_free_layouts(const Prepared& prep, int nb, const std::vector<char>& stored_first, const Spec* const* options,
                                     const size_t* option_count, size_t* digit, const Context& ctx, uint64_t callee_key) {
  const auto& nbody = prep.bodies[nb];
  const size_t ext_count = nbody.ext.size();
  if (!over_free_combinations(std::span<const size_t>(option_count, ext_count), [](size_t n) { return n; })) return false;
  // A module called more than once (ALBERT's shared layer) reads weights whose one layout serves
  // every call, so they are stored before its first call: every combination of their layouts is
  // too many to try (3^16 for one attention + MLP). Walk them one weight at a time instead, from
  // all replicated, keeping a change when it lowers the callee's best exit plus the storage cost.
  std::vector<Spec> e(ext_count);
  auto total = [&]() {
    for (size_t i = 0; i < ext_count; ++i) e[i] = options[i][digit[i]];
    const MemoEntry& me = solve_body(prep, nb, e, ctx, entry_key(callee_key, e), callee_key);
    double best = std::numeric_limits<double>::infinity();
    for (const Exit& ex : me.exits) best = std::min(best, ex.cost);
    for (size_t i = 0; i < ext_count; ++i)
      if (stored_first[i]) {
        const std::optional<double> stored = first_store_cost(prep, nbody.ext[i], e[i], ctx);
        if (!stored) return std::numeric_limits<double>::infinity();
        best += *stored;
      }
    return best;
  };
  double current = total();
  for (int pass = 0; pass < kGreedyPasses; ++pass) {
    bool improved = false;
    for (size_t i = 0; i < ext_count; ++i) {
      if (option_count[i] < 2) continue;
      const size_t kept = digit[i];
      size_t best_digit = kept;
      for (size_t d = 0; d < option_count[i]; ++d) {
        if (d == kept) continue;
        digit[i] = d;
        if (const double c = total(); c < current) {
          current = c;
          best_digit = d;
        }
      }
      digit[i] = best_digit;
      improved |= best_digit != kept;
    }
    if (!improved) break;
  }
  greedy_free_ = true;
  return true;
}

// The same search as solve_body's programme, as a graph: one variable per op of the body (its
// strategy; a call's free layouts and exit; routed experts' mode), and per op one factor over its
// own variable and those of the ops that last set the layouts of the tensors it reads (what the
// programme's state would hold there), each adding exactly the terms the programme adds at that
// step. The least total per exit layout is the programme's (its dominance pruning is exact);
// among equal totals the choice may differ where the programme's order of states decided.
std::optional<AxisSolver::MemoEntry> AxisSolver::eliminate_body(const Prepared& prep, int b, const std::vector<Spec>& entry,
                                                                const Context& ctx) {
  std::vector<std::vector<Spec>> options;
  for (const Spec& s : entry) options.push_back({s});
  auto results = eliminate_entries(prep, b, options, ctx);
  if (!results) return std::nullopt;
  return std::move(results->front());
}

void AxisSolver::presolve_entries(const Prepared& prep, int nb, const std::vector<std::vector<Spec>>& options, const Context& ctx,
                                  uint64_t callee_key) {
  if (method_ == BodyMethod::Programme || !presolve_) return;
  size_t combos = 1;
  for (const auto& o : options) combos *= std::max<size_t>(o.size(), 1);
  if (combos < kPresolveEntriesFrom || combos > kPresolveEntriesUpTo) return;
  // Worth it when searching the entries one by one would cost more than one elimination over
  // them all (an attention body handed cos and sin: every entry searched alone meets the same
  // large tables); the work of one entry's search (callees' included) is recorded per body.
  const uint64_t signature = prep.bodies[nb].signature;
  if (!entry_work_.count(signature)) {
    std::vector<Spec> first(options.size());
    for (size_t i = 0; i < options.size(); ++i) first[i] = options[i][0];
    const uint64_t k = entry_key(callee_key, first);
    if (find_memo(k)) return;  // solved before, by another route: nothing to measure
    const size_t before = work_;
    solve_body(prep, nb, first, ctx, k, callee_key);
    entry_work_[signature] = work_ - before;
  }
  // Solved already (a re-plan, or another call of the same body): nothing to gain.
  std::vector<size_t> digit(options.size(), 0);
  std::vector<Spec> e(options.size());
  size_t missing = 0;
  for (bool more = true; more; more = next_combination(digit, options)) {
    for (size_t i = 0; i < options.size(); ++i) e[i] = options[i][digit[i]];
    if (!find_memo(entry_key(callee_key, e))) ++missing;
  }
  if (missing < kPresolveEntriesFrom || missing * entry_work_[signature] < kPresolveWork) return;
  if (cancelled_ && cancelled_()) throw PlanCancelled();
  auto results = eliminate_entries(prep, nb, options, ctx);
  if (!results) return;
  for (MemoEntry& r : *results) {
    const uint64_t k = entry_key(callee_key, r.entry);
    if (!find_memo(k)) {
      memo_.emplace(k, std::move(r));
      ++presolved_;
    }
  }
}

std::optional<std::vector<AxisSolver::MemoEntry>> AxisSolver::eliminate_entries(const Prepared& prep, int b,
                                                                                const std::vector<std::vector<Spec>>& entry_options,
                                                                                const Context& ctx) {
  constexpr double kNo = MinSumElimination::kInfeasible;
  constexpr int kEntry = -1, kNone = -2;  // writers that are no op: the entry specs; nothing (stored: free, else R)
  const auto& flow = prep.model->dataflow;
  const uint64_t ctx_hash = ctx.hash();
  const auto& body = prep.bodies[b];
  const size_t m = body.items.size();
  std::unordered_map<int, int> writer;  // tensor -> the item that last set its layout (or kEntry)
  std::unordered_map<int, Spec> entry_spec;
  // An ext tensor that may arrive in several layouts is a variable of its own (after the m items),
  // kept to the end: one elimination answers every entry.
  std::vector<int> entry_var_of(body.ext.size(), -1);  // ext position -> its variable
  std::vector<std::vector<Spec>> var_options;
  for (size_t i = 0; i < body.ext.size() && i < entry_options.size(); ++i)
    if (body.last_use_of(body.ext[i]) >= 0) {
      if (entry_options[i].size() == 1) {
        writer[body.ext[i]] = kEntry;
        entry_spec[body.ext[i]] = entry_options[i][0];
      } else {
        entry_var_of[i] = static_cast<int>(m + var_options.size());
        writer[body.ext[i]] = entry_var_of[i];
        var_options.push_back(entry_options[i]);
      }
    }
  auto writer_of = [&](int t) {
    auto it = writer.find(t);
    return it == writer.end() ? kNone : it->second;
  };
  struct CallOption {
    int combo = 0;  // index of the free layouts (Item::free_combos)
    std::vector<Spec> out;
  };
  struct Item {
    std::vector<std::pair<int, std::vector<Spec>>> sets;  // tensor -> its layout after the op, per option
    std::vector<int> strategy;                             // leaf: per option
    std::vector<ExpertsOption> experts;
    std::vector<CallOption> calls;
    std::vector<std::vector<Spec>> free_combos;            // call: layouts of the stored tensors it stores first
    std::unordered_map<uint64_t, std::pair<uint64_t, const MemoEntry*>> callee;  // entry codes hash -> (key, result)
    int domain() const { return static_cast<int>(!strategy.empty() ? strategy.size() : !experts.empty() ? experts.size() : calls.size()); }
    const Spec& spec(int t, int option) const {
      for (size_t k = sets.size(); k-- > 0;)
        if (sets[k].first == t) return sets[k].second[static_cast<size_t>(option)];
      static const Spec replicated;
      return replicated;
    }
  };
  std::vector<Item> items(m + var_options.size());
  std::vector<int> domain(m + var_options.size(), 0);
  for (size_t v = 0; v < var_options.size(); ++v) {
    domain[m + v] = static_cast<int>(var_options[v].size());
    for (size_t i = 0; i < entry_var_of.size(); ++i)
      if (entry_var_of[i] == static_cast<int>(m + v)) items[m + v].sets.push_back({body.ext[i], var_options[v]});
  }
  std::vector<MinSumElimination::Factor> factors;
  // The tensors an op reads with their writers; a factor over the writers' variables and the op's.
  struct Read {
    int t, writer;
  };
  bool too_big = false;  // an op's own table would exceed kMaxTable
  auto build_factor = [&](int p, const std::vector<Read>& reads, auto&& cost) {
    if (domain[static_cast<size_t>(p)] == 0) return;  // infeasible: the caller returns
    MinSumElimination::Factor f;
    for (const Read& r : reads)
      if (r.writer >= 0 && std::find(f.vars.begin(), f.vars.end(), r.writer) == f.vars.end()) f.vars.push_back(r.writer);
    std::sort(f.vars.begin(), f.vars.end());
    f.vars.push_back(p);
    size_t size = 1;
    for (int v : f.vars) size = std::min(size * static_cast<size_t>(domain[static_cast<size_t>(v)]), kMaxTable + 1);
    if (size > kMaxTable) {
      too_big = true;
      return;
    }
    f.values.reserve(size);
    std::vector<int> digit(f.vars.size(), 0);
    std::vector<Spec> specs(reads.size());
    for (bool more = true; more;) {
      for (size_t r = 0; r < reads.size(); ++r) {
        const int w = reads[r].writer;
        if (w == kEntry) specs[r] = entry_spec[reads[r].t];
        else if (w == kNone) specs[r] = Spec::R();
        else {
          const size_t k = static_cast<size_t>(std::find(f.vars.begin(), f.vars.end(), w) - f.vars.begin());
          specs[r] = items[static_cast<size_t>(w)].spec(reads[r].t, digit[k]);
        }
      }
      f.values.push_back(cost(digit.back(), specs));
      more = false;
      for (size_t k = f.vars.size(); k-- > 0;) {
        if (++digit[k] < domain[static_cast<size_t>(f.vars[k])]) {
          more = true;
          break;
        }
        digit[k] = 0;
      }
    }
    factors.push_back(std::move(f));
  };
  // What a step pays to bring tensor t (read from `w` in `from`) to `to`: the programme's move().
  auto move_cost = [&](int t, int w, Spec from, Spec to) -> double {
    if (w == kNone && prep.stored[t]) return first_store_cost(prep, t, to, ctx).value_or(kNo);
    int kind;
    double bytes;
    return search_cost(transition_us(prep, t, from, to, ctx, &kind, &bytes));
  };
  auto pin_cost = [&](const ir::Op& op, int t, Spec s) -> double {
    if (ctx.pinned_outputs.empty() || op.module < 0) return 0;
    auto it = ctx.pinned_outputs.find(op.module);
    if (it == ctx.pinned_outputs.end()) return 0;
    int kind;
    double bytes;
    return search_cost(transition_us(prep, t, s, it->second, ctx, &kind, &bytes));
  };
  auto pinned_spec = [&](const ir::Op& op, Spec s) {
    if (ctx.pinned_outputs.empty() || op.module < 0) return s;
    auto it = ctx.pinned_outputs.find(op.module);
    return it == ctx.pinned_outputs.end() ? s : it->second;
  };
  // Per call that is handed a tensor the body only passes on, every callee entry listed; each
  // base entry's result records those its own layouts allow (as solve_body).
  const std::vector<char>& pass = passed_through(prep, b);
  struct PassedUse {
    MemoEntry::CallUse use;
    std::vector<int> var_at;  // per callee ext position: the entry variable that sets it, or -1
  };
  std::vector<PassedUse> passed_uses;
  auto entries_all_infeasible = [&]() {
    // Every entry's result: no exits.
    std::vector<MemoEntry> out;
    std::vector<size_t> digit(entry_options.size(), 0);
    for (bool more = true; more; more = next_combination(digit, entry_options)) {
      MemoEntry r;
      for (size_t i = 0; i < entry_options.size(); ++i) r.entry.push_back(entry_options[i][digit[i]]);
      out.push_back(std::move(r));
    }
    return out;
  };

  for (size_t pos = 0; pos < m; ++pos) {
    const int index = body.items[pos];
    const int p = static_cast<int>(pos);
    const ir::Op& op = flow.ops[index];
    Item& item = items[pos];
    std::vector<Read> reads;
    if (op.kind == OpKind::Call) {
      const int nb = prep.body_of_op[index];
      const auto& nbody = prep.bodies[nb];
      const uint64_t callee_key = callee_unkeyed(prep, nb, ctx, ctx_hash);
      const size_t ext_count = nbody.ext.size();
      // Per ext tensor: the layouts it may arrive in (a writer's distinct ones), or free.
      std::vector<std::vector<Spec>> arrive(ext_count);
      std::vector<size_t> free_at;
      std::vector<std::vector<Spec>> free_opts;
      for (size_t i = 0; i < ext_count; ++i) {
        const int t = nbody.ext[i];
        const int w = writer_of(t);
        reads.push_back({t, w});
        if (w == kEntry) arrive[i] = {entry_spec[t]};
        else if (w == kNone && prep.stored[t]) {
          free_at.push_back(i);
          free_opts.push_back(free_options(prep, t, ctx));
          arrive[i] = free_opts.back();
        } else if (w == kNone) arrive[i] = {Spec::R()};
        else
          for (int o = 0; o < domain[static_cast<size_t>(w)]; ++o) {
            const Spec s = items[static_cast<size_t>(w)].spec(t, o);
            if (std::find(arrive[i].begin(), arrive[i].end(), s) == arrive[i].end()) arrive[i].push_back(s);
          }
      }
      // Free layouts: every combination, the last tensor's fastest (as the programme lists them).
      {
        std::vector<size_t> d(free_at.size(), 0);
        if (over_free_combinations(free_opts, [](const std::vector<Spec>& o) { return o.size(); }))
          return std::nullopt;  // the programme walks them greedily
        bool any = std::all_of(free_opts.begin(), free_opts.end(), [](auto& o) { return !o.empty(); });
        for (bool more = any; more; more = next_combination(d, free_opts)) {
          std::vector<Spec> combo;
          for (size_t k = 0; k < free_at.size(); ++k) combo.push_back(free_opts[k][d[k]]);
          item.free_combos.push_back(std::move(combo));
        }
      }
      auto codes_of = [](const std::vector<Spec>& e) {
        uint64_t h = 0x3141;
        for (const Spec& s : e) h = mix64(h, s.code());
        return h;
      };
      presolve_entries(prep, nb, arrive, ctx, callee_key);
      // Every entry the callee may be run with: solved once each (memoized), exits listed.
      MemoEntry::CallUse use;
      use.pos = p;
      {
        std::vector<size_t> d(ext_count, 0);
        bool any = std::all_of(arrive.begin(), arrive.end(), [](auto& a) { return !a.empty(); });
        std::vector<Spec> e(ext_count);
        for (bool more = any; more; more = next_combination(d, arrive)) {
          for (size_t i = 0; i < ext_count; ++i) e[i] = arrive[i][d[i]];
          int combo = 0;
          if (!free_at.empty()) {
            // The combination index of the free tensors' layouts in this entry.
            for (size_t k = 0; k < free_at.size(); ++k)
              combo = combo * static_cast<int>(free_opts[k].size()) + static_cast<int>(d[free_at[k]]);
          }
          const uint64_t k = entry_key(callee_key, e);
          const MemoEntry& me = solve_body(prep, nb, e, ctx, k, callee_key);
          item.callee.emplace(codes_of(e), std::make_pair(k, &me));
          use.entries.push_back(e);
          for (const Exit& ex : me.exits) {
            bool known = false;
            for (const CallOption& o : item.calls) known = known || (o.combo == combo && o.out == ex.out);
            if (!known) item.calls.push_back({combo, ex.out});
          }
        }
      }
      {
        bool handed = false;
        for (size_t i = 0; i < pass.size() && i < body.ext.size(); ++i)
          handed |= pass[i] && std::find(nbody.ext.begin(), nbody.ext.end(), body.ext[i]) != nbody.ext.end();
        if (handed) {
          PassedUse pu{std::move(use), std::vector<int>(ext_count, -1)};
          for (size_t i = 0; i < ext_count; ++i)
            if (reads[i].writer >= static_cast<int>(m)) pu.var_at[i] = reads[i].writer;
          passed_uses.push_back(std::move(pu));
        }
      }
      domain[pos] = item.domain();
      for (size_t k = 0; k < free_at.size(); ++k) {
        std::vector<Spec> by_option;
        for (const CallOption& o : item.calls) by_option.push_back(item.free_combos[static_cast<size_t>(o.combo)][k]);
        item.sets.push_back({nbody.ext[free_at[k]], std::move(by_option)});
      }
      for (size_t o = 0; o < op.outputs.size(); ++o) {
        std::vector<Spec> by_option;
        for (const CallOption& c : item.calls) by_option.push_back(o < c.out.size() ? pinned_spec(op, c.out[o]) : Spec::R());
        item.sets.push_back({op.outputs[o], std::move(by_option)});
      }
      build_factor(p, reads, [&](int option, const std::vector<Spec>& specs) -> double {
        const CallOption& o = item.calls[static_cast<size_t>(option)];
        std::vector<Spec> e = specs;
        for (size_t k = 0; k < free_at.size(); ++k) e[free_at[k]] = item.free_combos[static_cast<size_t>(o.combo)][k];
        auto it = item.callee.find(codes_of(e));
        if (it == item.callee.end()) return kNo;
        for (const Exit& ex : it->second.second->exits) {
          if (ex.out != o.out) continue;
          double cost = ex.cost;
          for (size_t k = 0; k < free_at.size(); ++k) cost += search_cost(storage_cost(prep, nbody.ext[free_at[k]], e[free_at[k]], ctx));
          for (size_t x = 0; x < op.outputs.size() && x < ex.out.size(); ++x) cost += pin_cost(op, op.outputs[x], ex.out[x]);
          return cost;
        }
        return kNo;
      });
      for (size_t k = 0; k < free_at.size(); ++k) writer[nbody.ext[free_at[k]]] = p;
    } else if (op.kind == OpKind::Experts) {
      item.experts = experts_options(prep, index, ctx);
      domain[pos] = item.domain();
      const size_t n_in = std::min<size_t>(op.inputs.size(), 2);
      for (size_t i = 0; i < n_in; ++i) reads.push_back({op.inputs[i], writer_of(op.inputs[i])});
      build_factor(p, reads, [&](int option, const std::vector<Spec>& specs) -> double {
        const ExpertsOption& o = item.experts[static_cast<size_t>(option)];
        double cost = search_cost(o.extra) + move_cost(op.inputs[0], reads[0].writer, specs[0], o.xs);
        if (n_in > 1) {
          const bool same = op.inputs[1] == op.inputs[0];  // then read as the first move left it
          cost += same ? move_cost(op.inputs[1], kEntry, o.xs, o.xs) : move_cost(op.inputs[1], reads[1].writer, specs[1], o.xs);
        }
        return cost;
      });
      for (size_t i = 0; i < n_in; ++i) {
        std::vector<Spec> by_option;
        for (const ExpertsOption& o : item.experts) by_option.push_back(o.xs);
        item.sets.push_back({op.inputs[i], std::move(by_option)});
      }
      {
        std::vector<Spec> by_option;
        for (const ExpertsOption& o : item.experts) by_option.push_back(o.out);
        item.sets.push_back({op.outputs[0], std::move(by_option)});
      }
    } else {
      const std::vector<Strat>& strats = strategies_.get(prep, index, ctx, ctx_hash);
      std::vector<std::pair<int, double>> usable;
      usable_strategies(op, strats, ctx, usable);
      std::vector<double> extra;
      for (const auto& [si, extra_us] : usable) {
        item.strategy.push_back(si);
        extra.push_back(extra_us);
      }
      domain[pos] = item.domain();
      // First occurrences of inputs (an input used twice takes the first requirement).
      std::vector<size_t> firsts;
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        bool repeated = false;
        for (size_t j = 0; j < i; ++j) repeated |= op.inputs[j] == op.inputs[i];
        if (repeated) continue;
        firsts.push_back(i);
        reads.push_back({op.inputs[i], writer_of(op.inputs[i])});
      }
      build_factor(p, reads, [&](int option, const std::vector<Spec>& specs) -> double {
        const Strat& st = strats[static_cast<size_t>(item.strategy[static_cast<size_t>(option)])];
        double cost = search_cost(st.compute_us) + search_cost(extra[static_cast<size_t>(option)]);
        for (size_t r = 0; r < firsts.size() && cost < kNo; ++r) cost += move_cost(reads[r].t, reads[r].writer, specs[r], st.in[firsts[r]]);
        for (size_t o = 0; o < op.outputs.size() && o < st.out.size(); ++o) cost += pin_cost(op, op.outputs[o], st.out[o]);
        return cost;
      });
      for (size_t r = 0; r < firsts.size(); ++r) {
        std::vector<Spec> by_option;
        for (int si : item.strategy) by_option.push_back(strats[static_cast<size_t>(si)].in[firsts[r]]);
        item.sets.push_back({reads[r].t, std::move(by_option)});
      }
      for (size_t o = 0; o < op.outputs.size(); ++o) {
        std::vector<Spec> by_option;
        for (int si : item.strategy) {
          const Strat& st = strats[static_cast<size_t>(si)];
          by_option.push_back(o < st.out.size() ? pinned_spec(op, st.out[o]) : Spec::R());
        }
        item.sets.push_back({op.outputs[o], std::move(by_option)});
      }
    }
    if (too_big) return std::nullopt;
    if (domain[pos] == 0) return entries_all_infeasible();  // no option fits here: the body is infeasible (no exits)
    if (op.kind != OpKind::Call)
      for (const Read& r : reads) writer[r.t] = p;
    for (const auto& [t, specs] : item.sets) writer[t] = p;
  }

  // The exits: per entry and per layout of the outputs, the least total, over the ops that last
  // set them. The entry variables are kept last (fastest), so that each entry meets its output
  // layouts in the order a search of that entry alone would.
  std::vector<Read> outs;
  std::vector<int> keep;
  for (int t : body.outputs) {
    outs.push_back({t, writer_of(t)});
    const int w = outs.back().writer;
    if (w >= 0 && w < static_cast<int>(m) && std::find(keep.begin(), keep.end(), w) == keep.end()) keep.push_back(w);
  }
  std::sort(keep.begin(), keep.end());
  for (size_t v = 0; v < var_options.size(); ++v) keep.push_back(static_cast<int>(m + v));
  auto keep_index = [&](int w) { return static_cast<size_t>(std::find(keep.begin(), keep.end(), w) - keep.begin()); };
  for (const auto& f : factors) work_ += f.values.size();
  MinSumElimination problem(domain);
  for (auto& f : factors) problem.add(std::move(f));
  if (!problem.run(keep, kMaxTable)) return std::nullopt;
  work_ += problem.work();
  ++eliminated_;
  largest_table_ = std::max(largest_table_, problem.largest_table());
  const auto& kept = problem.kept_table();
  // Results per combination of the entry variables (row-major, the last fastest).
  size_t var_combos = 1;
  for (const auto& o : var_options) var_combos *= o.size();
  std::vector<MemoEntry> by_vars(var_combos);
  std::vector<std::map<std::vector<uint32_t>, int>> best(var_combos);  // per combination: out specs -> exit index
  const size_t first_var = keep.size() - var_options.size();
  std::vector<int> digit(keep.size(), 0);
  for (size_t index = 0; index < kept.size(); ++index) {
    if (index > 0)
      for (size_t k = keep.size(); k-- > 0;) {
        if (++digit[k] < domain[static_cast<size_t>(keep[k])]) break;
        digit[k] = 0;
      }
    if (!(kept[index] < kNo)) continue;
    size_t combo = 0;
    for (size_t k = first_var; k < keep.size(); ++k)
      combo = combo * static_cast<size_t>(domain[static_cast<size_t>(keep[k])]) + static_cast<size_t>(digit[k]);
    MemoEntry& result = by_vars[combo];
    double cost = kept[index];
    std::vector<Spec> out_specs;
    std::vector<uint32_t> codes;
    for (const Read& r : outs) {
      Spec s = r.writer == kEntry ? entry_spec[r.t]
               : r.writer == kNone ? Spec::R()
                                   : items[static_cast<size_t>(r.writer)].spec(r.t, digit[keep_index(r.writer)]);
      if (b == 0 && !(s == Spec::R())) {
        int kind;
        double bytes;
        cost += search_cost(transition_us(prep, r.t, s, Spec::R(), ctx, &kind, &bytes));
        s = Spec::R();
      }
      out_specs.push_back(s);
      codes.push_back(s.code());
    }
    auto it = best[combo].find(codes);
    if (it != best[combo].end() && result.exits[static_cast<size_t>(it->second)].cost <= cost) continue;
    std::vector<int> assignment(domain.size(), 0);
    for (size_t k = 0; k < keep.size(); ++k) assignment[static_cast<size_t>(keep[k])] = digit[k];
    problem.complete(assignment);
    Exit ex;
    ex.out = std::move(out_specs);
    ex.cost = cost;
    ex.decisions.resize(m);
    ex.nested.assign(m, {0, -1});
    // The layouts the chosen options leave, to name each call's entry.
    std::unordered_map<int, Spec> state = entry_spec;
    for (size_t v = m; v < domain.size(); ++v)
      for (const auto& [t, specs] : items[v].sets) state[t] = specs[static_cast<size_t>(assignment[v])];
    for (size_t pos = 0; pos < m; ++pos) {
      const int index = body.items[pos];
      const ir::Op& op = flow.ops[index];
      const Item& item = items[pos];
      const int option = assignment[pos];
      Decision& d = ex.decisions[pos];
      if (op.kind == OpKind::Call) {
        const auto& nbody = prep.bodies[prep.body_of_op[index]];
        const CallOption& o = item.calls[static_cast<size_t>(option)];
        std::vector<Spec> e(nbody.ext.size());
        size_t k = 0;
        for (size_t i = 0; i < nbody.ext.size(); ++i) {
          const int t = nbody.ext[i];
          auto have = state.find(t);
          if (have != state.end()) e[i] = have->second;
          else if (prep.stored[t]) {
            e[i] = item.free_combos[static_cast<size_t>(o.combo)][k++];
            d.free_specs.push_back(e[i]);
          } else e[i] = Spec::R();
        }
        uint64_t h = 0x3141;
        for (const Spec& s : e) h = mix64(h, s.code());
        const auto& [key, me] = item.callee.at(h);
        for (int x = 0; x < static_cast<int>(me->exits.size()); ++x)
          if (me->exits[static_cast<size_t>(x)].out == o.out) ex.nested[pos] = {key, x};
      } else if (op.kind == OpKind::Experts) {
        const ExpertsOption& o = item.experts[static_cast<size_t>(option)];
        d.experts_mode = o.mode;
        d.experts_tokens = o.xs;
        ex.nested[pos] = o.nested;
      } else {
        d.strategy = item.strategy[static_cast<size_t>(option)];
      }
      for (const auto& [t, specs] : item.sets) state[t] = specs[static_cast<size_t>(option)];
    }
    if (it == best[combo].end()) {
      best[combo][codes] = static_cast<int>(result.exits.size());
      result.exits.push_back(std::move(ex));
    } else {
      result.exits[static_cast<size_t>(it->second)] = std::move(ex);
    }
  }
  // One result per entry asked for (row-major over entry_options, the last fastest): its
  // variables' combination, and for a base entry the callee entries its own layouts allow.
  std::vector<MemoEntry> out;
  std::vector<size_t> d(entry_options.size(), 0);
  for (bool more = true; more; more = next_combination(d, entry_options)) {
    // An entry variable's options are its position's (numbered in position order): its value is d[i].
    std::vector<Spec> entry;
    std::vector<Spec> var_spec(var_options.size());
    size_t combo = 0;
    for (size_t i = 0; i < entry_options.size(); ++i) {
      entry.push_back(entry_options[i][d[i]]);
      if (entry_var_of[i] < 0) continue;
      var_spec[static_cast<size_t>(entry_var_of[i]) - m] = entry.back();
      combo = combo * entry_options[i].size() + d[i];
    }
    MemoEntry r;
    r.entry = entry;
    r.exits = by_vars[combo].exits;
    if (base_entry(pass, entry) == entry)
      for (const PassedUse& pu : passed_uses) {
        MemoEntry::CallUse use;
        use.pos = pu.use.pos;
        for (const auto& e : pu.use.entries) {
          bool agrees = true;
          for (size_t k = 0; k < e.size() && agrees; ++k)
            agrees = pu.var_at[k] < 0 || e[k] == var_spec[static_cast<size_t>(pu.var_at[k]) - m];
          if (agrees) use.entries.push_back(e);
        }
        r.uses.push_back(std::move(use));
      }
    out.push_back(std::move(r));
  }
  return out;
}

void AxisSolver::expand(const Prepared& prep, int b, uint64_t key, int exit, AxisSolution& out) {
  const auto& me = memo_.at(key);
  const Exit& ex = me.exits[exit];
  const auto& body = prep.bodies[b];
  for (size_t pos = 0; pos < body.items.size(); ++pos) {
    int index = body.items[pos];
    out.decisions[index] = ex.decisions[pos];
    if (const auto [nkey, nexit] = ex.nested[pos]; nexit >= 0) {
      out.body_solution[index] = mix64(nkey, static_cast<uint64_t>(nexit) + 1) | 1;
      expand(prep, prep.body_of_op[index], nkey, nexit, out);
    }
  }
}


const Aggregate& AxisSolver::aggregate(const Prepared& prep, int b, uint64_t key, int exit, const Context& ctx,
                                       uint64_t ctx_hash) {
  uint64_t akey = mix64(key, static_cast<uint64_t>(exit) + 0x1234);
  if (const Aggregate* found = aggregates_.find(akey)) return *found;
  const auto& flow = prep.model->dataflow;
  const auto& body = prep.bodies[b];
  const MemoEntry& me = memo_.at(key);
  const Exit& ex = me.exits[exit];
  Aggregate agg;
  std::unordered_map<int, Spec> state;
  for (size_t i = 0; i < body.ext.size() && i < me.entry.size(); ++i) state[body.ext[i]] = me.entry[i];
  auto charge = [&](Ccl kind, double bytes, double times) {
    agg.ccl_us += collective_us(ctx, kind, bytes) * times;
    agg.bytes += bytes * times;
    agg.collectives += static_cast<int>(std::lround(times));
  };
  auto move = [&](int t, Spec to) {
    auto it = state.find(t);
    if (it == state.end()) {
      if (flow.tensors[t].parameter >= 0) {
        double b = tensor_bytes(prep, t, ctx);
        agg.parameter_bytes += to.sharded() ? b / ctx.n : b;
      }
      state[t] = to;
      return;
    }
    int kind;
    double bytes;
    transition_us(prep, t, it->second, to, ctx, &kind, &bytes);
    if (kind >= 0) charge(static_cast<Ccl>(kind), bytes, 1);
    it->second = to;
  };
  auto pinned = [&](const ir::Op& op, int t, Spec s) {
    if (op.module >= 0)
      if (auto it = ctx.pinned_outputs.find(op.module); it != ctx.pinned_outputs.end() && !(it->second == s)) {
        int kind;
        double bytes;
        transition_us(prep, t, s, it->second, ctx, &kind, &bytes);
        if (kind >= 0) charge(static_cast<Ccl>(kind), bytes, 1);
        s = it->second;
      }
    state[t] = s;
  };
  for (size_t pos = 0; pos < body.items.size(); ++pos) {
    int index = body.items[pos];
    const ir::Op& op = flow.ops[index];
    const Decision& d = ex.decisions[pos];
    if (op.kind == OpKind::Call) {
      int nb = prep.body_of_op[index];
      size_t fi = 0;
      for (int t : prep.bodies[nb].ext)
        if (!state.count(t) && prep.stored[t] && fi < d.free_specs.size()) {
          Spec s = d.free_specs[fi++];
          if (flow.tensors[t].parameter >= 0) {
            double b = tensor_bytes(prep, t, ctx);
            agg.parameter_bytes += s.sharded() ? b / ctx.n : b;
          }
          state[t] = s;
        }
      auto [nkey, nexit] = ex.nested[pos];
      const Aggregate& sub = aggregate(prep, nb, nkey, nexit, ctx, ctx_hash);
      agg.add(sub, 1, 1);
      agg.leaf_tags |= sub.leaf_tags;
      agg.experts_tags |= sub.experts_tags;
      const auto& nout = memo_.at(nkey).exits[nexit].out;
      for (size_t o = 0; o < op.outputs.size() && o < nout.size(); ++o) pinned(op, op.outputs[o], nout[o]);
      continue;
    }
    if (op.kind == OpKind::Experts) {
      int nb = prep.body_of_op[index];
      const ExpertsLoad load = experts_load(flow, op, ctx);
      Spec xs = d.experts_mode == 3 ? d.experts_tokens : Spec::R();
      move(op.inputs[0], xs);
      if (op.inputs.size() > 1) move(op.inputs[1], xs);
      auto [nkey, nexit] = ex.nested[pos];
      const bool over_rows = ctx.expert_rows > 1;
      const Context inner = expert_body_context(ctx);
      const Aggregate& sub = over_rows ? aggregate(prep, nb, nkey, nexit, inner, inner.hash()) : aggregate(prep, nb, nkey, nexit, ctx, ctx_hash);
      bool spread = d.experts_mode >= 2;
      static constexpr uint16_t kModeTag[] = {kTagReplicated, kTagExpertTensor, kTagExpertLocal, kTagExpertAllToAll};
      if (d.experts_mode >= 0 && d.experts_mode < 4) agg.experts_tags |= kModeTag[d.experts_mode];
      if (over_rows) {
        agg.add(sub, load.per_row, static_cast<double>(load.experts) / ctx.expert_rows);
        agg.ccl_us += load.rows_count * rows_collective_us(ctx, load.rows_kind, load.rows_bytes);
        agg.bytes += load.rows_count * load.rows_bytes;
        agg.collectives += load.rows_count;
      } else {
        agg.add(sub, spread ? load.per_device : load.active,
                spread ? static_cast<double>(load.experts) / ctx.n : static_cast<double>(load.experts));
      }
      Spec out = Spec::R();
      if (d.experts_mode == 1) {
        const auto& nout = memo_.at(nkey).exits[nexit].out;
        out = nout.empty() ? Spec::R() : combined_spec(flow, op, nout[0]);
      }
      if (d.experts_mode == 2) out = Spec::P();
      if (d.experts_mode == 3) {
        out = xs;
        charge(Ccl::AllToAll, load.dispatch_bytes, 2);
      }
      pinned(op, op.outputs[0], out);
      continue;
    }
    const auto& strats = strategies_.get(prep, index, ctx, ctx_hash);
    if (d.strategy < 0 || d.strategy >= static_cast<int>(strats.size())) continue;
    const Strat& st = strats[d.strategy];
    agg.leaf_tags |= st.tag;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      bool repeated = false;
      for (size_t j = 0; j < i; ++j) repeated |= op.inputs[j] == op.inputs[i];
      if (!repeated) move(op.inputs[i], st.in[i]);
    }
    if (st.extra_count) charge(Ccl::AllReduce, st.extra_bytes, st.extra_count);
    if (st.rows_gathers) {
      agg.ccl_us += st.rows_gathers * rows_collective_us(ctx, Ccl::AllGather, st.rows_gather_bytes);
      agg.bytes += st.rows_gathers * st.rows_gather_bytes;
      agg.collectives += st.rows_gathers;
    }
    agg.compute_us += st.compute_us;
    agg.flops += st.flops;
    if (st.split) agg.parallel_flops += st.flops;
    if (double state = op_state_bytes(prep, op, ctx); state > 0) agg.kv_cache_bytes += st.split ? state / ctx.n : state;
    for (size_t o = 0; o < op.outputs.size() && o < st.out.size(); ++o) pinned(op, op.outputs[o], st.out[o]);
  }
  if (b == 0)
    for (int t : body.outputs) {
      auto it = state.find(t);
      if (it == state.end()) continue;
      int kind;
      double bytes;
      transition_us(prep, t, it->second, Spec::R(), ctx, &kind, &bytes);
      if (kind >= 0) charge(static_cast<Ccl>(kind), bytes, 1);
    }
  return aggregates_.emplace(akey, agg);
}

AxisSolver::BodyMethod AxisSolver::default_body_method() {
  static const BodyMethod method = [] {
    const char* v = std::getenv("SHARDLENS_PLAN_BODY");
    const std::string_view name = v ? v : "";
    return name == "programme" ? BodyMethod::Programme : name == "elimination" ? BodyMethod::Elimination : BodyMethod::Auto;
  }();
  return method;
}

AxisSolution AxisSolver::solve(const Prepared& prep, const Context& ctx) {
  passed_.clear();  // of the last preparation, which may have been recycled for this one
  AxisSolution sol;
  std::vector<Spec> entry(prep.bodies[0].ext.size(), Spec::R());
  uint64_t key = mix64(mix64(mix64(prep.bodies[0].signature, ctx.hash()), 0x55), pins_key(prep, 0, ctx));
  const MemoEntry& me = solve_body(prep, 0, entry, ctx, key);
  if (me.exits.empty()) return sol;
  int best = 0;
  for (int x = 1; x < static_cast<int>(me.exits.size()); ++x)
    if (me.exits[x].cost < me.exits[best].cost) best = x;
  sol.feasible = true;
  sol.cost = me.exits[best].cost;
  sol.root_key = key;
  sol.root_exit = best;
  sol.totals = aggregate(prep, 0, key, best, ctx, ctx.hash());
  return sol;
}

void AxisSolver::expand_decisions(const Prepared& prep, const Context& ctx, AxisSolution& sol) {
  if (!sol.feasible || !sol.decisions.empty()) return;
  const auto& ops = prep.model->dataflow.ops;
  sol.decisions.assign(ops.size(), {});
  sol.body_solution.assign(ops.size(), 0);
  expand(prep, 0, sol.root_key, sol.root_exit, sol);
  sol.strategy_of.assign(ops.size(), nullptr);
  const uint64_t ctx_hash = ctx.hash();
  std::unordered_map<uint64_t, int> first_call;  // body solution -> the first call that runs it
  for (size_t i = 0; i < ops.size(); ++i) {
    if (const uint64_t body = sol.body_solution[i]; body != 0 && ops[i].kind == OpKind::Call) {
      const auto [it, fresh] = first_call.try_emplace(body, static_cast<int>(i));
      const int j = it->second;
      if (!fresh && ops[j].end <= static_cast<int>(i) && ops[j].end - j == ops[i].end - static_cast<int>(i)) {
        // The same decisions on ops of the same content: the same cached strategies, op for op.
        std::copy(sol.strategy_of.begin() + j + 1, sol.strategy_of.begin() + ops[j].end, sol.strategy_of.begin() + static_cast<long>(i) + 1);
        i = static_cast<size_t>(ops[i].end) - 1;
        continue;
      }
    }
    int chosen = sol.decisions[i].strategy;
    if (chosen < 0 || ops[i].kind == OpKind::Call || ops[i].kind == OpKind::Experts) continue;
    const auto& strats = strategies_.get(prep, static_cast<int>(i), ctx, ctx_hash);
    if (chosen < static_cast<int>(strats.size())) sol.strategy_of[i] = &strats[static_cast<size_t>(chosen)];
  }
}

const std::vector<Strat>& StrategyCache::get(const Prepared& prep, int op, const Context& ctx, uint64_t ctx_hash) {
  uint64_t key = mix64(prep.op_signature[op], ctx_hash);
  if (const auto* found = cache_.find(key)) return *found;
  return cache_.emplace(key, strategies(prep, op, ctx));
}

Evaluation evaluate(const Prepared& prep, const Context& ctx, const AxisSolution& sol, bool copy_identical_calls) {
  // The context the body being replayed was solved in: the plan's, or an expert body's own
  // (experts spread over the rows see every row's tokens for them).
  const Context* cur = &ctx;
  constexpr int kNoOrigin = std::numeric_limits<int>::min();
  Evaluation ev;
  const auto& flow = prep.model->dataflow;
  ev.op_compute_us.assign(flow.ops.size(), 0);
  ev.op_label.assign(flow.ops.size(), "");
  ev.param_uses.assign(prep.used_parameters.size(), {});
  std::string_view current_label;
  std::vector<Spec> state(flow.tensors.size(), Spec::R());
  std::vector<char> seen(flow.tensors.size(), 0);
  std::vector<std::string_view> producer_label(flow.tensors.size());
  std::vector<int> partial_origin(flow.tensors.size(), -1);
  auto record = [&](int op, int t, int kind, double bytes, double mult, const std::string& why, bool statistics = false,
                    Spec from = Spec::P(), Spec to = Spec::R(), int input = -1) {
    if (kind < 0) return;
    CclEvent e;
    e.op = op;
    e.tensor = t;
    e.from = from;
    e.to = to;
    e.input = input;
    e.kind = static_cast<Ccl>(kind);
    e.bytes = bytes;
    e.time_us = collective_us((*cur), e.kind, bytes);
    e.why = why;
    if (statistics) e.origin = op;
    else if (e.kind == Ccl::AllReduce || e.kind == Ccl::ReduceScatter) e.origin = t >= 0 ? partial_origin[t] : -1;
    for (int m = 0; m < static_cast<int>(std::lround(mult)); ++m) ev.events.push_back(e);
    ev.ccl_us += e.time_us * mult;
  };
  auto why_of = [&](int t, Spec from, Spec to, const std::string& consumer) {
    std::string_view made = partial_origin[t] >= 0 ? ev.op_label[partial_origin[t]] : producer_label[t];
    if (from.kind == kPartial) {
      std::string src = made == "row" ? "row-parallel output is a partial sum"
                        : made == "vocab" ? "vocab-parallel embedding output is a partial sum (masked lookup)"
                        : made == "partial statistics" ? "statistics summed over the sharded dim"
                        : made == "expert (replicated tokens)" ? "each device holds the outputs of its own experts"
                        : made == "contracted" ? "contraction over the sharded dim leaves partial sums"
                                               : "partial sums";
      return src + (to.kind == kReplicated ? "; " + consumer + " needs the whole value" : "; reduced straight into the sharded layout " + consumer + " wants");
    }
    if (to.kind == kReplicated || to.kind == kPartial) return consumer + " needs the whole tensor";
    return consumer + " needs it sharded on another dim";
  };
  // Identical blocks replay identically: a call whose body runs the same solution (same content,
  // same decisions) from the same entry state as an earlier call in this replay adds the same
  // events, labels and costs, at ops and tensors in the same places. The first such call is
  // recorded; the others copy the record instead of walking their ops (126 of a 405B model's
  // blocks). Tensors are found by where they occur (op offset, slot), as blocks have their own.
  struct TensorAt {
    int op = 0;  // offset from the call
    int slot = -1;
    bool output = false;
  };
  struct Escape {
    TensorAt at;
    Spec state;
    char seen = 0;
    int origin = kNoOrigin;  // partial sums' origin, offset from the call
    std::string_view label;
  };
  struct FirstUse {
    TensorAt at;
    Evaluation::ParameterUse use;  // op as an offset from the call
  };
  struct BodyCopy {
    int call = -1, span = 0;
    uint64_t signature = 0;
    std::vector<CclEvent> events, slices;
    std::vector<TensorAt> event_at;
    std::vector<std::string> event_where;  // the pattern of each event's module ("" for none): in its why
    std::vector<double> op_compute_us;
    std::vector<std::string_view> op_label;
    std::vector<FirstUse> first_uses;
    std::vector<std::pair<Spec, char>> ext_after;  // per ext tensor: state, seen
    std::vector<Escape> escapes;                   // tensors made inside and read after the call
    double compute_us = 0, ccl_us = 0, flops = 0, parallel_flops = 0, kv_cache_bytes = 0;
    std::string_view last_label;
  };
  std::unordered_map<uint64_t, BodyCopy> copies;
  std::vector<int> scratch_tensors;
  const bool copying = copy_identical_calls && (*cur).pinned_outputs.empty();  // pins name modules, which differ per block
  auto end_of_call = [&](int call) { return flow.ops[call].end; };
  auto tensor_at = [&](int call, const TensorAt& at) {
    const ir::Op& o = flow.ops[call + at.op];
    return at.output ? o.outputs[static_cast<size_t>(at.slot)] : o.inputs[static_cast<size_t>(at.slot)];
  };
  auto find_tensor = [&](int call, int op, int t) {
    TensorAt at{op - call, -1, false};
    const ir::Op& o = flow.ops[op];
    for (size_t i = 0; i < o.inputs.size() && at.slot < 0; ++i)
      if (o.inputs[i] == t) at.slot = static_cast<int>(i);
    for (size_t i = 0; i < o.outputs.size() && at.slot < 0; ++i)
      if (o.outputs[i] == t) at = {op - call, static_cast<int>(i), true};
    return at;
  };
  static const std::string kNowhere;
  auto where_of = [&](int op) -> const std::string& {
    return flow.ops[op].module > 0 ? prep.patterns->of(*prep.model, flow.ops[op].module) : kNowhere;
  };
  auto copy_key = [&](int call, int nb, double mult) -> uint64_t {
    uint64_t h = sol.body_solution.empty() ? 0 : sol.body_solution[static_cast<size_t>(call)];
    if (!copying || h == 0 || prep.bodies[nb].same_signature < 2) return 0;
    uint64_t mult_bits = 0;
    std::memcpy(&mult_bits, &mult, sizeof mult_bits);
    h = mix64(mix64(mix64(h, prep.bodies[nb].signature), mult_bits), static_cast<uint64_t>(end_of_call(call) - call));
    for (const Spec& s : sol.decisions[static_cast<size_t>(call)].free_specs) h = mix64(h, s.code());
    for (int t : prep.bodies[nb].ext) {
      const int origin = partial_origin[t];
      const std::string_view made = origin >= 0 ? ev.op_label[origin] : producer_label[t];
      h = mix64(mix64(h, state[t].code() * 2u + static_cast<uint64_t>(seen[t])), origin >= 0 ? static_cast<uint64_t>(call - origin) : 0);
      h = mix64(h, std::hash<std::string_view>()(made));
    }
    return h | 1;
  };
  struct Mark {
    size_t events, slices;
    double compute_us, ccl_us, flops, parallel_flops, kv_cache_bytes;
  };
  auto mark = [&]() { return Mark{ev.events.size(), ev.slices.size(), ev.compute_us, ev.ccl_us, ev.flops, ev.parallel_flops, ev.kv_cache_bytes}; };
  // After the call at `call` ran its body from `before`: what it did, relative to the call.
  auto record_copy = [&](int call, int nb, const Mark& before) -> std::optional<BodyCopy> {
    BodyCopy c;
    const int end = end_of_call(call);
    c.call = call;
    c.span = end - call;
    c.signature = prep.bodies[nb].signature;
    for (size_t k = before.events; k < ev.events.size(); ++k) {
      const CclEvent& e = ev.events[k];
      if (e.op < call || e.op >= end) return std::nullopt;
      c.events.push_back(e);
      c.event_at.push_back(find_tensor(call, e.op, e.tensor));
      if (c.event_at.back().slot < 0) return std::nullopt;
      c.event_where.push_back(where_of(e.op));
    }
    for (size_t k = before.slices; k < ev.slices.size(); ++k) {
      if (ev.slices[k].op < call || ev.slices[k].op >= end || ev.slices[k].input < 0) return std::nullopt;
      c.slices.push_back(ev.slices[k]);
    }
    c.op_compute_us.assign(ev.op_compute_us.begin() + call + 1, ev.op_compute_us.begin() + end);
    c.op_label.assign(ev.op_label.begin() + call + 1, ev.op_label.begin() + end);
    const auto& handed_back = flow.ops[call].outputs;
    for (int k = call + 1; k < end; ++k) {
      const ir::Op& o = flow.ops[k];
      for (size_t i = 0; i < o.inputs.size(); ++i) {
        const int t = o.inputs[i];
        const int use_index = prep.tensor_use_index[static_cast<size_t>(t)];
        if (use_index < 0) continue;
        const auto& use = ev.param_uses[static_cast<size_t>(use_index)];
        if (use.op != k || find_tensor(call, k, t).slot != static_cast<int>(i)) continue;
        c.first_uses.push_back({{k - call, static_cast<int>(i), false}, {use.spec, use.label, k - call}});
      }
      for (size_t i = 0; i < o.outputs.size(); ++i) {
        const int t = o.outputs[i];
        auto readers = prep.consumers(t);
        // Read by a later op, handed back by the call (an Experts op reads its expert's result
        // without a consumer edge), or the model's output.
        const bool read_after = std::any_of(readers.begin(), readers.end(), [&](int r) { return r >= end; }) ||
                                std::find(handed_back.begin(), handed_back.end(), t) != handed_back.end() ||
                                std::find(flow.outputs.begin(), flow.outputs.end(), t) != flow.outputs.end();
        if (!read_after) continue;
        c.escapes.push_back({{k - call, static_cast<int>(i), true}, state[t], seen[t],
                             partial_origin[t] >= 0 ? partial_origin[t] - call : kNoOrigin, producer_label[t]});
      }
    }
    for (int t : prep.bodies[nb].ext) c.ext_after.emplace_back(state[t], seen[t]);
    c.compute_us = ev.compute_us - before.compute_us;
    c.ccl_us = ev.ccl_us - before.ccl_us;
    c.flops = ev.flops - before.flops;
    c.parallel_flops = ev.parallel_flops - before.parallel_flops;
    c.kv_cache_bytes = ev.kv_cache_bytes - before.kv_cache_bytes;
    c.last_label = current_label;
    return c;
  };
  // Replays the call at `call` from a record of an identical one; false (nothing done) if the
  // blocks differ where the record cannot see (their modules' names, in the collectives' reasons).
  auto apply_copy = [&](const BodyCopy& c, int call, int nb) {
    const int delta = call - c.call;
    if (end_of_call(call) - call != c.span || prep.bodies[nb].signature != c.signature || prep.bodies[nb].ext.size() != c.ext_after.size())
      return false;
    for (size_t k = 0; k < c.events.size(); ++k)
      if (where_of(c.events[k].op + delta) != c.event_where[k]) return false;
    auto& first_used = scratch_tensors;
    first_used.clear();
    for (const FirstUse& f : c.first_uses) {
      first_used.push_back(tensor_at(call, f.at));
      if (seen[first_used.back()]) return false;
    }
    for (size_t k = 0; k < c.events.size(); ++k) {
      CclEvent e = c.events[k];
      e.op += delta;
      if (e.origin >= 0) e.origin += delta;
      e.tensor = tensor_at(call, c.event_at[k]);
      ev.events.push_back(std::move(e));
    }
    for (const CclEvent& s : c.slices) {
      CclEvent e = s;
      e.op += delta;
      e.tensor = flow.ops[e.op].inputs[static_cast<size_t>(e.input)];
      ev.slices.push_back(std::move(e));
    }
    std::copy(c.op_compute_us.begin(), c.op_compute_us.end(), ev.op_compute_us.begin() + call + 1);
    std::copy(c.op_label.begin(), c.op_label.end(), ev.op_label.begin() + call + 1);
    for (size_t k = 0; k < c.first_uses.size(); ++k) {
      const int t = first_used[k];
      Evaluation::ParameterUse use = c.first_uses[k].use;
      use.op += call;
      ev.param_uses[static_cast<size_t>(prep.tensor_use_index[static_cast<size_t>(t)])] = use;
      seen[t] = 1;
    }
    const auto& ext = prep.bodies[nb].ext;
    for (size_t k = 0; k < ext.size(); ++k) std::tie(state[ext[k]], seen[ext[k]]) = c.ext_after[k];
    for (const Escape& x : c.escapes) {
      const int t = tensor_at(call, x.at);
      state[t] = x.state;
      seen[t] = x.seen;
      partial_origin[t] = x.origin == kNoOrigin ? -1 : call + x.origin;
      producer_label[t] = x.label;
    }
    ev.compute_us += c.compute_us;
    ev.ccl_us += c.ccl_us;
    ev.flops += c.flops;
    ev.parallel_flops += c.parallel_flops;
    ev.kv_cache_bytes += c.kv_cache_bytes;
    current_label = c.last_label;
    ++ev.calls_copied;
    return true;
  };
  std::function<void(int, double)> run_body = [&](int b, double mult) {
    const auto& body = prep.bodies[b];
    for (size_t pos = 0; pos < body.items.size(); ++pos) {
      int index = body.items[pos];
      const ir::Op& op = flow.ops[index];
      const Decision& d = sol.decisions[index];
      auto move = [&](int t, Spec to, int consumer_op) {
        if (!seen[t] && prep.stored[t]) {
          seen[t] = 1;
          state[t] = to;
          if (const int use_index = prep.tensor_use_index[t]; use_index >= 0) ev.param_uses[static_cast<size_t>(use_index)] = {to, current_label, index};
          return;
        }
        seen[t] = 1;
        int kind;
        double bytes;
        transition_us(prep, t, state[t], to, (*cur), &kind, &bytes);
        if (kind < 0 && state[t].kind == kReplicated && to.sharded()) {
          CclEvent slice;
          slice.op = index;
          slice.tensor = t;
          slice.from = state[t];
          slice.to = to;
          for (size_t i = 0; i < op.inputs.size() && slice.input < 0; ++i)
            if (op.inputs[i] == t) slice.input = static_cast<int>(i);
          ev.slices.push_back(std::move(slice));
        }
        if (kind >= 0) {
          std::string consumer = consumer_op < 0 ? "expert dispatch" : flow.ops[consumer_op].name;
          if (consumer_op >= 0 && flow.ops[consumer_op].module > 0) consumer += " in " + prep.patterns->of(*prep.model, flow.ops[consumer_op].module);
          int input = -1;
          for (size_t i = 0; i < op.inputs.size() && input < 0; ++i)
            if (op.inputs[i] == t) input = static_cast<int>(i);
          record(index, t, kind, bytes, mult, why_of(t, state[t], to, consumer), false, state[t], to, input);
        }
        state[t] = to;
      };
      const Spec* pin = nullptr;
      if (auto it = (*cur).pinned_outputs.find(op.module); op.module >= 0 && it != (*cur).pinned_outputs.end()) pin = &it->second;
      auto leave = [&](int t, Spec s) {
        seen[t] = 1;
        state[t] = s;
        if (pin && !(s == *pin)) {
          int kind;
          double bytes;
          transition_us(prep, t, s, *pin, (*cur), &kind, &bytes);
          record(index, t, kind, bytes, mult, "the module's output layout is fixed by the plan being evaluated", false, s, *pin);
          state[t] = *pin;
        }
      };
      if (op.kind == OpKind::Call) {
        int nb = prep.body_of_op[index];
        size_t fi = 0;
        for (int t : prep.bodies[nb].ext)
          if (!seen[t] && prep.stored[t] && fi < d.free_specs.size()) {
            // Stored as chosen at the call; the first op using it inside records the details.
            state[t] = d.free_specs[fi++];
          }
        const uint64_t key = copy_key(index, nb, mult);
        const auto found = key ? copies.find(key) : copies.end();
        if (found == copies.end() || !apply_copy(found->second, index, nb)) {
          const Mark before = mark();
          run_body(nb, mult);
          if (key && found == copies.end())
            if (auto c = record_copy(index, nb, before)) copies.emplace(key, std::move(*c));
        }
        for (int t : op.outputs) leave(t, state[t]);
        continue;
      }
      if (op.kind == OpKind::Experts) {
        int nb = prep.body_of_op[index];
        const ExpertsLoad load = experts_load(flow, op, (*cur));
        Spec xs = Spec::R(), out = Spec::R();
        double body_mult = load.active;
        std::string_view label = "replicated";
        if (d.experts_mode == 2) { out = Spec::P(); body_mult = load.per_device; label = "expert (replicated tokens)"; }
        if (d.experts_mode == 3) {
          xs = d.experts_tokens;
          out = xs;
          body_mult = load.per_device;
          label = "expert (all-to-all)";
        }
        current_label = d.experts_mode == 2 ? "expert (replicated tokens)" : d.experts_mode == 3 ? "expert (all-to-all)" : "";
        move(op.inputs[0], xs, -1);
        if (op.inputs.size() > 1) move(op.inputs[1], xs, -1);
        // Dispatch and combine as the numeric check runs them: every device sees every token, and
        // the combine sums the devices' expert outputs into each token's own device.
        if (d.experts_mode == 3) record(index, op.inputs[0], static_cast<int>(Ccl::AllToAll), load.dispatch_bytes, mult, "expert parallel: dispatch routed tokens to the devices holding their experts", false, Spec::R(), Spec::R(), 0);
        // Spread over the rows: the rows' own collectives, and the body replayed in its own context.
        const bool over_rows = (*cur).expert_rows > 1;
        auto record_rows = [&](int t, const char* why) {
          CclEvent e;
          e.rows_axis = true;
          e.op = index;
          e.origin = index;
          e.tensor = t;
          e.kind = load.rows_kind;
          e.bytes = load.rows_bytes;
          e.time_us = rows_collective_us(*cur, load.rows_kind, load.rows_bytes);
          e.why = why;
          e.from = load.rows_kind == Ccl::AllToAll ? Spec::R() : Spec::P();
          e.to = Spec::R();
          for (int m = 0; m < static_cast<int>(std::lround(mult)); ++m) ev.events.push_back(e);
          ev.ccl_us += e.time_us * mult;
        };
        if (over_rows && load.rows_kind == Ccl::AllToAll)
          record_rows(op.inputs[0], "expert parallel over the 'batch' rows: dispatch each row's routed tokens to the rows holding their experts");
        const Context* outer = cur;
        const Context inner = expert_body_context(*cur);
        if (over_rows) {
          body_mult = load.per_row;
          cur = &inner;
        }
        run_body(nb, mult * body_mult);
        cur = outer;
        if (over_rows)
          record_rows(op.outputs[0], load.rows_kind == Ccl::AllToAll
                                         ? "expert parallel over the 'batch' rows: combine expert outputs back to the tokens' rows"
                                         : "expert parallel over the 'batch' rows: every row has every token; its experts' outputs are summed over the rows");
        if (d.experts_mode == 1) {
          const auto& eb = prep.bodies[nb];
          out = eb.outputs.empty() ? Spec::R() : combined_spec(flow, op, state[eb.outputs[0]]);
          label = "tensor (inside each expert)";
        }
        if (d.experts_mode == 3) record(index, op.outputs[0], static_cast<int>(Ccl::AllToAll), load.dispatch_bytes, mult, "expert parallel: combine expert outputs back to the tokens' devices", true, Spec::P(), xs);
        producer_label[op.outputs[0]] = label;
        ev.op_label[index] = label;
        if (out.kind == kPartial) {
          partial_origin[op.outputs[0]] = index;
          const auto& eb = prep.bodies[nb];
          if (d.experts_mode == 1 && !eb.outputs.empty() && partial_origin[eb.outputs[0]] >= 0) partial_origin[op.outputs[0]] = partial_origin[eb.outputs[0]];
        }
        leave(op.outputs[0], out);
        continue;
      }
      if (!sol.strategy_of[index]) continue;
      const Strat& st = *sol.strategy_of[index];
      current_label = st.label;
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        bool repeated = false;
        for (size_t j = 0; j < i; ++j) repeated |= op.inputs[j] == op.inputs[i];
        if (!repeated) move(op.inputs[i], st.in[i], index);
      }
      for (int k = 0; k < st.rows_gathers; ++k) {
        CclEvent e;
        e.rows_axis = true;
        e.op = index;
        e.tensor = op.inputs[1 + k % 2];
        e.input = 1 + k % 2;
        e.kind = Ccl::AllGather;
        e.bytes = st.rows_gather_bytes;
        e.time_us = rows_collective_us(*cur, Ccl::AllGather, st.rows_gather_bytes);
        e.why = k % 2 ? "sequence parallel over the 'batch' rows: each row gathers the other rows' values"
                      : "sequence parallel over the 'batch' rows: each row gathers the other rows' keys";
        e.from = Spec::R();
        e.to = Spec::R();
        for (int m = 0; m < static_cast<int>(std::lround(mult)); ++m) ev.events.push_back(e);
        ev.ccl_us += e.time_us * mult;
      }
      if (st.extra_count) {
        for (int k = 0; k < st.extra_count; ++k)
          record(index, op.inputs[0], static_cast<int>(Ccl::AllReduce), st.extra_bytes, mult,
                 "statistics of " + op.name + " over the sharded dim", true, st.in[0], Spec::R(), 0);
      }
      if (double state = op_state_bytes(prep, op, (*cur)); state > 0) ev.kv_cache_bytes += (st.split ? state / (*cur).n : state) * mult;
      ev.compute_us += st.compute_us * mult;
      ev.op_compute_us[index] += st.compute_us * mult;
      ev.flops += st.flops * mult;
      if (st.split) ev.parallel_flops += st.flops * mult;
      ev.op_label[index] = st.label;
      int origin = -1;
      for (size_t i = 0; i < op.inputs.size(); ++i)
        if (st.in[i].kind == kPartial && partial_origin[op.inputs[i]] >= 0) origin = partial_origin[op.inputs[i]];
      for (size_t o = 0; o < op.outputs.size() && o < st.out.size(); ++o) {
        producer_label[op.outputs[o]] = st.label;
        if (st.out[o].kind == kPartial) partial_origin[op.outputs[o]] = origin >= 0 ? origin : index;
        leave(op.outputs[o], st.out[o]);
      }
    }
    if (b == 0)
      for (int t : body.outputs) {
        int kind;
        double bytes;
        transition_us(prep, t, state[t], Spec::R(), (*cur), &kind, &bytes);
        record(-1, t, kind, bytes, mult, why_of(t, state[t], Spec::R(), "the model's output"), false, state[t], Spec::R());
        state[t] = Spec::R();
      }
  };
  run_body(0, 1.0);
  return ev;
}

}  // namespace shardlens::plan::detail
