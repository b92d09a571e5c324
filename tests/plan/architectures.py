"""Standard architectures from their published configurations, written for shardlens' tests
(issue 36): one builder per family over shared blocks, full widths, reduced depth (the layout of a
block does not depend on how many there are). `build(NAME)` returns the model; CONFIGS cites where
each configuration comes from. The consensus plan for each is in test_consensus.py.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

LAYERS = 2  # every family: the per-block layout and its collectives do not depend on depth

# Published configurations (the model cards' config.json on the Hugging Face Hub, or the paper).
CONFIGS = {
    # bert-large-uncased: hidden 1024, 16 heads, intermediate 4096, vocab 30522, 512 positions
    "bert": dict(kind="encoder", vocab=30522, hidden=1024, heads=16, ffn=4096, positions=512, types=2, act="gelu", manual=True),
    # roberta-large: as BERT-large with vocab 50265 and 514 positions (padding offset 2)
    "roberta": dict(kind="encoder", vocab=50265, hidden=1024, heads=16, ffn=4096, positions=514, types=1, act="gelu"),
    # gpt2-medium: n_embd 1024, n_head 16, n_positions 1024, vocab 50257; HF Conv1D weights [in, out], fused c_attn
    "gpt2": dict(kind="causal", vocab=50257, hidden=1024, heads=16, ffn=4096, positions=1024, fused="segments", conv1d=True,
                 act="gelu", norm="layer", tied=True),
    # EleutherAI/gpt-neox-20b: hidden 6144, 64 heads, intermediate 24576, vocab 50432; per-head interleaved fused QKV, parallel residual
    "gpt_neox": dict(kind="causal", vocab=50432, hidden=6144, heads=64, ffn=24576, fused="per_head", parallel=True, act="gelu",
                     norm="layer", rotary=True),
    # facebook/opt-6.7b: hidden 4096, 32 heads, ffn 16384, vocab 50272, learned positions 2048 (+2 offset)
    "opt": dict(kind="causal", vocab=50272, hidden=4096, heads=32, ffn=16384, positions=2050, act="relu", norm="layer", tied=True),
    # meta-llama/Meta-Llama-3-8B: hidden 4096, 32 heads, 8 KV heads, intermediate 14336, vocab 128256, 8192 positions
    "llama3": dict(kind="causal", vocab=128256, hidden=4096, heads=32, kv_heads=8, ffn=14336, gated=True, bias=False, rotary=True,
                   max_positions=8192),
    # mistralai/Mistral-7B-v0.1: hidden 4096, 32 heads, 8 KV heads, intermediate 14336, vocab 32000
    "mistral": dict(kind="causal", vocab=32000, hidden=4096, heads=32, kv_heads=8, ffn=14336, gated=True, bias=False, rotary=True,
                    max_positions=32768),
    # mistralai/Mixtral-8x7B-v0.1: Mistral's attention, 8 experts of 14336, top 2
    "mixtral": dict(kind="causal", vocab=32000, hidden=4096, heads=32, kv_heads=8, ffn=14336, gated=True, bias=False, rotary=True,
                    experts=8, top_k=2, max_positions=32768),
    # Qwen/Qwen1.5-MoE-A2.7B (Qwen2-MoE): hidden 2048, 16 heads, 60 experts of 1408, top 4, shared expert 5632, vocab 151936
    "qwen2_moe": dict(kind="causal", vocab=151936, hidden=2048, heads=16, kv_heads=16, ffn=1408, gated=True, rotary=True,
                      experts=60, top_k=4, shared=5632, max_positions=8192),
    # tiiuae/falcon-7b: hidden 4544, 71 heads, multi-query (1 KV head) fused query_key_value, parallel attention, vocab 65024
    "falcon": dict(kind="causal", vocab=65024, hidden=4544, heads=71, kv_heads=1, ffn=4 * 4544, fused="mqa", parallel=True,
                   bias=False, act="gelu", norm="layer", rotary=True),
    # t5-large: d_model 1024, 16 heads of 64, d_ff 4096 (ReLU), vocab 32128, encoder-decoder
    "t5": dict(kind="t5", vocab=32128, hidden=1024, heads=16, ffn=4096, bias=False, act="relu"),
    # openai/whisper-medium: d_model 1024, 16 heads, ffn 4096, vocab 51865, 80 mels, 1500 source / 448 target positions
    "whisper": dict(kind="whisper", vocab=51865, hidden=1024, heads=16, ffn=4096, mels=80, source_positions=1500, positions=448,
                    act="gelu"),
    # google/vit-large-patch16-224: hidden 1024, 16 heads, ffn 4096, image 224, patch 16 (196 patches + class token)
    "vit": dict(kind="vit", hidden=1024, heads=16, ffn=4096, image=224, patch=16, classes=1000, act="gelu"),
    # DiT-XL/2 (Peebles & Xie 2023, Table 1): hidden 1152, 16 heads, patch 2 over a 32x32x4 latent, 1000 classes
    "dit": dict(kind="dit", hidden=1152, heads=16, ffn=4 * 1152, latent=32, channels=4, patch=2, classes=1000, act="gelu"),
    # stabilityai/sd-vae-ft-mse decoder: latent 4, block channels (128, 256, 512, 512), one mid-block attention
    "sd_vae": dict(kind="vae", latent=4, channels=(512, 512, 256, 128), groups=32),
}


class Conv1D(nn.Module):
    """HF GPT-2's linear layer: weight [in, out], applied to the tokens flattened to [B*S, in]
    (in decode that view makes [1, in] of [1, 1, in])."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.n_out = n_out
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.n_out,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def linear(c, n_in, n_out, bias=None):
    bias = c.get("bias", True) if bias is None else bias
    return Conv1D(n_in, n_out) if c.get("conv1d") else nn.Linear(n_in, n_out, bias=bias)


