// The planner's search and rules: reproducing PyTorch's tensor-parallel collective counts,
// exhaustive optimality checks, memoized re-planning, the memory fallback, meshes and bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <set>

#include "plan/plan_output.h"
#include "plan/search.h"
#include "python/value_locator.h"
#include "plan_helpers.h"
#include "test_helpers.h"

using namespace shardlens;
using namespace shardlens::test;

namespace {

// test_tp_examples.py's plan for its 2-layer Transformer, as DTensor's parallelize_module applies it:
// embeddings RowwiseParallel, attention and MLP Megatron (Colwise q/k/v, w1; Rowwise wo, w2), the
// output ColwiseParallel then replicated; with sequence parallelism the row-wise outputs and the norms
// are sharded on the sequence.
plan::PlanOptions tp_examples_plan(bool sequence_parallel) {
  plan::PlanOptions o;
  o.meshes = {mesh("1x8")};
  o.workload.phase = plan::Phase::Prefill;
  o.workload.batch = 8;
  o.workload.seq = 16;
  o.evaluate_pins_only = true;
  o.alternatives = false;
  auto& pin = o.pinned_parameters;
  auto& out = o.pinned_outputs;
  pin["tok_embeddings.weight"] = "shard:0";
  pin["pos_embeddings.weight"] = "shard:0";
  pin["output.weight"] = "shard:0";
  out["output"] = "replicated";
  std::string rowwise_out = sequence_parallel ? "shard:1" : "replicated";
  out["tok_embeddings"] = rowwise_out;
  out["pos_embeddings"] = sequence_parallel ? "shard:0" : "replicated";  // positions are [seq, dim]
  for (int i = 0; i < 2; ++i) {
    std::string b = "layers." + std::to_string(i) + ".";
    for (auto w : {"attention.wq", "attention.wk", "attention.wv", "feed_forward.w1"}) pin[b + w + ".weight"] = "shard:0";
    pin[b + "feed_forward.w1.bias"] = "shard:0";
    pin[b + "attention.wo.weight"] = "shard:1";
    pin[b + "feed_forward.w2.weight"] = "shard:1";
    out[b + "attention.wo"] = rowwise_out;
    out[b + "feed_forward.w2"] = rowwise_out;
    if (sequence_parallel) {
      out[b + "attention_norm"] = "shard:1";
      out[b + "ffn_norm"] = "shard:1";
    }
  }
  if (sequence_parallel) out["norm"] = "shard:1";
  return o;
}

// Two preparations of one model, member by member.
void check_same_preparation(const plan::detail::Prepared& a, const plan::detail::Prepared& b) {
  const auto& flow = a.model->dataflow;
  REQUIRE(a.bodies.size() == b.bodies.size());
  for (size_t i = 0; i < a.bodies.size(); ++i) {
    const auto& x = a.bodies[i];
    const auto& y = b.bodies[i];
    CAPTURE(i);
    CHECK(x.op == y.op);
    CHECK(x.items == y.items);
    CHECK(x.ext == y.ext);
    CHECK(x.outputs == y.outputs);
    CHECK(x.last_use == y.last_use);
    CHECK(x.dies == y.dies);
    CHECK(x.dies_start == y.dies_start);
    CHECK(x.signature == y.signature);
    CHECK(x.same_signature == y.same_signature);
    CHECK(x.parameters == y.parameters);
    CHECK(x.modules == y.modules);
  }
  CHECK(a.body_of_op == b.body_of_op);
  CHECK(a.param_owner_body == b.param_owner_body);
  CHECK(a.consumer_start == b.consumer_start);
  CHECK(a.consumer_ops == b.consumer_ops);
  CHECK(a.numel == b.numel);
  CHECK(a.stored == b.stored);
  CHECK(a.tensor_use_index == b.tensor_use_index);
  CHECK(a.used_parameters == b.used_parameters);
  CHECK(a.producer == b.producer);
  CHECK(a.op_signature == b.op_signature);
  CHECK(a.segments == b.segments);
  CHECK(a.hidden_size == b.hidden_size);
  CHECK(a.vocab_size == b.vocab_size);
  bool roles_equal = true;
  for (size_t t = 0; t < flow.tensors.size(); ++t) roles_equal &= std::ranges::equal(a.roles[t], b.roles[t]);
  CHECK(roles_equal);
}

}  // namespace

TEST_CASE("test_tp_examples.py counts: 6 all-reduce + 1 all-gather; with SP 6 reduce-scatter + 6 all-gather", "[plan][search]") {
  std::string text = model_script("tp_examples_transformer.py");
  auto plain = plan_script(text, tp_examples_plan(false));
  CHECK(counts(plain.result.meshes.at(0)) == std::map<std::string, int>{{"all_gather", 1}, {"all_reduce", 6}});
  auto sp = plan_script(text, tp_examples_plan(true));
  CHECK(counts(sp.result.meshes.at(0)) == std::map<std::string, int>{{"all_gather", 6}, {"reduce_scatter", 6}});

  // Searching instead of evaluating the fixed plan finds the same Megatron layout and no more
  // collectives than DTensor's module-by-module redistribution.
  plan::PlanOptions search;
  search.workload = tp_examples_plan(false).workload;
  search.strategy = plan::StrategyMode::Tensor;
  auto found = plan_script(text, search);
  const auto& mp = found.result.meshes.at(0);
  CHECK(mp.totals.est_time_us <= plain.result.meshes[0].totals.est_time_us + 1e-6);
}

