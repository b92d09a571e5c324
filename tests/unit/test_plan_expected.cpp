// The shared fixtures' expert answers (../shared/fixtures/EXPECTED.md): inference, batch 1, bf16,
// mesh (1, 8) on Wormhole, unless a test says otherwise.
#include <catch2/catch.hpp>

#include "plan/model_kind.h"
#include "plan_helpers.h"
#include "python/value_locator.h"
#include "test_helpers.h"

using namespace shardlens;
using namespace shardlens::test;

TEST_CASE("mlp.py: fc1 column, fc2 row, one all-reduce of the output", "[plan][expected]") {
  auto p = plan_script(fixture("mlp.py"));
  const auto& mp = p.result.meshes.at(0);
  CHECK(param(mp, "fc1.weight").layout == "column");
  CHECK(spec(param(mp, "fc1.weight")) == std::vector<std::string>{"model", "-"});
  CHECK(param(mp, "fc2.weight").layout == "row");
  CHECK(spec(param(mp, "fc2.weight")) == std::vector<std::string>{"-", "model"});
  CHECK(counts(mp) == std::map<std::string, int>{{"all_reduce", 1}});
  REQUIRE(mp.collectives.size() == 1);
  CHECK(mp.collectives[0].at == "fc2");
  CHECK(mp.collectives[0].bytes == 1 * 1 * 4096 * 2);  // [B, S, 4096] bf16, decode
  CHECK(mp.collectives[0].why.find("row-parallel") != std::string::npos);

  // Prefill: the same layout, the all-reduce carries the whole sequence.
  plan::PlanOptions prefill;
  prefill.workload.phase = plan::Phase::Prefill;
  prefill.workload.seq = 512;
  auto q = plan_script(fixture("mlp.py"), prefill);
  CHECK(param(q.result.meshes[0], "fc1.weight").layout == "column");
  CHECK(param(q.result.meshes[0], "fc2.weight").layout == "row");
  CHECK(counts(q.result.meshes[0]) == std::map<std::string, int>{{"all_reduce", 1}});
  CHECK(q.result.meshes[0].collectives[0].bytes == 512 * 4096 * 2);
}

TEST_CASE("tinynet.py: too small to pay for any collective", "[plan][expected]") {
  auto p = plan_script(fixture("tinynet.py"));
  const auto& mp = p.result.meshes.at(0);
  for (const plan::ParameterLayout pl : mp.parameters) CHECK(pl.layout == "replicated");
  CHECK(mp.collectives.empty());
  CHECK(mp.totals.collectives == 0);
}

TEST_CASE("gpt.py: per-segment fused QKV, Megatron pairs, tied embedding and LM head", "[plan][expected]") {
  auto p = plan_script(fixture("gpt.py"));
  const auto& mp = p.result.meshes.at(0);
  for (int i : {0, 7, 23}) {
    std::string b = "h." + std::to_string(i) + ".";
    CAPTURE(b);
    CHECK(param(mp, b + "attn.qkv.weight").layout == "column_segments");
    CHECK_FALSE(param(mp, b + "attn.qkv.weight").spec().has_value());  // not writable on the fused weight as is
    CHECK(param(mp, b + "attn.qkv.weight").why.find("segment") != std::string::npos);
    CHECK(param(mp, b + "attn.proj.weight").layout == "row");
    CHECK(param(mp, b + "mlp.up.weight").layout == "column");
    CHECK(param(mp, b + "mlp.down.weight").layout == "row");
    CHECK(param(mp, b + "ln_1.weight").layout == "replicated");
    CHECK(param(mp, b + "ln_2.weight").layout == "replicated");
  }
  // 2 all-reduce per block x 24 blocks, at the row-parallel projections.
  CHECK(count_at(mp, "all_reduce", "h.*.attn.proj") == 24);
  CHECK(count_at(mp, "all_reduce", "h.*.mlp.down") == 24);
  // The LM head shares wte's weight: one stored layout serves both. Whatever the choice, it costs
  // at most one collective at each end (an all-reduce after a vocab-parallel lookup, the logits'
  // all-gather after a vocab-sharded head).
  CHECK(counts(mp)["all_reduce"] - 48 + counts(mp)["all_gather"] <= 2);
  CHECK(counts(mp)["all_to_all"] == 0);
  CHECK(count_at(mp, "all_reduce", "wte") == (param(mp, "wte.weight").layout == "vocab" ? 1 : 0));
  bool lm_head_listed = false;
  for (auto& c : mp.components)
    if (c.module == "lm_head") lm_head_listed = c.layout.find("wte.weight (shared)") != std::string::npos || c.layout == "replicated";
  CHECK(lm_head_listed);
  // 16 heads over 8 devices: no divisibility diagnostics.
  for (auto& d : p.result.diagnostics) CHECK(d.code.find("divisibility") == std::string::npos);
}

