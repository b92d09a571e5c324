// forward()'s inputs as real model code declares them: Hugging Face's all-optional signatures,
// decorators made with functools.wraps, and subclasses of built-in layers that call
// super().forward(). Each script below failed to trace before (forward() raised).
#include <catch2/catch.hpp>

#include <algorithm>

#include "python/extractor.h"

using namespace shardlens;

namespace {
python::ExtractResult traced(const std::string& text) {
  python::ModelExtractor extractor(text, "m.py");
  python::ExtractOptions options;
  options.trace_forward = true;
  return extractor.extract(options);
}

int count_ops(const ir::Dataflow& flow, ir::OpKind kind) {
  return static_cast<int>(std::count_if(flow.ops.begin(), flow.ops.end(), [&](const ir::Op& op) { return op.kind == kind; }));
}
}  // namespace

TEST_CASE("forward inputs: optional parameters named as main inputs are traced, by name") {
  auto r = traced(R"(
import torch.nn as nn

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 32)
        self.proj = nn.Linear(32, 32)

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, decoder_input_ids=None, return_dict=None):
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        if decoder_input_ids is None:
            raise ValueError("decoder_input_ids are needed")
        x = self.embed(input_ids) + self.embed(decoder_input_ids)
        return self.proj(x)

model = Encoder()
)");
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  INFO(flow.error);
  CHECK(flow.error.empty());
  CHECK(flow.inputs.size() == 2);  // input_ids and decoder_input_ids; the mask and inputs_embeds stay None
  CHECK(count_ops(flow, ir::OpKind::Embedding) == 2);
  CHECK(count_ops(flow, ir::OpKind::Contract) == 1);
}

TEST_CASE("forward inputs: with no required or main-named input, the first optional one") {
  auto r = traced(R"(
import torch.nn as nn

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, features=None, scale=1.0):
        return self.proj(features) * scale

model = M()
)");
  REQUIRE(r.ok);
  INFO(r.model.dataflow.error);
  CHECK(r.model.dataflow.error.empty());
  CHECK(r.model.dataflow.inputs.size() == 1);
}

TEST_CASE("forward inputs: a forward wrapped with functools.wraps is read through __wrapped__") {
  auto r = traced(R"(
import functools
import torch.nn as nn

def returns_tuple(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        return (fn(self, *args, **kwargs),)
    return wrapper

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 8)

    @returns_tuple
    def forward(self, hidden_states, temb=None):
        return self.proj(hidden_states)

model = M()
assert model.forward.__wrapped__ is not None
)");
  REQUIRE(r.ok);
  INFO(r.model.dataflow.error);
  CHECK(r.model.dataflow.error.empty());
  CHECK(r.model.dataflow.inputs.size() == 1);
  CHECK(count_ops(r.model.dataflow, ir::OpKind::Contract) == 1);
}

TEST_CASE("forward inputs: super().forward() in a subclass of a built-in layer runs that layer") {
  auto r = traced(R"(
import torch
import torch.nn as nn

class FloatLayerNorm(nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.float()).type_as(x)

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.norm = FloatLayerNorm(16)

    def forward(self, x):
        return self.norm(self.proj(x))

model = M()
)");
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  INFO(flow.error);
  CHECK(flow.error.empty());
  CHECK(flow.error.find("super") == std::string::npos);
}

TEST_CASE("forward inputs: what raised, and where, is in the trace's error") {
  auto r = traced(R"(
import torch.nn as nn

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        raise ValueError("inputs must be padded")

model = M()
)");
  REQUIRE(r.ok);
  CHECK(r.model.dataflow.error.find("ValueError: inputs must be padded") != std::string::npos);
  CHECK(r.model.dataflow.error.find(":10:") != std::string::npos);
}

