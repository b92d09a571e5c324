// The tracer's memo of module calls: a replayed call must leave exactly the dataflow that executing
// it leaves. Every script is traced with replays and without, and the two dataflows compared in
// full; directed scripts cover what a replay must not hide (per-layer attributes, state changed in
// forward(), in-place ops, aliasing, shared and tied modules).
#include <string>

#include <catch2/catch.hpp>

#include "python/extractor.h"
#include "test_helpers.h"

using namespace shardlens;

namespace {

struct Traced {
  std::string dataflow;
  size_t replayed = 0;
  size_t ops = 0;
};

Traced trace(const std::string& text, bool replay, const std::string& model = "") {
  python::ModelExtractor extractor(text, "model.py");
  python::ExtractOptions options;
  options.trace_forward = true;
  options.replay_identical_calls = replay;
  options.model_expression = model;
  auto r = extractor.extract(options);
  return {test::dump(r.model.dataflow), r.stats.calls_replayed, r.model.dataflow.ops.size()};
}

// Traces with and without replays; they must agree. Returns how many calls were replayed.
size_t same_with_replays(const std::string& text, const std::string& model = "") {
  Traced executed = trace(text, false, model), replayed = trace(text, true, model);
  CHECK(executed.replayed == 0);
  REQUIRE(replayed.dataflow == executed.dataflow);
  return replayed.replayed;
}

const char* kHeader =
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
    "class MLP(nn.Module):\n"
    "    def __init__(self, d):\n"
    "        super().__init__()\n"
    "        self.up = nn.Linear(d, 4 * d)\n"
    "        self.down = nn.Linear(4 * d, d)\n"
    "    def forward(self, x):\n"
    "        return self.down(F.gelu(self.up(x)))\n\n";

// A model of `n` Blocks(d=16) whose forward() is `forward` (indented as a method body).
std::string stack_of(int n, const std::string& forward) {
  return "class Model(nn.Module):\n"
         "    def __init__(self, d=16):\n"
         "        super().__init__()\n"
         "        self.blocks = nn.ModuleList([Block(d) for _ in range(" + std::to_string(n) + ")])\n"
         "    def forward(self, x):\n" + forward + "\nmodel = Model()\n";
}

}  // namespace

TEST_CASE("replayed module calls leave the dataflow that executing them leaves, on every model script") {
  size_t scripts = 0, with_replays = 0, replayed = 0;
  for (auto& path : test::swept_model_scripts()) {
    INFO(path.string());
    size_t n = same_with_replays(test::read_text(path.string()));
    ++scripts;
    with_replays += n > 0;
    replayed += n;
  }
  // Many scripts only build modules (no forward) or have one block; those with repeated blocks
  // must actually use the memo.
  CHECK(scripts >= 100 / test::kScriptStride);
  CHECK(with_replays >= 15 / test::kScriptStride);
  CHECK(replayed >= 500 / test::kScriptStride);
}

TEST_CASE("identical blocks are traced once and replayed") {
  std::string text = std::string(kHeader) +
                     "class Block(nn.Module):\n"
                     "    def __init__(self, d):\n"
                     "        super().__init__()\n"
                     "        self.norm = nn.LayerNorm(d)\n"
                     "        self.mlp = MLP(d)\n"
                     "    def forward(self, x):\n"
                     "        return x + self.mlp(self.norm(x))\n\n"
                     "class Model(nn.Module):\n"
                     "    def __init__(self, d=64, n=8):\n"
                     "        super().__init__()\n"
                     "        self.embed = nn.Embedding(100, d)\n"
                     "        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])\n"
                     "    def forward(self, idx):\n"
                     "        x = self.embed(idx)\n"
                     "        for b in self.blocks:\n"
                     "            x = b(x)\n"
                     "        return x\n\nmodel = Model()\n";
  // Two traces: input discovery, which ends once the embedding tells what `idx` is, then the real
  // one, which keeps the second block's run and replays blocks 3..8 (their MLPs with them).
  CHECK(same_with_replays(text) == 6);
  Traced t = trace(text, true);
  CHECK(t.ops > 8 * 6);
}