TEST_CASE("llama.py on (1, 8): GQA with one KV head per device, SwiGLU pairs", "[plan][expected]") {
  auto p = plan_script(fixture("llama.py"));
  const auto& mp = p.result.meshes.at(0);
  for (int i : {0, 31}) {
    std::string b = "layers." + std::to_string(i) + ".";
    for (auto w : {"attention.wq", "attention.wk", "attention.wv", "feed_forward.w1", "feed_forward.w3"})
      CHECK(param(mp, b + w + ".weight").layout == "column");
    CHECK(param(mp, b + "attention.wo.weight").layout == "row");
    CHECK(param(mp, b + "feed_forward.w2.weight").layout == "row");
    CHECK(param(mp, b + "attention_norm.weight").layout == "replicated");
    CHECK(param(mp, b + "ffn_norm.weight").layout == "replicated");
  }
  CHECK(count_at(mp, "all_reduce", "layers.*.attention.wo") == 32);
  CHECK(count_at(mp, "all_reduce", "layers.*.feed_forward.w2") == 32);
  CHECK(counts(mp)["all_reduce"] == 64);
  // Embedding and LM head: their choice costs one collective each at most.
  CHECK(counts(mp)["all_gather"] + counts(mp)["all_reduce"] <= 66);
  for (auto& d : p.result.diagnostics) CHECK(d.code.find("divisibility") == std::string::npos);
}

TEST_CASE("llama.py on (1, 32): 8 KV heads do not divide 32", "[plan][expected]") {
  plan::PlanOptions o;
  o.meshes = {mesh("1x32")};
  std::string text = fixture("llama.py");
  o.locate = [&text](const std::vector<std::string>& keys, int64_t value, ir::Span fallback) {
    ir::Span s = python::locate_value(text, keys, value);
    return s.valid() ? s : fallback;
  };
  auto p = plan_script(text, o);
  const plan::Diagnostic* kv = nullptr;
  for (auto& d : p.result.diagnostics)
    if (d.code == "divisibility-kv-heads") kv = &d;
  REQUIRE(kv);
  CHECK(kv->span.line == 15);  // n_kv_heads: Optional[int] = 8
  CHECK(kv->message.find("replicated") != std::string::npos);
  CHECK(kv->message.find("tp % kv_heads") != std::string::npos);
  for (auto& d : p.result.diagnostics) CHECK(d.code != "divisibility-heads");  // 32 query heads divide
  const auto& mp = p.result.meshes[0];
  CHECK(param(mp, "layers.0.attention.wq.weight").layout == "column");
  CHECK(param(mp, "layers.0.attention.wk.weight").layout == "replicated");
  CHECK(param(mp, "layers.0.attention.wv.weight").layout == "replicated");
}

