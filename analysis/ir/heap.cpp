#include "ir/heap.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <unordered_set>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <dlfcn.h>
#include <sys/mman.h>
#endif
#if __has_include(<mimalloc.h>)
#include <mimalloc.h>  // its declarations only: nothing here links it
#define SHARDLENS_MIMALLOC_H 1
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SHARDLENS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SHARDLENS_SANITIZED 1
#endif
#endif

namespace shardlens {

namespace {

// How long mimalloc keeps freed pages committed (its default: 25 ms). Each analysis frees the run
// it replaced once its diagnostics are out; with the default, those pages went back to the kernel
// during the pause before the next keystroke, and the next analysis faulted ~300 of them in again.
constexpr long kDecommitDelayMs = 1000;

// mimalloc's entry points, when the program was linked with it (looked up, not linked: the
// libraries and the test binaries run on glibc's malloc).
struct Mimalloc {
  int (*version)() = nullptr;
#if defined(SHARDLENS_MIMALLOC_H)
  decltype(&mi_option_set) option_set = nullptr;
#endif
};
const Mimalloc& mimalloc() {
  static const Mimalloc found = [] {
    Mimalloc m;
#if defined(__linux__)
    m.version = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "mi_version"));
#if defined(SHARDLENS_MIMALLOC_H)
    m.option_set = reinterpret_cast<decltype(&mi_option_set)>(dlsym(RTLD_DEFAULT, "mi_option_set"));
#endif
#endif
    return m;
  }();
  return found;
}

}  // namespace

std::string heap_allocator() {
#if defined(SHARDLENS_SANITIZED)
  return "the sanitizers' allocator";
#else
  if (const auto& m = mimalloc(); m.version) {
    const int v = m.version();  // 209 for 2.0.9
    return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
  }
  return "glibc malloc";
#endif
}

void configure_process_heap() {
  if (const auto& m = mimalloc(); m.version) {
#if defined(SHARDLENS_MIMALLOC_H)
    if (m.option_set) {
      m.option_set(mi_option_eager_commit_delay, 0);
      if (!std::getenv("MIMALLOC_DECOMMIT_DELAY")) m.option_set(mi_option_decommit_delay, kDecommitDelayMs);
    }
#endif
    return;
  }
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  // A thread arena's heaps past its first are unmapped whole when they become empty, whatever the
  // trim threshold, unless the top pad is at least a heap's size: without it each cold plan of the
  // MoE bench faulted ~1,150 pages back in (4.6 MiB). The pad is address space, not memory.
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

// 64-bit only: glibc's thread heaps are 1 MiB blocks on 32-bit systems.
#if defined(__GLIBC__) && defined(__linux__) && !defined(SHARDLENS_SANITIZED) && UINTPTR_MAX > 0xffffffffu

namespace {

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool huge_pages_wanted() {
  static const bool wanted = [] {
    // Opt-in: see heap.h for why not by default.
    const char* env = std::getenv("SHARDLENS_HUGE_PAGES");
    if (!env || std::strcmp(env, "1") != 0) return false;
    // Under strict overcommit the writable reserve (below) would be charged in full.
    if (first_line("/proc/sys/vm/overcommit_memory") == "2") return false;
    return first_line("/sys/kernel/mm/transparent_hugepage/enabled").find("[madvise]") != std::string::npos;
  }();
  return wanted;
}

struct Mapping {
  uintptr_t start = 0, end = 0;
  std::string perms;
  bool anonymous = false;  // no file, not [heap] or [stack] (glibc >= 2.38 may name it [anon:...])
};

bool parse_mapping(const std::string& line, Mapping& m) {
  unsigned long start = 0, end = 0, inode = 0;
  char perms[8] = {};
  int path_at = 0;
  if (std::sscanf(line.c_str(), "%lx-%lx %7s %*s %*s %lu %n", &start, &end, perms, &inode, &path_at) < 4) return false;
  m.start = start;
  m.end = end;
  m.perms = perms;
  const std::string path = path_at > 0 && static_cast<size_t>(path_at) < line.size() ? line.substr(static_cast<size_t>(path_at)) : "";
  m.anonymous = inode == 0 && (path.empty() || path.rfind("[anon:", 0) == 0);
  return true;
}

// glibc reserves each heap of a thread arena as an inaccessible block of this size and alignment
// (HEAP_MAX_SIZE on 64-bit) and makes it writable page by page as the heap grows.
constexpr uintptr_t kArenaHeapBytes = uintptr_t{64} << 20;

}  // namespace

void use_huge_pages_for_thread_heap() {
  if (!huge_pages_wanted() || mimalloc().version) return;
  void* probe = std::malloc(64);
  const auto at = reinterpret_cast<uintptr_t>(probe);
  std::free(probe);
  const uintptr_t block = at & ~(kArenaHeapBytes - 1);
  static std::mutex mutex;
  static std::unordered_set<uintptr_t> examined;
  std::lock_guard lock(mutex);
  if (!examined.insert(block).second) return;
  // Only a block made of anonymous mappings, writable or reserved, is taken for a glibc heap; the
  // main thread's ([heap], grown by brk) and anything unexpected are left alone.
  std::ifstream maps("/proc/self/maps");
  std::string line;
  Mapping m;
  uintptr_t covered = block;
  while (covered < block + kArenaHeapBytes && std::getline(maps, line)) {
    if (!parse_mapping(line, m) || m.end <= covered) continue;
    if (covered == block && m.start != block) return;  // a heap begins its block
    if (m.start > covered || !m.anonymous || (m.perms != "rw-p" && m.perms != "---p")) return;
    covered = m.end;
  }
  if (covered < block + kArenaHeapBytes) return;
  // Advice alone does not do: a 2 MiB page is only placed where the whole 2 MiB is mapped when
  // first touched, and glibc's page-by-page growth never leaves it so. The reserve is made
  // writable up front (it is reserved without swap accounting; pages cost memory only when
  // touched), so every fault past the current end can take a huge page.
  void* base = reinterpret_cast<void*>(block);
  if (mprotect(base, kArenaHeapBytes, PROT_READ | PROT_WRITE) == 0) madvise(base, kArenaHeapBytes, MADV_HUGEPAGE);
}

#else

void use_huge_pages_for_thread_heap() {}

#endif

}  // namespace shardlens
