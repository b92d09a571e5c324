# Attention with q/k RMSNorms, rotary embeddings (rotate_half) and GQA: many tensors live at once
# inside one block (q, k, v, cos, sin, their halves), so the planner's layout states outgrow its cap
# unless dominated states are pruned (tests/unit/test_plan_search.cpp).
import torch
import torch.nn as nn
import torch.nn.functional as F


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x


class Attention(nn.Module):
    def __init__(self, dim=2048, heads=32, kv_heads=8):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
        self.q_proj = nn.Linear(dim, heads * self.hd, bias=False)
        self.k_proj = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(heads * self.hd, dim, bias=False)
        self.q_norm = RMSNorm(self.hd)
        self.k_norm = RMSNorm(self.hd)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q_norm(self.q_proj(x).view(b, t, self.heads, self.hd)).transpose(1, 2)
        k = self.k_norm(self.k_proj(x).view(b, t, self.kv_heads, self.hd)).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
        v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(o.transpose(1, 2).reshape(b, t, -1))


class Model(nn.Module):
    def __init__(self, dim=2048, layers=2):
        super().__init__()
        self.embed = nn.Embedding(32000, dim)
        self.rope = nn.Parameter(torch.zeros(1, 4096, 2 * (dim // 32)))
        self.layers = nn.ModuleList([Attention(dim) for _ in range(layers)])

    def forward(self, tokens):
        x = self.embed(tokens)
        t = tokens.shape[1]
        cos, sin = self.rope[:, :t].chunk(2, dim=-1)
        for layer in self.layers:
            x = x + layer(x, cos, sin)
        return x


model = Model()
