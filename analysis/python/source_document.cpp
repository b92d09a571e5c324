#include "python/source_document.h"

#include "ir/heap.h"

#include <algorithm>
#include <stdexcept>
#include <system_error>
#include <thread>

extern "C" const TSLanguage* tree_sitter_python(void);

namespace shardlens::python {

namespace {

TSParser* new_parser() {
  TSParser* parser = ts_parser_new();
  if (!ts_parser_set_language(parser, tree_sitter_python())) {
    ts_parser_delete(parser);
    throw std::runtime_error("tree-sitter-python grammar ABI is not supported by this libtree-sitter");
  }
  return parser;
}

bool starts_with(std::string_view text, size_t at, std::string_view prefix) {
  return text.compare(at, prefix.size(), prefix) == 0;
}

// A line that may begin a piece: a definition or the first of its decorators.
bool opens_definition(std::string_view text, size_t at) {
  return text[at] == '@' || starts_with(text, at, "class ") || starts_with(text, at, "def ") ||
         starts_with(text, at, "async def ");
}

}  // namespace

size_t end_of_string_literal(std::string_view text, size_t quote) {
  char q = text[quote];
  bool triple = quote + 2 < text.size() && text[quote + 1] == q && text[quote + 2] == q;
  size_t i = quote + (triple ? 3 : 1);
  while (i < text.size()) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      i += 2;
      continue;
    }
    if (text[i] == q && (!triple || (i + 2 < text.size() && text[i + 1] == q && text[i + 2] == q)))
      return i + (triple ? 3 : 1);
    if (!triple && text[i] == '\n') return i;
    ++i;
  }
  return text.size();
}

std::vector<uint32_t> piece_starts(std::string_view text, unsigned count) {
  std::vector<uint32_t> candidates;
  int depth = 0;
  bool continued = false, after_decorator = false, line_start = true;
  size_t i = 0;
  while (i < text.size()) {
    if (line_start) {
      line_start = false;
      bool logical_start = depth == 0 && !continued;
      continued = false;
      if (logical_start) {
        size_t j = i;
        while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\f')) ++j;
        bool blank = j == text.size() || text[j] == '\n' || text[j] == '\r' || text[j] == '#';
        if (!blank) {
          if (j == i && i > 0 && !after_decorator && opens_definition(text, i))
            candidates.push_back(static_cast<uint32_t>(i));
          after_decorator = j == i && text[i] == '@';
        }
      }
    }
    char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '\'' || c == '"') {
      i = end_of_string_literal(text, i);
    } else {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) continued = true;
      if (c == '\n') line_start = true;
      ++i;
    }
  }
  std::vector<uint32_t> starts;
  if (count < 2 || candidates.empty()) return starts;
  for (unsigned k = 1; k < count; ++k) {
    uint64_t target = text.size() * static_cast<uint64_t>(k) / count;
    auto it = std::lower_bound(candidates.begin(), candidates.end(), target);
    if (it == candidates.end() || (it != candidates.begin() && target - *(it - 1) < *it - target)) --it;
    if (starts.empty() || *it > starts.back()) starts.push_back(*it);
  }
  return starts;
}

SourceDocument::SourceDocument(std::string text, ParsePieces options, const PieceParsed& parsed)
    : text_(std::move(text)) {
  index_lines();
  unsigned count = options.max_pieces ? options.max_pieces
                                      : std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  if (options.min_piece_bytes) count = static_cast<unsigned>(std::min<size_t>(count, text_.size() / options.min_piece_bytes));
  std::vector<uint32_t> starts{0};
  if (count >= 2)
    for (uint32_t s : piece_starts(text_, count)) starts.push_back(s);
  parse_pieces(starts, parsed);
  for (size_t i = 0; i < pieces_.size(); ++i)
    if (!piece_is_exact(i)) {
      parse_whole();
      break;
    }
}

SourceDocument::~SourceDocument() { clear(); }

void SourceDocument::clear() {
  for (Piece& p : pieces_) {
    if (p.tree) ts_tree_delete(p.tree);
    if (p.parser) ts_parser_delete(p.parser);
  }
  pieces_.clear();
}

