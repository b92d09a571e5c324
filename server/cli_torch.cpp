// `shardlens export`, `shardlens graph` and `shardlens plan --graph`: the exact graph through
// PyTorch (the export helper, run by the user's Python) and LibTorch (shardlens-graph, a child
// process). shardlens itself links neither.
#include "cli_torch.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <iostream>
#include <optional>

#include "cli.h"
#include "analysis.h"
#include "cli_planning.h"
#include "ir/ir_json.h"
#include "ir/ir_text.h"
#include "plan/plan.h"
#include "plan/plan_output.h"
#include "python/extractor.h"
#include "python/value_locator.h"
#include "torch/exact_ir.h"
#include "torch/export_runner.h"
#include "torch/child_process.h"
#include "torch/confinement.h"
#include "torch/graph_client.h"

namespace shardlens::cli {
namespace {

const char* kExportUsage =
    "usage: shardlens export FILE.py [--model EXPR] [-o OUT.pt] [--python PATH] [--weights meta|random]\n"
    "                        [--method auto|script|trace] [--batch N] [--seq N] [--format text|json]\n"
    "  Builds FILE.py's root module with PyTorch (on the meta device unless --weights random) without\n"
    "  running its __main__ block, and saves it as TorchScript (torch.jit.script; torch.jit.trace with an\n"
    "  example input of --batch x --seq tokens when scripting fails). OUT.pt defaults to FILE.pt.\n"
    "  Exit status: 0 written; 1 FILE unreadable; 2 usage; 3 no Python with torch (or no helper);\n"
    "  4 the script raised; 5 no root module found; 6 scripting and tracing both failed; 7 OUT not written.\n";

const char* kGraphUsage =
    "usage: shardlens graph FILE.pt [--format json|text|dataflow] [--batch N] [--seq N] [--phase prefill|decode]\n"
    "                       [--spatial HxW] [--input NAME=D0,D1,...[:DTYPE] ...] [--script FILE.py] [--no-cache]\n"
    "  The exact graph of a TorchScript file (runs shardlens-graph; answers are cached by content):\n"
    "  json = shardlens-graph's JSON (modules and parameters as `inspect --format json`, spans from the\n"
    "  script the file was exported from), text = the module tree and parameters, dataflow = the ops\n"
    "  as the planner reads them.\n";

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
    "  largest value); 5 the plan does not fit the model.\n";

const char* kPlanGraphUsage =
    "usage: shardlens plan FILE.py --graph FILE.pt [--model EXPR] [--mesh RxC|PRESET ...] [--strategy auto|tensor]\n"
    "                      [--batch N] [--seq N] [--phase prefill|decode] [--dtype bf16|fp32|bfp8]\n"
    "                      [--hardware wormhole|blackhole] [--format text|json] [--spatial HxW]\n"
    "                      [--pin PARAM=LAYOUT ...] [--pin-output MODULE=LAYOUT ...] [--pins-only] [--no-cache]\n"
    "  Plans on the exact graph (from `shardlens export`); FILE.py gives the source spans, and where its\n"
    "  static analysis was blind the plan says so (diagnostics with code static-blind).\n";

std::string span_text(const std::string& text, const ir::Span& s) {
  if (!s.valid()) return "";
  size_t line = 1, pos = 0;
  while (line < s.line && pos < text.size()) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return "";
    ++pos;
    ++line;
  }
  size_t start = pos + s.column;
  size_t end_pos = pos;
  line = s.line;
  while (line < s.end_line && end_pos < text.size()) {
    end_pos = text.find('\n', end_pos);
    if (end_pos == std::string::npos) return "";
    ++end_pos;
    ++line;
  }
  size_t end = end_pos + s.end_column;
  if (start >= text.size() || end > text.size() || end <= start) return "";
  return text.substr(start, end - start);
}

uint64_t fnv_text(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// The exact IR of a graph answer with spans from `script_text` (when given).
struct ExactModel {
  torchgraph::ExactIR exact;
  python::ExtractResult statics;
  bool have_static = false;
  std::vector<torchgraph::BlindSpot> blind;
  std::vector<std::string> notes;
};

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

bool file_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

bool wants_graph(const std::vector<std::string>& args) {
  for (auto& a : args)
    if (a == "--graph" || a.rfind("--graph=", 0) == 0) return true;
  return false;
}

int run_export(const std::vector<std::string>& args) {
  torchgraph::ExportRequest req;
  std::string format = "text";
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::string inline_value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      inline_value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      has_inline = true;
    }
    auto value = [&]() -> std::optional<std::string> {
      if (has_inline) return inline_value;
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "shardlens export: %s needs a value\n%s", a.c_str(), kExportUsage);
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--model" || a == "-o" || a == "--output" || a == "--python" || a == "--weights" || a == "--method" ||
        a == "--format") {
      auto v = value();
      if (!v) return 2;
      if (a == "--model") req.model_expression = *v;
      else if (a == "-o" || a == "--output") req.output = *v;
      else if (a == "--python") req.python = *v;
      else if (a == "--weights") {
        if (*v != "meta" && *v != "random") {
          std::fprintf(stderr, "shardlens export: --weights must be meta or random, not '%s'\n", v->c_str());
          return 2;
        }
        req.weights = *v;
      } else if (a == "--method") {
        if (*v != "auto" && *v != "script" && *v != "trace") {
          std::fprintf(stderr, "shardlens export: --method must be auto, script or trace, not '%s'\n", v->c_str());
          return 2;
        }
        req.method = *v;
      } else {
        if (*v != "text" && *v != "json") {
          std::fprintf(stderr, "shardlens export: --format must be text or json, not '%s'\n", v->c_str());
          return 2;
        }
        format = *v;
      }
    } else if (a == "--batch" || a == "--seq") {
      auto v = value();
      if (!v) return 2;
      auto n = positive_int("shardlens export", a, *v);
      if (!n) return 2;
      (a == "--batch" ? req.batch : req.seq) = *n;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kExportUsage, stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "shardlens export: unknown option '%s'\n%s", a.c_str(), kExportUsage);
      return 2;
    } else if (req.script.empty()) {
      req.script = a;
    } else {
      std::fprintf(stderr, "shardlens export: more than one FILE given ('%s', '%s')\n", req.script.c_str(), a.c_str());
      return 2;
    }
  }
  if (req.script.empty()) {
    std::fputs(kExportUsage, stderr);
    return 2;
  }
  std::string text, error;
  if (!read_file(req.script, text, error)) {
    std::fprintf(stderr, "shardlens export: %s\n", error.c_str());
    return 1;
  }
  if (req.output.empty()) req.output = server::export_path_for(req.script);
  // The static front end's root, so that both front ends build the same model: its expression and
  // the text that constructs it (an instance made inside __main__, which the export does not run).
  if (req.model_expression.empty()) {
    python::ModelExtractor extractor(text, req.script);
    auto statics = extractor.extract();
    if (statics.ok) {
      if (!statics.model.root_expression.empty()) req.root_hints.push_back(statics.model.root_expression);
      if (!statics.model.modules.empty()) {
        std::string construct = span_text(text, statics.model.modules[0].span);
        if (!construct.empty() && construct != statics.model.root_expression) req.root_hints.push_back(construct);
      }
    }
  }
  auto r = torchgraph::run_export(req);
  if (!r.ok) {
    std::fprintf(stderr, "shardlens export: %s: %s\n", req.script.c_str(), r.message.c_str());
    if (format == "json")
      std::cout << nlohmann::json{{"ok", false}, {"kind", r.kind}, {"message", r.message}, {"python", r.python}}.dump(2) << "\n";
    return static_cast<int>(r.failure);
  }
  if (format == "json") {
    auto j = r.result;
    j["python"] = r.python;
    j["export_ms"] = r.ms;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::string method = r.result.value("method", "");
  std::printf("exported %s (%s, %s) to %s in %.1f s with %s\n", r.result.value("model", "").c_str(),
              method == "script" ? "scripted" : "traced", req.weights == "meta" ? "meta tensors" : "random weights",
              req.output.c_str(), r.ms / 1000.0, r.python.c_str());
  std::printf("root: %s; %d parameters\n", r.result.value("root", "").c_str(), r.result.value("parameters", 0));
  for (auto& n : r.result.value("notes", nlohmann::json::array())) std::printf("note: %s\n", n.get<std::string>().c_str());
  return 0;
}

