// The sharding report (`sharding_analysis.md`): the sections of the Tenstorrent sharding workflow
// (SHARDING.md §8; tt-xla's sharding-model-analysis template) written from a model and its plan —
// model & target, architecture (with column→row pairs and a Mermaid layout diagram per block),
// recommended strategy, per-component design, CCL budget, bottlenecks and compiler limits (from the
// knowledge base in compiler_limits.json), memory fallback, sources — and an SVG bar chart of
// collective bytes per component written beside it. Output is deterministic (no timestamps).
#pragma once

#include <string>

#include "ir/model_ir.h"
#include "plan/plan.h"

namespace shardlens::report {

struct ReportOptions {
  std::string script_path;  // shown in §1; the model's own `source` when empty
  // How the Markdown links the chart (relative to the Markdown file); empty: no link.
  std::string chart_href = "sharding_analysis.ccl_bytes.svg";
  // The command that regenerates the report, shown under the title; empty: a `shardlens report`
  // line built from the script path and the plan options.
  std::string regenerate;
  // Per component, re-plan with its parameters pinned replicated to say how much slower that is
  // (one extra plan per sharded component and mesh, plus one baseline per mesh).
  bool component_alternatives = true;
};

// The report as Markdown (pure: reads nothing, writes nothing).
std::string report_markdown(const ir::ModelIR& model, const plan::PlanResult& result, const plan::PlanOptions& options,
                            const ReportOptions& report_options);

// The bar chart of collective bytes per component, one panel per mesh, as a standalone SVG document
// (hand-written, no dependencies): one <g class="bar" data-component=... data-bytes=...> per
// component that has collectives, segments coloured by collective kind.
std::string ccl_chart_svg(const ir::ModelIR& model, const plan::PlanResult& result);

// "out/sharding_analysis.md" -> "out/sharding_analysis.ccl_bytes.svg" (the extension replaced; a
// name without ".md" gets the suffix appended).
std::string chart_path_for(const std::string& markdown_path);

struct ReportFiles {
  bool ok = false;
  std::string error;          // why nothing (or not everything) was written
  std::string markdown_path;  // as written (absolute when the output path was)
  std::string chart_path;
};

// Writes the Markdown to `output_path` (a directory gets "sharding_analysis.md" inside; missing
// parent directories are created) and the chart beside it, each through a temporary file renamed
// into place. `script_path` is shown in §1 and in the regenerate line.
ReportFiles write_report(const ir::ModelIR& model, const plan::PlanResult& result, const plan::PlanOptions& options,
                         const std::string& script_path, const std::string& output_path);
// The same with every report option (script_path, regenerate, component_alternatives); chart_href
// is set to the chart's file name.
ReportFiles write_report(const ir::ModelIR& model, const plan::PlanResult& result, const plan::PlanOptions& options,
                         const ReportOptions& report_options, const std::string& output_path);

}  // namespace shardlens::report