TEST_CASE("a per-layer attribute the forward reads keeps replays to the layers that agree") {
  std::string text = std::string(kHeader) +
                     "class Block(nn.Module):\n"
                     "    def __init__(self, d, i):\n"
                     "        super().__init__()\n"
                     "        self.layer_idx = i\n"
                     "        self.window = 4 if i % 2 else None\n"
                     "        self.mlp = MLP(d)\n"
                     "    def forward(self, x):\n"
                     "        if self.layer_idx % 2 == 1:\n"
                     "            x = x * 2\n"
                     "        return x + self.mlp(x)\n\n"
                     "class Model(nn.Module):\n"
                     "    def __init__(self, d=32, n=6):\n"
                     "        super().__init__()\n"
                     "        self.blocks = nn.ModuleList([Block(d, i) for i in range(n)])\n"
                     "    def forward(self, x):\n"
                     "        for b in self.blocks:\n"
                     "            x = b(x)\n"
                     "        return x\n\nmodel = Model()\n";
  // The layer index differs in every block, so no block replays another; their MLPs do (in the
  // second trace, blocks 3..6: the second run is the one kept).
  CHECK(same_with_replays(text) == 4);
}

TEST_CASE("calls that change state outside themselves are executed every time") {
  SECTION("a list passed in and appended to") {
    std::string text = std::string(kHeader) +
                       "class Block(nn.Module):\n"
                       "    def __init__(self, d):\n"
                       "        super().__init__()\n"
                       "        self.mlp = MLP(d)\n"
                       "    def forward(self, x, seen):\n"
                       "        seen.append(x)\n"
                       "        if len(seen) > 2:\n"
                       "            x = x * 3\n"
                       "        return self.mlp(x)\n\n" +
                       stack_of(4,
                       "        seen = []\n"
                       "        for b in self.blocks:\n"
                       "            x = b(x, seen)\n"
                       "        return x\n");
    same_with_replays(text);
  }
  SECTION("a cache object updated per layer") {
    std::string text = std::string(kHeader) +
                       "class Cache:\n"
                       "    def __init__(self):\n"
                       "        self.keys = {}\n"
                       "    def update(self, i, k):\n"
                       "        if i in self.keys:\n"
                       "            k = torch.cat([self.keys[i], k], dim=1)\n"
                       "        self.keys[i] = k\n"
                       "        return k\n\n"
                       "class Block(nn.Module):\n"
                       "    def __init__(self, d, i):\n"
                       "        super().__init__()\n"
                       "        self.i = i % 2\n"
                       "        self.k = nn.Linear(d, d)\n"
                       "    def forward(self, x, cache):\n"
                       "        k = cache.update(self.i, self.k(x))\n"
                       "        return x + k.sum(dim=1, keepdim=True)\n\n"
                       "class Model(nn.Module):\n"
                       "    def __init__(self, d=16):\n"
                       "        super().__init__()\n"
                       "        self.blocks = nn.ModuleList([Block(d, i) for i in range(4)])\n"
                       "    def forward(self, x):\n"
                       "        cache = Cache()\n"
                       "        for b in self.blocks:\n"
                       "            x = b(x, cache)\n"
                       "        return x\n\nmodel = Model()\n";
    same_with_replays(text);
  }
  SECTION("a global counter") {
    std::string text = std::string(kHeader) +
                       "CALLS = 0\n\n"
                       "class Block(nn.Module):\n"
                       "    def __init__(self, d):\n"
                       "        super().__init__()\n"
                       "        self.mlp = MLP(d)\n"
                       "    def forward(self, x):\n"
                       "        global CALLS\n"
                       "        CALLS += 1\n"
                       "        if CALLS > 2:\n"
                       "            x = x * 3\n"
                       "        return self.mlp(x)\n\n" +
                       stack_of(4,
                       "        for b in self.blocks:\n"
                       "            x = b(x)\n"
                       "        return x\n");
    same_with_replays(text);
  }
  SECTION("a shared config changed between the layers' calls") {
    std::string text = std::string(kHeader) +
                       "class Cfg:\n"
                       "    scale = 0\n\n"
                       "class Block(nn.Module):\n"
                       "    def __init__(self, d, cfg):\n"
                       "        super().__init__()\n"
                       "        self.cfg = cfg\n"
                       "        self.mlp = MLP(d)\n"
                       "    def forward(self, x):\n"
                       "        for _ in range(self.cfg.scale):\n"
                       "            x = x * 2\n"
                       "        return self.mlp(x)\n\n"
                       "class Model(nn.Module):\n"
                       "    def __init__(self, d=16):\n"
                       "        super().__init__()\n"
                       "        self.cfg = Cfg()\n"
                       "        self.blocks = nn.ModuleList([Block(d, self.cfg) for _ in range(4)])\n"
                       "    def forward(self, x):\n"
                       "        for i, b in enumerate(self.blocks):\n"
                       "            self.cfg.scale = i // 2\n"
                       "            x = b(x)\n"
                       "        return x\n\nmodel = Model()\n";
    same_with_replays(text);
  }
  SECTION("a closure over the caller's loop variable") {
    std::string text = std::string(kHeader) +
                       "class Block(nn.Module):\n"
                       "    def __init__(self, d):\n"
                       "        super().__init__()\n"
                       "        self.mlp = MLP(d)\n"
                       "    def forward(self, x, f):\n"
                       "        return f(self.mlp(x))\n\n" +
                       stack_of(6,
                       "        reps = 0\n"
                       "        def f(y):\n"
                       "            for _ in range(reps):\n"
                       "                y = y * 2\n"
                       "            return y\n"
                       "        for i, b in enumerate(self.blocks):\n"
                       "            reps = i // 2\n"
                       "            x = b(x, f)\n"
                       "        return x\n");
    same_with_replays(text);
  }
  SECTION("an input changed in place") {
    std::string text = std::string(kHeader) +
                       "class Block(nn.Module):\n"
                       "    def __init__(self, d):\n"
                       "        super().__init__()\n"
                       "        self.mlp = MLP(d)\n"
                       "    def forward(self, x):\n"
                       "        y = self.mlp(x)\n"
                       "        x.add_(1)\n"
                       "        return y\n\n" +
                       stack_of(4,
                       "        h = x\n"
                       "        for b in self.blocks:\n"
                       "            h = h + b(x)\n"
                       "        return h\n");
    same_with_replays(text);
  }
}

