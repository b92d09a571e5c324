// `shardlens plan FILE.py --graph FILE.pt` and what the exact-graph commands share: the exact
// graph through PyTorch (the export helper, run by the user's Python) and LibTorch
// (shardlens-graph, a child process). shardlens itself links neither.
#include "exact_graph.h"

#include <sys/stat.h>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "plan/plan_output.h"
#include "session/script_pipeline.h"

namespace shardlens::cli {
namespace {

const char* kPlanGraphUsage =
    "usage: shardlens plan FILE.py --graph FILE.pt [--model EXPR] [--mesh RxC|PRESET ...] [--strategy auto|tensor]\n"
    "                      [--batch N] [--seq N] [--phase prefill|decode] [--dtype bf16|fp32|bfp8]\n"
    "                      [--hardware wormhole|blackhole] [--format text|json] [--spatial HxW]\n"
    "                      [--pin PARAM=LAYOUT ...] [--pin-output MODULE=LAYOUT ...] [--pins-only] [--no-cache]\n"
    "  Plans on the exact graph (from `shardlens export`); FILE.py gives the source spans, and where its\n"
    "  static analysis was blind the plan says so (diagnostics with code static-blind).\n";

uint64_t fnv_text(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

std::string span_text(const std::string& text, const ir::Span& s) {
  if (!s.valid()) return "";
  // Where line `target` starts, counting on from `pos` on line `line` (npos: the text ends first).
  auto line_start = [&](size_t pos, size_t line, size_t target) {
    while (line < target && pos < text.size()) {
      pos = text.find('\n', pos);
      if (pos == std::string::npos) return pos;
      ++pos;
      ++line;
    }
    return pos;
  };
  size_t pos = line_start(0, 1, s.line);
  if (pos == std::string::npos) return "";
  size_t end_pos = line_start(pos, s.line, s.end_line);
  if (end_pos == std::string::npos) return "";
  size_t start = pos + s.column;
  size_t end = end_pos + s.end_column;
  if (start >= text.size() || end > text.size() || end <= start) return "";
  return text.substr(start, end - start);
}

bool file_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

ExactModel exact_model(const nlohmann::json& graph, const std::string& script_file, const std::string& script_text,
                       const python::ExtractOptions& extract) {
  ExactModel m;
  m.exact = torchgraph::exact_ir_from_json(graph);
  if (!m.exact.ok) return m;
  if (!script_file.empty()) {
    python::ModelExtractor extractor(script_text, script_file);
    m.statics = extractor.extract(extract);
    m.have_static = m.statics.ok;
    if (m.statics.ok) {
      torchgraph::adopt_static_spans(m.exact.model, m.statics.model);
      m.blind = torchgraph::compare_with_static(m.exact.model, m.statics.model);
    } else {
      m.notes.push_back("the static analysis of " + script_file + " found no model (" + m.statics.error +
                        "): no source spans for modules and parameters");
    }
    m.exact.model.source = script_file;
    const auto& e = graph.contains("export") ? graph["export"] : nlohmann::json();
    if (e.is_object() && e.contains("source_fnv1a64") &&
        e["source_fnv1a64"].get<std::string>() != torchgraph::hex64(fnv_text(script_text)))
      m.notes.push_back(script_file + " changed since it was exported: the exact graph may be stale (run shardlens export again)");
  }
  return m;
}

bool wants_graph(const std::vector<std::string>& args) {
  for (auto& a : args)
    if (a == "--graph" || a.rfind("--graph=", 0) == 0) return true;
  return false;
}

int run_plan_graph(const std::vector<std::string>& args) {
  std::string file, format = "text", graph_file;
  PlanningArgs planning;
  torchgraph::GraphClientOptions client;
  FlagReader flags("shardlens plan", kPlanGraphUsage, args);
  while (flags.next()) {
    if (take_planning_flag(flags, planning)) continue;
    if (flags.is("--graph")) {
      if (auto v = flags.value()) graph_file = *v;
    } else if (flags.format(format)) {
    } else if (flags.is("--no-cache")) {
      client.use_cache = false;
    } else if (flags.is("--emit") || flags.is("--emit-apply")) {
      flags.fail("--emit is not yet supported with --graph; plan without --graph to emit code");
    } else {
      flags.file(file);
    }
  }
  if (auto code = flags.exit_code()) return *code;
  if (file.empty() || graph_file.empty()) {
    std::fputs(kPlanGraphUsage, stderr);
    return 2;
  }
  finish_planning_args(planning);
  return plan_on_graph("shardlens plan", file, graph_file, planning, client, format, std::cout);
}

// `plan --graph` after its flags: the exact model, the plan, printed as `format` to `out`.
int plan_on_graph(const char* prog_name, const std::string& file, const std::string& graph_file, PlanningArgs& planning,
                  const torchgraph::GraphClientOptions& client, const std::string& format, std::ostream& out) {
  const std::string prog = prog_name;
  plan::PlanOptions& options = planning.options;
  const std::string& model_expr = planning.model_expr;
  torchgraph::GraphRequest req;
  req.spatial[0] = planning.trace.spatial[0];
  req.spatial[1] = planning.trace.spatial[1];
  std::string text, error;
  if (!session::read_file(file, text, error)) {
    std::fprintf(stderr, "shardlens plan: %s\n", error.c_str());
    return 1;
  }
  req.file = graph_file;
  // The graph is evaluated for the workload's tokens: fetched again when the model's kind changes them.
  auto load = [&](ExactModel& m) -> int {
    req.batch = options.workload.batch;
    req.tokens = options.workload.tokens_per_forward();
    auto g = torchgraph::fetch_graph(req, client);
    if (!g.ok) {
      std::fprintf(stderr, "%s: %s\n", prog.c_str(), g.error.c_str());
      return g.error.rfind("no such file", 0) == 0 || g.exit_code == 1 ? 1 : 3;
    }
    python::ExtractOptions extract;
    extract.model_expression = model_expr;
    if (model_expr.empty() && g.json.value("root", "").find('(') != std::string::npos) extract.model_expression = g.json.value("root", "");
    if (planning.memory_budget_mib) extract.memory_budget_mib = planning.memory_budget_mib;
    extract.trace_forward = true;
    extract.workload.batch = options.workload.batch;
    extract.workload.tokens = options.workload.tokens_per_forward();
    extract.workload.context = options.workload.seq;
    extract.workload.spatial[0] = req.spatial[0];
    extract.workload.spatial[1] = req.spatial[1];
    m = exact_model(g.json, file, text, extract);
    if (!m.exact.ok) {
      std::fprintf(stderr, "%s: %s: %s\n", prog.c_str(), graph_file.c_str(), m.exact.error.c_str());
      return 1;
    }
    return 0;
  };
  ExactModel m;
  if (int code = load(m)) return code;
  const WorkloadChoice choice = choose_workload(m.exact.model, planning);
  if (choice.retrace)
    if (int code = load(m)) return code;
  ir::ModelIR& model = m.exact.model;
  if (!check_pins(prog.c_str(), model, options)) return 2;
  auto result = session::plan_in_text(text, model, options);
  if (!result.ok) {
    std::fprintf(stderr, "%s: %s: %s\n", prog.c_str(), file.c_str(), result.error.c_str());
    return 1;
  }
  std::string method = m.exact.method == "trace" ? "traced" : m.exact.method == "script" ? "scripted" : "TorchScript";
  result.notes.insert(result.notes.begin(), "planned on the exact graph of " + graph_file + " (" + method + "; " +
                                                std::to_string(model.dataflow.ops.size()) + " ops)" +
                                                (m.blind.empty() ? "; the static analysis agrees with it"
                                                                 : "; " + std::to_string(m.blind.size()) +
                                                                       " place(s) where the static analysis was blind"));
  for (auto& n : m.notes) result.notes.push_back(n);
  for (auto& b : m.blind) result.diagnostics.push_back({"static-blind", "information", b.message, b.span, ""});
  if (format == "json") {
    auto j = plan::to_json(result, model, options);
    describe_workload(choice, j);
    out << j.dump(2) << "\n";
  } else {
    out << workload_line(choice) << plan::to_text(result, model, options);
  }
  return 0;
}

}  // namespace shardlens::cli
