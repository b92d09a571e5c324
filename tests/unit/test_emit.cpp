// The annotation emitters: tt-xla blocks, load_shard_spec blocks, and where they go in a script.
// Running the emitted code under PyTorch is tests/emit/test_emit_exec.py.
#include <catch2/catch.hpp>

#include <tree_sitter/api.h>

#include <string>
#include <vector>

#include "emit/frameworks.h"
#include "emit/insertion.h"
#include "emit/mark_loops.h"
#include "emit/python_code.h"
#include "emit/tt_xla.h"
#include "plan_helpers.h"
#include "test_helpers.h"

using namespace shardlens;
using namespace shardlens::test;

namespace {

bool parses(const std::string& text) {
  return !python::SourceDocument(text).has_error();
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

size_t sharded(const plan::MeshPlan& mp) {
  size_t n = 0;
  for (const plan::ParameterLayout p : mp.parameters)
    if (auto s = p.spec())
      for (auto& axes : *s)
        if (!axes.empty()) {
          ++n;
          break;
        }
  return n;
}

emit::EmitOptions instance(const std::string& expr = "model") {
  emit::EmitOptions o;
  o.model_expression = expr;
  return o;
}

std::string with_block(const std::string& text, const std::string& block, emit::BlockKind kind,
                       const std::string& anchor) {
  auto edit = emit::plan_insertion(text, block, kind, anchor);
  REQUIRE(edit.ok);
  return emit::apply_insertion(text, edit);
}

// Every parameter of the model sharded on dim 0 over "model": exercises every access path.
struct AllSharded {
  std::vector<std::string> axes{"model"};
  plan::MeshPlan plan;
  explicit AllSharded(const ir::ModelIR& model) {
    plan.mesh = mesh("1x8");
    for (auto& p : model.parameters) {
      plan::ParameterLayout l;
      l.name = p.name;
      l.layout = "column";
      l.rank = static_cast<int>(p.shape.size());
      l.sharded_dim = 0;
      l.axes = &axes;
      plan.parameters.push_back(l);
    }
  }
};

ir::ModelIR extract(const std::string& text) {
  python::ModelExtractor extractor(text, "model.py");
  auto r = extractor.extract();
  REQUIRE(r.ok);
  return std::move(r.model);
}

const char* kOddNames = R"(from collections import OrderedDict
import torch
import torch.nn as nn


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(64, 256)


class Odd(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"attn-1": nn.Linear(64, 64), "class": nn.Linear(64, 128)})
        self.experts = nn.ModuleDict({"e0": Expert(), "e1": Expert()})
        self.seq = nn.Sequential(OrderedDict([("first", nn.Linear(64, 64)), ("2", nn.Linear(64, 32))]))
        self.stack = nn.Sequential(nn.LayerNorm(64), Expert(), Expert(), Expert())
        setattr(self, "lambda", nn.Linear(64, 64))
        self.add_module("my layer", nn.Linear(64, 64))
        self.add_module("café", nn.Linear(64, 64))
        self.plist = nn.ParameterList([nn.Parameter(torch.zeros(64, 64)) for _ in range(2)])


model = Odd()
)";

}  // namespace

