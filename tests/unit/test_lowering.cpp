// Lowering tree-sitter's tree into the owned syntax tree.
#include <catch2/catch.hpp>

#include "script_runner.h"

using namespace shardlens;

TEST_CASE("a standalone expression lowers with its structure") {
  std::vector<python::SyntaxProblem> problems;
  auto e = python::lower_expression_text("GPT(GPTConfig(n_layer=2), *xs, **kw)", problems);
  REQUIRE(e);
  CHECK(problems.empty());
  REQUIRE(e->kind == python::ExprKind::Call);
  REQUIRE(e->items.size() == 4);
  CHECK(e->items[0]->name == "GPT");
  CHECK(e->items[1]->kind == python::ExprKind::Call);
  CHECK(e->items[1]->items[1]->kind == python::ExprKind::Keyword);
  CHECK(e->items[2]->kind == python::ExprKind::Starred);
  CHECK(e->items[3]->kind == python::ExprKind::DoubleStar);
}

TEST_CASE("comparisons, slices and f-strings keep their parts") {
  test::ScriptRun r(R"(
a = 1 < 2 <= 2
b = 3 not in [1, 2]
c = None is not None
d = [1, 2, 3, 4][1:, ][0] if False else [1, 2, 3, 4][::2]
e = f"{'q'!r}{1 + 1:>3}"
)");
  CHECK(r.repr("a") == "True");
  CHECK(r.repr("b") == "True");
  CHECK(r.repr("c") == "False");
  CHECK(r.repr("d") == "[1, 3]");
  CHECK(r.repr("e") == "\"'q'  2\"");
}

TEST_CASE("syntax errors are reported as problems with spans") {
  std::vector<python::SyntaxProblem> problems;
  auto e = python::lower_expression_text("a +", problems);
  CHECK_FALSE(e);
  CHECK_FALSE(problems.empty());
}
