// ir/heap.h: huge pages for a thread's malloc heap. Read back from the kernel (/proc/self/smaps):
// the advice and the writable reserve are there when the kernel's THP mode asks for advice, and
// nothing changed otherwise, nor for the main thread's heap.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ir/heap.h"

namespace {

struct SmapsEntry {
  uintptr_t start = 0, end = 0;
  std::string header, flags;
  long anon_huge_kib = 0;
};

SmapsEntry mapping_of(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  SmapsEntry current, found;
  while (std::getline(smaps, line)) {
    unsigned long s = 0, e = 0;
    char dash = 0;
    if (std::sscanf(line.c_str(), "%lx%c%lx", &s, &dash, &e) == 3 && dash == '-') {  // a mapping's header line
      if (current.end && at >= current.start && at < current.end) found = current;
      current = SmapsEntry{s, e, line, "", 0};
    } else if (line.rfind("VmFlags:", 0) == 0) {
      current.flags = line.substr(8) + " ";
    } else if (line.rfind("AnonHugePages:", 0) == 0) {
      current.anon_huge_kib = std::atol(line.c_str() + 14);
    }
  }
  if (current.end && at >= current.start && at < current.end) found = current;
  return found;
}

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool thp_mode_is_madvise() { return first_line("/sys/kernel/mm/transparent_hugepage/enabled").find("[madvise]") != std::string::npos; }
bool strict_overcommit() { return first_line("/proc/sys/vm/overcommit_memory") == "2"; }

bool sanitized() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#else
  return false;
#endif
}

}  // namespace

TEST_CASE("a thread's heap is given huge pages when opted in and the kernel wants advice", "[heap]") {
  SmapsEntry before, after;
  std::thread thread([&] {
    void* first = std::malloc(64);
    before = mapping_of(first);
    shardlens::use_huge_pages_for_thread_heap();
    shardlens::use_huge_pages_for_thread_heap();  // a second call finds it done
    std::vector<void*> blocks;
    for (int i = 0; i < 100000; ++i) blocks.push_back(std::malloc(96));  // ~10 MiB, past the first heap page
    after = mapping_of(blocks.back());
    for (void* b : blocks) std::free(b);
    std::free(first);
  });
  thread.join();
  INFO(before.header << " -> " << after.header << " flags:" << after.flags << " AnonHugePages " << after.anon_huge_kib << " kB");
  REQUIRE(before.end > before.start);
  REQUIRE(after.end > after.start);
  const char* opt = std::getenv("SHARDLENS_HUGE_PAGES");
  const bool expected = thp_mode_is_madvise() && !strict_overcommit() && !sanitized() && opt && std::string(opt) == "1";
  if (expected) {
    CHECK(after.flags.find(" hg ") != std::string::npos);
    // The whole 64 MiB heap reserve is one writable mapping, so faults past the end take 2 MiB pages.
    CHECK(after.end - after.start >= (uintptr_t{64} << 20));
    CHECK(after.header.find(" rw-p ") != std::string::npos);
  } else {
    CHECK(after.flags.find(" hg ") == std::string::npos);
  }
}

TEST_CASE("the main thread's heap is left as it is", "[heap]") {
  // Larger than glibc's per-thread cache takes: a small block could be one another thread's
  // arena lent to this thread's cache when it was freed here (the test above frees such).
  void* p = std::malloc(16 << 10);
  shardlens::use_huge_pages_for_thread_heap();
  SmapsEntry m = mapping_of(p);
  std::free(p);
  INFO(m.header << " flags:" << m.flags);
  REQUIRE(m.end > m.start);
  CHECK(m.flags.find(" hg ") == std::string::npos);
}
