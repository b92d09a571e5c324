#include "python/numbers.h"

#include <cmath>
#include <limits>

namespace shardlens::python {

namespace {

using ir::BigInt;
using R = NumberResult;

R too_large(uint64_t bits) {  // bits: an estimate, or UINT64_MAX for "more than can be counted"
  std::string size = bits == std::numeric_limits<uint64_t>::max() ? "an integer" : "an integer of about " + std::to_string(bits) + " bits";
  return R::unknown(size + " (beyond the " + std::to_string(kMaxIntBits) + "-bit limit of the analysis)");
}

R checked(BigInt v) {
  uint64_t bits = v.bit_length();
  if (bits > kMaxIntBits) return too_large(bits);
  return R::of(Value::big_integer(std::move(v)));
}

// An int operand as a double for mixed int/float arithmetic (Python raises past double's range).
std::optional<R> as_double(const Value& v, double& out) {
  out = v.as_float();
  if (v.kind == Value::Kind::BigInt && std::isinf(out)) return R::raise("OverflowError", "int too large to convert to float");
  return std::nullopt;
}

R float_binary(std::string_view op, double x, double y) {
  if (op == "+") return R::of(Value::floating(x + y));
  if (op == "-") return R::of(Value::floating(x - y));
  if (op == "*") return R::of(Value::floating(x * y));
  if (op == "/") {
    if (y == 0) return R::raise("ZeroDivisionError", "float division by zero");
    return R::of(Value::floating(x / y));
  }
  if (op == "//" || op == "%") {
    if (y == 0) return R::raise("ZeroDivisionError", op == "%" ? "float modulo" : "float floor division by zero");
    // CPython's float_divmod: the remainder from fmod, moved to the divisor's sign.
    double mod = std::fmod(x, y);
    double div = (x - mod) / y;
    if (mod != 0) {
      if ((y < 0) != (mod < 0)) {
        mod += y;
        div -= 1.0;
      }
    } else {
      mod = std::copysign(0.0, y);
    }
    double floordiv = 0;
    if (div != 0) {
      floordiv = std::floor(div);
      if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
      floordiv = std::copysign(0.0, x / y);
    }
    return R::of(Value::floating(op == "%" ? mod : floordiv));
  }
  if (op == "**") {
    if (x == 0 && y < 0) return R::raise("ZeroDivisionError", "0.0 cannot be raised to a negative power");
    if (x < 0 && std::isfinite(x) && std::floor(y) != y) return R::unknown("a complex number (negative base, fractional power)");
    double r = std::pow(x, y);
    if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) return R::raise("OverflowError", "(34, 'Numerical result out of range')");
    return R::of(Value::floating(r));
  }
  return R::raise("TypeError", "unsupported operand type(s) for " + std::string(op) + ": 'float' and 'float'");
}

R int_power(const Value& a, const Value& b) {
  BigInt base = a.as_big();
  if (b.kind == Value::Kind::BigInt || b.as_int() < 0) {
    if (b.as_big().negative()) {  // a negative power is a float
      if (base.is_zero()) return R::raise("ZeroDivisionError", "0.0 cannot be raised to a negative power");
      double x = 0;
      if (auto err = as_double(a, x)) return *err;
      return float_binary("**", x, b.as_float());
    }
  }
  if (base.is_zero() || base == BigInt(1)) return R::of(b.as_big().is_zero() ? Value::integer(1) : a.kind == Value::Kind::Bool ? Value::integer(a.as_int()) : a);
  if (base == BigInt(-1)) {
    BigInt q, r;
    BigInt::floor_divmod(b.as_big(), BigInt(2), q, r);
    return R::of(Value::integer(r.is_zero() ? 1 : -1));
  }
  if (b.kind == Value::Kind::BigInt) return too_large(std::numeric_limits<uint64_t>::max());
  uint64_t exponent = static_cast<uint64_t>(b.as_int());
  // |base| >= 2: the result has at least (bits - 1) * exponent + 1 bits.
  uint64_t bits = base.bit_length(), least = 0;
  if (__builtin_mul_overflow(bits - 1, exponent, &least)) return too_large(std::numeric_limits<uint64_t>::max());
  if (exponent > kMaxIntBits || least > kMaxIntBits) return too_large(least + 1);
  return checked(BigInt::pow(base, exponent));
}

R int_shift(std::string_view op, const Value& a, const Value& b) {
  if (b.as_big().negative()) return R::raise("ValueError", "negative shift count");
  BigInt x = a.as_big();
  if (op == ">>") {
    if (b.kind == Value::Kind::BigInt) return R::of(Value::integer(x.negative() ? -1 : 0));
    return R::of(Value::big_integer(x.shift_right(static_cast<uint64_t>(b.as_int()))));
  }
  if (x.is_zero()) return R::of(Value::integer(0));
  if (b.kind == Value::Kind::BigInt || static_cast<uint64_t>(b.as_int()) > kMaxIntBits)
    return too_large(std::numeric_limits<uint64_t>::max());
  return checked(x.shift_left(static_cast<uint64_t>(b.as_int())));
}

R int_binary(std::string_view op, const Value& a, const Value& b) {
  bool bools = a.kind == Value::Kind::Bool && b.kind == Value::Kind::Bool;
  if (op == "&" || op == "|" || op == "^") {
    if (a.kind == Value::Kind::BigInt || b.kind == Value::Kind::BigInt)
      return R::unknown("a bitwise operation on an integer beyond 64 bits (not modelled)");
    int64_t x = a.as_int(), y = b.as_int();
    int64_t r = op == "&" ? (x & y) : op == "|" ? (x | y) : (x ^ y);
    return R::of(bools ? Value::boolean(r != 0) : Value::integer(r));
  }
  if (op == "/") {
    if (b.as_big().is_zero()) return R::raise("ZeroDivisionError", "division by zero");
    if (a.kind == Value::Kind::BigInt || b.kind == Value::Kind::BigInt) {
      double r = a.as_float() / b.as_float();
      if (std::isinf(r) || std::isnan(r)) return R::raise("OverflowError", "integer division result too large for a float");
      return R::of(Value::floating(r));
    }
    return R::of(Value::floating(a.as_float() / b.as_float()));
  }
  if (op == "**") return int_power(a, b);
  if (op == "<<" || op == ">>") return int_shift(op, a, b);
  if (a.kind != Value::Kind::BigInt && b.kind != Value::Kind::BigInt) {  // the int64 fast path
    int64_t x = a.as_int(), y = b.as_int(), r = 0;
    if (op == "+" && !__builtin_add_overflow(x, y, &r)) return R::of(Value::integer(r));
    if (op == "-" && !__builtin_sub_overflow(x, y, &r)) return R::of(Value::integer(r));
    if (op == "*" && !__builtin_mul_overflow(x, y, &r)) return R::of(Value::integer(r));
    if ((op == "//" || op == "%") && y != 0 && !(x == INT64_MIN && y == -1)) {
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        q -= 1;
        m += y;
      }
      return R::of(Value::integer(op == "//" ? q : m));
    }
  }
  BigInt x = a.as_big(), y = b.as_big();
  if (op == "+") return checked(x + y);
  if (op == "-") return checked(x - y);
  if (op == "*") {
    if (x.bit_length() + y.bit_length() > kMaxIntBits + 1) return too_large(x.bit_length() + y.bit_length());
    return checked(x * y);
  }
  if (op == "//" || op == "%") {
    BigInt q, m;
    if (!BigInt::floor_divmod(x, y, q, m)) return R::raise("ZeroDivisionError", op == "%" ? "integer modulo by zero" : "integer division or modulo by zero");
    return R::of(Value::big_integer(op == "//" ? q : m));
  }
  return R::raise("TypeError", "unsupported operand type(s) for " + std::string(op) + ": 'int' and 'int'");
}

}  // namespace