TEST_CASE("moe.py: router replicated; experts tensor-parallel or expert-parallel, both costed", "[plan][expected]") {
  // Decode: one token cannot be split for an all-to-all; tensor parallelism inside each expert.
  auto p = plan_script(fixture("moe.py"));
  const auto& mp = p.result.meshes.at(0);
  CHECK(param(mp, "layers.0.moe.gate.weight").layout == "replicated");
  for (int e : {0, 5}) {
    std::string x = "layers.3.moe.experts." + std::to_string(e) + ".";
    CHECK(param(mp, x + "w1.weight").layout == "column");
    CHECK(param(mp, x + "w3.weight").layout == "column");
    CHECK(param(mp, x + "w2.weight").layout == "row");
  }
  CHECK(count_at(mp, "all_reduce", "layers.*.moe.experts.*.w2") == 8);  // 1 per layer
  const plan::Alternative* a2a = nullptr;
  for (auto& a : mp.alternatives)
    if (a.name.find("all-to-all") != std::string::npos) a2a = &a;
  REQUIRE(a2a);
  CHECK_FALSE(a2a->feasible);
  CHECK(a2a->why_rejected.find("token") != std::string::npos);

  // Prefill: both choices are possible; the cost model picks one and reports the other's cost.
  plan::PlanOptions o;
  o.workload.phase = plan::Phase::Prefill;
  o.workload.seq = 512;
  auto q = plan_script(fixture("moe.py"), o);
  const auto& mq = q.result.meshes.at(0);
  bool expert_parallel = param(mq, "layers.0.moe.experts.0.w1.weight").layout == "expert";
  // Every expert strategy not chosen is reported, feasible, with its cost, none cheaper.
  int reported = 0;
  for (auto& a : mq.alternatives)
    if (a.name.find("expert") != std::string::npos) {
      ++reported;
      CAPTURE(a.name);
      REQUIRE(a.feasible);
      CHECK(a.totals.est_time_us >= mq.totals.est_time_us);
    }
  CHECK(reported >= 2);
  int dispatch = count_at(mq, "all_to_all", "layers.*.moe.experts");
  if (expert_parallel) {
    // Whole experts per device: tokens dispatched and combined by all-to-all (2 per MoE layer), or
    // kept replicated with the experts' outputs summed (all-reduce, or reduce-scatter into a
    // sequence-sharded residual stream).
    int combined = count_at(mq, "all_reduce", "layers.*.moe.experts") + count_at(mq, "reduce_scatter", "layers.*.moe.experts");
    CHECK((dispatch == 2 * 8 || (dispatch == 0 && combined == 8)));
    CHECK_FALSE(param(mq, "layers.0.moe.experts.0.w1.weight").spec().has_value());
  } else {
    CHECK(count_at(mq, "all_reduce", "layers.*.moe.experts.*.w2") == 8);
  }
  CHECK(param(mq, "layers.0.moe.gate.weight").layout == "replicated");
}

TEST_CASE("vae_block.py: channel pairs, never spatial, whole GroupNorm groups", "[plan][expected]") {
  auto p = plan_script(fixture("vae_block.py"));
  const auto& mp = p.result.meshes.at(0);
  for (const plan::ParameterLayout pl : mp.parameters) {
    if (pl.name.find("conv") == std::string::npos || pl.name.find("weight") == std::string::npos) continue;
    CAPTURE(pl.name);
    REQUIRE(pl.spec());
    // Only C_out (dim 0) or C_in (dim 1) of a conv weight: kernels / spatial dims stay whole.
    CHECK(pl.sharded_dim < 2);
    CHECK((pl.layout == "replicated" || pl.layout == "column" || pl.layout == "row"));
  }
  // The first stage's blocks: the Megatron pair conv1 column -> GroupNorm -> conv2 row.
  CHECK(param(mp, "stages.0.conv1.weight").layout == "column");
  CHECK(param(mp, "stages.0.conv2.weight").layout == "row");
  // 32 groups over 8 devices: whole groups per device, no statistics all-reduce anywhere.
  for (auto& c : mp.collectives) CHECK(c.why.find("statistics") == std::string::npos);
  // At most one all-reduce per residual block (and no all-gather of a channel-sharded
  // activation: tt-mlir #8462).
  std::map<std::string, int> per_block;
  for (auto& c : mp.collectives) {
    CHECK(plan::ccl_name(c.kind) != std::string("all_gather"));
    if (c.kind == plan::Ccl::AllReduce && c.at.rfind("stages.", 0) == 0) per_block[c.at] += c.count;
  }
  int blocks = 0;
  for (auto& m : p.model.modules) blocks += m.class_name == "ResnetBlock";
  int all_reduces = 0;
  for (auto& [at, n] : per_block) all_reduces += n;
  CHECK(all_reduces <= blocks);
}

