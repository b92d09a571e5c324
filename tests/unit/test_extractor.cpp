// Static extraction: root selection, unresolved reporting and spans.
#include <catch2/catch.hpp>

#include "ir/module_path.h"
#include "python/extractor.h"
#include "test_helpers.h"

using namespace shardlens;
using python::ModelExtractor;

namespace {
python::ExtractResult extract(const std::string& text, const std::string& model = "") {
  ModelExtractor e(text, "t.py");
  python::ExtractOptions o;
  o.model_expression = model;
  return e.extract(o);
}
}  // namespace

TEST_CASE("root: --model expression wins") {
  auto r = extract(test::fixture("gpt.py"), "GPT(GPTConfig(n_layer=2, n_embd=64, n_head=4))");
  REQUIRE(r.ok);
  CHECK(r.model.root_expression == "GPT(GPTConfig(n_layer=2, n_embd=64, n_head=4))");
  CHECK(r.model.parameters.size() == 2 + 2 * 12 + 2 + 0);  // wte (tied lm_head), wpe, 2 blocks, ln_f
}

TEST_CASE("root: a --model expression that is not a module is a clear error") {
  auto r = extract(test::fixture("gpt.py"), "GPTConfig()");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("did not evaluate to an nn.Module") != std::string::npos);
  auto bad = extract(test::fixture("gpt.py"), "GPT(");
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find("not a Python expression") != std::string::npos);
}

TEST_CASE("root: an instance inside the __main__ block") {
  auto r = extract(
      "import torch.nn as nn\n"
      "class Net(nn.Module):\n"
      "    def __init__(self, d):\n"
      "        super().__init__()\n"
      "        self.fc = nn.Linear(d, d)\n"
      "if __name__ == '__main__':\n"
      "    net = Net(16)\n"
      "    out = net(None)\n");
  REQUIRE(r.ok);
  CHECK(r.model.root_expression == "net");
  CHECK(r.model.parameters[0].shape == std::vector<int64_t>{16, 16});
}

TEST_CASE("root: the class nobody instantiates with a no-argument constructor") {
  auto r = extract(test::fixture("tinynet.py"));
  REQUIRE(r.ok);
  CHECK(r.model.model == "TinyNet");
  CHECK(r.model.root_expression == "TinyNet()");
}

TEST_CASE("root: no model found lists what was considered and why") {
  auto r = extract(
      "import torch.nn as nn\n"
      "class A(nn.Module):\n"
      "    def __init__(self, d):\n"
      "        super().__init__()\n"
      "        self.b = B(d)\n"
      "class B(nn.Module):\n"
      "    def __init__(self, d):\n"
      "        super().__init__()\n");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("A (its constructor needs arguments)") != std::string::npos);
  CHECK(r.error.find("B (used by another class)") != std::string::npos);
}

TEST_CASE("unresolved: imports from unknown packages are reported with spans, never guessed") {
  auto r = extract(
      "import torch.nn as nn\n"
      "from mylib.layers import FancyAttention\n"
      "class Net(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.attn = FancyAttention(64)\n"
      "        self.fc = nn.Linear(64, 64)\n"
      "model = Net()\n");
  REQUIRE(r.ok);
  REQUIRE(r.model.parameters.size() == 2);
  REQUIRE(r.model.unresolved.size() == 1);
  const auto& u = r.model.unresolved[0];
  CHECK(u.what.find("'attn'") != std::string::npos);
  CHECK(u.reason.find("mylib.layers") != std::string::npos);
  CHECK(u.span.line == 6);
}

TEST_CASE("spans: modules and parameters point at their construction") {
  auto r = extract(test::fixture("mlp.py"));
  REQUIRE(r.ok);
  REQUIRE(r.model.modules.size() == 3);
  CHECK(r.model.modules[1].name == "fc1");
  CHECK(r.model.modules[1].span.line == 10);    // self.fc1 = nn.Linear(...)
  CHECK(r.model.modules[1].span.column == 19);  // where nn.Linear( starts
  CHECK(r.model.parameters[1].name == "fc2.weight");
  CHECK(r.model.parameters[1].span.line == 11);
  CHECK(r.model.modules[0].span.line == 17);    // model = MLP()
}

TEST_CASE("tied weights and shared modules are listed once, under PyTorch's name") {
  auto r = extract(test::fixture("gpt.py"));
  REQUIRE(r.ok);
  bool has_lm_head_weight = false;
  for (auto& p : r.model.parameters) has_lm_head_weight |= p.name == "lm_head.weight";
  CHECK_FALSE(has_lm_head_weight);
  CHECK(r.model.parameters[0].name == "wte.weight");
  CHECK(r.model.parameters[0].shape == std::vector<int64_t>{50304, 2048});
}

TEST_CASE("repeated blocks share a structure hash") {
  auto r = extract(test::fixture("llama.py"));
  REQUIRE(r.ok);
  const ir::Module* layers = nullptr;
  for (auto& m : r.model.modules)
    if (m.name == "layers") layers = &m;
  REQUIRE(layers);
  REQUIRE(layers->children.size() == 32);
  for (int c : layers->children) CHECK(r.model.modules[c].structure_hash == r.model.modules[layers->children[0]].structure_hash);
}

TEST_CASE("forward trace: a slice after an ellipsis keeps the sliced part (rotate_half)") {
  const char* text = R"(
import torch
import torch.nn as nn

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 64)

    def forward(self, x):
        y = self.proj(x)
        a = y[..., : y.shape[-1] // 2]
        b = y[..., y.shape[-1] // 2 :]
        c = y[:, :, :16]
        return torch.cat((-b, a), dim=-1) + c.sum()

model = M()
)";
  python::ModelExtractor extractor(text, "m.py");
  python::ExtractOptions options;
  options.trace_forward = true;
  auto r = extractor.extract(options);
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  REQUIRE(flow.error.empty());
  std::vector<std::vector<int64_t>> splits;
  int reshapes = 0;
  for (auto& op : flow.ops) {
    if (op.kind == ir::OpKind::Split) splits.push_back(op.sizes);
    if (op.kind == ir::OpKind::Reshape) ++reshapes;
  }
  // Each slice is one part of a split of the last dim, with the size it keeps; no reshape needed
  // (a size-1 split and a reshape back to 32 was what the ellipsis used to give).
  REQUIRE(splits.size() == 3);
  CHECK(splits[0] == std::vector<int64_t>{32, 32});
  CHECK(splits[1] == std::vector<int64_t>{32, 32});
  CHECK(splits[2] == std::vector<int64_t>{16, 48});
  CHECK(reshapes == 0);
}

TEST_CASE("ir::split keeps every piece, empty ones included") {
  CHECK(ir::split("bsi,oi", ',') == std::vector<std::string>{"bsi", "oi"});
  CHECK(ir::split("a,,b,", ',') == std::vector<std::string>{"a", "", "b", ""});
  CHECK(ir::split("", '.') == std::vector<std::string>{""});
  CHECK(ir::split_module_path("h.3.attn") == std::vector<std::string>{"h", "3", "attn"});
}
