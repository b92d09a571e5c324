#include "emit/insertion.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "python/source_document.h"

namespace shardlens::emit {

namespace {

struct Line {
  uint32_t start = 0;  // first byte
  uint32_t end = 0;    // byte after the line's content (before "\r\n" / "\n")
  uint32_t next = 0;   // first byte of the next line
};

std::vector<Line> lines_of(const std::string& text) {
  std::vector<Line> lines;
  uint32_t start = 0;
  const auto size = static_cast<uint32_t>(text.size());
  while (start < size) {
    uint32_t nl = start;
    while (nl < size && text[nl] != '\n') ++nl;
    uint32_t end = nl;
    if (end > start && text[end - 1] == '\r') --end;
    lines.push_back({start, end, nl < size ? nl + 1 : size});
    start = nl + 1;
  }
  return lines;
}

std::string_view trimmed(const std::string& text, const Line& line) {
  std::string_view s(text.data() + line.start, line.end - line.start);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string indentation(const std::string& text, const Line& line) {
  uint32_t i = line.start;
  while (i < line.end && (text[i] == ' ' || text[i] == '\t')) ++i;
  return text.substr(line.start, i - line.start);
}

bool blank(const std::string& text, const Line& line) { return trimmed(text, line).empty(); }

// Line index containing byte `offset`.
size_t line_at(const std::vector<Line>& lines, uint32_t offset) {
  auto it = std::upper_bound(lines.begin(), lines.end(), offset, [](uint32_t o, const Line& l) { return o < l.start; });
  return it == lines.begin() ? 0 : static_cast<size_t>(it - lines.begin()) - 1;
}

struct BlockRange {
  size_t begin_line = 0, end_line = 0;
};

// The first begin marker and the end marker after it; an error for a begin without an end.
std::optional<BlockRange> find_block(const std::string& text, const std::vector<Line>& lines, BlockKind kind,
                                     std::string& error) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (trimmed(text, lines[i]) != begin_marker(kind)) continue;
    for (size_t j = i + 1; j < lines.size(); ++j)
      if (trimmed(text, lines[j]) == end_marker(kind)) return BlockRange{i, j};
    error = "line " + std::to_string(i + 1) + " opens a shardlens block (" + std::string(begin_marker(kind)) +
            ") that is never closed; add \"" + std::string(end_marker(kind)) + "\" or remove it";
    return std::nullopt;
  }
  return std::nullopt;
}

std::string node_text(const std::string& text, TSNode n) {
  return text.substr(ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

bool is(TSNode n, const char* type) { return std::strcmp(ts_node_type(n), type) == 0; }

TSNode field(TSNode n, const char* name) {
  return ts_node_child_by_field_name(n, name, static_cast<uint32_t>(std::strlen(name)));
}

// An assignment target is `name` or a part of it (`name.lm_head.weight = ...` still builds the model).
bool target_names(const std::string& text, TSNode n, const std::string& name) {
  if (ts_node_is_null(n)) return false;
  if (is(n, "identifier")) return node_text(text, n) == name;
  if (is(n, "attribute") || is(n, "subscript")) {
    TSNode base = field(n, is(n, "attribute") ? "object" : "value");
    while (!ts_node_is_null(base) && (is(base, "attribute") || is(base, "subscript")))
      base = field(base, is(base, "attribute") ? "object" : "value");
    return !ts_node_is_null(base) && is(base, "identifier") && node_text(text, base) == name;
  }
  if (is(n, "call")) return false;
  for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i)
    if (target_names(text, ts_node_named_child(n, i), name)) return true;
  return false;
}

// The statement binds `name` in the module's scope, or assigns into it (function and class
// bodies have their own scope).
bool binds(const std::string& text, TSNode n, const std::string& name) {
  if (is(n, "function_definition") || is(n, "class_definition")) return node_text(text, field(n, "name")) == name;
  if (is(n, "lambda")) return false;
  if (is(n, "assignment") || is(n, "augmented_assignment") || is(n, "for_statement")) {
    if (target_names(text, field(n, "left"), name)) return true;
  } else if (is(n, "as_pattern_target")) {
    if (target_names(text, n, name)) return true;
  } else if (is(n, "named_expression")) {
    if (node_text(text, field(n, "name")) == name) return true;
  } else if (is(n, "aliased_import")) {
    return node_text(text, field(n, "alias")) == name;
  } else if (is(n, "import_statement") || is(n, "import_from_statement")) {
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
      TSNode c = ts_node_named_child(n, i);
      if (is(c, "aliased_import")) {
        if (binds(text, c, name)) return true;
      } else if (is(c, "dotted_name") && !(is(n, "import_from_statement") && i == 0)) {
        TSNode first = ts_node_named_child(c, 0);
        if (!ts_node_is_null(first) && node_text(text, first) == name) return true;
      }
    }
    return false;
  }
  for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i)
    if (binds(text, ts_node_named_child(n, i), name)) return true;
  return false;
}

