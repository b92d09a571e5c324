// What moving a tensor between specs costs on one mesh axis (SHARDING.md §3):
//   sharded -> replicated = all-gather; partial -> replicated = all-reduce; partial -> sharded =
//   reduce-scatter; sharded on one dim -> sharded on another = all-to-all; replicated -> sharded =
//   a local slice, free.
#include <algorithm>
#include <functional>

#include "plan/search.h"

namespace shardlens::plan::detail {

uint64_t Context::hash() const {
  uint64_t h = static_cast<uint64_t>(n) * 1000003u + static_cast<uint64_t>(topology);
  auto mix = [&](uint64_t v) { h = mix64(h, v); };
  mix(std::hash<std::string>()(hw ? hw->name : ""));
  mix(hw ? hw->fingerprint : 0);
  mix(static_cast<uint64_t>(workload.batch));
  mix(static_cast<uint64_t>(workload.seq));
  mix(static_cast<uint64_t>(workload.phase));
  mix(std::hash<std::string>()(workload.dtype));
  mix(std::hash<double>()(activation_scale));
  mix(filter.hash());
  mix(std::hash<double>()(memory_lambda));
  mix(std::hash<double>()(ccl_penalty_us));
  mix(unpinned_replicated);
  mix(static_cast<uint64_t>(rows) * 7 + static_cast<uint64_t>(row_topology));
  mix(static_cast<uint64_t>(expert_rows) * 13 + 5);
  mix(static_cast<uint64_t>(sequence_rows) * 17 + 3);
  mix(preferred_hash);
  mix(std::hash<double>()(preference_us));
  mix(std::hash<double>()(replication_us));
  mix(tensor_required_hash);
  std::vector<std::pair<int, uint32_t>> pins;
  for (auto& [k, v] : pinned_params) pins.emplace_back(k, v.code());
  for (auto& [k, v] : pinned_outputs) pins.emplace_back(-1 - k, v.code());
  std::sort(pins.begin(), pins.end());
  for (auto& [k, v] : pins) mix(static_cast<uint64_t>(k) * 7919u + v);
  return h;
}

double tensor_bytes(const Prepared& prep, int t, const Context& ctx) {
  double elem = prep.fixed_element_bytes[t] ? prep.fixed_element_bytes[t] : ctx.workload.dtype_bytes();
  double b = prep.numel[t] * elem;
  if (!prep.stored[t]) b *= ctx.activation_scale;
  return b;
}

// tt-mlir lowers a generic all-to-all into many point-to-point transfers: "expect it far slower
// than the fitted figure" (SHARDING.md §4). Until it is measured, the planner charges all-to-all
// this many times its fitted kernel time; reported times use the same figure, so the choice shows.
constexpr double kAllToAllLoweringFactor = 4.0;

double collective_us(const Context& ctx, Ccl kind, double bytes) {
  if (kind == Ccl::AllToAll) {
    double t = 0;
    if (ctx.rows <= 1) t = ccl_time_us(*ctx.hw, kind, ctx.n, ctx.topology, bytes);
    else t = ccl_time_us(*ctx.hw, kind, ctx.n / ctx.rows, ctx.topology, bytes) + ccl_time_us(*ctx.hw, kind, ctx.rows, ctx.row_topology, bytes);
    return t * kAllToAllLoweringFactor;
  }
  if (ctx.rows <= 1) return ccl_time_us(*ctx.hw, kind, ctx.n, ctx.topology, bytes);
  int cols = ctx.n / ctx.rows;
  // Columns first, then rows. All-gather: gather T/rows along the columns, then T along the rows;
  // reduce-scatter mirrors it; all-reduce and all-to-all handle the whole tensor on both axes.
  switch (kind) {
    case Ccl::AllGather:
      return ccl_time_us(*ctx.hw, kind, cols, ctx.topology, bytes / ctx.rows) + ccl_time_us(*ctx.hw, kind, ctx.rows, ctx.row_topology, bytes);
    case Ccl::ReduceScatter:
      return ccl_time_us(*ctx.hw, kind, ctx.rows, ctx.row_topology, bytes) + ccl_time_us(*ctx.hw, kind, cols, ctx.topology, bytes / ctx.rows);
    default:
      return ccl_time_us(*ctx.hw, kind, cols, ctx.topology, bytes) + ccl_time_us(*ctx.hw, kind, ctx.rows, ctx.row_topology, bytes);
  }
}

double rows_collective_us(const Context& ctx, Ccl kind, double bytes) {
  const double t = ccl_time_us(*ctx.hw, kind, std::max(ctx.expert_rows, ctx.sequence_rows), ctx.row_topology, bytes);
  return kind == Ccl::AllToAll ? t * kAllToAllLoweringFactor : t;
}

// Gathering a channel-sharded image activation hangs in today's compiler (tt-mlir #8462, VAE
// all_gather; SHARDING.md §6): such plans are kept only when nothing else exists.
constexpr double kKnownHangPenaltyUs = 1e9;

double transition_us(const Prepared& prep, int t, Spec from, Spec to, const Context& ctx, int* ccl, double* bytes) {
  *ccl = -1;
  *bytes = 0;
  if (from == to) return 0;
  if (from.kind == kReplicated) return 0;  // local slice, or keep one copy as a partial sum
  double b = tensor_bytes(prep, t, ctx);
  Ccl kind;
  if (from.kind == kPartial) kind = to.kind == kReplicated ? Ccl::AllReduce : Ccl::ReduceScatter;
  else if (to.kind == kReplicated || to.kind == kPartial) kind = Ccl::AllGather;
  else kind = Ccl::AllToAll;
  if (to.kind == kPartial && from.sharded()) {
    // sharded -> partial: zero-fill the rest locally; no collective needed
    return 0;
  }
  *ccl = static_cast<int>(kind);
  *bytes = b;
  double limit = 0;
  if ((kind == Ccl::AllGather || kind == Ccl::AllToAll) && from.sharded() && from.dim >= 0 &&
      static_cast<size_t>(from.dim) < prep.roles[t].size() && prep.roles[t][from.dim] == Role::Channels &&
      prep.roles[t].size() >= 4)
    limit = kKnownHangPenaltyUs;
  return collective_us(ctx, kind, b) + ctx.ccl_penalty_us + limit;
}

}  // namespace shardlens::plan::detail
