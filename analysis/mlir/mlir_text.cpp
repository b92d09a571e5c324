#include "mlir/mlir_text.h"

#include <cctype>
#include <charconv>

namespace shardlens::mlir {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '-'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Skips a string literal starting at s[i] == '"'; returns the index after its closing quote.
size_t skip_string(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') ++i;
    else if (s[i] == '"') return i + 1;
  }
  return s.size();
}

// Bracket depth over ( [ { < (a '>' of an arrow "->" does not close), strings skipped. Calls
// `at(i, depth)` for each character outside strings; stops when it returns true.
template <class F>
size_t scan_balanced(std::string_view s, size_t i, F&& at) {
  int depth = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '"') {
      if (at(i, depth)) return i;
      i = skip_string(s, i);
      continue;
    }
    if (at(i, depth)) return i;
    if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
    else if ((c == ')' || c == ']' || c == '}' || (c == '>' && !(i > 0 && s[i - 1] == '-'))) && depth > 0) --depth;
    ++i;
  }
  return s.size();
}

// The first occurrence of `what` outside any brackets; npos when there is none.
size_t find_top_level(std::string_view s, std::string_view what) {
  size_t found = std::string_view::npos;
  scan_balanced(s, 0, [&](size_t i, int depth) {
    if (depth == 0 && s.compare(i, what.size(), what) == 0) {
      found = i;
      return true;
    }
    return false;
  });
  return found;
}

