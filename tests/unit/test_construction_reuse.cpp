// An edit confined to the bodies of methods the model's construction never called (a forward())
// is traced on the last construction instead of running the script again. Whatever it yields
// must equal a fresh extraction of the edited text: every model script is edited in its first and
// last forward(), one edit that keeps the meaning and one that changes it, each reverted, and the
// whole IR compared; directed scripts cover what must run the script again.
#include <string>

#include <catch2/catch.hpp>

#include "python/extractor.h"
#include "test_helpers.h"

using namespace shardlens;

namespace {

python::ExtractOptions traced(bool reuse) {
  python::ExtractOptions o;
  o.trace_forward = true;
  o.reuse_construction = reuse;
  return o;
}

std::string fresh(const std::string& text) {
  python::ModelExtractor e(text, "model.py");
  return test::dump(e.extract(traced(false)).model);
}

// A one-line edit in a forward(): at (row, byte column), `remove` bytes replaced by `text`.
struct LineEdit {
  uint32_t row = 0, column = 0;
  std::string text;
  uint32_t remove = 0;  // bytes replaced after column
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

size_t indent_of(const std::string& line) { return line.find_first_not_of(' '); }

// For each `def forward(`: the first line of its body that is a simple statement at the body's
// indentation (a semicolon may follow its indentation).
std::vector<uint32_t> forward_body_rows(const std::vector<std::string>& lines) {
  std::vector<uint32_t> rows;
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t def = lines[i].find("def forward(");
    if (def == std::string::npos || indent_of(lines[i]) != def) continue;
    size_t k = i;  // the signature's last line
    while (k < lines.size() && (lines[k].empty() || lines[k].back() != ':')) ++k;
    size_t body_indent = std::string::npos;
    for (size_t j = k + 1; j < lines.size(); ++j) {
      size_t ind = indent_of(lines[j]);
      if (ind == std::string::npos) continue;
      if (ind <= def) break;
      if (body_indent == std::string::npos) body_indent = ind;
      if (ind != body_indent) continue;
      std::string rest = lines[j].substr(ind);
      static const char* kCompound[] = {"if ", "for ", "while ", "with ", "try:", "def ", "class ", "elif ", "else:", "except",
                                        "finally:", "@", "#", "\"", "'", ")", "]", "}", "async "};
      bool simple = std::none_of(std::begin(kCompound), std::end(kCompound), [&](const char* kw) { return rest.rfind(kw, 0) == 0; });
      if (simple && lines[j].back() != '\\') {
        rows.push_back(static_cast<uint32_t>(j));
        break;
      }
    }
  }
  return rows;
}

std::string applied(const std::string& text, const LineEdit& e) {
  size_t at = 0;
  for (uint32_t r = 0; r < e.row; ++r) at = text.find('\n', at) + 1;
  std::string out = text;
  out.replace(at + e.column, e.remove, e.text);
  return out;
}

struct Totals {
  size_t edits = 0, reused = 0;
};

// On an extractor that has extracted `text` (fresh: its result is `original`), applies `edit` and
// extracts again, then reverts it and extracts once more: the first must equal a fresh extraction
// of the edited text, the second `original`.
void check_edit(python::ModelExtractor& incremental, const std::string& text, const std::string& original, const LineEdit& edit,
                Totals& totals, const std::string& where) {
  std::string edited = applied(text, edit);
  size_t at = 0;
  for (uint32_t r = 0; r < edit.row; ++r) at = text.find('\n', at) + 1;
  const std::string removed = text.substr(at + edit.column, edit.remove);
  INFO(where << ": " << edit.text);
  incremental.apply_edit({{edit.row, edit.column}, {edit.row, edit.column + edit.remove}, edit.text});
  REQUIRE(incremental.document().text() == edited);
  auto after = incremental.extract(traced(true));
  CHECK(test::dump(after.model) == fresh(edited));
  incremental.apply_edit({{edit.row, edit.column}, {edit.row, edit.column + static_cast<uint32_t>(edit.text.size())}, removed});
  REQUIRE(incremental.document().text() == text);
  auto back = incremental.extract(traced(true));
  CHECK(test::dump(back.model) == original);
  totals.edits += 2;
  totals.reused += after.stats.construction_reused + back.stats.construction_reused;
}

}  // namespace

