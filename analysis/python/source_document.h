// A Python source text with its tree-sitter trees, kept in step with edits by incremental re-parsing.
#pragma once

#include <tree_sitter/api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

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

// How a large text is parsed on several threads: cut into pieces before top-level `class`, `def`
// or decorator lines, each parsed on its own (tree-sitter's parse is single-threaded and is most
// of a cold extraction). A piece parses exactly as it would inside the whole text when every
// piece is free of syntax errors and no piece ends in a line continuation; otherwise the
// document falls back to one tree, so what it yields never depends on how it was cut.
struct ParsePieces {
  unsigned max_pieces = 0;             // 0: one per hardware thread, at most 4
  uint32_t min_piece_bytes = 32 * 1024;  // smaller pieces cost more in threads than they save
};

class SourceDocument {
 public:
  // Called on the thread that parsed a piece, right after, with the piece's root and the text:
  // a reader can start on a piece while others are still parsed.
  using PieceParsed = std::function<void(TSNode root, const std::string& text)>;
  explicit SourceDocument(std::string text, ParsePieces pieces = {}, const PieceParsed& parsed = {});
  ~SourceDocument();
  SourceDocument(const SourceDocument&) = delete;
  SourceDocument& operator=(const SourceDocument&) = delete;

  const std::string& text() const { return text_; }
  // The root nodes of the pieces, in text order; their children are the top-level statements.
  // Positions are the whole text's.
  std::vector<TSNode> roots() const;
  bool has_error() const;
  // The tree of a document that is one piece (always the case when has_error()); null otherwise.
  TSTree* sole_tree() const { return pieces_.size() == 1 ? pieces_.front().tree : nullptr; }
  size_t piece_count() const { return pieces_.size(); }
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }

  // Positions past the end of a line or of the text are clamped, so a stale client edit cannot
  // corrupt the document.
  void apply_edit(const TextEdit& edit);
  uint32_t offset_of(TextPosition position) const;

 private:
  struct Piece {
    TSParser* parser = nullptr;
    TSTree* tree = nullptr;
    uint32_t start = 0;  // byte offset of the piece's first line; its end is the next piece's start
  };
  void index_lines();
  void parse_pieces(const std::vector<uint32_t>& starts, const PieceParsed& parsed);
  void parse_whole();
  bool piece_is_exact(size_t i) const;
  void reparse_piece(size_t i);
  void clear();
  std::string text_;
  std::vector<uint32_t> line_starts_;
  std::vector<Piece> pieces_;
};

// The index just past the string literal whose quote is at `quote`; an unterminated one ends at
// its line's end (triple-quoted: at the text's end), where tree-sitter reports it.
size_t end_of_string_literal(std::string_view text, size_t quote);

// Offsets of lines where a large text may be cut into `count` pieces of about equal size: each
// a top-level `class`, `def` or first decorator line, outside strings, brackets and line
// continuations. Fewer are returned when there are not enough such lines.
std::vector<uint32_t> piece_starts(std::string_view text, unsigned count);

}  // namespace shardlens::python
