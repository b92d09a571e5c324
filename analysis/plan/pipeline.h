// A pipeline of models (text encoder → diffusion transformer → VAE decoder; speech encoder → LM)
// shares one mesh shape (SHARDING.md §1; the Tenstorrent skill's "one mesh shape per pipeline"):
// the shape best for the slowest model, unless some model cannot run under it; then the best
// shape every model supports. This is the choice alone, over figures the planner made per model
// and shape, so that it is the same for the CLI, the report and the server.
#pragma once

#include <string>
#include <vector>

#include "plan/model_kind.h"
#include "plan/plan.h"
#include "plan/target.h"

namespace shardlens::plan {

// The mesh shapes `devices` chips can be arranged in: every rows x cols factorisation with more
// than one column (a single column leaves nothing to split a model over), the system's usual
// shape first (SHARDING.md §2: 1xN up to 8 chips, 8x4 for 32), with the topology that shape has.
std::vector<Mesh> candidate_shapes(int devices);

// Why a model cannot run under a mesh as planned ("" when it can): its attention heads (or key /
// value heads) do not divide the mesh's model axis (tt-mlir has no uneven sharding, SHARDING.md
// §6), or no layout fits in device DRAM.
std::string shape_blocker(const MeshPlan& mesh_plan, const std::vector<Diagnostic>& diagnostics);

struct PipelineShapeFigures {
  Mesh mesh;
  bool planned = false;      // false: the planner gave no plan for this shape
  double est_time_us = 0;    // per forward
  double per_request_us = 0; // est_time_us x the model's forwards per request
  int collectives = 0;       // per forward
  std::string blocker;       // why it cannot run under this shape ("" when it can)
  bool feasible() const { return planned && blocker.empty(); }
};

// A model's figures on one candidate shape, from its plan there: the time per request is the
// estimate per forward times `runs`; a shape with no plan (no layout satisfies the constraints) or
// one the model cannot run under (shape_blocker) is not feasible.
PipelineShapeFigures shape_figures(const MeshPlan& mesh_plan, const std::vector<Diagnostic>& diagnostics, bool model_has_parameters, int runs);

struct PipelineModel {
  std::string file;
  std::string name;          // the model's class
  int runs = 1;              // forwards per request (denoising steps for a DiT)
  std::string runs_why;      // where `runs` comes from
  std::vector<PipelineShapeFigures> shapes;  // in candidate order
};

struct PipelineChoice {
  int shape = -1;            // index into the candidates; -1 when no model was planned on any shape
  int slowest = -1;          // the model whose time per request sets the choice
  int best_for_slowest = -1; // the shape fastest for that model
  bool fallback = false;     // the shape best for the slowest model could not run every model
  bool every_model_runs = true;
  std::string why;           // one paragraph: the choice and its reason
};

PipelineChoice choose_pipeline_shape(const std::vector<PipelineModel>& models);

// Forwards per request when the user gives none: a diffusion transformer denoises once per step
// (diffusers' StableDiffusionPipeline and WanPipeline default to num_inference_steps=50); every
// other model runs once. `why` says so.
int default_runs(ModelKind kind, std::string& why);

}  // namespace shardlens::plan
