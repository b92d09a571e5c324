#include "calibrate/calibrate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "plan/ccl_cost.h"
#include "plan/hardware_profile.h"

namespace shardlens::calibrate {
namespace {

using json = nlohmann::json;

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == ',') {
      out.push_back(trim(line.substr(start, i - start)));
      start = i + 1;
    }
  return out;
}

bool parse_number(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end && *end == '\0' && std::isfinite(out);
}

const char* kCclKinds[] = {"all_gather", "reduce_scatter", "all_reduce", "all_to_all", "send"};

std::optional<plan::Ccl> planned_kind(const std::string& kind) {
  for (plan::Ccl k : {plan::Ccl::AllGather, plan::Ccl::ReduceScatter, plan::Ccl::AllReduce, plan::Ccl::AllToAll})
    if (kind == plan::ccl_name(k)) return k;
  return std::nullopt;
}

double steps(const plan::CclFit& f, const std::string& kind, int n) {
  if (kind == "send") return 0;
  return f.half_steps ? n / 2.0 : n - 1.0;
}

double bottleneck_bytes(const std::string& kind, int n, double in) {
  const double N = n;
  if (kind == "all_gather") return (N - 1) * in;
  if (kind == "reduce_scatter") return (N - 1) / N * in;
  if (kind == "all_reduce") return 2 * (N - 1) / N * in;
  if (kind == "all_to_all") return std::floor(N / 2) * std::ceil(N / 2) / N * in;
  return in;  // send
}

// Solves the k x k system a x = b (k <= 3) by Gaussian elimination; false when singular.
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  size_t k = b.size();
  for (size_t c = 0; c < k; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < k; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    double scale = 0;
    for (size_t r = 0; r < k; ++r) scale = std::max(scale, std::fabs(a[r][c]));
    if (std::fabs(a[pivot][c]) <= 1e-12 * std::max(scale, 1e-300)) return false;
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    for (size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      double f = a[r][c] / a[c][c];
      for (size_t cc = c; cc < k; ++cc) a[r][cc] -= f * a[c][cc];
      b[r] -= f * b[c];
    }
  }
  x.resize(k);
  for (size_t c = 0; c < k; ++c) x[c] = b[c] / a[c][c];
  return true;
}

// Weighted least squares of y on the chosen columns of X (weights 1/y²).
bool least_squares(const std::vector<std::vector<double>>& X, const std::vector<double>& y, const std::vector<int>& cols,
                   std::vector<double>& coef) {
  size_t k = cols.size();
  std::vector<std::vector<double>> a(k, std::vector<double>(k, 0));
  std::vector<double> b(k, 0);
  for (size_t r = 0; r < y.size(); ++r) {
    double w = 1.0 / (y[r] * y[r]);
    for (size_t i = 0; i < k; ++i) {
      b[i] += w * X[r][cols[i]] * y[r];
      for (size_t j = 0; j < k; ++j) a[i][j] += w * X[r][cols[i]] * X[r][cols[j]];
    }
  }
  // Columns on different scales (1, steps, MB): normalise for the elimination.
  std::vector<double> s(k, 1);
  for (size_t i = 0; i < k; ++i) s[i] = a[i][i] > 0 ? std::sqrt(a[i][i]) : 1;
  for (size_t i = 0; i < k; ++i) {
    b[i] /= s[i];
    for (size_t j = 0; j < k; ++j) a[i][j] /= s[i] * s[j];
  }
  if (!solve(a, b, coef)) return false;
  for (size_t i = 0; i < k; ++i) coef[i] /= s[i];
  return true;
}

}  // namespace

double model_us(const plan::CclFit& f, const std::string& kind, int devices, double bytes) {
  return f.alpha_us + f.per_step_us * steps(f, kind, devices) + bottleneck_bytes(kind, devices, bytes) / (f.gb_per_s * 1e3);
}

