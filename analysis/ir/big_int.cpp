#include "ir/big_int.h"

#include <algorithm>
#include <cmath>

namespace shardlens::ir {

using Limbs = std::vector<uint32_t>;

BigInt::BigInt(int64_t v) {
  negative_ = v < 0;
  // The magnitude of INT64_MIN does not fit in int64: negate in unsigned arithmetic.
  uint64_t m = negative_ ? ~static_cast<uint64_t>(v) + 1 : static_cast<uint64_t>(v);
  while (m) {
    magnitude_.push_back(static_cast<uint32_t>(m));
    m >>= 32;
  }
}

BigInt BigInt::from_parts(bool negative, Limbs magnitude) {
  BigInt r;
  r.magnitude_ = std::move(magnitude);
  r.negative_ = negative;
  r.trim();
  return r;
}

void BigInt::trim() {
  while (!magnitude_.empty() && magnitude_.back() == 0) magnitude_.pop_back();
  if (magnitude_.empty()) negative_ = false;
}

std::optional<BigInt> BigInt::parse(std::string_view digits, int base) {
  if (digits.empty() || (base != 2 && base != 8 && base != 10 && base != 16)) return std::nullopt;
  Limbs m;
  for (char c : digits) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
    if (d >= base) return std::nullopt;
    uint64_t carry = static_cast<uint64_t>(d);
    for (auto& limb : m) {
      uint64_t x = static_cast<uint64_t>(limb) * static_cast<uint64_t>(base) + carry;
      limb = static_cast<uint32_t>(x);
      carry = x >> 32;
    }
    if (carry) m.push_back(static_cast<uint32_t>(carry));
  }
  return from_parts(false, std::move(m));
}