TEST_CASE("Orientation from use: HF Conv1D [in, out] weights, fused MHA in-projection", "[plan][dataflow]") {
  plan::PlanOptions o;
  o.strategy = plan::StrategyMode::Tensor;
  o.workload.phase = plan::Phase::Prefill;
  o.workload.seq = 512;
  auto p = plan_script(model_script("hf_conv1d_gpt.py"), o);
  const auto& mp = p.result.meshes.at(0);
  for (auto& d : p.result.diagnostics) CHECK(d.code != "unknown-op");
  // Conv1D computes x @ W with W [in, out]: column-parallel shards dim 1, row-parallel dim 0.
  CHECK(param(mp, "h.0.mlp.c_fc.weight").layout == "column");
  CHECK(spec(param(mp, "h.0.mlp.c_fc.weight")) == std::vector<std::string>{"-", "model"});
  CHECK(param(mp, "h.0.mlp.c_proj.weight").layout == "row");
  CHECK(spec(param(mp, "h.0.mlp.c_proj.weight")) == std::vector<std::string>{"model", "-"});
  CHECK(param(mp, "h.0.attn.c_attn.weight").layout == "column_segments");  // q, k, v split after the matmul

  auto q = plan_script(model_script("mha_einsum_block.py"), o);
  const auto& mq = q.result.meshes.at(0);
  for (auto& d : q.result.diagnostics) CHECK(d.code != "unknown-op");
  CHECK(param(mq, "blocks.0.attn.in_proj_weight").layout == "column_segments");
  // einsum("bsd,df->bsf") reads w_in as [in, out], and its output is chunked into two halves that
  // are used differently (silu(u1), u2): each device needs its share of both halves.
  CHECK(param(mq, "blocks.0.w_in").layout == "column_segments");
  CHECK_FALSE(param(mq, "blocks.0.w_in").spec().has_value());
}

TEST_CASE("A half-typed forward still plans what follows the broken line", "[plan][dataflow]") {
  // The editor's usual state: one call cut off mid-typing. The broken line is skipped, the layer
  // after it re-derives its input from its weights, and the rest of the model is planned.
  std::string text = fixture("gpt.py");
  std::string from = "y = F.scaled_dot_product_attention(q, k, v, is_causal=True)";
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), "y = F.scaled_dot_product_attention(q, k, v, is_causal=");
  auto p = plan_script(text);
  const auto& mp = p.result.meshes.at(0);
  CHECK(param(mp, "h.3.mlp.up.weight").layout == "column");
  CHECK(param(mp, "h.3.mlp.down.weight").layout == "row");
  CHECK(count_at(mp, "all_reduce", "h.*.mlp.down") == 24);
  int unknown = 0;
  for (auto& d : p.result.diagnostics)
    if (d.code == "unknown-op") {
      ++unknown;
      CHECK(d.span.line == 37);  // return self.proj(y): its input was on the broken line
    }
  CHECK(unknown == 1);
}

TEST_CASE("Strategy tensor keeps the residual stream whole: Megatron's two all-reduces per layer, nothing else",
          "[plan][expected]") {
  // Hand-written fp32 RMSNorm, rotary cos/sin passed in, GQA: the search would otherwise reduce-scatter
  // into a hidden-split stream and gather it again (same bytes, twice the collectives) and exchange
  // the norms' statistics.
  plan::PlanOptions o;
  o.strategy = plan::StrategyMode::Tensor;
  o.workload.phase = plan::Phase::Prefill;
  o.workload.seq = 2048;
  auto p = plan_script(model_script("hf_style_llama.py"), o);
  const auto& mp = p.result.meshes.at(0);
  const auto n = counts(mp);
  CHECK(n.count("reduce_scatter") == 0);
  CHECK(count_at(mp, "all_reduce", "layers.*.self_attn.o_proj") == 2);
  CHECK(count_at(mp, "all_reduce", "layers.*.mlp.down_proj") == 2);
  CHECK(n.at("all_reduce") == 4);                     // no statistics all-reduce
  // Nothing gathers the stream back (the LM head is the cost model's: vocab-parallel only where it
  // pays, and then its logits are gathered at the output).
  for (auto& c : mp.collectives)
    if (plan::ccl_name(c.kind) == std::string("all_gather")) CHECK(c.at == "output");
  for (const char* w : {"layers.0.self_attn.q_proj.weight", "layers.0.mlp.gate_proj.weight", "layers.0.mlp.up_proj.weight"})
    CHECK(param(mp, w).layout == "column");
  CHECK(param(mp, "layers.0.self_attn.o_proj.weight").layout == "row");
  CHECK(param(mp, "layers.0.mlp.down_proj.weight").layout == "row");
  // 4 key/value heads on 8 devices: their projections stay whole (Megatron: tp % kv_heads == 0).
  CHECK(param(mp, "layers.0.self_attn.k_proj.weight").layout == "replicated");
  CHECK(param(mp, "layers.0.input_layernorm.weight").layout == "replicated");
}

