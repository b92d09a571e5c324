// Bad input gets a clear result and loses nothing: no crash, no hang, what parses is analysed.
#include <catch2/catch.hpp>

#include <random>

#include "python/extractor.h"
#include "test_helpers.h"

using namespace shardlens;
using python::ModelExtractor;

namespace {
bool mentions(const ir::ModelIR& m, const std::string& what) {
  for (auto& u : m.unresolved)
    if (u.what.find(what) != std::string::npos || u.reason.find(what) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("an empty file has no model and says why") {
  ModelExtractor e("", "empty.py");
  auto r = e.extract();
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("no model found") != std::string::npos);
  CHECK(r.error.find("defines no nn.Module class") != std::string::npos);
}

TEST_CASE("binary garbage does not crash the front end") {
  std::mt19937 rng(42);
  for (int round = 0; round < 50; ++round) {
    std::string junk(static_cast<size_t>(rng() % 4096), '\0');
    for (auto& c : junk) c = static_cast<char>(rng() & 0xFF);
    ModelExtractor e(junk, "junk.py");
    auto r = e.extract();
    CHECK_FALSE(r.ok);
  }
}

TEST_CASE("a syntax error in the middle of a class keeps the rest of the model") {
  std::string text = test::fixture("gpt.py");
  // Break the attention's forward: the constructor still builds every layer.
  size_t at = text.find("        B, T, C = x.size()");
  REQUIRE(at != std::string::npos);
  text.insert(at, "        y = (1 +\n");
  ModelExtractor e(text, "gpt.py");
  auto r = e.extract();
  REQUIRE(r.ok);
  CHECK(r.model.parameters.size() == 292);
  CHECK(mentions(r.model, "syntax error"));
}

TEST_CASE("a syntax error inside a constructor is reported at its line; the rest is still built") {
  std::string text = test::fixture("gpt.py");
  size_t at = text.find("        self.down = nn.Linear(");
  REQUIRE(at != std::string::npos);
  text.insert(at, "        self.broken = nn.Linear(cfg.n_embd,, 3)\n");
  ModelExtractor e(text, "gpt.py");
  auto r = e.extract();
  REQUIRE(r.ok);
  bool reported = false;
  for (auto& u : r.model.unresolved)
    if (u.span.line == 45 || u.span.line == 44) reported = true;
  CHECK(reported);
  // The well-formed layers around it are all there.
  bool has_up = false, has_down = false;
  for (auto& p : r.model.parameters) {
    has_up |= p.name == "h.0.mlp.up.weight";
    has_down |= p.name == "h.0.mlp.down.weight";
  }
  CHECK(has_up);
  CHECK(has_down);
}

TEST_CASE("a half-typed file still yields what parses") {
  std::string text =
      "import torch.nn as nn\n"
      "class Net(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.a = nn.Linear(4, 8)\n"
      "        self.b = nn.Linear(8, \n";
  ModelExtractor e(text, "half.py");
  auto r = e.extract();
  REQUIRE(r.ok);
  REQUIRE_FALSE(r.model.parameters.empty());
  CHECK(r.model.parameters[0].name == "a.weight");
  CHECK(mentions(r.model, "syntax error"));
}

TEST_CASE("a 50,000-line file is analysed") {
  std::string text = "import torch.nn as nn\n";
  for (int i = 0; i < 5000; ++i) {
    text += "class Layer" + std::to_string(i) + "(nn.Module):\n"
            "    def __init__(self, d=" + std::to_string(i % 7 + 1) + "):\n"
            "        super().__init__()\n"
            "        self.fc = nn.Linear(d, d)\n"
            "        self.norm = nn.LayerNorm(d)\n"
            "    def forward(self, x):\n"
            "        y = self.fc(x)\n"
            "        return self.norm(y)\n"
            "\n";
  }
  text += "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n";
  text += "        self.layers = nn.ModuleList([Layer0(), Layer1(), Layer4999()])\n";
  text += "model = Model()\n";
  REQUIRE(std::count(text.begin(), text.end(), '\n') > 45000);
  ModelExtractor e(text, "big.py");
  auto r = e.extract();
  REQUIRE(r.ok);
  CHECK(r.model.model == "Model");
  CHECK(r.model.parameters.size() == 12);
}

TEST_CASE("deeply nested expressions and blocks are reported, not a stack overflow") {
  for (int depth : {100, 1000, 20000}) {
    std::string parens(static_cast<size_t>(depth), '(');
    std::string closing(static_cast<size_t>(depth), ')');
    std::string lists(static_cast<size_t>(depth), '[');
    std::string lists_close(static_cast<size_t>(depth), ']');
    std::string calls;
    for (int i = 0; i < depth; ++i) calls += "f(";
    std::string text = "x = " + parens + "1" + closing + "\n" + "y = " + lists + lists_close + "\n" +
                       "def f(v):\n    return v\n" + "z = " + calls + "1" + std::string(static_cast<size_t>(depth), ')') + "\n";
    std::string blocks;
    for (int i = 0; i < std::min(depth, 2000); ++i) blocks += std::string(static_cast<size_t>(i), ' ') + "if True:\n";
    text += blocks + std::string(static_cast<size_t>(std::min(depth, 2000)), ' ') + "pass\n";
    text += "import torch.nn as nn\nmodel = nn.Linear(2, 3)\n";
    ModelExtractor e(text, "deep.py");
    auto r = e.extract();
    REQUIRE(r.ok);
    CHECK(r.model.parameters.size() == 2);
    // Past the analyser's depth limit (or tree-sitter's own), the statement is reported.
    if (depth > 1000) CHECK((mentions(r.model, "too deeply") || mentions(r.model, "syntax error")));
  }
}

TEST_CASE("runaway code stops: infinite recursion, endless loops, a huge range") {
  std::string text =
      "import torch.nn as nn\n"
      "def loop():\n"
      "    return loop()\n"
      "class Net(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        try:\n"
      "            self.n = loop()\n"  // RecursionError, as in Python
      "        except RecursionError:\n"
      "            self.n = None\n"
      "        i = 0\n"
      "        while True:\n"
      "            i += 1\n"
      "        for j in range(10 ** 12):\n"
      "            pass\n"
      "        self.fc = nn.Linear(2, 2)\n"
      "model = Net()\n"
      "while True:\n"
      "    pass\n";
  ModelExtractor e(text, "loop.py");
  auto r = e.extract();
  REQUIRE(r.ok);
  CHECK(r.model.parameters.size() == 2);
  CHECK(mentions(r.model, "while-loop stopped"));
  CHECK(mentions(r.model, "beyond the iteration limit"));
}

TEST_CASE("a class that builds itself recursively is a RecursionError, not a deep model") {
  std::string text =
      "import torch.nn as nn\n"
      "class Block(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.fc = nn.Linear(2, 2)\n"
      "        self.inner = Block()\n"
      "class Net(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.head = nn.Linear(2, 2)\n"
      "        try:\n"
      "            self.body = Block()\n"
      "        except RecursionError:\n"
      "            self.caught = True\n"
      "model = Block()\n"
      "net = Net()\n";
  ModelExtractor e(text, "recursive.py");
  python::ExtractOptions options;
  options.model_expression = "net";
  auto r = e.extract(options);
  REQUIRE(r.ok);
  CHECK(r.model.parameters.size() == 2);  // Net's head: the recursive body raised and was caught
  CHECK(mentions(r.model, "RecursionError"));  // `model = Block()` raised it at module level
}

TEST_CASE("tiny scripts that grow strings or lists without end stop at the memory budget") {
  for (std::string grow : {"s = 'ab'\nwhile True:\n    s += s\n",                      // doubling string
                           "a = [0]\nwhile True:\n    a.append(a[:])\n",                // quadratic copies
                           "a = [0]\nwhile True:\n    a += a\n",                        // doubling list
                           "s = 'x' * (10 ** 12)\n",                                    // one huge value
                           "a = [0] * (10 ** 10)\n",
                           "d = {}\nfor i in range(10 ** 6):\n    d[str(i) * 100] = i\n"}) {
    ModelExtractor e("import torch.nn as nn\nmodel = nn.Linear(2, 2)\n" + grow, "grow.py");
    python::ExtractOptions options;
    options.memory_budget_mib = 32;
    auto r = e.extract(options);
    INFO(grow);
    REQUIRE(r.ok);
    CHECK(r.model.parameters.size() == 2);
    CHECK(mentions(r.model, "memory budget of 32 MiB"));
  }
}

// Found by the front-end fuzzer (tests/fuzz/fuzz_frontend.cpp): a layer's __init__ called unbound on
// what is not a module instance dereferenced a null module (a segfault in the CLI and the server).
TEST_CASE("a layer's __init__ called on what is not a module is a TypeError, not a crash") {
  std::string text =
      "import torch.nn as nn\n"
      "caught = 0\n"
      "for init in (nn.Linear.__init__, nn.Embedding.__init__, nn.LayerNorm.__init__, nn.Conv2d.__init__, nn.ModuleList.__init__):\n"
      "    try:\n"
      "        init(3, 4, 5, 3)\n"
      "    except TypeError:\n"
      "        caught += 1\n"
      "class Mixin:\n"
      "    pass\n"
      "class Net(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.fc = nn.Linear(2, caught)\n"
      "        nn.Embedding.__init__(Mixin(), 10, 4)\n"  // an instance that is not a module: fine, as in Python
      "model = Net()\n"
      "nn.Embedding.__init__(3, 4, 5)\n";  // uncaught at module level
  ModelExtractor e(text, "unbound_init.py");
  auto r = e.extract({});
  REQUIRE(r.ok);
  REQUIRE(r.model.parameters.size() == 2);
  CHECK(r.model.parameters[0].shape == std::vector<int64_t>{5, 2});  // all five raised TypeError
  CHECK(mentions(r.model, "TypeError"));
}

// Found by the front-end fuzzer: with a few bytes already charged, 'ab' * (2**63 - 1) asked for
// 2**64 - 2 bytes, the budget check's sum wrapped, and the reserve threw std::length_error (abort).
TEST_CASE("a repetition near 2**64 bytes stops at the memory budget, however much was charged before") {
  for (std::string grow : {"t = 'ab' * (2**63 - 1)\n", "t = (2**63 - 1) * 'abcd'\n", "t = [0, 1] * (2**62)\n", "t = 'a' * (2**63 - 1)\n"}) {
    ModelExtractor e("import torch.nn as nn\ns = 'x' * 10\nmodel = nn.Linear(2, 2)\n" + grow, "repeat.py");
    auto r = e.extract({});
    INFO(grow);
    REQUIRE(r.ok);
    CHECK(r.model.parameters.size() == 2);
    CHECK(mentions(r.model, "memory budget"));
  }
}

// Found by the front-end fuzzer: torch.arange(-(10**24)) turned ceil((end - start) / step) into an
// int64 unchecked (UBSan: -1e24 is outside its range). PyTorch rejects these ranges; so do we.
TEST_CASE("torch.arange over a range no int64 count holds is a RuntimeError, as in PyTorch") {
  for (std::string bad : {"a = torch.arange(-(10**24))\n", "a = torch.arange(10**24)\n", "a = torch.arange(0, float('inf'))\n",
                          "a = torch.arange(5, 0)\n"}) {
    ModelExtractor e("import torch\nimport torch.nn as nn\nmodel = nn.Linear(2, 2)\n" + bad, "arange.py");
    auto r = e.extract({});
    INFO(bad);
    REQUIRE(r.ok);
    CHECK(r.model.parameters.size() == 2);
    CHECK(mentions(r.model, "RuntimeError"));
  }
  ModelExtractor fine("import torch\nimport torch.nn as nn\nn = torch.arange(0, 10, 3).shape[0]\nmodel = nn.Linear(n, 2)\n", "arange.py");
  auto r = fine.extract({});
  REQUIRE(r.ok);
  REQUIRE(r.model.parameters.size() == 2);
  CHECK(r.model.parameters[0].shape == std::vector<int64_t>{2, 4});  // 0, 3, 6, 9
}
