// The report library: the compiler-limit knowledge base (parsing, the built-in copy, the matcher),
// the collective budget, column→row pairs, citations and the SVG chart. The CLI end to end, against
// `shardlens plan --format json`, is tests/report/test_report.py.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "report/citations.h"
#include "report/compiler_limits.h"
#include "report/report.h"
#include "report/report_facts.h"
#include "plan_helpers.h"

using namespace shardlens;
using namespace shardlens::test;

namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(SHARDLENS_SOURCE_DIR) + "/" + relative);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

plan::Collective collective(plan::Ccl kind, const std::string& at, int count, double bytes, const std::string& tensor) {
  plan::Collective c;
  c.kind = kind;
  c.at = at;
  c.count = count;
  c.bytes = bytes;
  c.time_us = 10;
  c.tensor = tensor;
  return c;
}

const report::LimitMatch* find(const std::vector<report::LimitMatch>& ms, const std::string& id) {
  for (auto& m : ms)
    if (m.limit->id == id) return &m;
  return nullptr;
}

const char* kMlp = R"(
import torch.nn as nn

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4096, 16384)
        self.fc2 = nn.Linear(16384, 4096)
    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.fc1(x)))

model = MLP()
)";

}  // namespace

TEST_CASE("Compiler limits: the knowledge base file parses and is the one built in", "[report][limits]") {
  std::string error;
  auto limits = report::parse_compiler_limits(read_source("analysis/report/compiler_limits.json"), error);
  CHECK(error.empty());
  REQUIRE(limits.size() >= 7);
  CHECK(report::builtin_compiler_limits().size() == limits.size());
  for (size_t i = 0; i < limits.size(); ++i) {
    CHECK(report::builtin_compiler_limits()[i].id == limits[i].id);
    CHECK(!limits[i].tracking.empty());
    CHECK(!limits[i].workaround.empty());
  }
  // Seeded from SHARDING.md §6: each of its limits has an entry.
  for (const char* id : {"uneven-sharding", "conv-spatial-sharding", "reshape-constraint", "collective-permute", "image-activation-gather", "lm-head-gather"}) {
    bool found = false;
    for (auto& l : limits) found |= l.id == id;
    CHECK(found);
  }
}

TEST_CASE("Compiler limits: malformed entries are refused with a reason", "[report][limits]") {
  std::string error;
  CHECK(report::parse_compiler_limits("not json", error).empty());
  CHECK(!error.empty());
  const char* no_when = R"({"limits": [{"id": "x", "title": "t", "symptom": "s", "workaround": "w",
      "tracking": [{"name": "tt-mlir #1", "url": "https://github.com/tenstorrent/tt-mlir/issues/1"}]}]})";
  CHECK(report::parse_compiler_limits(no_when, error).empty());
  CHECK(error.find("when") != std::string::npos);
  const char* unknown_kind = R"({"limits": [{"id": "x", "title": "t", "symptom": "s", "workaround": "w", "when": [{"weather": "rain"}],
      "tracking": [{"name": "tt-mlir #1", "url": "https://github.com/tenstorrent/tt-mlir/issues/1"}]}]})";
  CHECK(report::parse_compiler_limits(unknown_kind, error).empty());
  CHECK(error.find("condition") != std::string::npos);
  const char* bad_url = R"({"limits": [{"id": "x", "title": "t", "symptom": "s", "workaround": "w", "when": [{"layout": ["vocab"]}],
      "tracking": [{"name": "tt-mlir #1", "url": "ftp://example"}]}]})";
  CHECK(report::parse_compiler_limits(bad_url, error).empty());
  CHECK(error.find("https") != std::string::npos);
}