TEST_CASE("Strategy tensor with heads that do not divide the axis: the FFN pairs split, attention whole", "[plan][expected]") {
  plan::PlanOptions o;
  o.strategy = plan::StrategyMode::Tensor;
  o.workload.phase = plan::Phase::Prefill;
  o.workload.seq = 1024;
  auto p = plan_script(model_script("gpt_twelve_heads.py"), o);
  const auto& mp = p.result.meshes.at(0);
  CHECK(param(mp, "h.0.attn.c_attn.weight").layout == "replicated");  // 12 heads over 8 devices would cut heads apart
  CHECK(param(mp, "h.0.attn.c_proj.weight").layout == "replicated");
  CHECK(param(mp, "h.0.c_fc.weight").layout == "column");
  CHECK(param(mp, "h.0.c_proj.weight").layout == "row");
  CHECK(count_at(mp, "all_reduce", "h.*") + count_at(mp, "all_reduce", "h.*.c_proj") == 4);  // one per layer, at the FFN
  bool diagnosed = false;
  for (auto& d : p.result.diagnostics) diagnosed |= d.code == "divisibility-heads";
  CHECK(diagnosed);
}

// The model's kind sets the default workload. A stack is a module with attention inside: BERT's
// MLM head names its output Linear `decoder`, which does not make BERT an encoder-decoder; and a
// causal LM's backbone without its head (GPT2Model) still generates.
TEST_CASE("Model kind: a head named decoder is no decoder stack; a causal backbone without its head is a decoder LM", "[plan][kind]") {
  const std::string common = R"(
import torch
import torch.nn as nn

class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(64, 4, batch_first=True)
        self.fc = nn.Linear(64, 64)
    def forward(self, x):
        a, _ = self.attn(x, x, x)
        return x + self.fc(a)

class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.ModuleList([Layer() for _ in range(2)])
    def forward(self, x):
        for l in self.layer:
            x = l(x)
        return x
)";
  const std::string bert = common + R"(
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.transform = nn.Linear(64, 64)
        self.decoder = nn.Linear(64, 3000)
    def forward(self, x):
        return self.decoder(self.transform(x))

class BertForMaskedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(3000, 64)
        self.position_embeddings = nn.Embedding(128, 64)
        self.encoder = Stack()
        self.cls = Head()
    def forward(self, input_ids):
        return self.cls(self.encoder(self.embeddings(input_ids)))

model = BertForMaskedLM()
)";
  const std::string gpt_base = common + R"(
class GPT2Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(3000, 64)
        self.wpe = nn.Embedding(256, 64)
        self.h = Stack()
    def forward(self, input_ids):
        return self.h(self.wte(input_ids))

model = GPT2Model()
)";
  python::TraceWorkload w;
  w.tokens = 16;
  auto b = traced(bert, w);
  REQUIRE(b.ok);
  auto kb = plan::default_workload(b.model);
  CHECK(kb.kind == plan::ModelKind::TextEncoder);
  CHECK(kb.phase == plan::Phase::Prefill);
  CHECK(kb.seq == 128);
  auto g = traced(gpt_base, w);
  REQUIRE(g.ok);
  auto kg = plan::default_workload(g.model);
  CHECK(kg.kind == plan::ModelKind::DecoderLM);
  CHECK(kg.phase == plan::Phase::Decode);
  CHECK(kg.seq == 256);
}

// A decoder LM is known by its attention, whatever its classes are called (OLMo, Phi-3, Granite,
// StableLM backbones): an attention module that says `self.is_causal = True` (HF's, even in a
// decode trace where one query token makes is_causal moot), or SDPA asked for is_causal; the same
// code with neither is an encoder.
TEST_CASE("Model kind: a VAE whose encoder and decoder hold attention is a conv-net, not an encoder-decoder", "[plan][kind]") {
  const std::string script = R"py(
import torch
import torch.nn as nn
import torch.nn.functional as F

class MidAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.GroupNorm(8, c)
        self.to_qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)
    def forward(self, x):
        b, c, h, w = x.shape
        t = self.norm(x).flatten(2).transpose(1, 2)
        q, k, v = self.to_qkv(t).chunk(3, dim=-1)
        y = F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None])[:, 0]
        return x + self.proj(y).transpose(1, 2).reshape(b, c, h, w)

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(3, 32, 3, padding=1)
        self.down = nn.Conv2d(32, 32, 3, stride=2, padding=1)
        self.mid = MidAttention(32)
        self.conv_out = nn.Conv2d(32, 8, 3, padding=1)
    def forward(self, x):
        return self.conv_out(self.mid(self.down(self.conv_in(x))))