// Splits at top-level commas.
std::vector<std::string_view> split_top(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  scan_balanced(s, 0, [&](size_t i, int depth) {
    if (depth == 0 && s[i] == ',') {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
    return false;
  });
  auto last = trim(s.substr(start));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

// The matching close of the bracket at s[open]; npos when unbalanced.
size_t matching(std::string_view s, size_t open) {
  size_t found = std::string_view::npos;
  scan_balanced(s, open, [&](size_t i, int depth) {
    char c = s[i];
    bool closes = c == ')' || c == ']' || c == '}' || (c == '>' && !(i > 0 && s[i - 1] == '-'));
    if (i > open && depth == 1 && closes) {
      found = i;
      return true;
    }
    return false;
  });
  return found;
}

// "key = value, key2, "quoted" = v" -> attributes.
void parse_attr_dict(std::string_view body, std::vector<Attribute>& out) {
  for (auto entry : split_top(body)) {
    if (entry.empty()) continue;
    size_t eq = find_top_level(entry, "=");
    std::string_view key = trim(eq == std::string_view::npos ? entry : entry.substr(0, eq));
    if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
    out.push_back({key, eq == std::string_view::npos ? std::string_view() : trim(entry.substr(eq + 1))});
  }
}

// Splits "a, b" type lists or "(a, b)" into types.
std::vector<std::string_view> type_list(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '(') {
    size_t close = matching(s, 0);
    if (close == std::string_view::npos) return {};
    auto inner = trim(s.substr(1, close - 1));
    if (inner.empty()) return {};
    return split_top(inner);
  }
  if (s.empty()) return {};
  return {s};
}

class Parser {
 public:
  Parser(std::string_view s, Module& m) : s_(s), m_(m) {}

  void run() { statements(-1, false); }

 private:
  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1;
  Module& m_;
  int depth_ = 0;

  void error(int line, std::string message) {
    if (m_.errors.size() < 100) m_.errors.push_back({line, std::move(message)});
  }

  void skip_space() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }

  void skip_line() {
    while (i_ < s_.size() && s_[i_] != '\n') ++i_;
  }

  void statements(int parent, bool in_region) {
    while (true) {
      skip_space();
      if (i_ >= s_.size()) {
        if (in_region) error(line_, "a region is not closed before the end of the file");
        return;
      }
      char c = s_[i_];
      if (c == '}') {
        ++i_;
        if (in_region) return;
        error(line_, "'}' without a region to close");
        continue;
      }
      if (c == '^') {  // block label "^bb0(%a: tensor<f32>):"
        skip_line();
        continue;
      }
      if (parent < 0 && s_.compare(i_, 3, "{-#") == 0) {  // dialect resources
        auto end = s_.find("#-}", i_);
        for (size_t k = i_; k < std::min(end, s_.size()); ++k) line_ += s_[k] == '\n';
        i_ = end == std::string_view::npos ? s_.size() : end + 3;
        continue;
      }
      if ((c == '#' || c == '!') && alias_definition()) continue;
      operation(parent);
    }
  }

  // "#name = value" (one line): an attribute or location alias.
  bool alias_definition() {
    size_t j = i_ + 1;
    while (j < s_.size() && ident_char(s_[j])) ++j;
    size_t k = j;
    while (k < s_.size() && (s_[k] == ' ' || s_[k] == '\t')) ++k;
    if (k >= s_.size() || s_[k] != '=') return false;
    std::string_view name = s_.substr(i_, j - i_);
    size_t start = k + 1;
    size_t end = s_.find('\n', start);
    if (end == std::string_view::npos) end = s_.size();
    m_.aliases[name] = trim(s_.substr(start, end - start));
    i_ = end;
    return true;
  }

  void operation(int parent) {
    int index = static_cast<int>(m_.ops.size());
    m_.ops.emplace_back();
    m_.ops[index].line = line_;
    m_.ops[index].parent = parent;
    int start_line = line_;
    size_t start = i_;
    size_t pre_end = std::string_view::npos;  // where the first region opens
    size_t tail_start = start;                // after the last region
    int depth = 0;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '"') {
        size_t e = skip_string(s_, i_);
        for (size_t k = i_; k < e; ++k) line_ += s_[k] == '\n';
        i_ = e;
        continue;
      }
      if (c == '\n') {
        if (depth <= 0) break;
        ++line_;
        ++i_;
        continue;
      }
      if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        skip_line();
        continue;
      }
      if (c == '{' && opens_region()) {
        if (pre_end == std::string_view::npos) pre_end = i_;
        ++i_;
        if (depth_ > 200) {
          error(line_, "regions nested too deeply");
          skip_region();
        } else {
          ++depth_;
          statements(index, true);
          --depth_;
        }
        tail_start = i_;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) break;  // a region's close on this line belongs to our parent
        --depth;
      }
      ++i_;
    }
    size_t end = i_;
    Operation& op = m_.ops[index];
    std::string_view pre = s_.substr(start, (pre_end == std::string_view::npos ? end : pre_end) - start);
    std::string_view tail = pre_end == std::string_view::npos ? std::string_view() : s_.substr(tail_start, end - tail_start);
    op.text = trim(pre);
    fill(op, index, pre, tail, start_line);
  }

  void skip_region() {
    int depth = 1;
    while (i_ < s_.size() && depth > 0) {
      char c = s_[i_];
      if (c == '"') {
        i_ = skip_string(s_, i_);
        continue;
      }
      if (c == '\n') ++line_;
      if (c == '{') ++depth;
      if (c == '}') --depth;
      ++i_;
    }
  }

  // A '{' that ends its line opens a region; one followed by text is an attribute dictionary.
  bool opens_region() const {
    size_t j = i_ + 1;
    while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t' || s_[j] == '\r')) ++j;
    return j >= s_.size() || s_[j] == '\n' || (s_[j] == '/' && j + 1 < s_.size() && s_[j + 1] == '/');
  }

  void fill(Operation& op, int index, std::string_view pre, std::string_view tail, int line) {
    std::string_view t = trim(pre);
    size_t p = 0;
    // Results: "%0 = ", "%0:2 = ", "%a, %b = ".
    if (!t.empty() && t[0] == '%') {
      size_t eq = std::string_view::npos;
      scan_balanced(t, 0, [&](size_t i, int depth) {
        if (depth == 0 && t[i] == '=') {
          eq = i;
          return true;
        }
        return depth == 0 && t[i] == '"';
      });
      if (eq != std::string_view::npos) {
        for (auto r : split_top(t.substr(0, eq))) {
          auto colon = r.find(':');
          op.results.push_back(trim(colon == std::string_view::npos ? r : r.substr(0, colon)));
        }
        p = eq + 1;
      }
    }
    while (p < t.size() && std::isspace(static_cast<unsigned char>(t[p]))) ++p;
    bool generic = p < t.size() && t[p] == '"';
    if (generic) {
      size_t e = skip_string(t, p);
      op.name = t.substr(p + 1, e - p - 2);
      p = e;
    } else {
      size_t e = p;
      while (e < t.size() && ident_char(t[e])) ++e;
      op.name = t.substr(p, e - p);
      p = e;
    }
    if (op.name.empty()) {
      error(line, "an operation without a name: '" + std::string(t.substr(0, 60)) + "'");
      return;
    }
    std::string_view rest = t.substr(p);
    // The location: a top-level loc(...) (the last one), in the tail after regions if any.
    std::string_view sig = tail.empty() ? rest : tail;
    take_loc(sig, op.loc);
    if (!tail.empty()) take_loc(rest, op.loc);
    // Operands, properties, the attribute dictionary, custom key=value attributes.
    size_t list_open = std::string_view::npos, list_close = std::string_view::npos;  // generic "(%a, %b)"
    {
      // Generic form: "(%a, %b)" after the quoted name; custom forms such as sdy.manual_computation(%a, %b).
      size_t k = 0;
      if (generic)
        while (k < rest.size() && rest[k] == ' ') ++k;
      if (k < rest.size() && rest[k] == '(') {
        list_open = k;
        list_close = matching(rest, k);
      }
    }
    scan_balanced(rest, 0, [&](size_t i, int depth) {
      char c = rest[i];
      if (depth == 0 && c == '%') {
        size_t e = i + 1;
        while (e < rest.size() && (ident_char(rest[e]) || rest[e] == '#')) ++e;
        bool definition = e < rest.size() && rest[e] == ':' && !(e + 1 < rest.size() && std::isdigit(static_cast<unsigned char>(rest[e + 1])));
        if (!definition) op.operands.push_back(rest.substr(i, e - i));
      } else if (depth == 1 && c == '%' && list_open != std::string_view::npos && i > list_open && i < list_close) {
        size_t e = i + 1;
        while (e < rest.size() && (ident_char(rest[e]) || rest[e] == '#')) ++e;
        op.operands.push_back(rest.substr(i, e - i));
      } else if (depth == 0 && c == '{') {
        size_t close = matching(rest, i);
        if (close != std::string_view::npos) {
          bool property = i > 0 && rest[i - 1] == '<';
          (void)property;
          parse_attr_dict(rest.substr(i + 1, close - i - 1), op.attributes);
        }
      } else if (depth == 1 && c == '{' && i > 0 && rest[i - 1] == '<') {
        size_t close = matching(rest, i);
        if (close != std::string_view::npos) parse_attr_dict(rest.substr(i + 1, close - i - 1), op.attributes);
      } else if (!generic && depth == 0 && c == '=' && i > 0) {
        // custom form "name=value" (sdy.manual_computation's in_shardings=[...], out_sharding=<...>)
        size_t k = i;
        while (k > 0 && std::isspace(static_cast<unsigned char>(rest[k - 1]))) --k;
        size_t ks = k;
        while (ks > 0 && ident_char(rest[ks - 1])) --ks;
        size_t v = i + 1;
        while (v < rest.size() && rest[v] == ' ') ++v;
        size_t ve = scan_balanced(rest, v, [&](size_t j, int d) { return d == 0 && j > v && (rest[j] == ' ' || rest[j] == ','); });
        if (ks < k) op.attributes.push_back({rest.substr(ks, k - ks), rest.substr(v, ve - v)});
      }
      return false;
    });
    // The type signature: after the last top-level ':'.
    std::string_view types = sig;
    size_t colon = std::string_view::npos;
    scan_balanced(types, 0, [&](size_t i, int depth) {
      if (depth == 0 && types[i] == ':' && (i + 1 >= types.size() || types[i + 1] == ' ')) colon = i;
      return false;
    });
    if (colon != std::string_view::npos) {
      std::string_view ty = trim(types.substr(colon + 1));
      size_t arrow = find_top_level(ty, "->");
      if (arrow != std::string_view::npos) {
        op.operand_types = type_list(ty.substr(0, arrow));
        op.result_types = type_list(ty.substr(arrow + 2));
      } else {
        op.result_types = type_list(ty);
      }
    }
    if (op.name == "func.func") function(op, index, rest);
    else if (op.name == "sdy.mesh") sdy_mesh(rest);
    else if (op.name == "module" || op.name == "builtin.module") {
      if (auto meshes = op.attribute("ttcore.meshes")) tt_meshes(*meshes);
      else if (auto meshes = op.attribute("tt.meshes")) tt_meshes(*meshes);
    }
  }

  // Removes a trailing top-level loc(...) from `text`, storing its content.
  static void take_loc(std::string_view& text, std::string_view& loc) {
    // Fast path: the printer puts it last ("... loc(#loc3)").
    std::string_view t = trim(text);
    if (!t.empty() && t.back() == ')') {
      size_t last = t.rfind("loc(");
      if (last != std::string_view::npos && (last == 0 || !ident_char(t[last - 1])) && matching(t, last + 3) == t.size() - 1) {
        loc = t.substr(last + 4, t.size() - last - 5);
        text = t.substr(0, last);
        return;
      }
    }
    size_t at = std::string_view::npos;
    scan_balanced(text, 0, [&](size_t i, int depth) {
      if (depth == 0 && text.compare(i, 4, "loc(") == 0 && (i == 0 || !ident_char(text[i - 1]))) at = i;
      return false;
    });
    if (at == std::string_view::npos) return;
    size_t close = matching(text, at + 3);
    if (close == std::string_view::npos) return;
    loc = text.substr(at + 4, close - at - 4);
    text = text.substr(0, at);
  }

  void function(Operation& op, int index, std::string_view rest) {
    Function f;
    f.op = index;
    size_t at = rest.find('@');
    if (at == std::string_view::npos) return;
    size_t e = at + 1;
    if (e < rest.size() && rest[e] == '"') e = skip_string(rest, e);
    else
      while (e < rest.size() && ident_char(rest[e])) ++e;
    f.name = rest.substr(at + 1, e - at - 1);
    size_t open = rest.find('(', e);
    if (open != std::string_view::npos) {
      size_t close = matching(rest, open);
      if (close != std::string_view::npos) {
        for (auto a : split_top(rest.substr(open + 1, close - open - 1))) {
          if (a.empty() || a[0] != '%') continue;
          Argument arg;
          size_t colon = a.find(':');
          if (colon == std::string_view::npos) continue;
          arg.name = trim(a.substr(0, colon));
          std::string_view more = trim(a.substr(colon + 1));
          take_loc(more, arg.loc);
          more = trim(more);
          size_t type_end = scan_balanced(more, 0, [&](size_t i, int depth) { return depth == 0 && more[i] == ' '; });
          arg.type = more.substr(0, type_end);
          std::string_view after = trim(more.substr(type_end));
          if (!after.empty() && after[0] == '{') {
            size_t c = matching(after, 0);
            if (c != std::string_view::npos) parse_attr_dict(after.substr(1, c - 1), arg.attributes);
          }
          f.arguments.push_back(arg);
        }
      }
    }
    m_.functions.push_back(std::move(f));
  }

  // sdy.mesh @mesh = <["batch"=1, "model"=8]>
  void sdy_mesh(std::string_view rest) {
    MeshAxes mesh;
    size_t at = rest.find('@');
    if (at != std::string_view::npos) {
      size_t e = at + 1;
      while (e < rest.size() && ident_char(rest[e])) ++e;
      mesh.name = std::string(rest.substr(at + 1, e - at - 1));
    }
    for (size_t q = rest.find('"'); q != std::string_view::npos; q = rest.find('"', q)) {
      size_t e = skip_string(rest, q);
      std::string name(rest.substr(q + 1, e - q - 2));
      size_t k = e;
      while (k < rest.size() && (rest[k] == ' ' || rest[k] == '=')) ++k;
      int64_t size = 0;
      auto r = std::from_chars(rest.data() + k, rest.data() + rest.size(), size);
      if (r.ec == std::errc()) mesh.axes.emplace_back(name, size);
      q = e;
    }
    m_.meshes.push_back(std::move(mesh));
  }

  // #ttcore.meshes<[<"mesh" = 1x8>]>
  void tt_meshes(std::string_view text) {
    for (size_t q = text.find('"'); q != std::string_view::npos; q = text.find('"', q)) {
      size_t e = skip_string(text, q);
      MeshAxes mesh;
      mesh.name = std::string(text.substr(q + 1, e - q - 2));
      size_t k = e;
      while (k < text.size() && (text[k] == ' ' || text[k] == '=')) ++k;
      size_t stop = text.find('>', k);
      std::string_view dims = text.substr(k, stop == std::string_view::npos ? std::string_view::npos : stop - k);
      int axis = 0;
      size_t d = 0;
      while (d < dims.size()) {
        int64_t v = 0;
        auto r = std::from_chars(dims.data() + d, dims.data() + dims.size(), v);
        if (r.ec != std::errc()) break;
        mesh.axes.emplace_back("axis" + std::to_string(axis++), v);
        d = static_cast<size_t>(r.ptr - dims.data());
        if (d < dims.size() && dims[d] == 'x') ++d;
        else break;
      }
      m_.meshes.push_back(std::move(mesh));
      q = e;
    }
  }
};