TEST_CASE("construction reuse: every script edited in its forward() extracts as a fresh start would") {
  Totals totals;
  size_t scripts = 0;
  for (auto& path : test::swept_model_scripts()) {
    // The bench's 126-layer and 61-layer models take seconds per extraction; their blocks' code is
    // what smaller scripts have.
    if (path.filename() == "dense_405b.py" || path.filename() == "moe_61.py") continue;
    std::string text = test::read_text(path.string());
    auto lines = lines_of(text);
    auto rows = forward_body_rows(lines);
    if (rows.empty()) continue;
    ++scripts;
    // The first and the last forward() (the root's, usually): two classes per script keep it quick.
    if (rows.size() > 2) rows = {rows.front(), rows.back()};
    python::ModelExtractor incremental(text, "model.py");
    auto first = incremental.extract(traced(true));  // a fresh extraction: what reverts must give back
    if (!first.ok) continue;
    const std::string original = test::dump(first.model);
    for (uint32_t row : rows) {
      uint32_t column = static_cast<uint32_t>(indent_of(lines[row]));
      std::string where = path.filename().string() + ":" + std::to_string(row + 1);
      // Same meaning, other text (and the ops on the line move right).
      check_edit(incremental, text, original, {row, column, "_probe = 0; "}, totals, where);
      // Other meaning: an attribute that does not exist.
      size_t self_at = lines[row].find("self.");
      if (self_at != std::string::npos)
        check_edit(incremental, text, original, {row, static_cast<uint32_t>(self_at + 5), "missing_"}, totals, where);
    }
  }
  INFO("scripts with a forward(): " << scripts << ", edits: " << totals.edits << ", traced on a kept construction: " << totals.reused);
  CHECK(scripts * test::kScriptStride >= 40);
  // Most forward() edits must take the short way, or the reuse is not doing its job.
  CHECK(totals.reused * 2 > totals.edits);
}

namespace {

// Extracts `text`, replaces `from` by `to` and extracts again; the result must equal a fresh
// extraction. Returns whether the script was not run again.
bool reused_after(const std::string& text, const std::string& from, const std::string& to) {
  python::ModelExtractor incremental(text, "model.py");
  REQUIRE(incremental.extract(traced(true)).ok);
  auto edit = test::replace_first(text, from, to);
  incremental.apply_edit(edit);
  std::string edited = incremental.document().text();
  REQUIRE(edited != text);
  auto after = incremental.extract(traced(true));
  CHECK(test::dump(after.model) == fresh(edited));
  return after.stats.construction_reused;
}

const char* kScript =
    "import torch\nimport torch.nn as nn\n\n"
    "class Block(nn.Module):\n"
    "    def __init__(self, d):\n"
    "        super().__init__()\n"
    "        self.width = self.widen(d)\n"
    "        self.proj = nn.Linear(d, self.width)\n"
    "        self.act = self.activation\n"
    "    def widen(self, d):\n"
    "        return 2 * d\n"
    "    def activation(self, x):\n"
    "        return torch.relu(x)\n"
    "    def forward(self, x):\n"
    "        return self.act(self.proj(x))\n\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.blocks = nn.ModuleList([Block(16) for _ in range(2)])\n"
    "        self.head = nn.Linear(32, 4)\n"
    "    def forward(self, x):\n"
    "        x = self.blocks[0](x)\n"
    "        return self.head(x)\n\n"
    "model = Net()\n";

}  // namespace

TEST_CASE("construction reuse: only bodies the construction never ran are swapped") {
  // forward() and a method only reached through a reference made in __init__: the edited bodies run.
  CHECK(reused_after(kScript, "return self.head(x)", "return self.head(x) * 2"));
  CHECK(reused_after(kScript, "return torch.relu(x)", "return torch.sigmoid(x)"));
  // A method __init__ called decided the module tree: the script runs again (and the width changes).
  CHECK_FALSE(reused_after(kScript, "return 2 * d", "return 4 * d"));
  // __init__ itself, a signature, a new method, the module level: all run the script again.
  CHECK_FALSE(reused_after(kScript, "self.head = nn.Linear(32, 4)", "self.head = nn.Linear(32, 8)"));
  CHECK_FALSE(reused_after(kScript, "    def forward(self, x):", "    def forward(self, x, y=None):"));
  CHECK_FALSE(reused_after(kScript, "model = Net()", "model = Net(); k = 1"));
}