class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(4, 32, 3, padding=1)
        self.mid = MidAttention(32)
        self.up = nn.ConvTranspose2d(32, 32, 4, stride=2, padding=1)
        self.conv_out = nn.Conv2d(32, 3, 3, padding=1)
    def forward(self, z):
        return self.conv_out(self.up(self.mid(self.conv_in(z))))

class AutoencoderKL(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()
    def forward(self, sample):
        mean, logvar = self.encoder(sample).chunk(2, dim=1)
        return self.decoder(mean)

model = AutoencoderKL()
)py";
  python::TraceWorkload w;
  auto r = traced(script, w);
  REQUIRE(r.ok);
  const auto workload = plan::default_workload(r.model);
  INFO(workload.evidence);
  CHECK(workload.evidence.find("2 attention core(s)") != std::string::npos);
  CHECK(workload.kind == plan::ModelKind::ConvNet);
  CHECK(workload.phase == plan::Phase::Prefill);
}

TEST_CASE("Model kind: causal attention makes a backbone with any class name a decoder LM", "[plan][kind]") {
  auto script = [](const std::string& attention_init, const std::string& sdpa_flags) {
    return R"py(
import torch
import torch.nn as nn
import torch.nn.functional as F

class Attention(nn.Module):
    def __init__(self):
        super().__init__()
)py" + attention_init + R"py(
        self.qkv = nn.Linear(64, 192)
        self.o = nn.Linear(64, 64)
    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, 4, 16).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v)py" + sdpa_flags + R"py()
        return self.o(y.transpose(1, 2).reshape(b, s, 64))

class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(3000, 64)
        self.layers = nn.ModuleList([Attention() for _ in range(2)])
    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = x + layer(x)
        return x

model = Backbone()
)py";
  };
  auto kind_of = [](const std::string& text, int64_t tokens) {
    python::TraceWorkload w;
    w.tokens = tokens;
    auto r = traced(text, w);
    REQUIRE(r.ok);
    return plan::default_workload(r.model).kind;
  };
  const std::string flagged = script("        self.is_causal = True", ""), asked = script("        pass", ", is_causal=True"),
                    neither = script("        self.is_causal = False", "");
  CHECK(kind_of(flagged, 1) == plan::ModelKind::DecoderLM);
  CHECK(kind_of(flagged, 16) == plan::ModelKind::DecoderLM);
  CHECK(kind_of(asked, 16) == plan::ModelKind::DecoderLM);
  CHECK(kind_of(neither, 1) == plan::ModelKind::TextEncoder);
  CHECK(kind_of(neither, 16) == plan::ModelKind::TextEncoder);
}

// diffusers' rotary fills torch.empty_like(q) through strided slices: empty_like reads only q's
// shape, so each device makes its block as q is laid out; heads stay split through it (Megatron:
// q/k/v column, out row, one all-reduce per block; no gather at empty_like).
TEST_CASE("empty_like reads only a shape: heads stay split through a rotary that fills one", "[plan]") {
  const std::string text = R"(
import torch
import torch.nn as nn
import torch.nn.functional as F

def apply_rotary_emb(x, cos, sin):
    x1, x2 = x.unflatten(-1, (-1, 2)).unbind(-1)
    out = torch.empty_like(x)
    out[..., 0::2] = x1 * cos[..., 0::2] - x2 * sin[..., 1::2]
    out[..., 1::2] = x1 * sin[..., 1::2] + x2 * cos[..., 0::2]
    return out.type_as(x)

class Attention(nn.Module):
    def __init__(self, dim=1024, heads=16):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x, cos, sin):
        b, n, _ = x.shape
        q = self.to_q(x).unflatten(2, (self.heads, -1))
        k = self.to_k(x).unflatten(2, (self.heads, -1))
        v = self.to_v(x).unflatten(2, (self.heads, -1))
        q = apply_rotary_emb(q, cos, sin)
        k = apply_rotary_emb(k, cos, sin)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        return self.to_out(o.transpose(1, 2).flatten(2, 3))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()

    def forward(self, x):
        n = x.shape[1]
        cos = torch.ones(1, n, 1, 64)
        sin = torch.zeros(1, n, 1, 64)
        return x + self.attn(x, cos, sin)