def norm(c, dim):
    return nn.LayerNorm(dim)  # RMS or layer norm: replicated on the residual stream either way


def activation(c):
    return {"gelu": nn.GELU(), "relu": nn.ReLU(), "silu": nn.SiLU()}[c.get("act", "silu")]


class Attention(nn.Module):
    """Self- or cross-attention: separate q/k/v, fused segments (GPT-2), fused per head (NeoX),
    fused multi-query (Falcon), GQA by repeating KV heads; SDPA or a hand-written softmax(QKᵀ)V."""

    def __init__(self, c, causal=False):
        super().__init__()
        hidden = c["hidden"]
        self.h = c["heads"]
        self.kv = c.get("kv_heads", self.h)
        self.d = hidden // self.h
        self.fused = c.get("fused")
        self.manual = c.get("manual", False)
        self.causal = causal
        if self.fused == "segments":
            self.c_attn = linear(c, hidden, 3 * hidden)
        elif self.fused == "per_head":
            self.query_key_value = linear(c, hidden, 3 * hidden)
        elif self.fused == "mqa":
            self.query_key_value = linear(c, hidden, (self.h + 2 * self.kv) * self.d)
        else:
            self.q_proj = linear(c, hidden, self.h * self.d)
            self.k_proj = linear(c, hidden, self.kv * self.d)
            self.v_proj = linear(c, hidden, self.kv * self.d)
        self.o_proj = linear(c, self.h * self.d, hidden)

    def forward(self, x, memory=None):
        b, s, _ = x.shape
        src = x if memory is None else memory
        t = src.shape[1]
        if self.fused == "segments":
            q, k, v = self.c_attn(x).split(self.h * self.d, dim=2)
        elif self.fused == "per_head":
            q, k, v = self.query_key_value(x).view(b, s, self.h, 3 * self.d).split(self.d, dim=3)
        elif self.fused == "mqa":
            qkv = self.query_key_value(x).view(b, s, self.h + 2 * self.kv, self.d)
            q, k, v = qkv.split([self.h, self.kv, self.kv], dim=2)
        else:
            q, k, v = self.q_proj(x), self.k_proj(src), self.v_proj(src)
        q = q.reshape(b, s, self.h, self.d).transpose(1, 2)
        k = k.reshape(b, t, self.kv, self.d).transpose(1, 2)
        v = v.reshape(b, t, self.kv, self.d).transpose(1, 2)
        if self.kv != self.h:
            k = k.repeat_interleave(self.h // self.kv, dim=1)
            v = v.repeat_interleave(self.h // self.kv, dim=1)
        if self.manual:
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d)
            y = torch.matmul(F.softmax(scores, dim=-1), v)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal and memory is None)
        return self.o_proj(y.transpose(1, 2).reshape(b, s, self.h * self.d))