TEST_CASE("emit: tt-xla block: imports, mesh, and a loop over identical blocks", "[emit]") {
  auto p = plan_script(fixture("gpt.py"));
  const auto& mp = p.result.meshes.at(0);
  std::string block = emit::tt_xla_block(p.model, mp, instance());
  CHECK(block.rfind("# >>> shardlens tt-xla sharding >>>\n", 0) == 0);
  CHECK(block.size() > 40);
  CHECK(block.substr(block.size() - 36) == "# <<< shardlens tt-xla sharding <<<\n");
  for (const char* line : {"import numpy as np\n", "import os\n", "import torch_xla.core.xla_model as xm\n",
                           "import torch_xla.runtime as xr\n", "import torch_xla.distributed.spmd as xs\n",
                           "os.environ[\"CONVERT_SHLO_TO_SHARDY\"] = \"1\"\n", "xr.use_spmd()\n",
                           "mesh = xs.Mesh(np.array(range(8)), (1, 8), (\"batch\", \"model\"))\n"})
    CHECK(occurrences(block, line) == 1);
  CHECK(block.find("for layer in model.h:\n    xs.mark_sharding(layer.attn.proj.weight, mesh, (None, \"model\"))\n") !=
        std::string::npos);
  CHECK(block.find("model.h[") == std::string::npos);
  CHECK(occurrences(block, "for layer in model.h:") == 1);
  // The fused qkv layout has no spec: said in a comment, not marked.
  CHECK(block.find("h.*.attn.qkv.weight (column_segments)") != std::string::npos);
  CHECK(block.find("qkv.weight, mesh") == std::string::npos);
  CHECK(parses(block));

  {
    emit::detail::MarkStyle style;
    style.statement = [](const std::string& t, const std::string& s) { return "f(" + t + ", " + s + ")"; };
    auto marks = emit::detail::write_marks(p.model, mp, "model", 0, style);
    CHECK(marks.parameters == sharded(mp));
    CHECK(marks.parameters == 96);
  }
}

TEST_CASE("emit: rows that hold their own share of the batch mark the inputs on 'batch'; a sequence split over the rows says what to constrain", "[emit]") {
  {
    // Experts over the 4 rows with a batch of 32 split over them (tests/plan/test_mesh_2d.py counts its collectives).
    plan::PlanOptions options;
    options.meshes = {mesh("4x8")};
    options.workload.batch = 32;
    auto p = plan_script(fixture("moe.py"), options);
    const auto& mp = p.result.meshes.at(0);
    REQUIRE(mp.mode == "expert parallel over 'batch' rows, tensor parallel on 'model'");
    std::string block = emit::tt_xla_block(p.model, mp, instance());
    CHECK(block.find("def shard_inputs(mesh, tokens):\n") != std::string::npos);
    CHECK(block.find("    xs.mark_sharding(tokens, mesh, (\"batch\", None))\n") != std::string::npos);
    CHECK(parses(block));
  }
  {
    // One row: nothing to split the inputs over.
    auto p = plan_script(fixture("moe.py"));
    CHECK(emit::tt_xla_block(p.model, p.result.meshes.at(0), instance()).find("shard_inputs") == std::string::npos);
  }
}

TEST_CASE("emit: 2x4: specs over both axes, nested loops, load_shard_spec", "[emit]") {
  plan::PlanOptions options;
  options.meshes = {mesh("2x4")};
  auto p = plan_script(fixture("moe.py"), options);
  const auto& mp = p.result.meshes.at(0);
  std::string block = emit::tt_xla_block(p.model, mp, instance());
  CHECK(block.find("mesh = xs.Mesh(np.array(range(8)), (2, 4), (\"batch\", \"model\"))") != std::string::npos);
  CHECK(block.find("for layer in model.layers:\n") != std::string::npos);
  CHECK(block.find("    for expert in layer.moe.experts:\n        xs.mark_sharding(expert.w1.weight, mesh, ") !=
        std::string::npos);
  CHECK(block.find("((\"batch\", \"model\"), None)") != std::string::npos);
  CHECK(parses(block));

  std::string spec = emit::load_shard_spec_block(p.model, mp);
  CHECK(spec.rfind("# >>> shardlens load_shard_spec >>>\n", 0) == 0);
  CHECK(spec.find("def get_mesh_config(num_devices):\n") != std::string::npos);
  CHECK(spec.find("    return (2, 4), (\"batch\", \"model\")\n") != std::string::npos);
  CHECK(spec.find("def load_shard_spec(model):\n    shard_specs = {}\n    for layer in model.layers:\n") !=
        std::string::npos);
  CHECK(spec.find("            shard_specs[expert.w1.weight] = ((\"batch\", \"model\"), None)\n") != std::string::npos);
  CHECK(spec.find("    return shard_specs\n# <<< shardlens load_shard_spec <<<\n") != std::string::npos);
  CHECK(spec.find("xs.") == std::string::npos);
  CHECK(parses(spec));
}

