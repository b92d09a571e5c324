// The exact graph's JSON -> model IR translation, without LibTorch: a hand-written shardlens-graph
// answer for a two-layer MLP block with attention-free ops, checked op by op.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "torch/exact_ir.h"

using shardlens::ir::OpKind;

namespace {

nlohmann::json tensor(int id, std::vector<int64_t> shape, const char* param = nullptr, const char* dtype = "float32") {
  nlohmann::json v{{"id", id}, {"kind", "tensor"}, {"shape", shape}, {"dtype", dtype}};
  if (param) v["parameter"] = param;
  return v;
}

nlohmann::json scalar(int id, nlohmann::json value) {
  const char* kind = value.is_array() ? "list" : value.is_number_integer() ? "int" : value.is_string() ? "str" : "float";
  return {{"id", id}, {"kind", kind}, {"value", value}};
}

nlohmann::json op(const char* kind, const char* module, std::vector<int> in, std::vector<int> out, int line) {
  return {{"kind", kind}, {"module", module}, {"inputs", in}, {"outputs", out},
          {"span", {{"line", line}, {"column", 4}, {"end_line", line}, {"end_column", 20}}}};
}

// Block(x): h = fc1(x) (a built-in Linear) ; h = gelu(h) ; q, k = h.split(8, -1) ; y = q.view(1, 2, 2, 4)
// .transpose(1, 2) ; out = fc2(cat([q, k], -1)) + x
nlohmann::json graph() {
  nlohmann::json j;
  j["format"] = 1;
  j["model"] = "Block";
  j["source"] = "block.py";
  j["root"] = "model";
  j["method"] = "script";
  j["modules"] = {{{"name", "fc1"}, {"class", "Linear"}, {"builtin", true}},
                  {{"name", "fc2"}, {"class", "Linear"}, {"builtin", true}}};
  j["parameters"] = {{{"name", "fc1.weight"}, {"shape", {16, 8}}, {"dtype", "float32"}},
                     {{"name", "fc2.weight"}, {"shape", {8, 16}}, {"dtype", "float32"}}};
  j["buffers"] = nlohmann::json::array();
  nlohmann::json values = {tensor(0, {1, 2, 8}),
                           tensor(1, {16, 8}, "fc1.weight"),
                           tensor(2, {1, 2, 16}),
                           tensor(3, {1, 2, 16}),
                           scalar(4, 8),
                           scalar(5, -1),
                           {{"id", 6}, {"kind", "list"}, {"items", {7, 8}}},
                           tensor(7, {1, 2, 8}),
                           tensor(8, {1, 2, 8}),
                           scalar(9, std::vector<int64_t>{1, 2, 2, 4}),
                           tensor(10, {1, 2, 2, 4}),
                           scalar(11, 1),
                           scalar(12, 2),
                           tensor(13, {1, 2, 2, 4}),
                           {{"id", 14}, {"kind", "list"}, {"items", {7, 8}}},
                           tensor(15, {1, 2, 16}),
                           tensor(16, {8, 16}, "fc2.weight"),
                           tensor(17, {1, 2, 8}),
                           tensor(18, {1, 2, 8}),
                           {{"id", 19}, {"kind", "none"}}};
  nlohmann::json call1 = op("prim::CallMethod", "fc1", {0}, {2}, 3);
  call1["method"] = "forward";
  call1["end"] = 2;
  nlohmann::json call2 = op("prim::CallMethod", "fc2", {15}, {17}, 8);
  call2["method"] = "forward";
  call2["end"] = 9;
  nlohmann::json ops = {call1,
                        op("aten::linear", "fc1", {0, 1, 19}, {2}, 3),
                        op("aten::gelu", "", {2}, {3}, 4),
                        op("aten::split", "", {3, 4, 5}, {6}, 5),
                        op("aten::view", "", {7, 9}, {10}, 6),
                        op("aten::transpose", "", {10, 11, 12}, {13}, 6),
                        op("aten::cat", "", {14, 5}, {15}, 7),
                        call2,
                        op("aten::linear", "fc2", {15, 16, 19}, {17}, 8),
                        op("aten::add", "", {17, 0, 11}, {18}, 8)};
  j["graph"] = {{"inputs", {{{"name", "x"}, {"id", 0}, {"shape", {1, 2, 8}}, {"dtype", "float32"}, {"why", "given"}}}},
                {"outputs", {18}},
                {"values", values},
                {"ops", ops},
                {"notes", nlohmann::json::array()}};
  return j;
}

}  // namespace

