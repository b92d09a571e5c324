// Hardware profiles: a chip's figures and its collectives' α-β fits as JSON, written by
// `shardlens calibrate` from measurements and read by `--hardware profile.json` (and the
// language server's `hardware` setting). The bundled profiles (analysis/plan/profiles/) hold the
// built-in constants exactly, so planning with them gives the same plans.
//
//   {"shardlens_hardware_profile": 1, "name": "...", "base": "wormhole",
//    "dram_bytes", "dram_bytes_per_s", "flops_per_s", "hop_latency_us", "compute_efficiency", "dram_efficiency",
//    "collectives": {"all_reduce": {"ring": {"alpha_us", "per_step_us", "gb_per_s", "steps": "n/2"|"n-1"}, "line": {...},
//                    "mesh2d": {...}}, ..., "send": {...}}, "source"}
//
// Figures a profile leaves out are its base's. The planner reads the line and ring fits of
// all_gather, reduce_scatter, all_reduce and all_to_all; mesh2d and send are kept for other tools.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "plan/ccl_cost.h"
#include "plan/target.h"

namespace shardlens::plan {

// Reads a profile; the Hardware lives as long as the process (profiles are few and small). Null
// with `error` when the file cannot be read or is not a profile.
const Hardware* load_hardware_profile(const std::string& path, std::string& error);
// The same from JSON already read (`where` names it in errors).
const Hardware* hardware_from_profile(const nlohmann::json& profile, const std::string& where, std::string& error);

// A profile holding `hw`'s figures and every fit the planner uses (built-in ones included).
nlohmann::json hardware_profile_json(const Hardware& hw);

const char* topology_key(Topology t);  // "line", "ring"

}  // namespace shardlens::plan
