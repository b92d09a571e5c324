#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "report/block_diagram.h"
#include "report/citations.h"
#include "report/compiler_limits.h"
#include "report/report_facts.h"
#include "ir/ir_text.h"
#include "plan/plan_output.h"

namespace shardlens::report {
namespace {

using detail::Citations;
using detail::md_code;
using detail::md_escape;

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", fraction * 100);
  return buf;
}

std::string plural(long long n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

// "+7.73 ms" / "−4.7 µs".
std::string signed_us(double us) { return (us < 0 ? "−" : "+") + plan::format_us(std::fabs(us)); }

std::string bytes_exact(double b) { return ir::format_count(std::llround(b)) + " B"; }

const plan::Hardware& hardware_of(const plan::PlanOptions& o) {
  return o.hardware ? *o.hardware : *plan::find_hardware("wormhole");
}

// The systems SHARDING.md §2 lists per device count.
std::string system_of(const plan::Mesh& m) {
  static const std::map<std::string, std::string> presets{
      {"n150", "n150"}, {"p150", "p150"}, {"n300", "n300"}, {"p300", "p300"}, {"quietbox", "QuietBox"}, {"qb2", "QuietBox 2"},
      {"t3k", "T3K / LoudBox"}, {"t3k-2x4", "T3K / LoudBox"}, {"galaxy", "Galaxy"}, {"galaxy-4x8", "Galaxy (LLM loaders' DP4 × TP8)"}};
  if (auto it = presets.find(m.preset); it != presets.end()) return it->second;
  switch (m.devices()) {
    case 1: return "n150 / p150";
    case 2: return "n300 / p300";
    case 4: return "QuietBox / QB2";
    case 8: return "T3K / LoudBox";
    case 32: return "Galaxy";
    default: return "—";
  }
}

const char* topology_name(plan::Topology t) { return t == plan::Topology::Ring ? "ring" : "line"; }

std::string citation_for_layout(Citations& cites, std::string_view layout, bool norm) {
  if (layout == "column" || layout == "row" || layout == "column_segments") return cites.cite("megatron");
  if (layout == "vocab") return cites.cite("megatron-layers");
  if (layout == "expert") return cites.cite("gshard") + ", " + cites.cite("torchtitan-ep");
  if (layout == "sequence") return cites.cite("sequence-parallel");
  if (layout == "hidden") return norm ? cites.cite("tt-xla-video-vae") : cites.cite("gspmd");
  return "";
}

std::string ccl_kinds_summary(const plan::MeshPlan& mp) {
  std::map<std::string, int> by_kind;
  for (auto& c : mp.collectives) by_kind[plan::ccl_name(c.kind)] += c.count;
  std::string s;
  for (auto& [k, n] : by_kind) s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + k;
  return s;
}

// Per-instance fold of parameter rows: "moe.experts.*.w1.weight" ×8 when their layouts agree.
struct ParamRow {
  std::string name;  // relative (pattern)
  std::vector<int64_t> shape;
  int count = 0;
  std::vector<const plan::ParameterLayout*> per_mesh;  // first parameter of the fold
};

class ReportWriter {
 public:
  ReportWriter(const ir::ModelIR& model, const plan::PlanResult& result, const plan::PlanOptions& options, const ReportOptions& ro)
      : model_(model), result_(result), options_(options), ro_(ro), hw_(hardware_of(options)) {
    for (auto& mp : result.meshes) {
      layouts_.push_back(detail::layouts_by_name(mp));
      groups_.push_back(detail::component_groups(model, mp));
      budgets_.push_back(detail::ccl_budget(groups_.back(), mp));
      pairs_.push_back(detail::column_row_pairs(model, mp));
      folded_.push_back(detail::folded_pairs(pairs_.back()));
    }
    for (size_t i = 0; i < model.parameters.size(); ++i) param_index_.emplace(model.parameters[i].name, static_cast<int>(i));
    parent_.assign(model.modules.size(), -1);
    for (size_t m = 0; m < model.modules.size(); ++m)
      for (int c : model.modules[m].children)
        if (c >= 0 && c < static_cast<int>(model.modules.size())) parent_[c] = static_cast<int>(m);
  }

  std::string write() {
    std::ostringstream out;
    header(out);
    model_and_target(out);
    architecture(out);
    strategy(out);
    components(out);
    budget(out);
    bottlenecks(out);
    sources(out);
    return out.str();
  }

 private:
  const ir::ModelIR& model_;
  const plan::PlanResult& result_;
  const plan::PlanOptions& options_;
  const ReportOptions& ro_;
  const plan::Hardware& hw_;
  Citations cites_;
  std::vector<std::map<std::string_view, plan::ParameterLayout>> layouts_;
  std::vector<std::vector<detail::ComponentGroup>> groups_;
  std::vector<detail::Budget> budgets_;
  std::vector<std::vector<detail::LayoutPair>> pairs_;
  std::vector<std::vector<detail::LayoutPair>> folded_;
  std::map<std::string_view, int> param_index_;
  std::vector<int> parent_;
  std::map<size_t, plan::PlanResult> baselines_;  // per mesh, single-mesh plan without extra pins

  std::string script() const { return ro_.script_path.empty() ? model_.source : ro_.script_path; }

  std::string regenerate_line() const {
    if (!ro_.regenerate.empty()) return ro_.regenerate;
    std::string s = "shardlens report " + script();
    for (auto& mp : result_.meshes) s += " --mesh " + (mp.mesh.preset.empty() ? mp.mesh.shape_string() : mp.mesh.preset);
    const auto& w = options_.workload;
    if (w.phase == plan::Phase::Prefill) s += " --phase prefill";
    if (w.batch != 1) s += " --batch " + std::to_string(w.batch);
    if (w.seq != 2048) s += " --seq " + std::to_string(w.seq);
    if (w.dtype != "bf16") s += " --dtype " + w.dtype;
    if (options_.hardware && options_.hardware->name != "wormhole") s += " --hardware " + options_.hardware->name;
    if (options_.strategy == plan::StrategyMode::Tensor) s += " --strategy tensor";
    return s;
  }

  std::string layout_at(size_t mesh, std::string_view param) const {
    auto it = layouts_[mesh].find(param);
    return it == layouts_[mesh].end() ? std::string() : std::string(it->second.layout);
  }

  // "column" when every mesh agrees, else "column (1x8) / row (1x2)".
  std::string layouts_text(std::string_view param) const {
    std::vector<std::string> ls;
    for (size_t k = 0; k < result_.meshes.size(); ++k) ls.push_back(layout_at(k, param));
    bool same = std::all_of(ls.begin(), ls.end(), [&](const std::string& l) { return l == ls[0]; });
    if (same) return ls.empty() || ls[0].empty() ? "not planned" : ls[0];
    std::string s;
    for (size_t k = 0; k < ls.size(); ++k)
      s += (k ? " / " : "") + (ls[k].empty() ? std::string("not planned") : ls[k]) + " (" + result_.meshes[k].mesh.shape_string() + ")";
    return s;
  }

  // ---------------------------------------------------------------------------------------------
  void header(std::ostream& out) {
    out << "# Sharding analysis — " << md_escape(model_.model) << "\n\n";
    out << "> Written by `shardlens report` from a static reading of " << md_code(script())
        << " (no Python was run) and the planner's cost model (fitted collective formulas from "
        << cites_.cite("tt-metal-ccl") << " and per-op rooflines — estimates, not measurements). Sections follow the "
        << cites_.cite("tt-xla-skill") << " template. Regenerate with:\n>\n> ```sh\n> " << regenerate_line() << "\n> ```\n\n";
    if (!result_.ok) out << "**The plan failed:** " << md_escape(result_.error) << "\n\n";
  }

  void model_and_target(std::ostream& out) {
    out << "## 1. Model & target\n\n";
    double dtype_bytes = options_.workload.dtype_bytes();
    ir::BigInt total = model_.total_parameters();
    std::set<std::string> declared;
    for (auto& p : model_.parameters) declared.insert(p.dtype);
    std::string declared_s;
    for (auto& d : declared) declared_s += (declared_s.empty() ? "" : ", ") + d;
    const auto& w = options_.workload;
    out << "- **Model / variant:** " << md_code(model_.model) << " (root: " << md_code(model_.root_expression.empty() ? model_.model : model_.root_expression)
        << "), " << ir::format_count(total) << " parameters in " << model_.parameters.size() << " tensors ("
        << plan::format_bytes(total.to_double() * dtype_bytes) << " in " << w.dtype << "), " << model_.modules.size() << " modules\n";
    out << "- **Load script:** " << md_code(script()) << "\n";
    out << "- **dtype:** " << w.dtype << " for planning (the script declares " << (declared_s.empty() ? std::string("no parameters") : declared_s) << ")\n";
    out << "- **Workload:** " << (w.phase == plan::Phase::Decode ? "decode (one new token per sequence per forward)" : "prefill")
        << ", batch " << w.batch << ", " << (w.phase == plan::Phase::Decode ? "context " : "sequence ") << w.seq << " tokens, "
        << (options_.strategy == plan::StrategyMode::Tensor ? "tensor-parallel layouts only" : "all strategies") << "\n";
    for (auto& d : model_.dataflow.input_descriptions) out << "- **Input:** " << md_code(d) << "\n";
    out << "- **Hardware:** " << md_escape(hw_.name) << ", " << plan::format_bytes(hw_.dram_bytes) << " DRAM per chip at "
        << std::llround(hw_.dram_bytes_per_s / 1e9) << " GB/s, " << std::llround(hw_.flops_per_s / 1e12) << " TFLOPS peak";
    if (hw_.source && *hw_.source) out << " (" << cites_.linkify(hw_.source) << ")";
    out << "\n";
    out << "- **Device count and target mesh shape(s):** " << result_.meshes.size() << " mesh" << (result_.meshes.size() == 1 ? "" : "es")
        << ", axes `(\"batch\", \"model\")` as tt-forge-models loaders name them\n\n";
    out << "| mesh | devices | system | rows × cols | fabric (rows / cols) | rows used for |\n|---|---|---|---|---|---|\n";
    for (auto& mp : result_.meshes) {
      out << "| " << md_escape(detail::mesh_label(mp.mesh)) << " | " << mp.mesh.devices() << " | " << md_escape(system_of(mp.mesh)) << " | "
          << mp.mesh.rows << " × " << mp.mesh.cols << " | " << topology_name(mp.mesh.row_topology) << " / " << topology_name(mp.mesh.col_topology)
          << " | " << (mp.mesh.rows > 1 ? md_escape(mp.mode) : "— (one row)") << " |\n";
    }
    out << "\n";
    if (!model_.unresolved.empty()) {
      out << "The front end could not resolve " << model_.unresolved.size() << " item" << (model_.unresolved.size() == 1 ? "" : "s")
          << " (`shardlens inspect` lists them all):\n\n";
      for (size_t i = 0; i < model_.unresolved.size() && i < 5; ++i)
        out << "- " << (model_.unresolved[i].span.in_document() ? "line " + std::to_string(model_.unresolved[i].span.line)
                                                                  : ir::span_location(model_.unresolved[i].span, "")) << ": " << md_code(model_.unresolved[i].what) << " — "
            << md_escape(model_.unresolved[i].reason) << "\n";
      if (model_.unresolved.size() > 5) out << "- … and " << model_.unresolved.size() - 5 << " more\n";
      out << "\n";
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Pair markers of a concrete module on the first mesh: "P1 column", "P2 row".
  std::map<std::string, std::vector<std::string>> pair_markers() const {
    std::map<std::string, std::vector<std::string>> marks;
    if (result_.meshes.empty()) return marks;
    const auto& folded = folded_[0];
    for (auto& p : pairs_[0]) {
      detail::LayoutPair f = detail::folded_pairs({p})[0];
      size_t id = 0;
      for (size_t i = 0; i < folded.size(); ++i)
        if (folded[i].row == f.row && folded[i].columns == f.columns) id = i + 1;
      std::string tag = "P" + std::to_string(id);
      for (auto& c : p.columns) {
        auto& v = marks[c];
        if (std::find(v.begin(), v.end(), tag + " column") == v.end()) v.push_back(tag + " column");
      }
      auto& v = marks[p.row];
      if (std::find(v.begin(), v.end(), tag + " row") == v.end()) v.push_back(tag + " row");
    }
    return marks;
  }

  std::string own_params_text(int m) const {
    const auto& mod = model_.modules[m];
    std::vector<std::string> parts;
    std::vector<std::string> ls;
    for (int p : mod.parameters) {
      const auto& par = model_.parameters[p];
      std::string key = par.name.substr(mod.name.empty() ? 0 : mod.name.size() + 1);
      parts.push_back(key + " " + (par.shape_known ? detail::shape_string(par.shape) : std::string("[?]")));
      ls.push_back(layouts_text(par.name));
    }
    if (parts.empty()) return "";
    bool same = std::all_of(ls.begin(), ls.end(), [&](const std::string& l) { return l == ls[0]; });
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i] + (same ? "" : " " + ls[i]);
    if (same) s += " · " + ls[0];
    return s;
  }

  void architecture(std::ostream& out) {
    out << "## 2. Architecture\n\n";
    if (model_.modules.empty()) {
      out << "No modules.\n\n";
      return;
    }
    auto marks = pair_markers();
    // A signature per module: class, shapes, layouts on every mesh and pair roles of its subtree,
    // relative to the module — equal signatures fold as "0-23: 24 × Block".
    std::vector<size_t> sig(model_.modules.size(), 0);
    std::function<size_t(int)> signature = [&](int m) -> size_t {
      const auto& mod = model_.modules[m];
      size_t h = std::hash<std::string>()(mod.class_name) ^ (mod.structure_hash * 1099511628211ULL);
      auto mix = [&](const std::string& s) { h = (h ^ std::hash<std::string>()(s)) * 1099511628211ULL; };
      mix(own_params_text(m));
      if (auto it = marks.find(mod.name); it != marks.end())
        for (auto& t : it->second) mix(t.substr(t.find(' ')));  // the role, not the pair number
      for (size_t i = 0; i < mod.children.size(); ++i) {
        mix(i < mod.child_keys.size() ? mod.child_keys[i] : std::to_string(i));
        h = (h ^ signature(mod.children[i])) * 1099511628211ULL;
      }
      sig[m] = h;
      return h;
    };
    signature(0);
    std::vector<std::string> lines;
    const size_t kMaxLines = 400;
    size_t omitted = 0;
    auto numeric = [](const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }); };
    std::function<void(int, const std::string&, const std::string&, const std::string&)> walk =
        [&](int m, const std::string& label, const std::string& indent, const std::string& child_indent) {
          const auto& mod = model_.modules[m];
          std::string line = indent + label + mod.class_name;
          std::string params = own_params_text(m);
          if (!params.empty()) line += " · " + params;
          if (auto it = marks.find(mod.name); it != marks.end()) {
            line += "  [";
            for (size_t i = 0; i < it->second.size(); ++i) line += (i ? ", " : "") + it->second[i];
            line += "]";
          }
          if (lines.size() < kMaxLines) lines.push_back(line);
          else ++omitted;
          // Children, folding runs of numeric keys with equal signatures.
          size_t n = mod.children.size();
          std::vector<std::pair<size_t, size_t>> runs;  // [first, last] child positions
          for (size_t i = 0; i < n;) {
            size_t j = i;
            std::string ki = i < mod.child_keys.size() ? mod.child_keys[i] : "";
            if (numeric(ki))
              while (j + 1 < n && j + 1 < mod.child_keys.size() && numeric(mod.child_keys[j + 1]) && sig[mod.children[j + 1]] == sig[mod.children[i]]) ++j;
            runs.emplace_back(i, j);
            i = j + 1;
          }
          for (size_t r = 0; r < runs.size(); ++r) {
            auto [a, b] = runs[r];
            bool last = r + 1 == runs.size();
            std::string key_a = a < mod.child_keys.size() ? mod.child_keys[a] : std::to_string(a);
            std::string key_b = b < mod.child_keys.size() ? mod.child_keys[b] : std::to_string(b);
            std::string lbl = a == b ? key_a + ": " : key_a + "-" + key_b + ": " + std::to_string(b - a + 1) + " × ";
            walk(mod.children[a], lbl, child_indent + (last ? "└── " : "├── "), child_indent + (last ? "    " : "│   "));
          }
        };
    walk(0, "", "", "");
    out << "Module tree as PyTorch builds it (repeated blocks with the same layout folded), each module's own parameters with "
           "their shapes and layout";
    if (result_.meshes.size() > 1) out << " (per mesh where the meshes differ)";
    out << "; `[P1 column]` / `[P1 row]` mark the Megatron column→row pairs of the first mesh "
        << cites_.cite("megatron") << ".\n\n```text\n";
    out << model_.model << " · " << ir::format_count(model_.total_parameters()) << " parameters\n";
    for (size_t i = 1; i < lines.size(); ++i) out << lines[i] << "\n";
    if (omitted) out << "… " << omitted << " more modules (shardlens inspect prints the whole tree)\n";
    out << "```\n\n";
    // The pairs, per mesh.
    out << "### Column → row pairs\n\n";
    for (size_t k = 0; k < result_.meshes.size(); ++k) {
      const auto& folded = folded_[k];
      if (result_.meshes.size() > 1) out << "On " << md_escape(detail::mesh_label(result_.meshes[k].mesh)) << ":\n\n";
      if (folded.empty()) {
        out << "- none: no column-parallel layer feeds a row-parallel one on this mesh\n";
      }
      for (size_t i = 0; i < folded.size(); ++i) {
        const auto& p = folded[i];
        out << "- **P" << i + 1 << "**: ";
        for (size_t c = 0; c < p.columns.size(); ++c) out << (c ? ", " : "") << md_code(p.columns[c]);
        std::string col_layout;
        for (const plan::ParameterLayout pl : result_.meshes[k].parameters)
          if (detail::module_pattern(detail::owner_of(pl.name)) == p.columns[0] && (pl.layout == "column" || pl.layout == "column_segments")) {
            col_layout = std::string(pl.layout);
            break;
          }
        out << " (" << (col_layout.empty() ? "column" : col_layout) << ") → " << md_code(p.row) << " (row): the activation between stays sharded; ";
        std::vector<std::pair<std::string, int>> at_row;  // "all_reduce of 4.0 KiB" -> count
        for (auto& c : result_.meshes[k].collectives)
          if (c.at == p.row) {
            std::string what = std::string(plan::ccl_name(c.kind)) + " of " + plan::format_bytes(c.bytes);
            auto it = std::find_if(at_row.begin(), at_row.end(), [&](auto& x) { return x.first == what; });
            if (it == at_row.end()) at_row.emplace_back(what, c.count);
            else it->second += c.count;
          }
        if (at_row.empty()) out << "no collective at " << md_code(p.row) << " (its partial sums are reduced further on)\n";
        else {
          out << "collectives the plan places at " << md_code(p.row) << " per forward: ";
          for (size_t i = 0; i < at_row.size(); ++i) out << (i ? ", " : "") << at_row[i].second << " × " << at_row[i].first;
          out << "\n";
        }
      }
      out << "\n";
    }
    // Diagrams (first mesh).
    if (result_.meshes.empty()) return;
    auto diagrams = detail::block_diagrams(model_, result_.meshes[0], groups_[0], pairs_[0]);
    out << "### Layout per block\n\n";
    out << "On " << md_escape(detail::mesh_label(result_.meshes[0].mesh)) << ": blue = column-parallel, amber = row-parallel, green = "
        << "otherwise sharded, grey = replicated; thick arrows are column→row pairs whose activation stays sharded; ⇒ marks the "
           "collectives the plan places after a layer.\n\n";
    for (auto& d : diagrams) {
      out << "#### " << md_escape(d.title) << "\n\n```mermaid\n" << d.mermaid << "```\n\n";
      if (d.truncated) out << "(The first " << d.nodes << " layers are drawn.)\n\n";
      if (!d.note.empty()) out << md_escape(d.note) << "\n\n";
    }
  }

  // ---------------------------------------------------------------------------------------------
  struct Families {
    double total = 0, sharded = 0;
    std::map<std::string, double> by_layout;  // bytes
    bool two_d = false;
  };
  Families families(const plan::MeshPlan& mp) const {
    Families f;
    for (const plan::ParameterLayout p : mp.parameters) {
      auto it = param_index_.find(p.name);
      if (it == param_index_.end()) continue;
      double b = static_cast<double>(model_.parameters[it->second].numel());
      f.total += b;
      f.by_layout[std::string(p.layout)] += b;
      if (p.layout != "replicated") f.sharded += b;
      if (p.axes && p.axes->size() > 1 && p.sharded_dim >= 0) f.two_d = true;
    }
    return f;
  }

  void strategy(std::ostream& out) {
    out << "## 3. Recommended strategy (summary)\n\n";
    for (size_t k = 0; k < result_.meshes.size(); ++k) {
      const auto& mp = result_.meshes[k];
      Families f = families(mp);
      const auto& t = mp.totals;
      out << "**" << md_escape(detail::mesh_label(mp.mesh)) << ".** ";
      bool tensor = f.by_layout.count("column") || f.by_layout.count("row") || f.by_layout.count("column_segments") || f.by_layout.count("vocab") ||
                    f.by_layout.count("hidden");
      bool expert = f.by_layout.count("expert") > 0;
      if (!tensor && !expert) {
        out << "Keep every parameter replicated: on this mesh no split of any layer saves more compute than its collectives cost";
        if (mp.mesh.devices() > 1) out << " (the devices can serve independent requests instead: data parallel when the batch divides them)";
        out << ". ";
      } else {
        std::string devices = f.two_d ? std::to_string(mp.mesh.devices()) + " devices of both axes (2-D tensor parallelism)"
                                      : std::to_string(mp.mesh.cols) + " devices of the `\"model\"` axis";
        out << "Use ";
        std::vector<std::string> parts;
        if (tensor) {
          std::string s = "tensor parallelism over the " + devices;
          if (!folded_[k].empty())
            s += ", with " + std::to_string(folded_[k].size()) + " Megatron column→row pattern" + (folded_[k].size() == 1 ? "" : "s") +
                 " (" + cites_.cite("megatron") + ") whose inner activations stay sharded";
          if (f.by_layout.count("column_segments")) s += "; the fused q/k/v projection split per segment";
          if (f.by_layout.count("vocab")) s += "; the embedding split on the vocabulary (" + cites_.cite("megatron-layers") + ")";
          parts.push_back(s);
        }
        if (expert) parts.push_back("expert parallelism, whole experts per device (" + cites_.cite("gshard") + ")");
        for (size_t i = 0; i < parts.size(); ++i) out << (i ? "; and " : "") << parts[i];
        out << ". " << pct(f.total > 0 ? f.sharded / f.total : 0) << " of the parameter elements are sharded";
        if (f.by_layout.count("replicated")) out << "; the rest (norms, small or indivisible layers) stays replicated";
        out << ". ";
      }
      if (mp.mesh.rows > 1) out << "The mesh rows are used for: " << md_escape(mp.mode) << ". ";
      out << "Headline: **" << plural(t.collectives, "collective") << ", " << plan::format_bytes(t.bytes) << " per forward**";
      if (t.collectives > 0) out << " (" << ccl_kinds_summary(mp) << ")";
      out << ", an estimated " << plan::format_us(t.ccl_us) << " of collective time in " << plan::format_us(t.est_time_us)
          << " per forward (compute " << plan::format_us(t.compute_us) << ", " << pct(t.compute_parallel_fraction) << " of FLOPs parallel); "
          << plan::format_bytes(t.memory_per_device_bytes) << " per device of " << plan::format_bytes(hw_.dram_bytes) << " DRAM.";
      if (mp.memory_fallback) out << " **This is a memory fallback** (the fastest layout does not fit; see §6).";
      out << "\n\n";
    }
    // Headline table.
    out << "| mesh | collectives / forward | bytes / forward | CCL time | est. time / forward | memory / device | fits |\n"
           "|---|---|---|---|---|---|---|\n";
    for (auto& mp : result_.meshes) {
      const auto& t = mp.totals;
      out << "| " << md_escape(detail::mesh_label(mp.mesh)) << " | " << t.collectives << " | " << plan::format_bytes(t.bytes) << " | "
          << plan::format_us(t.ccl_us) << " | " << plan::format_us(t.est_time_us) << " | " << plan::format_bytes(t.memory_per_device_bytes) << " | "
          << (t.memory_per_device_bytes <= hw_.dram_bytes ? "yes" : "**no**") << (mp.memory_fallback ? " (fallback)" : "") << " |\n";
    }
    out << "\n";
    // Model-level alternatives.
    out << "Strategies the planner rejected for the whole model (each re-planned under that constraint):\n\n";
    out << "| mesh | alternative | est. time / forward | vs chosen | collectives | bytes / forward | why rejected |\n|---|---|---|---|---|---|---|\n";
    bool any = false;
    for (auto& mp : result_.meshes) {
      for (auto& a : mp.alternatives) {
        any = true;
        out << "| " << md_escape(mp.mesh.shape_string()) << " | " << md_escape(a.name) << " | ";
        if (a.feasible) {
          double delta = a.totals.est_time_us - mp.totals.est_time_us;
          out << plan::format_us(a.totals.est_time_us) << " | " << signed_us(delta);
          if (mp.totals.est_time_us > 0) out << " (" << (delta < 0 ? "−" : "+") << std::lround(100.0 * std::fabs(delta) / mp.totals.est_time_us) << "%)";
          out << " | " << a.totals.collectives << " | " << plan::format_bytes(a.totals.bytes) << " | ";
        } else {
          out << "— | not possible | — | — | ";
        }
        out << cites_.linkify(a.why_rejected) << " |\n";
      }
    }
    if (!any) out << "| — | none (a single device, or nothing to compare) | | | | | |\n";
    out << "\n";
    for (auto& mp : result_.meshes)
      for (auto& a : mp.alternatives)
        if (a.stages > 0 && a.feasible) out << pipeline_picture(mp, a);
    for (auto& n : result_.notes) out << "Note: " << cites_.linkify(n) << "\n\n";
  }

  // The pipeline option's stages as a picture: what each stage runs, and the GPipe schedule of
  // the first steps (each cell the microbatch a stage works on, `..` where it idles: the bubble).
  static std::string pipeline_picture(const plan::MeshPlan& mp, const plan::Alternative& a) {
    std::ostringstream out;
    char bubble[32];
    std::snprintf(bubble, sizeof bubble, "%.0f%%", 100 * a.bubble_fraction);
    out << "Pipeline option on " << mp.mesh.shape_string() << ": " << a.stages << " stages, " << a.microbatches << " microbatch"
        << (a.microbatches == 1 ? "" : "es") << ", " << bubble << " of the step idle (GPipe; SHARDING.md §3):\n\n```text\n";
    const int steps = a.microbatches + a.stages - 1, shown = std::min(steps, 12);
    out << "            step";
    for (int t = 0; t < shown; ++t) out << (t < 9 ? "   " : "  ") << t + 1;
    out << (shown < steps ? "  ...  " + std::to_string(steps) : std::string()) << "\n";
    for (int st = 0; st < a.stages; ++st) {
      char label[32];
      std::snprintf(label, sizeof label, "stage %-2d    ", st);
      out << label << "    ";
      for (int t = 0; t < shown; ++t) {
        const int m = t - st;
        char cell[8];
        if (m >= 0 && m < a.microbatches) std::snprintf(cell, sizeof cell, " m%-2d", m % 100);
        else std::snprintf(cell, sizeof cell, "  ..");
        out << cell;
      }
      out << (shown < steps ? "  ..." : "") << "   " << (st < static_cast<int>(a.stage_spans.size()) ? a.stage_spans[st] : "") << "\n";
    }
    out << "```\n\n";
    return out.str();
  }

  // ---------------------------------------------------------------------------------------------
  // Parameters of a group's instances, folded per distinct variant.
  struct Variant {
    std::vector<int> instances;
    std::vector<ParamRow> rows;
  };
  std::vector<Variant> variants(const detail::ComponentGroup& g) const {
    std::vector<Variant> out;
    std::vector<std::pair<std::string, Variant>> keyed;
    for (int m : g.instances) {
      const auto& mod = model_.modules[m];
      std::string prefix = mod.name + ".";
      // Rows: parameters under the instance, relative names folded by pattern.
      std::vector<ParamRow> rows;
      std::map<std::string, size_t> row_of;
      for (auto& p : model_.parameters) {
        if (p.name.rfind(prefix, 0) != 0) continue;
        std::string rel = detail::module_pattern(std::string_view(p.name).substr(prefix.size()));
        std::string key = rel + "|" + detail::shape_string(p.shape) + "|" + layouts_text(p.name);
        auto [it, fresh] = row_of.emplace(key, rows.size());
        if (fresh) {
          ParamRow r;
          r.name = rel;
          r.shape = p.shape;
          for (size_t k = 0; k < result_.meshes.size(); ++k) {
            auto f = layouts_[k].find(p.name);
            r.per_mesh.push_back(f == layouts_[k].end() ? nullptr : &f->second);
          }
          rows.push_back(std::move(r));
        }
        rows[it->second].count++;
      }
      std::string key = mod.class_name;
      for (auto& r : rows) key += ";" + r.name + "|" + detail::shape_string(r.shape) + "|" + std::to_string(r.count) + "|" + layouts_text(prefix + r.name);
      // Leaf components (an Embedding, a Linear) have their parameters directly: "weight".
      if (!keyed.empty() && keyed.back().first == key) {
        keyed.back().second.instances.push_back(m);
        continue;
      }
      keyed.push_back({key, Variant{{m}, std::move(rows)}});
    }
    for (auto& [k, v] : keyed) out.push_back(std::move(v));
    return out;
  }

  // Parameters a component's forward reads that other modules own (a head tied to the embedding).
  Variant shared_parameters(const detail::ComponentGroup& g) const {
    Variant v;
    v.instances = g.instances;
    std::set<int> seen;
    for (auto& op : model_.dataflow.ops) {
      if (op.module < 0 || op.module >= static_cast<int>(model_.modules.size())) continue;
      const std::string& name = model_.modules[op.module].name;
      std::string inside;
      for (int m : g.instances) {
        const std::string& inst = model_.modules[m].name;
        if (name == inst || name.rfind(inst + ".", 0) == 0) inside = inst + ".";
      }
      if (inside.empty()) continue;
      for (int t : op.inputs) {
        if (t < 0 || t >= static_cast<int>(model_.dataflow.tensors.size())) continue;
        int p = model_.dataflow.tensors[t].parameter;
        if (p < 0 || model_.parameters[p].name.rfind(inside, 0) == 0 || !seen.insert(p).second) continue;
        ParamRow r;
        r.name = model_.parameters[p].name;
        r.shape = model_.parameters[p].shape;
        r.count = 1;
        for (size_t k = 0; k < result_.meshes.size(); ++k) {
          auto f = layouts_[k].find(r.name);
          r.per_mesh.push_back(f == layouts_[k].end() ? nullptr : &f->second);
        }
        v.rows.push_back(std::move(r));
      }
    }
    return v;
  }

  std::string instances_text(const std::vector<int>& inst) const {
    if (inst.empty()) return "";
    if (inst.size() == 1) return model_.modules[inst[0]].name;
    const std::string& first = model_.modules[inst.front()].name;
    const std::string& last = model_.modules[inst.back()].name;
    size_t dot = last.rfind('.');
    std::string tail = dot == std::string::npos ? last : last.substr(dot + 1);
    // Contiguous numeric runs print as "stages.0-2".
    return first + "-" + tail + " (" + std::to_string(inst.size()) + ")";
  }

  const plan::PlanResult& baseline(size_t mesh) {
    auto it = baselines_.find(mesh);
    if (it != baselines_.end()) return it->second;
    plan::PlanOptions o = options_;
    o.meshes = {result_.meshes[mesh].mesh};
    o.alternatives = false;
    return baselines_.emplace(mesh, plan::plan_model(model_, o)).first->second;
  }

  void replicated_alternative(std::ostream& out, size_t k, const detail::ComponentGroup& g) {
    const auto& mp = result_.meshes[k];
    std::vector<std::string> names;
    bool sharded = false;
    for (int m : g.instances) {
      std::string prefix = model_.modules[m].name + ".";
      for (const plan::ParameterLayout p : mp.parameters)
        if (p.name.rfind(prefix, 0) == 0) {
          names.emplace_back(p.name);
          sharded |= p.layout != "replicated";
        }
    }
    std::string on = md_escape(mp.mesh.shape_string());
    if (names.empty()) {
      out << "  - " << on << ": it owns no parameters: nothing to re-plan per component\n";
      return;
    }
    if (!sharded) {
      out << "  - " << on << ": sharding it — the search tried every layout its ops accept (column / row for contractions, vocab / "
             "hidden for embeddings, channels for convolutions, never spatial dims) and none paid for its collectives; the planner "
             "does not report per-component figures for those\n";
      return;
    }
    if (!ro_.component_alternatives) {
      out << "  - " << on << ": replicated instead — not evaluated (component alternatives disabled)\n";
      return;
    }
    // The planner matches each pin against every parameter name: keep the re-plan affordable.
    if (static_cast<double>(names.size()) * static_cast<double>(model_.parameters.size()) > 5e7) {
      out << "  - " << on << ": replicated instead — not evaluated: pinning its " << names.size() << " parameter tensors in a model of "
          << model_.parameters.size() << " would take the planner too long (each pin is matched against every parameter)\n";
      return;
    }
    const auto& base = baseline(k);
    plan::PlanOptions o = options_;
    o.meshes = {mp.mesh};
    o.alternatives = false;
    for (auto& n : names) o.pinned_parameters[n] = "replicated";
    auto alt = plan::plan_model(model_, o);
    if (!base.ok || !alt.ok || base.meshes.empty() || alt.meshes.empty()) {
      out << "  - " << on << ": replicated instead — could not be evaluated (" << md_escape(alt.ok ? base.error : alt.error) << ")\n";
      return;
    }
    const auto& b = base.meshes[0].totals;
    const auto& a = alt.meshes[0].totals;
    double delta = a.est_time_us - b.est_time_us;
    out << "  - " << on << ": **replicated instead** (re-planned with its " << names.size() << " parameter tensor" << (names.size() == 1 ? "" : "s")
        << " pinned replicated): " << signed_us(delta) << " per forward ("
        << plan::format_us(a.est_time_us) << " vs " << plan::format_us(b.est_time_us) << "), " << plural(a.collectives, "collective") << " instead of "
        << b.collectives << ", " << plan::format_bytes(a.memory_per_device_bytes) << " per device"
        << (a.memory_per_device_bytes > hw_.dram_bytes ? " — **does not fit**" : "") << "\n";
  }

  void components(std::ostream& out) {
    out << "## 4. Per-component design\n\n";
    if (result_.meshes.empty()) return;
    out << "One section per top-level component (repeated blocks folded). Rejected alternatives: per component the report re-plans "
           "it replicated (everything else searched as before) and says how much slower that is; the planner's alternatives for "
           "other strategy families are model-level and listed in §3.\n\n";
    const auto& first = groups_[0];
    for (auto& g : first) {
      std::string classes;
      for (auto& c : g.classes) classes += (classes.empty() ? "" : ", ") + c;
      out << "### " << md_code(g.pattern) << " — ";
      if (g.instances.size() > 1) out << g.instances.size() << " × ";
      out << md_escape(classes) << "\n\n";
      auto vars = variants(g);
      bool own = std::any_of(vars.begin(), vars.end(), [](const Variant& v) { return !v.rows.empty(); });
      if (!vars.empty() && !own && shared_parameters(g).rows.empty()) {
        bool quiet = true;
        for (size_t k = 0; k < result_.meshes.size(); ++k)
          for (auto& c : result_.meshes[k].collectives) quiet &= detail::component_of(groups_[k], c.at) != g.pattern;
        if (quiet) {
          out << "No parameters and no collectives: nothing to shard.\n\n";
          continue;
        }
      }
      // Chosen sharding.
      out << "- **Chosen sharding:**";
      if (vars.empty()) out << " (its instances could not be matched to the traced forward; see the parameter layouts in `shardlens plan`)";
      else if (!own) {
        Variant shared = shared_parameters(g);
        if (shared.rows.empty()) out << " none: it has no parameters";
        else out << " it owns no parameters; its forward reads these, owned by another module (tied or shared weights)";
        vars.clear();
        if (!shared.rows.empty()) vars.push_back(std::move(shared));
      }
      out << "\n\n";
      std::map<std::pair<std::string, std::string>, std::vector<std::string>> whys;  // (layout, why) -> modules
      std::vector<std::pair<std::string, std::string>> why_order;
      for (auto& v : vars) {
        if (vars.size() > 1 || v.instances.size() > 1) out << "  Instances " << md_code(instances_text(v.instances)) << ", " << md_escape(model_.modules[v.instances[0]].class_name) << ":\n\n";
        out << "  | parameter | shape |";
        for (auto& mp : result_.meshes) out << " " << md_escape(detail::mesh_label(mp.mesh)) << " |";
        out << "\n  |---|---|";
        for (size_t k = 0; k < result_.meshes.size(); ++k) out << "---|";
        out << "\n";
        size_t shown = 0;
        for (auto& r : v.rows) {
          if (shown++ >= 40) {
            out << "  | … " << v.rows.size() - 40 << " more |  |";
            for (size_t k = 0; k < result_.meshes.size(); ++k) out << "  |";
            out << "\n";
            break;
          }
          out << "  | " << md_code(r.name) << (r.count > 1 ? " ×" + std::to_string(r.count) : "") << " | " << detail::shape_string(r.shape) << " |";
          for (size_t k = 0; k < result_.meshes.size(); ++k) {
            const auto* pl = r.per_mesh[k];
            if (!pl) {
              out << " not planned |";
              continue;
            }
            out << " " << md_escape(std::string(pl->layout)) << " " << md_code(detail::spec_string(*pl));
            if (pl->sharded_dim >= 0) out << " → " << detail::shape_string(detail::per_device_shape(r.shape, *pl, result_.meshes[k].mesh)) << " per device";
            out << " |";
            std::pair<std::string, std::string> key{std::string(pl->layout), std::string(pl->why)};
            auto& mods = whys[key];
            if (mods.empty()) why_order.push_back(key);
            std::string who = v.instances.size() == 1 && vars.size() == 1 && r.name.find('.') == std::string::npos ? g.pattern + "." + r.name : r.name;
            if (std::find(mods.begin(), mods.end(), who) == mods.end()) mods.push_back(who);
          }
          out << "\n";
        }
        out << "\n";
      }
      // Why.
      out << "- **Why:**\n";
      if (why_order.empty()) out << "  - no parameters of its own\n";
      for (auto& key : why_order) {
        const auto& mods = whys[key];
        std::string list;
        for (size_t i = 0; i < mods.size() && i < 6; ++i) list += (i ? ", " : "") + md_code(mods[i]);
        if (mods.size() > 6) list += ", …";
        bool norm = key.second.find("statistics") != std::string::npos;
        std::string cite = citation_for_layout(cites_, key.first, norm);
        std::string why = cites_.linkify(key.second.empty() ? std::string("—") : key.second);
        out << "  - **" << md_escape(key.first) << "** (" << list << "): " << why;
        // The planner's own text may already carry the citation.
        if (!cite.empty() && why.find(cite.substr(cite.find("](") + 2)) == std::string::npos) out << " — " << cite;
        out << "\n";
      }
      // Rejected alternatives.
      out << "- **Rejected alternatives:**\n";
      for (size_t k = 0; k < result_.meshes.size(); ++k) {
        // Groups of other meshes carry the same instances (the same model); match by pattern.
        const detail::ComponentGroup* gk = &g;
        for (auto& x : groups_[k])
          if (x.pattern == g.pattern) gk = &x;
        replicated_alternative(out, k, *gk);
      }
      // CCLs.
      out << "- **CCLs:**\n";
      for (size_t k = 0; k < result_.meshes.size(); ++k) component_ccls(out, k, g.pattern, std::max<size_t>(1, g.instances.size()));
      out << "\n";
    }
    // Collectives that belong to no component (the model's output).
    for (size_t k = 0; k < result_.meshes.size(); ++k)
      for (auto& c : budgets_[k].components) {
        bool is_group = false;
        for (auto& g : first) is_group |= g.pattern == c.component;
        if (is_group) continue;
        out << "### " << md_code(c.component) << " on " << md_escape(result_.meshes[k].mesh.shape_string()) << "\n\n";
        if (c.component == detail::kModelOutput) {
          out << "- **Chosen sharding:** no parameters; the collectives below make the result whole where the model returns it\n";
          out << "- **Why:** a sharded tensor leaves the model only after an all-gather (" << cites_.cite("gspmd") << "); for logits, sampling on "
                 "the sharded vocabulary avoids it (" << cites_.cite("megatron-cross-entropy") << ")\n";
        } else {
          out << "- **Chosen sharding:** none of its own: these collectives come from ops " << md_code(c.component)
              << " runs itself, outside the components above (a wrapper's or the root's own forward)\n";
          out << "- **Why:** an op there needs a whole tensor that arrives sharded (" << cites_.cite("gspmd") << ")\n";
        }
        out << "- **CCLs:**\n";
        component_ccls(out, k, c.component, 1);
        out << "\n";
      }
  }

  void component_ccls(std::ostream& out, size_t k, const std::string& component, size_t instances) {
    const auto& mp = result_.meshes[k];
    std::string on = md_escape(mp.mesh.shape_string());
    int n = 0;
    double bytes = 0, time = 0;
    std::vector<const plan::Collective*> list;
    for (auto& c : mp.collectives)
      if (detail::component_of(groups_[k], c.at) == component) {
        n += c.count;
        bytes += c.bytes * c.count;
        time += c.time_us * c.count;
        list.push_back(&c);
      }
    if (n == 0) {
      out << "  - " << on << ": none\n";
      return;
    }
    out << "  - " << on << ": " << n << " per forward";
    if (instances > 1 && n % static_cast<int>(instances) == 0) out << " (" << n / static_cast<int>(instances) << " per instance × " << instances << ")";
    out << ", " << plan::format_bytes(bytes) << ", " << plan::format_us(time) << "\n";
    for (auto* c : list)
      out << "    - " << c->count << " × " << plan::ccl_name(c->kind) << " of " << plan::format_bytes(c->bytes) << " " << md_code(c->tensor) << " on "
          << md_code(c->axis) << " at " << md_code(c->at) << " (" << plan::format_us(c->time_us) << " each): " << cites_.linkify(c->why) << "\n";
  }

  // ---------------------------------------------------------------------------------------------
  void budget(std::ostream& out) {
    out << "## 5. CCL budget\n\n";
    out << "Per forward; sizes are the logical tensor each collective moves (" << cites_.cite("tt-xla-ccl-cheatsheet") << " conventions), "
        << "times from the fitted formulas.\n\n";
    for (size_t k = 0; k < result_.meshes.size(); ++k) {
      const auto& mp = result_.meshes[k];
      const auto& b = budgets_[k];
      out << "### " << md_escape(detail::mesh_label(mp.mesh)) << "\n\n";
      out << "| Component | Collective | Axis | Count | Approx size (each) | Total bytes | CCL time |\n|---|---|---|---|---|---|---|\n";
      for (auto& r : b.rows)
        out << "| " << md_code(r.component) << " | " << plan::ccl_name(r.kind) << " | " << md_code(r.axis) << " | " << r.count << " | "
            << plan::format_bytes(r.bytes_each) << " | " << plan::format_bytes(r.total_bytes()) << " | " << plan::format_us(r.time_us) << " |\n";
      // The plan's totals; what the rows do not account for (none today) is shown, never hidden.
      int dn = mp.totals.collectives - b.collectives;
      double db = mp.totals.bytes - b.bytes;
      if (dn != 0 || std::fabs(db) > 0.5)
        out << "| (not attributed to a collective site) | | | " << dn << " | | " << plan::format_bytes(std::fabs(db)) << " | " << plan::format_us(mp.totals.ccl_us - b.time_us) << " |\n";
      out << "| **Total** | | | **" << mp.totals.collectives << "** | | **" << plan::format_bytes(mp.totals.bytes) << "** ("
          << bytes_exact(mp.totals.bytes) << ") | **" << plan::format_us(mp.totals.ccl_us) << "** |\n\n";
      std::vector<std::string> quiet;
      for (auto& g : groups_[k]) {
        bool has = false;
        for (auto& c : b.components) has |= c.component == g.pattern;
        if (!has) quiet.push_back(md_code(g.pattern));
      }
      if (!quiet.empty()) {
        out << "Without collectives: ";
        for (size_t i = 0; i < quiet.size(); ++i) out << (i ? ", " : "") << quiet[i];
        out << ".\n\n";
      }
    }
    if (!ro_.chart_href.empty())
      out << "![Collective bytes per component, per mesh](" << ro_.chart_href << ")\n\n"
          << "Chart: [" << md_escape(ro_.chart_href) << "](" << ro_.chart_href << ") — one bar per component with collectives, segments by kind.\n\n";
  }

  // ---------------------------------------------------------------------------------------------
  void bottlenecks(std::ostream& out) {
    out << "## 6. Bottlenecks & compiler limitations\n\n";
    out << "### Largest collectives\n\n";
    out << "| mesh | collective | at | tensor | count | each | total | CCL time (share) |\n|---|---|---|---|---|---|---|---|\n";
    bool any = false;
    for (auto& mp : result_.meshes) {
      std::vector<const plan::Collective*> cs;
      for (auto& c : mp.collectives) cs.push_back(&c);
      std::stable_sort(cs.begin(), cs.end(), [](const plan::Collective* a, const plan::Collective* b) {
        return a->bytes * a->count > b->bytes * b->count;
      });
      for (size_t i = 0; i < cs.size() && i < 5; ++i) {
        any = true;
        const auto* c = cs[i];
        double t = c->time_us * c->count;
        out << "| " << md_escape(mp.mesh.shape_string()) << " | " << plan::ccl_name(c->kind) << " | " << md_code(c->at) << " | " << md_code(c->tensor)
            << " | " << c->count << " | " << plan::format_bytes(c->bytes) << " | " << plan::format_bytes(c->bytes * c->count) << " | "
            << plan::format_us(t) << " (" << pct(mp.totals.ccl_us > 0 ? t / mp.totals.ccl_us : 0) << ") |\n";
      }
    }
    if (!any) out << "| — | none | | | | | | |\n";
    out << "\n";
    for (auto& mp : result_.meshes) {
      const auto& t = mp.totals;
      if (t.est_time_us <= 0) continue;
      out << "- " << md_escape(mp.mesh.shape_string()) << ": collectives are " << pct(t.ccl_us / t.est_time_us) << " of the estimated time per forward";
      if (t.compute_parallel_fraction < 0.95 && t.compute_us > 0)
        out << "; " << pct(1 - t.compute_parallel_fraction) << " of the FLOPs run unsplit on every device (replicated layers)";
      out << "\n";
    }
    out << "\n";
    // Compiler limits.
    const auto& kb = builtin_compiler_limits();
    auto matches = match_compiler_limits(kb, model_, result_);
    out << "### Compiler limitations\n\n";
    out << "Matched against shardlens' knowledge base of " << kb.size() << " known tt-mlir / tt-xla limits (`analysis/report/compiler_limits.json`, "
        << "seeded from " << cites_.cite("tt-xla-compiler-support") << "; re-check before ruling a strategy out).\n\n";
    auto table = [&](bool hits) {
      bool header = false;
      for (auto& m : matches) {
        if (m.hit != hits) continue;
        if (!header) {
          out << "| limit | where | symptom | tracking | workaround |\n|---|---|---|---|---|\n";
          header = true;
        }
        std::string where;
        for (size_t i = 0; i < m.evidence.size(); ++i) where += (i ? "<br>" : "") + md_escape(m.evidence[i]);
        std::string tracking;
        for (size_t i = 0; i < m.limit->tracking.size(); ++i) {
          const auto& t = m.limit->tracking[i];
          tracking += (i ? "<br>" : "") + cites_.cite_issue(t.name, t.title, t.url);
        }
        out << "| **" << md_escape(m.limit->title) << "** | " << where << " | " << md_escape(m.limit->symptom) << " | " << tracking << " | "
            << md_escape(m.limit->workaround) << " |\n";
      }
      if (!header) out << (hits ? "None: the plan uses no pattern the knowledge base knows to fail.\n" : "None.\n");
      out << "\n";
    };
    out << "#### Limits this plan runs into\n\n";
    table(true);
    out << "#### Limits that shaped the plan or its rejected alternatives\n\n";
    table(false);
    // Memory.
    out << "### Memory\n\n";
    out << "| mesh | per device | parameters | KV cache | DRAM | headroom |\n|---|---|---|---|---|---|\n";
    for (auto& mp : result_.meshes) {
      const auto& t = mp.totals;
      double head = hw_.dram_bytes - t.memory_per_device_bytes;
      out << "| " << md_escape(mp.mesh.shape_string()) << " | " << plan::format_bytes(t.memory_per_device_bytes) << " | "
          << plan::format_bytes(t.parameter_bytes_per_device) << " | " << plan::format_bytes(t.kv_cache_bytes_per_device) << " | "
          << plan::format_bytes(hw_.dram_bytes) << " | " << (head >= 0 ? plan::format_bytes(head) : "**−" + plan::format_bytes(-head) + "**") << " |\n";
    }
    out << "\n";
    bool fallback = false;
    for (auto& mp : result_.meshes) fallback |= mp.memory_fallback;
    if (fallback) {
      out << "### Memory fallback\n\n";
      out << "The speed-optimal layout does not fit in DRAM on the meshes below, so the planner fell back to the fastest layout that "
             "fits — at a speed cost (SHARDING.md §1: shard for memory only when the fast layout does not fit, and say so).\n\n";
      for (auto& mp : result_.meshes) {
        if (!mp.memory_fallback) continue;
        out << "- **" << md_escape(detail::mesh_label(mp.mesh)) << "**:";
        bool said = false;
        for (auto& n : mp.notes)
          if (n.find("falling back") != std::string::npos) {
            out << " " << cites_.linkify(n);
            said = true;
          }
        if (!said) out << " fallback taken (" << plan::format_bytes(mp.totals.memory_per_device_bytes) << " per device)";
        out << ". The layouts in §4 and the budget in §5 are those of the fallback.\n";
      }
      out << "\n";
    }
    bool no_fit = false;
    for (auto& d : result_.diagnostics) no_fit |= d.code == "memory-does-not-fit";
    if (no_fit) {
      out << "### Does not fit\n\n";
      for (auto& d : result_.diagnostics)
        if (d.code == "memory-does-not-fit") out << "- " << cites_.linkify(d.message) << "\n";
      out << "\n";
    }
    if (!fallback && !no_fit) out << "No memory fallback: the fastest layout fits on every mesh.\n\n";
    // Everything else the planner said.
    out << "### Diagnostics\n\n";
    bool diag = false;
    for (auto& d : result_.diagnostics) {
      if (d.code == "memory-fallback" || d.code == "memory-does-not-fit") continue;
      diag = true;
      out << "- " << (d.mesh.empty() ? std::string() : md_escape(d.mesh) + ": ") << md_code(ir::span_location(d.span, script())) << " " << md_escape(d.severity)
          << " [" << md_escape(d.code) << "] " << cites_.linkify(d.message) << "\n";
    }
    for (auto& mp : result_.meshes)
      for (auto& n : mp.notes)
        if (n.find("falling back") == std::string::npos) {
          diag = true;
          out << "- " << md_escape(mp.mesh.shape_string()) << ": " << cites_.linkify(n) << "\n";
        }
    if (!diag) out << "None.\n";
    out << "\n";
  }

  // ---------------------------------------------------------------------------------------------
  void sources(std::ostream& out) {
    out << "## 7. Sources\n\n";
    size_t i = 0;
    for (auto& s : cites_.cited()) {
      out << ++i << ". [" << md_escape(s.label) << "](" << s.url << ")";
      if (!s.title.empty() && s.title != s.label) out << " — " << md_escape(s.title);
      out << "\n";
    }
    out << ++i << ". `../shared/SHARDING.md` of the shardlens project: the collective patterns, cost formulas, meshes and expert "
                  "ground truth this planner encodes, each with its own source.\n";
  }
};

}  // namespace

