// `shardlens calibrate`: fits the cost model's constants to measurements. Collectives follow the
// α-β form of the built-in fits (plan/ccl_cost.cpp, SHARDING.md §4): per kind and topology,
//   us = alpha_us + per_step_us * steps(N) + bottleneck_bytes(N, bytes) / (gb_per_s * 1e3)
// with `bytes` the per-device input, steps N/2 on a ring and N-1 otherwise, the bottleneck bytes
// (N-1)·in for all_gather, (N-1)/N·in for reduce_scatter, 2(N-1)/N·in for all_reduce,
// ⌊N/2⌋⌈N/2⌉/N·in for all_to_all and `in` for send; compute rows fit the roofline
// us = max(flops / (peak · compute_efficiency), bytes / (dram · dram_efficiency)).
// Least squares on relative error (each row weighs by 1/us², as times span orders of magnitude).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/target.h"

namespace shardlens::calibrate {

struct Measurement {
  std::string kind;      // all_reduce | all_gather | reduce_scatter | all_to_all | send | compute
  std::string topology;  // line | ring | mesh2d ("" for compute)
  int devices = 0;
  double bytes = 0;  // per-device input bytes (compute: DRAM bytes moved)
  double flops = 0;  // compute rows
  double us = 0;     // measured time
  int line = 0;      // in the CSV
};

// CSV with a header naming its columns (kind,topology,devices,bytes,us and, for compute rows,
// flops); a second header line may start a section with other columns. Bad rows are listed in
// `errors` with their line and skipped.
struct Csv {
  std::vector<Measurement> rows;
  std::vector<std::string> errors;
};
Csv parse_measurements(std::string_view text);

struct RowFit {
  int line = 0;
  std::string kind, topology;
  double measured_us = 0, fitted_us = 0;
  double error_pct() const { return measured_us > 0 ? 100.0 * (fitted_us - measured_us) / measured_us : 0; }
};

struct GroupFit {
  std::string kind, topology;
  plan::CclFit fit;
  int rows = 0;
  double rms_error_pct = 0;
  std::vector<std::string> notes;  // terms the data could not determine (kept from the base)
};

struct Calibration {
  std::vector<GroupFit> collectives;
  std::optional<double> compute_efficiency, dram_efficiency;
  std::vector<RowFit> rows;
  std::vector<std::string> notes;
};

// Fits what the measurements cover; everything else stays as in `base`.
Calibration fit(const std::vector<Measurement>& rows, const plan::Hardware& base);

// The hardware profile (plan/hardware_profile.h) of `base` with the fitted figures.
nlohmann::json profile(const Calibration& c, const plan::Hardware& base, const std::string& name);

std::string to_text(const Calibration& c);

// The model's time for one measurement under a fit (steps and bottleneck bytes as above).
double model_us(const plan::CclFit& f, const std::string& kind, int devices, double bytes);

}  // namespace shardlens::calibrate
