// The command-line subcommands; main.cpp dispatches to them.
#pragma once

#include <string>
#include <vector>

namespace shardlens::cli {

int run_inspect(const std::vector<std::string>& args);
int run_syntax_tree(const std::vector<std::string>& args);
int run_dataflow(const std::vector<std::string>& args);
int run_plan(const std::vector<std::string>& args);
int run_report(const std::vector<std::string>& args);
int run_serve(const std::vector<std::string>& args);
// Reads a whole file; false with a message for missing files, directories and read errors.
bool read_file(const std::string& path, std::string& out, std::string& error);

}  // namespace shardlens::cli