TEST_CASE("construction reuse: a forward() that changes the model's state is traced on a new run next time") {
  std::string text = std::string(kScript);
  std::string counting = text;
  counting.replace(counting.find("        return self.head(x)\n"), std::string("        return self.head(x)\n").size(),
                   "        self.calls = 1\n        return self.head(x)\n");
  // The first trace set an attribute of the root: the construction is not kept, the next edit runs it all.
  CHECK_FALSE(reused_after(counting, "x = self.blocks[0](x)", "x = self.blocks[1](x)"));
  // Without that, the same edit is traced on the kept construction.
  CHECK(reused_after(text, "x = self.blocks[0](x)", "x = self.blocks[1](x)"));
}

TEST_CASE("construction reuse: after an undo, a forward() edit is traced on the construction the undone run replaced") {
  // As the language server does it: an __init__ edit runs the script again, the undo goes back
  // to the first extraction (assume_extracted), and a forward() edit follows there.
  const std::string text = kScript;
  python::ModelExtractor incremental(text, "model.py");
  REQUIRE(incremental.extract(traced(true)).ok);
  const auto original = incremental.last_extraction();
  auto edit = [&](const std::string& from, const std::string& to) {
    incremental.apply_edit(test::replace_first(incremental.document().text(), from, to));
    return incremental.extract(traced(true));
  };
  auto widened = edit("self.head = nn.Linear(32, 4)", "self.head = nn.Linear(32, 8)");
  CHECK_FALSE(widened.stats.construction_reused);
  const auto widened_extraction = incremental.last_extraction();
  incremental.apply_edit(test::replace_first(incremental.document().text(), "nn.Linear(32, 8)", "nn.Linear(32, 4)"));
  incremental.assume_extracted(original);
  // Block.forward edited: traced on the first run's construction, not on the widened one.
  auto doubled = edit("return self.act(self.proj(x))", "return self.act(self.proj(x)) * 2");
  CHECK(doubled.stats.construction_reused);
  CHECK(test::dump(doubled.model) == fresh(incremental.document().text()));
  // Back to the widened text with Block's first forward(), then an edit of Net.forward there. The
  // widened run shares Block's class with the first run, whose Block.forward now doubles: it is
  // not the construction of that text any more, and the script runs again.
  incremental.apply_edit(test::replace_first(incremental.document().text(), "self.act(self.proj(x)) * 2", "self.act(self.proj(x))"));
  incremental.apply_edit(test::replace_first(incremental.document().text(), "nn.Linear(32, 4)", "nn.Linear(32, 8)"));
  incremental.assume_extracted(widened_extraction);
  auto headed = edit("return self.head(x)", "return self.head(x) + 1");
  CHECK_FALSE(headed.stats.construction_reused);
  CHECK(test::dump(headed.model) == fresh(incremental.document().text()));
}

TEST_CASE("construction reuse: a statement lowered again from the same text (after an undo) is the same statement") {
  // A module-level constant edited and the edit undone: the undo lowers `WIDTH = 4` again, a new
  // unit of the same text, which must not stop a later forward() edit from taking the short way.
  std::string text = kScript;
  text.replace(text.find("class Net(nn.Module):"), 0, "WIDTH = 4\n\n");
  text.replace(text.find("nn.Linear(32, 4)"), std::string("nn.Linear(32, 4)").size(), "nn.Linear(32, WIDTH)");
  python::ModelExtractor incremental(text, "model.py");
  REQUIRE(incremental.extract(traced(true)).ok);
  const auto original = incremental.last_extraction();
  incremental.apply_edit(test::replace_first(incremental.document().text(), "WIDTH = 4", "WIDTH = 8"));
  CHECK_FALSE(incremental.extract(traced(true)).stats.construction_reused);
  incremental.apply_edit(test::replace_first(incremental.document().text(), "WIDTH = 8", "WIDTH = 4"));
  incremental.assume_extracted(original);
  incremental.apply_edit(test::replace_first(incremental.document().text(), "return self.head(x)", "return self.head(x) - 1"));
  auto after = incremental.extract(traced(true));
  CHECK(after.stats.construction_reused);
  CHECK(test::dump(after.model) == fresh(incremental.document().text()));
}
