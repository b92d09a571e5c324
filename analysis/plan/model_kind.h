// What kind of model a traced IR is (decoder LM, encoder, encoder-decoder, diffusion transformer,
// conv net) and the workload a plan assumes for it when the user gives none (issue 36, item 2).
#pragma once

#include <cstdint>
#include <string>

#include "ir/model_ir.h"
#include "plan/target.h"

namespace shardlens::plan {

enum class ModelKind : uint8_t { DecoderLM, TextEncoder, VisionEncoder, EncoderDecoder, DiffusionTransformer, ConvNet, Other };

const char* model_kind_name(ModelKind k);  // "decoder-lm", "text-encoder", ...

struct DefaultWorkload {
  ModelKind kind = ModelKind::Other;
  std::string evidence;          // what in the model says so ("a causal LM head over 50257 tokens, ...")
  Phase phase = Phase::Decode;
  int64_t seq = 2048;
  bool both_phases = false;      // decoders: decode planned, prefill shown beside it
  int64_t position_table = 0;    // the model's own position table length (0: none found)
  std::string why;               // why this phase and length, one sentence
};

// The default workload for the model's kind; `seq` never exceeds the model's position table.
DefaultWorkload default_workload(const ir::ModelIR& model);

}  // namespace shardlens::plan
