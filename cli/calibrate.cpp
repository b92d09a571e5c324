// `shardlens calibrate MEASUREMENTS.csv -o profile.json [--base wormhole|blackhole|PROFILE.json] [--name NAME]
// [--format text|json]`: fits α-β per collective kind and topology and the compute / DRAM efficiency to
// measured times, prints each row's fit error, and writes a hardware profile for `--hardware`.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "calibrate/calibrate.h"
#include "commands.h"
#include "flags.h"
#include "cli_ir.h"
#include "session/script_pipeline.h"
#include "plan/hardware_profile.h"

namespace shardlens::cli {
namespace {

const char* kCalibrateUsage =
    "usage: shardlens calibrate MEASUREMENTS.csv -o PROFILE.json [--base wormhole|blackhole|PROFILE.json] [--name NAME]\n"
    "                           [--format text|json]\n"
    "  MEASUREMENTS.csv: header kind,topology,devices,bytes,us (kind all_reduce|all_gather|reduce_scatter|\n"
    "  all_to_all|send, topology line|ring|mesh2d, bytes per device); compute rows: kind compute with flops,bytes,us\n"
    "  (add a flops column, or a second header line kind,flops,bytes,us). Figures not measured stay the base's.\n"
    "  -o writes the profile (- prints it); plan with it: shardlens plan FILE --hardware PROFILE.json\n"
    "  exit: 0 written; 1 a file cannot be read or written, or a row is bad (each is listed); 2 usage.\n";

}  // namespace

int run_calibrate(const std::vector<std::string>& args) {
  std::string csv_path, output, base_name = "wormhole", name, format = "text";
  FlagReader flags("shardlens calibrate", kCalibrateUsage, args);
  while (flags.next()) {
    if (flags.format(format)) continue;
    if (flags.is("-o") || flags.is("--output") || flags.is("--base") || flags.is("--name")) {
      auto v = flags.value();
      if (!v) break;
      if (flags.is("--base")) base_name = *v;
      else if (flags.is("--name")) name = *v;
      else output = *v;
    } else if (flags.option()) {
      flags.unknown();
    } else if (!csv_path.empty()) {
      flags.fail("one measurements file, not '" + csv_path + "' and '" + flags.name() + "'");
    } else {
      csv_path = flags.name();
    }
  }
  if (auto code = flags.exit_code()) return *code;
  if (csv_path.empty() || output.empty()) {
    std::fprintf(stderr, "shardlens calibrate: %s\n%s", csv_path.empty() ? "no measurements file given" : "-o PROFILE.json is needed",
                 kCalibrateUsage);
    return 2;
  }
  std::string error;
  const plan::Hardware* base = plan::resolve_hardware(base_name, error);
  if (!base) {
    std::fprintf(stderr, "shardlens calibrate: --base: %s\n", error.c_str());
    return 2;
  }
  std::string text;
  if (!session::read_file(csv_path, text, error)) {
    std::fprintf(stderr, "shardlens calibrate: %s\n", error.c_str());
    return 1;
  }
  auto csv = calibrate::parse_measurements(text);
  if (!csv.errors.empty()) {
    for (auto& e : csv.errors) std::fprintf(stderr, "shardlens calibrate: %s: %s\n", csv_path.c_str(), e.c_str());
    std::fprintf(stderr, "shardlens calibrate: nothing written (fix the rows above)\n");
    return 1;
  }
  auto fitted = calibrate::fit(csv.rows, *base);
  if (name.empty()) name = base->name + "-calibrated";
  auto profile = calibrate::profile(fitted, *base, name);
  std::string profile_text = profile.dump(2) + "\n";
  if (output == "-") {
    std::cout << profile_text;
  } else {
    std::ofstream out(output, std::ios::binary | std::ios::trunc);
    if (!out || !(out << profile_text) || !out.flush()) {
      std::fprintf(stderr, "shardlens calibrate: cannot write '%s'\n", output.c_str());
      return 1;
    }
  }
  if (format == "json") {
    nlohmann::json rows = nlohmann::json::array();
    for (auto& r : fitted.rows)
      rows.push_back({{"line", r.line}, {"kind", r.kind}, {"topology", r.topology}, {"measured_us", r.measured_us},
                      {"fitted_us", r.fitted_us}, {"error_pct", r.error_pct()}});
    nlohmann::json summary{{"profile", profile}, {"rows", rows}, {"notes", fitted.notes}};
    (output == "-" ? std::cerr : std::cout) << summary.dump(2) << "\n";
  } else {
    (output == "-" ? std::cerr : std::cout) << calibrate::to_text(fitted) << (output == "-" ? "" : "wrote " + output + "\n");
  }
  return 0;
}

}  // namespace shardlens::cli
