// What a script reads about how it was run: types.SimpleNamespace and argparse (namespaces of
// attributes), sys, os, warnings and logging; values that depend on the environment stay unknown.
#include "python/interpreter.h"
#include "python/native_support.h"
#include "python/numbers.h"

namespace shardlens::python::native {

void install_script_environment(Interpreter& in) {
  auto namespace_class = in.make_builtin_class("types.SimpleNamespace", {}, [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    if (a.positional.empty()) return Value::none();
    if (auto* inst = a.positional[0].as<InstanceObj>())
      for (auto& [k, v] : a.keywords) inst->set_attribute(k, v);
    return Value::none();
  });
  in.define("argparse.Namespace", Value::object(namespace_class));
  auto parser_class = in.make_builtin_class("argparse.ArgumentParser", {}, [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    if (auto* inst = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>())
      inst->set_attribute("__arguments__", make_list({}));
    return Value::none();
  });
  // Each argument is kept as (dest, default, flags, type, action, const) on the parser.
  parser_class->set("add_argument", in.native("argparse.ArgumentParser.add_argument", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    auto* inst = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>();
    if (!inst) return Value::none();
    std::string dest;
    std::vector<Value> flags;
    for (size_t k = 1; k < a.positional.size(); ++k) {
      if (!a.positional[k].is_str()) continue;
      std::string flag = a.positional[k].s;
      flags.push_back(a.positional[k]);
      if (flag.rfind("--", 0) == 0 && (dest.empty() || dest.size() == 1)) dest = flag.substr(2);
      else if (flag.rfind("-", 0) != 0 && dest.empty()) dest = flag;
      else if (flag.rfind("-", 0) == 0 && dest.empty()) dest = flag.substr(1);
    }
    if (const Value* d = a.keyword("dest"); d && d->is_str()) dest = d->s;
    std::replace(dest.begin(), dest.end(), '-', '_');
    std::string action = "store";
    if (const Value* act = a.keyword("action"); act && act->is_str()) action = act->s;
    Value dflt = Value::none();
    if (const Value* d = a.keyword("default")) dflt = *d;
    else if (action == "store_true") dflt = Value::boolean(false);
    else if (action == "store_false") dflt = Value::boolean(true);
    const Value* type = a.keyword("type");
    const Value* konst = a.keyword("const");
    if (Value* list = inst->find_attribute("__arguments__"))
      list->as<ListObj>()->items.push_back(make_tuple({Value::str(dest), dflt, make_list(flags), type ? *type : Value::none(),
                                                       Value::str(action), konst ? *konst : Value::none()}));
    return Value::none();
  }));
  auto parse_args = [namespace_class](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    // Without an explicit argv there is no command line statically: every argument takes its
    // default. With parse_args([...]) the given strings are parsed as argparse would.
    auto* inst = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>();
    Value ns = in.instantiate(namespace_class, Args{}, site);
    auto* out = ns.as<InstanceObj>();
    std::vector<std::vector<Value>> arguments;
    if (inst)
      if (Value* list = inst->find_attribute("__arguments__"))
        for (auto& item : list->as<ListObj>()->items) {
          arguments.push_back(TupleView::of(item)->items);
          out->set_attribute(arguments.back()[0].s, arguments.back()[1]);
        }
    const Value* argv = argument(a, 1, "args");
    if (!argv || argv->is_none()) return ns;
    Value why;
    auto words = in.iterate(*argv, site, &why);
    if (!words) return why;
    size_t positional_index = 0;
    for (size_t i = 0; i < words->size(); ++i) {
      const Value& w = (*words)[i];
      if (!w.is_str()) return in.unknown("parse_args() of a non-string argument", site);
      std::string word = w.s, inline_value;
      bool has_inline = false;
      if (word.rfind("-", 0) == 0)
        if (auto eq = word.find('='); eq != std::string::npos) {
          inline_value = word.substr(eq + 1);
          word = word.substr(0, eq);
          has_inline = true;
        }
      const std::vector<Value>* match = nullptr;
      for (auto& arg : arguments) {
        for (auto& f : TupleView::of(arg[2])->items)
          if (f.s == word && word.rfind("-", 0) == 0) match = &arg;
      }
      if (!match && word.rfind("-", 0) != 0) {
        // The next positional argument.
        size_t seen = 0;
        for (auto& arg : arguments) {
          auto& fl = TupleView::of(arg[2])->items;
          if (!fl.empty() && fl[0].s.rfind("-", 0) != 0 && seen++ == positional_index) {
            match = &arg;
            break;
          }
        }
        if (!match) return in.raise("SystemExit", "unrecognized arguments: " + word, site);
        ++positional_index;
        Value v = match->at(3).is_none() ? Value::str(word) : in.call(match->at(3), Args{{Value::str(word)}, {}}, site);
        out->set_attribute(match->at(0).s, v);
        continue;
      }
      if (!match) return in.raise("SystemExit", "unrecognized arguments: " + word, site);
      const std::string& action = match->at(4).s;
      if (action == "store_true" || action == "store_false") {
        out->set_attribute(match->at(0).s, Value::boolean(action == "store_true"));
        continue;
      }
      if (action == "store_const") {
        out->set_attribute(match->at(0).s, match->at(5));
        continue;
      }
      std::string text;
      if (has_inline) text = inline_value;
      else if (i + 1 < words->size() && (*words)[i + 1].is_str()) text = (*words)[++i].s;
      else return in.raise("SystemExit", "argument " + word + ": expected one argument", site);
      Value v = match->at(3).is_none() ? Value::str(text) : in.call(match->at(3), Args{{Value::str(text)}, {}}, site);
      out->set_attribute(match->at(0).s, v);
    }
    return ns;
  };
  parser_class->set("parse_args", in.native("argparse.ArgumentParser.parse_args", parse_args));
  parser_class->set("parse_known_args", in.native("argparse.ArgumentParser.parse_known_args", [parse_args](Interpreter& in, const Value& self, Args& a, const ir::Span& site) {
    return make_tuple({parse_args(in, self, a, site), make_list({})});
  }));
  parser_class->set("add_argument_group", in.native("argparse.ArgumentParser.add_argument_group", [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    return a.positional.empty() ? Value::none() : a.positional[0];
  }));

