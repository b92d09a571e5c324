// Incremental extraction: an edit re-parses incrementally and re-lowers only the top-level
// statements whose text changed; the result equals a fresh extraction of the edited text.
#include <catch2/catch.hpp>

#include "ir/ir_json.h"
#include "python/extractor.h"
#include "test_helpers.h"

using namespace shardlens;
using python::ModelExtractor;
using python::TextEdit;

namespace {
// The position of the first occurrence of `needle` (0-based row and byte column).
python::TextPosition find(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  python::TextPosition p;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++p.row;
      p.column = 0;
    } else {
      ++p.column;
    }
  }
  return p;
}

TextEdit replace_first(const std::string& text, const std::string& from, const std::string& to) {
  auto start = find(text, from);
  auto end = start;
  end.column += static_cast<uint32_t>(from.size());
  return {start, end, to};
}

const ir::Parameter& parameter(const ir::ModelIR& m, const std::string& name) {
  for (auto& p : m.parameters)
    if (p.name == name) return p;
  FAIL("no parameter " << name);
  throw;
}
}  // namespace

TEST_CASE("an edit inside one class re-lowers only that class") {
  std::string text = test::fixture("llama.py");
  ModelExtractor extractor(text, "llama.py");
  auto first = extractor.extract();
  REQUIRE(first.ok);
  CHECK(first.stats.units_lowered == first.stats.units);
  CHECK(parameter(first.model, "layers.0.feed_forward.w1.weight").shape == std::vector<int64_t>{14336, 4096});

  // Change the FeedForward rounding: one class's text changes.
  extractor.apply_edit(replace_first(extractor.document().text(), "hidden_dim = int(2 * hidden_dim / 3)", "hidden_dim = int(hidden_dim / 2)"));
  auto second = extractor.extract();
  REQUIRE(second.ok);
  CHECK(second.stats.units_lowered == 1);
  CHECK(second.stats.classes_lowered == std::vector<std::string>{"FeedForward"});
  CHECK(parameter(second.model, "layers.0.feed_forward.w1.weight").shape == std::vector<int64_t>{11264, 4096});

  // The incremental result is exactly a fresh extraction of the edited text.
  ModelExtractor fresh(extractor.document().text(), "llama.py");
  CHECK(ir::to_json(fresh.extract().model) == ir::to_json(second.model));
}

TEST_CASE("inserting lines above reuses every statement and shifts spans") {
  std::string text = test::fixture("gpt.py");
  ModelExtractor extractor(text, "gpt.py");
  auto before = extractor.extract();
  REQUIRE(before.ok);
  uint32_t line = parameter(before.model, "h.0.attn.qkv.weight").span.line;

  extractor.apply_edit({{0, 0}, {0, 0}, "# a new comment\n# and another\n"});
  auto after = extractor.extract();
  REQUIRE(after.ok);
  CHECK(after.stats.units_lowered == 0);
  CHECK(parameter(after.model, "h.0.attn.qkv.weight").span.line == line + 2);
  ModelExtractor fresh(extractor.document().text(), "gpt.py");
  CHECK(ir::to_json(fresh.extract().model) == ir::to_json(after.model));
}

TEST_CASE("a sequence of typing edits, including broken states, matches fresh extractions") {
  std::string text = test::fixture("gpt.py");
  ModelExtractor extractor(text, "gpt.py");
  extractor.extract();
  // Type a new layer into Block.__init__ character by character, passing through states that
  // do not parse, then delete it again.
  std::string addition = "        self.extra = nn.Linear(cfg.n_embd, 7)\n";
  auto at = find(extractor.document().text(), "        self.mlp = FeedForward(cfg)\n");
  at.row += 1;
  at.column = 0;
  for (size_t i = 0; i < addition.size(); ++i) {
    python::TextPosition p = at;
    p.column += static_cast<uint32_t>(i);
    extractor.apply_edit({p, p, std::string(1, addition[i])});
    auto incremental = extractor.extract();
    ModelExtractor fresh(extractor.document().text(), "gpt.py");
    auto expected = fresh.extract();
    REQUIRE(ir::to_json(incremental.model) == ir::to_json(expected.model));
    CHECK(incremental.stats.units_lowered <= 1);
  }
  auto typed = extractor.extract();
  CHECK(parameter(typed.model, "h.0.extra.weight").shape == std::vector<int64_t>{7, 2048});
  extractor.apply_edit({at, {at.row + 1, 0}, ""});
  auto removed = extractor.extract();
  CHECK(removed.model.parameters.size() == 292);
}

TEST_CASE("edits with positions past the end are clamped, never corrupt the document") {
  ModelExtractor extractor("x = 1\n", "t.py");
  extractor.apply_edit({{0, 100}, {5, 3}, "\ny = 2\n"});
  CHECK(extractor.document().text() == "x = 1\ny = 2\n");
  extractor.apply_edit({{3, 0}, {1, 0}, "z"});  // end before start
  CHECK(extractor.document().text().find('z') != std::string::npos);
}
