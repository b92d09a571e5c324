"""Mixtral-style routed experts in a ModuleList whose forward runs in PyTorch: tokens are flattened
before routing (the shared moe.py fixture indexes [batch, seq, k] routing with two index tensors,
which PyTorch rejects). For `shardlens verify` of expert-parallel plans."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class MoEArgs:
    dim: int = 4096
    hidden_dim: int = 14336
    n_layers: int = 4
    num_experts: int = 8
    top_k: int = 2
    vocab_size: int = 32000


class Expert(nn.Module):
    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoE(nn.Module):
    def __init__(self, args: MoEArgs):
        super().__init__()
        self.top_k = args.top_k
        self.gate = nn.Linear(args.dim, args.num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(args.dim, args.hidden_dim) for _ in range(args.num_experts)])

    def forward(self, x):
        b, s, d = x.shape
        tokens = x.reshape(b * s, d)
        weights, selected = torch.topk(F.softmax(self.gate(tokens), dim=-1), self.top_k, dim=-1)
        out = torch.zeros_like(tokens)
        for i, expert in enumerate(self.experts):
            token_idx, slot = torch.where(selected == i)
            out.index_add_(0, token_idx, weights[token_idx, slot, None] * expert(tokens[token_idx]))
        return out.reshape(b, s, d)


class Layer(nn.Module):
    def __init__(self, args: MoEArgs):
        super().__init__()
        self.norm = nn.LayerNorm(args.dim)
        self.moe = SparseMoE(args)

    def forward(self, x):
        return x + self.moe(self.norm(x))


class MoEStack(nn.Module):
    def __init__(self, args: MoEArgs):
        super().__init__()
        self.embed = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList([Layer(args) for _ in range(args.n_layers)])
        self.norm = nn.LayerNorm(args.dim)
        self.lm_head = nn.Linear(args.dim, args.vocab_size, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


model = MoEStack(MoEArgs())
