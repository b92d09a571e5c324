// check-ir: hand-written exports of tests/mlir/models/ffn.py at each level (StableHLO/Shardy, TTIR,
// TTNN; tests/mlir/ir) against the plan shardlens makes for it on n300: the matching export passes,
// an extra all-gather and a weight sharded on the wrong dim are each named.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "../unit/plan_helpers.h"
#include "mlir/ir_check.h"
#include "plan/plan_output.h"

using namespace shardlens;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const nlohmann::json& ffn_plan() {
  static const nlohmann::json plan = [] {
    plan::PlanOptions options;
    options.meshes = {test::mesh("n300")};
    auto p = test::plan_script(read(std::string(SHARDLENS_SOURCE_DIR) + "/tests/mlir/models/ffn.py"), options);
    return plan::to_json(p.result, p.model, options);
  }();
  return plan;
}

mlir::CheckReport check(const std::string& name) {
  std::string path = std::string(SHARDLENS_SOURCE_DIR) + "/tests/mlir/ir/" + name;
  std::string text = read(path);
  REQUIRE_FALSE(text.empty());
  std::vector<mlir::Module> modules;
  modules.push_back(mlir::parse_mlir(text, name));
  return mlir::check_ir(modules, ffn_plan());
}

}  // namespace

TEST_CASE("check-ir: the plan of the test model is column -> row with one all-reduce", "[check-ir]") {
  auto& mesh = ffn_plan()["meshes"][0];
  REQUIRE(mesh["collectives"].size() == 1);
  CHECK(mesh["collectives"][0]["kind"] == "all_reduce");
  CHECK(mesh["collectives"][0]["count"] == 1);
  for (auto& p : mesh["parameters"]) {
    if (p["name"] == "up.weight") CHECK(p["spec"] == nlohmann::json::array({"model", nullptr}));
    if (p["name"] == "down.weight") CHECK(p["spec"] == nlohmann::json::array({nullptr, "model"}));
    CHECK(p.contains("shape"));
  }
}

TEST_CASE("check-ir: matching exports pass at every level", "[check-ir]") {
  for (std::string level : {"shlo", "ttir", "ttnn"}) {
    INFO(level);
    auto r = check("ffn_n300." + level + ".mlir");
    INFO(mlir::to_text(r));
    CHECK(r.error.empty());
    CHECK(r.matches());
    REQUIRE(r.files.size() == 1);
    auto& f = r.files[0];
    CHECK(mlir::level_name(f.level) == std::string(level == "shlo" ? "stablehlo" : level));
    REQUIRE(f.collectives.size() == 1);
    CHECK(f.collectives[0].kind == "all_reduce");
    CHECK(f.collectives[0].matched == 0);
    CHECK(f.collectives[0].elements == 4096);
    CHECK(f.collectives[0].devices == 2);
    CHECK(f.collectives[0].axis == "model");
    // Both weights found by name, with their shardings read.
    int known = 0;
    for (auto& w : f.weights) known += w.sharding_known && w.parameter >= 0;
    CHECK(known == 2);
    CHECK(f.errors.empty());
  }
  // The TTNN export's all-reduce is a reduce-scatter + all-gather pair.
  CHECK(check("ffn_n300.ttnn.mlir").files[0].collectives[0].op == "ttnn.reduce_scatter+ttnn.all_gather");
}

TEST_CASE("check-ir: an extra all-gather is named at each level", "[check-ir]") {
  for (std::string level : {"shlo", "ttir", "ttnn"}) {
    INFO(level);
    auto r = check("ffn_n300_extra_all_gather." + level + ".mlir");
    INFO(mlir::to_text(r));
    REQUIRE(r.files.size() == 1);
    auto& ms = r.files[0].mismatches;
    REQUIRE(ms.size() == 1);
    CHECK(ms[0].kind == "extra");
    CHECK(ms[0].message.find("all_gather") != std::string::npos);
    CHECK(ms[0].ir_line > 0);
    CHECK_FALSE(r.matches());
    auto j = mlir::to_json(r);
    CHECK(j["verdict"] == "mismatch");
    CHECK(j["mismatches"][0]["kind"] == "extra");
  }
}

