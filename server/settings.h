// The server's settings: the same names in initializationOptions, didChangeConfiguration,
// workspace/configuration and `[tool.shardlens]` in pyproject.toml (server/README.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace shardlens::server {

struct Settings {
  std::vector<std::string> meshes{"1x8"};
  std::string strategy = "auto";
  int64_t batch = 1;
  int64_t seq = 2048;
  std::string phase = "decode";
  std::string dtype = "bf16";
  std::string hardware = "wormhole";
  std::string model;  // root expression; empty: automatic
  // Running the user's script (a TorchScript export for the exact graph) only when allowed.
  bool allow_execution = false;  // setting `allowExecution`
  std::string python;            // setting `python`: the interpreter exports use ("" = automatic)

  // Applies the keys present in `object`; a bad value is reported in `problems` and ignored.
  void apply(const nlohmann::json& object, std::vector<std::string>& problems);
  nlohmann::json to_json() const;
  plan::PlanOptions plan_options() const;  // meshes already validated by apply()
  bool operator==(const Settings&) const = default;
};

// `[tool.shardlens]` of a pyproject.toml as a JSON object (the subset of TOML settings use:
// strings, integers, booleans, arrays of those). Empty object when the table is absent.
nlohmann::json read_pyproject_settings(const std::string& toml_text, std::vector<std::string>& problems);

// The nearest pyproject.toml at or above `directory`, or "".
std::string find_pyproject(const std::string& directory);

}  // namespace shardlens::server
