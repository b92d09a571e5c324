// Planning real scripts in tests: extract + trace + plan, and lookups into the result.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "plan/plan.h"
#include "python/extractor.h"

namespace shardlens::test {

struct Planned {
  ir::ModelIR model;
  plan::PlanResult result;
};

inline plan::Mesh mesh(const std::string& s) {
  std::string error;
  auto m = plan::parse_mesh(s, error);
  REQUIRE(m);
  return *m;
}

inline Planned plan_script(const std::string& text, plan::PlanOptions options = {}, const std::string& model_expr = "") {
  python::ModelExtractor extractor(text, "model.py");
  python::ExtractOptions extract;
  extract.trace_forward = true;
  extract.model_expression = model_expr;
  extract.workload.batch = options.workload.batch;
  extract.workload.tokens = options.workload.tokens_per_forward();
  auto r = extractor.extract(extract);
  REQUIRE(r.ok);
  REQUIRE(r.model.dataflow.error.empty());
  if (options.meshes.empty()) options.meshes.push_back(mesh("1x8"));
  Planned p{std::move(r.model), {}};
  p.result = plan::plan_model(p.model, options);
  REQUIRE(p.result.ok);
  return p;
}

inline plan::ParameterLayout param(const plan::MeshPlan& mp, const std::string& name) {
  for (const plan::ParameterLayout p : mp.parameters)
    if (p.name == name) return p;
  FAIL("no parameter " << name);
  return {};
}

// Collectives per forward by kind ("all_reduce" -> 49).
inline std::map<std::string, int> counts(const plan::MeshPlan& mp) {
  std::map<std::string, int> out;
  for (auto& c : mp.collectives) out[plan::ccl_name(c.kind)] += c.count;
  return out;
}

inline int count_at(const plan::MeshPlan& mp, const std::string& kind, const std::string& at) {
  int n = 0;
  for (auto& c : mp.collectives)
    if (plan::ccl_name(c.kind) == kind && c.at == at) n += c.count;
  return n;
}

inline std::vector<std::string> spec(const plan::ParameterLayout& p) {
  std::vector<std::string> out;
  auto full = p.spec();
  REQUIRE(full);
  for (auto& axes : *full) {
    std::string s;
    for (auto& a : axes) s += (s.empty() ? "" : "+") + a;
    out.push_back(s.empty() ? "-" : s);
  }
  return out;
}

}  // namespace shardlens::test
