#include <deque>
#include <mutex>
#include <unordered_map>

#include "ir/span.h"

namespace shardlens::ir {

namespace {
struct SourceFiles {
  std::mutex mutex;
  std::deque<std::string> paths{""};  // id 0: the document itself
  std::unordered_map<std::string, uint32_t> ids;
};
SourceFiles& table() {
  static SourceFiles* files = new SourceFiles();  // never destroyed: spans may be read at exit
  return *files;
}
}  // namespace

uint32_t intern_source_file(std::string_view path) {
  auto& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.ids.find(std::string(path));
  if (it != t.ids.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(t.paths.size());
  t.paths.emplace_back(path);
  t.ids.emplace(std::string(path), id);
  return id;
}

std::string source_file_path(uint32_t id) {
  auto& t = table();
  std::lock_guard lock(t.mutex);
  return id < t.paths.size() ? t.paths[id] : std::string();
}

std::string span_location(const Span& span, const std::string& document) {
  return (span.file ? source_file_path(span.file) : document) + ":" + std::to_string(span.line) + ":" + std::to_string(span.column + 1);
}

std::string elsewhere_suffix(const Span& span) {
  if (span.in_document() || !span.valid()) return "";
  return " (at " + source_file_path(span.file) + ":" + std::to_string(span.line) + ")";
}

}  // namespace shardlens::ir
