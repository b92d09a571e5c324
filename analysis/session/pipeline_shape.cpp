#include "session/pipeline_shape.h"

#include <filesystem>

#include "plan/model_kind.h"
#include "plan/plan_output.h"
#include "session/document_analysis.h"

namespace shardlens::session {

bool pipeline_members(const nlohmann::json& pyproject, const std::string& folder, std::vector<PipelineMember>& out, std::string& error) {
  auto it = pyproject.find("pipeline");
  if (it == pyproject.end() || !it->is_array() || it->empty()) {
    error = "no pipeline declared (one [[tool.shardlens.pipeline]] table per model, each with file = \"...\")";
    return false;
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& e = (*it)[i];
    auto bad = [&](const std::string& why) {
      error = "pipeline entry " + std::to_string(i + 1) + ": " + why;
      return false;
    };
    PipelineMember m;
    if (!e.is_object() || !e.contains("file") || !e["file"].is_string()) return bad("needs file = \"path/to/model.py\"");
    m.file = (std::filesystem::path(folder) / e["file"].get<std::string>()).lexically_normal().string();
    for (const char* key : {"model", "phase"})
      if (e.contains(key)) {
        if (!e[key].is_string()) return bad(std::string(key) + " must be a string");
        (std::string_view(key) == "model" ? m.model : m.phase) = e[key].get<std::string>();
      }
    if (!m.phase.empty() && m.phase != "prefill" && m.phase != "decode") return bad("phase must be prefill or decode");
    int64_t runs = 0;
    for (auto [key, field] : {std::pair<const char*, int64_t*>{"runs", &runs}, {"seq", &m.seq}, {"batch", &m.batch}})
      if (e.contains(key)) {
        if (!e[key].is_number_integer() || e[key].get<int64_t>() <= 0) return bad(std::string(key) + " must be a positive integer");
        *field = e[key].get<int64_t>();
      }
    m.runs = static_cast<int>(std::min<int64_t>(runs, 1 << 20));
    out.push_back(std::move(m));
  }
  return true;
}

std::string SharedShape::note_for(const std::string& file) const {
  if (!ok) return "";
  const auto& slow = models[static_cast<size_t>(choice.slowest)];
  std::string base = std::filesystem::path(slow.file).filename().string();
  return "pipeline of " + std::to_string(models.size()) + " models (pyproject.toml) on " + std::to_string(candidates.front().devices()) +
         " devices: this model is planned on the shared mesh " + shape() + ", set by " +
         (slow.file == file ? "this model, the slowest" : base + " (" + slow.name + "), the slowest") + ": " + choice.why;
}

SharedShape plan_shared_shape(const std::vector<PipelineMember>& members, const Settings& base, int devices) {
  SharedShape out;
  out.candidates = plan::candidate_shapes(devices);
  if (out.candidates.empty()) {
    out.error = "no mesh shape has " + std::to_string(devices) + " devices";
    return out;
  }
  for (const auto& member : members) {
    Settings s = base;
    s.meshes.clear();
    for (auto& m : out.candidates) s.meshes.push_back(m.shape_string());
    s.meshes_independent = true;
    s.pipeline_note.clear();
    s.model = member.model;
    if (!member.phase.empty()) {
      s.phase = member.phase;
      s.phase_set = true;
    }
    if (member.seq > 0) {
      s.seq = member.seq;
      s.seq_set = true;
    }
    if (member.batch > 0) s.batch = member.batch;
    plan::PipelineModel m;
    m.file = member.file;
    std::string text, error;
    std::shared_ptr<const DocumentAnalysis> a;
    if (read_script(member.file, text, error)) {
      DocumentAnalyzer analyzer;
      a = analyzer.analyze(1, member.file, text, {}, true, s);
    }
    const bool planned = a && a->extracted && a->plan.ok && a->plan.meshes.size() == out.candidates.size();
    m.name = planned && !a->model().modules.empty() ? a->model().modules[0].class_name : "?";
    m.runs = member.runs > 0 ? member.runs : planned ? plan::default_runs(plan::default_workload(a->model()).kind, m.runs_why) : 1;
    for (size_t k = 0; k < out.candidates.size(); ++k) {
      if (planned) {
        m.shapes.push_back(plan::shape_figures(a->plan.meshes[k], a->plan.diagnostics, !a->model().parameters.empty(), m.runs));
        continue;
      }
      plan::PipelineShapeFigures f;
      f.mesh = out.candidates[k];
      f.blocker = error.empty() ? (a ? (a->error.empty() ? "the model could not be planned" : a->error) : "not analysed") : error;
      m.shapes.push_back(std::move(f));
    }
    out.models.push_back(std::move(m));
  }
  out.choice = plan::choose_pipeline_shape(out.models);
  out.ok = out.choice.shape >= 0;
  if (!out.ok) out.error = out.choice.why;
  return out;
}

}  // namespace shardlens::session