TEST_CASE("Compiler limits: patterns match plans, and nothing else", "[report][limits]") {
  const auto& kb = report::builtin_compiler_limits();
  ir::ModelIR model;
  plan::PlanResult r;
  r.ok = true;
  auto& mp = r.meshes.emplace_back();
  mp.mesh.cols = 8;
  SECTION("a clean plan matches nothing") {
    mp.collectives.push_back(collective(plan::Ccl::AllReduce, "h.*.mlp.down", 24, 4096, "[1, 1, 2048] (batch, seq, hidden)"));
    CHECK(report::match_compiler_limits(kb, model, r).empty());
  }
  SECTION("a divisibility diagnostic is an uneven-sharding hit") {
    plan::Diagnostic d;
    d.code = "divisibility-kv-heads";
    d.severity = "warning";
    d.message = "8 key/value heads do not divide the 'model' axis (32)";
    r.diagnostics.push_back(d);
    auto ms = report::match_compiler_limits(kb, model, r);
    auto* m = find(ms, "uneven-sharding");
    REQUIRE(m);
    CHECK(m->hit);
    CHECK(m->evidence.at(0).find("divisibility-kv-heads") != std::string::npos);
  }
  SECTION("collectives match on kind and tensor roles") {
    mp.collectives.push_back(collective(plan::Ccl::AllReduce, "stages.*.conv2", 3, 4 << 20, "[1, 512, 64, 64] (batch, channels, spatial, spatial)"));
    mp.collectives.push_back(collective(plan::Ccl::AllGather, "output", 1, 100000, "[1, 1, 50304] (batch, seq, vocab)"));
    auto ms = report::match_compiler_limits(kb, model, r);
    REQUIRE(find(ms, "image-activation-gather"));
    CHECK(find(ms, "image-activation-gather")->hit);
    REQUIRE(find(ms, "lm-head-gather"));
    CHECK(find(ms, "all-to-all-p2p") == nullptr);
    // A reduce-scatter of the same image tensor is not the pattern.
    mp.collectives.clear();
    mp.collectives.push_back(collective(plan::Ccl::ReduceScatter, "stages.*.conv2", 3, 4 << 20, "[1, 512, 64, 64] (batch, channels, spatial, spatial)"));
    CHECK(find(report::match_compiler_limits(kb, model, r), "image-activation-gather") == nullptr);
  }
  SECTION("a rejected all-to-all alternative shapes the plan but is not a hit") {
    plan::Alternative a;
    a.name = "expert parallel (all-to-all dispatch and combine)";
    a.feasible = true;
    a.why_rejected = "2.04 ms slower per forward";
    mp.alternatives.push_back(a);
    auto ms = report::match_compiler_limits(kb, model, r);
    auto* m = find(ms, "all-to-all-p2p");
    REQUIRE(m);
    CHECK_FALSE(m->hit);
    // An infeasible one does not count.
    mp.alternatives[0].feasible = false;
    CHECK(find(report::match_compiler_limits(kb, model, r), "all-to-all-p2p") == nullptr);
  }
  SECTION("evidence is capped") {
    for (int i = 0; i < 6; ++i)
      mp.collectives.push_back(collective(plan::Ccl::AllGather, "l." + std::to_string(i), 1, 1000, "[1, 8, 32, 32] (batch, channels, spatial, spatial)"));
    auto ms = report::match_compiler_limits(kb, model, r);
    auto* m = find(ms, "image-activation-gather");
    REQUIRE(m);
    CHECK(m->evidence.size() == 4);
    CHECK(m->evidence.back() == "… and 3 more");
  }
}

TEST_CASE("Report facts: patterns, roles, budget attribution", "[report]") {
  using namespace report::detail;
  CHECK(module_pattern("layers.3.moe.experts.12.w1") == "layers.*.moe.experts.*.w1");
  CHECK(module_pattern("h") == "h");
  CHECK(owner_of("h.0.attn.qkv.weight") == "h.0.attn.qkv");
  CHECK(tensor_roles("[1, 1, 4096] (batch, seq, hidden)") == std::vector<std::string>{"batch", "seq", "hidden"});
  plan::MeshPlan mp;
  plan::ComponentPlan block;
  block.module = "h.*";
  block.class_name = "Block";
  block.count = 24;
  plan::ComponentPlan head;
  head.module = "lm_head";
  head.class_name = "Linear";
  mp.components = {block, head};
  mp.collectives.push_back(collective(plan::Ccl::AllReduce, "h.*.attn.proj", 24, 4096, ""));
  mp.collectives.push_back(collective(plan::Ccl::AllReduce, "h.*.mlp.down", 24, 4096, ""));
  mp.collectives.push_back(collective(plan::Ccl::AllGather, "output", 1, 100000, ""));
  mp.totals.collectives = 49;
  ir::ModelIR model;  // no traced forward: groups come from the plan's components alone
  auto groups = component_groups(model, mp);
  REQUIRE(groups.size() == 2);
  CHECK(component_of(groups, "h.*.attn.proj") == "h.*");
  CHECK(component_of(groups, "h.*") == "h.*");
  CHECK(component_of(groups, "hx.foo") == "hx.foo");
  CHECK(component_of(groups, "output") == std::string(kModelOutput));
  auto b = ccl_budget(groups, mp);
  REQUIRE(b.rows.size() == 2);  // the two all-reduces of one size at h.* merge
  CHECK(b.rows[0].component == "h.*");
  CHECK(b.rows[0].count == 48);
  CHECK(b.rows[1].component == std::string(kModelOutput));
  CHECK(b.collectives == 49);
  CHECK(b.bytes == 48 * 4096 + 100000);
  REQUIRE(b.components.size() == 2);
  CHECK(b.components[0].bytes == 48 * 4096);
}

