// Source positions shared by every IR.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace shardlens::ir {

// Lines are 1-based, columns 0-based UTF-8 byte offsets (as Python's own `ast` counts them).
// `file` is 0 for the document being analysed, else an id from intern_source_file (a module it
// imported, or one of shardlens' library models).
struct Span {
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t end_line = 0;
  uint32_t end_column = 0;
  uint32_t file = 0;
  bool valid() const { return line > 0; }
  bool in_document() const { return file == 0; }
  bool operator==(const Span&) const = default;
};

// Process-wide table of the files spans point into (ids are stable for the process's life, so
// that lowered statements cached across analyses keep valid spans). Thread-safe.
uint32_t intern_source_file(std::string_view path);
std::string source_file_path(uint32_t id);  // "" for 0 or an unknown id
// "FILE:LINE:COLUMN" (column 1-based, as compilers print it), FILE being `document` for a span in it.
std::string span_location(const Span& span, const std::string& document);
// " (at FILE:LINE)" for a span in an imported module, "" for one in the document: a message shown
// at the document's own position says where the thing really is.
std::string elsewhere_suffix(const Span& span);

}  // namespace shardlens::ir
