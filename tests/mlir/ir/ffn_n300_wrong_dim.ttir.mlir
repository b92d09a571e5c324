// ffn_n300.ttir.mlir with up.weight sharded on its input dim (1) instead of its output dim (0)
// (check-ir: weight_sharding, up.weight).
#loc1 = loc("ffn.py":13:15)
module @SyncTensorsGraph.21 attributes {mhlo.num_partitions = 2 : i32, ttcore.meshes = #ttcore.meshes<[<"mesh" = 1x2>]>} {
  ttcore.device_module {
    builtin.module @SyncTensorsGraph.21 attributes {ttcore.meshes = #ttcore.meshes<[<"mesh" = 1x2>]>} {
      func.func @main(%arg0: tensor<16384x4096xbf16> {ttcore.argument_type = #ttcore.argument_type<parameter>, ttcore.shard_status = #ttcore.shard_status<unsharded>, ttir.name = "l__self___up_weight"} loc("p0.2"), %arg1: tensor<4096x16384xbf16> {ttcore.argument_type = #ttcore.argument_type<parameter>, ttcore.shard_status = #ttcore.shard_status<unsharded>, ttir.name = "l__self___down_weight"} loc("p1.4"), %arg2: tensor<1x1x4096xbf16> {ttcore.argument_type = #ttcore.argument_type<input>, ttcore.shard_status = #ttcore.shard_status<unsharded>, ttir.name = "args_0"} loc("p2.6")) -> (tensor<1x1x4096xbf16> {ttcore.shard_status = #ttcore.shard_status<unsharded>}) {
        %0 = "ttir.mesh_shard"(%arg0) <{shard_dims = array<i64: -1, 1>, shard_direction = #ttcore.shard_direction<full_to_shard>, shard_shape = array<i64: 1, 2>, shard_type = #ttcore.shard_type<devices>}> : (tensor<16384x4096xbf16>) -> tensor<16384x2048xbf16> loc(#loc2)
        %1 = "ttir.mesh_shard"(%arg1) <{shard_dims = array<i64: -1, 1>, shard_direction = #ttcore.shard_direction<full_to_shard>, shard_shape = array<i64: 1, 2>, shard_type = #ttcore.shard_type<devices>}> : (tensor<4096x16384xbf16>) -> tensor<4096x8192xbf16> loc(#loc3)
        %2 = "ttir.mesh_shard"(%arg2) <{shard_dims = array<i64: -1>, shard_direction = #ttcore.shard_direction<full_to_shard>, shard_shape = array<i64: 1>, shard_type = #ttcore.shard_type<replicate>}> : (tensor<1x1x4096xbf16>) -> tensor<1x1x4096xbf16> loc(#loc4)
        %3 = "ttir.reshape"(%2) <{shape = [1 : i32, 4096 : i32]}> : (tensor<1x1x4096xbf16>) -> tensor<1x4096xbf16> loc(#loc5)
        %4 = "ttir.matmul"(%3, %0) <{transpose_a = false, transpose_b = true}> : (tensor<1x4096xbf16>, tensor<8192x4096xbf16>) -> tensor<1x8192xbf16> loc(#loc5)
        %5 = "ttir.gelu"(%4) : (tensor<1x8192xbf16>) -> tensor<1x8192xbf16> loc(#loc1)
        %6 = "ttir.matmul"(%5, %1) <{transpose_a = false, transpose_b = true}> : (tensor<1x8192xbf16>, tensor<4096x8192xbf16>) -> tensor<1x4096xbf16> loc(#loc6)
        %7 = "ttir.all_reduce"(%6) <{cluster_axis = 1 : ui32, reduce_type = #ttcore.reduce_type<sum>}> : (tensor<1x4096xbf16>) -> tensor<1x4096xbf16> loc(#loc6)
        %8 = "ttir.reshape"(%7) <{shape = [1 : i32, 1 : i32, 4096 : i32]}> : (tensor<1x4096xbf16>) -> tensor<1x1x4096xbf16> loc(#loc6)
        %9 = "ttir.mesh_shard"(%8) <{shard_dims = array<i64: -1>, shard_direction = #ttcore.shard_direction<shard_to_full>, shard_shape = array<i64: 1>, shard_type = #ttcore.shard_type<replicate>}> : (tensor<1x1x4096xbf16>) -> tensor<1x1x4096xbf16> loc(#loc6)
        return %9 : tensor<1x1x4096xbf16> loc(#loc)
      } loc(#loc)
    } loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("p0.2")
#loc3 = loc("p1.4")
#loc4 = loc("p2.6")
#loc5 = loc("up"("ffn.py":13:31))
#loc6 = loc("down"(#loc1))
