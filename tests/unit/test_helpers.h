#pragma once

#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace shardlens::test
