// forward() inputs sized as the model declares them: a position table bounds the tokens (nanoGPT
// asserts t <= block_size), fixes an image's size (a ViT's class token plus patches) and an audio
// input's length (Whisper's positions after strided convs); and inputs given explicitly
// (--input NAME=SHAPE[:DTYPE], the `inputs` setting). Each model script failed to trace before.
#include <catch2/catch.hpp>

#include "python/extractor.h"
#include "test_helpers.h"

using namespace shardlens;

namespace {
using test::traced;

const char* kGpt = R"(
import torch
import torch.nn as nn

class GPT(nn.Module):
    def __init__(self, block_size=64, vocab=100, d=32):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(vocab, d), wpe=nn.Embedding(block_size, d)))
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.block_size, f"Cannot forward sequence of length {t}, block size is only {self.block_size}"
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        return self.head(x)

model = GPT()
)";
}  // namespace

TEST_CASE("input sizes: token ids no longer than the position table allows") {
  auto r = traced(kGpt);
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  INFO(flow.error);
  CHECK(flow.traced);
  REQUIRE(flow.input_descriptions.size() == 1);
  CHECK(flow.input_descriptions[0].rfind("idx: [1, 64] int64", 0) == 0);
  CHECK(flow.max_tokens == 64);
}

TEST_CASE("input sizes: a sequence length the user chose stands") {
  python::TraceWorkload w;
  w.tokens = 32;
  w.tokens_given = true;
  auto r = traced(kGpt, w);
  REQUIRE(r.ok);
  CHECK(r.model.dataflow.traced);
  CHECK(r.model.dataflow.input_descriptions[0].rfind("idx: [1, 32] int64", 0) == 0);
  w.tokens = 100;  // longer than the table: the model's own assert says so, and the trace goes past it
  auto over = traced(kGpt, w);
  CHECK(over.model.dataflow.traced);
  CHECK(over.model.dataflow.input_descriptions[0].rfind("idx: [1, 100] int64", 0) == 0);
  REQUIRE(over.model.dataflow.failed_assertions.size() == 1);
  CHECK(over.model.dataflow.failed_assertions[0].line == 14);
}

