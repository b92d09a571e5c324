// `shardlens graph FILE.pt [--format json|text|dataflow] [--batch N] [--seq N] [--phase ...] ...`:
// the exact graph of a TorchScript file (through shardlens-graph), spans from its script.
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "exact_graph.h"
#include "flags.h"
#include "ir/ir_json.h"
#include "ir/ir_text.h"
#include "session/plan_choices.h"
#include "session/script_pipeline.h"

namespace shardlens::cli {
namespace {

const char* kGraphUsage =
    "usage: shardlens graph FILE.pt [--format json|text|dataflow] [--batch N] [--seq N] [--phase prefill|decode]\n"
    "                       [--spatial HxW] [--input NAME=D0,D1,...[:DTYPE] ...] [--script FILE.py] [--no-cache]\n"
    "  The exact graph of a TorchScript file (runs shardlens-graph; answers are cached by content):\n"
    "  json = shardlens-graph's JSON (modules and parameters as `inspect --format json`, spans from the\n"
    "  script the file was exported from), text = the module tree and parameters, dataflow = the ops\n"
    "  as the planner reads them.\n";

}  // namespace

int run_graph(const std::vector<std::string>& args) {
  torchgraph::GraphRequest req;
  torchgraph::GraphClientOptions client;
  std::string format = "json", script;
  plan::PlanOptions options;  // its workload: batch, seq, phase
  plan::Workload& workload = options.workload;
  bool tokens_given = false;
  int64_t tokens = 1;
  FlagReader flags("shardlens graph", kGraphUsage, args);
  while (flags.next()) {
    if (flags.is("--format")) {
      if (auto v = flags.choice({"json", "text", "dataflow"})) format = *v;
    } else if (flags.is("--batch")) {
      if (auto n = flags.positive()) workload.batch = *n;
    } else if (flags.is("--seq")) {
      if (auto n = flags.positive()) workload.seq = *n;
    } else if (flags.is("--tokens")) {
      if (auto n = flags.positive()) tokens = *n, tokens_given = true;
    } else if (flags.is("--phase")) {
      if (auto v = flags.choice(session::choice_names(session::PlanChoice::Phase)))
        session::apply_choice(options, session::PlanChoice::Phase, *v);
    } else if (flags.is("--spatial")) {
      PlanningArgs spatial;
      if (take_planning_flag(flags, spatial)) req.spatial[0] = spatial.trace.spatial[0], req.spatial[1] = spatial.trace.spatial[1];
    } else if (flags.is("--input")) {
      if (auto v = flags.value()) req.inputs.push_back(*v);
    } else if (flags.is("--script")) {
      if (auto v = flags.value()) script = *v;
    } else if (flags.is("--no-cache")) {
      client.use_cache = false;
    } else {
      flags.file(req.file);
    }
  }
  if (auto code = flags.finished(req.file)) return *code;
  req.batch = workload.batch;
  req.tokens = tokens_given ? tokens : workload.tokens_per_forward();
  auto r = torchgraph::fetch_graph(req, client);
  if (!r.ok) {
    std::fprintf(stderr, "shardlens graph: %s\n", r.error.c_str());
    return r.error.rfind("no such file", 0) == 0 || r.exit_code == 1 ? 1 : 3;
  }
  // Spans from the script the file was exported from (or --script).
  if (script.empty() && r.json.value("source", "") != "" && file_exists(r.json.value("source", ""))) script = r.json.value("source", "");
  std::string text, error;
  if (!script.empty() && !session::read_file(script, text, error)) {
    std::fprintf(stderr, "shardlens graph: %s\n", error.c_str());
    return 1;
  }
  python::ExtractOptions extract;
  extract.model_expression = "";
  if (!r.json.value("root", "").empty() && r.json.value("root", "").find('(') != std::string::npos)
    extract.model_expression = r.json.value("root", "");
  auto m = exact_model(r.json, script, text, extract);
  if (!m.exact.ok) {
    std::fprintf(stderr, "shardlens graph: %s\n", m.exact.error.c_str());
    return 1;
  }
  if (format == "json") {
    nlohmann::json j = r.json;
    auto spans = ir::to_json(m.exact.model);
    for (const char* key : {"modules", "parameters", "buffers"})
      if (j.contains(key) && spans.contains(key) && j[key].size() == spans[key].size())
        for (size_t i = 0; i < j[key].size(); ++i) j[key][i]["span"] = spans[key][i]["span"];
    for (auto& n : m.notes) j["notes"].push_back(n);
    j["cached"] = r.from_cache;
    std::cout << j.dump(1) << "\n";
  } else if (format == "text") {
    std::cout << ir::to_text(m.exact.model);
    for (auto& n : m.notes) std::cout << "note: " << n << "\n";
  } else {
    std::cout << ir::dataflow_to_text(m.exact.model);
    if (!m.exact.model.dataflow.error.empty()) std::cout << "error: " << m.exact.model.dataflow.error << "\n";
  }
  return 0;
}

}  // namespace shardlens::cli
