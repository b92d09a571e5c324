// Reading files and paths the way loaders do (`json.load(open("configs/7B.json"))`,
// `sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))`). Reading a file runs nothing;
// writing is never modelled. Relative paths are taken from the script's folder, where a user runs
// a loader from.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "python/interpreter.h"

namespace shardlens::python {

namespace {

using Args = CallArgs;
constexpr size_t kMaxReadBytes = 8u << 20;

bool stat_is(const std::string& path, mode_t type) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

Value from_json(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      auto d = std::make_shared<DictObj>();
      for (auto& [k, v] : j.items()) d->set(Value::str(k), from_json(v));
      return Value::object(d);
    }
    case nlohmann::json::value_t::array: {
      std::vector<Value> items;
      for (auto& v : j) items.push_back(from_json(v));
      return make_list(std::move(items));
    }
    case nlohmann::json::value_t::string: return Value::str(j.get<std::string>());
    case nlohmann::json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      return u <= static_cast<uint64_t>(INT64_MAX) ? Value::integer(static_cast<int64_t>(u)) : Value::floating(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float: return Value::floating(j.get<double>());
    default: return Value::none();
  }
}

// Path arguments as strings (unknown when any is not one).
bool strings(const Args& a, std::vector<std::string>& out) {
  for (auto& v : a.positional) {
    if (!v.is_str()) return false;
    out.push_back(v.s);
  }
  return true;
}

}  // namespace

void install_files(Interpreter& in) {
  auto path_fn = [&in](const char* name, std::function<Value(Interpreter&, const std::vector<std::string>&)> fn) {
    in.define_native(std::string("os.path.") + name, [fn, name](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      std::vector<std::string> parts;
      if (!strings(a, parts) || parts.empty()) {
        for (auto& v : a.positional)
          if (v.is_unknown()) return v;
        return in.unknown(std::string("os.path.") + name + "() of a value that is not a known string", site);
      }
      return fn(in, parts);
    });
  };
  namespace fs = std::filesystem;
  path_fn("join", [](Interpreter&, const std::vector<std::string>& p) {
    std::string out = p[0];
    for (size_t i = 1; i < p.size(); ++i) {
      if (!p[i].empty() && p[i][0] == '/') out = p[i];
      else if (out.empty() || out.back() == '/') out += p[i];
      else out += "/" + p[i];
    }
    return Value::str(out);
  });
  path_fn("dirname", [](Interpreter&, const std::vector<std::string>& p) {
    size_t slash = p[0].find_last_of('/');
    if (slash == std::string::npos) return Value::str("");
    std::string head = p[0].substr(0, slash + 1);
    while (head.size() > 1 && head.back() == '/') head.pop_back();
    return Value::str(head);
  });
  path_fn("basename", [](Interpreter&, const std::vector<std::string>& p) { return Value::str(p[0].substr(p[0].find_last_of('/') + 1)); });
  auto absolute = [](Interpreter& in, const std::vector<std::string>& p) {
    return Value::str(fs::path(in.from_script_dir(p[0])).lexically_normal().string());
  };
  path_fn("abspath", absolute);
  path_fn("realpath", absolute);
  path_fn("normpath", [](Interpreter&, const std::vector<std::string>& p) { return Value::str(fs::path(p[0]).lexically_normal().string()); });
  path_fn("expanduser", [](Interpreter&, const std::vector<std::string>& p) {
    const char* home = std::getenv("HOME");
    if (p[0].rfind("~", 0) == 0 && home) return Value::str(home + p[0].substr(1));
    return Value::str(p[0]);
  });
  path_fn("exists", [](Interpreter& in, const std::vector<std::string>& p) {
    std::string r = in.from_script_dir(p[0]);
    return Value::boolean(stat_is(r, S_IFREG) || stat_is(r, S_IFDIR));
  });
  path_fn("isfile", [](Interpreter& in, const std::vector<std::string>& p) { return Value::boolean(stat_is(in.from_script_dir(p[0]), S_IFREG)); });
  path_fn("isdir", [](Interpreter& in, const std::vector<std::string>& p) { return Value::boolean(stat_is(in.from_script_dir(p[0]), S_IFDIR)); });
  path_fn("splitext", [](Interpreter&, const std::vector<std::string>& p) {
    size_t dot = p[0].find_last_of('.'), slash = p[0].find_last_of('/');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1)
      return make_tuple({Value::str(p[0]), Value::str("")});
    return make_tuple({Value::str(p[0].substr(0, dot)), Value::str(p[0].substr(dot))});
  });

  // open(path) for reading text: an object with read() that `with` and json.load accept.
  auto file_class = in.make_builtin_class("io.TextIOWrapper", {}, nullptr);
  // Natives stored on a class receive the instance as their first positional argument.
  file_class->set("read", in.native("io.TextIOWrapper.read", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "read() needs its file", site);
    return in.get_attribute(a.positional[0], "_shardlens_text", site);
  }));
  file_class->set("__enter__", in.native("io.TextIOWrapper.__enter__", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return a.positional.empty() ? Value::none() : a.positional[0];
  }));
  file_class->set("__exit__", in.native("io.TextIOWrapper.__exit__", [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::boolean(false); }));
  file_class->set("close", in.native("io.TextIOWrapper.close", [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::none(); }));
  in.define_native("builtins.open", [file_class](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty() || !a.positional[0].is_str())
      return in.unknown("open() of a path that is not a known string", site);
    const Value* mode = argument(a, 1, "mode");
    if (mode && (!mode->is_str() || mode->s.find_first_of("wax+") != std::string::npos))
      return in.unknown("files are only read during static analysis, never written", site);
    std::string path = in.from_script_dir(a.positional[0].s);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return in.raise("FileNotFoundError", "No such file or directory: '" + a.positional[0].s + "'", site);
    if (static_cast<size_t>(st.st_size) > kMaxReadBytes)
      return in.unknown("'" + a.positional[0].s + "' is larger than 8 MiB and was not read", site);
    std::ifstream f(path, std::ios::binary);
    std::ostringstream text;
    text << f.rdbuf();
    Value file = in.instantiate(file_class, CallArgs{}, site);
    in.set_attribute(file, "_shardlens_text", Value::str(text.str()), site);
    in.set_attribute(file, "name", a.positional[0], site);
    return file;
  });
  auto parse = [](Interpreter& in, const Value& text, const ir::Span& site) {
    if (!text.is_str()) return text.is_unknown() ? text : in.unknown("json of a value that is not a known string", site);
    auto j = nlohmann::json::parse(text.s, nullptr, false);
    if (j.is_discarded()) return in.raise("json.JSONDecodeError", "the text is not valid JSON", site);
    return from_json(j);
  };
  in.define_native("json.loads", [parse](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "json.loads() needs a string", site);
    return parse(in, a.positional[0], site);
  });
  in.define_native("json.load", [parse](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "json.load() needs a file", site);
    Value text = a.positional[0].is_unknown() ? a.positional[0] : in.get_attribute(a.positional[0], "_shardlens_text", site);
    if (in.exception_pending()) return text;
    return parse(in, text, site);
  });
}

}  // namespace shardlens::python
