// The MLIR text reader: generic and custom op forms, regions, attributes, types, locations.
#include <catch2/catch.hpp>

#include <string>

#include "mlir/mlir_text.h"

using namespace shardlens::mlir;

namespace {

const char* kShardy = R"(#loc1 = loc("model.py":14:15)
#loc2 = loc("down"(#loc1))
module @jit_ffn attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["batch"=1, "model"=2]>
  func.func public @main(%arg0: tensor<8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, ttir.name = "w"} loc("p0.1"), %arg1: tensor<1x8xf32>) -> (tensor<1x64xf32> {jax.result_info = ""}) {
    %0 = sdy.manual_computation(%arg1, %arg0) in_shardings=[<@mesh, [{}, {}]>, <@mesh, [{}, {"model"}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"batch", "model"} (%arg2: tensor<1x8xf32>, %arg3: tensor<8x32xf32>) {
      %1 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [0] : (tensor<1x8xf32>, tensor<8x32xf32>) -> tensor<1x32xf32>
      %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %3 = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %3 : tensor<f32>
      }) : (tensor<1x32xf32>) -> tensor<1x32xf32> loc(#loc2)
      sdy.return %2 : tensor<1x32xf32>
    } : (tensor<1x8xf32>, tensor<8x64xf32>) -> tensor<1x64xf32>
    return %0 : tensor<1x64xf32>
  }
}
)";

const Operation* find(const Module& m, std::string_view name) {
  for (auto& op : m.ops)
    if (op.name == name) return &op;
  return nullptr;
}

}  // namespace

TEST_CASE("mlir: generic ops with regions, properties, types and #loc aliases", "[mlir]") {
  auto m = parse_mlir(kShardy, "shardy.mlir");
  CHECK(m.errors.empty());
  const Operation* ar = find(m, "stablehlo.all_reduce");
  REQUIRE(ar);
  CHECK(ar->line == 8);
  REQUIRE(ar->operands.size() == 1);
  CHECK(ar->operands[0] == "%1");
  REQUIRE(ar->results.size() == 1);
  CHECK(ar->results[0] == "%2");
  REQUIRE(ar->operand_types.size() == 1);
  CHECK(ar->operand_types[0] == "tensor<1x32xf32>");
  REQUIRE(ar->result_types.size() == 1);
  auto groups = ar->attribute("replica_groups");
  REQUIRE(groups);
  CHECK(parse_int_array(*groups) == std::vector<int64_t>{0, 1});
  CHECK(ar->attribute("use_global_device_ids"));
  auto loc = m.resolve_location(ar->loc);
  REQUIRE(loc.frames.size() == 1);
  CHECK(loc.frames[0].file == "model.py");
  CHECK(loc.frames[0].line == 14);
  CHECK(loc.frames[0].column == 15);
  REQUIRE(loc.names.size() == 1);
  CHECK(loc.names[0] == "down");
  // The region's ops are children of the all-reduce, which is inside the manual computation.
  const Operation* add = find(m, "stablehlo.add");
  REQUIRE(add);
  CHECK(m.ops[add->parent].name == "stablehlo.all_reduce");
  CHECK(m.ops[ar->parent].name == "sdy.manual_computation");
  CHECK(add->result_types.size() == 1);
  // The custom form's key=value attributes and operands (not its block arguments).
  const Operation* mc = find(m, "sdy.manual_computation");
  REQUIRE(mc);
  CHECK(mc->operands == std::vector<std::string_view>{"%arg1", "%arg0"});
  auto ins = mc->attribute("in_shardings");
  REQUIRE(ins);
  auto per_value = parse_sdy_sharding_per_value(*ins);
  REQUIRE(per_value.size() == 2);
  CHECK(per_value[1] == std::vector<std::vector<std::string>>{{}, {"model"}});
  REQUIRE(mc->result_types.size() == 1);
  CHECK(parse_tensor_type(mc->result_types[0]).shape == std::vector<int64_t>{1, 64});
  // The mesh and the entry function's arguments with their attributes and locations.
  REQUIRE(m.meshes.size() == 1);
  CHECK(m.meshes[0].axes == std::vector<std::pair<std::string, int64_t>>{{"batch", 1}, {"model", 2}});
  REQUIRE(m.functions.size() == 1);
  CHECK(m.functions[0].name == "main");
  REQUIRE(m.functions[0].arguments.size() == 2);
  auto& a0 = m.functions[0].arguments[0];
  CHECK(a0.type == "tensor<8x64xf32>");
  CHECK(m.resolve_location(a0.loc).names == std::vector<std::string>{"p0.1"});
  bool has_sharding = false;
  for (auto& at : a0.attributes)
    if (at.name == "sdy.sharding") {
      has_sharding = true;
      CHECK(*parse_sdy_sharding(at.value) == std::vector<std::vector<std::string>>{{}, {"model"}});
    }
  CHECK(has_sharding);
}