void SourceDocument::index_lines() {
  line_starts_.clear();
  line_starts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::vector<TSNode> SourceDocument::roots() const {
  std::vector<TSNode> out;
  out.reserve(pieces_.size());
  for (const Piece& p : pieces_) out.push_back(ts_tree_root_node(p.tree));
  return out;
}

bool SourceDocument::has_error() const {
  for (const Piece& p : pieces_)
    if (ts_node_has_error(ts_tree_root_node(p.tree))) return true;
  return false;
}

void SourceDocument::parse_whole() {
  clear();
  Piece p;
  p.parser = new_parser();
  p.tree = ts_parser_parse_string(p.parser, nullptr, text_.data(), static_cast<uint32_t>(text_.size()));
  pieces_.push_back(p);
}

void SourceDocument::parse_pieces(const std::vector<uint32_t>& starts, const PieceParsed& parsed) {
  clear();
  if (starts.size() < 2) {
    parse_whole();
    return;
  }
  pieces_.resize(starts.size());
  for (size_t i = 0; i < starts.size(); ++i) {
    pieces_[i].start = starts[i];
    pieces_[i].parser = new_parser();
  }
  auto parse = [&](size_t i) {
    use_huge_pages_for_thread_heap();  // the trees outlive the thread; the worker walks them
    reparse_piece(i);
    if (parsed) parsed(ts_tree_root_node(pieces_[i].tree), text_);
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < pieces_.size(); ++i) {
    try {
      threads.emplace_back(parse, i);
    } catch (const std::system_error&) {
      parse(i);  // no thread to be had: parse it here
    }
  }
  parse(0);
  for (auto& t : threads) t.join();
}

// A piece parses as it would in the whole text when it has no syntax error (so it ends outside
// any string or bracket, at the end of a statement) and its last line is not continued by a
// backslash into the next piece.
bool SourceDocument::piece_is_exact(size_t i) const {
  if (pieces_.size() == 1) return true;
  if (ts_node_has_error(ts_tree_root_node(pieces_[i].tree))) return false;
  if (i + 1 == pieces_.size()) return true;
  uint32_t end = pieces_[i + 1].start;  // text_[end - 1] is the newline before the next piece
  size_t last = end >= 2 && text_[end - 2] == '\r' ? end - 3 : end - 2;
  return end < 2 || last >= text_.size() || text_[last] != '\\';
}

void SourceDocument::reparse_piece(size_t i) {
  Piece& p = pieces_[i];
  auto row_of = [&](uint32_t offset) {
    return static_cast<uint32_t>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - line_starts_.begin()) - 1;
  };
  if (pieces_.size() > 1) {
    TSRange range{{row_of(p.start), 0}, {UINT32_MAX, UINT32_MAX}, p.start, UINT32_MAX};
    if (i + 1 < pieces_.size()) {
      range.end_byte = pieces_[i + 1].start;
      range.end_point = {row_of(range.end_byte), 0};
    }
    ts_parser_set_included_ranges(p.parser, &range, 1);
  }
  TSTree* next = ts_parser_parse_string(p.parser, p.tree, text_.data(), static_cast<uint32_t>(text_.size()));
  if (p.tree) ts_tree_delete(p.tree);
  p.tree = next;
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

  // The piece holding the edit. The edit stays inside it when it leaves the piece's first line
  // start and the newline before the next piece alone; otherwise the cut may no longer fall
  // between two statements, and the whole text is parsed as one.
  size_t k = 0;
  while (k + 1 < pieces_.size() && pieces_[k + 1].start <= start) ++k;
  bool inside = (k == 0 || start > pieces_[k].start) && (k + 1 == pieces_.size() || end < pieces_[k + 1].start);

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

  if (!inside) {
    parse_whole();
    return;
  }
  for (size_t i = k; i < pieces_.size(); ++i) ts_tree_edit(pieces_[i].tree, &input);
  for (size_t i = k + 1; i < pieces_.size(); ++i) pieces_[i].start = static_cast<uint32_t>(pieces_[i].start + delta);
  reparse_piece(k);
  if (!piece_is_exact(k)) parse_whole();
}

}  // namespace shardlens::python
