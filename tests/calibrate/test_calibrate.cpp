// Calibration: fits recover known constants from synthetic measurements with noise; the bundled
// profiles reproduce the built-in constants (same plans); a measured cheaper all-reduce changes the plan.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "../unit/plan_helpers.h"
#include "calibrate/calibrate.h"
#include "plan/ccl_cost.h"
#include "plan/hardware_profile.h"
#include "plan/plan_output.h"

using namespace shardlens;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Measurements of `fit` for `kind` on `topology` at several device counts and sizes, each time
// multiplied by (1 + noise) with noise uniform in [-amplitude, amplitude].
std::string synthetic_csv(const plan::CclFit& fit, const std::string& kind, const std::string& topology, double amplitude, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-amplitude, amplitude);
  std::string csv = "kind,topology,devices,bytes,us\n";
  for (int n : {2, 4, 8})
    for (double bytes : {1024.0, 16384.0, 262144.0, 4194304.0, 67108864.0}) {
      double us = calibrate::model_us(fit, kind, n, bytes) * (1 + noise(rng));
      csv += kind + "," + topology + "," + std::to_string(n) + "," + std::to_string(bytes) + "," + std::to_string(us) + "\n";
    }
  return csv;
}

}  // namespace

TEST_CASE("calibrate: a fit recovers the constants measurements were made with", "[calibrate]") {
  const plan::Hardware& wh = *plan::find_hardware("wormhole");
  plan::CclFit truth{7.5, 4.2, 22.0, true};
  SECTION("exact data: exact constants") {
    auto csv = calibrate::parse_measurements(synthetic_csv(truth, "all_reduce", "ring", 0, 1));
    REQUIRE(csv.errors.empty());
    auto c = calibrate::fit(csv.rows, wh);
    REQUIRE(c.collectives.size() == 1);
    CHECK(c.collectives[0].fit.alpha_us == Approx(7.5).epsilon(1e-4));
    CHECK(c.collectives[0].fit.per_step_us == Approx(4.2).epsilon(1e-4));
    CHECK(c.collectives[0].fit.gb_per_s == Approx(22.0).epsilon(1e-4));
    CHECK(c.collectives[0].rms_error_pct < 0.01);
  }
  SECTION("3% noise: within a few percent, and each row's error is reported") {
    for (unsigned seed : {1u, 2u, 3u}) {
      auto csv = calibrate::parse_measurements(synthetic_csv(truth, "all_reduce", "ring", 0.03, seed));
      auto c = calibrate::fit(csv.rows, wh);
      REQUIRE(c.collectives.size() == 1);
      CHECK(c.collectives[0].fit.alpha_us == Approx(7.5).epsilon(0.10));
      CHECK(c.collectives[0].fit.per_step_us == Approx(4.2).epsilon(0.10));
      CHECK(c.collectives[0].fit.gb_per_s == Approx(22.0).epsilon(0.05));
      CHECK(c.rows.size() == 15);
      for (auto& r : c.rows) CHECK(std::fabs(r.error_pct()) < 7);
      CHECK(c.collectives[0].rms_error_pct > 0.1);  // the noise shows
    }
  }
  SECTION("a line all-gather and a send, one profile") {
    plan::CclFit line{3.0, 2.0, 9.0, false};
    plan::CclFit send{1.5, 0, 12.0, false};
    std::string csv = synthetic_csv(line, "all_gather", "line", 0.02, 5);
    csv += "send,line,2,65536," + std::to_string(calibrate::model_us(send, "send", 2, 65536)) + "\n";
    csv += "send,line,2,1048576," + std::to_string(calibrate::model_us(send, "send", 2, 1048576)) + "\n";
    auto parsed = calibrate::parse_measurements(csv);
    REQUIRE(parsed.errors.empty());
    auto c = calibrate::fit(parsed.rows, wh);
    REQUIRE(c.collectives.size() == 2);
    for (auto& g : c.collectives) {
      if (g.kind == "all_gather") CHECK(g.fit.gb_per_s == Approx(9.0).epsilon(0.05));
      if (g.kind == "send") {
        CHECK(g.fit.gb_per_s == Approx(12.0).epsilon(1e-3));
        CHECK(g.fit.alpha_us == Approx(1.5).epsilon(1e-3));
      }
    }
    // The profile carries the fits; the planner reads the all-gather's.
    std::string error;
    auto* hw = plan::hardware_from_profile(calibrate::profile(c, wh, "measured"), "test", error);
    REQUIRE(hw);
    CHECK(hw->name == "measured");
    CHECK(plan::ccl_time_us(*hw, plan::Ccl::AllGather, 4, plan::Topology::Line, 4 * 1048576.0) ==
          Approx(calibrate::model_us(c.collectives[0].kind == "all_gather" ? c.collectives[0].fit : c.collectives[1].fit, "all_gather", 4, 1048576)));
  }
}

TEST_CASE("calibrate: compute and DRAM efficiency from roofline rows", "[calibrate]") {
  const plan::Hardware& wh = *plan::find_hardware("wormhole");
  double ec = 0.55, ed = 0.8;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> noise(-0.02, 0.02);
  std::string csv = "kind,flops,bytes,us\n";
  for (double flops : {1e9, 1e10, 1e11, 1e12})
    for (double bytes : {1e6, 1e8, 1e9}) {
      double us = std::max(flops / (wh.flops_per_s * ec), bytes / (wh.dram_bytes_per_s * ed)) * 1e6 * (1 + noise(rng));
      csv += "compute," + std::to_string(flops) + "," + std::to_string(bytes) + "," + std::to_string(us) + "\n";
    }
  auto parsed = calibrate::parse_measurements(csv);
  REQUIRE(parsed.errors.empty());
  auto c = calibrate::fit(parsed.rows, wh);
  REQUIRE(c.compute_efficiency);
  REQUIRE(c.dram_efficiency);
  CHECK(*c.compute_efficiency == Approx(ec).epsilon(0.03));
  CHECK(*c.dram_efficiency == Approx(ed).epsilon(0.03));
}

