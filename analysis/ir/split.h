// Splitting text on one separator character. Header-only and C++17: the LibTorch-side code uses it too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardlens::ir {

// "a,,b" -> {"a", "", "b"}; "" -> {""}: every separator ends a piece, empty pieces included.
inline std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = text.find(separator, start);
    out.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

}  // namespace shardlens::ir
