// shardlens-graph: loads a TorchScript file with LibTorch and prints the exact graph of its
// forward() for one workload (modules, parameters, ops with module paths, shapes and source
// spans) as JSON or text. A separate executable so that shardlens itself never links LibTorch;
// `shardlens graph`, `shardlens plan --graph` and the language server run it as a child process.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <c10/util/Logging.h>

#include "ir/split.h"
#include "torch/graph_evaluator.h"
#include "torch/graph_json.h"
#include "torch/plan_check.h"
#include "torch/torchscript_model.h"

namespace {

const char* kUsage =
    "usage: shardlens-graph FILE.pt [--batch N] [--tokens N] [--spatial HxW] [--input NAME=D0,D1,...[:DTYPE] ...]\n"
    "                       [--format json|text] [--no-graph]\n"
    "  Loads a TorchScript file (as `shardlens export` writes it) and prints its modules, parameters and\n"
    "  the ops of forward() evaluated on meta tensors: --tokens is the sequence length of this forward\n"
    "  (decode: 1), forward inputs get their shapes from their first use unless --input gives them.\n"
    "  Exit status: 0 printed (a graph that could only partly be evaluated says so in graph.error),\n"
    "  1 the file cannot be loaded, 2 usage.\n"
    "\n"
    "       shardlens-graph FILE.pt --verify PLAN.json --mesh RxC [--tolerance X] [--seed N] [--batch N] [--tokens N]\n"
    "                       [--input ...] [--format json|text]\n"
    "  Checks a plan (`shardlens plan --format json`) numerically: every device runs forward() with its\n"
    "  share of random weights and the plan's collectives; each component is compared with the\n"
    "  unsharded forward. Exit status: 0 every checked component agrees; 1 the model cannot be loaded\n"
    "  or run; 2 usage; 4 a component differs beyond the tolerance; 5 the plan does not fit the model.\n";

// All of s as a number, or nothing.
template <class Number>
std::optional<Number> number(const std::string& s) {
  try {
    size_t used = 0;
    Number v;
    if constexpr (std::is_same_v<Number, double>) v = std::stod(s, &used);
    else if constexpr (std::is_same_v<Number, long long>) v = std::stoll(s, &used);
    else v = std::stoull(s, &used);
    if (used == s.size()) return v;
  } catch (...) {
  }
  return std::nullopt;
}

std::optional<int64_t> positive(const std::string& s) {
  auto v = number<long long>(s);
  return v && *v > 0 ? std::optional<int64_t>(*v) : std::nullopt;
}

std::optional<double> positive_real(const std::string& s) {
  auto v = number<double>(s);
  return v && *v > 0 ? v : std::nullopt;
}

// "AxB" of two positive integers.
std::optional<std::pair<int64_t, int64_t>> size_pair(const std::string& s) {
  auto x = s.find('x');
  auto a = x == std::string::npos ? std::nullopt : positive(s.substr(0, x));
  auto b = a ? positive(s.substr(x + 1)) : std::nullopt;
  if (!a || !b) return std::nullopt;
  return std::make_pair(*a, *b);
}

// A flag's value as `parse` reads it; nothing, and the usage message, if it does not parse.
template <class Parse>
auto parsed(const std::optional<std::string>& v, Parse parse, const char* usage) -> decltype(parse(*v)) {
  if (!v) return std::nullopt;
  auto r = parse(*v);
  if (!r) std::fprintf(stderr, "shardlens-graph: %s\n", usage);
  return r;
}

bool parse_input(const std::string& text, shardlens::torchgraph::InputSpec& spec) {
  auto eq = text.find('=');
  if (eq == std::string::npos) return false;
  spec.name = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  auto colon = rest.find(':');
  if (colon != std::string::npos) {
    spec.dtype = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
  }
  std::replace(rest.begin(), rest.end(), 'x', ',');  // 1x128 as `plan --input` writes it, or 1,128
  for (const std::string& size : shardlens::ir::split(rest, ',')) {
    auto v = positive(size);
    if (!v) return false;
    spec.shape.push_back(*v);
  }
  spec.why = "given";
  return !spec.shape.empty();
}

}  // namespace