TEST_CASE("mlir: TTNN layouts, device operands, tiles and nested locations", "[mlir]") {
  const char* text = R"(#dram = #ttnn.buffer_type<dram>
#ttnn_layout = #ttnn.ttnn_layout<(d0, d1) -> (d0, d1), <1x1>, memref<1x2x!ttcore.tile<32x32, bf16>, #dram>, <interleaved>>
module attributes {ttcore.meshes = #ttcore.meshes<[<"mesh" = 1x8>]>} {
  ttcore.device_module {
    builtin.module @m {
      func.func @forward(%arg0: tensor<32x64xbf16, #ttnn_layout> loc("x")) -> tensor<32x512xbf16, #ttnn_layout> {
        %0 = "ttnn.get_device"() <{mesh_offset = #ttnn<mesh_offset 0x0>, mesh_shape = #ttnn<mesh_shape 1x8>}> : () -> !ttnn.device loc(#loc)
        %1 = "ttnn.all_gather"(%arg0, %0) <{all_gather_dim = 1 : si32, cluster_axis = 1 : ui32, num_links = 1 : ui32}> : (tensor<32x64xbf16, #ttnn_layout>, !ttnn.device) -> tensor<32x512xbf16, #ttnn_layout> loc(callsite(#loc3 at #loc4))
        return %1 : tensor<32x512xbf16, #ttnn_layout> loc(#loc)
      } loc(#loc)
    } loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("gather"("lib.py":3:1))
#loc4 = loc(fused<"x">["model.py":20:8, "model.py":21:8])
)";
  auto m = parse_mlir(text, "ttnn.mlir");
  CHECK(m.errors.empty());
  const Operation* ag = find(m, "ttnn.all_gather");
  REQUIRE(ag);
  CHECK(ag->operands == std::vector<std::string_view>{"%arg0", "%0"});
  CHECK(parse_int_attr(*ag->attribute("cluster_axis")) == 1);
  auto in = parse_tensor_type(ag->operand_types[0]);
  CHECK(in.shape == std::vector<int64_t>{32, 64});
  CHECK(in.element == "bf16");
  CHECK(in.bytes() == 32 * 64 * 2);
  CHECK_FALSE(parse_tensor_type(ag->operand_types[1]).valid);  // !ttnn.device
  auto loc = m.resolve_location(ag->loc);
  REQUIRE(loc.frames.size() == 3);
  CHECK(loc.frames[0].file == "lib.py");
  CHECK(loc.frames[1].line == 20);
  CHECK(loc.frames[2].line == 21);
  REQUIRE(m.meshes.size() == 1);
  CHECK(m.meshes[0].axes.size() == 2);
  CHECK(m.meshes[0].axes[1].second == 8);
  REQUIRE(m.functions.size() == 1);
  CHECK(m.functions[0].name == "forward");
  CHECK(m.aliases.count("#ttnn_layout"));
}

TEST_CASE("mlir: types and attribute helpers", "[mlir]") {
  CHECK(parse_tensor_type("tensor<f32>").shape.empty());
  CHECK(parse_tensor_type("tensor<f32>").valid);
  CHECK(parse_tensor_type("tensor<?x4xi64>").shape == std::vector<int64_t>{-1, 4});
  CHECK(parse_tensor_type("tensor<2x!ttcore.tile<32x32, bfp_bf8>>").element == "bfp_bf8");
  CHECK(parse_tensor_type("tensor<4x8xf32>").bytes() == 128);
  CHECK(parse_int_array("array<i64: -1, 1>") == std::vector<int64_t>{-1, 1});
  CHECK(parse_int_array("dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>") == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(parse_int_attr("3 : si32") == 3);
  CHECK(*parse_sdy_sharding("#sdy.sharding<@mesh, [{\"batch\", \"model\"}, {?}, {}]>") ==
        std::vector<std::vector<std::string>>{{"batch", "model"}, {}, {}});
}

TEST_CASE("mlir: bad input is reported with its line and the rest is kept", "[mlir]") {
  auto m = parse_mlir("module {\n  %0 = \"ttir.all_reduce\"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n  func.func @f() {\n", "bad.mlir");
  REQUIRE_FALSE(m.errors.empty());
  CHECK(m.errors[0].line == 4);
  CHECK(find(m, "ttir.all_reduce"));
  // Unbalanced closers, stray text, binary junk: no crash, errors listed.
  auto junk = parse_mlir("}}}\n%0 = \n\"unterminated\n)))\n\x01\x02\x03", "junk.mlir");
  CHECK_FALSE(junk.errors.empty());
  // Deep nesting stops at a bound instead of overflowing the stack.
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "\"a.b\"() ({\n";
  auto nested = parse_mlir(deep, "deep.mlir");
  CHECK_FALSE(nested.errors.empty());
  CHECK(parse_mlir("", "empty.mlir").ops.empty());
}
