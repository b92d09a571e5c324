#include "plan/target.h"

#include <cctype>

namespace shardlens::plan {
namespace {

struct Preset {
  const char* name;
  int rows, cols;
  Topology rows_topology, cols_topology;
};

// Mesh shapes per system (SHARDING.md §2, from tt-xla's mesh_shapes.md and tt-forge-models
// loaders). A ring exists only on the 8-chip T3K and on Galaxy axes; elsewhere the fabric is a line.
const Preset kPresets[] = {
    {"n150", 1, 1, Topology::Line, Topology::Line},    {"p150", 1, 1, Topology::Line, Topology::Line},
    {"n300", 1, 2, Topology::Line, Topology::Line},    {"p300", 1, 2, Topology::Line, Topology::Line},
    {"quietbox", 1, 4, Topology::Line, Topology::Line}, {"qb2", 1, 4, Topology::Line, Topology::Line},
    {"t3k", 1, 8, Topology::Line, Topology::Ring},     {"t3k-1x8", 1, 8, Topology::Line, Topology::Ring},
    {"t3k-2x4", 2, 4, Topology::Line, Topology::Line}, {"galaxy", 8, 4, Topology::Ring, Topology::Ring},
    {"galaxy-4x8", 4, 8, Topology::Ring, Topology::Ring},
};

}  // namespace

const char* accepted_meshes() {
  return "RxC with positive integers (rows = \"batch\" axis, columns = \"model\" axis), e.g. 1x8 or 8x4, or a "
         "preset: n150, p150 (1x1), n300, p300 (1x2), quietbox, qb2 (1x4), t3k (1x8), t3k-2x4, galaxy (8x4), "
         "galaxy-4x8";
}

std::optional<Mesh> parse_mesh(const std::string& text, std::string& error) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& p : kPresets)
    if (t == p.name) return Mesh{p.rows, p.cols, p.name, p.rows_topology, p.cols_topology};
  auto x = t.find('x');
  auto digits = [](const std::string& s) {
    if (s.empty() || s.size() > 4) return false;
    for (char c : s)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
  };
  if (x == std::string::npos || !digits(t.substr(0, x)) || !digits(t.substr(x + 1))) {
    error = "mesh '" + text + "' is not understood; accepted: " + accepted_meshes();
    return std::nullopt;
  }
  int rows = std::stoi(t.substr(0, x)), cols = std::stoi(t.substr(x + 1));
  if (rows <= 0 || cols <= 0) {
    error = "mesh '" + text + "' has an empty axis; accepted: " + accepted_meshes();
    return std::nullopt;
  }
  Mesh m{rows, cols, "", Topology::Line, Topology::Line};
  // The shapes that exist as rings: the 8-chip T3K (1x8) and Galaxy's axes (8x4, 4x8).
  if (rows == 1 && cols == 8) m.col_topology = Topology::Ring;
  if ((rows == 8 && cols == 4) || (rows == 4 && cols == 8)) m.row_topology = m.col_topology = Topology::Ring;
  return m;
}

const Hardware* find_hardware(const std::string& name) {
  // SHARDING.md §4 (chip figures from Tenstorrent's product pages and tt-metal tech reports).
  static const Hardware kWormhole{"wormhole", 12e9, 288e9, 74e12, 0.711,
                                  "Wormhole: 12 GB GDDR6 at 288 GB/s, ~74 TFLOPS FP16 (n150); CCLs fitted in "
                                  "tt-metal tech_reports/CCLs/CCL_bandwidth.md"};
  static const Hardware kBlackhole{"blackhole", 32e9, 512e9, 332e12, 0.515,
                                   "Blackhole: 32 GB at 512 GB/s, ~332 TFLOPS BF16 (120-core firmware); Galaxy "
                                   "ring bus 94 GB/s all-gather, 86 GB/s all-reduce", true};
  if (name == "wormhole") return &kWormhole;
  if (name == "blackhole") return &kBlackhole;
  return nullptr;
}

}  // namespace shardlens::plan
