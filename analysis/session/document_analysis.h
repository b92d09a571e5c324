// One document's analysis: incremental extraction, memoized planning, checks of the annotations
// already in the file, findings located by byte offsets. The result is immutable and shared with
// what reads it (session/features.h); the server runs analyses on its worker and converts.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/model_ir.h"
#include "plan/plan.h"
#include "python/extractor.h"
#include "session/script_pipeline.h"
#include "session/settings.h"

namespace shardlens::session {

// A text replacement in the analysed text, by byte offsets.
struct ByteEdit {
  size_t start = 0, end = 0;
  std::string text;
};

// A problem to publish, located by byte offsets in the analysed text.
struct Finding {
  std::string code;
  std::string severity;  // error | warning | information | hint
  std::string message;
  size_t start = 0, end = 0;
  std::optional<ByteEdit> fix;
  std::string fix_title;
};

// One `xs.mark_sharding(t, mesh, spec)` call or `load_shard_spec` entry the file already has.
struct AnnotationSite {
  enum Kind { MarkSharding, ShardSpecEntry } kind = MarkSharding;
  size_t start = 0, end = 0;            // the call / entry
  size_t spec_start = 0, spec_end = 0;  // the partition-spec argument
  size_t line_start = 0, line_end = 0;  // the whole line(s), for removal
  std::string tensor_text;              // as written
  std::vector<std::string> parameters;  // what it marks (a loop marks one per block)
  bool resolved = false;                // the tensor expression was understood
  std::optional<std::vector<std::vector<std::string>>> spec;  // user axis names per dim
};

// The mesh a script builds with `xs.Mesh(ids, shape, axis_names)`, when literal.
struct ScriptMesh {
  std::vector<int64_t> shape;
  std::vector<std::string> axis_names;
  bool found = false;
};

struct DocumentAnalysis {
  int version = 0;
  std::string text;
  Settings settings;
  plan::PlanOptions options;
  bool extracted = false;   // a model was found
  std::string error;        // why not
  // Stays put (the plan's names point into it); shared with the analysis that an edit changing
  // no code reuses it from.
  std::shared_ptr<const ir::ModelIR> shared_model = std::make_shared<const ir::ModelIR>();
  const ir::ModelIR& model() const { return *shared_model; }
  std::string exact_graph;  // the TorchScript export the model came from ("" = the static front end)
  python::ModelExtractor::Token extraction;  // what the model was extracted from (the extractor's token)
  plan::PlanResult plan;
  std::vector<AnnotationSite> annotations;
  ScriptMesh script_mesh;
  std::vector<Finding> findings;
  std::vector<std::string> dependencies;  // files of the modules the script imported (ExtractResult::dependencies)
  double analysis_ms = 0;
  // Where analysis_ms went (logged at info): edits applied and extraction, planning, the rest
  // (findings and annotation checks); "reused" when an earlier analysis held as it was.
  double extract_ms = 0, plan_ms = 0;
  python::ExtractStats extract_stats;  // of this analysis' extraction (zeros when reused)
  const char* path_taken = "full";
  // false: the plan has no rejected alternatives yet. Diagnostics do not need them, so an analysis
  // is published without them and completed right after (DocumentAnalyzer::complete).
  bool complete = true;
  size_t line_offset(uint32_t line_1based) const;       // byte offset of a 1-based line's start
  size_t offset_of(const ir::Span& span, bool end) const;  // span position → byte offset
  std::vector<size_t> line_starts;  // byte offset of each line's start
};

// The modules every open document imports from, shared so that each is lowered once; open
// buffers of imported files are set as overlays on it (language_server.cpp).
const std::shared_ptr<python::ModuleLoader>& workspace_modules();

// Keeps one document's extractor (incremental parse) and planner (memo) between analyses.
class DocumentAnalyzer {
 public:
  DocumentAnalyzer();
  ~DocumentAnalyzer();
  // Asked while planning: true means a newer version is waiting, and the work is dropped. Then
  // analyze() throws plan::PlanCancelled (the edits stay applied; the next analysis goes on from
  // them) and complete() returns null.
  using CancelCheck = std::function<bool()>;
  // `edits` bring the previously analysed text to `text` (the analyzer checks, and starts afresh
  // from `text` when they do not, or when `reset`).
  std::shared_ptr<const DocumentAnalysis> analyze(int version, const std::string& path, const std::string& text,
                                                  const std::vector<ByteEdit>& edits, bool reset, const Settings& settings,
                                                  const CancelCheck& cancelled = {});
  // The analysis with its plan's rejected alternatives (for hovers), when it lacks them; it replaces
  // `quick` for later edits that change no code.
  std::shared_ptr<const DocumentAnalysis> complete(const std::shared_ptr<const DocumentAnalysis>& quick,
                                                   const CancelCheck& cancelled = {});
  // A plan of the same model with some parameters pinned (for the cost of an annotation).
  std::optional<plan::PlanResult> plan_with_pins(const DocumentAnalysis& analysis,
                                                 const std::map<std::string, std::string>& pins);
  // Frees what the last analysis replaced (the previous run of the script, the analyses it pushed
  // out of recent_): the worker calls it once the diagnostics are on their way (else the next
  // analysis does, first).
  void drop_retired() { retired_.clear(); }
  // How many meshes this analyzer has planned so far (a plan of two meshes counts two): what an
  // edit costs the planner (tests).
  int planner_runs() const { return planner_runs_; }

 private:
  std::shared_ptr<const DocumentAnalysis> analyze_text(int version, const std::string& path, const std::string& text,
                                                       const std::vector<ByteEdit>& edits, bool reset, const Settings& settings);
  std::unique_ptr<python::ModelExtractor> extractor_;
  plan::Planner planner_;
  int planner_runs_ = 0;
  plan::PlanResult run_planner(const ir::ModelIR& model, const plan::PlanOptions& options);
  std::string path_;
  std::shared_ptr<const DocumentAnalysis> last_;  // its model and plan serve edits that change no code
  // The analyses before last_, newest first: a keystroke taken back or an undo returns to one of
  // their texts, and its analysis holds as it is.
  std::vector<std::shared_ptr<const DocumentAnalysis>> recent_;
  static constexpr size_t kRecentAnalyses = 2;
  void remember(const std::shared_ptr<const DocumentAnalysis>& next);
  std::vector<std::shared_ptr<const void>> retired_;  // what the last analysis replaced (drop_retired)
  // The workload the model's kind chose at the last analysis (no phase set): the next edit traces
  // with it straight away, and traces again only if the kind's choice changes.
  struct KindWorkload {
    plan::Phase phase;
    int64_t seq;
    bool operator==(const KindWorkload&) const = default;
  };
  std::optional<KindWorkload> kind_workload_;
};


// Annotation discovery and checks (annotations.cpp).
void find_annotations(DocumentAnalysis& analysis, const std::vector<TSNode>& roots);
void check_annotations(DocumentAnalysis& analysis, DocumentAnalyzer& analyzer);

// "(None, \"model\")"-style Python for a spec in the given axis names.
std::string python_spec(const std::vector<std::vector<std::string>>& spec);

// Files larger than this are kept but not analysed (a 50 MB paste must not stall the server); the
// same cap as the CLI's and the imports' (one number: python::ModuleLoader::kMaxModuleBytes).
constexpr size_t kMaxAnalysedBytes = python::ModuleLoader::kMaxModuleBytes;

}  // namespace shardlens::session