Csv parse_measurements(std::string_view text) {
  Csv csv;
  std::vector<std::string> columns;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') {
      if (end == text.size()) break;
      continue;
    }
    auto cells = split_csv(t);
    if (!cells.empty() && cells[0] == "kind") {  // a header
      columns = cells;
      for (const char* need : {"us"})
        if (std::find(columns.begin(), columns.end(), need) == columns.end())
          csv.errors.push_back("line " + std::to_string(line_no) + ": the header has no '" + need + "' column");
      continue;
    }
    if (columns.empty()) {
      csv.errors.push_back("line " + std::to_string(line_no) + ": data before the header (kind,topology,devices,bytes,us)");
      continue;
    }
    auto cell = [&](const char* name) -> std::string {
      auto it = std::find(columns.begin(), columns.end(), name);
      if (it == columns.end()) return "";
      size_t i = static_cast<size_t>(it - columns.begin());
      return i < cells.size() ? cells[i] : "";
    };
    Measurement m;
    m.line = line_no;
    m.kind = cell("kind");
    std::string bad;
    double devices = 0;
    if (m.kind == "compute") {
      if (!parse_number(cell("flops"), m.flops) || m.flops < 0) bad = "flops";
      else if (!parse_number(cell("bytes"), m.bytes) || m.bytes < 0) bad = "bytes";
    } else if (std::find(std::begin(kCclKinds), std::end(kCclKinds), m.kind) != std::end(kCclKinds)) {
      m.topology = cell("topology");
      if (m.topology != "line" && m.topology != "ring" && m.topology != "mesh2d") bad = "topology (line, ring or mesh2d)";
      else if (!parse_number(cell("devices"), devices) || devices < 2 || devices != std::floor(devices)) bad = "devices (an integer >= 2)";
      else if (!parse_number(cell("bytes"), m.bytes) || m.bytes < 0) bad = "bytes";
      m.devices = static_cast<int>(devices);
    } else {
      bad = "kind (all_reduce, all_gather, reduce_scatter, all_to_all, send or compute)";
    }
    if (bad.empty() && (!parse_number(cell("us"), m.us) || m.us <= 0)) bad = "us (a positive time)";
    if (!bad.empty()) {
      csv.errors.push_back("line " + std::to_string(line_no) + ": bad " + bad + " in '" + t + "'");
      continue;
    }
    csv.rows.push_back(std::move(m));
    if (end == text.size()) break;
  }
  return csv;
}

Calibration fit(const std::vector<Measurement>& rows, const plan::Hardware& base) {
  Calibration c;
  std::map<std::pair<std::string, std::string>, std::vector<const Measurement*>> groups;
  std::vector<const Measurement*> compute;
  for (auto& m : rows) {
    if (m.kind == "compute") compute.push_back(&m);
    else groups[{m.kind, m.topology}].push_back(&m);
  }
  for (auto& [key, ms] : groups) {
    auto& [kind, topology] = key;
    GroupFit g;
    g.kind = kind;
    g.topology = topology;
    g.rows = static_cast<int>(ms.size());
    // Start from the base's fit (the send and mesh2d fits start from the line one).
    auto planned = planned_kind(kind);
    plan::Topology topo = topology == "ring" ? plan::Topology::Ring : plan::Topology::Line;
    g.fit = plan::builtin_ccl_fit(base, planned.value_or(plan::Ccl::AllGather), topo);
    if (!planned) g.fit.per_step_us = 0;
    if (topology == "mesh2d") g.fit.half_steps = false;
    std::vector<std::vector<double>> X;
    std::vector<double> y;
    std::map<int, int> device_counts;
    std::map<double, int> byte_sizes;
    for (auto* m : ms) {
      X.push_back({1.0, steps(g.fit, kind, m->devices), bottleneck_bytes(kind, m->devices, m->bytes) / 1e3});
      y.push_back(m->us);
      ++device_counts[m->devices];
      ++byte_sizes[m->bytes];
    }
    // Which terms the data can tell apart: the step term needs two device counts, the bandwidth two sizes.
    std::vector<int> cols = {0};
    bool fit_steps = kind != "send" && device_counts.size() >= 2;
    bool fit_bw = byte_sizes.size() >= 2 || device_counts.size() >= 2;
    if (fit_steps) cols.push_back(1);
    if (fit_bw) cols.push_back(2);
    // Terms not fitted keep the base's value: move them to the left-hand side.
    std::vector<double> y_fit = y;
    for (size_t r = 0; r < y.size(); ++r) {
      if (!fit_steps) y_fit[r] -= g.fit.per_step_us * X[r][1];
      if (!fit_bw) y_fit[r] -= X[r][2] / g.fit.gb_per_s;
    }
    std::vector<double> coef;
    bool ok = std::all_of(y_fit.begin(), y_fit.end(), [](double v) { return v > 0; }) && least_squares(X, y_fit, cols, coef);
    if (!ok) {
      g.notes.push_back("the measurements do not determine a fit: kept the base's");
    } else {
      size_t i = 0;
      double alpha = coef[i++];
      double step = fit_steps ? coef[i++] : g.fit.per_step_us;
      double inv_bw = fit_bw ? coef[i++] : 1.0 / g.fit.gb_per_s;
      if (inv_bw <= 0) {
        g.notes.push_back("the fitted bandwidth is not positive (times do not grow with bytes): kept the base's bandwidth");
        inv_bw = 1.0 / g.fit.gb_per_s;
      }
      g.fit.alpha_us = alpha;
      g.fit.per_step_us = step;
      g.fit.gb_per_s = 1.0 / inv_bw;
      if (!fit_steps && kind != "send") g.notes.push_back("one device count only: the per-step latency is the base's");
      if (!fit_bw) g.notes.push_back("one size only: the bandwidth is the base's");
      if (g.fit.alpha_us < 0) g.notes.push_back("the fitted fixed latency is negative: more small-message rows would pin it");
    }
    double sq = 0;
    for (auto* m : ms) {
      RowFit r{m->line, kind, topology, m->us, model_us(g.fit, kind, m->devices, m->bytes)};
      sq += r.error_pct() * r.error_pct();
      c.rows.push_back(r);
    }
    g.rms_error_pct = std::sqrt(sq / static_cast<double>(ms.size()));
    c.collectives.push_back(std::move(g));
  }
  if (!compute.empty()) {
    // Roofline: each row is compute- or memory-bound; classify under the current estimate, fit each
    // side's one parameter, repeat until the classification settles.
    double a = 1e6 / (base.flops_per_s * base.compute_efficiency);  // µs per flop
    double b = 1e6 / (base.dram_bytes_per_s * base.dram_efficiency);  // µs per byte
    for (int iter = 0; iter < 50; ++iter) {
      double na = 0, da = 0, nb = 0, db = 0;
      for (auto* m : compute) {
        double w = 1.0 / (m->us * m->us);
        if (m->flops * a >= m->bytes * b) {
          na += w * m->flops * m->us;
          da += w * m->flops * m->flops;
        } else {
          nb += w * m->bytes * m->us;
          db += w * m->bytes * m->bytes;
        }
      }
      double a2 = da > 0 ? na / da : a, b2 = db > 0 ? nb / db : b;
      bool settled = std::fabs(a2 - a) <= 1e-12 * a && std::fabs(b2 - b) <= 1e-12 * b;
      a = a2;
      b = b2;
      if (settled) break;
    }
    bool any_compute = false, any_memory = false;
    for (auto* m : compute) (m->flops * a >= m->bytes * b ? any_compute : any_memory) = true;
    if (any_compute) c.compute_efficiency = 1e6 / (a * base.flops_per_s);
    else c.notes.push_back("no compute-bound row: the compute efficiency is the base's");
    if (any_memory) c.dram_efficiency = 1e6 / (b * base.dram_bytes_per_s);
    else c.notes.push_back("no memory-bound row: the DRAM efficiency is the base's");
    for (auto* m : compute) c.rows.push_back({m->line, "compute", "", m->us, std::max(m->flops * a, m->bytes * b)});
  }
  std::sort(c.rows.begin(), c.rows.end(), [](const RowFit& x, const RowFit& y) { return x.line < y.line; });
  return c;
}