TEST_CASE("The search is exact: exhaustive enumeration finds nothing better", "[plan][search][optimality]") {
  // Models small enough to enumerate every strategy of every op (the product of the choices).
  const char* kSwiGlu = R"(
import torch
import torch.nn as nn
import torch.nn.functional as F

class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

class Block(nn.Module):
    def __init__(self, dim=4096, hidden=11008):
        super().__init__()
        self.norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
    def forward(self, x):
        h = self.norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

model = Block()
)";
  struct Case {
    std::string name, text;
    plan::Phase phase;
    int64_t seq, batch;
  };
  std::vector<Case> cases = {
      {"mlp decode", fixture("mlp.py"), plan::Phase::Decode, 2048, 1},
      {"mlp prefill", fixture("mlp.py"), plan::Phase::Prefill, 1024, 1},
      {"mlp batch 8", fixture("mlp.py"), plan::Phase::Decode, 2048, 8},
      {"tinynet", fixture("tinynet.py"), plan::Phase::Decode, 2048, 1},
      {"swiglu decode", kSwiGlu, plan::Phase::Decode, 2048, 1},
      {"swiglu prefill", kSwiGlu, plan::Phase::Prefill, 256, 2},
  };
  for (auto& c : cases) {
    for (const char* m : {"1x2", "1x8"}) {
      CAPTURE(c.name, m);
      plan::PlanOptions o;
      o.workload.phase = c.phase;
      o.workload.seq = c.seq;
      o.workload.batch = c.batch;
      o.meshes = {mesh(m)};
      auto p = plan_script(c.text, o);
      auto prep = plan::detail::prepare(p.model);
      plan::detail::Context ctx;
      ctx.n = o.meshes[0].cols;
      ctx.topology = o.meshes[0].col_topology;
      ctx.hw = plan::find_hardware("wormhole");
      ctx.workload = o.workload;
      ctx.ccl_penalty_us = 10.0;
      plan::detail::AxisSolver solver;
      auto sol = solver.solve(*prep, ctx);
      REQUIRE(sol.feasible);

      // Brute force: every combination of strategies of every leaf op, charged with the same rules.
      const auto& flow = p.model.dataflow;
      std::vector<int> leaves;
      std::vector<std::vector<plan::detail::Strat>> strats;
      for (size_t i = 0; i < flow.ops.size(); ++i) {
        if (flow.ops[i].kind == ir::OpKind::Call) continue;
        leaves.push_back(static_cast<int>(i));
        strats.push_back(plan::detail::strategies(*prep, static_cast<int>(i), ctx));
      }
      double combos = 1;
      for (auto& s : strats) combos *= static_cast<double>(s.size());
      REQUIRE(combos < 1e9);  // branch and bound below keeps the walk far smaller
      double best = INFINITY;
      std::vector<size_t> choice(leaves.size(), 0);
      std::function<void(size_t, std::vector<plan::detail::Spec>&, std::vector<char>&, double)> enumerate =
          [&](size_t k, std::vector<plan::detail::Spec>& state, std::vector<char>& seen, double cost) {
            if (cost >= best) return;  // bound: costs only grow
            if (k == leaves.size()) {
              for (int t : flow.outputs) {
                int kind;
                double bytes;
                cost += plan::detail::search_cost(plan::detail::transition_us(*prep, t, state[t], plan::detail::Spec::R(), ctx, &kind, &bytes));
              }
              best = std::min(best, cost);
              return;
            }
            const ir::Op& op = flow.ops[leaves[k]];
            for (auto& st : strats[k]) {
              auto s2 = state;
              auto seen2 = seen;
              // Each term as the search counts it (search_cost).
              double c2 = cost + plan::detail::search_cost(st.compute_us);
              if (st.extra_count)
                c2 += plan::detail::search_cost(
                    st.extra_count * (plan::ccl_time_us(*ctx.hw, plan::Ccl::AllReduce, ctx.n, ctx.topology, st.extra_bytes) + ctx.ccl_penalty_us));
              bool ok = true;
              for (size_t i = 0; i < op.inputs.size() && ok; ++i) {
                int t = op.inputs[i];
                bool repeated = false;
                for (size_t j = 0; j < i; ++j) repeated |= op.inputs[j] == t;
                if (repeated) continue;
                bool free_tensor = flow.tensors[t].parameter >= 0 || flow.tensors[t].buffer >= 0;
                if (!seen2[t] && free_tensor) {
                  if (st.in[i].kind == plan::detail::kPartial) ok = false;
                } else {
                  int kind;
                  double bytes;
                  c2 += plan::detail::search_cost(plan::detail::transition_us(*prep, t, s2[t], st.in[i], ctx, &kind, &bytes));
                }
                s2[t] = st.in[i];
                seen2[t] = 1;
              }
              if (!ok) continue;
              for (size_t o2 = 0; o2 < op.outputs.size(); ++o2) {
                s2[op.outputs[o2]] = st.out[o2];
                seen2[op.outputs[o2]] = 1;
              }
              enumerate(k + 1, s2, seen2, c2);
            }
          };
      std::vector<plan::detail::Spec> state(flow.tensors.size());
      std::vector<char> seen(flow.tensors.size(), 0);
      enumerate(0, state, seen, 0.0);
      CHECK(sol.cost == Approx(best).epsilon(1e-9));
    }
  }
}

TEST_CASE("Identical blocks are solved once; an edit re-solves only what changed", "[plan][search][incremental]") {
  std::string text = fixture("llama.py");
  python::ModelExtractor extractor(text, "llama.py");
  python::ExtractOptions extract;
  extract.trace_forward = true;
  auto first = extractor.extract(extract);
  REQUIRE(first.ok);
  plan::PlanOptions o;
  o.meshes = {mesh("1x8")};
  o.alternatives = false;
  plan::Planner planner;
  auto a = planner.plan(first.model, o);
  REQUIRE(a.ok);
  size_t cold = planner.memo_entries();
  // 32 identical layers: the memo holds a handful of bodies, not 32 x (attention, feed-forward, ...).
  CHECK(cold < 40);
  // Edit one class (the FFN's activation): unchanged bodies are reused.
  extractor.apply_edit(replace_first(text, "F.silu(self.w1(x))", "F.gelu(self.w1(x))"));
  auto second = extractor.extract(extract);
  REQUIRE(second.ok);
  auto b = planner.plan(second.model, o);
  REQUIRE(b.ok);
  size_t added = planner.memo_entries() - cold;
  CHECK(added > 0);
  CHECK(added < cold);
  // Same layout after the edit (gelu and silu cost alike).
  CHECK(param(b.meshes[0], "layers.0.feed_forward.w2.weight").layout == "row");

  // An editor starts a generation per version; the plans are unchanged, and the memo stays
  // within its budget (what it drops beyond: the Generational test below).
  plan::Planner editor;
  editor.new_generation();
  auto base = editor.plan(first.model, o);
  size_t steady = editor.memo_entries();
  std::string current = extractor.document().text();
  for (int k = 0; k < 6; ++k) {
    std::string from = k % 2 ? "F.relu(self.w1(x))" : "F.gelu(self.w1(x))";
    std::string to = k % 2 ? "F.gelu(self.w1(x))" : "F.relu(self.w1(x))";
    extractor.apply_edit(replace_first(current, from, to));
    current = extractor.document().text();
    auto edited = extractor.extract(extract);
    REQUIRE(edited.ok);
    editor.new_generation();
    auto p = editor.plan(edited.model, o);
    REQUIRE(p.ok);
    CHECK(p.meshes[0].totals.collectives == base.meshes[0].totals.collectives);
  }
  CHECK(editor.memo_entries() <= std::max(steady + 6 * added, plan::detail::Generational<int>::kKeepEntries));
}