TEST_CASE("check-ir: a weight sharded on the wrong dim is named at each level", "[check-ir]") {
  for (std::string level : {"shlo", "ttir", "ttnn"}) {
    INFO(level);
    auto r = check("ffn_n300_wrong_dim." + level + ".mlir");
    INFO(mlir::to_text(r));
    REQUIRE(r.files.size() == 1);
    auto& ms = r.files[0].mismatches;
    REQUIRE(ms.size() == 1);
    CHECK(ms[0].kind == "weight_sharding");
    CHECK(ms[0].at == "up.weight");
    CHECK(ms[0].message.find("[None, model]") != std::string::npos);
    CHECK(ms[0].message.find("[model, None]") != std::string::npos);
    CHECK(ms[0].source_line == 9);  // where the script creates self.up
  }
}

TEST_CASE("check-ir: missing, other kind and other size; weights matched by shape", "[check-ir]") {
  std::string base = read(std::string(SHARDLENS_SOURCE_DIR) + "/tests/mlir/ir/ffn_n300.ttir.mlir");
  auto run = [](const std::string& text) {
    std::vector<mlir::Module> modules;
    modules.push_back(mlir::parse_mlir(text, "edited.mlir"));
    return mlir::check_ir(modules, ffn_plan());
  };
  auto replace = [&](std::string s, const std::string& from, const std::string& to) {
    auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  const std::string all_reduce =
      "%7 = \"ttir.all_reduce\"(%6) <{cluster_axis = 1 : ui32, reduce_type = #ttcore.reduce_type<sum>}> : (tensor<1x4096xbf16>) -> tensor<1x4096xbf16>";
  SECTION("missing") {
    auto r = run(replace(base, all_reduce, "%7 = \"ttir.abs\"(%6) : (tensor<1x4096xbf16>) -> tensor<1x4096xbf16>"));
    REQUIRE(r.files[0].mismatches.size() == 1);
    CHECK(r.files[0].mismatches[0].kind == "missing");
    CHECK(r.files[0].mismatches[0].at == "down");
    CHECK(r.files[0].mismatches[0].source_line == 13);
  }
  SECTION("other kind, at the plan's place through loc()") {
    auto r = run(replace(base, all_reduce,
                         "%7 = \"ttir.reduce_scatter\"(%6) <{cluster_axis = 1 : ui32, reduce_type = #ttcore.reduce_type<sum>, scatter_dim = 1 : si32}> : "
                         "(tensor<1x4096xbf16>) -> tensor<1x2048xbf16>"));
    REQUIRE(r.files[0].mismatches.size() == 1);
    CHECK(r.files[0].mismatches[0].kind == "other_kind");
    CHECK(r.files[0].mismatches[0].at == "down");
  }
  SECTION("other size") {
    auto r = run(replace(base, all_reduce,
                         "%7 = \"ttir.all_reduce\"(%6) <{cluster_axis = 1 : ui32, reduce_type = #ttcore.reduce_type<sum>}> : (tensor<1x8192xbf16>) -> tensor<1x8192xbf16>"));
    REQUIRE(r.files[0].mismatches.size() == 1);
    CHECK(r.files[0].mismatches[0].kind == "other_size");
  }
  SECTION("weights without names are matched by shape") {
    std::string unnamed = replace(replace(base, "ttir.name = \"l__self___up_weight\"", "ttir.name = \"p0\""), "ttir.name = \"l__self___down_weight\"",
                                  "ttir.name = \"p1\"");
    auto ok = run(unnamed);
    CHECK(ok.matches());
    auto swapped = run(replace(unnamed, "shard_dims = array<i64: -1, 1>, shard_direction = #ttcore.shard_direction<full_to_shard>, shard_shape = array<i64: 1, 2>",
                               "shard_dims = array<i64: -1, 0>, shard_direction = #ttcore.shard_direction<full_to_shard>, shard_shape = array<i64: 2, 1>"));
    REQUIRE(swapped.files[0].mismatches.size() == 1);
    CHECK(swapped.files[0].mismatches[0].kind == "weight_sharding");
    CHECK(swapped.files[0].mismatches[0].at == "down.weight");
  }
  SECTION("a plan without meshes is an error, not a match") {
    std::vector<mlir::Module> modules;
    modules.push_back(mlir::parse_mlir(base, "x.mlir"));
    auto r = mlir::check_ir(modules, nlohmann::json::object());
    CHECK_FALSE(r.error.empty());
    CHECK_FALSE(r.matches());
  }
}
