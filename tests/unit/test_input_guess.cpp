// A trace on the inputs the last trace found (one pass instead of two) must give exactly what the
// two passes give: every model script is extracted again on a kept and on a new construction and
// the whole IR compared with a fresh extraction; directed scripts cover a guess that no longer
// holds.
#include <string>

#include <catch2/catch.hpp>

#include "python/extractor.h"
#include "test_helpers.h"

using namespace shardlens;

namespace {

python::ExtractOptions options(bool reuse_inputs, bool reuse_construction = true) {
  python::ExtractOptions o;
  o.trace_forward = true;
  o.reuse_input_shapes = reuse_inputs;
  o.reuse_construction = reuse_construction;
  return o;
}

std::string two_passes(const std::string& text) {
  python::ModelExtractor e(text, "model.py");
  auto r = e.extract(options(false));
  CHECK_FALSE(r.stats.input_shapes_reused);
  return test::dump(r.model);
}

const char* kFeatures =
    "import torch\nimport torch.nn as nn\n\n"
    "D = 16\n\n"
    "class Model(nn.Module):\n"
    "    def __init__(self, d):\n"
    "        super().__init__()\n"
    "        self.proj = nn.Linear(d, 8)\n"
    "    def forward(self, x):\n"
    "        return self.proj(x)\n\n"
    "model = Model(D)\n";

}  // namespace

TEST_CASE("a trace on the last trace's inputs gives what the two passes give, on every model script") {
  size_t scripts = 0, held = 0;
  for (auto& path : test::swept_model_scripts()) {
    INFO(path.string());
    std::string text = test::read_text(path.string());
    const std::string expected = two_passes(text);
    python::ModelExtractor incremental(text, "model.py");
    auto first = incremental.extract(options(true));
    CHECK_FALSE(first.stats.input_shapes_reused);  // nothing to guess from yet
    REQUIRE(test::dump(first.model) == expected);
    auto kept = incremental.extract(options(true));  // on the kept construction, when it was kept
    CHECK(test::dump(kept.model) == expected);
    auto rebuilt = incremental.extract(options(true, false));  // on a new run of the script
    CHECK(test::dump(rebuilt.model) == expected);
    ++scripts;
    held += kept.stats.input_shapes_reused && rebuilt.stats.input_shapes_reused;
    // A guess is offered exactly when the last trace told every input.
    if (!first.model.dataflow.traced) CHECK_FALSE(kept.stats.input_shapes_reused);
  }
  CHECK(scripts >= 100 / test::kScriptStride);
  CHECK(held >= 12 / test::kScriptStride);  // 22 of the release sweep's scripts
}

TEST_CASE("a guess the new trace does not confirm gives way to the two passes") {
  std::string text = kFeatures;
  python::ModelExtractor incremental(text, "model.py");
  auto first = incremental.extract(options(true));
  REQUIRE(first.model.dataflow.traced);
  REQUIRE(first.model.dataflow.input_descriptions.size() == 1);
  CHECK(first.model.dataflow.input_descriptions[0].find("[1, 1, 16]") != std::string::npos);

  // The width the input is read with changes: the guess [1, 1, 16] no longer holds.
  size_t at = text.find("D = 16");
  text.replace(at, 6, "D = 32");
  incremental.apply_edit({{3, 0}, {3, 6}, "D = 32"});
  REQUIRE(incremental.document().text() == text);
  auto wider = incremental.extract(options(true));
  CHECK_FALSE(wider.stats.input_shapes_reused);
  CHECK(test::dump(wider.model) == two_passes(text));
  REQUIRE(wider.model.dataflow.input_descriptions.size() == 1);
  CHECK(wider.model.dataflow.input_descriptions[0].find("[1, 1, 32]") != std::string::npos);

  // An edit that leaves the width alone: the last trace's inputs hold.
  text.replace(text.find("nn.Linear(d, 8)"), 15, "nn.Linear(d, 9)");
  incremental.apply_edit({{8, 20}, {8, 35}, "nn.Linear(d, 9)"});
  REQUIRE(incremental.document().text() == text);
  auto narrower = incremental.extract(options(true));
  CHECK(narrower.stats.input_shapes_reused);
  CHECK(test::dump(narrower.model) == two_passes(text));
}

TEST_CASE("no guess is offered under other options or after a trace that could not tell its inputs") {
  python::ModelExtractor incremental(kFeatures, "model.py");
  REQUIRE(incremental.extract(options(true)).model.dataflow.traced);
  auto other = options(true);
  other.workload.tokens = 7;  // another workload: the inputs are other shapes
  auto r = incremental.extract(other);
  CHECK_FALSE(r.stats.input_shapes_reused);
  CHECK(test::dump(r.model) == [&] {
    python::ModelExtractor e(kFeatures, "model.py");
    auto o = other;
    o.reuse_input_shapes = false;
    return test::dump(e.extract(o).model);
  }());
  CHECK(incremental.extract(other).stats.input_shapes_reused);

  // forward() reads an input only through an op that tells nothing: no input is told, no guess.
  std::string opaque = "import torch\nimport torch.nn as nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                       "    def forward(self, x):\n        return torch.relu(x)\n\nmodel = M()\n";
  python::ModelExtractor blind(opaque, "model.py");
  REQUIRE_FALSE(blind.extract(options(true)).model.dataflow.traced);
  CHECK_FALSE(blind.extract(options(true)).stats.input_shapes_reused);
}
