// `shardlens report FILE [--model EXPR] [--mesh RxC|PRESET ...] [plan's workload flags] [-o PATH]`:
// plans FILE as `shardlens plan` does and writes sharding_analysis.md with its SVG chart beside it.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "planning_flags.h"
#include "report/report.h"
#include "mlir/ir_check.h"
#include "plan/plan.h"
#include "plan/plan_output.h"

namespace shardlens::cli {
namespace {

const char* kReportUsage =
    "usage: shardlens report FILE [--model EXPR] [--python-path DIR ...] [--python PATH] [--memory-budget MIB] [--mesh RxC|PRESET ...] [--strategy auto|tensor]\n"
    "                        [--batch N] [--seq N] [--phase prefill|decode] [--prefill-weights shared|own]\n"
    "                        [--dtype bf16|fp32|bfp8]\n"
    "                        [--hardware wormhole|blackhole|PROFILE.json] [--spatial HxW]\n"
    "                        [--pin PARAM=replicated|shard:D ...] [--pin-output MODULE=replicated|shard:D ...] [--pins-only]\n"
    "                        [--ir DIR] [-o PATH]\n"
    "  writes the sharding report (default sharding_analysis.md; a directory gets that name inside) and its\n"
    "  chart beside it (sharding_analysis.ccl_bytes.svg); -o - prints the Markdown instead (no chart).\n"
    "  --ir DIR adds a section comparing the compiler's exported MLIR in DIR with the plan (shardlens check-ir).\n";

}  // namespace

int run_report(const std::vector<std::string>& args) {
  std::string file, output = "sharding_analysis.md", ir_dir;
  PlanningArgs planning;
  std::string regenerate = "shardlens report";
  FlagReader flags("shardlens report", kReportUsage, args);
  while (flags.next()) {
    bool cited = true;  // the regenerate line says where the report came from, not where it went
    if (take_planning_flag(flags, planning)) {
    } else if (flags.is("-o") || flags.is("--output")) {
      cited = false;
      auto v = flags.value();
      if (v && v->empty()) flags.fail(flags.name() + " needs a path");
      else if (v) output = *v;
    } else if (flags.is("--ir")) {
      cited = false;
      if (auto v = flags.value()) ir_dir = *v;
    } else if (flags.is("--format") || flags.is("--emit")) {
      flags.fail(flags.name() + " belongs to `shardlens plan`; the report is Markdown (-o - prints it)");
    } else {
      flags.file(file);
    }
    if (cited)
      for (auto& a : flags.taken()) regenerate += " " + shell_word(a);
  }
  if (auto code = flags.finished(file)) return *code;
  if (planning.options.meshes.empty()) regenerate += " --mesh t3k";
  finish_planning_args(planning);
  PlannedScript planned;
  if (int code = plan_script("shardlens report", file, planning, planned)) return code;
  report::ReportOptions ro;
  ro.script_path = file;
  ro.regenerate = regenerate;
  const ir::ModelIR& model = planned.source.model;
  // The compiled IR's check, appended as the report's last section.
  std::string ir_section;
  if (!ir_dir.empty()) {
    std::vector<std::string> ir_files;
    std::string plan_in_dir, error;
    mlir::CheckReport check;
    if (!mlir::collect_ir_files({ir_dir}, ir_files, plan_in_dir, error) ||
        !mlir::check_ir_files(ir_files, plan::to_json(planned.result, model, planned.options), {}, check, error)) {
      std::fprintf(stderr, "shardlens report: --ir: %s\n", error.c_str());
      return 1;
    }
    ir_section = mlir::to_markdown(check);
  }
  if (output == "-") {
    ro.chart_href.clear();
    std::cout << report::report_markdown(model, planned.result, planned.options, ro) << ir_section;
    return 0;
  }
  auto files = report::write_report(model, planned.result, planned.options, ro, output);
  if (!files.ok) {
    std::fprintf(stderr, "shardlens report: %s\n", files.error.c_str());
    return 1;
  }
  if (!ir_section.empty()) {
    std::ofstream md(files.markdown_path, std::ios::app | std::ios::binary);
    if (!md || !(md << ir_section)) {
      std::fprintf(stderr, "shardlens report: could not add the IR section to %s\n", files.markdown_path.c_str());
      return 1;
    }
  }
  std::cout << files.markdown_path << "\n" << files.chart_path << "\n";
  return 0;
}

}  // namespace shardlens::cli
