// Where an emitted block goes in the user's script, as one text edit.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "emit/tt_xla.h"

namespace shardlens::emit {

struct InsertionEdit {
  bool ok = false;
  std::string error;
  uint32_t start = 0, end = 0;  // UTF-8 byte range of the script replaced, [start, end)
  std::string text;             // what replaces it
  bool replaces_block = false;  // an earlier block with the same markers is replaced
  std::string block;            // annotation_edit(): the block as emitted, before re-indenting
};

// 1. A block with the same markers already in the script: exactly that block is replaced
//    (re-indented to where it stands), so applying twice gives the same file.
// 2. Else, with an anchor (the tt-xla instance form: the variable the block's model expression
//    starts with): right after the last top-level statement that binds it or assigns into it
//    (`model.lm_head.weight = ...`, `pipe.unet = ...`); when that is
//    `if __name__ == "__main__":`, after the statement inside that block that binds it, at its
//    indentation.
// 3. Else (function forms, or the anchor is not bound at module level): before the top-level
//    `if __name__ == "__main__":` so that its code can call the functions, or at the end.
// The block is separated by blank lines (one around statements, two around functions) and
// takes the script's line endings. Fails when the script would no longer parse.
InsertionEdit plan_insertion(const std::string& script_text, const std::string& block, BlockKind kind,
                             const std::string& anchor = "");

std::string apply_insertion(const std::string& script_text, const InsertionEdit& edit);

// The code action in one call: the block of `kind` for this script (instance form when the root
// is an instance the script names, avoiding the script's names) and where it goes.
InsertionEdit annotation_edit(const std::string& script_text, const ir::ModelIR& model, const plan::MeshPlan& plan,
                              BlockKind kind, const std::string& regenerate = "");

// "model" for "model", "pipe" for "pipe.unet".
std::string anchor_of(const std::string& model_expression);

// Identifiers the script uses outside function and class bodies, not counting earlier shardlens
// blocks (so regenerating a block does not rename its own variables): EmitOptions::reserved_names.
std::set<std::string> script_names(const std::string& script_text);

}  // namespace shardlens::emit
