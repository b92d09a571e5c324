#include "session/document_analysis.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <tuple>

#include "plan/model_kind.h"
#include "session/script_pipeline.h"
#include "session/site_packages.h"
#include "torch/exact_ir.h"
#include "torch/graph_client.h"

namespace shardlens::session {

size_t DocumentAnalysis::line_offset(uint32_t line_1based) const {
  if (line_1based == 0) return 0;
  if (line_1based - 1 >= line_starts.size()) return text.size();
  return line_starts[line_1based - 1];
}

size_t DocumentAnalysis::offset_of(const ir::Span& given, bool end) const {
  // A place in an imported module shows where this document builds the model.
  ir::Span span = given;
  if (!span.in_document()) {
    span = {};
    for (auto& m : model().modules)
      if (m.span.valid() && m.span.in_document()) {
        span = m.span;
        break;
      }
  }
  uint32_t line = end ? span.end_line : span.line;
  uint32_t column = end ? span.end_column : span.column;
  if (line == 0) return 0;
  size_t start = line_offset(line);
  size_t limit = line < line_starts.size() ? line_starts[line] : text.size();
  return std::min(start + column, limit);
}

const std::shared_ptr<python::ModuleLoader>& workspace_modules() {
  static const auto loader = std::make_shared<python::ModuleLoader>();
  return loader;
}

DocumentAnalyzer::DocumentAnalyzer() = default;
DocumentAnalyzer::~DocumentAnalyzer() = default;

namespace {

python::TextPosition position_in(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  python::TextPosition p;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++p.row;
      line_start = i + 1;
    }
  p.column = static_cast<uint32_t>(offset - line_start);
  return p;
}

void add_plan_findings(DocumentAnalysis& a) {
  // Repeated blocks give one planner diagnostic per instance at the same place: show one.
  std::map<std::tuple<std::string, uint32_t, uint32_t>, size_t> first_at;
  std::map<size_t, int> more;
  for (auto& d : a.plan.diagnostics) {
    auto key = std::make_tuple(d.code, d.span.line, d.span.column);
    if (d.span.valid()) {
      auto [it, inserted] = first_at.emplace(key, a.findings.size());
      if (!inserted) {
        ++more[it->second];
        continue;
      }
    }
    Finding f;
    f.code = d.code;
    f.severity = d.severity;
    f.message = (a.plan.meshes.size() > 1 && !d.mesh.empty() ? "[" + d.mesh + "] " : "") + d.message + ir::elsewhere_suffix(d.span);
    if (d.span.valid()) {
      f.start = a.offset_of(d.span, false);
      f.end = std::max(f.start, a.offset_of(d.span, true));
    }
    a.findings.push_back(std::move(f));
  }
  for (auto& [index, n] : more) a.findings[index].message += " (and " + std::to_string(n) + " more like it in repeated blocks)";
  for (auto& u : a.model().unresolved) {
    Finding f;
    bool syntax = u.what == "syntax error" || u.reason.find("does not parse") != std::string::npos;
    f.code = syntax ? "syntax-error" : "unresolved";
    f.severity = syntax ? "warning" : "information";
    f.message = (syntax ? (u.what == "syntax error" ? u.reason : u.what + ": " + u.reason) : u.what + ": " + u.reason) + ir::elsewhere_suffix(u.span);
    if (u.span.valid()) {
      f.start = a.offset_of(u.span, false);
      f.end = std::max(f.start, a.offset_of(u.span, true));
    }
    a.findings.push_back(std::move(f));
  }
}

// The export is used only when it describes exactly this text: newer than the script on disk,
// and the editor's text is what is on disk (unsaved edits make it stale until the next save).
bool fresh_export(const std::string& script, const std::string& text, const std::string& pt) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (script.empty() || !fs::is_regular_file(pt, ec) || !fs::is_regular_file(script, ec)) return false;
  auto pt_time = fs::last_write_time(pt, ec);
  if (ec) return false;
  auto script_time = fs::last_write_time(script, ec);
  if (ec || pt_time < script_time) return false;
  if (fs::file_size(script, ec) != text.size() || ec) return false;
  std::ifstream in(script, std::ios::binary);
  std::string disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return disk == text;
}

// Planner diagnostics point at the config value that sets a size: found in this analysis' text.
void locate_in_text(DocumentAnalysis& a) {
  a.options.locate = session::value_locator(a.text);
}

}  // namespace

