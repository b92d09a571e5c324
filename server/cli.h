// The command-line subcommands; main.cpp dispatches to them.
#pragma once

#include <string>
#include <vector>

namespace shardlens::cli {

int run_inspect(const std::vector<std::string>& args);
int run_syntax_tree(const std::vector<std::string>& args);

}  // namespace shardlens::cli