TEST_CASE("The planner's caches keep unused entries while under budget, then drop them by age", "[plan][search][incremental]") {
  plan::detail::Generational<int> cache(4);
  cache.emplace(1, 10);
  cache.emplace(2, 20);
  // Under the budget nothing goes, however long unused: an inner class's other entry layouts
  // are needed again when it is edited after a few other edits.
  for (int g = 0; g < 10; ++g) cache.new_generation();
  CHECK(cache.size() == 2);
  REQUIRE(cache.find(1) != nullptr);  // promoted to the current generation
  CHECK(*cache.find(1) == 10);
  // Over the budget, what was not used for two generations goes; what is used stays.
  for (uint64_t k = 3; k <= 5; ++k) cache.emplace(k, static_cast<int>(k));
  cache.new_generation();  // 5 entries > 4: 2 (unused since the start) goes
  CHECK(cache.find(2) == nullptr);
  CHECK(cache.find(3) != nullptr);
  cache.new_generation();  // 4 entries: kept
  cache.emplace(6, 6);
  cache.new_generation();  // 5 > 4: 1, 4 and 5 (unused for two generations) go
  CHECK(cache.find(1) == nullptr);
  CHECK(cache.find(4) == nullptr);
  CHECK(cache.find(5) == nullptr);
  REQUIRE(cache.find(3) != nullptr);
  CHECK(*cache.find(3) == 3);
  CHECK(cache.find(6) != nullptr);
  CHECK(cache.size() == 2);
}

TEST_CASE("Memory: a layout that does not fit falls back loudly", "[plan][search][memory]") {
  // A 4M x 4096 bf16 embedding (32 GiB): replicated lookups need no collective, but do not fit in
  // a Wormhole's 12 GB; vocab-parallel does, at the price of an all-reduce.
  const char* kBig = R"(
import torch.nn as nn

class Lookup(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(4194304, 4096)
    def forward(self, ids):
        return self.table(ids)

model = Lookup()
)";
  plan::PlanOptions o;
  o.meshes = {mesh("1x8")};
  auto p = plan_script(kBig, o);
  const auto& mp = p.result.meshes.at(0);
  CHECK(mp.memory_fallback);
  CHECK(param(mp, "table.weight").layout != "replicated");
  CHECK(mp.totals.memory_per_device_bytes <= 12e9);
  const plan::Diagnostic* d = nullptr;
  for (auto& x : p.result.diagnostics)
    if (x.code == "memory-fallback") d = &x;
  REQUIRE(d);
  CHECK(d->severity == "warning");
  CHECK(d->message.find("slower") != std::string::npos);
  // Re-planning with a kept Planner starts from the weight it found last time: same answer.
  {
    python::ModelExtractor extractor(kBig, "model.py");
    python::ExtractOptions extract;
    extract.trace_forward = true;
    auto r = extractor.extract(extract);
    REQUIRE(r.ok);
    plan::Planner planner;
    auto first = planner.plan(r.model, o);
    auto again = planner.plan(r.model, o);
    REQUIRE(first.meshes.size() == 1);
    REQUIRE(again.meshes.size() == 1);
    CHECK(again.meshes[0].memory_fallback);
    CHECK(again.meshes[0].totals.est_time_us == Approx(first.meshes[0].totals.est_time_us));
    CHECK(again.meshes[0].totals.memory_per_device_bytes == Approx(mp.totals.memory_per_device_bytes));
    CHECK(param(again.meshes[0], "table.weight").layout == param(mp, "table.weight").layout);
  }
  // On one device nothing can be split: a clear error.
  o.meshes = {mesh("n150")};
  auto q = plan_script(kBig, o);
  bool error = false;
  for (auto& x : q.result.diagnostics) error |= x.code == "memory-does-not-fit" && x.severity == "error";
  CHECK(error);
}

TEST_CASE("Meshes: presets, shapes, and clear errors", "[plan][mesh]") {
  CHECK(mesh("t3k").cols == 8);
  CHECK(mesh("t3k").col_topology == plan::Topology::Ring);
  CHECK(mesh("galaxy").rows == 8);
  CHECK(mesh("galaxy").cols == 4);
  CHECK(mesh("n300").cols == 2);
  CHECK(mesh("2x4").devices() == 8);
  for (const char* bad : {"3x", "0x8", "x8", "8", "1x-2", "abc", "1x8x2", "99999x1"}) {
    std::string error;
    CAPTURE(bad);
    CHECK_FALSE(plan::parse_mesh(bad, error));
    CHECK(error.find("accepted") != std::string::npos);
    CHECK(error.find("t3k") != std::string::npos);
  }
}