namespace {
// The planner asks `cancelled` only while this lives (plan_with_pins outside an analysis is never
// cancelled).
class CancelScope {
 public:
  CancelScope(plan::Planner& planner, const DocumentAnalyzer::CancelCheck& cancelled) : planner_(planner) {
    planner_.set_cancel_check(cancelled);
  }
  ~CancelScope() { planner_.set_cancel_check({}); }
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  plan::Planner& planner_;
};
}  // namespace

std::shared_ptr<const DocumentAnalysis> DocumentAnalyzer::analyze(int version, const std::string& path, const std::string& text,
                                                                  const std::vector<ByteEdit>& edits, bool reset, const Settings& settings,
                                                                  const CancelCheck& cancelled) {
  CancelScope scope(planner_, cancelled);
  try {
    return analyze_text(version, path, text, edits, reset, settings);
  } catch (const plan::PlanCancelled&) {
    // The extractor has this version's text and model now, the last analysis does not: reusing
    // that analysis for the next edit that changes no code would be wrong.
    last_.reset();
    throw;
  }
}

std::shared_ptr<const DocumentAnalysis> DocumentAnalyzer::analyze_text(int version, const std::string& path, const std::string& text,
                                                                       const std::vector<ByteEdit>& edits, bool reset,
                                                                       const Settings& settings) {
  retired_.clear();  // what the last analysis replaced, if nobody freed it since (drop_retired)
  auto t0 = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from).count();
  };
  auto a = std::make_shared<DocumentAnalysis>();
  a->version = version;
  a->text = text;
  a->settings = settings;
  a->line_starts.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') a->line_starts.push_back(i + 1);
  auto done = [&]() {
    a->analysis_ms = since(t0);
    remember(a);
    return a;
  };
  if (text.size() > kMaxAnalysedBytes) {
    extractor_.reset();
    a->error = "the file " + too_large_to_analyse();
    a->findings.push_back({"file-too-large", "information", a->error, 0, 0, std::nullopt, ""});
    return done();
  }
  if (text.find('\0') != std::string::npos) {
    extractor_.reset();
    a->error = "the file contains NUL bytes; shardlens analyses Python source only";
    a->findings.push_back({"not-text", "information", a->error, 0, 0, std::nullopt, ""});
    return done();
  }
  bool fresh = !extractor_ || path != path_ || reset;
  if (!fresh) {
    for (auto& e : edits) {
      const std::string& current = extractor_->document().text();
      python::TextEdit edit{position_in(current, e.start), position_in(current, e.end), e.text};
      extractor_->apply_edit(edit);
    }
    fresh = extractor_->document().text() != text;
  }
  if (fresh) {
    recent_.clear();  // a fresh extractor has run nothing: an extraction follows, whatever the text
    extractor_ = std::make_unique<python::ModelExtractor>(text, path);
    extractor_->set_module_loader(workspace_modules());
    path_ = path;
  }
  // A text analysed a moment ago with the same settings (a keystroke taken back, an undo): its
  // analysis holds as it is. The edits above keep the extractor's parse in step for the next one.
  // Loading a TorchScript file runs the archive's code: only when the user asked for the exact
  // graph and allowed execution, never because a file sits beside the script.
  const bool exact_wanted = settings.exact_graph && settings.allow_execution;
  for (const auto& earlier : recent_)
    if (earlier->text == text && earlier->settings == settings && earlier->exact_graph.empty() &&
        extractor_->imports_current(earlier->extraction) &&
        !(exact_wanted && fresh_export(path, text, export_path_for(path)))) {
      a = std::make_shared<DocumentAnalysis>(*earlier);
      a->version = version;
      a->path_taken = "reused";
      a->extract_ms = a->plan_ms = 0;
      a->extract_stats = {};
      // The next edit that changes no code relative to this text reuses this analysis.
      extractor_->assume_extracted(earlier->extraction);
      return done();
    }
  a->options = settings.plan_options();
  if (!settings.phase_set && kind_workload_) {
    a->options.workload.phase = kind_workload_->phase;
    a->options.workload.seq = kind_workload_->seq;
  }
  python::ExtractOptions extract;
  extract.model_expression = settings.model;
  {
    std::string dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
    std::vector<std::string> extra;
    for (auto& p : settings.python_path) extra.push_back(p.empty() || p[0] == '/' || dir.empty() ? p : dir + "/" + p);
    extract.python_path = python::search_path_entries(extra);
  }
  // Only the user's own settings name an interpreter (server/settings.cpp): asked once for its
  // site-packages, then cached.
  extract.site_packages = interpreter_site_packages(settings.python);
  extract.memory_budget_mib = static_cast<uint64_t>(settings.memory_budget_mib);
  extract.trace_forward = true;
  extract.workload.batch = a->options.workload.batch;
  extract.workload.tokens = a->options.workload.tokens_per_forward();
  extract.workload.context = a->options.workload.seq;
  extract.workload.tokens_given = settings.seq_set;
  for (auto& spec : settings.inputs) {
    std::string error;
    if (auto given = python::parse_given_input(spec, error)) extract.workload.inputs.push_back(*given);
  }
  // An edit that changed no code (a comment): the last analysis' model and plan still hold.
  extract.reuse_unchanged = !fresh && last_ && last_->settings == settings && last_->exact_graph.empty() &&
                            last_->extraction == extractor_->last_extraction();
  auto result = extractor_->extract(extract);
  a->extraction = extractor_->last_extraction();
  retired_.push_back(std::move(result.retired));
  if (!settings.phase_set && result.ok && !result.unchanged) {
    // No phase set: the model's kind chooses the workload, as `shardlens plan` assumes it; traced
    // again when its tokens differ from those just traced (once per change of kind).
    const plan::DefaultWorkload kind = plan::default_workload(result.model);
    const KindWorkload want{kind.phase, settings.seq_set ? settings.seq : kind.seq};
    kind_workload_ = want;
    if (want.phase != a->options.workload.phase || want.seq != a->options.workload.seq) {
      a->options.workload.phase = want.phase;
      a->options.workload.seq = want.seq;
      const int64_t tokens = a->options.workload.tokens_per_forward();
      if (tokens != extract.workload.tokens || want.seq != extract.workload.context) {
        extract.workload.tokens = tokens;
        extract.workload.context = want.seq;
        extract.reuse_unchanged = false;
        result = extractor_->extract(extract);
        a->extraction = extractor_->last_extraction();
        retired_.push_back(std::move(result.retired));
      }
    }
  }
  // A fresh TorchScript export of this script, when the user asked for it: the exact graph wins
  // over the static front end (shardlens-graph runs as a confined child process; its answers are
  // cached by content).
  std::string pt = export_path_for(path);
  const bool use_export = exact_wanted && fresh_export(path, text, pt);
  const bool reuse = result.unchanged && !use_export;
  if (result.unchanged && !reuse) {
    extract.reuse_unchanged = false;
    result = extractor_->extract(extract);
    a->extraction = extractor_->last_extraction();
    retired_.push_back(std::move(result.retired));
  }
  a->extract_ms = since(t0);
  a->extract_stats = result.stats;
  a->dependencies = reuse && last_ ? last_->dependencies : result.dependencies;
  if (reuse) {
    a->path_taken = "unchanged code";
    a->shared_model = last_->shared_model;
  } else {
    a->shared_model = std::make_shared<const ir::ModelIR>(std::move(result.model));
  }
  a->extracted = result.ok;
  if (use_export) {
    torchgraph::GraphRequest request;
    request.file = pt;
    request.batch = a->options.workload.batch;
    request.tokens = a->options.workload.tokens_per_forward();
    auto graph = torchgraph::fetch_graph(request);
    auto exact = graph.ok ? torchgraph::exact_ir_from_json(graph.json) : torchgraph::ExactIR{};
    if (graph.ok && exact.ok) {
      torchgraph::adopt_static_spans(exact.model, a->model());
      for (auto& blind : torchgraph::compare_with_static(exact.model, a->model())) {
        Finding f{"static-blind", "information", "the exact graph (" + pt.substr(pt.find_last_of('/') + 1) + ") sees what the static analysis did not: " + blind.message, 0, 0, std::nullopt, ""};
        if (blind.span.valid()) {
          f.start = a->offset_of(blind.span, false);
          f.end = std::max(f.start, a->offset_of(blind.span, true));
        }
        a->findings.push_back(std::move(f));
      }
      a->shared_model = std::make_shared<const ir::ModelIR>(std::move(exact.model));
      a->extracted = true;
      a->exact_graph = pt;
      result.ok = true;
    } else {
      a->findings.push_back({"exact-graph-failed", "warning",
                             "the export " + pt + " could not be read; using the static analysis: " + (graph.ok ? exact.error : graph.error), 0, 0,
                             std::nullopt, ""});
    }
  }
  if (settings.exact_graph && !settings.allow_execution && fresh_export(path, text, pt))
    a->findings.push_back({"exact-graph-not-allowed", "information",
                           "the export " + pt.substr(pt.find_last_of('/') + 1) +
                               " is not loaded: loading a TorchScript file runs its code; set shardlens.allowExecution to true in your "
                               "editor's settings to allow it",
                           0, 0, std::nullopt, ""});
  if (!result.ok) {
    a->error = result.error;
    a->findings.push_back({"no-model", "information", "shardlens: " + result.error, 0, 0, std::nullopt, ""});
  } else {
    locate_in_text(*a);
    if (!settings.seq_set) fit_sequence_to_model(a->options, a->model());
    auto plan_start = std::chrono::steady_clock::now();
    if (reuse) {
      a->plan = last_->plan;  // its names point into the shared model
      a->complete = last_->complete;
    } else {
      planner_.new_generation();  // what this version does not use goes at the next one
      plan::PlanOptions quick = a->options;
      quick.alternatives = false;
      a->plan = run_planner(a->model(), quick);
      a->complete = !a->options.alternatives || !a->plan.ok;
    }
    a->plan_ms = since(plan_start);
    if (!a->plan.ok) a->findings.push_back({"plan-failed", "warning", "shardlens could not plan: " + a->plan.error, 0, 0, std::nullopt, ""});
  }
  add_plan_findings(*a);
  if (!settings.pipeline_note.empty() && a->extracted) {
    Finding f{"pipeline-shape", "information", settings.pipeline_note, 0, 0, std::nullopt, ""};
    if (!a->model().modules.empty() && a->model().modules[0].span.valid()) {
      f.start = a->offset_of(a->model().modules[0].span, false);
      f.end = std::max(f.start, a->offset_of(a->model().modules[0].span, true));
    }
    a->findings.push_back(std::move(f));
  }
  find_annotations(*a, extractor_->document().roots());
  if (a->plan.ok) check_annotations(*a, *this);
  return done();
}