  // --- types.ModuleType / importlib: lazy modules (diffusers', transformers' _LazyModule) subclass
  // ModuleType, put an instance in sys.modules and import their submodules on first access ---
  in.make_builtin_class("types.ModuleType", {}, [](Interpreter&, const Value&, Args& a, const ir::Span&) {
    if (auto* inst = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>()) {
      inst->set_attribute("__name__", a.positional.size() > 1 ? a.positional[1] : Value::none());
      inst->set_attribute("__doc__", a.positional.size() > 2 ? a.positional[2] : Value::none());
    }
    return Value::none();
  });
  in.define_native("importlib.import_module", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (!a.positional.empty() && a.positional[0].is_unknown()) return a.positional[0];
    if (a.positional.empty() || !a.positional[0].is_str()) return in.raise("TypeError", "import_module() needs a module name", site);
    std::string name = a.positional[0].s;
    const Value* package = a.positional.size() > 1 ? &a.positional[1] : a.keyword("package");
    size_t level = name.find_first_not_of('.');
    if (level == std::string::npos) level = name.size();
    if (level > 0) {
      // Relative to `package`, as importlib resolves it: each dot past the first goes up one.
      if (!package || !package->is_str()) return in.raise("TypeError", "the 'package' argument is required for the relative import of '" + name + "'", site);
      std::string base = package->s;
      for (size_t up = 1; up < level; ++up) {
        size_t dot = base.rfind('.');
        if (dot == std::string::npos) return in.raise("ImportError", "attempted relative import beyond top-level package", site);
        base = base.substr(0, dot);
      }
      name = level == name.size() ? base : base + "." + name.substr(level);
    }
    return in.import_by_name(name, site);
  });

  in.define_native("importlib.util.find_spec", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (!a.positional.empty() && a.positional[0].is_unknown()) return a.positional[0];
    if (a.positional.empty() || !a.positional[0].is_str()) return in.raise("TypeError", "find_spec() needs a module name", site);
    if (!in.package_installed(a.positional[0].s)) return Value::none();
    const Value* ns_class = in.builtin("types.SimpleNamespace");
    Args spec_args;
    spec_args.keywords.emplace_back("name", a.positional[0]);
    return ns_class ? in.call(*ns_class, spec_args, site) : Value::boolean(true);
  });
  // Installed versions: torch's is the one the analysis models; any other package is taken as not
  // installed, so that model code takes the path of a plain PyTorch environment (optional
  // integrations such as peft, accelerate, xformers off).
  std::vector<std::shared_ptr<ClassObj>> not_found_bases;
  if (const Value* not_found = in.builtin("builtins.ModuleNotFoundError"); not_found && not_found->as<ClassObj>())
    not_found_bases.push_back(std::static_pointer_cast<ClassObj>(not_found->obj));
  in.make_builtin_class("importlib.metadata.PackageNotFoundError", not_found_bases, nullptr)->is_exception = true;
  in.define_native("importlib.metadata.version", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (!a.positional.empty() && a.positional[0].is_unknown()) return a.positional[0];
    if (a.positional.empty() || !a.positional[0].is_str()) return in.raise("TypeError", "version() needs a distribution name", site);
    if (a.positional[0].s == "torch")
      if (const Value* v = in.builtin("torch.__version__")) return *v;
    return in.raise("PackageNotFoundError", "No package metadata was found for " + a.positional[0].s, site);
  });
  in.define_native("importlib.metadata.packages_distributions", [](Interpreter&, const Value&, Args&, const ir::Span&) {
    return Value::object(std::make_shared<DictObj>());
  });
  in.define_native("importlib.metadata.distributions", [](Interpreter&, const Value&, Args&, const ir::Span&) { return make_list({}); });

  // --- _shardlens: what the library models ask of the interpreter (library/_shardlens_common/imports.py) ---
  in.define_native("_shardlens.importer_has_fallback", [](Interpreter& in, const Value&, Args&, const ir::Span&) {
    return Value::boolean(in.importer_has_fallback());
  });

  // --- os / sys / warnings / logging ---
  in.define("sys.argv", make_list({Value::str("script.py")}));
  in.define("sys.version_info", make_tuple({Value::integer(3), Value::integer(11), Value::integer(0)}));
  in.define("sys.maxsize", Value::integer(INT64_MAX));
  in.define_native("warnings.warn", [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::none(); });
  // The environment is empty: the analysis never reads the editor's or shell's variables (they are
  // not those the model will run with), and model code reads them for switches whose defaults are
  // the usual run (diffusers' DIFFUSERS_ATTN_BACKEND="native"): os.getenv gives its default.
  in.define_native("os.getenv", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty() && a.keywords.empty()) return in.raise("TypeError", "getenv() missing required argument: 'key'", site);
    if (a.positional.size() > 1) return a.positional[1];
    for (auto& [name, value] : a.keywords)
      if (name == "default") return value;
    return Value::none();
  });
  in.define("os.environ", Value::object(std::make_shared<DictObj>()));
  in.define("os.path", in.namespace_value("os.path"));
  in.define("logging.INFO", Value::integer(20));
}

}  // namespace shardlens::python::native
