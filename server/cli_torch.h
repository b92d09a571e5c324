// The exact-graph subcommands (export, graph, plan --graph); main.cpp dispatches to them.
#pragma once

#include <string>
#include <vector>

namespace shardlens::cli {

// `shardlens export FILE.py [--model EXPR] [-o OUT.pt] [--python PATH] [--weights meta|random] ...`
int run_export(const std::vector<std::string>& args);
// `shardlens graph FILE.pt [--format json|text|dataflow] [--batch N] [--seq N] [--phase ...] ...`
int run_graph(const std::vector<std::string>& args);
// `shardlens plan FILE.py --graph FILE.pt [plan options]`
int run_plan_graph(const std::vector<std::string>& args);
// `shardlens verify FILE.pt --mesh RxC [--plan PLAN.json] ...`
int run_verify(const std::vector<std::string>& args);
// True when plan's arguments ask for the exact graph (--graph).
bool wants_graph(const std::vector<std::string>& args);

}  // namespace shardlens::cli