std::shared_ptr<const DocumentAnalysis> DocumentAnalyzer::complete(const std::shared_ptr<const DocumentAnalysis>& quick,
                                                                   const CancelCheck& cancelled) {
  if (!quick || quick->complete) return nullptr;
  // Asked first: when the memo answers everything the solver never consults the check, and a
  // completion for a version already superseded must still give nothing.
  if (cancelled && cancelled()) return nullptr;
  auto a = std::make_shared<DocumentAnalysis>(*quick);
  locate_in_text(*a);
  a->complete = true;
  // The same plan, now with the alternatives: the memo answers everything else.
  CancelScope scope(planner_, cancelled);
  plan::PlanResult full;
  try {
    full = run_planner(a->model(), a->options);
  } catch (const plan::PlanCancelled&) {
    return nullptr;
  }
  if (full.ok && full.meshes.size() == a->plan.meshes.size())
    for (size_t i = 0; i < full.meshes.size(); ++i) a->plan.meshes[i].alternatives = std::move(full.meshes[i].alternatives);
  if (last_ == quick) last_ = a;
  std::replace(recent_.begin(), recent_.end(), quick, std::shared_ptr<const DocumentAnalysis>(a));
  return a;
}

plan::PlanResult DocumentAnalyzer::run_planner(const ir::ModelIR& model, const plan::PlanOptions& options) {
  planner_runs_ += static_cast<int>(options.meshes.size());
  return planner_.plan(model, options);
}

void DocumentAnalyzer::remember(const std::shared_ptr<const DocumentAnalysis>& next) {
  if (last_ && last_ != next) recent_.insert(recent_.begin(), last_);
  // One analysis per text: the newest. What leaves may hold the last reference to a model, whose
  // freeing should not delay the diagnostics: it goes with the retired.
  auto kept = std::stable_partition(recent_.begin(), recent_.end(), [&](const auto& r) { return r->text != next->text; });
  if (kept - recent_.begin() > static_cast<std::ptrdiff_t>(kRecentAnalyses)) kept = recent_.begin() + kRecentAnalyses;
  for (auto it = kept; it != recent_.end(); ++it) retired_.push_back(std::move(*it));
  recent_.erase(kept, recent_.end());
  last_ = next;
}

std::optional<plan::PlanResult> DocumentAnalyzer::plan_with_pins(const DocumentAnalysis& analysis,
                                                                 const std::map<std::string, std::string>& pins) {
  if (!analysis.plan.ok) return std::nullopt;
  plan::PlanOptions options = analysis.options;
  options.pinned_parameters = pins;
  options.alternatives = false;
  auto result = run_planner(analysis.model(), options);
  if (!result.ok) return std::nullopt;
  return result;
}

}  // namespace shardlens::session