TEST_CASE("emit: insertion: after the instance; inserting again replaces the block", "[emit]") {
  std::string text = fixture("gpt.py");
  auto p = plan_script(text);
  std::string block = emit::tt_xla_block(p.model, p.result.meshes.at(0), instance());
  auto edit = emit::plan_insertion(text, block, emit::BlockKind::TtXla, "model");
  REQUIRE(edit.ok);
  CHECK_FALSE(edit.replaces_block);
  CHECK(edit.start == edit.end);
  CHECK(edit.start == text.find("model = GPT(GPTConfig())\n") + 25);
  std::string once = emit::apply_insertion(text, edit);
  CHECK(parses(once));
  CHECK(once.find("model = GPT(GPTConfig())\n\n# >>> shardlens tt-xla sharding >>>\n") != std::string::npos);

  auto again = emit::plan_insertion(once, block, emit::BlockKind::TtXla, "model");
  REQUIRE(again.ok);
  CHECK(again.replaces_block);
  CHECK(emit::apply_insertion(once, again) == once);

  // A different plan replaces the old block in place.
  plan::PlanOptions options;
  options.meshes = {mesh("2x4")};
  auto q = plan_script(text, options);
  std::string other = emit::tt_xla_block(q.model, q.result.meshes.at(0), instance());
  std::string replaced = with_block(once, other, emit::BlockKind::TtXla, "model");
  CHECK(occurrences(replaced, "# >>> shardlens tt-xla sharding >>>") == 1);
  CHECK(occurrences(replaced, "# <<< shardlens tt-xla sharding <<<") == 1);
  CHECK(replaced.find("(2, 4)") != std::string::npos);
  CHECK(replaced.find("(1, 8)") == std::string::npos);
  CHECK(with_block(replaced, block, emit::BlockKind::TtXla, "model") == once);

  // Both kinds of block live side by side; each replaces only its own.
  std::string spec = emit::load_shard_spec_block(p.model, p.result.meshes.at(0));
  std::string both = with_block(once, spec, emit::BlockKind::ShardSpec, "");
  CHECK(parses(both));
  CHECK(with_block(both, spec, emit::BlockKind::ShardSpec, "") == both);
  CHECK(with_block(both, block, emit::BlockKind::TtXla, "model") == both);
}

TEST_CASE("emit: insertion inside if __name__ == \"__main__\": re-indented after the assignment", "[emit]") {
  std::string text =
      "import torch.nn as nn\n\n\n"
      "class Net(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.fc = nn.Linear(8, 8)\n\n\n"
      "if __name__ == '__main__':\n"
      "  print('building')\n"
      "  if True:\n"
      "    model = Net()\n"
      "  y = model(x)\n";
  std::string block = "# >>> shardlens tt-xla sharding >>>\nfor layer in model.h:\n    f(layer)\n"
                      "# <<< shardlens tt-xla sharding <<<\n";
  std::string once = with_block(text, block, emit::BlockKind::TtXla, "model");
  CHECK(once.find("    model = Net()\n"
                  "\n"
                  "  # >>> shardlens tt-xla sharding >>>\n"
                  "  for layer in model.h:\n"
                  "      f(layer)\n"
                  "  # <<< shardlens tt-xla sharding <<<\n"
                  "\n"
                  "  y = model(x)\n") != std::string::npos);
  CHECK(parses(once));
  CHECK(with_block(once, block, emit::BlockKind::TtXla, "model") == once);

  // The function forms go before the guard, so that its code can call them.
  std::string functions = "# >>> shardlens load_shard_spec >>>\ndef load_shard_spec(model):\n    return {}\n"
                          "# <<< shardlens load_shard_spec <<<\n";
  std::string with_fn = with_block(text, functions, emit::BlockKind::ShardSpec, "");
  CHECK(with_fn.find("self.fc = nn.Linear(8, 8)\n\n\n# >>> shardlens load_shard_spec >>>\n") != std::string::npos);
  CHECK(with_fn.find("# <<< shardlens load_shard_spec <<<\n\n\nif __name__ == '__main__':\n") != std::string::npos);
  CHECK(parses(with_fn));
  CHECK(with_block(with_fn, functions, emit::BlockKind::ShardSpec, "") == with_fn);
}

