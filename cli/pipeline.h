// `shardlens plan A.py [--model E] [--runs N] B.py ... [--devices N | --mesh ...]` and
// `shardlens plan --pipeline pyproject.toml`: a pipeline of models planned on every candidate mesh
// shape and given one shape (plan/pipeline.h); `--devices N` with one FILE chooses its shape alone.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "planning_flags.h"
#include "plan/pipeline.h"
#include "session/pipeline_shape.h"

namespace shardlens::cli {

// A FILE of the pipeline, with the --model / --runs given after it (or a pyproject.toml entry).
using PipelineEntry = session::PipelineMember;

// The FILEs of a planning command and the flags that make them a pipeline, as `plan` and `report`
// read them: every FILE, --model / --runs after a FILE (that FILE's), --devices N, --pipeline TOML.
struct PipelineArgs {
  std::vector<PipelineEntry> entries;
  int devices = 0;
  std::string toml;
  // The command plans a pipeline (several FILEs, --devices or --pipeline), not one model.
  bool pipeline() const { return entries.size() > 1 || devices > 0 || !toml.empty(); }
};
// Takes the reader's current argument when it is one of these (or a FILE): true then.
bool take_pipeline_arg(FlagReader& flags, PipelineArgs& out);
// After the loop: the first FILE (or the pyproject.toml) for FlagReader::finished, the first
// FILE's --model into `planning`; with --pipeline, the entries read from it. 0, or the exit status
// after a message.
int finish_pipeline_args(const std::string& command, PipelineArgs& args, PlanningArgs& planning, std::string& file);

// Reads `[[tool.shardlens.pipeline]]` entries from a pyproject.toml (files relative to its folder).
// False with a message on stderr when it has none or cannot be read.
bool read_pipeline_entries(const std::string& command, const std::string& toml_path, std::vector<PipelineEntry>& out);

// A pipeline planned: the candidate shapes, each model's figures on them, the choice, and each
// model's plan reduced to the chosen shape (null where the model could not be planned).
struct PipelineRun {
  std::vector<plan::Mesh> shapes;
  std::vector<plan::PipelineModel> models;
  std::vector<std::unique_ptr<PlannedScript>> planned;  // each plan keeps pointers into its model
  plan::PipelineChoice choice;
  int failed = 0;
};
// Plans the entries on every candidate shape (those of `devices`, else the meshes `planning` gives,
// else 8 devices') and chooses one. 0, or the exit status after a message on stderr.
int plan_pipeline(const std::string& command, const std::vector<PipelineEntry>& entries, const PlanningArgs& planning, int devices,
                  PipelineRun& run);
// The models x shapes table, its footnotes and the choice, as `plan` prints them.
std::string pipeline_table(const PipelineRun& run);

// Plans the entries and prints the table, the shape chosen and each model's plan on it (text or
// JSON). Returns the exit status.
int run_pipeline(const std::string& command, std::vector<PipelineEntry> entries, const PlanningArgs& planning, int devices,
                 const std::string& format);

}  // namespace shardlens::cli