json profile(const Calibration& c, const plan::Hardware& base, const std::string& name) {
  json p = plan::hardware_profile_json(base);
  p["name"] = name;
  if (c.compute_efficiency) p["compute_efficiency"] = *c.compute_efficiency;
  if (c.dram_efficiency) p["dram_efficiency"] = *c.dram_efficiency;
  for (auto& g : c.collectives)
    p["collectives"][g.kind][g.topology] = {{"alpha_us", g.fit.alpha_us},
                                            {"per_step_us", g.fit.per_step_us},
                                            {"gb_per_s", g.fit.gb_per_s},
                                            {"steps", g.fit.half_steps ? "n/2" : "n-1"},
                                            {"rows", g.rows},
                                            {"rms_error_pct", g.rms_error_pct}};
  if (!c.rows.empty())
    p["source"] = "shardlens calibrate: " + std::to_string(c.rows.size()) + " measurements fitted over " + base.name + "'s figures";
  return p;
}

std::string to_text(const Calibration& c) {
  std::ostringstream o;
  char buf[256];
  for (auto& g : c.collectives) {
    std::snprintf(buf, sizeof buf, "%-14s %-6s  alpha %.3f us  per step %.3f us (%s)  %.2f GB/s  %d rows, rms error %.1f%%\n", g.kind.c_str(),
                  g.topology.c_str(), g.fit.alpha_us, g.fit.per_step_us, g.fit.half_steps ? "N/2" : "N-1", g.fit.gb_per_s, g.rows, g.rms_error_pct);
    o << buf;
    for (auto& n : g.notes) o << "    note: " << n << "\n";
  }
  if (c.compute_efficiency) {
    std::snprintf(buf, sizeof buf, "compute efficiency %.3f of peak\n", *c.compute_efficiency);
    o << buf;
  }
  if (c.dram_efficiency) {
    std::snprintf(buf, sizeof buf, "DRAM efficiency %.3f of peak\n", *c.dram_efficiency);
    o << buf;
  }
  for (auto& n : c.notes) o << "note: " << n << "\n";
  o << "per row (line: kind topology measured -> fitted, error):\n";
  for (auto& r : c.rows) {
    std::snprintf(buf, sizeof buf, "  %d: %s %s %.3f us -> %.3f us, %+.1f%%\n", r.line, r.kind.c_str(), r.topology.c_str(), r.measured_us,
                  r.fitted_us, r.error_pct());
    o << buf;
  }
  return o.str();
}

}  // namespace shardlens::calibrate
