// Parse + extract time for a ~5,000-line model file: cold, and after a one-line edit (the
// language server's hot path), plus peak memory. Prints figures; asserts nothing.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "worker_thread.h"
#include "python/extractor.h"

using namespace shardlens;
using Clock = std::chrono::steady_clock;

namespace {

// A realistic large model file: many model families' blocks (HF-style config class, attention,
// MLP and norm variants, helper functions), one root model using a few of them.
std::string make_model_file(int families) {
  std::string s =
      "import math\nfrom dataclasses import dataclass\nimport torch\nimport torch.nn as nn\n"
      "import torch.nn.functional as F\n\n";
  for (int i = 0; i < families; ++i) {
    std::string n = std::to_string(i);
    s += "@dataclass\nclass Config" + n + ":\n    dim: int = " + std::to_string(256 + 64 * (i % 8)) +
         "\n    n_heads: int = 8\n    n_layers: int = 4\n    mult: int = 4\n    eps: float = 1e-5\n"
         "    bias: bool = False\n    dropout: float = 0.0\n\n\n";
    s += "def ffn_dim" + n + "(cfg):\n    hidden = int(2 * cfg.mult * cfg.dim / 3)\n"
         "    return 64 * ((hidden + 63) // 64)\n\n\n";
    s += "class Norm" + n + "(nn.Module):\n    def __init__(self, dim, eps=1e-6):\n        super().__init__()\n"
         "        self.eps = eps\n        self.weight = nn.Parameter(torch.ones(dim))\n\n"
         "    def forward(self, x):\n        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)\n"
         "        return x * self.weight\n\n\n";
    s += "class Attention" + n + "(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n"
         "        assert cfg.dim % cfg.n_heads == 0\n        self.n_heads = cfg.n_heads\n"
         "        self.head_dim = cfg.dim // cfg.n_heads\n"
         "        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim, bias=cfg.bias)\n"
         "        self.proj = nn.Linear(cfg.dim, cfg.dim, bias=cfg.bias)\n"
         "        self.drop = nn.Dropout(cfg.dropout)\n\n"
         "    def forward(self, x):\n        B, T, C = x.shape\n"
         "        q, k, v = self.qkv(x).split(C, dim=2)\n"
         "        q = q.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)\n"
         "        k = k.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)\n"
         "        v = v.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)\n"
         "        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
         "        y = y.transpose(1, 2).contiguous().view(B, T, C)\n"
         "        return self.drop(self.proj(y))\n\n\n";
    s += "class MLP" + n + "(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n"
         "        hidden = ffn_dim" + n + "(cfg)\n"
         "        self.w1 = nn.Linear(cfg.dim, hidden, bias=False)\n"
         "        self.w2 = nn.Linear(hidden, cfg.dim, bias=False)\n"
         "        self.w3 = nn.Linear(cfg.dim, hidden, bias=False)\n\n"
         "    def forward(self, x):\n        return self.w2(F.silu(self.w1(x)) * self.w3(x))\n\n\n";
    s += "class Block" + n + "(nn.Module):\n    def __init__(self, cfg, layer_id):\n        super().__init__()\n"
         "        self.layer_id = layer_id\n        self.attn_norm = Norm" + n + "(cfg.dim, eps=cfg.eps)\n"
         "        self.attn = Attention" + n + "(cfg)\n        self.mlp_norm = Norm" + n + "(cfg.dim, eps=cfg.eps)\n"
         "        self.mlp = MLP" + n + "(cfg)\n\n"
         "    def forward(self, x):\n        x = x + self.attn(self.attn_norm(x))\n"
         "        return x + self.mlp(self.mlp_norm(x))\n\n\n";
  }
  s += "class Model(nn.Module):\n    def __init__(self, vocab=32000):\n        super().__init__()\n"
       "        cfg = Config0(dim=1024, n_layers=24)\n"
       "        self.embed = nn.Embedding(vocab, cfg.dim)\n"
       "        self.layers = nn.ModuleList([Block0(cfg, i) for i in range(cfg.n_layers)])\n"
       "        self.norm = Norm0(cfg.dim)\n        self.head = nn.Linear(cfg.dim, vocab, bias=False)\n\n"
       "    def forward(self, tokens):\n        h = self.embed(tokens)\n        for layer in self.layers:\n"
       "            h = layer(h)\n        return self.head(self.norm(h))\n\n\nmodel = Model()\n";
  return s;
}

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

static int run(int, char**) {
  std::string text = make_model_file(62);
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  const int runs = 15;

  std::vector<double> cold, parse_only, cold_one_thread, cold_lower, cold_execute, cold_trace, cold_ir;
  size_t parameters = 0, pieces = 0;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    python::SourceDocument doc(text);
    parse_only.push_back(ms_since(t0));
    pieces = doc.piece_count();
    auto t1 = Clock::now();
    python::ModelExtractor extractor(text, "bench.py");
    auto r = extractor.extract();
    cold.push_back(ms_since(t1));
    cold_lower.push_back(r.stats.lower_ms);
    cold_execute.push_back(r.stats.execute_ms);
    cold_trace.push_back(r.stats.trace_ms);
    cold_ir.push_back(r.stats.ir_ms);
    parameters = r.model.parameters.size();
    auto t2 = Clock::now();
    python::ModelExtractor one_thread(text, "bench.py", python::ParsePieces{1, 0});
    one_thread.extract();
    cold_one_thread.push_back(ms_since(t2));
  }

