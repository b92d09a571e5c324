// The body search by variable elimination (issue 35): exact (what enumerating every choice finds,
// what the dynamic programme finds where it is exact), never cut short on attention bodies that keep
// rotary tables alive; and diagnostics located from one index of the text.
#include <catch2/catch.hpp>

#include <random>

#include "plan/elimination.h"
#include "plan/search.h"
#include "python/value_locator.h"
#include "plan_helpers.h"
#include "test_helpers.h"

using namespace shardlens;
using namespace shardlens::test;

namespace {

using plan::detail::MinSumElimination;

// Random problems small enough to enumerate: every assignment's total, the least one found.
TEST_CASE("Min-sum elimination finds the least total that enumeration finds", "[plan][elimination]") {
  std::mt19937 rng(35);
  for (int trial = 0; trial < 300; ++trial) {
    CAPTURE(trial);
    const int nvars = 2 + static_cast<int>(rng() % 6);
    std::vector<int> domain(static_cast<size_t>(nvars));
    for (auto& d : domain) d = 1 + static_cast<int>(rng() % 3);
    std::vector<MinSumElimination::Factor> factors;
    const int nfactors = 1 + static_cast<int>(rng() % 7);
    for (int f = 0; f < nfactors; ++f) {
      MinSumElimination::Factor factor;
      for (int v = 0; v < nvars; ++v)
        if (rng() % 3 == 0) factor.vars.push_back(v);
      std::shuffle(factor.vars.begin(), factor.vars.end(), rng);
      size_t size = 1;
      for (int v : factor.vars) size *= static_cast<size_t>(domain[static_cast<size_t>(v)]);
      for (size_t k = 0; k < size; ++k)
        factor.values.push_back(rng() % 9 == 0 ? MinSumElimination::kInfeasible : static_cast<double>(rng() % 17) * 0.25);
      factors.push_back(std::move(factor));
    }
    auto total = [&](const std::vector<int>& a) {
      double t = 0;
      for (auto& f : factors) {
        size_t index = 0;
        for (int v : f.vars) index = index * static_cast<size_t>(domain[static_cast<size_t>(v)]) + static_cast<size_t>(a[static_cast<size_t>(v)]);
        t += f.values[index];
      }
      return t;
    };
    // Keep variable 0: the table over it must be the least total with it fixed.
    std::vector<double> best(static_cast<size_t>(domain[0]), MinSumElimination::kInfeasible);
    std::vector<int> a(static_cast<size_t>(nvars), 0);
    for (bool more = true; more;) {
      best[static_cast<size_t>(a[0])] = std::min(best[static_cast<size_t>(a[0])], total(a));
      more = false;
      for (int v = nvars; v-- > 0;) {
        if (++a[static_cast<size_t>(v)] < domain[static_cast<size_t>(v)]) {
          more = true;
          break;
        }
        a[static_cast<size_t>(v)] = 0;
      }
    }
    MinSumElimination problem(domain);
    for (auto& f : factors) problem.add(f);
    REQUIRE(problem.run({0}, 1 << 20));
    REQUIRE(problem.kept_table().size() == best.size());
    for (int x = 0; x < domain[0]; ++x) {
      CHECK(problem.kept_table()[static_cast<size_t>(x)] == best[static_cast<size_t>(x)]);
      if (!(best[static_cast<size_t>(x)] < MinSumElimination::kInfeasible)) continue;
      std::vector<int> assignment(static_cast<size_t>(nvars), 0);
      assignment[0] = x;
      problem.complete(assignment);
      CHECK(total(assignment) == best[static_cast<size_t>(x)]);  // the completion reaches it
    }
  }
}

TEST_CASE("Min-sum elimination refuses a table over its limit", "[plan][elimination]") {
  // A clique of 6 variables of 4 values: eliminating any builds a table of 4^5.
  MinSumElimination problem(std::vector<int>(6, 4));
  for (int a = 0; a < 6; ++a)
    for (int b = a + 1; b < 6; ++b) problem.add({{a, b}, std::vector<double>(16, 1.0)});
  CHECK_FALSE(problem.run({}, 100));
  MinSumElimination again(std::vector<int>(6, 4));
  for (int a = 0; a < 6; ++a)
    for (int b = a + 1; b < 6; ++b) again.add({{a, b}, std::vector<double>(16, 1.0)});
  REQUIRE(again.run({}, 1 << 20));
  CHECK(again.kept_table().at(0) == 15.0);
}

// Every body result both solvers hold: the same exits (layouts) at the same costs.
void compare_solvers(const plan::detail::Prepared& prep, const plan::detail::Context& ctx, bool* programme_exact) {
  using namespace plan::detail;
  AxisSolver programme, elimination;
  programme.set_body_method(AxisSolver::BodyMethod::Programme);
  elimination.set_body_method(AxisSolver::BodyMethod::Elimination);
  AxisSolution a = programme.solve(prep, ctx), b = elimination.solve(prep, ctx);
  *programme_exact = !programme.truncated();
  CHECK_FALSE(elimination.truncated());
  CHECK(elimination.eliminated() > 0);
  REQUIRE(a.feasible == b.feasible);
  if (!a.feasible) return;
  if (programme.truncated()) {
    CHECK(b.cost <= a.cost);  // the cut programme may miss the optimum; elimination does not
    return;
  }
  CHECK(a.cost == b.cost);
  // Body by body: the same best exit, and every exit the programme keeps is found by elimination
  // at no higher cost. (The programme drops a state whose replicated twin costs no more, so an
  // exit that leaves an output sharded may be missing from its list or dearer there: a caller
  // loses nothing, moving from replicated being free; elimination lists each layout's least cost.)
  size_t compared = 0, differ = 0;
  programme.for_each_memo_entry([&](uint64_t key, const AxisSolver::MemoEntry& x) {
    const AxisSolver::MemoEntry* y = elimination.memo_entry(key);
    if (!y) return;
    ++compared;
    double best_x = MinSumElimination::kInfeasible, best_y = MinSumElimination::kInfeasible;
    for (const auto& ex : x.exits) best_x = std::min(best_x, ex.cost);
    for (const auto& ey : y->exits) best_y = std::min(best_y, ey.cost);
    bool same = best_x == best_y;
    for (const auto& ex : x.exits) {
      bool found = false;
      for (const auto& ey : y->exits) found = found || (ey.out == ex.out && ey.cost <= ex.cost);
      same = same && found;
    }
    if (!same) ++differ;
  });
  CHECK(compared > 0);
  CHECK(differ == 0);
  // The plans' totals agree with what each search found.
  CHECK(a.totals.compute_us + a.totals.ccl_us == Approx(b.totals.compute_us + b.totals.ccl_us).epsilon(1e-6));
  programme.expand_decisions(prep, ctx, a);
  elimination.expand_decisions(prep, ctx, b);
  const Evaluation ea = evaluate(prep, ctx, a), eb = evaluate(prep, ctx, b);
  // Replayed, the plans cost the same. (On mamba.py a replay and the memoized totals disagree for
  // either search alike: a gap older than this search, not checked here.)
  CHECK(eb.ccl_us == Approx(ea.ccl_us));
  CHECK(eb.compute_us == Approx(ea.compute_us));
}

TEST_CASE("Elimination and the programme find the same optimum for every body", "[plan][elimination]") {
  using namespace plan::detail;
  int traced = 0;
  const std::vector<std::string> scripts = {"rope_qk_norm_gqa.py", "hf_gpt2.py", "mamba.py", "hf_bert.py",
                                            "mha_transformer.py", "bloom_alibi.py", "gpt_neox.py", "mingpt.py"};
  for (const auto& name : scripts) {
    for (plan::Phase phase : {plan::Phase::Decode, plan::Phase::Prefill}) {
      plan::PlanOptions o;
      o.workload.phase = phase;
      if (phase == plan::Phase::Prefill) o.workload.seq = 512;
      python::ModelExtractor extractor(model_script(name), "model.py");
      python::ExtractOptions extract;
      extract.trace_forward = true;
      extract.workload.batch = o.workload.batch;
      extract.workload.tokens = o.workload.tokens_per_forward();
      auto r = extractor.extract(extract);
      if (!r.ok || !r.model.dataflow.error.empty()) {
        WARN(name << " does not trace here: " << r.model.dataflow.error);
        continue;
      }
      ++traced;
      auto prep = prepare(r.model);
      for (int n : {2, 8}) {
        CAPTURE(name, static_cast<int>(phase), n);
        Context ctx;
        ctx.n = n;
        ctx.hw = plan::find_hardware("wormhole");
        ctx.workload = o.workload;
        ctx.ccl_penalty_us = 10;
        bool exact = false;
        compare_solvers(*prep, ctx, &exact);
      }
    }
  }
  CHECK(traced >= 12);  // of the 16 (model, phase) pairs
}

TEST_CASE("Rotary tables passed into every layer: the search is exact and never cut", "[plan][elimination]") {
  const std::string text = read_text(std::string(SHARDLENS_SOURCE_DIR) + "/bench/models/llama_rope.py");
  for (plan::Phase phase : {plan::Phase::Decode, plan::Phase::Prefill}) {
    plan::PlanOptions o;
    o.workload.phase = phase;
    o.meshes = {mesh("n300"), mesh("t3k")};
    auto p = plan_script(text, o);
    for (auto& note : p.result.notes) CHECK(note.find("not proven optimal") == std::string::npos);
    for (const auto& mp : p.result.meshes) {
      // Megatron: heads sharded, 2 all-reduces per layer (32 layers), nothing gathered inside attention.
      CHECK(mp.totals.collectives >= 64);
      CHECK(mp.totals.compute_parallel_fraction > 0.9);
    }
  }
}

// A layer handed the hidden states, cos and sin, each in several layouts, is solved for all of
// their combinations by one elimination (presolve_entries): each entry's result must be what
// searching that entry alone gives. With elimination for every body: the same exits at the same
// costs. With the default method the programme solves some entries alone, and may drop an exit
// whose replicated twin costs no more (see compare_solvers): the same least cost, and every exit
// it keeps found at no higher cost.
TEST_CASE("One elimination over every entry of a body gives each entry's own result", "[plan][elimination]") {
  using namespace plan::detail;
  std::string text = read_text(std::string(SHARDLENS_SOURCE_DIR) + "/bench/models/llama_rope.py");
  const std::string key = "NUM_LAYERS = 32";
  text.replace(text.find(key), key.size(), "NUM_LAYERS = 2");
  for (plan::Phase phase : {plan::Phase::Decode, plan::Phase::Prefill}) {
    plan::Workload w;
    w.phase = phase;
    if (phase == plan::Phase::Prefill) w.seq = 512;
    python::ModelExtractor extractor(text, "model.py");
    python::ExtractOptions extract;
    extract.trace_forward = true;
    extract.workload.batch = w.batch;
    extract.workload.tokens = w.tokens_per_forward();
    auto r = extractor.extract(extract);
    REQUIRE(r.ok);
    auto prep = prepare(r.model);
    for (auto method : {AxisSolver::BodyMethod::Elimination, AxisSolver::BodyMethod::Auto})
      for (int n : {2, 8}) {
        const bool same_method = method == AxisSolver::BodyMethod::Elimination;
        CAPTURE(static_cast<int>(phase), n, same_method);
        Context ctx;
        ctx.n = n;
        ctx.hw = plan::find_hardware("wormhole");
        ctx.workload = w;
        ctx.ccl_penalty_us = 10;
        AxisSolver alone, together;
        alone.set_body_method(method);
        together.set_body_method(method);
        alone.set_presolve(false);
        AxisSolution a = alone.solve(*prep, ctx), b = together.solve(*prep, ctx);
        CHECK(alone.presolved() == 0);
        CHECK(together.presolved() > 0);  // the attention body meets cos and sin in several layouts
        REQUIRE(a.feasible == b.feasible);
        CHECK(a.cost == b.cost);
        size_t compared = 0, differ = 0;
        together.for_each_memo_entry([&](uint64_t k, const AxisSolver::MemoEntry& y) {
          const AxisSolver::MemoEntry* x = alone.memo_entry(k);
          if (!x) return;
          ++compared;
          bool same = x->entry == y.entry && (!same_method || x->exits.size() == y.exits.size());
          double best_x = MinSumElimination::kInfeasible, best_y = MinSumElimination::kInfeasible;
          for (const auto& ex : x->exits) best_x = std::min(best_x, ex.cost);
          for (const auto& ey : y.exits) best_y = std::min(best_y, ey.cost);
          same = same && best_x == best_y;
          for (const auto& ex : x->exits) {
            bool found = false;
            for (const auto& ey : y.exits) found = found || (ey.out == ex.out && (same_method ? ey.cost == ex.cost : ey.cost <= ex.cost));
            same = same && found;
          }
          if (!same) ++differ;
        });
        CHECK(compared > 10);
        CHECK(differ == 0);
        together.expand_decisions(*prep, ctx, b);
        alone.expand_decisions(*prep, ctx, a);
        const Evaluation ea = evaluate(*prep, ctx, a), eb = evaluate(*prep, ctx, b);
        CHECK(eb.ccl_us + eb.compute_us == Approx(ea.ccl_us + ea.compute_us));
      }
  }
}

TEST_CASE("Diagnostics are located from one index of the text", "[plan][locate]") {
  const std::string text =
      "class Cfg:\n"
      "    n_heads: int = 12\n"
      "    n_kv_heads = 12\n"
      "    dim = 768\n"
      "x = f(num_heads=12, width=768)\n"
      "if a == 12: pass\n"
      "hidden = 1_024\n";
  python::ValueIndex index(text);
  for (const auto& [keys, value] : std::vector<std::pair<std::vector<std::string>, int64_t>>{
           {{"kv_heads", "heads"}, 12}, {{"heads"}, 12}, {{"dim", "width"}, 768}, {{"width"}, 768}, {{"hidden"}, 1024},
           {{"heads"}, 13}, {{"missing"}, 12}}) {
    CAPTURE(keys, value);
    const ir::Span a = index.locate(keys, value), b = python::locate_value(text, keys, value);
    CHECK(a == b);
  }
  CHECK(index.locate({"kv_heads", "heads"}, 12).line == 3);  // the preferred keyword wins
  CHECK(index.locate({"heads"}, 12).line == 2);               // then the first assignment
  CHECK(index.locate({"width"}, 768).line == 5);              // a keyword argument
  CHECK(index.locate({"hidden"}, 1024).line == 7);            // digits with underscores
  CHECK_FALSE(index.locate({"heads"}, 13).valid());
  python::LazyValueIndex lazy(text);
  CHECK(lazy.locate({"dim"}, 768).line == 4);
}

}  // namespace
