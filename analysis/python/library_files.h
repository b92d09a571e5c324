// shardlens' library models (analysis/python/library/), embedded in the binary at build time so
// that no install path has to be found at run time.
#pragma once

#include <string_view>
#include <vector>

namespace shardlens::python {

// The text of a library model by its path under the library root ("transformers/modeling_utils.py"),
// or nullptr.
const char* library_file(std::string_view relative_path);
// Whether some library model lies under this folder ("transformers", "transformers/models"); "" is the root.
bool library_directory(std::string_view relative_path);
std::vector<std::string_view> library_paths();

}  // namespace shardlens::python