void resolve_into(const Module& m, std::string_view text, Location& out, int depth) {
  text = trim(text);
  if (text.empty() || depth > 64) return;
  if (text.size() > 5 && text.substr(0, 4) == "loc(" && text.back() == ')') {
    resolve_into(m, text.substr(4, text.size() - 5), out, depth + 1);
    return;
  }
  if (text[0] == '#') {
    auto it = m.aliases.find(text);
    if (it != m.aliases.end()) resolve_into(m, it->second, out, depth + 1);
    return;
  }
  if (text.substr(0, 9) == "callsite(" && text.back() == ')') {
    std::string_view inner = text.substr(9, text.size() - 10);
    size_t at = find_top_level(inner, " at ");
    if (at == std::string_view::npos) return;
    resolve_into(m, inner.substr(0, at), out, depth + 1);
    resolve_into(m, inner.substr(at + 4), out, depth + 1);
    return;
  }
  if (text.substr(0, 5) == "fused") {
    size_t open = text.find('[');
    if (open == std::string_view::npos) return;
    size_t close = matching(text, open);
    if (close == std::string_view::npos) return;
    for (auto part : split_top(text.substr(open + 1, close - open - 1))) resolve_into(m, part, out, depth + 1);
    return;
  }
  if (text[0] == '"') {
    size_t e = skip_string(text, 0);
    std::string name(text.substr(1, e - 2));
    std::string_view after = text.substr(e);
    if (!after.empty() && after[0] == ':') {
      Location::Frame f;
      f.file = std::move(name);
      const char* p = after.data() + 1;
      const char* end = after.data() + after.size();
      auto r = std::from_chars(p, end, f.line);
      if (r.ptr < end && *r.ptr == ':') std::from_chars(r.ptr + 1, end, f.column);
      out.frames.push_back(std::move(f));
      return;
    }
    out.names.push_back(std::move(name));
    if (!after.empty() && after[0] == '(') {
      size_t close = matching(after, 0);
      if (close != std::string_view::npos) resolve_into(m, after.substr(1, close - 1), out, depth + 1);
    }
  }
}

}  // namespace