TEST_CASE("replays keep what a call returns: its inputs, the same tensor twice, containers") {
  std::string text = std::string(kHeader) +
                     "class Block(nn.Module):\n"
                     "    def __init__(self, d):\n"
                     "        super().__init__()\n"
                     "        self.mlp = MLP(d)\n"
                     "    def forward(self, x, extra=None):\n"
                     "        y = self.mlp(x)\n"
                     "        return x, (y, y), {'out': y, 'n': 3}\n\n" +
                     stack_of(4,
                     "        for b in self.blocks:\n"
                     "            x0, (y1, y2), d = b(x)\n"
                     "            x = x0 + y1 * y2 + d['out'] * d['n']\n"
                     "        return x\n");
  CHECK(same_with_replays(text) > 0);
}

TEST_CASE("replays map shared modules and tied weights to the same tensors an execution uses") {
  std::string text = std::string(kHeader) +
                     "class Block(nn.Module):\n"
                     "    def __init__(self, d, shared, embed):\n"
                     "        super().__init__()\n"
                     "        self.shared = shared\n"
                     "        self.own = nn.Linear(d, d)\n"
                     "        self.embed = [embed]\n"
                     "    def forward(self, x):\n"
                     "        return self.own(self.shared(x)) + x @ self.embed[0].weight.t() @ self.embed[0].weight\n\n"
                     "class Model(nn.Module):\n"
                     "    def __init__(self, d=16):\n"
                     "        super().__init__()\n"
                     "        self.embed = nn.Embedding(50, d)\n"
                     "        shared = nn.Linear(d, d)\n"
                     "        self.blocks = nn.ModuleList([Block(d, shared, self.embed) for _ in range(4)])\n"
                     "        self.head = nn.Linear(d, 50, bias=False)\n"
                     "        self.head.weight = self.embed.weight\n"
                     "    def forward(self, idx):\n"
                     "        x = self.embed(idx)\n"
                     "        for b in self.blocks:\n"
                     "            x = b(x)\n"
                     "        return self.head(x)\n\nmodel = Model()\n";
  same_with_replays(text);
}
