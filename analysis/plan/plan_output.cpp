#include "plan/plan_output.h"

#include <cstdio>
#include <sstream>

#include "ir/ir_json.h"

namespace shardlens::plan {
namespace {

nlohmann::json span_json(const ir::Span& s) {
  if (!s.valid()) return nullptr;
  return ir::span_to_json(s);
}

nlohmann::json totals_json(const Totals& t) {
  return {{"collectives", t.collectives},
          {"bytes", static_cast<long long>(std::llround(t.bytes))},
          {"est_time_us", t.est_time_us},
          {"compute_us", t.compute_us},
          {"ccl_us", t.ccl_us},
          {"compute_parallel_fraction", t.compute_parallel_fraction},
          {"memory_per_device_bytes", static_cast<long long>(std::llround(t.memory_per_device_bytes))},
          {"parameter_bytes_per_device", static_cast<long long>(std::llround(t.parameter_bytes_per_device))},
          {"kv_cache_bytes_per_device", static_cast<long long>(std::llround(t.kv_cache_bytes_per_device))}};
}

std::string workload_string(const PlanOptions& o) {
  return std::string(o.workload.phase == Phase::Decode ? "decode" : "prefill") + ", batch " + std::to_string(o.workload.batch) +
         ", " + (o.workload.phase == Phase::Decode ? "context " : "sequence ") + std::to_string(o.workload.seq) + ", " +
         o.workload.dtype + ", " + (o.hardware ? o.hardware->name : "wormhole");
}

}  // namespace

std::string format_bytes(double b) {
  char buf[64];
  if (b >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  else if (b >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024));
  else if (b >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

std::string format_us(double us) {
  char buf[64];
  if (us >= 1000) std::snprintf(buf, sizeof buf, "%.2f ms", us / 1000);
  else std::snprintf(buf, sizeof buf, "%.1f µs", us);
  return buf;
}

nlohmann::json to_json(const PlanResult& r, const ir::ModelIR& model, const PlanOptions& o) {
  nlohmann::json j;
  j["model"] = model.model;
  j["source"] = model.source;
  j["workload"] = {{"batch", o.workload.batch},
                   {"seq", o.workload.seq},
                   {"phase", o.workload.phase == Phase::Decode ? "decode" : "prefill"},
                   {"dtype", o.workload.dtype},
                   {"hardware", o.hardware ? o.hardware->name : "wormhole"},
                   {"strategy", o.strategy == StrategyMode::Tensor ? "tensor" : "auto"}};
  j["meshes"] = nlohmann::json::array();
  for (auto& mp : r.meshes) {
    nlohmann::json m;
    m["shape"] = {mp.mesh.rows, mp.mesh.cols};
    m["axes"] = {"batch", "model"};
    m["mode"] = mp.mode;
    m["memory_fallback"] = mp.memory_fallback;
    if (!mp.blockers.empty()) m["blockers"] = mp.blockers;
    m["parameters"] = nlohmann::json::array();
    for (const ParameterLayout p : mp.parameters) {
      nlohmann::json spec = nullptr;
      if (auto full = p.spec()) {
        spec = nlohmann::json::array();
        for (auto& axes : *full) {
          if (axes.empty()) spec.push_back(nullptr);
          else if (axes.size() == 1) spec.push_back(axes[0]);
          else spec.push_back(axes);
        }
      }
      nlohmann::json pj{{"name", std::string(p.name)}, {"layout", std::string(p.layout)}, {"spec", spec},
                        {"span", span_json(p.span)}, {"why", std::string(p.why)}};
      // Layouts a spec cannot say: what `shardlens verify` needs to slice them.
      if (p.segments > 0) pj["segments"] = {{"dim", p.sharded_dim}, {"count", p.segments}};
      if (p.expert >= 0) pj["expert"] = {{"index", p.expert}, {"of", p.experts}};
      // The parameter's full shape: lets `check-ir` find a weight in compiled IR by its type.
      size_t index = m["parameters"].size();
      if (index < model.parameters.size() && model.parameters[index].name == p.name && model.parameters[index].shape_known)
        pj["shape"] = model.parameters[index].shape;
      m["parameters"].push_back(std::move(pj));
    }
    m["collectives"] = nlohmann::json::array();
    auto layout_json = [](const Collective::Layout& l) {
      nlohmann::json j{{"kind", l.kind}};
      if (l.dim >= 0) j["dim"] = l.dim;
      if (l.segments > 0) j["segments"] = l.segments;
      return j;
    };
    for (auto& c : mp.collectives) {
      nlohmann::json cj{{"kind", ccl_name(c.kind)}, {"axis", c.axis}, {"count", c.count},
                        {"bytes", static_cast<long long>(std::llround(c.bytes))}, {"time_us", c.time_us},
                        {"at", c.at}, {"why", c.why}, {"tensor", c.tensor}, {"span", span_json(c.span)},
                        {"from", layout_json(c.from)}, {"to", layout_json(c.to)}, {"applies_to", c.applies_to},
                        {"instances", c.instances}};
      if (c.input >= 0) cj["input"] = c.input;
      m["collectives"].push_back(std::move(cj));
    }
    m["slices"] = nlohmann::json::array();
    for (auto& c : mp.slices) {
      nlohmann::json cj{{"axis", c.axis}, {"count", c.count}, {"at", c.at}, {"tensor", c.tensor}, {"span", span_json(c.span)},
                        {"from", layout_json(c.from)}, {"to", layout_json(c.to)}, {"applies_to", c.applies_to},
                        {"instances", c.instances}};
      if (c.input >= 0) cj["input"] = c.input;
      m["slices"].push_back(std::move(cj));
    }
    m["totals"] = totals_json(mp.totals);
    m["alternatives"] = nlohmann::json::array();
    for (auto& a : mp.alternatives) {
      nlohmann::json aj{{"name", a.name}, {"feasible", a.feasible}, {"why_rejected", a.why_rejected}};
      aj["totals"] = a.feasible ? totals_json(a.totals) : nlohmann::json(nullptr);
      if (a.stages > 0) {
        aj["stages"] = a.stages;
        aj["microbatches"] = a.microbatches;
        aj["bubble_fraction"] = a.bubble_fraction;
        aj["stage_spans"] = a.stage_spans;
        aj["blocks_per_stage"] = a.blocks_per_stage;
      }
      m["alternatives"].push_back(aj);
    }
    m["components"] = nlohmann::json::array();
    for (auto& c : mp.components)
      m["components"].push_back({{"module", c.module}, {"class", c.class_name}, {"count", c.count}, {"layout", c.layout},
                                 {"collectives", c.collectives}, {"collectives_total", c.collectives_total}, {"bytes", static_cast<long long>(std::llround(c.bytes))},
                                 {"ccl_us", c.ccl_us}, {"compute_us", c.compute_us}, {"span", span_json(c.span)}});
    m["notes"] = mp.notes;
    j["meshes"].push_back(m);
  }
  j["diagnostics"] = nlohmann::json::array();
  for (auto& d : r.diagnostics)
    j["diagnostics"].push_back({{"code", d.code}, {"severity", d.severity}, {"message", d.message}, {"span", span_json(d.span)}, {"mesh", d.mesh}});
  j["notes"] = r.notes;
  j["inputs"] = model.dataflow.input_descriptions;
  j["plan_ms"] = r.plan_ms;
  return j;
}

std::string to_text(const PlanResult& r, const ir::ModelIR& model, const PlanOptions& o) {
  std::ostringstream out;
  out << model.model << " (" << model.source << ") — " << workload_string(o) << "\n";
  for (auto& d : model.dataflow.input_descriptions) out << "  input " << d << "\n";
  for (auto& mp : r.meshes) {
    out << "\nmesh " << mp.mesh.shape_string() << (mp.mesh.preset.empty() ? "" : " (" + mp.mesh.preset + ")")
        << "  axes (batch, model)";
    if (mp.mesh.rows > 1) out << "  rows: " << mp.mode;
    out << "\n";
    char line[512];
    std::snprintf(line, sizeof line, "  %-28s %5s  %-52s %6s %11s %11s\n", "component", "x", "layout", "CCLs", "bytes", "CCL time");
    out << line;
    for (auto& c : mp.components) {
      std::string layout = c.layout.size() > 52 ? c.layout.substr(0, 49) + "..." : c.layout;
      std::snprintf(line, sizeof line, "  %-28s %5d  %-52s %6d %11s %11s\n", (c.module.empty() ? c.class_name : c.module).c_str(),
                    c.count, layout.c_str(), c.collectives_total, format_bytes(c.bytes * c.count).c_str(),
                    format_us(c.ccl_us * c.count).c_str());
      out << line;
    }
    std::snprintf(line, sizeof line, "  %-28s %5s  %-52s %6d %11s %11s\n", "Total", "", "", mp.totals.collectives,
                  format_bytes(mp.totals.bytes).c_str(), format_us(mp.totals.ccl_us).c_str());
    out << line;
    out << "  collectives per forward:\n";
    for (auto& c : mp.collectives)
      out << "    " << c.count << " x " << ccl_name(c.kind) << " of " << format_bytes(c.bytes) << " " << c.tensor << " at " << c.at
          << " (" << format_us(c.time_us) << " each): " << c.why << "\n";
    if (mp.collectives.empty()) out << "    none\n";
    out << "  estimate: " << format_us(mp.totals.est_time_us) << " per forward (compute " << format_us(mp.totals.compute_us)
        << ", collectives " << format_us(mp.totals.ccl_us) << "); " << static_cast<int>(mp.totals.compute_parallel_fraction * 100 + 0.5)
        << "% of FLOPs parallel; " << format_bytes(mp.totals.memory_per_device_bytes) << " per device\n";
    if (!mp.alternatives.empty()) out << "  rejected:\n";
    for (auto& a : mp.alternatives)
      out << "    " << a.name << ": " << a.why_rejected << "\n";
    for (auto& n : mp.notes) out << "  note: " << n << "\n";
  }
  if (!r.diagnostics.empty()) out << "\n";
  for (auto& d : r.diagnostics)
    out << ir::span_location(d.span, model.source) << ": " << d.severity << " [" << d.code << "] " << d.message << "\n";
  for (auto& n : r.notes) out << "note: " << n << "\n";
  return out.str();
}

std::vector<int64_t> per_device_shape(const std::vector<int64_t>& shape, const ParameterLayout& layout, const Mesh& mesh) {
  std::vector<int64_t> out = shape;
  if (layout.sharded_dim < 0 || layout.sharded_dim >= static_cast<int>(out.size()) || !layout.axes) return out;
  int64_t divisor = 1;
  for (auto& a : *layout.axes) divisor *= a == "batch" ? mesh.rows : mesh.cols;
  if (divisor > 0) out[layout.sharded_dim] = (out[layout.sharded_dim] + divisor - 1) / divisor;
  return out;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace shardlens::plan
