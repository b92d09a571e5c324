#include "python/module_loader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include "python/library_files.h"

namespace shardlens::python {

namespace {

bool is_library_path(std::string_view path) { return path.rfind(kLibraryRoot, 0) == 0; }

// The library-relative form of a library path ("transformers/modeling_utils.py"), or "" for the root.
std::string_view library_relative(std::string_view path) {
  path.remove_prefix(std::string_view(kLibraryRoot).size());
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return path;
}

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

uint64_t content_hash(std::string_view text) { return std::hash<std::string_view>()(text); }

}  // namespace

ModuleLoader::ModuleLoader() = default;
ModuleLoader::~ModuleLoader() = default;

bool ModuleLoader::is_file(const std::string& path) {
  if (is_library_path(path)) return library_file(library_relative(path)) != nullptr;
  {
    std::lock_guard lock(mutex_);
    if (overlay_.count(path)) return true;
  }
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool ModuleLoader::is_dir(const std::string& path) {
  if (is_library_path(path)) return library_directory(library_relative(path));
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Python's rule, with one liberty: a package's __path__ gathers the folders of that name in every
// search root (the user's real ones first, then the library's, then site-packages'), so that a
// user's `transformers/models/...` and the library model of `transformers/modeling_utils.py` make
// one package. The first regular
// package's __init__.py or the first plain module wins, as in Python.
std::optional<ModuleFile> ModuleLoader::find_in(const std::string& name, const std::vector<std::string>& dirs) {
  ModuleFile found;
  bool have_init = false;
  for (const auto& dir : dirs) {
    std::string base = join(dir, name);
    if (is_dir(base)) {
      found.package_dirs.push_back(base);
      if (!have_init && is_file(base + "/__init__.py")) {
        found.path = base + "/__init__.py";
        have_init = true;
      }
      continue;
    }
    if (!have_init && found.package_dirs.empty() && is_file(base + ".py")) {
      found.path = base + ".py";
      return found;
    }
  }
  if (found.package_dirs.empty()) return std::nullopt;
  found.is_package = true;
  return found;
}

// A library model that covers only part of its module (diffusers' normalization.py: the norms the
// bundled models use; a placeholder) says so on a line of its header, and gives way to an installed
// copy, which has everything and which the interpreter can run.
bool ModuleLoader::yields_to_installed(const std::string& path) {
  if (!is_library_path(path)) return false;
  const char* text = library_file(library_relative(path));
  return text && std::string_view(text).substr(0, 400).find(kPartialModelMarker) != std::string_view::npos;
}

std::optional<ModuleFile> ModuleLoader::find_with_library(const std::string& name, const std::vector<std::string>& dirs) {
  auto found = find_in(name, dirs);
  if (!found || !yields_to_installed(found->path)) return found;
  // The same search with the library's folders last: an installed copy, if any, comes first.
  std::vector<std::string> library_last;
  for (const auto& d : dirs)
    if (!is_library_path(d)) library_last.push_back(d);
  for (const auto& d : dirs)
    if (is_library_path(d)) library_last.push_back(d);
  auto installed = find_in(name, library_last);
  return installed && !is_library_path(installed->path) ? installed : found;
}

std::optional<ModuleFile> ModuleLoader::find_top(const std::string& name, const std::vector<std::string>& roots,
                                                const std::vector<std::string>& after_library) {
  std::vector<std::string> dirs = roots;
  dirs.emplace_back(kLibraryRoot);
  dirs.insert(dirs.end(), after_library.begin(), after_library.end());
  return find_with_library(name, dirs);
}

std::optional<ModuleFile> ModuleLoader::find_sub(const std::string& name, const std::vector<std::string>& package_dirs) {
  return find_with_library(name, package_dirs);
}

std::optional<std::string> ModuleLoader::read(const std::string& path) {
  if (is_library_path(path)) {
    if (const char* text = library_file(library_relative(path))) return std::string(text);
    return std::nullopt;
  }
  {
    std::lock_guard lock(mutex_);
    auto it = overlay_.find(path);
    if (it != overlay_.end()) return it->second;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::shared_ptr<const LoadedModule> ModuleLoader::load(const std::string& path, std::string* error) {
  auto too_large = [&]() -> std::shared_ptr<const LoadedModule> {
    if (error) *error = "'" + path + "' is larger than " + std::to_string(kMaxModuleBytes >> 20) + " MiB and was not read";
    return nullptr;
  };
  int64_t mtime = -1, size = -1;
  bool overlaid = false;
  {
    std::lock_guard lock(mutex_);
    overlaid = overlay_.count(path) > 0;
  }
  if (!overlaid && !is_library_path(path)) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (error) *error = "cannot read '" + path + "'";
      return nullptr;
    }
    mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    size = st.st_size;
    if (static_cast<size_t>(size) > kMaxModuleBytes) return too_large();
    // Unchanged on disk since it was lowered: no need to read it again.
    std::lock_guard lock(mutex_);
    auto it = cache_.find(path);
    if (it != cache_.end() && it->second.mtime_ns == mtime && it->second.size == size) return it->second.module;
  }
  auto text = read(path);
  if (!text) {
    if (error) *error = "cannot read '" + path + "'";
    return nullptr;
  }
  if (text->size() > kMaxModuleBytes) return too_large();  // an overlay
  uint64_t hash = content_hash(*text);
  {
    std::lock_guard lock(mutex_);
    auto it = cache_.find(path);
    if (it != cache_.end() && it->second.module->content_hash == hash && it->second.module->bytes == text->size()) {
      it->second.mtime_ns = mtime;
      it->second.size = size;
      return it->second.module;
    }
  }
  std::shared_ptr<LoadedModule> lowered = lower_module_text(path, *text);
  lowered->content_hash = hash;
  lowered->bytes = text->size();
  std::lock_guard lock(mutex_);
  cache_[path] = Cached{mtime, size, lowered};
  return lowered;
}

void ModuleLoader::set_overlay(const std::string& path, std::string text) {
  std::lock_guard lock(mutex_);
  overlay_[path] = std::move(text);
}

void ModuleLoader::clear_overlay(const std::string& path) {
  std::lock_guard lock(mutex_);
  overlay_.erase(path);
  cache_.erase(path);  // the disk's text may differ from the buffer's
}

std::vector<std::string> search_path_entries(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  if (const char* env = std::getenv("PYTHONPATH")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view entry = rest.substr(0, colon);
      if (!entry.empty()) out.emplace_back(entry);  // an empty entry means the current folder: not taken
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

}  // namespace shardlens::python
