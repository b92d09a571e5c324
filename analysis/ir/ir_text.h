// The model IR as text: PyTorch's print(model) with repeated blocks folded, then a parameter
// table (repeated blocks once, with their multiplicity) and totals.
#pragma once

#include <string>

#include "ir/model_ir.h"

namespace shardlens::ir {

std::string to_text(const ModelIR& model);
// The traced forward ops, one per line, indented by module call depth.
std::string dataflow_to_text(const ModelIR& model);
std::string format_count(const BigInt& n);  // 354823168 -> "354,823,168"

}  // namespace shardlens::ir
