// The server's settings: the same names in initializationOptions, didChangeConfiguration,
// workspace/configuration and `[tool.shardlens]` in pyproject.toml (server/README.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "session/settings.h"

namespace shardlens::server {

// Where a settings object comes from. Only the user's own settings (initializationOptions,
// didChangeConfiguration, workspace/configuration: the editor's settings) may allow execution,
// ask for the exact graph or choose the interpreter; a workspace file (`[tool.shardlens]` in
// pyproject.toml) may set analysis options only, since a cloned repository writes it.
enum class SettingsSource { User, Workspace };

// The analysis settings (session/settings.h) as the client and pyproject.toml give them.
struct Settings : session::Settings {
  // Applies the keys present in `object`; a bad value is reported in `problems` and ignored, and
  // so is an execution key from a workspace file.
  void apply(const nlohmann::json& object, std::vector<std::string>& problems, SettingsSource source = SettingsSource::User);
  nlohmann::json to_json() const;
};

// `[tool.shardlens]` of a pyproject.toml as a JSON object (the subset of TOML settings use:
// strings, integers, booleans, arrays of those). Empty object when the table is absent. Each
// `[[tool.shardlens.pipeline]]` table is an object of the array "pipeline" (cli/pipeline.h).
nlohmann::json read_pyproject_settings(const std::string& toml_text, std::vector<std::string>& problems);

// The nearest pyproject.toml at or above `directory` but not above the workspace folder that
// holds it (the deepest of `workspace_roots` at or above `directory`); only `directory` itself
// when no folder holds it. "" when there is none.
std::string find_pyproject(const std::string& directory, const std::vector<std::string>& workspace_roots);

}  // namespace shardlens::server
