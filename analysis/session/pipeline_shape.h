// A pipeline declared in a pyproject.toml ([[tool.shardlens.pipeline]] tables) and the mesh shape
// its models share (plan/pipeline.h), for the CLI (`plan --pipeline`) and the language server (a
// document that is one of the models is planned on the shared shape and says which model set it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/pipeline.h"
#include "session/settings.h"

namespace shardlens::session {

struct PipelineMember {
  std::string file;        // as declared, made absolute against the pyproject.toml's folder
  std::string model;       // root expression ("" = automatic)
  int runs = 0;            // forwards per request; 0: the model kind's default
  std::string phase;       // a workload of its own: prefill | decode ("" = the kind's)
  int64_t seq = 0, batch = 0;
};

// The members of `pyproject` (read_pyproject_settings' object); false with `error` when an entry
// is malformed or there is none.
bool pipeline_members(const nlohmann::json& pyproject, const std::string& folder, std::vector<PipelineMember>& out, std::string& error);

struct SharedShape {
  bool ok = false;
  std::string error;
  std::vector<plan::Mesh> candidates;
  std::vector<plan::PipelineModel> models;
  plan::PipelineChoice choice;
  std::string shape() const { return ok ? candidates[static_cast<size_t>(choice.shape)].shape_string() : ""; }
  // One sentence for `file`'s plan: the shared shape and which model set it.
  std::string note_for(const std::string& file) const;
};

// Analyses every member (as the server analyses a document: the model kind's workload unless the
// member gives one) on every shape of `devices` devices, each shape on its own, and chooses one.
SharedShape plan_shared_shape(const std::vector<PipelineMember>& members, const Settings& base, int devices);

}  // namespace shardlens::session
