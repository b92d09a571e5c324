// Finds where a script sets a value: the config field or constant (`n_kv_heads: int = 8`,
// `NUM_HEADS = 12`, `num_heads=12` in a call) whose name matches one of the keywords.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/span.h"

namespace shardlens::python {

// The span of `name ... = value` for the first name containing a keyword (case-insensitive,
// keywords in order of preference) assigned exactly `value`; an invalid span when there is none.
ir::Span locate_value(const std::string& text, const std::vector<std::string>& keywords, int64_t value);

}  // namespace shardlens::python
