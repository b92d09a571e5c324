// `shardlens plan FILE [--model EXPR] --mesh RxC [--mesh ...] [--strategy auto|tensor] [--batch N]
//   [--seq N] [--phase prefill|decode] [--dtype bf16|fp32|bfp8] [--hardware wormhole|blackhole]
//   [--format text|json] [--spatial HxW] [--pin PARAM=LAYOUT] [--pin-output MODULE=LAYOUT] [--pins-only]
//   [--emit tt-xla|shard-spec|dtensor|hf-tp-plan|colossalai]`
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli.h"
#include "cli_planning.h"
#include "emit/frameworks.h"
#include "emit/insertion.h"
#include "plan/plan.h"
#include "plan/plan_output.h"
#include "python/value_locator.h"

namespace shardlens::cli {
namespace {

const char* kPlanUsage =
    "usage: shardlens plan FILE [--model EXPR] [--python-path DIR ...] [--memory-budget MIB] [--mesh RxC|PRESET ...] [--strategy auto|tensor]\n"
    "                      [--batch N] [--seq N] [--phase prefill|decode] [--dtype bf16|fp32|bfp8]\n"
    "                      [--hardware wormhole|blackhole] [--format text|json] [--spatial HxW]\n"
    "                      [--pin PARAM=replicated|shard:D ...] [--pin-output MODULE=replicated|shard:D ...] [--pins-only]\n"
    "                      [--emit tt-xla|shard-spec|dtensor|hf-tp-plan|colossalai]\n"
    "  --emit prints annotation code for the first mesh instead of the plan: tt-xla (xs.mark_sharding\n"
    "  calls, or apply_sharding(model, mesh) when the script builds no instance), shard-spec\n"
    "  (tt-forge-models get_mesh_config() + load_shard_spec()), dtensor (PyTorch parallelize_module\n"
    "  with ColwiseParallel / RowwiseParallel), hf-tp-plan (a transformers base_model_tp_plan dict)\n"
    "  or colossalai (a HybridParallelPlugin configuration with its divisibility checks).\n";

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
    if (a == "--emit-apply") continue;
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=+@") == std::string::npos;
    regenerate += " " + (plain ? a : "'" + a + "'");
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
  plan::PlanOptions& options = planning.options;
  for (size_t i = 0; i < args.size(); ++i) {
    auto planning_flag = take_planning_flag("shardlens plan", kPlanUsage, args, i, planning);
    if (planning_flag == FlagStatus::Error) return 2;
    if (planning_flag == FlagStatus::Taken) continue;
    std::string a = args[i];
    std::string inline_value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos && a.rfind("--pin", 0) != 0) {
      inline_value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      has_inline = true;
    }
    auto value = [&]() -> std::optional<std::string> {
      if (has_inline) return inline_value;
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "shardlens plan: %s needs a value\n%s", a.c_str(), kPlanUsage);
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--format") {
      auto v = value();
      if (!v) return 2;
      if (*v != "text" && *v != "json") {
        std::fprintf(stderr, "shardlens plan: --format must be text or json, not '%s'\n", v->c_str());
        return 2;
      }
      format = *v;
    } else if (a == "--emit") {
      auto v = value();
      if (!v) return 2;
      if (*v != "tt-xla" && *v != "shard-spec" && *v != "dtensor" && *v != "hf-tp-plan" && *v != "colossalai") {
        std::fprintf(stderr, "shardlens plan: --emit must be tt-xla, shard-spec, dtensor, hf-tp-plan or colossalai, not '%s'\n", v->c_str());
        return 2;
      }
      emit_kind = *v;
    } else if (a == "--emit-apply") {
      emit_apply = true;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "shardlens plan: unknown option '%s'\n%s", a.c_str(), kPlanUsage);
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "shardlens plan: more than one FILE given ('%s', '%s')\n", file.c_str(), a.c_str());
      return 2;
    }
  }
  if (file.empty()) {
    std::fputs(kPlanUsage, stderr);
    return 2;
  }
  if (emit_apply && emit_kind != "tt-xla" && emit_kind != "shard-spec") {
    std::fprintf(stderr, "shardlens plan: --emit-apply needs --emit tt-xla|shard-spec\n");
    return 2;
  }
  finish_planning_args(planning);
  auto source = extract_for_planning("shardlens plan", file, planning);
  if (!source) return 1;
  const std::string& text = source->text;
  const ir::ModelIR& model = source->model;
  if (!check_pins("shardlens plan", model, options)) return 2;
  options.locate = [&text](const std::vector<std::string>& keys, int64_t value, ir::Span fallback) {
    ir::Span s = python::locate_value(text, keys, value);
    return s.valid() ? s : fallback;
  };
  auto result = plan::plan_model(model, options);
  if (!result.ok) {
    std::fprintf(stderr, "shardlens plan: %s: %s\n", file.c_str(), result.error.c_str());
    return 1;
  }
  if (!emit_kind.empty()) return print_emitted(emit_kind, emit_apply, args, file, text, model, result,
                                                  options.workload.dtype);
  if (format == "json") std::cout << plan::to_json(result, model, options).dump(2) << "\n";
  else std::cout << plan::to_text(result, model, options);
  return 0;
}

}  // namespace shardlens::cli
