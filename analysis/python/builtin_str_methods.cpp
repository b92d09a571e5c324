// The methods of str, with Python's formatting (str.format, %, format specs).
#include <algorithm>
#include <cstdio>

#include "ir/split.h"
#include "python/interpreter.h"
#include "python/native_support.h"
#include "python/numbers.h"

namespace shardlens::python::native {

std::string format_with_spec(Interpreter& in, const Value& v, const std::string& spec_in, bool& ok) {
  ok = true;
  std::string spec = spec_in;
  char fill = ' ', align = 0, sign = '-';
  bool zero = false, comma = false;
  int width = -1, precision = -1;
  char type = 0;
  size_t i = 0;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (spec.size() >= 2 && is_align(spec[1])) { fill = spec[0]; align = spec[1]; i = 2; }
  else if (!spec.empty() && is_align(spec[0])) { align = spec[0]; i = 1; }
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) sign = spec[i++];
  if (i < spec.size() && spec[i] == '0') { zero = true; ++i; }
  while (i < spec.size() && isdigit(static_cast<unsigned char>(spec[i]))) width = std::min(std::max(width, 0) * 10 + (spec[i++] - '0'), 100'000'000);  // bounded: no int overflow
  if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) { comma = true; ++i; }
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    precision = 0;
    while (i < spec.size() && isdigit(static_cast<unsigned char>(spec[i]))) precision = precision * 10 + (spec[i++] - '0');
  }
  if (i < spec.size()) type = spec[i++];
  if (i != spec.size()) { ok = false; return {}; }

  std::string body;
  char buf[128];
  if (type == 'd' || type == 'x' || type == 'X' || type == 'o' || type == 'b' || (type == 0 && v.is_int() && v.kind != Value::Kind::Bool)) {
    if (!v.is_int()) { ok = false; return {}; }
    int64_t n = v.as_int();
    if (type == 'x' || type == 'X' || type == 'o') {
      std::snprintf(buf, sizeof buf, type == 'x' ? "%llx" : type == 'X' ? "%llX" : "%llo", static_cast<unsigned long long>(std::llabs(n)));
      body = buf;
    } else if (type == 'b') {
      uint64_t u = static_cast<uint64_t>(std::llabs(n));
      do { body.insert(body.begin(), static_cast<char>('0' + (u & 1))); u >>= 1; } while (u);
    } else {
      body = std::to_string(std::llabs(n));
      if (comma)
        for (int k = static_cast<int>(body.size()) - 3; k > 0; k -= 3) body.insert(static_cast<size_t>(k), ",");
    }
    if (n < 0) body = "-" + body;
    else if (sign == '+') body = "+" + body;
    else if (sign == ' ') body = " " + body;
  } else if (type == 'f' || type == 'F' || type == 'e' || type == 'E' || type == 'g' || type == 'G' || type == '%' ||
             (type == 0 && v.kind == Value::Kind::Float && precision >= 0)) {
    if (!v.is_number()) { ok = false; return {}; }
    double x = v.as_float();
    if (type == '%') x *= 100;
    char t = type == '%' ? 'f' : type == 0 ? 'g' : type;
    std::string fmt = std::string("%") + (sign == '+' ? "+" : sign == ' ' ? " " : "") + "." +
                      std::to_string(precision < 0 ? 6 : precision) + t;
    std::snprintf(buf, sizeof buf, fmt.c_str(), x);
    body = buf;
    if (type == '%') body += "%";
  } else {
    body = in.to_str(v);
    if (precision >= 0 && static_cast<int>(body.size()) > precision) body.resize(static_cast<size_t>(precision));
  }
  if (width > static_cast<int>(body.size())) {
    size_t pad = static_cast<size_t>(width) - body.size();
    if (!align) align = (v.is_number() && type != 's') ? (zero ? '=' : '>') : '<';
    if (zero && align == '=') fill = '0';
    if (align == '<') body += std::string(pad, fill);
    else if (align == '>') body = std::string(pad, fill) + body;
    else if (align == '^') body = std::string(pad / 2, fill) + body + std::string(pad - pad / 2, fill);
    else {
      size_t signs = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
      body.insert(signs, std::string(pad, fill));
    }
  }
  return body;
}

