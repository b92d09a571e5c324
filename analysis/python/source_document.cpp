#include "python/source_document.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <stdexcept>

extern "C" const TSLanguage* tree_sitter_python(void);

namespace shardlens::python {

SourceDocument::SourceDocument(std::string text) : text_(std::move(text)) {
  parser_ = ts_parser_new();
  if (!ts_parser_set_language(parser_, tree_sitter_python()))
    throw std::runtime_error("tree-sitter-python grammar ABI is not supported by this libtree-sitter");
  index_lines();
  tree_ = ts_parser_parse_string(parser_, nullptr, text_.data(), static_cast<uint32_t>(text_.size()));
}

SourceDocument::~SourceDocument() {
  if (tree_) ts_tree_delete(tree_);
  if (parser_) ts_parser_delete(parser_);
}

void SourceDocument::index_lines() {
  line_starts_.clear();
  line_starts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

uint32_t SourceDocument::offset_of(TextPosition p) const {
  if (p.row >= line_starts_.size()) return static_cast<uint32_t>(text_.size());
  uint32_t line_start = line_starts_[p.row];
  uint32_t line_end = p.row + 1 < line_starts_.size() ? line_starts_[p.row + 1] - 1
                                                      : static_cast<uint32_t>(text_.size());
  return std::min(line_start + p.column, line_end);
}

static TSPoint point_after(TSPoint start, const std::string& inserted) {
  TSPoint p = start;
  for (char c : inserted) {
    if (c == '\n') {
      ++p.row;
      p.column = 0;
    } else {
      ++p.column;
    }
  }
  return p;
}

void SourceDocument::apply_edit(const TextEdit& edit) {
  uint32_t start = offset_of(edit.start);
  uint32_t end = std::max(start, offset_of(edit.end));
  auto point_of = [&](uint32_t offset) {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    uint32_t row = static_cast<uint32_t>(it - line_starts_.begin()) - 1;
    return TSPoint{row, offset - line_starts_[row]};
  };
  TSInputEdit input{};
  input.start_byte = start;
  input.old_end_byte = end;
  input.new_end_byte = start + static_cast<uint32_t>(edit.new_text.size());
  input.start_point = point_of(start);
  input.old_end_point = point_of(end);
  input.new_end_point = point_after(input.start_point, edit.new_text);

  text_.replace(start, end - start, edit.new_text);
  // Update the line index from the edit on, instead of rescanning the whole text.
  auto first_after = std::upper_bound(line_starts_.begin(), line_starts_.end(), start);
  auto last_removed = std::upper_bound(first_after, line_starts_.end(), end);
  size_t keep = static_cast<size_t>(first_after - line_starts_.begin());
  std::vector<uint32_t> tail(last_removed, line_starts_.end());
  line_starts_.resize(keep);
  for (uint32_t i = 0; i < edit.new_text.size(); ++i)
    if (edit.new_text[i] == '\n') line_starts_.push_back(start + i + 1);
  int64_t delta = static_cast<int64_t>(edit.new_text.size()) - static_cast<int64_t>(end - start);
  for (uint32_t s : tail) line_starts_.push_back(static_cast<uint32_t>(s + delta));
  ts_tree_edit(tree_, &input);
  TSTree* next = ts_parser_parse_string(parser_, tree_, text_.data(), static_cast<uint32_t>(text_.size()));
  ts_tree_delete(tree_);
  tree_ = next;
}

}  // namespace shardlens::python
