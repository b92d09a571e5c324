// `shardlens report FILE [--model EXPR] [--mesh RxC|PRESET ...] [plan's workload flags] [-o PATH]`:
// plans FILE as `shardlens plan` does and writes sharding_analysis.md with its SVG chart beside it.
#include <cstdio>
#include <iostream>
#include <optional>

#include "cli.h"
#include "cli_planning.h"
#include "emit/report.h"
#include "plan/plan.h"
#include "python/value_locator.h"

namespace shardlens::cli {
namespace {

const char* kReportUsage =
    "usage: shardlens report FILE [--model EXPR] [--memory-budget MIB] [--mesh RxC|PRESET ...] [--strategy auto|tensor]\n"
    "                        [--batch N] [--seq N] [--phase prefill|decode] [--dtype bf16|fp32|bfp8]\n"
    "                        [--hardware wormhole|blackhole] [--spatial HxW]\n"
    "                        [--pin PARAM=replicated|shard:D ...] [--pin-output MODULE=replicated|shard:D ...] [--pins-only]\n"
    "                        [-o PATH]\n"
    "  writes the sharding report (default sharding_analysis.md; a directory gets that name inside) and its\n"
    "  chart beside it (sharding_analysis.ccl_bytes.svg); -o - prints the Markdown instead (no chart).\n";

std::string shell_word(const std::string& a) {
  bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=+@") == std::string::npos;
  return plain ? a : "'" + a + "'";
}

}  // namespace

int run_report(const std::vector<std::string>& args) {
  std::string file, output = "sharding_analysis.md";
  PlanningArgs planning;
  plan::PlanOptions& options = planning.options;
  std::string regenerate = "shardlens report";
  for (size_t i = 0; i < args.size(); ++i) {
    size_t first = i;
    auto planning_flag = take_planning_flag("shardlens report", kReportUsage, args, i, planning);
    if (planning_flag == FlagStatus::Error) return 2;
    if (planning_flag == FlagStatus::Taken) {
      for (size_t k = first; k <= i; ++k) regenerate += " " + shell_word(args[k]);
      continue;
    }
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
        std::fprintf(stderr, "shardlens report: %s needs a value\n%s", a.c_str(), kReportUsage);
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "-o" || a == "--output") {
      auto v = value();
      if (!v) return 2;
      if (v->empty()) {
        std::fprintf(stderr, "shardlens report: %s needs a path\n", a.c_str());
        return 2;
      }
      output = *v;
      continue;  // not part of the regenerate line: the report says where it came from, not where it went
    }
    if (a == "--format" || a == "--emit") {
      std::fprintf(stderr, "shardlens report: %s belongs to `shardlens plan`; the report is Markdown (-o - prints it)\n", a.c_str());
      return 2;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::fprintf(stderr, "shardlens report: unknown option '%s'\n%s", a.c_str(), kReportUsage);
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "shardlens report: more than one FILE given ('%s', '%s')\n", file.c_str(), a.c_str());
      return 2;
    }
    for (size_t k = first; k <= i; ++k) regenerate += " " + shell_word(args[k]);
  }
  if (file.empty()) {
    std::fputs(kReportUsage, stderr);
    return 2;
  }
  if (options.meshes.empty()) regenerate += " --mesh t3k";
  finish_planning_args(planning);
  auto source = extract_for_planning("shardlens report", file, planning);
  if (!source) return 1;
  const std::string& text = source->text;
  const ir::ModelIR& model = source->model;
  if (!check_pins("shardlens report", model, options)) return 2;
  options.locate = [&text](const std::vector<std::string>& keys, int64_t value, ir::Span fallback) {
    ir::Span s = python::locate_value(text, keys, value);
    return s.valid() ? s : fallback;
  };
  auto result = plan::plan_model(model, options);
  if (!result.ok) {
    std::fprintf(stderr, "shardlens report: %s: %s\n", file.c_str(), result.error.c_str());
    return 1;
  }
  if (output == "-") {
    emit::ReportOptions ro;
    ro.script_path = file;
    ro.chart_href.clear();
    ro.regenerate = regenerate;
    std::cout << emit::report_markdown(model, result, options, ro);
    return 0;
  }
  emit::ReportOptions ro;
  ro.script_path = file;
  ro.regenerate = regenerate;
  auto files = emit::write_report(model, result, options, ro, output);
  if (!files.ok) {
    std::fprintf(stderr, "shardlens report: %s\n", files.error.c_str());
    return 1;
  }
  std::cout << files.markdown_path << "\n" << files.chart_path << "\n";
  return 0;
}

}  // namespace shardlens::cli
