// Parsing a large MLIR dump: generates ~50 MB of TTNN-style text (layouts, #loc aliases, generic ops
// with properties, collectives, nested regions) and prints how long parse_mlir and read_ir take.
// Prints figures; asserts nothing (target: < 1 s for 50 MB).
#include <chrono>
#include <ctime>
#include <cstdio>
#include <string>

#include "mlir/ir_check.h"
#include "mlir/mlir_text.h"

namespace {

std::string generate(size_t target_bytes) {
  std::string s;
  s.reserve(target_bytes + (1 << 20));
  s += "#dram = #ttnn.buffer_type<dram>\n";
  s += "#ttnn_layout = #ttnn.ttnn_layout<(d0, d1) -> (d0, d1), <1x1>, memref<1x128x!ttcore.tile<32x32, bf16>, #dram>, <interleaved>>\n";
  s += "#ttnn_layout1 = #ttnn.ttnn_layout<(d0, d1) -> (d0, d1), <1x1>, memref<1x16x!ttcore.tile<32x32, bf16>, #dram>, <interleaved>>\n";
  s += "module @SyncTensorsGraph attributes {ttcore.meshes = #ttcore.meshes<[<\"mesh\" = 1x8>]>} {\n";
  s += "  func.func @main(%arg0: tensor<1x4096xbf16, #ttnn_layout> {ttcore.argument_type = #ttcore.argument_type<input>, ttir.name = \"args_0\"} loc(\"p0.1\"), "
       "%arg1: tensor<4096x512xbf16, #ttnn_layout1> {ttcore.argument_type = #ttcore.argument_type<parameter>, ttir.name = \"l__self___fc_weight\"} loc(\"p1.2\")) -> tensor<1x4096xbf16, #ttnn_layout> {\n";
  s += "    %0 = \"ttnn.get_device\"() <{mesh_offset = #ttnn<mesh_offset 0x0>, mesh_shape = #ttnn<mesh_shape 1x8>}> : () -> !ttnn.device loc(#loc)\n";
  std::string locs;
  size_t i = 1;
  while (s.size() + locs.size() < target_bytes) {
    std::string n = std::to_string(i), p = std::to_string(i - 1);
    s += "    %" + n + " = \"ttnn.matmul\"(%" + (i == 1 ? std::string("arg0") : p) +
         ", %arg1) <{transpose_a = false, transpose_b = false}> : (tensor<1x4096xbf16, #ttnn_layout>, tensor<4096x512xbf16, #ttnn_layout1>) -> "
         "tensor<1x512xbf16, #ttnn_layout1> loc(#loc" + n + ")\n";
    ++i;
    n = std::to_string(i);
    p = std::to_string(i - 1);
    s += "    %" + n + " = \"ttnn.all_gather\"(%" + p +
         ", %0) <{all_gather_dim = 1 : si32, cluster_axis = 1 : ui32, num_links = 1 : ui32}> : (tensor<1x512xbf16, #ttnn_layout1>, !ttnn.device) -> "
         "tensor<1x4096xbf16, #ttnn_layout> loc(#loc" + n + ")\n";
    ++i;
    locs += "#loc" + std::to_string(i - 2) + " = loc(\"matmul." + std::to_string(i - 2) + "\"(\"model.py\":12:0))\n";
    locs += "#loc" + std::to_string(i - 1) + " = loc(\"all_gather." + std::to_string(i - 1) + "\"(\"model.py\":13:0))\n";
  }
  s += "    return %" + std::to_string(i - 1) + " : tensor<1x4096xbf16, #ttnn_layout> loc(#loc)\n  } loc(#loc)\n} loc(#loc)\n#loc = loc(unknown)\n";
  s += locs;
  return s;
}

}  // namespace

int main() {
  using clock = std::chrono::steady_clock;
  std::string text = generate(50u << 20);
  std::printf("MLIR dump: %.1f MB\n", text.size() / 1e6);
  for (int run = 0; run < 3; ++run) {
    std::string copy = text;
    std::clock_t c0 = std::clock();
    auto t0 = clock::now();
    auto module = shardlens::mlir::parse_mlir(std::move(copy), "bench.mlir");
    auto t1 = clock::now();
    std::clock_t c1 = std::clock();
    auto report = shardlens::mlir::read_ir(module, {"batch", "model"}, {1, 8});
    auto t2 = clock::now();
    std::printf("run %d: parse %.0f ms wall, %.0f ms CPU (%zu ops, %zu aliases, %zu errors), collectives and weights %.0f ms (%zu collectives)\n", run + 1,
                std::chrono::duration<double, std::milli>(t1 - t0).count(),
                1000.0 * static_cast<double>(c1 - c0) / CLOCKS_PER_SEC, module.ops.size(), module.aliases.size(), module.errors.size(),
                std::chrono::duration<double, std::milli>(t2 - t1).count(), report.collectives.size());
  }
  return 0;
}
