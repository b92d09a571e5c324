// Static model extraction: from a Python script's text to the model IR, incrementally.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/model_ir.h"
#include "python/forward_trace.h"
#include "python/interpreter.h"
#include "python/module_loader.h"
#include "python/source_document.h"

namespace shardlens::python {

struct Unit;

struct ExtractOptions {
  std::string model_expression;  // --model EXPR; empty: choose the root automatically
  std::string module_name = "__main__";  // what `__name__` is while the script executes
  bool trace_forward = false;  // also trace forward() into ModelIR::dataflow (the planner needs it)
  TraceWorkload workload;
  // Replay a module call from an earlier identical one instead of executing it again (see
  // ForwardTracer); off only to check that replays change nothing.
  bool replay_identical_calls = true;
  // When no statement's code changed since the last extraction with the same options (an edit in
  // a comment, or none), skip the work and return `unchanged` with an empty model: the caller
  // keeps what it has (the language server does; off by default so every call yields a model).
  bool reuse_unchanged = false;
  // When the only code that changed since the last extraction is in the bodies of methods that
  // building the model never called (an edit in a forward()), trace forward() again on the last
  // extraction's objects instead of running the script anew; off only to check that this changes
  // nothing.
  bool reuse_construction = true;
  // Trace forward() on the inputs the last trace found, skipping the pass that infers them, when
  // the trace confirms them (ForwardTracer::guess_inputs); off only to check that this changes
  // nothing.
  bool reuse_input_shapes = true;
  // Where imports are searched after the script's folder and its package root, in order
  // (PYTHONPATH's entries, then --python-path / the python-path setting: search_path_entries()).
  std::vector<std::string> python_path;
  // The configured interpreter's site-packages (session::interpreter_site_packages): searched after
  // the library models, whose model of a module wins over the installed library's code there.
  std::vector<std::string> site_packages;
  // The memory budget of the script's run, in MiB (Interpreter::Limits::max_value_bytes): the CLI's
  // --memory-budget, the server's memoryBudgetMiB setting.
  uint64_t memory_budget_mib = Interpreter::kDefaultMemoryBudgetMiB;
  // Statements and expressions the run may evaluate (Interpreter::Limits::max_steps); 0: the default.
  uint64_t step_budget = 0;
  bool operator==(const ExtractOptions&) const = default;
};

struct ExtractStats {
  size_t units = 0;           // top-level statements
  size_t units_lowered = 0;   // lowered afresh in this extraction (the rest came from the cache)
  std::vector<std::string> classes_lowered;  // names of the classes among them
  uint64_t interpreter_steps = 0;
  size_t definitions_reused = 0;  // class / function objects reused from the last extraction
  double lower_ms = 0;    // finding and lowering top-level statements
  double execute_ms = 0;  // abstract execution and root selection
  double ir_ms = 0;       // building the model IR
  double trace_ms = 0;    // tracing forward()
  double script_run_ms() const { return execute_ms + ir_ms; }  // the script's run and its module tree
  size_t calls_replayed = 0;  // module calls replayed from an identical earlier one while tracing
  bool construction_reused = false;  // the script did not run again (ExtractOptions::reuse_construction)
  bool input_shapes_reused = false;  // the last trace's inputs held: one pass (ExtractOptions::reuse_input_shapes)
};

struct ExtractResult {
  bool ok = false;            // false: no model found (see error), the IR still lists unresolved
  bool unchanged = false;     // reuse_unchanged and nothing changed: model is empty, ok/error as last time
  std::string error;
  ir::ModelIR model;
  ExtractStats stats;
  // The files of the modules the script imported from source (an edit to one of them changes the
  // result; the library models' paths start with kLibraryRoot).
  std::vector<std::string> dependencies;
  // The last extraction's run of the script, when this one replaced it: freeing a model's objects
  // takes milliseconds, which a caller in a hurry (an editor waiting for diagnostics) spends later.
  std::shared_ptr<void> retired;
};

// Owns a document and a cache of lowered top-level statements keyed by their text, so that an
// edit re-lowers only the statements (classes, functions, ...) whose text changed.
class ModelExtractor {
 public:
  explicit ModelExtractor(std::string text, std::string source_path = "", ParsePieces pieces = {});
  ~ModelExtractor();

  void apply_edit(const TextEdit& edit);
  // Where imported modules come from; shared by the documents of one workspace (one is made on
  // first use otherwise).
  void set_module_loader(std::shared_ptr<ModuleLoader> loader) { loader_ = std::move(loader); }
  ExtractResult extract(const ExtractOptions& options = {});
  const SourceDocument& document() const { return document_; }
  // What the last extraction was made of, as a token. A caller that goes back to an earlier
  // extraction's result (an undo) hands its token back, so that the next extraction's
  // reuse_unchanged compares the document with what that result was made of.
  using Token = std::shared_ptr<const void>;
  Token last_extraction() const { return last_; }
  void assume_extracted(const Token& token) { last_ = std::static_pointer_cast<const Made>(token); }
  // Whether the modules that extraction imported are still as it read them.
  bool imports_current(const Token& token) {
    auto made = std::static_pointer_cast<const Made>(token);
    return !made || imports_unchanged(made->imported);
  }

 private:
  struct Recovered {
    std::string text;
    TSTree* tree = nullptr;
    std::vector<uint32_t> skipped_lines;
  };
  static constexpr int kMaxRecoveredLines = 16;
  Recovered recover_syntax();
  std::vector<std::shared_ptr<Unit>> units(ExtractStats& stats);
  void lower_ahead(TSNode root, const std::string& text);
  std::vector<uint32_t> skipped_lines_;
  // What the last extraction was made of: (unit, row) per statement, skipped lines' text, options.
  struct Made {
    std::vector<std::pair<std::shared_ptr<const Unit>, uint32_t>> units;  // held: no address reuse
    std::string skipped;
    ExtractOptions options;
    bool ok = false;
    std::string error;
    std::vector<std::shared_ptr<const LoadedModule>> imported;
  };
  std::shared_ptr<const Made> last_;
  // The last run of the script (its interpreter, the chosen root, the module tree), kept for the
  // next extraction while forward() left it as it was (see ExtractOptions::reuse_construction).
  struct Construction;
  std::unique_ptr<Construction> construction_;
  // The older of the last two kept constructions: after an undo takes the caller back to the text
  // before a new run (assume_extracted), a forward() edit there is traced on it.
  std::unique_ptr<Construction> spare_construction_;
  // What the last clean trace found its inputs to be, and with which options.
  std::vector<ForwardTracer::InputShape> last_inputs_;
  ExtractOptions last_inputs_options_;
  ForwardTracer::TraceSizes last_trace_sizes_;
  bool adopt_edited_methods(const std::vector<std::shared_ptr<Unit>>& units, const ExtractOptions& options);
  void construct(Construction& c, const std::vector<std::shared_ptr<Unit>>& units, const ExtractOptions& options, ExtractResult& result);
  // Statements lowered by the parse threads during construction (declared before document_,
  // whose construction fills them).
  std::mutex ahead_mutex_;
  std::vector<std::shared_ptr<Unit>> ahead_;

  friend std::shared_ptr<LoadedModule> lower_module_text(const std::string& path, const std::string& text);
  std::vector<std::string> search_roots(const std::string& script_file, const ExtractOptions& options) const;
  bool imports_unchanged(const std::vector<std::shared_ptr<const LoadedModule>>& modules);
  std::shared_ptr<ModuleLoader> loader_;

  SourceDocument document_;
  std::string source_path_;
  std::unordered_multimap<uint64_t, std::shared_ptr<Unit>> cache_;
};

}  // namespace shardlens::python
