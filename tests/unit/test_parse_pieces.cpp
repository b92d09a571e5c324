// Parsing a large text in pieces on several threads: the pieces must yield exactly the
// top-level statements one parse of the whole text yields, before and after any edit, and an
// extraction must not depend on how the text was cut.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>

#include "ir/ir_json.h"
#include "python/extractor.h"
#include "test_helpers.h"

using namespace shardlens;
using python::ParsePieces;
using python::SourceDocument;

namespace {

// Every top-level statement: its syntax tree and where it is.
std::vector<std::string> statements(const SourceDocument& doc) {
  std::vector<std::string> out;
  for (TSNode root : doc.roots())
    for (uint32_t i = 0; i < ts_node_child_count(root); ++i) {
      TSNode n = ts_node_child(root, i);
      char* tree = ts_node_string(n);
      TSPoint a = ts_node_start_point(n), b = ts_node_end_point(n);
      out.push_back(std::to_string(ts_node_start_byte(n)) + "-" + std::to_string(ts_node_end_byte(n)) + " " +
                    std::to_string(a.row) + ":" + std::to_string(a.column) + "-" + std::to_string(b.row) + ":" +
                    std::to_string(b.column) + " " + tree);
      std::free(tree);
    }
  return out;
}

}  // namespace

TEST_CASE("cut points fall before top-level definitions, never inside strings, brackets or decorations") {
  std::string text =
      "import torch\n\n"
      "DOC = \"\"\"\nclass NotACut:\n    pass\n\"\"\"\n\n"
      "x = dict(\n"
      "def_=1,\n"
      ")\n\n"
      "@decorator(\n"
      "    1)\n"
      "\n"
      "@other\n"
      "class Decorated:\n    pass\n\n"
      "y = 1 + \\\n"
      "2\n"
      "class Plain:\n    pass\n\n"
      "def f():\n    return 1\n";
  auto all = python::piece_starts(text, 1000);
  std::vector<std::string> lines;
  for (uint32_t at : all) lines.push_back(text.substr(at, text.find('\n', at) - at));
  CHECK(lines == std::vector<std::string>{"@decorator(", "class Plain:", "def f():"});
  CHECK(python::piece_starts(text, 1).empty());
  CHECK(python::piece_starts(text, 2).size() == 1);
}

TEST_CASE("every model script parses in pieces exactly as in one piece") {
  size_t cut_scripts = 0;
  for (auto& path : test::all_model_scripts()) {
    std::string text = test::read_text(path.string());
    SourceDocument whole(text, ParsePieces{1, 0});
    for (unsigned pieces : {2u, 3u, 5u, 8u}) {
      INFO(path.filename().string() << " in up to " << pieces << " pieces");
      SourceDocument cut(text, ParsePieces{pieces, 0});
      CHECK(cut.has_error() == whole.has_error());
      if (cut.piece_count() > 1) {
        ++cut_scripts;
        CHECK_FALSE(whole.has_error());
      }
      CHECK(statements(cut) == statements(whole));
    }
  }
  CHECK(cut_scripts > 300);  // the comparison above really compared pieces
}

TEST_CASE("a large text is cut by default, a small one is not") {
  std::string large = test::read_text(std::string(SHARDLENS_SOURCE_DIR) + "/bench/models/lsp_bench_model.py");
  SourceDocument doc(large, ParsePieces{2});
  CHECK(doc.piece_count() == 2);
  SourceDocument small(test::fixture("gpt.py"), ParsePieces{2});
  CHECK(small.piece_count() == 1);
}

