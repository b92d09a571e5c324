# A T5-style text encoder (the kind a diffusion pipeline conditions on): RMS norms, relative
# position bias left out, a gated-GELU feed-forward, bias-free projections. `heads` is a
# constructor argument so that a test can make it indivisible by a mesh axis.
import torch
from torch import nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


class Attention(nn.Module):
    def __init__(self, dim, heads, head_dim):
        super().__init__()
        self.heads = heads
        self.head_dim = head_dim
        self.q = nn.Linear(dim, heads * head_dim, bias=False)
        self.k = nn.Linear(dim, heads * head_dim, bias=False)
        self.v = nn.Linear(dim, heads * head_dim, bias=False)
        self.o = nn.Linear(heads * head_dim, dim, bias=False)

    def forward(self, x):
        b, n, _ = x.shape
        q = self.q(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.o(y.transpose(1, 2).reshape(b, n, self.heads * self.head_dim))


class GatedFeedForward(nn.Module):
    def __init__(self, dim, ff):
        super().__init__()
        self.wi_0 = nn.Linear(dim, ff, bias=False)
        self.wi_1 = nn.Linear(dim, ff, bias=False)
        self.wo = nn.Linear(ff, dim, bias=False)

    def forward(self, x):
        return self.wo(F.gelu(self.wi_0(x)) * self.wi_1(x))


class Block(nn.Module):
    def __init__(self, dim, heads, head_dim, ff):
        super().__init__()
        self.norm1 = RMSNorm(dim)
        self.attn = Attention(dim, heads, head_dim)
        self.norm2 = RMSNorm(dim)
        self.ff = GatedFeedForward(dim, ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ff(self.norm2(x))


class TextEncoder(nn.Module):
    def __init__(self, vocab=32128, dim=2048, layers=6, heads=32, head_dim=64, ff=5120):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, head_dim, ff) for _ in range(layers)])
        self.final_norm = RMSNorm(dim)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for block in self.blocks:
            x = block(x)
        return self.final_norm(x)


model = TextEncoder()
