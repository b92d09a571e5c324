// The math module: values exact where Python's are.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "python/interpreter.h"
#include "python/native_support.h"
#include "python/numbers.h"

namespace shardlens::python::native {

void install_math(Interpreter& in) {
  // Functions of one float; floor, ceil and trunc answer ints.
  struct UnaryFunction {
    std::string name;
    double (*f)(double);
    bool integral;
  };
  for (const UnaryFunction& u : std::initializer_list<UnaryFunction>{
           {"sqrt", std::sqrt, false}, {"ceil", std::ceil, true}, {"floor", std::floor, true},
           {"trunc", std::trunc, true}, {"exp", std::exp, false}, {"log2", std::log2, false},
           {"log10", std::log10, false}, {"fabs", std::fabs, false}, {"sin", std::sin, false},
           {"cos", std::cos, false}, {"tan", std::tan, false}, {"atan", std::atan, false},
           {"tanh", std::tanh, false}}) {
    in.define_native("math." + u.name, [f = u.f, integral = u.integral, name = u.name](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      if (a.positional.empty()) return in.raise("TypeError", "math." + name + "() takes an argument", site);
      const Value& v = a.positional[0];
      if (v.is_unknown()) return v;
      // floor/ceil/trunc of an int is the int itself, at any size.
      if (integral && v.is_integral()) return to_int(in, v, site);
      if (!v.is_number() && !v.is_integral()) return in.unknown("math." + name + "() of " + type_name(v), site);
      Value x = to_float(in, v, site);
      if (x.kind != Value::Kind::Float) return x;
      double r = f(x.f);
      if (std::isnan(r) && !std::isnan(x.f)) return in.raise("ValueError", "math domain error", site);
      return integral ? in.number_result(int_from_float(r), site) : Value::floating(r);
    });
  }
  in.define_native("math.log", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return in.raise("TypeError", "math.log() takes an argument", site);
    if (auto* u = first_unknown_arg(a)) return *u;
    double x = a.positional[0].as_float();
    if (x <= 0) return in.raise("ValueError", "math domain error", site);
    double r = std::log(x);
    if (a.positional.size() > 1) r /= std::log(a.positional[1].as_float());
    return Value::floating(r);
  });
  in.define_native("math.pow", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() != 2) return in.raise("TypeError", "math.pow() takes 2 arguments", site);
    if (auto* u = first_unknown_arg(a)) return *u;
    return Value::floating(std::pow(a.positional[0].as_float(), a.positional[1].as_float()));
  });
  in.define_native("math.isqrt", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty() || !a.positional[0].is_int()) return in.unknown("math.isqrt() argument", site);
    return Value::integer(static_cast<int64_t>(std::floor(std::sqrt(static_cast<double>(a.positional[0].as_int())))));
  });
  for (auto& [name, fold] : std::vector<std::pair<std::string, int64_t (*)(int64_t, int64_t)>>{
           {"gcd", [](int64_t x, int64_t y) { return std::gcd(x, y); }},
           {"lcm", [](int64_t x, int64_t y) { return std::lcm(x, y); }}}) {
    std::string n = name;
    auto f = fold;
    in.define_native("math." + n, [n, f](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      int64_t acc = n == "gcd" ? 0 : 1;
      for (auto& v : a.positional) {
        if (!v.is_int()) return in.unknown("math." + n + "() argument", site);
        acc = f(acc, v.as_int());
      }
      return Value::integer(acc);
    });
  }
  in.define_native("math.prod", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value why;
    auto items = in.iterate(a.positional.empty() ? Value() : a.positional[0], site, &why);
    if (!items) return why;
    Value p = a.keyword("start") ? *a.keyword("start") : Value::integer(1);
    for (auto& v : *items) p = in.binary("*", p, v, site);
    return p;
  });
  in.define_native("math.factorial", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty() || !a.positional[0].is_int()) return in.unknown("math.factorial() argument", site);
    if (a.positional[0].as_int() < 0) return in.raise("ValueError", "factorial() not defined for negative values", site);
    Value r = Value::integer(1);  // exact at any size: the product moves to a big int past int64
    for (int64_t k = 2; k <= a.positional[0].as_int() && !r.is_unknown(); ++k) r = in.binary("*", r, Value::integer(k), site);
    return r;
  });
  in.define_native("math.isclose", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.size() < 2) return in.raise("TypeError", "isclose() takes 2 arguments", site);
    if (auto* u = first_unknown_arg(a)) return *u;
    double x = a.positional[0].as_float(), y = a.positional[1].as_float();
    return Value::boolean(std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)));
  });
  in.define("math.pi", Value::floating(M_PI));
  in.define("math.e", Value::floating(M_E));
  in.define("math.inf", Value::floating(INFINITY));
  in.define("math.nan", Value::floating(NAN));
  in.define("math.tau", Value::floating(2 * M_PI));
}

}  // namespace shardlens::python::native