std::optional<int64_t> BigInt::to_int64() const {
  if (magnitude_.size() > 2) return std::nullopt;
  uint64_t m = 0;
  for (size_t i = magnitude_.size(); i-- > 0;) m = (m << 32) | magnitude_[i];
  if (!negative_) {
    if (m > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(m);
  }
  if (m > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
  return static_cast<int64_t>(~m + 1);
}

double BigInt::to_double() const {
  double r = 0;
  for (size_t i = magnitude_.size(); i-- > 0;) r = r * 4294967296.0 + magnitude_[i];
  return negative_ ? -r : r;
}

uint64_t BigInt::bit_length() const {
  if (magnitude_.empty()) return 0;
  uint32_t top = magnitude_.back();
  uint64_t bits = 32 * (magnitude_.size() - 1);
  while (top) { ++bits; top >>= 1; }
  return bits;
}

std::string BigInt::to_string() const {
  if (magnitude_.empty()) return "0";
  Limbs m = magnitude_;
  std::string out;
  while (!m.empty()) {  // peel off nine decimal digits per pass
    uint64_t rem = 0;
    for (size_t i = m.size(); i-- > 0;) {
      uint64_t x = (rem << 32) | m[i];
      m[i] = static_cast<uint32_t>(x / 1'000'000'000);
      rem = x % 1'000'000'000;
    }
    while (!m.empty() && m.back() == 0) m.pop_back();
    for (int k = 0; k < 9 && (rem || !m.empty()); ++k) {
      out.push_back(static_cast<char>('0' + rem % 10));
      rem /= 10;
    }
  }
  if (negative_) out.push_back('-');
  std::reverse(out.begin(), out.end());
  return out;
}

int BigInt::compare_magnitude(const Limbs& a, const Limbs& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

int BigInt::compare(const BigInt& other) const {
  if (negative_ != other.negative_) return negative_ ? -1 : 1;
  int c = compare_magnitude(magnitude_, other.magnitude_);
  return negative_ ? -c : c;
}

Limbs BigInt::add_magnitude(const Limbs& a, const Limbs& b) {
  const Limbs& longer = a.size() >= b.size() ? a : b;
  const Limbs& shorter = a.size() >= b.size() ? b : a;
  Limbs r(longer.size() + 1, 0);
  uint64_t carry = 0;
  for (size_t i = 0; i < longer.size(); ++i) {
    uint64_t x = static_cast<uint64_t>(longer[i]) + (i < shorter.size() ? shorter[i] : 0) + carry;
    r[i] = static_cast<uint32_t>(x);
    carry = x >> 32;
  }
  r[longer.size()] = static_cast<uint32_t>(carry);
  return r;
}

Limbs BigInt::sub_magnitude(const Limbs& a, const Limbs& b) {
  Limbs r(a.size(), 0);
  int64_t borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t x = static_cast<int64_t>(a[i]) - (i < b.size() ? b[i] : 0) - borrow;
    borrow = x < 0;
    r[i] = static_cast<uint32_t>(x + (borrow ? (int64_t{1} << 32) : 0));
  }
  return r;
}

BigInt BigInt::operator-() const { return from_parts(!negative_, magnitude_); }
BigInt BigInt::abs() const { return from_parts(false, magnitude_); }

BigInt operator+(const BigInt& a, const BigInt& b) {
  if (a.negative_ == b.negative_) return BigInt::from_parts(a.negative_, BigInt::add_magnitude(a.magnitude_, b.magnitude_));
  int c = BigInt::compare_magnitude(a.magnitude_, b.magnitude_);
  if (c == 0) return BigInt();
  if (c > 0) return BigInt::from_parts(a.negative_, BigInt::sub_magnitude(a.magnitude_, b.magnitude_));
  return BigInt::from_parts(b.negative_, BigInt::sub_magnitude(b.magnitude_, a.magnitude_));
}

BigInt operator-(const BigInt& a, const BigInt& b) { return a + (-b); }

BigInt operator*(const BigInt& a, const BigInt& b) {
  if (a.is_zero() || b.is_zero()) return BigInt();
  Limbs r(a.magnitude_.size() + b.magnitude_.size(), 0);
  for (size_t i = 0; i < a.magnitude_.size(); ++i) {
    uint64_t carry = 0;
    for (size_t j = 0; j < b.magnitude_.size(); ++j) {
      uint64_t x = static_cast<uint64_t>(a.magnitude_[i]) * b.magnitude_[j] + r[i + j] + carry;
      r[i + j] = static_cast<uint32_t>(x);
      carry = x >> 32;
    }
    r[i + b.magnitude_.size()] = static_cast<uint32_t>(carry);
  }
  return BigInt::from_parts(a.negative_ != b.negative_, std::move(r));
}

// Knuth's algorithm D (TAOCP 4.3.1) on 32-bit limbs; b is not zero.
void BigInt::divmod_magnitude(const Limbs& a, const Limbs& b, Limbs& q, Limbs& r) {
  if (compare_magnitude(a, b) < 0) {
    q.clear();
    r = a;
    return;
  }
  if (b.size() == 1) {
    q.assign(a.size(), 0);
    uint64_t rem = 0;
    for (size_t i = a.size(); i-- > 0;) {
      uint64_t x = (rem << 32) | a[i];
      q[i] = static_cast<uint32_t>(x / b[0]);
      rem = x % b[0];
    }
    r.assign(1, static_cast<uint32_t>(rem));
    return;
  }
  // Normalise so the divisor's top limb has its high bit set.
  int shift = 0;
  for (uint32_t top = b.back(); !(top & 0x80000000u); top <<= 1) ++shift;
  auto shifted = [shift](const Limbs& x, bool extra) {
    Limbs out(x.size() + (extra ? 1 : 0), 0);
    for (size_t i = 0; i < x.size(); ++i) {
      uint64_t v = static_cast<uint64_t>(x[i]) << shift;
      out[i] |= static_cast<uint32_t>(v);
      if (i + 1 < out.size()) out[i + 1] |= static_cast<uint32_t>(v >> 32);
    }
    return out;
  };
  Limbs u = shifted(a, true), v = shifted(b, false);
  size_t n = v.size(), m = u.size() - n;
  q.assign(m, 0);
  const uint64_t base = uint64_t{1} << 32;
  for (size_t j = m; j-- > 0;) {
    uint64_t numerator = (static_cast<uint64_t>(u[j + n]) << 32) | u[j + n - 1];
    uint64_t qhat = numerator / v[n - 1], rhat = numerator % v[n - 1];
    while (qhat >= base || qhat * v[n - 2] > ((rhat << 32) | u[j + n - 2])) {
      --qhat;
      rhat += v[n - 1];
      if (rhat >= base) break;
    }
    // u[j..j+n] -= qhat * v
    int64_t borrow = 0;
    uint64_t carry = 0;
    for (size_t i = 0; i < n; ++i) {
      uint64_t p = qhat * v[i] + carry;
      carry = p >> 32;
      int64_t t = static_cast<int64_t>(u[i + j]) - borrow - static_cast<int64_t>(p & 0xffffffffu);
      u[i + j] = static_cast<uint32_t>(t);
      borrow = t < 0 ? 1 : 0;
    }
    int64_t t = static_cast<int64_t>(u[j + n]) - borrow - static_cast<int64_t>(carry);
    u[j + n] = static_cast<uint32_t>(t);
    if (t < 0) {  // qhat was one too large: add v back
      --qhat;
      uint64_t c = 0;
      for (size_t i = 0; i < n; ++i) {
        uint64_t s = static_cast<uint64_t>(u[i + j]) + v[i] + c;
        u[i + j] = static_cast<uint32_t>(s);
        c = s >> 32;
      }
      u[j + n] = static_cast<uint32_t>(static_cast<uint64_t>(u[j + n]) + c);
    }
    q[j] = static_cast<uint32_t>(qhat);
  }
  r.assign(n, 0);  // un-normalise the remainder
  for (size_t i = 0; i < n; ++i) {
    uint64_t hi = i + 1 < u.size() ? u[i + 1] : 0;
    r[i] = static_cast<uint32_t>(((hi << 32) | u[i]) >> shift);
  }
}

bool BigInt::floor_divmod(const BigInt& a, const BigInt& b, BigInt& quotient, BigInt& remainder) {
  if (b.is_zero()) return false;
  Limbs q, r;
  divmod_magnitude(a.magnitude_, b.magnitude_, q, r);
  quotient = from_parts(a.negative_ != b.negative_, std::move(q));
  remainder = from_parts(a.negative_, std::move(r));
  // Truncated to floored: a remainder whose sign differs from the divisor's moves one step.
  if (!remainder.is_zero() && remainder.negative_ != b.negative_) {
    quotient = quotient - BigInt(1);
    remainder = remainder + b;
  }
  return true;
}

BigInt BigInt::shift_left(uint64_t bits) const {
  if (is_zero()) return BigInt();
  size_t limbs = static_cast<size_t>(bits / 32);
  int rest = static_cast<int>(bits % 32);
  Limbs out(magnitude_.size() + limbs + 1, 0);
  for (size_t i = 0; i < magnitude_.size(); ++i) {
    uint64_t v = static_cast<uint64_t>(magnitude_[i]) << rest;
    out[i + limbs] |= static_cast<uint32_t>(v);
    out[i + limbs + 1] |= static_cast<uint32_t>(v >> 32);
  }
  return from_parts(negative_, std::move(out));
}

BigInt BigInt::shift_right(uint64_t bits) const {
  if (negative_) {  // floor(a / 2**bits) = -ceil(|a| / 2**bits) = -((|a| - 1 >> bits) + 1)
    BigInt m = (abs() - BigInt(1)).shift_right(bits);
    return -(m + BigInt(1));
  }
  size_t limbs = static_cast<size_t>(std::min<uint64_t>(bits / 32, magnitude_.size()));
  int rest = static_cast<int>(bits % 32);
  Limbs out(magnitude_.size() - limbs, 0);
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t lo = magnitude_[i + limbs];
    uint64_t hi = i + limbs + 1 < magnitude_.size() ? magnitude_[i + limbs + 1] : 0;
    out[i] = static_cast<uint32_t>(((hi << 32) | lo) >> rest);
  }
  return from_parts(false, std::move(out));
}

BigInt BigInt::pow(const BigInt& base, uint64_t exponent) {
  BigInt result(1), square = base;
  while (exponent) {
    if (exponent & 1) result = result * square;
    exponent >>= 1;
    if (exponent) square = square * square;
  }
  return result;
}

}  // namespace shardlens::ir
