// `shardlens verify FILE.pt --mesh RxC [--plan PLAN.json] ...`: checks a plan numerically, every
// device's share run by shardlens-graph (LibTorch) in a confined child process.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "exact_graph.h"
#include "flags.h"
#include "torch/child_process.h"
#include "torch/confinement.h"

namespace shardlens::cli {
namespace {

const char* kVerifyUsage =
    "usage: shardlens verify FILE.pt --mesh RxC|PRESET [--plan PLAN.json] [--script FILE.py] [--tolerance X] [--seed N]\n"
    "                        [--batch N] [--tokens N] [--input NAME=D0,D1,...[:DTYPE] ...] [--format text|json]\n"
    "                        [plan's flags: --model EXPR --strategy --seq --phase --dtype --hardware --pin ...]\n"
    "  Checks a sharding plan numerically with LibTorch: every device of the mesh runs forward() with its\n"
    "  share of random weights (what it does not hold is zero), and the plan's collectives where the plan\n"
    "  puts them; each component's output is compared with the unsharded forward on the same random inputs\n"
    "  (--batch x --tokens, default 1 x 8), starting from exact inputs. PLAN.json is what `shardlens plan\n"
    "  --format json` prints (a plan for the full-size model may be checked on a reduced export of it);\n"
    "  without --plan the planner plans the exact graph of FILE.pt for that mesh (with plan's flags).\n"
    "  Exit status: 0 every checked component agrees; 1 FILE cannot be loaded or run; 2 usage; 3 no\n"
    "  shardlens-graph; 4 a component differs beyond the tolerance (default 1e-4, relative to the\n"
    "  largest value); 5 the plan does not fit the model; 6 the plan contradicts itself (a collective's kind\n"
    "  disagrees with its from/to layouts); 7 not verified: what was checked agrees, but some component or\n"
    "  collective could not be checked.\n";

}  // namespace

int run_verify(const std::vector<std::string>& args) {
  const char* prog = "shardlens verify";
  std::string file, plan_file, script, format = "text";
  std::vector<std::string> passed;  // flags shardlens-graph takes as they are
  PlanningArgs planning;
  torchgraph::GraphClientOptions client;
  int64_t batch = 1;
  FlagReader flags(prog, kVerifyUsage, args);
  while (flags.next()) {
    if (flags.is("--plan")) {
      if (auto v = flags.value()) plan_file = *v;
    } else if (flags.is("--script")) {
      if (auto v = flags.value()) script = *v;
    } else if (flags.format(format)) {
    } else if (flags.is("--batch")) {
      if (auto n = flags.positive()) batch = planning.options.workload.batch = *n;
    } else if (flags.is("--tolerance") || flags.is("--seed") || flags.is("--tokens") || flags.is("--input")) {
      if (auto v = flags.value()) passed.insert(passed.end(), {flags.name(), *v});
    } else if (flags.is("--no-cache")) {
      client.use_cache = false;
    } else if (take_planning_flag(flags, planning)) {
    } else if (flags.option()) {
      flags.unknown();
    } else if (!file.empty()) {
      flags.fail("more than one FILE given");
    } else {
      file = flags.name();
    }
  }
  if (auto code = flags.exit_code()) return *code;
  if (file.empty() || planning.options.meshes.size() != 1) {
    std::fprintf(stderr, "%s: give one FILE.pt and one --mesh\n%s", prog, kVerifyUsage);
    return 2;
  }
  if (!file_exists(file)) {
    std::fprintf(stderr, "%s: no such file: %s\n", prog, file.c_str());
    return 1;
  }
  std::string error;
  std::string exe = torchgraph::find_graph_executable(client.executable, error);
  if (exe.empty()) {
    std::fprintf(stderr, "%s: %s\n", prog, error.c_str());
    return 3;
  }
  const plan::Mesh mesh = planning.options.meshes[0];
  // Without a plan: the planner's own, on the exact graph of FILE (spans from the script it came from).
  std::string temp;
  if (plan_file.empty()) {
    if (script.empty()) {
      torchgraph::GraphRequest req;
      req.file = file;
      req.graph = false;
      auto g = torchgraph::fetch_graph(req, client);
      if (!g.ok) {
        std::fprintf(stderr, "%s: %s\n", prog, g.error.c_str());
        return g.exit_code == 1 ? 1 : 3;
      }
      script = g.json.value("source", "");
      if (script.empty() || !file_exists(script)) {
        std::fprintf(stderr, "%s: %s does not say which script it was exported from (or it moved): give --script FILE.py or --plan PLAN.json\n",
                     prog, file.c_str());
        return 2;
      }
    }
    finish_planning_args(planning);
    std::ostringstream planned;
    int rc = plan_on_graph(prog, script, file, planning, client, "json", planned);
    if (rc != 0) return rc;
    char path[] = "/tmp/shardlens-verify-plan-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
      std::fprintf(stderr, "%s: cannot create a temporary file\n", prog);
      return 1;
    }
    close(fd);
    temp = plan_file = path;
    std::ofstream(temp) << planned.str();
  }
  std::vector<std::string> argv{torchgraph::absolute_path(exe), torchgraph::absolute_path(file), "--verify",
                                torchgraph::absolute_path(plan_file), "--mesh", mesh.shape_string(), "--format", format,
                                "--batch", std::to_string(batch)};
  bool tokens_given = false;
  for (auto& p : passed) tokens_given |= p == "--tokens";
  if (!tokens_given) argv.insert(argv.end(), {"--tokens", "8"});
  argv.insert(argv.end(), passed.begin(), passed.end());
  // Running the model's forward() runs the archive's code: in a confined child (confinement.h).
  torchgraph::TempDir sandbox("shardlens-verify-");
  if (sandbox.path().empty()) {
    std::fprintf(stderr, "%s: %s\n", prog, sandbox.error().c_str());
    return 1;
  }
  torchgraph::ProcessOptions confined;
  confined.timeout_s = client.timeout_s;
  confined.confine_to = sandbox.path();
  auto r = torchgraph::run_process(argv, confined);
  if (!temp.empty()) std::remove(temp.c_str());
  if (!r.started) {
    std::fprintf(stderr, "%s: cannot run %s: %s\n", prog, exe.c_str(), r.error.c_str());
    return 3;
  }
  std::fputs(r.out.c_str(), stdout);
  std::fputs(r.err.c_str(), stderr);
  if (r.timed_out) {
    std::fprintf(stderr, "%s: shardlens-graph did not finish in %d s\n", prog, client.timeout_s);
    return 1;
  }
  return r.exit_code;
}

}  // namespace shardlens::cli