std::optional<NumberResult> number_binary(std::string_view op, const Value& a, const Value& b) {
  bool a_int = a.is_integral(), b_int = b.is_integral();
  bool a_num = a_int || a.kind == Value::Kind::Float, b_num = b_int || b.kind == Value::Kind::Float;
  if (!a_num || !b_num) return std::nullopt;
  if (a_int && b_int) return int_binary(op, a, b);
  if (op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>") return std::nullopt;  // TypeError for floats
  double x = 0, y = 0;
  if (auto err = as_double(a, x)) return err;
  if (auto err = as_double(b, y)) return err;
  return float_binary(op, x, y);
}

std::optional<NumberResult> number_unary(std::string_view op, const Value& v) {
  if (v.kind == Value::Kind::Float) {
    if (op == "-") return R::of(Value::floating(-v.f));
    if (op == "+") return R::of(v);
    return std::nullopt;
  }
  if (!v.is_integral()) return std::nullopt;
  if (op == "+") return R::of(v.kind == Value::Kind::Bool ? Value::integer(v.as_int()) : v);
  if (op == "-") {
    if (v.kind != Value::Kind::BigInt && v.as_int() != INT64_MIN) return R::of(Value::integer(-v.as_int()));
    return R::of(Value::big_integer(-v.as_big()));
  }
  if (op == "~") {  // ~x == -x - 1: never overflows int64, may bring a big int back into it
    if (v.kind != Value::Kind::BigInt) return R::of(Value::integer(~v.as_int()));
    return R::of(Value::big_integer(-v.as_big() - BigInt(1)));
  }
  return std::nullopt;
}

std::optional<NumberResult> number_abs(const Value& v) {
  if (v.kind == Value::Kind::Float) return R::of(Value::floating(std::fabs(v.f)));
  if (!v.is_integral()) return std::nullopt;
  if (v.as_big().negative()) return number_unary("-", v);
  return R::of(v.kind == Value::Kind::Bool ? Value::integer(v.as_int()) : v);
}

NumberResult int_from_float(double f) {
  if (std::isinf(f)) return R::raise("OverflowError", "cannot convert float infinity to integer");
  if (std::isnan(f)) return R::raise("ValueError", "cannot convert float NaN to integer");
  double t = std::trunc(f);
  if (t >= -9.2e18 && t <= 9.2e18) return R::of(Value::integer(static_cast<int64_t>(t)));
  // Beyond int64 a double is an integer m * 2**e with a 53-bit m: exact as a big int.
  int e = 0;
  double m = std::frexp(std::fabs(t), &e);
  auto mantissa = static_cast<int64_t>(std::ldexp(m, 53));
  BigInt r = BigInt(mantissa).shift_left(static_cast<uint64_t>(e - 53));
  return R::of(Value::big_integer(t < 0 ? -r : r));
}

NumberResult float_from_int(const Value& v) {
  double x = 0;
  if (auto err = as_double(v, x)) return *err;
  return R::of(Value::floating(x));
}

int compare_ints(const Value& a, const Value& b) {
  if (a.kind != Value::Kind::BigInt && b.kind != Value::Kind::BigInt)
    return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
  return a.as_big().compare(b.as_big());
}

}  // namespace shardlens::python
