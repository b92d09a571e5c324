#include "flags.h"

#include <cstdio>

#include "session/script_pipeline.h"

namespace shardlens::cli {

std::string one_of(const std::vector<std::string>& allowed) {
  std::string out;
  size_t i = 0;
  for (const auto& a : allowed) {
    out += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + a;
    ++i;
  }
  return out;
}

std::string shell_word(const std::string& a) {
  bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=+@") == std::string::npos;
  return plain ? a : "'" + a + "'";
}

std::optional<int64_t> positive_int(const std::string& command, const std::string& flag, const std::string& v) {
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (...) {
    used = 0;
  }
  if (used != v.size() || x <= 0) {
    std::fprintf(stderr, "%s: %s must be a positive integer, not '%s'\n", command.c_str(), flag.c_str(), v.c_str());
    return std::nullopt;
  }
  return x;
}

FlagReader::FlagReader(std::string command, const char* usage, const std::vector<std::string>& args)
    : command_(std::move(command)), usage_(usage), args_(args) {}

bool FlagReader::next() {
  if (exit_code_ || next_ >= args_.size()) return false;
  first_ = next_++;
  const std::string& a = args_[first_];
  inline_value_.reset();
  name_ = a;
  auto eq = a.find('=');
  if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
    name_ = a.substr(0, eq);
    inline_value_ = a.substr(eq + 1);
  }
  if (name_ == "-h" || name_ == "--help") {
    std::fputs(usage_, stdout);
    exit_code_ = 0;
    return false;
  }
  return true;
}

std::optional<std::string> FlagReader::value() {
  if (inline_value_) return inline_value_;
  if (next_ >= args_.size()) {
    std::fprintf(stderr, "%s: %s needs a value\n%s", command_.c_str(), name_.c_str(), usage_);
    exit_code_ = 2;
    return std::nullopt;
  }
  return args_[next_++];
}

std::optional<std::string> FlagReader::choice(const std::vector<std::string>& allowed) {
  auto v = value();
  if (!v) return std::nullopt;
  for (const auto& a : allowed)
    if (*v == a) return v;
  fail(name_ + " must be " + one_of(allowed) + ", not '" + *v + "'");
  return std::nullopt;
}

std::optional<int64_t> FlagReader::positive() {
  auto v = value();
  if (!v) return std::nullopt;
  auto n = positive_int(command_, name_, *v);
  if (!n) exit_code_ = 2;
  return n;
}

bool FlagReader::format(std::string& out) {
  if (!is("--format")) return false;
  if (auto v = choice({"text", "json"})) out = *v;
  return true;
}

void FlagReader::file(std::string& out) {
  if (option()) unknown();
  else if (out.empty()) out = name_;
  else fail("more than one FILE given ('" + out + "', '" + name_ + "')");
}

std::optional<int> FlagReader::finished(const std::string& file) const {
  if (exit_code_ || !file.empty()) return exit_code_;
  std::fputs(usage_, stderr);
  return 2;
}

std::optional<std::string> read_input(const std::string& command, const std::string& path) {
  std::string text, error;
  if (session::read_file(path, text, error)) return text;
  std::fprintf(stderr, "%s: %s\n", command.c_str(), error.c_str());
  return std::nullopt;
}

void FlagReader::fail(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", command_.c_str(), message.c_str());
  exit_code_ = 2;
}

void FlagReader::unknown() {
  std::fprintf(stderr, "%s: unknown option '%s'\n%s", command_.c_str(), name_.c_str(), usage_);
  exit_code_ = 2;
}

std::vector<std::string> FlagReader::taken() const {
  return {args_.begin() + static_cast<std::ptrdiff_t>(first_), args_.begin() + static_cast<std::ptrdiff_t>(next_)};
}

}  // namespace shardlens::cli
