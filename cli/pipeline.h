// `shardlens plan A.py [--model E] [--runs N] B.py ... [--devices N | --mesh ...]` and
// `shardlens plan --pipeline pyproject.toml`: a pipeline of models planned on every candidate mesh
// shape and given one shape (plan/pipeline.h); `--devices N` with one FILE chooses its shape alone.
#pragma once

#include <string>
#include <vector>

#include "planning_flags.h"
#include "session/pipeline_shape.h"

namespace shardlens::cli {

// A FILE of the pipeline, with the --model / --runs given after it (or a pyproject.toml entry).
using PipelineEntry = session::PipelineMember;

// Reads `[[tool.shardlens.pipeline]]` entries from a pyproject.toml (files relative to its folder).
// False with a message on stderr when it has none or cannot be read.
bool read_pipeline_entries(const std::string& command, const std::string& toml_path, std::vector<PipelineEntry>& out);

// Plans the entries on `shapes` (the candidates) and prints the table, the shape chosen and each
// model's plan on it (text or JSON). Returns the exit status.
int run_pipeline(const std::string& command, std::vector<PipelineEntry> entries, const PlanningArgs& planning, int devices,
                 const std::string& format);

}  // namespace shardlens::cli