bool is_main_guard(const std::string& text, TSNode n) {
  if (!is(n, "if_statement")) return false;
  std::string cond;
  for (char c : node_text(text, field(n, "condition")))
    if (c != ' ' && c != '\t' && c != '(' && c != ')') cond += c == '\'' ? '"' : c;
  return cond == "__name__==\"__main__\"" || cond == "\"__main__\"==__name__";
}

std::vector<TSNode> statements(TSNode parent) {
  std::vector<TSNode> out;
  for (uint32_t i = 0; i < ts_node_named_child_count(parent); ++i) {
    TSNode c = ts_node_named_child(parent, i);
    if (!is(c, "comment")) out.push_back(c);
  }
  return out;
}

// The top-level statements of a document, over all its parse pieces.
std::vector<TSNode> statements(const std::vector<TSNode>& roots) {
  std::vector<TSNode> out;
  for (TSNode root : roots)
    for (TSNode s : statements(root)) out.push_back(s);
  return out;
}

struct Placement {
  uint32_t at = 0;      // a line start (or the end of the text)
  std::string indent;
  int blank_lines = 1;  // wanted before and after
};

std::optional<Placement> after_anchor(const std::string& text, const std::vector<Line>& lines,
                                      const std::vector<TSNode>& roots, const std::string& anchor) {
  std::optional<TSNode> last;
  for (TSNode s : statements(roots))
    if (binds(text, s, anchor)) last = s;
  if (!last) return std::nullopt;
  TSNode target = *last;
  std::string indent;
  if (is_main_guard(text, target)) {
    TSNode body = field(target, "consequence");
    std::optional<TSNode> inner;
    if (!ts_node_is_null(body))
      for (TSNode s : statements(body))
        if (binds(text, s, anchor)) inner = s;
    if (inner) {
      target = *inner;
      indent = indentation(text, lines[line_at(lines, ts_node_start_byte(target))]);
    }
  }
  const Line& last_line = lines[line_at(lines, ts_node_end_byte(target) ? ts_node_end_byte(target) - 1 : 0)];
  return Placement{last_line.next, indent, 1};
}

Placement for_functions(const std::string& text, const std::vector<Line>& lines, const std::vector<TSNode>& roots) {
  for (TSNode s : statements(roots)) {
    if (!is_main_guard(text, s)) continue;
    size_t line = line_at(lines, ts_node_start_byte(s));
    // Comments just above the guard belong to it.
    while (line > 0 && trimmed(text, lines[line - 1]).substr(0, 1) == "#") --line;
    return Placement{lines[line].start, "", 2};
  }
  return Placement{static_cast<uint32_t>(text.size()), "", 2};
}

std::string reindent(const std::string& block, const std::string& indent, const std::string& eol) {
  std::string out;
  size_t start = 0;
  while (start < block.size()) {
    size_t nl = block.find('\n', start);
    std::string line = block.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!line.empty()) out += indent + line;
    out += eol;
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

bool parses(const std::string& text) {
  return !python::SourceDocument(text).has_error();
}

}  // namespace

InsertionEdit annotation_edit(const std::string& text, const ir::ModelIR& model, const plan::MeshPlan& plan,
                              BlockKind kind, const std::string& regenerate) {
  EmitOptions options;
  options.regenerate = regenerate;
  if (kind == BlockKind::TtXla) {
    options.model_expression = instance_expression(model);
    options.reserved_names = script_names(text);
  }
  std::string block = kind == BlockKind::TtXla ? tt_xla_block(model, plan, options) : load_shard_spec_block(model, plan, options);
  auto edit = plan_insertion(text, block, kind, anchor_of(options.model_expression));
  edit.block = std::move(block);
  return edit;
}