TEST_CASE("Collective costs follow the fitted formulas", "[plan][cost]") {
  const auto* wh = plan::find_hardware("wormhole");
  REQUIRE(wh);
  double mib = 1024.0 * 1024;
  // ring all-reduce, N=8: 9.07 + 5.25*4 + 2*7/8*T/18.4 GB/s
  CHECK(plan::ccl_time_us(*wh, plan::Ccl::AllReduce, 8, plan::Topology::Ring, mib) ==
        Approx(9.07 + 5.25 * 4 + 2.0 * 7 / 8 * mib / 18.4e3));
  // line all-gather, N=2 of a 1 MiB tensor: input per device 0.5 MiB
  CHECK(plan::ccl_time_us(*wh, plan::Ccl::AllGather, 2, plan::Topology::Line, mib) == Approx(4.47 + 1.91 + 0.5 * mib / 11.8e3));
  CHECK(plan::ccl_time_us(*wh, plan::Ccl::AllReduce, 1, plan::Topology::Line, mib) == 0);
  // An all-reduce moves twice the bytes of an all-gather of the same tensor.
  CHECK(plan::ccl_time_us(*wh, plan::Ccl::AllReduce, 8, plan::Topology::Ring, 64 * mib) >
        plan::ccl_time_us(*wh, plan::Ccl::AllGather, 8, plan::Topology::Ring, 64 * mib));
  // Blackhole links are faster.
  const auto* bh = plan::find_hardware("blackhole");
  REQUIRE(bh);
  CHECK(plan::ccl_time_us(*bh, plan::Ccl::AllReduce, 8, plan::Topology::Ring, 64 * mib) <
        plan::ccl_time_us(*wh, plan::Ccl::AllReduce, 8, plan::Topology::Ring, 64 * mib));
  CHECK_FALSE(plan::find_hardware("grayskull"));
}

TEST_CASE("Every mesh of a request is planned; 2-D meshes use their rows", "[plan][mesh]") {
  plan::PlanOptions o;
  o.meshes = {mesh("n300"), mesh("t3k"), mesh("t3k-2x4"), mesh("galaxy")};
  o.workload.batch = 8;
  auto p = plan_script(fixture("llama.py"), o);
  REQUIRE(p.result.meshes.size() == 4);
  // One-axis meshes: the Megatron pair on 'model'.
  for (int i : {0, 1}) CHECK(param(p.result.meshes[i], "layers.0.attention.wo.weight").layout == "row");
  for (int i : {2, 3}) {
    const auto& g = p.result.meshes[i];
    CAPTURE(g.mesh.shape_string());
    // The rows are used (2-D tensor or data parallel), and the modes not taken are reported with
    // their cost; one faster than the choice lost inside the error band on collectives.
    CHECK(g.mode.find("replicated") == std::string::npos);
    int rows_alternatives = 0;
    for (auto& a : g.alternatives)
      if (a.name == "rows replicated" || a.name.rfind("data parallel on", 0) == 0 || a.name.rfind("2-D", 0) == 0) {
        ++rows_alternatives;
        if (a.feasible && a.totals.est_time_us < g.totals.est_time_us - 1e-6) {
          CHECK(a.totals.collectives > g.totals.collectives);
          CHECK(a.why_rejected.find("error band") != std::string::npos);
        }
      }
    CHECK(rows_alternatives == 2);
    if (g.mode.find("2-D") != std::string::npos)
      CHECK(spec(param(g, "layers.0.feed_forward.w1.weight"))[0] == "batch+model");
  }
}

TEST_CASE("Totals from the memoized aggregates equal the listed collectives", "[plan][search]") {
  struct Case {
    std::string text;
    plan::Phase phase;
  };
  for (auto& c : std::vector<Case>{{fixture("gpt.py"), plan::Phase::Decode},
                                   {fixture("moe.py"), plan::Phase::Prefill},
                                   {fixture("moe.py"), plan::Phase::Decode},
                                   {fixture("vae_block.py"), plan::Phase::Decode},
                                   {fixture("llama.py"), plan::Phase::Prefill}}) {
    plan::PlanOptions o;
    o.meshes = {mesh("1x8"), mesh("2x4")};
    o.workload.phase = c.phase;
    o.workload.seq = 256;
    auto p = plan_script(c.text, o);
    for (auto& mp : p.result.meshes) {
      CAPTURE(p.model.model, mp.mesh.shape_string(), static_cast<int>(c.phase));
      int count = 0;
      double bytes = 0, time = 0;
      for (auto& col : mp.collectives) {
        count += col.count;
        bytes += col.bytes * col.count;
        time += col.time_us * col.count;
      }
      CHECK(count == mp.totals.collectives);
      CHECK(bytes == Approx(mp.totals.bytes).epsilon(1e-9));
      CHECK(time == Approx(mp.totals.ccl_us).epsilon(1e-9));
      double compute = 0;
      for (auto& comp : mp.components) compute += comp.compute_us * comp.count;
      CHECK(compute <= mp.totals.compute_us + 1e-6);
    }
  }
}

// The planner lists no rejected alternative for a strategy family whose filter admits every tag
// the chosen plan uses (and is no wider than the chosen filter), without searching it: the exact
// search would return the chosen plan's cost. Here every family is searched anyway, and the tags
// the aggregates report must never admit a family whose best plan costs more.
TEST_CASE("A narrower filter that admits the chosen plan's tags finds the chosen plan's cost", "[plan][search]") {
  using namespace plan::detail;
  const std::vector<uint16_t> allowed_sets = {kTagReplicated, kTagReplicated | kTagTensor | kTagExpertTensor,
                                              kTagReplicated | kTagBatch, kTagAll};
  const std::vector<uint16_t> experts_sets = {kTagAll, kTagExpertAllToAll, kTagExpertLocal, kTagExpertTensor};
  int admitted = 0, searched = 0;
  for (const std::string& text : {fixture("gpt.py"), fixture("moe.py"), fixture("llama.py"), fixture("vae_block.py"), fixture("mlp.py")}) {
    for (plan::Phase phase : {plan::Phase::Prefill, plan::Phase::Decode}) {
      plan::PlanOptions o;
      o.workload.phase = phase;
      o.workload.seq = 256;
      auto p = plan_script(text, o);
      auto prep = prepare(p.model);
      for (int n : {2, 8}) {
        AxisSolver solver;
        Context full;
        full.n = n;
        full.hw = plan::find_hardware("wormhole");
        full.workload = o.workload;
        full.ccl_penalty_us = 10;
        AxisSolution chosen = solver.solve(*prep, full);
        REQUIRE(chosen.feasible);
        for (uint16_t allowed : allowed_sets)
          for (uint16_t experts : experts_sets) {
            CAPTURE(p.model.model, n, static_cast<int>(phase), allowed, experts, chosen.totals.leaf_tags, chosen.totals.experts_tags);
            Context narrower = full;
            narrower.filter.allowed = allowed;
            narrower.filter.experts_allowed = experts;
            AxisSolution best = solver.solve(*prep, narrower);
            ++searched;
            if (best.feasible) CHECK(best.cost >= chosen.cost * (1 - 1e-12));
            if (chosen.totals.admitted_by(narrower.filter)) {
              ++admitted;
              REQUIRE(best.feasible);
              CHECK(best.cost == Approx(chosen.cost).epsilon(1e-12));
            }
          }
      }
    }
  }
  // Both kinds occur: families that admit the chosen plan and families that do not.
  CHECK(admitted > 0);
  CHECK(admitted < searched);
}