TEST_CASE("forward inputs: optional parameters forward() dereferences unconditionally are traced (diffusers' DiTs)", "[real]") {
  auto r = traced(R"(
import torch
import torch.nn as nn

class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Linear(1, 32)
        self.pooled = nn.Linear(16, 32)

    def forward(self, timestep, pooled):
        return self.t(timestep[:, None]) + self.pooled(pooled)

class DiT(nn.Module):
    def __init__(self):
        super().__init__()
        self.x_embedder = nn.Linear(8, 32)
        self.context_embedder = nn.Linear(24, 32)
        self.time_embed = Embed()
        self.guidance_embed = nn.Linear(1, 32)
        self.out = nn.Linear(32, 8)

    def forward(self, hidden_states: torch.Tensor, encoder_hidden_states: torch.Tensor = None,
                pooled_projections: torch.Tensor = None, timestep: torch.LongTensor = None,
                guidance: torch.Tensor = None, attention_mask: torch.Tensor = None,
                joint_attention_kwargs=None, return_dict: bool = True):
        hidden_states = self.x_embedder(hidden_states)
        timestep = timestep.to(hidden_states.dtype) * 1000
        if guidance is not None:
            guidance = guidance.to(hidden_states.dtype) * 1000
        temb = (self.time_embed(timestep, pooled_projections) if guidance is None
                else self.time_embed(timestep, pooled_projections) + self.guidance_embed(guidance[:, None]))
        encoder_hidden_states = self.context_embedder(encoder_hidden_states)
        if attention_mask is not None:
            encoder_hidden_states = encoder_hidden_states * attention_mask[..., None]
        scale = (joint_attention_kwargs or {}).get("scale", 1.0)
        h = hidden_states + temb[:, None, :] + encoder_hidden_states.mean(dim=1, keepdim=True) * scale
        return self.out(h)

model = DiT()
)");
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  INFO(flow.error);
  CHECK(flow.error.empty());
  // hidden_states, then the four it dereferences whatever the others are: not guidance (tested
  // against None first), nor the mask (only under `is not None`), nor the kwargs (`or {}`).
  std::vector<std::string> names;
  for (const auto& d : flow.input_descriptions) names.push_back(d.substr(0, d.find(':')));
  CHECK(names == std::vector<std::string>{"hidden_states", "encoder_hidden_states", "pooled_projections", "timestep"});
  CHECK(count_ops(flow, ir::OpKind::Unknown) == 0);
  // The pooled text embedding is one vector per sample (its Linear reads it through a submodule).
  REQUIRE(flow.inputs.size() == 4);
  CHECK(flow.tensors[flow.inputs[2]].shape == std::vector<int64_t>{1, 16});
  CHECK(flow.tensors[flow.inputs[3]].shape == std::vector<int64_t>{1});
}

TEST_CASE("forward inputs: a required input reached through a loop over blocks and a branch on the block's own settings (diffusers' DiT)", "[real]") {
  auto r = traced(R"(
import torch
import torch.nn as nn

class TimeEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(1, 32)

    def forward(self, t):
        return self.lin(t[:, None])

class Norm(nn.Module):
    def __init__(self, with_embedding):
        super().__init__()
        self.emb = TimeEmbed() if with_embedding else None
        self.norm = nn.LayerNorm(32)

    def forward(self, x, timestep=None):
        if self.emb is not None:
            x = x + self.emb(timestep)[:, None, :]
        return self.norm(x)

class Block(nn.Module):
    def __init__(self, norm_type):
        super().__init__()
        self.norm_type = norm_type
        self.gradient_checkpointing = False
        self.norm1 = Norm(norm_type == "ada_norm_zero")
        self.ff = nn.Linear(32, 32)

    def forward(self, hidden_states, timestep=None, class_labels=None):
        if self.norm_type == "layer_norm":
            h = self.norm1(hidden_states)
        elif self.norm_type == "ada_norm_zero":
            h = self.norm1(hidden_states, timestep)
        else:
            h = hidden_states
        return hidden_states + self.ff(h)

class DiT(nn.Module):
    def __init__(self, norm_type):
        super().__init__()
        self.gradient_checkpointing = False
        self.proj = nn.Linear(8, 32)
        self.blocks = nn.ModuleList([Block(norm_type) for _ in range(2)])

    def forward(self, hidden_states, timestep=None, class_labels=None):
        hidden_states = self.proj(hidden_states)
        for block in self.blocks:
            if torch.is_grad_enabled() and self.gradient_checkpointing:
                hidden_states = torch.utils.checkpoint.checkpoint(block, hidden_states, timestep)
            else:
                hidden_states = block(hidden_states, timestep=timestep, class_labels=class_labels)
        return hidden_states

model = DiT("ada_norm_zero")
plain = DiT("layer_norm")
)");
  REQUIRE(r.ok);
  INFO(r.model.dataflow.error);
  CHECK(r.model.dataflow.error.empty());
  std::vector<std::string> names;
  for (const auto& d : r.model.dataflow.input_descriptions) names.push_back(d.substr(0, d.find(':')));
  CHECK(names == std::vector<std::string>{"hidden_states", "timestep"});  // class_labels is never dereferenced
}