class MLP(nn.Module):
    def __init__(self, c, ffn=None):
        super().__init__()
        hidden, ffn = c["hidden"], ffn or c["ffn"]
        self.gated = c.get("gated", False)
        if self.gated:
            self.gate_proj = linear(c, hidden, ffn)
        self.up_proj = linear(c, hidden, ffn)
        self.down_proj = linear(c, ffn, hidden)
        self.act = activation(c)

    def forward(self, x):
        h = self.act(self.gate_proj(x)) * self.up_proj(x) if self.gated else self.act(self.up_proj(x))
        return self.down_proj(h)


class Experts(nn.Module):
    """Routed experts as stacked weights [experts, in, out] (HF Mixtral / Qwen2-MoE layout)."""

    def __init__(self, c):
        super().__init__()
        self.n = c["experts"]
        self.gate_up_proj = nn.Parameter(torch.empty(self.n, c["hidden"], 2 * c["ffn"]))
        self.down_proj = nn.Parameter(torch.empty(self.n, c["ffn"], c["hidden"]))

    def forward(self, x, index, weights):
        out = torch.zeros_like(x)
        for e in range(self.n):
            token, slot = torch.where(index == e)
            if token.numel() == 0:
                continue
            gate, up = (x[token] @ self.gate_up_proj[e]).chunk(2, dim=-1)
            y = (F.silu(gate) * up) @ self.down_proj[e]
            out.index_add_(0, token, y * weights[token, slot, None])
        return out


class MoE(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.top_k = c["top_k"]
        self.gate = nn.Linear(c["hidden"], c["experts"], bias=False)
        self.experts = Experts(c)
        self.shared = c.get("shared")
        if self.shared:
            self.shared_expert = MLP(c, ffn=self.shared)
            self.shared_expert_gate = nn.Linear(c["hidden"], 1, bias=False)

    def forward(self, x):
        b, s, h = x.shape
        flat = x.view(-1, h)
        weights, index = torch.topk(F.softmax(self.gate(flat), dim=1), self.top_k, dim=-1)
        out = self.experts(flat, index, weights)
        if self.shared:
            out = out + torch.sigmoid(self.shared_expert_gate(flat)) * self.shared_expert(flat)
        return out.view(b, s, h)


class Block(nn.Module):
    """Pre-norm (decoders, ViT), post-norm (BERT), parallel residual (NeoX, Falcon), with cross-attention (enc-dec decoders)."""

    def __init__(self, c, causal=False, post_norm=False, cross=False):
        super().__init__()
        self.post_norm, self.parallel = post_norm, c.get("parallel", False)
        self.norm1 = norm(c, c["hidden"])
        self.attn = Attention(c, causal=causal)
        self.cross = Attention(dict(c, fused=None, kv_heads=c["heads"])) if cross else None
        self.norm_cross = norm(c, c["hidden"]) if cross else None
        self.norm2 = norm(c, c["hidden"])
        self.mlp = MoE(c) if c.get("experts") else MLP(c)

    def forward(self, x, memory=None):
        if self.post_norm:
            x = self.norm1(x + self.attn(x))
            return self.norm2(x + self.mlp(x))
        if self.parallel:
            return x + self.attn(self.norm1(x)) + self.mlp(self.norm2(x))
        x = x + self.attn(self.norm1(x))
        if self.cross is not None:
            x = x + self.cross(self.norm_cross(x), memory)
        return x + self.mlp(self.norm2(x))


class CausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"])
        self.embed_positions = nn.Embedding(c["positions"], c["hidden"]) if c.get("positions") else None
        self.layers = nn.ModuleList([Block(c, causal=True) for _ in range(LAYERS)])
        self.norm = norm(c, c["hidden"])
        self.tied = c.get("tied", False)
        self.lm_head = None if self.tied else nn.Linear(c["hidden"], c["vocab"], bias=False)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        if self.embed_positions is not None:
            x = x + self.embed_positions(torch.arange(input_ids.shape[1]))
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)
        return F.linear(x, self.embed_tokens.weight) if self.tied else self.lm_head(x)


