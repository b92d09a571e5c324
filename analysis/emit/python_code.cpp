#include "emit/python_code.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace shardlens::emit::detail {

namespace {

constexpr std::array<std::string_view, 35> kKeywords = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
    "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"};

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return std::find(kKeywords.begin(), kKeywords.end(), s) == kKeywords.end();
}

bool is_dotted_name(std::string_view s) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!is_identifier(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start)))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string string_literal(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);  // UTF-8 passes through: Python 3 source is UTF-8
    }
  }
  return out + "\"";
}

std::string spec_literal(const std::vector<std::vector<std::string>>& spec) {
  std::string out = "(";
  for (size_t d = 0; d < spec.size(); ++d) {
    if (d) out += ", ";
    const auto& axes = spec[d];
    if (axes.empty()) {
      out += "None";
    } else if (axes.size() == 1) {
      out += string_literal(axes[0]);
    } else {
      out += "(";
      for (size_t a = 0; a < axes.size(); ++a) out += (a ? ", " : "") + string_literal(axes[a]);
      out += ")";
    }
  }
  if (spec.size() == 1) out += ",";
  return out + ")";
}

Container container_of(std::string_view c) {
  if (c == "ModuleList" || c == "Sequential" || c == "ParameterList") return Container::List;
  if (c == "ModuleDict" || c == "ParameterDict") return Container::Dict;
  return Container::None;
}

bool iterable_container(std::string_view c) { return c == "ModuleList" || c == "Sequential" || c == "ModuleDict"; }

std::string member_access(const std::string& parent, std::string_view parent_class, std::string_view key, size_t position) {
  switch (container_of(parent_class)) {
    case Container::List:
      // Indexing is positional (Sequential keeps OrderedDict keys), so only when key and position agree.
      if (all_digits(key) && key == std::to_string(position)) return parent + "[" + std::string(key) + "]";
      break;
    case Container::Dict:
      return parent + "[" + string_literal(key) + "]";
    case Container::None:
      break;
  }
  if (is_identifier(key)) return parent + "." + std::string(key);
  return "getattr(" + parent + ", " + string_literal(key) + ")";
}

}  // namespace shardlens::emit::detail
