// `shardlens check-ir IR_FILE|DIR ... --plan PLAN.json [--mesh RxC] [--format text|json]`: compares the
// collectives and weight shardings in tt-xla's exported MLIR with a plan. Exit 0 when they match, 3
// with each mismatch, 1 when a file cannot be read, 2 on usage errors.
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "flags.h"
#include "cli_ir.h"
#include "session/script_pipeline.h"
#include "mlir/ir_check.h"

namespace shardlens::cli {
namespace {

const char* kCheckIrUsage =
    "usage: shardlens check-ir IR_FILE|DIR ... --plan PLAN.json [--mesh RxC] [--format text|json]\n"
    "  IR_FILE: MLIR text as tt-xla exports it (StableHLO/Shardy, TTIR or TTNN); DIR: every *.mlir in it.\n"
    "  PLAN.json: `shardlens plan --format json` (in DIR, plan.json is used when --plan is not given).\n"
    "  exit: 0 the IR matches the plan; 3 mismatches (missing, extra, other_kind, other_size,\n"
    "  weight_sharding), each with where; 1 a file cannot be read; 2 usage.\n";

}  // namespace

int run_check_ir(const std::vector<std::string>& args) {
  std::vector<std::string> inputs;
  std::string plan_path, format = "text";
  mlir::CheckOptions options;
  FlagReader flags("shardlens check-ir", kCheckIrUsage, args);
  while (flags.next()) {
    if (flags.format(format)) continue;
    if (flags.is("--plan") || flags.is("--mesh")) {
      auto v = flags.value();
      if (!v) break;
      (flags.is("--plan") ? plan_path : options.mesh) = *v;
    } else if (flags.option()) {
      flags.unknown();
    } else {
      inputs.push_back(flags.name());
    }
  }
  if (auto code = flags.exit_code()) return *code;
  if (inputs.empty()) {
    std::fprintf(stderr, "shardlens check-ir: no IR file given\n%s", kCheckIrUsage);
    return 2;
  }
  std::vector<std::string> files;
  std::string plan_in_dir, error;
  if (!mlir::collect_ir_files(inputs, files, plan_in_dir, error)) {
    std::fprintf(stderr, "shardlens check-ir: %s\n", error.c_str());
    return 1;
  }
  if (plan_path.empty()) plan_path = plan_in_dir;
  if (plan_path.empty()) {
    std::fprintf(stderr, "shardlens check-ir: --plan PLAN.json is needed (the JSON of `shardlens plan --format json`)\n%s", kCheckIrUsage);
    return 2;
  }
  std::string plan_text;
  if (!session::read_file(plan_path, plan_text, error)) {
    std::fprintf(stderr, "shardlens check-ir: %s\n", error.c_str());
    return 1;
  }
  nlohmann::json plan = nlohmann::json::parse(plan_text, nullptr, false);
  if (plan.is_discarded()) {
    std::fprintf(stderr, "shardlens check-ir: '%s' is not JSON (expected `shardlens plan --format json` output)\n", plan_path.c_str());
    return 1;
  }
  mlir::CheckReport report;
  if (!mlir::check_ir_files(files, plan, options, report, error)) {
    std::fprintf(stderr, "shardlens check-ir: %s\n", error.c_str());
    return 1;
  }
  if (!report.error.empty()) {
    std::fprintf(stderr, "shardlens check-ir: %s: %s\n", plan_path.c_str(), report.error.c_str());
    return 1;
  }
  if (format == "json") std::cout << mlir::to_json(report).dump(2) << "\n";
  else std::cout << mlir::to_text(report);
  return report.matches() ? 0 : 3;
}

}  // namespace shardlens::cli