  // One-line edits inside a class the root uses (its MLP), alternating two values.
  python::ModelExtractor extractor(text, "bench.py");
  extractor.extract();
  size_t at = text.find("        hidden = ffn_dim0(cfg)\n");
  uint32_t row = static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  std::vector<double> edit, reparse, lower, execute, ir;
  size_t lowered = 0;
  for (int i = 0; i < runs * 4; ++i) {
    std::string line = i % 2 ? "        hidden = ffn_dim0(cfg)" : "        hidden = ffn_dim0(cfg) + 64";
    auto t0 = Clock::now();
    extractor.apply_edit({{row, 0}, {row, 1000}, line});
    reparse.push_back(ms_since(t0));
    auto r = extractor.extract();
    edit.push_back(ms_since(t0));
    lower.push_back(r.stats.lower_ms);
    execute.push_back(r.stats.execute_ms);
    ir.push_back(r.stats.ir_ms);
    lowered = r.stats.units_lowered;
  }

  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("model file: %d lines, %zu bytes, root has %zu parameter tensors\n", lines, text.size(), parameters);
  std::printf("tree-sitter parse alone (cold):   %7.2f ms median of %d   (%zu pieces, one thread each)\n",
              median(parse_only), runs, pieces);
  std::printf("parse + extract, cold:            %7.2f ms median of %d   (target < 20 ms: %.2fx of budget)\n",
              median(cold), runs, median(cold) / 20.0);
  std::printf("  after the parse (which lowers the statements on its threads): statements %.2f ms, execution %.2f ms, forward trace %.2f ms, IR %.2f ms\n",
              median(cold_lower), median(cold_execute), median(cold_trace), median(cold_ir));
  std::printf("  the same on one thread:         %7.2f ms median of %d   (pieces speed-up %.2fx)\n",
              median(cold_one_thread), runs, median(cold_one_thread) / median(cold));
  std::printf("one-line edit + re-extract:       %7.2f ms median of %d   (target < 2 ms: %.2fx of budget; %zu statement re-lowered)\n",
              median(edit), runs * 4, median(edit) / 2.0, lowered);
  std::printf("  of which: incremental re-parse %.2f ms, statements %.2f ms, execution %.2f ms, IR %.2f ms\n",
              median(reparse), median(lower), median(execute), median(ir));
  std::printf("edit speed-up over cold:          %7.1fx\n", median(cold) / median(edit));
  std::printf("peak memory (max RSS):            %7.1f MiB\n", static_cast<double>(usage.ru_maxrss) / 1024.0);
  return 0;
}

int main(int argc, char** argv) { return shardlens::bench::run_on_worker_thread(run, argc, argv); }