std::string report_markdown(const ir::ModelIR& model, const plan::PlanResult& result, const plan::PlanOptions& options,
                            const ReportOptions& report_options) {
  ReportWriter w(model, result, options, report_options);
  return w.write();
}

ReportFiles write_report(const ir::ModelIR& model, const plan::PlanResult& result, const plan::PlanOptions& options,
                         const std::string& script_path, const std::string& output_path) {
  ReportOptions ro;
  ro.script_path = script_path;
  return write_report(model, result, options, ro, output_path);
}

ReportFiles write_report(const ir::ModelIR& model, const plan::PlanResult& result, const plan::PlanOptions& options,
                         const ReportOptions& report_options, const std::string& output_path) {
  namespace fs = std::filesystem;
  ReportFiles files;
  std::error_code ec;
  fs::path md = output_path.empty() ? fs::path("sharding_analysis.md") : fs::path(output_path);
  if (fs::is_directory(md, ec) || (!output_path.empty() && output_path.back() == '/')) md /= "sharding_analysis.md";
  if (md.has_parent_path()) {
    fs::create_directories(md.parent_path(), ec);
    if (ec) {
      files.error = "cannot create directory '" + md.parent_path().string() + "': " + ec.message();
      return files;
    }
  }
  fs::path svg = chart_path_for(md.string());
  ReportOptions ro = report_options;
  ro.chart_href = svg.filename().string();
  std::string text = report_markdown(model, result, options, ro);
  std::string chart = ccl_chart_svg(model, result);
  auto write_atomically = [&](const fs::path& path, const std::string& content) -> bool {
    fs::path tmp = path;
    tmp += ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      if (!f) {
        files.error = "cannot write '" + tmp.string() + "'";
        return false;
      }
      f << content;
      f.close();
      if (!f) {
        files.error = "cannot write '" + tmp.string() + "'";
        fs::remove(tmp, ec);
        return false;
      }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
      files.error = "cannot rename '" + tmp.string() + "' to '" + path.string() + "': " + ec.message();
      fs::remove(tmp, ec);
      return false;
    }
    return true;
  };
  if (!write_atomically(svg, chart)) return files;
  if (!write_atomically(md, text)) return files;
  files.ok = true;
  files.markdown_path = md.string();
  files.chart_path = svg.string();
  return files;
}

}  // namespace shardlens::report