TEST_CASE("calibrate: bad rows are named with their line", "[calibrate]") {
  auto no_header = calibrate::parse_measurements("all_reduce,ring,8,1024,30\n");
  REQUIRE(no_header.errors.size() == 1);
  CHECK(no_header.errors[0].find("line 1") != std::string::npos);
  auto bad = calibrate::parse_measurements(
      "kind,topology,devices,bytes,us\n"
      "all_reduce,torus,8,1024,30\n"
      "all_reduce,ring,1,1024,30\n"
      "broadcast,ring,8,1024,30\n"
      "all_gather,ring,8,1024,-3\n"
      "all_gather,ring,8,1024,12\n");
  REQUIRE(bad.errors.size() == 4);
  CHECK(bad.errors[0].find("line 2") != std::string::npos);
  CHECK(bad.errors[0].find("topology") != std::string::npos);
  CHECK(bad.errors[1].find("devices") != std::string::npos);
  CHECK(bad.errors[2].find("kind") != std::string::npos);
  CHECK(bad.errors[3].find("us") != std::string::npos);
  CHECK(bad.rows.size() == 1);
}

TEST_CASE("hardware profiles: the bundled ones are the built-in constants", "[calibrate]") {
  for (std::string chip : {"wormhole", "blackhole"}) {
    std::string error;
    auto* profile = plan::load_hardware_profile(std::string(SHARDLENS_SOURCE_DIR) + "/analysis/plan/profiles/" + chip + ".json", error);
    INFO(error);
    REQUIRE(profile);
    const plan::Hardware& builtin = *plan::find_hardware(chip);
    CHECK(profile->name == builtin.name);
    for (auto kind : {plan::Ccl::AllGather, plan::Ccl::ReduceScatter, plan::Ccl::AllReduce, plan::Ccl::AllToAll})
      for (auto t : {plan::Topology::Line, plan::Topology::Ring})
        for (int n : {2, 3, 4, 8, 32})
          for (double bytes : {64.0, 4096.0, 1e6, 3e8})
            CHECK(plan::ccl_time_us(*profile, kind, n, t, bytes) == plan::ccl_time_us(builtin, kind, n, t, bytes));  // bit for bit
    // Whole plans: identical JSON with and without the profile.
    std::string gpt = read(std::string(SHARDLENS_SOURCE_DIR) + "/../shared/fixtures/gpt.py");
    std::string ffn = read(std::string(SHARDLENS_SOURCE_DIR) + "/tests/mlir/models/ffn.py");
    for (const std::string& script : {ffn, gpt}) {
      if (script.empty()) continue;
      plan::PlanOptions options;
      options.meshes = {test::mesh("n300"), test::mesh("t3k"), test::mesh("galaxy")};
      options.hardware = &builtin;
      auto a = test::plan_script(script, options);
      options.hardware = profile;
      auto b = test::plan_script(script, options);
      auto ja = plan::to_json(a.result, a.model, options), jb = plan::to_json(b.result, b.model, options);
      ja.erase("plan_ms");
      jb.erase("plan_ms");
      CHECK(ja == jb);
    }
  }
}

TEST_CASE("hardware profiles: a 10x cheaper all-reduce makes tensor parallelism win where it lost", "[calibrate]") {
  std::string ffn = read(std::string(SHARDLENS_SOURCE_DIR) + "/tests/mlir/models/ffn.py");
  REQUIRE_FALSE(ffn.empty());
  const plan::Hardware& wh = *plan::find_hardware("wormhole");
  auto profile = plan::hardware_profile_json(wh);
  profile["name"] = "wormhole-fast-all-reduce";
  for (auto t : {"line", "ring"}) {
    auto& f = profile["collectives"]["all_reduce"][t];
    f["alpha_us"] = f["alpha_us"].get<double>() / 10;
    f["per_step_us"] = f["per_step_us"].get<double>() / 10;
    f["gb_per_s"] = f["gb_per_s"].get<double>() * 10;
  }
  std::string error;
  auto* fast = plan::hardware_from_profile(profile, "test", error);
  REQUIRE(fast);
  plan::PlanOptions options;
  options.meshes = {test::mesh("t3k")};
  options.alternatives = false;
  const std::string model = "FeedForward(640, 2560)";  // small enough that one all-reduce costs more than it saves
  options.hardware = &wh;
  auto slow_plan = test::plan_script(ffn, options, model);
  CHECK(test::param(slow_plan.result.meshes[0], "up.weight").layout == "replicated");
  CHECK(test::param(slow_plan.result.meshes[0], "down.weight").layout == "replicated");
  CHECK(test::counts(slow_plan.result.meshes[0]).empty());
  options.hardware = fast;
  auto fast_plan = test::plan_script(ffn, options, model);
  CHECK(test::param(fast_plan.result.meshes[0], "up.weight").layout == "column");
  CHECK(test::param(fast_plan.result.meshes[0], "down.weight").layout == "row");
  CHECK(test::counts(fast_plan.result.meshes[0]) == std::map<std::string, int>{{"all_reduce", 1}});
}
