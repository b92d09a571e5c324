// `shardlens plan FILE [--model EXPR] --mesh RxC [--mesh ...] [--strategy auto|tensor] [--batch N]
//   [--seq N] [--phase prefill|decode] [--dtype bf16|fp32|bfp8] [--hardware wormhole|blackhole]
//   [--format text|json] [--spatial HxW] [--pin PARAM=LAYOUT] [--pin-output MODULE=LAYOUT] [--pins-only]
//   [--emit tt-xla|shard-spec|dtensor|hf-tp-plan|colossalai]`
#include <cstdio>
#include <iostream>
#include <optional>

#include "commands.h"
#include "pipeline.h"
#include "planning_flags.h"
#include "emit/frameworks.h"
#include "emit/insertion.h"
#include "plan/model_kind.h"
#include "plan/plan.h"
#include "plan/plan_output.h"
#include "session/script_pipeline.h"

namespace shardlens::cli {
namespace {

const char* kPlanUsage =
    "usage: shardlens plan FILE [--model EXPR] [--python-path DIR ...] [--python PATH] [--memory-budget MIB] [--mesh RxC|PRESET ...] [--strategy auto|tensor]\n"
    "                      [--batch N] [--seq N] [--phase prefill|decode] [--prefill-weights shared|own]\n"
    "                      [--dtype bf16|fp32|bfp8]\n"
    "                      [--hardware wormhole|blackhole] [--format text|json] [--spatial HxW]\n"
    "                      [--pin PARAM=replicated|shard:D ...] [--pin-output MODULE=replicated|shard:D ...] [--pins-only]\n"
    "                      [--emit tt-xla|shard-spec|dtensor|hf-tp-plan|colossalai]\n"
    "  --emit prints annotation code for the first mesh instead of the plan: tt-xla (xs.mark_sharding\n"
    "  calls, or apply_sharding(model, mesh) when the script builds no instance), shard-spec\n"
    "  (tt-forge-models get_mesh_config() + load_shard_spec()), dtensor (PyTorch parallelize_module\n"
    "  with ColwiseParallel / RowwiseParallel), hf-tp-plan (a transformers base_model_tp_plan dict)\n"
    "  or colossalai (a HybridParallelPlugin configuration with its divisibility checks).\n"
    "  A decoder LM's prefill keeps the weight layouts of its decode plan (one copy of the weights serves\n"
    "  both); --prefill-weights own plans prefill's weights for prefill alone (prefill on devices of its own).\n"
    "\n"
    "       shardlens plan FILE [--model EXPR] [--runs N] FILE [--model EXPR] [--runs N] ... [--devices N | --mesh ...]\n"
    "       shardlens plan --pipeline pyproject.toml [--devices N | --mesh ...]\n"
    "  A pipeline of models (text encoder, DiT, VAE, ...) shares one mesh shape: each model is planned on\n"
    "  every shape of N devices (default 8) or on the meshes given, and the shape fastest for the slowest\n"
    "  model (time per request: --runs forwards, 50 denoising steps for a DiT) is chosen unless some model\n"
    "  cannot run under it; then the fastest shape every model supports. --model and --runs after a FILE\n"
    "  are that FILE's. --pipeline reads [[tool.shardlens.pipeline]] tables (file, model, runs, phase, seq,\n"
    "  batch). One FILE with --devices N chooses that model's shape alone.\n";

// Prints the block, or with --emit-apply (hidden; tests use it) the whole script with the block
// inserted as the editor's code action would.
int print_emitted(const std::string& kind, bool apply, const std::vector<std::string>& args, const std::string& file,
                  const std::string& text, const ir::ModelIR& model, const plan::PlanResult& result,
                  const std::string& dtype) {
  const auto& mp = result.meshes.front();
  if (mp.parameters.empty() && !model.parameters.empty()) {
    std::string why;
    for (auto& d : result.diagnostics)
      if (d.severity == "error") why += "; " + d.message;
    std::fprintf(stderr, "shardlens plan: %s: no layout to emit for mesh %s%s\n", file.c_str(), mp.mesh.shape_string().c_str(), why.c_str());
    return 1;
  }
  if (result.meshes.size() > 1)
    std::fprintf(stderr, "shardlens plan: --emit writes the plan for the first mesh (%s)\n", mp.mesh.shape_string().c_str());
  std::string regenerate = "shardlens plan";
  bool framework = kind == "dtensor" || kind == "hf-tp-plan" || kind == "colossalai";
  for (auto& a : args) {
    if (a != "--emit-apply") regenerate += " " + shell_word(a);
  }
  if (framework) {
    emit::FrameworkOptions fo;
    fo.regenerate = regenerate;
    fo.dtype = dtype;
    if (kind == "dtensor") std::cout << emit::dtensor_block(model, mp, fo);
    else if (kind == "hf-tp-plan") std::cout << emit::hf_tp_plan_block(model, mp, fo);
    else std::cout << emit::colossalai_block(model, mp, result.diagnostics, fo);
    return 0;
  }
  auto edit = emit::annotation_edit(text, model, mp, kind == "tt-xla" ? emit::BlockKind::TtXla : emit::BlockKind::ShardSpec,
                                    regenerate);
  if (!apply) {
    std::cout << edit.block;
    return 0;
  }
  if (!edit.ok) {
    std::fprintf(stderr, "shardlens plan: %s: %s\n", file.c_str(), edit.error.c_str());
    return 1;
  }
  std::cout << emit::apply_insertion(text, edit);
  return 0;
}

}  // namespace

int run_plan(const std::vector<std::string>& args) {
  std::string file, format = "text", emit_kind;
  bool emit_apply = false;
  PlanningArgs planning;
  PipelineArgs pipeline;
  FlagReader flags("shardlens plan", kPlanUsage, args);
  while (flags.next()) {
    // After a FILE, --model is that FILE's (a pipeline names one model per file).
    if (!(flags.is("--model") && !pipeline.entries.empty()) && (take_planning_flag(flags, planning) || flags.format(format))) continue;
    if (flags.is("--emit")) {
      if (auto v = flags.choice({"tt-xla", "shard-spec", "dtensor", "hf-tp-plan", "colossalai"})) emit_kind = *v;
    } else if (flags.is("--emit-apply")) {
      emit_apply = true;
    } else if (!take_pipeline_arg(flags, pipeline)) {
      flags.unknown();
    }
  }
  if (auto code = flags.exit_code()) return *code;
  if (int code = finish_pipeline_args("shardlens plan", pipeline, planning, file)) return code;
  if (auto code = flags.finished(file)) return *code;
  if (pipeline.pipeline()) {
    if (!emit_kind.empty()) {
      std::fprintf(stderr, "shardlens plan: --emit writes one model's annotations on one mesh: give one FILE and --mesh\n");
      return 2;
    }
    return run_pipeline("shardlens plan", pipeline.entries, planning, pipeline.devices, format);
  }
  if (emit_apply && emit_kind != "tt-xla" && emit_kind != "shard-spec") {
    std::fprintf(stderr, "shardlens plan: --emit-apply needs --emit tt-xla|shard-spec\n");
    return 2;
  }
  finish_planning_args(planning);
  PlannedScript planned;
  if (int code = plan_script("shardlens plan", file, planning, planned)) return code;
  const auto& options = planned.options;
  const ir::ModelIR& model = planned.source.model;
  const WorkloadChoice& choice = planned.workload;
  const plan::DefaultWorkload& kind = choice.kind;
  auto& result = planned.result;
  if (!emit_kind.empty())
    return print_emitted(emit_kind, emit_apply, args, file, planned.source.text, model, result, options.workload.dtype);
  // Inputs given by shape (--input) decide their own lengths: the nominal sequence is not what was traced.
  if (kind.position_table > 0 && options.workload.seq > kind.position_table && planning.trace.inputs.empty())
    result.notes.push_back("the sequence (" + std::to_string(options.workload.seq) + ") is longer than the model's own position table (" +
                           std::to_string(kind.position_table) + ")");
  // A decoder's prefill beside its decode plan: the same model traced for the prompt's tokens.
  PlannedScript prefill;
  bool with_prefill = false;
  if (choice.assumed && kind.both_phases) {
    PlanningArgs p = planning;
    p.options.workload.phase = plan::Phase::Prefill;
    p.phase_given = true;
    finish_planning_args(p);
    with_prefill = plan_script("shardlens plan", file, p, prefill) == 0;
  }
  if (format == "json") {
    auto j = plan::to_json(result, model, options);
    describe_workload(choice, j);
    if (planned.weights_from_decode) j["workload"]["weights_from"] = "decode";
    if (with_prefill) {
      j["prefill"] = plan::to_json(prefill.result, prefill.source.model, prefill.options);
      if (prefill.weights_from_decode) j["prefill"]["workload"]["weights_from"] = "decode";
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << workload_line(choice);
    std::cout << plan::to_text(result, model, options);
    if (with_prefill)
      std::cout << "\nprefill (the prompt, " << prefill.options.workload.seq << " tokens), shown beside decode:\n"
                << plan::to_text(prefill.result, prefill.source.model, prefill.options);
  }
  return 0;
}

}  // namespace shardlens::cli