TEST_CASE("exact graph JSON becomes the dataflow IR the planner reads", "[torch]") {
  auto exact = shardlens::torchgraph::exact_ir_from_json(graph());
  REQUIRE(exact.ok);
  const auto& m = exact.model;
  REQUIRE(m.modules.size() == 3);
  CHECK(m.modules[0].children == std::vector<int>{1, 2});
  CHECK(m.modules[1].parameters == std::vector<int>{0});
  const auto& flow = m.dataflow;
  CHECK(flow.traced);
  std::vector<OpKind> kinds;
  for (const auto& o : flow.ops) kinds.push_back(o.kind);
  // The root call, then the ops; built-in Linear layers are not calls (as the static tracer has it).
  CHECK(kinds == std::vector<OpKind>{OpKind::Call, OpKind::Contract, OpKind::Unary, OpKind::Split, OpKind::Reshape,
                                     OpKind::Permute, OpKind::Concat, OpKind::Contract, OpKind::Add});
  CHECK(flow.ops[0].end == static_cast<int>(flow.ops.size()));
  const auto& fc1 = flow.ops[1];
  CHECK(fc1.name == "Linear");
  CHECK(fc1.equation == "abk,nk->abn");
  CHECK(fc1.module == 1);
  CHECK(flow.tensors[fc1.inputs[1]].parameter == 0);
  CHECK(fc1.span.line == 3);
  const auto& split = flow.ops[3];
  CHECK(split.dims == std::vector<int>{2});
  CHECK(split.sizes == std::vector<int64_t>{8, 8});
  CHECK(split.outputs.size() == 2);
  CHECK(flow.ops[5].dims == std::vector<int>{0, 2, 1, 3});
  CHECK(flow.ops[6].inputs == split.outputs);  // cat reads the split's parts
  CHECK(flow.ops[6].dims == std::vector<int>{2});
  CHECK(flow.ops[8].inputs.size() == 2);       // the scalar alpha is not a tensor
  CHECK(flow.outputs == flow.ops[8].outputs);
}

TEST_CASE("static spans and blind spots", "[torch]") {
  auto exact = shardlens::torchgraph::exact_ir_from_json(graph());
  REQUIRE(exact.ok);
  shardlens::ir::ModelIR statics;
  statics.modules.resize(2);
  statics.modules[0].span = {1, 0, 1, 9};
  statics.modules[1].name = "fc1";
  statics.modules[1].span = {2, 4, 2, 30};
  shardlens::ir::Parameter p;
  p.name = "fc1.weight";
  p.shape = {16, 8};
  p.span = {2, 4, 2, 30};
  statics.parameters.push_back(p);
  shardlens::torchgraph::adopt_static_spans(exact.model, statics);
  CHECK(exact.model.parameters[0].span.line == 2);
  CHECK(exact.model.parameters[1].span.line == 1);  // fc2 unknown statically: the root's span
  auto blind = shardlens::torchgraph::compare_with_static(exact.model, statics);
  bool fc2 = false, untraced = false;
  for (auto& b : blind) {
    fc2 |= b.message.find("did not find parameter fc2.weight") != std::string::npos;
    untraced |= b.message.find("could not trace forward()") != std::string::npos;
  }
  CHECK(fc2);
  CHECK(untraced);
}

TEST_CASE("a JSON of another format is refused", "[torch]") {
  auto exact = shardlens::torchgraph::exact_ir_from_json(nlohmann::json{{"format", 99}});
  CHECK_FALSE(exact.ok);
  CHECK(exact.error.find("format") != std::string::npos);
}
