// ffn_n300.ttnn.mlir with one collective the plan does not have: the middle activation is all-gathered
// before the down projection (check-ir: extra all_gather).
#dram = #ttnn.buffer_type<dram>
#ttnn_layout = #ttnn.ttnn_layout<(d0, d1) -> (d0, d1), <1x1>, memref<256x128x!ttcore.tile<32x32, bf16>, #dram>, <interleaved>>
#ttnn_layout1 = #ttnn.ttnn_layout<(d0, d1) -> (d0, d1), <1x1>, memref<128x256x!ttcore.tile<32x32, bf16>, #dram>, <interleaved>>
#ttnn_layout2 = #ttnn.ttnn_layout<(d0, d1, d2) -> (d0 * 32 + d1, d2), <1x1>, memref<1x128x!ttcore.tile<32x32, bf16>, #dram>, <interleaved>>
#ttnn_layout3 = #ttnn.ttnn_layout<(d0, d1) -> (d0, d1), <1x1>, memref<1x64x!ttcore.tile<32x32, bf16>, #dram>, <interleaved>>
#ttnn_layout4 = #ttnn.ttnn_layout<(d0, d1) -> (d0, d1), <1x1>, memref<1x128x!ttcore.tile<32x32, bf16>, #dram>, <interleaved>>
module @SyncTensorsGraph.21 attributes {ttcore.meshes = #ttcore.meshes<[<"mesh" = 1x2>]>} {
  ttcore.device_module {
    builtin.module @SyncTensorsGraph.21 attributes {ttcore.meshes = #ttcore.meshes<[<"mesh" = 1x2>]>} {
      func.func @main(%arg0: tensor<16384x4096xbf16, #ttnn_layout> {ttcore.argument_type = #ttcore.argument_type<parameter>, ttir.name = "l__self___up_weight"} loc("p0.2"), %arg1: tensor<4096x16384xbf16, #ttnn_layout1> {ttcore.argument_type = #ttcore.argument_type<parameter>, ttir.name = "l__self___down_weight"} loc("p1.4"), %arg2: tensor<1x1x4096xbf16, #ttnn_layout2> {ttcore.argument_type = #ttcore.argument_type<input>, ttir.name = "args_0"} loc("p2.6")) -> (tensor<1x1x4096xbf16, #ttnn_layout2> {ttcore.shard_status = #ttcore.shard_status<unsharded>}) {
        %0 = "ttnn.get_device"() <{mesh_offset = #ttnn<mesh_offset 0x0>, mesh_shape = #ttnn<mesh_shape 1x2>}> : () -> !ttnn.device loc(#loc)
        %1 = "ttnn.mesh_shard"(%arg0, %0) <{shard_dims = array<i64: -1, 0>, shard_direction = #ttcore.shard_direction<full_to_shard>, shard_shape = array<i64: 2, 1>, shard_type = #ttcore.shard_type<devices>}> : (tensor<16384x4096xbf16, #ttnn_layout>, !ttnn.device) -> tensor<8192x4096xbf16, #ttnn_layout> loc(#loc1)
        %2 = "ttnn.mesh_shard"(%arg1, %0) <{shard_dims = array<i64: -1, 1>, shard_direction = #ttcore.shard_direction<full_to_shard>, shard_shape = array<i64: 1, 2>, shard_type = #ttcore.shard_type<devices>}> : (tensor<4096x16384xbf16, #ttnn_layout1>, !ttnn.device) -> tensor<4096x8192xbf16, #ttnn_layout1> loc(#loc2)
        %3 = "ttnn.mesh_shard"(%arg2, %0) <{shard_dims = array<i64: -1>, shard_direction = #ttcore.shard_direction<full_to_shard>, shard_shape = array<i64: 1>, shard_type = #ttcore.shard_type<replicate>}> : (tensor<1x1x4096xbf16, #ttnn_layout2>, !ttnn.device) -> tensor<1x1x4096xbf16, #ttnn_layout2> loc(#loc3)
        %4 = "ttnn.reshape"(%3) <{shape = [1 : i32, 4096 : i32]}> : (tensor<1x1x4096xbf16, #ttnn_layout2>) -> tensor<1x4096xbf16, #ttnn_layout4> loc(#loc4)
        %5 = "ttnn.matmul"(%4, %1) <{transpose_a = false, transpose_b = true}> : (tensor<1x4096xbf16, #ttnn_layout4>, tensor<8192x4096xbf16, #ttnn_layout>) -> tensor<1x8192xbf16, #ttnn_layout4> loc(#loc5)
        %6 = "ttnn.gelu"(%5) : (tensor<1x8192xbf16, #ttnn_layout4>) -> tensor<1x8192xbf16, #ttnn_layout4> loc(#loc6)
        %12 = "ttnn.all_gather"(%6, %0) <{all_gather_dim = 1 : si32, cluster_axis = 1 : ui32, num_links = 1 : ui32}> : (tensor<1x8192xbf16, #ttnn_layout4>, !ttnn.device) -> tensor<1x16384xbf16, #ttnn_layout4> loc(#loc6)
        %7 = "ttnn.matmul"(%6, %2) <{transpose_a = false, transpose_b = true}> : (tensor<1x8192xbf16, #ttnn_layout4>, tensor<4096x8192xbf16, #ttnn_layout1>) -> tensor<1x4096xbf16, #ttnn_layout4> loc(#loc7)
        %8 = "ttnn.reduce_scatter"(%7, %0) <{cluster_axis = 1 : ui32, num_links = 1 : ui32, reduce_type = #ttcore.reduce_type<sum>, scatter_dim = 1 : si32}> : (tensor<1x4096xbf16, #ttnn_layout4>, !ttnn.device) -> tensor<1x2048xbf16, #ttnn_layout3> loc(#loc8)
        %9 = "ttnn.all_gather"(%8, %0) <{all_gather_dim = 1 : si32, cluster_axis = 1 : ui32, num_links = 1 : ui32}> : (tensor<1x2048xbf16, #ttnn_layout3>, !ttnn.device) -> tensor<1x4096xbf16, #ttnn_layout4> loc(#loc8)
        %10 = "ttnn.reshape"(%9) <{shape = [1 : i32, 1 : i32, 4096 : i32]}> : (tensor<1x4096xbf16, #ttnn_layout4>) -> tensor<1x1x4096xbf16, #ttnn_layout2> loc(#loc9)
        %11 = "ttnn.mesh_shard"(%10, %0) <{shard_dims = array<i64: -1>, shard_direction = #ttcore.shard_direction<shard_to_full>, shard_shape = array<i64: 1>, shard_type = #ttcore.shard_type<replicate>}> : (tensor<1x1x4096xbf16, #ttnn_layout2>, !ttnn.device) -> tensor<1x1x4096xbf16, #ttnn_layout2> loc(#loc9)
        return %11 : tensor<1x1x4096xbf16, #ttnn_layout2> loc(#loc)
      } loc(#loc)
    } loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("p0.2")
#loc2 = loc("p1.4")
#loc3 = loc("p2.6")
#loc4 = loc("reshape.8")
#loc5 = loc("dot.9")
#loc6 = loc("gelu.11")
#loc7 = loc("dot.13")
#loc8 = loc("all-reduce.15")
#loc9 = loc("reshape.17")
