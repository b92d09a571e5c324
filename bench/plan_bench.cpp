// Planning time and memory for a 126-layer 405B-class dense model and a 61-layer MoE over the
// meshes {1x2, 1x8, 2x4, 8x4}: cold (empty memo), and re-planning after an edit to one class.
// Prints figures; asserts nothing. Targets (issue): < 50 ms cold, < 5 ms re-plan.
// `shardlens_bench_plan bench/models scaling`: issue 35's figures (transformers-style RoPE
// attention at 1/32/126 layers, the LSP bench model in prefill, 512 distinct widths, a 50k-line
// file of 700 families, and how many plans reached the search's state cap).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "worker_thread.h"
#include "plan/plan.h"
#include "python/extractor.h"

using namespace shardlens;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// CPU time of the process (both planner threads), for figures on a machine others load too:
// wall time there measures the neighbours.
double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The meshes the issue's targets are stated for (by default); issue 35's are n300, T3K, Galaxy
// and a 32-chip line.
std::vector<plan::Mesh> bench_meshes(std::initializer_list<const char*> names = {"1x2", "1x8", "2x4", "8x4"}) {
  std::vector<plan::Mesh> out;
  for (const char* m : names) {
    std::string error;
    out.push_back(*plan::parse_mesh(m, error));
  }
  return out;
}