std::optional<std::string_view> Operation::attribute(std::string_view key) const {
  for (auto& a : attributes)
    if (a.name == key) return a.value;
  return std::nullopt;
}

int64_t TensorType::elements() const {
  int64_t n = 1;
  for (auto d : shape) n *= d < 0 ? 1 : d;
  return n;
}

double TensorType::element_bytes() const {
  std::string_view e = element;
  if (e == "bf16" || e == "f16" || e == "i16" || e == "si16" || e == "ui16") return 2;
  if (e == "f64" || e == "i64" || e == "si64" || e == "ui64") return 8;
  if (e == "i8" || e == "si8" || e == "ui8" || e == "i1" || e.find("f8") != std::string_view::npos) return 1;
  if (e.find("bfp_bf8") != std::string_view::npos || e.find("bfp8") != std::string_view::npos) return 1.0625;
  if (e.find("bfp_bf4") != std::string_view::npos) return 0.5625;
  return 4;
}

std::string TensorType::str() const {
  std::string out;
  for (auto d : shape) out += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return out + element;
}

TensorType parse_tensor_type(std::string_view text) {
  TensorType t;
  text = trim(text);
  if (text.substr(0, 7) != "tensor<") return t;
  size_t close = matching(text, 6);
  if (close == std::string_view::npos) return t;
  std::string_view body = text.substr(7, close - 7);
  // An encoding after a top-level comma ("1x32xbf16, #ttnn_layout").
  size_t comma = find_top_level(body, ",");
  if (comma != std::string_view::npos) body = trim(body.substr(0, comma));
  size_t p = 0;
  while (p < body.size()) {
    if (body[p] == '?') {
      t.shape.push_back(-1);
      ++p;
    } else if (std::isdigit(static_cast<unsigned char>(body[p]))) {
      int64_t v = 0;
      auto r = std::from_chars(body.data() + p, body.data() + body.size(), v);
      if (r.ptr == body.data() + body.size() || *r.ptr != 'x') break;  // "8x" dims; digits then not 'x': an element
      t.shape.push_back(v);
      p = static_cast<size_t>(r.ptr - body.data());
    } else {
      break;
    }
    if (p < body.size() && body[p] == 'x') ++p;
  }
  t.element = std::string(trim(body.substr(p)));
  // "!ttcore.tile<32x32, bf16>" element: the tile's scalar type.
  if (auto lt = t.element.find('<'); lt != std::string::npos && t.element.find("tile") != std::string::npos) {
    auto c = t.element.rfind(',');
    if (c != std::string::npos) t.element = std::string(trim(std::string_view(t.element).substr(c + 1, t.element.size() - c - 2)));
  }
  t.valid = !t.element.empty();
  return t;
}

