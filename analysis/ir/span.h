// Source positions shared by every IR.
#pragma once

#include <cstdint>

namespace shardlens::ir {

// Lines are 1-based, columns 0-based UTF-8 byte offsets (as Python's own `ast` counts them).
struct Span {
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t end_line = 0;
  uint32_t end_column = 0;
  bool valid() const { return line > 0; }
  bool operator==(const Span&) const = default;
};

}  // namespace shardlens::ir
