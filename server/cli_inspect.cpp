// `shardlens inspect FILE [--model EXPR] [--format text|json]`
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/stat.h>

#include "cli.h"
#include "cli_planning.h"
#include "ir/ir_json.h"
#include "ir/ir_text.h"
#include "python/extractor.h"

#include <tree_sitter/api.h>

namespace shardlens::cli {

bool read_file(const std::string& path, std::string& out, std::string& error) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "'" + path + "' is a directory, not a Python file";
    return false;
  }
  // The server's cap and the imports' (a 20 MB file took 2.6 GB to inspect).
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > python::ModuleLoader::kMaxModuleBytes) {
    error = "'" + path + "' is larger than " + std::to_string(python::ModuleLoader::kMaxModuleBytes >> 20) +
            " MiB; shardlens does not analyse it";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return false;
  }
  out = buf.str();
  return true;
}

int run_inspect(const std::vector<std::string>& args) {
  std::string file, model, format = "text";
  std::vector<std::string> python_path;
  uint64_t memory_budget_mib = python::ExtractOptions().memory_budget_mib;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> const std::string* {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "shardlens inspect: %s needs a value\n", flag);
        return nullptr;
      }
      return &args[++i];
    };
    if (a == "--model") {
      auto v = value("--model");
      if (!v) return 2;
      model = *v;
    } else if (a.rfind("--model=", 0) == 0) {
      model = a.substr(8);
    } else if (a == "--python-path" || a.rfind("--python-path=", 0) == 0) {
      if (a.size() > 13) python_path.push_back(a.substr(14));
      else if (auto v = value("--python-path")) python_path.push_back(*v);
      else return 2;
    } else if (a == "--memory-budget" || a.rfind("--memory-budget=", 0) == 0) {
      bool inline_value = a.size() > 15;  // --memory-budget=MIB
      const std::string* v = inline_value ? nullptr : value("--memory-budget");
      if (!inline_value && !v) return 2;
      auto n = positive_int("shardlens inspect", "--memory-budget", inline_value ? a.substr(16) : *v);
      if (!n) return 2;
      memory_budget_mib = static_cast<uint64_t>(*n);
    } else if (a == "--format") {
      auto v = value("--format");
      if (!v) return 2;
      format = *v;
    } else if (a.rfind("--format=", 0) == 0) {
      format = a.substr(9);
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::fprintf(stderr, "shardlens inspect: unknown option '%s'\n", a.c_str());
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "shardlens inspect: more than one FILE given ('%s', '%s')\n", file.c_str(), a.c_str());
      return 2;
    }
  }
  if (file.empty()) {
    std::fputs("usage: shardlens inspect FILE [--model EXPR] [--python-path DIR ...] [--memory-budget MIB] [--format text|json]\n", stderr);
    return 2;
  }
  if (format != "text" && format != "json") {
    std::fprintf(stderr, "shardlens inspect: --format must be text or json, not '%s'\n", format.c_str());
    return 2;
  }
  std::string text, error;
  if (file == "-") {
    std::ostringstream buf;
    buf << std::cin.rdbuf();
    text = buf.str();
    if (text.size() > python::ModuleLoader::kMaxModuleBytes) {
      std::fprintf(stderr, "shardlens inspect: standard input is larger than %zu MiB; shardlens does not analyse it\n",
                   python::ModuleLoader::kMaxModuleBytes >> 20);
      return 1;
    }
  } else if (!read_file(file, text, error)) {
    std::fprintf(stderr, "shardlens inspect: %s\n", error.c_str());
    return 1;
  }
  if (text.find('\0') != std::string::npos) {
    std::fprintf(stderr, "shardlens inspect: '%s' is not a text file (it contains NUL bytes)\n", file.c_str());
    return 1;
  }
  python::ModelExtractor extractor(std::move(text), file);
  python::ExtractOptions options;
  options.model_expression = model;
  options.python_path = python::search_path_entries(python_path);
  options.memory_budget_mib = memory_budget_mib;
  auto result = extractor.extract(options);
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

int run_dataflow(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs("usage: shardlens dataflow FILE [--model EXPR] [--tokens N]\n", stderr);
    return 2;
  }
  std::string text, error;
  if (!read_file(args[0], text, error)) {
    std::fprintf(stderr, "shardlens dataflow: %s\n", error.c_str());
    return 1;
  }
  python::ModelExtractor extractor(std::move(text), args[0]);
  python::ExtractOptions options;
  options.trace_forward = true;
  for (size_t i = 1; i + 1 < args.size(); i += 2) {
    if (args[i] == "--model") options.model_expression = args[i + 1];
    if (args[i] == "--tokens") options.workload.tokens = std::stoll(args[i + 1]);
  }
  auto result = extractor.extract(options);
  if (!result.ok) {
    std::fprintf(stderr, "shardlens dataflow: %s\n", result.error.c_str());
    return 1;
  }
  std::cout << ir::dataflow_to_text(result.model);
  return 0;
}

int run_syntax_tree(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::fputs("usage: shardlens syntax-tree FILE\n", stderr);
    return 2;
  }
  std::string text, error;
  if (!read_file(args[0], text, error)) {
    std::fprintf(stderr, "shardlens syntax-tree: %s\n", error.c_str());
    return 1;
  }
  python::SourceDocument document(std::move(text), python::ParsePieces{1});  // one tree to print
  char* s = ts_node_string(ts_tree_root_node(document.sole_tree()));
  std::puts(s);
  std::free(s);
  return 0;
}

}  // namespace shardlens::cli