TEST_CASE("forward inputs: a waveform given a channel dim (x[:, None], x.unsqueeze(1)) before strided convs (wav2vec2, HuBERT)", "[real]") {
  // The conv says [batch, 1, samples]; the input is what the new dim was put into: [batch, samples],
  // long enough for the workload's tokens after the stack's total stride (5 * 2).
  for (const std::string add_channel : {"input_values[:, None]", "input_values.unsqueeze(1)"}) {
    INFO(add_channel);
    python::ExtractOptions options;
    options.trace_forward = true;
    options.workload.tokens = 2048;
    python::ModelExtractor extractor(R"(
import torch
import torch.nn as nn

class FeatureEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv1d(1, 32, kernel_size=10, stride=5)
        self.norm = nn.GroupNorm(32, 32)
        self.conv1 = nn.Conv1d(32, 32, kernel_size=3, stride=2)

    def forward(self, input_values):
        hidden_states = )" + add_channel + R"(
        return self.conv1(self.norm(self.conv0(hidden_states)))

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_extractor = FeatureEncoder()
        self.proj = nn.Linear(32, 64)

    def forward(self, input_values):
        return self.proj(self.feature_extractor(input_values).transpose(1, 2))

model = Model()
)", "m.py");
    auto r = extractor.extract(options);
    REQUIRE(r.ok);
    const auto& flow = r.model.dataflow;
    REQUIRE(flow.inputs.size() == 1);
    CHECK(flow.tensors[static_cast<size_t>(flow.inputs[0])].shape == ir::Shape{1, 2048 * 10});
    CHECK(count_ops(flow, ir::OpKind::Unknown) == 0);
    REQUIRE(flow.outputs.size() == 1);
    // (2048 * 10 - 10) / 5 + 1 = 4095 frames after conv0, (4095 - 3) / 2 + 1 = 2047 after conv1.
    CHECK(flow.tensors[static_cast<size_t>(flow.outputs[0])].shape == ir::Shape{1, 2047, 64});
  }
}

TEST_CASE("forward inputs: an optional input a branch makes from another input is not needed (DistilBERT's input_embeds)", "[real]") {
  // forward() raises when both input_ids and inputs_embeds are given; the embeddings make their
  // input_embeds from input_ids when those are there, so only input_ids is an input.
  auto r = traced(R"(
import torch
import torch.nn as nn

class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(100, 16)
        self.position_embeddings = nn.Embedding(64, 16)

    def forward(self, input_ids, input_embeds=None):
        if input_ids is not None:
            input_embeds = self.word_embeddings(input_ids)
        seq_length = input_embeds.size(1)
        position_ids = torch.arange(seq_length)[None, :]
        return input_embeds + self.position_embeddings(position_ids)

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = Embeddings()
        self.proj = nn.Linear(16, 16)

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None):
        if input_ids is not None and inputs_embeds is not None:
            raise ValueError("You cannot specify both input_ids and inputs_embeds at the same time")
        return self.proj(self.embeddings(input_ids, inputs_embeds))

model = Model()
)");
  REQUIRE(r.ok);
  INFO(r.model.dataflow.error);
  CHECK(r.model.dataflow.error.empty());
  const auto& flow = r.model.dataflow;
  REQUIRE(flow.inputs.size() == 1);
  CHECK(count_ops(flow, ir::OpKind::Unknown) == 0);
  CHECK(count_ops(flow, ir::OpKind::Embedding) == 2);
}
