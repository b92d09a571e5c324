// Arbitrary-precision integers for the values Python's int can hold beyond 64 bits (the interpreter
// keeps int64 inline and moves to this only on overflow) and for exact parameter totals.
// Sign and magnitude; division floors as Python's // does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlens::ir {

class BigInt {
 public:
  BigInt() = default;
  BigInt(int64_t v);  // NOLINT: implicit, as Python mixes int sizes freely
  // Digits of one base (2, 8, 10 or 16), no sign, no prefix, no '_'; nullopt on a bad digit.
  static std::optional<BigInt> parse(std::string_view digits, int base = 10);

  bool negative() const { return negative_; }
  bool is_zero() const { return magnitude_.empty(); }
  std::optional<int64_t> to_int64() const;
  double to_double() const;  // +-inf beyond double's range
  std::string to_string() const;
  uint64_t bit_length() const;  // of the magnitude, as int.bit_length()
  int compare(const BigInt& other) const;  // -1, 0, 1

  BigInt operator-() const;
  BigInt abs() const;
  friend BigInt operator+(const BigInt& a, const BigInt& b);
  friend BigInt operator-(const BigInt& a, const BigInt& b);
  friend BigInt operator*(const BigInt& a, const BigInt& b);
  friend bool operator==(const BigInt& a, const BigInt& b) { return a.compare(b) == 0; }
  friend bool operator<(const BigInt& a, const BigInt& b) { return a.compare(b) < 0; }
  // Python's divmod: quotient floored, remainder with the divisor's sign. False if b is zero.
  static bool floor_divmod(const BigInt& a, const BigInt& b, BigInt& quotient, BigInt& remainder);
  BigInt shift_left(uint64_t bits) const;
  BigInt shift_right(uint64_t bits) const;  // floors, as Python's >> does for negatives
  static BigInt pow(const BigInt& base, uint64_t exponent);

 private:
  bool negative_ = false;
  std::vector<uint32_t> magnitude_;  // little-endian limbs, no leading zero limbs
  void trim();
  static int compare_magnitude(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);
  static std::vector<uint32_t> add_magnitude(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);
  static std::vector<uint32_t> sub_magnitude(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);  // a >= b
  static void divmod_magnitude(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                               std::vector<uint32_t>& q, std::vector<uint32_t>& r);
  static BigInt from_parts(bool negative, std::vector<uint32_t> magnitude);
};

}  // namespace shardlens::ir
