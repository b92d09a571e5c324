// A Python source text with its tree-sitter tree, kept in step with edits by incremental re-parsing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct TSTree;
struct TSParser;

namespace shardlens::python {

struct TextPosition {
  uint32_t row = 0;     // 0-based
  uint32_t column = 0;  // 0-based UTF-8 byte column
};

// Replace the text between start and end with new_text.
struct TextEdit {
  TextPosition start, end;
  std::string new_text;
};

class SourceDocument {
 public:
  explicit SourceDocument(std::string text);
  ~SourceDocument();
  SourceDocument(const SourceDocument&) = delete;
  SourceDocument& operator=(const SourceDocument&) = delete;

  const std::string& text() const { return text_; }
  TSTree* tree() const { return tree_; }
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }

  // Positions past the end of a line or of the text are clamped, so a stale client edit cannot
  // corrupt the document.
  void apply_edit(const TextEdit& edit);
  uint32_t offset_of(TextPosition position) const;

 private:
  void index_lines();
  std::string text_;
  std::vector<uint32_t> line_starts_;
  TSParser* parser_ = nullptr;
  TSTree* tree_ = nullptr;
};

}  // namespace shardlens::python
