// The objective the planner states is the one it applies (issue 36, item 1): among plans within
// the cost model's error band of the fastest, fewer collectives win, then fewer bytes; outside the
// band, time wins. So no rejected alternative may be both faster and lower in collectives than the
// chosen plan, unless it does not fit or the user's --strategy excluded it, and then its reason
// says so. Swept over every model script, both phases, several meshes, both strategies.
#include <catch2/catch.hpp>

#include <string>

#include "plan/plan.h"
#include "plan_helpers.h"
#include "python/extractor.h"
#include "test_helpers.h"

using namespace shardlens;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct Sweep {
  int plans = 0, alternatives = 0, faster_rejected = 0, band_choices = 0, excluded = 0;
};

// Checks every rejected alternative of every mesh plan of `r` against the chosen plan.
void check_reasons(const plan::PlanResult& r, Sweep& sweep) {
  for (const auto& mp : r.meshes) {
    INFO("mesh " << mp.mesh.shape_string());
    ++sweep.plans;
    const plan::Totals& c = mp.totals;
    for (const auto& a : mp.alternatives) {
      INFO("alternative '" << a.name << "': " << a.why_rejected);
      ++sweep.alternatives;
      CHECK_FALSE(a.why_rejected.empty());
      if (!a.feasible) continue;
      const plan::Totals& t = a.totals;
      const bool excluded = contains(a.why_rejected, "excluded by --strategy");
      const bool too_big = contains(a.why_rejected, "does not fit in DRAM");
      sweep.excluded += excluded;
      const bool faster = t.est_time_us < c.est_time_us;
      if (faster && t.collectives < c.collectives) CHECK((excluded || too_big));
      // Each clause is true of it.
      if (contains(a.why_rejected, "slower per forward")) CHECK(t.est_time_us > c.est_time_us);
      if (contains(a.why_rejected, "faster by the estimate")) CHECK(faster);
      const std::string counts = std::to_string(t.collectives) + " collectives instead of " + std::to_string(c.collectives);
      if (t.collectives != c.collectives) CHECK(contains(a.why_rejected, counts));
      else CHECK_FALSE(contains(a.why_rejected, " collectives instead of "));
      if (faster && !excluded && !too_big) {
        ++sweep.faster_rejected;
        // Chosen for fewer collectives (or bytes) inside the band, and the reason says it.
        CHECK(contains(a.why_rejected, "error band"));
        CHECK((t.collectives > c.collectives || (t.collectives == c.collectives && t.bytes >= c.bytes)));
      }
      if (contains(a.why_rejected, "the search's fastest")) ++sweep.band_choices;
    }
  }
}

}  // namespace

TEST_CASE("No rejected alternative is both faster and lower in collectives than the chosen plan", "[plan][objective]") {
  Sweep sweep;
  int scripts = 0;
  // Every second script: the sweep plans each
  // one 3 times over 3 meshes with every alternative, which takes minutes for all of them.
  const auto all = test::swept_model_scripts();
  for (size_t k = 0; k < all.size(); k += 2) {
    const auto& path = all[k];
    const std::string text = test::read_text(path.string());
    for (plan::Phase phase : {plan::Phase::Decode, plan::Phase::Prefill}) {
      plan::PlanOptions options;
      options.workload.phase = phase;
      options.workload.seq = 512;
      for (const char* m : {"1x2", "t3k", "galaxy-4x8"}) options.meshes.push_back(test::mesh(m));
      python::ModelExtractor extractor(text, path.filename().string());
      python::ExtractOptions extract;
      extract.trace_forward = true;
      extract.workload.batch = options.workload.batch;
      extract.workload.tokens = options.workload.tokens_per_forward();
      auto ex = extractor.extract(extract);
      // The benchmark's 100B-class models take most of the time and add no new kind of choice.
      if (!ex.ok || ex.model.dataflow.ops.empty() || ex.model.dataflow.ops.size() > 20000) continue;
      ++scripts;
      for (plan::StrategyMode strategy : {plan::StrategyMode::Auto, plan::StrategyMode::Tensor}) {
        if (strategy == plan::StrategyMode::Tensor && phase == plan::Phase::Prefill) continue;  // decode is enough for the exclusions
        options.strategy = strategy;
        INFO(path.filename().string() << (phase == plan::Phase::Decode ? " decode" : " prefill")
                                      << (strategy == plan::StrategyMode::Tensor ? " --strategy tensor" : ""));
        auto r = plan::plan_model(ex.model, options);
        if (!r.ok) continue;
        check_reasons(r, sweep);
      }
    }
  }
  // The sweep saw real choices: plans, alternatives faster than the choice (decided by the band),
  // and alternatives excluded by --strategy tensor.
  CHECK(scripts >= 30 / test::kScriptStride);
  CHECK(sweep.plans > 100 / static_cast<int>(test::kScriptStride));
  CHECK(sweep.faster_rejected > 0);
  CHECK(sweep.excluded > 0);
  WARN("objective sweep: " << scripts << " script-phases, " << sweep.plans << " mesh plans, " << sweep.alternatives
                           << " alternatives, " << sweep.faster_rejected << " faster ones rejected inside the band, "
                           << sweep.band_choices << " plans where the band overrode the search's fastest, " << sweep.excluded
                           << " excluded by --strategy");
}

TEST_CASE("The band decides between near-equal plans; time decides outside it", "[plan][objective]") {
  // mlp.py in decode: tensor parallel is many times faster than replicated (weights dominate):
  // outside any band, time wins despite the all-reduce.
  auto p = test::plan_script(test::fixture("mlp.py"));
  const auto& mp = p.result.meshes.at(0);
  CHECK(mp.totals.collectives == 1);
  bool saw_replicated = false;
  for (auto& a : mp.alternatives)
    if (a.name == "replicated") {
      saw_replicated = true;
      CHECK(a.totals.collectives == 0);
      CHECK(a.totals.est_time_us > 1.10 * mp.totals.est_time_us);
      CHECK(contains(a.why_rejected, "more than the error band"));
    }
  CHECK(saw_replicated);
}
