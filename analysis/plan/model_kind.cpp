#include "plan/model_kind.h"

#include <algorithm>
#include <cctype>

namespace shardlens::plan {

const char* model_kind_name(ModelKind k) {
  switch (k) {
    case ModelKind::DecoderLM: return "decoder-lm";
    case ModelKind::TextEncoder: return "text-encoder";
    case ModelKind::VisionEncoder: return "vision-encoder";
    case ModelKind::EncoderDecoder: return "encoder-decoder";
    case ModelKind::DiffusionTransformer: return "diffusion-transformer";
    case ModelKind::ConvNet: return "conv-net";
    case ModelKind::Other: return "other";
  }
  return "other";
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Facts about the model read from its module tree and traced forward.
struct Evidence {
  int attention = 0;       // attention cores (SDPA, and softmax over scores)
  int convs = 0;           // contractions over spatial dims
  int64_t vocab = 0;       // the largest token-embedding table (rows >= 1000)
  bool lm_head = false;    // a contraction whose output features equal the vocabulary
  bool encoder = false, decoder = false;  // submodules named so
  bool causal_name = false;  // class names of causal LMs (…CausalLM, GPT…, Llama…, …Decoder…)
  bool causal = false;       // causal attention traced (see ir::Op::causal)
  bool encoder_name = false; // class names of encoders (Bert, Roberta, ViT, …Encoder…, …MaskedLM)
  bool timestep = false;   // a timestep / adaLN conditioning module
  int64_t positions = 0;   // the position table's length
};

Evidence read_evidence(const ir::ModelIR& model) {
  Evidence e;
  const auto& flow = model.dataflow;
  for (const auto& op : flow.ops) {
    if (op.kind == ir::OpKind::Attention) ++e.attention, e.causal |= op.causal;
    if (op.is_convolution()) ++e.convs;
    if (op.kind == ir::OpKind::Embedding && op.inputs.size() > 1) {
      const auto& w = flow.tensors[op.inputs[1]].shape;
      if (w.size() == 2 && w[0] >= 1000) e.vocab = std::max(e.vocab, w[0]);
    }
  }
  // Hand-written attention: a softmax whose input came from a matmul of two activations.
  // In a decode trace its scores are [..., 1, keys] with more keys than the one query token: a
  // KV cache, so causal (BLOOM's ALiBi attention).
  if (e.attention == 0)
    for (const auto& op : flow.ops)
      if (op.kind == ir::OpKind::Softmax) {
        ++e.attention;
        const auto& scores = op.inputs.empty() ? ir::Shape{} : flow.tensors[op.inputs[0]].shape;
        e.causal |= scores.size() >= 3 && scores[scores.size() - 2] == 1 && scores.back() > 1 && scores.back() != e.vocab;
      }
  for (const auto& op : flow.ops) {
    if (op.kind != ir::OpKind::Contract || op.inputs.size() < 2 || e.vocab == 0) continue;
    const auto& w = flow.tensors[op.inputs[1]];
    if (w.parameter >= 0 && std::find(w.shape.begin(), w.shape.end(), e.vocab) != w.shape.end()) e.lm_head = true;
  }
  // A stack is a module with attention inside: BERT's MLM head names its output Linear `decoder`.
  std::vector<std::string> attending;  // modules that hold an attention core
  for (const auto& op : flow.ops)
    if ((op.kind == ir::OpKind::Attention || op.kind == ir::OpKind::Softmax) && op.module >= 0)
      attending.push_back(model.modules[static_cast<size_t>(op.module)].name);
  auto holds_attention = [&](const std::string& module) {
    return std::any_of(attending.begin(), attending.end(), [&](const std::string& a) {
      return a == module || (a.size() > module.size() && a.compare(0, module.size(), module) == 0 && a[module.size()] == '.');
    });
  };
  for (size_t i = 0; i < model.modules.size(); ++i) {
    const std::string name = lower(model.modules[i].name), cls = lower(model.modules[i].class_name);
    const std::string last = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
    auto stack = [&](const char* word) {
      return i > 0 && (has(last, word) || has(cls, word)) && !has(cls, "layer") && !has(cls, "block") &&
             holds_attention(model.modules[i].name);
    };
    if (stack("encoder")) e.encoder = true;
    if (stack("decoder")) e.decoder = true;
    if (has(cls, "causallm") || has(cls, "gpt") || has(cls, "llama") || has(cls, "mistral") || has(cls, "mixtral") || has(cls, "falcon") ||
        has(cls, "qwen") || has(cls, "neox") || has(cls, "decoderonly"))
      e.causal_name = true;
    if (has(cls, "bert") || has(cls, "roberta") || has(cls, "maskedlm") || has(cls, "vit") || has(cls, "visiontransformer") ||
        has(cls, "clipvision") || has(cls, "clip_text") || has(cls, "cliptext"))
      e.encoder_name = true;
    if (has(name, "t_embedder") || has(name, "timestep") || has(name, "time_embed") || has(name, "adaln") || has(cls, "timestep"))
      e.timestep = true;
  }
  // The position table: a learned [positions, hidden] embedding or a [1, positions, hidden] pos_embed.
  for (const auto& p : model.parameters) {
    const std::string n = lower(p.name);
    if (!(has(n, "position") || has(n, "wpe") || has(n, "pos_emb") || has(n, "pos_embed"))) continue;
    if (p.shape.size() == 2) e.positions = std::max(e.positions, p.shape[0]);
    if (p.shape.size() == 3 && p.shape[0] == 1) e.positions = std::max(e.positions, p.shape[1]);
  }
  return e;
}

}  // namespace

DefaultWorkload default_workload(const ir::ModelIR& model) {
  DefaultWorkload w;
  const Evidence e = read_evidence(model);
  w.position_table = e.positions;
  std::string facts = std::to_string(e.attention) + " attention core(s), " + std::to_string(e.convs) + " convolution(s)";
  if (e.vocab) facts += ", a " + std::to_string(e.vocab) + "-token embedding" + (e.lm_head ? " and a head over it" : "");
  if (e.positions) facts += ", a " + std::to_string(e.positions) + "-position table";
  if (e.timestep) facts += ", timestep / adaLN conditioning";
  if (e.encoder && e.decoder) facts += ", encoder and decoder stacks";
  // Its decoder generates tokens, so it has a vocabulary: a VAE's encoder and decoder hold attention
  // too (diffusers' mid-block), but decode images in one forward.
  if (e.encoder && e.decoder && e.attention > 0 && e.vocab) w.kind = ModelKind::EncoderDecoder;
  // A class-conditional DiT embeds its labels (1001 classes) but has no head over them.
  else if (e.timestep && e.attention > 0 && e.convs > 0 && !e.lm_head) w.kind = ModelKind::DiffusionTransformer;
  else if (e.vocab && e.attention > 0 && e.lm_head && !e.encoder_name && (e.causal_name || !e.encoder)) w.kind = ModelKind::DecoderLM;
  // A causal LM's backbone without its head (GPT2Model, LlamaModel, OlmoModel): generation runs it
  // all the same.
  else if (e.vocab && e.attention > 0 && (e.causal_name || e.causal) && !e.encoder_name && !e.encoder) w.kind = ModelKind::DecoderLM;
  else if (e.vocab && e.attention > 0) w.kind = ModelKind::TextEncoder;
  else if (e.convs > 0 && e.attention > 0 && e.positions > 0 && !e.timestep) w.kind = ModelKind::VisionEncoder;
  else if (e.convs > 0) w.kind = ModelKind::ConvNet;
  else if (e.vocab && e.lm_head) w.kind = ModelKind::DecoderLM;
  w.evidence = facts;
  const int64_t natural = e.positions > 0 ? e.positions : 0;
  switch (w.kind) {
    case ModelKind::DecoderLM:
      w.phase = Phase::Decode;
      w.seq = natural > 0 ? std::min<int64_t>(2048, natural) : 2048;
      w.both_phases = true;
      w.why = "a decoder LM serves prompts (prefill) and then generates one token per forward (decode): decode is planned, prefill "
              "is shown beside it, over a context of " + std::to_string(w.seq) + " tokens" +
              (natural > 0 && natural < 2048 ? " (the model's own position table)" : "");
      break;
    case ModelKind::EncoderDecoder:
      w.phase = Phase::Decode;
      w.seq = natural > 0 ? std::min<int64_t>(2048, natural) : 2048;
      w.both_phases = true;
      w.why = "an encoder-decoder runs its encoder once over the input (prefill) and its decoder one token per forward (decode): "
              "both phases are planned for the whole model";
      break;
    case ModelKind::TextEncoder:
      w.phase = Phase::Prefill;
      w.seq = natural > 0 ? natural : 512;
      w.why = "an encoder runs one full forward over its input and keeps no KV cache: prefill of " + std::to_string(w.seq) + " tokens" +
              (natural > 0 ? " (max_position_embeddings)" : " (no position table found: BERT's 512)");
      break;
    case ModelKind::VisionEncoder:
      w.phase = Phase::Prefill;
      w.seq = natural > 0 ? natural : 197;
      w.why = "a vision encoder runs one forward over its image's patches and keeps no KV cache: prefill of " + std::to_string(w.seq) +
              " tokens (its position table: (image size / patch)² patches plus any class token)";
      break;
    case ModelKind::DiffusionTransformer:
      w.phase = Phase::Prefill;
      w.seq = natural > 0 ? natural : 256;
      w.why = "a diffusion transformer denoises all latent patches in each forward and keeps no KV cache: one full forward (prefill) of " +
              std::to_string(w.seq) + " patch tokens";
      break;
    case ModelKind::ConvNet:
      w.phase = Phase::Prefill;
      w.seq = natural > 0 ? natural : 2048;
      w.why = "a convolutional model (VAE, U-Net, CNN) runs one full forward over its input and keeps no KV cache: prefill";
      break;
    case ModelKind::Other:
      w.phase = Phase::Decode;
      w.seq = natural > 0 ? std::min<int64_t>(2048, natural) : 2048;
      w.why = "no model kind recognised: the planner's general default, decode over a context of " + std::to_string(w.seq) + " tokens";
      break;
  }
  return w;
}

}  // namespace shardlens::plan
