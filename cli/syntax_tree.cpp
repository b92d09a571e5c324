// `shardlens syntax-tree FILE`: tree-sitter's concrete syntax tree (for debugging the front end).
#include <cstdio>
#include <cstdlib>

#include <tree_sitter/api.h>

#include "commands.h"
#include "flags.h"
#include "python/source_document.h"

namespace shardlens::cli {

int run_syntax_tree(const std::vector<std::string>& args) {
  static const char* kUsage = "usage: shardlens syntax-tree FILE\n";
  std::string file;
  FlagReader flags("shardlens syntax-tree", kUsage, args);
  while (flags.next()) flags.file(file);
  if (auto code = flags.finished(file)) return *code;
  auto text = read_input(flags.command(), file);
  if (!text) return 1;
  python::SourceDocument document(std::move(*text), python::ParsePieces{1});  // one tree to print
  char* s = ts_node_string(ts_tree_root_node(document.sole_tree()));
  std::puts(s);
  std::free(s);
  return 0;
}

}  // namespace shardlens::cli
