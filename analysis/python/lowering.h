// Lowers tree-sitter's concrete syntax tree into the owned syntax tree of syntax.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <tree_sitter/api.h>

#include "python/syntax.h"

namespace shardlens::python {

struct SyntaxProblem {
  RelSpan span;  // relative to the unit being lowered
  std::string message;
};

// Lowers one top-level statement. Parts that do not parse (tree-sitter ERROR / MISSING nodes) are
// skipped and reported in `problems`; everything around them is still lowered.
StmtPtr lower_top_level(TSNode node, std::string_view source, uint32_t base_row,
                        std::vector<SyntaxProblem>& problems);

// Lowers a standalone expression (e.g. the --model argument).
ExprPtr lower_expression_text(std::string_view text, std::vector<SyntaxProblem>& problems);

}  // namespace shardlens::python
