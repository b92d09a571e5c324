#include "framing.h"

#include <algorithm>
#include <cctype>

namespace shardlens::protocol {
namespace {

bool iequals_prefix(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

void MessageReader::feed(std::string_view bytes) {
  if (skip_) {
    size_t n = std::min(skip_, bytes.size());
    skip_ -= n;
    bytes.remove_prefix(n);
  }
  buffer_.append(bytes);
}

bool MessageReader::next(Event& out) {
  bool got = parse_one(out);
  compact();
  return got;
}

void MessageReader::compact() {
  if (consumed_ > 0 && (consumed_ >= buffer_.size() || consumed_ > (1u << 20))) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
}

// Drops bytes up to the next `Content-Length:` (case-insensitive) or keeps a tail that may start one.
bool MessageReader::resync(size_t from) {
  static constexpr std::string_view kKey = "content-length:";
  std::string_view rest(buffer_.data() + consumed_, buffer_.size() - consumed_);
  for (size_t i = from; i < rest.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(rest[i])) != 'c') continue;
    if (rest.size() - i < kKey.size()) {
      if (iequals_prefix(kKey, rest.substr(i))) {
        consumed_ += i;
        return false;
      }
      continue;
    }
    if (iequals_prefix(rest.substr(i), kKey)) {
      consumed_ += i;
      return true;
    }
  }
  consumed_ = buffer_.size();
  return false;
}

bool MessageReader::parse_one(Event& out) {
  for (;;) {
    if (skip_) return false;
    std::string_view rest(buffer_.data() + consumed_, buffer_.size() - consumed_);
    if (in_body_) {
      if (rest.size() < body_length_) return false;
      out.kind = Event::Message;
      out.text.assign(rest.substr(0, body_length_));
      consumed_ += body_length_;
      in_body_ = false;
      return true;
    }
    if (rest.empty()) return false;
    size_t end = rest.find("\r\n\r\n");
    if (end == std::string_view::npos) {
      if (rest.size() <= kMaxHeaderBytes) return false;
      out = {Event::Error, "header block longer than 8 KiB without an empty line; skipped"};
      resync(1);
      return true;
    }
    std::string_view headers = rest.substr(0, end);
    size_t header_bytes = end + 4;
    long long length = -1;
    std::string problem;
    size_t pos = 0;
    while (pos <= headers.size() && problem.empty()) {
      size_t eol = headers.find("\r\n", pos);
      std::string_view line = headers.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
      pos = eol == std::string_view::npos ? headers.size() + 1 : eol + 2;
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) {
        problem = "malformed header line '" + std::string(line.substr(0, 80)) + "'";
        break;
      }
      std::string_view name = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
      if (iequals_prefix(name, "content-length") && name.size() == 14) {
        if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
          problem = "Content-Length '" + std::string(value.substr(0, 40)) + "' is not a non-negative integer";
        else if (length >= 0)
          problem = "Content-Length given twice";
        else
          length = std::stoll(std::string(value));
      } else if (iequals_prefix(name, "content-type") && name.size() == 12) {
        // The spec allows only utf-8 (and the legacy alias utf8).
        std::string v(value);
        std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
        auto cs = v.find("charset=");
        if (cs != std::string::npos) {
          std::string charset = v.substr(cs + 8);
          if (charset != "utf-8" && charset != "utf8") problem = "unsupported charset '" + charset + "' (only utf-8)";
        }
      }
    }
    if (problem.empty() && length < 0) problem = "no Content-Length header";
    if (!problem.empty()) {
      consumed_ += header_bytes;
      out = {Event::Error, problem + "; message skipped"};
      resync(0);
      return true;
    }
    consumed_ += header_bytes;
    if (static_cast<size_t>(length) > max_body_) {
      size_t have = std::min(buffer_.size() - consumed_, static_cast<size_t>(length));
      consumed_ += have;
      skip_ = static_cast<size_t>(length) - have;
      out = {Event::Error, "message of " + std::to_string(length) + " bytes exceeds the limit of " +
                               std::to_string(max_body_ >> 20) + " MiB; skipped"};
      return true;
    }
    body_length_ = static_cast<size_t>(length);
    in_body_ = true;
  }
}

std::string frame(std::string_view body) {
  std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  return out;
}

}  // namespace shardlens::protocol
