// libFuzzer target over the Python front end: the input is a model script. It is parsed
// (tree-sitter), lowered, run by the abstract interpreter, its forward() traced, and the model
// planned on a 1x2 mesh; everything is compiled with ASan and UBSan (tests/fuzz/CMakeLists.txt).
// Crashes, sanitizer reports, hangs and memory beyond -rss_limit_mb are findings.
//
// Byte mutations alone keep inputs small and mostly unparsable, so a custom mutator also inserts
// statements drawn from a small grammar of model code (nn.Module classes, layers, configs, loops,
// comprehensions, integer arithmetic at the int64 edges, recursion, growing strings) at a line
// boundary: inputs stay mostly valid Python and grow to tens of KB.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

#include "plan/plan.h"
#include "plan/target.h"
#include "python/extractor.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using Rng = std::mt19937_64;

size_t pick(Rng& rng, size_t n) { return static_cast<size_t>(rng() % n); }

template <size_t N> const char* one_of(Rng& rng, const char* const (&options)[N]) { return options[pick(rng, N)]; }

std::string integer(Rng& rng) {
  static const char* const edges[] = {"0", "1", "-1", "2", "3", "7", "64", "4096", "2**63", "-(2**63)", "2**63 - 1",
                                      "2**64", "10**30", "-(10**24)", "0x7fffffffffffffff", "True", "n", "d", "len(cfg)"};
  if (pick(rng, 3) == 0) return std::to_string(static_cast<int64_t>(rng() % 5000) - 100);
  return edges[pick(rng, std::size(edges))];
}

std::string expr(Rng& rng, int depth) {
  if (depth <= 0) return integer(rng);
  static const char* const ops[] = {"+", "-", "*", "//", "%", "**", "<<", ">>", "&", "|", "^", "/"};
  switch (pick(rng, 10)) {
    case 0: return "(" + expr(rng, depth - 1) + " " + one_of(rng, ops) + " " + expr(rng, depth - 1) + ")";
    case 1: return std::string(one_of(rng, {"max", "min", "divmod", "pow"})) + "(" + expr(rng, depth - 1) + ", " + expr(rng, depth - 1) + ")";
    case 2: return std::string(one_of(rng, {"abs", "int", "float", "str", "len", "range", "math.factorial", "math.isqrt", "-", "~"})) +
                   "(" + expr(rng, depth - 1) + ")";
    case 3: return "[" + expr(rng, depth - 1) + " for i in range(" + expr(rng, depth - 1) + ")]";
    case 4: return "max(range(" + expr(rng, depth - 1) + ", " + expr(rng, depth - 1) + "))";
    case 5: return "cfg.get('" + std::string(one_of(rng, {"dim", "heads", "layers", "x"})) + "', " + expr(rng, depth - 1) + ")";
    case 6: return "f'{" + expr(rng, depth - 1) + "}'";
    case 7: return "'ab' * " + expr(rng, depth - 1);
    default: return integer(rng);
  }
}

std::string statement(Rng& rng, const std::string& indent) {
  static int counter = 0;
  std::string n = std::to_string(++counter % 16);
  switch (pick(rng, 12)) {
    case 0: return indent + "d = " + expr(rng, 2) + "\n";
    case 1: return indent + "cfg = dict(dim=" + expr(rng, 1) + ", heads=" + expr(rng, 1) + ", layers=" + expr(rng, 1) + ")\n";
    case 2: return indent + "for i in range(" + expr(rng, 1) + "):\n" + indent + "    n = n + " + expr(rng, 1) + "\n";
    case 3: return indent + "while n < " + expr(rng, 1) + ":\n" + indent + "    n = n * 2 + 1\n";
    case 4: return indent + "s = 'x'\n" + indent + "for i in range(" + expr(rng, 0) + "):\n" + indent + "    s += s\n";
    case 5: return indent + "try:\n" + indent + "    n = " + expr(rng, 2) + "\n" + indent + "except Exception:\n" + indent + "    n = 1\n";
    case 6:
      return indent + "class Block" + n + "(nn.Module):\n" + indent + "    def __init__(self, d=" + integer(rng) + "):\n" + indent +
             "        super().__init__()\n" + indent + "        self.fc = nn.Linear(d, " + expr(rng, 1) + ")\n" + indent +
             "        self.norm = nn." + one_of(rng, {"LayerNorm", "RMSNorm", "BatchNorm1d", "Embedding"}) + "(" + expr(rng, 1) + ")\n" + indent +
             "        self.blocks = nn.ModuleList([nn.Linear(d, d) for _ in range(" + expr(rng, 1) + ")])\n" + indent +
             "    def forward(self, x):\n" + indent + "        x = self.fc(x)\n" + indent + "        return x " + one_of(rng, {"+", "*", "//", "-"}) +
             " " + expr(rng, 1) + "\n";
    case 7: return indent + "model = Block" + n + "(" + expr(rng, 1) + ")\n";
    case 8:
      return indent + "class Rec" + n + "(nn.Module):\n" + indent + "    def __init__(self, k=" + expr(rng, 0) + "):\n" + indent +
             "        super().__init__()\n" + indent + "        self.w = nn.Parameter(torch.zeros(" + expr(rng, 1) + ", " + expr(rng, 1) + "))\n" +
             indent + "        self.child = Rec" + n + "(k - 1) if k " + one_of(rng, {">", "!=", "<"}) + " 0 else None\n";
    case 9: return indent + "a = [" + expr(rng, 1) + "] * " + expr(rng, 1) + "\n";
    case 10: return indent + "t = torch." + one_of(rng, {"arange", "zeros", "ones", "randn"}) + "(" + expr(rng, 1) + ")\n";
    default: return indent + "n = " + expr(rng, 3) + "\n";
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  Rng rng(seed);
  if (pick(rng, 3) == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::string text(reinterpret_cast<char*>(data), size);
  // Insert at a line start; indent like the line before, so the snippet lands in a class body too.
  size_t at = size == 0 ? 0 : pick(rng, size + 1);
  while (at > 0 && text[at - 1] != '\n') --at;
  std::string indent;
  if (at > 0) {
    size_t prev = text.rfind('\n', at >= 2 ? at - 2 : 0);
    prev = prev == std::string::npos || at < 2 ? 0 : prev + 1;
    while (prev < at && (text[prev] == ' ' || text[prev] == '\t')) indent += text[prev++];
  }
  std::string snippet;
  if (size == 0 || pick(rng, 8) == 0) snippet = "import math\nimport torch\nimport torch.nn as nn\nn = 1\nd = 8\ncfg = {}\n";
  for (size_t k = 1 + pick(rng, 4); k > 0; --k) snippet += statement(rng, indent);
  text.insert(at, snippet);
  if (text.size() > max_size) text.resize(max_size);
  std::copy(text.begin(), text.end(), data);
  return text.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardlens::python::ModelExtractor extractor(std::string(reinterpret_cast<const char*>(data), size), "fuzz.py");
  shardlens::python::ExtractOptions options;
  options.trace_forward = true;
  options.memory_budget_mib = 64;   // the fuzzer's -rss_limit_mb bounds the rest
  options.step_budget = 200'000;    // executions per second matter more than depth here
  auto result = extractor.extract(options);
  if (!result.ok) return 0;
  shardlens::plan::PlanOptions plan;
  std::string error;
  plan.meshes.push_back(*shardlens::plan::parse_mesh("1x2", error));
  shardlens::plan::plan_model(result.model, plan);
  return 0;
}