class Encoder(nn.Module):
    """BERT / RoBERTa: word, position and token-type embeddings, post-norm blocks, no head."""

    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c["vocab"], c["hidden"])
        self.position_embeddings = nn.Embedding(c["positions"], c["hidden"])
        self.token_type_embeddings = nn.Embedding(c["types"], c["hidden"])
        self.embeddings_norm = nn.LayerNorm(c["hidden"])
        self.layers = nn.ModuleList([Block(c, post_norm=True) for _ in range(LAYERS)])

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1])
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions) + self.token_type_embeddings(torch.zeros_like(input_ids))
        x = self.embeddings_norm(x)
        for layer in self.layers:
            x = layer(x)
        return x


class EncoderDecoder(nn.Module):
    """T5 (shared embedding, RMS norms) and Whisper (conv front end over mels, learned positions)."""

    def __init__(self, c):
        super().__init__()
        self.whisper = c["kind"] == "whisper"
        h = c["hidden"]
        if self.whisper:
            self.conv1 = nn.Conv1d(c["mels"], h, kernel_size=3, padding=1)
            self.conv2 = nn.Conv1d(h, h, kernel_size=3, stride=2, padding=1)
            self.encoder_positions = nn.Parameter(torch.zeros(c["source_positions"], h))
            self.decoder_positions = nn.Embedding(c["positions"], h)
        self.shared = nn.Embedding(c["vocab"], h)
        self.encoder = nn.ModuleList([Block(c) for _ in range(LAYERS)])
        self.decoder = nn.ModuleList([Block(c, causal=True, cross=True) for _ in range(LAYERS)])
        self.encoder_norm = norm(c, h)
        self.decoder_norm = norm(c, h)
        self.lm_head = nn.Linear(h, c["vocab"], bias=False)

    def forward(self, inputs, decoder_input_ids):
        if self.whisper:
            x = F.gelu(self.conv2(F.gelu(self.conv1(inputs)))).transpose(1, 2)
            x = x + self.encoder_positions[: x.shape[1]]
        else:
            x = self.shared(inputs)
        for layer in self.encoder:
            x = layer(x)
        memory = self.encoder_norm(x)
        y = self.shared(decoder_input_ids)
        if self.whisper:
            y = y + self.decoder_positions(torch.arange(decoder_input_ids.shape[1]))
        for layer in self.decoder:
            y = layer(y, memory)
        return self.lm_head(self.decoder_norm(y))


