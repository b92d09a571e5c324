// The language server's work per edit without the protocol: DocumentAnalyzer::analyze (incremental
// parse, re-extraction, trace, plan without alternatives, findings) on the LSP bench model after
// one-character edits of the kinds bench/lsp makes, each reverted. Every kind runs twice: edits
// back to back, and edits after 200 ms of idleness, as typing is (bench/lsp's edits are >= 200 ms
// apart). The two differ by the state the CPU's caches are left in: the figure to compare with the
// editor's latency is the idle one. Prints figures; asserts nothing.
//
//   shardlens_bench_analysis [MODEL.py] [--edits N] [--only TEXT]   (--only: the edit sites whose line holds TEXT)
//   shardlens_bench_analysis --loader LOADER.py [--edits N]
//     a loader script whose model lives in the modules it imports (issue 34): a cold analysis (a
//     new analyzer each time: every import parsed and run), then edits in the loader itself, whose
//     imported modules the analyzer keeps.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "session/document_analysis.h"
#include "worker_thread.h"

using namespace shardlens;
using Clock = std::chrono::steady_clock;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

struct EditKind {
  const char* name;
  const char* anchor;  // a line of the model; a character of `chars` goes in at `offset` bytes into it
  size_t offset;
  const char* chars;
};

constexpr const char* kLetters = "abcdefghijklmnopqrstuvwxyz";
// Edits like those of bench/lsp/lsp_bench.js, in the same places.
const EditKind kKinds[] = {
    {"identifier in forward()", "        query_states = self.q_proj(hidden_states)", 30, kLetters},
    {"identifier in forward()", "        hidden_states = self.cross_attn(hidden_states, encoder_hidden_states", 30, kLetters},
    {"config value", "    d_ff=5632,", 10, "0123456789"},
    {"config value", "    moe=MoEConfig(num_experts=8, top_k=2, expert_ffn_dim=4096, shared_ffn_dim=4096),", 59, "0123456789"},
    {"config value", "    max_position_embeddings: int = 8192", 36, "0123456789"},
    {"config value", "    rope_theta: float = 500000.0", 25, "0123456789"},
    {"comment", "# ", 2, kLetters},
    {"comment", "        # attention over the encoder output", 20, kLetters},
};

double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

// Issue 35 / 34's loader figures: cold analysis < 300 ms, an edit in the open file < 30 ms p99.
int run_loader(const std::string& path, int edits) {
  const std::string text = read(path);
  if (text.empty()) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  session::Settings settings;
  std::vector<double> cold;  // the first: nothing cached in the process; then new analyzers
  size_t modules = 0, ops = 0;
  for (int i = 0; i < 6; ++i) {
    session::DocumentAnalyzer analyzer;
    auto t = Clock::now();
    auto analysis = analyzer.analyze(1, path, text, {}, true, settings);
    cold.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
    if (analysis->shared_model) {
      modules = analysis->shared_model->modules.size();
      ops = analysis->shared_model->dataflow.ops.size();
    }
  }
  std::printf("loader %s: %zu modules, %zu traced ops\n", path.c_str(), modules, ops);
  std::printf("  cold analysis (every import parsed and run, traced, planned): %.1f ms   (target < 300 ms)\n", cold[0]);
  std::printf("    again in a new analyzer (the process's parsed modules kept): median %.1f ms of %zu\n",
              median(std::vector<double>(cold.begin() + 1, cold.end())), cold.size() - 1);
  // Edits in the loader: a new statement typed at its end, one character at a time, then taken
  // away again; the imported modules are unchanged, so the analyzer answers from what it keeps.
  session::DocumentAnalyzer analyzer;
  int version = 1;
  analyzer.complete(analyzer.analyze(version++, path, text, {}, true, settings));
  std::string now = text;
  if (!now.empty() && now.back() != '\n') now += '\n';
  const std::string typed = "bench_value = 12345\n";
  std::vector<double> ms, script_ms, trace_ms, plan_ms;
  for (int i = 0; i < edits; ++i) {
    const size_t k = static_cast<size_t>(i) % (2 * typed.size());
    session::ByteEdit edit;
    if (k < typed.size()) {  // type the next character
      edit = {now.size(), now.size(), typed.substr(k, 1)};
      now += typed[k];
    } else {  // delete the last one
      edit = {now.size() - 1, now.size(), ""};
      now.pop_back();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto t = Clock::now();
    auto analysis = analyzer.analyze(version++, path, now, {edit}, false, settings);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
    script_ms.push_back(analysis->extract_stats.script_run_ms());
    trace_ms.push_back(analysis->extract_stats.trace_ms);
    plan_ms.push_back(analysis->plan.plan_ms);
    analyzer.drop_retired();
    analyzer.complete(analysis);
  }
  std::printf("  edit in the loader (imports kept):   p50 %.1f ms, p99 %.1f ms of %zu edits   (target p99 < 30 ms)\n", median(ms),
              percentile(ms, 0.99), ms.size());
  std::printf("    p50 of its parts: script run %.1f, trace %.1f, planning %.1f ms\n", median(script_ms), median(trace_ms), median(plan_ms));
  return 0;
}

}  // namespace

