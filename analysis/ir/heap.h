// Process-wide heap settings for shardlens' programs: the CLI and language server, and the
// benchmarks (so that they measure what ships).
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace shardlens {

// Every re-plan allocates and frees vectors of several MiB (a 61-layer MoE's parameter records
// are 4 MiB per mesh). glibc hands such blocks back to the kernel when they are freed (mmap above
// its threshold, heap trimming above twice that), and the next plan faults every page back in:
// about 1.4 µs per 4 KiB page on the 2-core CI machines, 4 of the MoE bench's 37 ms re-plan.
// Keeping freed memory in the heap costs at most the trim threshold in resident memory.
inline void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

}  // namespace shardlens
