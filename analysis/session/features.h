// What an editor shows for one document's analysis, as plain data located by byte offsets in the
// analysed text: hover content (Markdown), code-lens titles, the annotation block a source action
// inserts. The server converts these to LSP (positions, JSON); nothing here knows LSP.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emit/insertion.h"
#include "session/document_analysis.h"

namespace shardlens::session {

// The hover on the line holding `offset`: a class, the statement that builds the model, a layer,
// a parameter or a config size. Covers that line.
struct Hover {
  std::string markdown;
  size_t start = 0, end = 0;
};
std::optional<Hover> hover_at(const DocumentAnalysis& analysis, size_t offset);

// One lens per configured mesh above each module class the model uses, on the class's name, e.g.
// "1x8: 2 all-reduce · 8.0 MiB per forward × 24 blocks".
struct CodeLens {
  size_t start = 0, end = 0;
  std::string title;
};
std::vector<CodeLens> code_lenses(const DocumentAnalysis& analysis);

// The annotation block of `kind` for the first mesh, placed by the emitters' insertion rule
// (replacing an earlier block of the same kind); nullopt with `error` when there is none.
std::optional<ByteEdit> annotation_block_edit(const DocumentAnalysis& analysis, emit::BlockKind kind, std::string& error);

}  // namespace shardlens::session
