// Known compiler limits (tt-mlir / tt-xla) kept as data (compiler_limits.json, compiled into the
// library) and matched against a model and its plan: which limits the plan runs into, and which ones
// shaped the plan or its rejected alternatives.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/model_ir.h"
#include "plan/plan.h"

namespace shardlens::report {

struct IssueLink {
  std::string name;   // "tt-mlir #8216"
  std::string title;
  std::string url;
};

struct CompilerLimit {
  std::string id;
  std::string title;
  nlohmann::json when;  // array of conditions (see compiler_limits.json "about")
  std::string symptom;
  std::vector<IssueLink> tracking;
  std::string workaround;
  std::string origin;   // where the entry comes from
  std::string checked;  // what was re-checked, and the state found
};

struct LimitMatch {
  const CompilerLimit* limit = nullptr;
  bool hit = false;                   // the plan itself has the pattern (not only the model or an alternative)
  std::vector<std::string> evidence;  // what matched, one line each (Markdown-free text)
};

// Parses a knowledge base; on error returns {} and sets `error`. Every entry needs an id, a title,
// a non-empty `when` of known condition kinds, a symptom, at least one tracking link and a workaround.
std::vector<CompilerLimit> parse_compiler_limits(const std::string& json_text, std::string& error);

// The knowledge base built into the library (analysis/report/compiler_limits.json), parsed once.
const std::vector<CompilerLimit>& builtin_compiler_limits();

// The limits whose patterns occur, in knowledge-base order; evidence is deterministic.
std::vector<LimitMatch> match_compiler_limits(const std::vector<CompilerLimit>& limits, const ir::ModelIR& model,
                                              const plan::PlanResult& result);

}  // namespace shardlens::report