int main(int argc, char** argv) {
  // Ops without a meta kernel throw; c10 would walk the stack (dladdr per frame) for every one.
  c10::SetStackTraceFetcher([] { return std::string(); });
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string file, format = "json", verify_plan;
  bool graph = true, format_given = false;
  shardlens::torchgraph::CheckOptions check;
  shardlens::torchgraph::EvalOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "shardlens-graph: %s needs a value\n", a.c_str());
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--batch" || a == "--tokens") {
      auto v = value();
      auto n = v ? positive(*v) : std::nullopt;
      if (!n) {
        std::fprintf(stderr, "shardlens-graph: %s must be a positive integer\n", a.c_str());
        return 2;
      }
      (a == "--batch" ? options.batch : options.tokens) = *n;
    } else if (a == "--spatial") {
      auto hw = parsed(value(), size_pair, "--spatial must be HxW, e.g. 64x64");
      if (!hw) return 2;
      options.spatial[0] = hw->first;
      options.spatial[1] = hw->second;
    } else if (a == "--input") {
      auto v = value();
      shardlens::torchgraph::InputSpec spec;
      if (!v || !parse_input(*v, spec)) {
        std::fprintf(stderr, "shardlens-graph: --input takes NAME=SHAPE[:DTYPE], sizes joined by x or comma, e.g. idx=1x128:int64\n");
        return 2;
      }
      options.inputs.push_back(spec);
    } else if (a == "--format") {
      auto v = value();
      if (!v || (*v != "json" && *v != "text")) {
        std::fprintf(stderr, "shardlens-graph: --format must be json or text\n");
        return 2;
      }
      format = *v;
      format_given = true;
    } else if (a == "--verify") {
      auto v = value();
      if (!v) return 2;
      verify_plan = *v;
    } else if (a == "--mesh") {
      auto rc = parsed(value(), size_pair, "--mesh must be RxC, e.g. 1x4");
      if (!rc) return 2;
      check.rows = rc->first;
      check.cols = rc->second;
    } else if (a == "--tolerance") {
      auto t = parsed(value(), positive_real, "--tolerance must be a positive number");
      if (!t) return 2;
      check.tolerance = *t;
    } else if (a == "--seed") {
      auto n = parsed(value(), number<unsigned long long>, "--seed must be a non-negative integer");
      if (!n) return 2;
      check.seed = *n;
    } else if (a == "--no-graph") {
      graph = false;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "shardlens-graph: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "shardlens-graph: more than one FILE given\n");
      return 2;
    }
  }
  if (file.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string error;
  auto model = shardlens::torchgraph::load_torchscript(file, error);
  if (!model) {
    std::fprintf(stderr, "shardlens-graph: %s\n", error.c_str());
    return 1;
  }
  if (!verify_plan.empty()) {
    std::ifstream in(verify_plan);
    nlohmann::json plan;
    if (!in) {
      std::fprintf(stderr, "shardlens-graph: cannot open plan '%s'\n", verify_plan.c_str());
      return 2;
    }
    try {
      in >> plan;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "shardlens-graph: %s is not JSON: %s\n", verify_plan.c_str(), e.what());
      return 5;
    }
    check.eval = options;
    shardlens::torchgraph::CheckReport report;
    try {
      report = shardlens::torchgraph::check_plan(*model, plan, check);
    } catch (const std::exception& e) {
      // A hand-edited plan with a key of the wrong type, mostly.
      report.error = std::string("the plan cannot be read: ") + e.what();
      report.error_kind = 5;
    }
    if (format_given && format == "json") std::cout << shardlens::torchgraph::check_to_json(report, check).dump(1) << "\n";
    else std::cout << shardlens::torchgraph::check_to_text(report, check);
    if (!report.error.empty()) return report.error_kind ? report.error_kind : 1;
    if (!report.ok) return 4;
    return report.verified() ? 0 : 7;  // 7: what was checked agrees, but not everything was checked
  }
  std::optional<shardlens::torchgraph::ExactGraph> g;
  if (graph) {
    // Inputs given by name or by position.
    g = shardlens::torchgraph::evaluate_forward(*model, options);
  }
  if (format == "json") std::cout << shardlens::torchgraph::graph_to_json(*model, g ? &*g : nullptr).dump() << "\n";
  else std::cout << shardlens::torchgraph::graph_to_text(*model, g ? &*g : nullptr);
  return 0;
}
