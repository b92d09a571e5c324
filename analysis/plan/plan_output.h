// A plan as JSON (the keys `shardlens plan --format json` promises) and as a readable table.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "plan/plan.h"

namespace shardlens::plan {

nlohmann::json to_json(const PlanResult& result, const ir::ModelIR& model, const PlanOptions& options);
std::string to_text(const PlanResult& result, const ir::ModelIR& model, const PlanOptions& options);

// "4.0 MiB", "30.8 µs" / "2.92 ms": the units plans are read in (messages and text output).
std::string format_bytes(double bytes);
std::string format_us(double us);

}  // namespace shardlens::plan