model = Net()
)";
  plan::PlanOptions o;
  o.workload.phase = plan::Phase::Prefill;
  o.workload.seq = 256;
  o.strategy = plan::StrategyMode::Tensor;
  o.meshes = {mesh("1x8")};
  auto p = plan_script(text, o);
  REQUIRE(p.result.ok);
  const auto& m = p.result.meshes.at(0);
  int all_reduce = 0;
  for (const auto& c : m.collectives) {
    INFO(c.at << ": " << c.why);
    CHECK(c.kind != plan::Ccl::AllGather);
    if (c.kind == plan::Ccl::AllReduce) all_reduce += c.count;
  }
  CHECK(all_reduce == 1);
}

// A q/k norm over the whole projection (Wan, Qwen3, OLMo: RMSNorm(to_q(x)) across all heads) is
// no norm of the residual stream: with heads split it exchanges statistics (tt-xla's Wan DiT: per
// block 3 big all-reduces + 4 small statistics all-reduces), and the conditioning input (text
// embeddings narrower than the stream) does not set the stream's width.
TEST_CASE("Megatron through q/k norms: statistics all-reduces, not a replicated attention", "[plan]") {
  const std::string text = R"(
import torch
import torch.nn as nn
import torch.nn.functional as F

class Attention(nn.Module):
    def __init__(self, dim, heads, kv_dim=None):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(kv_dim or dim, dim)
        self.to_v = nn.Linear(kv_dim or dim, dim)
        self.norm_q = nn.RMSNorm(dim)
        self.norm_k = nn.RMSNorm(dim)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x, context=None):
        c = x if context is None else context
        q = self.norm_q(self.to_q(x)).unflatten(2, (self.heads, -1)).transpose(1, 2)
        k = self.norm_k(self.to_k(c)).unflatten(2, (self.heads, -1)).transpose(1, 2)
        v = self.to_v(c).unflatten(2, (self.heads, -1)).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v)
        return self.to_out(o.transpose(1, 2).flatten(2, 3))

class Block(nn.Module):
    def __init__(self, dim=1024, heads=16, text_dim=768):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn1 = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.attn2 = Attention(dim, heads, kv_dim=text_dim)
        self.norm3 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, hidden_states, encoder_hidden_states):
        x = hidden_states
        x = x + self.attn1(self.norm1(x))
        x = x + self.attn2(self.norm2(x), encoder_hidden_states)
        return x + self.down(F.gelu(self.up(self.norm3(x))))

model = Block()
)";
  plan::PlanOptions o;
  o.workload.phase = plan::Phase::Prefill;
  o.strategy = plan::StrategyMode::Tensor;
  o.meshes = {mesh("1x8")};
  python::TraceWorkload w;
  std::string error;
  for (const char* given : {"hidden_states=1x512x1024", "encoder_hidden_states=1x512x768"}) {
    auto input = python::parse_given_input(given, error);
    REQUIRE(input);
    w.inputs.push_back(*input);
  }
  auto r = traced(text, w);
  REQUIRE(r.ok);
  plan::Planner planner;
  auto result = planner.plan(r.model, o);
  REQUIRE(result.ok);
  const auto& m = result.meshes.at(0);
  int big = 0, statistics = 0;
  for (const auto& c : m.collectives) {
    INFO(c.at << ": " << c.why);
    CHECK(c.kind != plan::Ccl::AllGather);
    if (c.kind == plan::Ccl::AllReduce && c.why.find("statistics") != std::string::npos) statistics += c.count;
    else if (c.kind == plan::Ccl::AllReduce && c.tensor.find("512, 1024") != std::string::npos) big += c.count;
  }
  CHECK(big == 3);         // attn1.to_out, attn2.to_out, down
  CHECK(statistics == 4);  // norm_q and norm_k of both attentions
  for (const auto& p : m.parameters) {
    const std::string name(p.name), layout(p.layout);
    INFO(name << " " << layout);
    if (name.find("to_q.weight") != std::string::npos || name.find("to_k.weight") != std::string::npos || name.find("up.weight") != std::string::npos)
      CHECK(layout == "column");
    if (name.find("to_out.weight") != std::string::npos || name.find("down.weight") != std::string::npos) CHECK(layout == "row");
  }
}
