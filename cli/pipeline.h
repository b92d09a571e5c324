// `shardlens plan A.py [--model E] [--runs N] B.py ... [--devices N | --mesh ...]` and
// `shardlens plan --pipeline pyproject.toml`: a pipeline of models planned on every candidate mesh
// shape and given one shape (plan/pipeline.h); `--devices N` with one FILE chooses its shape alone.
#pragma once

#include <string>
#include <vector>

#include "planning_flags.h"

namespace shardlens::cli {

struct PipelineEntry {
  std::string file;
  std::string model;       // --model after the FILE (or `model` in pyproject.toml)
  int runs = 0;            // forwards per request; 0: the model kind's default
  // A workload of the entry's own (pyproject.toml): phase, sequence, batch.
  std::string phase;
  int64_t seq = 0, batch = 0;
};

// Reads `[[tool.shardlens.pipeline]]` entries from a pyproject.toml (files relative to its folder).
// False with a message on stderr when it has none or cannot be read.
bool read_pipeline_entries(const std::string& command, const std::string& toml_path, std::vector<PipelineEntry>& out);

// Plans the entries on `shapes` (the candidates) and prints the table, the shape chosen and each
// model's plan on it (text or JSON). Returns the exit status.
int run_pipeline(const std::string& command, std::vector<PipelineEntry> entries, const PlanningArgs& planning, int devices,
                 const std::string& format);

}  // namespace shardlens::cli
