// shardlens: the command line; each subcommand is a thin shell over the analysis libraries.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "cli_ir.h"
#include "ir/heap.h"

namespace {

const char* kUsage =
    "usage: shardlens <command> [options]\n"
    "\n"
    "commands:\n"
    "  inspect FILE [--model EXPR] [--format text|json]\n"
    "      the modules and parameters FILE builds, statically (no Python is run)\n"
    "  plan FILE [--model EXPR] [--mesh RxC|PRESET ...] [--strategy auto|tensor] [--batch N] [--seq N]\n"
    "       [--phase prefill|decode] [--dtype bf16|fp32|bfp8] [--hardware wormhole|blackhole|PROFILE.json] [--format text|json]\n"
    "       [--emit tt-xla|shard-spec]\n"
    "      how to shard FILE's model over each mesh: layouts, collectives, costs and rejected alternatives;\n"
    "      --emit prints the annotation code (xs.mark_sharding block, or load_shard_spec) for the first mesh\n"
    "  report FILE [--model EXPR] [--mesh RxC|PRESET ...] [plan's workload flags] [-o sharding_analysis.md]\n"
    "      the sharding report (model & target, architecture, strategy, per-component design, CCL budget,\n"
    "      bottlenecks and compiler limits, sources) as Markdown, with an SVG chart of collective bytes beside it\n"
    "  export FILE.py [--model EXPR] [-o OUT.pt] [--python PATH] [--weights meta|random] [--batch N] [--seq N]\n"
    "      build FILE's model with PyTorch (meta device) and save it as TorchScript for the exact graph\n"
    "  graph FILE.pt [--format json|text|dataflow] [--batch N] [--seq N] [--phase prefill|decode]\n"
    "      the exact graph of a TorchScript file (modules, parameters, ops with shapes; via shardlens-graph)\n"
    "  plan FILE.py --graph FILE.pt [plan options]\n"
    "      plan on the exact graph; says where the static analysis was blind\n"
    "  verify FILE.pt --mesh RxC [--plan PLAN.json] [--tolerance X] [--seed N] [--tokens N] [--format text|json]\n"
    "      check a plan numerically: every device runs its share (random weights, LibTorch) with the\n"
    "      plan's collectives; each component is compared with the unsharded forward\n"
    "  check-ir IR_FILE|DIR ... --plan PLAN.json [--mesh RxC] [--format text|json]\n"
    "      compare the collectives and weight shardings of tt-xla's exported MLIR (StableHLO/Shardy, TTIR,\n"
    "      TTNN) with a plan; exit 3 names each mismatch\n"
    "  calibrate MEASUREMENTS.csv -o PROFILE.json [--base wormhole|blackhole|PROFILE.json] [--name NAME]\n"
    "      fit the collectives' alpha-beta constants and compute/DRAM efficiency to measurements; plan with\n"
    "      the profile through --hardware PROFILE.json\n"
    "  serve [--stdio] [--listen 127.0.0.1:PORT] [--log-level error|info|debug]\n"
    "      the language server (LSP over stdio, or over TCP on loopback: the client sends the token it prints)\n"
    "  syntax-tree FILE\n"
    "      tree-sitter's concrete syntax tree of FILE (for debugging the front end)\n"
    "  dataflow FILE [--model EXPR] [--tokens N]\n"
    "      the ops forward() runs, as the planner sees them (for debugging the front end)\n"
    "  help, or COMMAND --help\n";

// The commands by name; each reads its own flags (and answers --help) with FlagReader.
struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>& args);
};

int run_plan_or_graph(const std::vector<std::string>& args) {
  return shardlens::cli::wants_graph(args) ? shardlens::cli::run_plan_graph(args) : shardlens::cli::run_plan(args);
}

const Command kCommands[] = {
    {"inspect", shardlens::cli::run_inspect}, {"syntax-tree", shardlens::cli::run_syntax_tree},
    {"dataflow", shardlens::cli::run_dataflow}, {"plan", run_plan_or_graph},
    {"export", shardlens::cli::run_export},   {"graph", shardlens::cli::run_graph},
    {"verify", shardlens::cli::run_verify},   {"report", shardlens::cli::run_report},
    {"check-ir", shardlens::cli::run_check_ir}, {"calibrate", shardlens::cli::run_calibrate},
    {"serve", shardlens::cli::run_serve},
};

}  // namespace

int main(int argc, char** argv) {
  shardlens::configure_process_heap();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  for (auto& c : kCommands)
    if (command == c.name) return c.run(args);
  if (command == "--version" || command == "version") {
    std::puts("shardlens " SHARDLENS_VERSION);
    std::printf("allocator: %s\n", shardlens::heap_allocator().c_str());
    return 0;
  }
  std::fprintf(stderr, "shardlens: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 2;
}
