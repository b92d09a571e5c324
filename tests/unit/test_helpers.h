#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "python/source_document.h"

namespace shardlens::test {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

inline std::string fixture(const std::string& name) {
  return read_text(std::string(SHARDLENS_SOURCE_DIR) + "/../shared/fixtures/" + name);
}

inline std::string model_script(const std::string& name) {
  return read_text(std::string(SHARDLENS_SOURCE_DIR) + "/tests/models/" + name);
}

// Every model script the project has: tests/models, ../shared/fixtures and bench/models.
inline std::vector<std::filesystem::path> all_model_scripts() {
  std::vector<std::filesystem::path> out;
  for (const char* dir : {"/tests/models", "/../shared/fixtures", "/bench/models"})
    for (auto& entry : std::filesystem::directory_iterator(std::string(SHARDLENS_SOURCE_DIR) + dir))
      if (entry.path().extension() == ".py") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The position of the first occurrence of `needle` (0-based row and byte column).
inline python::TextPosition find(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  python::TextPosition p;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++p.row;
      p.column = 0;
    } else {
      ++p.column;
    }
  }
  return p;
}

// An edit replacing the first occurrence of `from` (on one line) with `to`.
inline python::TextEdit replace_first(const std::string& text, const std::string& from, const std::string& to) {
  auto start = find(text, from);
  auto end = start;
  end.column += static_cast<uint32_t>(from.size());
  return {start, end, to};
}

}  // namespace shardlens::test
