#include "plan/ccl_cost.h"

#include <cmath>
#include <string>

namespace shardlens::plan {

const char* ccl_name(Ccl kind) {
  switch (kind) {
    case Ccl::AllGather: return "all_gather";
    case Ccl::ReduceScatter: return "reduce_scatter";
    case Ccl::AllReduce: return "all_reduce";
    case Ccl::AllToAll: return "all_to_all";
  }
  return "?";
}

namespace {

using Fit = CclFit;

// Wormhole T3K bf16 kernel fits, tt-metal tech_reports/CCLs/CCL_bandwidth.md (SHARDING.md §4):
//   all_gather     line 4.47 + 1.91(N-1) + (N-1)in/11.8GB/s     ring 4.47 + 2.50 N/2 + (N-1)in/20.8GB/s
//   reduce_scatter line 3.23 + 3.97(N-1) + (N-1)/N in/11.1GB/s   ring 3.23 + 3.06 N/2 + (N-1)/N in/16.7GB/s
//   all_reduce     line 9.07 + 5.82(N-1) + 2(N-1)/N in/10.9GB/s  ring 9.07 + 5.25 N/2 + 2(N-1)/N in/18.4GB/s
//   all_to_all     line 2.99 + 2.14(N-1) + ⌊N/2⌋⌈N/2⌉/N in/7.6  ring 2.99 + 3.40 N/2 + .../16.5GB/s
Fit wormhole_fit(Ccl kind, Topology t) {
  bool ring = t == Topology::Ring;
  switch (kind) {
    case Ccl::AllGather: return ring ? Fit{4.47, 2.50, 20.8, true} : Fit{4.47, 1.91, 11.8};
    case Ccl::ReduceScatter: return ring ? Fit{3.23, 3.06, 16.7, true} : Fit{3.23, 3.97, 11.1};
    case Ccl::AllReduce: return ring ? Fit{9.07, 5.25, 18.4, true} : Fit{9.07, 5.82, 10.9};
    case Ccl::AllToAll: return ring ? Fit{2.99, 3.40, 16.5, true} : Fit{2.99, 2.14, 7.6};
  }
  return {};
}

// Blackhole: SHARDING.md §4 gives the Galaxy ring bus bandwidth (94 GB/s all-gather, 86 GB/s
// all-reduce) and small 4 KB all-reduce latencies (9 µs at N=2, 23 µs at N=8). Latency terms are
// fitted to those two points (α + s(N-1): s = 14/6 = 2.33 µs, α = 6.67 µs) and kept for every kind;
// reduce-scatter uses the all-gather bandwidth, all-to-all the Wormhole ring/line ratio (16.5/18.4).
// Links run at half speed today, which the measured bus figures already include.
Fit blackhole_fit(Ccl kind, Topology t) {
  double line_factor = 11.8 / 20.8;  // Wormhole's line/ring bandwidth ratio
  double bw = 94.0;
  if (kind == Ccl::AllReduce) bw = 86.0;
  if (kind == Ccl::AllToAll) bw = 86.0 * 16.5 / 18.4;
  if (t == Topology::Line) bw *= line_factor;
  return Fit{6.67, 2.33, bw};
}

}  // namespace

CclFit builtin_ccl_fit(const Hardware& hw, Ccl kind, Topology topology) {
  // Blackhole's latency term counts N-1 steps on rings too (fitted to two measured points).
  return hw.blackhole_fits ? blackhole_fit(kind, topology) : wormhole_fit(kind, topology);
}

double ccl_time_us(const Hardware& hw, Ccl kind, int n, Topology topology, double tensor_bytes) {
  if (n <= 1) return 0;
  const double N = n;
  size_t slot = static_cast<size_t>(kind) * 2 + (topology == Topology::Ring ? 1 : 0);
  Fit f = slot < hw.ccl_fits.size() ? hw.ccl_fits[slot] : builtin_ccl_fit(hw, kind, topology);
  double steps = f.half_steps ? N / 2 : N - 1;
  double bytes_per_us = f.gb_per_s * 1e3;  // GB/s = 1e3 bytes/µs
  double moved = 0;  // bytes through the bottleneck, from the per-device input size
  switch (kind) {
    case Ccl::AllGather: moved = (N - 1) * (tensor_bytes / N); break;         // input = one shard
    case Ccl::ReduceScatter: moved = (N - 1) / N * tensor_bytes; break;       // input = whole partial
    case Ccl::AllReduce: moved = 2 * (N - 1) / N * tensor_bytes; break;
    case Ccl::AllToAll: moved = std::floor(N / 2) * std::ceil(N / 2) / N * (tensor_bytes / N); break;
  }
  return f.alpha_us + f.per_step_us * steps + moved / bytes_per_us;
}

}  // namespace shardlens::plan
