#include "ir/model_ir.h"

namespace shardlens::ir {

int64_t Parameter::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t ModelIR::total_parameters() const {
  int64_t total = 0;
  for (const auto& p : parameters) total += p.numel();
  return total;
}

}  // namespace shardlens::ir
