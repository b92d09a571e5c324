// What a plan is for: the device mesh, the hardware, and the workload.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlens::plan {

enum class Topology : uint8_t { Line, Ring };

struct Mesh {
  int rows = 1;  // axis "batch"
  int cols = 1;  // axis "model"
  std::string preset;  // "t3k", "" when given as RxC
  Topology row_topology = Topology::Line;
  Topology col_topology = Topology::Line;
  int devices() const { return rows * cols; }
  std::string shape_string() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

// "1x8", "8x4", or a preset (n150, n300, t3k, t3k-2x4, galaxy, ...). Error text lists what is accepted.
std::optional<Mesh> parse_mesh(const std::string& text, std::string& error);
const char* accepted_meshes();

enum class Phase : uint8_t { Prefill, Decode };

struct Workload {
  int64_t batch = 1;
  int64_t seq = 2048;          // prefill: tokens per sequence; decode: context length (KV cache)
  Phase phase = Phase::Decode; // decode: one new token per sequence per forward
  std::string dtype = "bf16";  // bf16 | fp32 | bfp8
  double dtype_bytes() const {  // bytes per element (inline: the search asks per tensor and transition)
    if (std::string_view(dtype) == "fp32") return 4.0;
    if (std::string_view(dtype) == "bfp8") return 1.0625;  // 8-bit mantissas plus one shared exponent per 16 values
    return 2.0;
  }
  int64_t tokens_per_forward() const { return phase == Phase::Decode ? 1 : seq; }
};

// One collective's α-β fit: alpha_us + per_step_us * steps + bottleneck bytes / gb_per_s, where steps
// is N/2 (half_steps, the ring fits) or N-1.
struct CclFit {
  double alpha_us = 0;
  double per_step_us = 0;
  double gb_per_s = 1;
  bool half_steps = false;
};

struct Hardware {
  std::string name;
  double dram_bytes;         // per chip
  double dram_bytes_per_s;   // per chip
  double flops_per_s;        // dense bf16 per chip
  double hop_latency_us;     // per Ethernet hop
  const char* source;
  bool blackhole_fits = false;  // its collectives follow the Blackhole fits (ccl_cost.cpp), not Wormhole's
  // From a hardware profile (plan/hardware_profile.h): fits per collective kind (Ccl order) and
  // topology (line, ring), and the fraction of peak compute / DRAM bandwidth reached; empty fits
  // mean the built-in ones. `fingerprint` tells profiles of the same name apart (the planner's memo).
  std::vector<CclFit> ccl_fits = {};
  double compute_efficiency = 1.0;
  double dram_efficiency = 1.0;
  uint64_t fingerprint = 0;
};

// "wormhole" (default) or "blackhole"; null when unknown.
const Hardware* find_hardware(const std::string& name);
// A built-in name, or the path of a hardware profile (JSON, see plan/hardware_profile.h); null with
// `error` saying why.
const Hardware* resolve_hardware(const std::string& name_or_path, std::string& error);

}  // namespace shardlens::plan