int run_graph(const std::vector<std::string>& args) {
  torchgraph::GraphRequest req;
  torchgraph::GraphClientOptions client;
  std::string format = "json", script;
  plan::Workload workload;
  bool tokens_given = false;
  int64_t tokens = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "shardlens graph: %s needs a value\n%s", a.c_str(), kGraphUsage);
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--format") {
      auto v = value();
      if (!v) return 2;
      if (*v != "json" && *v != "text" && *v != "dataflow") {
        std::fprintf(stderr, "shardlens graph: --format must be json, text or dataflow, not '%s'\n", v->c_str());
        return 2;
      }
      format = *v;
    } else if (a == "--batch" || a == "--seq" || a == "--tokens") {
      auto v = value();
      if (!v) return 2;
      auto n = positive_int("shardlens graph", a, *v);
      if (!n) return 2;
      if (a == "--batch") workload.batch = *n;
      else if (a == "--seq") workload.seq = *n;
      else {
        tokens = *n;
        tokens_given = true;
      }
    } else if (a == "--phase") {
      auto v = value();
      if (!v) return 2;
      if (*v != "prefill" && *v != "decode") {
        std::fprintf(stderr, "shardlens graph: --phase must be prefill or decode, not '%s'\n", v->c_str());
        return 2;
      }
      workload.phase = *v == "prefill" ? plan::Phase::Prefill : plan::Phase::Decode;
    } else if (a == "--spatial") {
      auto v = value();
      if (!v) return 2;
      auto x = v->find('x');
      auto h = x == std::string::npos ? std::nullopt : positive_int("shardlens graph", a, v->substr(0, x));
      auto w = h ? positive_int("shardlens graph", a, v->substr(x + 1)) : std::nullopt;
      if (!h || !w) return 2;
      req.spatial[0] = *h;
      req.spatial[1] = *w;
    } else if (a == "--input") {
      auto v = value();
      if (!v) return 2;
      req.inputs.push_back(*v);
    } else if (a == "--script") {
      auto v = value();
      if (!v) return 2;
      script = *v;
    } else if (a == "--no-cache") {
      client.use_cache = false;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kGraphUsage, stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "shardlens graph: unknown option '%s'\n%s", a.c_str(), kGraphUsage);
      return 2;
    } else if (req.file.empty()) {
      req.file = a;
    } else {
      std::fprintf(stderr, "shardlens graph: more than one FILE given\n");
      return 2;
    }
  }
  if (req.file.empty()) {
    std::fputs(kGraphUsage, stderr);
    return 2;
  }
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
  if (!script.empty() && !read_file(script, text, error)) {
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

static int plan_on_graph(const char* prog, const std::string& file, const std::string& graph_file, PlanningArgs& planning,
                  const torchgraph::GraphClientOptions& client, const std::string& format, std::ostream& out);

int run_plan_graph(const std::vector<std::string>& args) {
  std::string file, format = "text", graph_file;
  PlanningArgs planning;
  torchgraph::GraphClientOptions client;
  const std::string prog = "shardlens plan";
  for (size_t i = 0; i < args.size(); ++i) {
    auto planning_flag = take_planning_flag("shardlens plan", kPlanGraphUsage, args, i, planning);
    if (planning_flag == FlagStatus::Error) return 2;
    if (planning_flag == FlagStatus::Taken) continue;
    std::string a = args[i];
    std::string inline_value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos && a.rfind("--pin", 0) != 0) {
      inline_value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      has_inline = true;
    }
    auto value = [&]() -> std::optional<std::string> {
      if (has_inline) return inline_value;
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "shardlens plan: %s needs a value\n%s", a.c_str(), kPlanGraphUsage);
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--graph") {
      auto v = value();
      if (!v) return 2;
      graph_file = *v;
    } else if (a == "--format") {
      auto v = value();
      if (!v) return 2;
      if (*v != "text" && *v != "json") {
        std::fprintf(stderr, "shardlens plan: --format must be text or json, not '%s'\n", v->c_str());
        return 2;
      }
      format = *v;
    } else if (a == "--no-cache") {
      client.use_cache = false;
    } else if (a == "--emit" || a == "--emit-apply") {
      std::fprintf(stderr, "shardlens plan: --emit is not yet supported with --graph; plan without --graph to emit code\n");
      return 2;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "shardlens plan: unknown option '%s'\n%s", a.c_str(), kPlanGraphUsage);
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "shardlens plan: more than one FILE given ('%s', '%s')\n", file.c_str(), a.c_str());
      return 2;
    }
  }
  if (file.empty() || graph_file.empty()) {
    std::fputs(kPlanGraphUsage, stderr);
    return 2;
  }
  finish_planning_args(planning);
  return plan_on_graph(prog.c_str(), file, graph_file, planning, client, format, std::cout);
}

