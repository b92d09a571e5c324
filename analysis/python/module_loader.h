// The workspace of modules: finds the source file of an imported module on the search path (or
// among shardlens' library models), and parses and lowers it once per content.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/span.h"

namespace shardlens::python {

struct Unit;

// Library models (analysis/python/library/, embedded in the binary) have paths under this prefix,
// so that a span or an unresolved entry says plainly that the code is shardlens' model of the
// library, not the library.
inline constexpr const char* kLibraryRoot = "<shardlens-library>";
// A line in the header of a library model that covers only part of its module: an installed copy
// (site-packages) is read instead when there is one (README.md of the library).
inline constexpr const char* kPartialModelMarker = "# shardlens: partial model";

// Where a module's code is.
struct ModuleFile {
  std::string path;                       // the .py file; empty for a namespace package
  bool is_package = false;
  std::vector<std::string> package_dirs;  // a package's __path__: where its submodules are searched
};

// A module's lowered statements, made once per content and shared by every analysis.
struct LoadedModule {
  std::string path;
  uint32_t file = 0;  // ir::Span::file of its spans
  uint64_t content_hash = 0;
  size_t bytes = 0;
  std::vector<std::shared_ptr<Unit>> units;
  std::vector<std::pair<ir::Span, std::string>> problems;  // syntax errors (lines skipped)
};

class ModuleLoader {
 public:
  ModuleLoader();
  ~ModuleLoader();
  ModuleLoader(const ModuleLoader&) = delete;
  ModuleLoader& operator=(const ModuleLoader&) = delete;

  // A top-level module searched in `roots` (sys.path order), then among the library models, then
  // in `after_library` (an interpreter's site-packages: there the library's model of a module
  // wins over the installed library's code, which the interpreter cannot run); a submodule
  // searched in its parent's package_dirs (in the same order).
  std::optional<ModuleFile> find_top(const std::string& name, const std::vector<std::string>& roots,
                                     const std::vector<std::string>& after_library = {});
  std::optional<ModuleFile> find_sub(const std::string& name, const std::vector<std::string>& package_dirs);
  // Reads, parses and lowers a file (cached by path and content). nullptr: unreadable or too large
  // (the reason in *error).
  std::shared_ptr<const LoadedModule> load(const std::string& path, std::string* error = nullptr);
  // The text of a file as an analysis sees it: an editor's open buffer wins over the disk.
  std::optional<std::string> read(const std::string& path);

  // Editor buffers of files that other documents import (the server keeps these in step).
  void set_overlay(const std::string& path, std::string text);
  void clear_overlay(const std::string& path);

  // A file larger than this is not read (one unresolved entry says so instead).
  static constexpr size_t kMaxModuleBytes = 8u << 20;

 private:
  bool is_file(const std::string& path);
  bool is_dir(const std::string& path);
  std::optional<ModuleFile> find_in(const std::string& name, const std::vector<std::string>& dirs);
  std::optional<ModuleFile> find_with_library(const std::string& name, const std::vector<std::string>& dirs);
  bool yields_to_installed(const std::string& path);

  std::mutex mutex_;
  std::unordered_map<std::string, std::string> overlay_;
  struct Cached {
    int64_t mtime_ns = -1;
    int64_t size = -1;
    std::shared_ptr<const LoadedModule> module;
  };
  std::unordered_map<std::string, Cached> cache_;
};

// The PYTHONPATH entries of this process's environment, then `extra` (--python-path, settings).
std::vector<std::string> search_path_entries(const std::vector<std::string>& extra);

// Lowers a whole file's text into top-level statements (defined with the extractor's lowering).
std::shared_ptr<LoadedModule> lower_module_text(const std::string& path, const std::string& text);

}  // namespace shardlens::python
