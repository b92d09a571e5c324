// Pieces of Python source the emitters write: identifiers, string literals, partition specs, and
// how to reach a child module or a parameter from its parent whatever its registered name is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardlens::emit::detail {

// An ASCII identifier that is not a keyword (usable after a dot).
bool is_identifier(std::string_view s);
// A dotted path of identifiers ("model", "pipe.unet").
bool is_dotted_name(std::string_view s);
// "..." with the escapes Python needs.
std::string string_literal(std::string_view s);
// (None, "model"), ("model",), (None, ("batch", "model")); one entry per dim.
std::string spec_literal(const std::vector<std::vector<std::string>>& spec);

enum class Container : uint8_t { None, List, Dict };
// ModuleList / Sequential / ParameterList index their children; ModuleDict / ParameterDict key them.
Container container_of(std::string_view class_name);
// Whether `for x in E` (List) or `for x in E.values()` (Dict) visits exactly the children, and
// E[a:b] slices them (exact built-in classes only: a subclass may change either).
bool iterable_container(std::string_view class_name);

// How to reach the child (or parameter) registered under `key`, at `position` among its siblings.
std::string member_access(const std::string& parent, std::string_view parent_class, std::string_view key, size_t position);

}  // namespace shardlens::emit::detail
