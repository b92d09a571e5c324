#include "ir_check_command.h"

#include "mlir/ir_check.h"

namespace shardlens::server {

IrCheckAnswer check_ir_folder(const nlohmann::json& plan, const std::string& folder, const std::string& mesh) {
  IrCheckAnswer a;
  std::vector<std::string> files;
  std::string plan_in_dir;
  if (!mlir::collect_ir_files({folder}, files, plan_in_dir, a.error)) return a;
  mlir::CheckOptions options;
  options.mesh = mesh;
  mlir::CheckReport report;
  if (!mlir::check_ir_files(files, plan, options, report, a.error)) return a;
  if (!report.error.empty()) {
    a.error = report.error;
    return a;
  }
  a.ok = true;
  a.report = mlir::to_json(report);
  // A mismatch without a place in the script (the IR gave it no loc()) goes on the model's line.
  int fallback = 0;
  if (plan.contains("meshes") && !plan["meshes"].empty()) {
    const auto& components = plan["meshes"][0].value("components", nlohmann::json::array());
    if (!components.empty() && components[0].contains("span") && components[0]["span"].is_object())
      fallback = components[0]["span"].value("line", 1) - 1;
  }
  a.diagnostics = nlohmann::json::array();
  for (auto& f : report.files)
    for (auto& m : f.mismatches) {
      int line = m.source_line > 0 ? m.source_line - 1 : std::max(0, fallback);
      a.diagnostics.push_back({{"range", {{"start", {{"line", line}, {"character", 0}}}, {"end", {{"line", line + 1}, {"character", 0}}}}},
                               {"severity", 2},
                               {"source", "shardlens"},
                               {"code", "ir-" + m.kind},
                               {"message", "compiled IR: " + m.message + (m.ir_line ? " (" + m.file + ":" + std::to_string(m.ir_line) + ")" : "")}});
    }
  return a;
}

}  // namespace shardlens::server