// `plan --graph` after its flags: the exact model, the plan, printed as `format` to `out`.
static int plan_on_graph(const char* prog_name, const std::string& file, const std::string& graph_file, PlanningArgs& planning,
                  const torchgraph::GraphClientOptions& client, const std::string& format, std::ostream& out) {
  const std::string prog = prog_name;
  plan::PlanOptions& options = planning.options;
  const std::string& model_expr = planning.model_expr;
  torchgraph::GraphRequest req;
  req.spatial[0] = planning.trace.spatial[0];
  req.spatial[1] = planning.trace.spatial[1];
  std::string text, error;
  if (!read_file(file, text, error)) {
    std::fprintf(stderr, "shardlens plan: %s\n", error.c_str());
    return 1;
  }
  req.file = graph_file;
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
  extract.trace_forward = true;
  extract.workload.batch = options.workload.batch;
  extract.workload.tokens = options.workload.tokens_per_forward();
  extract.workload.spatial[0] = req.spatial[0];
  extract.workload.spatial[1] = req.spatial[1];
  auto m = exact_model(g.json, file, text, extract);
  if (!m.exact.ok) {
    std::fprintf(stderr, "%s: %s: %s\n", prog.c_str(), graph_file.c_str(), m.exact.error.c_str());
    return 1;
  }
  ir::ModelIR& model = m.exact.model;
  if (!check_pins(prog.c_str(), model, options)) return 2;
  options.locate = [index = python::LazyValueIndex(text)](const std::vector<std::string>& keys, int64_t value, ir::Span fallback) {
    ir::Span s = index.locate(keys, value);
    return s.valid() ? s : fallback;
  };
  auto result = plan::plan_model(model, options);
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
  if (format == "json") out << plan::to_json(result, model, options).dump(2) << "\n";
  else out << plan::to_text(result, model, options);
  return 0;
}