std::string anchor_of(const std::string& model_expression) {
  return model_expression.substr(0, model_expression.find('.'));
}

InsertionEdit plan_insertion(const std::string& text, const std::string& block, BlockKind kind, const std::string& anchor) {
  InsertionEdit edit;
  const auto lines = lines_of(text);
  const size_t first_nl = text.find('\n');
  const std::string eol = first_nl != std::string::npos && first_nl > 0 && text[first_nl - 1] == '\r' ? "\r\n" : "\n";

  std::string error;
  if (auto existing = find_block(text, lines, kind, error)) {
    edit.start = lines[existing->begin_line].start;
    edit.end = lines[existing->end_line].next;
    edit.text = reindent(block, indentation(text, lines[existing->begin_line]), eol);
    edit.replaces_block = true;
  } else if (!error.empty()) {
    edit.error = error;
    return edit;
  } else {
    python::SourceDocument doc(text);
    std::vector<TSNode> roots = doc.roots();
    std::optional<Placement> place;
    if (!anchor.empty()) {
      place = after_anchor(text, lines, roots, anchor);
      if (!place) place = Placement{static_cast<uint32_t>(text.size()), "", 1};
    } else {
      place = for_functions(text, lines, roots);
    }
    // Blank lines already around the insertion point count towards the separation.
    size_t line = line_at(lines, place->at);
    bool at_end = place->at >= text.size();
    int before = 0, after = 0;
    for (size_t i = at_end ? lines.size() : line; i-- > 0 && blank(text, lines[i]);) ++before;
    if (!at_end)
      for (size_t i = line; i < lines.size() && blank(text, lines[i]); ++i) ++after;
    bool at_start = place->at == 0 || before == static_cast<int>(at_end ? lines.size() : line);
    bool only_blank_after = !at_end && line + after == lines.size();
    edit.start = edit.end = place->at;
    if (at_end && !text.empty() && text.back() != '\n') edit.text += eol;
    if (!at_start)
      for (int i = before; i < place->blank_lines; ++i) edit.text += eol;
    edit.text += reindent(block, place->indent, eol);
    if (!at_end && !only_blank_after)
      for (int i = after; i < place->blank_lines; ++i) edit.text += eol;
  }
  if (parses(text) && !parses(apply_insertion(text, edit))) {
    edit.error = "the script would not parse with the block inserted";
    return edit;
  }
  edit.ok = true;
  return edit;
}

std::string apply_insertion(const std::string& text, const InsertionEdit& edit) {
  std::string out = text.substr(0, edit.start);
  out += edit.text;
  if (edit.end < text.size()) out += text.substr(edit.end);
  return out;
}

std::set<std::string> script_names(const std::string& text) {
  std::set<std::string> names;
  const auto lines = lines_of(text);
  std::vector<std::pair<uint32_t, uint32_t>> skip;  // earlier blocks
  for (BlockKind kind : {BlockKind::TtXla, BlockKind::ShardSpec}) {
    std::string error;
    if (auto b = find_block(text, lines, kind, error)) skip.emplace_back(lines[b->begin_line].start, lines[b->end_line].next);
  }
  python::SourceDocument doc(text);
  std::vector<TSNode> stack = doc.roots();
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    uint32_t start = ts_node_start_byte(n), end = ts_node_end_byte(n);
    if (std::any_of(skip.begin(), skip.end(), [&](auto& r) { return start >= r.first && end <= r.second; })) continue;
    if (is(n, "identifier")) {
      names.insert(node_text(text, n));
      continue;
    }
    if (is(n, "function_definition") || is(n, "class_definition")) {
      TSNode name = field(n, "name");
      if (!ts_node_is_null(name)) names.insert(node_text(text, name));
      continue;
    }
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) stack.push_back(ts_node_named_child(n, i));
  }
  return names;
}

}  // namespace shardlens::emit
