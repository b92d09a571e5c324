#include "planning_flags.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

#include "plan/plan_output.h"
#include "session/plan_choices.h"
#include "session/script_pipeline.h"
#include "session/site_packages.h"

namespace shardlens::cli {
namespace {

bool valid_layout(const std::string& s) {
  if (s == "replicated" || s == "partial") return true;
  if (s.rfind("shard:", 0) != 0 || s.size() == 6) return false;
  for (size_t i = 6; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

}  // namespace

bool take_script_flag(FlagReader& flags, ScriptArgs& out) {
  if (flags.is("--model")) {
    if (auto v = flags.value()) out.model_expr = *v;
  } else if (flags.is("--python-path")) {
    if (auto v = flags.value()) out.python_path.push_back(*v);
  } else if (flags.is("--python")) {
    if (auto v = flags.value()) out.python = *v;
  } else if (flags.is("--memory-budget")) {
    if (auto n = flags.positive()) out.memory_budget_mib = static_cast<uint64_t>(*n);
  } else {
    return false;
  }
  return true;
}

python::ExtractOptions script_extract_options(const ScriptArgs& script, const char* command) {
  python::ExtractOptions options;
  options.model_expression = script.model_expr;
  options.python_path = python::search_path_entries(script.python_path);
  if (script.memory_budget_mib) options.memory_budget_mib = script.memory_budget_mib;
  std::string why;
  options.site_packages = session::interpreter_site_packages(script.python, &why);
  if (!why.empty()) std::fprintf(stderr, "%s: --python: %s; its site-packages are not searched\n", command, why.c_str());
  return options;
}

bool take_planning_flag(FlagReader& flags, PlanningArgs& out) {
  if (take_script_flag(flags, out)) return true;
  auto& options = out.options;
  static const std::pair<const char*, session::PlanChoice> kChoices[] = {{"--strategy", session::PlanChoice::Strategy},
                                                                         {"--phase", session::PlanChoice::Phase},
                                                                         {"--dtype", session::PlanChoice::Dtype}};
  for (auto& [flag, choice] : kChoices)
    if (flags.is(flag)) {
      if (auto v = flags.choice(session::choice_names(choice))) session::apply_choice(options, choice, *v);
      if (choice == session::PlanChoice::Phase) out.phase_given = true;
      return true;
    }
  if (flags.is("--hardware")) {
    auto v = flags.value();
    if (!v) return true;
    std::string error;
    options.hardware = plan::resolve_hardware(*v, error);  // a built-in name or a profile (shardlens calibrate)
    if (!options.hardware) flags.fail("--hardware: " + error);
  } else if (flags.is("--prefill-weights")) {
    if (auto v = flags.choice({"shared", "own"})) out.prefill_weights_own = *v == "own";
  } else if (flags.is("--pins-only")) {
    options.evaluate_pins_only = true;
  } else if (flags.is("--pin") || flags.is("--pin-output")) {
    auto v = flags.value();
    if (!v) return true;
    auto eq = v->find('=');
    if (eq == std::string::npos || !valid_layout(v->substr(eq + 1)))
      flags.fail(flags.name() + " takes NAME=LAYOUT with LAYOUT replicated, partial or shard:D, not '" + *v + "'");
    else (flags.is("--pin") ? options.pinned_parameters : options.pinned_outputs)[v->substr(0, eq)] = v->substr(eq + 1);
  } else if (flags.is("--mesh")) {
    auto v = flags.value();
    if (!v) return true;
    std::string error;
    if (auto m = plan::parse_mesh(*v, error)) options.meshes.push_back(*m);
    else flags.fail(error);
  } else if (flags.is("--batch")) {
    if (auto n = flags.positive()) options.workload.batch = *n;
  } else if (flags.is("--seq")) {
    if (auto n = flags.positive()) options.workload.seq = *n;
    out.seq_given = true;
  } else if (flags.is("--spatial")) {
    auto v = flags.value();
    if (!v) return true;
    auto x = v->find('x');
    auto h = x == std::string::npos ? std::nullopt : positive_int(flags.command(), flags.name(), v->substr(0, x));
    auto w = h ? positive_int(flags.command(), flags.name(), v->substr(x + 1)) : std::nullopt;
    if (!h || !w) return flags.fail("--spatial must be HxW with positive integers, e.g. 64x64"), true;
    out.trace.spatial[0] = *h;
    out.trace.spatial[1] = *w;
    out.trace.spatial_given = true;
  } else if (flags.is("--input")) {
    auto v = flags.value();
    if (!v) return true;
    std::string error;
    auto given = python::parse_given_input(*v, error);
    if (!given) return flags.fail(error), true;
    for (auto& g : out.trace.inputs)
      if (g.name == given->name) return flags.fail("--input " + g.name + " is given twice"), true;
    out.trace.inputs.push_back(*given);
  } else {
    return false;
  }
  return true;
}

void finish_planning_args(PlanningArgs& out) {
  if (out.options.meshes.empty()) {
    std::string error;
    out.options.meshes.push_back(*plan::parse_mesh("t3k", error));
  }
  out.trace.batch = out.options.workload.batch;
  out.trace.tokens = out.options.workload.tokens_per_forward();
  out.trace.context = out.options.workload.seq;
  out.trace.tokens_given = out.seq_given;
}

std::string WorkloadChoice::phase_name() const { return kind.phase == plan::Phase::Decode ? "decode" : "prefill"; }

WorkloadChoice choose_workload(const ir::ModelIR& model, PlanningArgs& planning) {
  WorkloadChoice c;
  c.kind = plan::default_workload(model);
  c.assumed = !planning.phase_given;
  if (!c.assumed) {
    c.kind.phase = planning.options.workload.phase;
    c.why = "given with --phase";
    return c;
  }
  auto& workload = planning.options.workload;
  workload.phase = c.kind.phase;
  if (!planning.seq_given) workload.seq = c.kind.seq;
  const int64_t traced = planning.trace.tokens;
  finish_planning_args(planning);
  c.retrace = planning.trace.tokens != traced;
  c.why = "assumed for a " + std::string(plan::model_kind_name(c.kind.kind)) + " (" + c.kind.evidence + "): " + c.kind.why;
  return c;
}

void describe_workload(const WorkloadChoice& choice, nlohmann::json& plan_json) {
  plan_json["model_kind"] = {{"kind", plan::model_kind_name(choice.kind.kind)},
                             {"evidence", choice.kind.evidence},
                             {"position_table", choice.kind.position_table}};
  plan_json["workload"]["assumed"] = choice.assumed;
  plan_json["workload"]["why"] = choice.why;
}

std::string workload_line(const WorkloadChoice& choice) { return "workload: " + choice.phase_name() + " — " + choice.why + "\n"; }

std::optional<PlanningSource> extract_for_planning(const std::string& command, const std::string& file,
                                                   const PlanningArgs& planning) {
  PlanningSource source;
  std::string error;
  if (!session::read_script(file, source.text, error)) {
    std::fprintf(stderr, "%s: %s\n", command.c_str(), error.c_str());
    return std::nullopt;
  }
  python::ModelExtractor extractor(source.text, file);
  python::ExtractOptions options = script_extract_options(planning, command.c_str());
  options.trace_forward = true;
  options.workload = planning.trace;
  auto extracted = extractor.extract(options);
  if (!extracted.ok) {
    std::fprintf(stderr, "%s: %s: %s\n", command.c_str(), file.c_str(), extracted.error.c_str());
    return std::nullopt;
  }
  source.model = std::move(extracted.model);
  return source;
}

bool check_pins(const std::string& command, const ir::ModelIR& model, const plan::PlanOptions& options) {
  std::string unknown = session::unknown_pin(model, options);
  if (!unknown.empty()) std::fprintf(stderr, "%s: %s\n", command.c_str(), unknown.c_str());
  return unknown.empty();
}

namespace {

// A decode plan's layout of one weight as a pin ("" when it is not pinned: vectors (norm scales,
// biases) are small enough to keep in any layout and follow the activations; whole experts per
// device, or a split over both axes of a 2-D mesh, which the search decides per axis).
std::string layout_pin(const plan::ParameterLayout& layout) {
  if (layout.rank < 2 || layout.expert >= 0 || (layout.axes && layout.axes->size() > 1)) return "";
  if (layout.sharded_dim < 0) return "replicated";
  if (layout.layout == "column_segments") return "segments:" + std::to_string(layout.sharded_dim) + ":" + std::to_string(layout.segments);
  return "shard:" + std::to_string(layout.sharded_dim);
}

// A decoder LM keeps one copy of its weights for prompts (prefill) and generation (decode): its
// prefill is planned with the layouts its decode plan gives the weights, on each mesh, and the
// plan prefill alone would choose is listed as the alternative that needs a second copy. Decode
// decides because it runs once per generated token, prefill once per prompt. Keeps `out` as it is
// when the decode plan cannot be made.
void plan_with_decode_weights(const std::string& command, const std::string& file, const PlanningArgs& planning, PlannedScript& out) {
  PlanningArgs decode_args = planning;
  decode_args.options.workload.phase = plan::Phase::Decode;
  decode_args.options.workload.seq = out.options.workload.seq;
  decode_args.options.alternatives = false;
  decode_args.phase_given = decode_args.seq_given = true;
  finish_planning_args(decode_args);
  auto decode_source = extract_for_planning(command, file, decode_args);
  if (!decode_source) return;
  const plan::PlanResult decode = session::plan_in_text(decode_source->text, decode_source->model, decode_args.options);
  if (!decode.ok || decode.meshes.size() != out.options.meshes.size()) return;
  plan::PlanOptions shared = out.options;
  shared.pinned_parameters_per_mesh.assign(shared.meshes.size(), {});
  // Where the rows put the weights (experts spread over them, a split over both axes) is part of
  // their layout: prefill keeps that mode.
  shared.rows_mode_per_mesh.assign(shared.meshes.size(), "");
  for (size_t m = 0; m < decode.meshes.size(); ++m)
    if (decode.meshes[m].mode.rfind("expert parallel over", 0) == 0 || decode.meshes[m].mode.rfind("2-D tensor parallel", 0) == 0)
      shared.rows_mode_per_mesh[m] = decode.meshes[m].mode;
  for (size_t m = 0; m < decode.meshes.size(); ++m)
    for (const plan::ParameterLayout layout : decode.meshes[m].parameters)
      if (std::string pin = layout_pin(layout); !pin.empty()) shared.pinned_parameters_per_mesh[m][std::string(layout.name)] = pin;
  plan::PlanResult result = session::plan_in_text(out.source.text, out.source.model, shared);
  if (!result.ok || result.meshes.size() != out.result.meshes.size()) return;
  for (size_t m = 0; m < result.meshes.size(); ++m) {
    plan::MeshPlan& mp = result.meshes[m];
    const plan::Totals& alone = out.result.meshes[m].totals;
    mp.notes.push_back("weights laid out as the decode plan lays them out: one copy of the weights serves prompts and generation");
    if (alone.collectives == mp.totals.collectives && std::abs(alone.est_time_us - mp.totals.est_time_us) < 1e-6) continue;
    plan::Alternative a;
    a.name = "weights laid out for prefill alone";
    a.totals = alone;
    const double gain = mp.totals.est_time_us - alone.est_time_us;
    a.why_rejected = "excluded by the decode plan's weight layouts (decode needs them; this layout would need a second copy of the weights)";
    if (gain > 0) a.why_rejected += "; " + plan::format_us(gain) + " faster by the estimate";
    if (alone.collectives != mp.totals.collectives)
      a.why_rejected += "; " + std::to_string(alone.collectives) + " collectives instead of " + std::to_string(mp.totals.collectives);
    mp.alternatives.push_back(std::move(a));
  }
  out.result = std::move(result);
  out.options = std::move(shared);
  out.weights_from_decode = true;
}

}  // namespace

int plan_script(const std::string& command, const std::string& file, PlanningArgs& planning, PlannedScript& out) {
  auto source = extract_for_planning(command, file, planning);
  if (!source) return 1;
  out.workload = choose_workload(source->model, planning);
  if (out.workload.retrace && !(source = extract_for_planning(command, file, planning))) return 1;
  out.source = std::move(*source);
  if (!check_pins(command, out.source.model, planning.options)) return 2;
  plan::PlanOptions& options = out.options;
  options = planning.options;
  if (!planning.seq_given && session::fit_sequence_to_model(options, out.source.model))
    out.source.model.notes.push_back("sequence length " + std::to_string(options.workload.seq) +
                                     ": the longest the model's position tables allow its token inputs (--seq to choose)");
  out.result = session::plan_in_text(out.source.text, out.source.model, options);
  if (!out.result.ok) {
    std::fprintf(stderr, "%s: %s: %s\n", command.c_str(), file.c_str(), out.result.error.c_str());
    return 1;
  }
  if (out.workload.kind.both_phases && options.workload.phase == plan::Phase::Prefill && !planning.prefill_weights_own &&
      options.pinned_parameters.empty() && options.pinned_outputs.empty() && !options.evaluate_pins_only)
    plan_with_decode_weights(command, file, planning, out);
  return 0;
}

}  // namespace shardlens::cli
