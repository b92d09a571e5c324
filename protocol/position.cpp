#include "position.h"

#include <algorithm>

namespace shardlens::protocol {

const char* encoding_name(PositionEncoding encoding) {
  return encoding == PositionEncoding::Utf8 ? "utf-8" : "utf-16";
}

LineIndex::LineIndex(std::string_view text) {
  starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    // \n, \r\n and a lone \r all end a line (LSP 3.17).
    if (text[i] == '\n') starts_.push_back(i + 1);
    else if (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n')) starts_.push_back(i + 1);
  }
}

size_t LineIndex::line_start(uint32_t line) const {
  return starts_[std::min<size_t>(line, starts_.size() - 1)];
}

size_t LineIndex::line_end(uint32_t line, std::string_view text) const {
  if (line + 1 >= starts_.size()) return text.size();
  size_t end = starts_[line + 1];
  if (end > 0 && text[end - 1] == '\n') --end;
  if (end > 0 && text[end - 1] == '\r') --end;
  return end;
}

size_t utf8_sequence_length(std::string_view text, size_t p) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(p);
  size_t n = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || p + n > text.size()) return 1;
  for (size_t i = 1; i < n; ++i)
    if ((byte(p + i) & 0xC0) != 0x80) return 1;
  return n;
}

size_t LineIndex::offset(std::string_view text, Position position, PositionEncoding encoding) const {
  if (position.line >= starts_.size()) return text.size();
  size_t p = starts_[position.line], end = line_end(position.line, text);
  if (encoding == PositionEncoding::Utf8) {
    size_t target = std::min(end, p + position.character);
    // Never split a character.
    while (target > p && target < end && (static_cast<unsigned char>(text[target]) & 0xC0) == 0x80) --target;
    return target;
  }
  uint32_t units = 0;
  while (p < end) {
    size_t n = utf8_sequence_length(text, p);
    uint32_t width = n == 4 ? 2 : 1;
    if (units + width > position.character) break;
    units += width;
    p += n;
  }
  return p;
}

Position LineIndex::position(std::string_view text, size_t offset, PositionEncoding encoding) const {
  return position_at(starts_, text, offset, encoding);
}

Position position_at(const std::vector<size_t>& starts, std::string_view text, size_t offset, PositionEncoding encoding) {
  offset = std::min(offset, text.size());
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - starts.begin() - 1);
  size_t p = starts[line];
  if (encoding == PositionEncoding::Utf8) return {line, static_cast<uint32_t>(offset - p)};
  uint32_t units = 0;
  while (p < offset) {
    size_t n = utf8_sequence_length(text, p);
    units += n == 4 ? 2 : 1;
    p += n;
  }
  return {line, units};
}

}  // namespace shardlens::protocol