TEST_CASE("emit: names that are not attribute paths still give valid code", "[emit]") {
  auto model = extract(kOddNames);
  AllSharded all(model);
  std::string block = emit::tt_xla_block(model, all.plan, instance());
  for (const char* s : {"xs.mark_sharding(model.blocks[\"attn-1\"].weight, mesh, (\"model\", None))",
                        "xs.mark_sharding(model.blocks[\"class\"].weight, mesh, (\"model\", None))",
                        "for expert in model.experts.values():\n    xs.mark_sharding(expert.up.weight, mesh,",
                        "xs.mark_sharding(model.seq.first.weight, mesh,",
                        "xs.mark_sharding(getattr(model.seq, \"2\").weight, mesh,",
                        "xs.mark_sharding(model.stack[0].weight, mesh, (\"model\",))",
                        "for layer in model.stack[1:]:\n    xs.mark_sharding(layer.up.weight, mesh,",
                        "xs.mark_sharding(getattr(model, \"lambda\").weight, mesh,",
                        "xs.mark_sharding(getattr(model, \"my layer\").bias, mesh,",
                        "xs.mark_sharding(getattr(model, \"caf\u00e9\").weight, mesh,",
                        "xs.mark_sharding(model.plist[0], mesh, (\"model\", None))",
                        "xs.mark_sharding(model.plist[1], mesh, (\"model\", None))"}) {
    INFO(s);
    CHECK(block.find(s) != std::string::npos);
  }
  CHECK(parses(block));
  std::string spec = emit::load_shard_spec_block(model, all.plan);
  CHECK(spec.find("shard_specs[getattr(model, \"my layer\").weight] = (\"model\", None)") != std::string::npos);
  CHECK(parses(spec));

  emit::detail::MarkStyle style;
  style.statement = [](const std::string& t, const std::string& s) { return t + s; };
  CHECK(emit::detail::write_marks(model, all.plan, "model", 0, style).parameters == model.parameters.size());
}

TEST_CASE("emit: no instance: apply_sharding(model, mesh) appended as functions", "[emit]") {
  std::string text = fixture("tinynet.py");
  auto model = extract(text);
  REQUIRE(model.root_expression == "TinyNet()");
  CHECK(emit::instance_expression(model).empty());
  AllSharded all(model);
  emit::EmitOptions options;
  options.model_expression = emit::instance_expression(model);
  std::string block = emit::tt_xla_block(model, all.plan, options);
  CHECK(block.find("\ndef make_mesh():\n    os.environ[\"CONVERT_SHLO_TO_SHARDY\"] = \"1\"\n    xr.use_spmd()\n"
                   "    return xs.Mesh(np.array(range(8)), (1, 8), (\"batch\", \"model\"))\n") != std::string::npos);
  CHECK(block.find("\ndef apply_sharding(model, mesh):\n    model.to(xm.xla_device())") != std::string::npos);
  CHECK(block.find("    for block in model.blocks:\n        xs.mark_sharding(block.fc.weight, mesh, (\"model\", None))\n") !=
        std::string::npos);
  CHECK(block.find("    return model\n# <<< shardlens tt-xla sharding <<<\n") != std::string::npos);
  std::string once = with_block(text, block, emit::BlockKind::TtXla, "");
  CHECK(once.substr(0, text.size()) == text);
  CHECK(once.substr(text.size(), 2) == "\n\n");
  CHECK(parses(once));
  CHECK(with_block(once, block, emit::BlockKind::TtXla, "") == once);
}

