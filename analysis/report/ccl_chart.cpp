// The collective-bytes chart: one panel per mesh, one horizontal bar per component with
// collectives, stacked by collective kind, bytes per forward on a linear scale. Plain SVG 1.1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

#include "report/report.h"
#include "report/report_facts.h"
#include "plan/plan_output.h"

namespace shardlens::report {
namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0 (other than tab/newline).
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
        else out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

const char* kind_colour(plan::Ccl kind) {
  switch (kind) {
    case plan::Ccl::AllReduce: return "#2563eb";
    case plan::Ccl::AllGather: return "#16a34a";
    case plan::Ccl::ReduceScatter: return "#d97706";
    case plan::Ccl::AllToAll: return "#dc2626";
  }
  return "#6b7280";
}

constexpr double kWidth = 780, kLabel = 210, kBarArea = 400, kRow = 24, kBarHeight = 16, kPad = 16;

std::string short_label(const std::string& s) {
  if (s.size() <= 30) return s;
  return s.substr(0, 28) + "…";
}

}  // namespace

std::string ccl_chart_svg(const ir::ModelIR& model, const plan::PlanResult& result) {
  std::ostringstream body;
  double y = kPad + 22;
  // One scale for every panel, so that meshes compare at a glance.
  std::vector<detail::Budget> budgets;
  double max_bytes = 0;
  for (auto& mp : result.meshes) {
    budgets.push_back(detail::ccl_budget(detail::component_groups(model, mp), mp));
    for (auto& c : budgets.back().components) max_bytes = std::max(max_bytes, c.bytes);
  }
  for (size_t m = 0; m < result.meshes.size(); ++m) {
    const auto& mp = result.meshes[m];
    const auto& budget = budgets[m];
    std::string mesh = mp.mesh.shape_string();
    body << "  <g class=\"mesh\" data-mesh=\"" << xml_escape(mesh) << "\" data-collectives=\"" << budget.collectives
         << "\" data-bytes=\"" << std::llround(budget.bytes) << "\">\n";
    y += 8;
    body << "    <text x=\"" << num(kPad) << "\" y=\"" << num(y + 12) << "\" font-weight=\"bold\">" << xml_escape(detail::mesh_label(mp.mesh))
         << ": " << budget.collectives << (budget.collectives == 1 ? " collective, " : " collectives, ") << xml_escape(plan::format_bytes(budget.bytes)) << " per forward</text>\n";
    y += 22;
    if (budget.components.empty()) {
      body << "    <text x=\"" << num(kPad + 8) << "\" y=\"" << num(y + 12) << "\" fill=\"#4b5563\">no collectives: every component runs without communication</text>\n";
      y += kRow;
    }
    for (auto& c : budget.components) {
      body << "    <g class=\"bar\" data-component=\"" << xml_escape(c.component) << "\" data-bytes=\"" << std::llround(c.bytes)
           << "\" data-collectives=\"" << c.collectives << "\">\n";
      body << "      <title>" << xml_escape(c.component + ": " + std::to_string(c.collectives) + (c.collectives == 1 ? " collective, " : " collectives, ") + plan::format_bytes(c.bytes) +
                                              " per forward, " + plan::format_us(c.time_us))
           << "</title>\n";
      body << "      <text x=\"" << num(kPad + kLabel - 8) << "\" y=\"" << num(y + 12) << "\" text-anchor=\"end\">" << xml_escape(short_label(c.component))
           << "</text>\n";
      double x = kPad + kLabel;
      double total_w = max_bytes > 0 ? kBarArea * c.bytes / max_bytes : 0;
      total_w = std::max(total_w, 2.0);
      // Segments by kind, in a fixed order.
      for (plan::Ccl kind : {plan::Ccl::AllReduce, plan::Ccl::ReduceScatter, plan::Ccl::AllGather, plan::Ccl::AllToAll}) {
        double bytes = 0;
        for (auto& r : budget.rows)
          if (r.component == c.component && r.kind == kind) bytes += r.total_bytes();
        if (bytes <= 0) continue;
        double w = c.bytes > 0 ? total_w * bytes / c.bytes : total_w;
        body << "      <rect class=\"segment\" data-kind=\"" << plan::ccl_name(kind) << "\" x=\"" << num(x) << "\" y=\"" << num(y + 2)
             << "\" width=\"" << num(std::max(w, 1.0)) << "\" height=\"" << num(kBarHeight) << "\" fill=\"" << kind_colour(kind) << "\"/>\n";
        x += w;
      }
      body << "      <text x=\"" << num(kPad + kLabel + total_w + 6) << "\" y=\"" << num(y + 12) << "\" fill=\"#374151\">"
           << xml_escape(plan::format_bytes(c.bytes) + " · " + std::to_string(c.collectives) + (c.collectives == 1 ? " CCL" : " CCLs")) << "</text>\n";
      body << "    </g>\n";
      y += kRow;
    }
    body << "  </g>\n";
    y += 8;
  }
  // Legend.
  double lx = kPad;
  std::ostringstream legend;
  legend << "  <g class=\"legend\">\n";
  for (plan::Ccl kind : {plan::Ccl::AllReduce, plan::Ccl::ReduceScatter, plan::Ccl::AllGather, plan::Ccl::AllToAll}) {
    legend << "    <rect x=\"" << num(lx) << "\" y=\"" << num(y + 4) << "\" width=\"12\" height=\"12\" fill=\"" << kind_colour(kind) << "\"/>\n";
    legend << "    <text x=\"" << num(lx + 16) << "\" y=\"" << num(y + 14) << "\">" << plan::ccl_name(kind) << "</text>\n";
    lx += 130;
  }
  legend << "  </g>\n";
  y += 28;
  std::ostringstream svg;
  std::string title = "Collective bytes per forward, by component: " + model.model;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << num(kWidth) << "\" height=\"" << num(y) << "\" viewBox=\"0 0 "
      << num(kWidth) << " " << num(y) << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  svg << "  <title>" << xml_escape(title) << "</title>\n";
  svg << "  <desc>Written by shardlens report from the plan's collectives (logical tensor bytes x count per forward); "
         "one bar per component with collectives, one panel per mesh, one linear scale for all panels.</desc>\n";
  svg << "  <rect x=\"0\" y=\"0\" width=\"" << num(kWidth) << "\" height=\"" << num(y) << "\" fill=\"#ffffff\"/>\n";
  svg << "  <text x=\"" << num(kPad) << "\" y=\"" << num(kPad + 8) << "\" font-size=\"14\" font-weight=\"bold\">" << xml_escape(title) << "</text>\n";
  svg << body.str() << legend.str() << "</svg>\n";
  return svg.str();
}

std::string chart_path_for(const std::string& markdown_path) {
  std::string base = markdown_path;
  size_t slash = base.find_last_of('/');
  size_t dot = base.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1) && base.substr(dot) == ".md") base.erase(dot);
  return base + ".ccl_bytes.svg";
}

}  // namespace shardlens::report
