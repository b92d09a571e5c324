// The model IR as JSON: the public `shardlens inspect --format json` schema.
#pragma once

#include <nlohmann/json.hpp>

#include "ir/model_ir.h"

namespace shardlens::ir {

nlohmann::json span_to_json(const Span& span);
// Keys (stable, read by other tools): model, source, root, modules[name, class, span],
// parameters[name, shape, dtype, span], buffers[name, shape, dtype, persistent, span],
// total_parameters, unresolved[what, reason, span].
nlohmann::json to_json(const ModelIR& model);

}  // namespace shardlens::ir
