# A small LLaMA-1-style model written for shardlens' tests on fairscale's model-parallel layers.
import fairscale.nn.model_parallel.initialize as fs_init
import torch
import torch.nn.functional as F
from fairscale.nn.model_parallel.layers import ColumnParallelLinear, ParallelEmbedding, RowParallelLinear
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        world = fs_init.get_model_parallel_world_size()
        self.n_local_heads = n_heads // world
        self.head_dim = dim // n_heads
        self.wq = ColumnParallelLinear(dim, n_heads * self.head_dim, bias=False, gather_output=False, init_method=lambda x: x)
        self.wk = ColumnParallelLinear(dim, n_heads * self.head_dim, bias=False, gather_output=False, init_method=lambda x: x)
        self.wv = ColumnParallelLinear(dim, n_heads * self.head_dim, bias=False, gather_output=False, init_method=lambda x: x)
        self.wo = RowParallelLinear(n_heads * self.head_dim, dim, bias=False, input_is_parallel=True, init_method=lambda x: x)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.n_local_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, s, self.n_local_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, s, self.n_local_heads, self.head_dim).transpose(1, 2)
        out = ((q @ k.transpose(2, 3)) / self.head_dim**0.5).softmax(-1) @ v
        return self.wo(out.transpose(1, 2).reshape(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = ColumnParallelLinear(dim, hidden_dim, bias=False, gather_output=False, init_method=lambda x: x)
        self.w2 = RowParallelLinear(hidden_dim, dim, bias=False, input_is_parallel=True, init_method=lambda x: x)
        self.w3 = ColumnParallelLinear(dim, hidden_dim, bias=False, gather_output=False, init_method=lambda x: x)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.attention = Attention(dim, n_heads)
        self.feed_forward = FeedForward(dim, 4 * dim)
        self.attention_norm = nn.LayerNorm(dim)
        self.ffn_norm = nn.LayerNorm(dim)

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, vocab_size=300, dim=32, n_layers=2, n_heads=4):
        super().__init__()
        self.tok_embeddings = ParallelEmbedding(vocab_size, dim, init_method=lambda x: x)
        self.layers = nn.ModuleList([Block(dim, n_heads) for _ in range(n_layers)])
        self.norm = nn.LayerNorm(dim)
        self.output = ColumnParallelLinear(dim, vocab_size, bias=False, init_method=lambda x: x)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))
