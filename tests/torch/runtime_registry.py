"""The feed-forward layer is a class chosen by name from a registry, and the name is read at run
time from the checkpoint's config file (runtime_registry.json beside the script, as Hugging Face
checkpoints ship config.json). The static front end reads the file (json.load of open()) and the
exact graph runs it: both build the SwiGLU layer's three projections. 2 layers at 7B widths."""
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

DIM, HIDDEN, HEADS, LAYERS, VOCAB = 4096, 11008, 32, 2, 32000

MLP_REGISTRY = {}


def register_mlp(name):
    def wrap(cls):
        MLP_REGISTRY[name] = cls
        return cls
    return wrap


@register_mlp("gelu")
class GeluMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc_in = nn.Linear(dim, 4 * dim)
        self.fc_out = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.fc_out(F.gelu(self.fc_in(x)))


@register_mlp("swiglu")
class SwiGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def load_config():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime_registry.json")
    with open(path) as f:
        return json.load(f)


class Block(nn.Module):
    def __init__(self, mlp_type):
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM)
        self.attn = nn.Linear(DIM, 3 * DIM, bias=False)
        self.proj = nn.Linear(DIM, DIM, bias=False)
        self.norm2 = nn.LayerNorm(DIM)
        self.mlp = MLP_REGISTRY[mlp_type](DIM, HIDDEN)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.attn(self.norm1(x)).split(DIM, dim=2)
        q = q.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        k = k.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        v = v.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.norm2(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = load_config()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList([Block(config["mlp_type"]) for _ in range(LAYERS)])
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


model = Model()