TEST_CASE("emit: the block's variables do not clobber the script's globals", "[emit]") {
  std::string text = fixture("gpt.py") + "\nmesh = 'cpu'\nlayer = 3\n";
  auto names = emit::script_names(text);
  CHECK(names.count("mesh"));
  CHECK(names.count("layer"));
  CHECK(names.count("GPT"));
  CHECK_FALSE(names.count("B"));  // a local of forward()
  auto p = plan_script(text);
  auto options = instance();
  options.reserved_names = names;
  std::string block = emit::tt_xla_block(p.model, p.result.meshes.at(0), options);
  CHECK(block.find("mesh2 = xs.Mesh(") != std::string::npos);
  CHECK(block.find("for layer2 in model.h:\n    xs.mark_sharding(layer2.attn.proj.weight, mesh2, ") != std::string::npos);
  // Names inside earlier blocks do not count, so regenerating is stable.
  std::string once = with_block(text, block, emit::BlockKind::TtXla, "model");
  CHECK(emit::script_names(once) == names);
}

TEST_CASE("emit: insertion keeps CRLF line endings and handles a missing final newline", "[emit]") {
  std::string block = "# >>> shardlens tt-xla sharding >>>\nf(model)\n# <<< shardlens tt-xla sharding <<<\n";
  std::string crlf = "import torch.nn as nn\r\nmodel = nn.Linear(2, 2)\r\nprint(model)\r\n";
  std::string once = with_block(crlf, block, emit::BlockKind::TtXla, "model");
  CHECK(once == "import torch.nn as nn\r\nmodel = nn.Linear(2, 2)\r\n\r\n# >>> shardlens tt-xla sharding >>>\r\n"
                "f(model)\r\n# <<< shardlens tt-xla sharding <<<\r\n\r\nprint(model)\r\n");
  CHECK(with_block(once, block, emit::BlockKind::TtXla, "model") == once);

  std::string bare = "import torch.nn as nn\nmodel = nn.Linear(2, 2)";
  std::string fixed = with_block(bare, block, emit::BlockKind::TtXla, "model");
  CHECK(fixed == bare + "\n\n" + block);
  CHECK(parses(fixed));
}

TEST_CASE("emit: annotation_edit writes the block for the script and places it", "[emit]") {
  std::string text = fixture("gpt.py") + "\nlayer = 1\n";
  auto p = plan_script(text);
  auto edit = emit::annotation_edit(text, p.model, p.result.meshes.at(0), emit::BlockKind::TtXla, "shardlens plan gpt.py");
  REQUIRE(edit.ok);
  CHECK(edit.block.find("# Regenerate with `shardlens plan gpt.py`") != std::string::npos);
  CHECK(edit.block.find("for layer2 in model.h:") != std::string::npos);
  CHECK(edit.text == "\n" + edit.block);  // the blank line after the instance is the script's
  auto spec = emit::annotation_edit(text, p.model, p.result.meshes.at(0), emit::BlockKind::ShardSpec);
  REQUIRE(spec.ok);
  CHECK(spec.start == text.size());
  CHECK(spec.text == "\n\n" + spec.block);
}

TEST_CASE("emit: insertion follows the last statement that builds the model", "[emit]") {
  std::string block = "# >>> shardlens tt-xla sharding >>>\nf(model)\n# <<< shardlens tt-xla sharding <<<\n";
  std::string tied = "model = Net()\nmodel.head.weight = model.embed.weight\nmodel(x)\n";
  CHECK(with_block(tied, block, emit::BlockKind::TtXla, "model") ==
        "model = Net()\nmodel.head.weight = model.embed.weight\n\n" + block + "\nmodel(x)\n");
  std::string holder = "holder = Holder()\nholder.net = Net()\nprint(holder)\n";
  CHECK(with_block(holder, block, emit::BlockKind::TtXla, "holder") ==
        "holder = Holder()\nholder.net = Net()\n\n" + block + "\nprint(holder)\n");
  // Bindings inside functions and classes are other scopes; `with ... as model` is not.
  std::string scoped = "def f():\n    model = 1\n\n\nwith build() as model:\n    pass\nclass A:\n    model = 2\n";
  CHECK(with_block(scoped, block, emit::BlockKind::TtXla, "model") ==
        "def f():\n    model = 1\n\n\nwith build() as model:\n    pass\n\n" + block + "\nclass A:\n    model = 2\n");
}

