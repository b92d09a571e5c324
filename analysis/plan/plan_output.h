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

// "[4096, 4096]"
std::string shape_string(const std::vector<int64_t>& shape);
// A parameter's shape on one device under `layout` (its sharded dim divided, rounded up).
std::vector<int64_t> per_device_shape(const std::vector<int64_t>& shape, const ParameterLayout& layout, const Mesh& mesh);

}  // namespace shardlens::plan
