// The einsum equations of nn.Linear, torch.matmul and torch.einsum as both front ends record them
// (the Python tracer, python/forward_trace.cpp, and the TorchScript reader, torch/exact_ir.cpp), so
// that the same shapes give the same equation whichever read the model. Torch-free and C++17.
#pragma once

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardlens::ir {

// Letters for the leading (batch) dims of a contraction; k, m and n are the matrix dims. In these
// equations lowercase letters are shardable dims, uppercase ones spatial or kernel dims.
inline constexpr char kBatchLetters[] = "abcdefgh";

// x @ W (+ bias) over x's leading dims; out_in: W is [out, in] as nn.Linear keeps it.
inline std::string linear_equation(size_t x_rank, bool out_in, bool bias, bool bias_1d) {
  std::string batch(kBatchLetters, std::min<size_t>(x_rank - 1, 8));
  std::string eq = batch + "k," + (out_in ? "nk" : "kn");
  if (bias) eq += bias_1d ? ",n" : "," + batch + "n";
  return eq + "->" + batch + "n";
}

// torch.matmul's rules (vector operands, broadcast batch dims) for non-empty shapes; nullopt when
// the batch dims are too many to letter.
template <class Shape>  // ir::Shape; a template so that this header needs no C++20 one
std::optional<std::string> matmul_equation(const Shape& as, const Shape& bs) {
  if (bs.size() == 1) {
    std::string batch(kBatchLetters, std::min<size_t>(as.size() - 1, 8));
    return batch + "k,k->" + batch;
  }
  if (as.size() == 1) {
    std::string batch(kBatchLetters, std::min<size_t>(bs.size() - 2, 8));
    return "k," + batch + "kn->" + batch + "n";
  }
  size_t nb = std::max(as.size(), bs.size()) - 2;
  if (nb > 6) return std::nullopt;
  std::string out(kBatchLetters, nb);
  auto letters_for = [&](const Shape& s, const Shape& other) {
    std::string l;
    size_t own = s.size() - 2;
    for (size_t i = 0; i < own; ++i) {
      size_t pos = nb - own + i;
      // A broadcast dim (size 1 against a larger one) is not the same dim: '1' is never sharded.
      size_t other_own = other.size() - 2;
      int64_t other_size = pos >= nb - other_own ? other[pos - (nb - other_own)] : 1;
      l += s[i] == 1 && other_size != 1 ? '1' : out[pos];
    }
    return l;
  };
  return letters_for(as, bs) + "mk," + letters_for(bs, as) + "kn->" + out + "mn";
}

// A user's einsum equation as a contraction records it: spaces dropped, an implicit output made
// explicit (the letters used once, sorted), and the user's letters and ellipses mapped onto fresh
// lowercase letters (uppercase means spatial here). shapes[i] is operand i's shape or null if
// unknown; an ellipsis covers its operand's extra dims (the largest known rank's if unknown).
template <class Shape>
std::string einsum_equation(const std::string& equation, const std::vector<const Shape*>& shapes) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  if (eq.find("->") == std::string::npos) {
    std::string once;
    for (char c : eq)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(eq.begin(), eq.end(), c) == 1) once += c;
    std::sort(once.begin(), once.end());
    eq += "->" + once;
  }
  size_t max_rank = 0;
  for (const Shape* s : shapes)
    if (s) max_rank = std::max(max_rank, s->size());
  std::map<char, char> rename;
  std::string pool = "abcdefghijklmnopqrstuvwxyz";
  size_t next = 0, part = 0;
  std::string result, ellipsis_letters;
  for (size_t i = 0; i < eq.size(); ++i) {
    char c = eq[i];
    if (c == '.' && eq.compare(i, 3, "...") == 0) {
      size_t explicit_letters = 0, k = i;
      while (k > 0 && eq[k - 1] != ',' && eq[k - 1] != '>') --k;
      for (size_t m = k; m < eq.size() && eq[m] != ',' && eq[m] != '-'; ++m)
        if (std::isalpha(static_cast<unsigned char>(eq[m]))) ++explicit_letters;
      const bool output = eq.find("->") < i;  // the output's ellipsis: every broadcast dim of the inputs'
      size_t rank = part < shapes.size() && shapes[part] ? shapes[part]->size() : max_rank;
      size_t n = output ? ellipsis_letters.size() : rank > explicit_letters ? rank - explicit_letters : 0;
      while (ellipsis_letters.size() < n && next < pool.size()) ellipsis_letters += pool[next++];
      result += ellipsis_letters.substr(ellipsis_letters.size() - n);
      i += 2;
      continue;
    }
    if (c == ',') ++part;
    if (std::isalpha(static_cast<unsigned char>(c))) {
      if (!rename.count(c)) rename[c] = next < pool.size() ? pool[next++] : 'z';
      result += rename[c];
    } else {
      result += c;
    }
  }
  return result;
}

}  // namespace shardlens::ir
