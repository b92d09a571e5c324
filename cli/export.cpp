// `shardlens export FILE.py [--model EXPR] [-o OUT.pt] [--python PATH] [--weights meta|random] ...`:
// builds the script's model with the user's PyTorch and saves it as TorchScript.
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "exact_graph.h"
#include "flags.h"
#include "session/script_pipeline.h"
#include "torch/export_runner.h"

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

}  // namespace

int run_export(const std::vector<std::string>& args) {
  torchgraph::ExportRequest req;
  std::string format = "text";
  FlagReader flags("shardlens export", kExportUsage, args);
  while (flags.next()) {
    if (flags.is("--model")) {
      if (auto v = flags.value()) req.model_expression = *v;
    } else if (flags.is("-o") || flags.is("--output")) {
      if (auto v = flags.value()) req.output = *v;
    } else if (flags.is("--python")) {
      if (auto v = flags.value()) req.python = *v;
    } else if (flags.is("--weights")) {
      if (auto v = flags.choice({"meta", "random"})) req.weights = *v;
    } else if (flags.is("--method")) {
      if (auto v = flags.choice({"auto", "script", "trace"})) req.method = *v;
    } else if (flags.format(format)) {
    } else if (flags.is("--batch")) {
      if (auto n = flags.positive()) req.batch = *n;
    } else if (flags.is("--seq")) {
      if (auto n = flags.positive()) req.seq = *n;
    } else {
      flags.file(req.script);
    }
  }
  if (auto code = flags.finished(req.script)) return *code;
  auto read = read_input(flags.command(), req.script);
  if (!read) return 1;
  const std::string& text = *read;
  if (req.output.empty()) req.output = session::export_path_for(req.script);
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

}  // namespace shardlens::cli