TEST_CASE("input sizes: an image as large as its position table fits (class token + patches)") {
  auto r = traced(R"(
import torch
import torch.nn as nn

class ViT(nn.Module):
    def __init__(self, image_size=32, patch=8, d=48):
        super().__init__()
        self.image_size = image_size
        self.patch = patch
        self.conv_proj = nn.Conv2d(3, d, kernel_size=patch, stride=patch)
        self.class_token = nn.Parameter(torch.zeros(1, 1, d))
        self.pos_embedding = nn.Parameter(torch.zeros(1, (image_size // patch) ** 2 + 1, d))
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        n, c, h, w = x.shape
        torch._assert(h == self.image_size, f"Wrong image height! Expected {self.image_size} but got {h}!")
        x = self.conv_proj(x).reshape(n, -1, (h // self.patch) * (w // self.patch)).permute(0, 2, 1)
        x = torch.cat([self.class_token.expand(n, -1, -1), x], dim=1) + self.pos_embedding
        return self.head(x[:, 0])

model = ViT()
)");
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  INFO(flow.error);
  CHECK(flow.traced);
  REQUIRE(flow.input_descriptions.size() == 1);
  CHECK(flow.input_descriptions[0].rfind("x: [1, 3, 32, 32] float32", 0) == 0);
}

TEST_CASE("input sizes: audio as long as the encoder's positions after its convs, then the decoder's tokens") {
  // The decoder's tokens are first used after the encoder, which needs the audio's shape: a second
  // pass 1, run with the audio told, tells them.
  auto r = traced(R"(
import torch
import torch.nn as nn
import torch.nn.functional as F

class Encoder(nn.Module):
    def __init__(self, n_mels=8, n_ctx=15, d=32):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, d, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(d, d, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", torch.zeros(n_ctx, d))

    def forward(self, x):
        x = F.gelu(self.conv2(F.gelu(self.conv1(x)))).permute(0, 2, 1)
        assert x.shape[1:] == self.positional_embedding.shape, "incorrect audio shape"
        return x + self.positional_embedding

class Decoder(nn.Module):
    def __init__(self, vocab=50, n_ctx=12, d=32):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, d)
        self.positional_embedding = nn.Parameter(torch.empty(n_ctx, d))

    def forward(self, tokens, xa):
        x = self.token_embedding(tokens) + self.positional_embedding[: tokens.shape[-1]]
        return x @ xa.transpose(1, 2)

class Whisper(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()

    def forward(self, mel, tokens):
        return self.decoder(tokens, self.encoder(mel))

model = Whisper()
)");
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  INFO(flow.error);
  CHECK(flow.traced);
  REQUIRE(flow.input_descriptions.size() == 2);
  CHECK(flow.input_descriptions[0].rfind("mel: [1, 8, 30] float32", 0) == 0);
  CHECK(flow.input_descriptions[1].rfind("tokens: [1, 8] int64", 0) == 0);
  CHECK(flow.max_tokens == 8);
}

TEST_CASE("input sizes: --input gives an input's shape and dtype, and may name a parameter not chosen") {
  python::TraceWorkload w;
  std::string error;
  auto idx = python::parse_given_input("idx=2x16:int64", error);
  auto targets = python::parse_given_input("targets=2x16:long", error);
  REQUIRE(idx);
  REQUIRE(targets);
  w.inputs = {*idx, *targets};
  auto r = traced(kGpt, w);
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  INFO(flow.error);
  CHECK(flow.traced);
  REQUIRE(flow.input_descriptions.size() == 2);
  CHECK(flow.input_descriptions[0] == "idx: [2, 16] int64 (given)");
  CHECK(flow.input_descriptions[1] == "targets: [2, 16] int64 (given)");

  auto bad = python::parse_given_input("nosuch=4", error);
  REQUIRE(bad);
  w.inputs = {*bad};
  auto r2 = traced(kGpt, w);
  CHECK_FALSE(r2.model.dataflow.traced);
  CHECK(r2.model.dataflow.error == "--input nosuch: GPT.forward() has no parameter of that name");
}

TEST_CASE("input sizes: NAME=SHAPE[:DTYPE] is parsed, and bad specs say why") {
  std::string error;
  auto ok = python::parse_given_input("x=2x4x16x32x32", error);
  REQUIRE(ok);
  CHECK(ok->name == "x");
  CHECK(ok->shape == std::vector<int64_t>{2, 4, 16, 32, 32});
  CHECK(ok->dtype == "float32");
  CHECK(python::parse_given_input("t=1:bf16", error)->dtype == "bfloat16");
  for (const char* bad : {"x", "=1x2", "x=", "x=1x", "x=0x4", "x=1x2:complex", "x-y=1", "x=axb"}) {
    INFO(bad);
    CHECK_FALSE(python::parse_given_input(bad, error));
    CHECK(error.find("NAME=SHAPE[:DTYPE]") != std::string::npos);
  }
}

TEST_CASE("input sizes: sizes joined by commas, as `graph --input` has always taken them") {
  std::string error;
  auto ok = python::parse_given_input("idx=1,128:int64", error);
  REQUIRE(ok);
  CHECK(ok->shape == std::vector<int64_t>{1, 128});
  CHECK(ok->dtype == "int64");
  CHECK_FALSE(python::parse_given_input("idx=1,,128", error));
}

namespace {
// gpt-fast's shape: forward() asserts that setup_caches(max_batch_size, max_seq_length) ran, and
// steps the caches at input_pos (an Optional parameter the caller always gives).
const char* kCachedModel = R"(
import torch
import torch.nn as nn
from typing import Optional

class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.wqkv = nn.Linear(d, 3 * d, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.kv_cache = None

    def forward(self, x, input_pos, mask):
        b, t, d = x.shape
        q, k, v = self.wqkv(x).split([d, d, d], dim=-1)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        self.kv_cache[0][:, :, input_pos] = k
        self.kv_cache[1][:, :, input_pos] = v
        y = nn.functional.scaled_dot_product_attention(q, self.kv_cache[0], self.kv_cache[1], attn_mask=mask)
        return self.wo(y.transpose(1, 2).contiguous().view(b, t, d))

class Transformer(nn.Module):
    def __init__(self, vocab=64, d=32, heads=4, layers=2):
        super().__init__()
        self.d, self.n_heads = d, heads
        self.tok_embeddings = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([Attention(d, heads) for _ in range(layers)])
        self.output = nn.Linear(d, vocab, bias=False)
        self.causal_mask = None
        self.max_seq_length = -1

    def setup_caches(self, max_batch_size, max_seq_length):
        self.max_seq_length = max_seq_length
        for layer in self.layers:
            shape = (max_batch_size, self.n_heads, max_seq_length, self.d // self.n_heads)
            layer.kv_cache = (torch.zeros(shape), torch.zeros(shape))
        self.causal_mask = torch.tril(torch.ones(max_seq_length, max_seq_length, dtype=torch.bool))

    def forward(self, idx, input_pos: Optional[torch.Tensor] = None):
        assert self.causal_mask is not None, "Caches must be initialized first"
        mask = self.causal_mask[None, None, input_pos]
        x = self.tok_embeddings(idx)
        for layer in self.layers:
            x = x + layer(x, input_pos, mask)
        return self.output(x)

model = Transformer()
)";
}  // namespace

TEST_CASE("input sizes: a model whose forward() needs setup_caches() first is set up with the workload's sizes") {
  python::TraceWorkload w;
  w.tokens = 1;  // decode: one token per forward, over a 256-token context
  w.context = 256;
  auto r = traced(kCachedModel, w);
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  INFO(flow.error);
  CHECK(flow.traced);
  REQUIRE(flow.input_descriptions.size() == 2);
  CHECK(flow.input_descriptions[0].rfind("idx: [1, 1] int64", 0) == 0);
  CHECK(flow.input_descriptions[1].rfind("input_pos: [1] int64", 0) == 0);
  bool noted = false;
  for (auto& n : flow.notes) noted |= n.find("ran Transformer.setup_caches() before forward(), which needs it") != std::string::npos;
  CHECK(noted);
  int attention = 0;
  for (auto& op : flow.ops) attention += op.kind == ir::OpKind::Attention;
  CHECK(attention == 2);
}

TEST_CASE("input sizes: a forward() that raises for another reason is not retried with setup_caches()") {
  std::string text = kCachedModel;
  text.replace(text.find("        assert self.causal_mask is not None"), 0, "        raise ValueError('no')\n");
  auto r = traced(text);
  REQUIRE(r.ok);
  CHECK_FALSE(r.model.dataflow.traced);
  CHECK(r.model.dataflow.error.find("ValueError") != std::string::npos);
}

TEST_CASE("input sizes: ids first read by F.embedding are token ids") {
  auto r = traced(R"(
import torch
import torch.nn as nn
import torch.nn.functional as F

class ParallelEmbedding(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab, d))

    def forward(self, x):
        return F.embedding(x, self.weight)

class Model(nn.Module):
    def __init__(self, vocab=100, d=16):
        super().__init__()
        self.embed = ParallelEmbedding(vocab, d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        return self.head(self.embed(tokens))

model = Model()
)");
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  INFO(flow.error);
  CHECK(flow.traced);
  REQUIRE(flow.input_descriptions.size() == 1);
  CHECK(flow.input_descriptions[0].rfind("tokens: [1, 2048] int64 (token ids", 0) == 0);
}

TEST_CASE("slice() objects index tensors as the slice syntax does (HF's logits_to_keep)", "[trace][inputs]") {
  const std::string script = R"(
import torch
import torch.nn as nn

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.head = nn.Linear(64, 1000, bias=False)

    def forward(self, input_ids, logits_to_keep=0):
        h = self.emb(input_ids)
        keep = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep
        last = h[:, slice(-1, None), :]
        return self.head(h[:, keep, :]) + self.head(last).sum()

model = M()
)";
  python::TraceWorkload workload;
  workload.tokens = 16;
  auto r = traced(script, workload);
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  int contracts = 0, last_token = 0;
  for (auto& op : flow.ops) {
    CHECK(op.kind != ir::OpKind::Unknown);
    if (op.kind != ir::OpKind::Contract) continue;
    ++contracts;
    last_token += flow.tensors[op.outputs[0]].shape == ir::Shape{1, 1, 1000};
  }
  CHECK(contracts == 2);
  CHECK(last_token == 1);  // slice(-1, None) keeps one position; slice(-0, None) keeps all 16
}

TEST_CASE("A position table inside a wrapper module (x-transformers' pos_emb.emb) caps the token input", "[trace][inputs]") {
  const std::string script = R"(
import torch
import torch.nn as nn

class AbsolutePositionalEmbedding(nn.Module):
    def __init__(self, dim, max_seq_len):
        super().__init__()
        self.max_seq_len = max_seq_len
        self.emb = nn.Embedding(max_seq_len, dim)

    def forward(self, x):
        seq_len = x.shape[1]
        assert seq_len <= self.max_seq_len
        return self.emb(torch.arange(seq_len))

class TokenEmbedding(nn.Module):
    def __init__(self, dim, num_tokens):
        super().__init__()
        self.emb = nn.Embedding(num_tokens, dim)

    def forward(self, x):
        return self.emb(x)

class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_emb = TokenEmbedding(64, 1000)
        self.pos_emb = AbsolutePositionalEmbedding(64, 256)
        self.to_logits = nn.Linear(64, 1000)

    def forward(self, x):
        return self.to_logits(self.token_emb(x) + self.pos_emb(x))

model = Wrapper()
)";
  auto r = traced(script);  // the planner's default prompt, 2048 tokens: longer than the table
  REQUIRE(r.ok);
  const auto& flow = r.model.dataflow;
  REQUIRE(flow.inputs.size() == 1);
  CHECK(flow.tensors[flow.inputs[0]].shape == ir::Shape{1, 256});
  REQUIRE(flow.outputs.size() == 1);
  CHECK(flow.tensors[flow.outputs[0]].shape == ir::Shape{1, 256, 1000});  // the assert holds: traced to the end
}
