// Module paths as named_modules() spells them ("h.3.attn.proj") and the patterns plans use for
// repeated blocks ("h.*.attn.proj"). Header-only and C++17: the LibTorch-side code reads them too.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "ir/split.h"

namespace shardlens::ir {

// "h.3.attn" -> {"h", "3", "attn"}.
inline std::vector<std::string> split_module_path(const std::string& path) { return split(path, '.'); }

// "h.3.attn.qkv" -> "h.*.attn.qkv": list indices (all-digit components) become "*", the
// pattern plans use for repeated blocks.
inline std::string module_pattern(std::string_view name) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    std::string_view part = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    out += digits ? std::string_view("*") : part;
    if (dot == std::string_view::npos) return out;
    out += '.';
    start = dot + 1;
  }
}

// Whether `name` is one of the modules `pattern` stands for ("*" matches any one component).
inline bool module_pattern_matches(const std::string& pattern, const std::string& name) {
  std::vector<std::string> p = split_module_path(pattern), n = split_module_path(name);
  if (p.size() != n.size()) return false;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != "*" && p[i] != n[i]) return false;
  return true;
}

}  // namespace shardlens::ir
