// What an analysis is computed with: the mesh and workload, the model's root, where imports are
// searched, and whether code may run. Plain data; the server reads it from the client's settings
// and pyproject.toml (server/settings.h), with the same names everywhere (server/README.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "python/interpreter.h"

namespace shardlens::session {

struct Settings {
  std::vector<std::string> meshes{"1x8"};
  std::string strategy = "auto";
  int64_t batch = 1;
  int64_t seq = 2048;
  std::string phase = "decode";
  std::string dtype = "bf16";
  std::string hardware = "wormhole";
  std::string model;  // root expression; empty: automatic
  // Running the user's script (a TorchScript export) or loading a TorchScript file (which runs
  // the archive's code) only when allowed.
  bool allow_execution = false;  // setting `allowExecution`
  std::string python;            // setting `python`: the interpreter exports use ("" = automatic)
  // Setting `exactGraph`: plan on the TorchScript export beside the script (model.py -> model.pt)
  // when it is fresh; needs allow_execution. The server also sets it for a document whose export
  // the user ran (shardlens.exportGraph).
  bool exact_graph = false;
  // Setting `pythonPath` (`python-path` in pyproject.toml): folders searched for imports after the
  // script's folder, its package root and PYTHONPATH; relative ones from the document's folder.
  std::vector<std::string> python_path;
  // Setting `memoryBudgetMiB`: the memory budget of a document's analysis (python::ExtractOptions).
  // Like execution, only the user's settings may change it: a repository cannot.
  int64_t memory_budget_mib = static_cast<int64_t>(python::Interpreter::kDefaultMemoryBudgetMiB);
  // Whether `seq` was set: else the model's position tables may shorten it (fit_sequence_to_model).
  bool seq_set = false;
  // Whether `phase` was set: else the model's kind chooses the workload, as `shardlens plan` does
  // (plan::default_workload: one full forward of an encoder or a DiT, decode for a decoder).
  bool phase_set = false;
  // Setting `inputs`: forward() inputs given explicitly, each "NAME=SHAPE[:DTYPE]" as `--input`
  // takes them (validated where the settings are read).
  std::vector<std::string> inputs;
  // The document is one model of a pipeline its pyproject.toml declares ([[tool.shardlens.pipeline]]):
  // `meshes` holds the shape the pipeline shares, and this says so (a `pipeline-shape` finding).
  std::string pipeline_note;
  // Each mesh planned on its own (plan::PlanOptions::meshes_independent): a pipeline's candidates.
  bool meshes_independent = false;

  plan::PlanOptions plan_options() const;  // meshes already validated where the settings were read
  bool operator==(const Settings&) const = default;
};

}  // namespace shardlens::session