int run_verify(const std::vector<std::string>& args) {
  const char* prog = "shardlens verify";
  std::string file, plan_file, script, format = "text";
  std::vector<std::string> passed;  // flags shardlens-graph takes as they are
  PlanningArgs planning;
  torchgraph::GraphClientOptions client;
  int64_t batch = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "%s: %s needs a value\n%s", prog, a.c_str(), kVerifyUsage);
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--plan" || a == "--script" || a == "--format" || a == "--tolerance" || a == "--seed" || a == "--tokens" ||
        a == "--input" || a == "--batch") {
      auto v = value();
      if (!v) return 2;
      if (a == "--plan") plan_file = *v;
      else if (a == "--script") script = *v;
      else if (a == "--format") {
        if (*v != "text" && *v != "json") {
          std::fprintf(stderr, "%s: --format must be text or json, not '%s'\n", prog, v->c_str());
          return 2;
        }
        format = *v;
      } else if (a == "--batch") {
        auto n = positive_int(prog, a, *v);
        if (!n) return 2;
        batch = *n;
        planning.options.workload.batch = *n;
      } else {
        passed.push_back(a);
        passed.push_back(*v);
      }
      continue;
    }
    if (a == "--no-cache") {
      client.use_cache = false;
      continue;
    }
    if (a == "-h" || a == "--help") {
      std::fputs(kVerifyUsage, stdout);
      return 0;
    }
    auto planning_flag = take_planning_flag(prog, kVerifyUsage, args, i, planning);
    if (planning_flag == FlagStatus::Error) return 2;
    if (planning_flag == FlagStatus::Taken) continue;
    if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "%s: unknown option '%s'\n%s", prog, a.c_str(), kVerifyUsage);
      return 2;
    }
    if (!file.empty()) {
      std::fprintf(stderr, "%s: more than one FILE given\n", prog);
      return 2;
    }
    file = a;
  }
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