class ViT(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, n = c["hidden"], (c["image"] // c["patch"]) ** 2
        self.patch_embed = nn.Conv2d(3, h, kernel_size=c["patch"], stride=c["patch"])
        self.cls_token = nn.Parameter(torch.zeros(1, 1, h))
        self.pos_embed = nn.Parameter(torch.zeros(1, n + 1, h))
        self.blocks = nn.ModuleList([Block(c) for _ in range(LAYERS)])
        self.norm = nn.LayerNorm(h)
        self.head = nn.Linear(h, c["classes"])

    def forward(self, pixel_values):
        x = self.patch_embed(pixel_values).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


class DiTBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.norm1 = nn.LayerNorm(h, elementwise_affine=False)
        self.attn = Attention(c)
        self.norm2 = nn.LayerNorm(h, elementwise_affine=False)
        self.mlp = MLP(c)
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(h, 6 * h))

    def forward(self, x, cond):
        shift1, scale1, gate1, shift2, scale2, gate2 = self.adaLN_modulation(cond).chunk(6, dim=1)
        x = x + gate1.unsqueeze(1) * self.attn(self.norm1(x) * (1 + scale1.unsqueeze(1)) + shift1.unsqueeze(1))
        return x + gate2.unsqueeze(1) * self.mlp(self.norm2(x) * (1 + scale2.unsqueeze(1)) + shift2.unsqueeze(1))


class DiT(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, p = c["hidden"], c["patch"]
        self.p, self.channels = p, c["channels"]
        self.x_embedder = nn.Conv2d(c["channels"], h, kernel_size=p, stride=p)
        self.pos_embed = nn.Parameter(torch.zeros(1, (c["latent"] // p) ** 2, h), requires_grad=False)
        self.t_embedder = nn.Sequential(nn.Linear(256, h), nn.SiLU(), nn.Linear(h, h))
        self.y_embedder = nn.Embedding(c["classes"] + 1, h)
        self.blocks = nn.ModuleList([DiTBlock(c) for _ in range(LAYERS)])
        self.final_norm = nn.LayerNorm(h, elementwise_affine=False)
        self.final_adaLN = nn.Sequential(nn.SiLU(), nn.Linear(h, 2 * h))
        self.final_linear = nn.Linear(h, p * p * 2 * c["channels"])

    def forward(self, x, t, y):
        half = 128
        freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
        args = t[:, None].float() * freqs[None]
        t_freq = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
        cond = self.t_embedder(t_freq) + self.y_embedder(y)
        x = self.x_embedder(x).flatten(2).transpose(1, 2) + self.pos_embed
        for block in self.blocks:
            x = block(x, cond)
        shift, scale = self.final_adaLN(cond).chunk(2, dim=1)
        return self.final_linear(self.final_norm(x) * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1))


class ResBlock(nn.Module):
    def __init__(self, c_in, c_out, groups):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, c_in)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.norm2 = nn.GroupNorm(groups, c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else None

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return (x if self.skip is None else self.skip(x)) + h


class VAEAttention(nn.Module):
    def __init__(self, ch, groups):
        super().__init__()
        self.group_norm = nn.GroupNorm(groups, ch)
        self.to_q, self.to_k, self.to_v, self.to_out = (nn.Linear(ch, ch) for _ in range(4))

    def forward(self, x):
        b, ch, hh, ww = x.shape
        h = self.group_norm(x).view(b, ch, hh * ww).transpose(1, 2)
        y = F.scaled_dot_product_attention(self.to_q(h)[:, None], self.to_k(h)[:, None], self.to_v(h)[:, None])[:, 0]
        return x + self.to_out(y).transpose(1, 2).reshape(b, ch, hh, ww)


class VAEDecoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        ch, g = c["channels"], c["groups"]
        self.conv_in = nn.Conv2d(c["latent"], ch[0], 3, padding=1)
        self.mid = nn.ModuleList([ResBlock(ch[0], ch[0], g), VAEAttention(ch[0], g), ResBlock(ch[0], ch[0], g)])
        self.up = nn.ModuleList([ResBlock(a, b, g) for a, b in zip(ch, ch[1:])])
        self.norm_out = nn.GroupNorm(g, ch[-1])
        self.conv_out = nn.Conv2d(ch[-1], 3, 3, padding=1)

    def forward(self, z):
        x = self.conv_in(z)
        for m in self.mid:
            x = m(x)
        for m in self.up:
            x = F.interpolate(m(x), scale_factor=2.0, mode="nearest")
        return self.conv_out(F.silu(self.norm_out(x)))


def build(name):
    c = CONFIGS[name]
    kind = c["kind"]
    if kind == "causal":
        return CausalLM(c)
    if kind == "encoder":
        return Encoder(c)
    if kind in ("t5", "whisper"):
        return EncoderDecoder(c)
    if kind == "vit":
        return ViT(c)
    if kind == "dit":
        return DiT(c)
    return VAEDecoder(c)


model = build("llama3")
