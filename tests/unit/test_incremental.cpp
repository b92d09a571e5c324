// Incremental extraction: an edit re-parses incrementally and re-lowers only the top-level
// statements whose text changed; the result equals a fresh extraction of the edited text.
#include <catch2/catch.hpp>

#include <random>

#include "ir/ir_json.h"
#include "python/extractor.h"
#include "test_helpers.h"

using namespace shardlens;
using python::ModelExtractor;
using python::TextEdit;
using test::find;
using test::replace_first;

namespace {
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

TEST_CASE("an edit that changes only comments keeps every statement; reuse_unchanged skips the work") {
  std::string text = test::fixture("gpt.py") +
                     "\n\nclass Tagged(nn.Module):\n    def __init__(self):\n        super().__init__()  # tags below\n"
                     "        self.layers = nn.ModuleDict({\"a#b\": nn.Linear(2, 3), '''c#d''': nn.Linear(3, 4)})\n";
  ModelExtractor extractor(text, "gpt.py");
  python::ExtractOptions options;
  options.model_expression = "Tagged()";
  options.reuse_unchanged = true;
  auto first = extractor.extract(options);
  REQUIRE(first.ok);
  REQUIRE_FALSE(first.unchanged);
  REQUIRE(first.model.parameters.size() == 4);
  CHECK(first.model.parameters[0].name == "layers.a#b.weight");

  auto edit_and_extract = [&](const std::string& from, const std::string& to) {
    extractor.apply_edit(replace_first(extractor.document().text(), from, to));
    return extractor.extract(options);
  };
  // A comment inside a class, and one on a line of code: the same statements, nothing to redo.
  auto comment = edit_and_extract("# tags below", "# the tags below");
  CHECK(comment.stats.units_lowered == 0);
  CHECK(comment.unchanged);
  CHECK(comment.ok);
  CHECK(comment.model.parameters.empty());  // the caller keeps what it has
  CHECK(extractor.extract(options).unchanged);  // no edit at all
  // Typing a comment after code: the blanks before it, then the comment.
  CHECK(edit_and_extract("nn.Linear(3, 4)})", "nn.Linear(3, 4)}) ").unchanged);
  auto trailing = edit_and_extract("nn.Linear(3, 4)}) ", "nn.Linear(3, 4)})  # two");
  CHECK(trailing.unchanged);
  CHECK(trailing.stats.units_lowered == 0);
  {
    // Blanks after a line continuation are a syntax error, not trailing blanks.
    ModelExtractor continued("import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                             "        self.w = nn.Linear(2, \\\n                           3)\n",
                             "m.py");
    python::ExtractOptions m_options;
    m_options.model_expression = "M()";
    m_options.reuse_unchanged = true;
    REQUIRE(continued.extract(m_options).model.parameters.size() == 2);
    continued.apply_edit(replace_first(continued.document().text(), "nn.Linear(2, \\", "nn.Linear(2, \\  "));
    CHECK_FALSE(continued.extract(m_options).unchanged);
  }

  // '#' inside strings is code, not a comment: these edits change parameter names.
  auto in_string = edit_and_extract("\"a#b\"", "\"a#x\"");
  CHECK_FALSE(in_string.unchanged);
  CHECK(in_string.stats.units_lowered == 1);
  CHECK(in_string.model.parameters[0].name == "layers.a#x.weight");
  auto in_triple = edit_and_extract("'''c#d'''", "'''c#e'''");
  CHECK_FALSE(in_triple.unchanged);
  CHECK(in_triple.model.parameters[2].name == "layers.c#e.weight");
  // Un-commenting code, and a new line inside a comment (its rest becomes code), are changes.
  auto uncommented = edit_and_extract("super().__init__()  # the tags below", "super().__init__()  # the tags\n        self.w = nn.Linear(5, 6)  #");
  CHECK_FALSE(uncommented.unchanged);
  CHECK(uncommented.model.parameters.size() == 6);
  // Lines inserted above move the statements: the spans change, so the model is rebuilt.
  auto moved = edit_and_extract("class Tagged", "# one more line\nclass Tagged");
  CHECK_FALSE(moved.unchanged);
  CHECK(moved.stats.units_lowered == 0);
  // Other options are another extraction.
  options.model_expression = "Tagged( )";
  CHECK_FALSE(extractor.extract(options).unchanged);
  // Without reuse_unchanged every call yields the model.
  options.reuse_unchanged = false;
  auto plain = extractor.extract(options);
  CHECK_FALSE(plain.unchanged);
  CHECK(plain.model.parameters.size() == 6);
  ModelExtractor fresh(extractor.document().text(), "gpt.py");
  CHECK(ir::to_json(fresh.extract(options).model) == ir::to_json(plain.model));
}

TEST_CASE("after an undo back to an earlier extraction, a comment edit in a class edited meanwhile is unchanged") {
  // The language server's typing: a code edit in Block, its undo (the server goes back to the
  // first extraction without extracting: assume_extracted), then a comment typed into Block. The
  // parse cache holds Block's edited unit, so the comment's Block is lowered afresh: a unit of the
  // same code as the first extraction's, under other text.
  std::string text = test::fixture("gpt.py");
  ModelExtractor extractor(text, "gpt.py");
  python::ExtractOptions options;
  options.model_expression = "GPT(GPTConfig(n_layer=2))";
  options.reuse_unchanged = true;
  auto first = extractor.extract(options);
  REQUIRE(first.ok);
  const auto first_extraction = extractor.last_extraction();

  const std::string code = "        x = x + self.mlp(self.ln_2(x))";
  const std::string edited = "        x = x + self.mlp(self.ln_1(x))";
  extractor.apply_edit(replace_first(extractor.document().text(), code, edited));
  auto changed = extractor.extract(options);
  REQUIRE_FALSE(changed.unchanged);
  extractor.apply_edit(replace_first(extractor.document().text(), edited, code));
  extractor.assume_extracted(first_extraction);

  extractor.apply_edit(replace_first(extractor.document().text(), code, "        x = x + self.mlp(self.ln_2(x))  # the MLP"));
  auto comment = extractor.extract(options);
  CHECK(comment.stats.classes_lowered == std::vector<std::string>{"Block"});
  CHECK(comment.unchanged);
  ModelExtractor fresh(extractor.document().text(), "gpt.py");
  python::ExtractOptions plain = options;
  plain.reuse_unchanged = false;
  CHECK(ir::to_json(fresh.extract(plain).model) == ir::to_json(first.model));

  // A code edit in that class after all this is still a change.
  extractor.apply_edit(replace_first(extractor.document().text(), "self.ln_2(x))  # the MLP", "self.ln_1(x))  # the MLP"));
  CHECK_FALSE(extractor.extract(options).unchanged);
}

TEST_CASE("unchanged is never claimed for a text whose fresh extraction differs (random edits)") {
  std::string text = test::fixture("gpt.py");
  ModelExtractor extractor(text, "gpt.py");
  python::ExtractOptions options;
  options.reuse_unchanged = true;
  options.model_expression = "GPT(GPTConfig(n_layer=2))";
  auto first = extractor.extract(options);
  REQUIRE(first.ok);
  auto last_full = ir::to_json(first.model);
  std::mt19937 rng(11);
  const std::string chars = "a #'\"\n(0\\ ";  // blanks and line continuations too
  int unchanged = 0, changed = 0;
  for (int k = 0; k < 60; ++k) {
    const std::string& current = extractor.document().text();
    // Half the edits land in comments (just after a '#'), half anywhere.
    size_t at = std::uniform_int_distribution<size_t>(0, current.size() - 1)(rng);
    if (k % 2 == 0) {
      size_t hash = current.find('#', at);
      if (hash == std::string::npos) hash = current.find('#');
      at = hash + 1;
    }
    auto row = static_cast<uint32_t>(std::count(current.begin(), current.begin() + static_cast<long>(at), '\n'));
    auto column = static_cast<uint32_t>(at - (current.rfind('\n', at - 1) == std::string::npos ? 0 : current.rfind('\n', at - 1) + 1));
    std::string ch(1, chars[std::uniform_int_distribution<size_t>(0, chars.size() - 1)(rng)]);
    extractor.apply_edit({{row, column}, {row, column}, ch});
    auto r = extractor.extract(options);
    ModelExtractor fresh(extractor.document().text(), "gpt.py");
    python::ExtractOptions plain = options;
    plain.reuse_unchanged = false;
    auto reference = ir::to_json(fresh.extract(plain).model);
    if (r.unchanged) {
      ++unchanged;
      CHECK(reference == last_full);
    } else {
      ++changed;
      last_full = ir::to_json(r.model);
      CHECK(reference == last_full);
    }
  }
  CHECK(unchanged > 5);  // the comment edits
  CHECK(changed > 5);
}

TEST_CASE("a sequence of typing edits, including broken states, matches fresh extractions") {
  std::string text = test::fixture("gpt.py");
  // Also with the text cut into parse pieces: the typing breaks one piece, which then joins the rest.
  auto pieces = GENERATE(python::ParsePieces{1, 0}, python::ParsePieces{4, 0});
  ModelExtractor extractor(text, "gpt.py", pieces);
  CHECK(extractor.document().piece_count() == pieces.max_pieces);
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
    ModelExtractor fresh(extractor.document().text(), "gpt.py", python::ParsePieces{1, 0});
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

TEST_CASE("the line index stays exact through random edits") {
  std::mt19937 rng(7);
  std::string text = test::fixture("moe.py");
  python::SourceDocument doc(text);
  const char* pieces[] = {"", "\n", "x", "\n\n", "abc\ndef", "    "};
  for (int i = 0; i < 300; ++i) {
    const std::string& t = doc.text();
    uint32_t lines = doc.line_count();
    python::TextPosition a{static_cast<uint32_t>(rng() % lines), static_cast<uint32_t>(rng() % 12)};
    python::TextPosition b{a.row + static_cast<uint32_t>(rng() % 3), static_cast<uint32_t>(rng() % 12)};
    std::string piece = pieces[rng() % 6];
    // The expected text, computed independently from offsets found by scanning.
    auto naive_offset = [&](python::TextPosition p) {
      size_t off = 0;
      for (uint32_t r = 0; r < p.row; ++r) {
        size_t nl = t.find('\n', off);
        if (nl == std::string::npos) return t.size();
        off = nl + 1;
      }
      size_t end = t.find('\n', off);
      if (end == std::string::npos) end = t.size();
      return std::min(off + p.column, end);
    };
    size_t from = naive_offset(a), to = std::max(from, naive_offset(b));
    std::string expected = t.substr(0, from) + piece + t.substr(to);
    doc.apply_edit({a, b, piece});
    REQUIRE(doc.text() == expected);
    // Every line start is where the text says it is.
    uint32_t row = 0;
    for (size_t k = 0; k <= expected.size(); ++k)
      if (k == 0 || expected[k - 1] == '\n') REQUIRE(doc.offset_of({row++, 0}) == k);
    REQUIRE(doc.line_count() == row);
  }
}

TEST_CASE("unchanged definitions are reused across extractions, without leaking state") {
  std::string text =
      "import torch.nn as nn\n"
      "class Counter(nn.Module):\n"
      "    count = 0\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        Counter.count += 1\n"
      "        self.fc = nn.Linear(Counter.count, 2)\n"
      "class Other(nn.Module):\n"
      "    def __init__(self, width=3):\n"
      "        super().__init__()\n"
      "        self.fc = nn.Linear(width, width)\n"
      "model = nn.Sequential(Counter(), Counter(), Other())\n";
  ModelExtractor extractor(text, "t.py");
  auto first = extractor.extract();
  REQUIRE(first.ok);
  CHECK(first.stats.definitions_reused == 0);
  // An edit elsewhere: both classes come from the cache, and the class attribute mutated by the
  // first run's constructors starts again from its defined value.
  extractor.apply_edit({{11, 0}, {11, 0}, "x = 1\n"});
  auto second = extractor.extract();
  REQUIRE(second.ok);
  CHECK(second.stats.definitions_reused == 2);
  CHECK(ir::to_json(second.model)["parameters"] == ir::to_json(first.model)["parameters"]);
  CHECK(second.model.parameters[0].shape == std::vector<int64_t>{2, 1});
  CHECK(second.model.parameters[2].shape == std::vector<int64_t>{2, 2});
  // Editing a class rebuilds it; the others are still reused.
  extractor.apply_edit({{8, 0}, {8, 100}, "    def __init__(self, width=5):"});
  auto third = extractor.extract();
  CHECK(third.stats.definitions_reused == 1);
  CHECK(third.model.parameters[4].shape == std::vector<int64_t>{5, 5});
}