namespace {

const Value kNone;

Value str_format(Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
  if (auto* u = first_unknown_arg(a)) return *u;
  const std::string& f = self.s;
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    if (c == '{' && i + 1 < f.size() && f[i + 1] == '{') { out += '{'; ++i; continue; }
    if (c == '}' && i + 1 < f.size() && f[i + 1] == '}') { out += '}'; ++i; continue; }
    if (c != '{') { out += c; continue; }
    size_t close = f.find('}', i);
    if (close == std::string::npos) return in.raise("ValueError", "unmatched '{' in format string", site);
    std::string field = f.substr(i + 1, close - i - 1);
    i = close;
    std::string spec, conversion;
    if (auto colon = field.find(':'); colon != std::string::npos) { spec = field.substr(colon + 1); field = field.substr(0, colon); }
    if (auto bang = field.find('!'); bang != std::string::npos) { conversion = field.substr(bang + 1); field = field.substr(0, bang); }
    // field: "", "0", "name", "name.attr", "name[0]"
    std::string head = field.substr(0, field.find_first_of(".["));
    std::string rest = field.substr(head.size());
    Value v;
    if (head.empty()) {
      if (auto_index >= a.positional.size()) return in.raise("IndexError", "format index out of range", site);
      v = a.positional[auto_index++];
    } else if (isdigit(static_cast<unsigned char>(head[0]))) {
      size_t idx = std::stoul(head);
      if (idx >= a.positional.size()) return in.raise("IndexError", "format index out of range", site);
      v = a.positional[idx];
    } else if (const Value* kw = a.keyword(head)) {
      v = *kw;
    } else {
      return in.raise("KeyError", head, site);
    }
    while (!rest.empty()) {
      if (rest[0] == '.') {
        size_t end = rest.find_first_of(".[", 1);
        v = in.get_attribute(v, rest.substr(1, end == std::string::npos ? std::string::npos : end - 1), site);
        rest = end == std::string::npos ? "" : rest.substr(end);
      } else if (rest[0] == '[') {
        size_t end = rest.find(']');
        std::string key = rest.substr(1, end - 1);
        Value k = !key.empty() && isdigit(static_cast<unsigned char>(key[0])) ? Value::integer(std::stoll(key)) : Value::str(key);
        if (auto* l = TupleView::of(v); l && k.is_int() && k.i < static_cast<int64_t>(l->items.size())) v = l->items[k.i];
        else if (auto* d = v.as<DictObj>(); d && d->find(k)) v = *d->find(k);
        else return in.unknown("format field lookup", site);
        rest = end == std::string::npos ? "" : rest.substr(end + 1);
      } else {
        break;
      }
    }
    if (v.is_unknown()) return v;
    if (conversion == "r") v = Value::str(repr(v));
    else if (conversion == "s") v = Value::str(in.to_str(v));
    bool ok = true;
    out += spec.empty() ? in.to_str(v) : format_with_spec(in, v, spec, ok);
    if (!ok) return in.raise("ValueError", "invalid format specifier '" + spec + "'", site);
  }
  return Value::str(out);
}

Value str_percent(Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
  std::vector<Value> values;
  const Value& arg = a.positional.empty() ? kNone : a.positional[0];
  if (arg.is_unknown()) return arg;
  if (auto* t = TupleView::of(arg); t && arg.obj->kind == ObjKind::Tuple) values = t->items;
  else values.push_back(arg);
  std::string out;
  size_t next = 0;
  const std::string& f = self.s;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') { out += f[i]; continue; }
    if (i + 1 < f.size() && f[i + 1] == '%') { out += '%'; ++i; continue; }
    size_t j = i + 1;
    std::string spec;
    while (j < f.size() && std::string("0123456789.-+ #").find(f[j]) != std::string::npos) spec += f[j++];
    if (j >= f.size()) break;
    char conv = f[j];
    i = j;
    if (next >= values.size()) return in.raise("TypeError", "not enough arguments for format string", site);
    Value v = values[next++];
    if (v.is_unknown()) return v;
    bool ok = true;
    std::string piece;
    if (conv == 's') piece = format_with_spec(in, Value::str(in.to_str(v)), spec, ok);
    else if (conv == 'r') piece = format_with_spec(in, Value::str(repr(v)), spec, ok);
    else if (conv == 'd' || conv == 'i') piece = format_with_spec(in, Value::integer(static_cast<int64_t>(v.as_float())), spec + "d", ok);
    else piece = format_with_spec(in, v, spec + conv, ok);
    if (!ok) return in.raise("ValueError", "unsupported format character", site);
    out += piece;
  }
  return Value::str(out);
}

}  // namespace

