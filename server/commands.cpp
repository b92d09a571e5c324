// workspace/executeCommand: re-planning with a chosen strategy, the report, check-ir, and the
// TorchScript export the user allows.
#include "server.h"

#include <fstream>
#include <iterator>

#include "ir_check_command.h"
#include "plan/plan_output.h"
#include "report/report.h"
#include "torch/export_runner.h"

namespace shardlens::server {

void Server::execute_command(const protocol::Incoming& in) {
  std::string command = get_string(in.params, "command", "executeCommand");
  json args = in.params.value("arguments", json::array());
  if (!args.is_array()) throw RpcError{ec::kInvalidParams, "arguments must be an array"};
  if (command == "shardlens.setMeshes") {
    if (args.empty()) throw RpcError{ec::kInvalidParams, "shardlens.setMeshes takes [[\"1x8\", ...]]"};
    json meshes = args[0].is_string() ? json::array({args[0]}) : args[0];
    Settings probe;
    std::vector<std::string> problems;
    probe.apply({{"meshes", meshes}}, problems);
    if (!problems.empty()) throw RpcError{ec::kInvalidParams, problems[0]};
    command_settings_["meshes"] = meshes;
    settings_changed();
    return reply(in.id, {{"meshes", meshes}});
  }
  if (command == "shardlens.insertAnnotations" || command == "shardlens.insertLoadShardSpec" || command == "shardlens.showPlan" ||
      command == "shardlens.generateReport" || command == "shardlens.exportGraph" || command == "shardlens.checkIr") {
    if (args.empty() || !(args[0].is_string() || (args[0].is_object() && args[0].contains("uri"))))
      throw RpcError{ec::kInvalidParams, command + " takes [uri]"};
    std::string uri = args[0].is_string() ? args[0].get<std::string>() : args[0]["uri"].get<std::string>();
    Document& doc = document_by_uri(uri);
    return answer_or_park(doc, {in.id, "workspace/executeCommand", in.params});
  }
  throw RpcError{ec::kInvalidParams, "unknown command '" + command + "'"};
}

void Server::run_command(Document& doc, const ParkedRequest& r) {
  std::string command = r.params["command"].get<std::string>();
  const DocumentAnalysis& a = *doc.analysis;
  if (command == "shardlens.showPlan") {
    if (!a.plan.ok) throw RpcError{ec::kRequestFailed, a.error.empty() ? "no plan for this document" : a.error};
    return reply(r.id, plan::to_json(a.plan, a.model(), a.options));
  }
  if (command == "shardlens.generateReport") return generate_report(doc, r);
  if (command == "shardlens.exportGraph") return export_graph(doc, r);
  if (command == "shardlens.checkIr") return check_ir(doc, r);
  std::string kind = command == "shardlens.insertAnnotations" ? "source.shardlens.insertAnnotations" : "source.shardlens.insertLoadShardSpec";
  std::string error;
  auto edit = source_action_edit(a, doc.uri, kind, encoding_, error);
  if (!edit) throw RpcError{ec::kRequestFailed, error};
  if (!client_apply_edit_) throw RpcError{ec::kRequestFailed, "the client does not support workspace/applyEdit"};
  json id = r.id;
  request("workspace/applyEdit", {{"label", command == "shardlens.insertAnnotations" ? "Insert Shardy annotations (tt-xla)" : "Insert load_shard_spec()"},
                                  {"edit", *edit}},
          [this, id](const json& result, bool error) {
            bool applied = !error && result.is_object() && result.value("applied", false);
            reply(id, {{"applied", applied}});
          });
}

void Server::generate_report(Document& doc, const ParkedRequest& r) {
  std::shared_ptr<const DocumentAnalysis> a = doc.analysis;
  if (!a->plan.ok) throw RpcError{ec::kRequestFailed, a->error.empty() ? "no plan for this document" : a->error};
  const json& args = r.params["arguments"];
  std::string output;
  if (args.size() > 1 && args[1].is_string()) output = args[1].get<std::string>();
  else if (args.size() > 1 && args[1].is_object() && args[1].contains("output") && args[1]["output"].is_string())
    output = args[1]["output"].get<std::string>();
  std::string script = doc.path;
  if (output.empty()) {
    if (script.empty()) throw RpcError{ec::kInvalidParams, "the document has no file path: give an output path as the second argument"};
    output = (std::filesystem::path(script).parent_path() / "sharding_analysis.md").string();
  }
  json id = r.id;
  worker_.submit_task([this, a, script, output, id]() -> std::function<void()> {
    auto files = report::write_report(a->model(), a->plan, a->options, script.empty() ? a->model().source : script, output);
    return [this, files, id]() {
      if (!files.ok) return reply_error(id, ec::kRequestFailed, "could not write the report: " + files.error);
      std::error_code err;
      std::string path = std::filesystem::absolute(files.markdown_path, err).string();
      reply(id, {{"path", path}, {"uri", path_to_uri(path)}, {"chart", files.chart_path}});
    };
  });
}

void Server::check_ir(Document& doc, const ParkedRequest& r) {
  std::shared_ptr<const DocumentAnalysis> a = doc.analysis;
  if (!a->plan.ok) throw RpcError{ec::kRequestFailed, a->error.empty() ? "no plan for this document" : a->error};
  const json& args = r.params["arguments"];
  std::string folder, mesh;
  if (args.size() > 1 && args[1].is_string()) folder = args[1].get<std::string>();
  else if (args.size() > 1 && args[1].is_object()) {
    folder = args[1].value("folder", "");
    mesh = args[1].value("mesh", "");
  }
  if (folder.empty()) throw RpcError{ec::kInvalidParams, "shardlens.checkIr takes [uri, folder] (the folder of the exported .mlir files)"};
  if (std::filesystem::path(folder).is_relative() && !doc.path.empty())
    folder = (std::filesystem::path(doc.path).parent_path() / folder).string();
  json id = r.id;
  std::string uri = doc.uri;
  int version = a->version;
  worker_.submit_task([this, a, folder, mesh, id, uri, version]() -> std::function<void()> {
    auto answer = server::check_ir_folder(plan::to_json(a->plan, a->model(), a->options), folder, mesh);
    return [this, answer, id, uri, version, a]() {
      if (!answer.ok) return reply_error(id, ec::kRequestFailed, "check-ir: " + answer.error);
      auto it = documents_.find(uri);
      if (it != documents_.end()) {
        it->second.ir_diagnostics = answer.diagnostics;
        it->second.ir_version = version;
        if (it->second.analysis == a) {
          json params = {{"uri", uri}, {"diagnostics", diagnostics_json(*a, encoding_)}, {"version", version}};
          for (auto& d : answer.diagnostics) params["diagnostics"].push_back(d);
          notify("textDocument/publishDiagnostics", params);
        }
      }
      json result = answer.report;
      result["diagnostics"] = answer.diagnostics;
      reply(id, result);
    };
  });
}

void Server::export_graph(Document& doc, const ParkedRequest& r) {
  Settings settings = effective_settings(doc);
  if (!settings.allow_execution)
    throw RpcError{ec::kRequestFailed,
                   "exporting runs your script with Python; set shardlens.allowExecution to true to allow it"};
  if (doc.path.empty()) throw RpcError{ec::kInvalidParams, "the document is not a file on disk"};
  torchgraph::ExportRequest request;
  request.script = doc.path;
  request.output = export_path_for(doc.path);
  request.model_expression = settings.model;
  request.python = settings.python;
  if (doc.analysis && !doc.analysis->model().root_expression.empty()) request.root_hints.push_back(doc.analysis->model().root_expression);
  json id = r.id;
  std::string uri = doc.uri;
  bool unsaved = doc.analysis && doc.analysis->text != read_disk(doc.path);
  worker_.submit_task([this, request, id, uri, unsaved]() -> std::function<void()> {
    auto result = torchgraph::run_export(request);
    return [this, result, request, id, uri, unsaved]() {
      if (!result.ok) return reply_error(id, ec::kRequestFailed, "export failed: " + result.message);
      json answer = {{"path", request.output}, {"method", result.result.value("method", "")}, {"python", result.python}};
      if (unsaved) answer["note"] = "the document has unsaved changes: the export is of the file on disk and is used once it is saved";
      reply(id, answer);
      exported_.insert(request.script);
      if (auto it = documents_.find(uri); it != documents_.end()) {
        it->second.submitted_version = -1;
        it->second.reset = true;
        schedule(it->second, 0);
      }
    };
  });
}

std::string Server::read_disk(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
}  // namespace shardlens::server
