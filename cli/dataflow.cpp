// `shardlens dataflow FILE [--model EXPR] [--tokens N]`: the ops forward() runs, as the planner
// sees them (for debugging the front end).
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "flags.h"
#include "ir/ir_text.h"
#include "python/extractor.h"

namespace shardlens::cli {

int run_dataflow(const std::vector<std::string>& args) {
  static const char* kUsage = "usage: shardlens dataflow FILE [--model EXPR] [--tokens N]\n";
  std::string file;
  python::ExtractOptions options;
  options.trace_forward = true;
  FlagReader flags("shardlens dataflow", kUsage, args);
  while (flags.next()) {
    if (flags.is("--model")) {
      if (auto v = flags.value()) options.model_expression = *v;
    } else if (flags.is("--tokens")) {
      if (auto n = flags.positive()) options.workload.tokens = *n;
    } else {
      flags.file(file);
    }
  }
  if (auto code = flags.finished(file)) return *code;
  auto text = read_input(flags.command(), file);
  if (!text) return 1;
  python::ModelExtractor extractor(std::move(*text), file);
  auto result = extractor.extract(options);
  if (!result.ok) {
    std::fprintf(stderr, "shardlens dataflow: %s\n", result.error.c_str());
    return 1;
  }
  std::cout << ir::dataflow_to_text(result.model);
  return 0;
}

}  // namespace shardlens::cli
