// `shardlens inspect FILE [--model EXPR] [--python-path DIR ...] [--python PATH] [--memory-budget MIB] [--format text|json]`
#include <cstdio>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "flags.h"
#include "planning_flags.h"
#include "ir/ir_json.h"
#include "ir/ir_text.h"
#include "python/extractor.h"
#include "session/script_pipeline.h"

namespace shardlens::cli {
namespace {

const char* kInspectUsage =
    "usage: shardlens inspect FILE [--model EXPR] [--python-path DIR ...] [--python PATH] [--memory-budget MIB] [--format text|json]\n"
    "  the modules and parameters FILE builds, statically (no Python is run); FILE - reads stdin.\n";

}  // namespace

int run_inspect(const std::vector<std::string>& args) {
  std::string file, format = "text";
  ScriptArgs script;
  FlagReader flags("shardlens inspect", kInspectUsage, args);
  while (flags.next()) {
    if (take_script_flag(flags, script) || flags.format(format)) continue;
    flags.file(file);
  }
  if (auto code = flags.finished(file)) return *code;
  std::string text, error;
  if (file == "-") {
    std::ostringstream buf;
    buf << std::cin.rdbuf();
    text = buf.str();
    if (text.find('\0') != std::string::npos) error = "'-' is not a text file (it contains NUL bytes)";
    else if (text.size() > python::ModuleLoader::kMaxModuleBytes) error = "standard input " + session::too_large_to_analyse();
  } else {
    session::read_script(file, text, error);
  }
  if (!error.empty()) {
    std::fprintf(stderr, "shardlens inspect: %s\n", error.c_str());
    return 1;
  }
  python::ModelExtractor extractor(std::move(text), file);
  auto result = extractor.extract(script_extract_options(script, "shardlens inspect"));
  if (format == "json") {
    auto j = ir::to_json(result.model);
    if (!result.ok) j["error"] = result.error;
    std::cout << j.dump(2) << "\n";
  } else if (result.ok) {
    std::cout << ir::to_text(result.model);
  }
  if (!result.ok) {
    std::fprintf(stderr, "shardlens inspect: %s: %s\n", file.c_str(), result.error.c_str());
    for (auto& u : result.model.unresolved)
      std::fprintf(stderr, "  %s: %s: %s\n", ir::span_location(u.span, file).c_str(), u.what.c_str(), u.reason.c_str());
    return 1;
  }
  return 0;
}

}  // namespace shardlens::cli
