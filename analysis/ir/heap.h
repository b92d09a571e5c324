// Process-wide heap settings for shardlens' programs: the CLI and language server, and the
// benchmarks (so that they measure what ships).
#pragma once

#include <string>

namespace shardlens {

// The allocator this process runs on: "mimalloc 2.0.9" when the program is linked with Debian's
// libmimalloc (shardlens and the benchmarks are, see CMakeLists.txt), else "glibc malloc" (the
// test binaries) or "the sanitizers' allocator". Found at run time: the libraries need not know.
std::string heap_allocator();

// Process-wide heap settings; call first thing in main(), before any thread starts.
//
// On mimalloc: freed pages stay committed for a second (decommit_delay 1000 ms, unless
// MIMALLOC_DECOMMIT_DELAY says otherwise) rather than 25 ms: typing pauses are longer than 25 ms,
// and an edit's analysis after one faulted back in the pages the last one freed (twice the page
// faults of bench/analysis). bench/lsp, four alternating runs each: edit->diagnostics p99 mean
// 17.3 ms against 19.6 (config-value edits 22.0 against 23.9), peak RSS 62.5 MiB against 59.6.
// And a thread's first segment is committed up front (eager_commit_delay 0). By default
// mimalloc commits it page by page as it grows, and the two threads of a cold parse then took
// 21 ms instead of 13 (bench/extract_bench.cpp). Why mimalloc at all: the interpreter and the
// planner spend a third of an edit's analysis in malloc and free. Against glibc's malloc, in
// alternating runs of the same build: bench/lsp edit->diagnostics p50 1.7-1.9 ms against 2.3-2.4,
// RSS 53 MiB against 56-57, a one-line re-extraction 0.77 ms against 0.90 (bench/extract); the
// p99 was no different within the runs' noise (22-33 ms against 22-23).
//
// On glibc's malloc: every re-plan allocates and frees vectors of several MiB (a 61-layer MoE's
// parameter records are 4 MiB per mesh). glibc hands such blocks back to the kernel when they are
// freed (mmap above its threshold, heap trimming above twice that), and the next plan faults every
// page back in: about 1.4 µs per 4 KiB page on the 2-core CI machines, 4 of the MoE bench's 37 ms
// re-plan. Keeping freed memory in the heap costs at most the trim threshold in resident memory.
void configure_process_heap();

// Asks the kernel to back the calling thread's malloc heap with transparent huge pages (2 MiB),
// when SHARDLENS_HUGE_PAGES=1. Opt-in because what it buys depends on the virtual machine. On the
// CI-class VMs of an earlier month the first touch of each 4 KiB page after the process had slept
// cost microseconds, and 2 MiB pages made an analysis after a pause in typing 3-4x faster. On
// these VMs now (December 2026) a first touch of a 2 MiB page costs 5 to 30 ms (the kernel's THP
// defrag is `madvise`: a huge-page fault compacts memory first) against 1.3 ms for the same
// 2 MiB in 4 KiB pages, and the language server's heap still grows during the first edits:
// edit->diagnostics p99 71-110 ms with huge pages against 57-66 ms without (bench/lsp,
// alternating runs). Call it first thing in a thread that analyses (the server's worker, the
// parser's threads) and again from time to time: an arena that outgrew its first heap gets a new
// one. Cheap once done (a malloc and a set lookup). Does nothing unless opted in, when the
// kernel's THP mode is not `madvise` (`always` needs no advice, `never` forbids it), for the main
// thread's heap (glibc grows it with brk; the server's main thread only waits for its main
// loop's), on mimalloc (whose heaps are not glibc's arenas), under sanitizers or strict overcommit
// (vm.overcommit_memory=2), and on 32-bit systems.
void use_huge_pages_for_thread_heap();

}  // namespace shardlens
