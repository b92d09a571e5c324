// Finds where a script sets a value: the config field or constant (`n_kv_heads: int = 8`,
// `NUM_HEADS = 12`, `num_heads=12` in a call) whose name matches one of the keywords.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/span.h"

namespace shardlens::python {

// The span of `name ... = value` for the first name containing a keyword (case-insensitive,
// keywords in order of preference) assigned exactly `value`; an invalid span when there is none.
ir::Span locate_value(const std::string& text, const std::vector<std::string>& keywords, int64_t value);

// The same answers from one scan of the text: every `name = <integer>` indexed by its number, so
// a lookup costs the assignments of that number, not a pass over the text (a planner asks once per
// block that does not divide the mesh).
class ValueIndex {
 public:
  explicit ValueIndex(const std::string& text);
  ir::Span locate(const std::vector<std::string>& keywords, int64_t value) const;

 private:
  struct Hit {
    std::string name;  // lower case
    ir::Span span;
  };
  std::unordered_map<std::string, std::vector<Hit>> by_value_;  // in text order
};

// A ValueIndex of one text made at its first lookup (none made when nothing is asked), shared by
// copies and safe from several threads. The text must outlive it.
class LazyValueIndex {
 public:
  explicit LazyValueIndex(const std::string& text) : state_(std::make_shared<State>(text)) {}
  ir::Span locate(const std::vector<std::string>& keywords, int64_t value) const;

 private:
  struct State {
    explicit State(const std::string& t) : text(t) {}
    const std::string& text;
    std::once_flag once;
    std::unique_ptr<ValueIndex> index;
  };
  std::shared_ptr<State> state_;
};

}  // namespace shardlens::python