// Replaces the first occurrence of `from` (on one line) with `to` through an incremental edit;
// false when the text has no `from`.
bool replace_first(python::ModelExtractor& extractor, const std::string& from, const std::string& to) {
  const std::string& text = extractor.document().text();
  size_t at = text.find(from);
  if (at == std::string::npos) return false;
  python::TextPosition p;
  for (size_t k = 0; k < at; ++k) {
    if (text[k] == '\n') { ++p.row; p.column = 0; } else { ++p.column; }
  }
  extractor.apply_edit({p, {p.row, p.column + static_cast<uint32_t>(from.size())}, to});
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Extraction that traces forward() as the CLI and the server do for `workload`: a prefill's
// forward sees `seq` tokens per sequence, a decode's one token over a context of `seq`.
python::ExtractOptions traced_for(const plan::Workload& workload) {
  python::ExtractOptions extract;
  extract.trace_forward = true;
  extract.workload.batch = workload.batch;
  extract.workload.tokens = workload.tokens_per_forward();
  extract.workload.context = workload.seq;
  return extract;
}

void run(const std::string& name, const std::string& path, const std::string& edit_from, const std::string& edit_to) {
  std::string text = read(path);
  if (text.empty()) {
    std::printf("%s: cannot read %s\n", name.c_str(), path.c_str());
    return;
  }
  plan::PlanOptions options;
  options.meshes = bench_meshes();
  python::ExtractOptions extract = traced_for(options.workload);

  python::ModelExtractor extractor(text, path);
  auto t0 = Clock::now();
  auto first = extractor.extract(extract);
  double extract_ms = ms_since(t0);
  if (!first.ok) {
    std::printf("%s: extraction failed: %s\n", name.c_str(), first.error.c_str());
    return;
  }
  std::vector<double> cold;
  plan::PlanResult result;
  for (int i = 0; i < 5; ++i) {
    plan::Planner planner;
    auto t = Clock::now();
    result = planner.plan(first.model, options);
    cold.push_back(ms_since(t));
  }
  // Re-plan after an edit to one class: the front end re-extracts (timed separately), the planner
  // keeps its memo of solved bodies.
  plan::Planner planner, editor;
  plan::PlanOptions editor_options = options;
  editor_options.alternatives = false;  // what an editor needs per keystroke; alternatives on hover
  planner.plan(first.model, options);
  editor.plan(first.model, editor_options);
  size_t memo_before = planner.memo_entries();
  std::vector<double> replan, replan_editor, reextract;
  bool toggled = false;
  // 15 edits: each re-plan follows a re-extraction that leaves the caches cold, and 5 samples gave
  // medians that swung by 30% between runs on the 2-core VMs.
  for (int i = 0; i < 15; ++i) {
    if (!replace_first(extractor, toggled ? edit_to : edit_from, toggled ? edit_from : edit_to)) break;
    toggled = !toggled;
    auto t1 = Clock::now();
    auto edited = extractor.extract(extract);
    reextract.push_back(ms_since(t1));
    auto t2 = Clock::now();
    auto r = planner.plan(edited.model, options);
    replan.push_back(ms_since(t2));
    auto t3 = Clock::now();
    editor.plan(edited.model, editor_options);
    replan_editor.push_back(ms_since(t3));
  }
  std::printf("%s: %zu modules, %zu parameters, %zu traced ops\n", name.c_str(), first.model.modules.size(),
              first.model.parameters.size(), first.model.dataflow.ops.size());
  std::printf("  extract + trace (cold):        %8.1f ms  (trace %.1f ms)\n", extract_ms, first.stats.trace_ms);
  std::printf("  plan, 4 meshes, cold:          %8.1f ms  (median of 5; target < 50 ms; ratio %.2f)\n", median(cold),
              median(cold) / 50.0);
  if (!replan.empty()) {
    std::printf("  re-plan after a one-class edit: %7.2f ms  (median of %zu; target < 5 ms; ratio %.2f)\n", median(replan),
                replan.size(), median(replan) / 5.0);
    std::printf("    without alternatives (editor):  %7.2f ms  (ratio %.2f)\n", median(replan_editor), median(replan_editor) / 5.0);
    std::printf("  re-extract + trace after edit:  %7.1f ms\n", median(reextract));
  }
  {
    plan::PlanOptions bare = options;
    bare.alternatives = false;
    plan::Planner warm;
    warm.plan(first.model, bare);
    auto t3 = Clock::now();
    warm.plan(first.model, bare);
    std::printf("  re-plan, no edit, without alternatives: %.2f ms\n", ms_since(t3));
    auto t4 = Clock::now();
    planner.plan(first.model, options);
    std::printf("  re-plan, no edit, with alternatives:    %.2f ms\n", ms_since(t4));
  }
  std::printf("  memo: %zu solved bodies after the cold plan, %zu after the edits\n", memo_before, planner.memo_entries());
  for (auto& m : result.meshes)
    std::printf("  %-4s %-46s %4d CCLs %10.0f us  %7.2f GiB/device%s\n", m.mesh.shape_string().c_str(), m.mode.c_str(),
                m.totals.collectives, m.totals.est_time_us, m.totals.memory_per_device_bytes / (1024.0 * 1024 * 1024),
                m.memory_fallback ? " (memory fallback)" : "");
  std::printf("  peak RSS so far: %.0f MiB\n", peak_rss_mib());
}

bool cut_short(const plan::PlanResult& r) {
  for (const auto& note : r.notes)
    if (note.find("not proven optimal") != std::string::npos) return true;
  return false;
}

// Plans `text` over the target meshes in one phase: cold (a fresh planner, median of `runs`) and,
// when `edit_from` occurs, re-planned after a one-class edit with the memo of the last plan.
// Counts plans whose search hit its state cap into *cut.
void scaling_case(const std::string& name, const std::string& text, plan::Phase phase, const std::string& edit_from,
                  const std::string& edit_to, int runs, int* cut, double target_ms = 50) {
  plan::PlanOptions options;
  options.meshes = bench_meshes({"n300", "t3k", "galaxy", "1x32"});
  options.workload.phase = phase;
  python::ModelExtractor extractor(text, "model.py");
  python::ExtractOptions extract = traced_for(options.workload);
  auto t0 = Clock::now();
  auto first = extractor.extract(extract);
  const double extract_ms = ms_since(t0);
  if (!first.ok) {
    std::printf("  %-44s extraction failed: %s\n", name.c_str(), first.error.c_str());
    return;
  }
  std::vector<double> cold, cold_cpu;
  plan::PlanResult result;
  for (int i = 0; i < runs; ++i) {
    plan::Planner planner;
    auto t = Clock::now();
    const double c = cpu_ms();
    result = planner.plan(first.model, options);
    cold.push_back(ms_since(t));
    cold_cpu.push_back(cpu_ms() - c);
  }
  const bool was_cut = cut_short(result);
  *cut += was_cut;
  std::string replan = "-";
  if (!edit_from.empty()) {
    plan::Planner planner;
    planner.plan(first.model, options);
    std::vector<double> times, times_cpu;
    bool toggled = false;
    for (int i = 0; i < 7; ++i) {
      if (!replace_first(extractor, toggled ? edit_to : edit_from, toggled ? edit_from : edit_to)) break;
      toggled = !toggled;
      auto edited = extractor.extract(extract);
      planner.new_generation();
      auto t = Clock::now();
      const double c = cpu_ms();
      auto r = planner.plan(edited.model, options);
      times.push_back(ms_since(t));
      times_cpu.push_back(cpu_ms() - c);
      *cut += cut_short(r);
    }
    if (!times.empty()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.2f (cpu %.2f) ms", median(times), median(times_cpu));
      replan = buf;
    }
  }
  std::printf("  %-40s %-7s cold %7.1f (cpu %7.1f) ms (target < %.0f)  re-plan %-24s extract %6.1f ms  %s%s\n", name.c_str(),
              phase == plan::Phase::Prefill ? "prefill" : "decode", median(cold), median(cold_cpu), target_ms, replan.c_str(), extract_ms,
              result.ok ? "" : "FAILED ", was_cut ? "STATE CAP REACHED" : "exact");
}

// A stack of `layers` decoder blocks whose FFN widths all differ (pruned models, hybrid stacks).
std::string distinct_widths_model(int layers) {
  std::string s = R"(import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, ffn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.q = nn.Linear(dim, dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.up = nn.Linear(dim, ffn, bias=False)
        self.down = nn.Linear(ffn, dim, bias=False)

    def forward(self, x):
        h = x + self.o(F.relu(self.q(self.norm(x))))
        return h + self.down(F.silu(self.up(self.norm(h))))


class Stack(nn.Module):
    def __init__(self, dim, widths):
        super().__init__()
        self.layers = nn.ModuleList([Block(dim, w) for w in widths])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


model = Stack(4096, [8192 + 64 * i for i in range()";
  s += std::to_string(layers) + ")])\n";
  return s;
}

// A file of `families` module families (each its own classes: a config, a block and a head with
// helpers), about `lines` lines, all composed by one model.
std::string many_families_model(int families, int lines) {
  std::string s = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n";
  const int per_family = std::max(20, lines / families);
  for (int f = 0; f < families; ++f) {
    const std::string id = std::to_string(f);
    const int width = 1024 + 32 * (f % 16);
    s += "class Config" + id + ":\n    dim = 1024\n    hidden = " + std::to_string(width) + "\n\n\n";
    s += "def helper_" + id + "(x):\n    return F.gelu(x)\n\n\n";
    s += "class Block" + id + "(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n";
    s += "        self.norm = nn.LayerNorm(cfg.dim)\n        self.up = nn.Linear(cfg.dim, cfg.hidden)\n";
    s += "        self.down = nn.Linear(cfg.hidden, cfg.dim)\n\n";
    s += "    def forward(self, x):\n        return x + self.down(helper_" + id + "(self.up(self.norm(x))))\n";
    // Methods the model never calls: the bulk of a real file.
    for (int k = 0; 20 + 4 * k < per_family - 4; ++k)
      s += "\n    def unused_" + std::to_string(k) + "(self, x):\n        y = x * " + std::to_string(k + 1) +
           "\n        return y\n";
    s += "\n\n";
  }
  s += "class Everything(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.blocks = nn.ModuleList([\n";
  for (int f = 0; f < families; ++f) s += "            Block" + std::to_string(f) + "(Config" + std::to_string(f) + "()),\n";
  s += "        ])\n\n    def forward(self, x):\n        for b in self.blocks:\n            x = b(x)\n        return x\n\n\nmodel = Everything()\n";
  return s;
}

// Issue 35's figures: real attention bodies, distinct layers and large files, over n300, T3K,
// Galaxy and 1x32 in both phases.
void run_scaling(const std::string& dir) {
  int cut = 0;
  const std::string llama = read(dir + "/llama_rope.py");
  std::printf("scaling (meshes n300, t3k, galaxy, 1x32 planned together; medians):\n");
  if (llama.empty()) std::printf("  cannot read %s/llama_rope.py\n", dir.c_str());
  for (int layers : {1, 32, 126}) {
    std::string text = llama;
    const std::string key = "NUM_LAYERS = 32";
    if (size_t at = text.find(key); at != std::string::npos) text.replace(at, key.size(), "NUM_LAYERS = " + std::to_string(layers));
    for (plan::Phase phase : {plan::Phase::Prefill, plan::Phase::Decode})
      scaling_case("transformers Llama, RoPE, " + std::to_string(layers) + " layers", text, phase, "F.silu(self.gate_proj(x))",
                   "F.gelu(self.gate_proj(x))", 3, &cut);
  }
  const std::string lsp = read(dir + "/lsp_bench_model.py");
  if (!lsp.empty()) {
    // As the issue measured it: prefill on a T3K alone.
    plan::PlanOptions options;
    std::string error;
    options.meshes = {*plan::parse_mesh("t3k", error)};
    options.workload.phase = plan::Phase::Prefill;
    python::ModelExtractor extractor(lsp, "model.py");
    auto r = extractor.extract(traced_for(options.workload));
    std::vector<double> cold, cold_cpu;
    plan::PlanResult result;
    for (int i = 0; i < 3; ++i) {
      plan::Planner planner;
      auto t = Clock::now();
      const double c = cpu_ms();
      result = planner.plan(r.model, options);
      cold.push_back(ms_since(t));
      cold_cpu.push_back(cpu_ms() - c);
    }
    cut += cut_short(result);
    std::printf("  %-40s prefill cold %7.1f (cpu %7.1f) ms (target < 100, t3k)  %s\n", "LSP bench model", median(cold), median(cold_cpu),
                cut_short(result) ? "STATE CAP REACHED" : "exact");
  }
  for (plan::Phase phase : {plan::Phase::Prefill, plan::Phase::Decode})
    scaling_case("512 layers of distinct FFN widths", distinct_widths_model(512), phase, "", "", 3, &cut);
  const std::string big = many_families_model(700, 50000);
  size_t lines = std::count(big.begin(), big.end(), '\n');
  for (plan::Phase phase : {plan::Phase::Prefill, plan::Phase::Decode})
    scaling_case(std::to_string(lines) + "-line file, 700 families", big, phase, "", "", 3, &cut, 200);
  std::printf("  plans whose search reached its state cap: %d (target 0)\n", cut);
  std::printf("  peak RSS so far: %.0f MiB\n", peak_rss_mib());
}

}  // namespace

static int run(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "bench/models";
  std::string only = argc > 2 ? argv[2] : "";
  if (argc > 3 && std::string(argv[3]) == "loop-extract") {
    // For profilers: re-extract and trace FILE (argv[2]) after edits that append " * 1" to the
    // text argv[4] and take it away again, as the language server does per keystroke in a forward().
    std::string file = argv[2];
    std::string from = argc > 4 ? argv[4] : "F.silu(self.w1(x))";
    std::string to = from + " * 1";
    python::ModelExtractor extractor(read(file), file);
    python::ExtractOptions extract;
    extract.trace_forward = true;
    extractor.extract(extract);
    double trace_ms = 0;
    size_t replayed = 0;
    for (int i = 0; i < 100; ++i) {
      if (!replace_first(extractor, i % 2 ? to : from, i % 2 ? from : to)) return 1;
      auto r = extractor.extract(extract);
      trace_ms += r.stats.trace_ms;
      replayed += r.stats.calls_replayed;
    }
    std::printf("trace after an edit: %.2f ms (mean of 100; %zu module calls replayed per trace)\n", trace_ms / 100, replayed / 100);
    return 0;
  }
  if (argc > 3 && std::string(argv[3]) == "loop") {
    // For profilers: extract once, then re-plan with a warm memo many times. NAME is dense, moe or
    // a script (planned on 1x8, the language server's default mesh).
    bool script = only.size() > 3 && only.compare(only.size() - 3, 3, ".py") == 0;
    std::string text = read(script ? only : dir + (only == "moe" ? "/moe_61.py" : "/dense_405b.py"));
    python::ModelExtractor extractor(text, "model.py");
    python::ExtractOptions extract;
    extract.trace_forward = true;
    auto r = extractor.extract(extract);
    plan::PlanOptions options;
    options.meshes = bench_meshes();
    if (script) options.meshes = {*plan::parse_mesh("1x8", r.error)};
    // `edit [FROM TO]`: what an editor does per keystroke: a one-class edit (FROM becomes TO and
    // back), re-extract, re-plan without alternatives (only the planning is worth profiling).
    bool edit = argc > 4 && std::string(argv[4]) == "edit";
    const std::string edit_from = argc > 6 ? argv[5] : "F.silu(self.w1(x))";
    const std::string edit_to = argc > 6 ? argv[6] : "F.gelu(self.w1(x))";
    options.alternatives = !edit;
    plan::Planner planner;
    planner.plan(r.model, options);
    python::ExtractResult edited[2];
    if (edit) {
      for (int k = 0; k < 2; ++k) {
        if (!replace_first(extractor, k ? edit_to : edit_from, k ? edit_from : edit_to)) return 1;
        edited[k] = extractor.extract(extract);
      }
    }
    // SHARDLENS_BENCH_LOOPS=N: more re-plans, for a profile that is not all extraction.
    const char* loops_env = std::getenv("SHARDLENS_BENCH_LOOPS");
    const int loops = loops_env ? std::max(1, std::atoi(loops_env)) : 30;
    auto t = Clock::now();
    for (int i = 0; i < loops; ++i) {
      if (edit) planner.new_generation();  // as the language server does per version
      planner.plan(edit ? edited[i % 2].model : r.model, options);
    }
    std::printf("re-plan: %.2f ms (mean of %d)\n", ms_since(t) / loops, loops);
    return 0;
  }
  if (only == "scaling" || only.empty()) run_scaling(dir);
  if (only == "dense" || only.empty())
    run("dense 405B-class (126 layers)", dir + "/dense_405b.py", "F.silu(self.w1(x))", "F.gelu(self.w1(x))");
  if (only == "moe" || only.empty())
    run("MoE (61 layers, 256 experts)", dir + "/moe_61.py", "F.silu(self.w1(x))", "F.gelu(self.w1(x))");
  return 0;
}

int main(int argc, char** argv) { return shardlens::bench::run_on_worker_thread(run, argc, argv); }
