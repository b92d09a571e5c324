#include "python/value_locator.h"

#include <cctype>

namespace shardlens::python {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

ValueIndex::ValueIndex(const std::string& text) {
  uint32_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\n') continue;
    std::string_view l(text.data() + line_start, i - line_start);
    // Every `=` that is an assignment or keyword argument (not ==, <=, >=, !=).
    for (size_t eq = l.find('='); eq != std::string_view::npos; eq = l.find('=', eq + 1)) {
      if ((eq + 1 < l.size() && l[eq + 1] == '=') || (eq > 0 && std::string_view("=<>!+-*/%").find(l[eq - 1]) != std::string_view::npos))
        continue;
      size_t v = eq + 1;
      while (v < l.size() && l[v] == ' ') ++v;
      size_t ve = v;
      while (ve < l.size() && (std::isdigit(static_cast<unsigned char>(l[ve])) || l[ve] == '_')) ++ve;
      std::string number;
      for (size_t k = v; k < ve; ++k)
        if (l[k] != '_') number += l[k];
      if (number.empty() || (ve < l.size() && (ident_char(l[ve]) || l[ve] == '.'))) continue;
      // The name before `=` (skipping a type annotation `name: T =`).
      size_t ne = eq;
      while (ne > 0 && l[ne - 1] == ' ') --ne;
      size_t colon = l.rfind(':', ne);
      size_t name_end = ne;
      if (colon != std::string_view::npos) {
        bool annotation = true;
        for (size_t k = colon + 1; k < ne; ++k) annotation &= l[k] != '(' && l[k] != ',';
        if (annotation) name_end = colon;
      }
      while (name_end > 0 && l[name_end - 1] == ' ') --name_end;
      size_t ns = name_end;
      while (ns > 0 && (ident_char(l[ns - 1]) || l[ns - 1] == '.')) --ns;
      if (ns == name_end) continue;
      by_value_[number].push_back({lower(std::string(l.substr(ns, name_end - ns))),
                                   {line, static_cast<uint32_t>(ns), line, static_cast<uint32_t>(ve)}});
    }
    ++line;
    line_start = i + 1;
  }
}

ir::Span ValueIndex::locate(const std::vector<std::string>& keywords, int64_t value) const {
  auto hits = by_value_.find(std::to_string(value));
  if (hits == by_value_.end()) return {};
  std::vector<std::string> keys;
  for (const auto& k : keywords) keys.push_back(lower(k));
  // The first assignment of the most preferred keyword.
  size_t best_keyword = keys.size();
  ir::Span best;
  for (const Hit& hit : hits->second)
    for (size_t k = 0; k < keys.size() && k < best_keyword; ++k) {
      if (hit.name.find(keys[k]) == std::string::npos) continue;
      best_keyword = k;
      best = hit.span;
      break;
    }
  return best_keyword < keys.size() ? best : ir::Span{};
}

ir::Span LazyValueIndex::locate(const std::vector<std::string>& keywords, int64_t value) const {
  std::call_once(state_->once, [&] { state_->index = std::make_unique<ValueIndex>(state_->text); });
  return state_->index->locate(keywords, value);
}

ir::Span locate_value(const std::string& text, const std::vector<std::string>& keywords, int64_t value) {
  return ValueIndex(text).locate(keywords, value);
}

}  // namespace shardlens::python
