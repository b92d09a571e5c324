#include "pipeline.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "plan/model_kind.h"
#include "plan/pipeline.h"
#include "plan/plan_output.h"
#include "session/plan_choices.h"
#include "settings.h"

namespace shardlens::cli {

bool read_pipeline_entries(const std::string& command, const std::string& toml_path, std::vector<PipelineEntry>& out) {
  auto text = read_input(command, toml_path);
  if (!text) return false;
  std::vector<std::string> problems;
  nlohmann::json settings = server::read_pyproject_settings(*text, problems);
  for (auto& p : problems) std::fprintf(stderr, "%s: %s: %s\n", command.c_str(), toml_path.c_str(), p.c_str());
  std::string error;
  if (session::pipeline_members(settings, std::filesystem::path(toml_path).parent_path().string(), out, error)) return true;
  std::fprintf(stderr, "%s: %s: %s\n", command.c_str(), toml_path.c_str(), error.c_str());
  return false;
}

bool take_pipeline_arg(FlagReader& flags, PipelineArgs& out) {
  if (flags.is("--model") && !out.entries.empty()) {
    if (auto v = flags.value()) out.entries.back().model = *v;
  } else if (flags.is("--runs")) {
    if (out.entries.empty()) flags.fail("--runs follows the FILE it is for");
    else if (auto n = flags.positive()) out.entries.back().runs = static_cast<int>(std::min<int64_t>(*n, 1 << 20));
  } else if (flags.is("--devices")) {
    if (auto n = flags.positive()) out.devices = static_cast<int>(std::min<int64_t>(*n, 1 << 20));
    if (out.devices > 4096) flags.fail("--devices must be at most 4096");
  } else if (flags.is("--pipeline")) {
    if (auto v = flags.value()) out.toml = *v;
  } else if (!flags.option()) {
    PipelineEntry entry;
    entry.file = flags.name();
    out.entries.push_back(std::move(entry));
  } else {
    return false;
  }
  return true;
}

int finish_pipeline_args(const std::string& command, PipelineArgs& args, PlanningArgs& planning, std::string& file) {
  if (!args.entries.empty()) {
    file = args.entries.front().file;
    if (!args.entries.front().model.empty()) planning.model_expr = args.entries.front().model;
  } else if (!args.toml.empty()) {
    file = args.toml;
  }
  if (!args.toml.empty()) {
    if (!args.entries.empty()) {
      std::fprintf(stderr, "%s: --pipeline names the models itself: give no FILE with it\n", command.c_str());
      return 2;
    }
    if (!read_pipeline_entries(command, args.toml, args.entries)) return 1;
  }
  if (!args.pipeline()) {
    if (!args.entries.empty() && args.entries.front().runs > 0) {
      std::fprintf(stderr, "%s: --runs counts a model's forwards per request in a pipeline: give several FILEs or --devices N\n", command.c_str());
      return 2;
    }
    return 0;
  }
  if (args.devices > 0 && !planning.options.meshes.empty()) {
    std::fprintf(stderr, "%s: give --devices N (every shape of N devices) or --mesh (those shapes), not both\n", command.c_str());
    return 2;
  }
  if (args.entries.size() == 1 && args.entries.front().model.empty()) args.entries.front().model = planning.model_expr;
  planning.model_expr.clear();
  return 0;
}

namespace {

// `result` and `options` reduced to one mesh (and the diagnostics raised for it or for all).
void keep_one_mesh(plan::PlanResult& result, plan::PlanOptions& options, size_t mesh) {
  const std::string shape = result.meshes[mesh].mesh.shape_string();
  plan::MeshPlan kept = std::move(result.meshes[mesh]);
  result.meshes.clear();
  result.meshes.push_back(std::move(kept));
  options.meshes = {options.meshes[mesh]};
  if (options.pinned_parameters_per_mesh.size() > mesh)
    options.pinned_parameters_per_mesh = {options.pinned_parameters_per_mesh[mesh]};
  std::vector<plan::Diagnostic> diagnostics;
  for (auto& d : result.diagnostics)
    if (d.mesh.empty() || d.mesh == shape) diagnostics.push_back(std::move(d));
  result.diagnostics = std::move(diagnostics);
}

}  // namespace

int plan_pipeline(const std::string& command, const std::vector<PipelineEntry>& entries, const PlanningArgs& planning, int devices,
                  PipelineRun& run) {
  std::vector<plan::Mesh>& shapes = run.shapes;
  std::vector<std::unique_ptr<PlannedScript>>& planned = run.planned;
  std::vector<plan::PipelineModel>& models = run.models;
  int& failed = run.failed;
  // The candidates: the shapes of --devices N, else the meshes given, else a T3K's 8 chips.
  if (devices > 0) shapes = plan::candidate_shapes(devices);
  else if (!planning.options.meshes.empty()) shapes = planning.options.meshes;
  else shapes = plan::candidate_shapes(8);
  for (size_t i = 0; i < shapes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (shapes[j].shape_string() == shapes[i].shape_string()) {
        std::fprintf(stderr, "%s: mesh %s is given twice\n", command.c_str(), shapes[i].shape_string().c_str());
        return 2;
      }
  for (auto& entry : entries) {
    PlanningArgs p = planning;
    if (!entry.model.empty()) p.model_expr = entry.model;
    p.options.meshes = shapes;
    p.options.meshes_independent = true;
    if (!entry.phase.empty()) {
      session::apply_choice(p.options, session::PlanChoice::Phase, entry.phase);
      p.phase_given = true;
    }
    if (entry.seq > 0) {
      p.options.workload.seq = entry.seq;
      p.seq_given = true;
    }
    if (entry.batch > 0) p.options.workload.batch = entry.batch;
    finish_planning_args(p);
    auto script = std::make_unique<PlannedScript>();
    plan::PipelineModel m;
    m.file = entry.file;
    if (plan_script(command, entry.file, p, *script) != 0) {
      ++failed;
      m.name = "?";
      for (auto& s : shapes) m.shapes.push_back({s, false, 0, 0, 0, "the model could not be planned"});
      script.reset();
    } else {
      m.name = script->source.model.modules.empty() ? "?" : script->source.model.modules[0].class_name;
      m.runs = entry.runs > 0 ? entry.runs : plan::default_runs(script->workload.kind.kind, m.runs_why);
      if (entry.runs > 0) m.runs_why = "given";
      for (size_t s = 0; s < shapes.size(); ++s) {
        m.shapes.push_back(plan::shape_figures(script->result.meshes[s], script->result.diagnostics, !script->source.model.parameters.empty(), m.runs));
      }
    }
    models.push_back(std::move(m));
    planned.push_back(std::move(script));
  }
  run.choice = plan::choose_pipeline_shape(models);
  const plan::PipelineChoice& choice = run.choice;
  if (choice.shape < 0) {
    std::fprintf(stderr, "%s: %s\n", command.c_str(), choice.why.c_str());
    return 1;
  }
  for (auto& script : planned)
    if (script) keep_one_mesh(script->result, script->options, static_cast<size_t>(choice.shape));

  return 0;
}

std::string pipeline_table(const PipelineRun& run) {
  const auto& shapes = run.shapes;
  const auto& models = run.models;
  const auto& choice = run.choice;
  const plan::Mesh& chosen = shapes[static_cast<size_t>(choice.shape)];
  std::ostringstream os;
  os << "pipeline: " << models.size() << " model" << (models.size() == 1 ? "" : "s") << " on " << shapes.front().devices()
     << " devices; candidate shapes";
  for (auto& s : shapes) os << " " << s.shape_string();
  os << " (time per request = estimate per forward x forwards per request)\n";
  size_t width = 5;
  std::vector<std::string> labels;
  for (auto& m : models) {
    labels.push_back(m.file + " " + m.name + " x" + std::to_string(m.runs));
    width = std::max(width, labels.back().size());
  }
  auto pad = [](std::string s, size_t w) { return s.size() < w ? s + std::string(w - s.size(), ' ') : s + " "; };
  os << "  " << pad("model", width + 2);
  for (auto& s : shapes) os << pad(s.shape_string() + (&s == &chosen ? " (chosen)" : ""), 16);
  os << "\n";
  std::vector<std::string> footnotes;
  for (size_t i = 0; i < models.size(); ++i) {
    os << "  " << pad(labels[i], width + 2);
    for (auto& f : models[i].shapes) {
      std::string cell = f.planned ? plan::format_us(f.per_request_us) : "-";
      if (!f.feasible()) {
        footnotes.push_back(models[i].file + " on " + f.mesh.shape_string() + ": " + f.blocker);
        cell += " [" + std::to_string(footnotes.size()) + "]";
      }
      os << pad(cell, 16);
    }
    os << "\n";
  }
  for (size_t k = 0; k < footnotes.size(); ++k) os << "  [" << k + 1 << "] cannot run: " << footnotes[k] << "\n";
  for (auto& m : models)
    if (m.runs != 1 && m.runs_why != "given") os << "  " << m.file << ": " << m.runs_why << "\n";
  os << "shape: " << chosen.shape_string() << (choice.fallback ? " (fallback)" : "") << " — " << choice.why << "\n";
  return os.str();
}

int run_pipeline(const std::string& command, std::vector<PipelineEntry> entries, const PlanningArgs& planning, int devices,
                 const std::string& format) {
  PipelineRun run;
  if (int code = plan_pipeline(command, entries, planning, devices, run)) return code;
  const auto& shapes = run.shapes;
  const auto& models = run.models;
  const auto& planned = run.planned;
  const auto& choice = run.choice;
  const int failed = run.failed;
  const plan::Mesh& chosen = shapes[static_cast<size_t>(choice.shape)];
  if (format == "json") {
    nlohmann::json table = nlohmann::json::array();
    for (auto& m : models)
      for (auto& f : m.shapes)
        table.push_back({{"file", m.file},
                         {"model", m.name},
                         {"shape", {f.mesh.rows, f.mesh.cols}},
                         {"runs", m.runs},
                         {"est_time_us", f.est_time_us},
                         {"per_request_us", f.per_request_us},
                         {"collectives", f.collectives},
                         {"feasible", f.feasible()},
                         {"why", f.feasible() ? "" : f.blocker}});
    nlohmann::json candidates = nlohmann::json::array();
    for (auto& s : shapes) candidates.push_back({s.rows, s.cols});
    nlohmann::json out;
    out["pipeline"] = {{"devices", shapes.front().devices()},
                       {"candidates", candidates},
                       {"shape", {chosen.rows, chosen.cols}},
                       {"slowest", models[static_cast<size_t>(choice.slowest)].file},
                       {"best_for_slowest", {shapes[static_cast<size_t>(choice.best_for_slowest)].rows,
                                             shapes[static_cast<size_t>(choice.best_for_slowest)].cols}},
                       {"fallback", choice.fallback},
                       {"every_model_runs", choice.every_model_runs},
                       {"why", choice.why},
                       {"table", table}};
    out["models"] = nlohmann::json::array();
    for (size_t i = 0; i < models.size(); ++i) {
      nlohmann::json j;
      if (planned[i]) {
        j = plan::to_json(planned[i]->result, planned[i]->source.model, planned[i]->options);
        describe_workload(planned[i]->workload, j);
      } else {
        j["error"] = "the model could not be planned";
      }
      j["file"] = models[i].file;
      j["runs"] = models[i].runs;
      j["runs_why"] = models[i].runs_why;
      out["models"].push_back(std::move(j));
    }
    std::cout << out.dump(2) << "\n";
    return failed ? 1 : 0;
  }
  // Text: models x shapes, the choice, then each model's plan on the chosen shape.
  std::cout << pipeline_table(run);
  for (size_t i = 0; i < models.size(); ++i) {
    if (!planned[i]) continue;
    std::cout << "\n== " << models[i].file << " on " << chosen.shape_string() << " ==\n" << workload_line(planned[i]->workload)
              << plan::to_text(planned[i]->result, planned[i]->source.model, planned[i]->options);
  }
  return failed ? 1 : 0;
}

}  // namespace shardlens::cli
