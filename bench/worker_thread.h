// The benchmarks measure where the language server works: on a thread of its own whose heap has
// the server worker's settings (ir/heap.h), not on the main thread.
#pragma once

#include <thread>

#include "ir/heap.h"

namespace shardlens::bench {

inline int run_on_worker_thread(int (*body)(int, char**), int argc, char** argv) {
  configure_process_heap();
  int rc = 1;
  std::thread worker([&] {
    use_huge_pages_for_thread_heap();
    rc = body(argc, argv);
  });
  worker.join();
  return rc;
}

}  // namespace shardlens::bench
