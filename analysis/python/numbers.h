// Python's arithmetic on numbers: int of any size (int64 inline, ir::BigInt beyond), bool, float.
// Every sign and overflow case follows CPython: floor division and modulo round toward -inf,
// int64 overflow moves to a big int, never wraps and never traps (-(2**63) // -1).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "python/values.h"

namespace shardlens::python {

// What an operation on numbers gives: a value, a Python exception, or an unknown with its reason.
struct NumberResult {
  enum class Kind { Value, Raise, Unknown };
  Kind kind = Kind::Value;
  Value value;
  std::string error_type;  // Raise: "ZeroDivisionError"
  std::string message;     // Raise: the exception's message; Unknown: why the value is not known

  static NumberResult of(Value v) { return {Kind::Value, std::move(v), {}, {}}; }
  static NumberResult raise(std::string type, std::string message) { return {Kind::Raise, {}, std::move(type), std::move(message)}; }
  static NumberResult unknown(std::string why) { return {Kind::Unknown, {}, {}, std::move(why)}; }
};

// Ints wider than this are not computed (the value becomes unknown): bounds the time and memory
// one operation can take (2**(10**9) would need 125 MB), far above anything a model config needs.
constexpr uint64_t kMaxIntBits = uint64_t{1} << 16;

// `a op b` for ints, bools and floats (+ - * / // % ** << >> & | ^); nullopt: not numbers.
std::optional<NumberResult> number_binary(std::string_view op, const Value& a, const Value& b);
// -v, +v, ~v; nullopt: not a number.
std::optional<NumberResult> number_unary(std::string_view op, const Value& v);
// abs(v) for a number; nullopt: not a number.
std::optional<NumberResult> number_abs(const Value& v);
// int(f) (truncates) and math.floor / math.ceil results: exact at any magnitude.
NumberResult int_from_float(double f);
// float(v) for an int of any size: OverflowError beyond double's range.
NumberResult float_from_int(const Value& v);
// -1, 0, 1 for two ints of any size (both is_integral()).
int compare_ints(const Value& a, const Value& b);

}  // namespace shardlens::python