TEST_CASE("Pins tell identical blocks apart (memo keys include them)", "[plan][search]") {
  // Two identical layers; only the first one's projections are pinned. Block-level memoization must
  // not hand layer 0's solution to layer 1.
  plan::PlanOptions o;
  o.meshes = {mesh("1x8")};
  o.workload.phase = plan::Phase::Prefill;
  o.workload.seq = 16;
  o.evaluate_pins_only = true;
  o.alternatives = false;
  for (auto w : {"attention.wq", "attention.wk", "attention.wv"}) o.pinned_parameters[std::string("layers.0.") + w + ".weight"] = "shard:0";
  o.pinned_parameters["layers.0.attention.wo.weight"] = "shard:1";
  auto p = plan_script(model_script("tp_examples_transformer.py"), o);
  const auto& mp = p.result.meshes.at(0);
  CHECK(param(mp, "layers.0.attention.wq.weight").layout == "column");
  CHECK(param(mp, "layers.0.attention.wo.weight").layout == "row");
  CHECK(param(mp, "layers.1.attention.wq.weight").layout == "replicated");
  CHECK(param(mp, "layers.1.attention.wo.weight").layout == "replicated");
  CHECK(count_at(mp, "all_reduce", "layers.*.attention.wo") == 1);
}

TEST_CASE("One layout across meshes when it is as good", "[plan][mesh]") {
  plan::PlanOptions o;
  o.meshes = {mesh("t3k"), mesh("n300"), mesh("t3k-2x4")};
  auto p = plan_script(fixture("llama.py"), o);
  bool same = false;
  for (auto& n : p.result.notes) same |= n == "the same layout holds on every requested mesh";
  CHECK(same);
  for (size_t i = 0; i < p.model.parameters.size(); ++i)
    for (auto& mp : p.result.meshes) CHECK(mp.parameters[i].layout == p.result.meshes[0].parameters[i].layout);
  // And a mesh whose best layout differs says so: 8 KV heads cannot be split 32 ways.
  o.meshes = {mesh("t3k"), mesh("1x32")};
  auto q = plan_script(fixture("llama.py"), o);
  std::string note;
  for (auto& n : q.result.notes)
    if (n.find("no single layout") != std::string::npos) note = n;
  REQUIRE_FALSE(note.empty());
  // The count it gives is the parameters whose records differ, read one by one.
  size_t differing = 0;
  for (size_t i = 0; i < q.model.parameters.size(); ++i)
    differing += q.result.meshes[1].parameters[i].layout != q.result.meshes[0].parameters[i].layout;
  CHECK(differing > 0);
  CHECK(note.find(": " + std::to_string(differing) + " parameters differ") != std::string::npos);
}

TEST_CASE("Parameter layouts kept compact read back as whole records", "[plan][mesh]") {
  std::vector<ir::Parameter> params(4);
  for (size_t i = 0; i < params.size(); ++i) {
    params[i].name = "experts." + std::to_string(i) + ".w";
    params[i].shape = {8, 16};
    params[i].span = {static_cast<uint32_t>(i) + 1, 4, static_cast<uint32_t>(i) + 1, 20};
  }
  params[3].name = "head.weight";
  params[3].shape = {16};
  static const std::vector<std::string> axes{"model"};
  // The three experts share a slot (expert 0's decision); the head has its own.
  auto slots = std::make_shared<plan::ParameterSlots>();
  slots->slot_of = {0, 0, 0, 1};
  slots->expert_of = {0, 1, 2, -1};
  plan::ParameterLayouts compact;
  compact.assign(&params, slots);
  compact.add_decision({"expert", "each device holds whole experts", false, -1, 0, 3, &axes});
  compact.add_decision({"hidden", "sharded with its activation", true, 0, 0, 0, &axes});
  REQUIRE(compact.size() == 4);
  std::vector<std::string> names;
  for (const plan::ParameterLayout l : compact) names.emplace_back(l.name);
  CHECK(names == std::vector<std::string>{"experts.0.w", "experts.1.w", "experts.2.w", "head.weight"});
  plan::ParameterLayout e2 = compact[2];
  CHECK(e2.layout == "expert");
  CHECK(e2.expert == 2);
  CHECK(e2.experts == 3);
  CHECK(e2.rank == 2);
  CHECK(e2.span.line == 3);
  CHECK_FALSE(e2.spec());  // expert parallel: not a spec on the parameter
  plan::ParameterLayout head = compact[3];
  CHECK(head.expert == -1);
  CHECK(head.experts == 0);
  CHECK(head.rank == 1);
  REQUIRE(head.spec());
  CHECK(*head.spec() == std::vector<std::vector<std::string>>{{"model"}});
  CHECK(compact.layout(3) == "hidden");

  // The same layouts as whole records compare alike; one changed layout is the one marked.
  plan::ParameterLayouts records;
  for (const plan::ParameterLayout l : compact) records.push_back(l);
  // Another mesh over the same slots: the experts' slot differs.
  plan::ParameterLayouts same_slots;
  same_slots.assign(&params, slots);
  same_slots.add_decision({"replicated", "", true, -1, 0, 0, &axes});
  same_slots.add_decision({"hidden", "", true, 0, 0, 0, &axes});
  CHECK(same_slots[1].expert == -1);  // not expert parallel here: no expert index
  // Other slots (as another model's would be): expert 1 alone is replicated.
  auto other_slots = std::make_shared<plan::ParameterSlots>();
  other_slots->slot_of = {0, 1, 0, 2};
  other_slots->expert_of = slots->expert_of;
  plan::ParameterLayouts other;
  other.assign(&params, other_slots);
  other.add_decision({"expert", "", false, -1, 0, 3, &axes});
  other.add_decision({"replicated", "", true, -1, 0, 0, &axes});
  other.add_decision({"hidden", "", true, 0, 0, 0, &axes});
  CHECK(other[1].expert == -1);
  CHECK(other[2].expert == 2);
  for (const plan::ParameterLayouts* against : {&compact, &records}) {
    std::vector<char> differs(4, 0);
    other.mark_differing(*against, differs);
    CHECK(differs == std::vector<char>{0, 1, 0, 0});
    std::vector<char> by_slot(4, 0);
    same_slots.mark_differing(*against, by_slot);
    CHECK(by_slot == std::vector<char>{1, 1, 1, 0});
  }
}

