#include "cli_planning.h"

#include <cctype>
#include <cstdio>
#include <optional>
#include <utility>

#include "cli.h"
#include "python/extractor.h"

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

std::optional<int64_t> positive_int(const char* command, const std::string& flag, const std::string& v) {
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (...) {
    used = 0;
  }
  if (used != v.size() || x <= 0) {
    std::fprintf(stderr, "%s: %s must be a positive integer, not '%s'\n", command, flag.c_str(), v.c_str());
    return std::nullopt;
  }
  return x;
}

FlagStatus take_planning_flag(const char* command, const char* usage, const std::vector<std::string>& args, size_t& i,
                              PlanningArgs& out) {
  std::string a = args[i];
  std::string inline_value;
  bool has_inline = false;
  if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos && a.rfind("--pin", 0) != 0) {
    inline_value = a.substr(a.find('=') + 1);
    a = a.substr(0, a.find('='));
    has_inline = true;
  }
  static const char* kFlags[] = {"--model", "--mesh", "--strategy", "--batch", "--seq", "--phase", "--dtype",
                                 "--hardware", "--spatial", "--pin", "--pin-output", "--pins-only", "--python-path", "--memory-budget"};
  bool mine = false;
  for (auto* f : kFlags) mine |= a == f;
  if (!mine) return FlagStatus::NotMine;
  auto& options = out.options;
  auto value = [&]() -> std::optional<std::string> {
    if (has_inline) return inline_value;
    if (i + 1 >= args.size()) {
      std::fprintf(stderr, "%s: %s needs a value\n%s", command, a.c_str(), usage);
      return std::nullopt;
    }
    return args[++i];
  };
  auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "%s: %s\n", command, message.c_str());
    return FlagStatus::Error;
  };
  if (a == "--pins-only") {
    options.evaluate_pins_only = true;
    return FlagStatus::Taken;
  }
  if (a == "--pin" || a == "--pin-output") {
    if (i + 1 >= args.size()) return fail(a + " needs NAME=LAYOUT");
    std::string v = args[++i];
    auto eq = v.find('=');
    if (eq == std::string::npos || !valid_layout(v.substr(eq + 1)))
      return fail(a + " takes NAME=LAYOUT with LAYOUT replicated, partial or shard:D, not '" + v + "'");
    (a == "--pin" ? options.pinned_parameters : options.pinned_outputs)[v.substr(0, eq)] = v.substr(eq + 1);
    return FlagStatus::Taken;
  }
  auto v = value();
  if (!v) return FlagStatus::Error;
  if (a == "--model") {
    out.model_expr = *v;
  } else if (a == "--python-path") {
    out.python_path.push_back(*v);
  } else if (a == "--memory-budget") {
    auto n = positive_int(command, a, *v);
    if (!n) return FlagStatus::Error;
    out.memory_budget_mib = static_cast<uint64_t>(*n);
  } else if (a == "--mesh") {
    std::string error;
    auto m = plan::parse_mesh(*v, error);
    if (!m) return fail(error);
    options.meshes.push_back(*m);
  } else if (a == "--strategy") {
    if (*v == "auto") options.strategy = plan::StrategyMode::Auto;
    else if (*v == "tensor") options.strategy = plan::StrategyMode::Tensor;
    else return fail("--strategy must be auto or tensor, not '" + *v + "'");
  } else if (a == "--batch" || a == "--seq") {
    auto n = positive_int(command, a, *v);
    if (!n) return FlagStatus::Error;
    (a == "--batch" ? options.workload.batch : options.workload.seq) = *n;
  } else if (a == "--phase") {
    if (*v == "prefill") options.workload.phase = plan::Phase::Prefill;
    else if (*v == "decode") options.workload.phase = plan::Phase::Decode;
    else return fail("--phase must be prefill or decode, not '" + *v + "'");
  } else if (a == "--dtype") {
    if (*v != "bf16" && *v != "fp32" && *v != "bfp8") return fail("--dtype must be bf16, fp32 or bfp8, not '" + *v + "'");
    options.workload.dtype = *v;
  } else if (a == "--hardware") {
    options.hardware = plan::find_hardware(*v);
    if (!options.hardware) return fail("--hardware must be wormhole or blackhole, not '" + *v + "'");
  } else if (a == "--spatial") {
    auto x = v->find('x');
    auto h = x == std::string::npos ? std::nullopt : positive_int(command, a, v->substr(0, x));
    auto w = h ? positive_int(command, a, v->substr(x + 1)) : std::nullopt;
    if (!h || !w) return fail("--spatial must be HxW with positive integers, e.g. 64x64");
    out.trace.spatial[0] = *h;
    out.trace.spatial[1] = *w;
  }
  return FlagStatus::Taken;
}

void finish_planning_args(PlanningArgs& out) {
  if (out.options.meshes.empty()) {
    std::string error;
    out.options.meshes.push_back(*plan::parse_mesh("t3k", error));
  }
  out.trace.batch = out.options.workload.batch;
  out.trace.tokens = out.options.workload.tokens_per_forward();
}

std::optional<PlanningSource> extract_for_planning(const char* command, const std::string& file,
                                                   const PlanningArgs& planning) {
  PlanningSource source;
  std::string error;
  if (!read_file(file, source.text, error)) {
    std::fprintf(stderr, "%s: %s\n", command, error.c_str());
    return std::nullopt;
  }
  if (source.text.find('\0') != std::string::npos) {
    std::fprintf(stderr, "%s: '%s' is not a text file (it contains NUL bytes)\n", command, file.c_str());
    return std::nullopt;
  }
  python::ModelExtractor extractor(source.text, file);
  python::ExtractOptions extract;
  extract.model_expression = planning.model_expr;
  extract.python_path = python::search_path_entries(planning.python_path);
  if (planning.memory_budget_mib) extract.memory_budget_mib = planning.memory_budget_mib;
  extract.trace_forward = true;
  extract.workload = planning.trace;
  auto extracted = extractor.extract(extract);
  if (!extracted.ok) {
    std::fprintf(stderr, "%s: %s: %s\n", command, file.c_str(), extracted.error.c_str());
    return std::nullopt;
  }
  source.model = std::move(extracted.model);
  return source;
}

bool check_pins(const char* command, const ir::ModelIR& model, const plan::PlanOptions& options) {
  for (auto& [name, layout] : options.pinned_parameters) {
    bool known = false;
    for (auto& p : model.parameters) known |= p.name == name;
    if (!known) {
      std::fprintf(stderr, "%s: --pin %s: the model has no parameter of that name\n", command, name.c_str());
      return false;
    }
  }
  for (auto& [name, layout] : options.pinned_outputs) {
    bool known = false;
    for (auto& m : model.modules) known |= m.name == name;
    if (!known) {
      std::fprintf(stderr, "%s: --pin-output %s: the model has no module of that name\n", command, name.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace shardlens::cli
