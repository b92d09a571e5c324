// ffn_n300.shlo.mlir with up.weight sharded on its input dim (1) instead of its output dim (0)
// (check-ir: weight_sharding, up.weight).
#loc1 = loc("ffn.py":13:15)
#loc2 = loc("up"("ffn.py":13:31))
#loc3 = loc("down"(#loc1))
module @SyncTensorsGraph.21 attributes {mhlo.cross_program_prefetches = [], mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["batch"=1, "model"=2]>
  func.func @main(%arg0: tensor<16384x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, ttcore.argument_type = #ttcore.argument_type<parameter>, ttir.name = "l__self___up_weight"} loc("p0.2"), %arg1: tensor<4096x16384xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>, ttcore.argument_type = #ttcore.argument_type<parameter>, ttir.name = "l__self___down_weight"} loc("p1.4"), %arg2: tensor<1x1x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>, ttcore.argument_type = #ttcore.argument_type<input>, ttir.name = "args_0"} loc("p2.6")) -> (tensor<1x1x4096xbf16> {jax.result_info = ""}) {
    %0 = sdy.manual_computation(%arg0, %arg1, %arg2) in_shardings=[<@mesh, [{}, {"model"}]>, <@mesh, [{}, {"model"}]>, <@mesh, [{}, {}, {}]>] out_shardings=[<@mesh, [{}, {}, {}]>] manual_axes={"batch", "model"} (%arg3: tensor<16384x2048xbf16>, %arg4: tensor<4096x8192xbf16>, %arg5: tensor<1x1x4096xbf16>) {
      %1 = stablehlo.reshape %arg5 : (tensor<1x1x4096xbf16>) -> tensor<1x4096xbf16> loc(#loc2)
      %2 = stablehlo.dot_general %1, %arg3, contracting_dims = [1] x [1] : (tensor<1x4096xbf16>, tensor<8192x4096xbf16>) -> tensor<1x8192xbf16> loc(#loc2)
      %3 = stablehlo.logistic %2 : tensor<1x8192xbf16> loc(#loc1)
      %4 = stablehlo.multiply %2, %3 : tensor<1x8192xbf16> loc(#loc1)
      %5 = stablehlo.dot_general %4, %arg4, contracting_dims = [1] x [1] : (tensor<1x8192xbf16>, tensor<4096x8192xbf16>) -> tensor<1x4096xbf16> loc(#loc3)
      %6 = "stablehlo.all_reduce"(%5) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg6: tensor<bf16> loc(unknown), %arg7: tensor<bf16> loc(unknown)):
        %8 = stablehlo.add %arg6, %arg7 : tensor<bf16> loc(#loc3)
        stablehlo.return %8 : tensor<bf16> loc(#loc3)
      }) : (tensor<1x4096xbf16>) -> tensor<1x4096xbf16> loc(#loc3)
      %7 = stablehlo.reshape %6 : (tensor<1x4096xbf16>) -> tensor<1x1x4096xbf16> loc(#loc3)
      sdy.return %7 : tensor<1x1x4096xbf16> loc(#loc3)
    } : (tensor<16384x4096xbf16>, tensor<4096x16384xbf16>, tensor<1x1x4096xbf16>) -> tensor<1x1x4096xbf16> loc(#loc3)
    return %0 : tensor<1x1x4096xbf16> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
