// The sources a report cites: a fixed table of papers and code references (the ones SHARDING.md
// names), issue links found in the planner's own text ("tt-mlir #8216") or given by the
// compiler-limit knowledge base. Citing records the source for the report's Sources section.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardlens::report::detail {

struct Source {
  std::string id;     // "megatron", "tt-mlir#8216"
  std::string label;  // link text: "Megatron-LM §3"
  std::string title;  // for the Sources list
  std::string url;
};

class Citations {
 public:
  // "[label](url)" for a known source id ("megatron", "sequence-parallel", "gshard", ...), recorded
  // as cited; `label` overrides the link text. Unknown ids give "" (a programming error: tests).
  std::string cite(std::string_view id, std::string_view label = {});
  // An issue or PR ("tt-mlir #8216") with its URL and title.
  std::string cite_issue(const std::string& name, const std::string& title, const std::string& url);
  // The text with "tt-mlir #N", "tt-xla #N", "tt-metal #N" and "arXiv:NNNN.NNNNN" turned into links
  // and recorded, and Markdown-special characters of the text escaped.
  std::string linkify(std::string_view text);
  // In order of first citation.
  const std::vector<Source>& cited() const { return cited_; }
  static bool known(std::string_view id);

 private:
  void record(const Source& s);
  std::vector<Source> cited_;
};

// Markdown-safe text for table cells and prose: escapes | * _ ` [ ] < > and backslashes.
std::string md_escape(std::string_view text);
// `code` with backticks that survive any content.
std::string md_code(std::string_view text);

}  // namespace shardlens::report::detail
