// Process-wide heap settings for shardlens' programs: the CLI and language server, and the
// benchmarks (so that they measure what ships).
#pragma once

#include <string>

namespace shardlens {

// The allocator this process runs on: "mimalloc 2.0.9" when the program is linked with Debian's
// libmimalloc (shardlens and the benchmarks are, see CMakeLists.txt), else "glibc malloc" (the
// test binaries) or "the sanitizers' allocator". Found at run time: the libraries need not know.
std::string heap_allocator();

// Process-wide heap settings; call first thing in main(), before any thread starts. The
// interpreter and the planner spend a large share of an edit's analysis in malloc and free, and an
// edit's analysis often allocates what the previous one freed: freed memory stays with the process
// a while (mimalloc: pages stay committed for a second, unless MIMALLOC_DECOMMIT_DELAY says
// otherwise, and a thread's first segment is committed up front; glibc: no trimming of large
// freed blocks back to the kernel), so that the next analysis does not fault it back in. bench/lsp
// and bench/extract print what it buys.
void configure_process_heap();

// Asks the kernel to back the calling thread's malloc heap with transparent huge pages (2 MiB),
// when SHARDLENS_HUGE_PAGES=1: opt-in, because whether a huge-page fault (which may compact memory
// first) costs less than the 4 KiB faults it saves depends on the machine; bench/lsp measures it.
// Call it first thing in a thread that analyses (the server's worker, the parser's threads) and
// again from time to time: an arena that outgrew its first heap gets a new one. Cheap once done.
// Does nothing unless opted in, when the kernel's THP mode is not `madvise` (`always` needs no
// advice, `never` forbids it), for the main thread's heap (grown with brk), on mimalloc (whose
// heaps are not glibc's arenas), under sanitizers or strict overcommit, and on 32-bit systems.
void use_huge_pages_for_thread_heap();

}  // namespace shardlens
