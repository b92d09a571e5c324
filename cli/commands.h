// The command-line subcommands, one file each; main.cpp dispatches to them by name.
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
// The exact graph (exact_graph.cpp, export.cpp, graph.cpp, verify.cpp).
int run_export(const std::vector<std::string>& args);
int run_graph(const std::vector<std::string>& args);
int run_plan_graph(const std::vector<std::string>& args);  // `plan FILE.py --graph FILE.pt`
int run_verify(const std::vector<std::string>& args);
// True when plan's arguments ask for the exact graph (--graph).
bool wants_graph(const std::vector<std::string>& args);

}  // namespace shardlens::cli