TEST_CASE("emit: insertion refuses an unterminated block", "[emit]") {
  std::string text = "model = f()\n# >>> shardlens tt-xla sharding >>>\nx = 1\n";
  auto edit = emit::plan_insertion(text, "# >>> shardlens tt-xla sharding >>>\n# <<< shardlens tt-xla sharding <<<\n",
                                   emit::BlockKind::TtXla, "model");
  CHECK_FALSE(edit.ok);
  CHECK(edit.error.find("line 2") != std::string::npos);
  CHECK(edit.error.find("never closed") != std::string::npos);
}

TEST_CASE("emit: Python pieces: specs, string literals, member access", "[emit]") {
  using emit::detail::member_access;
  using emit::detail::spec_literal;
  CHECK(spec_literal({{}, {"model"}}) == "(None, \"model\")");
  CHECK(spec_literal({{"model"}}) == "(\"model\",)");
  CHECK(spec_literal({{"batch", "model"}, {}}) == "((\"batch\", \"model\"), None)");
  CHECK(spec_literal({}) == "()");
  CHECK(emit::detail::string_literal("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"");
  CHECK(member_access("m", "Linear", "weight", 0) == "m.weight");
  CHECK(member_access("m", "Net", "class", 0) == "getattr(m, \"class\")");
  CHECK(member_access("m", "Net", "0", 0) == "getattr(m, \"0\")");
  CHECK(member_access("m", "ModuleList", "3", 3) == "m[3]");
  CHECK(member_access("m", "Sequential", "3", 2) == "getattr(m, \"3\")");  // indexing is positional
  CHECK(member_access("m", "ModuleDict", "w", 0) == "m[\"w\"]");
  CHECK(emit::detail::is_dotted_name("pipe.unet"));
  CHECK_FALSE(emit::detail::is_dotted_name("GPT()"));
  CHECK_FALSE(emit::detail::is_dotted_name("a.class"));
  CHECK(emit::anchor_of("pipe.unet") == "pipe");
}

TEST_CASE("emit: dtensor: Colwise / Rowwise per Linear, one loop over identical blocks", "[emit]") {
  auto p = plan_script(fixture("llama.py"));
  const auto& mp = p.result.meshes.at(0);
  auto styles = emit::framework_styles(p.model, mp);
  CHECK(styles.tp_size == 8);
  CHECK(styles.tp_axes == std::vector<std::string>{"model"});
  CHECK(styles.left_out.empty());
  std::string block = emit::dtensor_block(p.model, mp);
  CHECK(block.rfind("# >>> shardlens dtensor tensor parallel >>>\n", 0) == 0);
  CHECK(block.find("from torch.distributed.tensor.parallel import (\n") != std::string::npos);
  CHECK(block.find("    from torch.distributed.device_mesh import init_device_mesh\n") != std::string::npos);
  CHECK(block.find("    mesh = init_device_mesh(device_type, (1, 8), mesh_dim_names=(\"batch\", \"model\"))\n"
                   "    return mesh[\"model\"]\n") != std::string::npos);
  CHECK(block.find("def apply_tensor_parallel(model, tp_mesh):\n") != std::string::npos);
  CHECK(occurrences(block, "for block in model.layers:") == 1);
  CHECK(block.find("        \"attention.wq\": ColwiseParallel(),\n") != std::string::npos);
  CHECK(block.find("        \"attention.wo\": RowwiseParallel(),\n") != std::string::npos);
  CHECK(block.find("        \"feed_forward.w2\": RowwiseParallel(),\n") != std::string::npos);
  // The LM head is gathered after it: Replicate() output.
  CHECK(block.find("\"output\": ColwiseParallel(output_layouts=Replicate())") != std::string::npos);
  CHECK(block.find("layers.3") == std::string::npos);
  const std::string tail = "    return model\n# <<< shardlens dtensor tensor parallel <<<\n";
  CHECK(block.substr(block.size() - tail.size()) == tail);
  CHECK(parses(block));
}

TEST_CASE("emit: dtensor / hf-tp-plan: fused qkv listed as left out, 2-D plans on one tp group", "[emit]") {
  {
    auto p = plan_script(fixture("gpt.py"));
    const auto& mp = p.result.meshes.at(0);
    auto styles = emit::framework_styles(p.model, mp);
    REQUIRE(styles.left_out.size() == 2);
    CHECK(styles.left_out[0] == "h.*.attn.qkv.weight (column_segments)");
    std::string block = emit::dtensor_block(p.model, mp);
    CHECK(block.find("#   h.*.attn.qkv.weight (column_segments)\n") != std::string::npos);
    CHECK(block.find("attn.qkv\"") == std::string::npos);
    CHECK(block.find("\"attn.proj\": RowwiseParallel()") != std::string::npos);
    std::string hf = emit::hf_tp_plan_block(p.model, mp);
    CHECK(hf.find("\"h.*.mlp.up\": \"colwise\",\n") != std::string::npos);
    CHECK(hf.find("\"h.*.mlp.down\": \"rowwise\",\n") != std::string::npos);
    CHECK(hf.find("qkv\"") == std::string::npos);
    CHECK(parses(hf));
  }
  {
    plan::PlanOptions options;
    options.meshes = {mesh("2x4")};
    auto p = plan_script(fixture("llama.py"), options);
    const auto& mp = p.result.meshes.at(0);
    auto styles = emit::framework_styles(p.model, mp);
    CHECK(styles.tp_size == 8);
    CHECK(styles.tp_axes == std::vector<std::string>{"batch", "model"});
    std::string block = emit::dtensor_block(p.model, mp);
    CHECK(block.find("return init_device_mesh(device_type, (8,), mesh_dim_names=(\"tp\",))") != std::string::npos);
    CHECK(block.find("# torch.arange(8)) instead.\n") != std::string::npos);
    CHECK(parses(block));
  }
  {
    plan::PlanOptions options;
    options.meshes = {mesh("8x4")};
    auto p = plan_script(fixture("gpt.py"), options);
    const auto& mp = p.result.meshes.at(0);
    REQUIRE(mp.mode == "rows replicated");
    auto styles = emit::framework_styles(p.model, mp);
    CHECK(styles.tp_size == 4);
    std::string block = emit::dtensor_block(p.model, mp);
    CHECK(block.find("    mesh = init_device_mesh(device_type, (8, 4), mesh_dim_names=(\"batch\", \"model\"))\n"
                     "    return mesh[\"model\"]\n") != std::string::npos);
    CHECK(block.find("FSDP / DDP over mesh[\"batch\"]") != std::string::npos);
    std::string c = emit::colossalai_block(p.model, mp, p.result.diagnostics);
    CHECK(c.find("TP_SIZE = 4 ") != std::string::npos);
    CHECK(parses(c));
  }
}

TEST_CASE("emit: hf-tp-plan: patterns with * per layer index", "[emit]") {
  auto p = plan_script(fixture("moe.py"));
  const auto& mp = p.result.meshes.at(0);
  std::string hf = emit::hf_tp_plan_block(p.model, mp);
  CHECK(hf.find("base_model_tp_plan = {\n") != std::string::npos);
  CHECK(hf.find("    \"layers.*.attention.wq\": \"colwise\",\n") != std::string::npos);
  CHECK(hf.find("    \"layers.*.moe.experts.*.w2\": \"rowwise\",\n") != std::string::npos);
  CHECK(hf.find("    \"lm_head\": \"colwise_rep\",\n") != std::string::npos);
  CHECK(hf.find("layers.0") == std::string::npos);
  CHECK(parses(hf));
}

TEST_CASE("emit: colossalai: tp_size and its divisibility checks", "[emit]") {
  {
    auto p = plan_script(fixture("llama.py"));
    const auto& mp = p.result.meshes.at(0);
    std::string c = emit::colossalai_block(p.model, mp, p.result.diagnostics);
    CHECK(c.find("from colossalai.booster.plugin import HybridParallelPlugin\n") != std::string::npos);
    CHECK(c.find("TP_SIZE = 8 ") != std::string::npos);
    // Decode of batch 1: the pipeline option (8 stages, 1 microbatch) is costed, not chosen.
    CHECK(c.find("    tp_size=TP_SIZE,\n    pp_size=1,  # PP_SIZE") != std::string::npos);
    CHECK(c.find("PP_SIZE = 8\nNUM_MICROBATCHES = 1\n") != std::string::npos);
    CHECK(c.find("assert 32 % TP_SIZE == 0") != std::string::npos);  // heads
    CHECK(c.find("assert 8 % TP_SIZE == 0") != std::string::npos);   // kv heads
    CHECK(c.find("NOT satisfied") == std::string::npos);
    CHECK(parses(c));
  }
  {
    plan::PlanOptions options;
    options.meshes = {mesh("1x32")};
    auto p = plan_script(fixture("llama.py"), options);
    const auto& mp = p.result.meshes.at(0);
    std::string c = emit::colossalai_block(p.model, mp, p.result.diagnostics);
    CHECK(c.find("TP_SIZE = 32 ") != std::string::npos);
    CHECK(c.find("# NOT satisfied: kv_heads 8 % 32 != 0") != std::string::npos);
    CHECK(c.find("#   shardlens: 8 key/value heads do not divide") != std::string::npos);
    CHECK(c.find("assert 32 % TP_SIZE == 0") != std::string::npos);
    CHECK(parses(c));
  }
}

TEST_CASE("emit: dtensor: blocks with different plans as slices, column outputs gathered unless a row layer follows", "[emit]") {
  plan::PlanOptions options;
  options.meshes = {mesh("1x8")};
  options.workload.phase = plan::Phase::Prefill;
  auto p = plan_script(fixture("llama.py"), options);
  const auto& mp = p.result.meshes.at(0);
  std::string block = emit::dtensor_block(p.model, mp);
  // Layer 0 differs from the other 31 in this plan: one call for it, one loop over the rest.
  CHECK(block.find("    parallelize_module(model.get_submodule(\"layers.0\"), tp_mesh, {\n") != std::string::npos);
  CHECK(block.find("    for block in model.layers[1:]:  # 31 identical blocks\n") != std::string::npos);
  CHECK(block.find("layers.1\"") == std::string::npos);
  // w1 / w3 feed w2 (row-parallel) through the SwiGLU product: outputs stay sharded.
  CHECK(block.find("            \"feed_forward.w1\": ColwiseParallel(),\n") != std::string::npos);
  // The norms' hidden-dim layout has no DTensor style.
  CHECK(block.find("#   layers.*.attention_norm.weight (hidden on RMSNorm)\n") != std::string::npos);
  CHECK(parses(block));
}

TEST_CASE("emit: hf-tp-plan: a layout that differs between layers is left out, not spelled per index", "[emit]") {
  plan::PlanOptions options;
  options.meshes = {mesh("1x8")};
  options.workload.phase = plan::Phase::Prefill;
  auto p = plan_script(fixture("llama.py"), options);
  std::string hf = emit::hf_tp_plan_block(p.model, p.result.meshes.at(0));
  CHECK(hf.find("#   layers.*.attention.wq.weight (colwise_rep in 1 of 32 instances;") != std::string::npos);
  CHECK(hf.find("\"layers.*.attention.wq\"") == std::string::npos);
  CHECK(hf.find("    \"layers.*.feed_forward.w2\": \"rowwise\",\n") != std::string::npos);
  CHECK(hf.find("layers.0") == std::string::npos);
  CHECK(parses(hf));
}
