// LSP positions (line + character in UTF-16 or UTF-8 code units) over UTF-8 text, converted to
// and from byte offsets. The server holds documents as UTF-8; conversion happens here only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardlens::protocol {

enum class PositionEncoding { Utf16, Utf8 };
const char* encoding_name(PositionEncoding encoding);

struct Position {
  uint32_t line = 0;
  uint32_t character = 0;
  bool operator==(const Position&) const = default;
};

class LineIndex {
 public:
  LineIndex() : starts_{0} {}
  explicit LineIndex(std::string_view text);
  uint32_t line_count() const { return static_cast<uint32_t>(starts_.size()); }
  size_t line_start(uint32_t line) const;  // clamped to the last line
  size_t line_end(uint32_t line, std::string_view text) const;  // before its newline

  // Byte offset of a position; a line past the end clamps to the end of the text, a character
  // past the end of its line to the end of the line, one inside a UTF-8 sequence (or between the
  // halves of a surrogate pair) to the start of that character.
  size_t offset(std::string_view text, Position position, PositionEncoding encoding) const;
  Position position(std::string_view text, size_t offset, PositionEncoding encoding) const;

 private:
  std::vector<size_t> starts_;
};

// A byte offset's position, given the byte offsets of the text's line starts (LineIndex keeps
// them; a document analysis has its own).
Position position_at(const std::vector<size_t>& line_starts, std::string_view text, size_t offset, PositionEncoding encoding);

// Length in bytes of the UTF-8 sequence starting with `lead` at `p` (1 for invalid bytes, which
// count as one code unit each so that bad input never makes positions ambiguous).
size_t utf8_sequence_length(std::string_view text, size_t p);

}  // namespace shardlens::protocol