Location Module::resolve_location(std::string_view loc) const {
  Location out;
  resolve_into(*this, loc, out, 0);
  return out;
}

Module parse_mlir(std::string text, std::string file) {
  Module m;
  m.file = std::move(file);
  m.text_ = std::make_shared<const std::string>(std::move(text));
  Parser p(*m.text_, m);
  p.run();
  return m;
}

std::vector<int64_t> parse_int_array(std::string_view text) {
  text = trim(text);
  // A trailing type (" : tensor<1x2xi64>") is not part of the value.
  size_t colon = std::string_view::npos;
  scan_balanced(text, 0, [&](size_t i, int depth) {
    if (depth == 0 && text[i] == ':') colon = i;
    return false;
  });
  if (colon != std::string_view::npos) text = text.substr(0, colon);
  if (text.substr(0, 6) == "array<") {
    size_t c = text.find(':');
    if (c != std::string_view::npos) text = text.substr(c + 1);
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool starts = (std::isdigit(static_cast<unsigned char>(c)) || (c == '-' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])))) &&
                  (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'));
    if (!starts) continue;
    int64_t v = 0;
    auto r = std::from_chars(text.data() + i, text.data() + text.size(), v);
    if (r.ec != std::errc()) continue;
    out.push_back(v);
    i = static_cast<size_t>(r.ptr - text.data()) - 1;
  }
  return out;
}

