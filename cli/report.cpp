// `shardlens report FILE [--model EXPR] [--mesh RxC|PRESET ...] [plan's workload flags] [-o PATH]`:
// plans FILE as `shardlens plan` does and writes sharding_analysis.md with its SVG chart beside it.
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "pipeline.h"
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
    "       shardlens report FILE [--model EXPR] [--runs N] FILE ... [--devices N | --mesh ...] [-o PATH]\n"
    "       shardlens report --pipeline pyproject.toml [--devices N | --mesh ...] [-o PATH]\n"
    "  writes the sharding report (default sharding_analysis.md; a directory gets that name inside) and its\n"
    "  chart beside it (sharding_analysis.ccl_bytes.svg); -o - prints the Markdown instead (no chart).\n"
    "  --ir DIR adds a section comparing the compiler's exported MLIR in DIR with the plan (shardlens check-ir).\n"
    "  A pipeline (several FILEs, --devices or --pipeline; see `shardlens plan --help`): PATH holds the shared\n"
    "  shape and its table; each model's report on that shape is written beside it as PATH-stem.FILE-stem.md\n";

// A pipeline's report: the shared shape (the models x shapes table and the choice) in OUTPUT, and
// each model's own report on that shape beside it (OUTPUT's stem + "." + the model file's stem).
int write_pipeline_report(const PipelineArgs& pipeline, const PlanningArgs& planning, const std::string& regenerate,
                          const std::string& output) {
  PipelineRun run;
  if (int code = plan_pipeline("shardlens report", pipeline.entries, planning, pipeline.devices, run)) return code;
  const plan::Mesh& chosen = run.shapes[static_cast<size_t>(run.choice.shape)];
  std::ostringstream md;
  md << "# Sharding analysis: a pipeline of " << run.models.size() << " models\n\n"
     << "_Regenerate with:_ `" << regenerate << "`\n\n"
     << "## One mesh shape for the pipeline\n\n"
     << "Every model of a pipeline runs on the same devices in one mesh shape (SHARDING.md §1; the Tenstorrent sharding skill's "
        "\"one mesh shape per pipeline\"): the shape fastest for the slowest model, unless some model cannot run under it "
        "(heads that do not divide the model axis: tt-mlir has no uneven sharding); then the fastest shape for it that every "
        "model supports.\n\n"
     << "```text\n" << pipeline_table(run) << "```\n\n"
     << "**Chosen: " << chosen.shape_string() << (run.choice.fallback ? " (fallback)" : "") << ".** " << run.choice.why << ".\n\n"
     << "## The models on " << chosen.shape_string() << "\n\n";
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path out_path = output == "-"                  ? fs::path("sharding_analysis.md")
                            : fs::is_directory(output, ec) ? fs::path(output) / "sharding_analysis.md"
                                                           : fs::path(output);
  const bool to_stdout = output == "-";
  std::string models_md;
  std::set<std::string> used_stems;
  for (size_t i = 0; i < run.models.size(); ++i) {
    const auto& m = run.models[i];
    if (!run.planned[i]) {
      md << "- `" << m.file << "`: could not be planned\n";
      continue;
    }
    report::ReportOptions ro;
    ro.script_path = m.file;
    ro.regenerate = "shardlens report " + shell_word(m.file) + (pipeline.entries[i].model.empty() ? "" : " --model " + shell_word(pipeline.entries[i].model)) +
                    " --mesh " + chosen.shape_string();
    const auto& p = *run.planned[i];
    if (to_stdout) {
      ro.chart_href.clear();
      md << "- `" << m.file << "` (" << m.name << ", " << m.runs << " forward" << (m.runs == 1 ? "" : "s") << " per request): below\n";
      models_md += "\n---\n\n" + report::report_markdown(p.source.model, p.result, p.options, ro);
      continue;
    }
    std::string stem = fs::path(m.file).stem().string();
    if (!used_stems.insert(stem).second) stem += "." + std::to_string(i + 1);  // two models' files of one name
    const fs::path model_out = out_path.parent_path() / (out_path.stem().string() + "." + stem + ".md");
    auto files = report::write_report(p.source.model, p.result, p.options, ro, model_out.string());
    if (!files.ok) {
      std::fprintf(stderr, "shardlens report: %s\n", files.error.c_str());
      return 1;
    }
    md << "- `" << m.file << "` (" << m.name << ", " << m.runs << " forward" << (m.runs == 1 ? "" : "s") << " per request): ["
       << fs::path(files.markdown_path).filename().string() << "](" << fs::path(files.markdown_path).filename().string() << ")\n";
    std::cout << files.markdown_path << "\n" << files.chart_path << "\n";
  }
  if (to_stdout) {
    std::cout << md.str() << models_md;
    return run.failed ? 1 : 0;
  }
  std::ofstream f(out_path, std::ios::binary);
  if (!f || !(f << md.str())) {
    std::fprintf(stderr, "shardlens report: could not write %s\n", out_path.string().c_str());
    return 1;
  }
  std::cout << out_path.string() << "\n";
  return run.failed ? 1 : 0;
}

}  // namespace

int run_report(const std::vector<std::string>& args) {
  std::string file, output = "sharding_analysis.md", ir_dir;
  PlanningArgs planning;
  std::string regenerate = "shardlens report";
  FlagReader flags("shardlens report", kReportUsage, args);
  PipelineArgs pipeline;
  while (flags.next()) {
    bool cited = true;  // the regenerate line says where the report came from, not where it went
    if (!(flags.is("--model") && !pipeline.entries.empty()) && take_planning_flag(flags, planning)) {
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
    } else if (!take_pipeline_arg(flags, pipeline)) {
      flags.unknown();
    }
    if (cited)
      for (auto& a : flags.taken()) regenerate += " " + shell_word(a);
  }
  if (auto code = flags.exit_code()) return *code;
  if (int code = finish_pipeline_args("shardlens report", pipeline, planning, file)) return code;
  if (auto code = flags.finished(file)) return *code;
  if (pipeline.pipeline()) {
    if (!ir_dir.empty()) {
      std::fprintf(stderr, "shardlens report: --ir checks one model's compiled IR: give one FILE\n");
      return 2;
    }
    return write_pipeline_report(pipeline, planning, regenerate, output);
  }
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