TEST_CASE("Module patterns are kept across models and follow a renamed module", "[plan][mesh]") {
  ir::ModelIR model;
  model.model = "GPT";
  model.modules.resize(3);
  model.modules[1].name = "h.3.attn";
  model.modules[2].name = "h.3.mlp.c_fc";
  plan::detail::ModulePatterns patterns;
  CHECK(patterns.of(model, 0) == "GPT");  // the root: the model's class
  const std::string& attn = patterns.of(model, 1);
  CHECK(attn == "h.*.attn");
  CHECK(&patterns.of(model, 1) == &attn);  // asked again: the same string
  CHECK(patterns.of(model, 2) == "h.*.mlp.c_fc");
  // The next extraction renamed module 1 (a list became a dict): its entry follows the name.
  ir::ModelIR edited = model;
  edited.modules[1].name = "blocks.first.attn";
  CHECK(patterns.of(edited, 1) == "blocks.first.attn");
  CHECK(patterns.of(edited, 2) == "h.*.mlp.c_fc");
}

TEST_CASE("Many live tensors: dominated layouts are pruned exactly instead of cutting the search", "[plan][search]") {
  // q, k, v, cos, sin and the rotary halves are live together: more layout combinations than the
  // search keeps. A state that holds a tensor replicated where another holds it sharded or partial,
  // at no higher cost, is at least as good (moving from replicated costs nothing), so the others go
  // first; here that is enough for the search to stay exact.
  auto p = plan_script(model_script("rope_qk_norm_gqa.py"));
  for (auto& note : p.result.notes) CHECK(note.find("not proven optimal") == std::string::npos);
  const auto& mp = p.result.meshes.at(0);
  CHECK(mp.totals.collectives > 0);
  CHECK(mp.totals.compute_parallel_fraction > 0.99);
}

TEST_CASE("Dim roles: a reduction keeps its input's roles and passes them to the dims it keeps", "[plan][roles]") {
  using namespace plan::detail;
  int kept_named = 0;  // kept dims with a role other than Other: the check below is not vacuous
  for (const std::string& text : {fixture("llama.py"), fixture("gpt.py"), model_script("convnext.py")}) {
    auto p = plan_script(text);
    auto prep = prepare(p.model);
    const auto& flow = p.model.dataflow;
    for (const auto& op : flow.ops) {
      if (op.kind != ir::OpKind::Reduce || op.inputs.empty() || op.outputs.empty()) continue;
      const auto in = prep->roles[op.inputs[0]];
      const auto out = prep->roles[op.outputs[0]];
      auto reduced = [&](size_t d) { return std::find(op.dims.begin(), op.dims.end(), static_cast<int>(d)) != op.dims.end(); };
      CAPTURE(p.model.model, op.name, op.span.line);
      // The input was made (and named) by its producer; reducing it must not rename its dims.
      bool any_named = false;
      for (Role r : in) any_named |= r != Role::Other;
      if (out.size() != in.size()) continue;
      for (size_t d = 0; d < in.size(); ++d) {
        if (reduced(d)) {
          CHECK(out[d] == Role::Other);
        } else {
          CHECK(out[d] == in[d]);
          kept_named += in[d] != Role::Other;
        }
      }
      CHECK(any_named);
    }
  }
  CHECK(kept_named > 0);
}

TEST_CASE("Planning on two threads gives the plan of one", "[plan][threads]") {
  // Small fixtures list their meshes' plans on the second thread; the 126-layer bench model also
  // prepares on both (it is above the size where that pays).
  const std::vector<std::string> texts = {fixture("gpt.py"), fixture("moe.py"), model_script("convnext.py"),
                                          read_text(std::string(SHARDLENS_SOURCE_DIR) + "/bench/models/dense_405b.py")};
  for (const auto& text : texts) {
    plan::PlanOptions o;
    o.meshes = {mesh("1x2"), mesh("1x8"), mesh("2x4"), mesh("8x4")};
    auto one = o;
    one.second_thread = false;
    auto p = plan_script(text, o);
    auto serial = plan::plan_model(p.model, one);
    REQUIRE(serial.ok);
    auto without_time = [&](const plan::PlanResult& r, const plan::PlanOptions& options) {
      auto j = plan::to_json(r, p.model, options);
      j.erase("plan_ms");
      return j.dump();
    };
    CAPTURE(p.model.model);
    CHECK(without_time(p.result, o) == without_time(serial, o));
    REQUIRE(p.result.meshes.size() == 4);
    CHECK(!p.result.meshes[3].parameters.empty());
    CHECK(!p.result.meshes[3].components.empty());
  }
  // The preparation alone, field by field, on the large model.
  auto p = plan_script(texts.back());
  REQUIRE(p.model.dataflow.ops.size() >= 1000);
  check_same_preparation(*plan::detail::prepare(p.model, true), *plan::detail::prepare(p.model, false));
}

TEST_CASE("A preparation that reuses the last one's buffers equals a fresh one", "[plan][incremental]") {
  using namespace plan::detail;
  // Larger to smaller and back, different architectures: every member must be made anew.
  auto big = plan_script(read_text(std::string(SHARDLENS_SOURCE_DIR) + "/bench/models/dense_405b.py"));
  auto gpt = plan_script(fixture("gpt.py"));
  auto moe = plan_script(fixture("moe.py"));
  std::shared_ptr<Prepared> spent = prepare(big.model);
  for (const auto* p : {&gpt, &moe, &big, &gpt}) {
    CAPTURE(p->model.model);
    auto fresh = prepare(p->model);
    auto reused = prepare(p->model, true, std::move(spent));
    check_same_preparation(*fresh, *reused);
    spent = std::move(reused);
  }
  // A preparation someone still holds is not reused.
  auto held = prepare(gpt.model);
  auto other = prepare(moe.model, true, held);
  CHECK(other.get() != held.get());
}