std::optional<int64_t> parse_int_attr(std::string_view text) {
  auto v = parse_int_array(text);
  if (v.empty()) return std::nullopt;
  return v[0];
}

std::optional<std::vector<std::vector<std::string>>> parse_sdy_sharding(std::string_view text) {
  text = trim(text);
  size_t at = text.find('@');
  if (at == std::string_view::npos) return std::nullopt;
  size_t open = text.find('[', at);
  if (open == std::string_view::npos) return std::nullopt;
  size_t close = matching(text, open);
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::vector<std::string>> dims;
  for (auto d : split_top(text.substr(open + 1, close - open - 1))) {
    if (d.empty()) continue;
    std::vector<std::string> axes;
    for (size_t q = d.find('"'); q != std::string_view::npos; q = d.find('"', q)) {
      size_t e = skip_string(d, q);
      axes.emplace_back(d.substr(q + 1, e - q - 2));
      q = e;
    }
    dims.push_back(std::move(axes));
  }
  return dims;
}

std::vector<std::vector<std::vector<std::string>>> parse_sdy_sharding_per_value(std::string_view text) {
  std::vector<std::vector<std::vector<std::string>>> out;
  size_t open = text.find('[');
  if (open == std::string_view::npos) return out;
  size_t close = matching(text, open);
  if (close == std::string_view::npos) return out;
  for (auto v : split_top(text.substr(open + 1, close - open - 1)))
    if (auto s = parse_sdy_sharding(v)) out.push_back(std::move(*s));
  return out;
}

}  // namespace shardlens::mlir