TEST_CASE("Report: column→row pairs and the whole document for an MLP", "[report]") {
  auto p = plan_script(kMlp);
  const auto& mp = p.result.meshes.at(0);
  auto pairs = report::detail::column_row_pairs(p.model, mp);
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].columns == std::vector<std::string>{"fc1"});
  CHECK(pairs[0].row == "fc2");
  plan::PlanOptions o;
  o.meshes = {mesh("1x8")};
  report::ReportOptions ro;
  ro.script_path = "mlp.py";
  std::string md = report::report_markdown(p.model, p.result, o, ro);
  size_t last = 0;
  for (const char* s : {"## 1. Model & target", "## 2. Architecture", "## 3. Recommended strategy", "## 4. Per-component design", "## 5. CCL budget",
                        "## 6. Bottlenecks & compiler limitations", "## 7. Sources"}) {
    size_t at = md.find(s);
    CHECK(at != std::string::npos);
    CHECK(at >= last);
    last = at;
  }
  CHECK(md.find("fc1: Linear") != std::string::npos);
  CHECK(md.find("[P1 column]") != std::string::npos);
  CHECK(md.find("[P1 row]") != std::string::npos);
  CHECK(md.find("```mermaid") != std::string::npos);
  CHECK(md.find("==>|column→row, stays sharded|") != std::string::npos);
  CHECK(md.find("| **Total** | | | **" + std::to_string(mp.totals.collectives) + "**") != std::string::npos);
  CHECK(md.find("https://arxiv.org/abs/1909.08053") != std::string::npos);
  CHECK(md.find("### Memory fallback") == std::string::npos);
  // The same inputs, the same bytes.
  CHECK(report::report_markdown(p.model, p.result, o, ro) == md);
  std::string svg = report::ccl_chart_svg(p.model, p.result);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(occurrences(svg, "class=\"bar\"") == 1);
  CHECK(svg.find("data-component=\"fc2\"") != std::string::npos);
}

TEST_CASE("Citations: issue and arXiv references become links, recorded once", "[report]") {
  report::detail::Citations c;
  std::string s = c.linkify("pad the heads (tt-xla #4881, #5017); see tt-mlir #8216 and arXiv:1909.08053.");
  CHECK(s.find("[tt-xla #4881](https://github.com/tenstorrent/tt-xla/issues/4881)") != std::string::npos);
  CHECK(s.find("[tt-xla #5017](https://github.com/tenstorrent/tt-xla/issues/5017)") != std::string::npos);
  CHECK(s.find("[tt-mlir #8216](https://github.com/tenstorrent/tt-mlir/issues/8216)") != std::string::npos);
  CHECK(s.find("[arXiv:1909.08053](https://arxiv.org/abs/1909.08053).") != std::string::npos);
  c.cite("megatron");
  CHECK(c.cited().size() == 4);  // the arXiv number is Megatron's: one source
  CHECK(c.cite("no-such-source").empty());
  CHECK(report::detail::md_escape("a|b*c_d") == "a\\|b\\*c\\_d");
  CHECK(report::chart_path_for("out/sharding_analysis.md") == "out/sharding_analysis.ccl_bytes.svg");
  CHECK(report::chart_path_for("report") == "report.ccl_bytes.svg");
}

TEST_CASE("Report: a failed or empty plan still gives the seven sections", "[report]") {
  ir::ModelIR model;
  model.model = "Empty";
  plan::PlanResult failed;
  failed.error = "the model's forward() could not be traced";
  plan::PlanOptions o;
  std::string md = report::report_markdown(model, failed, o, {});
  CHECK(md.find("**The plan failed:**") != std::string::npos);
  for (const char* s : {"## 1. ", "## 2. ", "## 3. ", "## 4. ", "## 5. ", "## 6. ", "## 7. "}) CHECK(md.find(s) != std::string::npos);
  std::string svg = report::ccl_chart_svg(model, failed);
  CHECK(occurrences(svg, "class=\"bar\"") == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
}