TEST_CASE("A replay copies identical blocks and gives what walking every op gives", "[plan][search][replay]") {
  using namespace plan::detail;
  // Two classes of the same content (so the same body signature) under other attribute names, and
  // a block list: the copy must fall back where the modules' names show in a collective's reason.
  const std::string renamed = R"(
import torch
import torch.nn as nn

class Up(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(512, 2048)
        self.down = nn.Linear(2048, 512)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))

class Wide(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(512, 2048)
        self.fc2 = nn.Linear(2048, 512)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Up()
        self.b = Wide()
        self.blocks = nn.ModuleList([Up() for _ in range(6)])
        self.c = Up()

    def forward(self, x):
        x = self.b(self.a(x))
        for block in self.blocks:
            x = block(x)
        return self.c(x)

model = Net()
)";
  const std::string dense = read_text(std::string(SHARDLENS_SOURCE_DIR) + "/bench/models/dense_405b.py");
  struct Script {
    std::string text;
    bool copies;  // whether some call must be copied
  };
  const std::vector<Script> scripts = {{renamed, true}, {fixture("gpt.py"), true}, {fixture("moe.py"), true},
                                       {fixture("llama.py"), true}, {fixture("vae_block.py"), false}, {dense, true}};
  auto same_events = [](const std::vector<CclEvent>& x, const std::vector<CclEvent>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      const auto& a = x[i];
      const auto& b = y[i];
      if (a.op != b.op || a.origin != b.origin || a.tensor != b.tensor || a.kind != b.kind || a.bytes != b.bytes ||
          a.time_us != b.time_us || a.why != b.why || !(a.from == b.from) || !(a.to == b.to) || a.input != b.input)
        return false;
    }
    return true;
  };
  for (const auto& script : scripts)
    for (plan::Phase phase : {plan::Phase::Prefill, plan::Phase::Decode}) {
      plan::PlanOptions o;
      o.workload.phase = phase;
      o.workload.seq = 256;
      auto p = plan_script(script.text, o);
      auto prep = prepare(p.model);
      for (int rows : {0, 2})
        for (int n : {2, 8}) {
          CAPTURE(p.model.model, static_cast<int>(phase), rows, n);
          Context ctx;
          ctx.n = n;
          ctx.rows = rows;
          ctx.hw = plan::find_hardware("wormhole");
          ctx.workload = o.workload;
          ctx.ccl_penalty_us = 10;
          AxisSolver solver;
          AxisSolution sol = solver.solve(*prep, ctx);
          REQUIRE(sol.feasible);
          solver.expand_decisions(*prep, ctx, sol);
          const Evaluation copied = evaluate(*prep, ctx, sol);
          const Evaluation walked = evaluate(*prep, ctx, sol, false);
          CHECK(walked.calls_copied == 0);
          if (script.copies) CHECK(copied.calls_copied > 0);
          CHECK(same_events(copied.events, walked.events));
          CHECK(same_events(copied.slices, walked.slices));
          CHECK(copied.op_compute_us == walked.op_compute_us);
          CHECK(copied.op_label == walked.op_label);
          REQUIRE(copied.param_uses.size() == walked.param_uses.size());
          bool uses_equal = true;
          for (size_t k = 0; k < copied.param_uses.size(); ++k) {
            const auto& a = copied.param_uses[k];
            const auto& b = walked.param_uses[k];
            uses_equal &= a.spec == b.spec && a.label == b.label && a.op == b.op;
          }
          CHECK(uses_equal);
          CHECK(copied.compute_us == Approx(walked.compute_us));
          CHECK(copied.ccl_us == Approx(walked.ccl_us));
          CHECK(copied.flops == Approx(walked.flops));
          CHECK(copied.kv_cache_bytes == Approx(walked.kv_cache_bytes));
        }
    }
}