static int run(int argc, char** argv) {
  std::string path = "bench/models/lsp_bench_model.py";
  int edits = 40;
  std::string only, loader;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--edits") && i + 1 < argc) edits = std::max(2, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--loader") && i + 1 < argc) loader = argv[++i];
    else path = argv[i];
  }
  if (!loader.empty()) return run_loader(loader, std::max(edits, 100));
  const std::string text = read(path);
  if (text.empty()) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  session::Settings settings;
  std::printf("DocumentAnalyzer::analyze on %s (%zu bytes), %d edits per kind (half of them reverts)\n", path.c_str(), text.size(), edits);
  std::printf("  %-24s %28s %30s\n", "", "back to back: p50 / p90", "after 200 ms idle: p50 / p90");
  for (const EditKind& kind : kKinds) {
    if (!only.empty() && !std::strstr(kind.anchor, only.c_str())) continue;
    size_t at = text.find(kind.anchor);
    if (at == std::string::npos) {
      std::fprintf(stderr, "anchor not found: %s\n", kind.anchor);
      return 1;
    }
    const size_t pos = at + kind.offset;
    double figures[2][2];
    std::vector<double> insert_ms, insert_plan_ms;  // idle inserts: the whole analysis, and its plan
    std::vector<double> insert_script_ms, insert_trace_ms;  // and its extraction's script run and trace
    for (int idle = 0; idle < 2; ++idle) {
      session::DocumentAnalyzer analyzer;
      int version = 1;
      auto first = analyzer.analyze(version++, path, text, {}, true, settings);
      analyzer.complete(first);
      auto previous = first;
      std::vector<double> ms;
      for (int i = 0; i < edits; ++i) {
        // A new letter each time (as typing is: the planner's memo has not seen the result), then
        // taken out again.
        const bool insert = i % 2 == 0;
        const std::string letter(1, kind.chars[(i / 2) % std::strlen(kind.chars)]);
        std::string now = text;
        if (insert) now.insert(pos, letter);
        session::ByteEdit edit{pos, insert ? pos : pos + 1, insert ? letter : ""};
        if (idle) std::this_thread::sleep_for(std::chrono::milliseconds(200));
        auto t = Clock::now();
        auto analysis = analyzer.analyze(version++, path, now, {edit}, false, settings);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
        if (idle && insert) {
          insert_ms.push_back(ms.back());
          // A plan is made afresh only with a new model (an edit that changes no code reuses both).
          if (analysis->shared_model != previous->shared_model) insert_plan_ms.push_back(analysis->plan.plan_ms);
          insert_script_ms.push_back(analysis->extract_stats.script_run_ms());
          insert_trace_ms.push_back(analysis->extract_stats.trace_ms);
        }
        previous = analysis;
        analyzer.drop_retired();      // as the server does once the diagnostics are out
        analyzer.complete(analysis);  // and then this, before the next edit
      }
      figures[idle][0] = percentile(ms, 0.5);
      figures[idle][1] = percentile(ms, 0.9);
    }
    char cells[2][64];
    for (int idle = 0; idle < 2; ++idle) std::snprintf(cells[idle], sizeof cells[idle], "%.1f / %.1f ms", figures[idle][0], figures[idle][1]);
    char planning[128] = "the last plan reused";
    if (!insert_plan_ms.empty())
      std::snprintf(planning, sizeof planning, "script run %.1f, trace %.1f, planning %.1f ms", percentile(insert_script_ms, 0.5),
                    percentile(insert_trace_ms, 0.5), percentile(insert_plan_ms, 0.5));
    std::printf("  %-24s %28s %30s   inserts after idle: p50 %.1f ms (%s)\n", kind.name, cells[0], cells[1], percentile(insert_ms, 0.5),
                planning);
  }
  return 0;
}

int main(int argc, char** argv) { return shardlens::bench::run_on_worker_thread(run, argc, argv); }
