// The server's settings: the same names in initializationOptions, didChangeConfiguration,
// workspace/configuration and `[tool.shardlens]` in pyproject.toml (server/README.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "python/interpreter.h"

namespace shardlens::server {

// Where a settings object comes from. Only the user's own settings (initializationOptions,
// didChangeConfiguration, workspace/configuration: the editor's settings) may allow execution,
// ask for the exact graph or choose the interpreter; a workspace file (`[tool.shardlens]` in
// pyproject.toml) may set analysis options only, since a cloned repository writes it.
enum class SettingsSource { User, Workspace };

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
  // Like execution, only the user's settings may raise it: a repository cannot.
  int64_t memory_budget_mib = static_cast<int64_t>(python::Interpreter::kDefaultMemoryBudgetMiB);

  // Applies the keys present in `object`; a bad value is reported in `problems` and ignored, and
  // so is an execution key from a workspace file.
  void apply(const nlohmann::json& object, std::vector<std::string>& problems, SettingsSource source = SettingsSource::User);
  nlohmann::json to_json() const;
  plan::PlanOptions plan_options() const;  // meshes already validated by apply()
  bool operator==(const Settings&) const = default;
};

// `[tool.shardlens]` of a pyproject.toml as a JSON object (the subset of TOML settings use:
// strings, integers, booleans, arrays of those). Empty object when the table is absent.
nlohmann::json read_pyproject_settings(const std::string& toml_text, std::vector<std::string>& problems);

// The nearest pyproject.toml at or above `directory` but not above the workspace folder that
// holds it (the deepest of `workspace_roots` at or above `directory`); only `directory` itself
// when no folder holds it. "" when there is none.
std::string find_pyproject(const std::string& directory, const std::vector<std::string>& workspace_roots);

}  // namespace shardlens::server