// A callee whose entries differ only in tensors it hands on to its own calls (an encoder's output
// handed to every decoder block's cross-attention, rotary tables handed to its self-attention) is
// searched once per base entry and the other entries' results derived by a constant shift
// (AxisSolver::derive_by_shift). The derivation must be the search's own result, bit for bit:
// the same cost, the same decisions for every op, the same collectives.
TEST_CASE("Body results derived by shift are what searching every entry gives", "[plan][search]") {
  using namespace plan::detail;
  // The language-server benchmark's model: an encoder-decoder whose decoder blocks take the
  // encoder's output and the rotary tables. Decode, as the editor plans it (a prefill search of
  // this model takes 20 s without the memo of an earlier plan).
  const std::string text = read_text(std::string(SHARDLENS_SOURCE_DIR) + "/bench/models/lsp_bench_model.py");
  for (plan::Phase phase : {plan::Phase::Decode}) {
    plan::PlanOptions o;
    o.workload.phase = phase;
    auto p = plan_script(text, o);
    auto prep = prepare(p.model);
    for (int n : {2, 8}) {
      CAPTURE(static_cast<int>(phase), n);
      Context ctx;
      ctx.n = n;
      ctx.hw = plan::find_hardware("wormhole");
      ctx.workload = o.workload;
      ctx.ccl_penalty_us = 10;
      AxisSolver deriving, searching;
      searching.set_derive(false);
      AxisSolution a = deriving.solve(*prep, ctx), b = searching.solve(*prep, ctx);
      REQUIRE(a.feasible);
      REQUIRE(b.feasible);
      CHECK(deriving.derived() > 0);  // the model has such callees: the derivation ran
      CHECK(searching.derived() == 0);
      CHECK(a.cost == b.cost);
      CHECK(a.totals.collectives == b.totals.collectives);
      CHECK(a.totals.bytes == b.totals.bytes);
      CHECK(a.totals.ccl_us == b.totals.ccl_us);
      CHECK(a.totals.compute_us == b.totals.compute_us);
      deriving.expand_decisions(*prep, ctx, a);
      searching.expand_decisions(*prep, ctx, b);
      REQUIRE(a.decisions.size() == b.decisions.size());
      size_t differing = 0;
      for (size_t i = 0; i < a.decisions.size(); ++i) {
        const Decision& x = a.decisions[i];
        const Decision& y = b.decisions[i];
        if (x.strategy != y.strategy || x.free_specs != y.free_specs || x.experts_mode != y.experts_mode ||
            !(x.experts_tokens == y.experts_tokens))
          ++differing;
      }
      CHECK(differing == 0);
      const Evaluation ea = evaluate(*prep, ctx, a), eb = evaluate(*prep, ctx, b);
      CHECK(ea.events.size() == eb.events.size());
      CHECK(ea.ccl_us == eb.ccl_us);
      // Entry by entry: every body result the deriving solver holds (derived or searched) that the
      // searching one holds too is the same, exits, costs, decisions and callee results alike.
      // (Most derived results lie off the chosen plan: the plan alone would not show a wrong one.)
      size_t compared = 0, differ = 0;
      deriving.for_each_memo_entry([&](uint64_t key, const AxisSolver::MemoEntry& x) {
        const AxisSolver::MemoEntry* y = searching.memo_entry(key);
        if (!y) return;  // a base entry searched only to derive from
        ++compared;
        bool same = x.entry == y->entry && x.exits.size() == y->exits.size();
        for (size_t k = 0; same && k < x.exits.size(); ++k) {
          const auto& ex = x.exits[k];
          const auto& ey = y->exits[k];
          same = ex.out == ey.out && ex.cost == ey.cost && ex.nested == ey.nested && ex.decisions.size() == ey.decisions.size();
          for (size_t d = 0; same && d < ex.decisions.size(); ++d)
            same = ex.decisions[d].strategy == ey.decisions[d].strategy && ex.decisions[d].free_specs == ey.decisions[d].free_specs &&
                   ex.decisions[d].experts_mode == ey.decisions[d].experts_mode &&
                   ex.decisions[d].experts_tokens == ey.decisions[d].experts_tokens;
        }
        if (!same) ++differ;
      });
      CHECK(compared >= deriving.derived());
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("a layer called more than once (shared weights, as ALBERT) plans without trying every joint layout") {
  // Its 16 weights are stored before the first call: 3^16 joint layouts, which the search used to
  // enumerate per state (a hang). Now they are walked one weight at a time, and the plan says so.
  const std::string text = R"(
import torch
from torch import nn
import torch.nn.functional as F

class Layer(nn.Module):
    def __init__(self, d=256, h=8):
        super().__init__()
        self.h = h
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)
        self.norm = nn.LayerNorm(d)
        self.norm2 = nn.LayerNorm(d)

    def forward(self, x):
        b, s, d = x.shape
        q = self.q(x).view(b, s, self.h, -1).transpose(1, 2)
        k = self.k(x).view(b, s, self.h, -1).transpose(1, 2)
        v = self.v(x).view(b, s, self.h, -1).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, s, d)
        x = self.norm(x + self.o(a))
        return self.norm2(x + self.down(F.gelu(self.up(x))))

class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 256)
        self.layer = Layer()

    def forward(self, ids):
        x = self.emb(ids)
        for _ in range(3):
            x = self.layer(x)
        return x

model = Shared()
)";
  plan::PlanOptions o;
  o.workload.phase = plan::Phase::Prefill;
  o.workload.batch = 1;
  o.workload.seq = 512;
  auto p = plan_script(text, o);
  const auto& mp = p.result.meshes.at(0);
  bool said = false;
  for (const auto& n : p.result.notes) said |= n.find("one weight at a time") != std::string::npos;
  CHECK(said);
  CHECK(std::isfinite(mp.totals.est_time_us));
  CHECK(mp.totals.est_time_us > 0);
  // One layout per weight whichever call reads it: each parameter is listed once.
  std::set<std::string> names;
  for (const auto& prm : mp.parameters) CHECK(names.insert(std::string(prm.name)).second);
}

TEST_CASE("An argument a called module never reads does not multiply the layouts it is searched with (HF's position_ids)") {
  // Every layer is handed position_ids and cache_position beside the rotary tables, and reads only
  // the tables: the planner used to search each layer once per layout of the ids as well.
  auto script = [](bool hand_ids) {
    std::string s = R"(
import torch
from torch import nn

class Layer(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x, cos, position_ids=None, cache_position=None):
        return x + self.down(torch.relu(self.up(x * cos)))

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(512, 64)
        self.layers = nn.ModuleList([Layer() for _ in range(4)])

    def forward(self, ids):
        position_ids = torch.arange(ids.shape[1])[None, :].expand(ids.shape[0], -1)
        cache_position = torch.arange(ids.shape[1])
        x = self.emb(ids)
        cos = torch.cos(x)
        for layer in self.layers:
            x = layer(x, cos, HANDED)
        return x

model = Model()
)";
    const std::string handed = hand_ids ? "position_ids=position_ids, cache_position=cache_position" : "";
    s.replace(s.find("HANDED"), 6, handed);
    if (!hand_ids) s.replace(s.find("x, cos, )"), 9, "x, cos)");
    return s;
  };
  plan::PlanOptions o;
  o.workload.phase = plan::Phase::Prefill;
  o.workload.seq = 64;
  o.alternatives = false;
  auto with_ids = plan_script(script(true), o);
  auto without = plan_script(script(false), o);
  const auto& a = with_ids.result.meshes.at(0);
  const auto& b = without.result.meshes.at(0);
  CHECK(a.totals.est_time_us == Approx(b.totals.est_time_us));
  CHECK(a.totals.collectives == b.totals.collectives);
  for (size_t i = 0; i < a.parameters.size() && i < b.parameters.size(); ++i) CHECK(a.parameters[i].layout == b.parameters[i].layout);
  // The same bodies searched, as many times: the ids add no entry layouts.
  plan::Planner pa, pb;
  REQUIRE(pa.plan(with_ids.model, o).ok);
  REQUIRE(pb.plan(without.model, o).ok);
  CHECK(pa.memo_entries() == pb.memo_entries());
}
