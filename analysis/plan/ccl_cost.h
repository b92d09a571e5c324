// The time of one collective on one mesh axis: fitted α-β formulas per kind and topology.
#pragma once

#include <cstdint>

#include "plan/target.h"

namespace shardlens::plan {

enum class Ccl : uint8_t { AllGather, ReduceScatter, AllReduce, AllToAll };
const char* ccl_name(Ccl kind);  // "all_gather", ...

// The built-in fit of a kind on a topology for `hw`'s chip family (Wormhole's or Blackhole's).
CclFit builtin_ccl_fit(const Hardware& hw, Ccl kind, Topology topology);

// `tensor_bytes`: the full logical tensor being gathered / reduced / exchanged on this axis.
double ccl_time_us(const Hardware& hw, Ccl kind, int devices, Topology topology, double tensor_bytes);

}  // namespace shardlens::plan
