#include "plan/pipeline.h"

#include <algorithm>

#include "plan/plan_output.h"

namespace shardlens::plan {

std::vector<Mesh> candidate_shapes(int devices) {
  std::vector<Mesh> shapes;
  if (devices <= 0) return shapes;
  std::string error;
  if (devices == 1) return {*parse_mesh("1x1", error)};
  // The usual shape first (SHARDING.md §2): it wins ties, so a pipeline that gains nothing from
  // another shape keeps the one its system is set up as.
  const std::string usual = devices == 32 ? "8x4" : "1x" + std::to_string(devices);
  shapes.push_back(*parse_mesh(usual, error));
  for (int rows = 1; rows <= devices; ++rows) {
    if (devices % rows != 0 || devices / rows < 2) continue;
    Mesh m = *parse_mesh(std::to_string(rows) + "x" + std::to_string(devices / rows), error);
    if (m.shape_string() != usual) shapes.push_back(m);
  }
  return shapes;
}

std::string shape_blocker(const MeshPlan& mesh_plan, const std::vector<Diagnostic>& diagnostics) {
  if (!mesh_plan.blockers.empty()) return mesh_plan.blockers.front();
  const std::string shape = mesh_plan.mesh.shape_string();
  for (const auto& d : diagnostics)
    if (d.code == "memory-does-not-fit" && (d.mesh.empty() || d.mesh == shape)) return "no layout fits in device DRAM";
  return "";
}

PipelineShapeFigures shape_figures(const MeshPlan& mesh_plan, const std::vector<Diagnostic>& diagnostics, bool model_has_parameters, int runs) {
  PipelineShapeFigures f;
  f.mesh = mesh_plan.mesh;
  f.planned = !mesh_plan.parameters.empty() || !model_has_parameters;
  f.est_time_us = mesh_plan.totals.est_time_us;
  f.per_request_us = f.est_time_us * runs;
  f.collectives = mesh_plan.totals.collectives;
  f.blocker = f.planned ? shape_blocker(mesh_plan, diagnostics) : "no layout satisfies the constraints";
  return f;
}

namespace {

// The candidate among `shapes` fastest for `model` (-1: none planned among them).
int fastest_for(const PipelineModel& model, const std::vector<int>& shapes) {
  int best = -1;
  for (int s : shapes) {
    const auto& f = model.shapes[static_cast<size_t>(s)];
    if (!f.planned) continue;
    if (best < 0 || f.per_request_us < model.shapes[static_cast<size_t>(best)].per_request_us) best = s;
  }
  return best;
}

}  // namespace

PipelineChoice choose_pipeline_shape(const std::vector<PipelineModel>& models) {
  PipelineChoice c;
  if (models.empty()) return c;
  const size_t n_shapes = models.front().shapes.size();
  std::vector<int> all(n_shapes);
  for (size_t s = 0; s < n_shapes; ++s) all[s] = static_cast<int>(s);
  // Each model's best time over the shapes it can run under; the slowest model is the one whose
  // best is largest (it bounds the pipeline's requests per second however the rest do).
  double slowest_us = -1;
  for (size_t m = 0; m < models.size(); ++m) {
    std::vector<int> runnable;
    for (int s : all)
      if (models[m].shapes[static_cast<size_t>(s)].feasible()) runnable.push_back(s);
    int best = fastest_for(models[m], runnable.empty() ? all : runnable);
    if (best < 0) continue;
    double us = models[m].shapes[static_cast<size_t>(best)].per_request_us;
    if (us > slowest_us) {
      slowest_us = us;
      c.slowest = static_cast<int>(m);
      c.best_for_slowest = best;
    }
  }
  if (c.slowest < 0) {
    c.why = "no model could be planned on any candidate shape";
    return c;
  }
  const PipelineModel& slow = models[static_cast<size_t>(c.slowest)];
  auto shape_name = [&](int s) { return slow.shapes[static_cast<size_t>(s)].mesh.shape_string(); };
  auto who = [&](const PipelineModel& m) { return m.file + " (" + m.name + ")"; };
  auto blocked_here = [&](int s) {
    std::vector<std::string> out;
    for (const auto& m : models) {
      const auto& f = m.shapes[static_cast<size_t>(s)];
      if (!f.feasible()) out.push_back(who(m) + ": " + (f.planned ? f.blocker : "not planned"));
    }
    return out;
  };
  auto join = [](const std::vector<std::string>& parts) {
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
    return s;
  };
  const auto blocked_best = blocked_here(c.best_for_slowest);
  if (blocked_best.empty()) {
    c.shape = c.best_for_slowest;
    c.why = shape_name(c.shape) + " is the fastest shape for the slowest model, " + who(slow) + " (" +
            format_us(slow.shapes[static_cast<size_t>(c.shape)].per_request_us) + " per request), and every model runs under it";
    return c;
  }
  // Fallback: the shapes every model supports; the one best for the slowest model among them.
  c.fallback = true;
  std::vector<int> shared;
  for (int s : all)
    if (blocked_here(s).empty()) shared.push_back(s);
  if (!shared.empty()) {
    c.shape = fastest_for(slow, shared);
    c.why = shape_name(c.best_for_slowest) + " is the fastest shape for the slowest model, " + who(slow) + ", but not every model runs under it (" +
            join(blocked_best) + "); " + shape_name(c.shape) + " is the fastest shape for it that every model supports (" +
            format_us(slow.shapes[static_cast<size_t>(c.shape)].per_request_us) + " per request instead of " +
            format_us(slow.shapes[static_cast<size_t>(c.best_for_slowest)].per_request_us) + ")";
    return c;
  }
  // No shape runs every model: the one that runs the most, then the fastest for the slowest model.
  c.every_model_runs = false;
  size_t fewest = models.size() + 1;
  for (int s : all) {
    const size_t blocked = blocked_here(s).size();
    const auto& f = slow.shapes[static_cast<size_t>(s)];
    if (blocked < fewest || (blocked == fewest && f.planned && f.per_request_us < slow.shapes[static_cast<size_t>(c.shape)].per_request_us)) {
      fewest = blocked;
      c.shape = s;
    }
  }
  c.why = "no candidate shape runs every model; " + shape_name(c.shape) + " runs the most (" + join(blocked_here(c.shape)) +
          " cannot run under it: pad its heads or plan it on devices of its own)";
  return c;
}

int default_runs(ModelKind kind, std::string& why) {
  if (kind == ModelKind::DiffusionTransformer) {
    why = "50 denoising steps (diffusers' StableDiffusionPipeline and WanPipeline default num_inference_steps=50; --runs N to change)";
    return 50;
  }
  why = "one forward per request (--runs N to change)";
  return 1;
}

}  // namespace shardlens::plan
