// Module paths as named_modules() spells them ("h.3.attn.proj") and the patterns plans use for
// repeated blocks ("h.*.attn.proj"). Header-only and C++17: the LibTorch-side code reads them too.
#pragma once

#include <string>
#include <vector>

namespace shardlens::ir {

// "h.3.attn" -> {"h", "3", "attn"}.
inline std::vector<std::string> split_module_path(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    out.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
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