TEST_CASE("random edits keep the pieces equal to one parse of the text") {
  std::mt19937 rng(11);
  std::string original = test::read_text(std::string(SHARDLENS_SOURCE_DIR) + "/bench/models/lsp_bench_model.py");
  const ParsePieces four{4, 0};
  auto doc = std::make_unique<SourceDocument>(original, four);
  REQUIRE(doc->piece_count() == 4);
  // Insertions that can open or close a string, bracket, continuation or block, or cut a line.
  const char* insertions[] = {"", "\n", "x", "(", ")", "\\", "\"\"\"", "'", "    ", "# note\n", "@d\n",
                              "class Extra:\n    pass\n", "def g():\n", "\n\n", "else:\n"};
  int edits_in_pieces = 0, merges = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string& t = doc->text();
    // Half the edits land on the lines around a cut, where they matter most.
    uint32_t row;
    std::vector<uint32_t> cut_rows;
    for (TSNode root : doc->roots()) cut_rows.push_back(ts_node_start_point(root).row);
    if (rng() % 2 && doc->piece_count() > 1) {
      uint32_t cut = cut_rows[1 + rng() % (cut_rows.size() - 1)];
      row = cut + static_cast<uint32_t>(rng() % 5) - 2;
    } else {
      row = static_cast<uint32_t>(rng() % doc->line_count());
    }
    python::TextPosition a{row, static_cast<uint32_t>(rng() % 6)};
    python::TextPosition b = rng() % 3 ? a : python::TextPosition{row + static_cast<uint32_t>(rng() % 3), static_cast<uint32_t>(rng() % 6)};
    size_t before = doc->piece_count();
    doc->apply_edit({a, b, insertions[rng() % std::size(insertions)]});
    SourceDocument fresh(doc->text(), ParsePieces{1, 0});
    INFO("edit " << i << " at row " << row);
    if (doc->piece_count() > 1) {
      ++edits_in_pieces;
      REQUIRE_FALSE(fresh.has_error());
    }
    if (!fresh.has_error()) REQUIRE(statements(*doc) == statements(fresh));
    if (before > 1 && doc->piece_count() == 1) ++merges;
    // A merged document stays one piece: start again from a cut one, or from the original.
    if (doc->piece_count() == 1) {
      std::string next = fresh.has_error() || rng() % 4 == 0 ? original : doc->text();
      doc = std::make_unique<SourceDocument>(next, four);
    }
    (void)t;
  }
  CHECK(edits_in_pieces > 60);  // 93 and 107 with this seed
  CHECK(merges > 40);
}

TEST_CASE("an extraction does not depend on how the text was cut") {
  // The parse itself is compared on every script above; extraction on a sample of them (all of
  // them take minutes under the sanitizers).
  std::vector<std::filesystem::path> sample;
  auto all = test::all_model_scripts();
  for (size_t i = 0; i < all.size(); ++i)
    if (i % 6 == 0 || all[i].filename() == "lsp_bench_model.py") sample.push_back(all[i]);
  for (auto& path : sample) {
    std::string text = test::read_text(path.string());
    INFO(path.filename().string());
    python::ModelExtractor whole(text, path.string(), ParsePieces{1, 0});
    python::ModelExtractor cut(text, path.string(), ParsePieces{3, 0});
    auto a = whole.extract();
    auto b = cut.extract();
    CHECK(ir::to_json(a.model) == ir::to_json(b.model));
    CHECK(a.ok == b.ok);
    // Statements lowered by the parse threads are counted as lowered by the first extraction.
    CHECK(b.stats.units_lowered == b.stats.units);
    CHECK(b.stats.classes_lowered.size() == a.stats.classes_lowered.size());
  }
}

TEST_CASE("a line continued into the next piece joins the pieces") {
  std::string text = test::read_text(std::string(SHARDLENS_SOURCE_DIR) + "/bench/models/lsp_bench_model.py");
  SourceDocument doc(text, ParsePieces{2, 0});
  REQUIRE(doc.piece_count() == 2);
  uint32_t cut_row = ts_node_start_point(doc.roots()[1]).row;
  // Just before the newline that ends the previous piece: "y = a \" runs into the cut line.
  doc.apply_edit({{cut_row - 1, 0}, {cut_row - 1, 0}, "y = a \\"});
  SourceDocument fresh(doc.text(), ParsePieces{1, 0});
  REQUIRE(fresh.has_error());
  CHECK(doc.piece_count() == 1);
  CHECK(doc.has_error());
}
