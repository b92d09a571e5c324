// Test helper: runs a script's module level through the abstract interpreter and reads globals.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <tree_sitter/api.h>

#include "python/interpreter.h"
#include "python/module_loader.h"
#include "python/lowering.h"
#include "python/source_document.h"
#include "python/syntax.h"

namespace shardlens::test {

struct ScriptRun {
  // library_models: imports are followed, to shardlens' library models only (no folders searched).
  explicit ScriptRun(const std::string& text, bool library_models = false) : document(text, python::ParsePieces{1}) {
    TSNode root = ts_tree_root_node(document.sole_tree());
    for (uint32_t i = 0; i < ts_node_named_child_count(root); ++i) {
      TSNode n = ts_node_named_child(root, i);
      auto unit = std::make_shared<python::Unit>();
      unit->start_row = ts_node_start_point(n).row;
      unit->stmt = python::lower_top_level(n, document.text(), unit->start_row, problems);
      units.push_back(unit);
    }
    if (library_models) interp.set_module_loader(std::make_shared<python::ModuleLoader>(), {}, "", {});
    interp.run_module(units, "__main__");
  }
  // repr() of a global, or "<undefined>".
  std::string repr(const std::string& name) {
    auto it = interp.globals().vars.find(name);
    return it == interp.globals().vars.end() ? "<undefined>" : python::repr(it->second);
  }
  python::Value global(const std::string& name) { return interp.globals().vars.at(name); }

  python::SourceDocument document;
  std::vector<python::SyntaxProblem> problems;
  std::vector<std::shared_ptr<python::Unit>> units;
  python::Interpreter interp;
};

}  // namespace shardlens::test