void install_str_methods(Interpreter& in) {
  auto str_method = [&](const std::string& name, NativeFn fn) { in.define_method("str", name, std::move(fn)); };
  str_method("format", str_format);
  str_method("__mod__", str_percent);
  str_method("join", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    Value why;
    auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    if (!items) return why;
    std::string out;
    for (size_t i = 0; i < items->size(); ++i) {
      if ((*items)[i].is_unknown()) return (*items)[i];
      if (!(*items)[i].is_str()) return in.raise("TypeError", "sequence item: expected str instance", site);
      out += (i ? self.s : "") + (*items)[i].s;
    }
    return Value::str(out);
  });
  auto split = [](bool from_right) {
    return [from_right](Interpreter&, const Value& self, Args& a, const ir::Span&) {
      const Value* sep = argument(a, 0, "sep");
      const Value* maxsplit_v = argument(a, 1, "maxsplit");
      int64_t maxsplit = maxsplit_v && maxsplit_v->is_int() ? maxsplit_v->as_int() : -1;
      std::vector<Value> parts;
      const std::string& s = self.s;
      if (!sep || sep->is_none()) {
        std::vector<std::string> words;
        size_t i = 0;
        while (i < s.size()) {
          while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) ++i;
          if (i >= s.size()) break;
          size_t j = i;
          while (j < s.size() && !isspace(static_cast<unsigned char>(s[j]))) ++j;
          words.push_back(s.substr(i, j - i));
          i = j;
        }
        for (auto& w : words) parts.push_back(Value::str(w));
        return make_list(std::move(parts));
      }
      std::vector<std::string> pieces;
      if (!from_right) {
        size_t start = 0, pos;
        while ((maxsplit < 0 || static_cast<int64_t>(pieces.size()) < maxsplit) && !sep->s.empty() &&
               (pos = s.find(sep->s, start)) != std::string::npos) {
          pieces.push_back(s.substr(start, pos - start));
          start = pos + sep->s.size();
        }
        pieces.push_back(s.substr(start));
      } else {
        size_t end = s.size();
        std::vector<std::string> rev;
        while ((maxsplit < 0 || static_cast<int64_t>(rev.size()) < maxsplit) && !sep->s.empty()) {
          size_t pos = end >= sep->s.size() ? s.rfind(sep->s, end - sep->s.size()) : std::string::npos;
          if (pos == std::string::npos) break;
          rev.push_back(s.substr(pos + sep->s.size(), end - pos - sep->s.size()));
          end = pos;
        }
        pieces.push_back(s.substr(0, end));
        for (auto it = rev.rbegin(); it != rev.rend(); ++it) pieces.push_back(*it);
      }
      for (auto& p : pieces) parts.push_back(Value::str(p));
      return make_list(std::move(parts));
    };
  };
  str_method("split", split(false));
  str_method("rsplit", split(true));
  auto affix = [](bool prefix) {
    return [prefix](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
      if (a.positional.empty()) return in.raise("TypeError", "startswith/endswith need an argument", site);
      std::vector<Value> options;
      if (auto* l = TupleView::of(a.positional[0])) options = l->items; else options.push_back(a.positional[0]);
      for (auto& o : options) {
        if (o.is_unknown()) return o;
        if (!o.is_str()) continue;
        const std::string& s = self.s;
        bool hit = prefix ? s.rfind(o.s, 0) == 0 : (s.size() >= o.s.size() && s.compare(s.size() - o.s.size(), o.s.size(), o.s) == 0);
        if (hit) return Value::boolean(true);
      }
      return Value::boolean(false);
    };
  };
  str_method("startswith", affix(true));
  str_method("endswith", affix(false));
  str_method("replace", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.size() < 2 || !a.positional[0].is_str() || !a.positional[1].is_str())
      return in.unknown("str.replace() arguments", site);
    std::string s = self.s;
    const std::string &from = a.positional[0].s, &to = a.positional[1].s;
    if (from.empty()) return Value::str(s);
    size_t pos = 0;
    while ((pos = s.find(from, pos)) != std::string::npos) {
      s.replace(pos, from.size(), to);
      pos += to.size();
    }
    return Value::str(s);
  });
  auto case_map = [](int mode) {
    return [mode](Interpreter&, const Value& self, Args&, const ir::Span&) {
      std::string s = self.s;
      for (size_t i = 0; i < s.size(); ++i) {
        if (mode == 0) s[i] = static_cast<char>(tolower(s[i]));
        else if (mode == 1) s[i] = static_cast<char>(toupper(s[i]));
        else if (mode == 2) s[i] = static_cast<char>(i == 0 ? toupper(s[i]) : tolower(s[i]));
      }
      return Value::str(s);
    };
  };
  str_method("lower", case_map(0));
  str_method("upper", case_map(1));
  str_method("capitalize", case_map(2));
  auto strip = [](int sides) {
    return [sides](Interpreter&, const Value& self, Args& a, const ir::Span&) {
      std::string chars = a.positional.empty() || !a.positional[0].is_str() ? std::string(" \t\n\r\f\v") : a.positional[0].s;
      std::string s = self.s;
      if (sides & 1) s.erase(0, s.find_first_not_of(chars) == std::string::npos ? s.size() : s.find_first_not_of(chars));
      if (sides & 2) {
        size_t end = s.find_last_not_of(chars);
        s = end == std::string::npos ? "" : s.substr(0, end + 1);
      }
      return Value::str(s);
    };
  };
  str_method("strip", strip(3));
  str_method("lstrip", strip(1));
  str_method("rstrip", strip(2));
  str_method("isdigit", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return Value::boolean(!self.s.empty() && std::all_of(self.s.begin(), self.s.end(), [](char c) { return isdigit(static_cast<unsigned char>(c)); }));
  });
  in.define_method("str", "isnumeric", *in.method("str", "isdigit"));
  str_method("isalpha", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    return Value::boolean(!self.s.empty() && std::all_of(self.s.begin(), self.s.end(), [](char c) { return isalpha(static_cast<unsigned char>(c)); }));
  });
  str_method("find", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.empty() || !a.positional[0].is_str()) return in.unknown("str.find() argument", site);
    size_t p = self.s.find(a.positional[0].s);
    return Value::integer(p == std::string::npos ? -1 : static_cast<int64_t>(p));
  });
  str_method("count", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    if (a.positional.empty() || !a.positional[0].is_str() || a.positional[0].s.empty()) return in.unknown("str.count() argument", site);
    int64_t n = 0;
    for (size_t p = self.s.find(a.positional[0].s); p != std::string::npos; p = self.s.find(a.positional[0].s, p + a.positional[0].s.size())) ++n;
    return Value::integer(n);
  });
  str_method("zfill", [](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    int64_t w = a.positional.empty() ? 0 : a.positional[0].as_int();
    if (!in.fits_memory(w, 1)) return in.unknown("analysis memory budget exhausted", site);
    std::string s = self.s;
    if (static_cast<int64_t>(s.size()) < w) s.insert(0, static_cast<size_t>(w) - s.size(), '0');
    return Value::str(s);
  });
  str_method("title", [](Interpreter&, const Value& self, Args&, const ir::Span&) {
    std::string s = self.s;
    bool start = true;
    for (auto& c : s) {
      c = static_cast<char>(start ? toupper(c) : tolower(c));
      start = !isalpha(static_cast<unsigned char>(c));
    }
    return Value::str(s);
  });
}

}  // namespace shardlens::python::native
