// The chain every face runs on a script, wired once: read it, extract its model (forward()
// traced), check the pins against it, and plan with the planner's diagnostics pointing at the
// config values in its text. The CLI's commands and the server's analysis call these.
#pragma once

#include <string>
#include <vector>

#include "ir/model_ir.h"
#include "plan/plan.h"
#include "python/extractor.h"

namespace shardlens::session {

// Reads a whole file; false with a message for missing files, directories and read errors.
bool read_file(const std::string& path, std::string& out, std::string& error);
// read_file, and refuses text with NUL bytes (shardlens analyses Python source only) and files over
// the server's cap (python::ModuleLoader::kMaxModuleBytes; a 20 MB file took 2.6 GB to inspect).
bool read_script(const std::string& path, std::string& out, std::string& error);
// "is larger than 8 MiB; shardlens does not analyse it": the cap's message after what is too large.
std::string too_large_to_analyse();

// The export beside a script ("model.py" -> "model.pt"), as `shardlens export` writes it.
std::string export_path_for(const std::string& script_path);

// Planner diagnostics point at the config value in `text` that sets a size (else where the planner
// put them). `text` must outlive the options it is set in.
plan::ValueLocator value_locator(const std::string& text);

// "" when every pinned parameter and output names one of `model`; else why not
// ("--pin NAME: the model has no parameter of that name").
std::string unknown_pin(const ir::ModelIR& model, const plan::PlanOptions& options);

// The planner's sequence length when the user chose none: no longer than the model's position
// tables allow its token inputs (ir::Dataflow::max_tokens; nanoGPT's 1024, BERT's 512). True when
// it changed.
bool fit_sequence_to_model(plan::PlanOptions& options, const ir::ModelIR& model);

// Plans `model`, extracted from `text`, with its diagnostics located in `text`.
plan::PlanResult plan_in_text(const std::string& text, const ir::ModelIR& model, plan::PlanOptions options);

}  // namespace shardlens::session
