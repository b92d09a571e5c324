#include "plan/hardware_profile.h"

#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

namespace shardlens::plan {
namespace {

using json = nlohmann::json;

const Ccl kPlannedKinds[] = {Ccl::AllGather, Ccl::ReduceScatter, Ccl::AllReduce, Ccl::AllToAll};

struct Stored {
  std::string source;
  Hardware hw;
};

// Loaded profiles by their text: the same file read again gives the same Hardware.
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::unique_ptr<Stored>>& registry() {
  static std::map<std::string, std::unique_ptr<Stored>> r;
  return r;
}

bool number(const json& j, const char* key, double& out, std::string& error, const std::string& where) {
  if (!j.contains(key)) return true;
  if (!j[key].is_number() || j[key].get<double>() < 0) {
    error = where + ": \"" + key + "\" must be a non-negative number";
    return false;
  }
  out = j[key].get<double>();
  return true;
}

}  // namespace

const char* topology_key(Topology t) { return t == Topology::Ring ? "ring" : "line"; }

json hardware_profile_json(const Hardware& hw) {
  json j;
  j["shardlens_hardware_profile"] = 1;
  j["name"] = hw.name;
  j["base"] = hw.blackhole_fits ? "blackhole" : "wormhole";
  j["dram_bytes"] = hw.dram_bytes;
  j["dram_bytes_per_s"] = hw.dram_bytes_per_s;
  j["flops_per_s"] = hw.flops_per_s;
  j["hop_latency_us"] = hw.hop_latency_us;
  j["compute_efficiency"] = hw.compute_efficiency;
  j["dram_efficiency"] = hw.dram_efficiency;
  json ccl = json::object();
  for (Ccl kind : kPlannedKinds)
    for (Topology t : {Topology::Line, Topology::Ring}) {
      size_t slot = static_cast<size_t>(kind) * 2 + (t == Topology::Ring ? 1 : 0);
      CclFit f = slot < hw.ccl_fits.size() ? hw.ccl_fits[slot] : builtin_ccl_fit(hw, kind, t);
      ccl[ccl_name(kind)][topology_key(t)] = {
          {"alpha_us", f.alpha_us}, {"per_step_us", f.per_step_us}, {"gb_per_s", f.gb_per_s}, {"steps", f.half_steps ? "n/2" : "n-1"}};
    }
  j["collectives"] = ccl;
  j["source"] = hw.source ? hw.source : "";
  return j;
}

const Hardware* hardware_from_profile(const json& p, const std::string& where, std::string& error) {
  if (!p.is_object() || !p.contains("shardlens_hardware_profile")) {
    error = where + ": not a shardlens hardware profile (no \"shardlens_hardware_profile\" key)";
    return nullptr;
  }
  std::string base_name = p.value("base", "wormhole");
  const Hardware* base = find_hardware(base_name);
  if (!base) {
    error = where + ": \"base\" must be wormhole or blackhole, not '" + base_name + "'";
    return nullptr;
  }
  auto stored = std::make_unique<Stored>();
  Hardware& hw = stored->hw;
  hw = *base;
  hw.name = p.contains("name") && p["name"].is_string() ? p["name"].get<std::string>() : base->name;
  if (!number(p, "dram_bytes", hw.dram_bytes, error, where) || !number(p, "dram_bytes_per_s", hw.dram_bytes_per_s, error, where) ||
      !number(p, "flops_per_s", hw.flops_per_s, error, where) || !number(p, "hop_latency_us", hw.hop_latency_us, error, where) ||
      !number(p, "compute_efficiency", hw.compute_efficiency, error, where) || !number(p, "dram_efficiency", hw.dram_efficiency, error, where))
    return nullptr;
  if (hw.flops_per_s <= 0 || hw.dram_bytes_per_s <= 0 || hw.compute_efficiency <= 0 || hw.dram_efficiency <= 0) {
    error = where + ": peak figures and efficiencies must be positive";
    return nullptr;
  }
  hw.ccl_fits.resize(8);
  for (Ccl kind : kPlannedKinds)
    for (Topology t : {Topology::Line, Topology::Ring}) {
      size_t slot = static_cast<size_t>(kind) * 2 + (t == Topology::Ring ? 1 : 0);
      CclFit f = builtin_ccl_fit(*base, kind, t);
      if (p.contains("collectives") && p["collectives"].contains(ccl_name(kind)) && p["collectives"][ccl_name(kind)].contains(topology_key(t))) {
        const json& fj = p["collectives"][ccl_name(kind)][topology_key(t)];
        std::string w = where + ": collectives." + ccl_name(kind) + "." + topology_key(t);
        if (!number(fj, "alpha_us", f.alpha_us, error, w) || !number(fj, "per_step_us", f.per_step_us, error, w) ||
            !number(fj, "gb_per_s", f.gb_per_s, error, w))
          return nullptr;
        if (f.gb_per_s <= 0) {
          error = w + ": \"gb_per_s\" must be positive";
          return nullptr;
        }
        if (fj.contains("steps")) f.half_steps = fj["steps"] == "n/2";
      }
      hw.ccl_fits[slot] = f;
    }
  stored->source = p.contains("source") && p["source"].is_string() ? p["source"].get<std::string>() : "hardware profile " + where;
  std::string key = p.dump();
  hw.fingerprint = std::hash<std::string>()(key) | 1;  // never 0, the built-ins' value
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& slot = registry()[key];
  if (!slot) {
    slot = std::move(stored);
    slot->hw.source = slot->source.c_str();
  }
  return &slot->hw;
}

const Hardware* load_hardware_profile(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read hardware profile '" + path + "'";
    return nullptr;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  json p = json::parse(ss.str(), nullptr, false);
  if (p.is_discarded()) {
    error = "hardware profile '" + path + "' is not JSON";
    return nullptr;
  }
  return hardware_from_profile(p, path, error);
}

const Hardware* resolve_hardware(const std::string& name_or_path, std::string& error) {
  if (const Hardware* hw = find_hardware(name_or_path)) return hw;
  bool looks_like_path = name_or_path.find('/') != std::string::npos || name_or_path.find(".json") != std::string::npos;
  if (!looks_like_path) {
    error = "hardware must be wormhole or blackhole, or the path of a hardware profile (profile.json), not '" + name_or_path + "'";
    return nullptr;
  }
  return load_hardware_profile(name_or_path, error);
}

}  // namespace shardlens::plan
